"""Shared plumbing of the robot_dynamics nodes: QoS profiles, joint-state intake, counters,
rate-limited logging, parameter checks, diagnostics and the service companion node (the model
source: :mod:`robot_dynamics.ros.model_source`; spinning and signals:
:mod:`robot_dynamics.ros.spinning`). No dynamics here: the nodes call the core.
"""
from __future__ import annotations

import array
import functools
import math
import time
from collections import Counter
from typing import Callable, Optional

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
import rclpy
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

try:  # Iron and later
    from rclpy.event_handler import PublisherEventCallbacks
except ImportError:  # Humble
    from rclpy.qos_event import PublisherEventCallbacks


DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL, history=HistoryPolicy.KEEP_LAST)
"""QoS of robot_description (as robot_state_publisher publishes it)."""

LATCHED_QOS = DESCRIPTION_QOS
"""QoS of results that late joiners must still get (e.g. ~/payload)."""

SENSOR_QOS = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE,
                        history=HistoryPolicy.KEEP_LAST)
"""QoS of the torque outputs (reliable, like joint_state_broadcaster)."""

JOINT_STATE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
"""QoS a node reads joint_states with: 1 s of room at 1 kHz, so a scheduling stall of the node
(start-up, a shared CPU, a description being parsed) delays samples instead of dropping them
uncounted (a queue of a few tens of samples overflows in such stalls; docs/reliability.md)."""


def stamp_seconds(stamp) -> float:
    """builtin_interfaces/Time → seconds."""
    return stamp.sec + stamp.nanosec * 1e-9


LOG_TEXT_LIMIT = 200
"""Characters of one log line (or diagnostics value) beyond which the text is cut: a message
field (a joint name, a description) can be as long as its sender likes."""


def shorten(text, limit: int = LOG_TEXT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    text = str(text)
    return text if len(text) <= limit else f'{text[:limit]}… ({len(text)} characters in all)'


class RateLimitedLogger:
    """Logs each key at most once per ``period`` seconds (wall time)."""

    def __init__(self, logger, period: float = 1.0):
        self._logger = logger
        self._period = period
        self._last: dict = {}

    def _due(self, key: str) -> bool:
        now = time.monotonic()
        if now - self._last.get(key, -1e9) < self._period:
            return False
        self._last[key] = now
        return True

    def warn(self, key: str, message: str) -> None:
        if self._due(key):
            self._logger.warning(shorten(message))

    def error(self, key: str, message: str) -> None:
        if self._due(key):
            self._logger.error(shorten(message))


class RejectionCounter:
    """Counts rejected inputs by reason and logs each reason at most once per second."""

    def __init__(self, logger):
        self.counts: Counter = Counter()
        self._log = RateLimitedLogger(logger)

    def reject(self, reason: str, message: str) -> None:
        self.counts[reason] += 1
        self._log.warn(reason, f'rejected input ({reason}, {self.counts[reason]} so far): {message}')

    def total(self) -> int:
        return sum(self.counts.values())


class RateMeter:
    """Input rate [Hz] over a sliding count of wall-clock arrivals."""

    def __init__(self, window: int = 200):
        self._times = np.zeros(window)
        self._count = 0

    def tick(self) -> None:
        self._times[self._count % len(self._times)] = time.monotonic()
        self._count += 1

    def rate(self) -> float:
        filled = min(self._count, len(self._times))
        if filled < 2:
            return 0.0
        times = self._times[:filled]
        span = times.max() - times.min()
        return (filled - 1) / span if span > 0 else 0.0


def joint_state_fields(message) -> tuple:
    """(names, positions, velocities, efforts, stamp [s]) of a sensor_msgs/JointState."""
    return message.name, message.position, message.velocity, message.effort, stamp_seconds(message.header.stamp)


def diagnostic_status(name: str, level: bytes, message: str, values: dict, hardware_id: str = '') -> DiagnosticStatus:
    """A diagnostic_msgs/DiagnosticStatus with ``values`` rendered as strings."""
    status = DiagnosticStatus(name=name, level=level, message=message, hardware_id=hardware_id)
    status.values = [KeyValue(key=str(key), value=_format_value(value)) for key, value in values.items()]
    return status


def _format_value(value) -> str:
    if isinstance(value, float):
        return f'{value:.6g}'
    return str(value)


def describe(text: str, read_only: bool = False, dynamic_typing: bool = False) -> ParameterDescriptor:
    """A ParameterDescriptor carrying ``text`` (every parameter is declared with one)."""
    return ParameterDescriptor(description=text, read_only=read_only, dynamic_typing=dynamic_typing)


STALE_TIMEOUT = 0.1
"""Default age [s] beyond which a joint value (or odometry, wrench) is stale."""

DIAGNOSTICS_PERIOD = 1.0
"""Default period of /diagnostics [s]."""

_WRONG_TYPE = object()


def converted_value(value, default):
    """``value`` as the type of ``default``, or ``_WRONG_TYPE``. A whole number is taken for a
    float (``stale_timeout: 1``), a whole float for an integer (``31.0``), a list of numbers
    for a list of floats, and a single string for a list of strings (one element)."""
    if isinstance(default, bool):
        return value if isinstance(value, bool) else _WRONG_TYPE
    if isinstance(default, float):
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else _WRONG_TYPE
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


def checked_parameter(node: Node, name: str, default, description: str, is_valid: Optional[Callable] = None,
                      requirement: str = ''):
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


def _declared_value(node: Node, name: str, default, description: str, is_valid: Optional[Callable],
                    requirement: str):
    """Declare ``name`` and set it to the value in use (:func:`checked_parameter`)."""
    node.declare_parameter(name, default, describe(description, dynamic_typing=True))
    given = node.get_parameter(name).value
    value, problem = _checked_value(given, default, is_valid, requirement)
    if problem:
        node.get_logger().error(f'parameter {name} {shorten(repr(given))} {problem}; using {default!r}')
        value = default
    node.set_parameters([Parameter(name, value=value)])
    return value


def positive_parameter(node: Node, name: str, default: float, description: str,
                       quantity: str = 'time [s]') -> float:
    """:func:`checked_parameter` for a positive, finite number (a ``quantity``)."""
    return checked_parameter(node, name, default, description, lambda value: 0.0 < value < math.inf,  # false for NaN
                             f'is not a positive {quantity}')


def non_negative_parameter(node: Node, name: str, default: float, description: str) -> float:
    """:func:`checked_parameter` for a non-negative, finite number."""
    return checked_parameter(node, name, default, description, lambda value: 0.0 <= value < math.inf,  # false for NaN
                             'is not a non-negative, finite number')


def gravity_parameter(node: Node, is_valid: Callable = lambda gravity: True, requirement: str = '') -> list:
    """:func:`checked_parameter` ``gravity``: the gravity vector in the world frame [m/s²],
    3 finite numbers for which ``is_valid`` holds (``requirement`` says what it checks)."""
    return checked_parameter(node, 'gravity', [0.0, 0.0, -9.81], 'gravity vector in the world frame [m/s^2]',
                             lambda gravity: len(gravity) == 3 and all(map(math.isfinite, gravity))
                             and is_valid(gravity), f'is not 3 finite numbers [m/s^2]{requirement}')


class RuntimeParameters:
    """A node's parameters read at each use (not read-only): declared and checked like
    :func:`checked_parameter` (a bad start-up value is logged and the default used); a later
    change is checked the same way and refused with the reason when it fails."""

    def __init__(self, node: Node):
        self._node = node
        self._checks: dict = {}  # name -> (default, is_valid, requirement)
        node.add_on_set_parameters_callback(self._check_change)

    def declare(self, name: str, default, description: str, is_valid: Optional[Callable] = None,
                requirement: str = '') -> None:
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
                    return SetParametersResult(successful=False,
                                               reason=f'{parameter.name} {shorten(repr(parameter.value))} {problem}')
        return SetParametersResult(successful=True)


def never_raises(handler):
    """A node's service handler that answers ``success=false`` with the error instead of
    raising (and logs it): an exception in a callback would take the node's executor, and the
    node, down. For any service response with ``success`` and ``message`` (Trigger, SetBool)."""
    @functools.wraps(handler)
    def guarded(node, request, response):
        try:
            return handler(node, request, response)
        except Exception as error:  # a node never dies from a call
            node.get_logger().error(f'{handler.__name__.lstrip("_")} failed: {shorten(repr(error))}')
            response.success, response.message = False, f'internal error: {shorten(error)}'
            return response
    return guarded


def create_output_publisher(node: Node, message_type, topic: str, qos):
    """A publisher without rclpy's default event handlers (they log a subscription with
    incompatible QoS or type; the subscribing side logs the same mismatch). Every handler is
    one more entity the stream's executor rebuilds its wait set with for every message, a
    noticeable share of a node's CPU at 1 kHz with several publishers (docs/reliability.md)."""
    return node.create_publisher(message_type, topic, qos,
                                 event_callbacks=PublisherEventCallbacks(use_default_callbacks=False))


def publish_if_subscribed(publisher, build_message: Callable) -> None:
    """Publish ``build_message()`` when some subscription is matched. A DDS write costs tens of
    µs of CPU even when no reader is matched, and on a volatile topic nothing is kept for later
    readers, so skipping it changes nothing anyone can receive."""
    if publisher.get_subscription_count():
        publisher.publish(build_message())


class ServiceHost:
    """A companion node that serves ``owner``'s services from its own executor thread, so a
    long service (identification, validation) never delays the owner's topic stream.

    Service names resolve against the owner: ``~/identify_payload`` on node ``dynamics`` is
    ``/dynamics/identify_payload``, exactly as if the owner served it.
    """

    def __init__(self, owner: Node):
        self.owner = owner
        name, namespace = f'{owner.get_name()}_services', owner.get_namespace()
        # Node-local remaps take precedence over the process's global ones: without them the
        # global `-r __node:=dynamics` that `ros2 launch` passes would name this node `dynamics` too.
        self.node = rclpy.create_node(name, namespace=namespace, context=owner.context,
                                      cli_args=['--ros-args', '-r', f'__node:={name}', '-r', f'__ns:={namespace}'],
                                      start_parameter_services=False)

    def create_service(self, service_type, name: str, handler):
        return self.node.create_service(service_type, self.owner.resolve_service_name(name), handler)
