"""QoS profiles of the nodes' topics, output publishers and message fields."""

from __future__ import annotations

import math
import time

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from robot_dynamics.ros.rclpy_compat import PublisherEventCallbacks, SubscriptionEventCallbacks

DESCRIPTION_QOS = QoSProfile(
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
)
"""QoS of robot_description (as robot_state_publisher publishes it)."""


LATCHED_QOS = DESCRIPTION_QOS
"""QoS of results that late joiners must still get (e.g. ~/payload)."""


SENSOR_QOS = QoSProfile(
    depth=50,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
    history=HistoryPolicy.KEEP_LAST,
)
"""QoS of the torque outputs (reliable, like joint_state_broadcaster)."""


JOINT_STATE_QOS = QoSProfile(
    depth=1000,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
    history=HistoryPolicy.KEEP_LAST,
)
"""QoS a node reads joint_states with: 1 s of room at 1 kHz, so a scheduling stall of the node
(start-up, a shared CPU, a description being parsed) delays samples instead of dropping them
uncounted (a queue of a few tens of samples overflows in such stalls; docs/reliability.md)."""


def stamp_seconds(stamp) -> float:
    """builtin_interfaces/Time → seconds."""
    return stamp.sec + stamp.nanosec * 1e-9


def create_output_publisher(node: Node, message_type, topic: str, qos):
    """A publisher without rclpy's default event handlers (they log a subscription with
    incompatible QoS or type; the subscribing side logs the same mismatch). Every handler is
    one more entity the stream's executor rebuilds its wait set with for every message, a
    noticeable share of a node's CPU at 1 kHz with several publishers (docs/reliability.md)."""
    return node.create_publisher(
        message_type,
        topic,
        qos,
        event_callbacks=PublisherEventCallbacks(use_default_callbacks=False),
    )


def no_event_handlers() -> SubscriptionEventCallbacks:
    """No QoS event handlers on a stream input: every handler is one more entity the executor
    rebuilds its wait set with for every message (the node reports QoS mismatches in its
    diagnostics instead)."""
    return SubscriptionEventCallbacks(use_default_callbacks=False)


SUBSCRIBERS_REFRESH_PERIOD = 0.1
"""Period [s] at which the stream looks up which outputs have subscribers. A look-up is a
middleware call per output topic, per message otherwise; a new subscriber gets its first
message at most this much later than its match."""


class SubscribedOutputs:
    """Whether an output publisher has a matched subscription (a DDS write costs tens of µs even
    without a reader; on a volatile topic skipping it changes nothing anyone can receive). A
    look-up is a middleware call: each publisher's is kept until :meth:`refresh` finds it
    :data:`SUBSCRIBERS_REFRESH_PERIOD` old."""

    def __init__(self, period: float = SUBSCRIBERS_REFRESH_PERIOD):
        self._period = period
        self._checked = -math.inf
        self._known: dict = {}

    def refresh(self) -> None:
        """Forget the look-ups once they are a period old (call once per message)."""
        now = time.monotonic()
        if now - self._checked >= self._period:
            self._checked, self._known = now, {}

    def has_subscriber(self, publisher) -> bool:
        known = self._known.get(publisher)
        if known is None:
            known = self._known[publisher] = publisher.get_subscription_count() > 0
        return known
