"""Where centroidal_node takes the base's pose and twist from: its ``base_state`` parameter.

The centroidal quantities need the base pose in the world (pinocchio ``q[0:7]``: position [m],
quaternion x, y, z, w) and the base twist in the base frame (``v[0:6]``: linear [m/s], angular
[rad/s]) at each joint state's stamp. Sources (the names dynamics_node's ``base_state`` uses):

* ``none``: at rest at ``base_pose`` (a fixed base; a floating one is then evaluated as if it
  stood there);
* ``mounting``: at rest at ``base_pose``'s position with the attitude ``base_orientation``
  (roll, pitch, yaw [rad] of the base in the world): a wall, ceiling or tilted-table mounting;
* ``odom`` (the default): nav_msgs/Odometry, pose in the world, twist in the base frame; a
  fixed-base model stands at ``base_pose`` until the first odometry arrives;
* ``imu``: sensor_msgs/Imu in a frame rigidly fixed to the base (the message's ``frame_id``;
  ``imu_frame`` overrides it): its orientation (required) gives the base's attitude, R_world_base =
  R_world_imu R_base_imuᵀ, and its gyro the base's angular velocity, ω_base = R_base_imu ω_imu;
  the position is ``base_pose``'s and the base origin does not translate (an arm on a rolling
  deck or a tilting table);
* ``odom+imu``: position and linear velocity from odometry, attitude and angular velocity from
  the IMU.

A source's sample nearest to the joint state's stamp is used if within ``max_age`` [s], carried
to the joint state's stamp along its own twist held constant (a pose moved by exp(ν Δt) in the
base frame, an IMU attitude by exp(ω Δt)): exact for a base gliding or turning at a constant body
twist, whatever the rates of the two topics; else :class:`BaseSourceUnavailable` says which topic
is missing or stale. A message that cannot be
used raises :class:`~robot_dynamics.core.streams.base_state.BaseStateError` with a counting
reason.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.dynamics.base_motion import rpy_matrix
from robot_dynamics.core.floating_base.centroidal import BaseStateBuffer
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.base_state import (
    BASE_STATES,
    MAX_ANGULAR_VELOCITY,
    BaseStateError,
    BaseStateUnavailable,
    carried_attitude,
    measured,
    quaternion_matrix,
    rigid_mount,
)


class BaseSourceUnavailable(BaseStateUnavailable):
    """No base state for this stamp; ``reason`` counts it (``no_odometry``, ``stale_odometry``,
    ``no_imu``, ``stale_imu``)."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class _Attitude:
    stamp: float
    rotation: np.ndarray  # base → world
    angular_velocity: np.ndarray  # base frame [rad/s]


class CentroidalBaseSource:
    """The base pose and twist of one stream (module docstring). ``floating``: the robot's root
    joint is floating (it needs odometry; a fixed one stands at ``base_pose`` until odometry
    arrives); ``fixed_pose``: ``base_pose`` [x, y, z, qx, qy, qz, qw] (a unit quaternion);
    ``base_orientation``: roll, pitch, yaw [rad]; ``imu_frame``: the IMU's frame when its
    messages name none (or another); ``max_age`` [s]. The model that places the IMU is given by
    :meth:`use_model` (again after each model swap)."""

    def __init__(
        self,
        mode: str,
        floating: bool,
        fixed_pose: Sequence[float],
        base_orientation: Sequence[float] = (0.0, 0.0, 0.0),
        imu_frame: str = '',
        max_age: float = 0.05,
    ):
        if mode not in BASE_STATES:
            raise BaseStateError('bad_setting', f'base_state must be one of {list(BASE_STATES)}')
        self.mode, self.floating, self.imu_frame, self.max_age = mode, floating, imu_frame, max_age
        self._placement: tuple = (None, {})  # (robot, {frame: (rotation, position)}), one reference
        pose = np.asarray(fixed_pose, dtype=float)
        if mode == 'mounting':
            quaternion = pin.Quaternion(rpy_matrix(base_orientation))
            pose = np.concatenate([pose[:3], quaternion.coeffs()])  # coeffs: x, y, z, w
        self.fixed_pose = pose
        self.odometry = BaseStateBuffer()
        self._attitudes: deque = deque(maxlen=32)

    @property
    def uses_odom(self) -> bool:
        return self.mode in ('odom', 'odom+imu')

    @property
    def uses_imu(self) -> bool:
        return self.mode in ('imu', 'odom+imu')

    def take_odom(self, stamp: float, position, quaternion_xyzw, linear, angular) -> None:
        """One odometry sample (pose in the world, twist in the base frame)."""
        self.odometry.add(stamp, position, quaternion_xyzw, linear, angular)

    def take_imu(self, stamp: float, frame: str, orientation_xyzw, angular_velocity) -> None:
        """One IMU sample: orientation of the IMU frame in the world (x, y, z, w; None when the
        message has none) and its gyro [rad/s] in the IMU frame."""
        if not math.isfinite(stamp):
            raise BaseStateError('non_finite', f'IMU stamp {stamp} is not finite')
        if orientation_xyzw is None:
            raise BaseStateError(
                'no_orientation',
                'the IMU gives no orientation (covariance[0] = -1): centroidal_node needs the '
                "base's attitude from it (or use base_state odom)",
            )
        rotation, _ = self._mount(frame)
        gyro = np.asarray(angular_velocity, dtype=float)
        if gyro.shape != (3,):
            raise BaseStateError('non_finite', f'IMU angular velocity {gyro.tolist()} is unusable')
        gyro = measured(gyro, 'IMU angular_velocity', MAX_ANGULAR_VELOCITY, 'rad/s')
        world_imu = quaternion_matrix(orientation_xyzw)
        self._attitudes.append(_Attitude(float(stamp), world_imu @ rotation.T, rotation @ gyro))

    def use_model(self, robot: RobotModel) -> None:
        """Place the IMU frames on ``robot`` from now on (any thread)."""
        self._placement = (robot, {})

    def _mount(self, frame: str) -> tuple:
        robot, mounts = self._placement
        if robot is None:
            raise BaseStateError('no_model', 'no robot model yet: IMU sample not used')
        name = self.imu_frame or frame or robot.description.root
        if name not in mounts:
            mount = rigid_mount(robot, name)
            mounts[name] = (mount.rotation, mount.position)
        return mounts[name]

    def at(self, stamp: float) -> tuple:
        """(pose q[0:7], twist v[0:6]) at ``stamp`` [s], the pose carried from the nearest
        sample's stamp along its twist; raises BaseSourceUnavailable."""
        mode = self.mode
        if mode in ('none', 'mounting'):
            return self.fixed_pose, np.zeros(6)
        pose, twist = self.fixed_pose, np.zeros(6)
        if self.uses_odom:
            odometry = self._nearest_odometry(stamp)
            if odometry is None:
                return self.fixed_pose, np.zeros(6)  # a fixed base before any odometry
            pose, twist = odometry.pose, odometry.twist
            if odometry.stamp != stamp:
                placement = pin.XYZQUATToSE3(pose) * pin.exp6(twist * (stamp - odometry.stamp))
                pose = pin.SE3ToXYZQUAT(placement)
        if self.uses_imu:
            attitude = self._nearest_attitude(stamp)
            rotation = carried_attitude(
                attitude.rotation, attitude.stamp, attitude.angular_velocity, stamp
            )
            quaternion = pin.Quaternion(rotation).coeffs()
            pose = np.concatenate([pose[:3], quaternion])
            twist = np.concatenate([twist[:3], attitude.angular_velocity])
        return pose, twist

    def _nearest_odometry(self, stamp: float):
        buffer = self.odometry
        if buffer.newest_stamp == -math.inf:
            if self.floating:
                raise BaseSourceUnavailable('no_odometry', 'floating base: waiting for odom')
            return None
        state = buffer.nearest(stamp, self.max_age)
        if state is None:
            raise BaseSourceUnavailable(
                'stale_odometry',
                f'no odom within {self.max_age} s of joint state stamp {stamp:.3f} s',
            )
        return state

    def _nearest_attitude(self, stamp: float) -> _Attitude:
        attitudes = self._attitudes
        best = min(attitudes, key=lambda item: abs(item.stamp - stamp), default=None)
        if best is None:
            raise BaseSourceUnavailable('no_imu', f'base_state {self.mode}: waiting for imu')
        if abs(best.stamp - stamp) > self.max_age:
            raise BaseSourceUnavailable(
                'stale_imu', f'no imu within {self.max_age} s of joint state stamp {stamp:.3f} s'
            )
        return best

    def caught_up_until(self) -> float:
        """The stamp [s] up to which every source in use has delivered (inf when none is in
        use; −inf before a needed one's first sample, except a fixed base's odometry): a joint
        state stamped later may still get its base state on another topic (the same control
        tick, two topics racing)."""
        until = math.inf
        newest_odometry = self.odometry.newest_stamp
        if self.uses_odom and (newest_odometry > -math.inf or self.floating):
            until = newest_odometry
        if self.uses_imu:
            until = min(until, self._attitudes[-1].stamp if self._attitudes else -math.inf)
        return until

    @property
    def newest_odometry_stamp(self) -> float:
        """Stamp of the newest odometry sample [s] (−inf before any)."""
        return self.odometry.newest_stamp
