"""Each node's parameters come from one table (ros/dynamics_parameters.py,
ros/centroidal_parameters.py, ros/sim_robot_parameters.py): the nodes declare exactly the table
with its ranges, rclpy itself refuses an out-of-range value, and README's tables and
config/robot_dynamics.yaml agree with it."""

import math
import re
from pathlib import Path

import pytest
import yaml
from test_launch_files import AUTOMATIC, parameter_lines

from robot_dynamics.models import ARM_URDF
from robot_dynamics.ros.centroidal_parameters import CENTROIDAL_PARAMETERS
from robot_dynamics.ros.dynamics_parameters import DYNAMICS_PARAMETERS
from robot_dynamics.ros.parameter_schema import ParameterSpec
from robot_dynamics.ros.sim_robot_parameters import SIM_ROBOT_PARAMETERS

ROOT = Path(__file__).resolve().parents[1]
TABLES = {
    'dynamics': DYNAMICS_PARAMETERS,
    'centroidal': CENTROIDAL_PARAMETERS,
    'sim_robot': SIM_ROBOT_PARAMETERS,
}
CONFIG_FILES = {'dynamics': 'robot_dynamics.yaml', 'centroidal': 'robot_dynamics.yaml'}

README_ROW = re.compile(r'^\| (?P<names>`[a-z_]+`(?:, `[a-z_]+`)*) \| (?P<default>[^|]+) \|')


def node_of(name: str):
    """The node ``name`` on the bundled arm (a description parameter: no listener process)."""
    from rclpy.parameter import Parameter

    from robot_dynamics.ros.centroidal_node import CentroidalNode
    from robot_dynamics.ros.dynamics_node import DynamicsNode
    from robot_dynamics.ros.sim_robot import SimRobot

    node_type = {'dynamics': DynamicsNode, 'centroidal': CentroidalNode, 'sim_robot': SimRobot}
    node_type = node_type[name]
    return node_type(
        name,
        namespace='/schema_check',
        parameter_overrides=[Parameter('robot_description', value=ARM_URDF.read_text())],
    )


def same_default(value, default) -> bool:
    if isinstance(default, list):
        return len(value) == len(default) and all(map(same_default, value, default))
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value == default
    return type(value) is type(default) and value == default


def expected_bounds(spec: ParameterSpec) -> tuple:
    """(from, to) of the rclpy range of ``spec``: its ends, an open one as its type's extreme."""
    unbounded = math.inf if isinstance(spec.default, float) else 2**63 - 1
    low = -unbounded if spec.low is None else spec.low
    return low, unbounded if spec.high is None else spec.high


def readme_rows(section: str) -> list:
    """(parameter names, default cell) of the parameter table in README's ``## section``."""
    text = (ROOT / 'README.md').read_text()
    body = text.split(f'## {section}', 1)[1].split('\n## ', 1)[0]
    rows, in_table = [], False
    for line in body.splitlines():
        if line.startswith('| parameter | default |'):
            in_table = True
        elif in_table and (match := README_ROW.match(line)):
            rows.append((re.findall(r'`([a-z_]+)`', match['names']), match['default'].strip()))
        elif in_table and not line.startswith('|'):
            in_table = False
    return rows


@pytest.mark.parametrize('node_name', sorted(TABLES))
def test_the_node_declares_exactly_its_table_with_descriptions_and_ranges(ros, node_name):
    table = {spec.name: spec for spec in TABLES[node_name]}
    node = node_of(node_name)
    try:
        assert set(node._parameters) - AUTOMATIC == set(table)
        for name, spec in table.items():
            descriptor = node.describe_parameter(name)
            assert descriptor.description.startswith(spec.description), name
            assert descriptor.read_only is not spec.runtime, name
            if name != 'robot_description':  # given, so that no listener process starts
                assert same_default(node.get_parameter(name).value, spec.default), name
            ranges = [*descriptor.floating_point_range, *descriptor.integer_range]
            if spec.low is None and spec.high is None:
                assert not ranges, name
                continue
            (bounds,) = ranges
            assert (bounds.from_value, bounds.to_value) == expected_bounds(spec), name
    finally:
        node.destroy_node()


def test_describe_shows_the_range_and_rclpy_refuses_a_value_outside_it(ros):
    """What ``ros2 param describe`` and ``ros2 param set`` call: the node's own services."""
    from rcl_interfaces.srv import DescribeParameters, SetParameters
    from rclpy.node import Node
    from rclpy.parameter import Parameter

    from robot_dynamics.ros.parameter_schema import NodeParameters

    node = node_of('dynamics')
    settable = Node('schema_settable', namespace='/schema_check')
    NodeParameters(
        settable, (ParameterSpec('gain', 1.0, 'a gain', '1/s', low=0.0, high=2.0, runtime=True),)
    )
    with ros(node, settable) as harness:
        (window, gain) = harness.call(
            DescribeParameters,
            '/schema_check/dynamics/describe_parameters',
            DescribeParameters.Request(names=['acceleration_window', 'observer_gain']),
        ).descriptors
        assert (window.integer_range[0].from_value, window.integer_range[0].to_value) == (2, 1000)
        assert window.read_only and 'samples' in window.description
        assert gain.floating_point_range[0].from_value == 0.0
        assert 'in (0, inf) 1/s' in gain.additional_constraints

        def set_value(service: str, name: str, value):
            request = SetParameters.Request(
                parameters=[Parameter(name, value=value).to_parameter_msg()]
            )
            return harness.call(SetParameters, service, request).results[0]

        refused = set_value('/schema_check/schema_settable/set_parameters', 'gain', 3.0)
        assert not refused.successful and 'out of range' in refused.reason  # rclpy's own words
        taken = set_value('/schema_check/schema_settable/set_parameters', 'gain', 1.5)
        assert taken.successful and settable.get_parameter('gain').value == 1.5
        read_only = set_value('/schema_check/dynamics/set_parameters', 'observer_gain', 60.0)
        assert not read_only.successful and 'read-only' in read_only.reason


@pytest.mark.parametrize('node_name', sorted(CONFIG_FILES))
def test_config_file_holds_every_parameter_of_the_table_with_its_default(node_name):
    """sim_robot's demo file differs from its defaults: test_launch_files checks it."""
    documented = parameter_lines(CONFIG_FILES[node_name])[node_name]
    table = {spec.name: spec for spec in TABLES[node_name]}
    assert set(documented) == set(table)
    for name, (commented, text, comment) in documented.items():
        assert comment, f'{node_name}.{name} has no comment'
        default = table[name].default
        if commented:  # a ROS 2 parameter file cannot hold an empty list
            assert text == '[]' and default == [], name
        else:
            assert same_default(yaml.safe_load(text), default), f'{node_name}.{name}: {text}'


@pytest.mark.parametrize(
    'section, node_name', [('dynamics_node', 'dynamics'), ('centroidal_node', 'centroidal')]
)
def test_every_readme_row_names_a_parameter_with_its_default_and_unit(section, node_name):
    table = {spec.name: spec for spec in TABLES[node_name]}
    rows = readme_rows(section)
    assert len(rows) >= 5, f'no parameter table in README section {section}'
    for names, cell in rows:
        match = re.fullmatch(r'`(?P<value>[^`]*)`(?: (?P<unit>\S+))?', cell)
        assert match, f'{names}: default cell {cell!r} is not `value` [unit]'
        for name in names:
            assert name in table, f'README names {name}, not a parameter of {node_name}'
            spec = table[name]
            assert same_default(yaml.safe_load(match['value'] or "''"), spec.default), name
            number = isinstance(spec.default, (int, float)) and not isinstance(spec.default, bool)
            if match['unit'] or (number and spec.unit):
                assert match['unit'] == spec.unit, f'{name}: README unit {match["unit"]!r}'


def started(name: str, cli: list, overrides: tuple = ()):
    """The node ``name`` on the bundled arm, started with ``--ros-args`` ``cli`` (parsed by rcl,
    as from the command line) and ``overrides``."""
    from rclpy.parameter import Parameter

    from robot_dynamics.ros.centroidal_node import CentroidalNode
    from robot_dynamics.ros.dynamics_node import DynamicsNode

    node_type = {'dynamics': DynamicsNode, 'centroidal': CentroidalNode}[name]
    given = [Parameter('robot_description', value=ARM_URDF.read_text()), *overrides]
    return node_type(
        name,
        namespace='/schema_check',
        cli_args=['--ros-args', *cli],
        parameter_overrides=given,
    )


@pytest.mark.parametrize('node_name', ['dynamics', 'centroidal'])
def test_an_empty_list_as_rcl_gives_it_is_the_empty_list(ros, node_name, capfd, tmp_path):
    """`-p "contact_frames:=[]"` and `contact_frames: []` in a parameter file reach the node
    untyped (None): the empty list, with no refusal and no error; a number list given empty is
    refused as the empty list it is."""
    file = tmp_path / 'params.yaml'
    file.write_text(f'/schema_check/{node_name}:\n  ros__parameters:\n    contact_frames: []\n')
    for cli in (['-p', 'contact_frames:=[]'], ['--params-file', str(file)]):
        node = started(node_name, cli)
        try:
            assert node.parameters['contact_frames'] == []
            assert list(node.get_parameter('contact_frames').value) == []
            assert node.parameters.refused == {}
        finally:
            node.destroy_node()
        assert 'contact_frames' not in capfd.readouterr().err
    node = started(node_name, ['-p', 'gravity:=[]'])
    try:
        assert node.parameters.refused['gravity'].startswith('[] is not 3 finite numbers')
    finally:
        node.destroy_node()


@pytest.mark.parametrize('node_name', ['dynamics', 'centroidal'])
def test_a_contact_frame_given_twice_is_taken_once_and_named(ros, node_name, capfd):
    """contact_frames [a, a, b]: the node uses [a, b] (the parameter then holds it), and the log
    and the refusals of the model status name the repeated frame."""
    node = started(node_name, ['-p', 'contact_frames:=[tool0, tool0, fr3_link7]'])
    try:
        assert node.parameters['contact_frames'] == ['tool0', 'fr3_link7']
        assert list(node.get_parameter('contact_frames').value) == ['tool0', 'fr3_link7']
        assert 'contact frame tool0 given twice' in node.parameters.refused['contact_frames']
    finally:
        node.destroy_node()
    assert 'contact frame tool0 given twice' in capfd.readouterr().err


@pytest.mark.parametrize('node_name', ['dynamics', 'centroidal'])
def test_an_empty_frame_name_is_refused_and_the_default_used(ros, node_name, capfd):
    """world_frame '' would stamp the outputs with an empty frame_id: refused by name, the
    default kept (sim_robot's frames: their table refuses '' the same way)."""
    for spec in SIM_ROBOT_PARAMETERS:
        if spec.name in ('world_frame', 'base_frame'):
            assert spec.problem('') == (None, 'is not a frame name')
    node = started(node_name, ['-p', "world_frame:=''"])
    try:
        assert node.parameters['world_frame'] == 'odom'
        assert 'is not a frame name' in node.parameters.refused['world_frame']
    finally:
        node.destroy_node()
    assert 'world_frame' in capfd.readouterr().err
