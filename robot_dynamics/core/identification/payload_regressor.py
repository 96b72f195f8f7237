"""The payload's joint-torque regressor and the body parameters it is fitted against.

A payload rigidly fixed to a link adds ``Y_L(q, q̇, q̈) π_L`` to the joint torques [N·m]: π_L
are its 10 inertial parameters in the link frame, pinocchio order ``[m, m·cx, m·cy, m·cz,
Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` [kg, kg·m, kg·m²] with the inertia about the link frame's
origin, and ``Y_L`` is the 10-column block of pinocchio's joint-torque regressor of the body
that carries the link, mapped from that body's joint frame to the link frame (the load
identification of Khalil & Dombre 2002).
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from robot_dynamics.core.dynamics import regressor
from robot_dynamics.core.model.model import RobotModel


def payload_parameter_map(placement: pin.SE3) -> np.ndarray:
    """10×10 matrix A with π_joint = A π_link for a body whose frame has pose ``placement``
    (R, p) in the joint frame; both vectors in pinocchio order, inertia about each frame's origin.

    m' = m;  h' = R h + m p;  Ī' = R Ī Rᵀ + 2(p·g)1 − g pᵀ − p gᵀ + m(|p|²1 − p pᵀ), g = R h
    (the integral of |r|²1 − r rᵀ with r = R r_L + p). Linear, so it applies to parameter
    *differences* too (m = 0 is fine, unlike pinocchio's Inertia).
    """
    rotation, translation = placement.rotation, placement.translation
    columns = []
    for k in range(10):
        unit = np.zeros(10)
        unit[k] = 1.0
        mass, first_moment, inertia = unit[0], unit[1:4], matrix_from_vector(unit[4:])
        rotated = rotation @ first_moment
        shifted = (
            rotation @ inertia @ rotation.T
            + 2.0 * (translation @ rotated) * np.eye(3)
            - np.outer(rotated, translation)
            - np.outer(translation, rotated)
            + mass * (translation @ translation * np.eye(3) - np.outer(translation, translation))
        )
        columns.append(
            np.concatenate([[mass], rotated + mass * translation, vector_from_matrix(shifted)])
        )
    return np.column_stack(columns)


def payload_regressor(
    robot: RobotModel,
    payload_link: str,
    positions: np.ndarray,
    velocities: np.ndarray,
    accelerations: np.ndarray,
) -> np.ndarray:
    """(N·n, 10): joint torques [N·m] per unit payload parameter in the ``payload_link`` frame.

    Arrays (N, n) in ``robot.joint_names`` order [rad, rad/s, rad/s²]; rows sample-major as in
    :func:`robot_dynamics.core.dynamics.regressor.stacked_regressor`.
    """
    body, placement = regressor.body_index(robot, payload_link)
    stacked = regressor.stacked_regressor(robot, positions, velocities, accelerations)
    return stacked[:, 10 * body : 10 * body + 10] @ payload_parameter_map(placement)


def nominal_body_parameters(robot: RobotModel) -> np.ndarray:
    """The URDF body parameters (pinocchio order, about joint frames), without a payload that
    :meth:`RobotModel.attach_payload` may have added to the live model."""
    parameters = regressor.body_parameter_vector(robot)
    if robot.payload is not None:
        link, payload = robot.payload
        body, placement = regressor.body_index(robot, link)
        parameters[10 * body : 10 * body + 10] -= (
            payload_parameter_map(placement) @ payload.pinocchio_vector()
        )
    return parameters


def rows_and_body_residual(robot, payload_link, sample, body) -> tuple:
    """Payload regressor rows (N·n, 10) and τ_measured − Y π_body (N·n,) [N·m] of the samples."""
    stacked = regressor.stacked_regressor(
        robot, sample.positions, sample.velocities, sample.accelerations
    )
    index, placement = regressor.body_index(robot, payload_link)
    rows = stacked[:, 10 * index : 10 * index + 10] @ payload_parameter_map(placement)
    return rows, sample.efforts.reshape(-1) - stacked @ body


def matrix_from_vector(values: np.ndarray) -> np.ndarray:
    """3×3 symmetric tensor from pinocchio's [Ixx, Ixy, Iyy, Ixz, Iyz, Izz]."""
    ixx, ixy, iyy, ixz, iyz, izz = values
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def vector_from_matrix(matrix: np.ndarray) -> np.ndarray:
    """pinocchio's [Ixx, Ixy, Iyy, Ixz, Iyz, Izz] from a symmetric 3×3 tensor."""
    return np.array(
        [matrix[0, 0], matrix[0, 1], matrix[1, 1], matrix[0, 2], matrix[1, 2], matrix[2, 2]]
    )


def normalised_singular_values(rows: np.ndarray) -> np.ndarray:
    """Singular values [-] of ``rows`` with every column scaled to unit norm (columns of
    negligible norm, below 1e-10 of the largest, count as zero), largest first."""
    norms = np.linalg.norm(rows, axis=0)
    scale = np.where(norms > 1e-10 * norms.max(), norms, np.inf)
    return np.linalg.svd(rows / scale, compute_uv=False)


def conditioning(rows: np.ndarray) -> tuple:
    """(condition number, smallest singular value) [-] of the column-normalised ``rows``; the
    condition number is inf when a direction is not excited at all."""
    values = normalised_singular_values(rows)
    smallest = float(values[-1])
    return (float(values[0] / smallest) if smallest > 0 else math.inf), smallest
