"""The joint-torque regressor τ = Y(q, q̇, q̈) π (Khalil & Dombre 2002), from pinocchio's
``computeJointTorqueRegressor`` (Carpentier et al. 2019).

Columns: 10 per pinocchio body (body b = joint id b + 1, i.e. the link its joint moves,
with fixed-attached child links merged in), in pinocchio's order
``[m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` with the inertia about the *joint
frame origin* in joint-frame axes (kg, kg·m, kg·m²). In a URDF the joint frame is the child
link's frame. Rows: reduced generalized forces (mimic followers folded into their leaders,
see :meth:`RobotModel.reduce`) [N·m or N]. Gravity is the model's (world frame).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from robot_dynamics.core.errors import ModelInputError
from robot_dynamics.core.model.model import RobotModel

PARAMETERS_PER_BODY = 10


def num_bodies(robot: RobotModel) -> int:
    """Number of pinocchio bodies (moving joints, the free flyer included)."""
    return robot.model.njoints - 1


def joint_torque_regressor(
    robot: RobotModel, q: np.ndarray, v: np.ndarray, a: np.ndarray
) -> np.ndarray:
    """Y (nv_reduced × 10·nbodies) at pinocchio ``q``, ``v``, ``a`` (see the module docstring)."""
    matrix = pin.computeJointTorqueRegressor(robot.model, robot.data, q, v, a)
    return robot.reduce(matrix)


def stacked_regressor(
    robot: RobotModel, positions: np.ndarray, velocities: np.ndarray, accelerations: np.ndarray
) -> np.ndarray:
    """Regressor of N joint-space samples stacked sample-major: (N·n, 10·nbodies).

    ``positions``/``velocities``/``accelerations`` are (N, n) in ``robot.joint_names``
    order [rad, rad/s, rad/s²]; row k·n + j is joint j of sample k. Joint rows only: a
    floating base stays at the identity pose with zero base velocity and acceleration.
    """
    positions, velocities, accelerations = (
        np.atleast_2d(np.asarray(x, dtype=float)) for x in (positions, velocities, accelerations)
    )
    n = robot.num_joints
    for label, values in (
        ('positions', positions),
        ('velocities', velocities),
        ('accelerations', accelerations),
    ):
        if values.shape != positions.shape or values.shape[1:] != (n,):
            raise ModelInputError(
                f'{label} has shape {values.shape}, expected (N, {n}) like positions '
                f'{positions.shape}: one row per sample, one column per joint of joint_names'
            )
    rows = np.empty((len(positions) * n, PARAMETERS_PER_BODY * num_bodies(robot)))
    base = robot.base_dofs
    for k, (position, velocity, acceleration) in enumerate(
        zip(positions, velocities, accelerations)
    ):
        matrix = joint_torque_regressor(
            robot,
            robot.configuration(position),
            robot.tangent(velocity),
            robot.tangent(acceleration),
        )
        rows[k * n : (k + 1) * n] = matrix[base:]
    return rows


def body_parameter_vector(robot: RobotModel) -> np.ndarray:
    """The model's own parameters (10·nbodies, pinocchio order, about joint frames), so that
    ``stacked_regressor(...) @ body_parameter_vector(robot)`` equals inverse dynamics."""
    return np.concatenate(
        [
            robot.model.inertias[joint_id].toDynamicParameters()
            for joint_id in range(1, robot.model.njoints)
        ]
    )


def body_index(robot: RobotModel, link_name: str) -> tuple:
    """(body index, placement): which pinocchio body carries link/frame ``link_name`` (its
    columns are ``10·index … 10·index + 9``) and the frame's pose in that body's joint frame."""
    frame = robot.model.frames[robot.frame_id(link_name, role='link', moving=True)]
    return frame.parentJoint - 1, pin.SE3(frame.placement)


def body_link_names(robot: RobotModel) -> tuple:
    """For each pinocchio body, the URDF link its joint moves (the joint's child link)."""
    names = []
    for joint_id in range(1, robot.model.njoints):
        joint_name = robot.model.names[joint_id]
        urdf_joint = robot.description.joints.get(joint_name)
        names.append(urdf_joint.child if urdf_joint is not None else robot.description.root)
    return tuple(names)
