"""What the robot's sensors report: the true joint state and torques through the profile's
effort source, offset, scale error, noise, quantisation and delay.

Effort of joint i at sample k, before delay (τ_link: link-side torque, τ_m: motor torque at the
joint, both [N·m]; s_i the drawn scale error, o_i the offset [N·m]):

* ``joint_torque_sensor``: e = (1 + s_i) τ_link + o_i   [N·m]
* ``motor_current``:       e = ((1 + s_i) τ_m + o_i) / (N_i k_t,i)   [A] (gear ratio N_i,
  torque constant k_t,i at the motor; τ_m = τ_link + τ_f + armature·q̈ includes friction and
  rotor inertia)

then white noise (1σ ``effort_noise``, in the effort's unit), quantisation to ``effort_step``
(round to nearest) and a delay of ``effort_delay`` samples (the first sample is repeated until
the delay is filled). Positions get noise then quantisation to ``position_step``; velocities
get noise. The measured positions and velocities are also what the controller reads.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from robot_dynamics.simulation.profiles import TrueRobot


@dataclass(frozen=True)
class MeasuredJoints:
    """Published joint state: positions [rad], velocities [rad/s], efforts [N·m] or [A]."""

    positions: np.ndarray
    velocities: np.ndarray
    efforts: np.ndarray


def quantised(values: np.ndarray, step: float) -> np.ndarray:
    """``values`` rounded to the nearest multiple of ``step`` (unchanged when step is 0)."""
    return values if step <= 0.0 else step * np.round(values / step)


class JointSensors:
    """The profile's joint sensors for ``joint_names`` (seeded by the profile seed)."""

    def __init__(self, true_robot: TrueRobot, joint_names: Sequence[str]):
        self.sensors = true_robot.profile.sensors
        self.source = true_robot.profile.effort_source
        drives = [true_robot.drives[name] for name in joint_names]
        self.scale = np.array([1.0 + drive.scale_error for drive in drives])
        self.offset = np.array([drive.offset for drive in drives])
        self.amperes_per_newton_metre = np.array(
            [1.0 / (drive.gear_ratio * drive.torque_constant) for drive in drives]
        )
        self._rng = np.random.default_rng([true_robot.seed, 2])
        self._delayed = deque(maxlen=self.sensors.effort_delay + 1)

    def _noisy(self, values: np.ndarray, sigma: float) -> np.ndarray:
        return (
            values + sigma * self._rng.standard_normal(values.shape)
            if sigma > 0.0
            else values.copy()
        )

    def state(self, positions: np.ndarray, velocities: np.ndarray) -> tuple:
        """(positions, velocities) as measured (noise, position quantisation)."""
        sensors = self.sensors
        return (
            quantised(self._noisy(positions, sensors.position_noise), sensors.position_step),
            self._noisy(velocities, sensors.velocity_noise),
        )

    def effort(self, link_torques: np.ndarray, motor_torques: np.ndarray) -> np.ndarray:
        """The published effort of this sample (module docstring), delay included."""
        sensors = self.sensors
        if self.source == 'motor_current':
            value = (self.scale * motor_torques + self.offset) * self.amperes_per_newton_metre
        else:
            value = self.scale * link_torques + self.offset
        self._delayed.append(
            quantised(self._noisy(value, sensors.effort_noise), sensors.effort_step)
        )
        return self._delayed[0]


class BodySensors:
    """Odometry, IMU and force/torque sensor as the profile's noise, drift and bias make them."""

    def __init__(self, true_robot: TrueRobot):
        self.sensors = true_robot.profile.sensors
        self.ft_bias = np.asarray(true_robot.ft_bias, dtype=float)
        self._rng = np.random.default_rng([true_robot.seed, 3])

    def _noise(self, sigma: float, size: int) -> np.ndarray:
        return sigma * self._rng.standard_normal(size) if sigma > 0.0 else np.zeros(size)

    def odometry(self, time: float, pose: np.ndarray, twist: np.ndarray) -> tuple:
        """(pose [x, y, z, qx, qy, qz, qw], twist [v, ω]) with position noise and a drift of
        ``odom_drift`` [m/s]·t along x, linear velocity noise; orientation and ω exact."""
        sensors = self.sensors
        position = (
            pose[:3]
            + self._noise(sensors.odom_position_noise, 3)
            + np.array([sensors.odom_drift * time, 0, 0])
        )
        linear = twist[:3] + self._noise(sensors.odom_velocity_noise, 3)
        return np.concatenate([position, pose[3:]]), np.concatenate([linear, twist[3:]])

    def imu(self, angular_velocity: np.ndarray, specific_force: np.ndarray) -> tuple:
        """(angular velocity [rad/s], specific force [m/s²]) with the gyro and accelerometer
        noise."""
        sensors = self.sensors
        return (
            angular_velocity + self._noise(sensors.gyro_noise, 3),
            specific_force + self._noise(sensors.accelerometer_noise, 3),
        )

    def ft_wrench(self, wrench: np.ndarray) -> np.ndarray:
        """Force [N] and moment [N·m] with the drawn bias and the noise."""
        sensors = self.sensors
        noise = np.concatenate(
            [self._noise(sensors.ft_force_noise, 3), self._noise(sensors.ft_torque_noise, 3)]
        )
        return wrench + self.ft_bias + noise
