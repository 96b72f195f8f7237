"""What differs between rclpy releases is handled in robot_dynamics/ros/rclpy_compat.py alone,
and what it chooses works on the installed rclpy (CI runs this on Jazzy and on Kilted): output
publishers and stream subscriptions without QoS event handlers, and parameter descriptors that
carry the rcl_interfaces type numbers."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

pytest.importorskip('rclpy')
import rclpy  # noqa: E402
from rcl_interfaces.msg import ParameterType  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from robot_dynamics.ros.parameter_schema import ParameterSpec, declare_parameter  # noqa: E402
from robot_dynamics.ros.rclpy_compat import parameter_type  # noqa: E402
from robot_dynamics.ros.topics import (  # noqa: E402
    SENSOR_QOS,
    create_output_publisher,
    no_event_handlers,
)

ROOT = Path(__file__).resolve().parents[1]
COMPAT = ROOT / 'robot_dynamics' / 'ros' / 'rclpy_compat.py'
RELEASE_SPECIFIC = ('rclpy.experimental', 'rclpy.event_handler', 'rclpy.qos_event')
"""rclpy modules that exist in some releases only (rclpy_compat's docstring says which)."""
_names = itertools.count()


def _imported_modules(path: Path) -> set:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def _python_files() -> list:
    folders = ('robot_dynamics', 'launch', 'test')
    return sorted(path for folder in folders for path in (ROOT / folder).rglob('*.py'))


def test_only_rclpy_compat_imports_the_release_specific_rclpy_modules():
    offenders = [
        f'{path.relative_to(ROOT)} imports {module}'
        for path in _python_files()
        if path != COMPAT
        for module in _imported_modules(path)
        if module.startswith(RELEASE_SPECIFIC)
    ]
    assert offenders == []
    assert {module for module in _imported_modules(COMPAT) if module.startswith('rclpy.')} >= {
        'rclpy.experimental',
        'rclpy.event_handler',
    }


@pytest.mark.parametrize(
    ('value', 'number'),
    [
        (True, ParameterType.PARAMETER_BOOL),
        (3, ParameterType.PARAMETER_INTEGER),
        (0.25, ParameterType.PARAMETER_DOUBLE),
        ('odom', ParameterType.PARAMETER_STRING),
        ([1.0, 2.0], ParameterType.PARAMETER_DOUBLE_ARRAY),
        (['a', 'b'], ParameterType.PARAMETER_STRING_ARRAY),
        ([1, 2], ParameterType.PARAMETER_INTEGER_ARRAY),
        ([True], ParameterType.PARAMETER_BOOL_ARRAY),
    ],
)
def test_parameter_type_is_the_rcl_interfaces_number(value, number):
    assert parameter_type(value) == number
    assert isinstance(parameter_type(value), int)


def test_a_declared_parameter_is_described_with_its_type_on_a_real_node(ros):
    node = rclpy.create_node(f'compat_parameters_{next(_names)}')
    try:
        declare_parameter(node, ParameterSpec('period', 0.5, 'a period', 's'))
        declare_parameter(node, ParameterSpec('frame', 'base_link', 'a frame name'))
        declare_parameter(node, ParameterSpec('joints', ['a', 'b'], 'joint names'))
        described = {
            name: node.describe_parameter(name).type for name in ('period', 'frame', 'joints')
        }
        assert described == {
            'period': ParameterType.PARAMETER_DOUBLE,
            'frame': ParameterType.PARAMETER_STRING,
            'joints': ParameterType.PARAMETER_STRING_ARRAY,
        }
        assert all(node.describe_parameter(name).read_only for name in described)
    finally:
        node.destroy_node()


def test_outputs_and_stream_inputs_have_no_qos_event_handlers(ros):
    node = rclpy.create_node(f'compat_events_{next(_names)}')
    try:
        default = node.create_publisher(String, 'compat_default', 10)
        output = create_output_publisher(node, String, 'compat_output', SENSOR_QOS)
        stream = node.create_subscription(
            String, 'compat_input', lambda message: None, 10, event_callbacks=no_event_handlers()
        )
        assert len(default.event_handlers) >= 1  # rclpy's own incompatible-QoS logger
        assert list(output.event_handlers) == []
        assert list(stream.event_handlers) == []
    finally:
        node.destroy_node()
