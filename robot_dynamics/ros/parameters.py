"""How every node declares and checks its parameters: :func:`checked_parameter` for values read
once (read-only afterwards), :class:`RuntimeParameters` for values read at each use.
"""

from __future__ import annotations

import array
import math
from typing import Callable, Optional

from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter

from robot_dynamics.ros.node_log import shorten


def describe(
    text: str, read_only: bool = False, dynamic_typing: bool = False
) -> ParameterDescriptor:
    """A ParameterDescriptor carrying ``text`` (every parameter is declared with one)."""
    return ParameterDescriptor(description=text, read_only=read_only, dynamic_typing=dynamic_typing)


STALE_TIMEOUT = 0.1
"""Default age [s] beyond which a joint value (or odometry, wrench) is stale."""


_WRONG_TYPE = object()


def converted_value(value, default):
    """``value`` as the type of ``default``, or ``_WRONG_TYPE``. A whole number is taken for a
    float (``stale_timeout: 1``), a whole float for an integer (``31.0``), a list of numbers
    for a list of floats, and a single string for a list of strings (one element)."""
    if isinstance(default, bool):
        return value if isinstance(value, bool) else _WRONG_TYPE
    if isinstance(default, float):
        return (
            float(value)
            if isinstance(value, (int, float)) and not isinstance(value, bool)
            else _WRONG_TYPE
        )
    if isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return int(value) if isinstance(value, float) and value.is_integer() else _WRONG_TYPE
    if isinstance(default, str):
        return value if isinstance(value, str) else _WRONG_TYPE
    if isinstance(default, (list, tuple)):
        element = default[0] if len(default) else ''  # an empty default is a list of names
        if isinstance(value, str) and isinstance(element, str):
            return [value]
        if not isinstance(value, (list, tuple, array.array)):
            return _WRONG_TYPE
        items = [converted_value(item, element) for item in value]
        return _WRONG_TYPE if any(item is _WRONG_TYPE for item in items) else items
    return value


def _kind(default) -> str:
    if isinstance(default, bool):
        return 'true or false'
    if isinstance(default, float):
        return 'number'
    if isinstance(default, int):
        return 'whole number'
    if isinstance(default, str):
        return 'string'
    element = default[0] if len(default) else ''
    return f'list of {"strings" if isinstance(element, str) else _kind(element) + "s"}'


def _checked_value(value, default, is_valid: Optional[Callable], requirement: str) -> tuple:
    """(value to use, None) or (None, why ``value`` is refused)."""
    used = converted_value(value, default)
    if used is _WRONG_TYPE:
        return None, f'is not a {_kind(default)}'
    if is_valid is not None and not is_valid(used):
        return None, requirement
    return used, None


def checked_parameter(
    node: Node,
    name: str,
    default,
    description: str,
    is_valid: Optional[Callable] = None,
    requirement: str = '',
):
    """Declare the node's parameter ``name``, read once (at start-up or at model load), and
    return the value the node uses.

    Whatever type the parameter file or launch gives it is accepted at declaration (dynamic
    typing), then converted to the type of ``default`` (:func:`converted_value`) and checked
    with ``is_valid``; a value of another type or failing ``requirement`` is reported as an
    error in the log and ``default`` is used instead: a bad configuration value must not stop
    the node (nor make a timer spin with a zero period). The parameter then holds the value
    in use and is read-only, so a later ``set_parameters`` is refused with a reason instead
    of being accepted and ignored (a parameter read at each use: :class:`RuntimeParameters`).
    """
    value = _declared_value(node, name, default, description, is_valid, requirement)
    static = len(value) > 0 if isinstance(value, (list, tuple)) else True
    descriptor = describe(description, read_only=True, dynamic_typing=not static)
    if static:
        descriptor.type = Parameter.Type.from_parameter_value(value).value
    node.set_descriptor(name, descriptor)
    return value


def _declared_value(
    node: Node, name: str, default, description: str, is_valid: Optional[Callable], requirement: str
):
    """Declare ``name`` and set it to the value in use (:func:`checked_parameter`)."""
    node.declare_parameter(name, default, describe(description, dynamic_typing=True))
    given = node.get_parameter(name).value
    value, problem = _checked_value(given, default, is_valid, requirement)
    if problem:
        node.get_logger().error(
            f'parameter {name} {shorten(repr(given))} {problem}; using {default!r}'
        )
        value = default
    node.set_parameters([Parameter(name, value=value)])
    return value


def positive_parameter(
    node: Node, name: str, default: float, description: str, quantity: str = 'time [s]'
) -> float:
    """:func:`checked_parameter` for a positive, finite number (a ``quantity``)."""
    return checked_parameter(
        node,
        name,
        default,
        description,
        lambda value: 0.0 < value < math.inf,  # false for NaN
        f'is not a positive {quantity}',
    )


def non_negative_parameter(node: Node, name: str, default: float, description: str) -> float:
    """:func:`checked_parameter` for a non-negative, finite number."""
    return checked_parameter(
        node,
        name,
        default,
        description,
        lambda value: 0.0 <= value < math.inf,  # false for NaN
        'is not a non-negative, finite number',
    )


def gravity_parameter(
    node: Node, is_valid: Callable = lambda gravity: True, requirement: str = ''
) -> list:
    """:func:`checked_parameter` ``gravity``: the gravity vector in the world frame [m/s²],
    3 finite numbers for which ``is_valid`` holds (``requirement`` says what it checks)."""
    return checked_parameter(
        node,
        'gravity',
        [0.0, 0.0, -9.81],
        'gravity vector in the world frame [m/s^2]',
        lambda gravity: (
            len(gravity) == 3 and all(map(math.isfinite, gravity)) and is_valid(gravity)
        ),
        f'is not 3 finite numbers [m/s^2]{requirement}',
    )


class RuntimeParameters:
    """A node's parameters read at each use (not read-only): declared and checked like
    :func:`checked_parameter` (a bad start-up value is logged and the default used); a later
    change is checked the same way and refused with the reason when it fails."""

    def __init__(self, node: Node):
        self._node = node
        self._checks: dict = {}  # name -> (default, is_valid, requirement)
        node.add_on_set_parameters_callback(self._check_change)

    def declare(
        self,
        name: str,
        default,
        description: str,
        is_valid: Optional[Callable] = None,
        requirement: str = '',
    ) -> None:
        _declared_value(self._node, name, default, description, is_valid, requirement)
        self._checks[name] = (default, is_valid, requirement)

    def value(self, name: str):
        """The current value of ``name``, converted to its default's type."""
        default = self._checks[name][0]
        value = converted_value(self._node.get_parameter(name).value, default)
        return default if value is _WRONG_TYPE else value

    def _check_change(self, parameters: list) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name in self._checks:
                default, is_valid, requirement = self._checks[parameter.name]
                _, problem = _checked_value(parameter.value, default, is_valid, requirement)
                if problem:
                    return SetParametersResult(
                        successful=False,
                        reason=f'{parameter.name} {shorten(repr(parameter.value))} {problem}',
                    )
        return SetParametersResult(successful=True)
