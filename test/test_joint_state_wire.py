"""The raw sensor_msgs/JointState reader agrees with rclpy's own deserializer, remembers the
names it decoded only while their bytes are the same, and refuses malformed bytes."""

import struct

import numpy as np
import pytest

pytest.importorskip('rclpy')
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from robot_dynamics.ros.joint_state_wire import (  # noqa: E402
    JointStateReader,
    JointStateWireError,
)


def _joint_state(rng, frame_id: str, names: list, fields=(True, True, True)) -> JointState:
    message = JointState()
    message.header.stamp.sec = int(rng.integers(0, 2**31))
    message.header.stamp.nanosec = int(rng.integers(0, 10**9))
    message.header.frame_id = frame_id
    message.name = names
    count = len(names)
    message.position = rng.normal(size=count).tolist() if fields[0] else []
    message.velocity = rng.normal(size=count).tolist() if fields[1] else []
    message.effort = rng.normal(size=count).tolist() if fields[2] else []
    return message


def _read_equals_rclpy(read, serialized: bytes) -> None:
    expected = deserialize_message(serialized, JointState)
    sample = read.sample
    assert sample.names == tuple(expected.name)
    for got, field in zip(
        (sample.positions, sample.velocities, sample.efforts),
        (expected.position, expected.velocity, expected.effort),
    ):
        assert got.dtype == np.float64 and got.tolist() == list(field)
    stamp = expected.header.stamp
    assert (read.sec, read.nanosec, read.frame_id) == (
        stamp.sec,
        stamp.nanosec,
        expected.header.frame_id,
    )
    assert sample.stamp == stamp.sec + stamp.nanosec * 1e-9


# Frame ids and names of every length modulo 8 move each field across every alignment padding.
NAMES = [f'joint_{"x" * (index % 9)}{index}' for index in range(12)]


@pytest.mark.parametrize('frame_id', ['', 'b', 'base', 'base_link', 'wörld', 'a' * 13])
@pytest.mark.parametrize(
    'fields', [(True, True, True), (True, False, False), (True, True, False), (True, False, True)]
)
def test_read_matches_rclpy_deserializer(frame_id, fields):
    rng = np.random.default_rng(len(frame_id))
    serialized = serialize_message(_joint_state(rng, frame_id, NAMES, fields))
    _read_equals_rclpy(JointStateReader().read(serialized), serialized)


def test_no_names_and_one_name():
    reader, rng = JointStateReader(), np.random.default_rng(1)
    for names in ([], ['only'], [], ['ä']):
        serialized = serialize_message(_joint_state(rng, 'base', names))
        _read_equals_rclpy(reader.read(serialized), serialized)


def test_names_are_decoded_again_only_when_their_bytes_change():
    reader, rng = JointStateReader(), np.random.default_rng(2)
    first = reader.read(serialize_message(_joint_state(rng, 'base', NAMES)))
    # Another frame id moves the names to another offset: the same names are recognised there.
    serialized = serialize_message(_joint_state(rng, 'odom_frame', NAMES))
    again = reader.read(serialized)
    assert again.sample.names is first.sample.names
    _read_equals_rclpy(again, serialized)
    renamed = NAMES[:-1] + ['joint_other']
    serialized = serialize_message(_joint_state(rng, 'base', renamed))
    changed = reader.read(serialized)
    assert changed.sample.names == tuple(renamed)
    _read_equals_rclpy(changed, serialized)
    # a prefix of the remembered names is not mistaken for them
    serialized = serialize_message(_joint_state(rng, 'base', renamed[:3]))
    _read_equals_rclpy(reader.read(serialized), serialized)


def _big_endian(message: JointState, padding: bytes = b'\0') -> bytes:
    """The XCDR1 big-endian encoding of ``message``, written out field by field, alignment
    padding filled with ``padding``."""

    def align(buffer, size):
        return buffer + padding * (-(len(buffer) - 4) % size)

    def string(buffer, text):
        data = text.encode() + b'\0'
        return align(buffer, 4) + struct.pack('>I', len(data)) + data

    def doubles(buffer, values):
        buffer = align(buffer, 4) + struct.pack('>I', len(values))
        return align(buffer, 8) + struct.pack(f'>{len(values)}d', *values) if values else buffer

    buffer = b'\x00\x00\x00\x00' + struct.pack(
        '>iI', message.header.stamp.sec, message.header.stamp.nanosec
    )
    buffer = string(buffer, message.header.frame_id)
    buffer = align(buffer, 4) + struct.pack('>I', len(message.name))
    for name in message.name:
        buffer = string(buffer, name)
    for values in (message.position, message.velocity, message.effort):
        buffer = doubles(buffer, list(values))
    return buffer


def test_reads_big_endian_cdr():
    message = _joint_state(np.random.default_rng(3), 'base', NAMES, (True, False, True))
    read = JointStateReader().read(_big_endian(message))
    assert read.sample.names == tuple(message.name)
    assert read.sample.positions.tolist() == list(message.position)
    assert read.sample.velocities.tolist() == []
    assert read.sample.efforts.tolist() == list(message.effort)
    assert (read.sec, read.nanosec, read.frame_id) == (
        message.header.stamp.sec,
        message.header.stamp.nanosec,
        'base',
    )


def test_names_are_recognised_whatever_their_padding_holds():
    """Writers need not clear alignment padding: garbage there is not a change of names."""
    reader = JointStateReader()
    message = _joint_state(np.random.default_rng(4), 'base', NAMES)
    first = reader.read(_big_endian(message))
    again = reader.read(_big_endian(message, padding=b'\xab'))
    assert again.sample.names is first.sample.names == tuple(NAMES)
    assert again.sample.positions.tolist() == list(message.position)


@pytest.mark.parametrize('keep', [0, 3, 11, 20, 60, 200, 400])
def test_truncated_bytes_raise_a_wire_error(keep):
    serialized = serialize_message(_joint_state(np.random.default_rng(5), 'base', NAMES))
    assert len(serialized) > 400
    with pytest.raises(JointStateWireError):
        JointStateReader().read(serialized[:keep])


def test_lengths_beyond_the_buffer_raise_a_wire_error():
    serialized = bytearray(serialize_message(_joint_state(np.random.default_rng(6), '', NAMES)))
    frame_end = 4 + 8 + 4  # stamp, then the empty frame id's length (and no byte after it)
    (frame_length,) = struct.unpack_from('<I', serialized, 12)
    names_at = 4 + -(-(frame_end + frame_length - 4) // 4) * 4
    huge_count = bytearray(serialized)
    huge_count[names_at : names_at + 4] = struct.pack('<I', 10**6)
    with pytest.raises(JointStateWireError, match='name count'):
        JointStateReader().read(bytes(huge_count))
    huge_string = bytearray(serialized)
    huge_string[12:16] = struct.pack('<I', 10**6)  # header.frame_id length
    with pytest.raises(JointStateWireError, match='NUL-terminated'):
        JointStateReader().read(bytes(huge_string))


def test_corrupted_bytes_give_a_joint_state_or_a_wire_error_never_another_error():
    """Every truncation and 2 000 random corruptions of a valid message: the reader answers
    with a joint state or with JointStateWireError (the node counts it), nothing else."""
    rng = np.random.default_rng(7)
    serialized = serialize_message(_joint_state(rng, 'base', NAMES))
    reader = JointStateReader()
    variants = [serialized[:keep] for keep in range(len(serialized))]
    for _ in range(2000):
        corrupted = bytearray(serialized)
        for index in rng.integers(0, len(serialized), size=int(rng.integers(1, 8))):
            corrupted[index] = int(rng.integers(0, 256))
        variants.append(bytes(corrupted))
    answered = 0
    for variant in variants:
        try:
            read = reader.read(variant)
        except JointStateWireError:
            continue
        answered += 1
        assert len(read.sample.names) >= 0 and read.sample.positions.dtype == np.float64
    assert 0 < answered < len(variants)
