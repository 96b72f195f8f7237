"""The raw nav_msgs/Odometry reader agrees with rclpy's own deserializer field by field."""

import struct

import numpy as np
import pytest

pytest.importorskip('rclpy')
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402

from robot_dynamics.ros.odometry_wire import OdometryWireError, read_odometry  # noqa: E402


def _odometry(rng, frame_id: str, child_frame_id: str) -> Odometry:
    message = Odometry()
    message.header.stamp.sec, message.header.stamp.nanosec = (
        int(rng.integers(0, 2**31)),
        int(rng.integers(0, 10**9)),
    )
    message.header.frame_id, message.child_frame_id = frame_id, child_frame_id
    pose, twist = message.pose.pose, message.twist.twist
    pose.position.x, pose.position.y, pose.position.z = rng.normal(size=3).tolist()
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = rng.normal(
        size=4
    ).tolist()
    twist.linear.x, twist.linear.y, twist.linear.z = rng.normal(size=3).tolist()
    twist.angular.x, twist.angular.y, twist.angular.z = rng.normal(size=3).tolist()
    message.pose.covariance = rng.normal(size=36)
    message.twist.covariance = rng.normal(size=36)
    return message


def _expected(message: Odometry) -> tuple:
    pose, twist = message.pose.pose, message.twist.twist
    return (
        message.header.stamp.sec + message.header.stamp.nanosec * 1e-9,
        message.header.frame_id,
        message.child_frame_id,
        (pose.position.x, pose.position.y, pose.position.z),
        (pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w),
        (twist.linear.x, twist.linear.y, twist.linear.z),
        (twist.angular.x, twist.angular.y, twist.angular.z),
    )


# Frame ids of every length modulo 8 move the pose across each possible alignment padding.
FRAME_IDS = [
    ('', ''),
    ('odom', 'base'),
    ('w', 'base_link'),
    ('world_frame', ''),
    ('odóm', 'bäse_link_7'),
    ('a' * 13, 'b' * 6),
    ('/map', 'c' * 31),
]


@pytest.mark.parametrize('frame_id,child_frame_id', FRAME_IDS)
def test_read_odometry_matches_rclpy_deserializer(frame_id, child_frame_id):
    rng = np.random.default_rng(len(frame_id) * 7 + len(child_frame_id))
    message = _odometry(rng, frame_id, child_frame_id)
    serialized = serialize_message(message)
    fields = read_odometry(serialized)
    assert (
        fields.stamp,
        fields.frame_id,
        fields.child_frame_id,
        fields.position,
        fields.orientation,
        fields.linear,
        fields.angular,
    ) == _expected(deserialize_message(serialized, Odometry))


def _big_endian(message: Odometry) -> bytes:
    """The XCDR1 big-endian encoding of ``message``, written out field by field."""

    def string(text, buffer):
        data = text.encode() + b'\0'
        return buffer + struct.pack('>I', len(data)) + data

    def align(buffer, size):
        return buffer + b'\0' * (-(len(buffer) - 4) % size)

    buffer = b'\x00\x00\x00\x00' + struct.pack(
        '>iI', message.header.stamp.sec, message.header.stamp.nanosec
    )
    buffer = align(string(message.header.frame_id, buffer), 4)
    buffer = align(string(message.child_frame_id, buffer), 8)
    pose, twist = message.pose.pose, message.twist.twist
    buffer += struct.pack(
        '>7d',
        pose.position.x,
        pose.position.y,
        pose.position.z,
        pose.orientation.x,
        pose.orientation.y,
        pose.orientation.z,
        pose.orientation.w,
    )
    buffer += struct.pack('>36d', *message.pose.covariance)
    buffer += struct.pack(
        '>6d',
        twist.linear.x,
        twist.linear.y,
        twist.linear.z,
        twist.angular.x,
        twist.angular.y,
        twist.angular.z,
    )
    return buffer + struct.pack('>36d', *message.twist.covariance)


def test_read_odometry_reads_big_endian_cdr():
    message = _odometry(np.random.default_rng(3), 'odom', 'base_link')
    fields = read_odometry(_big_endian(message))
    assert (
        fields.stamp,
        fields.frame_id,
        fields.child_frame_id,
        fields.position,
        fields.orientation,
        fields.linear,
        fields.angular,
    ) == _expected(message)


@pytest.mark.parametrize('keep', [0, 3, 11, 20, 100, 400, 723])
def test_truncated_bytes_raise_a_wire_error(keep):
    serialized = serialize_message(_odometry(np.random.default_rng(5), 'odom', 'base_link'))
    with pytest.raises(OdometryWireError):
        read_odometry(serialized[:keep])


def test_a_string_length_beyond_the_buffer_raises_a_wire_error():
    serialized = bytearray(serialize_message(_odometry(np.random.default_rng(6), 'odom', 'base')))
    serialized[12:16] = struct.pack('<I', 10**6)  # header.frame_id length
    with pytest.raises(OdometryWireError, match='NUL-terminated'):
        read_odometry(bytes(serialized))
