"""What each consumer of a URDF does with each defect the checks find.

The consumers are MuJoCo, Drake/Gazebo (sdformat), PyBullet and pinocchio-based controllers;
MuJoCo's messages were checked with MuJoCo 4.0. :data:`CONSUMERS` maps a check name to one
sentence per consumer, and :func:`link_finding` attaches them to a new :class:`Finding`.
"""

from __future__ import annotations

from typing import Optional

from robot_dynamics.core.model.urdf import UrdfLink
from robot_dynamics.core.validation.formatting import plain
from robot_dynamics.core.validation.report import Finding

_MUJOCO_TRIANGLE = (
    "refuses to compile the model: \"inertia must satisfy A + B >= C; use 'balanceinertia' to "
    "fix\" (no tolerance: even a rounding-level violation is refused)"
)

_DRAKE_INVALID = (
    'Drake refuses the model (SpatialInertia fails IsPhysicallyValid); Gazebo/sdformat reports '
    'the link inertia as invalid'
)

_PYBULLET_SILENT = (
    'loads it without a warning; the link is simulated with a non-physical inertia (it spins up, '
    'jitters or explodes)'
)

_PINOCCHIO_MASS_MATRIX = (
    'no check: gravity compensation uses only mass and CoM and stays right, but the mass matrix '
    'M(q) can be indefinite, so inverse dynamics, feed-forward and operational-space controllers '
    'get wrong torques and forward dynamics / M⁻¹ may fail or diverge'
)

_ACCEPTED_WRONG = {
    'mujoco': 'accepts it (if no consistency error on this link) and simulates the wrong body',
    'drake_gazebo': 'accept it (if no consistency error on this link) and simulate the wrong body',
    'pybullet': 'accepts it without a warning and simulates the wrong body',
    'pinocchio': 'no check: inverse dynamics, mass matrix and feed-forward torques carry the '
    'error; gravity torques are unaffected (they use mass and CoM only)',
}

CONSUMERS = {
    'parse': {
        'mujoco': 'cannot load the file',
        'drake_gazebo': 'cannot load the file',
        'pybullet': 'cannot load the file',
        'pinocchio': 'cannot build a model',
    },
    'mass': {
        'mujoco': 'refuses to compile: "mass and inertia of moving bodies must be larger than '
        'mjMINVAL"',
        'drake_gazebo': 'Drake refuses to simulate a massless terminal body on a moving joint '
        '(singular mass matrix); Gazebo/sdformat reports a non-positive mass as an invalid '
        'inertia',
        'pybullet': 'does not check: a massless moving link makes its articulated-body solve '
        'ill-conditioned',
        'pinocchio': 'the mass matrix is singular when nothing below the joint has mass: ABA / '
        'M⁻¹ divide by zero; RNEA returns zero torque for this joint',
    },
    'zero_mass_geometry': {
        'mujoco': 'fuses it into its parent when the joint is fixed; if it moves, refuses to '
        'compile (mass and inertia of moving bodies must be larger than mjMINVAL)',
        'drake_gazebo': 'load it; contacts on the link push a body that adds no mass or inertia',
        'pybullet': 'does not check: the link collides but adds no mass or inertia',
        'pinocchio': 'the link contributes no gravity or inertia: gravity compensation is short '
        'by its weight',
    },
    'zero_inertia': {
        'mujoco': 'refuses to compile a moving body: "mass and inertia of moving bodies must be '
        'larger than mjMINVAL"',
        'drake_gazebo': 'accept a point mass (it is physically valid) and simulate it as one',
        'pybullet': 'simulates a point mass: rotation about an axis through the CoM is unresisted',
        'pinocchio': 'point mass: M(q) is singular if a joint axis passes through the CoM',
    },
    'positive_definite': {
        'mujoco': "refuses to compile: \"error 'inertia must have positive eigenvalues' in "
        "fullinertia\"",
        'drake_gazebo': _DRAKE_INVALID,
        'pybullet': _PYBULLET_SILENT,
        'pinocchio': _PINOCCHIO_MASS_MATRIX,
    },
    'triangle_inequality': {
        'mujoco': _MUJOCO_TRIANGLE,
        'drake_gazebo': _DRAKE_INVALID,
        'pybullet': _PYBULLET_SILENT,
        'pinocchio': _PINOCCHIO_MASS_MATRIX,
    },
    'pseudo_inertia': {
        'mujoco': _MUJOCO_TRIANGLE,
        'drake_gazebo': _DRAKE_INVALID,
        'pybullet': _PYBULLET_SILENT,
        'pinocchio': _PINOCCHIO_MASS_MATRIX,
    },
    'row_major_slip': {
        'mujoco': 'loads it only if the slipped tensor is still consistent (see the consistency '
        'finding), and then simulates the wrong body',
        'drake_gazebo': 'load it only if the slipped tensor is still consistent, and then '
        'simulate the wrong body',
        'pybullet': _PYBULLET_SILENT,
        'pinocchio': _ACCEPTED_WRONG['pinocchio'],
    },
    'mirror_twin': _ACCEPTED_WRONG,
    'mimic': {
        'mujoco': 'warns and ignores the coupling: the follower moves freely',
        'drake_gazebo': 'Drake and sdformat refuse or ignore the coupling, depending on the '
        'version',
        'pybullet': 'ignores mimic joints: the follower moves freely',
        'pinocchio': 'pinocchio\'s URDF parser builds the follower as an independent joint; '
        'robot_dynamics refuses the file',
    },
    'placeholder': _ACCEPTED_WRONG,
    'geometry_bound': _ACCEPTED_WRONG,
    'com_in_geometry': {
        **_ACCEPTED_WRONG,
        'pinocchio': 'no check: gravity torques are wrong by m·g·Δc (0.196 N·m per cm at 2 kg)',
    },
    'product_sign': _ACCEPTED_WRONG,
    'com_frame_rotation': _ACCEPTED_WRONG,
    'inertia_about_origin': _ACCEPTED_WRONG,
    'mesh_inertia': _ACCEPTED_WRONG,
    'mesh_orientation': {
        'mujoco': 'with <mesh inertia="exact"> refuses to compile: "mesh volume is negative '
        '(misoriented triangles)"; the default convex-hull inertia hides it',
        'drake_gazebo': 'contact normals of an inside-out collision mesh point inwards',
        'pybullet': 'contact normals of an inside-out collision mesh point inwards',
        'pinocchio': 'unaffected (meshes are only used for collision/visuals)',
    },
    'magnitude': {
        'mujoco': 'loads it and simulates nonsense (or overflows)',
        'drake_gazebo': 'load it or refuse it, depending on the value; either way the link is '
        'wrong',
        'pybullet': 'loads it and simulates nonsense',
        'pinocchio': 'no check: every torque involving this link is wrong',
    },
    'mesh': {
        'mujoco': 'needs the mesh file to compile the model',
        'drake_gazebo': 'need the mesh file for collision and visuals',
        'pybullet': 'needs the mesh file for the collision shape',
        'pinocchio': 'unaffected (rigid-body dynamics do not use meshes)',
    },
}


def link_finding(
    link: UrdfLink, check: str, severity: str, message: str, values: dict, suggestion: Optional[str]
) -> Finding:
    """A finding on ``link`` with JSON-ready ``values`` and what each consumer does with
    ``check``."""
    return Finding(link.name, check, severity, message, plain(values), suggestion, CONSUMERS[check])
