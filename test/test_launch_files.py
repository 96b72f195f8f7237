"""Launch and parameter files are consistent with the package, checked without `ros2 launch`
(so also where the launch tools are absent; test_ros2_launch.py runs them): the launch files
and setup.py are parsed with `ast`, and the parameter files are compared with the parameters
the real nodes declare."""

import ast
import glob
import os
import re
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
import yaml

from robot_dynamics.ros.entry_points import NODE_MODULES

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = 'robot_dynamics'
LAUNCH_FILES = sorted((ROOT / 'launch').glob('*.launch.py'))
PARAMETER_FILES = {
    'robot_dynamics.yaml': ('dynamics', 'centroidal'),
    'sim_robot.yaml': ('sim_robot',),
}
"""File → the names of the nodes it configures; each node's section is keyed ``/**/<name>``."""
AUTOMATIC = {'use_sim_time', 'start_type_description_service'}
"""Declared by rclpy itself for every node; use_sim_time is set by the launch argument."""
KEY_LINE = re.compile(
    r'^ {4}(?P<commented># )?(?P<name>[a-z_]+): (?P<value>[^#]*?)\s*(?:#(?P<comment>.*))?$'
)


def section(name: str) -> str:
    """The key of node ``name``'s section: rcl's wildcard for that node name in any namespace
    (a bare ``name:`` would only match the node in the root namespace)."""
    return f'/**/{name}'


def node_sections(file_name: str) -> dict:
    """node name → its ``ros__parameters`` in the shipped parameter file ``file_name``."""
    content = yaml.safe_load((ROOT / 'config' / file_name).read_text())
    assert set(content) == {section(name) for name in PARAMETER_FILES[file_name]}, sorted(content)
    return {name: content[section(name)]['ros__parameters'] for name in PARAMETER_FILES[file_name]}


def nodes_configured_by(file_name: str, namespace: str):
    """(node name, its values, the node built with them in ``namespace``) for each section of the
    shipped parameter file ``file_name``; each node is destroyed when the caller moves on."""
    from robot_dynamics.ros.runner import parameter_overrides

    for node_name, values in node_sections(file_name).items():
        node = node_class(node_name)(
            node_name, namespace=namespace, parameter_overrides=parameter_overrides(values)
        )
        try:
            yield node_name, values, node
        finally:
            node.destroy_node()


def node_class(name: str):
    from robot_dynamics.ros.centroidal_node import CentroidalNode
    from robot_dynamics.ros.dynamics_node import DynamicsNode
    from robot_dynamics.ros.sim_robot import SimRobot

    return {'dynamics': DynamicsNode, 'centroidal': CentroidalNode, 'sim_robot': SimRobot}[name]


def launch_tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def calls(tree: ast.AST, function: str) -> list:
    """Calls of ``function`` (a bare name or an attribute's last part) with their keywords."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = (
                node.func.id
                if isinstance(node.func, ast.Name)
                else getattr(node.func, 'attr', None)
            )
            if name == function:
                found.append(node)
    return found


def keyword(call: ast.Call, name: str, constants: dict = None):
    """The value of keyword ``name``: a literal, a module constant named in ``constants``, else the
    ast node."""
    for entry in call.keywords:
        if entry.arg == name:
            if isinstance(entry.value, ast.Constant):
                return entry.value.value
            if isinstance(entry.value, ast.Name) and entry.value.id in (constants or {}):
                return constants[entry.value.id]
            return entry.value
    return None


def module_constants(tree: ast.Module) -> dict:
    """NAME = 'literal' assignments at module level (e.g. PACKAGE)."""
    return {
        target.id: statement.value.value
        for statement in tree.body
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant)
        for target in statement.targets
        if isinstance(target, ast.Name)
    }


def setup_call() -> ast.Call:
    return calls(ast.parse((ROOT / 'setup.py').read_text()), 'setup')[0]


def console_scripts() -> dict:
    """name → 'module:function' from setup.py's entry_points."""
    entry_points = ast.literal_eval(keyword(setup_call(), 'entry_points'))
    return dict(line.replace(' ', '').split('=', 1) for line in entry_points['console_scripts'])


def evaluate(node: ast.AST):
    """The few expression forms setup.py's data_files use: strings, PACKAGE, +, lists, tuples,
    glob()."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id == 'PACKAGE':
        return PACKAGE
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return evaluate(node.left) + evaluate(node.right)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [evaluate(element) for element in node.elts]
    if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'glob':
        return sorted(
            str(Path(p).relative_to(ROOT)) for p in glob.glob(str(ROOT / evaluate(node.args[0])))
        )
    raise AssertionError(f'setup.py data_files: cannot evaluate {ast.dump(node)}')


def installed_files() -> set:
    """Installed paths ('share/robot_dynamics/config/robot_dynamics.yaml', ...) from data_files."""
    installed = set()
    for destination, files in evaluate(keyword(setup_call(), 'data_files')):
        installed.update(f'{destination}/{Path(name).name}' for name in files)
    return installed


def share_references(tree: ast.AST) -> list:
    """'dir/file' for every os.path.join(share..., 'dir', 'file') in a launch file."""
    references = []
    for call in calls(tree, 'join'):
        parts = [arg.value for arg in call.args[1:] if isinstance(arg, ast.Constant)]
        if len(parts) == len(call.args) - 1 == 2:
            references.append('/'.join(parts))
    return references


def launched_nodes() -> list:
    """(launch file, package, executable, node name) of every launch_ros Node."""
    nodes = []
    for path in LAUNCH_FILES:
        tree = launch_tree(path)
        constants = module_constants(tree)
        for call in calls(tree, 'Node'):
            nodes.append(
                (
                    path.name,
                    *(keyword(call, key, constants) for key in ('package', 'executable', 'name')),
                )
            )
    return nodes


def same_value(actual, expected) -> bool:
    """A node's parameter value equals a YAML value (same type; arrays compared as lists)."""
    if isinstance(expected, list):
        return [type(x) for x in actual] == [type(x) for x in expected] and list(actual) == expected
    return type(actual) is type(expected) and actual == expected


def parameter_lines(name: str) -> dict:
    """node → {parameter: (commented, value text, comment)} from the raw parameter file text."""
    sections, current = {}, None
    for line in (ROOT / 'config' / name).read_text().splitlines():
        if re.match(r'^/\*\*/[a-z_]+:\s*$', line):
            current = sections.setdefault(line.rstrip(':').strip().removeprefix('/**/'), {})
            continue
        match = KEY_LINE.match(line)
        if match and current is not None:
            current[match['name']] = (
                bool(match['commented']),
                match['value'],
                (match['comment'] or '').strip(),
            )
    return sections


# ---------------------------------------------------------------------- launch files
def test_both_launch_files_exist_and_parse():
    assert {path.name for path in LAUNCH_FILES} >= {'robot_dynamics.launch.py', 'demo.launch.py'}
    for path in LAUNCH_FILES:
        assert calls(launch_tree(path), 'LaunchDescription'), (
            f'{path.name} builds no LaunchDescription'
        )


def test_every_executable_is_a_console_script_or_an_exec_dependency():
    scripts = console_scripts()
    exec_depends = {
        element.text
        for element in ElementTree.parse(ROOT / 'package.xml').getroot()
        if element.tag == 'exec_depend'
    }
    nodes = launched_nodes()
    assert {(package, executable) for _, package, executable, _ in nodes} >= {
        (PACKAGE, 'dynamics_node'),
        (PACKAGE, 'centroidal_node'),
        (PACKAGE, 'sim_robot'),
        ('rviz2', 'rviz2'),
    }
    for launch_file, package, executable, _ in nodes:
        if package == PACKAGE:
            assert executable in scripts, (
                f'{launch_file}: {executable} is not a console script in setup.py'
            )
        else:
            assert package in exec_depends, (
                f'{launch_file}: package {package} is not an exec_depend in package.xml'
            )


def test_every_imported_ros_package_is_an_exec_dependency():
    """rcl_interfaces (ros/parameter_schema.py) and builtin_interfaces (ros/sim_robot.py,
    commands/excitation.py) were imported but not declared, so rosdep would not install them."""
    exec_depends = {
        element.text
        for element in ElementTree.parse(ROOT / 'package.xml').getroot()
        if element.tag == 'exec_depend'
    }
    imported = set()
    for path in (ROOT / PACKAGE).rglob('*.py'):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.module and not node.level
                else []
            )
            imported.update(name.split('.')[0] for name in names)
    ros = {
        name for name in imported if re.search(r'_(msgs|srvs|interfaces)$', name) or name == 'rclpy'
    }
    assert ros >= {'rclpy', 'rcl_interfaces', 'builtin_interfaces', 'sensor_msgs'}, sorted(ros)
    assert not ros - exec_depends, (
        f'imported but not an exec_depend of package.xml: {sorted(ros - exec_depends)}'
    )


def test_every_console_script_entry_point_is_callable():
    import importlib

    for name, target in console_scripts().items():
        module, function = target.split(':')
        assert callable(getattr(importlib.import_module(module), function)), f'{name} → {target}'


def test_every_referenced_file_is_installed_by_data_files():
    installed = installed_files()
    references = [
        reference for path in LAUNCH_FILES for reference in share_references(launch_tree(path))
    ]
    assert set(references) >= {
        'config/robot_dynamics.yaml',
        'config/sim_robot.yaml',
        'config/robot_dynamics.rviz',
        'launch/robot_dynamics.launch.py',
        'models/fr3_arm.urdf',
    }
    for reference in references:
        assert f'share/{PACKAGE}/{reference}' in installed, (
            f'{reference} is not installed by setup.py data_files'
        )


def test_robot_launch_offers_the_real_robot_arguments():
    tree = launch_tree(ROOT / 'launch' / 'robot_dynamics.launch.py')
    arguments = {call.args[0].value for call in calls(tree, 'DeclareLaunchArgument')}
    assert arguments >= {'namespace', 'config_file', 'use_sim_time', 'urdf_file'}


def test_launched_node_names_match_parameter_file_sections_and_modules():
    scripts = console_scripts()
    sections = {node for nodes in PARAMETER_FILES.values() for node in nodes}
    ours = [
        (executable, name)
        for _, package, executable, name in launched_nodes()
        if package == PACKAGE
    ]
    assert {name for _, name in ours} == sections
    for executable, name in ours:
        assert scripts[executable] == f'robot_dynamics.ros.entry_points:{executable}'
        assert NODE_MODULES[executable] == node_class(name).__module__


# ---------------------------------------------------------------------- parameter files
@pytest.mark.parametrize('file_name', sorted(PARAMETER_FILES))
def test_every_parameter_in_the_file_is_declared_by_its_node_with_that_type(ros, file_name):
    for node_name, values, node in nodes_configured_by(file_name, '/launch_check'):
        undeclared = sorted(name for name in values if not node.has_parameter(name))
        assert not undeclared, f'{file_name}: {node_name} does not declare {undeclared}'
        for parameter in node.get_parameters(list(values)):
            assert same_value(parameter.value, values[parameter.name]), (
                f'{node_name}.{parameter.name}'
            )


@pytest.mark.parametrize('file_name', sorted(PARAMETER_FILES))
def test_every_declared_parameter_has_a_documented_default_in_the_file(ros, file_name):
    lines = parameter_lines(file_name)
    for node_name in PARAMETER_FILES[file_name]:
        node = node_class(node_name)(node_name, namespace='/launch_defaults')
        try:
            documented = lines[node_name]
            for name in sorted(set(node._parameters) - AUTOMATIC):
                assert name in documented, f'{file_name}: {node_name} parameter {name} is missing'
                commented, text, comment = documented[name]
                assert comment, f'{file_name}: {node_name}.{name} has no comment'
                default = node.get_parameter(name).value
                if commented:  # a ROS 2 parameter file cannot hold an empty list
                    assert text == '[]' and len(default) == 0, (
                        f'{name} is commented out but not an empty list'
                    )
                elif '(demo' not in comment:
                    value = yaml.safe_load(text)
                    assert same_value(default, value), (
                        f'{file_name}: {node_name}.{name} is {value!r}, default {default!r}'
                    )
        finally:
            node.destroy_node()


def test_parameter_files_hold_no_empty_list():
    """rcl's YAML parser rejects `[]` (no element type): such defaults must stay commented out."""
    for file_name in PARAMETER_FILES:
        for node_name, values in node_sections(file_name).items():
            empty = [name for name, value in values.items() if value == []]
            assert not empty, f'{file_name}: {node_name} has empty lists {empty}'


# ---------------------------------------------------------------------- the in-process runner reads
# the same files
def runner_node(name: str, namespace: str, params_file: Path, overrides: dict = None):
    """A plain rclpy node given ``params_file`` and ``overrides`` as the in-process runner gives
    them to its nodes, declaring every parameter it is given."""
    from rclpy.node import Node

    from robot_dynamics.ros.runner import parameter_overrides, params_file_arguments

    return Node(
        name,
        namespace=namespace,
        cli_args=params_file_arguments(params_file),
        parameter_overrides=parameter_overrides(overrides or {}),
        automatically_declare_parameters_from_overrides=True,
    )


def given_parameters(node) -> dict:
    """Every parameter ``node`` was given (rclpy's own ones left out); the node is destroyed."""
    try:
        return {name: node.get_parameter(name).value for name in set(node._parameters) - AUTOMATIC}
    finally:
        node.destroy_node()


def test_runner_reads_a_node_section_over_the_wildcard_section_and_its_overrides_last(
    ros, tmp_path
):
    from robot_dynamics.ros.runner import config_path

    path = tmp_path / 'parameters.yaml'
    path.write_text(
        '/**:\n  ros__parameters:\n    gravity: [0.0, 0.0, -1.62]\n    root_joint: '
        'floating\ndynamics:\n  ros__parameters:\n    root_joint: fixed\n'
    )
    assert given_parameters(runner_node('dynamics', '/', path)) == {
        'gravity': [0.0, 0.0, -1.62],
        'root_joint': 'fixed',
    }
    assert given_parameters(runner_node('centroidal', '/', path)) == {
        'gravity': [0.0, 0.0, -1.62],
        'root_joint': 'floating',
    }
    overridden = runner_node('dynamics', '/', path, {'root_joint': 'floating', 'max_joints': 7})
    assert given_parameters(overridden) == {
        'gravity': [0.0, 0.0, -1.62],
        'root_joint': 'floating',
        'max_joints': 7,
    }
    shipped = node_sections('robot_dynamics.yaml')
    for namespace in ('/', '/arm', '/robot/left_arm'):
        given = given_parameters(
            runner_node('dynamics', namespace, config_path('robot_dynamics.yaml'))
        )
        assert set(given) == set(shipped['dynamics']), namespace
        for name, value in shipped['dynamics'].items():
            assert same_value(given[name], value), f'{namespace}/dynamics.{name}'


def file_node(name: str, namespace: str, params_file: Path, node_type=None):
    """A real rclpy node started as `ros2 run ... --ros-args --params-file FILE -r __ns:=NS
    -r __node:=NAME` starts it: ``node_type`` (default a plain Node declaring every parameter
    it is given)."""
    from rclpy.node import Node

    arguments = [
        '--ros-args',
        '--params-file',
        str(params_file),
        '-r',
        f'__ns:={namespace}',
        '-r',
        f'__node:={name}',
    ]
    if node_type is None:
        return Node(
            'unnamed', cli_args=arguments, automatically_declare_parameters_from_overrides=True
        )
    return node_type(cli_args=arguments)


NAMESPACES = ('/', '/arm', '/robot/left_arm')


@pytest.mark.parametrize('file_name', sorted(PARAMETER_FILES))
def test_rcl_gives_every_parameter_of_the_file_to_the_node_in_any_namespace(ros, file_name):
    """The reported bug: keyed `dynamics:`, the file reached /dynamics but /arm/dynamics
    (`robot_dynamics.launch.py namespace:=arm`) silently ran on its defaults."""
    from robot_dynamics.ros.runner import shipped_parameters

    for node_name, values in node_sections(file_name).items():
        assert shipped_parameters(file_name, node_name) == values
        for namespace in NAMESPACES:
            node = file_node(node_name, namespace, ROOT / 'config' / file_name)
            try:
                given = {
                    name: node.get_parameter(name).value
                    for name in set(node._parameters) - AUTOMATIC
                }
            finally:
                node.destroy_node()
            assert set(given) == set(values), f'{namespace}/{node_name}'
            for name, value in values.items():
                assert same_value(given[name], value), f'{namespace}/{node_name}.{name}'


def test_a_namespaced_dynamics_node_takes_a_changed_value_from_a_copy_of_the_shipped_file(
    ros, tmp_path
):
    from robot_dynamics.ros.dynamics_node import DynamicsNode

    text = (ROOT / 'config' / 'robot_dynamics.yaml').read_text()
    assert text.count('torque_warn_ratio: 0.8 ') == 1
    copy = tmp_path / 'my_robot_dynamics.yaml'
    copy.write_text(text.replace('torque_warn_ratio: 0.8 ', 'torque_warn_ratio: 0.5 '))
    for namespace in ('/', '/arm'):
        node = file_node('dynamics', namespace, copy, DynamicsNode)
        try:
            assert node.get_fully_qualified_name() == f'{namespace.rstrip("/")}/dynamics'
            assert node.get_parameter('torque_warn_ratio').value == 0.5, namespace
        finally:
            node.destroy_node()


WILDCARD_FILE = """\
/**:
  ros__parameters: {a: 1, b: 1, c: 1, d: 1, e: 1}
/**/dynamics:
  ros__parameters: {b: 2, c: 2}
dynamics:
  ros__parameters: {c: 3}
/*/dynamics:
  ros__parameters: {d: 4}
/arm/dynamics:
  ros__parameters: {e: 5}
/**/centroidal:
  ros__parameters: {a: 6}
/**/*:
  ros__parameters: {f: 7}
"""


def test_runner_matches_sections_as_rcl_does(ros, tmp_path):
    """Wildcards (`/*` one token, `/**` any number), bare names (root namespace only) and file
    order (a later matching section wins) give the runner what rcl gives a real node."""
    path = tmp_path / 'wildcards.yaml'
    path.write_text(WILDCARD_FILE)
    expected = {
        '/': {'a': 1, 'b': 2, 'c': 3, 'd': 1, 'e': 1, 'f': 7},
        '/arm': {'a': 1, 'b': 2, 'c': 2, 'd': 4, 'e': 5, 'f': 7},
        '/robot/left_arm': {'a': 1, 'b': 2, 'c': 2, 'd': 1, 'e': 1, 'f': 7},
    }
    for namespace in NAMESPACES:
        node = file_node('dynamics', namespace, path)
        try:
            given = {
                name: node.get_parameter(name).value for name in set(node._parameters) - AUTOMATIC
            }
        finally:
            node.destroy_node()
        assert given == expected[namespace], namespace
        assert given_parameters(runner_node('dynamics', namespace, path)) == expected[namespace]


def test_runner_names_an_unusable_parameter_file(ros, tmp_path):
    from robot_dynamics.ros.runner import ConfigError, config_path, params_file_arguments

    path = tmp_path / 'list.yaml'
    path.write_text('- dynamics\n')
    with pytest.raises(ConfigError, match='list.yaml is not a mapping of node names'):
        params_file_arguments(path)
    with pytest.raises(ConfigError, match='cannot read parameter file .*missing.yaml'):
        params_file_arguments(tmp_path / 'missing.yaml')
    latin1 = tmp_path / 'latin1.yaml'
    latin1.write_bytes('dynamics:  # réglé\n'.encode('latin-1'))
    with pytest.raises(ConfigError, match="cannot read parameter file .*latin1.yaml: 'utf-8'"):
        params_file_arguments(latin1)
    path.write_text('dynamics:\n  ros__parameters: [1, 2]\n')  # rcl's parser refuses it
    with pytest.raises(RuntimeError, match="params file: '--params-file .*list.yaml'"):
        runner_node('dynamics', '/', path)
    with pytest.raises(ConfigError, match='no_such.yaml'):
        config_path('no_such.yaml')


RUNTIME = {
    'dynamics': {
        'payload_link',
        'payload_mode',
        'apply_identified_payload',
        'active_tool',
        'save_identified_payload_as',
        'contact_profile',
        'report_directory',
        'baseline_file',
        'mesh_package_paths',
        'mesh_allowed_roots',
    }
}
"""Parameters read at each use (a change is checked and taken); every other one is read once."""


@pytest.mark.parametrize('file_name', sorted(PARAMETER_FILES))
def test_parameters_from_the_file_are_taken_then_read_only_except_the_runtime_ones(ros, file_name):
    for node_name, _, node in nodes_configured_by(file_name, '/read_only_check'):
        for name in sorted(set(node._parameters) - AUTOMATIC):
            runtime = name in RUNTIME.get(node_name, set())
            assert node.describe_parameter(name).read_only is not runtime, f'{node_name}.{name}'
            if not runtime:  # set_parameters is refused with the reason, not accepted and ignored
                (result,) = node.set_parameters([node.get_parameter(name)])
                assert not result.successful and 'read-only' in result.reason


def test_a_launched_dynamics_node_takes_its_name_once_and_keeps_its_service_names(ros):
    """Started as launch starts it (a global ``-r __node:=dynamics``), the node's service
    companion must not take that name too: each name appears once in the graph, and the
    services are still ``<namespace>/dynamics/...``."""
    import signal

    from ros_harness import wait_for
    from test_shutdown import killed_on_failure, start_node

    namespace = f'/name_check_{os.getpid()}'
    with ros() as harness:
        process = start_node('dynamics_node', 'dynamics', namespace=namespace)
        with killed_on_failure(process):
            services = {
                f'{namespace}/dynamics/{name}'
                for name in (
                    'identify_payload',
                    'validate_inertia',
                    'clear_payload_buffer',
                    'record_baseline',
                )
            }
            assert wait_for(
                lambda: (
                    services <= {name for name, _ in harness.probe.get_service_names_and_types()}
                ),
                60.0,
            ), 'the services did not come up in 60 s'
            time.sleep(1.0)  # discovery of every participant's nodes
            names = [
                name
                for name, node_namespace in harness.probe.get_node_names_and_namespaces()
                if node_namespace == namespace
            ]
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=5.0)
    assert sorted(names) == ['dynamics', 'dynamics_services'], names
    assert 'already registered' not in stderr, stderr
    assert process.returncode == 0, stderr
