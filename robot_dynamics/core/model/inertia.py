"""Rigid-body inertial parameters: the 10-parameter sets, spatial and pseudo inertia.

Two 10-parameter orders exist and are never mixed silently:

* pinocchio (``Inertia.toDynamicParameters``):
  ``[m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``
* upper triangle: ``[m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]``, the inertia tensor's
  upper triangle read row by row, the order Khalil & Dombre 2002 list the inertia entries in

In both, h = m·c is the first mass moment and the rotational inertia is about the *frame
origin* (not the CoM), as tensor entries: Ī = I_C + m(cᵀc·1 − c cᵀ), the parallel-axis
theorem (Featherstone 2008). The spatial and pseudo inertia follow Featherstone 2008 and
Wensing, Kim & Slotine 2017.
Units: kg, kg·m, kg·m².
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from robot_dynamics.core.errors import RobotDynamicsError

PINOCCHIO_ORDER = ('m', 'hx', 'hy', 'hz', 'Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')
UPPER_TRIANGLE_ORDER = ('m', 'hx', 'hy', 'hz', 'Ixx', 'Ixy', 'Ixz', 'Iyy', 'Iyz', 'Izz')
PINOCCHIO_TO_UPPER_TRIANGLE = np.array(
    [PINOCCHIO_ORDER.index(name) for name in UPPER_TRIANGLE_ORDER]
)
"""``upper_triangle_vector = pinocchio_vector[PINOCCHIO_TO_UPPER_TRIANGLE]`` (swaps Iyy and Ixz);
self-inverse."""


class InertialParametersError(RobotDynamicsError):
    """A 10-parameter vector is not a body with a centre of mass: wrong length, non-finite
    entries, or a mass that is not positive (the CoM h/m is then undefined)."""


def skew(vector: np.ndarray) -> np.ndarray:
    """The cross-product matrix [v]× such that [v]× x = v × x."""
    x, y, z = vector
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def parallel_axis(inertia_com: np.ndarray, mass: float, offset: np.ndarray) -> np.ndarray:
    """Inertia about a point A from the inertia about the CoM (same axes).

    ``offset`` is the vector from A to the CoM [m]: Ī_A = I_C + m(|p|²·1 − p pᵀ)
    (the parallel-axis theorem; Featherstone 2008).
    """
    offset = np.asarray(offset, dtype=float)
    return inertia_com + mass * (offset @ offset * np.eye(3) - np.outer(offset, offset))


@dataclass(frozen=True)
class InertialParameters:
    """Mass [kg], CoM ``com`` [m] and inertia about the CoM ``inertia_com`` [kg·m²] (3×3),
    all expressed in one reference frame (named by whoever holds the object)."""

    mass: float
    com: np.ndarray
    inertia_com: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, 'mass', float(self.mass))
        object.__setattr__(self, 'com', np.array(self.com, dtype=float).reshape(3))
        object.__setattr__(
            self, 'inertia_com', np.array(self.inertia_com, dtype=float).reshape(3, 3)
        )

    @classmethod
    def point_mass(cls, mass: float, com) -> 'InertialParameters':
        return cls(mass, com, np.zeros((3, 3)))

    @classmethod
    def from_pinocchio(cls, inertia: pin.Inertia) -> 'InertialParameters':
        return cls(inertia.mass, inertia.lever, inertia.inertia)

    @classmethod
    def from_pinocchio_vector(cls, parameters: np.ndarray) -> 'InertialParameters':
        """From pinocchio's 10-vector (order :data:`PINOCCHIO_ORDER`, about the origin;
        kg, kg·m, kg·m²).

        Raises :class:`InertialParametersError` unless the vector has 10 finite entries and
        m > 0 (the CoM is h/m; a massless vector has no CoM, use :meth:`point_mass`).
        """
        return cls._from_checked_vector(_checked_vector(parameters, 'pinocchio'))

    @classmethod
    def from_upper_triangle_vector(cls, parameters: np.ndarray) -> 'InertialParameters':
        """From a 10-vector in :data:`UPPER_TRIANGLE_ORDER` (about the origin; kg, kg·m,
        kg·m²). Same checks as :meth:`from_pinocchio_vector`."""
        return cls._from_checked_vector(
            _checked_vector(parameters, 'upper-triangle')[PINOCCHIO_TO_UPPER_TRIANGLE]
        )

    @classmethod
    def _from_checked_vector(cls, parameters: np.ndarray) -> 'InertialParameters':
        """From a pinocchio-order vector that passed :func:`_checked_vector`; refuses a CoM h/m
        that overflows (a tiny mass)."""
        result = cls.from_pinocchio(pin.Inertia.FromDynamicParameters(parameters))
        if not (np.all(np.isfinite(result.com)) and np.all(np.isfinite(result.inertia_com))):
            raise InertialParametersError(
                f'mass {parameters[0]:.6g} kg is too small for first moment '
                f'{parameters[1:4].tolist()} kg·m: the CoM h/m overflows'
            )
        return result

    def to_pinocchio(self) -> pin.Inertia:
        return pin.Inertia(self.mass, self.com, self.inertia_com)

    def pinocchio_vector(self) -> np.ndarray:
        """10 parameters about the frame origin, pinocchio order."""
        return self.to_pinocchio().toDynamicParameters()

    def upper_triangle_vector(self) -> np.ndarray:
        """10 parameters about the frame origin, :data:`UPPER_TRIANGLE_ORDER`."""
        return self.pinocchio_vector()[PINOCCHIO_TO_UPPER_TRIANGLE]

    def inertia_origin(self) -> np.ndarray:
        """Rotational inertia about the frame origin [kg·m²]."""
        return parallel_axis(self.inertia_com, self.mass, self.com)

    def transformed(self, rotation: np.ndarray, translation: np.ndarray) -> 'InertialParameters':
        """The same body expressed in a parent frame where this frame has pose (R, p)."""
        rotation = np.asarray(rotation, dtype=float)
        return InertialParameters(
            self.mass,
            rotation @ self.com + np.asarray(translation, dtype=float),
            rotation @ self.inertia_com @ rotation.T,
        )

    def __add__(self, other: 'InertialParameters') -> 'InertialParameters':
        return InertialParameters.from_pinocchio(self.to_pinocchio() + other.to_pinocchio())

    def __repr__(self) -> str:
        return (
            f'InertialParameters(mass={self.mass:.6g} kg, com={np.round(self.com, 6).tolist()} m, '
            f'inertia_com diag={np.round(np.diag(self.inertia_com), 9).tolist()} kg·m²)'
        )


def _checked_vector(parameters, order: str) -> np.ndarray:
    """``parameters`` as 10 floats with a finite positive mass, else
    :class:`InertialParametersError`."""
    try:
        vector = np.asarray(parameters, dtype=float).reshape(-1)
    except (TypeError, ValueError) as error:
        raise InertialParametersError(f'inertial parameters are not numbers: {error}') from None
    if vector.shape != (10,):
        raise InertialParametersError(
            f'an inertial parameter vector in {order} order has 10 entries, got {vector.size}'
        )
    if not np.all(np.isfinite(vector)):
        raise InertialParametersError(f'inertial parameters {vector.tolist()} are not all finite')
    if not vector[0] > 0.0:
        raise InertialParametersError(
            f'mass {vector[0]:g} kg is not positive: the centre of mass h/m is undefined (a '
            'massless body has no CoM; use InertialParameters.point_mass(0, com))'
        )
    return vector


def pseudo_inertia_from_vector(parameters: np.ndarray) -> np.ndarray:
    """Pseudo-inertia J from a pinocchio-order 10-vector (linear in it, so usable in an LMI
    when the entries are cvxpy expressions... for numpy arrays use this directly)."""
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = parameters
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    sigma = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    pseudo = np.zeros((4, 4))
    pseudo[:3, :3] = sigma
    pseudo[:3, 3] = pseudo[3, :3] = (hx, hy, hz)
    pseudo[3, 3] = m
    return pseudo


class InertiaProjectionError(RobotDynamicsError):
    """The nearest physically consistent inertia could not be computed (solver failure)."""


def principal_inertia(inertia: np.ndarray) -> tuple:
    """Principal moments (ascending) [kg·m²] and principal axes (columns, same frame as
    ``inertia``) of a symmetric 3×3 inertia tensor (its eigen-decomposition)."""
    inertia = np.asarray(inertia, dtype=float)
    return np.linalg.eigh(0.5 * (inertia + inertia.T))


def triangle_margins(principal_moments: np.ndarray) -> np.ndarray:
    """Margins λ_j + λ_k − λ_i [kg·m²] for i = 0, 1, 2 (the triangle
    inequality of rigid-body inertia; Wensing, Kim & Slotine 2017).

    All ≥ 0 iff the moments belong to a rigid body; they equal twice the eigenvalues of the
    second moment Σ_C = ½tr(I_C)·1 − I_C.
    """
    moments = np.asarray(principal_moments, dtype=float)
    return moments.sum() - 2.0 * moments


def box_inertia(mass: float, size) -> np.ndarray:
    """Inertia about the centre [kg·m²] of a uniform box with edge lengths ``size`` [m] along
    x, y, z: (m/12)·diag(b² + c², a² + c², a² + b²)."""
    a, b, c = np.asarray(size, dtype=float) ** 2
    return mass / 12.0 * np.diag([b + c, a + c, a + b])


def cylinder_inertia(mass: float, radius: float, length: float) -> np.ndarray:
    """Inertia about the centre [kg·m²] of a uniform solid cylinder, axis z: transverse
    m(3r² + l²)/12, axial m r²/2."""
    transverse = mass * (3.0 * radius**2 + length**2) / 12.0
    return np.diag([transverse, transverse, 0.5 * mass * radius**2])


def sphere_inertia(mass: float, radius: float) -> np.ndarray:
    """Inertia about the centre [kg·m²] of a uniform solid sphere: (2/5) m r² · 1."""
    return 0.4 * mass * radius**2 * np.eye(3)


def nearest_consistent_inertia(inertia: np.ndarray, relative_margin: float = 1e-4) -> np.ndarray:
    """The physically consistent inertia about the CoM closest (Frobenius norm) to ``inertia``.

    Solves the small SDP  min ‖X − I‖_F  s.t.  ½tr(X)·1 − X ⪰ δ·1  with cvxpy/Clarabel:
    the second moment about the CoM is positive definite, which is the triangle inequality
    with margin 2δ and implies X ≻ 0 (the LMI of Wensing, Kim & Slotine 2017 with mass and CoM held
    fixed).
    δ = ``relative_margin`` × the tensor's scale, so the result stays consistent after
    printing with a few significant digits. Frame and units those of ``inertia`` [kg·m²].
    """
    import cvxpy as cp

    inertia = 0.5 * (np.asarray(inertia, dtype=float) + np.asarray(inertia, dtype=float).T)
    scale = float(np.max(np.abs(np.linalg.eigvalsh(inertia))))
    if scale == 0.0:
        raise InertiaProjectionError(
            'the inertia tensor is zero: there is no nearest tensor to choose'
        )
    target = inertia / scale
    variable = cp.Variable((3, 3), symmetric=True)
    second_moment = 0.5 * cp.trace(variable) * np.eye(3) - variable
    problem = cp.Problem(
        cp.Minimize(cp.norm(variable - target, 'fro')),
        [second_moment >> relative_margin * np.eye(3)],
    )
    try:
        problem.solve(solver=cp.CLARABEL)
    except cp.error.SolverError as error:
        raise InertiaProjectionError(f'the inertia projection SDP failed: {error}') from None
    if problem.status not in ('optimal', 'optimal_inaccurate') or variable.value is None:
        raise InertiaProjectionError(
            f'the inertia projection SDP ended with status {problem.status}'
        )
    return 0.5 * (variable.value + variable.value.T) * scale
