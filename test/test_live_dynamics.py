"""The live pipeline (core/live/live_dynamics.py) with no ROS at all, against closed forms, and
against the real dynamics_node fed the same joint states over a real topic.

References: the vertical 2R arm's closed-form Lagrangian dynamics (test/vertical_2r.py, Lynch &
Park eq. 8.9), its closed-form tip Jacobian, the observer's closed-form step response
r_k = (1 − e^{−K_O (t_k − t_s)}) τ_ext (De Luca & Mattone 2005, discretised exactly)."""

import math
import os
import signal
import time

import numpy as np
import pinocchio as pin
import pytest
import vertical_2r

from robot_dynamics.core.contact.contact_detection import ContactCalibrationError
from robot_dynamics.core.dynamics.joint_reactions import KnownWrenchError
from robot_dynamics.core.errors import JointStateError
from robot_dynamics.core.live.live_dynamics import LiveDynamics
from robot_dynamics.core.live.settings import LiveSettings, LiveSettingsError
from robot_dynamics.core.live.status import ERROR, WARN
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.joint_states import JointSample, TimeWentBack
from robot_dynamics.core.streams.ring_buffer import SampleRingBuffer
from robot_dynamics.models import ARM_URDF

NAMES = ('shoulder', 'elbow')
POSE = np.array([0.7, -1.1])
TWO_R_WITH_TIP = vertical_2r.urdf().replace(
    '</robot>',
    f"""
  <link name="tip"/>
  <joint name="tip_joint" type="fixed"><origin xyz="{vertical_2r.L2} 0 0"/><parent link="link2"/>
    <child link="tip"/></joint>
</robot>""",
)


def two_r() -> RobotModel:
    return RobotModel.from_urdf_string(TWO_R_WITH_TIP, gravity=(0.0, -vertical_2r.G, 0.0))


class Clock:
    """A monotonic clock the test moves by hand [s]."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def at_rest(live: LiveDynamics, efforts, count: int, start: float = 10.0, step: float = 0.001):
    """``count`` samples of the 2R arm at rest at POSE with ``efforts``; the last result and all
    the external torques (None while the observer starts)."""
    results = [
        live.update(JointSample(NAMES, POSE, (0.0, 0.0), efforts, start + step * k))
        for k in range(count)
    ]
    return results[-1], [result.external_torques for result in results]


def gravity_2r() -> np.ndarray:
    zero = np.zeros(2)
    return vertical_2r.torques(POSE, zero, zero)


def tip_jacobian_transpose_wrench(q, force_local, moment_z: float) -> np.ndarray:
    """Jᵀ F [N·m] of a force (x, y in the tip's axes) and a moment about z at the 2R arm's tip."""
    l1, l2 = vertical_2r.L1, vertical_2r.L2
    s1, c1, s12, c12 = math.sin(q[0]), math.cos(q[0]), math.sin(q[0] + q[1]), math.cos(q[0] + q[1])
    jacobian = np.array([[-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12]])
    rotation = np.array([[c12, -s12], [s12, c12]])  # tip axes → world, in the arm's plane
    return jacobian.T @ (rotation @ np.asarray(force_local)) + moment_z


# ---------------------------------------------------------------------- torques and routes
def test_torques_of_the_2r_arm_equal_its_closed_form_lagrangian():
    live = LiveDynamics(two_r(), LiveSettings(acceleration_mode='zero'))
    velocities, efforts = np.array([0.3, -0.8]), np.array([1.0, -2.0])
    result = live.update(JointSample(NAMES, POSE, velocities, efforts, 1.0))
    zero = np.zeros(2)
    np.testing.assert_allclose(result.gravity, vertical_2r.torques(POSE, zero, zero), atol=1e-12)
    expected = vertical_2r.torques(POSE, velocities, zero)
    np.testing.assert_allclose(result.inverse_dynamics, expected, atol=1e-12)
    assert result.route == 'observer' and result.external_torques is None  # starts the observer
    assert result.joint_names == NAMES and result.stamp == 1.0 and result.problems == ()


def test_inverse_dynamics_route_reports_the_torque_the_environment_supplies():
    """Efforts = g − τ_ext at rest: the motors hold less than gravity needs, the environment
    supplies τ_ext; the route gives it at once, with the route named."""
    live = LiveDynamics(two_r(), LiveSettings(external_torque_method='inverse_dynamics'))
    supplied = np.array([0.4, -0.25])
    result, external = at_rest(live, gravity_2r() - supplied, 3)
    assert result.route == 'inverse_dynamics'
    for torques in external:
        np.testing.assert_allclose(torques, supplied, atol=1e-12)


@pytest.mark.parametrize('momentum, first_output', [('velocities', 1), ('positions', 2)])
def test_observer_route_follows_its_closed_form_step_response(momentum, first_output):
    gain, step = 80.0, 0.002
    settings = LiveSettings(observer_gain=gain, observer_momentum=momentum)
    supplied = np.array([0.4, -0.25])
    _, external = at_rest(LiveDynamics(two_r(), settings), gravity_2r() - supplied, 40, step=step)
    assert all(torques is None for torques in external[:first_output])
    for k, torques in enumerate(external[first_output:], start=first_output):
        # t_s: the sample before the first output
        elapsed = (k - (first_output - 1)) * step
        np.testing.assert_allclose(torques, (1.0 - math.exp(-gain * elapsed)) * supplied, atol=1e-9)


def test_given_thresholds_flag_a_contact_after_the_minimum_duration():
    settings = LiveSettings(
        external_torque_method='inverse_dynamics',
        contact_thresholds=(0.5, 0.5),
        contact_min_duration=0.005,
    )
    live = LiveDynamics(two_r(), settings)
    result, _ = at_rest(live, gravity_2r() - np.array([0.0, 1.0]), 5, step=0.001)
    np.testing.assert_allclose(result.contact.ratios, [0.0, 2.0], atol=1e-12)
    assert not result.contact.in_contact  # 4 ms above the threshold: not yet
    result, _ = at_rest(live, gravity_2r() - np.array([0.0, 1.0]), 2, start=10.005)
    assert result.contact.in_contact and live.thresholds.source == 'given'


# ---------------------------------------------------------------------- known wrench
def test_a_known_wrench_is_taken_off_both_outputs_until_it_expires_on_the_clock():
    clock = Clock()
    settings = LiveSettings(external_torque_method='inverse_dynamics', known_wrench_timeout=0.5)
    live = LiveDynamics(two_r(), settings, clock=clock)
    force, moment = np.array([3.0, -2.0, 0.0]), np.array([0.0, 0.0, 0.7])
    live.take_known_wrench('tip', force, moment)
    shift = tip_jacobian_transpose_wrench(POSE, force[:2], moment[2])
    assert np.abs(shift).max() > 0.5
    result, _ = at_rest(live, gravity_2r(), 1)
    np.testing.assert_allclose(result.known_torques, shift, atol=1e-12)
    np.testing.assert_allclose(result.inverse_dynamics, gravity_2r() - shift, atol=1e-12)
    np.testing.assert_allclose(result.external_torques, -shift, atol=1e-12)  # what F explains not
    clock.now = 0.49
    result, _ = at_rest(live, gravity_2r(), 1, start=11.0)
    np.testing.assert_allclose(result.known_torques, shift, atol=1e-12)
    clock.now = 0.51
    result, _ = at_rest(live, gravity_2r(), 1, start=12.0)
    assert result.known_torques is None
    np.testing.assert_allclose(result.external_torques, 0.0, atol=1e-12)
    assert live.known_wrench.counts == {'accepted': 1, 'rejected': 0, 'removed_stale': 1}
    assert 'none received for 0.5 s' in live.known_wrench_status().message


def test_a_known_wrench_on_an_unknown_frame_is_refused_and_a_zero_one_removes_it():
    live = LiveDynamics(two_r(), clock=Clock())
    live.take_known_wrench('', [1.0, 0.0, 0.0], [0.0, 0.0, 0.0])  # '': the payload link, tip
    assert live.known_wrench.current.wrench.frame == 'tip'
    with pytest.raises(KnownWrenchError, match='not a frame'):
        live.take_known_wrench('gripper', [1.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    with pytest.raises(KnownWrenchError, match='finite'):
        live.take_known_wrench('tip', [math.nan, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert live.known_wrench.current.wrench.frame == 'tip'  # the previous one stays
    live.take_known_wrench('tip', [0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert live.known_wrench.current is None
    assert live.known_wrench.last_event == 'removed: zero wrench received'


# ---------------------------------------------------------------------- successors
def test_a_payload_adds_its_weight_and_the_successor_keeps_what_it_must():
    """with_payload: the torques of 1.3 kg at the tip are the closed form's; the merger,
    thresholds, momentum choice and known wrench carry over; the observer restarts."""
    clock = Clock()
    settings = LiveSettings(contact_thresholds=(1.0, 1.0), observer_momentum='velocities')
    live = LiveDynamics(two_r(), settings, clock=clock)
    live.take_known_wrench('tip', [0.0, 1.0, 0.0], [0.0, 0.0, 0.0])
    at_rest(live, gravity_2r(), 5)
    assert live.observer.running
    loaded = live.with_payload('link2', InertialParameters.point_mass(1.3, [vertical_2r.L2, 0, 0]))
    assert loaded.estimator.merger is live.estimator.merger and not loaded.observer.running
    assert loaded.observer.momentum == 'velocities'
    assert loaded.known_wrench is live.known_wrench
    np.testing.assert_allclose(loaded.thresholds.values, [1.0, 1.0])
    velocities = np.array([0.5, -0.4])
    result = loaded.update(JointSample(NAMES, POSE, velocities, (0.0, 0.0), 20.0))
    zero = np.zeros(2)
    per_kilogram = vertical_2r.tip_torques_per_kilogram(POSE, velocities, zero)
    gravity = vertical_2r.torques(POSE, zero, zero) + 1.3 * vertical_2r.tip_torques_per_kilogram(
        POSE, zero, zero
    )
    np.testing.assert_allclose(result.gravity, gravity, atol=1e-12)
    shift = tip_jacobian_transpose_wrench(POSE, [0.0, 1.0], 0.0)
    expected = vertical_2r.torques(POSE, velocities, zero) + 1.3 * per_kilogram - shift
    # the successor's first sample: no q̈ estimate yet (zero)
    np.testing.assert_allclose(result.inverse_dynamics, expected, atol=1e-9)
    other = live.with_model(RobotModel.from_urdf_file(ARM_URDF))
    assert other.estimator.merger is not live.estimator.merger and other.thresholds is None


def _swinging(count: int, start: float) -> list:
    """``count`` samples of the 2R arm swinging, 1 ms apart from ``start`` [s], pushed with
    0.4 / −0.3 N·m from outside (the motors' efforts that much below the closed form's)."""
    samples = []
    for k in range(count):
        t = 0.001 * k
        q = POSE + 0.2 * np.sin([3.0 * t, 2.0 * t])
        qd = 0.2 * np.array([3.0, 2.0]) * np.cos([3.0 * t, 2.0 * t])
        qdd = -0.2 * np.array([9.0, 4.0]) * np.sin([3.0 * t, 2.0 * t])
        efforts = vertical_2r.torques(q, qd, qdd) - np.array([0.4, -0.3])
        samples.append(JointSample(NAMES, q, qd, efforts, start + t))
    return samples


def test_a_stream_whose_time_went_back_goes_on_as_a_fresh_one_from_there():
    """A bag played again from its start: the third sample going on from the earlier time says
    so; restarted(), the pipeline gives what a fresh one gives from there, with the recording
    cleared and the contact profile and thresholds kept."""
    settings = LiveSettings(contact_thresholds=(5.0, 5.0))
    with SampleRingBuffer(1000, 2) as recording:
        live = LiveDynamics(two_r(), settings, recording)
        live.use_contact_profile('sensitive')
        for sample in _swinging(300, 10.0):
            live.update(sample)
        assert len(recording) == 300
        again = _swinging(300, 10.0)
        for sample in again[:2]:
            with pytest.raises(JointStateError, match='older than the last sample'):
                live.update(sample)
        with pytest.raises(TimeWentBack):
            live.update(again[2])
        restarted = live.restarted()
        assert len(recording) == 0
        assert restarted.contact_profile.name == 'sensitive'
        np.testing.assert_allclose(restarted.thresholds.values, [3.0, 3.0])  # sensitive: 0.6 ×
        fresh = LiveDynamics(two_r(), settings)
        for sample in again[2:]:
            ours, theirs = restarted.update(sample), fresh.update(sample)
            np.testing.assert_array_equal(ours.inverse_dynamics, theirs.inverse_dynamics)
            if theirs.external_torques is not None:
                np.testing.assert_array_equal(ours.external_torques, theirs.external_torques)
        assert len(recording) == 298
        # the observer has converged on the push
        np.testing.assert_allclose(ours.external_torques, [0.4, -0.3], atol=1e-3)


def test_a_gripper_at_a_few_hertz_does_not_stop_the_arms_outputs():
    """The Panda with its hand (example-robot-data): arm joints at 1 kHz, the finger from its
    own driver at 5 Hz. Every arm sample gives torques once the finger's period is known, and
    they stop 2.5 finger periods after its driver does."""
    from robot_dynamics.instruments.validation_corpus import default_robots_directory

    robots = default_robots_directory()
    if robots is None:
        pytest.skip('example-robot-data is not installed')
    robot = RobotModel.from_urdf_file(robots / 'panda_description/urdf/panda.urdf')
    live = LiveDynamics(robot, LiveSettings())
    arm = robot.joint_names[:7]
    q = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])
    answered = {}
    for millisecond in range(1000, 3000):
        stamp = millisecond / 1000
        if millisecond % 200 == 0 and stamp <= 2.0:
            live.update(JointSample(('panda_finger_joint1',), [0.02], [0.0], [0.0], stamp))
        result = live.update(JointSample(arm, q, np.zeros(7), np.zeros(7), stamp))
        answered[millisecond] = result is not None
    assert all(answered[ms] for ms in range(1200, 2499))
    assert not any(answered[ms] for ms in range(2501, 3000))
    assert live.stale_joints() == ('panda_finger_joint1',)


ARM_POSE = np.array([0.3, -0.5, 0.2, -2.0, 0.3, 1.5, 3.0])


@pytest.mark.parametrize(
    'positions, velocities, words',
    [
        (ARM_POSE, np.full(7, 1.0), None),
        (ARM_POSE + [0, 0, 0, 0, 0, 0, 0.04], np.zeros(7), None),  # a hard stop's overtravel
        (
            ARM_POSE + [0, 0, 0, 2.1, 0, 0, 0],
            np.zeros(7),
            'positions beyond their URDF limits: fr3_joint4 0.100 (limits -3.042 to -0.152): '
            'a zero',
        ),
        (
            np.degrees(ARM_POSE),
            np.zeros(7),
            'fr3_joint1 17.189 (limits -2.744 to 2.744), fr3_joint2 -28.648 (limits -1.784 to '
            '1.784), fr3_joint3 11.459 (limits -2.901 to 2.901) and 4 more: the driver sends '
            'degrees (in radians they are all within)',
        ),
        (
            ARM_POSE,
            np.degrees(np.full(7, 1.0)),
            'velocities beyond their URDF limits: fr3_joint1 57.296 (limit 2.620), fr3_joint2 '
            '57.296 (limit 2.620), fr3_joint3 57.296 (limit 2.620) and 4 more: the driver sends '
            'degrees',
        ),
        (ARM_POSE, [0, 0, 0, 0, 0, 0, 7.0], 'fr3_joint7 7.000 (limit 5.260): a zero'),
    ],
)
def test_positions_and_velocities_beyond_the_urdf_limits_are_said_with_a_likely_cause(
    positions, velocities, words
):
    robot = RobotModel.from_urdf_file(ARM_URDF)
    live = LiveDynamics(robot, LiveSettings(acceleration_mode='zero'))
    live.update(JointSample(robot.joint_names, positions, velocities, np.ones(7), 1.0))
    status = live.margin_status()
    if words is None:
        assert 'beyond their URDF limits' not in status.message
        assert not [key for key in status.values if key.endswith('beyond_limits')]
    else:
        assert status.level in (WARN, ERROR) and words in status.message, status.message


@pytest.mark.parametrize(
    'scale, words',
    [
        (1.0, None),
        (-1.0, 'efforts are -1 × the model\'s gravity torques on every loaded joint (fr3_joint2,'),
        (0.01, 'are 0.01 × the model\'s gravity torques'),
        ([1.0, 1.0, 1.0, 1.6, 1.0, 1.0, 1.0], None),  # one joint off: a model error, not a unit
        ([1.0, 1.0, 1.0, -1.0, 1.0, 1.0, 1.0], 'the efforts of fr3_joint4 are -1 ×'),
        ([1.0, 1.4, 1.0, -1.0, 1.0, 1.0, 1.0], None),  # another joint off as well: not only signs
    ],
)
def test_efforts_one_factor_from_the_gravity_torques_at_rest_are_said(scale, words):
    robot = RobotModel.from_urdf_file(ARM_URDF)
    live = LiveDynamics(robot, LiveSettings(acceleration_mode='zero'))
    gravity = live.update(JointSample(robot.joint_names, ARM_POSE, np.zeros(7), np.ones(7), 1.0))
    efforts = np.asarray(scale) * gravity.gravity
    live.update(JointSample(robot.joint_names, ARM_POSE, np.zeros(7), efforts, 1.001))
    message = live.contact_status().message
    if words is None:
        assert 'at rest the efforts' not in message, message
    else:
        assert words in message, message
        cause = 'motor currents [A]' if scale == 0.01 else 'effort_model_file: sign: -1'
        assert cause in message


def test_calibration_refuses_before_any_sample_and_then_installs_its_thresholds():
    live = LiveDynamics(two_r(), LiveSettings(external_torque_method='inverse_dynamics'))
    with pytest.raises(ContactCalibrationError, match='move the robot'):
        live.calibrate_thresholds()
    rng = np.random.default_rng(5)
    noise = rng.normal(0.0, [0.02, 0.05], size=(400, 2))
    for k, row in enumerate(noise):
        live.update(JointSample(NAMES, POSE, (0.0, 0.0), gravity_2r() + row, 1.0 + 0.001 * k))
    calibration = live.calibrate_thresholds()
    expected = np.abs(noise.mean(axis=0)) + 5.0 * noise.std(axis=0)  # −noise: same |mean|, σ
    np.testing.assert_allclose(calibration.thresholds, expected, rtol=1e-9)
    np.testing.assert_allclose(live.thresholds.values, expected, rtol=1e-9)
    assert live.thresholds.source == 'calibrated' and '400 samples' in calibration.summary()
    assert calibration.at_rest and 'at rest over the whole window' in calibration.summary()
    # a residual whose thresholds would pass the elbow's 4 N·m effort limit: no model error
    for k, row in enumerate(rng.normal(0.0, [0.02, 2.0], size=(400, 2))):
        live.update(JointSample(NAMES, POSE, (0.0, 0.0), gravity_2r() + row, 1.5 + 0.001 * k))
    with pytest.raises(ContactCalibrationError, match=r'effort limits \(elbow [\d.]+ ≥ 4 N·m\)'):
        live.calibrate_thresholds()
    np.testing.assert_allclose(live.thresholds.values, expected, rtol=1e-9)


def test_the_stages_without_record_give_what_update_gives():
    """A node calls torques, external_torques and result, publishing between them, then record.
    A caller that never calls record loses nothing: external_torques records the previous
    sample first. Both observers of observer_momentum auto see every sample once, in order: the
    outputs and the calibration (which compares them) equal update()'s, bit for bit."""
    rng = np.random.default_rng(8)
    settings = LiveSettings(observer_momentum='auto', contact_calibration_duration=0.2)
    by_update, by_stages = LiveDynamics(two_r(), settings), LiveDynamics(two_r(), settings)
    for k in range(300):
        t = 0.001 * k
        positions = np.array(POSE) + 0.1 * np.sin([2.0 * t, 3.0 * t])
        velocities = 0.1 * np.array([2.0 * np.cos(2.0 * t), 3.0 * np.cos(3.0 * t)])
        efforts = gravity_2r() + rng.normal(0.0, 0.05, 2)
        sample = JointSample(NAMES, positions, velocities, efforts, 1.0 + t)
        expected = by_update.update(sample)
        torques = by_stages.torques(sample)
        external = by_stages.external_torques(torques)
        got = by_stages.result(torques, external)
        if expected.external_torques is None:
            assert got.external_torques is None
        else:
            assert got.external_torques.tobytes() == expected.external_torques.tobytes()
    by_stages.record()
    calibrated, staged = by_update.calibrate_thresholds(), by_stages.calibrate_thresholds()
    assert staged.kept_momentum == calibrated.kept_momentum
    assert staged.thresholds.tobytes() == calibrated.thresholds.tobytes()
    assert staged.samples == calibrated.samples
    assert staged.velocity_ratio == calibrated.velocity_ratio


@pytest.mark.parametrize(
    'setting, value',
    [
        ('observer_gain', 0.0),
        ('observer_filter_gain', -1.0),
        ('stale_timeout', math.inf),
        ('external_torque_method', 'bogus'),
        ('acceleration_window', 1),
        ('torque_warn_ratio', 1.5),
        ('wrench_reference', 'contact_start'),
    ],
)
def test_a_setting_out_of_its_range_is_refused_by_name(setting, value):
    with pytest.raises(LiveSettingsError, match=setting):
        LiveSettings(**{setting: value})


# ---------------------------------------------------------------------- the node's numbers
ARM_POSE = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])
NODE_PARAMETERS = {
    'observer_gain': 80.0,
    'contact_thresholds': [2.0] * 7,
    'wrench_frame': 'tool0',
    'acceleration_window': 9,
    'rotor_inertia': [0.3, 0.3, 0.2, 0.2, 0.1, 0.05, 0.05],
}


def arm_joint_states(robot: RobotModel, count: int) -> list:
    """JointState messages of the arm in motion at 1 kHz, efforts = ID + a push at tool0 from the
    200th sample on + noise (so every output moves)."""
    from sensor_msgs.msg import JointState

    rng = np.random.default_rng(11)
    frame = robot.model.getFrameId('tool0')
    push = np.array([6.0, -4.0, 8.0, 0.0, 0.0, 0.0])
    messages = []
    for k in range(count):
        t = 0.001 * k
        q = ARM_POSE + 0.2 * np.sin(2.0 * t + np.arange(7))
        v = 0.4 * np.cos(2.0 * t + np.arange(7))
        a = -0.8 * np.sin(2.0 * t + np.arange(7))
        effort = pin.rnea(robot.model, robot.data, q, v, a) + rng.normal(0.0, 0.01, 7)
        if k >= 200:
            jacobian = pin.computeFrameJacobian(robot.model, robot.data, q, frame, pin.LOCAL)
            effort = effort + jacobian.T @ push
        message = JointState(
            name=list(robot.joint_names),
            position=q.tolist(),
            velocity=(v + rng.normal(0.0, 0.001, 7)).tolist(),
            effort=effort.tolist(),
        )
        message.header.stamp.sec, message.header.stamp.nanosec = 50, 1_000_000 * k
        messages.append(message)
    return messages


def test_live_dynamics_without_ros_gives_the_numbers_the_node_publishes(ros):
    """dynamics_node as its own process, fed 600 joint states over a real topic; every published
    gravity, inverse-dynamics, external-torque, contact-ratio and wrench message equals what a
    LiveDynamics with the same settings (rotor inertia included) computes from the same samples
    here."""
    from geometry_msgs.msg import WrenchStamped
    from rclpy.serialization import serialize_message
    from ros_harness import wait_for
    from sensor_msgs.msg import JointState
    from test_shutdown import START_TIMEOUT, killed_on_failure, start_node

    from robot_dynamics.ros.joint_state_wire import JointStateReader
    from robot_dynamics.ros.topics import JOINT_STATE_QOS, stamp_seconds

    namespace, name = f'/live_check_{os.getpid()}', 'dynamics'
    robot = RobotModel.from_urdf_file(ARM_URDF)
    messages = arm_joint_states(robot, 600)
    parameters = [f'{key}:={value}' for key, value in NODE_PARAMETERS.items()]
    with ros() as harness:
        outputs = {
            topic: harness.collect(JointState, f'{namespace}/{name}/{topic}', JOINT_STATE_QOS)
            for topic in (
                'gravity_torques',
                'inverse_dynamics_torques',
                'external_torques',
                'contact_ratio',
            )
        }
        wrenches = harness.collect(
            WrenchStamped, f'{namespace}/{name}/external_wrench', JOINT_STATE_QOS
        )
        feed = harness.probe.create_publisher(
            JointState, f'{namespace}/joint_states', JOINT_STATE_QOS
        )
        process = start_node('dynamics_node', name, *parameters, namespace=namespace)
        with killed_on_failure(process):
            assert wait_for(
                lambda: (
                    feed.get_subscription_count() >= 1
                    and harness.probe.count_publishers(f'{namespace}/{name}/external_wrench') >= 1
                    and all(
                        subscription.get_publisher_count() >= 1
                        for subscription in harness.probe.subscriptions
                    )
                ),
                START_TIMEOUT,
            ), 'dynamics_node did not come up'
            time.sleep(1.0)  # the node's side of the discovery: it sees every subscription
            for index, message in enumerate(messages):
                feed.publish(message)
                if index % 50 == 49:  # paced: the writer's history never overwrites a sample
                    wait_for(lambda: len(outputs['gravity_torques']) >= index - 100, 10)
            assert wait_for(lambda: len(wrenches) >= 598, 60), len(wrenches)
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=10)
    assert process.returncode == 0

    live = LiveDynamics(
        robot,
        LiveSettings(
            observer_gain=80.0,
            contact_thresholds=(2.0,) * 7,
            wrench_frame='tool0',
            acceleration_window=9,
            rotor_inertia=tuple(NODE_PARAMETERS['rotor_inertia']),
        ),
    )
    expected, reader = {}, JointStateReader()
    for message in messages:
        result = live.update(reader.read(serialize_message(message)).sample, wrench=True)
        expected[stamp_seconds(message.header.stamp)] = result

    def by_stamp(received: list) -> dict:
        return {stamp_seconds(m.header.stamp): m for m in received}

    published = {topic: by_stamp(received) for topic, received in outputs.items()}
    assert len(published['gravity_torques']) == len(published['inverse_dynamics_torques']) == 600
    assert len(published['external_torques']) == len(by_stamp(wrenches)) == 598
    pushed = 0
    for stamp, result in expected.items():
        np.testing.assert_allclose(
            published['gravity_torques'][stamp].effort, result.gravity, rtol=0, atol=1e-12
        )
        np.testing.assert_allclose(
            published['inverse_dynamics_torques'][stamp].effort,
            result.inverse_dynamics,
            rtol=0,
            atol=1e-12,
        )
        if result.external_torques is None:
            assert stamp not in published['external_torques']
            continue
        np.testing.assert_allclose(
            published['external_torques'][stamp].effort, result.external_torques, atol=1e-12
        )
        if result.contact is None:  # observer_momentum auto before its first comparison
            assert stamp not in published['contact_ratio']
        else:
            np.testing.assert_allclose(
                published['contact_ratio'][stamp].effort, result.contact.ratios, atol=1e-12
            )
        wrench = by_stamp(wrenches)[stamp].wrench
        np.testing.assert_allclose(
            [wrench.force.x, wrench.force.y, wrench.force.z], result.wrench.force, atol=1e-9
        )
        np.testing.assert_allclose(
            [wrench.torque.x, wrench.torque.y, wrench.torque.z], result.wrench.moment, atol=1e-9
        )
        pushed += result.contact is not None and result.contact.in_contact
    assert pushed > 100  # the push was there, and flagged, in both


@pytest.mark.parametrize('jitter, kept', [(0.0, 'positions'), (3e-4, 'velocities')])
def test_auto_momentum_leaves_positions_when_the_stamps_are_not_the_sampling_instants(jitter, kept):
    """The 2R arm swinging, sampled every 1 ms, efforts its closed-form inverse dynamics (no
    external torque), thresholds given, no calibration. Stamped at the sampling instants, the
    position form stays in use. Stamped up to ±0.3 ms off (a driver that stamps when it
    publishes), position increments over the stamps' intervals are wrong by up to 60 %:
    observer_momentum auto keeps the velocity form once it has 50 samples of each, says why,
    its external torques are near zero from there, and no contact is raised on the position
    form's noise before the choice."""
    rng = np.random.default_rng(3)
    live = LiveDynamics(two_r(), LiveSettings(contact_thresholds=(0.5, 0.5)))
    rates = np.array([2.0, 3.0])
    external, contact = [], []
    for k in range(2500):
        t = 0.001 * k
        positions = POSE + 0.5 * np.sin(rates * t)
        velocities = 0.5 * rates * np.cos(rates * t)
        accelerations = -0.5 * rates**2 * np.sin(rates * t)
        efforts = vertical_2r.torques(positions, velocities, accelerations)
        stamp = 5.0 + t + rng.uniform(-jitter, jitter)
        result = live.update(JointSample(NAMES, positions, velocities, efforts, stamp))
        external.append(result.external_torques)
        contact.append(result.contact is not None and result.contact.in_contact)
        if k == 40:
            assert 'waits for observer_momentum auto' in live.contact_status().message
    in_use = live.contact_status().values['observer_momentum']
    assert live.observer.momentum == kept
    assert not any(contact)
    if kept == 'positions':
        assert live._alternative is not None and in_use.startswith('auto: positions until')
        assert np.max(np.abs(external[-500:])) < 1e-3
    else:
        assert live._alternative is None and 'noisier from step to step' in in_use
        before = [values for values in external[:50] if values is not None]
        assert np.max(np.abs(before)) > 1.0  # what the position form gave before the choice
        assert np.max(np.abs(external[60:])) < 0.05
    assert 'waits for' not in live.contact_status().message
    assert live.with_model(two_r()).observer.momentum == kept  # the choice carries over


def test_the_wrench_of_a_steady_force_on_a_moving_arm_is_solved_where_the_observer_saw_it():
    """The bundled arm swinging at 1 kHz with a constant 13.7 N world force on its wrench frame
    (efforts = RNEA − Jᵀ F, exact velocities). The observer's residual lags τ_ext = J(q)ᵀ F by
    its time constant 1/K_O; solved with the Jacobian of the joint state 1/K_O earlier, the force
    comes back within 0.1 %, where the sample's own Jacobian leaves 30 times more."""
    from robot_dynamics.core.contact.external_wrench import wrench_from_torques

    arm = RobotModel.from_urdf_file(ARM_URDF)
    live = LiveDynamics(arm, LiveSettings(observer_momentum='velocities'))
    model, data = arm.model, arm.model.createData()
    frame = model.getFrameId(live.wrench_frame)
    force = np.array([10.0, -5.0, 8.0])
    rates = np.linspace(1.5, 3.0, 7)
    lag = 1.0 / live.settings.observer_gain

    def state(t):
        return (
            ARM_POSE + 0.3 * np.sin(rates * t),
            0.3 * rates * np.cos(rates * t),
            -0.3 * rates**2 * np.sin(rates * t),
        )

    def rotation(q):
        pin.framesForwardKinematics(model, data, q)
        return data.oMf[frame].rotation.copy()

    solved, unshifted = [], []
    for k in range(1500):
        t = 0.001 * k
        q, v, a = state(t)
        jacobian = pin.computeFrameJacobian(model, data, q, frame, pin.LOCAL_WORLD_ALIGNED)
        efforts = pin.rnea(model, data, q, v, a) - jacobian[:3].T @ force
        result = live.update(JointSample(arm.joint_names, q, v, efforts, 1.0 + t), wrench=True)
        if t < 0.5:
            continue
        solved.append(rotation(state(t - lag)[0]) @ result.wrench.force - force)
        local = pin.computeFrameJacobian(model, data, q, frame, pin.LOCAL)
        own = wrench_from_torques(local, result.external_torques).force
        unshifted.append(rotation(q) @ own - force)
    solved_error = np.max(np.linalg.norm(solved, axis=1))
    unshifted_error = np.max(np.linalg.norm(unshifted, axis=1))
    assert solved_error < 0.001 * np.linalg.norm(force)  # measured 0.008 N
    assert unshifted_error > 10.0 * solved_error  # measured 0.25 N


def test_observer_filter_gain_makes_the_external_torques_a_second_order_low_pass():
    """The bundled arm at rest, a 15 N force from t = 1 s (efforts = g − Jᵀ F): with
    ``observer_filter_gain`` K_F the external torques rise as the cascade of two first-order
    low-passes, τ_ext [1 − (K_F e^{−K_O t} − K_O e^{−K_F t})/(K_F − K_O)], within one 1 ms
    sample; the diagnostics name K_F."""
    arm = RobotModel.from_urdf_file(ARM_URDF)
    model, data = arm.model, arm.model.createData()
    zeros = np.zeros(arm.num_joints)
    gravity = pin.rnea(model, data, ARM_POSE, zeros, zeros)
    gain, filter_gain = 50.0, 100.0
    live = LiveDynamics(arm, LiveSettings(observer_gain=gain, observer_filter_gain=filter_gain))
    frame = model.getFrameId(live.wrench_frame)
    jacobian = pin.computeFrameJacobian(model, data, ARM_POSE, frame, pin.LOCAL_WORLD_ALIGNED)
    external = jacobian[:3].T @ np.array([9.0, -6.0, 9.0])  # τ_ext = Jᵀ F
    elapsed, measured = [], []
    for k in range(1200):
        t = 0.001 * k
        efforts = gravity - (external if t >= 1.0 else 0.0)
        result = live.update(JointSample(arm.joint_names, ARM_POSE, zeros, efforts, 1.0 + t))
        if t >= 1.0:
            elapsed.append(t - 1.0)
            measured.append(result.external_torques)
    elapsed = np.array(elapsed)
    decays = filter_gain * np.exp(-gain * elapsed) - gain * np.exp(-filter_gain * elapsed)
    expected = np.outer(1.0 - decays / (filter_gain - gain), external)
    steepest = np.max(np.abs(np.diff(expected, axis=0)))  # per 1 ms sample
    assert np.max(np.abs(np.array(measured) - expected)) < 1.5 * steepest
    first_order = np.outer(1.0 - np.exp(-gain * elapsed), external)
    assert np.max(np.abs(np.array(measured) - first_order)) > 5 * steepest
    assert live.contact_status().values['observer_filter_gain_per_s'] == filter_gain


@pytest.mark.parametrize('profile', ['default', 'hand_guiding'])
def test_a_contacts_wrench_is_measured_from_the_external_torques_before_it(profile):
    """The bundled arm at rest with effort offsets, which show as external torques with nothing
    touching (a model error), and a 15 N force on the wrench frame from 1.0 to 1.5 s
    (efforts = g + offsets − Jᵀ F). With ``wrench_reference`` contact_onset the raised contact's
    wrench is the force alone: the external torques of before the contact are held and taken
    off; with zero, or when the profile does not raise the contact (hand guiding), it is the
    force plus the wrench the offsets show before the push. Out of contact, both explain every
    external torque."""
    arm = RobotModel.from_urdf_file(ARM_URDF)
    model, data = arm.model, arm.model.createData()
    offsets = np.array([0.8, -1.2, 0.5, 0.9, -0.3, 0.2, 0.1])
    force = np.array([9.0, -6.0, 9.0])
    zeros = np.zeros(arm.num_joints)
    gravity = pin.rnea(model, data, ARM_POSE, zeros, zeros)

    def run(reference: str) -> dict:
        live = LiveDynamics(
            arm,
            LiveSettings(
                contact_thresholds=tuple(np.abs(offsets) + 1.0),
                wrench_reference=reference,
                contact_profile=profile,
            ),
        )
        frame = model.getFrameId(live.wrench_frame)
        jacobian = pin.computeFrameJacobian(model, data, ARM_POSE, frame, pin.LOCAL_WORLD_ALIGNED)
        world = data.oMf[frame].rotation  # the frame's axes → world
        seen = {}
        for k in range(3000):
            t = 0.001 * k
            pushed = 1.0 <= t < 1.5
            efforts = gravity + offsets - (jacobian[:3].T @ force if pushed else 0.0)
            sample = JointSample(arm.joint_names, ARM_POSE, zeros, efforts, 1.0 + t)
            result = live.update(sample, wrench=True)
            if k in (990, 1499, 2999):  # before, at the end of, and long after the push
                seen[k] = (world @ result.wrench.force, result.contact.in_contact)
        return seen

    onset, zero = run('contact_onset'), run('zero')
    phantom = zero[990][0]  # the offsets' wrench before the push
    assert np.linalg.norm(phantom) > 1.0
    raised = profile == 'default'
    assert onset[1499][1] is raised and zero[1499][1] is raised
    assert np.allclose(zero[1499][0], force + phantom, atol=1e-6)
    expected = force if raised else force + phantom
    assert np.allclose(onset[1499][0], expected, atol=1e-6)
    for run_seen in (onset, zero):
        assert np.allclose(run_seen[990][0], phantom, atol=1e-9)
        assert run_seen[2999][1] is False and np.allclose(run_seen[2999][0], phantom, atol=1e-6)


def test_the_margins_status_says_where_the_velocities_came_from():
    arm = RobotModel.from_urdf_file(ARM_URDF)
    names, q = arm.joint_names, np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6])
    no_joint_2 = np.full(7, 0.1)
    no_joint_2[1] = np.nan  # a joint without a velocity sensor, the others with
    pipelines = {
        'positions only': (LiveDynamics(arm), ()),
        'positions only, q̈ = 0': (LiveDynamics(arm, LiveSettings(acceleration_mode='zero')), ()),
        'joint 2 without': (LiveDynamics(arm), no_joint_2),
        'every velocity': (LiveDynamics(arm), np.full(7, 0.1)),
    }
    for live, velocities in pipelines.values():
        for k in range(3):
            live.update(JointSample(names, q, velocities, (), 1.0 + 0.001 * k))
    messages = {label: live.margin_status().message for label, (live, _) in pipelines.items()}
    assert 'q̇ is the slope of the positions' in messages['positions only']
    for label, lacking in (
        ('positions only, q̈ = 0', 'fr3_joint1, fr3_joint2'),
        ('joint 2 without', 'fr3_joint2 ('),
    ):
        live = pipelines[label][0]
        assert live.margin_status().level == 'warn'
        assert f'no velocities of {lacking}' in messages[label], messages[label]
        # what it says: taken at rest, g(q) and nothing else
        np.testing.assert_allclose(
            live.latest_torques.inverse_dynamics, live.latest_torques.gravity
        )
    assert 'velocit' not in messages['every velocity']


def _efforts_mounted(rpy, positions, payload=None) -> np.ndarray:
    """Gravity torques [N·m] of the arm at rest on a base with attitude ``rpy`` (R = Rz Ry Rx),
    from pinocchio on a model whose gravity vector is Rᵀ g (not the moving-base twin)."""
    rotation = pin_rpy(rpy)
    tilted = RobotModel.from_urdf_file(ARM_URDF, gravity=rotation.T @ [0.0, 0.0, -9.81])
    if payload is not None:
        tilted.attach_payload('fr3_flange', payload)
    q = tilted.configuration(np.asarray(positions, dtype=float))
    return pin.computeGeneralizedGravity(tilted.model, tilted.data, q)


def pin_rpy(rpy) -> np.ndarray:
    """R = Rz(yaw) Ry(pitch) Rx(roll), by pinocchio."""
    return pin.rpy.rpyToMatrix(np.asarray(rpy, dtype=float))


MOUNT_POSES = (
    [0.3, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4],
    [-0.8, 0.4, -0.3, -1.2, 0.6, 2.0, -0.5],
)


def _at_rest_at(live: LiveDynamics, efforts_at) -> str:
    """The contact status after ``live`` rested at each of :data:`MOUNT_POSES` with the
    efforts ``efforts_at(pose)``."""
    for k, pose in enumerate(MOUNT_POSES):
        sample = JointSample(live.robot.joint_names, pose, np.zeros(7), efforts_at(pose), 1.0 + k)
        live.update(sample)
        if k == 0:  # one pose is not enough to tell a tilt from a model error
            assert 'efforts fit gravity' not in live.contact_status().message
    return live.contact_status().message


@pytest.mark.parametrize(
    'true_rpy, given, words',
    [
        ((0.0, math.radians(20), 0.0), None, 'base_orientation [0.000, 0.349, 0.0] fits them'),
        ((math.pi / 2, 0.0, 0.0), None, 'base_orientation [1.571, 0.000, 0.0] fits them'),
        ((0.2, -0.3, 0.0), (0.1, -0.3, 0.0), 'not the one base_orientation says'),
        ((0.2, -0.3, 0.0), (0.2, -0.3, 0.0), None),  # the mounting as given
        ((0.0, 0.0, 0.0), None, None),  # upright
    ],
)
def test_efforts_at_rest_fitting_a_tilted_gravity_suggest_the_mounting(true_rpy, given, words):
    robot = RobotModel.from_urdf_file(ARM_URDF)
    settings = LiveSettings(acceleration_mode='zero')
    if given is not None:
        settings = LiveSettings(
            acceleration_mode='zero', base_state='mounting', base_orientation=given
        )
    message = _at_rest_at(LiveDynamics(robot, settings), lambda q: _efforts_mounted(true_rpy, q))
    if words is None:
        assert 'efforts fit gravity' not in message, message
        return
    assert words in message and 'at rest at 2 poses' in message, message
    tilt = math.degrees(math.acos(pin_rpy(true_rpy)[2, 2]))
    if given is None:
        assert f'{tilt:.1f}° from the model' in message
    # the suggestion, applied, explains the efforts: gravity torques equal them
    suggested = [float(x) for x in message.split('base_orientation [')[1].split(']')[0].split(',')]
    mounted = LiveDynamics(
        robot,
        LiveSettings(acceleration_mode='zero', base_state='mounting', base_orientation=suggested),
    )
    efforts = _efforts_mounted(true_rpy, MOUNT_POSES[0])
    result = mounted.update(JointSample(robot.joint_names, MOUNT_POSES[0], np.zeros(7), efforts, 1))
    # to the suggestion's 1 mrad rounding
    np.testing.assert_allclose(result.gravity, efforts, atol=1e-3 * np.abs(efforts).max())
    assert 'efforts fit gravity' not in _at_rest_at(
        LiveDynamics(robot, mounted.settings), lambda q: _efforts_mounted(true_rpy, q)
    )


def test_rests_shorter_than_a_status_period_are_seen_and_the_mounting_said_while_moving():
    # a pick-and-place cycle: 0.2 s at each of two poses, moving in between (1 kHz); the status
    # is asked once, while the arm moves
    robot = RobotModel.from_urdf_file(ARM_URDF)
    live = LiveDynamics(robot, LiveSettings(acceleration_mode='zero'))
    tilt = (0.0, math.radians(20), 0.0)
    first, second = (np.array(pose) for pose in MOUNT_POSES)
    stamp, moving = 1.0, np.full(7, 0.5)
    for rest in (first, second):
        efforts = _efforts_mounted(tilt, rest)
        for _ in range(200):
            stamp += 1e-3
            live.update(JointSample(robot.joint_names, rest, np.zeros(7), efforts, stamp))
        for k in range(100):
            stamp += 1e-3
            q = rest + (second - first) * k / 100
            live.update(JointSample(robot.joint_names, q, moving, _efforts_mounted(tilt, q), stamp))
    message = live.contact_status().message
    assert 'at rest at 2 poses' in message and 'base_orientation [0.000, 0.349, 0.0]' in message, (
        message
    )


def test_an_unmodelled_load_is_said_with_its_mass_and_centre_and_not_taken_for_a_tilt():
    robot = RobotModel.from_urdf_file(ARM_URDF)
    payload = InertialParameters.point_mass(1.5, [0.0, 0.05, 0.1])
    message = _at_rest_at(
        LiveDynamics(robot, LiveSettings(acceleration_mode='zero')),
        lambda q: _efforts_mounted((0, 0, 0), q, payload),
    )
    assert 'efforts fit gravity' not in message, message
    assert 'efforts fit +1.50 kg at tool0 (CoM [0.00, 0.05, 0.10] m in its frame)' in message
    assert 'a load the model lacks' in message
    # a payload in use that is not there: the same load, negative
    carried = LiveDynamics(robot, LiveSettings(acceleration_mode='zero')).with_payload(
        'tool0', payload
    )
    message = _at_rest_at(carried, lambda q: _efforts_mounted((0, 0, 0), q))
    assert 'efforts fit -1.50 kg at tool0 (CoM [0.00, 0.05, 0.10] m' in message, message
    assert 'a payload in use that the robot does not carry' in message


def test_efforts_of_the_opposite_sign_are_not_taken_for_a_tilt_or_a_load():
    robot = RobotModel.from_urdf_file(ARM_URDF)
    message = _at_rest_at(
        LiveDynamics(robot, LiveSettings(acceleration_mode='zero')),
        lambda q: -_efforts_mounted((0, 0, 0), q),
    )
    assert 'efforts fit' not in message and 'mounted upside down' in message, message


def _perturbed_arm(rng, tilt_degrees: float, payload_mass: float) -> RobotModel:
    """The arm as a real one differs from its URDF (link masses ±8 %, CoMs ±8 mm), on a base
    tilted by ``tilt_degrees`` about a random horizontal axis, with an unmodelled point payload
    of ``payload_mass`` [kg] (0: none)."""
    axis = rng.normal(size=2)
    axis *= math.radians(tilt_degrees) / np.linalg.norm(axis)
    rotation = pin_rpy([axis[0], axis[1], 0.0])
    true = RobotModel.from_urdf_file(ARM_URDF, gravity=rotation.T @ [0.0, 0.0, -9.81])
    model = true.model
    for i in range(1, model.njoints):
        body = model.inertias[i]
        model.inertias[i] = pin.Inertia(
            body.mass * (1 + rng.uniform(-0.08, 0.08)),
            body.lever + rng.uniform(-0.008, 0.008, 3),
            body.inertia,
        )
    true.data = model.createData()
    if payload_mass:
        offset = rng.uniform(-0.05, 0.05, 3) + [0.0, 0.0, 0.08]
        true.attach_payload('fr3_flange', InertialParameters.point_mass(payload_mass, offset))
    return true


@pytest.mark.parametrize(
    'tilt, payload_mass, tilts_said, loads_said',
    [(0.0, 0.0, 0, 0), (0.0, 1.0, 0, 30), (10.0, 0.0, 30, 0), (20.0, 0.0, 30, 0)],
)
def test_a_tilt_and_a_load_are_said_and_model_errors_are_not(
    tilt, payload_mass, tilts_said, loads_said
):
    """30 arms that differ from the URDF as real ones do, each at rest at two random poses with
    effort scale errors (±2 %) and offsets (±0.2 N·m): how often a mounting and a load are
    said."""
    robot = RobotModel.from_urdf_file(ARM_URDF)
    rng = np.random.default_rng(7)
    lower, upper = np.maximum(robot.limits.lower, -2.5), np.minimum(robot.limits.upper, 2.5)
    tilts = loads = 0
    for _ in range(30):
        true = _perturbed_arm(rng, tilt, payload_mass)
        scale, offsets = 1 + rng.uniform(-0.02, 0.02, 7), rng.uniform(-0.2, 0.2, 7)
        live = LiveDynamics(robot, LiveSettings(acceleration_mode='zero'))
        for stamp in (1.0, 2.0):
            q = rng.uniform(lower, upper)
            efforts = pin.computeGeneralizedGravity(true.model, true.data, q) * scale + offsets
            live.update(JointSample(robot.joint_names, q, np.zeros(7), efforts, stamp))
            message = live.contact_status().message
        tilts += 'efforts fit gravity' in message
        loads += 'kg at tool0' in message
    assert (tilts, loads) == (tilts_said, loads_said)


def _swinging_arm(hold, quantum: float = 0.0, speed: float = 1.0, hold_from: float = 0.0):
    """(the contact status, the last external torques [N·m]) after 5 s of the arm swinging
    every joint (1 kHz, the status asked each second), its efforts the true inverse dynamics
    (pinocchio's RNEA at the analytic motion) rounded to ``quantum`` [N·m] (0: not), with
    ``hold``: {joint index: a value its effort keeps from ``hold_from`` [s] into the swing on,
    None: the value it had then}."""
    robot = RobotModel.from_urdf_file(ARM_URDF)
    live = LiveDynamics(robot, LiveSettings(acceleration_mode='zero'))
    amplitude, omega = 0.4 * speed, 2.0 * math.pi * 0.5
    message, held = '', dict(hold)
    for k in range(5000):
        t = 1.0 + k * 1e-3
        q = ARM_POSE + amplitude * np.sin(omega * t)
        v = amplitude * omega * np.cos(omega * t)
        a = -amplitude * omega**2 * np.sin(omega * t)
        efforts = pin.rnea(robot.model, robot.data, q, np.full(7, v), np.full(7, a))
        if quantum:
            efforts = quantum * np.round(efforts / quantum)
        if k * 1e-3 >= hold_from:
            for joint, value in held.items():
                held[joint] = efforts[joint] = efforts[joint] if value is None else value
        result = live.update(JointSample(robot.joint_names, q, np.full(7, v), efforts, t))
        if k % 1000 == 999:
            message = live.contact_status().message
    return message, result.external_torques


@pytest.mark.parametrize(
    'hold, quantum, speed, hold_from, said',
    [
        ({3: 0.0}, 0.0, 1.0, 0.0, ['fr3_joint4 (0 for 5 s']),  # never written: its first value
        ({1: -12.5, 3: 0.0}, 0.0, 1.0, 0.0, ['fr3_joint2 (-12.5 for 5 s', 'fr3_joint4 (0 for 5 s']),
        # gravity spans 0.28 N·m at joint 4, 0.18 at joint 5: far more than the others' steps
        ({3: 0.0}, 0.0, 0.75, 0.0, ['fr3_joint4 (0 for 5 s']),
        ({4: None}, 0.0, 1.0, 1.0, ['fr3_joint5 (']),  # a sensor that stopped at 1 s
        ({4: None}, 0.0, 0.5, 1.0, []),  # its gravity spans 0.04 N·m: left as it is
        ({}, 0.0, 1.0, 0.0, []),
        ({}, 0.5, 1.0, 0.0, []),  # a coarse quantum: the same value at times, never for long
        ({}, 0.1, 0.5, 0.0, []),
    ],
)
def test_an_effort_that_stops_changing_while_the_arm_moves_is_named_and_not_measured(
    hold, quantum, speed, hold_from, said
):
    message, external = _swinging_arm(hold, quantum, speed, hold_from)
    # the true efforts give external torques of the observer's discretisation (and quantum) alone
    assert np.all(np.abs(np.delete(external, list(hold))) < 0.1 + quantum), external
    if not said:
        assert 'efforts that do not change' not in message, message
        return
    assert 'efforts that do not change while the torques they measure do' in message, message
    assert 'taken as not measured until they change' in message
    for words in said:
        assert words in message, message
    named = [f'fr3_joint{i + 1} (' for i in range(7)]
    assert sum(name in message for name in named) == len(said)
    # the model's torque in their place (inverse dynamics at q̈ = 0 here: the observer sees
    # M q̈ of the motion through them) and not the model less a constant: 16–17 N·m on joint 4
    assert np.all(np.abs(external[list(hold)]) < 1.0), external


def test_an_arm_at_rest_keeps_its_efforts_without_being_told_they_stopped():
    assert 'efforts that do not change' not in _swinging_arm({3: 0.0}, speed=0.0)[0]


@pytest.mark.parametrize('cause', ['velocity noise', 'a load the model lacks'])
def test_a_calibration_says_what_half_the_observer_gain_would_give(cause):
    """The arm swinging 12 s at 1 kHz with its true efforts, and white velocity noise of
    0.005 rad/s or 1 kg at the flange that the model lacks: the calibration at observer_gain 50
    gives the thresholds that a pipeline at 25 calibrates on the same samples (within 5 %: the
    window's first 0.2 s, where the outputs at 25 settle, are left out of them); halving the
    gain takes the noise out, not the model error."""
    robot = RobotModel.from_urdf_file(ARM_URDF)
    truth = RobotModel.from_urdf_file(ARM_URDF)
    if cause != 'velocity noise':
        truth.attach_payload('fr3_flange', InertialParameters.point_mass(1.0, [0.0, 0.0, 0.05]))
    noise = np.random.default_rng(11).normal(
        0.0, 0.005 if cause == 'velocity noise' else 0.0, (12000, 7)
    )
    pipelines = {
        gain: LiveDynamics(robot, LiveSettings(observer_gain=gain, observer_momentum='velocities'))
        for gain in (50.0, 25.0)
    }
    for k in range(12000):
        t = 1.0 + k * 1e-3
        phase = 2.0 * math.pi * 0.5 * t
        q = ARM_POSE + 0.4 * np.sin(phase + np.arange(7))
        v = 0.4 * math.pi * np.cos(phase + np.arange(7))
        a = -0.4 * math.pi**2 * np.sin(phase + np.arange(7))
        efforts = pin.rnea(truth.model, truth.data, q, v, a)
        for live in pipelines.values():
            live.update(JointSample(robot.joint_names, q, v + noise[k], efforts, t))
    fast, slow = (pipelines[gain].calibrate_thresholds() for gain in (50.0, 25.0))
    half = fast.half_gain
    assert half.gain == 25.0
    np.testing.assert_allclose(half.thresholds, slow.thresholds, rtol=0.05)
    assert half.ratio == pytest.approx(
        np.exp(np.mean(np.log(slow.thresholds / fast.thresholds))), rel=0.02
    )
    if cause == 'velocity noise':
        assert half.ratio < 0.7, half
    else:
        assert half.ratio > 0.9, half
    assert 'the same motion at observer_gain 25 (lag 40 ms, against 20) gives thresholds' in (
        fast.summary()
    )
    assert not fast.at_rest and 'at rest' not in fast.summary()


def test_recorded_seconds_leave_out_a_jump_of_the_clock():
    """1 s of joint states, the clock an hour on, 0.5 s more: the recording spans 3601.5 s and
    holds 1.5 s of them; once the samples before the jump have left the buffer, 2 s."""
    with SampleRingBuffer(2000, 2) as recording:
        live = LiveDynamics(two_r(), LiveSettings(), recording)
        stamps = [1.0 + 0.001 * k for k in range(1001)]
        stamps += [3602.0 + 0.001 * k for k in range(501)]
        for stamp in stamps:
            live.update(JointSample(NAMES, POSE, (0.0, 0.0), gravity_2r(), stamp))
        assert recording.duration() == pytest.approx(3601.5)
        assert live.recorded_seconds() == pytest.approx(1.5)
        for k in range(501, 2501):
            live.update(JointSample(NAMES, POSE, (0.0, 0.0), gravity_2r(), 3602.0 + 0.001 * k))
        assert live.recorded_seconds() == pytest.approx(1.999) == recording.duration()
