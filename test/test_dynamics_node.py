"""dynamics_node through real rclpy topics: intake, outputs, hot swap and bad input."""

import math
import time
from pathlib import Path

import numpy as np
import pytest
from rclpy.parameter import Parameter
from ros_harness import wait_for

from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF, QUADRUPED_URDF

pytest.importorskip('rclpy')
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from robot_dynamics.ros.dynamics_node import DynamicsNode  # noqa: E402
from robot_dynamics.ros.topics import DESCRIPTION_QOS, SENSOR_QOS

ARM_TEXT = ARM_URDF.read_text()


def joint_state(names, positions, velocities=(), efforts=(), stamp=1.0) -> JointState:
    message = JointState()
    message.header.stamp.sec = int(stamp)
    message.header.stamp.nanosec = int(round((stamp - int(stamp)) * 1e9))
    message.name = list(names)
    message.position = [float(x) for x in positions]
    message.velocity = [float(x) for x in velocities]
    message.effort = [float(x) for x in efforts]
    return message


def make_node(**parameters) -> DynamicsNode:
    overrides = [Parameter(name, value=value) for name, value in parameters.items()]
    return DynamicsNode(node_name=f'dynamics_{id(overrides)}', parameter_overrides=overrides)


def reference_torques(robot, positions, velocities=None, accelerations=None):
    q = robot.configuration(np.asarray(positions, float))
    zeros = np.zeros(robot.num_joints)
    v = robot.tangent(zeros if velocities is None else np.asarray(velocities, float))
    a = robot.tangent(zeros if accelerations is None else np.asarray(accelerations, float))
    return (
        robot.joint_part(dynamics.gravity_torques(robot, q)),
        robot.joint_part(dynamics.inverse_dynamics(robot, q, v, a)),
    )


def test_shuffled_partial_sources_give_core_torques(ros):
    robot = RobotModel.from_urdf_file(ARM_URDF)
    node = make_node(robot_description=ARM_TEXT, acceleration_mode='zero')
    with ros(node) as harness:
        gravity_out = harness.collect(JointState, f'/{node.get_name()}/gravity_torques', SENSOR_QOS)
        inverse_out = harness.collect(
            JointState, f'/{node.get_name()}/inverse_dynamics_torques', SENSOR_QOS
        )
        arm_pub = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        wrist_pub = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(
            lambda: (
                node.count_publishers('joint_states') >= 1
                and harness.probe.count_subscribers('joint_states') >= 1
            ),
            5,
        )
        rng = np.random.default_rng(3)
        positions = rng.uniform(-1, 1, 7)
        velocities = rng.uniform(-1, 1, 7)
        names = list(robot.joint_names)
        # Source 1: joints 4, 1, 3, 2 (shuffled); source 2: joints 7, 5, 6 plus a gripper joint the
        # model lacks.
        first, second = [3, 0, 2, 1], [6, 4, 5]
        for _ in range(50):
            if gravity_out:
                break
            arm_pub.publish(
                joint_state(
                    [names[i] for i in first], positions[first], velocities[first], stamp=2.0
                )
            )
            wrist_pub.publish(
                joint_state(
                    [names[i] for i in second] + ['gripper_finger'],
                    list(positions[second]) + [0.01],
                    list(velocities[second]) + [0.0],
                    stamp=2.0,
                )
            )
            wait_for(lambda: bool(gravity_out), 0.1)
        assert wait_for(lambda: bool(gravity_out) and bool(inverse_out), 5), (
            dict(node.rejections.counts),
            node._incomplete,
            node._processed,
        )
        expected_gravity, expected_inverse = reference_torques(robot, positions, velocities)
        assert gravity_out[-1].name == names
        np.testing.assert_allclose(gravity_out[-1].effort, expected_gravity, atol=1e-12)
        np.testing.assert_allclose(inverse_out[-1].effort, expected_inverse, atol=1e-12)
        assert gravity_out[-1].header.stamp.sec == 2


def test_transient_local_description_before_start_then_hot_swap_and_invalid(ros):
    arm = RobotModel.from_urdf_file(ARM_URDF)
    quadruped = RobotModel.from_urdf_file(QUADRUPED_URDF)
    with ros() as harness:
        description_pub = harness.probe.create_publisher(
            String, 'robot_description', DESCRIPTION_QOS
        )
        description_pub.publish(String(data=ARM_TEXT))
        node = harness.add(make_node())
        assert wait_for(lambda: node.robot is not None, 10), 'latched description not received'
        assert node.robot.joint_names == arm.joint_names
        description_pub.publish(String(data=QUADRUPED_URDF.read_text()))
        assert wait_for(lambda: node.robot.joint_names == quadruped.joint_names, 10), (
            'hot swap failed'
        )
        description_pub.publish(
            String(data='<robot name="broken"><link name="a"/><joint name="j" type="revolute">')
        )
        assert wait_for(lambda: node.model_source.rejected >= 1, 10)
        assert node.robot.joint_names == quadruped.joint_names, (
            'invalid description replaced the good model'
        )
        assert 'not valid XML' in node.model_source.last_error


def test_bad_messages_are_counted_and_survived_and_external_torque_is_zero_for_model_effort(ros):
    robot = RobotModel.from_urdf_file(ARM_URDF)
    node = make_node(
        robot_description=ARM_TEXT,
        acceleration_mode='zero',
        external_torque_method='inverse_dynamics',
    )
    names = list(robot.joint_names)
    positions = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])
    velocities = np.array([0.2, -0.1, 0.3, 0.1, -0.2, 0.1, 0.5])
    _, model_torque = reference_torques(robot, positions, velocities)
    bad = [
        joint_state(names, [math.nan] + list(positions[1:]), stamp=5.0),
        joint_state(names, positions[:3], stamp=5.0),
        joint_state(names[:2] + names[:1], positions[:3], stamp=5.0),
        joint_state([], [], stamp=5.0),
        joint_state(['unknown_a', 'unknown_b'], [0.0, 0.0], stamp=5.0),
        joint_state(names, positions, [math.inf] * 7, stamp=5.0),
        joint_state(names, [1e12] * 7, stamp=5.0),
    ]
    with ros(node) as harness:
        external_out = harness.collect(
            JointState, f'/{node.get_name()}/external_torques', SENSOR_QOS
        )
        publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: node.count_publishers('joint_states') >= 1, 5)
        for message in bad:
            publisher.publish(message)
        publisher.publish(b'\x00\x01\x00\x00\x01\x02')  # serialized bytes that end early
        good = joint_state(names, positions, velocities, model_torque, stamp=6.0)
        publisher.publish(good)
        assert wait_for(lambda: bool(external_out), 5)
        publisher.publish(
            joint_state(names, positions, velocities, model_torque, stamp=5.5)
        )  # out of order
        expected = {
            'non_finite': 2,
            'length_mismatch': 1,
            'duplicate_names': 1,
            'empty': 1,
            'no_known_joints': 1,
            'out_of_range': 1,
            'out_of_order': 1,
            'malformed_joint_state': 1,
        }
        assert wait_for(lambda: dict(node.rejections.counts) == expected, 5), dict(
            node.rejections.counts
        )
        np.testing.assert_allclose(external_out[-1].effort, np.zeros(7), atol=1e-9)


def test_a_silent_source_is_reported_stale_in_diagnostics(ros):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

    robot = RobotModel.from_urdf_file(ARM_URDF)
    node = make_node(robot_description=ARM_TEXT, diagnostics_period=0.2)
    names = list(robot.joint_names)
    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: node.count_publishers('joint_states') >= 1, 5)
        publisher.publish(joint_state(names, np.zeros(7), stamp=10.0))
        # The wrist driver goes silent: only joints 1-4 keep coming, 0.5 s later.
        publisher.publish(joint_state(names[:4], np.zeros(4), stamp=10.5))

        def stale_reported():
            return any(
                status.name.endswith('joint_states')
                and status.level == DiagnosticStatus.WARN
                and 'fr3_joint5' in status.message
                and 'fr3_joint1' not in status.message
                for array in diagnostics
                for status in array.status
            )

        assert wait_for(stale_reported, 5)


@pytest.mark.parametrize(
    'name, requested, taken',
    [
        ('stale_timeout', 0.25, 0.25),
        ('stale_timeout', 0.0, 0.1),
        ('stale_timeout', math.nan, 0.1),
        ('diagnostics_period', 0.5, 0.5),
        ('diagnostics_period', 0.0, 1.0),
        ('diagnostics_period', -1.0, 1.0),
        ('buffer_duration', 5.0, 5.0),
        ('buffer_duration', math.nan, 30.0),
        ('buffer_max_rate', 500.0, 500.0),
        ('buffer_max_rate', math.inf, 1000.0),
        ('acceleration_window', 31, 31),
        ('acceleration_window', 1, 15),
        ('acceleration_window', 10**9, 15),
        ('torque_warn_ratio', 0.9, 0.9),
        ('torque_warn_ratio', 1.5, 0.8),
        ('torque_warn_ratio', math.nan, 0.8),
        ('acceleration_mode', 'zero', 'zero'),
        ('acceleration_mode', 'bogus', 'estimated'),
    ],
)
def test_an_impossible_parameter_falls_back_to_its_default(ros, name, requested, taken):
    # Startup must not fail, nor a timer spin with a zero period, on one bad configuration value.
    node = make_node(urdf_file=str(ARM_URDF), **{name: requested})
    try:
        live = node._live
        used = {
            'stale_timeout': live.estimator.stale_timeout,
            'diagnostics_period': next(
                timer.timer_period_ns
                for timer in node.timers
                if timer.callback == node._publish_diagnostics
            )
            * 1e-9,
            'buffer_duration': live.recording.capacity / 1000.0,
            'buffer_max_rate': live.recording.capacity / 30.0,
            'acceleration_window': live.estimator.differentiator.window,
            'torque_warn_ratio': live.settings.torque_warn_ratio,
            'acceleration_mode': live.estimator.acceleration_mode,
        }[name]
        assert used == pytest.approx(taken) if isinstance(taken, float) else used == taken
        reported = node.get_parameter(
            name
        ).value  # the parameter shows the value in use, not the request
        assert type(reported) is type(taken) and (
            reported == pytest.approx(taken) if isinstance(taken, float) else reported == taken
        ), (reported, taken)
    finally:
        node.destroy_node()


def test_a_recording_larger_than_shared_memory_falls_back_to_the_default_size(ros):
    node = make_node(urdf_file=str(ARM_URDF), buffer_duration=1.0e9)  # 10¹² samples: ~180 TB
    try:
        assert node._live.recording.capacity == 30_000
        assert node.buffer_duration == 30.0
    finally:
        node.destroy_node()


ONE_LINK = (
    '<robot name="lone"><link name="base"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" '
    'izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>'
)


def test_a_description_without_moving_joints_is_refused_and_the_node_keeps_serving(ros):
    from diagnostic_msgs.msg import DiagnosticArray
    from std_srvs.srv import Trigger

    node = make_node(diagnostics_period=0.1)
    robot = RobotModel.from_urdf_file(ARM_URDF)
    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        description_pub = harness.probe.create_publisher(
            String, 'robot_description', DESCRIPTION_QOS
        )
        description_pub.publish(String(data=ONE_LINK))  # before any model: refused, nothing loaded
        assert wait_for(lambda: node.model_source.rejected >= 1, 10)
        assert node.robot is None and 'no moving joints' in node.model_source.last_error
        description_pub.publish(String(data=ARM_TEXT))
        assert wait_for(lambda: node.robot is not None, 10)
        description_pub.publish(String(data=ONE_LINK))  # after a good model: refused, the arm stays
        assert wait_for(lambda: node.model_source.rejected >= 2, 10)
        assert node.robot.joint_names == robot.joint_names
        count = len(diagnostics)
        assert wait_for(lambda: len(diagnostics) >= count + 3, 5), 'diagnostics stopped'
        answer = harness.call(Trigger, f'/{node.get_name()}/clear_payload_buffer')
        assert answer.success, answer.message
        assert 'internal_error' not in node.rejections.counts


def test_diagnostics_never_raise(ros):
    # The diagnostics (timer, and validate_inertia's service thread) count an internal error
    # and go on; before, any exception in them (e.g. max() of an empty array) killed the node.
    node = make_node(robot_description=ARM_TEXT)
    live = node._live
    try:
        node._live = BrokenLive(live.robot)  # broken on purpose
        node._publish_diagnostics()
        assert node.rejections.counts['internal_error'] == 1
    finally:
        node._live = live
        node.destroy_node()


class BrokenLive:
    """A live pipeline whose every status fails (what a bug in it would do)."""

    def __init__(self, robot):
        self.robot = robot

    def __getattr__(self, name):
        raise RuntimeError(f'broken on purpose: {name}')


def set_parameters(harness, node, **values):
    """Results of the node's own /set_parameters service (what `ros2 param set` calls)."""
    from rcl_interfaces.srv import SetParameters

    request = SetParameters.Request(
        parameters=[
            Parameter(name, value=value).to_parameter_msg() for name, value in values.items()
        ]
    )
    return harness.call(
        SetParameters, f'/{node.get_name()}/set_parameters', request, timeout=10
    ).results


def test_a_payload_link_given_before_the_model_that_names_no_link_is_logged_by_name(ros):
    """At launch no model is loaded to check payload_link against: once the model comes, a value
    that is none of its links is logged naming the parameter, and the end of the chain is used."""
    from rcl_interfaces.msg import Log
    from rclpy.qos import DurabilityPolicy, QoSProfile

    node = make_node(robot_description=ARM_TEXT, payload_link='no_link')
    with ros(node) as harness:
        logs = harness.collect(
            Log, '/rosout', QoSProfile(depth=1000, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        )
        assert wait_for(lambda: node.robot is not None, 10)
        assert node.payload_link(node.robot) == 'tool0'
        words = 'parameter payload_link \'no_link\' is not a link of robot model "fr3_arm"'
        assert wait_for(lambda: any(words in log.msg for log in logs), 10)


def test_a_parameter_the_node_does_not_have_is_named_with_the_nearest_it_has(ros):
    from rcl_interfaces.msg import Log
    from rclpy.qos import DurabilityPolicy, QoSProfile

    node = make_node(robot_description=ARM_TEXT, payload_lnk='tool0')
    with ros(node) as harness:
        logs = harness.collect(
            Log, '/rosout', QoSProfile(depth=1000, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        )
        words = (
            'parameter payload_lnk is not a parameter of this node: ignored; did you mean '
            'payload_link'
        )
        assert wait_for(lambda: any(words in log.msg for log in logs), 10)
        assert not node.has_parameter('payload_lnk')


def test_a_runtime_parameter_change_takes_effect_or_is_refused_with_the_reason(ros):
    node = make_node(robot_description=ARM_TEXT, payload_link='fr3_link7', stale_timeout=0.2)
    with ros(node) as harness:
        # Read at start-up or model load: refused (before, accepted and silently ignored).
        for name, value in (
            ('stale_timeout', 0.5),
            ('acceleration_window', 31),
            ('buffer_duration', 5.0),
            ('gravity', [0.0, 0.0, -1.62]),
            ('robot_description', ''),
        ):
            (result,) = set_parameters(harness, node, **{name: value})
            assert not result.successful and 'read-only' in result.reason, (name, result)
        assert node._live.estimator.stale_timeout == 0.2
        # Read at each service call: taken when valid, refused with the reason otherwise.
        assert node.payload_link(node.robot) == 'fr3_link7'
        (result,) = set_parameters(
            harness, node, payload_link='fr3_link6'
        )  # before: accepted, then ignored
        assert result.successful and node.payload_link(node.robot) == 'fr3_link6'
        (result,) = set_parameters(harness, node, payload_link='gripper')
        assert not result.successful and 'is not a link of the robot model' in result.reason
        (result,) = set_parameters(harness, node, payload_link='')
        assert (
            result.successful and node.payload_link(node.robot) == 'tool0'
        )  # empty: the end of the chain
        (result,) = set_parameters(harness, node, payload_mode='full')
        assert result.successful
        assert node.get_parameter('payload_mode').value == 'full'
        (result,) = set_parameters(harness, node, payload_mode='heavy')
        assert (
            not result.successful and "is not one of ('auto', 'full', 'mass_com')" in result.reason
        )
        (result,) = set_parameters(harness, node, apply_identified_payload=1)
        assert not result.successful and 'is not a true or false' in result.reason
        (result,) = set_parameters(harness, node, mesh_allowed_roots='/opt/meshes')  # one directory
        assert result.successful
        assert node.get_parameter('payload_mode').value == 'full'


@pytest.mark.parametrize('topic', ['bad topic', '1abc', '/'])
def test_an_ft_sensor_topic_ros_would_refuse_is_named_and_none_used(ros, topic):
    """The subscription would raise in the constructor: the parameter check refuses the name
    (logged with it) and the node runs without an F/T sensor."""
    node = make_node(urdf_file=str(ARM_URDF), ft_sensor_topic=topic)
    try:
        assert node.get_parameter('ft_sensor_topic').value == ''
        assert node.robot is not None
    finally:
        node.destroy_node()


@pytest.mark.parametrize(
    'name, given, used, reported',
    [
        ('stale_timeout', 1, 1.0, 1.0),  # a whole number for a float parameter
        ('buffer_duration', 30, 30.0, 30.0),
        ('acceleration_window', 1.5, 15, 15),  # not a whole number of samples
        ('acceleration_window', 31.0, 31, 31),
        ('stale_timeout', 'fast', 0.1, 0.1),  # wrong type
        ('acceleration_mode', 5, 'estimated', 'estimated'),
        ('gravity', [0, 0, -10], [0.0, 0.0, -10.0], [0.0, 0.0, -10.0]),
        ('gravity', [0.0, -9.81], [0.0, 0.0, -9.81], [0.0, 0.0, -9.81]),
        ('gravity', [0.0, 0.0, 1e308], [0.0, 0.0, -9.81], [0.0, 0.0, -9.81]),  # norm > 100
    ],
)
def test_a_parameter_of_another_type_is_converted_or_falls_back_to_its_default(
    ros, name, given, used, reported
):
    node = make_node(
        urdf_file=str(ARM_URDF), **{name: given}
    )  # before: InvalidParameterTypeException
    try:
        live = node._live
        value = {
            'stale_timeout': lambda: live.estimator.stale_timeout,
            'buffer_duration': lambda: live.recording.capacity / 1000.0,
            'acceleration_window': lambda: live.estimator.differentiator.window,
            'acceleration_mode': lambda: live.estimator.acceleration_mode,
            'gravity': lambda: live.robot.model.gravity.linear.tolist(),
        }[name]()
        assert value == used and type(value) is type(used)
        assert node.get_parameter(name).value == reported  # the parameter shows the value in use
    finally:
        node.destroy_node()


def test_a_huge_joint_name_is_cut_in_the_log(ros, capfd):
    node = make_node(robot_description=ARM_TEXT)
    with ros(node) as harness:
        publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: node.count_publishers('joint_states') >= 1, 5)
        publisher.publish(joint_state(['x' * 100_000], [0.1]))
        assert wait_for(lambda: node.rejections.counts['no_known_joints'] == 1, 5)
    lines = [line for line in capfd.readouterr().err.splitlines() if 'no_known_joints' in line]
    assert lines and all(len(line) < 500 for line in lines), [len(line) for line in lines]
    assert 'characters in all' in lines[0]


WEAK_SHOULDER = Path(__file__).resolve().parent / 'data' / 'fixtures' / 'weak_shoulder.urdf'


def margin_statuses(diagnostics, node):
    """Every 'torque margins' status /diagnostics carried for ``node``, oldest first."""
    name = f'{node.get_name()}: torque margins'
    return [status for array in diagnostics for status in array.status if status.name == name]


def test_torque_margins_warn_above_the_ratio_and_error_above_the_effort_limit(ros):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

    robot = RobotModel.from_urdf_file(WEAK_SHOULDER)
    horizontal = reference_torques(robot, [0.0, 0.3])[0]
    assert (
        abs(horizontal[0]) > 1.5 * robot.limits.effort[0]
    )  # the shoulder cannot hold the arm horizontal
    tilted = [math.acos(0.9 / abs(horizontal[0])), 0.3]  # 0.9 of its effort limit
    assert dynamics.torque_margins(robot, reference_torques(robot, tilted)[0]) == pytest.approx(
        [0.9, 0.0], abs=1e-9
    )
    text = WEAK_SHOULDER.read_text()
    default_ratio = make_node(
        robot_description=text, acceleration_mode='zero', diagnostics_period=0.1
    )
    lenient = make_node(
        robot_description=text,
        acceleration_mode='zero',
        diagnostics_period=0.1,
        torque_warn_ratio=0.99,
    )
    assert lenient.get_parameter('torque_warn_ratio').value == 0.99
    names = list(robot.joint_names)
    with ros(default_ratio, lenient) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: publisher.get_subscription_count() >= 2, 5)
        stamp = [20.0]

        def hold_until(positions, node, level, ratio):
            """Publish the still pose until ``node``'s margins status has ``level``, names the
            shoulder and reports its |tau|/limit as ``ratio``; returns that status."""

            def reported():
                for status in margin_statuses(diagnostics, node):
                    values = {pair.key: pair.value for pair in status.values}
                    if (
                        status.level == level
                        and 'at shoulder' in status.message
                        and abs(float(values.get('shoulder', 'nan')) - ratio) < 1e-3
                    ):
                        return status
                return None

            for _ in range(60):
                stamp[0] += 0.05
                publisher.publish(joint_state(names, positions, [0.0, 0.0], stamp=stamp[0]))
                if wait_for(lambda: reported() is not None, 0.1):
                    return reported()
            levels = [(s.level, s.message) for s in margin_statuses(diagnostics, node)[-3:]]
            raise AssertionError(
                f'{node.get_name()}: no {level!r} margin status for {ratio}: {levels}'
            )

        warned = hold_until(tilted, default_ratio, DiagnosticStatus.WARN, 0.9)
        assert float({p.key: p.value for p in warned.values}['wrist_roll']) == pytest.approx(
            0.0, abs=1e-6
        )
        hold_until(tilted, lenient, DiagnosticStatus.OK, 0.9)  # 0.9 is below a ratio of 0.99
        del diagnostics[:]
        ratio = float(abs(horizontal[0]) / robot.limits.effort[0])
        hold_until([0.0, 0.3], default_ratio, DiagnosticStatus.ERROR, ratio)
        hold_until([0.0, 0.3], lenient, DiagnosticStatus.ERROR, ratio)


def chain(joints: int, name: str = 'chain') -> str:
    """URDF text of a serial chain of ``joints`` revolute joints (and one fixed tool joint)."""
    inertial = (
        '<inertial><origin xyz="0 0 0.05"/><mass value="0.5"/><inertia ixx="0.001" iyy="0.001" '
        'izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>'
    )
    parts = [f'<robot name="{name}"><link name="l0"/>']
    for i in range(1, joints + 1):
        parts.append(
            f'<link name="l{i}">{inertial}</link><joint name="j{i}" type="revolute"><origin xyz="0 '
            f'0 0.1"/><parent link="l{i - 1}"/><child link="l{i}"/><axis xyz="0 1 0"/><limit '
            'lower="-2" upper="2" effort="10" velocity="1"/></joint>'
        )
    parts.append(
        '<link name="tool"/><joint name="tool_joint" type="fixed"><parent '
        f'link="l{joints}"/><child link="tool"/></joint></robot>'
    )
    return ''.join(parts)


def test_max_joints_refuses_a_larger_description_and_keeps_the_last_good_model(ros):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

    arm = RobotModel.from_urdf_file(ARM_URDF)
    assert arm.num_joints == 7  # and fixed joints, which do not count
    # From the parameter: 8 moving joints over a limit of 7 is refused, nothing is loaded.
    refused = make_node(robot_description=chain(8), max_joints=7)
    try:
        assert refused.robot is None and refused.get_parameter('max_joints').value == 7
        assert (
            'robot description has 8 moving joints, over the limit of 7: raise max_joints'
            in refused.model_source.last_error
        )
    finally:
        refused.destroy_node()
    node = make_node(max_joints=7, diagnostics_period=0.1)
    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        description_pub = harness.probe.create_publisher(
            String, 'robot_description', DESCRIPTION_QOS
        )
        description_pub.publish(String(data=ARM_TEXT))  # exactly max_joints: loaded
        assert wait_for(lambda: node.robot is not None, 10), node.model_source.last_error
        assert node.robot.joint_names == arm.joint_names and node.model_source.rejected == 0
        description_pub.publish(String(data=chain(8, 'eight')))  # one more: refused, the arm stays
        assert wait_for(lambda: node.model_source.rejected == 1, 10)
        assert node.robot.joint_names == arm.joint_names
        assert (
            'robot description has 8 moving joints, over the limit of 7'
            in node.model_source.last_error
        )
        description_pub.publish(String(data=chain(7, 'seven')))  # a new 7-joint robot: loaded
        assert wait_for(lambda: node.robot.name == 'seven', 10), node.model_source.last_error
        assert node.model_source.rejected == 1

        def reported():
            for array in diagnostics:
                for status in array.status:
                    values = {pair.key: pair.value for pair in status.values}
                    if (
                        status.name == f'{node.get_name()}: model'
                        and status.level == DiagnosticStatus.WARN
                        and values.get('descriptions_rejected') == '1'
                        and 'over the limit of 7' in values.get('last_error', '')
                    ):
                        return True
            return False

        assert wait_for(reported, 5)


def stamps_of(messages) -> list:
    return [
        round(message.header.stamp.sec + message.header.stamp.nanosec * 1e-9, 6)
        for message in messages
    ]


def test_external_torques_are_withheld_without_fresh_efforts(ros):
    robot = RobotModel.from_urdf_file(ARM_URDF)
    names = list(robot.joint_names)
    positions = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])
    velocities = np.array([0.2, -0.1, 0.3, 0.1, -0.2, 0.1, 0.5])
    _, model_torque = reference_torques(robot, positions, velocities)
    efforts = model_torque + 0.5
    node = make_node(
        robot_description=ARM_TEXT,
        acceleration_mode='zero',
        stale_timeout=0.1,
        external_torque_method='inverse_dynamics',
    )
    with ros(node) as harness:
        topic = f'/{node.get_name()}'
        gravity_out = harness.collect(JointState, f'{topic}/gravity_torques', SENSOR_QOS)
        inverse_out = harness.collect(JointState, f'{topic}/inverse_dynamics_torques', SENSOR_QOS)
        external_out = harness.collect(JointState, f'{topic}/external_torques', SENSOR_QOS)
        publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(
            lambda: (
                node.count_publishers('joint_states') >= 1
                and all(
                    subscription.get_publisher_count() >= 1
                    for subscription in harness.probe.subscriptions
                )
            ),
            5,
        )

        def send(stamp, with_efforts, joints=range(7)):
            joints = list(joints)
            publisher.publish(
                joint_state(
                    [names[i] for i in joints],
                    positions[joints],
                    velocities[joints],
                    efforts[joints] if with_efforts else (),
                    stamp=stamp,
                )
            )

        for step in range(400):  # until the outputs flow (matched at both ends); no effort yet
            send(0.5 + 0.001 * step, False)
            if wait_for(lambda: bool(gravity_out) and bool(inverse_out), 0.05):
                break
        assert wait_for(lambda: bool(gravity_out) and bool(inverse_out), 5)
        send(0.95, False)
        assert wait_for(
            lambda: stamps_of(gravity_out)[-1:] == stamps_of(inverse_out)[-1:] == [0.95], 5
        )
        assert not external_out
        del gravity_out[:], inverse_out[:]
        # 1. Never any effort: gravity and inverse dynamics arrive, external torques do not.
        send(1.0, False)
        send(1.02, False)
        assert wait_for(
            lambda: stamps_of(gravity_out) == [1.0, 1.02] and stamps_of(inverse_out) == [1.0, 1.02],
            5,
        )
        # 2. Efforts on joints 1-4 only (a second driver sends 5-7 without): still not every joint.
        send(1.04, True, range(4))
        send(1.04, False, range(4, 7))
        # 3. Every effort (the control: external torques flow), then efforts stop: still fresh at
        # 0.05 s (within stale_timeout), stale at 0.5 s, fresh again with a new effort.
        send(2.0, True)
        send(2.05, False)
        send(2.5, False)
        send(3.0, True)
        assert wait_for(lambda: len(external_out) >= 3 and len(gravity_out) >= 8, 5), (
            stamps_of(external_out),
            stamps_of(gravity_out),
        )
        assert (
            stamps_of(gravity_out)
            == stamps_of(inverse_out)
            == [1.0, 1.02, 1.04, 1.04, 2.0, 2.05, 2.5, 3.0]
        )
        # Reliable, in order on each topic: an external torque for any other input would have come
        # before 3.0.
        assert stamps_of(external_out) == [2.0, 2.05, 3.0]
        for message in external_out:  # inverse dynamics − measured effort of the same state (J^T F)
            np.testing.assert_allclose(message.effort, np.full(7, -0.5), atol=1e-9)
        np.testing.assert_allclose(inverse_out[-1].effort, model_torque, atol=1e-9)


def statuses_named(diagnostics, name: str) -> list:
    """Every status called ``name`` that ``diagnostics`` (collected arrays) carried, in order."""
    return [status for array in list(diagnostics) for status in array.status if status.name == name]


def joint_states_warn(diagnostics, *words) -> bool:
    """Whether /diagnostics carried a WARN joint_states status whose message holds every one of
    ``words``."""
    from diagnostic_msgs.msg import DiagnosticStatus

    return any(
        status.name.endswith('joint_states')
        and status.level == DiagnosticStatus.WARN
        and all(word in status.message for word in words)
        for array in diagnostics
        for status in array.status
    )


def _send_unstamped(harness, node, names, positions, efforts, count=30):
    """``count`` joint states of the arm at rest with ``efforts`` (each with its own sensor
    noise, 1e-12 N·m), every header stamp zero (a driver that leaves them unset), 10 ms apart."""
    publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
    assert wait_for(lambda: node.count_publishers('joint_states') >= 1, 5)
    noise = np.random.default_rng(0).normal(0.0, 1e-12, (count, 7))
    for k in range(count):
        publisher.publish(joint_state(names, positions, np.zeros(7), efforts + noise[k], stamp=0))
        wait_for(lambda: False, 0.01)


def test_unstamped_joint_states_give_gravity_only_and_diagnostics_say_why(ros):
    from diagnostic_msgs.msg import DiagnosticArray

    robot = RobotModel.from_urdf_file(ARM_URDF)
    names, positions = list(robot.joint_names), np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6])
    gravity, _ = reference_torques(robot, positions)
    node = make_node(robot_description=ARM_TEXT, diagnostics_period=0.2)
    topic = f'/{node.get_name()}'
    with ros(node) as harness:
        gravity_out = harness.collect(JointState, f'{topic}/gravity_torques', SENSOR_QOS)
        inverse_out = harness.collect(JointState, f'{topic}/inverse_dynamics_torques', SENSOR_QOS)
        external_out = harness.collect(JointState, f'{topic}/external_torques', SENSOR_QOS)
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        _send_unstamped(harness, node, names, positions, gravity)
        assert wait_for(lambda: node.rejections.counts['repeated_stamp'] >= 20, 5), dict(
            node.rejections.counts
        )
        assert wait_for(lambda: len(gravity_out) >= 20, 5)
        for message in gravity_out:
            np.testing.assert_allclose(message.effort, gravity, atol=1e-12)
        assert len(inverse_out) <= 1 and not external_out  # only the first one has no predecessor

        assert wait_for(lambda: joint_states_warn(diagnostics, 'joint_state_stamps: arrival'), 5)


def test_joint_states_stamped_on_arrival_give_every_output(ros):
    robot = RobotModel.from_urdf_file(ARM_URDF)
    names, positions = list(robot.joint_names), np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6])
    gravity, _ = reference_torques(robot, positions)
    node = make_node(robot_description=ARM_TEXT, joint_state_stamps='arrival')
    topic = f'/{node.get_name()}'
    with ros(node) as harness:
        inverse_out = harness.collect(JointState, f'{topic}/inverse_dynamics_torques', SENSOR_QOS)
        external_out = harness.collect(JointState, f'{topic}/external_torques', SENSOR_QOS)
        _send_unstamped(harness, node, names, positions, gravity)
        assert wait_for(lambda: len(inverse_out) >= 20 and len(external_out) >= 10, 5), dict(
            node.rejections.counts
        )
        assert 'repeated_stamp' not in node.rejections.counts
        stamps = stamps_of(inverse_out)
        assert stamps[0] > 0.0 and all(b > a for a, b in zip(stamps, stamps[1:]))
        for message in inverse_out:  # at rest: g(q)
            np.testing.assert_allclose(message.effort, gravity, atol=1e-12)
        for message in external_out:  # the efforts are the model's: nothing external
            np.testing.assert_allclose(message.effort, np.zeros(7), atol=1e-9)


def test_a_bag_played_in_a_loop_gives_every_output_again_from_its_start(ros):
    """Joint states from 5 s, then the same from 5 s again (ros2 bag play --loop, a simulation
    reset): the outputs go on from the earlier time, the restart counted in diagnostics, and
    the payload recording holds the second pass only."""
    robot = RobotModel.from_urdf_file(ARM_URDF)
    names, positions = list(robot.joint_names), np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6])
    gravity, _ = reference_torques(robot, positions)
    node = make_node(robot_description=ARM_TEXT)
    topic = f'/{node.get_name()}'
    with ros(node) as harness:
        external_out = harness.collect(JointState, f'{topic}/external_torques', SENSOR_QOS)
        publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: node.count_publishers('joint_states') >= 1, 5)
        for loop in range(2):
            for k in range(40):
                message = joint_state(names, positions, np.zeros(7), gravity, 5.0 + 0.01 * k)
                publisher.publish(message)
                wait_for(lambda: False, 0.005)
            assert wait_for(lambda: node.time_restarts == loop, 5)
            assert wait_for(lambda: len(stamps_of(external_out)) >= 36 * (loop + 1), 5), dict(
                node.rejections.counts
            )
        assert node.rejections.counts['out_of_order'] == 2
        second = stamps_of(external_out)[-36:]
        assert second == sorted(second) and second[-1] == 5.39 and min(second) < 5.1
        for message in external_out:  # the efforts are the model's: nothing external
            np.testing.assert_allclose(message.effort, np.zeros(7), atol=1e-9)
        assert wait_for(lambda: len(node._live.recording) == 38, 5)


def test_joint_names_under_another_prefix_are_named_in_diagnostics(ros):
    """Franka's driver names (panda_joint1...) against the fr3 description: every message
    refused, and the joint_states status says which prefix differs."""
    from diagnostic_msgs.msg import DiagnosticArray

    node = make_node(robot_description=ARM_TEXT, diagnostics_period=0.2)
    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: node.count_publishers('joint_states') >= 1, 5)
        names = [f'panda_joint{k}' for k in range(1, 8)]
        for k in range(10):
            publisher.publish(joint_state(names, np.zeros(7), np.zeros(7), np.zeros(7), 1 + k))
        assert wait_for(lambda: node.rejections.counts['no_known_joints'] == 10, 5)

        renamed = "the names have 'panda_' where the model's have 'fr3_'"
        assert wait_for(lambda: joint_states_warn(diagnostics, renamed), 5)


def test_two_publishers_of_the_same_joints_are_named_in_diagnostics(ros):
    """A joint_state_publisher left running beside the driver: the arm's positions alternate
    between its zeros and the robot's pose, faster than the joints can move; the joint_states
    status says so and names both publishing nodes."""
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.node import Node

    robot = RobotModel.from_urdf_file(ARM_URDF)
    names, pose = list(robot.joint_names), np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6])
    node = make_node(robot_description=ARM_TEXT, diagnostics_period=0.2)
    gui = Node('joint_state_publisher_gui', namespace=node.get_namespace())
    with ros(node, gui) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        driver = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        left_running = gui.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: node.count_publishers('joint_states') >= 2, 5)
        for k in range(60):
            source, positions = (left_running, np.zeros(7)) if k % 10 == 9 else (driver, pose)
            source.publish(joint_state(names, positions, np.zeros(7), np.ones(7), 1.0 + 0.01 * k))
            wait_for(lambda: False, 0.005)

        words = (
            'jump faster than the joints can move',
            'last fr3_joint4 by',
            '/joint_state_publisher_gui',
            harness.probe.get_name(),
        )
        assert wait_for(lambda: joint_states_warn(diagnostics, *words), 5)
        assert node._live.position_jumps.count >= 10


SWING_POSE = np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6])


def _swing_until_said(ros, motion, statuses_of, words: str, seconds: float, then=None) -> list:
    """Start a node on the bundled arm, publish ``motion(t)`` (positions, velocities, efforts)
    at 250 Hz for up to ``seconds`` or until a WARN among ``statuses_of(diagnostics, node)``
    carries ``words`` (asserted); those statuses. ``then(harness, node)`` runs after, the node
    still up."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

    names = list(RobotModel.from_urdf_file(ARM_URDF).joint_names)
    node = make_node(robot_description=ARM_TEXT, diagnostics_period=0.2)
    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: publisher.get_subscription_count() >= 1, 5)

        def said():
            return any(
                status.level == DiagnosticStatus.WARN and words in status.message
                for status in statuses_of(diagnostics, node)
            )

        for k in range(int(seconds / 0.004)):
            t = 0.004 * k
            publisher.publish(joint_state(names, *motion(t), 1.0 + t))
            if k % 50 == 49 and wait_for(said, 0.01):
                break
            wait_for(lambda: False, 0.002)
        assert wait_for(said, 5), [s.message for s in statuses_of(diagnostics, node)[-2:]]
        if then is not None:
            then(harness, node)
        return statuses_of(diagnostics, node)


def test_velocities_of_the_opposite_sign_are_named_in_the_torque_margins(ros):
    """A driver whose joint 3 velocity has the opposite sign of its positions' rate: the
    torque margins status says so and names the joint."""
    sign = np.array([1, 1, -1, 1, 1, 1, 1])

    def motion(t):  # 0.5 rad/s sines
        return SWING_POSE + 0.2 * np.sin(2.5 * t), sign * 0.5 * np.cos(2.5 * t), np.ones(7)

    words = 'velocities are not the rate of the positions: fr3_joint3 -1 ×'
    _swing_until_said(ros, motion, margin_statuses, words, 6.0)


def contact_statuses(diagnostics, node):
    """Every 'contact' status /diagnostics carried for ``node``, oldest first."""
    name = f'{node.get_name()}: contact'
    return [status for array in diagnostics for status in array.status if status.name == name]


def test_an_effort_that_never_changes_while_the_arm_moves_is_named_in_the_contact_status(ros):
    """A driver that never writes joint 2's effort (0.0 from the start) while the arm swings:
    the contact status WARNs naming that joint alone, and ~/explain_residual names it as not
    measured."""
    from std_srvs.srv import Trigger

    robot = RobotModel.from_urdf_file(ARM_URDF)

    def motion(t):  # 0.6 rad/s sines, the efforts of the motion but joint 2's
        positions = SWING_POSE + 0.3 * np.sin(2.0 * t)
        velocities = np.full(7, 0.6 * np.cos(2.0 * t))
        efforts = reference_torques(robot, positions, velocities)[1]
        efforts[1] = 0.0
        return positions, velocities, efforts

    answers = []

    def explain(harness, node):
        service = f'/{node.get_name()}/explain_residual'
        answers.append(harness.call(Trigger, service, Trigger.Request()))

    words = 'efforts that do not change while the torques they measure do: fr3_joint2 (0 '
    statuses = _swing_until_said(ros, motion, contact_statuses, words, 8.0, then=explain)
    message = next(s.message for s in reversed(statuses) if 'do not change' in s.message)
    assert [f'fr3_joint{i} (' in message for i in range(1, 8)].count(True) == 1, message
    assert answers[0].success, answers[0].message
    assert 'not measured: the efforts of fr3_joint2 (none reported' in answers[0].message


def _send(harness, node, names, positions, efforts, count):
    """``count`` joint states at rest, 10 ms apart, from 1 s."""
    publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
    assert wait_for(lambda: node.count_publishers('joint_states') >= 1, 5)
    for k in range(count):
        velocities = np.zeros(len(names))
        publisher.publish(joint_state(names, positions, velocities, efforts, stamp=1.0 + 0.01 * k))
        wait_for(lambda: False, 0.005)


def test_a_finger_without_effort_leaves_the_arms_external_torques_exact(ros):
    # ros2_control's joint_state_broadcaster fills NaN for a joint without an effort interface.
    import pinocchio as pin

    from robot_dynamics.instruments.validation_corpus import default_robots_directory

    robots = default_robots_directory()
    if robots is None:
        pytest.skip('example-robot-data is not installed')
    urdf = robots / 'panda_description/urdf/panda.urdf'
    robot = RobotModel.from_urdf_file(urdf)
    names = list(robot.joint_names)
    assert names[-1] == 'panda_finger_joint1' and robot.leaf_joints() == ('panda_finger_joint1',)
    positions = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4, 0.02])
    force = np.array([3.0, -2.0, 5.0])  # [N] on the hand's origin, world axes
    q = robot.configuration(positions)
    jacobian = pin.computeFrameJacobian(
        robot.model, robot.data, q, robot.frame_id('panda_hand'), pin.LOCAL_WORLD_ALIGNED
    )
    pushed = robot.coupling.T @ jacobian[:3].T @ force  # τ_ext = Jᵀ F, reduced to the 8 joints
    gravity, _ = reference_torques(robot, positions)
    efforts = gravity - pushed
    efforts[-1] = math.nan
    node = make_node(urdf_file=str(urdf))
    topic = f'/{node.get_name()}'
    with ros(node) as harness:
        external_out = harness.collect(JointState, f'{topic}/external_torques', SENSOR_QOS)
        _send(harness, node, names, positions, efforts, 80)
        assert wait_for(lambda: len(external_out) >= 70, 5), dict(node.rejections.counts)
        assert not node.rejections.counts
        np.testing.assert_allclose(external_out[-1].effort[:7], pushed[:7], atol=1e-9)
        assert external_out[-1].effort[7] == 0.0
        status = node._live.contact_status()
        assert status.values['joints_without_effort'] == 'panda_finger_joint1'
        assert 'no effort reported by panda_finger_joint1' in status.message


@pytest.mark.parametrize('effort', [math.nan, 0.0])
def test_joint_states_without_any_effort_give_the_torques_and_name_what_is_missing(ros, effort):
    # Mock hardware: without effort state interfaces every effort NaN; with one, every effort 0.
    robot = RobotModel.from_urdf_file(ARM_URDF)
    names, positions = list(robot.joint_names), np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6])
    gravity, _ = reference_torques(robot, positions)
    node = make_node(robot_description=ARM_TEXT)
    topic = f'/{node.get_name()}'
    with ros(node) as harness:
        gravity_out = harness.collect(JointState, f'{topic}/gravity_torques', SENSOR_QOS)
        inverse_out = harness.collect(JointState, f'{topic}/inverse_dynamics_torques', SENSOR_QOS)
        external_out = harness.collect(JointState, f'{topic}/external_torques', SENSOR_QOS)
        _send(harness, node, names, positions, np.full(7, effort), 20)
        assert wait_for(lambda: len(gravity_out) >= 20 and len(inverse_out) >= 20, 5)
        assert not node.rejections.counts and not external_out
        np.testing.assert_allclose(inverse_out[-1].effort, gravity, atol=1e-12)  # at rest
        message = node._live.contact_status().message
        if effort == 0.0:
            assert 'every effort in joint_states is exactly 0' in message, message
            assert 'mock hardware' in message
        else:
            assert 'no external torques: efforts of fr3_joint1, fr3_joint2' in message, message
            assert 'and 1 more' in message


def test_mock_hardware_zero_velocities_give_the_inverse_dynamics_of_the_positions_motion(ros):
    # ros2_control's mock hardware moves the positions and sends every velocity and effort as 0
    import pinocchio as pin

    robot = RobotModel.from_urdf_file(ARM_URDF)
    names, zeros = list(robot.joint_names), np.zeros(7)
    start, rate = np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6]), np.linspace(-0.5, 0.5, 7)
    node = make_node(robot_description=ARM_TEXT)
    topic = f'/{node.get_name()}'
    with ros(node) as harness:
        inverse_out = harness.collect(JointState, f'{topic}/inverse_dynamics_torques', SENSOR_QOS)
        publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: node.count_publishers('joint_states') >= 1, 5)
        for k in range(40):
            positions = start + rate * 0.01 * k
            publisher.publish(joint_state(names, positions, zeros, zeros, stamp=1.0 + 0.01 * k))
            wait_for(lambda: False, 0.005)
        assert wait_for(lambda: len(inverse_out) >= 40, 5), len(inverse_out)
        assert not node.rejections.counts
        data = robot.model.createData()
        expected = pin.rnea(robot.model, data, positions, rate, zeros)  # constant q̇: q̈ = 0
        np.testing.assert_allclose(inverse_out[-1].effort, expected, atol=1e-6)
        gravity = pin.computeGeneralizedGravity(robot.model, data, positions)
        assert np.abs(expected - gravity).max() > 1e-3  # what zeros taken as measured gave
        message = node._live.margin_status().message
        assert 'every velocity in joint_states is exactly 0' in message, message
        assert 'q̇ is the slope of the positions' in message


def test_a_best_effort_joint_state_publisher_is_named_in_diagnostics(ros):
    # A reliable subscription receives nothing from it: the node can only say so.
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    node = make_node(robot_description=ARM_TEXT, diagnostics_period=0.2)
    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        harness.probe.create_publisher(
            JointState,
            'joint_states',
            QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT),
        )

        def named():
            return any(
                status.name.endswith('joint_states')
                and 'best-effort publisher on /joint_states: not received' in status.message
                and {kv.key: kv.value for kv in status.values}['best_effort_publishers']
                == '/joint_states'
                for array in diagnostics
                for status in array.status
            )

        assert wait_for(named, 10)


@pytest.mark.parametrize(
    'name, given, used',
    [('diagnostics_period', 1e-6, 1.0), ('effort_scale_uncertainty', float('inf'), 0.02)],
)
def test_a_timer_period_that_would_spin_or_an_infinite_uncertainty_falls_back(
    ros, name, given, used
):
    node = make_node(urdf_file=str(ARM_URDF), **{name: given})
    try:
        assert node.get_parameter(name).value == used
    finally:
        node.destroy_node()


def test_a_rejection_warns_in_the_next_status_with_its_reason_and_then_no_more(ros):
    """One late joint state in a steady stream: the next joint_states status is a WARN that
    names the reason, its count and its words; the statuses after it are OK again."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

    node = make_node(robot_description=ARM_TEXT, diagnostics_period=0.2)
    names = list(RobotModel.from_urdf_file(ARM_URDF).joint_names)
    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: node.count_publishers('joint_states') >= 1, 5)

        def joint_states_statuses():
            return statuses_named(diagnostics, f'{node.get_name()}: joint_states')

        def stream_until(condition, stamp, late_at=None) -> float:
            deadline = time.monotonic() + 10.0
            while not condition() and time.monotonic() < deadline:
                stamp += 0.01
                publisher.publish(joint_state(names, np.zeros(7), stamp=stamp))
                if late_at is not None and stamp >= late_at:
                    publisher.publish(joint_state(names, np.zeros(7), stamp=stamp - 0.05))
                    late_at = None
                time.sleep(0.01)
            assert condition()
            return stamp

        stamp = stream_until(lambda: node._processed >= 20, 10.0)
        warned = 'rejected since the last status: out_of_order 1 (stamp'
        stamp = stream_until(
            lambda: any(warned in status.message for status in joint_states_statuses()),
            stamp,
            late_at=stamp + 0.1,
        )
        (warning,) = [status for status in joint_states_statuses() if warned in status.message]
        assert warning.level == DiagnosticStatus.WARN, warning
        after = len(joint_states_statuses())
        stream_until(lambda: len(joint_states_statuses()) >= after + 2, stamp)
        assert all(
            status.level == DiagnosticStatus.OK for status in joint_states_statuses()[after:]
        ), joint_states_statuses()[after:]
        assert node.rejections.counts['out_of_order'] == 1
