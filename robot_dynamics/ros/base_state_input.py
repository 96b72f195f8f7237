"""dynamics_node's base-state inputs: ``imu`` (sensor_msgs/Imu) and ``odom`` (nav_msgs/Odometry),
subscribed only when ``base_state`` uses them and handed to the live pipeline
(:class:`~robot_dynamics.core.streams.base_state.BaseState`).

A message that cannot be used (a frame the model lacks or one a joint moves, NaN, a zero
quaternion, a field marked unknown by covariance[0] = −1, an old stamp) is skipped and counted
by reason (``imu_<reason>``, ``odom_<reason>``); the stream keeps running on the last good base
state until it is older than ``max_base_state_age``.
"""

from __future__ import annotations

from typing import Callable, Optional

from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import Imu

from robot_dynamics.core.live.live_dynamics import LiveDynamics
from robot_dynamics.core.streams.base_state import BaseStateError
from robot_dynamics.ros.node_log import RejectionCounter
from robot_dynamics.ros.odometry_wire import OdometryWireError, read_odometry
from robot_dynamics.ros.parameter_schema import ParameterSpec, three_angles
from robot_dynamics.ros.topics import JOINT_STATE_QOS, stamp_seconds

BASE_STATE_INPUT_PARAMETERS = (
    ParameterSpec(
        'base_orientation',
        [0.0, 0.0, 0.0],
        'roll, pitch, yaw of the base in the world for base_state mounting',
        'rad',
        check=three_angles,
        requirement='is not 3 finite angles within ±2π [rad] (degrees?)',
    ),
    ParameterSpec(
        'imu_frame',
        '',
        "the IMU's frame (fixed to the base link); empty: the frame_id of its messages",
    ),
)
"""The parameters both nodes read their base state with, besides ``base_state`` itself (whose
default and meaning differ between them)."""

UNKNOWN = -1.0
"""covariance[0] of a sensor_msgs/Imu field the sensor does not provide (REP 145)."""


def vector_tuple(value) -> tuple:
    """(x, y, z) of a geometry_msgs/Vector3 or the vector part of a Quaternion."""
    return (value.x, value.y, value.z)


class BaseStateInput:
    """Subscribes ``imu`` and/or ``odom`` on ``node`` for ``base_state`` and forwards each
    message to the pipeline ``live()`` returns (nothing before a model is loaded)."""

    def __init__(
        self,
        node: Node,
        base_state: str,
        live: Callable[[], Optional[LiveDynamics]],
        rejections: RejectionCounter,
    ):
        self._live, self._rejections = live, rejections
        if base_state in ('imu', 'odom+imu'):
            node.create_subscription(Imu, 'imu', self._on_imu, JOINT_STATE_QOS)
        if base_state in ('odom', 'odom+imu'):
            # raw: odometry_wire reads the fields used (an Odometry object costs ~60 µs to build)
            node.create_subscription(Odometry, 'odom', self._on_odom, JOINT_STATE_QOS, raw=True)

    def _on_imu(self, message: Imu) -> None:
        live = self._live()
        if live is None:
            return
        if UNKNOWN in (
            message.angular_velocity_covariance[0],
            message.linear_acceleration_covariance[0],
        ):
            self._rejections.reject(
                'imu_missing_field',
                'IMU message without angular velocity or linear acceleration (covariance[0] = -1)',
            )
            return
        self._forward(
            'imu',
            live.take_base_imu,
            stamp_seconds(message.header.stamp),
            message.header.frame_id,
            vector_tuple(message.angular_velocity),
            vector_tuple(message.linear_acceleration),
            None
            if message.orientation_covariance[0] == UNKNOWN
            else (*vector_tuple(message.orientation), message.orientation.w),
        )

    def _on_odom(self, serialized: bytes) -> None:
        live = self._live()
        if live is None:
            return
        try:
            odometry = read_odometry(serialized)
        except OdometryWireError as error:
            self._rejections.reject('odom_bad_message', str(error))
            return
        self._forward(
            'odom',
            live.take_base_odom,
            odometry.stamp,
            odometry.child_frame_id,
            odometry.orientation,
            odometry.linear,
            odometry.angular,
        )

    def _forward(self, topic: str, take: Callable, *fields) -> None:
        try:
            take(*fields)
        except BaseStateError as error:
            self._rejections.reject(f'{topic}_{error.reason}', str(error))
        except Exception as error:  # a node never dies from a message
            self._rejections.reject(f'{topic}_internal_error', repr(error))
