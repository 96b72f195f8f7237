"""~/gravity_command, the ros2_control feed-forward: g(q) in a controller's joint order, with the
friction feed-forward as its closed form, through the core and the real node."""

import numpy as np
import pytest
import vertical_2r
from ros_harness import wait_for
from test_dynamics_node import ARM_TEXT, joint_state, make_node

from robot_dynamics.core.live.live_dynamics import LiveDynamics
from robot_dynamics.core.live.settings import LiveSettings
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.joint_states import JointSample
from robot_dynamics.models import ARM_URDF

pytest.importorskip('rclpy')
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from robot_dynamics.ros.topics import SENSOR_QOS  # noqa: E402

NAMES_2R = ('shoulder', 'elbow')


def test_the_command_is_gravity_in_the_controllers_order_plus_friction_at_the_velocities(
    tmp_path,
):
    friction_file = tmp_path / 'friction.yaml'
    friction_file.write_text(
        'joints:\n  shoulder: {viscous: 0.4, coulomb: 0.3, offset: 0.05}\n'
        '  elbow: {viscous: 0.2, coulomb: 0.1}\n'
    )
    q, qd = np.array([0.6, -0.4]), np.array([0.5, -0.25])
    gravity = vertical_2r.torques(q, np.zeros(2), np.zeros(2))
    friction = np.array([0.4 * 0.5 + 0.3 + 0.05, 0.2 * -0.25 - 0.1])
    for command_friction, expected in ((False, gravity), (True, gravity + friction)):
        live = LiveDynamics(
            vertical_2r.model(),
            LiveSettings(
                command_joints=('elbow', 'shoulder'),
                command_friction=command_friction,
                friction_file=str(friction_file),
            ),
        )
        torques = live.torques(JointSample(NAMES_2R, q, qd, (), 1.0))
        np.testing.assert_allclose(live.gravity_command(torques), expected[::-1], atol=1e-12)
    # link-side torque sensors: the residual leaves the motors' friction out, the command not
    from robot_dynamics.core.streams.effort_model import EffortModel, JointEffort

    sensors = EffortModel(NAMES_2R, (JointEffort('torque'), JointEffort('torque')))
    live = LiveDynamics(
        vertical_2r.model(),
        LiveSettings(command_friction=True, friction_file=str(friction_file), effort_model=sensors),
    )
    assert any('friction not subtracted on' in problem for problem in live.problems)
    torques = live.torques(JointSample(NAMES_2R, q, qd, (), 1.0))
    np.testing.assert_allclose(live.gravity_command(torques), gravity + friction, atol=1e-12)


@pytest.mark.parametrize(
    'joints, words',
    [
        (('shoulder', 'elbow', 'wrist_9'), 'wrist_9'),
        (('shoulder', 'shoulder', 'elbow'), "['shoulder'] more than once"),
    ],
)
def test_command_joints_the_model_lacks_or_named_twice_are_named_and_no_command_is_made(
    joints, words
):
    live = LiveDynamics(vertical_2r.model(), LiveSettings(command_joints=joints))
    assert any(words in problem for problem in live.problems)
    torques = live.torques(JointSample(NAMES_2R, (0.1, 0.2), (0.0, 0.0), (), 1.0))
    assert live.gravity_command(torques) is None


def test_the_node_publishes_gravity_torques_reordered_exactly(ros):
    robot = RobotModel.from_urdf_file(ARM_URDF)
    order = list(reversed(robot.joint_names))
    node = make_node(robot_description=ARM_TEXT, command_joints=order)
    name = node.get_name()
    with ros(node) as harness:
        gravity = harness.collect(JointState, f'/{name}/gravity_torques', SENSOR_QOS)
        commands = harness.collect(Float64MultiArray, f'/{name}/gravity_command', SENSOR_QOS)
        feed = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(
            lambda: (
                feed.get_subscription_count() >= 1
                and node.count_subscribers(f'/{name}/gravity_command') >= 1
                and node.count_subscribers(f'/{name}/gravity_torques') >= 1
            ),
            30,
        )
        rng = np.random.default_rng(5)
        for k in range(20):
            positions = rng.uniform(-1.5, 1.5, 7)
            feed.publish(joint_state(robot.joint_names, positions, np.zeros(7), stamp=3.0 + k))
            assert wait_for(lambda: len(commands) > k and len(gravity) > k, 30), (
                len(commands),
                len(gravity),
            )
    index = [robot.joint_names.index(joint) for joint in order]
    for torques, command in zip(gravity, commands):
        assert list(command.data) == [torques.effort[i] for i in index]
    assert len(commands) == len(gravity) == 20


def test_the_node_names_a_command_joint_its_model_lacks_and_publishes_no_command(ros):
    node = make_node(robot_description=ARM_TEXT, command_joints=['fr3_joint1', 'gripper_9'])
    name = node.get_name()
    with ros(node) as harness:
        gravity = harness.collect(JointState, f'/{name}/gravity_torques', SENSOR_QOS)
        commands = harness.collect(Float64MultiArray, f'/{name}/gravity_command', SENSOR_QOS)
        feed = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: node.robot is not None and feed.get_subscription_count(), 30)
        assert any('gripper_9' in problem for problem in node._live.problems)
        names = node.robot.joint_names
        for k in range(5):
            feed.publish(joint_state(names, np.zeros(7), np.zeros(7), stamp=2.0 + k))
            wait_for(lambda: len(gravity) > k, 10)
        assert len(gravity) == 5
        assert commands == []
