"""dynamics_node's outputs: a :class:`~robot_dynamics.core.live.live_dynamics.LiveResult` and the
effective-mass reading turned into messages and published.

* torque topics (sensor_msgs/JointState: ``name`` in model order, ``effort`` [N·m / N], stamp
  copied from the input): ``~/gravity_torques``, ``~/inverse_dynamics_torques``,
  ``~/external_torques`` (τ_ext = J(q)ᵀ F, the torques the environment applies, by either route);
* ``~/contact`` (std_msgs/Bool, on every change and at ``contact_rate`` while joint states with
  efforts flow and thresholds exist: the stream publishes it, no timer), ``~/contact_ratio``
  (sensor_msgs/JointState, ``effort`` = |τ_ext| / threshold per joint, stamp copied from the
  input), ``~/external_wrench`` (geometry_msgs/WrenchStamped in ``wrench_frame``: force [N] and
  torque [N·m] on that link at its origin, in its axes; computed only while subscribed);
* ``~/gravity_command`` (std_msgs/Float64MultiArray): g(q) in ``command_joints`` order (see
  :meth:`~robot_dynamics.core.live.live_dynamics.LiveDynamics.gravity_command`);
* per foot of ``contact_frames``: ``~/feet/<frame>/force`` (geometry_msgs/Vector3Stamped, the
  ground's force on the foot [N] in world-aligned axes: ``frame_id`` = ``world_frame``; a free
  vector, it acts at the foot's contact point) and ``~/feet/<frame>/contact`` (std_msgs/Bool);
  ``~/cop`` (geometry_msgs/PointStamped, the centre of pressure of the feet in contact [m] in the
  root link's frame, published while a foot is in contact); stamps copied from the input;
* ``~/effective_mass`` (geometry_msgs/Vector3Stamped): ``header.stamp`` = the joint state's
  stamp, ``header.frame_id`` = the frame whose origin the figures are for, ``vector.x`` = m_u
  [kg] along the direction u of the origin's velocity (the vertical at rest), ``vector.y`` = the
  speed |v| [m/s], ``vector.z`` = E = ½ m_u (uᵀ v)² [J].

Every stream output is published only while a subscription is matched (looked up once per
:data:`~robot_dynamics.ros.topics.SUBSCRIBERS_REFRESH_PERIOD`) and reuses one message or, for
the torque, command, feet and centre-of-pressure topics, its serialized bytes
(:mod:`~robot_dynamics.ros.output_bytes`).
"""

from __future__ import annotations

import math
import time
from typing import Optional

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PointStamped, Vector3Stamped, WrenchStamped
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64MultiArray

from robot_dynamics.core.live.effective_mass_reading import EffectiveMassReading
from robot_dynamics.core.live.live_dynamics import LiveResult
from robot_dynamics.ros.output_bytes import (
    EffortMessageWriter,
    Float64ArrayWriter,
    XyzMessageWriter,
)
from robot_dynamics.ros.topics import SENSOR_QOS, SubscribedOutputs, create_output_publisher

CONTACT_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


class TorqueTopic:
    """One torque output (sensor_msgs/JointState, ``effort`` in model order), published only
    while a subscription is matched (``outputs``), as bytes written in place
    (:class:`~robot_dynamics.ros.output_bytes.EffortMessageWriter`)."""

    def __init__(self, node: Node, topic: str, outputs: SubscribedOutputs):
        self.publisher = create_output_publisher(node, JointState, topic, SENSOR_QOS)
        self._outputs = outputs
        self._writer = EffortMessageWriter()

    def publish(self, stamp, names: tuple, torques: Optional[np.ndarray]) -> None:
        """``torques`` with the ``stamp`` (``sec``, ``nanosec``, ``frame_id``) of the input."""
        if torques is None or not self._outputs.has_subscriber(self.publisher):
            return
        self.publisher.publish(
            self._writer.serialized(stamp.sec, stamp.nanosec, stamp.frame_id, names, torques)
        )


class CommandTopic:
    """``~/gravity_command`` (std_msgs/Float64MultiArray, ``data`` in ``command_joints`` order,
    no layout: what forward_command_controller and JointGroupEffortController take), published
    only while a subscription is matched, as bytes written in place."""

    def __init__(self, node: Node, outputs: SubscribedOutputs):
        self.publisher = create_output_publisher(
            node, Float64MultiArray, '~/gravity_command', SENSOR_QOS
        )
        self._outputs = outputs
        self._writer = Float64ArrayWriter()

    def wanted(self) -> bool:
        return self._outputs.has_subscriber(self.publisher)

    def publish(self, command: Optional[np.ndarray]) -> None:
        if command is None:
            return
        self.publisher.publish(self._writer.serialized(command))


class ContactTopics:
    """``~/contact``, ``~/contact_ratio`` and ``~/external_wrench`` (module docstring)."""

    def __init__(self, node: Node, contact_rate: float, outputs: SubscribedOutputs):
        self._outputs = outputs
        self._period = 1.0 / contact_rate
        self._contact_pub = create_output_publisher(node, Bool, '~/contact', CONTACT_QOS)
        self._ratio_pub = create_output_publisher(node, JointState, '~/contact_ratio', SENSOR_QOS)
        self._wrench_pub = create_output_publisher(
            node, WrenchStamped, '~/external_wrench', SENSOR_QOS
        )
        self._ratio_writer, self._wrench_message = EffortMessageWriter(), WrenchStamped()
        self._next_contact = 0.0  # monotonic time [s] of the next periodic ~/contact

    def wants_wrench(self) -> bool:
        """Whether ~/external_wrench has a subscriber (the wrench is computed only then)."""
        return self._outputs.has_subscriber(self._wrench_pub)

    def publish(self, stamp, result: LiveResult, wrench_frame: str) -> None:
        """The contact outputs of ``result``, with the input's ``stamp`` (``sec``,
        ``nanosec``, ``frame_id``)."""
        contact = result.contact
        if contact is not None:
            if self._outputs.has_subscriber(self._ratio_pub):
                self._ratio_pub.publish(
                    self._ratio_writer.serialized(
                        stamp.sec,
                        stamp.nanosec,
                        stamp.frame_id,
                        result.joint_names,
                        contact.ratios,
                    )
                )
            now = time.monotonic()
            if contact.changed or now >= self._next_contact:
                self._contact_pub.publish(Bool(data=contact.in_contact))
                self._next_contact = now + self._period
        estimate = result.wrench
        if estimate is not None:
            message = self._wrench_message
            message.header.stamp = Time(sec=stamp.sec, nanosec=stamp.nanosec)
            message.header.frame_id = wrench_frame
            force, torque = message.wrench.force, message.wrench.torque
            force.x, force.y, force.z = (float(x) for x in estimate.force)
            torque.x, torque.y, torque.z = (float(x) for x in estimate.moment)
            self._wrench_pub.publish(message)


class FeetTopics:
    """``~/feet/<frame>/force``, ``~/feet/<frame>/contact`` and ``~/cop`` (module docstring)
    for the feet ``frames``; none without feet."""

    def __init__(self, node: Node, frames: tuple, world_frame: str, outputs: SubscribedOutputs):
        self._world_frame = world_frame
        self._outputs = outputs
        self._force_pubs = [
            create_output_publisher(node, Vector3Stamped, f'~/feet/{frame}/force', SENSOR_QOS)
            for frame in frames
        ]
        self._contact_pubs = [
            create_output_publisher(node, Bool, f'~/feet/{frame}/contact', SENSOR_QOS)
            for frame in frames
        ]
        self._cop_pub = (
            create_output_publisher(node, PointStamped, '~/cop', SENSOR_QOS) if frames else None
        )
        self._force_writers = [XyzMessageWriter(Vector3Stamped) for _ in frames]
        self._cop_writer = XyzMessageWriter(PointStamped)

    def publish(self, stamp, result: LiveResult, root_link: str) -> None:
        """The feet of ``result``, with the input's ``stamp`` (``sec``, ``nanosec``)."""
        feet = result.feet
        if feet is None:
            return
        sec, nanosec, world = stamp.sec, stamp.nanosec, self._world_frame
        subscribed = self._outputs.has_subscriber
        for publisher, writer, force in zip(self._force_pubs, self._force_writers, feet.forces):
            if subscribed(publisher):
                publisher.publish(writer.serialized(sec, nanosec, world, force))
        for publisher, contact in zip(self._contact_pubs, feet.contact):
            if subscribed(publisher):
                publisher.publish(Bool(data=contact))
        if feet.cop is not None and subscribed(self._cop_pub):
            self._cop_pub.publish(self._cop_writer.serialized(sec, nanosec, root_link, feet.cop))


def effective_mass_message(reading: EffectiveMassReading) -> Vector3Stamped:
    """``~/effective_mass`` for a publishable ``reading`` (module docstring)."""
    value = reading.value
    message = Vector3Stamped()
    message.header.frame_id = reading.frame
    message.header.stamp = _time(value.time)
    message.vector.x, message.vector.y, message.vector.z = (
        float(value.mass),
        value.speed,
        float(value.energy),
    )
    return message


def _time(seconds: float) -> Time:
    whole = math.floor(seconds)
    nanoseconds = min(int(round((seconds - whole) * 1e9)), 999_999_999)
    return Time(sec=int(whole), nanosec=nanoseconds)
