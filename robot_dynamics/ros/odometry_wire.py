"""nav_msgs/Odometry read from its serialized form: stamp, frame ids, pose and twist.

Both nodes subscribe ``odom`` raw (``create_subscription(..., raw=True)``) and read
here only the fields they use. Turning the bytes into an ``Odometry`` object costs rclpy
several times what the node's whole computation costs for a sample: the message nests six
sub-messages and two 36-entry covariance arrays, each built as a Python object. The
covariances are not read at all here.

The bytes' layout and what the two readers share: :mod:`robot_dynamics.ros.cdr`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from nav_msgs.msg import Odometry

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.ros import cdr

_POSE_AND_COVARIANCE = 7 + 36
"""Doubles from the pose position to the end of the pose covariance."""
_POSE_AND_TWIST = 2 * _POSE_AND_COVARIANCE - 1
"""Doubles from the pose position to the end of the twist covariance."""

_STRUCTS = {
    order: (
        cdr.STAMP[order],
        cdr.UINT32[order],
        struct.Struct(order + '7d'),
        struct.Struct(order + '6d'),
    )
    for order in cdr.PLAIN_CDR.values()
}


class OdometryWireError(RobotDynamicsError):
    """Serialized bytes that are not a complete nav_msgs/Odometry."""


@dataclass(frozen=True, slots=True)
class OdometryFields:
    """What the nodes read from one nav_msgs/Odometry.

    ``stamp`` [s] (header stamp); ``frame_id`` (the pose's frame) and ``child_frame_id``
    (the twist's frame); ``position`` (x, y, z) [m] and ``orientation`` (x, y, z, w) in
    ``frame_id``; ``linear`` [m/s] and ``angular`` [rad/s] velocity in ``child_frame_id``.
    """

    stamp: float
    frame_id: str
    child_frame_id: str
    position: tuple
    orientation: tuple
    linear: tuple
    angular: tuple


def read_odometry(serialized: bytes) -> OdometryFields:
    """The fields of a serialized nav_msgs/Odometry; raises :class:`OdometryWireError` when the
    bytes end early or a string is malformed."""
    order = cdr.byte_order(serialized)
    if order is None:
        return _from_message(cdr.deserialized(serialized, Odometry, OdometryWireError))
    stamp_struct, length_struct, pose_struct, twist_struct = _STRUCTS[order]
    try:
        sec, nanosec = stamp_struct.unpack_from(serialized, cdr.HEADER_BYTES)
        frame_id, offset = cdr.read_string(
            serialized, cdr.HEADER_BYTES + 8, length_struct, OdometryWireError
        )
        child_frame_id, offset = cdr.read_string(
            serialized, cdr.aligned(offset, 4), length_struct, OdometryWireError
        )
        offset = cdr.aligned(offset, 8)
        if len(serialized) < offset + 8 * _POSE_AND_TWIST:
            raise struct.error('short buffer')
        pose = pose_struct.unpack_from(serialized, offset)
        twist = twist_struct.unpack_from(serialized, offset + 8 * _POSE_AND_COVARIANCE)
    except struct.error:
        raise OdometryWireError(
            f'{len(serialized)} bytes are not a complete nav_msgs/Odometry'
        ) from None
    return OdometryFields(
        sec + nanosec * 1e-9, frame_id, child_frame_id, pose[:3], pose[3:], twist[:3], twist[3:]
    )


def _from_message(message: Odometry) -> OdometryFields:
    stamp, pose, twist = message.header.stamp, message.pose.pose, message.twist.twist
    return OdometryFields(
        stamp.sec + stamp.nanosec * 1e-9,
        message.header.frame_id,
        message.child_frame_id,
        (pose.position.x, pose.position.y, pose.position.z),
        (pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w),
        (twist.linear.x, twist.linear.y, twist.linear.z),
        (twist.angular.x, twist.angular.y, twist.angular.z),
    )
