"""Output messages as serialized bytes written in place.

An output topic sends the same frame (and joint names) in every message; only the stamp and the
values change. A writer serializes one message with rclpy's serializer, finds where its values
lie in the bytes (layout rules: :mod:`robot_dynamics.ros.cdr`) and from then on writes the stamp
and the values there; rclpy publishers take serialized bytes (``publish(bytes)``), which skips
building the C message from the Python one on every publication.
"""

from __future__ import annotations

import struct

import numpy as np
from geometry_msgs.msg import PointStamped
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header

from robot_dynamics.ros import cdr
from robot_dynamics.ros.joint_state_wire import JointStateWireError, effort_values_start

_POINT = {order: struct.Struct(order + 'ddd') for order in cdr.PLAIN_CDR.values()}


class EffortMessageWriter:
    """Serialized sensor_msgs/JointState messages with ``name`` and ``effort`` only (position
    and velocity empty), for one output: the bytes are rebuilt by rclpy's serializer when the
    names or the frame change, otherwise only the stamp and the efforts are written."""

    def __init__(self):
        self._names: tuple = ()
        self._frame_id = None
        self._buffer = bytearray()
        self._stamp = cdr.STAMP['<']
        self._efforts = np.zeros(0)

    def serialized(
        self, sec: int, nanosec: int, frame_id: str, names: tuple, efforts: np.ndarray
    ) -> bytes:
        """The message's bytes: header (``sec``, ``nanosec``, ``frame_id``), ``names`` and
        ``efforts`` (one per name)."""
        if names is not self._names or frame_id != self._frame_id:
            self._template(frame_id, names)
        self._stamp.pack_into(self._buffer, cdr.HEADER_BYTES, sec, nanosec)
        self._efforts[:] = efforts
        return bytes(self._buffer)

    def _template(self, frame_id: str, names: tuple) -> None:
        """rclpy's bytes for ``names`` and ``frame_id``, and where in them the efforts are."""
        template = serialize_message(
            JointState(
                header=Header(frame_id=frame_id), name=list(names), effort=[0.0] * len(names)
            )
        )
        order = _order(template)
        self._buffer = bytearray(template)
        self._stamp = cdr.STAMP[order]
        self._efforts = np.frombuffer(
            self._buffer, cdr.FLOAT64[order], len(names), effort_values_start(template, order)
        )
        self._names, self._frame_id = names, frame_id


class XyzMessageWriter:
    """Serialized geometry_msgs/PointStamped or Vector3Stamped (``message_type``: a header and
    three float64) messages for one output: the bytes are rebuilt by rclpy's serializer when the
    frame changes, otherwise only the stamp and the three values are written."""

    def __init__(self, message_type=PointStamped):
        self._message_type = message_type
        self._frame_id = None
        self._buffer = bytearray()
        self._stamp = cdr.STAMP['<']
        self._point = _POINT['<']
        self._point_start = 0

    def serialized(self, sec: int, nanosec: int, frame_id: str, xyz) -> bytes:
        """The message's bytes: header (``sec``, ``nanosec``, ``frame_id``) and ``xyz``."""
        if frame_id != self._frame_id:
            self._template(frame_id)
        self._stamp.pack_into(self._buffer, cdr.HEADER_BYTES, sec, nanosec)
        self._point.pack_into(
            self._buffer, self._point_start, float(xyz[0]), float(xyz[1]), float(xyz[2])
        )
        return bytes(self._buffer)

    def _template(self, frame_id: str) -> None:
        template = serialize_message(self._message_type(header=Header(frame_id=frame_id)))
        order = _order(template)
        _, end = cdr.read_string(
            template, cdr.HEADER_BYTES + 8, cdr.UINT32[order], JointStateWireError
        )
        self._buffer = bytearray(template)
        self._stamp, self._point = cdr.STAMP[order], _POINT[order]
        self._point_start = cdr.aligned(end, 8)
        self._frame_id = frame_id


class Float64ArrayWriter:
    """Serialized std_msgs/Float64MultiArray messages without a layout (no dimensions, data
    offset 0), for one output: the bytes are rebuilt by rclpy's serializer when the length
    changes, otherwise only the data are written."""

    def __init__(self):
        self._buffer = bytearray()
        self._data = None

    def serialized(self, data: np.ndarray) -> bytes:
        """The message's bytes with ``data``."""
        if self._data is None or len(data) != len(self._data):
            self._template(len(data))
        self._data[:] = data
        return bytes(self._buffer)

    def _template(self, count: int) -> None:
        template = serialize_message(Float64MultiArray(data=[0.0] * count))
        order = _order(template)
        # layout: the dimensions' count (0) and data_offset, then the data's count
        start = cdr.aligned(cdr.HEADER_BYTES + 12, 8) if count else cdr.HEADER_BYTES + 12
        self._buffer = bytearray(template)
        self._data = np.frombuffer(self._buffer, cdr.FLOAT64[order], count, start)


def _order(serialized: bytes) -> str:
    order = cdr.byte_order(serialized)
    if order is None:
        raise JointStateWireError('rclpy serialized a message in an unknown representation')
    return order
