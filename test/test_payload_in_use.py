"""The payload in use: set on ~/set_payload, chosen among tool presets with `ros2 param set
active_tool`, refused when no rigid body has it; through the core and the real node, against the
gravity of the payload as a second model with the payload in its URDF-built inertias."""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest
from rclpy.parameter import Parameter
from ros_harness import wait_for
from test_dynamics_node import ARM_TEXT, joint_state, make_node, set_parameters

from robot_dynamics.core.dynamics import joint_space
from robot_dynamics.core.errors import PayloadError
from robot_dynamics.core.live.payload_in_use import (
    ToolsFileError,
    checked_payload,
    inertia_matrix,
    load_tools,
    save_tool,
)
from robot_dynamics.core.model.inertia import InertialParameters, box_inertia
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF

pytest.importorskip('rclpy')
from geometry_msgs.msg import InertiaStamped  # noqa: E402
from rcl_interfaces.srv import SetParametersAtomically  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from robot_dynamics.ros.topics import DESCRIPTION_QOS, LATCHED_QOS, SENSOR_QOS  # noqa: E402

LINK = 'fr3_link7'
POSE = np.array([0.2, -0.6, 0.3, -2.0, 0.4, 1.6, 0.5])
GRIPPER = InertialParameters(1.5, (0.01, -0.02, 0.08), box_inertia(1.5, (0.08, 0.06, 0.12)))
TOOLS = f"""tools:
  gripper:
    link: {LINK}
    mass: 1.5
    com: [0.01, -0.02, 0.08]
    inertia: {{ixx: {GRIPPER.inertia_com[0, 0]}, ixy: 0, ixz: 0, iyy: {GRIPPER.inertia_com[1, 1]},
               iyz: 0, izz: {GRIPPER.inertia_com[2, 2]}}}
  camera:
    link: {LINK}
    mass: 0.4
    com: [0, 0.05, 0.02]
"""


def gravity_with(payload=None) -> np.ndarray:
    robot = RobotModel.from_urdf_file(ARM_URDF)
    if payload is not None:
        robot.attach_payload(LINK, payload)
    return joint_space.gravity_torques(robot, robot.configuration(POSE))


# ---------------------------------------------------------------------- core
@pytest.mark.parametrize(
    'mass, inertia, words',
    [
        (-0.1, np.eye(3) * 1e-3, 'mass'),
        (1.0, np.diag([1e-3, 1e-4, 1e-4]), 'triangle'),
        (1.0, np.diag([1e-3, -1e-3, 1e-3]), 'positive semi-definite'),
        (float('nan'), np.eye(3), 'mass'),
    ],
)
def test_a_payload_no_rigid_body_can_have_is_refused_with_the_reason(mass, inertia, words):
    with pytest.raises(PayloadError, match=words):
        checked_payload(mass, (0, 0, 0), inertia)


@pytest.mark.parametrize(
    'mass, com, words',
    [
        (1e30, (0, 0, 0), r'payload mass must be a number in \[0, 10000\] kg'),
        (1.0, (0, 0, 1e6), 'is over 10 m from its link'),
    ],
)
def test_a_payload_no_robot_carries_is_refused_with_the_reason(mass, com, words):
    with pytest.raises(PayloadError, match=words):
        checked_payload(mass, com, np.eye(3) * 1e-3)


def test_a_payload_on_a_joint_frame_is_refused_naming_the_links():
    robot = RobotModel.from_urdf_file(ARM_URDF)
    words = '"fr3_joint3" is a joint of model "fr3_arm", not a link'
    with pytest.raises(PayloadError, match=words):
        robot.attach_payload('fr3_joint3', GRIPPER)
    assert robot.payload is None


def test_tools_file_round_trip_and_bad_presets_name_file_tool_and_field(tmp_path):
    path = tmp_path / 'tools.yaml'
    path.write_text(TOOLS)
    tools = load_tools(str(path))
    assert sorted(tools) == ['camera', 'gripper']
    np.testing.assert_allclose(tools['gripper'].parameters.inertia_com, GRIPPER.inertia_com)
    identified = InertialParameters(0.8, (0, 0, 0.03), inertia_matrix(1e-3, 0, 0, 1e-3, 0, 5e-4))
    save_tool(str(path), 'identified_box', LINK, identified)
    again = load_tools(str(path))
    assert sorted(again) == ['camera', 'gripper', 'identified_box']
    np.testing.assert_allclose(again['identified_box'].parameters.com, identified.com)
    bad = tmp_path / 'bad.yaml'
    bad.write_text(f'tools:\n  heavy:\n    link: {LINK}\n    mass: -2\n')
    with pytest.raises(ToolsFileError, match=r'bad\.yaml.*heavy.*mass'):
        load_tools(str(bad))


@pytest.mark.parametrize(
    'entry, words',
    [
        ('mass: 1.5, centre_of_mass: [0, 0, 0.1]', r"unknown field\(s\) \['centre_of_mass'\]"),
        ('mass: 1.5, inertia: {Ixx: 0.5}', 'inertia must be a mapping of'),
        ('mass: 1.5, inertia: 0', 'inertia must be a mapping of'),
        ('mass: true', 'mass must be a finite number, got True'),
        ('mass: 1.0, com: "123"', "com must be 3 finite numbers, got '123'"),
        ('com: [0, 0, 0.1]', r'mass \[kg\] is missing'),
        ('mass: 1.0, ft_bias: [1, 2]', 'ft_bias must be 6 finite numbers'),
    ],
)
def test_a_tool_with_a_misspelled_or_mistyped_field_is_refused_by_name(tmp_path, entry, words):
    path = tmp_path / 'tools.yaml'
    path.write_text(f'tools:\n  gripper: {{link: {LINK}, {entry}}}\n')
    with pytest.raises(ToolsFileError, match=f'tool gripper: {words}'):
        load_tools(str(path))


# ---------------------------------------------------------------------- the real node
_SAMPLES = itertools.count()  # every joint state of the module a new stamp, 1 ms apart


def _feed(harness, node, count: int, efforts=()) -> None:
    feed = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
    assert wait_for(lambda: node.robot is not None and feed.get_subscription_count(), 30)
    names = node.robot.joint_names
    for _ in range(count):
        stamp = 10.0 + 0.001 * next(_SAMPLES)
        feed.publish(joint_state(names, POSE, np.zeros(7), efforts, stamp=stamp))
        wait_for(lambda: False, 0.002)


def _settled(outputs: list, expected: np.ndarray, timeout: float = 20.0) -> bool:
    return wait_for(
        lambda: bool(outputs) and np.allclose(outputs[-1].effort, expected, atol=1e-9), timeout
    )


def test_tool_switch_and_set_payload_reach_every_output_from_the_next_sample(ros, tmp_path):
    tools = tmp_path / 'tools.yaml'
    tools.write_text(TOOLS)
    node = make_node(
        robot_description=ARM_TEXT,
        tools_file=str(tools),
        acceleration_mode='zero',
        external_torque_method='inverse_dynamics',
    )
    name = node.get_name()
    loaded = gravity_with(GRIPPER)
    with ros(node) as harness:
        gravity = harness.collect(JointState, f'/{name}/gravity_torques', SENSOR_QOS)
        external = harness.collect(JointState, f'/{name}/external_torques', SENSOR_QOS)
        sources = harness.collect(String, f'/{name}/payload_source', LATCHED_QOS)
        payloads = harness.collect(InertiaStamped, f'/{name}/payload', LATCHED_QOS)
        assert wait_for(lambda: bool(sources), 20) and sources[0].data == 'none'  # from the start
        _feed(harness, node, 20, loaded)  # the robot carries the gripper
        assert _settled(gravity, gravity_with())
        assert np.max(np.abs(external[-1].effort)) > 1.0  # the gripper's weight, unexplained

        (refused,) = set_parameters(harness, node, active_tool='vacuum_cup')
        assert not refused.successful and 'camera' in refused.reason and 'gripper' in refused.reason
        (result,) = set_parameters(harness, node, active_tool='gripper')
        assert result.successful, result.reason
        assert wait_for(lambda: bool(sources) and sources[-1].data.startswith('tool gripper'), 20)
        _feed(harness, node, 20, loaded)
        assert _settled(gravity, loaded)
        assert np.max(np.abs(external[-1].effort)) < 1e-9  # at rest, the right tool: nothing left
        assert payloads[-1].header.frame_id == LINK and payloads[-1].inertia.m == 1.5

        setter = harness.probe.create_publisher(InertiaStamped, f'/{name}/set_payload', 10)
        assert wait_for(lambda: setter.get_subscription_count() >= 1, 20)
        bad = InertiaStamped()
        bad.header.frame_id, bad.inertia.m = LINK, -3.0
        setter.publish(bad)
        camera = InertiaStamped()
        camera.header.frame_id = LINK
        camera.inertia.m, camera.inertia.com.y, camera.inertia.com.z = 0.4, 0.05, 0.02
        setter.publish(camera)
        assert wait_for(lambda: sources[-1].data.startswith('set: 0.4 kg'), 20), sources[-1]
        _feed(harness, node, 20)
        assert _settled(gravity, gravity_with(InertialParameters.point_mass(0.4, (0, 0.05, 0.02))))
        removed = InertiaStamped()
        removed.header.frame_id = LINK
        setter.publish(removed)
        assert wait_for(lambda: sources[-1].data == 'none', 20)
        assert wait_for(lambda: payloads[-1].inertia.m == 0.0, 20)  # a driver learns it is gone
        _feed(harness, node, 20)
        assert _settled(gravity, gravity_with())


def test_a_set_payload_elsewhere_keeps_the_tool_and_one_on_a_link_unties_active_tool(ros, tmp_path):
    tools = tmp_path / 'tools.yaml'
    tools.write_text(TOOLS)
    node = make_node(robot_description=ARM_TEXT, tools_file=str(tools), active_tool='gripper')
    name = node.get_name()
    with ros(node) as harness:
        gravity = harness.collect(JointState, f'/{name}/gravity_torques', SENSOR_QOS)
        sources = harness.collect(String, f'/{name}/payload_source', LATCHED_QOS)
        _feed(harness, node, 10)
        assert _settled(gravity, gravity_with(GRIPPER))
        setter = harness.probe.create_publisher(InertiaStamped, f'/{name}/set_payload', 10)
        assert wait_for(lambda: setter.get_subscription_count() >= 1, 20)
        elsewhere = InertiaStamped()
        elsewhere.header.frame_id, elsewhere.inertia.m = 'camera_mount_9', 1.0
        setter.publish(elsewhere)
        wait_for(lambda: False, 1.0)
        _feed(harness, node, 10)
        assert _settled(gravity, gravity_with(GRIPPER))
        assert sources[-1].data.startswith('tool gripper')
        camera = InertiaStamped()  # no tool: active_tool follows the payload in use
        camera.header.frame_id, camera.inertia.m = LINK, 0.4
        setter.publish(camera)
        assert wait_for(lambda: node.get_parameter('active_tool').value == '', 20)
        _feed(harness, node, 10)
        assert _settled(gravity, gravity_with(InertialParameters.point_mass(0.4, (0, 0, 0))))


ELSEWHERE_TOOLS = f"""{TOOLS}  ghost:
    link: no_such_link
    mass: 1.0
  base_mount:
    link: fr3_link0
    mass: 1.0
"""


def test_active_tool_reads_what_is_in_use_whatever_was_asked(ros, tmp_path):
    """A tool on a link the model lacks, or on one no joint moves, is refused by `ros2 param
    set` (the parameter keeps its value); one asked at launch that cannot be used reads ''; a
    request that also holds a refused parameter changes nothing at all."""
    tools = tmp_path / 'tools.yaml'
    tools.write_text(ELSEWHERE_TOOLS)
    node = make_node(robot_description=ARM_TEXT, tools_file=str(tools), active_tool='ghost')
    name = node.get_name()
    with ros(node) as harness:
        sources = harness.collect(String, f'/{name}/payload_source', LATCHED_QOS)
        assert wait_for(lambda: node.get_parameter('active_tool').value == '', 20)
        assert wait_for(lambda: node.robot is not None, 20)
        assert wait_for(lambda: bool(sources), 20)  # the latched 'none' of the start
        for tool, words in (
            ('ghost', 'link of tool \'ghost\' "no_such_link" is not a frame of model "fr3_arm"'),
            ('base_mount', 'link of tool \'base_mount\' "fr3_link0" is fixed to the world'),
        ):
            (refused,) = set_parameters(harness, node, active_tool=tool)
            assert not refused.successful and words in refused.reason, refused.reason
            assert node.get_parameter('active_tool').value == ''
        before = len(sources)
        request = SetParametersAtomically.Request(
            parameters=[
                Parameter('active_tool', value='gripper').to_parameter_msg(),
                Parameter('payload_mode', value='bogus').to_parameter_msg(),
            ]
        )
        service = f'/{name}/set_parameters_atomically'
        refused = harness.call(SetParametersAtomically, service, request, timeout=10).result
        assert not refused.successful and 'payload_mode' in refused.reason, refused.reason
        wait_for(lambda: False, 1.0)
        assert node.get_parameter('active_tool').value == '' and len(sources) == before


def test_a_tools_file_that_could_not_be_read_is_named_when_a_tool_is_refused(ros, tmp_path):
    bad = tmp_path / 'bad_tools.yaml'
    bad.write_text(f'tools:\n  gripper:\n    link: {LINK}\n    mass: -2\n')
    node = make_node(robot_description=ARM_TEXT, tools_file=str(bad))
    with ros(node):
        assert wait_for(lambda: node.robot is not None, 20)
        (refused,) = node.set_parameters([Parameter('active_tool', value='gripper')])
    assert not refused.successful
    assert 'tools: [] (tools_file not loaded:' in refused.reason, refused.reason
    assert 'bad_tools.yaml' in refused.reason and 'mass' in refused.reason, refused.reason


def test_a_tool_switch_under_way_when_the_node_is_destroyed_ends_quietly(
    ros, tmp_path, monkeypatch
):
    """A tool selection builds its model on a thread of its own; a node destroyed meanwhile
    lets it finish and publishes nothing after: no exception in any thread (a publisher used
    after its destruction raises InvalidHandle)."""
    tools = tmp_path / 'tools.yaml'
    tools.write_text(TOOLS)
    failures = []
    monkeypatch.setattr(threading, 'excepthook', failures.append)
    for tool in ('gripper', 'camera', 'gripper', '', 'camera') * 6:
        node = make_node(robot_description=ARM_TEXT, tools_file=str(tools))
        with ros(node):
            assert wait_for(lambda: node.robot is not None, 20)
            (result,) = node.set_parameters([Parameter('active_tool', value=tool)])
            assert result.successful, result.reason
        threads = [t for t in threading.enumerate() if t.name.endswith('(_change)')]
        for thread in threads:
            thread.join(10.0)
    assert not failures, [f'{f.exc_type.__name__}: {f.exc_value}' for f in failures]


def test_a_tool_asked_without_a_tools_file_says_the_file_is_missing(ros):
    node = make_node(robot_description=ARM_TEXT)
    with ros(node) as harness:
        (refused,) = set_parameters(harness, node, active_tool='gripper')
    assert not refused.successful
    assert "active_tool 'gripper': no tools_file is set (it is read at start" in refused.reason


def test_the_last_tool_asked_is_the_one_in_use_however_fast_the_switches_come(ros, tmp_path):
    """Twenty switches 1 ms apart, each built on a thread of its own: the payload in use is the
    last one asked, whatever order the threads run in."""
    tools = tmp_path / 'tools.yaml'
    tools.write_text(TOOLS)
    node = make_node(robot_description=ARM_TEXT, tools_file=str(tools))
    name = node.get_name()
    with ros(node) as harness:
        gravity = harness.collect(JointState, f'/{name}/gravity_torques', SENSOR_QOS)
        _feed(harness, node, 5)
        for k in range(20):
            node.set_parameters([Parameter('active_tool', value=('camera', 'gripper')[k % 2])])
            wait_for(lambda: False, 0.001)
        wait_for(lambda: False, 1.0)
        _feed(harness, node, 10)
        assert _settled(gravity, gravity_with(GRIPPER))
        assert node.get_parameter('active_tool').value == 'gripper'


def test_a_tool_chosen_before_the_model_is_used_once_it_loads(ros, tmp_path):
    tools = tmp_path / 'tools.yaml'
    tools.write_text(TOOLS)
    node = make_node(tools_file=str(tools))  # the description comes later, on its topic
    name = node.get_name()
    with ros(node) as harness:
        assert node.set_parameters([Parameter('active_tool', value='gripper')])[0].successful
        gravity = harness.collect(JointState, f'/{name}/gravity_torques', SENSOR_QOS)
        description = harness.probe.create_publisher(String, 'robot_description', DESCRIPTION_QOS)
        description.publish(String(data=ARM_TEXT))
        _feed(harness, node, 10)
        assert _settled(gravity, gravity_with(GRIPPER))
