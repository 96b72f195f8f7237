"""dynamics_node's contact handling through real rclpy topics and services, with sim_robot as the
truth.

Threshold logic, calibration, the observer's restarts and the external wrench are checked on
real nodes: hand-made joint states with a known external torque (efforts = g(q) + offset at
rest), and sim_robot pushed through ``~/external_wrench_command`` (its truth topics are the
reference)."""

import re

import numpy as np
import pytest
from rclpy.parameter import Parameter
from ros_harness import wait_for

from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF

pytest.importorskip('rclpy')
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Bool, String  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from robot_dynamics.ros.dynamics_node import DynamicsNode  # noqa: E402
from robot_dynamics.ros.sim_robot import SimRobot  # noqa: E402
from robot_dynamics.ros.topics import DESCRIPTION_QOS, SENSOR_QOS

ARM_TEXT = ARM_URDF.read_text()
POSE = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])


def dynamics_node(namespace: str, **parameters) -> DynamicsNode:
    overrides = [Parameter(name, value=value) for name, value in parameters.items()]
    return DynamicsNode(node_name='dynamics', namespace=namespace, parameter_overrides=overrides)


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


class StaticFeed:
    """Joint states of the arm at rest at POSE with efforts g(q) + ``offset``: the external torque
    is −offset."""

    def __init__(self, harness, topic: str):
        self.robot = RobotModel.from_urdf_file(ARM_URDF)
        self.gravity = dynamics.gravity_torques(self.robot, self.robot.configuration(POSE))
        self.publisher = harness.probe.create_publisher(JointState, topic, SENSOR_QOS)
        self.stamp = 100.0

    def send(
        self, offset: np.ndarray, count: int, efforts: bool = True, step: float = 0.001
    ) -> None:
        names, zeros = self.robot.joint_names, np.zeros(7)
        for _ in range(count):
            self.stamp += step
            self.publisher.publish(
                joint_state(
                    names, POSE, zeros, self.gravity + offset if efforts else (), self.stamp
                )
            )


def contact_status(diagnostics, name: str):
    for array in reversed(diagnostics):
        for status in array.status:
            if status.name == name:
                return status
    return None


def test_given_thresholds_flag_a_contact_with_minimum_duration_and_release_with_hysteresis(ros):
    node = dynamics_node(
        '/contact_a',
        robot_description=ARM_TEXT,
        contact_thresholds=[1.0] * 7,
        observer_gain=100.0,
        contact_min_duration=0.005,
        contact_release_ratio=0.5,
        contact_release_duration=0.02,
        diagnostics_period=0.2,
    )
    with ros(node) as harness:
        flags = harness.collect(Bool, '/contact_a/dynamics/contact', 10)
        ratios = harness.collect(JointState, '/contact_a/dynamics/contact_ratio', SENSOR_QOS)
        external = harness.collect(JointState, '/contact_a/dynamics/external_torques', SENSOR_QOS)
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        feed = StaticFeed(harness, '/contact_a/joint_states')
        assert wait_for(
            lambda: (
                harness.probe.count_subscribers('/contact_a/joint_states') >= 1
                and node.count_subscribers('/contact_a/dynamics/contact_ratio') >= 1
            ),
            5,
        )
        offset = np.zeros(7)
        feed.send(offset, 60)  # contact is evaluated from the 50th (observer_momentum auto)
        assert wait_for(lambda: len(external) >= 50 and flags, 5)
        assert not any(flag.data for flag in flags)
        np.testing.assert_allclose(external[-1].effort, np.zeros(7), atol=1e-6)
        offset[3] = -3.0  # external torque +3 N m on joint 4
        feed.send(offset, 200)
        assert wait_for(lambda: any(flag.data for flag in flags), 5), 'contact not flagged'
        assert wait_for(lambda: len(ratios) >= 200, 5)
        np.testing.assert_allclose(ratios[-1].effort[3], 3.0, rtol=1e-3)
        np.testing.assert_allclose(external[-1].effort[3], 3.0, rtol=1e-3)
        crossing = next(m for m in ratios if m.effort[3] > 1.0)
        first_ratio_stamp = crossing.header.stamp.nanosec * 1e-9 + crossing.header.stamp.sec
        # r = 3 (1 − e^{−K (t − t_s)}) passes 1 after 4.05 ms; t_s = 100.0615 s: the effort step
        # (linear between
        # samples, centred at 100.0605 s) plus one period, as the positions form's ū is centred a
        # sample back
        assert first_ratio_stamp - 100.0615 == pytest.approx(np.log(1.5) / 100.0, abs=0.0015)
        offset[3] = -0.8  # ratio 0.8: above the release ratio, the contact holds
        feed.send(offset, 200)
        assert wait_for(lambda: len(ratios) >= 400, 5)
        assert flags[-1].data
        offset[3] = 0.0
        feed.send(offset, 200)
        assert wait_for(lambda: not flags[-1].data, 5), 'contact not released'
        changes = [
            flag.data for previous, flag in zip(flags, flags[1:]) if flag.data != previous.data
        ]
        assert changes == [True, False]
        assert wait_for(lambda: contact_status(diagnostics, 'dynamics: contact') is not None, 5)
        status = contact_status(diagnostics, 'dynamics: contact')
        values = {item.key: item.value for item in status.values}
        assert values['contacts'] == '1' and values['thresholds_source'] == 'given'


def test_calibration_refuses_without_data_then_thresholds_from_the_contact_free_residual(ros):
    node = dynamics_node('/contact_b', robot_description=ARM_TEXT, contact_calibration_duration=0.5)
    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        answer = harness.call(Trigger, '/contact_b/dynamics/calibrate_contact_thresholds')
        assert not answer.success and 'move the robot' in answer.message
        feed = StaticFeed(harness, '/contact_b/joint_states')
        assert wait_for(lambda: harness.probe.count_subscribers('/contact_b/joint_states') >= 1, 5)
        feed.send(np.zeros(7), 20)
        assert wait_for(lambda: node._processed >= 20, 5)
        answer = harness.call(Trigger, '/contact_b/dynamics/calibrate_contact_thresholds')
        assert not answer.success and 'at least' in answer.message
        rng = np.random.default_rng(0)
        sigma = np.array([0.05, 0.1, 0.05, 0.04, 0.01, 0.01, 0.01])
        for _ in range(1000):  # effort noise: the observer's residual is its low-pass
            feed.send(rng.normal(0.0, sigma), 1)
        assert wait_for(lambda: node._processed >= 1020, 30)  # every sample in before the call
        answer = harness.call(Trigger, '/contact_b/dynamics/calibrate_contact_thresholds')
        assert answer.success, answer.message
        residuals = node._live._history.window(0.5)
        expected = np.abs(residuals.mean(axis=0)) + 5.0 * residuals.std(axis=0)
        np.testing.assert_allclose(node._live.thresholds.values, expected, rtol=0.05)
        assert 'fr3_joint1' in answer.message and '5 sigma' in answer.message
        # white effort noise: half the gain passes less of it
        said = re.search(
            r'at observer_gain 25 \(lag 40 ms, against 20\) gives thresholds ([0-9.]+) x',
            answer.message,
        )
        assert said and 0.3 < float(said.group(1)) < 1.0, answer.message

        def half_gain_in_status():
            status = contact_status(diagnostics, 'dynamics: contact')
            values = {} if status is None else {item.key: item.value for item in status.values}
            return values.get('thresholds_at_half_gain')

        assert wait_for(half_gain_in_status, 5)
        assert half_gain_in_status() == f'{said.group(1)} x at 25 /s'


def test_missing_efforts_stop_the_observer_and_it_restarts_cleanly_when_they_return(ros):
    node = dynamics_node(
        '/contact_c',
        robot_description=ARM_TEXT,
        observer_gain=200.0,
        diagnostics_period=0.2,
        stale_timeout=0.05,
    )
    with ros(node) as harness:
        external = harness.collect(JointState, '/contact_c/dynamics/external_torques', SENSOR_QOS)
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        feed = StaticFeed(harness, '/contact_c/joint_states')
        assert wait_for(
            lambda: (
                harness.probe.count_subscribers('/contact_c/joint_states') >= 1
                and node.count_subscribers('/contact_c/dynamics/external_torques') >= 1
            ),
            5,
        )
        offset = np.zeros(7)
        offset[1] = -2.0
        feed.send(offset, 100)
        assert wait_for(lambda: len(external) >= 98, 5)  # the first two samples start the observer
        np.testing.assert_allclose(external[-1].effort[1], 2.0, rtol=1e-6)
        feed.send(offset, 100, efforts=False)  # efforts stop: stale after 0.05 s

        def says_missing():
            status = contact_status(diagnostics, 'dynamics: contact')
            return status is not None and 'missing or stale' in status.message

        assert wait_for(says_missing, 5)
        count = len(external)
        feed.send(
            offset, 3
        )  # efforts back: restarts (first two samples: no output), then r from 0 again
        assert wait_for(lambda: len(external) >= count + 1, 5)
        restarted = external[count]
        assert (
            0.0 < restarted.effort[1] < 0.5
        )  # 2 (1 - e^{-200 * 1 ms}) = 0.36: a fresh start, not the old 2.0
        assert node._live.observer.restarts >= 2


def test_a_model_swap_restarts_the_observer(ros):
    node = dynamics_node('/contact_d', observer_gain=100.0)
    with ros(node) as harness:
        description = harness.probe.create_publisher(
            String, '/contact_d/robot_description', DESCRIPTION_QOS
        )
        description.publish(String(data=ARM_TEXT))
        assert wait_for(lambda: node.robot is not None, 10)
        feed = StaticFeed(harness, '/contact_d/joint_states')
        assert wait_for(lambda: harness.probe.count_subscribers('/contact_d/joint_states') >= 1, 5)
        offset = np.zeros(7)
        offset[0] = -1.0
        feed.send(offset, 100)
        assert wait_for(lambda: node._processed >= 100, 30)
        assert node._live.observer.residual[0] > 0.99
        first = node.robot
        description.publish(String(data=ARM_TEXT.replace('fr3_arm', 'fr3_arm_swapped')))
        assert wait_for(lambda: node.robot is not first, 10)
        feed.send(offset, 3)
        assert wait_for(lambda: node._processed >= 103, 30)
        assert node._live.robot is node.robot
        assert node._live.observer.residual[0] < 0.2  # 1 − e^{−100·1 ms} = 0.095 after the restart


def test_bad_contact_parameters_fall_back_and_diagnostics_say_why(ros):
    node = dynamics_node(
        '/contact_e',
        robot_description=ARM_TEXT,
        contact_thresholds=[1.0, 2.0],
        external_torque_method='bogus',
        observer_gain=-3.0,
        observer_momentum='bogus',
        wrench_frame='nowhere',
        friction_file='/nonexistent/friction.yaml',
        diagnostics_period=0.2,
    )
    with ros(node) as harness:
        assert node.settings.external_torque_method == 'observer'
        assert node.settings.observer_gain == 50.0
        assert node.settings.observer_momentum == 'auto'
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        feed = StaticFeed(harness, '/contact_e/joint_states')
        assert wait_for(lambda: harness.probe.count_subscribers('/contact_e/joint_states') >= 1, 5)
        feed.send(np.zeros(7), 10)

        def reported():
            status = contact_status(diagnostics, 'dynamics: contact')
            return (
                status is not None
                and 'one value per joint' in status.message
                and 'nowhere' in status.message
                and 'friction' in status.message
            )

        assert wait_for(reported, 5)


def test_sim_push_is_detected_and_its_wrench_recovered_at_the_tool(ros):
    sim = SimRobot(
        'sim_robot',
        namespace='/contact_f',
        parameter_overrides=[
            Parameter('engine', value='pinocchio'),  # the exact reference: its noise and truth
            Parameter('publish_rate', value=250.0),
            Parameter('velocity_noise', value=0.001),
            Parameter('effort_noise', value=0.02),
        ],
    )
    node = dynamics_node(
        '/contact_f',
        robot_description=ARM_TEXT,
        contact_calibration_duration=2.0,
        wrench_frame='tool0',
    )
    with ros(sim, node) as harness:
        flags = harness.collect(Bool, '/contact_f/dynamics/contact', 10)
        wrenches = harness.collect(WrenchStamped, '/contact_f/dynamics/external_wrench', SENSOR_QOS)
        truth = harness.collect(
            WrenchStamped, '/contact_f/sim_robot/true_external_wrench', SENSOR_QOS
        )
        assert wait_for(
            lambda: node._live is not None and len(node._live._history.window(2.0)) >= 450,
            120,
        )
        answer = harness.call(Trigger, '/contact_f/dynamics/calibrate_contact_thresholds')
        assert answer.success, answer.message
        command = harness.probe.create_publisher(
            WrenchStamped, '/contact_f/sim_robot/external_wrench_command', 10
        )
        assert wait_for(
            lambda: harness.probe.count_subscribers('/contact_f/sim_robot/external_wrench_command'),
            5,
        )
        push = WrenchStamped()
        push.header.frame_id = 'tool0'
        push.wrench.force.x, push.wrench.force.y, push.wrench.force.z = 8.0, -6.0, 9.0
        command.publish(push)
        assert wait_for(lambda: any(flag.data for flag in flags), 30), 'push not detected'
        pushed = len(wrenches)
        assert wait_for(
            lambda: len(wrenches) >= pushed + 125, 30
        )  # 0.5 s at 250 Hz: settled (1/K = 20 ms)
        estimated = np.array(
            [[m.wrench.force.x, m.wrench.force.y, m.wrench.force.z] for m in wrenches[-100:]]
        )
        np.testing.assert_allclose(estimated.mean(axis=0), [8.0, -6.0, 9.0], atol=1.0)
        assert any(m.header.frame_id == 'tool0' and m.wrench.force.z == 9.0 for m in truth)
        command.publish(WrenchStamped())
        assert wait_for(lambda: not flags[-1].data, 30), 'release not detected'


@pytest.mark.parametrize(
    'method, momentum',
    [('observer', 'positions'), ('observer', 'velocities'), ('inverse_dynamics', 'positions')],
)
def test_both_methods_publish_the_torque_the_environment_applies(ros, method, momentum):
    namespace = f'/contact_sign_{method}_{momentum}'
    node = dynamics_node(
        namespace,
        robot_description=ARM_TEXT,
        external_torque_method=method,
        observer_gain=200.0,
        observer_momentum=momentum,
    )
    with ros(node) as harness:
        external = harness.collect(JointState, f'{namespace}/dynamics/external_torques', SENSOR_QOS)
        feed = StaticFeed(harness, f'{namespace}/joint_states')
        assert wait_for(
            lambda: (
                harness.probe.count_subscribers(f'{namespace}/joint_states') >= 1
                and node.count_subscribers(f'{namespace}/dynamics/external_torques') >= 1
            ),
            5,
        )
        offset = np.zeros(7)
        offset[
            2
        ] = -1.5  # the motor holds 1.5 N m less than gravity needs: the environment supplies +1.5
        feed.send(offset, 100)
        assert wait_for(lambda: len(external) >= 90, 5)
        np.testing.assert_allclose(external[-1].effort, 1.5 * np.eye(7)[2], atol=1e-6)


@pytest.mark.parametrize('noisy, kept', [('velocities', 'positions'), ('positions', 'velocities')])
def test_auto_momentum_keeps_the_source_the_calibration_finds_quieter(ros, noisy, kept):
    """At rest with white noise on the velocities (0.01 rad/s), and on the positions too when
    they are the noisy ones (12 µrad: the position form's residual 2× the velocity form's from
    step to step, under the 3× at which auto leaves it before a calibration, its thresholds
    1.7× higher): the calibration keeps the quiet source (it runs alone afterwards)."""
    namespace = f'/contact_auto_{noisy}'
    node = dynamics_node(namespace, robot_description=ARM_TEXT, contact_calibration_duration=0.5)
    with ros(node) as harness:
        feed = StaticFeed(harness, f'{namespace}/joint_states')
        assert wait_for(
            lambda: harness.probe.count_subscribers(f'{namespace}/joint_states') >= 1, 5
        )
        rng = np.random.default_rng(2)
        for _ in range(800):
            feed.stamp += 0.001
            velocities = rng.normal(0.0, 0.01, 7)
            positions = POSE + (rng.normal(0.0, 1.2e-5, 7) if noisy == 'positions' else 0.0)
            feed.publisher.publish(
                joint_state(feed.robot.joint_names, positions, velocities, feed.gravity, feed.stamp)
            )
        assert wait_for(lambda: node._processed >= 800, 30)
        assert node._live.observer.momentum == 'positions' and node._live._alternative is not None
        answer = harness.call(Trigger, f'{namespace}/dynamics/calibrate_contact_thresholds')
        assert answer.success and f'momentum from {kept}' in answer.message, answer.message
        state = node._live
        assert state.observer.momentum == kept and state._alternative is None
        first = state.thresholds.values.copy()
        again = harness.call(Trigger, f'{namespace}/dynamics/calibrate_contact_thresholds')
        assert again.success and 'momentum from' not in again.message
        np.testing.assert_allclose(
            state.thresholds.values, first, rtol=0.3
        )  # the kept source's residuals
        feed.send(np.zeros(7), 20)
        assert wait_for(lambda: node._processed >= 820, 30)
        assert state.observer.running  # the kept observer went on without a restart
        assert state.observer.restarts == 1
        swapped = node._live.with_model(
            RobotModel.from_urdf_file(ARM_URDF)
        )  # a new model keeps the choice
        assert swapped.observer.momentum == kept and swapped._alternative is None


def test_diagnostics_carry_the_model_residual_as_identify_scores_it(ros):
    """7 s of the arm at rest with 0.3 N·m more on joint 1 than the model says: the services
    thread evaluates the first 5 s block and the contact diagnostics carry it."""
    node = dynamics_node('/contact_residual', robot_description=ARM_TEXT, diagnostics_period=0.2)
    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        feed = StaticFeed(harness, '/contact_residual/joint_states')
        assert wait_for(
            lambda: harness.probe.count_subscribers('/contact_residual/joint_states') >= 1, 5
        )
        offset = np.eye(7)[0] * 0.3
        for chunk in range(1, 36):  # 7 s of stamps at 250 Hz, 50 samples at a time
            feed.send(offset, 50, step=0.004)
            assert wait_for(lambda: node._processed >= 45 * chunk, 10)

        def rest_rms():
            status = contact_status(diagnostics, 'dynamics: contact')
            values = {} if status is None else {item.key: item.value for item in status.values}
            text = values.get('model_residual_rms_rest_nm')
            return None if text is None else np.array([float(x) for x in text.split(',')])

        assert wait_for(lambda: rest_rms() is not None, 10), 'no model residual in /diagnostics'
        np.testing.assert_allclose(rest_rms(), offset, atol=1e-3)
