"""sensor_msgs/JointState read from its serialized form.

Both nodes subscribe ``joint_states`` raw and read it here. rclpy's deserializer builds a
Python string per joint name and a Python object per field on every message; a robot's
driver sends the same names in every message, so :class:`JointStateReader` decodes the
names once, keeps the bytes they came from, and on later messages compares those bytes
instead. The values become numpy arrays viewing the message bytes.

The fields, in order (layout rules: :mod:`robot_dynamics.ros.cdr`): header (stamp,
frame_id), ``name`` (a sequence of strings), then ``position``, ``velocity`` and ``effort``
(sequences of float64, the values aligned to 8).

With the parameter ``joint_state_stamps`` ``arrival`` (:data:`JOINT_STATE_STAMPS`) a node
replaces each joint state's stamp by the time it received it (:func:`stamped_on_arrival`), for
drivers that leave the stamps unset or repeat them.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np
from sensor_msgs.msg import JointState

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.streams.joint_states import JointSample
from robot_dynamics.ros import cdr
from robot_dynamics.ros.parameter_schema import ParameterSpec

JOINT_STATE_STAMPS = ParameterSpec(
    'joint_state_stamps',
    'header',
    "'header': a joint state's header stamp is its sampling instant; 'arrival': the node's clock "
    'when the message arrives replaces it (drivers that leave stamps at zero or repeat them; '
    'the transport delay and its jitter then enter q̈)',
    choices=('header', 'arrival'),
)


class JointStateWireError(RobotDynamicsError):
    """Serialized bytes that are not a complete sensor_msgs/JointState."""


class WireJointState(NamedTuple):
    """One joint state as read: the ``sample`` (names, values as read-only float64 arrays,
    stamp [s]) and the header's ``sec``, ``nanosec`` and ``frame_id``."""

    sample: JointSample
    sec: int
    nanosec: int
    frame_id: str


def stamped_on_arrival(message: WireJointState, nanoseconds: int) -> WireJointState:
    """``message`` with the stamp ``nanoseconds`` (the receiving node's clock) in its sample
    and header."""
    sec, nanosec = divmod(nanoseconds, 1_000_000_000)
    return message._replace(
        sample=message.sample._replace(stamp=nanoseconds * 1e-9), sec=sec, nanosec=nanosec
    )


class JointStateReader:
    """Reads serialized sensor_msgs/JointState messages; remembers the last names it decoded
    (one reader per subscription)."""

    def __init__(self):
        self._names_bytes = b''  # the names' bytes, alignment padding zeroed
        self._padding_mask = np.zeros(0, dtype=np.uint8)  # 0 on padding bytes, 0xFF elsewhere
        self._names: tuple = ()

    def read(self, serialized: bytes) -> WireJointState:
        """The joint state in ``serialized``; raises :class:`JointStateWireError` when the bytes
        end early or a string is malformed."""
        order = cdr.byte_order(serialized)
        if order is None:
            return _from_message(cdr.deserialized(serialized, JointState, JointStateWireError))
        try:
            sec, nanosec = cdr.STAMP[order].unpack_from(serialized, cdr.HEADER_BYTES)
            frame_id, offset = cdr.read_string(
                serialized, cdr.HEADER_BYTES + 8, cdr.UINT32[order], JointStateWireError
            )
            names, offset = self._names_at(serialized, cdr.aligned(offset, 4), order)
            rows = []
            for _ in range(3):
                row, offset = _float64_sequence(serialized, offset, order)
                rows.append(row)
        except struct.error:
            raise JointStateWireError(
                f'{len(serialized)} bytes are not a complete sensor_msgs/JointState'
            ) from None
        return WireJointState(
            JointSample(names, rows[0], rows[1], rows[2], sec + nanosec * 1e-9),
            sec,
            nanosec,
            frame_id,
        )

    def _names_at(self, serialized: bytes, offset: int, order: str) -> tuple:
        """(names, offset after them) of the string sequence at ``offset`` (4-aligned): the
        remembered names when the bytes there are those they were decoded from. The alignment
        padding between two names is left out of the comparison: writers need not clear it
        (rmw's serializer leaves whatever its buffer held)."""
        known = self._names_bytes
        end = offset + len(known)
        if known and end <= len(serialized):
            block = np.frombuffer(serialized, np.uint8, len(known), offset) & self._padding_mask
            if block.tobytes() == known:
                return self._names, end
        (count,) = cdr.UINT32[order].unpack_from(serialized, offset)
        if count > len(serialized):  # each name takes at least 4 bytes
            raise JointStateWireError(f'name count {count} exceeds the {len(serialized)} bytes')
        names, padding, end = [], [], offset + 4
        for _ in range(count):
            start = cdr.aligned(end, 4)
            padding.extend(range(end - offset, start - offset))
            name, end = cdr.read_string(serialized, start, cdr.UINT32[order], JointStateWireError)
            names.append(name)
        mask = np.full(end - offset, 0xFF, dtype=np.uint8)
        mask[padding] = 0
        self._padding_mask = mask
        self._names_bytes = (
            np.frombuffer(serialized, np.uint8, end - offset, offset) & mask
        ).tobytes()
        self._names = tuple(names)
        return self._names, end


def effort_values_start(serialized: bytes, order: str) -> int:
    """Offset of the first effort value in the plain-CDR JointState ``serialized`` (byte
    ``order`` '<' or '>')."""
    _, offset = cdr.read_string(
        serialized, cdr.HEADER_BYTES + 8, cdr.UINT32[order], JointStateWireError
    )
    _, offset = JointStateReader()._names_at(serialized, cdr.aligned(offset, 4), order)
    for _ in range(2):  # position, velocity
        _, offset = _float64_sequence(serialized, offset, order)
    efforts, end = _float64_sequence(serialized, offset, order)
    return end - 8 * len(efforts)


def _float64_sequence(serialized: bytes, offset: int, order: str) -> tuple:
    """(values as a read-only float64 array, offset after them) of the sequence whose count is
    at ``offset`` (moved up to 4-alignment first)."""
    offset = cdr.aligned(offset, 4)
    (count,) = cdr.UINT32[order].unpack_from(serialized, offset)
    start = cdr.aligned(offset + 4, 8) if count else offset + 4
    end = start + 8 * count
    if end > len(serialized):
        raise struct.error('short buffer')
    values = np.frombuffer(serialized, cdr.FLOAT64[order], count, start)
    if order == '>':
        values = values.astype(np.float64)
        values.setflags(write=False)
    return values, end


def _from_message(message: JointState) -> WireJointState:
    stamp = message.header.stamp
    sample = JointSample(
        tuple(message.name),
        np.asarray(message.position, dtype=np.float64),
        np.asarray(message.velocity, dtype=np.float64),
        np.asarray(message.effort, dtype=np.float64),
        stamp.sec + stamp.nanosec * 1e-9,
    )
    return WireJointState(sample, stamp.sec, stamp.nanosec, message.header.frame_id)
