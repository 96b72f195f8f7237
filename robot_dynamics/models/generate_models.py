#!/usr/bin/env python3
"""Generate the bundled robot models ``fr3_arm.urdf`` and ``quadruped.urdf``.

Run ``python generate_models.py`` to rewrite both URDFs next to this file, or
``python generate_models.py --check`` to verify that the shipped files are what this
script produces (exit status 1 if they differ). Only numpy and the standard library are
used, and the output is deterministic.

Where the numbers come from
---------------------------
fr3_arm
    * Kinematics: Franka's published modified-DH (Craig) table for Panda / FR3
      (d = [0.333 0 0.316 0 0.384 0 0] m, a_{i-1} = [0 0 0 0.0825 -0.0825 0 0.088] m,
      alpha_{i-1} = [0 -pi/2 pi/2 pi/2 -pi/2 pi/2 pi/2], theta offsets 0, flange
      d = 0.107 m). Every URDF joint origin is ``Rx(alpha_{i-1}) Tx(a_{i-1}) Tz(d_i)``
      and every axis is +z, so URDF link frame ``fr3_link<i>`` *is* the modified-DH
      frame {i}.
    * Joint limits: Franka FR3 datasheet values.
    * Link masses: approximately the published Panda link masses (Gaz et al. 2019).
    * Geometry: simple primitives (cylinders, boxes) that roughly follow the real links.
      They are laid out in the world frame at q = 0, where the arm is a vertical column
      (``ARM_GEOMETRY_AT_ZERO``), and mapped into each link frame with the zero-pose
      forward kinematics of the table above.
    * Inertias: each link is a uniform-density solid made of its collision primitives;
      CoM and inertia about the CoM follow from the primitive volumes and the
      parallel-axis theorem (``link_inertial``).
quadruped
    * Made-up but plausible dimensions and masses (torso 0.5 x 0.3 x 0.12 m, 12 kg;
      hip 1.0 kg, thigh 1.5 kg, shank 0.4 kg; thigh 0.25 m, shank 0.25 m knee to foot
      centre). Inertias from the collision primitives exactly as for the arm.
    * Right legs are the exact mirror images of the left legs across the base xz-plane.
      Front and hind legs are identical (translated), including the knee convention.

Conventions
-----------
* SI units (m, kg, kg m^2, rad, N m, rad/s).
* URDF ``<inertial>``: origin = CoM in the link frame with rpy = 0; ixx..izz are the
  entries of the inertia tensor about the CoM in link-frame axes, so
  ixy = -integral(x y dm) (tensor convention).
* Within one link the primitives do not overlap (they may touch); ``link_inertial``
  asserts this by sampling, so "uniform density" is exact. Primitives of *different*
  links may overlap (nested joint housings), which does not affect the inertias.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HALF_PI = math.pi / 2.0
MODELS_DIR = Path(__file__).resolve().parent
AXES = {'x': 0, 'y': 1, 'z': 2}


# ----------------------------------------------------------------------------- geometry
@dataclass(frozen=True)
class Primitive:
    """A solid collision primitive, axis-aligned in the frame it is expressed in.

    kind: 'box', 'cylinder' or 'sphere'.
    size: box (sx, sy, sz) full edge lengths [m]; cylinder (radius, length) [m];
        sphere (radius,) [m].
    center: centre of the solid in the frame [m].
    axis: cylinder axis direction, 'x', 'y' or 'z' (ignored for boxes and spheres).
    """

    kind: str
    size: tuple
    center: tuple
    axis: str = 'z'

    def volume(self) -> float:
        """Volume [m^3]."""
        if self.kind == 'box':
            return float(np.prod(self.size))
        if self.kind == 'cylinder':
            radius, length = self.size
            return math.pi * radius**2 * length
        if self.kind == 'sphere':
            return 4.0 / 3.0 * math.pi * self.size[0] ** 3
        raise ValueError(self.kind)

    def unit_inertia(self) -> np.ndarray:
        """Diagonal of the inertia tensor per unit mass about the centre [m^2]."""
        if self.kind == 'box':
            sx, sy, sz = self.size
            return np.array([sy**2 + sz**2, sx**2 + sz**2, sx**2 + sy**2]) / 12.0
        if self.kind == 'cylinder':
            radius, length = self.size
            transverse = (3.0 * radius**2 + length**2) / 12.0
            diagonal = np.full(3, transverse)
            diagonal[AXES[self.axis]] = radius**2 / 2.0
            return diagonal
        if self.kind == 'sphere':
            return np.full(3, 0.4 * self.size[0] ** 2)
        raise ValueError(self.kind)

    def half_extents(self) -> np.ndarray:
        """Half edge lengths of the axis-aligned bounding box [m]."""
        if self.kind == 'box':
            return np.asarray(self.size, dtype=float) / 2.0
        if self.kind == 'cylinder':
            radius, length = self.size
            half = np.full(3, radius)
            half[AXES[self.axis]] = length / 2.0
            return half
        return np.full(3, self.size[0])

    def contains(self, points: np.ndarray) -> np.ndarray:
        """Boolean mask of the points (N x 3, in the frame) strictly inside the solid."""
        local = points - np.asarray(self.center)
        eps = 1e-9
        if self.kind == 'box':
            return np.all(np.abs(local) < np.asarray(self.size) / 2.0 - eps, axis=1)
        if self.kind == 'cylinder':
            radius, length = self.size
            k = AXES[self.axis]
            radial = np.delete(local, k, axis=1)
            return (np.abs(local[:, k]) < length / 2.0 - eps) & (
                np.sum(radial**2, axis=1) < (radius - eps) ** 2
            )
        return np.sum(local**2, axis=1) < (self.size[0] - eps) ** 2

    def sample(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """Uniform random points inside the solid (N x 3, in the frame) [m]."""
        half = self.half_extents()
        points = np.empty((0, 3))
        while len(points) < count:
            candidates = self.center + rng.uniform(-half, half, size=(2 * count, 3))
            points = np.vstack([points, candidates[self.contains(candidates)]])
        return points[:count]


def link_inertial(primitives: list, mass: float) -> tuple:
    """CoM [m] and 3x3 inertia tensor about the CoM [kg m^2] of a uniform solid.

    The solid is the union of ``primitives`` (all expressed in the link frame) with total
    ``mass`` [kg]; each primitive gets mass in proportion to its volume. Raises
    AssertionError if two primitives overlap (checked by sampling).
    """
    rng = np.random.default_rng(0)
    for i, first in enumerate(primitives):
        points = first.sample(4000, rng)
        for second in primitives[i + 1 :]:
            assert not np.any(second.contains(points)), (first, second)
    volumes = np.array([p.volume() for p in primitives])
    masses = mass * volumes / volumes.sum()
    centers = np.array([p.center for p in primitives], dtype=float)
    com = masses @ centers / mass
    inertia = np.zeros((3, 3))
    for m_k, prim, c_k in zip(masses, primitives, centers):
        d = c_k - com
        inertia += np.diag(m_k * prim.unit_inertia()) + m_k * (d @ d * np.eye(3) - np.outer(d, d))
    return com, inertia


def rpy_matrix(rpy) -> np.ndarray:
    """URDF rotation Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = (
        math.cos(r),
        math.sin(r),
        math.cos(p),
        math.sin(p),
        math.cos(y),
        math.sin(y),
    )
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def to_link_frame(prim: Primitive, rotation: np.ndarray, position: np.ndarray) -> Primitive:
    """Express a world-frame primitive in a link frame (axis-aligned, 90-degree rotations)."""
    rt = rotation.T
    center = tuple(round(float(v), 12) + 0.0 for v in rt @ (np.asarray(prim.center) - position))
    if prim.kind == 'box':
        size = tuple(round(float(v), 12) for v in np.abs(rt) @ np.asarray(prim.size))
        return Primitive('box', size, center)
    axis = 'xyz'[int(np.argmax(np.abs(rt[:, AXES[prim.axis]])))]
    return Primitive(prim.kind, prim.size, center, axis)


# ----------------------------------------------------------------------------- URDF text
def num(value: float) -> str:
    """Format a number: 9 significant digits, no '-0'."""
    text = f'{value:.9g}'
    return '0' if float(text) == 0.0 else text


def vec(values) -> str:
    return ' '.join(num(v) for v in values)


CYLINDER_RPY = {'x': f'0 {HALF_PI!r} 0', 'y': f'{HALF_PI!r} 0 0', 'z': '0 0 0'}


def geometry_xml(prim: Primitive) -> str:
    if prim.kind == 'box':
        shape = f'<box size="{vec(prim.size)}"/>'
        rpy = '0 0 0'
    elif prim.kind == 'cylinder':
        shape = f'<cylinder radius="{num(prim.size[0])}" length="{num(prim.size[1])}"/>'
        rpy = CYLINDER_RPY[prim.axis]
    else:
        shape = f'<sphere radius="{num(prim.size[0])}"/>'
        rpy = '0 0 0'
    return f'<origin xyz="{vec(prim.center)}" rpy="{rpy}"/>\n      <geometry>{shape}</geometry>'


def link_xml(
    name: str, mass: float = 0.0, primitives: list | None = None, comment: str = ''
) -> str:
    """A <link>; massless frame links (mass 0, no primitives) get no inertial/geometry."""
    lines = [f'  <link name="{name}">']
    if comment:
        lines.append(f'    <!-- {comment} -->')
    if primitives:
        com, inertia = link_inertial(primitives, mass)
        lines += [
            '    <inertial>',
            f'      <origin xyz="{vec(com)}" rpy="0 0 0"/>',
            f'      <mass value="{num(mass)}"/>',
            f'      <inertia ixx="{num(inertia[0, 0])}" ixy="{num(inertia[0, 1])}" '
            f'ixz="{num(inertia[0, 2])}" iyy="{num(inertia[1, 1])}" iyz="{num(inertia[1, 2])}" '
            f'izz="{num(inertia[2, 2])}"/>',
            '    </inertial>',
        ]
        for tag in ('visual', 'collision'):
            for prim in primitives:
                lines += [f'    <{tag}>', f'      {geometry_xml(prim)}', f'    </{tag}>']
    lines.append('  </link>')
    return '\n'.join(lines)


def joint_xml(
    name: str,
    kind: str,
    parent: str,
    child: str,
    xyz=(0, 0, 0),
    rpy=(0, 0, 0),
    axis=None,
    limit=None,
) -> str:
    """A <joint>; ``limit`` = (lower, upper, effort, velocity) for revolute joints."""
    rpy_text = ' '.join('0' if v == 0 else repr(float(v)) for v in rpy)
    lines = [
        f'  <joint name="{name}" type="{kind}">',
        f'    <origin xyz="{vec(xyz)}" rpy="{rpy_text}"/>',
        f'    <parent link="{parent}"/>',
        f'    <child link="{child}"/>',
    ]
    if axis is not None:
        lines.append(f'    <axis xyz="{vec(axis)}"/>')
    if limit is not None:
        lower, upper, effort, velocity = limit
        lines.append(
            f'    <limit lower="{num(lower)}" upper="{num(upper)}" effort="{num(effort)}" '
            f'velocity="{num(velocity)}"/>'
        )
    lines.append('  </joint>')
    return '\n'.join(lines)


# ----------------------------------------------------------------------------- FR3 arm
# Joint origins (xyz, rpy) = Rx(alpha_{i-1}) Tx(a_{i-1}) Tz(d_i) of the modified-DH table.
ARM_JOINT_ORIGINS = [
    ((0.0, 0.0, 0.333), (0.0, 0.0, 0.0)),
    ((0.0, 0.0, 0.0), (-HALF_PI, 0.0, 0.0)),
    ((0.0, -0.316, 0.0), (HALF_PI, 0.0, 0.0)),
    ((0.0825, 0.0, 0.0), (HALF_PI, 0.0, 0.0)),
    ((-0.0825, 0.384, 0.0), (-HALF_PI, 0.0, 0.0)),
    ((0.0, 0.0, 0.0), (HALF_PI, 0.0, 0.0)),
    ((0.088, 0.0, 0.0), (HALF_PI, 0.0, 0.0)),
]
ARM_FLANGE_XYZ = (0.0, 0.0, 0.107)
# (lower, upper, effort, velocity): Franka FR3 datasheet.
ARM_LIMITS = [
    (-2.7437, 2.7437, 87.0, 2.62),
    (-1.7837, 1.7837, 87.0, 2.62),
    (-2.9007, 2.9007, 87.0, 2.62),
    (-3.0421, -0.1518, 87.0, 2.62),
    (-2.8065, 2.8065, 12.0, 5.26),
    (0.5445, 4.5169, 12.0, 4.18),
    (-3.0159, 3.0159, 12.0, 5.26),
]
# Approximate published Panda link masses (Gaz et al. 2019) [kg], links 0..7.
ARM_MASSES = [0.63, 4.97, 0.65, 3.23, 3.59, 1.23, 1.67, 0.74]


def _cyl(axis, radius, center, lo, hi):
    """World cylinder along ``axis`` spanning [lo, hi] on that axis; ``center`` gives the
    other two coordinates (the coordinate along the axis is ignored)."""
    c = list(center)
    c[AXES[axis]] = (lo + hi) / 2.0
    return Primitive('cylinder', (radius, round(hi - lo, 12)), tuple(c), axis)


def _box(lo, hi):
    """World box with corners ``lo`` and ``hi``."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    return Primitive('box', tuple(np.round(hi - lo, 12)), tuple(np.round((lo + hi) / 2, 12)))


# Link geometry in the WORLD frame at q = 0. In that pose the joint axes are: J1 z at
# z=0.333; J2 y at z=0.333; J3 z; J4 y at (0.0825, 0, 0.649); J5 z at x=0; J6 y at
# z=1.033; J7 z at x=0.088 (pointing down); flange at (0.088, 0, 0.926). Joint housings
# (J2, J4, J6) are split along the axis between parent and child link, which also gives
# the links non-zero products of inertia.
ARM_GEOMETRY_AT_ZERO = [
    # link0: base column up to the J1 housing + cable connector block at the back
    [_cyl('z', 0.07, (0, 0, 0), 0.0, 0.14), _box((-0.13, -0.04, 0.0), (-0.07, 0.04, 0.08))],
    # link1: column from the base to the J2 housing + parent half of the J2 housing
    [_cyl('z', 0.06, (0, 0, 0), 0.14, 0.273), _cyl('y', 0.06, (0, 0, 0.333), -0.07, 0.0)],
    # link2: child half of the J2 housing + lower upper-arm tube
    [_cyl('y', 0.06, (0, 0, 0.333), 0.0, 0.07), _cyl('z', 0.055, (0, 0, 0), 0.393, 0.48)],
    # link3: upper upper-arm tube + parent half of the elbow (J4) housing
    [_cyl('z', 0.06, (0, 0, 0), 0.48, 0.594), _cyl('y', 0.055, (0.0825, 0, 0.649), -0.065, 0.0)],
    # link4: child half of the elbow housing + elbow-to-forearm block + lower forearm
    [
        _cyl('y', 0.055, (0.0825, 0, 0.649), 0.0, 0.065),
        _box((-0.055, -0.05, 0.704), (0.11, 0.05, 0.76)),
        _cyl('z', 0.055, (0, 0, 0), 0.76, 0.85),
    ],
    # link5: upper forearm + side bulge (as on the real link) + parent half of J6 housing
    [
        _cyl('z', 0.05, (0, 0, 0), 0.85, 0.983),
        _box((-0.03, 0.05, 0.86), (0.03, 0.09, 0.96)),
        _cyl('y', 0.045, (0, 0, 1.033), 0.0, 0.065),
    ],
    # link6: child half of the J6 housing + top bridge + J7 housing
    [
        _cyl('y', 0.045, (0, 0, 1.033), -0.065, 0.0),
        _box((0.0, -0.04, 1.078), (0.088, 0.04, 1.11)),
        _cyl('z', 0.04, (0.088, 0, 0), 0.99, 1.078),
    ],
    # link7: J7 output down to the flange + small off-axis block (connector/LED ring)
    [_cyl('z', 0.04, (0.088, 0, 0), 0.926, 0.99), _box((0.128, -0.01, 0.94), (0.148, 0.03, 0.98))],
]


def arm_zero_pose_frames() -> list:
    """World pose (R, p) of fr3_link0..fr3_link7 at q = 0."""
    frames = [(np.eye(3), np.zeros(3))]
    for xyz, rpy in ARM_JOINT_ORIGINS:
        rotation, position = frames[-1]
        frames.append((rotation @ rpy_matrix(rpy), position + rotation @ np.asarray(xyz)))
    return frames


def arm_urdf() -> str:
    frames = arm_zero_pose_frames()
    header = f"""<?xml version="1.0"?>
<!--
  fr3_arm: 7-DoF arm with Franka FR3 / Panda kinematics. GENERATED by generate_models.py
  (same directory); edit that script, not this file.

  Where every number comes from:
  * Kinematics: Franka's published modified-DH (Craig) table for Panda/FR3:
      d = [0.333 0 0.316 0 0.384 0 0] m, a_(i-1) = [0 0 0 0.0825 -0.0825 0 0.088] m,
      alpha_(i-1) = [0 -pi/2 pi/2 pi/2 -pi/2 pi/2 pi/2], theta offsets 0, flange d = 0.107 m.
    Joint origin i = Rx(alpha_(i-1)) Tx(a_(i-1)) Tz(d_i), every axis +z, so link frame
    fr3_link<i> IS the modified-DH frame {{i}}. fr3_flange (payload attachment frame) is
    0.107 m along z of fr3_link7; tool0 coincides with fr3_flange.
  * Joint limits (position, effort, velocity): Franka FR3 datasheet values.
  * Link masses: approximately the published Panda link masses (Gaz et al. 2019).
  * Inertias: each link is a uniform-density solid made of its <collision> primitives
    (which roughly follow the real link shapes); CoM and inertia about the CoM computed
    by generate_models.py (volume-proportional masses + parallel-axis theorem).
    Plausible and physically consistent, NOT the real robot's identified values.
  * No <dynamics> (damping/friction) on purpose: keeps simulator comparisons clean.
  Conventions: SI units; <inertial> origin = CoM in the link frame; ixx..izz are
  tensor entries about the CoM in link-frame axes (ixy = -integral(x y dm)).
  Total mass {sum(ARM_MASSES):.2f} kg including fr3_link0 ({ARM_MASSES[0]} kg, fixed base).
-->
<robot name="fr3_arm">"""
    parts = [header]
    for i, world_prims in enumerate(ARM_GEOMETRY_AT_ZERO):
        rotation, position = frames[i]
        prims = [to_link_frame(p, rotation, position) for p in world_prims]
        comment = 'base, fixed to the world (root link)' if i == 0 else f'modified-DH frame {{{i}}}'
        parts.append(link_xml(f'fr3_link{i}', ARM_MASSES[i], prims, comment))
        if i > 0:
            xyz, rpy = ARM_JOINT_ORIGINS[i - 1]
            parts.append(
                joint_xml(
                    f'fr3_joint{i}',
                    'revolute',
                    f'fr3_link{i - 1}',
                    f'fr3_link{i}',
                    xyz,
                    rpy,
                    (0, 0, 1),
                    ARM_LIMITS[i - 1],
                )
            )
    parts.append(link_xml('fr3_flange', comment='payload attachment frame (massless)'))
    parts.append(joint_xml('fr3_joint8', 'fixed', 'fr3_link7', 'fr3_flange', ARM_FLANGE_XYZ))
    parts.append(link_xml('tool0', comment='tool frame (massless), coincides with fr3_flange'))
    parts.append(joint_xml('fr3_flange_to_tool0', 'fixed', 'fr3_flange', 'tool0'))
    parts.append('</robot>\n')
    return '\n'.join(parts)


# ----------------------------------------------------------------------------- quadruped
TORSO = Primitive('box', (0.5, 0.3, 0.12), (0.0, 0.0, 0.0))
TORSO_MASS = 12.0
HIP_MASS, THIGH_MASS, SHANK_MASS = 1.0, 1.5, 0.4
HIP_OFFSET = (0.22, 0.12, 0.0)  # HAA joint in the base frame (left-front) [m]
THIGH_OFFSET = (0.0, 0.11, 0.0)  # HFE joint in the hip frame (left) [m]
SHANK_OFFSET = (0.0, 0.0, -0.25)  # KFE joint in the thigh frame: thigh length [m]
FOOT_RADIUS = 0.02
FOOT_CENTER = (0.0, 0.0, -0.25)  # foot sphere centre in the shank frame [m]
FOOT_OFFSET = (0.0, 0.0, -0.25 - FOOT_RADIUS)  # sole contact point in the shank frame
# (lower, upper, effort, velocity)
LEG_LIMITS = {
    'haa': (-0.8, 0.8, 40.0, 20.0),
    'hfe': (-1.6, 1.6, 40.0, 20.0),
    'kfe': (-2.7, -0.3, 60.0, 20.0),
}
LEGS = {'lf': (1, 1), 'rf': (1, -1), 'lh': (-1, 1), 'rh': (-1, -1)}  # (x sign, y sign)

# Left-leg geometry in each link frame (right legs: y -> -y).
HIP_GEOMETRY = [
    Primitive('box', (0.08, 0.03, 0.08), (0.0, 0.015, 0.0)),  # HAA output flange
    Primitive('cylinder', (0.05, 0.06), (0.0, 0.06, 0.0), 'y'),  # HFE actuator
]
THIGH_GEOMETRY = [
    Primitive('cylinder', (0.055, 0.07), (0.0, 0.015, 0.0), 'y'),  # KFE actuator at hip
    Primitive('box', (0.06, 0.04, 0.195), (0.0, 0.0, -0.1525)),  # thigh bar
]
SHANK_GEOMETRY = [
    Primitive('cylinder', (0.035, 0.05), (0.0, 0.0, 0.0), 'y'),  # knee housing
    Primitive('box', (0.045, 0.035, 0.09), (0.0, 0.0, -0.08)),  # upper shank
    Primitive('box', (0.025, 0.02, 0.105), (0.0, 0.0, -0.1775)),  # lower shank rod
    Primitive('sphere', (FOOT_RADIUS,), FOOT_CENTER),  # foot
]


def mirrored(primitives: list, y_sign: int) -> list:
    """Primitives mirrored across the xz-plane when y_sign = -1."""
    return [
        Primitive(p.kind, p.size, (p.center[0], y_sign * p.center[1] + 0.0, p.center[2]), p.axis)
        for p in primitives
    ]


def quadruped_urdf() -> str:
    total = TORSO_MASS + 4 * (HIP_MASS + THIGH_MASS + SHANK_MASS)
    header = f"""<?xml version="1.0"?>
<!--
  quadruped: floating-base quadruped, 4 legs x 3 revolute joints. GENERATED by
  generate_models.py (same directory); edit that script, not this file.
  Load with a free-flyer root joint (the root link `base` is the torso).

  Where every number comes from:
  * Dimensions, masses and limits: made up but plausible (no real product).
    Torso box 0.5 x 0.3 x 0.12 m, {TORSO_MASS} kg; per leg hip {HIP_MASS} kg, thigh {THIGH_MASS} kg,
    shank {SHANK_MASS} kg; total {total:.1f} kg. HAA joints at (+-0.22, +-0.12, 0) in the base
    frame,
    HFE 0.11 m outboard of HAA, thigh 0.25 m (HFE to KFE), shank 0.25 m (KFE to foot
    sphere centre), foot sphere radius 0.02 m; the `<leg>_foot` frame is the sole contact
    point, 0.27 m below the knee.
  * Inertias: each link is a uniform-density solid made of its <collision> primitives;
    CoM and inertia about the CoM computed by generate_models.py.
  * No <dynamics> (damping/friction) on purpose.

  Conventions:
  * Legs lf, rf, lh, rh = left-front, right-front, left-hind, right-hind. All joint frames
    are parallel to the base frame in the zero pose (legs straight down, -z).
  * Right legs are exact mirror twins of the left legs across the base xz-plane (same
    masses, CoM y and ixy, iyz sign-flipped). Front and hind legs are identical.
  * Axes: haa +x, hfe +y, kfe +y for every leg (same axis on both sides, so positive haa
    is abduction on the left legs and adduction on the right legs).
  * Knee: positive hfe swings the foot backwards (-x); kfe is always negative
    ([-2.7, -0.3]), so the knee points backwards (-x) on all four legs, e.g. the stance
    pose hfe = 0.8, kfe = -1.6 puts the foot under the hip.
  * SI units; <inertial> ixx..izz are tensor entries about the CoM (ixy = -integral(x y dm)).
-->
<robot name="quadruped">"""
    parts = [header, link_xml('base', TORSO_MASS, [TORSO], 'torso; floating-base root link')]
    for leg, (x_sign, y_sign) in LEGS.items():
        hip_xyz = (x_sign * HIP_OFFSET[0], y_sign * HIP_OFFSET[1], HIP_OFFSET[2])
        thigh_xyz = (THIGH_OFFSET[0], y_sign * THIGH_OFFSET[1], THIGH_OFFSET[2])
        parts.append(link_xml(f'{leg}_hip', HIP_MASS, mirrored(HIP_GEOMETRY, y_sign)))
        parts.append(
            joint_xml(
                f'{leg}_haa',
                'revolute',
                'base',
                f'{leg}_hip',
                hip_xyz,
                axis=(1, 0, 0),
                limit=LEG_LIMITS['haa'],
            )
        )
        parts.append(link_xml(f'{leg}_thigh', THIGH_MASS, mirrored(THIGH_GEOMETRY, y_sign)))
        parts.append(
            joint_xml(
                f'{leg}_hfe',
                'revolute',
                f'{leg}_hip',
                f'{leg}_thigh',
                thigh_xyz,
                axis=(0, 1, 0),
                limit=LEG_LIMITS['hfe'],
            )
        )
        parts.append(link_xml(f'{leg}_shank', SHANK_MASS, mirrored(SHANK_GEOMETRY, y_sign)))
        parts.append(
            joint_xml(
                f'{leg}_kfe',
                'revolute',
                f'{leg}_thigh',
                f'{leg}_shank',
                SHANK_OFFSET,
                axis=(0, 1, 0),
                limit=LEG_LIMITS['kfe'],
            )
        )
        parts.append(link_xml(f'{leg}_foot', comment='sole contact point (massless)'))
        parts.append(
            joint_xml(f'{leg}_foot_fixed', 'fixed', f'{leg}_shank', f'{leg}_foot', FOOT_OFFSET)
        )
    parts.append('</robot>\n')
    return '\n'.join(parts)


# ----------------------------------------------------------------------------- main
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        '--check', action='store_true', help='only verify that the shipped URDFs are up to date'
    )
    args = parser.parse_args(argv)
    outputs = {'fr3_arm.urdf': arm_urdf(), 'quadruped.urdf': quadruped_urdf()}
    stale = []
    for name, text in outputs.items():
        path = MODELS_DIR / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
            print(f'wrote {path}')
    if stale:
        print('out of date: ' + ', '.join(stale) + ' (run generate_models.py)')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
