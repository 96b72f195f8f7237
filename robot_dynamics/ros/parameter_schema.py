"""Every parameter of a node declared from one table.

A node's parameters are one tuple of :class:`ParameterSpec` rows: name, default (its type is the
parameter's type), unit, range or choices, description, runtime-settable or read-only, and a
check for what a range cannot say ("is a link of the model"). :class:`NodeParameters` declares
them with rclpy descriptors (``ParameterDescriptor``: ranges as ``FloatingPointRange`` /
``IntegerRange``, so ``ros2 param describe`` shows them and rclpy itself refuses an out-of-range
``ros2 param set``) and gives the node the values it uses. README's parameter tables and
config/robot_dynamics.yaml are checked against the tables (test/test_parameter_schema.py).

At start-up whatever type a parameter file or launch gives a parameter is accepted, converted to
the default's type (:func:`converted_value`: a whole number for a float...) and checked; a value
of another type, out of its range or failing its check is logged as an error and the default is
used: one bad configuration value must not stop the node (nor make a timer spin with a zero
period). A list whose entries name distinct things (``distinct``: the contact frames) keeps an
entry given twice once and records that as refused. rcl gives an empty list (``-p "name:=[]"``,
YAML ``[]``) no type: it arrives as None and is read as the empty list. A read-only parameter
then holds the value in use, and ``set_parameters`` is refused with a reason instead of being
accepted and ignored. A runtime parameter is read at each use; a change is checked the same way
and refused with the reason.
"""

from __future__ import annotations

import array
import difflib
import math
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    SetParametersResult,
)
from rclpy.node import Node
from rclpy.parameter import Parameter

from robot_dynamics.ros.node_log import shorten
from robot_dynamics.ros.rclpy_compat import (
    add_pre_set_callback,
    parameter_overrides,
    parameter_type,
)

_WRONG_TYPE = object()
_LARGEST_INTEGER = 2**63 - 1


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter: ``name``, ``default`` (its type is the parameter's), ``description``,
    ``unit`` ('' for none), the range [``low``, ``high``] (either end excluded with
    ``low_open`` / ``high_open``; None: unbounded) or the ``choices``, ``runtime`` (read at each
    use and settable while the node runs; otherwise read once and read-only), and ``check``
    (value, node) → bool for what a range cannot express. ``requirement`` words a refusal ("is
    not a link of the robot model"); without it the range or the choices are named."""

    name: str
    default: Any
    description: str
    unit: str = ''
    low: Optional[float] = None
    high: Optional[float] = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    runtime: bool = False
    check: Optional[Callable[[Any, Node], bool]] = None
    requirement: str = ''
    distinct: str = ''
    """For a list: what one entry is ('contact frame'); an entry given again is then left out,
    named in the refusal ('contact frame lf_foot given twice'), and the others used."""

    def problem(self, value, node: Optional[Node] = None) -> tuple:
        """(the value to use, '') or (None, why ``value`` is refused)."""
        used = converted_value(value, self.default)
        if used is _WRONG_TYPE:
            return None, f'is not a {_kind(self.default)}'
        if self.choices and used not in self.choices:
            return None, self.requirement or f'is not one of {self.choices!r}'
        if not self._in_range(used):
            return None, self.requirement or f'is not in {self.interval()}'
        if self.check is not None and not self.check(used, node):
            return None, self.requirement
        return used, ''

    def _in_range(self, value) -> bool:
        if self.low is None and self.high is None:
            return True
        if isinstance(value, float) and math.isnan(value):
            return False
        above = self.low is None or value > self.low or (value == self.low and not self.low_open)
        below = (
            self.high is None or value < self.high or (value == self.high and not self.high_open)
        )
        return above and below

    def interval(self) -> str:
        """The range in words: '(0, 1]', '[2, 1000] samples', '' when unbounded."""
        if self.low is None and self.high is None:
            return ''
        low = '-inf' if self.low is None else f'{self.low:g}'
        high = 'inf' if self.high is None else f'{self.high:g}'
        opening = '(' if self.low_open or self.low is None else '['
        closing = ')' if self.high_open or self.high is None else ']'
        return f'{opening}{low}, {high}{closing}' + (f' {self.unit}' if self.unit else '')

    def constraints(self) -> str:
        """What a value must be, for ``ros2 param describe`` (``additional_constraints``)."""
        parts = []
        if self.choices:
            parts.append('one of ' + ', '.join(str(choice) for choice in self.choices))
        if self.interval():
            parts.append(f'in {self.interval()}')
        if self.check is not None and self.requirement:
            parts.append(self.requirement.replace('is not', 'must be', 1))
        return '; '.join(parts)

    def descriptor(self, value) -> ParameterDescriptor:
        """The descriptor of the parameter holding ``value``: read-only unless runtime, its
        type fixed (dynamic for runtime parameters and for empty lists, whose element type is
        unknown), its range."""
        unit = f' [{self.unit}]' if self.unit else ''
        static = not self.runtime and (len(value) > 0 if isinstance(value, (list, tuple)) else True)
        descriptor = ParameterDescriptor(
            description=self.description + unit,
            additional_constraints=self.constraints(),
            read_only=not self.runtime,
            dynamic_typing=not static,
        )
        if static:
            descriptor.type = parameter_type(value)
        if isinstance(self.default, bool) or (self.low is None and self.high is None):
            return descriptor
        if isinstance(self.default, float):
            descriptor.floating_point_range = [
                FloatingPointRange(
                    from_value=-math.inf if self.low is None else float(self.low),
                    to_value=math.inf if self.high is None else float(self.high),
                    step=0.0,
                )
            ]
        elif isinstance(self.default, int):
            descriptor.integer_range = [
                IntegerRange(
                    from_value=-_LARGEST_INTEGER if self.low is None else int(self.low),
                    to_value=_LARGEST_INTEGER if self.high is None else int(self.high),
                    step=0,
                )
            ]
        return descriptor


POSITIVE = dict(low=0.0, low_open=True, high=math.inf, high_open=True)
"""The range of a positive, finite number: ParameterSpec(..., **POSITIVE)."""

NON_NEGATIVE = dict(low=0.0, high=math.inf, high_open=True)
"""The range of a non-negative, finite number."""

DIAGNOSTICS_PERIODS = dict(low=0.01, high=math.inf, high_open=True)
"""The range of a diagnostics period [s]: at most 100 Hz, so that a mistyped value does not make
its timer take a core."""


FRAME_NAME = {'check': lambda name, _node: bool(name), 'requirement': 'is not a frame name'}
"""check and requirement of a frame parameter (a message's frame_id): not empty."""


def topic_name_or_empty(name: str, node: Optional[Node] = None) -> bool:
    """Empty, or a name rclpy accepts for a topic of ``node`` (relative names expanded in its
    namespace)."""
    if not name:
        return True
    from rclpy.expand_topic_name import expand_topic_name
    from rclpy.validate_full_topic_name import validate_full_topic_name

    try:
        validate_full_topic_name(
            expand_topic_name(
                name,
                node.get_name() if node else 'node',
                node.get_namespace() if node else '/',
            )
        )
    except Exception:  # rclpy raises ValueError or InvalidTopicNameException
        return False
    return True


def three_finite_numbers(values, _node: Optional[Node] = None) -> bool:
    """3 finite numbers (a vector in space)."""
    return len(values) == 3 and all(map(math.isfinite, values))


def three_angles(values, _node: Optional[Node] = None) -> bool:
    """3 finite angles within ±2π [rad] (a larger one is most likely in degrees)."""
    return three_finite_numbers(values) and all(abs(value) <= math.tau for value in values)


MAX_GRAVITY = 100.0
"""[m/s²] Largest gravity accepted (Jupiter's is 24.8): a larger value is a typo."""


def plausible_gravity(values, _node: Optional[Node] = None) -> bool:
    """3 finite numbers of norm at most :data:`MAX_GRAVITY` [m/s²]."""
    return three_finite_numbers(values) and math.hypot(*values) <= MAX_GRAVITY


GRAVITY = ParameterSpec(
    'gravity',
    [0.0, 0.0, -9.81],
    'gravity vector in the world frame',
    'm/s²',
    check=plausible_gravity,
    requirement=f'is not 3 finite numbers of norm at most {MAX_GRAVITY:g} [m/s²]',
)
"""The gravity parameter every node has."""


def declare_parameter(node: Node, spec: ParameterSpec, refused: Optional[dict] = None):
    """Declare ``spec`` on ``node`` and return the value the node uses (module docstring); a
    given value refused is logged and kept in ``refused`` (name → words)."""
    node.declare_parameter(
        spec.name,
        spec.default,
        ParameterDescriptor(description=spec.description, dynamic_typing=True),
    )
    given = node.get_parameter(spec.name).value
    if given is None and isinstance(spec.default, (list, tuple)):
        given = []  # an empty list, which rcl gives no type
    value, problem = spec.problem(given, node)
    if problem:
        value = spec.default
    elif spec.distinct:
        value, problem = _without_repeats(value, spec.distinct)
    if problem:
        words = f'{shorten(repr(given))} {problem}; using {value!r}'
        node.get_logger().error(f'parameter {spec.name} {words}')
        if refused is not None:
            refused[spec.name] = words
    node.set_parameters([Parameter(spec.name, value=value)])
    node.set_descriptor(spec.name, spec.descriptor(value))
    return value


def _without_repeats(values: list, entry: str) -> tuple:
    """(``values`` with each entry kept once, in order; '' or the repeated ones in words, each
    called ``entry``)."""
    kept = list(dict.fromkeys(values))
    repeated = [value for value in kept if values.count(value) > 1]
    words = ', '.join(f'{entry} {value} given {_times(values.count(value))}' for value in repeated)
    return kept, words and f'has {words}: each taken once'


def _times(count: int) -> str:
    return 'twice' if count == 2 else f'{count} times'


class NodeParameters:
    """A node's parameters, declared from its ``table`` (in table order): ``parameters[name]``
    is the value in use (a runtime parameter's current value, read at each use); ``refused``:
    the values given at start that were refused (name → words), for the model status."""

    def __init__(self, node: Node, table: Sequence[ParameterSpec]):
        self._node = node
        self._specs = {spec.name: spec for spec in table}
        self.refused: dict = {}
        self._values = {spec.name: declare_parameter(node, spec, self.refused) for spec in table}
        if any(spec.runtime for spec in table):
            add_pre_set_callback(node, self._named_switches)
            node.add_on_set_parameters_callback(self._check_change)

    def __getitem__(self, name: str):
        spec = self._specs[name]
        if not spec.runtime:
            return self._values[name]
        value = converted_value(self._node.get_parameter(name).value, spec.default)
        return spec.default if value is _WRONG_TYPE else value

    def _named_switches(self, parameters: list) -> list:
        """A YAML boolean set on a runtime text parameter (`ros2 param set <node>
        contact_profile off` sends false) is kept as the word typed, 'on' or 'off'
        (:func:`converted_value`): ``ros2 param get`` and ``dump`` then show it."""
        return [
            Parameter(parameter.name, value=converted_value(parameter.value, ''))
            if isinstance(parameter.value, bool)
            and parameter.name in self._specs
            and self._specs[parameter.name].runtime
            and isinstance(self._specs[parameter.name].default, str)
            else parameter
            for parameter in parameters
        ]

    def _check_change(self, parameters: list) -> SetParametersResult:
        for parameter in parameters:
            spec = self._specs.get(parameter.name)
            if spec is None or not spec.runtime:
                continue
            _, problem = spec.problem(parameter.value, self._node)
            if problem:
                return SetParametersResult(
                    successful=False,
                    reason=f'{parameter.name} {shorten(repr(parameter.value))} {problem}',
                )
        return SetParametersResult(successful=True)


def warn_unknown_parameters(node: Node) -> list:
    """Log a warning for each parameter given to ``node`` (``-p``, a parameter file) that it does
    not have, with the nearest names it has (a typo is otherwise ignored without a word);
    returns the unknown names."""
    unknown = [name for name in parameter_overrides(node) if not node.has_parameter(name)]
    known = [name for name in node.get_parameters_by_prefix('')]
    for name in unknown:
        near = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        hint = f'; did you mean {" or ".join(near)}?' if near else ''
        node.get_logger().warning(
            f'parameter {shorten(name)} is not a parameter of this node: ignored{hint}'
        )
    return unknown


def converted_value(value, default):
    """``value`` as the type of ``default``, or ``_WRONG_TYPE``. A whole number is taken for a
    float (``stale_timeout: 1``), a whole float for an integer (``31.0``), a list of numbers
    for a list of floats, a single string for a list of strings (one element), an untyped value
    (None: how rcl gives an empty list) for an empty list, and a YAML
    boolean for a string as 'on' / 'off' (YAML 1.1, which `ros2 param set` uses, reads ``off`` as
    false)."""
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
        if isinstance(value, bool):  # `ros2 param set ... off` arrives as YAML false
            return 'on' if value else 'off'
        return value if isinstance(value, str) else _WRONG_TYPE
    if isinstance(default, (list, tuple)):
        if value is None:  # rcl gives an empty list (`-p "name:=[]"`, YAML `[]`) no type
            return []
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
