"""How findings write their numbers: JSON/YAML-ready values, short vectors, URDF snippets.

An ``<inertial>`` snippet follows the URDF convention: the origin is the CoM frame in the link
frame (``xyz`` [m], ``rpy`` [rad]), the tensor entries [kg·m²] are about the CoM in that frame.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from robot_dynamics.core.validation.context import LinkGeometry
from robot_dynamics.core.validation.mesh_inertia import SolidMassProperties


def plain(value):
    """``value`` with numpy scalars and arrays turned into Python floats and lists
    (YAML/JSON-ready)."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(item) for item in value]
    if isinstance(value, (np.floating, np.integer)):
        return float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def inertial_snippet(mass: float, xyz, rpy, tensor: np.ndarray) -> str:
    """A URDF ``<inertial>`` block: CoM ``xyz`` [m] and ``rpy`` [rad] in the link frame, the
    tensor about the CoM in that (rpy) frame [kg·m²]."""
    xyz = _without_round_off(np.asarray(xyz, dtype=float), 1.0)
    tensor = _without_round_off(np.asarray(tensor, dtype=float), float(np.max(np.abs(tensor))))
    number = '{:.9g}'.format
    return (
        f'<inertial>\n  <origin xyz="{" ".join(number(v) for v in xyz)}" '
        f'rpy="{" ".join(number(v) for v in rpy)}"/>\n  <mass value="{number(mass)}"/>\n  <inertia '
        f'ixx="{number(tensor[0, 0])}" ixy="{number(tensor[0, 1])}" ixz="{number(tensor[0, 2])}" '
        f'iyy="{number(tensor[1, 1])}" iyz="{number(tensor[1, 2])}" '
        f'izz="{number(tensor[2, 2])}"/>\n</inertial>'
    )


def _without_round_off(values: np.ndarray, scale: float) -> np.ndarray:
    """Entries below 1e-12 × ``scale`` set to exactly 0 (floating-point noise in a snippet)."""
    return np.where(np.abs(values) < 1e-12 * scale, 0.0, values)


def geometry_snippet(mass: float, solid: SolidMassProperties) -> str:
    return inertial_snippet(mass, solid.centroid, (0.0, 0.0, 0.0), solid.inertia_com(mass))


def geometry_alternative(mass: float, geometry: Optional[LinkGeometry]) -> str:
    if geometry is None or geometry.solid is None:
        return ''
    return (
        f'; the uniform-density inertia of the {geometry.solid_source} geometry for this mass is:\n'
        + geometry_snippet(mass, geometry.solid)
    )


def floats(array) -> list:
    """A JSON/YAML-ready nested list of Python floats."""
    return np.asarray(array, dtype=float).tolist()


def vector_text(vector) -> str:
    return '(' + ', '.join(f'{v:.4g}' for v in np.asarray(vector, dtype=float)) + ')'
