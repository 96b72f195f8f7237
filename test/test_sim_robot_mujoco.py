"""sim_robot on the MuJoCo engine (the proving ground) through real rclpy topics and services:
its truth topics against pinocchio and closed forms, scenes and refusals."""

import math

import numpy as np
import pinocchio as pin
import pytest
from geometry_msgs.msg import InertiaStamped, PointStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from ros_harness import wait_for
from sensor_msgs.msg import Imu, JointState
from std_srvs.srv import SetBool, Trigger

from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF
from robot_dynamics.ros.sim_robot import SimRobot
from robot_dynamics.ros.topics import SENSOR_QOS, stamp_seconds
from robot_dynamics.simulation.errors import ProfileError, SceneError, SimulationError

G = 9.81


def sim_node(namespace: str, **parameters) -> SimRobot:
    overrides = [Parameter(name, value=value) for name, value in parameters.items()]
    return SimRobot('sim_robot', namespace=namespace, parameter_overrides=overrides)


def test_default_engine_is_mujoco_with_the_ideal_profile_and_its_truth_topics(ros):
    node = sim_node(
        '/mj_a', payload_mass=1.5, payload_com=[0.03, -0.02, 0.06], start_with_payload=False
    )
    assert node.engine == 'mujoco' and node.scene.true_robot.is_ideal
    with ros(node) as harness:
        states = harness.collect(JointState, '/mj_a/joint_states', SENSOR_QOS)
        friction = harness.collect(JointState, '/mj_a/sim_robot/true_friction_torques', SENSOR_QOS)
        rotor = harness.collect(JointState, '/mj_a/sim_robot/true_rotor_torques', SENSOR_QOS)
        payloads = harness.collect(InertiaStamped, '/mj_a/sim_robot/true_payload', SENSOR_QOS)
        com = harness.collect(PointStamped, '/mj_a/sim_robot/true_com', SENSOR_QOS)
        assert wait_for(
            lambda: min(len(states), len(friction), len(rotor), len(payloads), len(com)) >= 20, 15.0
        )
        assert all(m.inertia.m == 0.0 for m in payloads)
        answer = harness.call(SetBool, '/mj_a/sim_robot/attach_payload', SetBool.Request(data=True))
        assert answer.success
        assert wait_for(lambda: payloads[-1].inertia.m == 1.5, 10.0), (
            'the payload truth did not follow'
        )
    message = payloads[-1]
    assert message.header.frame_id == 'tool0'
    assert (message.inertia.com.x, message.inertia.com.y, message.inertia.com.z) == (
        0.03,
        -0.02,
        0.06,
    )
    assert not np.any([m.effort for m in friction]) and not np.any([m.effort for m in rotor])
    stamps = {stamp_seconds(m.header.stamp) for m in states}
    assert (
        sum(stamp_seconds(m.header.stamp) in stamps for m in com) >= 15
    )  # truth stamped with its sample
    robot = RobotModel.from_urdf_file(ARM_URDF)
    state = next(
        m for m in states if stamp_seconds(m.header.stamp) == stamp_seconds(com[5].header.stamp)
    )
    q = robot.configuration(np.array(state.position))
    expected = pin.centerOfMass(robot.model, robot.data, q)  # no payload yet at com[5]
    point = com[5].point
    # pinocchio's fixed-base CoM leaves out the root link (fixed to the world); the truth has it
    root = robot.description.links[robot.description.root].inertial
    total = robot.total_mass() + root.mass
    expected = (robot.total_mass() * expected + root.mass * np.array(root.origin.xyz)) / total
    np.testing.assert_allclose([point.x, point.y, point.z], expected, atol=1e-9)


def test_push_truth_is_the_jacobian_transpose_of_the_applied_wrench(ros):
    node = sim_node('/mj_w')
    with ros(node) as harness:
        torques = harness.collect(JointState, '/mj_w/sim_robot/true_external_torques', SENSOR_QOS)
        states = harness.collect(JointState, '/mj_w/joint_states', SENSOR_QOS)
        command = harness.probe.create_publisher(
            WrenchStamped, '/mj_w/sim_robot/external_wrench_command', 10
        )
        assert wait_for(
            lambda: harness.probe.count_subscribers('/mj_w/sim_robot/external_wrench_command') > 0,
            5.0,
        )
        push = WrenchStamped()
        push.header.frame_id = (
            'fr3_link0'  # fixed to the world: refused, logged, the node keeps running
        )
        push.wrench.force.x = 1.0
        command.publish(push)
        push.header.frame_id = 'tool0'
        push.wrench.force.x, push.wrench.force.z, push.wrench.torque.y = 10.0, -5.0, 0.5
        command.publish(push)
        assert wait_for(lambda: any(np.any(m.effort) for m in torques), 10.0)
        pushed = next(m for m in torques if np.any(m.effort))
        state = next(m for m in states if m.header.stamp == pushed.header.stamp)
    robot = RobotModel.from_urdf_file(ARM_URDF)
    q = robot.configuration(np.array(state.position))
    jacobian = pin.computeFrameJacobian(
        robot.model, robot.data, q, robot.frame_id('tool0'), pin.LOCAL
    )
    np.testing.assert_allclose(
        pushed.effort, jacobian.T @ [10.0, 0.0, -5.0, 0.0, 0.5, 0.0], atol=1e-9
    )


def test_a_negative_profile_seed_falls_back_to_0_and_the_profile_is_drawn_with_it(ros):
    node = sim_node('/mj_n', robot_profile='realistic', profile_seed=-1)
    assert node.scene.true_robot.drawn_values()['profile_seed'] == 0
    with ros(node) as harness:
        states = harness.collect(JointState, '/mj_n/joint_states', SENSOR_QOS)
        assert wait_for(lambda: len(states) >= 10, 15.0)


def test_realistic_profile_publishes_friction_rotor_torques_and_a_biased_ft_sensor(ros):
    node = sim_node('/mj_r', robot_profile='realistic', profile_seed=3, payload_mass=1.5)
    drawn = node.scene.true_robot.drawn_values()
    assert drawn['profile'] == 'realistic' and drawn['profile_seed'] == 3
    with ros(node) as harness:
        friction = harness.collect(JointState, '/mj_r/sim_robot/true_friction_torques', SENSOR_QOS)
        rotor = harness.collect(JointState, '/mj_r/sim_robot/true_rotor_torques', SENSOR_QOS)
        ft = harness.collect(WrenchStamped, '/mj_r/ft_sensor', SENSOR_QOS)
        assert wait_for(lambda: min(len(friction), len(rotor), len(ft)) >= 50, 15.0)
    assert np.max(np.abs([m.effort for m in friction])) > 0.3  # Coulomb 0.5 N m once moving
    assert np.max(np.abs([m.effort for m in rotor])) > 0.01
    assert ft[-1].header.frame_id == 'tool0'
    weight = math.sqrt(sum(getattr(ft[-1].wrench.force, axis) ** 2 for axis in 'xyz'))
    assert (
        abs(weight - 1.5 * G) < 5.0
    )  # the tool's weight and inertia, the bias (≤ 0.9 N) and noise


def test_legged_scene_restarts_and_its_feet_carry_the_weight_on_odom_imu_and_contact_truth(ros):
    node = sim_node('/mj_l', scene='legged', publish_rate=100.0)
    assert node.simulation_rate == 500.0
    feet = ('lf_foot', 'rf_foot', 'lh_foot', 'rh_foot')
    with ros(node) as harness:
        wrenches = {
            foot: harness.collect(
                WrenchStamped, f'/mj_l/sim_robot/true_contact_wrenches/{foot}', SENSOR_QOS
            )
            for foot in feet
        }
        odometry = harness.collect(Odometry, '/mj_l/odom', SENSOR_QOS)
        imu = harness.collect(Imu, '/mj_l/sim_robot/imu', SENSOR_QOS)
        cop = harness.collect(PointStamped, '/mj_l/sim_robot/true_cop', SENSOR_QOS)
        assert wait_for(lambda: node.scene.time > 1.5, 30.0)
        before = node.scene.time
        answer = harness.call(Trigger, '/mj_l/sim_robot/restart_motion', Trigger.Request())
        assert answer.success and node.scene.time < before - 1.0, (before, node.scene.time)
        assert wait_for(
            lambda: node.scene.time > 1.5 and min(len(w) for w in wrenches.values()) >= 100, 30.0
        )
    weight = node.scene.weight
    by_stamp = {}
    for foot in feet:
        for message in wrenches[foot]:
            by_stamp.setdefault(stamp_seconds(message.header.stamp), []).append(
                message.wrench.force.z
            )
    settled = [sum(values) for stamp, values in sorted(by_stamp.items()) if len(values) == 4][-20:]
    np.testing.assert_allclose(settled, weight, rtol=0.02)
    assert odometry[-1].header.frame_id == 'odom' and odometry[-1].child_frame_id == 'base'
    assert abs(imu[-1].linear_acceleration.z - G) < 0.2 and imu[-1].header.frame_id == 'base'
    base = odometry[-1].pose.pose.position
    assert abs(cop[-1].point.x - base.x) < 0.1 and abs(cop[-1].point.y - base.y) < 0.1


def test_moving_base_scene_publishes_its_exact_base_state(ros):
    node = sim_node('/mj_m', scene='moving_base', base_motion='deck', publish_rate=100.0)
    with ros(node) as harness:
        truth = harness.collect(Odometry, '/mj_m/sim_robot/true_base_state', SENSOR_QOS)
        imu = harness.collect(Imu, '/mj_m/sim_robot/imu', SENSOR_QOS)
        assert wait_for(lambda: len(truth) >= 100 and len(imu) >= 100, 20.0)
    rolls = [2.0 * math.atan2(m.pose.pose.orientation.x, m.pose.pose.orientation.w) for m in truth]
    times = np.array([stamp_seconds(m.header.stamp) for m in truth])
    expected = math.radians(10.0) * np.sin(2.0 * math.pi * 0.2 * (times - node.start_stamp))
    np.testing.assert_allclose(rolls, expected, atol=2e-3)
    assert truth[-1].child_frame_id == 'fr3_link0'


def test_bad_scene_input_stops_the_node_with_the_reason(ros):
    start = '0.0 0.0 0.333 0.3 0.3 0.3'  # around the arm's shoulder
    with pytest.raises(SceneError, match='obstacle "obstacle_0" overlaps link'):
        sim_node('/mj_b', obstacles=[start])
    with pytest.raises(SceneError, match='give six numbers'):
        sim_node('/mj_b', obstacles=['0.5 0.5'])
    with pytest.raises(ProfileError, match='neither a shipped profile'):
        sim_node('/mj_b', robot_profile='/nonexistent/profile.yaml')


def test_use_sim_time_and_a_floating_root_on_mujoco_stop_the_node_with_the_reason(ros):
    with pytest.raises(SimulationError, match='sim_robot runs on the wall clock'):
        sim_node('/mj_t', use_sim_time=True)
    with pytest.raises(SimulationError, match='scene legged'):
        sim_node('/mj_t', root_joint='floating')


def test_a_diverged_simulation_says_why_and_restart_motion_resumes_it(ros):
    """MuJoCo's state made non-finite: the stream stops with the reason; restart_motion says
    what had stopped it and the joint states flow again. A push beyond 10 kN is refused, and
    use_sim_time, which would stop the wall-clock timer, is refused at runtime."""
    node = sim_node('/mj_d')
    with ros(node) as harness:
        states = harness.collect(JointState, '/mj_d/joint_states', SENSOR_QOS)
        assert wait_for(lambda: len(states) > 10, 15.0)
        assert not node.set_parameters([Parameter('use_sim_time', value=True)])[0].successful
        with pytest.raises(SceneError, match='beyond what a robot meets'):
            node.scene.set_push('tool0', [1e6, 0.0, 0.0], [0.0] * 3)
        node.scene.engine.data.qvel[:] = math.nan
        assert wait_for(lambda: node._stopped_by is not None, 15.0)
        assert 'MuJoCo integration diverged' in node._stopped_by
        answer = harness.call(Trigger, '/mj_d/sim_robot/restart_motion', Trigger.Request())
        assert answer.success and 'it had stopped: MuJoCo integration diverged' in answer.message
        before = len(states)
        assert wait_for(lambda: len(states) > before + 50, 15.0)
    assert all(np.all(np.isfinite(m.position)) for m in states[before:])
