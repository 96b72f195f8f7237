"""nav_msgs/Odometry read from its serialized form: stamp, frame ids, pose and twist.

Both nodes subscribe ``odom`` raw (``create_subscription(..., raw=True)``) and read
here only the fields they use. Turning the bytes into an ``Odometry`` object costs rclpy
several times what the node's whole computation costs for a sample: the message nests six
sub-messages and two 36-entry covariance arrays, each built as a Python object. The
covariances are not read at all here.

The bytes are the standard OMG CDR (XCDR1) encapsulation rmw implementations use for ROS 2
messages: a 4-byte header (representation id 0x0000 big-endian or 0x0001 little-endian, two
option bytes), then the fields in declaration order, each aligned to its own size counted
from the end of that header; a string is a uint32 length (the terminating NUL included)
followed by its bytes (OMG "Extensible and Dynamic Topic Types for DDS" 1.3, section 7.4.3;
nav_msgs/Odometry and its parts as defined in common_interfaces). Any other representation
is handed to rclpy's own deserializer, so nothing depends on this reader knowing it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message

from robot_dynamics.core.errors import RobotDynamicsError

_PLAIN_CDR = {b'\x00\x00': '>', b'\x00\x01': '<'}
"""XCDR1 representation id → struct byte order."""

_HEADER_BYTES = 4
_POSE_AND_COVARIANCE = 7 + 36
"""Doubles from the pose position to the end of the pose covariance."""
_POSE_AND_TWIST = 2 * _POSE_AND_COVARIANCE - 1
"""Doubles from the pose position to the end of the twist covariance."""

_STRUCTS = {
    order: (
        struct.Struct(order + 'iI'),
        struct.Struct(order + 'I'),
        struct.Struct(order + '7d'),
        struct.Struct(order + '6d'),
    )
    for order in _PLAIN_CDR.values()
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
    order = _PLAIN_CDR.get(bytes(serialized[:2]))
    if order is None:
        return _from_message(_deserialized(serialized))
    stamp_struct, length_struct, pose_struct, twist_struct = _STRUCTS[order]
    try:
        sec, nanosec = stamp_struct.unpack_from(serialized, _HEADER_BYTES)
        frame_id, offset = _string(serialized, _HEADER_BYTES + 8, length_struct)
        child_frame_id, offset = _string(serialized, _aligned(offset, 4), length_struct)
        offset = _aligned(offset, 8)
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


def _aligned(offset: int, size: int) -> int:
    """``offset`` (counted from the buffer start) moved up to a multiple of ``size`` counted
    from the end of the encapsulation header."""
    return _HEADER_BYTES + -(-(offset - _HEADER_BYTES) // size) * size


def _string(serialized: bytes, offset: int, length_struct: struct.Struct) -> tuple:
    """(text, offset after it) of the CDR string at ``offset``."""
    (length,) = length_struct.unpack_from(serialized, offset)
    start, end = offset + 4, offset + 4 + length
    if length == 0:  # an empty string without its NUL, as some writers send it
        return '', start
    if end > len(serialized) or serialized[end - 1] != 0:
        raise OdometryWireError(
            f'string of {length} bytes at offset {offset} is not a NUL-terminated string within '
            f'the {len(serialized)} bytes'
        )
    return bytes(serialized[start : end - 1]).decode('utf-8', errors='replace'), end


def _deserialized(serialized: bytes) -> Odometry:
    try:
        return deserialize_message(serialized, Odometry)
    except Exception as error:  # rclpy raises its own error types for bad bytes
        raise OdometryWireError(f'bytes are not a nav_msgs/Odometry: {error}') from None


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
