"""Effective (reflected) mass at a frame and the kinetic energy a collision there can transfer.

With J the linear rows of the frame's Jacobian (origin velocity in world-aligned axes,
pinocchio ``LOCAL_WORLD_ALIGNED``) and M(q) the joint-space mass matrix, the inverse of the
operational-space inertia of the frame origin is (Khatib 1995)

    Λ⁻¹(q) = J M⁻¹ Jᵀ                       [1/kg]  (3 × 3, world-aligned axes)

and the effective mass felt along a unit direction u (world frame) is

    m_u(q) = 1 / (uᵀ Λ⁻¹(q) u)               [kg]

(infinite when the robot cannot move the frame along u at all). By default u is the frame's
current linear velocity direction v/|v|, undefined when the frame is at rest. The kinetic
energy a collision along u can transfer (Haddadin et al.) is

    E_u = ½ m_u (uᵀ v)²                       [J]

which is ½ m_u |v|² for the default u. Fixed-base models only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.dynamics.joint_space import mass_matrix
from robot_dynamics.core.dynamics.sampled_motion import SampledMotion
from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.model.model import RobotModel

REST_SPEED = 1e-9
"""Frame speed [m/s] at or below which the frame is at rest and has no motion direction."""


class EffectiveMassError(RobotDynamicsError):
    """An effective mass is undefined or cannot be computed (frame at rest without a direction,
    unknown frame, zero direction, floating base)."""


@dataclass(frozen=True)
class EffectiveMass:
    """At one sample: ``direction`` u (unit, world frame); ``speed`` |v| [m/s] of the frame
    origin; ``mass`` m_u [kg] (inf: no joint moves the frame along u); ``energy`` E_u [J];
    ``velocity`` v [m/s] (world frame)."""

    time: float
    direction: np.ndarray
    velocity: np.ndarray
    mass: float
    energy: float

    @property
    def speed(self) -> float:
        return float(np.linalg.norm(self.velocity))

    def to_dict(self) -> dict:
        return {
            'time': self.time,
            'direction': self.direction.tolist(),
            'speed': self.speed,
            'velocity': self.velocity.tolist(),
            'mass': self.mass if math.isfinite(self.mass) else None,
            'energy': self.energy if math.isfinite(self.energy) else None,
        }


def frame_linear_jacobian(robot: RobotModel, q: np.ndarray, frame: str) -> np.ndarray:
    """J (3 × n): frame-origin velocity [m/s] in world-aligned axes per joint velocity (reduced).
    :class:`EffectiveMassError` for a frame the model lacks or one fixed to the world (no joint
    moves it: its effective mass would be infinite in every direction)."""
    _check_fixed_base(robot)
    frame_id = robot.frame_id(frame, EffectiveMassError, moving=True)
    pin.computeJointJacobians(robot.model, robot.data, q)
    pin.updateFramePlacements(robot.model, robot.data)
    jacobian = pin.getFrameJacobian(robot.model, robot.data, frame_id, pin.LOCAL_WORLD_ALIGNED)
    jacobian = np.reshape(jacobian, (6, robot.model.nv))[:3]  # a 6 × 1 Jacobian comes back 1-D
    return jacobian @ robot.coupling


def inverse_operational_inertia(robot: RobotModel, q: np.ndarray, frame: str) -> np.ndarray:
    """Λ⁻¹ = J M⁻¹ Jᵀ [1/kg] (3 × 3, world-aligned axes) of the origin of ``frame``."""
    jacobian = frame_linear_jacobian(robot, q, frame)
    return jacobian @ np.linalg.solve(mass_matrix(robot, q), jacobian.T)


def effective_mass(
    robot: RobotModel, q: np.ndarray, frame: str, direction: Sequence[float]
) -> float:
    """m_u = 1 / (uᵀ Λ⁻¹ u) [kg] along ``direction`` (world frame, normalised here)."""
    unit = unit_direction(direction)
    compliance = float(unit @ inverse_operational_inertia(robot, q, frame) @ unit)
    return 1.0 / compliance if compliance > 0.0 else math.inf


def effective_mass_at(
    robot: RobotModel,
    q: np.ndarray,
    v: np.ndarray,
    frame: str,
    direction: Optional[Sequence[float]] = None,
    time: float = 0.0,
) -> EffectiveMass:
    """m_u and E_u at one state: pinocchio ``q`` and the joint velocities ``v`` [rad/s, m/s] in
    ``robot.joint_names`` order (a mimic follower moves with its leader); u = ``direction`` or,
    when None, along the frame's velocity (:class:`EffectiveMassError` when the frame is at
    rest)."""
    velocity = frame_linear_jacobian(robot, q, frame) @ np.asarray(v, dtype=float)
    if direction is None:
        speed = float(np.linalg.norm(velocity))
        if speed <= REST_SPEED:
            raise EffectiveMassError(
                f'frame "{frame}" is at rest (|v| = {speed:.3g} m/s) at t = {time:g} s: the '
                'direction of motion, and with it the effective mass along it, is undefined; give '
                'a direction'
            )
        unit = velocity / speed
    else:
        unit = unit_direction(direction)
    mass = effective_mass(robot, q, frame, unit)
    along = float(unit @ velocity)
    energy = 0.5 * mass * along**2 if math.isfinite(mass) else (0.0 if along == 0.0 else math.inf)
    return EffectiveMass(float(time), unit, velocity, mass, energy)


def effective_mass_along(
    robot: RobotModel,
    motion: SampledMotion,
    frame: str,
    direction: Optional[Sequence[float]] = None,
) -> list:
    """:func:`effective_mass_at` at every sample of ``motion``; with ``direction`` None a
    sample at rest gives None (its direction is undefined)."""
    results = []
    for time, position, velocity in zip(motion.times, motion.positions, motion.velocities):
        try:
            results.append(
                effective_mass_at(
                    robot,
                    robot.configuration(position),
                    velocity,
                    frame,
                    direction,
                    time,
                )
            )
        except EffectiveMassError:
            if direction is not None:
                raise
            results.append(None)
    return results


def unit_direction(direction: Sequence[float]) -> np.ndarray:
    """``direction`` normalised; :class:`EffectiveMassError` unless 3 finite numbers, not all 0."""
    vector = np.asarray(direction, dtype=float)
    norm = float(np.linalg.norm(vector)) if vector.shape == (3,) else math.nan
    if not (math.isfinite(norm) and norm > 0.0):
        raise EffectiveMassError(
            f'a direction must be 3 finite numbers, not all zero, got {direction!r}'
        )
    return vector / norm


def _check_fixed_base(robot: RobotModel) -> None:
    if robot.floating_base:
        raise EffectiveMassError(
            f'model "{robot.name}" has a floating base: the effective mass here is defined for '
            'fixed-base arms'
        )
