"""Wrist force/torque sensor: the tool's wrench against Newton's laws (at rest and spinning), the
compensated wrench and the tool identified on the proving ground's realistic arm (a 1.5 kg tool,
a drawn sensor bias, sensor noise, a tracking controller on a robot that is not its URDF),
refusals of orientations that cannot tell the tool from the bias, and the real node."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml
from ros_harness import wait_for

from robot_dynamics.core.identification.ft_tool import (
    FtToolError,
    SensorKinematics,
    identify_tool,
    sensor_kinematics,
    tool_wrench,
)
from robot_dynamics.core.live.ft_sensor import FtSensor, JointMotion
from robot_dynamics.core.live.live_dynamics import LiveDynamics
from robot_dynamics.core.live.settings import LiveSettings
from robot_dynamics.core.model.inertia import InertialParameters, box_inertia
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.joint_states import JointSample
from robot_dynamics.models import ARM_URDF

G = 9.81
TOOL = InertialParameters(1.5, [0.01, -0.02, 0.06], box_inertia(1.5, [0.08, 0.06, 0.12]))
# A sensor frame 0.5 m out on a link turning about the vertical axis z.
SPINNER_URDF = """<robot name="spinner">
  <link name="base"/>
  <link name="arm"><inertial><mass value="1"/>
    <inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>
  <joint name="spin" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-9" upper="9" effort="50" velocity="20"/></joint>
  <link name="sensor"/>
  <joint name="sensor_mount" type="fixed"><origin xyz="0.5 0 0"/><parent link="arm"/>
    <child link="sensor"/></joint>
</robot>"""


def test_the_tools_wrench_follows_newton_at_rest_and_spinning():
    robot = RobotModel.from_urdf_string(SPINNER_URDF, gravity=(0.0, 0.0, -G))
    sensor = robot.frame_id('sensor')
    point = InertialParameters.point_mass(2.0, [0.1, 0.0, 0.0])  # 0.6 m from the axis
    at_rest = tool_wrench(point, sensor_kinematics(robot, sensor, [0.3]))
    # the weight pulls down; its moment about the sensor origin is r × m g
    np.testing.assert_allclose(at_rest[:3], [0.0, 0.0, -2.0 * G], atol=1e-12)
    np.testing.assert_allclose(at_rest[3:], np.cross([0.1, 0, 0], [0, 0, -2.0 * G]), atol=1e-12)
    omega, alpha = 3.0, 2.0
    moving = tool_wrench(point, sensor_kinematics(robot, sensor, [0.3], [omega], [alpha]))
    # the sensor holds the mass on its circle: it pulls it inward by m ω² r and along by m α r,
    # so the mass pulls the sensor outward and backward
    np.testing.assert_allclose(moving[:3], [2.0 * omega**2 * 0.6, -2.0 * alpha * 0.6, -2.0 * G])


def _arm_scene(profile: str):
    from robot_dynamics.simulation.profiles import load_profile
    from robot_dynamics.simulation.scenes import ArmScene

    text = ARM_URDF.read_text()
    scene = ArmScene(text, load_profile(profile), 5, payload=TOOL, carrying=True, table=False)
    robot = RobotModel.from_urdf_string(text)
    return scene, robot


def _hold_poses(scene, robot, sensor: FtSensor, live: LiveDynamics, poses, seconds=2.0) -> list:
    """Hold each pose for ``seconds``, feeding the sensor; the mean compensated wrench over each
    pose's last 0.2 s."""
    means = []
    for pose in poses:
        scene.hold(pose)
        compensated = [_step(scene, robot, sensor, live) for _ in range(int(seconds * 1000))]
        means.append(np.mean(compensated[-200:], axis=0))
    return means


def _step(scene, robot, sensor: FtSensor, live: LiveDynamics) -> np.ndarray:
    sample = scene.step()
    joints = sample.joints
    torques = live.torques(
        JointSample(
            robot.joint_names, joints.positions, joints.velocities, joints.efforts, sample.time
        )
    )
    motion = JointMotion(
        torques.stamp, torques.positions, torques.velocities, torques.accelerations
    )
    return sensor.take(sample.time, 'tool0', sample.ft_wrench, motion)


def _random_poses(robot: RobotModel, count: int, seed: int) -> np.ndarray:
    lower, upper = robot.limits.lower, robot.limits.upper
    rng = np.random.default_rng(seed)
    return lower + (upper - lower) * rng.uniform(0.3, 0.7, (count, len(lower)))


def test_compensated_wrench_and_tool_from_ft_on_the_realistic_arm():
    """20 random still poses with the tool known and the bias tared at the first; then the tool
    identified from 6 still poses with nothing known; then the excitation."""
    scene, robot = _arm_scene('realistic')
    robot.attach_payload('tool0', TOOL)
    live, sensor = LiveDynamics(robot, LiveSettings()), FtSensor(robot)
    poses = _random_poses(robot, 20, 1)
    _hold_poses(scene, robot, sensor, live, poses[:1])
    sensor.tare()
    means = np.array(_hold_poses(scene, robot, sensor, live, poses[1:]))
    # beyond the sensor noise (averaged out over 0.2 s): ≤ 0.3 N and 0.03 N·m
    assert np.linalg.norm(means[:, :3], axis=1).max() < 0.3
    assert np.linalg.norm(means[:, 3:], axis=1).max() < 0.03

    fresh = FtSensor(robot)  # nothing known: its own tool and bias
    _hold_poses(scene, robot, fresh, live, _random_poses(robot, 6, 2))
    fit = fresh.identify_tool()
    assert abs(fit.tool.mass - TOOL.mass) < 0.005
    assert np.linalg.norm(fit.tool.com - TOOL.com) < 0.002
    np.testing.assert_allclose(fit.bias[:3], scene.body_sensors.ft_bias[:3], atol=0.1)
    assert fit.mass_sigma < 0.005

    scene.hold(None)  # the scripted excitation, the tool swinging
    swinging = np.array([_step(scene, robot, sensor, live) for _ in range(6000)][1000:])
    assert np.sqrt(np.mean(np.sum(swinging[:, :3] ** 2, axis=1))) < 1.0


def _static(gravity) -> SensorKinematics:
    return SensorKinematics(np.zeros(6), np.zeros(6), np.asarray(gravity, dtype=float))


def test_orientations_that_cannot_tell_the_tool_from_the_bias_are_refused():
    tool = InertialParameters.point_mass(1.0, [0.0, 0.0, 0.05])
    bias = np.array([0.3, -0.2, 0.1, 0.01, 0.0, -0.01])

    def readings(gravities):
        motions = [_static(g) for g in gravities]
        return [tool_wrench(tool, m) + bias for m in motions], motions

    two = [[0, 0, -G], [0, -G, 0], [0, -G * math.cos(0.05), -G * math.sin(0.05)]]
    with pytest.raises(FtToolError, match='2 distinct'):
        identify_tool(*readings(two), static=True)
    one_axis = [[0, G * math.sin(a), -G * math.cos(a)] for a in np.radians([0, 30, 60, 90])]
    with pytest.raises(FtToolError, match='one axis'):
        identify_tool(*readings(one_axis), static=True)
    three = [[0, 0, -G], [0, -G, 0], [-G, 0, 0]]
    fit = identify_tool(*readings(three), static=True)
    assert fit.tool.mass == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(fit.tool.com, tool.com, atol=1e-9)
    np.testing.assert_allclose(fit.bias, bias, atol=1e-9)


def test_the_node_compensates_tares_and_refuses_bad_readings(ros, tmp_path):
    """dynamics_node with the tool preset in use: a reading of the tool's weight plus a bias
    plus a 5 N push is compensated after a tare to the push alone."""
    from diagnostic_msgs.msg import DiagnosticStatus
    from geometry_msgs.msg import WrenchStamped
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger
    from test_dynamics_node import joint_state

    from robot_dynamics.ros.dynamics_node import DynamicsNode
    from robot_dynamics.ros.topics import SENSOR_QOS

    tools = tmp_path / 'tools.yaml'
    inertia = TOOL.inertia_com
    tools.write_text(
        'tools:\n  gripper:\n    link: tool0\n    mass: 1.5\n'
        f'    com: {TOOL.com.tolist()}\n'
        f'    inertia: {{ixx: {inertia[0, 0]}, ixy: 0, ixz: 0, iyy: {inertia[1, 1]}, iyz: 0, '
        f'izz: {inertia[2, 2]}}}\n'
    )
    overrides = [
        Parameter('urdf_file', value=str(ARM_URDF)),
        Parameter('ft_sensor_topic', value='ft_sensor'),
        Parameter('tools_file', value=str(tools)),
        Parameter('active_tool', value='gripper'),
    ]
    node = DynamicsNode(node_name='ft_node', parameter_overrides=overrides)
    robot = RobotModel.from_urdf_string(ARM_URDF.read_text())
    pose = robot.neutral_positions() + 0.3
    expected = tool_wrench(TOOL, sensor_kinematics(robot, robot.frame_id('tool0'), pose))
    bias = np.array([0.4, -0.3, 0.2, 0.01, -0.02, 0.005])
    with ros(node) as harness:
        compensated = harness.collect(WrenchStamped, '/ft_node/compensated_wrench', SENSOR_QOS)
        joints = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        ft = harness.probe.create_publisher(WrenchStamped, 'ft_sensor', SENSOR_QOS)
        assert wait_for(lambda: node.robot is not None and ft.get_subscription_count(), 30)
        assert wait_for(lambda: node.robot.payload is not None, 30)

        def publish(stamp: float, wrench, frame='tool0'):
            joints.publish(joint_state(robot.joint_names, pose, np.zeros(7), (), stamp=stamp))
            message = WrenchStamped()
            message.header.frame_id = frame
            message.header.stamp.sec, message.header.stamp.nanosec = (
                int(stamp),
                int(round((stamp % 1) * 1e9)),
            )
            w = message.wrench
            w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z = map(float, wrench)
            ft.publish(message)

        stamp = 1.0
        while stamp < 4.0 and not len(compensated) >= 60:
            publish(stamp, expected + bias)
            stamp += 0.01
            wait_for(lambda: False, 0.01)
        assert len(compensated) >= 60, dict(node.rejections.counts)
        tare = harness.call(Trigger, '/ft_node/tare_ft_sensor', Trigger.Request())
        assert tare.success, tare.message
        push = np.array([5.0, 0, 0, 0, 0, 0])
        count = len(compensated)
        for _ in range(20):
            publish(stamp, expected + bias + push)
            stamp += 0.01
        assert wait_for(lambda: len(compensated) >= count + 10, 30)
        last = compensated[-1]
        assert last.header.frame_id == 'tool0'
        got = [last.wrench.force.x, last.wrench.force.y, last.wrench.force.z]
        np.testing.assert_allclose(got, push[:3], atol=1e-6)
        identify = harness.call(Trigger, '/ft_node/identify_tool_from_ft', Trigger.Request())
        assert not identify.success and '3 different orientations' in identify.message
        publish(stamp, expected, frame='no_such_link')
        publish(stamp + 0.01, [math.nan] * 6)
        assert wait_for(
            lambda: (
                node.rejections.counts.get('ft_unknown_frame')
                and node.rejections.counts.get('ft_non_finite')
            ),
            30,
        )
        # diagnostics set the F/T tool against the joint torques' payload
        gravities = [[0, 0, -G], [0, -G, 0], [-G, 0, 0]]
        motions = [_static(g) for g in gravities]
        fit = identify_tool([tool_wrench(TOOL, m) + bias for m in motions], motions, static=True)
        node.ft_sensor_input.last_fit = fit
        agreeing = node.ft_sensor_input.status('ft', (1.503, 0.004))
        disagreeing = node.ft_sensor_input.status('ft', (1.60, 0.004))
    assert agreeing.level == DiagnosticStatus.OK
    assert disagreeing.level == DiagnosticStatus.WARN and 'differ by' in disagreeing.message


def test_identify_tool_ft_from_a_recorded_bag(tmp_path):
    """The proving ground's realistic arm holding 6 still poses, recorded to a rosbag2 with
    joint_states and the F/T sensor's WrenchStamped; the command finds the tool and the bias."""
    import subprocess
    import sys

    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    scene, robot = _arm_scene('realistic')
    samples = []
    for pose in _random_poses(robot, 6, 2):
        scene.hold(pose)
        samples += [scene.step() for _ in range(2000)]
    store = get_typestore(Stores.LATEST)
    types = store.types
    header, time_type = types['std_msgs/msg/Header'], types['builtin_interfaces/msg/Time']
    vector, wrench_type = types['geometry_msgs/msg/Vector3'], types['geometry_msgs/msg/Wrench']
    bag = tmp_path / 'ft_bag'
    with Writer(bag, version=9) as writer:
        joints = writer.add_connection(
            '/joint_states', 'sensor_msgs/msg/JointState', typestore=store
        )
        ft = writer.add_connection('/ft_sensor', 'geometry_msgs/msg/WrenchStamped', typestore=store)

        def write_wrench(nanoseconds, values):
            message = types['geometry_msgs/msg/WrenchStamped'](
                header=header(
                    stamp=time_type(sec=nanoseconds // 10**9, nanosec=nanoseconds % 10**9),
                    frame_id='tool0',
                ),
                wrench=wrench_type(force=vector(*values[:3]), torque=vector(*values[3:])),
            )
            writer.write(
                ft, nanoseconds, store.serialize_cdr(message, 'geometry_msgs/msg/WrenchStamped')
            )

        # the recorder heard the sensor 0.2 s before the joint states: a ragged start
        for k in range(10):
            write_wrench(8 * 10**8 + k * 10**6, samples[0].ft_wrench)
        for index, sample in enumerate(samples[::4]):  # 250 Hz
            nanoseconds = int(round(sample.time * 1e9)) + 10**9
            if index == 100:
                write_wrench(nanoseconds, [math.nan] * 6)
            stamp = header(
                stamp=time_type(sec=nanoseconds // 10**9, nanosec=nanoseconds % 10**9),
                frame_id='',
            )
            state = types['sensor_msgs/msg/JointState'](
                header=stamp,
                name=list(robot.joint_names),
                position=sample.joints.positions.astype(float),
                velocity=sample.joints.velocities.astype(float),
                effort=sample.joints.efforts.astype(float),
            )
            writer.write(
                joints, nanoseconds, store.serialize_cdr(state, 'sensor_msgs/msg/JointState')
            )
            w = sample.ft_wrench
            message = types['geometry_msgs/msg/WrenchStamped'](
                header=header(stamp=stamp.stamp, frame_id='tool0'),
                wrench=wrench_type(force=vector(*w[:3]), torque=vector(*w[3:])),
            )
            writer.write(
                ft, nanoseconds, store.serialize_cdr(message, 'geometry_msgs/msg/WrenchStamped')
            )
    command = [sys.executable, '-m', 'robot_dynamics', 'identify-tool-ft', '--urdf', str(ARM_URDF)]
    name = 'gripper: v2 #1'  # YAML syntax in a name is quoted in the printed entry
    run = subprocess.run(
        command + ['--bag', str(bag), '--name', name], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert 'skipped 11 of 3011 F/T readings: no_joint_state 10, non_finite 1' in run.stderr
    entry = yaml.safe_load(run.stdout[run.stdout.index('tools:') :])['tools'][name]
    assert entry['link'] == 'tool0' and abs(entry['mass'] - TOOL.mass) < 0.005
    assert np.linalg.norm(np.array(entry['com']) - TOOL.com) < 0.002
    np.testing.assert_allclose(entry['ft_bias'][:3], scene.body_sensors.ft_bias[:3], atol=0.1)
    missing = subprocess.run(
        command + ['--bag', str(bag), '--ft-topic', '/nothing'], capture_output=True, text=True
    )
    assert missing.returncode == 2 and 'no topic "/nothing"' in missing.stderr
