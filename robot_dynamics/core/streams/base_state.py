"""The base's motion from a mounting, an IMU or odometry, at the stamp of a joint state.

Sources (``base_state``; the :class:`~robot_dynamics.core.dynamics.base_motion.BaseMotion` they
give is in the base frame, the URDF's root link):

* ``none``: the base at rest and upright (gravity as the model's ``gravity`` says);
* ``mounting``: at rest with a constant attitude ``base_orientation`` (roll, pitch, yaw [rad]
  of the base in the world): a wall, ceiling or tilted-table mounting;
* ``imu``: sensor_msgs/Imu in a frame rigidly fixed to the base. Its gyro gives ω (rotated into base
  axes, low-passed: :data:`SMOOTHING_TIME`), ω's causal derivative α, and its accelerometer
  (low-passed alike) the specific force at the IMU, carried to the base origin: f_O = f_IMU − α × r
  − ω × (ω × r), r the IMU's position from the base origin. The orientation is not needed (the
  accelerometer already measures gravity) and may be absent (covariance[0] = −1);
* ``odom``: nav_msgs/Odometry, pose of ``child_frame_id`` (a frame rigidly fixed to the base) in the
  world, twist in ``child_frame_id``. Carried to the base origin and low-passed, the body twist (v,
  ω) is differentiated causally (a polynomial fit that follows a quadratic motion without delay):
  a = v̇ + ω × v, α = ω̇, and f = a − R(t)ᵀ g_world with R(t) the base's attitude carried to
  the joint state's stamp t along ω: R(t) = R exp(ω (t − t_odom)) (a base rolling at 0.2 rad/s
  turns 10 mrad in the 50 ms a joint state may lie from the odometry);
* ``odom+imu``: the IMU's ω, α and specific force, as with ``imu`` (the joint torques need
  nothing else); odometry must be fresh as well.

Stale or missing base state gives no motion and a reason (:class:`BaseStateUnavailable`): a
source's newest sample must be within ``max_age`` [s] of the joint state's stamp. A message that
cannot be used raises :class:`BaseStateError` with a counting ``reason`` and changes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.dynamics.base_motion import BaseMotion, rpy_matrix
from robot_dynamics.core.errors import RobotDynamicsError, SettingError
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.small_algebra import cross
from robot_dynamics.core.streams.differentiation import PolynomialDifferentiator

BASE_STATES = ('none', 'mounting', 'odom', 'imu', 'odom+imu')
MAX_BASE_STATE_AGE = 0.05
"""Default largest |stamp difference| [s] between a joint state and the base state used."""
OTHER_CLOCK_GAP = 3600.0
"""[s] Base state and joint states stamped further apart than this are said to come from two
clocks (or a publisher that stopped long ago)."""
DERIVATIVE_WINDOW = 25
"""Samples of the causal polynomial fit that differentiates ω (and the odometry twist)."""
SMOOTHING_TIME = 0.02
"""Time constant [s] of the first-order low-pass on the IMU's ω and specific force and on the
odometry twist, before anything is differentiated: sensor noise is white up to the sensor's
rate, base motion (a vehicle, a deck, a walking body) is slow; 20 ms passes motion up to ~8 Hz
and leaves ~1/6 of a 1 kHz sensor's white noise."""


class _LowPass:
    """First-order low-pass of a vector over uneven stamps: y += (1 − e^(−Δt/T))(x − y)."""

    def __init__(self, time_constant: float):
        self.time_constant = time_constant
        self.value: Optional[np.ndarray] = None
        self._stamp = -math.inf

    def update(self, stamp: float, value: np.ndarray) -> np.ndarray:
        if self.time_constant <= 0.0:
            return np.asarray(value, dtype=float)
        if self.value is None or stamp - self._stamp > 10 * self.time_constant:
            self.value = np.array(value, dtype=float)
        else:
            weight = 1.0 - math.exp(-(stamp - self._stamp) / self.time_constant)
            self.value = self.value + weight * (value - self.value)
        self._stamp = stamp
        return self.value


class BaseStateError(RobotDynamicsError):
    """A base-state message cannot be used; ``reason`` counts it (``unknown_frame``,
    ``non_finite``, ``bad_orientation``, ``bad_stamp``, ``out_of_order``)."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


class BaseStateUnavailable(RobotDynamicsError):
    """No base motion for this stamp (none yet, or too old): the outputs stop; says why."""


@dataclass(frozen=True)
class RigidMount:
    """A frame fixed to the base: ``rotation`` (base ← frame) and ``position`` [m] of its origin
    in the base frame."""

    rotation: np.ndarray
    position: np.ndarray
    is_base: bool = field(init=False)
    """True when the frame sits exactly on the base frame (identity rotation, no offset)."""

    def __post_init__(self):
        on_base = not self.position.any() and np.array_equal(self.rotation, np.eye(3))
        object.__setattr__(self, 'is_base', bool(on_base))


def rigid_mount(robot: RobotModel, frame: str) -> RigidMount:
    """Where ``frame`` (a link or frame of ``robot``) sits on the base; raises
    :class:`BaseStateError` ('unknown_frame') when the model has no such frame or a joint
    moves it relative to the base."""
    model = robot.model
    if not frame or not model.existFrame(frame):
        raise BaseStateError(
            'unknown_frame', f'frame "{frame}" is not a frame of model "{robot.name}"'
        )
    base_joint = 1 if robot.floating_base else 0
    frame_id = robot.frame_id(frame)
    root_id = robot.frame_id(robot.description.root)
    if model.frames[frame_id].parentJoint != base_joint:
        raise BaseStateError(
            'unknown_frame',
            f'frame "{frame}" is moved by a joint: it must be fixed to the base link '
            f'"{robot.description.root}"',
        )
    placement = model.frames[root_id].placement.actInv(model.frames[frame_id].placement)
    return RigidMount(placement.rotation.copy(), placement.translation.copy())


def quaternion_matrix(xyzw: Sequence[float]) -> np.ndarray:
    """Rotation matrix of a quaternion (x, y, z, w), normalised first; raises
    :class:`BaseStateError` ('bad_orientation') for a zero, non-finite or far-from-unit one."""
    values = np.asarray(xyzw, dtype=float).tolist()
    if len(values) != 4:
        raise BaseStateError('bad_orientation', f'orientation {values} is not a quaternion')
    x, y, z, w = values
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    if not abs(norm - 1.0) < 0.1:  # also false for NaN
        raise BaseStateError(
            'bad_orientation', f'orientation quaternion {values} is not a rotation'
        )
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    # the standard expansion (Eigen's Quaternion::toRotationMatrix, term for term)
    tx, ty, tz = 2.0 * x, 2.0 * y, 2.0 * z
    twx, twy, twz = tx * w, ty * w, tz * w
    txx, txy, txz = tx * x, ty * x, tz * x
    tyy, tyz, tzz = ty * y, tz * y, tz * z
    return np.array(
        [
            [1.0 - (tyy + tzz), txy - twz, txz + twy],
            [txy + twz, 1.0 - (txx + tzz), tyz - twx],
            [txz - twy, tyz + twx, 1.0 - (txx + tyy)],
        ]
    )


MAX_ANGULAR_VELOCITY = 1.0e3
"""[rad/s] Largest base angular velocity accepted from an IMU or odometry (a gyro saturates
near 35 rad/s): beyond it a message is corrupt."""
MAX_ACCELERATION = 1.0e4
"""[m/s²] Largest specific force accepted from an IMU (about 1000 g; accelerometers saturate
at a few hundred m/s²)."""
MAX_SPEED = 1.0e3
"""[m/s] Largest base speed accepted from odometry."""


def measured(values, name: str, bound: float, unit: str) -> np.ndarray:
    """``values`` as an array; :class:`BaseStateError` ('non_finite') when one is not finite,
    ('out_of_range') when one is beyond ±``bound`` [``unit``]: no sensor of a robot's base
    reports that, and one such sample would spoil every estimate smoothed over it."""
    array = _finite(values, name)
    if np.max(np.abs(array), initial=0.0) > bound:
        raise BaseStateError(
            'out_of_range', f'{name} {array.tolist()} is beyond ±{bound:g} {unit}: corrupt'
        )
    return array


def _finite(values, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    # One sum proves finiteness unless it overflows; only then look at each entry.
    if not math.isfinite(sum(array.tolist())) and not np.all(np.isfinite(array)):
        raise BaseStateError('non_finite', f'{name} is not finite: {array.tolist()}')
    return array


@dataclass(frozen=True)
class _Reading:
    """One base-state sample, in base axes: angular velocity [rad/s] and acceleration
    [rad/s²]; an IMU's ``specific_force`` at the base origin [m/s²], or odometry's
    ``acceleration`` of the base origin [m/s²] (its specific force a − Rᵀ g needs the attitude
    at the joint state's stamp)."""

    stamp: float
    angular_velocity: np.ndarray
    angular_acceleration: np.ndarray
    specific_force: Optional[np.ndarray] = None
    acceleration: Optional[np.ndarray] = None


@dataclass(frozen=True)
class _Attitude:
    stamp: float
    rotation: np.ndarray  # world ← base

    def at(self, stamp: Optional[float], angular_velocity: np.ndarray) -> np.ndarray:
        """The attitude carried to ``stamp`` [s] (:func:`carried_attitude`); as measured for
        None."""
        if stamp is None:
            return self.rotation
        return carried_attitude(self.rotation, self.stamp, angular_velocity, stamp)


def carried_attitude(
    rotation: np.ndarray, measured_at: float, angular_velocity, stamp: float
) -> np.ndarray:
    """World ← base ``rotation`` measured at ``measured_at`` [s], carried to ``stamp`` [s]
    along the body rate ``angular_velocity`` [rad/s, base axes] held constant:
    R exp(ω (t − t₀))."""
    if stamp == measured_at:
        return rotation
    return rotation @ pin.exp3(np.asarray(angular_velocity) * (stamp - measured_at))


class BaseState:
    """The base-state source ``mode`` (:data:`BASE_STATES`) of ``robot`` (module docstring).

    ``gravity_world`` [m/s²]; ``base_orientation`` rpy [rad] (``mounting``); ``imu_frame``: the
    IMU's frame when its messages name none (or another); ``max_age`` [s]; ``smoothing_time``
    [s]: the low-pass before differentiation (0: none). One stream: the
    ``take_*`` methods and :meth:`motion_at` are called on the same thread."""

    def __init__(
        self,
        mode: str,
        robot: RobotModel,
        gravity_world: Sequence[float],
        base_orientation: Sequence[float] = (0.0, 0.0, 0.0),
        imu_frame: str = '',
        max_age: float = MAX_BASE_STATE_AGE,
        smoothing_time: float = SMOOTHING_TIME,
    ):
        if mode not in BASE_STATES:
            raise SettingError(f'base_state must be one of {BASE_STATES}, got {mode!r}')
        if not 0.0 < max_age < math.inf:
            raise SettingError(f'max_base_state_age must be a positive time [s], got {max_age!r}')
        self.mode, self.robot, self.max_age = mode, robot, float(max_age)
        self.gravity_world = np.asarray(gravity_world, dtype=float)
        self.imu_frame = imu_frame
        self._mounted = BaseMotion.mounted(base_orientation, self.gravity_world)
        self._mounted_attitude = rpy_matrix(base_orientation)
        self._mounts: dict = {}
        self._imu: Optional[_Reading] = None
        self._odom: Optional[_Reading] = None
        self._gyro_rate = PolynomialDifferentiator(DERIVATIVE_WINDOW, 2)
        self._twist_rate = PolynomialDifferentiator(DERIVATIVE_WINDOW, 2)
        if not 0.0 <= smoothing_time < math.inf:
            raise SettingError(
                f'base_state_smoothing must be a time >= 0 s, got {smoothing_time!r}'
            )
        self._imu_smooth = _LowPass(smoothing_time)
        self._odom_smooth = _LowPass(smoothing_time)
        self._imu_attitude: Optional[_Attitude] = None
        self._odom_attitude: Optional[_Attitude] = None
        self._refused: dict = {}  # topic → why its latest message was refused

    @property
    def uses_imu(self) -> bool:
        return self.mode in ('imu', 'odom+imu')

    @property
    def uses_odom(self) -> bool:
        return self.mode in ('odom', 'odom+imu')

    def _mount(self, frame: str) -> RigidMount:
        mount = self._mounts.get(frame)
        if mount is None:
            mount = self._mounts[frame] = rigid_mount(self.robot, frame)
        return mount

    # ------------------------------------------------------------------ inputs
    def take_imu(
        self,
        stamp: float,
        frame: str,
        angular_velocity: Sequence[float],
        linear_acceleration: Sequence[float],
        orientation_xyzw: Optional[Sequence[float]] = None,
    ) -> None:
        """One IMU sample: ``stamp`` [s], ``frame`` (its header.frame_id; ``imu_frame`` wins when
        set), gyro [rad/s] and accelerometer specific force [m/s²] in that frame, and the frame's
        attitude in the world (quaternion x, y, z, w; None or all zeros: not given)."""
        mount = self._mount(self.imu_frame or frame)
        if orientation_xyzw is not None and not any(orientation_xyzw):
            orientation_xyzw = None  # all zeros: an IMU without orientation that did not say so
        attitude = None
        if orientation_xyzw is not None:
            world_imu = quaternion_matrix(_finite(orientation_xyzw, 'IMU orientation'))
            attitude = _Attitude(stamp, world_imu @ mount.rotation.T)
        gyro = mount.rotation @ measured(
            angular_velocity, 'IMU angular_velocity', MAX_ANGULAR_VELOCITY, 'rad/s'
        )
        force = mount.rotation @ measured(
            linear_acceleration, 'IMU linear_acceleration', MAX_ACCELERATION, 'm/s²'
        )
        self._check_order(self._imu, stamp, 'IMU')
        if attitude is not None:
            self._imu_attitude = attitude
        smooth = self._imu_smooth.update(stamp, np.concatenate([gyro, force]))
        gyro, force = smooth[:3], smooth[3:]
        self._gyro_rate.add(stamp, gyro)
        rate = self._gyro_rate.rate()
        alpha = np.zeros(3) if rate is None else rate
        r = mount.position
        force_at_origin = force - cross(alpha, r) - cross(gyro, cross(gyro, r))
        self._imu = _Reading(stamp, gyro, alpha, force_at_origin)

    def take_odom(
        self,
        stamp: float,
        child_frame: str,
        orientation_xyzw: Sequence[float],
        linear_velocity: Sequence[float],
        angular_velocity: Sequence[float],
    ) -> None:
        """One odometry sample: ``stamp`` [s], ``child_frame`` (the twist's frame, fixed to the
        base; empty: the base link), its attitude in the world (quaternion x, y, z, w) and its
        body twist (linear [m/s], angular [rad/s]) in ``child_frame`` axes."""
        mount = self._mount(child_frame or self.robot.description.root)
        world_child = quaternion_matrix(_finite(orientation_xyzw, 'odometry orientation'))
        omega = measured(
            angular_velocity, 'odometry angular velocity', MAX_ANGULAR_VELOCITY, 'rad/s'
        )
        velocity = measured(linear_velocity, 'odometry linear velocity', MAX_SPEED, 'm/s')
        if not mount.is_base:
            omega, velocity = mount.rotation @ omega, mount.rotation @ velocity
            velocity = velocity - cross(omega, mount.position)  # at the base origin
            world_child = world_child @ mount.rotation.T  # world ← base
        self._check_order(self._odom, stamp, 'odometry')
        twist = self._odom_smooth.update(stamp, np.concatenate([velocity, omega]))
        velocity, omega = twist[:3], twist[3:]
        self._twist_rate.add(stamp, twist)
        rate = self._twist_rate.rate()
        rate = np.zeros(6) if rate is None else rate
        self._odom_attitude = _Attitude(stamp, world_child)
        acceleration = rate[:3] + cross(omega, velocity)
        self._odom = _Reading(stamp, omega, rate[3:], acceleration=acceleration)

    @staticmethod
    def _check_order(previous: Optional[_Reading], stamp: float, source: str) -> None:
        if not 0.0 <= stamp < math.inf:
            raise BaseStateError('bad_stamp', f'{source} stamp {stamp} is not a finite time')
        if previous is not None and stamp <= previous.stamp:
            raise BaseStateError(
                'out_of_order',
                f'{source} stamp {stamp:.6f} s is not newer than the last ({previous.stamp:.6f} s)',
            )

    # ------------------------------------------------------------------ output
    def motion_at(self, stamp: float) -> Optional[BaseMotion]:
        """The base motion for a joint state stamped ``stamp`` [s]; None for ``none`` (the
        model's own upright base at rest). Raises :class:`BaseStateUnavailable` when a source
        has no sample yet or its newest is more than ``max_age`` from ``stamp``."""
        if self.mode == 'none':
            return None
        if self.mode == 'mounting':
            return self._mounted
        if self.uses_odom:
            odom = self._fresh(self._odom, stamp, 'odom')
        if self.uses_imu:
            imu = self._fresh(self._imu, stamp, 'imu')
            return BaseMotion(imu.specific_force, imu.angular_velocity, imu.angular_acceleration)
        gravity = self.attitude(stamp).T @ self.gravity_world
        return BaseMotion(
            odom.acceleration - gravity, odom.angular_velocity, odom.angular_acceleration
        )

    def attitude(self, stamp: Optional[float] = None) -> Optional[np.ndarray]:
        """The base's attitude (world ← base rotation) at ``stamp`` [s] (carried there along
        the source's angular velocity; None: as last measured): the IMU's orientation when its
        messages give one, else the odometry's, else the mounting's; None when no source tells
        it (``none``, or an IMU without orientation alone)."""
        if self.uses_imu and self._imu_attitude is not None:
            return self._imu_attitude.at(stamp, self._imu.angular_velocity)
        if self.uses_odom and self._odom_attitude is not None:
            return self._odom_attitude.at(stamp, self._odom.angular_velocity)
        if self.mode == 'mounting':
            return self._mounted_attitude
        return None

    def note_refused(self, topic: str, error: BaseStateError) -> None:
        """Keep why the latest ``topic`` ('imu' or 'odom') message was refused, for the status
        while none has been taken."""
        self._refused[topic] = str(error)

    def _fresh(self, reading: Optional[_Reading], stamp: float, topic: str) -> _Reading:
        if reading is None:
            refused = self._refused.get(topic)
            if refused:
                raise BaseStateUnavailable(
                    f'no usable {topic} message yet (base_state {self.mode}): every one refused, '
                    f'the latest: {refused}'
                )
            raise BaseStateUnavailable(
                f'no {topic} message yet (base_state {self.mode}): no outputs until one arrives'
            )
        age = stamp - reading.stamp
        if abs(age) > self.max_age:
            clocks = (
                ' (over an hour: stamped by another clock than the joint states, simulation '
                "time against wall time or a device's own clock, or its publisher stopped long "
                'ago)'
                if abs(age) > OTHER_CLOCK_GAP
                else ''
            )
            raise BaseStateUnavailable(
                f'the newest {topic} message is {age:+.3f} s from the joint state{clocks} '
                f'(max_base_state_age {self.max_age:g} s): no outputs until it is fresh'
            )
        return reading
