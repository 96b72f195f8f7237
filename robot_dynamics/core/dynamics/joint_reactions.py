"""Joint reaction wrenches and inverse dynamics with a known external wrench (RNEA, Featherstone
2008).

Reaction wrench of joint i: the force f_i [N] and moment n_i [N·m] that the parent link
transmits to the child link through joint i, at the joint origin, from the inward pass of the
recursive Newton–Euler algorithm (pinocchio ``rnea`` fills ``data.f``). Gravity is included
(the base accelerates by −g). The motor supplies only its projection on the joint axis
(τ_i = n_iᵀ z_i revolute, f_iᵀ z_i prismatic); the bearings and the structure carry the rest.

A known external wrench F = (f, m) acting on a frame's link at the frame origin (for example
a tool pressing on a surface; the force the environment applies to the robot) enters as

    τ = ID(q, q̇, q̈) − Jᵀ(q) F

with J the frame Jacobian in the axes F is expressed in (``local``: the frame's own axes,
pinocchio ``LOCAL``; ``world``: world-aligned axes at the frame origin, ``LOCAL_WORLD_ALIGNED``).
It is passed to ``rnea`` as an external force on the frame's parent joint, so the reaction
wrenches include it too. Fixed or floating base; torques in reduced coordinates as in
:mod:`robot_dynamics.core.dynamics.joint_space`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pinocchio as pin

from robot_dynamics.core.dynamics.joint_space import wrench_torques
from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.model.model import RobotModel

EXPRESSED_IN = ('local', 'world')


class KnownWrenchError(RobotDynamicsError):
    """A known wrench cannot be applied (unknown frame, frame on the world, bad values or axes)."""


@dataclass(frozen=True)
class KnownWrench:
    """``force`` [N] and ``moment`` [N·m] applied to ``frame``'s link at the frame origin, in the
    frame's axes (``expressed_in='local'``) or world-aligned axes (``'world'``)."""

    frame: str
    force: np.ndarray
    moment: np.ndarray
    expressed_in: str = 'local'

    def __post_init__(self):
        force, moment = np.asarray(self.force, dtype=float), np.asarray(self.moment, dtype=float)
        if (
            force.shape != (3,)
            or moment.shape != (3,)
            or not (np.all(np.isfinite(force)) and np.all(np.isfinite(moment)))
        ):
            raise KnownWrenchError(
                f'force and moment must be 3 finite numbers each, got {self.force!r}, '
                f'{self.moment!r}'
            )
        if self.expressed_in not in EXPRESSED_IN:
            raise KnownWrenchError(
                f"expressed_in must be one of {EXPRESSED_IN}, got {self.expressed_in!r}"
            )
        object.__setattr__(self, 'force', force)
        object.__setattr__(self, 'moment', moment)


@dataclass(frozen=True)
class JointReaction:
    """Reaction wrench of one joint at its origin: ``force`` [N] and ``moment`` [N·m] in the
    joint (child) frame, and the same in world-aligned axes (``force_world``, ``moment_world``)."""

    joint: str
    force: np.ndarray
    moment: np.ndarray
    force_world: np.ndarray
    moment_world: np.ndarray

    def to_dict(self) -> dict:
        return {
            'joint': self.joint,
            'force': self.force.tolist(),
            'moment': self.moment.tolist(),
            'force_world': self.force_world.tolist(),
            'moment_world': self.moment_world.tolist(),
        }


def joint_reaction_wrenches(
    robot: RobotModel,
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
    known_wrench: Optional[KnownWrench] = None,
) -> tuple:
    """One :class:`JointReaction` per 1-DoF joint of the model (mimic followers included), in
    pinocchio order, at state (q, v, a) (pinocchio vectors), with an optional known wrench."""
    _rnea(robot, q, v, a, known_wrench)
    pin.forwardKinematics(robot.model, robot.data, q)  # rnea leaves data.oMi as it was
    first = 2 if robot.floating_base else 1
    reactions = []
    for joint_id in range(first, robot.model.njoints):
        wrench, rotation = robot.data.f[joint_id], robot.data.oMi[joint_id].rotation
        reactions.append(
            JointReaction(
                robot.model.names[joint_id],
                wrench.linear.copy(),
                wrench.angular.copy(),
                rotation @ wrench.linear,
                rotation @ wrench.angular,
            )
        )
    return tuple(reactions)


def inverse_dynamics_with_wrench(
    robot: RobotModel, q: np.ndarray, v: np.ndarray, a: np.ndarray, known_wrench: KnownWrench
) -> np.ndarray:
    """τ = ID(q, v, a) − Jᵀ F [N·m] (reduced): the generalized forces the actuators supply
    while the environment applies ``known_wrench``."""
    return robot.reduce(_rnea(robot, q, v, a, known_wrench))


def _rnea(robot: RobotModel, q, v, a, known_wrench: Optional[KnownWrench]) -> np.ndarray:
    model, data = robot.model, robot.data
    if known_wrench is None:
        return pin.rnea(model, data, q, v, a).copy()
    external = _external_forces(robot, q, known_wrench)
    return pin.rnea(model, data, q, v, a, external).copy()


def _external_forces(robot: RobotModel, q: np.ndarray, known_wrench: KnownWrench) -> list:
    """pinocchio external forces, one per joint, in each joint's frame: the known wrench moved
    from the frame origin to its parent joint."""
    model, data = robot.model, robot.data
    frame_id = robot.frame_id(known_wrench.frame, KnownWrenchError, moving=True)
    frame = model.frames[frame_id]
    force, moment = known_wrench.force, known_wrench.moment
    if known_wrench.expressed_in == 'world':
        pin.framesForwardKinematics(model, data, q)
        rotation = data.oMf[frame_id].rotation
        force, moment = rotation.T @ force, rotation.T @ moment
    external = [pin.Force.Zero() for _ in range(model.njoints)]
    external[frame.parentJoint] = frame.placement.act(pin.Force(force, moment))
    return external


class KnownWrenchTorques:
    """Jᵀ(q) F [N·m] of one known wrench at each joint pose: what τ = ID − Jᵀ F takes off the
    inverse dynamics, one frame Jacobian per call (fit for a live stream). Joints in
    ``robot.joint_names`` order; a floating base is held at rest at the identity pose (joint
    part only), as :class:`~robot_dynamics.core.streams.live_torques.LiveTorqueEstimator`
    evaluates it. Raises :class:`KnownWrenchError` for an unknown or world-fixed frame."""

    def __init__(self, robot: RobotModel, known_wrench: KnownWrench):
        self.frame_id = robot.frame_id(known_wrench.frame, KnownWrenchError, moving=True)
        self.robot, self.known_wrench = robot, known_wrench
        self._reference = (
            pin.LOCAL if known_wrench.expressed_in == 'local' else pin.LOCAL_WORLD_ALIGNED
        )
        self._wrench = np.concatenate([known_wrench.force, known_wrench.moment])

    def torques(self, joint_positions: np.ndarray) -> np.ndarray:
        """Jᵀ(q) F [N·m] at ``joint_positions`` [rad, m] (``robot.joint_names`` order)."""
        robot = self.robot
        q = robot.configuration(joint_positions)
        return robot.joint_part(
            wrench_torques(robot, q, self.frame_id, self._wrench, self._reference)
        )

    def __repr__(self) -> str:
        wrench = self.known_wrench
        return (
            f'KnownWrenchTorques(frame={wrench.frame!r}, '
            f'force={np.round(wrench.force, 3).tolist()} N, '
            f'moment={np.round(wrench.moment, 3).tolist()} N·m, {wrench.expressed_in})'
        )
