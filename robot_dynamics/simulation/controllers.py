"""Controllers of the proving ground: built on the NOMINAL model (the URDF the nodes load), fed
the MEASURED state, as a real robot's controller is. The true robot (profile) differs from it.

* :class:`TrackingController` (arms): PD + feed-forward, τ = RNEA_nominal(q_m, q̇_m, q̈_ref +
  K_p (q_ref − q_m) + K_d (q̇_ref − q̇_m)) with K_p = ω², K_d = 2ω (critically damped at the
  bandwidth ω = 2π f), gravity as the controller believes it (in the base frame); optionally
  saturated at the URDF effort limits as drives are (a collision cannot push harder than the
  motors).
* :class:`StanceController` (legged robots): τ = K_p (q_des − q_m) − K_d q̇_m + τ_g, where τ_g
  is the nominal model's gravity compensation with the weight shared among the support feet:
  g(q) = Sᵀ τ_g + J_cᵀ f, its six base rows solved for the feet forces f by least squares
  (minimum norm), τ_g = g_joints − J_c,jointsᵀ f.
* :func:`stance_inverse_kinematics`: leg joint positions that put the feet at given world
  points for a given base pose (Newton iterations on the feet positions).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.simulation.errors import SimulationError


class TrackingController:
    """PD + feed-forward on the nominal fixed-base ``robot`` (module docstring), bandwidth [Hz];
    ``saturate``: clip the torques at the URDF effort limits."""

    def __init__(self, robot: RobotModel, bandwidth_hz: float = 10.0, saturate: bool = False):
        if not bandwidth_hz > 0.0:
            raise SimulationError(f'tracking bandwidth must be positive, got {bandwidth_hz} Hz')
        omega = 2.0 * math.pi * bandwidth_hz
        self.robot = robot
        self.stiffness, self.damping = omega * omega, 2.0 * omega
        effort = np.asarray(robot.limits.effort, dtype=float)
        usable = saturate & np.isfinite(effort) & (effort > 0.0)
        self.effort_limits = np.where(usable, effort, np.inf)

    def torques(
        self, positions: np.ndarray, velocities: np.ndarray, reference: tuple
    ) -> np.ndarray:
        """τ [N·m] at the measured ``positions`` [rad] and ``velocities`` [rad/s] for
        ``reference`` = (q_ref, q̇_ref, q̈_ref)."""
        q_ref, v_ref, a_ref = reference
        command = a_ref + self.stiffness * (q_ref - positions) + self.damping * (v_ref - velocities)
        robot = self.robot
        torques = dynamics.inverse_dynamics(
            robot, robot.configuration(positions), robot.tangent(velocities), robot.tangent(command)
        )
        return np.clip(torques, -self.effort_limits, self.effort_limits)


class StanceController:
    """PD stance with nominal gravity compensation for the floating-base ``robot`` standing on
    ``feet`` (contact frames); gains K_p [N·m/rad] and K_d [N·m·s/rad]."""

    def __init__(self, robot: RobotModel, feet: Sequence[str], stiffness: float, damping: float):
        if not robot.floating_base:
            raise SimulationError(
                f'model "{robot.name}" has a fixed base: the stance controller needs a floating one'
            )
        self.robot = robot
        self.feet = tuple(feet)
        self._frames = [robot.frame_id(name) for name in feet]
        self.stiffness, self.damping = float(stiffness), float(damping)

    def gravity_compensation(
        self, positions: np.ndarray, base_pose: np.ndarray, support: Sequence[bool]
    ) -> np.ndarray:
        """τ_g [N·m]: the nominal gravity load with the weight carried by the ``support`` feet."""
        robot = self.robot
        q = robot.configuration(positions, base_pose)
        gravity = robot.reduce(pin.computeGeneralizedGravity(robot.model, robot.data, q))
        rows = self._contact_jacobian(q, support)
        base = robot.base_dofs
        if rows.shape[0] == 0:
            return gravity[base:]
        forces = np.linalg.lstsq(rows[:, :base].T, gravity[:base], rcond=None)[0]
        return gravity[base:] - rows[:, base:].T @ forces

    def _contact_jacobian(self, q: np.ndarray, support: Sequence[bool]) -> np.ndarray:
        robot = self.robot
        pin.computeJointJacobians(robot.model, robot.data, q)
        pin.updateFramePlacements(robot.model, robot.data)
        rows = [
            pin.getFrameJacobian(robot.model, robot.data, frame, pin.LOCAL_WORLD_ALIGNED)[:3]
            for frame, on in zip(self._frames, support)
            if on
        ]
        if not rows:
            return np.zeros((0, robot.nv_reduced))
        return np.vstack(rows) @ robot.coupling

    def torques(
        self,
        positions: np.ndarray,
        velocities: np.ndarray,
        desired: np.ndarray,
        base_pose: np.ndarray,
        support: Sequence[bool],
    ) -> np.ndarray:
        """τ [N·m] at the measured joint state, desired positions [rad], base pose (world)."""
        return (
            self.stiffness * (desired - positions)
            - self.damping * velocities
            + self.gravity_compensation(positions, base_pose, support)
        )


def stance_inverse_kinematics(
    robot: RobotModel,
    feet: Sequence[str],
    targets: np.ndarray,
    base_pose: np.ndarray,
    start: np.ndarray,
    tolerance: float = 1e-10,
) -> np.ndarray:
    """Joint positions [rad] putting each foot frame at its ``targets`` row (world, m) with the
    base at ``base_pose`` [x, y, z, qx, qy, qz, qw], from ``start``. Raises
    :class:`SimulationError` when a target is out of the leg's reach."""
    frames = [robot.frame_id(name) for name in feet]
    model, data = robot.model, robot.data
    positions = np.asarray(start, dtype=float).copy()
    error = np.zeros(1)
    for _ in range(30):
        q = robot.configuration(positions, base_pose)
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        error = (targets - np.array([data.oMf[frame].translation for frame in frames])).reshape(-1)
        if np.max(np.abs(error)) < tolerance:
            return positions
        jacobian = (
            np.vstack(
                [
                    pin.getFrameJacobian(model, data, frame, pin.LOCAL_WORLD_ALIGNED)[:3]
                    for frame in frames
                ]
            )
            @ robot.coupling
        )
        positions = positions + _solve(jacobian[:, robot.base_dofs :], error)
    raise SimulationError(
        f'leg inverse kinematics did not converge (foot error {np.max(np.abs(error)):.2e} m): '
        f'a scripted foot or base target is out of reach'
    )


def _solve(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """x with matrix x = vector: exact when square and regular, least squares otherwise."""
    if matrix.shape[0] == matrix.shape[1]:
        try:
            return np.linalg.solve(matrix, vector)
        except np.linalg.LinAlgError:
            pass
    return np.linalg.lstsq(matrix, vector, rcond=None)[0]


def base_pose(position: Sequence[float], rpy: Optional[Sequence[float]] = None) -> np.ndarray:
    """[x, y, z, qx, qy, qz, qw] from a position [m] and roll-pitch-yaw [rad]."""
    rotation = pin.rpy.rpyToMatrix(np.zeros(3) if rpy is None else np.asarray(rpy, dtype=float))
    return np.concatenate([np.asarray(position, dtype=float), pin.Quaternion(rotation).coeffs()])
