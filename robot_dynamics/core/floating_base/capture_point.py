"""Capture point: the divergent component of motion (DCM) of the linear inverted pendulum.

For a CoM c at height c_z − z_g above the ground plane z = z_g, with velocity ċ:

    ω = √(g / (c_z − z_g))          natural frequency of the pendulum [1/s]
    ξ = c + ċ / ω                   divergent component of motion [m]

(Englsberger, Ott and Albu-Schäffer, "Three-dimensional bipedal walking control based on
divergent component of motion", IEEE T-RO 2015; Pratt, Carff, Drakunov and Goswami, "Capture
point: a step toward humanoid push recovery", Humanoids 2006.) The (instantaneous) capture
point is ξ on the ground plane, (c_x + ċ_x/ω, c_y + ċ_y/ω, z_g): the point where the ZMP has
to be placed for the pendulum to come to rest above it. A robot standing still has it at its
CoM ground projection; outside the support polygon the robot cannot stop without a step.

World frame, SI units; g is the gravity magnitude along −z. Undefined (None) when the CoM is
not above the ground plane (c_z ≤ z_g: no pendulum).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from robot_dynamics.core.errors import RobotDynamicsError

STANDARD_GRAVITY = 9.81
"""Gravity magnitude used by default [m/s²]."""


class CapturePointInputError(RobotDynamicsError):
    """A CoM, CoM velocity, ground height or gravity given to the capture point is unusable."""


def pendulum_frequency(com_height: float, gravity: float = STANDARD_GRAVITY) -> Optional[float]:
    """ω = √(g / h) [1/s] of a linear inverted pendulum of height ``com_height`` h [m] above the
    ground; None when h ≤ 0 (the CoM is not above the ground)."""
    if not (math.isfinite(com_height) and math.isfinite(gravity) and gravity > 0.0):
        raise CapturePointInputError(
            f'CoM height {com_height} m and gravity {gravity} m/s² must be finite, gravity positive'
        )
    if com_height <= 0.0:
        return None
    return math.sqrt(gravity / com_height)


def capture_point(
    com, com_velocity, ground_height: float = 0.0, gravity: float = STANDARD_GRAVITY
) -> Optional[np.ndarray]:
    """Instantaneous capture point (x, y, z_g) [m] on the ground plane z = ``ground_height``.

    ``com`` c [m] in the world frame, ``com_velocity`` ċ [m/s] in world axes, ``gravity``
    magnitude g [m/s²] along −z. Returns (c_x + ċ_x/ω, c_y + ċ_y/ω, z_g) with
    ω = √(g / (c_z − z_g)), or None when c_z ≤ z_g. Raises CapturePointInputError for a
    vector that is not 3 finite numbers.
    """
    xy = capture_point_xy(
        _finite_point(com, 'centre of mass'),
        _finite_point(com_velocity, 'CoM velocity'),
        ground_height,
        gravity,
    )
    return None if xy is None else np.array([xy[0], xy[1], float(ground_height)])


def capture_point_xy(
    com: list, com_velocity: list, ground_height: float, gravity: float
) -> Optional[tuple]:
    """The formula of :func:`capture_point` on floats, unchecked: ``com`` [c_x, c_y, c_z] [m],
    ``com_velocity`` [ċ_x, ċ_y, ċ_z] [m/s] (world); returns (ξ_x, ξ_y) [m] or None if c_z ≤ z_g."""
    omega = pendulum_frequency(com[2] - ground_height, gravity)
    if omega is None:
        return None
    return com[0] + com_velocity[0] / omega, com[1] + com_velocity[1] / omega


def _finite_point(values, label: str) -> list:
    try:
        xyz = np.asarray(values, dtype=float).reshape(-1).tolist()
    except (TypeError, ValueError):
        raise CapturePointInputError(f'{label} is not a list of numbers') from None
    if len(xyz) != 3 or not all(math.isfinite(x) for x in xyz):
        raise CapturePointInputError(f'{label} must be 3 finite numbers, got {xyz}')
    return xyz
