"""What the nodes' raw message readers (:mod:`~robot_dynamics.ros.joint_state_wire`,
:mod:`~robot_dynamics.ros.odometry_wire`) and output writers
(:mod:`~robot_dynamics.ros.output_bytes`) share about serialized ROS 2 messages.

The bytes are the standard OMG CDR (XCDR1) encapsulation rmw implementations use for ROS 2
messages: a 4-byte header (representation id 0x0000 big-endian or 0x0001 little-endian, two
option bytes), then the fields in declaration order, each aligned to its own size counted
from the end of that header; a string is a uint32 length (the terminating NUL included)
followed by its bytes; a sequence is a uint32 count followed by its elements (OMG "Extensible
and Dynamic Topic Types for DDS" 1.3, section 7.4.3). Any other representation goes to rclpy's
own deserializer (:func:`deserialized`), so nothing depends on the readers knowing it.
"""

from __future__ import annotations

import struct

import numpy as np
from rclpy.serialization import deserialize_message

PLAIN_CDR = {b'\x00\x00': '>', b'\x00\x01': '<'}
"""XCDR1 representation id (the first two bytes) → struct byte order."""

HEADER_BYTES = 4
"""Bytes of the encapsulation header; alignment counts from its end."""

STAMP = {order: struct.Struct(order + 'iI') for order in PLAIN_CDR.values()}
"""Per byte order: a std_msgs/Header's stamp (int32 sec, uint32 nanosec), at HEADER_BYTES."""
UINT32 = {order: struct.Struct(order + 'I') for order in PLAIN_CDR.values()}
"""Per byte order: a string length or a sequence count."""
FLOAT64 = {order: np.dtype(order + 'f8') for order in PLAIN_CDR.values()}
"""Per byte order: the dtype of float64 values."""


def byte_order(serialized: bytes):
    """The struct byte order ('<' or '>') of XCDR1 bytes, None for any other representation."""
    return PLAIN_CDR.get(bytes(serialized[:2]))


def aligned(offset: int, size: int) -> int:
    """``offset`` (counted from the buffer start) moved up to a multiple of ``size`` counted
    from the end of the encapsulation header."""
    return HEADER_BYTES + -(-(offset - HEADER_BYTES) // size) * size


def read_string(serialized: bytes, offset: int, length_struct: struct.Struct, error: type) -> tuple:
    """(text, offset after it) of the CDR string at ``offset``; raises ``error`` when it is not
    a NUL-terminated string within the bytes (struct.error when its length does not fit)."""
    (length,) = length_struct.unpack_from(serialized, offset)
    start, end = offset + 4, offset + 4 + length
    if length == 0:  # an empty string without its NUL, as some writers send it
        return '', start
    if end > len(serialized) or serialized[end - 1] != 0:
        raise error(
            f'string of {length} bytes at offset {offset} is not a NUL-terminated string within '
            f'the {len(serialized)} bytes'
        )
    return bytes(serialized[start : end - 1]).decode('utf-8', errors='replace'), end


def deserialized(serialized: bytes, message_type, error: type):
    """rclpy's ``message_type`` object of ``serialized``; raises ``error`` for bytes it cannot
    read (rclpy raises its own error types)."""
    try:
        return deserialize_message(serialized, message_type)
    except Exception as reason:
        name = f"{message_type.__module__.split('.')[0]}/{message_type.__name__}"
        raise error(f'bytes are not a {name}: {reason}') from None
