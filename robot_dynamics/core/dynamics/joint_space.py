"""Joint-space dynamics on pinocchio: τ = M(q) q̈ + C(q, q̇) q̇ + g(q) (Siciliano et al.
2009; pinocchio's RNEA and CRBA, Featherstone 2008).

Every function takes a :class:`~robot_dynamics.core.model.model.RobotModel` and pinocchio vectors
(``q`` from ``robot.configuration``, ``v``/``a`` from ``robot.tangent``) and returns
*reduced* quantities: for a floating base the first 6 entries are the base wrench
(force, moment) in the base frame, then one entry per independent joint in
``robot.joint_names`` order [N·m for revolute, N for prismatic joints]. Gravity is
``robot.model.gravity`` (world frame, default (0, 0, −9.81) m/s²).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from robot_dynamics.core.errors import SingularMassMatrix
from robot_dynamics.core.model.model import RobotModel


def gravity_torques(robot: RobotModel, q: np.ndarray) -> np.ndarray:
    """g(q): the generalized forces that hold the robot still against gravity."""
    return robot.reduce(pin.computeGeneralizedGravity(robot.model, robot.data, q))


def inverse_dynamics(robot: RobotModel, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
    """τ = M(q) a + C(q, v) v + g(q) by the recursive Newton–Euler algorithm (pinocchio rnea)."""
    return robot.reduce(pin.rnea(robot.model, robot.data, q, v, a))


def nonlinear_effects(robot: RobotModel, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """C(q, v) v + g(q)."""
    return robot.reduce(pin.nonLinearEffects(robot.model, robot.data, q, v))


def mass_matrix(robot: RobotModel, q: np.ndarray) -> np.ndarray:
    """M(q), symmetric positive definite [kg·m² / kg], reduced coordinates (pinocchio crba)."""
    matrix = pin.crba(robot.model, robot.data, q)
    matrix = np.triu(matrix) + np.triu(matrix, 1).T
    return robot.reduce_matrix(matrix)


def coriolis_matrix(robot: RobotModel, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """C(q, v) with Ṁ − 2C skew-symmetric (pinocchio computeCoriolisMatrix)."""
    return robot.reduce_matrix(pin.computeCoriolisMatrix(robot.model, robot.data, q, v).copy())


def kinetic_energy(robot: RobotModel, q: np.ndarray, v: np.ndarray) -> float:
    """½ vᵀ M(q) v [J]."""
    return float(pin.computeKineticEnergy(robot.model, robot.data, q, v))


def potential_energy(robot: RobotModel, q: np.ndarray) -> float:
    """Gravitational potential energy −Σ mᵢ gᵀ cᵢ [J], zero at the world origin's height."""
    return float(pin.computePotentialEnergy(robot.model, robot.data, q))


def forward_dynamics(
    robot: RobotModel, q: np.ndarray, v: np.ndarray, tau: np.ndarray
) -> np.ndarray:
    """Reduced accelerations from reduced generalized forces ``tau``: M⁻¹(τ − C v − g).

    For a floating base ``tau[:6]`` is the external wrench on the base (usually zero).
    Returns the base acceleration (linear, angular, base frame) then the joint accelerations.
    """
    tau = np.asarray(tau, dtype=float)
    if not robot.mimic_joint_names:
        accelerations = pin.aba(robot.model, robot.data, q, v, tau).copy()
    else:
        try:
            accelerations = np.linalg.solve(
                mass_matrix(robot, q), tau - nonlinear_effects(robot, q, v)
            )
        except np.linalg.LinAlgError:
            accelerations = np.full(robot.nv_reduced, np.nan)
    if not np.all(np.isfinite(accelerations)):
        raise SingularMassMatrix(
            f'model "{robot.name}": the mass matrix is singular (a joint moves no mass or '
            'inertia); forward dynamics is undefined'
        )
    return accelerations


def wrench_torques(
    robot: RobotModel,
    q: np.ndarray,
    frame_id: int,
    wrench: np.ndarray,
    reference: pin.ReferenceFrame = pin.LOCAL,
) -> np.ndarray:
    """τ = Gᵀ J(q)ᵀ F: the generalized forces of a wrench F = (force [N], moment [N·m]) applied
    at the origin of pinocchio frame ``frame_id``, by the principle of virtual work.

    F is expressed in the frame's own axes (``reference`` ``pin.LOCAL``) or in world-aligned
    axes at the frame origin (``pin.LOCAL_WORLD_ALIGNED``); J is pinocchio's
    computeFrameJacobian in the same reference. Reduced result, as every function here.
    """
    jacobian = pin.computeFrameJacobian(robot.model, robot.data, q, frame_id, reference)
    return robot.reduce(jacobian.T @ np.asarray(wrench, dtype=float))


def torque_margins(robot: RobotModel, joint_torques: np.ndarray) -> np.ndarray:
    """Per joint |τ| / URDF effort limit (0 where the limit is unknown or infinite).

    ``joint_torques`` are independent-joint torques (no base entries). 1.0 = at the limit.
    """
    effort = robot.limits.effort
    torques = np.abs(np.asarray(joint_torques, dtype=float))
    margins = np.zeros_like(torques)
    known = np.isfinite(effort) & (effort > 0.0)
    margins[known] = torques[known] / effort[known]
    return margins
