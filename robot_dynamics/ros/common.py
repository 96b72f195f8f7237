"""Shared plumbing of the robot_dynamics nodes: model source, joint-state intake, counters,
rate-limited logging and diagnostics. No dynamics here: the nodes call the core.

Model source precedence: the ``robot_description`` parameter when non-empty, else
``urdf_file`` when non-empty, else the ``robot_description`` topic (std_msgs/String,
reliable + transient local, as robot_state_publisher publishes it). A new description
replaces the model while the node runs (hot swap); an invalid one is rejected with the
reason and the last good model stays.
"""
from __future__ import annotations

import gc
import math
import sys
import threading
import time
from collections import Counter
from typing import Callable, Optional

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
import rclpy
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

try:  # Iron and later
    from rclpy.event_handler import PublisherEventCallbacks
except ImportError:  # Humble
    from rclpy.qos_event import PublisherEventCallbacks

from robot_dynamics.core.errors import DescriptionError
from robot_dynamics.core.model import RobotModel
from robot_dynamics.core.urdf import MAX_MOVING_JOINTS, read_description_file

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
uncounted (the 50-deep queue lost 0.08 % of a 10-minute 1 kHz soak on a loaded machine)."""


def stamp_seconds(stamp) -> float:
    """builtin_interfaces/Time → seconds."""
    return stamp.sec + stamp.nanosec * 1e-9


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
            self._logger.warning(message)

    def error(self, key: str, message: str) -> None:
        if self._due(key):
            self._logger.error(message)


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


class ModelSource:
    """Owns the node's current :class:`RobotModel` and rebuilds it when a description arrives.

    ``on_model(robot)`` is called with each new model (the node swaps its reference
    atomically; the old model is never mutated). Declares the parameters
    ``robot_description``, ``urdf_file``, ``root_joint`` and ``gravity``.
    """

    def __init__(self, node: Node, on_model: Callable[[RobotModel], None], callback_group=None):
        self._node = node
        self._on_model = on_model
        self._log = RateLimitedLogger(node.get_logger(), period=1.0)
        node.declare_parameter('robot_description', '', describe(
            'URDF text; when set it overrides the robot_description topic and urdf_file'))
        node.declare_parameter('urdf_file', '', describe('path of a URDF file used when robot_description is empty'))
        node.declare_parameter('root_joint', 'fixed', describe("'fixed' (arm on a table) or 'floating' (free-flyer base)"))
        node.declare_parameter('gravity', [0.0, 0.0, -9.81], describe('gravity vector in the world frame [m/s^2]'))
        node.declare_parameter('max_joints', MAX_MOVING_JOINTS, describe(
            'descriptions with more moving joints are refused (model memory grows ~cubically with joints)'))
        self.max_joints = int(node.get_parameter('max_joints').value)
        self.root_joint = node.get_parameter('root_joint').value
        if self.root_joint not in ('fixed', 'floating'):
            node.get_logger().error(f"root_joint '{self.root_joint}' is neither 'fixed' nor 'floating'; using 'fixed'")
            self.root_joint = 'fixed'
        self.gravity = list(node.get_parameter('gravity').value)
        self.robot: Optional[RobotModel] = None
        self.swaps = 0
        self.rejected = 0
        self.last_error = ''
        self._current_text: Optional[str] = None
        description = node.get_parameter('robot_description').value
        urdf_file = node.get_parameter('urdf_file').value
        self.source = 'parameter' if description else ('file' if urdf_file else 'topic')
        if description:
            self.load(description)
        elif urdf_file:
            try:
                self.load(read_description_file(urdf_file))
            except DescriptionError as error:
                self._reject(str(error))
        else:
            node.create_subscription(String, 'robot_description', self._on_description, DESCRIPTION_QOS,
                                     callback_group=callback_group)

    def _on_description(self, message: String) -> None:
        try:
            self.load(message.data)
        except Exception as error:  # a node never dies from a message
            self._reject(f'unexpected error while loading the description: {error!r}')

    def load(self, text: str) -> bool:
        """Build a model from URDF text; on failure keep the last good model. Returns success."""
        if text == self._current_text:
            return True
        try:
            robot = RobotModel.from_urdf_string(text, self.root_joint, self.gravity,
                                                max_moving_joints=self.max_joints)
        except (DescriptionError, ValueError) as error:
            self._reject(str(error))
            return False
        self._current_text = text
        self.robot = robot
        self.swaps += 1
        self._node.get_logger().info(f'model loaded: {robot!r}')
        for warning in robot.warnings:
            self._node.get_logger().warning(f'robot description: {warning}')
        self._on_model(robot)
        return True

    def _reject(self, reason: str) -> None:
        self.rejected += 1
        self.last_error = reason
        kept = f'keeping model "{self.robot.name}"' if self.robot else 'no model loaded yet'
        self._log.error('description', f'robot description rejected ({kept}): {reason}')


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


def describe(text: str):
    """A ParameterDescriptor carrying ``text`` (every parameter is declared with one)."""
    return ParameterDescriptor(description=text)


STALE_TIMEOUT = 0.1
"""Default age [s] beyond which a joint value (or odometry, wrench) is stale."""

DIAGNOSTICS_PERIOD = 1.0
"""Default period of /diagnostics [s]."""


def checked_parameter(node: Node, name: str, default, is_valid: Callable, requirement: str):
    """The node's parameter ``name`` when ``is_valid(value)``; otherwise ``default``, with an error
    in the log saying which ``requirement`` the value failed: a bad configuration value must not
    stop the node (nor make a timer spin with a zero period)."""
    value = node.get_parameter(name).value
    if is_valid(value):
        return value
    node.get_logger().error(f'{name} {value!r} {requirement}; using {default!r}')
    return default


def positive_parameter(node: Node, name: str, default: float, quantity: str = 'time [s]') -> float:
    """The node's parameter ``name`` if it is a positive, finite number (a ``quantity``), else ``default``."""
    return checked_parameter(node, name, default, lambda value: 0.0 < value < math.inf,  # false for NaN
                             f'is not a positive {quantity}')


def create_output_publisher(node: Node, message_type, topic: str, qos):
    """A publisher without rclpy's default event handlers (they log a subscription with
    incompatible QoS or type; the subscribing side logs the same mismatch). Every handler is
    one more entity the stream's executor rebuilds its wait set with for every message: the
    dynamics node's five publishers carried ten, ~12 % of its CPU at 1 kHz (the node process's
    CPU time during one ``bench dynamics`` run with and without them; not a shipped figure)."""
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
        self.node = rclpy.create_node(f'{owner.get_name()}_services', namespace=owner.get_namespace(),
                                      context=owner.context, start_parameter_services=False)

    def create_service(self, service_type, name: str, handler):
        return self.node.create_service(service_type, self.owner.resolve_service_name(name), handler)


def spin_nodes(nodes: list) -> None:
    """Spin ``nodes`` until shutdown: their topic callbacks on one single-threaded executor in
    this thread (lowest latency in rclpy), their :class:`ServiceHost` companions on another
    executor in a background thread."""
    stream, services = SingleThreadedExecutor(), SingleThreadedExecutor()
    for node in nodes:
        stream.add_node(node)
        host = getattr(node, 'service_host', None)
        if isinstance(host, ServiceHost):
            services.add_node(host.node)
    # Let the stream thread take the GIL back quickly while a service computes in Python.
    sys.setswitchinterval(0.0005)
    # Everything alive now (imported modules, the model) is never garbage: exempt it from the
    # cyclic collector, whose full passes over it took ~40 ms each in the dynamics node.
    gc.freeze()
    service_thread = threading.Thread(target=services.spin, daemon=True)
    service_thread.start()
    try:
        stream.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        services.shutdown(timeout_sec=1.0)
        stream.shutdown(timeout_sec=1.0)
        for node in nodes:
            host = getattr(node, 'service_host', None)
            if isinstance(host, ServiceHost):
                host.node.destroy_node()
            node.destroy_node()
        rclpy.try_shutdown()
