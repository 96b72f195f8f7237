"""Centroidal diagnostics: the LIPM ZMP next to the full ZMP, the conditioning of the
centroidal momentum matrix, the momentum drift while airborne and the friction cone.

All quantities are in the world frame (CoM-centred, world-aligned axes for momenta), SI units;
g is the gravity *magnitude* along −z and z_g the height of the ground plane.

**ZMP, full and LIPM.** With h = c_z − z_g the CoM height above the ground, c̈ the CoM
acceleration (l̇ / m), k̇ the rate of the angular momentum about the CoM and D = c̈_z + g
(Vukobratović & Borovac 2004; Kajita et al. 2003 for the linear inverted pendulum)::

    full:  p_x = c_x − h c̈_x / D − k̇_y / (m D)        p_y = c_y − h c̈_y / D + k̇_x / (m D)
    LIPM:  p_x = c_x − h c̈_x / g                      p_y = c_y − h c̈_y / g

The LIPM keeps the CoM at a constant height and the angular momentum constant. Their
difference p_LIPM − p_full [m] splits exactly into two parts that add up to it::

    k̇ part:    (k̇_y, −k̇_x) / (m D)
    c̈_z part:  −h c̈_z (c̈_x, c̈_y) / (g D)

A torso pitching at 5 rad/s² on a 46.2 kg robot (k̇_y = 20.69 N·m, c̈_z = 0) moves the full ZMP
k̇_y / (m g) = 4.57 cm from the LIPM point.

**Centroidal momentum matrix.** h_G = A_G(q) v (Orin, Goswami & Lee 2013), from pinocchio's
``ccrba``; its condition number σ_max / σ_min says how well the base twist is determined by
the momentum (rank 6 for a floating base). Rows mix N·s and N·m·s and columns m/s and rad/s,
so the number depends on the units (SI here).

**Flight.** With gravity as the only external force (no contact), l̇ = m g⃗ and k̇ = 0
(g⃗ = (0, 0, −g)): from the start of a flight at t₀ the drifts l − l₀ − m g⃗ (t − t₀) [N·s]
and k − k₀ [N·m·s] stay zero up to noise whatever the joints do (Wieber 2006).

**Friction cone.** A contact force f with contact normal n (unit, pointing from the ground
into the robot) has the normal part f_n = f·n and the tangential part f_t = f − f_n n; it
can be held by Coulomb friction μ when f_n ≥ 0 and |f_t| ≤ μ f_n. The margin μ f_n − |f_t|
[N] is positive inside the cone (Caron, Pham & Nakamura 2015).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.floating_base.capture_point import STANDARD_GRAVITY
from robot_dynamics.core.floating_base.centroidal import (
    FLIGHT_VERTICAL_ACCELERATION,
    CentroidalInputError,
    zero_moment_point,
)
from robot_dynamics.core.model.model import RobotModel

FRICTION_EDGE_TOLERANCE = 1e-9
"""A force this close [N] to the cone surface (or to f_n = 0) still counts as inside."""


# ---------------------------------------------------------------------------- ZMP
def lipm_zero_moment_point(
    com, com_acceleration, ground_height: float = 0.0, gravity: float = STANDARD_GRAVITY
) -> np.ndarray:
    """LIPM ZMP p = c_xy − (c_z − z_g)/g · c̈_xy on the ground plane: (p_x, p_y, z_g) [m].

    ``com`` [m] world frame, ``com_acceleration`` [m/s²] world axes (only x and y are used),
    ``ground_height`` z_g [m], ``gravity`` magnitude [m/s²] (Kajita et al. 2003).
    """
    c, a = _three_floats(com, 'centre of mass'), _three_floats(com_acceleration, 'CoM acceleration')
    if not (math.isfinite(gravity) and gravity > 0.0 and math.isfinite(ground_height)):
        raise CentroidalInputError(
            f'gravity {gravity} m/s² must be positive and the ground height {ground_height} m '
            'finite'
        )
    ratio = (c[2] - ground_height) / gravity
    return np.array([c[0] - ratio * a[0], c[1] - ratio * a[1], ground_height])


def lipm_zmp_from_momentum_rate(
    com: list, momentum_rate: list, mass: float, ground_height: float, gravity: float
) -> tuple:
    """:func:`lipm_zero_moment_point` on plain floats the caller has already checked, as a
    stream has them: ``com`` [m] (3 floats), ``momentum_rate`` ḣ_G = (l̇ [N], k̇ [N·m]) linear
    first (6 floats, c̈ = l̇ / m), ``mass`` [kg] > 0, ``gravity`` magnitude [m/s²] > 0.
    Returns (p_x, p_y, z_g) [m]."""
    ratio = (com[2] - ground_height) / (gravity * mass)
    return (com[0] - ratio * momentum_rate[0], com[1] - ratio * momentum_rate[1], ground_height)


@dataclass(frozen=True)
class ZmpComparison:
    """LIPM and full ZMP [m, world frame, on the ground plane] and what separates them.

    ``full`` and both contributions are None in flight (c̈_z + g ≤ ε: no ZMP). The
    contributions are x-y vectors [m] that add up to ``lipm − full`` (module docstring).
    """

    lipm: np.ndarray
    full: Optional[np.ndarray]
    angular_momentum_contribution: Optional[np.ndarray]
    vertical_acceleration_contribution: Optional[np.ndarray]

    @property
    def difference(self) -> Optional[np.ndarray]:
        """p_LIPM − p_full, x-y [m] (None in flight)."""
        return None if self.full is None else self.lipm[:2] - self.full[:2]

    @property
    def distance(self) -> Optional[float]:
        """|p_LIPM − p_full| [m] (None in flight)."""
        difference = self.difference
        return None if difference is None else float(math.hypot(*difference))


def compare_zero_moment_points(
    com,
    com_acceleration,
    angular_momentum_rate,
    mass: float,
    ground_height: float = 0.0,
    gravity: float = STANDARD_GRAVITY,
    epsilon: float = FLIGHT_VERTICAL_ACCELERATION,
) -> ZmpComparison:
    """The LIPM ZMP, the full ZMP and the k̇ and c̈_z parts of their difference.

    ``com`` [m] world frame, ``com_acceleration`` c̈ [m/s²] and ``angular_momentum_rate`` k̇
    about the CoM [N·m], world axes; ``mass`` [kg]; ``gravity`` magnitude [m/s²]; ``epsilon``
    [m/s²]: with c̈_z + g ≤ ε the robot is in flight and has no full ZMP.
    """
    lipm = lipm_zero_moment_point(com, com_acceleration, ground_height, gravity)
    full = zero_moment_point(
        com, com_acceleration, angular_momentum_rate, mass, ground_height, gravity, epsilon
    )
    if full is None:
        return ZmpComparison(lipm, None, None, None)
    c, a = _three_floats(com, 'centre of mass'), _three_floats(com_acceleration, 'CoM acceleration')
    k_dot = _three_floats(angular_momentum_rate, 'angular momentum rate')
    support = a[2] + gravity
    angular = np.array([k_dot[1], -k_dot[0]]) / (mass * support)
    vertical = -(c[2] - ground_height) * a[2] / (gravity * support) * np.array(a[:2])
    return ZmpComparison(lipm, full, angular, vertical)


# ---------------------------------------------------------------------------- A_G
def centroidal_matrix_condition(robot: RobotModel, q, data: Optional[pin.Data] = None) -> float:
    """Condition number σ_max / σ_min of A_G(q) (pinocchio ``ccrba``, mimic joints folded
    into their leaders as in ``robot.coupling``); inf when A_G has rank < 6.

    ``data``: a pinocchio Data of ``robot.model`` to work in (another thread may own
    ``robot.data``); ``robot.data`` when omitted.
    """
    q = np.asarray(q, dtype=float)
    if q.shape != (robot.model.nq,) or not np.all(np.isfinite(q)):
        raise CentroidalInputError(
            f'configuration q must be {robot.model.nq} finite numbers, got shape {q.shape}'
        )
    data = robot.data if data is None else data
    matrix = pin.ccrba(robot.model, data, q, np.zeros(robot.model.nv)) @ robot.coupling
    singular_values = np.linalg.svd(matrix, compute_uv=False)
    if len(singular_values) < 6 or singular_values[-1] <= 0.0:
        return math.inf
    return float(singular_values[0] / singular_values[-1])


# ---------------------------------------------------------------------------- flight
@dataclass(frozen=True)
class FlightDrift:
    """Momentum drift since the start of a flight at ``start`` [s], after ``duration`` [s]:
    ``linear`` = l − l₀ − m g⃗ (t − t₀) [N·s] and ``angular`` = k − k₀ [N·m·s], world axes."""

    start: float
    duration: float
    linear: np.ndarray
    angular: np.ndarray


def flight_drift(
    start: float,
    linear_start,
    angular_start,
    stamp: float,
    linear,
    angular,
    mass: float,
    gravity: float = STANDARD_GRAVITY,
) -> FlightDrift:
    """:class:`FlightDrift` of momenta l, k [N·s, N·m·s] at ``stamp`` [s] against l₀, k₀ at
    ``start`` [s] for a robot of ``mass`` [kg] under gravity of magnitude ``gravity`` along −z."""
    duration = float(stamp) - float(start)
    expected = np.asarray(linear_start, dtype=float) + np.array(
        [0.0, 0.0, -mass * gravity * duration]
    )
    return FlightDrift(
        float(start),
        duration,
        np.asarray(linear, dtype=float) - expected,
        np.asarray(angular, dtype=float) - np.asarray(angular_start, dtype=float),
    )


class FlightDriftMonitor:
    """Keeps the momentum at the start of the current flight (cheap, one call per state) and
    gives the drift of a later state against it."""

    def __init__(self, mass: float, gravity: float = STANDARD_GRAVITY):
        self.mass, self.gravity = float(mass), float(gravity)
        self._start: Optional[tuple] = None

    def update(self, stamp: float, airborne: bool, momentum) -> None:
        """Record (t₀, l₀, k₀) at the first airborne state, from h_G = (l, k) linear first
        [N·s, N·m·s] at ``stamp`` [s]; forget it when the flight ends."""
        if not airborne:
            self._start = None
        elif self._start is None:
            momentum = np.array(momentum, dtype=float).reshape(6)
            self._start = (float(stamp), momentum[:3], momentum[3:])

    @property
    def start(self) -> Optional[tuple]:
        """(t₀ [s], l₀ [N·s], k₀ [N·m·s]) of the current flight, None when not in flight."""
        return self._start

    def drift(self, stamp: float, linear, angular) -> Optional[FlightDrift]:
        """Drift at ``stamp`` [s] of l, k; None when not in flight."""
        start = self._start
        if start is None:
            return None
        return flight_drift(
            start[0], start[1], start[2], stamp, linear, angular, self.mass, self.gravity
        )


# ---------------------------------------------------------------------------- friction cone
@dataclass(frozen=True)
class FrictionConeCheck:
    """One contact force against its friction cone: ``normal_force`` f_n [N],
    ``tangential_force`` |f_t| [N], ``margin`` μ f_n − |f_t| [N] (positive inside)."""

    normal_force: float
    tangential_force: float
    margin: float

    @property
    def pushing(self) -> bool:
        """f_n ≥ 0: the ground pushes (a unilateral contact cannot pull)."""
        return self.normal_force >= -FRICTION_EDGE_TOLERANCE

    @property
    def inside(self) -> bool:
        """f_n ≥ 0 and |f_t| ≤ μ f_n (within :data:`FRICTION_EDGE_TOLERANCE`)."""
        return self.pushing and self.margin >= -FRICTION_EDGE_TOLERANCE


def friction_cone_check(force, normal, friction_coefficient: float) -> FrictionConeCheck:
    """Check the contact ``force`` [N] (what the ground applies to the robot) against the cone
    of Coulomb coefficient μ = ``friction_coefficient`` > 0 around ``normal`` (any length,
    not zero, pointing into the robot); force and normal in the same frame."""
    f = np.array(_three_floats(force, 'contact force'))
    n = np.array(_three_floats(normal, 'contact normal'))
    length = math.sqrt(float(n @ n))
    if length == 0.0:
        raise CentroidalInputError('contact normal is zero')
    if not (math.isfinite(friction_coefficient) and friction_coefficient > 0.0):
        raise CentroidalInputError(
            f'friction coefficient must be positive and finite, got {friction_coefficient}'
        )
    n = n / length
    normal_force = float(f @ n)
    tangential = float(np.linalg.norm(f - normal_force * n))
    return FrictionConeCheck(
        normal_force, tangential, friction_coefficient * normal_force - tangential
    )


def friction_cone_checks(forces: Sequence, normals: Sequence, friction_coefficient: float) -> list:
    """:func:`friction_cone_check` for each row of ``forces`` (k × 3) with the matching row of
    ``normals`` (k × 3, or one 3-vector for all)."""
    forces = np.asarray(forces, dtype=float).reshape(-1, 3)
    normals = np.broadcast_to(np.asarray(normals, dtype=float), forces.shape)
    return [friction_cone_check(f, n, friction_coefficient) for f, n in zip(forces, normals)]


def _three_floats(values, label: str) -> list:
    try:
        floats = [float(x) for x in (values.tolist() if isinstance(values, np.ndarray) else values)]
    except (TypeError, ValueError):
        raise CentroidalInputError(f'{label} is not a list of numbers') from None
    if len(floats) != 3:
        raise CentroidalInputError(f'{label} must have 3 entries, got {len(floats)}')
    if not math.isfinite(sum(floats)) and not all(map(math.isfinite, floats)):
        raise CentroidalInputError(f'{label} contains NaN or Inf: {floats}')
    return floats
