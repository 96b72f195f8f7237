"""Independent reference for the tests: kinematics and energies computed by hand from a URDF.

Nothing here uses pinocchio: link poses come from the URDF joint origins (R = Rz Ry Rx of
rpy) and the joint motion (Rodrigues' formula about the axis, or a translation along it);
velocities from the textbook joint Jacobian columns (revolute: ω += z q̇, v_p += z × (p − o) q̇;
prismatic: v_p += z q̇). Mimic followers take multiplier·q_leader + offset, read from the URDF
by this module. All vectors are in the world frame, SI units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from robot_dynamics.core.model.urdf import UrdfDescription


@dataclass(frozen=True)
class LinkPose:
    """Pose of a link frame in the world frame: rotation (3×3) and origin position [m]."""

    rotation: np.ndarray
    position: np.ndarray


def rotation_about(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues' formula: rotation by ``angle`` [rad] about the unit vector ``axis``."""
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    x, y, z = axis
    skew = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + math.sin(angle) * skew + (1.0 - math.cos(angle)) * skew @ skew


def quaternion_matrix(quaternion_xyzw: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion given as (x, y, z, w)."""
    x, y, z, w = np.asarray(quaternion_xyzw, dtype=float) / np.linalg.norm(quaternion_xyzw)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def all_joint_values(description: UrdfDescription, independent: dict) -> dict:
    """Values of every moving joint: the independent ones as given, mimic followers computed."""
    values = dict(independent)
    for joint in description.joints.values():
        if joint.mimic is not None:
            values[joint.name] = (
                joint.mimic.multiplier * independent[joint.mimic.joint] + joint.mimic.offset
            )
    return values


def all_joint_rates(description: UrdfDescription, independent: dict) -> dict:
    """Rates (or accelerations) of every moving joint: followers move at multiplier·leader."""
    rates = dict(independent)
    for joint in description.joints.values():
        if joint.mimic is not None:
            rates[joint.name] = joint.mimic.multiplier * independent[joint.mimic.joint]
    return rates


def mimic_coupling(
    description: UrdfDescription, independent_names: list, moving_names: list
) -> np.ndarray:
    """∂(moving joint rates)/∂(independent joint rates), rows in ``moving_names`` order."""
    coupling = np.zeros((len(moving_names), len(independent_names)))
    for row, name in enumerate(moving_names):
        mimic = description.joints[name].mimic
        if mimic is None:
            coupling[row, independent_names.index(name)] = 1.0
        else:
            coupling[row, independent_names.index(mimic.joint)] = mimic.multiplier
    return coupling


def link_poses(
    description: UrdfDescription, joint_values: dict, base: Optional[LinkPose] = None
) -> dict:
    """World pose of every link; ``joint_values`` holds every moving joint (rad or m)."""
    base = base or LinkPose(np.eye(3), np.zeros(3))
    poses = {description.root: base}
    pending = list(description.joints.values())
    while pending:
        remaining = []
        for joint in pending:
            parent = poses.get(joint.parent)
            if parent is None:
                remaining.append(joint)
                continue
            rotation = parent.rotation @ joint.origin.rotation()
            position = parent.position + parent.rotation @ np.asarray(joint.origin.xyz)
            value = joint_values.get(joint.name, 0.0)
            if joint.type in ('revolute', 'continuous'):
                rotation = rotation @ rotation_about(joint.axis, value)
            elif joint.type == 'prismatic':
                position = (
                    position
                    + rotation @ (np.asarray(joint.axis) / np.linalg.norm(joint.axis)) * value
                )
            poses[joint.child] = LinkPose(rotation, position)
        pending = remaining
    return poses


def link_com(description: UrdfDescription, poses: dict, link_name: str) -> np.ndarray:
    """World position of a link's centre of mass [m]."""
    link_pose = poses[link_name]
    return link_pose.position + link_pose.rotation @ np.asarray(
        description.links[link_name].inertial.origin.xyz
    )


def massive_links(description: UrdfDescription, moving_only: bool = False) -> list:
    """Links with a positive mass; ``moving_only`` drops those welded to the root (fixed base)."""
    return [
        name
        for name, link in description.links.items()
        if link.inertial is not None
        and link.inertial.mass > 0
        and not (
            moving_only and all(j.type == 'fixed' for j in _ancestor_joints(description, name))
        )
    ]


def total_mass_and_com(
    description: UrdfDescription, poses: dict, moving_only: bool = False
) -> tuple:
    """Total mass [kg] and centre of mass in the world frame [m]."""
    names = massive_links(description, moving_only)
    masses = np.array([description.links[n].inertial.mass for n in names])
    coms = np.array([link_com(description, poses, n) for n in names])
    return float(masses.sum()), masses @ coms / masses.sum()


def potential_energy(
    description: UrdfDescription, poses: dict, gravity: np.ndarray, moving_only: bool = True
) -> float:
    """−Σ mᵢ gᵀ cᵢ [J] (zero at the world origin); by default only links that a joint moves
    (a fixed base's own weight is a constant that pinocchio leaves out)."""
    return -sum(
        description.links[n].inertial.mass * float(np.dot(gravity, link_com(description, poses, n)))
        for n in massive_links(description, moving_only)
    )


def _ancestor_joints(description: UrdfDescription, link_name: str) -> list:
    joints = []
    joint = description.parent_joint_of(link_name)
    while joint is not None:
        joints.append(joint)
        joint = description.parent_joint_of(joint.parent)
    return joints


def kinetic_energy(
    description: UrdfDescription, joint_values: dict, joint_velocities: dict
) -> float:
    """Σ ½ mᵢ |v_cᵢ|² + ½ ωᵢᵀ (R Iᵢ Rᵀ) ωᵢ [J] for a fixed base; dicts hold every moving joint."""
    poses = link_poses(description, joint_values)
    energy = 0.0
    for name in massive_links(description):
        inertial = description.links[name].inertial
        com = link_com(description, poses, name)
        omega, velocity = np.zeros(3), np.zeros(3)
        for joint in _ancestor_joints(description, name):
            if joint.type == 'fixed':
                continue
            child = poses[joint.child]
            axis = child.rotation @ (np.asarray(joint.axis) / np.linalg.norm(joint.axis))
            rate = joint_velocities[joint.name]
            if joint.type == 'prismatic':
                velocity += axis * rate
            else:
                omega += axis * rate
                velocity += np.cross(axis, com - child.position) * rate
        rotation = poses[name].rotation @ inertial.origin.rotation()
        inertia_world = rotation @ inertial.tensor() @ rotation.T
        energy += 0.5 * inertial.mass * velocity @ velocity + 0.5 * omega @ inertia_world @ omega
    return float(energy)
