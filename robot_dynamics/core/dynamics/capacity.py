"""Worst-case joint torques and the largest point-mass payload the joint effort limits allow.

A point mass m at point p (the payload link's frame origin plus a CoM offset c in that
link's frame) adds to the joint torques, linearly in m:

    τ(m) = τ₀ + m·a,     a = J_pᵀ (p̈ − g)

with τ₀ the robot's own torques (gravity g(q) for static poses, inverse dynamics
M q̈ + C q̇ + g along a trajectory), J_p the 3×n Jacobian of p (world-aligned axes), p̈ its
acceleration in the world frame (J_p q̈ + J̇_p q̇; zero for static poses) and g the gravity
vector [m/s²]. Keeping |τ_j(m)| ≤ τ_max,j for m ≥ 0 gives per joint the closed form

    m_max,j = (τ_max,j − sgn(a_j) τ₀,j) / |a_j|     (∞ when a_j = 0; 0 when |τ₀,j| > τ_max,j)

and the payload that keeps every joint within its limit at every sample is the smallest
m_max,j over joints and samples (MoveIt's ``getMaxPayload`` does the single-pose, gravity-only
case). τ_max is the URDF ``<limit effort>`` [N·m, N]; joints without one are not limiting.
Fixed-base models only.

A payload with rotational inertia of a given shape (a box, a cylinder, a tool) has the inertia
about its CoM I_C = m Î, Î the shape's inertia per kilogram [m²], so its torques stay linear in m:

    a = J_pᵀ (p̈ − g) + J_ωᵀ (Î_w α + ω × Î_w ω),     Î_w = R Î Rᵀ,

ω, α the payload link's angular velocity and acceleration and J_ω its angular Jacobian (world
axes): the Newton–Euler wrench of the payload about its CoM. Along a trajectory that turns the
link fast, a long tool carries less than a point mass of the same weight.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.dynamics.joint_space import gravity_torques, inverse_dynamics
from robot_dynamics.core.dynamics.sampled_motion import SampledMotion
from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.model.inertia import skew
from robot_dynamics.core.model.model import RobotModel

NO_LOAD_PER_KILOGRAM = 1e-9
"""|a| [N·m/kg] at or below which a payload is taken to load a joint not at all."""


class CapacityError(RobotDynamicsError):
    """A capacity question cannot be answered (floating base, unknown link, bad motion)."""


@dataclass(frozen=True)
class JointCapacity:
    """One joint: ``effort_limit`` [N·m] (inf: none in the URDF); ``worst_torque`` [N·m], the
    robot's own signed torque of largest magnitude over the samples, at sample
    ``worst_sample`` (time ``worst_time`` [s]); ``worst_ratio`` = |worst_torque| / limit;
    ``max_payload`` [kg], the largest point mass this joint allows at every sample, first
    reached at sample ``limiting_sample`` (−1 when no sample limits it)."""

    name: str
    effort_limit: float
    worst_torque: float
    worst_ratio: float
    worst_sample: int
    worst_time: float
    max_payload: float
    limiting_sample: int
    limiting_time: float

    def to_dict(self) -> dict:
        return {
            'joint': self.name,
            'effort_limit': _finite_or_none(self.effort_limit),
            'worst_torque': self.worst_torque,
            'worst_ratio': _finite_or_none(self.worst_ratio),
            'worst_sample': self.worst_sample,
            'worst_time': self.worst_time,
            'max_payload': _finite_or_none(self.max_payload),
            'limiting_sample': self.limiting_sample,
            'limiting_time': self.limiting_time if self.limiting_sample >= 0 else None,
        }


@dataclass(frozen=True)
class CapacityReport:
    """Result of :func:`payload_capacity`. ``max_payload`` [kg] = min over joints of
    ``JointCapacity.max_payload`` (inf when nothing limits it), set by ``limiting_joint`` at
    ``limiting_time`` [s]; ``per_sample_max_payload`` [kg] (N,) and ``per_sample_limiting_joint``
    (N,) are the same question asked one sample at a time; ``overloaded`` names the joints whose
    own torque already exceeds the limit somewhere (then the payload is 0)."""

    robot_name: str
    payload_link: str
    com_offset: np.ndarray
    motion_label: str
    dynamic: bool
    joints: tuple
    max_payload: float
    limiting_joint: Optional[str]
    limiting_time: Optional[float]
    times: np.ndarray
    per_sample_max_payload: np.ndarray
    per_sample_limiting_joint: tuple
    overloaded: tuple

    def to_dict(self) -> dict:
        return {
            'robot': self.robot_name,
            'payload_link': self.payload_link,
            'com_offset': self.com_offset.tolist(),
            'motion': self.motion_label,
            'torques': 'inverse dynamics' if self.dynamic else 'gravity',
            'max_payload': _finite_or_none(self.max_payload),
            'limiting_joint': self.limiting_joint,
            'limiting_time': self.limiting_time,
            'overloaded_joints': list(self.overloaded),
            'joints': [joint.to_dict() for joint in self.joints],
            'per_sample': [
                {
                    'time': float(time),
                    'max_payload': _finite_or_none(float(mass)),
                    'limiting_joint': name,
                }
                for time, mass, name in zip(
                    self.times, self.per_sample_max_payload, self.per_sample_limiting_joint
                )
            ],
        }

    def __repr__(self) -> str:
        return (
            f'CapacityReport({self.robot_name}, link={self.payload_link}, '
            f'max_payload={self.max_payload:.4g} kg, limiting={self.limiting_joint})'
        )


def robot_torques(robot: RobotModel, motion: SampledMotion) -> np.ndarray:
    """The robot's own joint torques [N·m] (N, n): gravity for static samples, else inverse
    dynamics."""
    _check_fixed_base(robot)
    torques = np.empty_like(motion.positions)
    for k, (position, velocity, acceleration) in enumerate(
        zip(motion.positions, motion.velocities, motion.accelerations)
    ):
        q = robot.configuration(position)
        if motion.is_static:
            torques[k] = gravity_torques(robot, q)
        else:
            torques[k] = inverse_dynamics(
                robot, q, robot.tangent(velocity), robot.tangent(acceleration)
            )
    return torques


def payload_torques_per_kilogram(
    robot: RobotModel,
    payload_link: str,
    com_offset: Sequence[float],
    motion: SampledMotion,
    inertia_per_kilogram: Optional[np.ndarray] = None,
) -> np.ndarray:
    """a [N·m/kg] (N, n): the joint torques one kilogram of payload adds, its CoM p = origin of
    ``payload_link`` + ``com_offset`` [m] (in that link's frame); with ``inertia_per_kilogram``
    Î [m²] (3×3 about the CoM, link axes) its rotational inertia too (module docstring)."""
    _check_fixed_base(robot)
    frame_id = robot.frame_id(payload_link, CapacityError, 'payload link', moving=True)
    offset = _offset(com_offset)
    shape = _shape(inertia_per_kilogram)
    gravity = robot.model.gravity.linear
    per_kilogram = np.empty_like(motion.positions)
    for k, (position, velocity, acceleration) in enumerate(
        zip(motion.positions, motion.velocities, motion.accelerations)
    ):
        kinematics = _point_kinematics(
            robot,
            frame_id,
            offset,
            robot.configuration(position),
            robot.tangent(velocity),
            robot.tangent(acceleration),
        )
        torques = kinematics.jacobian.T @ (kinematics.acceleration - gravity)
        if shape is not None:
            rotation = robot.data.oMf[frame_id].rotation
            inertia = rotation @ shape @ rotation.T
            omega, alpha = kinematics.angular_velocity, kinematics.angular_acceleration
            torques += kinematics.angular_jacobian.T @ (
                inertia @ alpha + np.cross(omega, inertia @ omega)
            )
        per_kilogram[k] = robot.reduce(torques)
    return per_kilogram


def _shape(inertia_per_kilogram: Optional[np.ndarray]) -> Optional[np.ndarray]:
    """Î as a 3×3 array, None for none (or all zero); CapacityError unless finite, symmetric."""
    if inertia_per_kilogram is None:
        return None
    shape = np.asarray(inertia_per_kilogram, dtype=float)
    if shape.shape != (3, 3) or not np.all(np.isfinite(shape)) or not np.allclose(shape, shape.T):
        raise CapacityError(
            'the payload inertia per kilogram must be a finite symmetric 3×3 matrix [m²]'
        )
    return shape if np.any(shape) else None


def max_payload_per_joint(
    own_torques: np.ndarray, per_kilogram: np.ndarray, effort_limits: np.ndarray
) -> np.ndarray:
    """m_max [kg] per sample and joint (module docstring): the largest m ≥ 0 with
    |τ₀ + m·a| ≤ τ_max; inf where |a| ≤ ``NO_LOAD_PER_KILOGRAM`` (an exact 0 up to rounding)
    or the joint has no limit (inf or ≤ 0); 0 where |τ₀| > τ_max already."""
    own_torques, per_kilogram = np.atleast_2d(own_torques), np.atleast_2d(per_kilogram)
    limits = np.broadcast_to(_usable_limits(effort_limits), own_torques.shape)
    with np.errstate(divide='ignore', invalid='ignore'):
        masses = (limits - np.sign(per_kilogram) * own_torques) / np.abs(per_kilogram)
    masses = np.where(np.abs(per_kilogram) <= NO_LOAD_PER_KILOGRAM, math.inf, masses)
    masses = np.where(np.isinf(limits), math.inf, masses)
    masses = np.where(np.abs(own_torques) > limits, 0.0, masses)
    return np.maximum(masses, 0.0)


def payload_capacity(
    robot: RobotModel,
    motion: SampledMotion,
    payload_link: str,
    com_offset: Sequence[float] = (0.0, 0.0, 0.0),
    inertia_per_kilogram: Optional[np.ndarray] = None,
) -> CapacityReport:
    """Worst torques and the largest payload at ``payload_link`` (+ ``com_offset`` [m], link
    frame) over the samples of ``motion``: a point mass, or with ``inertia_per_kilogram`` Î [m²]
    a body of that shape (module docstring)."""
    if len(motion) == 0 or motion.positions.shape[1:] != (robot.num_joints,):
        raise CapacityError(
            f'the motion must have samples of {robot.num_joints} joints, got shape '
            f'{motion.positions.shape}'
        )
    own = robot_torques(robot, motion)
    per_kilogram = payload_torques_per_kilogram(
        robot, payload_link, com_offset, motion, inertia_per_kilogram
    )
    limits = _usable_limits(robot.limits.effort)
    masses = max_payload_per_joint(own, per_kilogram, limits)
    joints = tuple(
        _joint_capacity(name, j, own, masses, limits[j], motion.times)
        for j, name in enumerate(robot.joint_names)
    )
    per_sample_joint = np.argmin(masses, axis=1)
    per_sample = masses[np.arange(len(motion)), per_sample_joint]
    limiting = min(joints, key=lambda joint: joint.max_payload)
    bounded = math.isfinite(limiting.max_payload)
    with np.errstate(invalid='ignore'):
        overloaded = tuple(
            name
            for j, name in enumerate(robot.joint_names)
            if np.any(np.abs(own[:, j]) > limits[j])
        )
    return CapacityReport(
        robot.name,
        payload_link,
        _offset(com_offset),
        motion.label,
        not motion.is_static,
        joints,
        limiting.max_payload,
        limiting.name if bounded else None,
        limiting.limiting_time if bounded else None,
        motion.times.copy(),
        per_sample,
        tuple(
            robot.joint_names[j] if math.isfinite(m) else None
            for j, m in zip(per_sample_joint, per_sample)
        ),
        overloaded,
    )


def _joint_capacity(
    name: str, j: int, own: np.ndarray, masses: np.ndarray, limit: float, times: np.ndarray
) -> JointCapacity:
    worst = int(np.argmax(np.abs(own[:, j])))
    limiting = int(np.argmin(masses[:, j]))
    bounded = math.isfinite(masses[limiting, j])
    return JointCapacity(
        name,
        float(limit),
        float(own[worst, j]),
        float(abs(own[worst, j]) / limit),
        worst,
        float(times[worst]),
        float(masses[limiting, j]),
        limiting if bounded else -1,
        float(times[limiting]),
    )


@dataclass(frozen=True)
class _PointKinematics:
    """A point fixed in a frame, world axes: ``jacobian`` J_p (3 × nv), ``acceleration`` p̈;
    the frame's ``angular_jacobian`` J_ω (3 × nv), ``angular_velocity`` ω and
    ``angular_acceleration`` α."""

    jacobian: np.ndarray
    acceleration: np.ndarray
    angular_jacobian: np.ndarray
    angular_velocity: np.ndarray
    angular_acceleration: np.ndarray


def _point_kinematics(
    robot: RobotModel,
    frame_id: int,
    offset: np.ndarray,
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
) -> _PointKinematics:
    """The kinematics of the point ``offset`` [m] in frame ``frame_id`` (world axes)."""
    model, data = robot.model, robot.data
    pin.computeJointJacobians(model, data, q)
    pin.forwardKinematics(model, data, q, v, a)
    pin.updateFramePlacements(model, data)
    frame_jacobian = np.reshape(
        pin.getFrameJacobian(model, data, frame_id, pin.LOCAL_WORLD_ALIGNED), (6, model.nv)
    )  # a 6 × 1 Jacobian comes back 1-D
    lever = data.oMf[frame_id].rotation @ offset
    jacobian = frame_jacobian[:3] - skew(lever) @ frame_jacobian[3:]
    velocity = pin.getFrameVelocity(model, data, frame_id, pin.LOCAL_WORLD_ALIGNED)
    acceleration = pin.getFrameClassicalAcceleration(model, data, frame_id, pin.LOCAL_WORLD_ALIGNED)
    omega, alpha = velocity.angular, acceleration.angular
    point_acceleration = (
        acceleration.linear + np.cross(alpha, lever) + np.cross(omega, np.cross(omega, lever))
    )
    return _PointKinematics(jacobian, point_acceleration, frame_jacobian[3:], omega, alpha)


def _offset(com_offset: Sequence[float]) -> np.ndarray:
    offset = np.asarray(com_offset, dtype=float)
    if offset.shape != (3,) or not np.all(np.isfinite(offset)):
        raise CapacityError(
            f'the payload CoM offset must be 3 finite numbers [m], got {com_offset!r}'
        )
    return offset


def _usable_limits(effort_limits: np.ndarray) -> np.ndarray:
    """URDF effort limits with 'none' (inf, NaN or ≤ 0) as inf."""
    limits = np.asarray(effort_limits, dtype=float)
    return np.where(np.isfinite(limits) & (limits > 0.0), limits, math.inf)


def _check_fixed_base(robot: RobotModel) -> None:
    if robot.floating_base:
        raise CapacityError(
            f'model "{robot.name}" has a floating base: torque capacity is defined for fixed-base '
            'arms only'
        )


def _finite_or_none(value: float):
    return float(value) if math.isfinite(value) else None
