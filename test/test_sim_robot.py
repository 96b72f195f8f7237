"""sim_robot: its simulation core against closed forms, finite differences and a second
algorithm, and the node through real rclpy topics and services."""

import math
import re

import numpy as np
import pinocchio as pin
import pytest
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from ros_harness import wait_for
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import SetBool

from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.identification.excitation import FourierTrajectory
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF, QUADRUPED_URDF
from robot_dynamics.ros.sim_robot import SimRobot
from robot_dynamics.ros.topics import DESCRIPTION_QOS, JOINT_STATE_QOS, SENSOR_QOS, stamp_seconds
from robot_dynamics.simulation.reference import (
    ArmSimulation,
    JointSample,
    SensorNoise,
    SimulationError,
    StanceMotion,
    scripted_excitation,
)

PAYLOAD = InertialParameters(
    1.5,
    [0.03, -0.02, 0.06],
    [[0.004, 0.0003, -0.0002], [0.0003, 0.0035, 0.0001], [-0.0002, 0.0001, 0.002]],
)
FEET = ['lf_foot', 'rf_foot', 'lh_foot', 'rh_foot']
STANCE = [0.0, 0.8, -1.6] * 4


def arm() -> RobotModel:
    return RobotModel.from_urdf_file(ARM_URDF)


def quadruped() -> RobotModel:
    return RobotModel.from_urdf_file(QUADRUPED_URDF, root_joint='floating')


def skew(vector: np.ndarray) -> np.ndarray:
    x, y, z = vector
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


# ---------------------------------------------------------------------- arm dynamics
def test_arm_tracks_the_fourier_closed_form():
    robot = arm()
    trajectory = scripted_excitation(robot)
    simulation = ArmSimulation(robot, trajectory)
    simulation.set_payload('tool0', PAYLOAD)
    samples = [simulation.advance() for _ in range(3000)]
    times = np.array([s.time for s in samples])
    expected, expected_velocity, _ = trajectory.evaluate(times)
    assert np.max(np.abs(np.array([s.positions for s in samples]) - expected)) < 1e-3
    assert np.max(np.abs(np.array([s.velocities for s in samples]) - expected_velocity)) < 1e-2
    assert np.ptp(expected, axis=0).min() > 0.1  # every joint really moves


def test_static_effort_is_urdf_gravity_plus_payload_weight_through_the_jacobian():
    robot = arm()
    nominal = arm()
    pose = np.array([0.3, -0.5, 0.2, -2.0, 0.4, 1.8, 0.5])
    still = FourierTrajectory(robot.joint_names, pose, np.zeros((7, 2)), np.zeros((7, 2)), 0.2, 5.0)
    simulation = ArmSimulation(robot, still)
    simulation.set_payload('tool0', PAYLOAD)
    sample = [simulation.advance() for _ in range(50)][-1]
    np.testing.assert_allclose(sample.positions, pose, atol=1e-12)
    q = nominal.configuration(pose)
    frame = nominal.frame_id('tool0')
    jacobian = pin.computeFrameJacobian(
        nominal.model, nominal.data, q, frame, pin.LOCAL_WORLD_ALIGNED
    )
    lever = nominal.data.oMf[frame].rotation @ PAYLOAD.com
    point_jacobian = jacobian[:3] - skew(lever) @ jacobian[3:]
    weight = PAYLOAD.mass * np.array([0.0, 0.0, -9.81])
    expected = dynamics.gravity_torques(nominal, q) - point_jacobian.T @ weight
    np.testing.assert_allclose(sample.efforts, expected, atol=1e-9)


def test_applied_torque_equals_mass_matrix_times_integrated_acceleration_plus_bias():
    robot = arm()
    simulation = ArmSimulation(robot, scripted_excitation(robot))
    simulation.set_payload('tool0', PAYLOAD)
    for _ in range(700):
        simulation.advance()
    first, second = simulation.advance(), simulation.advance()
    acceleration = (second.velocities - first.velocities) / simulation.step_size
    q, v = robot.configuration(first.positions), robot.tangent(first.velocities)
    mass_matrix = pin.crba(robot.model, robot.data, q)
    mass_matrix = np.triu(mass_matrix) + np.triu(mass_matrix, 1).T
    bias = pin.nonLinearEffects(robot.model, robot.data, q, v)
    np.testing.assert_allclose(
        first.efforts, mass_matrix @ acceleration + bias, rtol=1e-9, atol=1e-9
    )
    assert np.linalg.norm(acceleration) > 0.1


def test_measured_feedback_controller_acts_on_the_published_noisy_state():
    robot = arm()
    noise = SensorNoise(position=1e-4, velocity=0.001, effort=0.02, seed=3)
    simulation = ArmSimulation(
        robot, scripted_excitation(robot), feedback='measured', measurement_noise=noise
    )
    for _ in range(300):
        simulation.advance()
    sample = simulation.advance()
    published = noise.applied(sample, noise.generator())
    np.testing.assert_array_equal(
        published.positions, sample.measured_positions
    )  # what the controller read
    np.testing.assert_array_equal(published.velocities, sample.measured_velocities)
    assert 0.5e-3 < np.std(sample.measured_velocities - sample.velocities) < 2e-3
    assert np.all(published.efforts != sample.efforts)  # effort noise still added at publishing
    q_ref, v_ref, a_ref = simulation.reference(sample.time)
    omega = 2.0 * math.pi * 10.0
    command = (
        a_ref
        + omega**2 * (q_ref - sample.measured_positions)
        + 2.0 * omega * (v_ref - sample.measured_velocities)
    )
    expected = pin.rnea(
        robot.model,
        robot.data,
        robot.configuration(sample.positions),
        robot.tangent(sample.velocities),
        robot.tangent(command),
    )
    np.testing.assert_allclose(sample.efforts, expected, rtol=1e-10, atol=1e-10)
    exact = ArmSimulation(robot, scripted_excitation(robot)).advance()
    assert exact.measured_positions is None and exact.measured_velocities is None
    with pytest.raises(SimulationError, match='controller feedback'):
        ArmSimulation(robot, scripted_excitation(robot), feedback='noisy')


def test_simulation_refuses_a_floating_base_a_slow_step_and_foreign_joints():
    robot = arm()
    trajectory = scripted_excitation(robot)
    with pytest.raises(SimulationError, match='floating base'):
        ArmSimulation(quadruped(), trajectory)
    with pytest.raises(SimulationError, match='step'):
        ArmSimulation(robot, trajectory, step=2e-3)
    other = FourierTrajectory(
        tuple(f'j{i}' for i in range(7)),
        trajectory.offsets,
        trajectory.sine,
        trajectory.cosine,
        0.2,
        5.0,
    )
    with pytest.raises(SimulationError, match='not the model joints'):
        ArmSimulation(robot, other)


# ---------------------------------------------------------------------- noise
def test_noise_is_reproducible_from_its_seed_and_has_the_configured_deviation():
    noise = SensorNoise(velocity=0.002, effort=0.05, seed=7)
    clean = JointSample(0.0, np.zeros(7), np.zeros(7), np.zeros(7))
    first, second = noise.generator(), noise.generator()
    draws = np.array([noise.applied(clean, first).efforts for _ in range(3000)])
    again = np.array([noise.applied(clean, second).efforts for _ in range(3000)])
    np.testing.assert_array_equal(draws, again)
    assert abs(draws.std() / 0.05 - 1.0) < 0.03
    assert abs(draws.mean()) < 0.003
    other = SensorNoise(velocity=0.002, effort=0.05, seed=8)
    assert not np.array_equal(other.applied(clean, other.generator()).efforts, draws[0])
    with pytest.raises(SimulationError, match='effort noise'):
        SensorNoise(effort=-1.0)


# ---------------------------------------------------------------------- kinematic floating base
def test_stance_motion_keeps_every_foot_fixed_on_the_ground():
    robot = quadruped()
    motion = StanceMotion(robot, FEET, STANCE, ground_height=0.1)
    check = quadruped()
    feet = [check.frame_id(name) for name in FEET]
    for time in np.arange(0.0, 2.0, 0.05):
        sample = motion.sample(time)
        pin.framesForwardKinematics(
            check.model, check.data, check.configuration(sample.joints.positions, sample.base_pose)
        )
        points = np.array([check.data.oMf[i].translation for i in feet])
        np.testing.assert_allclose(points, motion.contact_points, atol=1e-9)
    assert np.isclose(motion.contact_points[:, 2].min(), 0.1)
    assert (
        np.ptp([motion.sample(t).base_pose[2] for t in (0.0, 0.25, 0.5)]) > 0.01
    )  # the base really moves


def test_stance_motion_velocities_are_the_derivatives_of_its_poses():
    robot = quadruped()
    motion, step = StanceMotion(robot, FEET, STANCE), 1e-5
    for time in (0.3, 1.1, 1.7):
        before, now, after = (
            motion.sample(time - step),
            motion.sample(time),
            motion.sample(time + step),
        )
        rotation = pin.Quaternion(*np.roll(now.base_pose[3:], 1)).toRotationMatrix()
        linear = rotation.T @ (after.base_pose[:3] - before.base_pose[:3]) / (2 * step)
        rotations = [
            pin.Quaternion(*np.roll(s.base_pose[3:], 1)).toRotationMatrix() for s in (before, after)
        ]
        angular = pin.log3(rotations[0].T @ rotations[1]) / (2 * step)
        np.testing.assert_allclose(now.base_twist, np.concatenate([linear, angular]), atol=1e-6)
        joint_rate = (after.joints.positions - before.joints.positions) / (2 * step)
        np.testing.assert_allclose(now.joints.velocities, joint_rate, atol=1e-5)
        assert np.linalg.norm(now.joints.velocities) > 0.01


def test_stance_motion_names_unknown_frames_and_wrong_stances():
    with pytest.raises(SimulationError, match='lf_toe'):
        StanceMotion(quadruped(), ['lf_toe', 'rf_foot', 'lh_foot', 'rh_foot'])
    with pytest.raises(SimulationError, match='12 values'):
        StanceMotion(quadruped(), FEET, [0.0, 0.8])
    with pytest.raises(SimulationError, match='fixed base'):
        StanceMotion(arm(), FEET)


# ---------------------------------------------------------------------- the node
def sim_node(namespace: str, **parameters) -> SimRobot:
    """sim_robot on the pinocchio engine (this file tests that exact reference; the MuJoCo
    engine's node tests are in test_sim_robot_mujoco.py)."""
    parameters.setdefault('engine', 'pinocchio')
    overrides = [Parameter(name, value=value) for name, value in parameters.items()]
    return SimRobot('sim_robot', namespace=namespace, parameter_overrides=overrides)


def test_node_publishes_latched_description_and_evenly_stamped_joint_states(ros):
    node = sim_node('/sim_a', payload_mass=1.5, payload_com=[0.03, -0.02, 0.06], publish_rate=250.0)
    with ros(node) as harness:
        states = harness.collect(JointState, '/sim_a/joint_states', JOINT_STATE_QOS)
        assert wait_for(lambda: len(states) >= 60, 10.0)
        late = harness.collect(String, '/sim_a/robot_description', DESCRIPTION_QOS)
        assert wait_for(lambda: len(late) == 1, 5.0)
    assert late[0].data == ARM_URDF.read_text()  # the hidden payload is not in it
    stamps = np.array([stamp_seconds(m.header.stamp) for m in states])
    np.testing.assert_allclose(np.diff(stamps), 1.0 / 250.0, atol=2e-6)
    message = states[-1]
    assert tuple(message.name) == RobotModel.from_urdf_file(ARM_URDF).joint_names
    assert len(message.position) == len(message.velocity) == len(message.effort) == 7


@pytest.mark.parametrize(
    'publish_rate, simulation_rate, used',
    [
        (300.0, 1000.0, 1200.0),
        (400.0, 1500.0, 1200.0),
        (300.0, 2400.0, 2400.0),
        (250.0, 500.0, 1000.0),
    ],
)
def test_stamps_are_one_publish_period_apart_when_the_rates_are_not_whole_multiples(
    ros, publish_rate, simulation_rate, used
):
    """Every published sample is one integration step: before, 300 Hz publishing of a 1 kHz
    simulation gave stamps 3 and 4 ms apart (never 3.333 ms). Now simulation_rate is a whole
    multiple of publish_rate of at least 1 kHz (another value, e.g. 500 Hz, which stopped the
    node before, is logged and the smallest such multiple used)."""
    namespace = f'/sim_h{int(publish_rate)}_{int(simulation_rate)}'
    node = sim_node(namespace, publish_rate=publish_rate, simulation_rate=simulation_rate)
    with ros(node) as harness:
        states = harness.collect(JointState, f'{namespace}/joint_states', JOINT_STATE_QOS)
        assert wait_for(lambda: len(states) >= 40, 10.0)
    nanoseconds = np.array([m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in states])
    spacing = np.diff(nanoseconds)
    assert np.abs(spacing - 1e9 / publish_rate).max() <= 1.0, sorted(
        set(spacing)
    )  # 1 ns: stamp resolution
    assert node.simulation_rate == used
    assert node.get_parameter('simulation_rate').value in (simulation_rate, 0.0)  # 0: auto
    assert node.simulation.step_size == pytest.approx(1.0 / used)


def test_attach_payload_service_restarts_the_same_motion(ros):
    node = sim_node(
        '/sim_b', payload_mass=1.5, start_with_payload=False, effort_noise=0.0, velocity_noise=0.0
    )
    start = node.simulation.reference(0.0)[0]
    with ros(node) as harness:
        states = harness.collect(JointState, '/sim_b/joint_states', SENSOR_QOS)
        assert wait_for(lambda: len(states) >= 100, 10.0), (
            len(states),
            node.published,
            harness.probe.count_publishers('/sim_b/joint_states'),
        )
        count = len(
            states
        )  # before the call: the restart's first sample may arrive before it returns
        answer = harness.call(
            SetBool, '/sim_b/sim_robot/attach_payload', SetBool.Request(data=True)
        )

        def back_at_start():
            return any(np.allclose(m.position, start, atol=1e-9) for m in states[count:])

        assert wait_for(back_at_start, 15.0), (
            'no joint state back at the trajectory start after the restart'
        )
    assert answer.success and 'attached' in answer.message
    assert node.robot.payload is not None and math.isclose(node.robot.payload[1].mass, 1.5)


def test_floating_node_publishes_odom_pose_in_world_and_twist_in_base_frame(ros):
    node = sim_node('/sim_c', root_joint='floating', publish_rate=100.0)
    with ros(node) as harness:
        odometry = harness.collect(Odometry, '/sim_c/odom', SENSOR_QOS)
        states = harness.collect(JointState, '/sim_c/joint_states', SENSOR_QOS)
        assert wait_for(lambda: len(odometry) >= 20 and len(states) >= 20, 10.0)
    message = odometry[-1]
    assert (message.header.frame_id, message.child_frame_id) == ('odom', 'base')
    odom_stamps = {stamp_seconds(m.header.stamp) for m in odometry}
    assert sum(stamp_seconds(m.header.stamp) in odom_stamps for m in states) >= 19
    assert len(states[-1].effort) == 0  # kinematic: no efforts
    motion = StanceMotion(quadruped(), FEET, STANCE)
    assert math.isclose(message.pose.pose.position.z, motion.start_position[2], abs_tol=0.05)


def test_node_names_the_bad_parameter(ros):
    with pytest.raises(SimulationError, match='payload_com needs 3 values'):
        sim_node('/sim_d', payload_mass=1.0, payload_com=[0.1, 0.2])
    hidden = r'hidden payload \(payload_mass, payload_com, payload_inertia\): payload '
    with pytest.raises(SimulationError, match=hidden + 'CoM must be 3 finite numbers'):
        sim_node('/sim_d', payload_mass=1.0, payload_com=[math.nan, 0.0, 0.0])
    with pytest.raises(SimulationError, match=hidden + 'inertia violates the triangle inequality'):
        sim_node('/sim_d', payload_mass=1.0, payload_inertia=[1.0, 0.0, 0.0, 0.01, 0.0, 0.01])
    with pytest.raises(SimulationError, match="root_joint must be 'fixed' or 'floating'"):
        sim_node('/sim_d', root_joint='wheeled')


def test_controller_feedback_parameter_puts_the_measurement_noise_into_the_applied_torque(ros):
    def effort_roughness(namespace: str, feedback: str) -> float:
        node = sim_node(
            namespace, controller_feedback=feedback, velocity_noise=0.01, effort_noise=0.0
        )
        assert node.simulation.feedback == ('exact' if feedback == 'wrong' else feedback)
        with ros(node) as harness:
            states = harness.collect(JointState, f'{namespace}/joint_states', JOINT_STATE_QOS)
            assert wait_for(lambda: len(states) >= 60, 10.0)
        efforts = np.array([m.effort for m in states[-50:]])
        return float(
            np.abs(np.diff(efforts, n=2, axis=0)).max()
        )  # N·m: the smooth motion's part is tiny

    assert effort_roughness('/sim_x', 'exact') < 0.05
    assert effort_roughness('/sim_m', 'measured') > 0.2  # ≈ 2ω·M·σ_v on the applied torque
    assert (
        effort_roughness('/sim_w', 'wrong') < 0.05
    )  # an unknown value is logged, the default used


@pytest.mark.parametrize(
    'parameters',
    [{'max_catch_up': -1.0}, {'max_catch_up': 0.0}, {'publish_rate': 250, 'max_catch_up': 1}],
)
def test_a_whole_number_is_taken_and_an_impossible_catch_up_falls_back(ros, parameters):
    # max_catch_up <= 0 would publish nothing: its default is used; an int publish_rate is taken.
    node = sim_node('/sim_f', **parameters)
    requested = parameters['max_catch_up']
    assert node.max_catch_up == (float(requested) if requested > 0 else 0.05)
    assert node.publish_rate == 250.0 and isinstance(node.publish_rate, float)
    with ros(node) as harness:
        states = harness.collect(JointState, '/sim_f/joint_states', SENSOR_QOS)
        assert wait_for(lambda: len(states) >= 10, 5.0)


def test_a_publish_rate_that_would_take_a_core_falls_back_to_its_default(ros):
    node = sim_node('/sim_r', publish_rate=1e6)
    assert node.publish_rate == 250.0
    with ros(node) as harness:
        states = harness.collect(JointState, '/sim_r/joint_states', SENSOR_QOS)
        assert wait_for(lambda: len(states) >= 10, 5.0)


@pytest.mark.parametrize('name, default', [('seed', 0), ('trajectory_seed', 1)])
def test_a_negative_seed_falls_back_to_its_default_and_the_robot_runs(ros, name, default):
    node = sim_node('/sim_s', **{name: -3})
    assert node.value(name) == default
    with ros(node) as harness:
        states = harness.collect(JointState, '/sim_s/joint_states', SENSOR_QOS)
        assert wait_for(lambda: len(states) >= 10, 5.0)


def test_a_runtime_parameter_change_is_refused_with_the_reason(ros):
    from rcl_interfaces.srv import SetParameters

    node = sim_node('/sim_g')
    with ros(node) as harness:
        request = SetParameters.Request(
            parameters=[Parameter('publish_rate', value=100.0).to_parameter_msg()]
        )
        (result,) = harness.call(
            SetParameters, '/sim_g/sim_robot/set_parameters', request, timeout=10
        ).results
    assert not result.successful and 'read-only' in result.reason
    assert node.publish_rate == 250.0


def test_unreachable_sway_stops_the_motion_without_killing_the_node(ros):
    node = sim_node('/sim_e', root_joint='floating', sway_amplitude=0.6)
    with ros(node) as harness:
        states = harness.collect(JointState, '/sim_e/joint_states', SENSOR_QOS)
        assert wait_for(lambda: node._timer.is_canceled(), 10.0)
        answer = harness.call(
            SetBool, '/sim_e/sim_robot/attach_payload', SetBool.Request(data=True)
        )
    assert not answer.success and 'kinematic' in answer.message  # still serving, with the reason
    assert len(states) < 100  # it published until the legs could no longer reach the ground


def test_simulated_motion_matches_mujoco_integrating_the_same_torques():
    """A second engine: MuJoCo, given the URDF with the payload as an extra welded body and the
    torques the simulation applied, integrates (semi-implicit Euler, same step) to the same
    joint trajectory."""
    mujoco = pytest.importorskip('mujoco')
    robot = arm()
    simulation = ArmSimulation(robot, scripted_excitation(robot))
    simulation.set_payload('tool0', PAYLOAD)
    (ixx, ixy, ixz), (_, iyy, iyz), (_, _, izz) = PAYLOAD.inertia_com
    payload_body = (
        f'<link name="payload"><inertial><origin xyz="{" ".join(map(str, PAYLOAD.com))}"/><mass '
        f'value="{PAYLOAD.mass}"/><inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" '
        f'iyz="{iyz}" izz="{izz}"/></inertial></link><joint name="payload_weld" '
        'type="fixed"><parent link="tool0"/><child link="payload"/></joint></robot>'
    )
    text = re.sub(r'<dynamics\b[^>]*/>', '', ARM_URDF.read_text()).replace('</robot>', payload_body)
    text = re.sub(
        r'(<robot\b[^>]*>)',
        r'\1<mujoco><compiler discardvisual="false" fusestatic="false" '
        r'balanceinertia="false"/></mujoco>',
        text,
        count=1,
    )
    model = mujoco.MjSpec.from_string(text).compile()
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    model.opt.timestep = simulation.step_size
    model.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    data = mujoco.MjData(model)
    first = simulation.advance()
    data.qpos[:], data.qvel[:], data.qfrc_applied[:] = (
        first.positions,
        first.velocities,
        first.efforts,
    )
    mujoco.mj_step(model, data)
    for _ in range(1500):
        sample = simulation.advance()
        np.testing.assert_allclose(data.qpos, sample.positions, atol=1e-7)
        np.testing.assert_allclose(data.qvel, sample.velocities, atol=1e-5)
        data.qfrc_applied[:] = sample.efforts
        mujoco.mj_step(model, data)


# ---------------------------------------------------------------------- external wrench (the truth)
def _rnea_external_torques(
    robot: RobotModel, q: np.ndarray, link: str, wrench: np.ndarray
) -> np.ndarray:
    """Joint torques of a wrench on ``link`` (its frame, at its origin) by RNEA with f_ext, not the
    Jacobian."""
    model, data, zero = robot.model, robot.model.createData(), np.zeros(robot.model.nv)
    forces = pin.StdVec_Force()
    forces.extend([pin.Force.Zero() for _ in range(model.njoints)])
    frame = model.frames[model.getFrameId(link)]
    forces[frame.parentJoint] = frame.placement.act(pin.Force(wrench[:3], wrench[3:]))
    return pin.rnea(model, data, q, zero, zero) - pin.rnea(model, data, q, zero, zero, forces)


def test_external_wrench_enters_the_forward_dynamics_as_jacobian_transpose_force():
    robot = arm()
    simulation = ArmSimulation(robot, scripted_excitation(robot))
    for _ in range(300):
        simulation.advance()
    wrench = np.array([4.0, -12.0, 7.0, 0.4, -0.3, 0.2])
    simulation.set_external_wrench('fr3_link5', wrench[:3], wrench[3:])
    first, second = simulation.advance(), simulation.advance()
    q, v = robot.configuration(first.positions), robot.tangent(first.velocities)
    np.testing.assert_allclose(
        first.external_torques,
        _rnea_external_torques(robot, q, 'fr3_link5', wrench),
        rtol=1e-9,
        atol=1e-9,
    )
    acceleration = (second.velocities - first.velocities) / simulation.step_size
    mass_matrix = pin.crba(robot.model, robot.data, q)
    mass_matrix = np.triu(mass_matrix) + np.triu(mass_matrix, 1).T
    bias = pin.nonLinearEffects(robot.model, robot.data, q, v)
    np.testing.assert_allclose(
        first.efforts + first.external_torques,
        mass_matrix @ acceleration + bias,
        rtol=1e-9,
        atol=1e-9,
    )
    simulation.set_external_wrench('fr3_link5', np.zeros(3), np.zeros(3))
    assert simulation.advance().external_torques is None and simulation.external_wrench is None


def test_external_wrench_refuses_unknown_links_and_non_finite_values():
    simulation = ArmSimulation(arm(), scripted_excitation(arm()))
    with pytest.raises(SimulationError, match='not a frame'):
        simulation.set_external_wrench('nowhere', [1.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    with pytest.raises(SimulationError, match='finite'):
        simulation.set_external_wrench('tool0', [math.nan, 0.0, 0.0], [0.0, 0.0, 0.0])
    with pytest.raises(SimulationError, match='fixed to the world'):
        simulation.set_external_wrench(
            simulation.robot.model.frames[1].name, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]
        )


def test_external_wrench_command_through_the_node_publishes_the_applied_truth(ros):
    from geometry_msgs.msg import WrenchStamped

    node = sim_node('/sim_w', effort_noise=0.0, velocity_noise=0.0)
    with ros(node) as harness:
        wrenches = harness.collect(
            WrenchStamped, '/sim_w/sim_robot/true_external_wrench', SENSOR_QOS
        )
        torques = harness.collect(JointState, '/sim_w/sim_robot/true_external_torques', SENSOR_QOS)
        states = harness.collect(JointState, '/sim_w/joint_states', SENSOR_QOS)
        assert wait_for(lambda: len(torques) >= 20 and len(states) >= 20, 10.0)
        assert not np.any([m.effort for m in torques[:10]])  # nothing pushes yet
        command = harness.probe.create_publisher(
            WrenchStamped, '/sim_w/sim_robot/external_wrench_command', 10
        )
        push = WrenchStamped()
        push.header.frame_id = 'nowhere'  # refused, logged; the node keeps running
        command.publish(push)
        push.header.frame_id = 'tool0'
        push.wrench.force.x, push.wrench.force.z, push.wrench.torque.y = 10.0, -5.0, 0.5
        assert wait_for(
            lambda: harness.probe.count_subscribers('/sim_w/sim_robot/external_wrench_command') > 0,
            5.0,
        )
        command.publish(push)
        assert wait_for(
            lambda: any(
                m.header.frame_id == 'tool0' and m.wrench.force.x == 10.0 for m in wrenches
            ),
            10.0,
        )
        pushed = next(m for m in torques if np.any(m.effort))
        state = next(m for m in states if m.header.stamp == pushed.header.stamp)
        robot = arm()
        expected = _rnea_external_torques(
            robot,
            robot.configuration(np.array(state.position)),
            'tool0',
            np.array([10.0, 0.0, -5.0, 0.0, 0.5, 0.0]),
        )
        np.testing.assert_allclose(pushed.effort, expected, rtol=1e-9, atol=1e-9)
        command.publish(WrenchStamped())  # zero: removed
        count = len(torques)
        assert wait_for(lambda: len(torques) > count + 5 and not np.any(torques[-1].effort), 10.0)
    assert wrenches[-1].wrench.force.x == 0.0
