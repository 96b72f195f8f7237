"""A tilted or moving base in every live estimate: closed forms (a 2 kg link 0.3 m from a
horizontal joint: 5.886 N·m upright, 5.531 N·m on a base pitched 20°, 8.886 N·m on a base
accelerating upward at 5 m/s²) through the core and the real node with a mounting, an IMU and
odometry; MuJoCo's inverse dynamics of the arm on a free-floating, spinning, accelerating base as
the independent reference; the IMU's lever-arm transport against its closed form; stale and bad
base state."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from ros_harness import wait_for

from robot_dynamics.core.dynamics.base_motion import BaseMotion, MovingBaseTorques, rpy_matrix
from robot_dynamics.core.errors import JointStateError
from robot_dynamics.core.live.live_dynamics import LiveDynamics
from robot_dynamics.core.live.settings import LiveSettings
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.base_state import BaseState, BaseStateError
from robot_dynamics.core.streams.joint_states import JointSample
from robot_dynamics.models import ARM_URDF

G = 9.81
PITCH = math.radians(20.0)
UPRIGHT, PITCHED, ACCELERATING = 2 * G * 0.3, 2 * G * 0.3 * math.cos(PITCH), 2 * (G + 5.0) * 0.3
# The 2 kg link 0.3 m from a horizontal joint (axis y), with an IMU 0.1 m above the base origin.
LEVER_URDF = """<robot name="lever">
  <link name="base"/>
  <link name="imu_link"/>
  <joint name="imu_mount" type="fixed"><origin xyz="0 0 0.1"/><parent link="base"/>
    <child link="imu_link"/></joint>
  <link name="arm"><inertial><origin xyz="0.3 0 0"/><mass value="2"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="2"/></joint>
</robot>"""


def lever() -> RobotModel:
    return RobotModel.from_urdf_string(LEVER_URDF, gravity=(0.0, 0.0, -G))


def _gravity(live: LiveDynamics, stamp: float = 1.0) -> float:
    torques = live.torques(JointSample(('hinge',), (0.0,), (0.0,), (), stamp))
    return abs(float(torques.gravity[0]))


def test_the_three_closed_forms_through_the_core():
    assert _gravity(LiveDynamics(lever())) == pytest.approx(UPRIGHT, abs=1e-12)
    mounted = LiveDynamics(
        lever(), LiveSettings(base_state='mounting', base_orientation=(0.0, PITCH, 0.0))
    )
    assert _gravity(mounted) == pytest.approx(PITCHED, abs=1e-12)
    assert PITCHED == pytest.approx(5.531, abs=5e-4)
    imu = LiveDynamics(lever(), LiveSettings(base_state='imu'))
    imu.take_base_imu(1.0, 'imu_link', (0.0, 0.0, 0.0), (0.0, 0.0, G + 5.0))
    assert _gravity(imu) == pytest.approx(ACCELERATING, abs=1e-12)
    odom = LiveDynamics(lever(), LiveSettings(base_state='odom'))
    for k in range(300):  # rising, 5 m/s² upward
        t = 0.01 * k
        odom.take_base_odom(t, 'base', (0, 0, 0, 1), (0.0, 0.0, 5.0 * t), (0.0, 0.0, 0.0))
    assert _gravity(odom, 2.99) == pytest.approx(ACCELERATING, abs=1e-9)


def test_a_repeated_stamp_keeps_the_tilted_gravity_and_is_refused_for_the_rest():
    mounted = LiveDynamics(
        lever(), LiveSettings(base_state='mounting', base_orientation=(0.0, PITCH, 0.0))
    )
    sample = JointSample(('hinge',), (0.0,), (0.0,), (1.0,), 1.0)
    assert mounted.update(sample).inverse_dynamics is not None
    repeated = mounted.torques(sample)
    assert abs(float(repeated.gravity[0])) == pytest.approx(PITCHED, abs=1e-12)
    assert repeated.inverse_dynamics is None and repeated.residual is None
    with pytest.raises(JointStateError) as error:  # the same sample resent
        mounted.update(sample)
    assert error.value.reason == 'resent_sample'
    with pytest.raises(JointStateError, match='joint_state_stamps: arrival') as error:
        mounted.update(sample._replace(efforts=(2.0,)))  # new values, the stamp left as it was
    assert error.value.reason == 'repeated_stamp'
    later = mounted.update(sample._replace(stamp=1.001))
    assert abs(float(later.gravity[0])) == pytest.approx(PITCHED, abs=1e-12)
    assert later.inverse_dynamics is not None


def _mujoco_free_arm():
    mujoco = pytest.importorskip('mujoco')
    text = re.sub(r'<dynamics\b[^>]*/>', '', ARM_URDF.read_text())
    compiler = (
        '<mujoco><compiler discardvisual="false" fusestatic="false" '
        'balanceinertia="false"/></mujoco>'
    )
    text = re.sub(r'(<robot\b[^>]*>)', r'\1' + compiler, text, count=1)
    spec = mujoco.MjSpec.from_string(text)
    spec.worldbody.first_body().add_freejoint()
    model = spec.compile()
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    return mujoco, model


def test_joint_torques_on_a_moving_base_equal_mujoco_free_floating_inverse_dynamics():
    """MuJoCo free joint: qpos = [p, (w, x, y, z)], qvel = [ṗ world, ω body], qacc = [p̈ world,
    ω̇ body]; the base's classical acceleration a (world) and gravity give f = Rᵀ(a − g)."""
    mujoco, model = _mujoco_free_arm()
    data = mujoco.MjData(model)
    robot = RobotModel.from_urdf_file(ARM_URDF)
    moving = MovingBaseTorques(robot)
    addresses = [model.joint(name).qposadr[0] for name in robot.joint_names]
    velocity_addresses = [model.joint(name).dofadr[0] for name in robot.joint_names]
    rng = np.random.default_rng(4)
    gravity = np.array([0.0, 0.0, -G])
    for _ in range(5):
        quaternion = rng.normal(size=4)
        quaternion /= np.linalg.norm(quaternion)
        rotation = np.zeros(9)
        mujoco.mju_quat2Mat(rotation, quaternion)
        rotation = rotation.reshape(3, 3)
        omega, alpha, acceleration = (rng.uniform(-2, 2, 3) for _ in range(3))
        q, qd, qdd = (rng.uniform(-1.5, 1.5, robot.num_joints) for _ in range(3))
        data.qpos[:] = 0.0
        data.qpos[3:7] = quaternion
        data.qpos[addresses] = q
        data.qvel[:] = 0.0
        data.qvel[3:6] = omega
        data.qvel[velocity_addresses] = qd
        data.qacc[:] = 0.0
        data.qacc[:3], data.qacc[3:6] = acceleration, alpha
        data.qacc[velocity_addresses] = qdd
        mujoco.mj_inverse(model, data)
        motion = BaseMotion(rotation.T @ (acceleration - gravity), omega, alpha)
        np.testing.assert_allclose(
            moving.torques(q, qd, qdd, motion),
            data.qfrc_inverse[velocity_addresses],
            rtol=0,
            atol=1e-9,
        )


def test_imu_lever_arm_transport_matches_its_closed_form_on_a_spinning_base():
    """Base origin at rest, spinning up about z (ω = α t): an IMU at r reads
    a_r − g = α × r + ω × (ω × r) − g in its own axes (here turned 90° about x); the base origin's
    specific force must come out as −g, ω and α exactly (α after the fit's window fills)."""
    robot = RobotModel.from_urdf_string(
        LEVER_URDF.replace(
            '<origin xyz="0 0 0.1"/>', '<origin xyz="0.2 0.1 0.1" rpy="1.5708 0 0"/>'
        ),
        gravity=(0.0, 0.0, -G),
    )
    state = BaseState('imu', robot, (0.0, 0.0, -G), smoothing_time=0.0)
    mount_rotation = rpy_matrix((1.5708, 0.0, 0.0))
    r = np.array([0.2, 0.1, 0.1])
    alpha = np.array([0.0, 0.0, 3.0])
    g_base = np.array([0.0, 0.0, -G])
    for k in range(40):
        t = 0.002 * k
        omega = alpha * t
        accelerometer = np.cross(alpha, r) + np.cross(omega, np.cross(omega, r)) - g_base
        state.take_imu(t, 'imu_link', mount_rotation.T @ omega, mount_rotation.T @ accelerometer)
    motion = state.motion_at(t)
    np.testing.assert_allclose(motion.angular_velocity, omega, atol=1e-12)
    np.testing.assert_allclose(motion.angular_acceleration, alpha, atol=1e-9)
    np.testing.assert_allclose(motion.specific_force, -g_base, atol=1e-9)


def test_missing_or_stale_base_state_stops_the_outputs_and_says_why():
    live = LiveDynamics(lever(), LiveSettings(base_state='imu', max_base_state_age=0.05))
    sample = JointSample(('hinge',), (0.0,), (0.0,), (), 2.0)
    with pytest.raises(JointStateError, match='no imu message yet') as raised:
        live.torques(sample)
    assert raised.value.reason == 'base_state_unavailable'
    assert 'no imu message yet' in live.contact_status().message
    live.take_base_imu(1.0, 'imu_link', (0, 0, 0), (0, 0, G))
    with pytest.raises(JointStateError, match='max_base_state_age'):
        live.torques(sample)
    live.take_base_imu(1.99, 'imu_link', (0, 0, 0), (0, 0, G))
    assert live.torques(sample) is not None
    # an IMU on wall time beside joint states on simulation time
    live.take_base_imu(1.7e9, 'imu_link', (0, 0, 0), (0, 0, G))
    with pytest.raises(JointStateError, match='stamped by another clock') as raised:
        live.torques(JointSample(('hinge',), (0.0,), (0.0,), (), 2.01))
    assert 'simulation time against wall time' in str(raised.value)


@pytest.mark.parametrize(
    'frame, gyro, reason',
    [
        ('camera_9', (0, 0, 0), 'unknown_frame'),
        ('arm', (0, 0, 0), 'unknown_frame'),  # moved by the hinge
        ('imu_link', (0, float('nan'), 0), 'non_finite'),
        ('imu_link', (0, 2e3, 0), 'out_of_range'),  # beyond ±1000 rad/s
    ],
)
def test_a_bad_imu_message_is_refused_by_reason_and_changes_nothing(frame, gyro, reason):
    state = BaseState('imu', lever(), (0.0, 0.0, -G))
    state.take_imu(1.0, 'imu_link', (0, 0, 0), (0, 0, G))
    with pytest.raises(BaseStateError) as raised:
        state.take_imu(1.001, frame, gyro, (0, 0, G))
    assert raised.value.reason == reason
    np.testing.assert_allclose(state.motion_at(1.0).specific_force, (0, 0, G))


def test_while_every_imu_message_is_refused_no_outputs_say_why_and_zeros_are_no_orientation():
    """An IMU in a frame the model lacks: the joint states wait for a usable one and say what
    was refused. An all-zero orientation (an IMU without a filter that kept covariance 0) is
    none: its gyro and accelerometer are taken."""
    live = LiveDynamics(lever(), LiveSettings(base_state='imu'))
    with pytest.raises(BaseStateError):
        live.take_base_imu(1.0, 'camera_9', (0, 0, 0), (0, 0, G))
    with pytest.raises(JointStateError, match='no usable imu message yet .*camera_9'):
        live.torques(JointSample(('hinge',), (0.0,), (0.0,), (), 1.0))
    live.take_base_imu(1.001, 'imu_link', (0, 0, 0), (0, 0, G), (0.0, 0.0, 0.0, 0.0))
    torques = live.torques(JointSample(('hinge',), (0.0,), (0.0,), (), 1.001))
    assert np.all(np.isfinite(torques.gravity)) and live.base_state.attitude() is None


def test_one_absurd_imu_or_odometry_sample_is_refused_and_spoils_nothing():
    """A specific force of 1e300 m/s² (beyond ±1e4) or a base speed of 1e5 m/s (beyond ±1e3)
    is no measurement: refused, and the smoothed state stays what the good samples made it."""
    imu = BaseState('imu', lever(), (0.0, 0.0, -G))
    imu.take_imu(1.0, 'imu_link', (0, 0, 0), (0, 0, G))
    with pytest.raises(BaseStateError, match='beyond ±10000 m/s²') as raised:
        imu.take_imu(1.001, 'imu_link', (0, 0, 0), (1e300, 0, G))
    assert raised.value.reason == 'out_of_range'
    imu.take_imu(1.002, 'imu_link', (0, 0, 0), (0, 0, G))
    np.testing.assert_allclose(imu.motion_at(1.002).specific_force, (0, 0, G))
    odometry = BaseState('odom', lever(), (0.0, 0.0, -G))
    with pytest.raises(BaseStateError, match='beyond ±1000 m/s') as raised:
        odometry.take_odom(1.0, 'base', (0, 0, 0, 1), (1e5, 0, 0), (0, 0, 0))
    assert raised.value.reason == 'out_of_range'


@pytest.mark.parametrize('quaternion', [(0, 0, 0, 0), (0, float('nan'), 0, 1), (0, 0, 0, 3)])
def test_an_odometry_with_a_bad_quaternion_is_refused(quaternion):
    state = BaseState('odom', lever(), (0.0, 0.0, -G))
    with pytest.raises(BaseStateError) as raised:
        state.take_odom(1.0, 'base', quaternion, (0, 0, 0), (0, 0, 0))
    assert raised.value.reason in ('bad_orientation', 'non_finite')


def test_quaternion_matrix_equals_pinocchio_and_normalises():
    import pinocchio as pin

    from robot_dynamics.core.streams.base_state import quaternion_matrix

    rng = np.random.default_rng(11)
    for _ in range(200):
        unit = rng.normal(size=4)
        unit /= np.linalg.norm(unit)
        scaled = unit * rng.uniform(0.95, 1.05)  # within the accepted distance from unit norm
        x, y, z, w = unit
        expected = pin.Quaternion(w, x, y, z).toRotationMatrix()
        np.testing.assert_allclose(quaternion_matrix(tuple(scaled)), expected, atol=2e-16)
        np.testing.assert_allclose(quaternion_matrix(unit), expected, atol=2e-16)


def test_odometry_of_a_frame_mounted_off_the_base_is_moved_to_the_base_origin():
    """The twist of imu_link (0.1 m above the base, same axes) spinning about x at 2 rad/s is
    v_base = v_link − ω × r; its attitude is the base's."""
    state = BaseState('odom', lever(), (0.0, 0.0, -G))
    quaternion = (math.sin(0.2), 0.0, 0.0, math.cos(0.2))  # 0.4 rad about x
    for stamp in (1.0, 1.01):
        state.take_odom(stamp, 'imu_link', quaternion, (0.5, -0.2, 0.0), (2.0, 0.0, 0.0))
    np.testing.assert_allclose(state.motion_at(1.01).angular_velocity, (2.0, 0.0, 0.0))
    np.testing.assert_allclose(state.attitude(), rpy_matrix((0.4, 0.0, 0.0)), atol=1e-15)
    # at rest in the world frame apart from the spin: the specific force is −g in base axes plus
    # ω × v at the base origin, v = (0.5, −0.2, 0) − (2, 0, 0) × (0, 0, 0.1) = (0.5, 0, 0)
    force = state.motion_at(1.01).specific_force
    gravity_in_base = rpy_matrix((0.4, 0.0, 0.0)).T @ np.array([0.0, 0.0, G])
    np.testing.assert_allclose(force, np.cross((2.0, 0.0, 0.0), (0.5, 0.0, 0.0)) + gravity_in_base)


def test_between_odometry_messages_the_tilt_is_carried_along_the_roll_rate():
    """A base rolling about x at 0.5 rad/s, odometry every 50 ms, joint states every 7 ms: the
    lever's gravity torque is 2 kg · g · 0.3 m · cos φ(t) at each joint state's own roll angle
    φ(t) (taken as it was at the last odometry it erred by up to 0.11 N·m)."""
    rate = 0.5
    live = LiveDynamics(lever(), LiveSettings(base_state='odom'))
    odometry = list(np.arange(1.0, 2.0, 0.05))
    errors = []
    for stamp in np.arange(1.0, 2.0, 0.007):
        while odometry and odometry[0] <= stamp:
            half = rate * odometry[0] / 2
            quaternion = (math.sin(half), 0.0, 0.0, math.cos(half))
            live.take_base_odom(odometry.pop(0), '', quaternion, (0.0,) * 3, (rate, 0.0, 0.0))
        errors.append(_gravity(live, stamp) - 2 * G * 0.3 * math.cos(rate * stamp))
    np.testing.assert_allclose(errors, 0.0, atol=1e-9)
    np.testing.assert_allclose(
        live.base_state.attitude(1.234), rpy_matrix((rate * 1.234, 0.0, 0.0)), atol=1e-12
    )


def test_a_refused_imu_message_leaves_the_attitude_as_it_was():
    state = BaseState('imu', lever(), (0.0, 0.0, -G))
    upright = (0.0, 0.0, 0.0, 1.0)
    state.take_imu(1.0, 'imu_link', (0.0, 0.0, 0.0), (0.0, 0.0, G), upright)
    rolled = (math.sin(0.2), 0.0, 0.0, math.cos(0.2))
    with pytest.raises(BaseStateError, match='not newer'):
        state.take_imu(0.5, 'imu_link', (0.0, 0.0, 0.0), (0.0, 0.0, G), rolled)
    with pytest.raises(BaseStateError):
        state.take_imu(2.0, 'imu_link', (math.nan, 0.0, 0.0), (0.0, 0.0, G), rolled)
    np.testing.assert_allclose(state.attitude(), np.eye(3), atol=1e-15)


# ---------------------------------------------------------------------- the real node
def _node_gravity(ros, parameters: dict, publish_base, outputs: int = 25) -> float:
    """|~/gravity_torques| of a dynamics_node on the lever at q = 0 with ``parameters``, while
    ``publish_base(probe, stamp)`` publishes its base state before each joint state; the last of
    ``outputs`` published torques."""
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from test_dynamics_node import joint_state

    from robot_dynamics.ros.dynamics_node import DynamicsNode
    from robot_dynamics.ros.topics import SENSOR_QOS

    overrides = [Parameter('robot_description', value=LEVER_URDF)] + [
        Parameter(name, value=value) for name, value in parameters.items()
    ]
    node = DynamicsNode(node_name=f'base_{id(overrides)}', parameter_overrides=overrides)
    with ros(node) as harness:
        gravity = harness.collect(JointState, f'/{node.get_name()}/gravity_torques', SENSOR_QOS)
        feed = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        base = publish_base(harness.probe) if publish_base else None
        assert wait_for(lambda: node.robot is not None and feed.get_subscription_count(), 30)
        for k in range(outputs + 15):
            stamp = 5.0 + 0.01 * k
            if base is not None:
                base(stamp)
            feed.publish(joint_state(('hinge',), (0.0,), (0.0,), stamp=stamp))
            if wait_for(lambda: len(gravity) >= outputs, 0.05):
                break
        assert wait_for(lambda: len(gravity) >= outputs, 30), dict(node.rejections.counts)
        return abs(gravity[-1].effort[0])


def test_the_node_gives_the_three_closed_forms_with_mounting_imu_and_odom(ros):
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Imu

    from robot_dynamics.ros.topics import JOINT_STATE_QOS

    def stamped(message, stamp: float):
        message.header.stamp.sec = int(stamp)
        message.header.stamp.nanosec = int(round((stamp - int(stamp)) * 1e9))
        return message

    def imu_source(probe):
        publisher = probe.create_publisher(Imu, 'imu', JOINT_STATE_QOS)

        def publish(stamp):
            message = stamped(Imu(), stamp)
            message.header.frame_id = 'imu_link'
            message.orientation_covariance[0] = -1.0
            message.linear_acceleration.z = G + 5.0
            publisher.publish(message)

        return publish

    def odom_source(probe):
        publisher = probe.create_publisher(Odometry, 'odom', JOINT_STATE_QOS)

        def publish(stamp):
            message = stamped(Odometry(), stamp)
            message.header.frame_id, message.child_frame_id = 'odom', 'base'
            message.pose.pose.orientation.w = 1.0
            message.twist.twist.linear.z = 5.0 * stamp
            publisher.publish(message)

        return publish

    assert _node_gravity(ros, {}, None) == pytest.approx(UPRIGHT, abs=1e-9)
    mounting = {'base_state': 'mounting', 'base_orientation': [0.0, PITCH, 0.0]}
    assert _node_gravity(ros, mounting, None) == pytest.approx(PITCHED, abs=1e-9)
    assert _node_gravity(ros, {'base_state': 'imu'}, imu_source) == pytest.approx(
        ACCELERATING, abs=1e-9
    )
    # the low-passed twist's transient has left the derivative's window after ~0.5 s
    assert _node_gravity(ros, {'base_state': 'odom'}, odom_source, 80) == pytest.approx(
        ACCELERATING, abs=1e-6
    )


@pytest.mark.parametrize('route', ['observer', 'inverse_dynamics'])
def test_no_phantom_external_torque_on_an_accelerating_base_once_the_imu_is_used(route):
    """The lever held at q = 0 on a base accelerating upward at 5 m/s²: its motor supplies the
    closed form 8.886 N·m; with the IMU the external torque is zero, without it is the 3 N·m the
    acceleration adds."""
    sign = math.copysign(
        1.0,
        LiveDynamics(lever()).torques(JointSample(('hinge',), (0.0,), (0.0,), (), 1.0)).gravity[0],
    )
    external = {}
    for base_state in ('none', 'imu'):
        live = LiveDynamics(
            lever(), LiveSettings(base_state=base_state, external_torque_method=route)
        )
        for k in range(300):
            stamp = 1.0 + 0.001 * k
            live.take_base_imu(stamp, 'imu_link', (0, 0, 0), (0, 0, G + 5.0))
            result = live.update(
                JointSample(('hinge',), (0.0,), (0.0,), (sign * ACCELERATING,), stamp)
            )
        external[base_state] = abs(float(result.external_torques[0]))
    assert external['imu'] < 1e-9
    assert external['none'] == pytest.approx(2 * 5.0 * 0.3, rel=0.02)


@pytest.mark.parametrize(
    'tilt, load',
    [
        ((0.0, math.radians(20.0), 0.0), 0.0),
        ((math.radians(-10.0), math.radians(5.0), 0.0), 0.0),
        (None, 1.5),
        (None, 0.0),
    ],
)
def test_a_realistic_arm_mounted_tilted_or_carrying_a_load_is_told_which(tilt, load):
    """The proving ground's realistic arm (link inertias, offsets and effort scale off the URDF,
    noise) mounted at ``tilt`` or carrying ``load`` [kg] the model lacks, held at two poses,
    the node taking it upright and unloaded: the contact status gives the mounting within 0.6°
    or the load within 0.1 kg; upright and unloaded it says nothing."""
    from robot_dynamics.core.model.inertia import InertialParameters
    from robot_dynamics.simulation.profiles import load_profile
    from robot_dynamics.simulation.scenes import ArmScene

    text = ARM_URDF.read_text()
    scene = ArmScene(
        text,
        load_profile('realistic'),
        profile_seed=5,
        table=False,
        base_tilt=tilt or (0, 0, 0),
        payload=InertialParameters.point_mass(load or 1.0, [0.0, 0.03, 0.08]),
        carrying=bool(load),
    )
    robot = RobotModel.from_urdf_string(text)
    live = LiveDynamics(robot, LiveSettings())
    for pose in ([0.3, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4], [-0.8, 0.4, -0.3, -1.2, 0.6, 2.0, -0.5]):
        scene.hold(pose)
        for _ in range(1500):
            sample = scene.step()
            joints = sample.joints
            live.update(
                JointSample(
                    robot.joint_names,
                    joints.positions,
                    joints.velocities,
                    joints.efforts,
                    sample.time,
                )
            )
    message = live.contact_status().message  # once: the first rest was seen sample by sample
    if load:
        found = re.search(r'the efforts fit \+([0-9.]+) kg at tool0', message)
        assert found and 'efforts fit gravity' not in message, message
        assert float(found[1]) == pytest.approx(load, abs=0.1)
    elif tilt is None:
        assert 'efforts fit' not in message, message
    else:
        found = re.search(r'base_orientation \[([-0-9.]+), ([-0-9.]+), 0\.0\] fits them', message)
        assert found and 'the robot is mounted tilted and taken upright' in message, message
        np.testing.assert_allclose([float(found[1]), float(found[2])], tilt[:2], atol=0.01)


def test_the_node_tells_an_arm_mounted_at_20_degrees_its_mounting(ros):
    """Efforts of the arm mounted at 20° pitch, at rest at two poses, into a dynamics_node that
    takes it upright: its contact status says the tilt and the base_orientation that fits."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from test_dynamics_node import joint_state

    from robot_dynamics.ros.dynamics_node import DynamicsNode
    from robot_dynamics.ros.topics import SENSOR_QOS

    tilted = MovingBaseTorques(RobotModel.from_urdf_file(ARM_URDF))
    motion = BaseMotion.mounted((0.0, math.radians(20.0), 0.0), (0.0, 0.0, -G))
    node = DynamicsNode(
        node_name='mounted_arm',
        parameter_overrides=[
            Parameter('robot_description', value=ARM_URDF.read_text()),
            Parameter('diagnostics_period', value=0.2),
        ],
    )
    names = RobotModel.from_urdf_file(ARM_URDF).joint_names

    def said():
        return any(
            status.name == 'mounted_arm: contact'
            and status.level == DiagnosticStatus.WARN
            and "efforts fit gravity 20.0° from the model's" in status.message
            and 'base_orientation [0.000, 0.349, 0.0] fits them' in status.message
            for array in diagnostics
            for status in array.status
        )

    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        feed = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: node.robot is not None and feed.get_subscription_count(), 30)
        stamp = 5.0
        for pose in (
            [0.3, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4],
            [-0.8, 0.4, -0.3, -1.2, 0.6, 2.0, -0.5],
        ):
            efforts = tilted.gravity(np.array(pose), motion)
            for _ in range(100):  # 1 s at rest: statuses see it
                stamp += 0.01
                feed.publish(joint_state(names, pose, np.zeros(7), efforts, stamp=stamp))
                wait_for(lambda: False, 0.01)
        assert wait_for(said, 10)


def test_a_ur5_mounted_at_20_degrees_and_taken_upright_is_told_its_mounting():
    """The UR5 of example-robot-data on a 20° wedge (gravity torques up to 15.6 N·m wrong taken
    upright): two rest poses give the mounting."""
    import sysconfig
    from pathlib import Path

    import pinocchio as pin

    urdf = (
        Path(sysconfig.get_paths()['purelib'])
        / 'cmeel.prefix/share/example-robot-data/robots/ur_description/urdf/ur5_robot.urdf'
    )
    robot = RobotModel.from_urdf_file(urdf)
    wedge = rpy_matrix((0.0, math.radians(20.0), 0.0))
    mounted = RobotModel.from_urdf_file(urdf, gravity=wedge.T @ [0.0, 0.0, -G])
    live = LiveDynamics(robot, LiveSettings(acceleration_mode='zero'))
    poses = ([0.0, -1.2, 1.5, -1.8, -1.57, 0.0], [0.8, -0.6, 0.9, -0.4, 1.0, 0.5])
    for stamp, pose in enumerate(poses, start=1):
        q = mounted.configuration(np.array(pose))
        efforts = pin.computeGeneralizedGravity(mounted.model, mounted.data, q)
        live.update(JointSample(robot.joint_names, pose, np.zeros(6), efforts, float(stamp)))
        message = live.contact_status().message
    assert "efforts fit gravity 20.0° from the model's" in message, message
    assert 'base_orientation [0.000, 0.349, 0.0] fits them' in message


def test_a_mounting_in_degrees_is_refused_and_the_model_status_keeps_saying_so(ros):
    """base_orientation [0, 90, 0] is 90 rad, not 90°: refused at start (upright used), and the
    model status says so at every period, not only in one log line."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from test_dynamics_node import make_node, statuses_named

    node = make_node(
        urdf_file=str(ARM_URDF),
        base_state='mounting',
        base_orientation=[0.0, 90.0, 0.0],
        diagnostics_period=0.2,
    )
    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')

        def model_statuses():
            return statuses_named(diagnostics, f'{node.get_name()}: model')

        assert wait_for(lambda: len(model_statuses()) >= 2, 20)
        statuses = model_statuses()
    for status in statuses:
        assert status.level == DiagnosticStatus.WARN, status
        assert (
            'parameters refused at start: base_orientation [0.0, 90.0, 0.0] is not 3 finite '
            'angles within ±2π [rad] (degrees?); using [0.0, 0.0, 0.0]'
        ) in status.message, status.message
