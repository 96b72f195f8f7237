"""The output writers' bytes are what rclpy reads back as the message written: every field,
bit for bit, whatever the frame and names do to the alignment."""

import numpy as np
import pytest

pytest.importorskip('rclpy')
from geometry_msgs.msg import PointStamped, Vector3Stamped  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from robot_dynamics.ros.output_bytes import (  # noqa: E402
    EffortMessageWriter,
    Float64ArrayWriter,
    XyzMessageWriter,
)

# Names of every length modulo 8 move the efforts across every alignment padding.
NAMES = [f'joint_{"x" * (index % 9)}{index}' for index in range(12)]
SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 5e-324]


def _effort_message(sec, nanosec, frame_id, names, efforts) -> JointState:
    message = JointState(name=list(names), effort=[float(value) for value in efforts])
    message.header.stamp.sec, message.header.stamp.nanosec = sec, nanosec
    message.header.frame_id = frame_id
    return message


def test_effort_writer_bytes_read_back_by_rclpy_message_after_message():
    """Frames and names of every length modulo 8, changed between messages: every message has
    the length of rclpy's serialization of the same message and rclpy reads back the values
    written, bit for bit (NaN, ±inf, −0.0 and subnormals included)."""
    rng = np.random.default_rng(7)
    writer = EffortMessageWriter()
    for round_index in range(40):
        frame_id = 'f' * int(rng.integers(0, 9))
        names = tuple(NAMES[: int(rng.integers(0, len(NAMES) + 1))])
        for _ in range(3):  # the same names and frame: bytes written in place
            efforts = rng.normal(size=len(names)) * 100.0
            if len(names) and round_index % 4 == 0:
                efforts[rng.integers(0, len(names))] = SPECIALS[round_index % len(SPECIALS)]
            sec, nanosec = int(rng.integers(-(2**31), 2**31)), int(rng.integers(0, 2**32))
            written = writer.serialized(sec, nanosec, frame_id, names, efforts)
            expected = _effort_message(sec, nanosec, frame_id, names, efforts)
            assert isinstance(written, bytes)
            assert len(written) == len(serialize_message(expected))
            back = deserialize_message(written, JointState)
            assert (back.header.stamp.sec, back.header.stamp.nanosec) == (sec, nanosec)
            assert back.header.frame_id == frame_id and tuple(back.name) == names
            assert list(back.position) == [] and list(back.velocity) == []
            assert np.asarray(back.effort).tobytes() == efforts.tobytes()


def test_effort_writer_messages_do_not_share_bytes():
    """A message already handed to a publisher keeps its values when the next one is written."""
    writer = EffortMessageWriter()
    names = tuple(NAMES[:3])
    first = writer.serialized(1, 2, '', names, np.array([1.0, 2.0, 3.0]))
    writer.serialized(3, 4, '', names, np.array([4.0, 5.0, 6.0]))
    assert list(deserialize_message(first, JointState).effort) == [1.0, 2.0, 3.0]


@pytest.mark.parametrize('message_type', [PointStamped, Vector3Stamped])
def test_xyz_writer_bytes_read_back_by_rclpy_message_after_message(message_type):
    """Frames of every length modulo 8, changed between messages: rclpy reads back the stamp,
    the frame and the three values written, bit for bit."""
    rng = np.random.default_rng(11)
    writer = XyzMessageWriter(message_type)
    for round_index in range(30):
        frame_id = 'w' * int(rng.integers(0, 17))
        for _ in range(3):
            xyz = rng.normal(size=3) * 10.0
            xyz[round_index % 3] = SPECIALS[round_index % len(SPECIALS)]
            sec, nanosec = int(rng.integers(-(2**31), 2**31)), int(rng.integers(0, 2**32))
            written = writer.serialized(sec, nanosec, frame_id, xyz)
            expected = message_type()
            expected.header.frame_id = frame_id
            assert len(written) == len(serialize_message(expected))
            back = deserialize_message(written, message_type)
            assert (back.header.stamp.sec, back.header.stamp.nanosec) == (sec, nanosec)
            assert back.header.frame_id == frame_id
            values = back.point if message_type is PointStamped else back.vector
            assert np.array([values.x, values.y, values.z]).tobytes() == xyz.tobytes()


def test_float64_array_writer_bytes_read_back_by_rclpy_message_after_message():
    """Lengths 0 to 12, changed between messages: rclpy reads back the data written bit for bit,
    with no layout (what forward_command_controller takes)."""
    rng = np.random.default_rng(13)
    writer = Float64ArrayWriter()
    for round_index in range(30):
        count = int(rng.integers(0, 13)) if round_index else 0  # empty first
        for _ in range(3):
            data = rng.normal(size=count) * 50.0
            if count:
                data[round_index % count] = SPECIALS[round_index % len(SPECIALS)]
            written = writer.serialized(data)
            assert len(written) == len(serialize_message(Float64MultiArray(data=data.tolist())))
            back = deserialize_message(written, Float64MultiArray)
            assert list(back.layout.dim) == [] and back.layout.data_offset == 0
            assert np.asarray(back.data).tobytes() == data.tobytes()
