"""dynamics_node's tool outputs through real nodes and topics: ``~/known_external_wrench`` in the
inverse-dynamics and external-torque outputs, ``~/effective_mass`` against closed forms.

References are computed here independently: Jᵀ F from pinocchio's frame Jacobian (and rnea with
external forces), the effective mass of a slider (its mass) and of the vertical 2R arm from its
closed-form Jacobian and mass matrix (test/vertical_2r.py)."""

import functools
import math
import time

import numpy as np
import pinocchio as pin
import pytest
import vertical_2r
from rclpy.parameter import Parameter
from ros_harness import wait_for

from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.dynamics.joint_reactions import (
    KnownWrench,
    KnownWrenchError,
    KnownWrenchTorques,
    inverse_dynamics_with_wrench,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF

pytest.importorskip('rclpy')
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from geometry_msgs.msg import Vector3Stamped, WrenchStamped  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from test_effective_mass import SLIDER  # noqa: E402  the same 2.5 kg carriage on a rail

from robot_dynamics.ros.dynamics_node import DynamicsNode  # noqa: E402
from robot_dynamics.ros.sim_robot import SimRobot  # noqa: E402
from robot_dynamics.ros.topics import JOINT_STATE_QOS, SENSOR_QOS, stamp_seconds

ARM_TEXT = ARM_URDF.read_text()
POSE = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])
FORCE, MOMENT = np.array([8.0, -6.0, 9.0]), np.array([0.3, -0.2, 0.4])
TWO_R_WITH_TIP = vertical_2r.urdf().replace(
    '</robot>',
    f"""
  <link name="tip"/>
  <joint name="tip_joint" type="fixed"><origin xyz="{vertical_2r.L2} 0 0"/><parent link="link2"/>
    <child link="tip"/></joint>
</robot>""",
)


def known_wrench_in_use(node: DynamicsNode):
    """The known wrench ``node`` uses now (None: none)."""
    return None if node._live is None else node._live.known_wrench.current


def dynamics_node(namespace: str, name: str = 'dynamics', **parameters) -> DynamicsNode:
    overrides = [Parameter(key, value=value) for key, value in parameters.items()]
    return DynamicsNode(node_name=name, namespace=namespace, parameter_overrides=overrides)


def joint_state(names, positions, velocities, efforts, stamp: float) -> JointState:
    message = JointState(
        name=list(names),
        position=[float(x) for x in positions],
        velocity=[float(x) for x in velocities],
        effort=[float(x) for x in efforts],
    )
    message.header.stamp.sec, message.header.stamp.nanosec = (
        int(stamp),
        int(round((stamp - int(stamp)) * 1e9)),
    )
    return message


def wrench_message(frame: str, force, moment) -> WrenchStamped:
    message = WrenchStamped()
    message.header.frame_id = frame
    message.wrench.force.x, message.wrench.force.y, message.wrench.force.z = (
        float(x) for x in force
    )
    message.wrench.torque.x, message.wrench.torque.y, message.wrench.torque.z = (
        float(x) for x in moment
    )
    return message


def local_jacobian_transpose_wrench(
    robot: RobotModel, positions, frame: str, force, moment
) -> np.ndarray:
    """Jᵀ F [N·m] straight from pinocchio's LOCAL frame Jacobian (fixed base, no mimic joints)."""
    jacobian = pin.computeFrameJacobian(
        robot.model,
        robot.data,
        np.asarray(positions, dtype=float),
        robot.model.getFrameId(frame),
        pin.LOCAL,
    )
    return jacobian.T @ np.concatenate([force, moment])


def latest_status(diagnostics: list, name: str):
    for array in reversed(diagnostics):
        for status in array.status:
            if status.name == name:
                return status
    return None


def status_values(status) -> dict:
    return {item.key: item.value for item in status.values}


def by_stamp(messages: list) -> dict:
    return {stamp_seconds(m.header.stamp): np.array(m.effort) for m in messages}


# ---------------------------------------------------------------------- core


@pytest.mark.parametrize('expressed_in', ['local', 'world'])
def test_known_wrench_torques_equal_the_shift_of_rnea_with_the_external_force(expressed_in):
    arm = RobotModel.from_urdf_file(ARM_URDF)
    rng = np.random.default_rng(3)
    wrench = KnownWrench('tool0', FORCE, MOMENT, expressed_in)
    torques = KnownWrenchTorques(arm, wrench)
    for _ in range(5):
        q, v, a = rng.uniform(-1.5, 1.5, 7), rng.uniform(-1, 1, 7), rng.uniform(-2, 2, 7)
        shift = dynamics.inverse_dynamics(arm, q, v, a) - inverse_dynamics_with_wrench(
            arm, q, v, a, wrench
        )
        np.testing.assert_allclose(torques.torques(q), shift, atol=1e-10)


def test_known_wrench_torques_refuse_unknown_and_world_fixed_frames():
    arm = RobotModel.from_urdf_file(ARM_URDF)
    with pytest.raises(KnownWrenchError, match='not a frame'):
        KnownWrenchTorques(arm, KnownWrench('nowhere', FORCE, MOMENT))
    with pytest.raises(KnownWrenchError, match='fixed to the world'):
        KnownWrenchTorques(arm, KnownWrench('fr3_link0', FORCE, MOMENT))


# ---------------------------------------------------------------------- known wrench, hand-made
# joint states


class RestingArm:
    """Joint states of the arm at rest at POSE with efforts g(q): no external torque at all."""

    def __init__(self, harness, topic: str):
        self.robot = RobotModel.from_urdf_file(ARM_URDF)
        self.gravity = dynamics.gravity_torques(self.robot, self.robot.configuration(POSE))
        self.publisher = harness.probe.create_publisher(JointState, topic, SENSOR_QOS)
        self.stamp = 100.0

    def send(self, count: int) -> None:
        for _ in range(count):
            self.stamp += 0.001
            self.publisher.publish(
                joint_state(self.robot.joint_names, POSE, np.zeros(7), self.gravity, self.stamp)
            )


def test_known_wrench_enters_both_outputs_until_stale_or_zero_and_bad_ones_are_refused(ros):
    namespace = '/tool_known'
    timeout = 3.0
    by_inverse_dynamics = dynamics_node(
        namespace,
        'dynamics',
        robot_description=ARM_TEXT,
        external_torque_method='inverse_dynamics',
        known_wrench_timeout=timeout,
        diagnostics_period=0.2,
    )
    by_observer = dynamics_node(
        namespace,
        'observer',
        robot_description=ARM_TEXT,
        observer_gain=500.0,
        known_wrench_timeout=timeout,
    )
    with ros(by_inverse_dynamics, by_observer) as harness:
        inverse = harness.collect(
            JointState, f'{namespace}/dynamics/inverse_dynamics_torques', SENSOR_QOS
        )
        external = harness.collect(JointState, f'{namespace}/dynamics/external_torques', SENSOR_QOS)
        observed = harness.collect(JointState, f'{namespace}/observer/external_torques', SENSOR_QOS)
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        feed = RestingArm(harness, f'{namespace}/joint_states')
        known = harness.probe.create_publisher(
            WrenchStamped, f'{namespace}/dynamics/known_external_wrench', 10
        )
        known_observer = harness.probe.create_publisher(
            WrenchStamped, f'{namespace}/observer/known_external_wrench', 10
        )
        assert wait_for(
            lambda: (
                harness.probe.count_subscribers(f'{namespace}/joint_states') >= 2
                and harness.probe.count_subscribers(f'{namespace}/dynamics/known_external_wrench')
                >= 1
                and harness.probe.count_subscribers(f'{namespace}/observer/known_external_wrench')
                >= 1
                and by_inverse_dynamics.count_subscribers(f'{namespace}/dynamics/external_torques')
                >= 1
                and by_observer.count_subscribers(f'{namespace}/observer/external_torques') >= 1
            ),
            10,
        )
        gravity = feed.gravity
        shift = local_jacobian_transpose_wrench(feed.robot, POSE, 'tool0', FORCE, MOMENT)
        assert np.abs(shift).max() > 1.0

        sent = 0

        def send_and_wait(count: int) -> None:
            nonlocal sent
            sent += count
            feed.send(count)
            # the observer answers from its third sample (momentum from positions)
            assert wait_for(
                lambda: (
                    len(inverse) >= sent and len(external) >= sent and len(observed) >= sent - 2
                ),
                20,
            )

        send_and_wait(20)
        np.testing.assert_allclose(inverse[-1].effort, gravity, atol=1e-9)
        np.testing.assert_allclose(external[-1].effort, np.zeros(7), atol=1e-9)

        for publisher in (known, known_observer):
            publisher.publish(wrench_message('tool0', FORCE, MOMENT))
        assert wait_for(
            lambda: (
                known_wrench_in_use(by_inverse_dynamics) is not None
                and known_wrench_in_use(by_observer) is not None
            ),
            10,
        )
        send_and_wait(100)
        # τ = ID − Jᵀ F; the wrench is not there, so what it does not explain is −Jᵀ F.
        np.testing.assert_allclose(inverse[-1].effort, gravity - shift, atol=1e-9)
        np.testing.assert_allclose(external[-1].effort, -shift, atol=1e-9)
        np.testing.assert_allclose(
            observed[-1].effort, -shift, atol=1e-3
        )  # r = −Jᵀ F (1 − e^{−500·0.1})

        for message in (
            wrench_message('nowhere', FORCE, MOMENT),
            wrench_message('fr3_link0', FORCE, MOMENT),
            wrench_message('tool0', [math.nan, 0.0, 0.0], MOMENT),
        ):
            known.publish(message)
        assert wait_for(lambda: by_inverse_dynamics._live.known_wrench.counts['rejected'] >= 3, 10)

        def warns(text: str):
            status = latest_status(diagnostics, 'dynamics: known external wrench')
            return (
                status is not None
                and status.level == DiagnosticStatus.WARN
                and text in status.message
            )

        assert wait_for(lambda: warns('finite'), 5)
        send_and_wait(5)  # the last good wrench stays in use
        np.testing.assert_allclose(inverse[-1].effort, gravity - shift, atol=1e-9)

        time.sleep(timeout + 0.5)
        send_and_wait(5)
        np.testing.assert_allclose(inverse[-1].effort, gravity, atol=1e-9)
        np.testing.assert_allclose(external[-1].effort, np.zeros(7), atol=1e-9)
        assert by_inverse_dynamics._live.known_wrench.counts['removed_stale'] == 1
        assert wait_for(
            lambda: (
                latest_status(diagnostics, 'dynamics: known external wrench') is not None
                and 'none received for'
                in latest_status(diagnostics, 'dynamics: known external wrench').message
            ),
            5,
        )

        known.publish(wrench_message('', FORCE, MOMENT))  # empty frame: the payload link, tool0
        assert wait_for(lambda: known_wrench_in_use(by_inverse_dynamics) is not None, 10)
        send_and_wait(5)
        np.testing.assert_allclose(inverse[-1].effort, gravity - shift, atol=1e-9)
        known.publish(wrench_message('tool0', np.zeros(3), np.zeros(3)))
        assert wait_for(lambda: known_wrench_in_use(by_inverse_dynamics) is None, 10)
        send_and_wait(5)
        np.testing.assert_allclose(inverse[-1].effort, gravity, atol=1e-9)
        assert 'zero wrench' in by_inverse_dynamics._live.known_wrench.last_event


# ---------------------------------------------------------------------- known wrench = sim_robot's
# push


def test_known_wrench_equal_to_the_applied_push_leaves_no_external_torque(ros):
    """sim_robot pushes tool0 with F. A node that knows F (inverse-dynamics route, q̈ = 0 so every
    output depends on its own sample only) publishes exactly rnea(q, q̇, 0) − Jᵀ(q) F and that minus
    the measured effort; an observer node that knows F sees ≈ 0 where one that does not sees Jᵀ
    F."""
    namespace = '/tool_sim'
    sim = SimRobot(
        'sim_robot',
        namespace=namespace,
        parameter_overrides=[
            Parameter('engine', value='pinocchio'),  # the exact reference: its noise and truth
            Parameter('publish_rate', value=250.0),
            Parameter('velocity_noise', value=0.0),
            Parameter('effort_noise', value=0.0),
        ],
    )
    common = dict(robot_description=ARM_TEXT, known_wrench_timeout=600.0, effective_mass_rate=0.0)
    knows_id = dynamics_node(
        namespace,
        'knows_id',
        external_torque_method='inverse_dynamics',
        acceleration_mode='zero',
        **common,
    )
    knows_observer = dynamics_node(namespace, 'knows_observer', observer_gain=100.0, **common)
    plain_observer = dynamics_node(namespace, 'plain_observer', observer_gain=100.0, **common)
    with ros(sim, knows_id, knows_observer, plain_observer) as harness:
        collect = functools.partial(harness.collect, JointState, qos=JOINT_STATE_QOS)
        inverse, unexplained = (
            collect(f'{namespace}/knows_id/{kind}')
            for kind in ('inverse_dynamics_torques', 'external_torques')
        )
        observed, observed_plain = (
            collect(f'{namespace}/{name}/external_torques')
            for name in ('knows_observer', 'plain_observer')
        )
        states, truth = (
            collect(f'{namespace}/joint_states'),
            collect(f'{namespace}/sim_robot/true_external_torques'),
        )
        command = harness.probe.create_publisher(
            WrenchStamped, f'{namespace}/sim_robot/external_wrench_command', 10
        )
        knowns = [
            harness.probe.create_publisher(
                WrenchStamped, f'{namespace}/{name}/known_external_wrench', 10
            )
            for name in ('knows_id', 'knows_observer')
        ]
        assert wait_for(
            lambda: all(
                harness.probe.count_subscribers(publisher.topic_name) >= 1
                for publisher in (command, *knowns)
            ),
            10,
        )
        for publisher in knowns:
            publisher.publish(wrench_message('tool0', FORCE, MOMENT))
        assert wait_for(
            lambda: (
                known_wrench_in_use(knows_id) is not None
                and known_wrench_in_use(knows_observer) is not None
            ),
            10,
        )
        command.publish(wrench_message('tool0', FORCE, MOMENT))
        assert wait_for(lambda: any(np.any(m.effort) for m in truth), 30), (
            'sim_robot did not apply the push'
        )
        settled = (
            stamp_seconds(next(m for m in truth if np.any(m.effort)).header.stamp) + 0.2
        )  # 1/K_O = 10 ms

        def after(messages: list) -> dict:
            return {stamp: value for stamp, value in by_stamp(messages).items() if stamp > settled}

        assert wait_for(
            lambda: (
                min(len(after(m)) for m in (inverse, unexplained, observed, observed_plain)) >= 100
            ),
            120,
        )
        robot = RobotModel.from_urdf_file(ARM_URDF)
        measured = {stamp_seconds(m.header.stamp): m for m in states}
        true_torques = after(truth)
        compared = 0
        for stamp, torques in after(inverse).items():
            if stamp not in measured or stamp not in true_torques:
                continue
            state = measured[stamp]
            q, v = np.array(state.position), np.array(state.velocity)
            shift = local_jacobian_transpose_wrench(robot, q, 'tool0', FORCE, MOMENT)
            np.testing.assert_allclose(
                true_torques[stamp], shift, atol=1e-9
            )  # sim_robot applied exactly this
            expected = pin.rnea(robot.model, robot.data, q, v, np.zeros(7)) - shift
            np.testing.assert_allclose(torques, expected, atol=1e-9)
            compared += 1
        assert compared >= 50
        inverse_torques = after(inverse)
        for stamp, torques in after(unexplained).items():  # τ_ext − Jᵀ F = (ID − Jᵀ F) − τ_measured
            if stamp in inverse_torques and stamp in measured:
                np.testing.assert_allclose(
                    torques, inverse_torques[stamp] - np.array(measured[stamp].effort), atol=1e-9
                )
        applied = np.array(
            [true_torques[stamp] for stamp in after(observed) if stamp in true_torques]
        )
        scale = np.abs(applied).mean()
        assert scale > 0.5
        left = np.abs(np.array(list(after(observed).values()))).mean()
        seen = np.abs(np.array(list(after(observed_plain).values()))).mean()
        assert seen == pytest.approx(
            scale, rel=0.1
        )  # without the known wrench the push is all there
        assert left < 0.05 * scale, (left, scale)  # with it, ≈ 0


# ---------------------------------------------------------------------- effective mass


def effective_mass_feed(
    harness, topic: str, names, positions, velocities, start: float, count: int = 5
) -> None:
    """``count`` joint states (no efforts) 1 ms apart from ``start`` [s]."""
    publisher = harness.probe.create_publisher(JointState, topic, SENSOR_QOS)
    assert wait_for(lambda: harness.probe.count_subscribers(topic) >= 1, 10)
    for index in range(count):
        publisher.publish(joint_state(names, positions, velocities, [], start + 0.001 * index))


def two_r_closed_form(q, qd):
    """(Λ⁻¹ in the arm's plane [1/kg], tip velocity [m/s]) of the vertical 2R arm."""
    l1, l2 = vertical_2r.L1, vertical_2r.L2
    s1, c1, s12, c12 = math.sin(q[0]), math.cos(q[0]), math.sin(q[0] + q[1]), math.cos(q[0] + q[1])
    jacobian = np.array([[-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12]])
    zero = np.zeros(2)
    mass = np.column_stack(
        [vertical_2r.torques(q, zero, e) - vertical_2r.torques(q, zero, zero) for e in np.eye(2)]
    )
    return jacobian @ np.linalg.solve(mass, jacobian.T), jacobian @ np.asarray(qd)


def test_effective_mass_of_the_2r_arm_matches_its_closed_form_moving_and_at_rest(ros):
    namespace = '/tool_mass_2r'
    node = dynamics_node(
        namespace,
        robot_description=TWO_R_WITH_TIP,
        gravity=[0.0, -vertical_2r.G, 0.0],
        effective_mass_frame='tip',
        effective_mass_rate=20.0,
        diagnostics_period=0.2,
    )
    with ros(node) as harness:
        masses = harness.collect(Vector3Stamped, f'{namespace}/dynamics/effective_mass', 10)
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        assert wait_for(
            lambda: node.count_subscribers(f'{namespace}/dynamics/effective_mass') >= 1, 10
        )
        q, qd = [0.7, -1.1], [0.8, -1.5]
        effective_mass_feed(
            harness, f'{namespace}/joint_states', ('shoulder', 'elbow'), q, qd, 50.0
        )
        assert wait_for(
            lambda: masses and stamp_seconds(masses[-1].header.stamp) == pytest.approx(50.004), 10
        )
        inverse_inertia, velocity = two_r_closed_form(q, qd)
        speed = float(np.linalg.norm(velocity))
        direction = velocity / speed
        expected = 1.0 / (direction @ inverse_inertia @ direction)
        message = masses[-1]
        assert message.header.frame_id == 'tip'
        assert stamp_seconds(message.header.stamp) == pytest.approx(50.004, abs=1e-6)
        assert message.vector.x == pytest.approx(expected, rel=1e-9)
        assert message.vector.y == pytest.approx(speed, rel=1e-9)
        assert message.vector.z == pytest.approx(0.5 * expected * speed**2, rel=1e-9)
        assert wait_for(
            lambda: (
                latest_status(diagnostics, 'dynamics: effective mass') is not None
                and 'along the velocity'
                in latest_status(diagnostics, 'dynamics: effective mass').message
            ),
            5,
        )
        values = status_values(latest_status(diagnostics, 'dynamics: effective mass'))
        assert float(values['effective_mass_kg']) == pytest.approx(expected, rel=1e-5)
        assert values['direction_source'] == 'velocity'

        effective_mass_feed(
            harness, f'{namespace}/joint_states', ('shoulder', 'elbow'), q, [0.0, 0.0], 60.0
        )
        up = np.array([0.0, 1.0])  # gravity is −y here

        assert wait_for(lambda: stamp_seconds(masses[-1].header.stamp) == pytest.approx(60.004), 10)
        assert masses[-1].vector.y == 0.0
        assert masses[-1].vector.x == pytest.approx(1.0 / (up @ inverse_inertia @ up), rel=1e-9)
        assert masses[-1].vector.z == 0.0
        assert wait_for(
            lambda: 'at rest' in latest_status(diagnostics, 'dynamics: effective mass').message, 5
        )


def test_effective_mass_of_a_slider_is_its_mass_and_nothing_published_if_it_cannot_rise(
    ros,
):
    namespace = '/tool_mass_slider'
    node = dynamics_node(
        namespace, robot_description=SLIDER, effective_mass_rate=20.0, diagnostics_period=0.2
    )
    with ros(node) as harness:
        masses = harness.collect(Vector3Stamped, f'{namespace}/dynamics/effective_mass', 10)
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        assert wait_for(
            lambda: node.count_subscribers(f'{namespace}/dynamics/effective_mass') >= 1, 10
        )
        effective_mass_feed(harness, f'{namespace}/joint_states', ('rail',), [0.3], [-0.4], 50.0)
        assert wait_for(
            lambda: masses and stamp_seconds(masses[-1].header.stamp) == pytest.approx(50.004), 10
        )
        assert masses[-1].header.frame_id == 'carriage'  # the payload link by default
        np.testing.assert_allclose(
            [masses[-1].vector.x, masses[-1].vector.y, masses[-1].vector.z],
            [2.5, 0.4, 0.5 * 2.5 * 0.16],
            rtol=1e-12,
        )
        effective_mass_feed(harness, f'{namespace}/joint_states', ('rail',), [0.3], [0.0], 60.0)

        def says_infinite():
            status = latest_status(diagnostics, 'dynamics: effective mass')
            return status is not None and 'infinite along the vertical' in status.message

        assert wait_for(says_infinite, 10)
        assert node.effective_mass_reading.stamp == pytest.approx(
            60.004
        )  # the sample at rest was evaluated...
        assert all(stamp_seconds(m.header.stamp) < 60.0 for m in masses)  # ... and not published
        assert all(math.isfinite(m.vector.x) for m in masses)


@pytest.mark.parametrize(
    'name, requested, taken',
    [
        ('effective_mass_rate', -1.0, 10.0),
        ('effective_mass_rate', 1000.0, 10.0),
        ('effective_mass_rate', 0.0, 0.0),
        ('known_wrench_timeout', 0.0, 0.5),
        ('known_wrench_timeout', math.nan, 0.5),
        ('known_wrench_timeout', 2.0, 2.0),
    ],
)
def test_an_impossible_tool_parameter_falls_back_to_its_default(ros, name, requested, taken):
    node = dynamics_node('/tool_parameters', robot_description=ARM_TEXT, **{name: requested})
    try:
        used = {
            'effective_mass_rate': node.effective_mass_rate,
            'known_wrench_timeout': node.settings.known_wrench_timeout,
        }[name]
        assert used == taken and node.get_parameter(name).value == taken
        timers = [timer for timer in node.timers if timer.callback == node._update_effective_mass]
        assert len(timers) == (0 if node.effective_mass_rate == 0.0 else 1)
    finally:
        node.destroy_node()
