"""dynamics_node as a managed (lifecycle) node: through its real lifecycle services (and `ros2
service call` where the ROS 2 command line is installed), configure loads the model, activate
starts the outputs, deactivate stops them, cleanup forgets the model; unmanaged it has no
lifecycle interface and publishes from the start."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest
from ros_harness import wait_for

from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF


def _change(harness, node: str, transition: int) -> bool:
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState

    request = ChangeState.Request(transition=Transition(id=transition))
    return harness.call(ChangeState, f'/{node}/change_state', request).success


def _state(harness, node: str) -> str:
    from lifecycle_msgs.srv import GetState

    return harness.call(GetState, f'/{node}/get_state', GetState.Request()).current_state.label


def test_the_lifecycle_transitions_load_start_stop_and_forget(ros):
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from geometry_msgs.msg import Vector3Stamped
    from lifecycle_msgs.msg import Transition
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger
    from test_dynamics_node import joint_state

    from robot_dynamics.ros.dynamics_node import DynamicsNode
    from robot_dynamics.ros.topics import JOINT_STATE_QOS, SENSOR_QOS

    robot = RobotModel.from_urdf_file(ARM_URDF)
    node = DynamicsNode(
        node_name='managed_dynamics',
        parameter_overrides=[
            Parameter('urdf_file', value=str(ARM_URDF)),
            Parameter('managed', value=True),
            Parameter('diagnostics_period', value=0.2),
            Parameter('effective_mass_rate', value=0.01),  # its timer: called below instead
        ],
    )
    with ros(node) as harness:
        gravity = harness.collect(JointState, '/managed_dynamics/gravity_torques', SENSOR_QOS)
        masses = harness.collect(Vector3Stamped, '/managed_dynamics/effective_mass', SENSOR_QOS)
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics', 10)
        feed = harness.probe.create_publisher(JointState, 'joint_states', JOINT_STATE_QOS)
        stamp = [1.0]

        def stream(count: int) -> None:
            for _ in range(count):
                feed.publish(
                    joint_state(robot.joint_names, np.zeros(7), np.zeros(7), stamp=stamp[0])
                )
                stamp[0] += 0.01
                wait_for(lambda: False, 0.005)

        assert wait_for(lambda: feed.get_subscription_count() > 0, 30)
        assert _state(harness, 'managed_dynamics') == 'unconfigured'
        stream(20)
        assert node.robot is None and not gravity
        answer = harness.call(Trigger, '/managed_dynamics/validate_inertia')
        assert not answer.success and answer.message == (
            'the node is unconfigured (managed: true): configure it (ros2 lifecycle set '
            '/managed_dynamics configure)'
        )
        # a contact profile set before configure is checked by name and used from the start
        (unknown,) = node.set_parameters([Parameter('contact_profile', value='nope')])
        assert not unknown.successful and "no contact profile 'nope'" in unknown.reason
        (early,) = node.set_parameters([Parameter('contact_profile', value='hand_guiding')])
        assert early.successful, early.reason
        assert _change(harness, 'managed_dynamics', Transition.TRANSITION_CONFIGURE)
        assert node.robot is not None and _state(harness, 'managed_dynamics') == 'inactive'
        assert node._live.contact_profile.name == 'hand_guiding'
        stream(20)
        assert wait_for(lambda: node.dropped_inactive >= 40, 10) and not gravity
        inactive = input_status(diagnostics, 'managed_dynamics: joint_states', 'inactive')
        assert wait_for(
            lambda: inactive() and int(status_value(inactive(), 'dropped_inactive')) >= 40, 10
        )
        assert inactive().level == DiagnosticStatus.OK, inactive().message
        assert 'activate starts the outputs' in inactive().message
        assert _change(harness, 'managed_dynamics', Transition.TRANSITION_ACTIVATE)
        stream(20)
        assert wait_for(lambda: len(gravity) >= 10, 30)
        node._update_effective_mass()  # the effective mass timer's tick, on a new sample
        assert wait_for(lambda: len(masses) == 1, 10)
        (profile,) = node.set_parameters([Parameter('contact_profile', value='sensitive')])
        assert profile.successful, profile.reason
        count = len(gravity)
        stream(1)  # a sample the effective mass has not had yet...
        assert wait_for(lambda: len(gravity) > count, 10)
        assert _change(harness, 'managed_dynamics', Transition.TRANSITION_DEACTIVATE)
        node._update_effective_mass()  # ... is not published once deactivated
        wait_for(lambda: False, 0.3)
        assert len(masses) == 1
        before = len(gravity)
        stream(20)
        wait_for(lambda: False, 0.3)
        assert len(gravity) == before
        assert _change(harness, 'managed_dynamics', Transition.TRANSITION_CLEANUP)
        assert node.robot is None and _state(harness, 'managed_dynamics') == 'unconfigured'
        assert _change(harness, 'managed_dynamics', Transition.TRANSITION_CONFIGURE)
        assert node._live.contact_profile.name == 'sensitive'  # what the parameter reads
        assert _change(harness, 'managed_dynamics', Transition.TRANSITION_CLEANUP)
        # the same transition from the ROS 2 command line, where it is installed and its
        # `service call` runs on this rclpy (the shared ros2cli needs rclpy's init context
        # manager, which Jazzy's rclpy 7 lacks)
        if shutil.which('ros2') and hasattr(rclpy, 'InitContextManager'):
            call = subprocess.run(
                [
                    'ros2',
                    'service',
                    'call',
                    '/managed_dynamics/change_state',
                    'lifecycle_msgs/srv/ChangeState',
                    '{transition: {id: 1}}',
                ],
                capture_output=True,
                text=True,
                timeout=60,
                env=dict(os.environ),
            )
            assert call.returncode == 0 and 'success=True' in call.stdout, call.stdout + call.stderr
            assert wait_for(lambda: node.robot is not None, 30)


def input_status(diagnostics: list, name: str, words: str):
    """A function giving the latest status ``name`` received whose message has ``words``."""

    def latest():
        for array in reversed(list(diagnostics)):
            for status in array.status:
                if status.name == name and words in status.message:
                    return status
        return None

    return latest


def status_value(status, key: str) -> str:
    return next(value.value for value in status.values if value.key == key)


def test_a_finalized_node_says_so_and_a_refused_model_is_named_at_configure(ros, capfd):
    from diagnostic_msgs.msg import DiagnosticArray
    from lifecycle_msgs.msg import Transition
    from rclpy.parameter import Parameter

    from robot_dynamics.ros.centroidal_node import CentroidalNode

    node = CentroidalNode(
        node_name='refusing_centroidal',
        parameter_overrides=[
            Parameter('urdf_file', value=str(ARM_URDF)),
            Parameter('managed', value=True),
            Parameter('contact_frames', value=['nope_foot']),
            Parameter('diagnostics_period', value=0.2),
        ],
    )
    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics', 10)
        assert not _change(harness, 'refusing_centroidal', Transition.TRANSITION_CONFIGURE)
        logged = capfd.readouterr().err.splitlines()
        failed = [line for line in logged if 'configure failed' in line]
        assert failed and 'nope_foot' in failed[-1], failed
        shutdown = Transition.TRANSITION_UNCONFIGURED_SHUTDOWN
        assert _change(harness, 'refusing_centroidal', shutdown)
        finalized = input_status(diagnostics, 'refusing_centroidal: model', 'finalized')
        assert wait_for(lambda: finalized() is not None, 10)
        assert 'start the node again' in finalized().message


def test_an_unmanaged_node_has_no_lifecycle_interface_and_publishes(ros):
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from test_dynamics_node import joint_state

    from robot_dynamics.ros.dynamics_node import DynamicsNode
    from robot_dynamics.ros.topics import JOINT_STATE_QOS, SENSOR_QOS

    robot = RobotModel.from_urdf_file(ARM_URDF)
    node = DynamicsNode(
        node_name='plain_dynamics',
        parameter_overrides=[Parameter('urdf_file', value=str(ARM_URDF))],
    )
    with ros(node) as harness:
        gravity = harness.collect(JointState, '/plain_dynamics/gravity_torques', SENSOR_QOS)
        feed = harness.probe.create_publisher(JointState, 'joint_states', JOINT_STATE_QOS)
        assert wait_for(lambda: node.robot is not None and feed.get_subscription_count(), 30)
        for k in range(20):
            feed.publish(
                joint_state(robot.joint_names, np.zeros(7), np.zeros(7), stamp=1 + k / 100)
            )
        assert wait_for(lambda: len(gravity) >= 10, 30)
        services = [name for name, _ in harness.probe.get_service_names_and_types()]
        assert not [name for name in services if name.startswith('/plain_dynamics/change_state')]


@pytest.mark.parametrize('source', ['file'])
def test_configure_fails_with_the_reason_when_the_model_cannot_load(ros, tmp_path, source):
    from lifecycle_msgs.msg import Transition
    from rclpy.parameter import Parameter

    from robot_dynamics.ros.dynamics_node import DynamicsNode

    node = DynamicsNode(
        node_name='broken_dynamics',
        parameter_overrides=[
            Parameter('urdf_file', value=str(tmp_path / 'missing.urdf')),
            Parameter('managed', value=True),
        ],
    )
    with ros(node) as harness:
        assert not _change(harness, 'broken_dynamics', Transition.TRANSITION_CONFIGURE)
        assert _state(harness, 'broken_dynamics') == 'unconfigured'
        assert node.robot is None


def test_centroidal_node_is_managed_the_same_way(ros):
    from geometry_msgs.msg import PointStamped
    from lifecycle_msgs.msg import Transition
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from test_dynamics_node import joint_state

    from robot_dynamics.ros.centroidal_node import CentroidalNode
    from robot_dynamics.ros.topics import JOINT_STATE_QOS, SENSOR_QOS

    robot = RobotModel.from_urdf_file(ARM_URDF)
    node = CentroidalNode(
        node_name='managed_centroidal',
        parameter_overrides=[
            Parameter('urdf_file', value=str(ARM_URDF)),
            Parameter('managed', value=True),
        ],
    )
    with ros(node) as harness:
        com = harness.collect(PointStamped, '/managed_centroidal/com', SENSOR_QOS)
        feed = harness.probe.create_publisher(JointState, 'joint_states', JOINT_STATE_QOS)
        assert wait_for(lambda: feed.get_subscription_count() > 0, 30)
        names = robot.joint_names

        def stream(start: float) -> None:
            for k in range(20):
                feed.publish(joint_state(names, np.zeros(7), np.zeros(7), stamp=start + k / 100))
                wait_for(lambda: False, 0.005)

        stream(1.0)
        assert node.robot is None and not com
        assert _change(harness, 'managed_centroidal', Transition.TRANSITION_CONFIGURE)
        assert _change(harness, 'managed_centroidal', Transition.TRANSITION_ACTIVATE)
        assert node.robot is not None
        stream(2.0)
        assert wait_for(lambda: len(com) >= 10, 30)
