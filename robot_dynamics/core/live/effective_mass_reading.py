"""The effective mass at the tool point for one live joint state, with what makes it undefined.

m_u [kg] along the direction u of the frame origin's linear velocity v, the speed |v| [m/s] and
the energy E = ½ m_u (uᵀ v)² [J] a collision along u can transfer
(:mod:`~robot_dynamics.core.dynamics.effective_mass`). While |v| < :data:`REST_SPEED` the
direction of motion is noise, so u is the vertical, up (−g/|g|, world frame), instead (E ≈ 0).
Fixed-base models only; velocities are needed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from robot_dynamics.core.dynamics.effective_mass import (
    EffectiveMass,
    EffectiveMassError,
    effective_mass_at,
)
from robot_dynamics.core.live.status import OK, WARN, LiveStatus
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.live_torques import TorqueSample

REST_SPEED = 0.005
"""Frame speed [m/s] below which the frame is taken as standing still: its velocity direction is
noise, so the effective mass is given along the vertical (up, against gravity) instead."""


@dataclass(frozen=True)
class EffectiveMassReading:
    """The effective mass at ``frame`` for the joint state stamped ``stamp`` [s]: ``value`` (None
    when not computed), ``at_rest`` (u is the vertical), and, when it is not computed or not
    publishable, the ``problem`` in words at ``level``."""

    frame: str = ''
    value: Optional[EffectiveMass] = None
    at_rest: bool = False
    problem: str = ''
    level: str = OK
    stamp: Optional[float] = None

    @property
    def publishable(self) -> bool:
        """A finite m_u to publish."""
        return self.value is not None and math.isfinite(self.value.mass)

    def status(self) -> LiveStatus:
        """What /diagnostics says about this reading."""
        values = {'rest_speed_m_s': REST_SPEED, 'frame': self.frame}
        value = self.value
        if value is not None:
            values.update(
                effective_mass_kg=value.mass,
                speed_m_s=value.speed,
                collision_energy_j=value.energy,
                stamp_s=value.time,
                direction=' '.join(f'{x:.4f}' for x in value.direction),
                direction_source='vertical (at rest)' if self.at_rest else 'velocity',
            )
        if self.problem:
            return LiveStatus(self.level, self.problem, values)
        along = (
            f'along the vertical: at rest (|v| < {REST_SPEED:g} m/s), no direction of motion'
            if self.at_rest
            else 'along the velocity'
        )
        return LiveStatus(
            OK,
            f'{value.mass:.3f} kg at {self.frame} {along}; {value.speed:.3f} m/s, '
            f'{value.energy:.3g} J',
            values,
        )


def effective_mass_reading(
    robot: RobotModel, sample: TorqueSample, frame: str
) -> EffectiveMassReading:
    """The effective mass at ``frame``'s origin for ``sample`` (along its velocity, or the
    vertical at rest), or the reason there is none."""
    stamp = sample.stamp
    if robot.floating_base:
        return EffectiveMassReading(
            problem='not computed: defined here for fixed-base arms', stamp=stamp
        )
    if sample.velocities is None:
        return EffectiveMassReading(
            frame,
            problem='no joint velocities: the tool speed is unknown',
            level=WARN,
            stamp=stamp,
        )
    try:
        robot.frame_id(frame, EffectiveMassError, 'effective_mass_frame', moving=True)
    except EffectiveMassError as error:
        return EffectiveMassReading(frame, problem=str(error), level=WARN, stamp=stamp)
    q, v = robot.configuration(sample.positions), sample.velocities
    try:
        value = effective_mass_at(robot, q, v, frame, time=stamp)
        at_rest = value.speed < REST_SPEED
    except EffectiveMassError:  # exactly at rest: no direction of motion
        at_rest = True
    if at_rest:
        value = effective_mass_at(robot, q, v, frame, _up(robot), time=stamp)
    if not math.isfinite(value.mass):
        return EffectiveMassReading(
            frame,
            value,
            at_rest,
            'not published: infinite along the vertical (no joint moves the frame vertically)',
            stamp=stamp,
        )
    return EffectiveMassReading(frame, value, at_rest, stamp=stamp)


def _up(robot: RobotModel) -> np.ndarray:
    """The vertical, up: −g/|g| in the world frame (world z without gravity)."""
    gravity = np.asarray(robot.model.gravity.linear, dtype=float)
    norm = float(np.linalg.norm(gravity))
    return -gravity / norm if norm > 0.0 else np.array([0.0, 0.0, 1.0])
