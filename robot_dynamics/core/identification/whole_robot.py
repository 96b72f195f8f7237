"""Whole-robot dynamic parameter identification (Khalil & Dombre 2002; consistency by
Wensing, Kim & Slotine 2017).

Model (Khalil & Dombre 2002), per joint j [N·m]:
    τ_j = (Y(q, q̇, q̈) π)_j + I_a,j q̈_j + F_v,j q̇_j + F_c,j sgn_σ(q̇_j) + F_o,j
with π the 10 parameters of every pinocchio body (order
:data:`~robot_dynamics.core.model.inertia.PINOCCHIO_ORDER`, about the joint frame, see
:mod:`~robot_dynamics.core.dynamics.regressor`) and the optional rotor inertia I_a [kg·m²],
viscous F_v [N·m·s/rad], Coulomb F_c [N·m] and offset F_o [N·m] per joint. sgn_σ(q̇) =
tanh(q̇/σ_j), the exact sign for σ_j = 0: a real joint's friction does not flip in an instant
at a velocity reversal (pre-sliding; Armstrong-Hélouvry, Dupont & Canudas de Wit, 1994), and
with an exact sign a live residual jumps by 2 F_c whenever a noisy measured velocity crosses
zero. :func:`chosen_sign_velocities` picks σ_j from the training data.

Pipeline: base parameters by column-pivoted QR on random states, structurally zero columns
removed first (Khalil & Dombre 2002) → OLS, then per-joint weighted LS with covariance (each
std raised to a block sandwich estimate, since rows of filtered signals are correlated in
time; :mod:`~robot_dynamics.core.identification.covariance`) → physically consistent standard
parameters,
J(π_i) ⪰ 0 per body, prior-weighted towards the URDF (the LMI of Wensing, Kim & Slotine
2017, cvxpy + Clarabel) → identified URDF and friction YAML
(:mod:`~robot_dynamics.core.identification.identified_model`).

Parameter names: ``<p><b>`` with p in m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz and b the
1-based body number (h = m·c); ``Ia<j>``, ``Fv<j>``, ``Fc<j>``, ``Fo<j>`` per 1-based joint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence, Union

import numpy as np
import scipy.linalg

from robot_dynamics.core.dynamics.friction import STRIBECK_VELOCITY, smooth_sign, stribeck_shape
from robot_dynamics.core.dynamics.regressor import (
    PARAMETERS_PER_BODY,
    body_link_names,
    body_parameter_vector,
    num_bodies,
    stacked_regressor,
)
from robot_dynamics.core.errors import IdentificationRefused, RobotDynamicsError
from robot_dynamics.core.identification.covariance import classic_covariance, correlated_covariance
from robot_dynamics.core.identification.recording import PreparedData
from robot_dynamics.core.model.inertia import pseudo_inertia_from_vector
from robot_dynamics.core.model.model import RobotModel

BODY_PARAMETER_NAMES = ('m', 'hx', 'hy', 'hz', 'Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')
FRICTION_TERMS = ('viscous', 'coulomb', 'offset', 'stribeck')
"""``stribeck``: the excess breakaway level (static − Coulomb) [N·m], with its shape
exp(−(q̇/v_s)²)·sgn(q̇) at the fixed characteristic velocity ``ModelTerms.stribeck_velocity``."""
_TERM_PREFIX = {
    'rotor_inertia': 'Ia',
    'viscous': 'Fv',
    'coulomb': 'Fc',
    'offset': 'Fo',
    'stribeck': 'Fs',
}
_TERM_PRIOR_SCALE = {
    'rotor_inertia': 0.05,
    'viscous': 1.0,
    'coulomb': 1.0,
    'offset': 1.0,
    'stribeck': 1.0,
}
_BODY_PRIOR_SCALE = np.array([1.0, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05])
"""Prior scales of the consistent fit: 1 kg, 0.1 kg·m, 0.05 kg·m² (Λ = diag(1/scale²))."""

NOISE_COLUMN_TOLERANCE = 1e-10
"""A column whose norm is below this × the largest column norm is numerical noise."""
PIVOT_TOLERANCE = 1e-9
"""Pivoted-QR rank threshold relative to the first pivot."""
DEFAULT_PRIOR_WEIGHT = 100.0
"""κ in ‖W(τ − Yπ)‖² + κ (π − π0)ᵀ Λ (π − π0), the data rows whitened by 1/σ_j: a prior of
1σ = scale/√κ per parameter whatever the noise (a prior scaled by κ'/σ² on unwhitened rows is
this with κ' = κ σ²; docs/identification.md). There is no data-driven rule for κ; on the real
Panda recording (Gaz et al. 2019) this value keeps every link mass near the URDF's without
raising the held-out torque error, while a much weaker prior lets masses drift to the LMI
boundary (figures in docs/identification.md)."""
FEASIBILITY_MARGIN = 1e-7
"""The constrained fit enforces J(π_i) ⪰ this·1 [kg·m²]; a link counts as infeasible when
min eig J(π_i) < −this."""


class IdentificationError(RobotDynamicsError):
    """Identification options or data do not fit together (unknown friction term, shapes)."""


class InsufficientExcitation(IdentificationRefused):
    """The recorded motion does not excite every base parameter (rank-deficient data)."""


class ConsistentFitError(IdentificationRefused):
    """The physically consistent (LMI) fit failed in the solver."""


# ---------------------------------------------------------------------------- model terms
@dataclass(frozen=True)
class ModelTerms:
    """Which per-joint terms join the rigid-body regressor: ``friction`` ⊆ :data:`FRICTION_TERMS`
    (canonical order) and ``rotor_inertia``; ``sign_velocity`` σ [rad/s] of the Coulomb and
    Stribeck terms' smooth sign tanh(q̇/σ), one for every joint or one per joint (0: the exact
    sign)."""

    friction: tuple = ()
    rotor_inertia: bool = False
    stribeck_velocity: float = STRIBECK_VELOCITY
    sign_velocity: Union[float, tuple] = 0.0

    def __post_init__(self):
        unknown = [term for term in self.friction if term not in FRICTION_TERMS]
        if unknown:
            raise IdentificationError(
                f'unknown friction terms {unknown}; choose from {list(FRICTION_TERMS)}'
            )
        object.__setattr__(self, 'friction', tuple(t for t in FRICTION_TERMS if t in self.friction))
        if not (0.0 < self.stribeck_velocity < math.inf):
            raise IdentificationError(
                f'stribeck velocity must be a positive velocity [rad/s], got '
                f'{self.stribeck_velocity!r}'
            )
        sign_velocity = np.asarray(self.sign_velocity, dtype=float)
        if sign_velocity.ndim > 1 or not np.all(np.isfinite(sign_velocity) & (sign_velocity >= 0)):
            raise IdentificationError(
                'sign velocity must be >= 0 rad/s (one, or one per joint), got '
                f'{self.sign_velocity!r}'
            )
        sign_velocity = float(sign_velocity) if sign_velocity.ndim == 0 else tuple(sign_velocity)
        object.__setattr__(self, 'sign_velocity', sign_velocity)

    @classmethod
    def parse(
        cls,
        friction: str = '',
        rotor_inertia: bool = False,
        stribeck_velocity: float = STRIBECK_VELOCITY,
    ) -> 'ModelTerms':
        """From a comma-separated list such as ``'viscous,coulomb,offset'`` (empty: none)."""
        terms = tuple(t.strip() for t in friction.split(',') if t.strip())
        return cls(terms, rotor_inertia, stribeck_velocity)

    @property
    def joint_terms(self) -> tuple:
        """Per-joint terms in column order."""
        return (('rotor_inertia',) if self.rotor_inertia else ()) + self.friction


def parameter_names(robot: RobotModel, terms: ModelTerms = ModelTerms()) -> tuple:
    """Names of the columns of :func:`extended_regressor` (see the module docstring)."""
    body = [f'{name}{b + 1}' for b in range(num_bodies(robot)) for name in BODY_PARAMETER_NAMES]
    joint = [
        f'{_TERM_PREFIX[term]}{j + 1}'
        for j in range(robot.num_joints)
        for term in terms.joint_terms
    ]
    return tuple(body + joint)


def extended_regressor(
    robot: RobotModel,
    positions: np.ndarray,
    velocities: np.ndarray,
    accelerations: np.ndarray,
    terms: ModelTerms = ModelTerms(),
) -> np.ndarray:
    """[Y | per-joint columns], (N·n, 10·nbodies + n·len(terms.joint_terms)), rows sample-major.

    Joint-space arrays (N, n) in ``robot.joint_names`` order [rad, rad/s, rad/s²].
    """
    rigid = stacked_regressor(robot, positions, velocities, accelerations)
    return np.hstack([rigid, joint_term_columns(velocities, accelerations, terms)])


def joint_term_columns(
    velocities: np.ndarray, accelerations: np.ndarray, terms: ModelTerms
) -> np.ndarray:
    """The per-joint columns of :func:`extended_regressor`, (N·n, n·len(terms.joint_terms))."""
    velocities = np.atleast_2d(np.asarray(velocities, dtype=float))
    samples, n = velocities.shape
    count = len(terms.joint_terms)
    extra = np.zeros((samples * n, n * count))
    columns = {
        'rotor_inertia': np.atleast_2d(np.asarray(accelerations, dtype=float)),
        'viscous': velocities,
        'coulomb': smooth_sign(velocities, terms.sign_velocity),
        'offset': np.ones_like(velocities),
        'stribeck': stribeck_shape(velocities, terms.stribeck_velocity, terms.sign_velocity),
    }
    for j in range(n):
        for k, term in enumerate(terms.joint_terms):
            extra[j::n, j * count + k] = columns[term][:, j]
    return extra


def prior_parameters(robot: RobotModel, terms: ModelTerms = ModelTerms()) -> np.ndarray:
    """The URDF's standard parameters, per-joint terms zero (same layout as
    :func:`parameter_names`)."""
    return np.concatenate(
        [body_parameter_vector(robot), np.zeros(robot.num_joints * len(terms.joint_terms))]
    )


def friction_values(robot: RobotModel, terms: ModelTerms, standard: np.ndarray) -> dict:
    """{joint: {term: value}} of the per-joint terms in a standard vector (SI units)."""
    offset, count = PARAMETERS_PER_BODY * num_bodies(robot), len(terms.joint_terms)
    return {
        joint: {
            term: float(standard[offset + j * count + k])
            for k, term in enumerate(terms.joint_terms)
        }
        for j, joint in enumerate(robot.joint_names)
    }


# ---------------------------------------------------------------------------- base parameters
@dataclass(frozen=True)
class BaseParameters:
    """β = π[independent] + combination @ π[dependent] (Khalil & Dombre 2002), so that
    Y π = Y[:, independent] β for every π.

    ``names``: all standard parameter names; ``independent`` / ``dependent``: column
    indices; ``combination``: K (b × d); ``zero_columns``: names of the structurally zero
    columns (they never affect torque).
    """

    names: tuple
    independent: np.ndarray
    dependent: np.ndarray
    combination: np.ndarray
    zero_columns: tuple

    @property
    def num_base(self) -> int:
        return len(self.independent)

    def values(self, standard: np.ndarray) -> np.ndarray:
        """β from a standard parameter vector."""
        standard = np.asarray(standard, dtype=float)
        return standard[self.independent] + self.combination @ standard[self.dependent]

    def regressor(self, full: np.ndarray) -> np.ndarray:
        """The base regressor Y_b: the independent columns of a full regressor."""
        return full[:, self.independent]

    def coefficient(self, base_name: str, standard_name: str) -> float:
        """How much of ``standard_name`` enters the base parameter led by ``base_name``."""
        row = list(self.names[i] for i in self.independent).index(base_name)
        column = list(self.names[i] for i in self.dependent).index(standard_name)
        return float(self.combination[row, column])

    def expressions(self, threshold: float = 1e-9) -> tuple:
        """Readable base parameters, e.g. ``'Izz1 + 0.16·m2 + ...'``."""
        texts = []
        for row, index in enumerate(self.independent):
            text = self.names[index]
            for column in np.argsort(self.dependent):
                value = self.combination[row, column]
                if abs(value) > threshold:
                    factor = '' if abs(abs(value) - 1.0) < threshold else f'{abs(value):.6g}·'
                    text += (
                        f' {"+" if value > 0 else "-"} {factor}{self.names[self.dependent[column]]}'
                    )
            texts.append(text)
        return tuple(texts)

    def __repr__(self) -> str:
        return (
            f'BaseParameters({self.num_base} of {len(self.names)}, {len(self.zero_columns)} zero '
            'columns)'
        )


def base_parameters(regressor: np.ndarray, names: Sequence[str]) -> BaseParameters:
    """Base parameters of a stacked regressor by column-pivoted QR (Khalil & Dombre 2002).

    Columns with norm < :data:`NOISE_COLUMN_TOLERANCE` × the largest are zeroed, the rest
    normalised; column-pivoted Householder QR; rank = pivots ≥ :data:`PIVOT_TOLERANCE` × the
    first; K = R11⁻¹ R12 rescaled to the original columns.
    """
    names = tuple(names)
    if regressor.shape[1] != len(names):
        raise IdentificationError(
            f'{regressor.shape[1]} regressor columns but {len(names)} parameter names'
        )
    norms = np.linalg.norm(regressor, axis=0)
    zero = norms < NOISE_COLUMN_TOLERANCE * norms.max()
    norms[zero] = 1.0
    normalised = regressor / norms
    normalised[:, zero] = 0.0
    _, upper, permutation = scipy.linalg.qr(normalised, mode='economic', pivoting=True)
    pivots = np.abs(np.diag(upper))
    rank = int(np.count_nonzero(pivots >= PIVOT_TOLERANCE * pivots[0]))
    independent, dependent = permutation[:rank], permutation[rank:]
    scaled = scipy.linalg.solve_triangular(upper[:rank, :rank], upper[:rank, rank:])
    combination = scaled * norms[dependent][None, :] / norms[independent][:, None]
    combination[:, zero[dependent]] = 0.0
    order = np.argsort(independent)
    return BaseParameters(
        names,
        independent[order],
        dependent,
        combination[order],
        tuple(names[i] for i in np.flatnonzero(zero)),
    )


def random_states(robot: RobotModel, count: int, seed: int = 0, static: bool = False) -> tuple:
    """(positions, velocities, accelerations), each (count, n): positions uniform within the
    URDF limits (±π where unlimited), velocities and accelerations uniform in ±1 rad/s(²)
    (zero when ``static``)."""
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(robot.limits.lower), robot.limits.lower, -math.pi)
    upper = np.where(np.isfinite(robot.limits.upper), robot.limits.upper, math.pi)
    positions = rng.uniform(lower, upper, (count, robot.num_joints))
    motion = np.zeros if static else (lambda shape: rng.uniform(-1.0, 1.0, shape))
    return positions, motion((count, robot.num_joints)), motion((count, robot.num_joints))


def structural_base_parameters(
    robot: RobotModel,
    terms: ModelTerms = ModelTerms(),
    samples: int = 80,
    seed: int = 0,
    static: bool = False,
) -> BaseParameters:
    """Base parameters of the model structure, from ``samples`` random states (static poses
    only when ``static``: then only gravity is excited)."""
    positions, velocities, accelerations = random_states(robot, samples, seed, static)
    regressor = extended_regressor(robot, positions, velocities, accelerations, terms)
    return base_parameters(regressor, parameter_names(robot, terms))


def condition_number(regressor: np.ndarray) -> float:
    """κ = σ_max/σ_min of the column-normalised regressor (Swevers et al. 1997); inf when
    rank-deficient."""
    norms = np.linalg.norm(regressor, axis=0)
    if np.any(norms == 0.0):
        return math.inf
    singular = np.linalg.svd(regressor / norms, compute_uv=False)
    return float(singular[0] / singular[-1]) if singular[-1] > 0.0 else math.inf


# ---------------------------------------------------------------------------- least squares
@dataclass(frozen=True)
class LeastSquaresFit:
    """An (O/W)LS estimate: ``values``, ``covariance`` and ``std`` (1σ, same units as the
    parameters), per-joint ``noise_std`` [N·m] and the torque ``rows`` used.

    ``noise_std`` is the weights used (WLS) or the per-joint residual RMS of the fitted rows
    (OLS): for rows of
    :func:`~robot_dynamics.core.identification.recording.prepare_for_identification` that is
    the *in-band* residual RMS left after the low-pass filter, not the per-sample sensor
    noise (white noise σ filtered at 10 Hz on a 1 kHz grid leaves about σ/7).
    """

    values: np.ndarray
    covariance: np.ndarray
    std: np.ndarray
    noise_std: np.ndarray
    rows: int


QR_BLOCK_ROWS = 2048
"""Rows per block of :func:`triangular_factor` (a block's factorisation stays in cache)."""


def triangular_factor(matrix: np.ndarray) -> np.ndarray:
    """R of A = QR by blocks of rows: the R of each block of :data:`QR_BLOCK_ROWS` rows, stacked
    and factored again (tall-skinny QR, Demmel et al. 2012). The same R as one Householder
    factorisation up to the sign of each row, as backward-stable, and 2-3x faster on the
    10^5-row regressors of a recording."""
    if len(matrix) <= 2 * QR_BLOCK_ROWS:
        return np.linalg.qr(matrix, mode='r')
    blocks = [
        np.linalg.qr(matrix[start : start + QR_BLOCK_ROWS], mode='r')
        for start in range(0, len(matrix), QR_BLOCK_ROWS)
    ]
    return np.linalg.qr(np.vstack(blocks), mode='r')


def least_squares(
    regressor: np.ndarray,
    torques: np.ndarray,
    num_joints: int,
    noise_std: Optional[np.ndarray] = None,
    times: Optional[np.ndarray] = None,
) -> LeastSquaresFit:
    """Solve Y β ≈ τ by QR (Khalil & Dombre 2002); rows sample-major with ``num_joints`` joints per
    sample.

    With ``noise_std`` (per joint, N·m; the in-band residual RMS for filtered data, see
    :class:`LeastSquaresFit`) the rows are weighted by 1/σ_j (WLS) and Cov = (Yᵀ Σ⁻¹ Y)⁻¹
    scaled by the whitened residual variance; without, OLS with Cov = σ̂² (YᵀY)⁻¹,
    σ̂² = ‖r‖²/(rows − b). Both assume independent rows. ``times`` (one per sample, [s]):
    the rows come from a time series whose neighbouring samples are correlated (filtered
    signals, model mismatch); each parameter's std is then raised to the block (CR2) sandwich
    estimate of :func:`~robot_dynamics.core.identification.covariance.correlated_covariance` (1 s
    blocks) on
    the (weighted) rows and residual when that is larger. Without ``times`` the rows are
    taken as independent. Raises :class:`InsufficientExcitation` when Y is rank-deficient.
    """
    rows, count = regressor.shape
    if rows % num_joints:
        raise IdentificationError(
            f'{rows} regressor rows are not a whole number of {num_joints}-joint samples'
        )
    if times is not None and np.size(times) * num_joints != rows:
        raise IdentificationError(f'{np.size(times)} sample times for {rows // num_joints} samples')
    if rows <= count:
        raise InsufficientExcitation(
            f'{rows} torque rows cannot determine {count} parameters: record more samples'
        )
    weights = np.ones(num_joints) if noise_std is None else 1.0 / np.asarray(noise_std, dtype=float)
    row_weights = np.tile(weights, rows // num_joints)
    weighted, target = regressor * row_weights[:, None], torques * row_weights
    # R of [Y τ] holds R of Y and Qᵀτ: Q itself (rows × count) is never formed
    augmented = triangular_factor(np.column_stack((weighted, target)))
    upper, projected = augmented[:count, :count], augmented[:count, count]
    diagonal = np.abs(np.diag(upper))
    norms = np.linalg.norm(weighted, axis=0)
    if np.any(diagonal < PIVOT_TOLERANCE * np.maximum(norms, 1e-300)) or np.any(norms == 0.0):
        raise InsufficientExcitation(
            'the motion does not excite every base parameter (rank-deficient regressor): use a '
            'multi-joint exciting trajectory, not static poses or one joint at a time'
        )
    values = scipy.linalg.solve_triangular(upper, projected)
    residual = target - weighted @ values
    inverse = scipy.linalg.solve_triangular(upper, np.eye(count))
    information_inverse = inverse @ inverse.T
    if times is None:
        covariance = classic_covariance(residual, information_inverse)
    else:
        covariance = correlated_covariance(
            weighted, residual, times, num_joints, information_inverse
        )
    joint_std = np.sqrt(np.mean(residual.reshape(-1, num_joints) ** 2, axis=0)) / weights
    return LeastSquaresFit(
        values,
        covariance,
        np.sqrt(np.diag(covariance)),
        joint_std if noise_std is None else np.asarray(noise_std, dtype=float),
        rows,
    )


def weighted_least_squares(
    regressor: np.ndarray, torques: np.ndarray, num_joints: int, times: Optional[np.ndarray] = None
) -> LeastSquaresFit:
    """OLS, then WLS with σ_j = that fit's per-joint residual RMS (the ML estimate; Khalil & Dombre
    2002).

    ``times`` [s], one per sample: see :func:`least_squares` (pass them for rows of filtered
    recordings, whose neighbouring samples are correlated).
    """
    first = least_squares(regressor, torques, num_joints)
    return least_squares(regressor, torques, num_joints, np.maximum(first.noise_std, 1e-12), times)


# ---------------------------------------------------------------------------- physical consistency
def pseudo_inertia_eigenvalues(standard: np.ndarray, bodies: int) -> np.ndarray:
    """Smallest eigenvalue of J(π_i) per body [kg·m² or kg] from a standard vector."""
    return np.array(
        [
            np.linalg.eigvalsh(pseudo_inertia_from_vector(standard[10 * b : 10 * b + 10]))[0]
            for b in range(bodies)
        ]
    )


def _pseudo_inertia_map() -> np.ndarray:
    """16×10 matrix M with vec(J(π)) = M π (row-major vec, pinocchio order)."""
    return np.column_stack([pseudo_inertia_from_vector(unit).reshape(16) for unit in np.eye(10)])


def prior_precision(robot: RobotModel, terms: ModelTerms = ModelTerms()) -> np.ndarray:
    """Diagonal Λ of the prior term (1/scale² per parameter) in :func:`parameter_names` layout."""
    body = np.tile(1.0 / _BODY_PRIOR_SCALE**2, num_bodies(robot))
    joint = np.tile([1.0 / _TERM_PRIOR_SCALE[t] ** 2 for t in terms.joint_terms], robot.num_joints)
    return np.concatenate([body, joint])


def prior_weighted_fit(
    weighted_regressor: np.ndarray,
    weighted_torques: np.ndarray,
    prior: np.ndarray,
    precision: np.ndarray,
    prior_weight: float,
) -> np.ndarray:
    """Unconstrained argmin ‖A π − z‖² + κ (π − π0)ᵀ Λ (π − π0) (normal equations)."""
    lhs = weighted_regressor.T @ weighted_regressor + prior_weight * np.diag(precision)
    rhs = weighted_regressor.T @ weighted_torques + prior_weight * precision * prior
    return np.linalg.solve(lhs, rhs)


def consistent_fit(
    weighted_regressor: np.ndarray,
    weighted_torques: np.ndarray,
    prior: np.ndarray,
    precision: np.ndarray,
    prior_weight: float,
    bodies: int,
    nonnegative: Sequence[int] = (),
    nonnegative_sums: Sequence[Sequence[int]] = (),
) -> np.ndarray:
    """min ‖A π − z‖² + κ (π − π0)ᵀ Λ (π − π0) s.t. J(π_i) ⪰ margin·1 for every body,
    π_k ≥ 0 for k in ``nonnegative`` (rotor inertia, viscous and Coulomb coefficients) and
    Σ_k π_k ≥ 0 over each group of ``nonnegative_sums`` (a Stribeck static level, Coulomb plus
    its excess: the last index of a group takes up what the solver's tolerance leaves).

    (Wensing, Kim & Slotine 2017). Solved as an SDP with cvxpy + Clarabel on the
    QR-compressed data term.
    """
    import cvxpy as cp

    upper = triangular_factor(np.column_stack([weighted_regressor, weighted_torques]))
    count = weighted_regressor.shape[1]
    r_matrix, r_target = upper[:count, :count], upper[:count, count]
    unknown = cp.Variable(count)
    mapping = _pseudo_inertia_map()
    constraints = []
    for b in range(bodies):
        pseudo = cp.reshape(mapping @ unknown[10 * b : 10 * b + 10], (4, 4), order='C')
        constraints.append(0.5 * (pseudo + pseudo.T) >> FEASIBILITY_MARGIN * np.eye(4))
    if len(nonnegative):
        constraints.append(unknown[np.asarray(nonnegative, dtype=int)] >= 0.0)
    constraints.extend(cp.sum(unknown[list(group)]) >= 0.0 for group in nonnegative_sums)
    objective = cp.sum_squares(r_matrix @ unknown - r_target) + prior_weight * cp.sum_squares(
        cp.multiply(np.sqrt(precision), unknown - prior)
    )
    problem = cp.Problem(cp.Minimize(objective), constraints)
    try:
        problem.solve(solver=cp.CLARABEL)
    except cp.error.SolverError as error:
        raise ConsistentFitError(
            f'the physically consistent fit failed in the solver: {error}'
        ) from None
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or unknown.value is None:
        raise ConsistentFitError(
            f'the physically consistent fit ended with solver status "{problem.status}"'
        )
    solution = np.asarray(unknown.value)
    if len(nonnegative):  # the solver meets π_k ≥ 0 to its tolerance (-1e-12): make it exact
        index = np.asarray(nonnegative, dtype=int)
        solution[index] = np.maximum(solution[index], 0.0)
    for group in nonnegative_sums:
        solution[group[-1]] -= min(float(solution[list(group)].sum()), 0.0)
    return solution


# ---------------------------------------------------------------------------- the whole pipeline
def _per_joint(names: Sequence[str], values: np.ndarray) -> dict:
    return {name: float(value) for name, value in zip(names, values)}


def torque_rms(predicted: np.ndarray, data: PreparedData) -> np.ndarray:
    """Per-joint RMS of measured − predicted torque [N·m]; ``predicted`` is (M·n,) sample-major.

    Scored against the unfiltered ``measured_efforts`` when the data has them.
    """
    measured = data.measured_efforts if data.measured_efforts is not None else data.efforts
    error = measured - predicted.reshape(measured.shape)
    return np.sqrt(np.mean(error**2, axis=0))


@dataclass
class IdentificationReport:
    """What :func:`identify` found. Torque RMS values per joint [N·m]; ``condition_number``
    of the column-normalised base regressor of the training data; ``base_std`` the WLS 1σ
    std-devs of the base parameters (their units; time correlation of the filtered rows
    included); ``noise_std`` the in-band residual RMS per joint [N·m], not the raw sensor
    noise; ``infeasible_links_unconstrained``: links
    whose J(π_i) has a negative eigenvalue in the unconstrained prior-weighted fit;
    ``feasible``: every link of the constrained fit has J(π_i) ⪰ 0 (that fit also keeps rotor
    inertia, viscous and Coulomb coefficients non-negative)."""

    model: str
    joint_names: tuple
    friction: tuple
    rotor_inertia: bool
    num_standard_parameters: int
    num_base_parameters: int
    zero_columns: tuple
    base_parameters: tuple
    base_values: np.ndarray
    base_std: np.ndarray
    condition_number: float
    noise_std: np.ndarray
    train_samples: int
    held_out_samples: int
    rms_in_sample: np.ndarray
    rms_held_out: Optional[np.ndarray]
    rms_nominal_held_out: Optional[np.ndarray]
    rms_consistent_held_out: Optional[np.ndarray]
    prior_weight: float
    link_names: tuple
    infeasible_links_unconstrained: tuple
    min_eigenvalue_unconstrained: np.ndarray
    min_eigenvalue_consistent: np.ndarray
    feasible: bool
    friction_values: dict = field(default_factory=dict)

    @staticmethod
    def _overall(values: Optional[np.ndarray]) -> Optional[float]:
        return None if values is None else float(np.sqrt(np.mean(np.asarray(values) ** 2)))

    def to_dict(self) -> dict:
        """JSON-ready dictionary (keys documented in docs/identification.md)."""
        joints = self.joint_names

        def joint_map(values):
            return None if values is None else _per_joint(joints, values)

        return {
            'model': self.model,
            'joint_names': list(joints),
            'friction': list(self.friction),
            'rotor_inertia': self.rotor_inertia,
            'num_standard_parameters': self.num_standard_parameters,
            'num_base_parameters': self.num_base_parameters,
            'zero_columns': list(self.zero_columns),
            'base_parameters': [
                {'name': name, 'value': float(value), 'std': float(std)}
                for name, value, std in zip(self.base_parameters, self.base_values, self.base_std)
            ],
            'condition_number': self.condition_number,
            'noise_std': joint_map(self.noise_std),
            'train_samples': self.train_samples,
            'held_out_samples': self.held_out_samples,
            'rms_in_sample': joint_map(self.rms_in_sample),
            'rms_held_out': joint_map(self.rms_held_out),
            'rms_nominal_held_out': joint_map(self.rms_nominal_held_out),
            'rms_consistent_held_out': joint_map(self.rms_consistent_held_out),
            'rms_in_sample_overall': self._overall(self.rms_in_sample),
            'rms_held_out_overall': self._overall(self.rms_held_out),
            'rms_nominal_held_out_overall': self._overall(self.rms_nominal_held_out),
            'rms_consistent_held_out_overall': self._overall(self.rms_consistent_held_out),
            'prior_weight': self.prior_weight,
            'infeasible_links_unconstrained': list(self.infeasible_links_unconstrained),
            'min_eigenvalue_unconstrained': _per_joint(
                self.link_names, self.min_eigenvalue_unconstrained
            ),
            'min_eigenvalue_consistent': _per_joint(
                self.link_names, self.min_eigenvalue_consistent
            ),
            'feasible': self.feasible,
            'friction_values': self.friction_values,
        }

    def table(self) -> str:
        """Per-joint torque RMS table (text)."""
        header = (
            f'{"torque RMS [N·m]":<28}'
            + ''.join(f'{name[-12:]:>13}' for name in self.joint_names)
            + f'{"all":>9}'
        )
        lines = [header]
        for label, values in (
            ('identified, in-sample', self.rms_in_sample),
            ('identified, held-out', self.rms_held_out),
            ('consistent model, held-out', self.rms_consistent_held_out),
            ('nominal URDF, held-out', self.rms_nominal_held_out),
        ):
            if values is not None:
                lines.append(
                    f'{label:<28}'
                    + ''.join(f'{v:>13.4f}' for v in values)
                    + f'{self._overall(values):>9.4f}'
                )
        return '\n'.join(lines)

    def __repr__(self) -> str:
        held = self._overall(self.rms_held_out)
        return (
            f'IdentificationReport(model={self.model!r}, base={self.num_base_parameters}, '
            f'condition={self.condition_number:.3g}, '
            f'rms_in_sample={self._overall(self.rms_in_sample):.4g} N·m, '
            f'rms_held_out={"n/a" if held is None else f"{held:.4g} N·m"}, '
            f'feasible={self.feasible})'
        )

    def __str__(self) -> str:
        terms = ', '.join(self.friction) or 'none'
        lines = [
            f'model {self.model}: {self.num_base_parameters} base parameters of '
            f'{self.num_standard_parameters} (friction: {terms}; rotor inertia: '
            f'{"yes" if self.rotor_inertia else "no"}); {len(self.zero_columns)} zero columns',
            f'training samples {self.train_samples}, held-out samples {self.held_out_samples}, '
            f'condition number {self.condition_number:.1f}',
            self.table(),
            'unconstrained fit: infeasible links '
            f'{list(self.infeasible_links_unconstrained) or "none"}',
            f'constrained fit (prior weight {self.prior_weight:g}): '
            f'{"every link feasible" if self.feasible else "NOT feasible"}',
        ]
        return '\n'.join(lines)


@dataclass
class IdentificationResult:
    """The report plus the numbers needed to write a model: ``base`` (the base parameter
    structure), ``standard`` (consistent fit, :func:`parameter_names` layout),
    ``unconstrained`` (prior-weighted fit without LMI), ``terms``."""

    report: IdentificationReport
    base: BaseParameters
    standard: np.ndarray
    unconstrained: np.ndarray
    terms: ModelTerms
    names: tuple


def identify(
    robot: RobotModel,
    train: PreparedData,
    held_out: Optional[PreparedData] = None,
    terms: ModelTerms = ModelTerms(),
    prior_weight: float = DEFAULT_PRIOR_WEIGHT,
    weighted: bool = True,
) -> IdentificationResult:
    """Identify base parameters (+ per-joint terms) on ``train`` and score them on ``held_out``.

    Both data sets must be in ``robot.joint_names`` order. The base set comes from random
    states of the model (structural), so it does not depend on how well the data excite it;
    a rank-deficient training set raises :class:`InsufficientExcitation`. The fit is given
    ``train.time`` [s], so ``base_std`` accounts for the time correlation of filtered rows
    (see :func:`least_squares`); ``noise_std`` is the in-band residual RMS per joint [N·m].
    """
    _check_joint_order(robot, train)
    names = parameter_names(robot, terms)
    base = structural_base_parameters(robot, terms)
    fits = _fit_training_data(robot, train, terms, names, base, prior_weight, weighted)
    scores = _held_out_scores(robot, held_out, terms, base, fits)
    report = _identification_report(robot, train, terms, names, base, fits, scores, prior_weight)
    return IdentificationResult(report, base, fits.standard, fits.unconstrained, terms, names)


@dataclass(frozen=True)
class _TrainingFits:
    """What :func:`identify` fits on the training data: ``base_fit``, the base-parameter least
    squares on ``base_regressor``; standard vectors in :func:`parameter_names` layout:
    ``prior`` (the URDF's), ``unconstrained`` (prior-weighted) and ``standard`` (consistent);
    the smallest eigenvalue of J(π_i) per body of the last two [kg·m² or kg]."""

    base_regressor: np.ndarray
    base_fit: LeastSquaresFit
    prior: np.ndarray
    unconstrained: np.ndarray
    standard: np.ndarray
    min_eigenvalue_unconstrained: np.ndarray
    min_eigenvalue_consistent: np.ndarray


def _fit_training_data(
    robot: RobotModel,
    train: PreparedData,
    terms: ModelTerms,
    names: tuple,
    base: BaseParameters,
    prior_weight: float,
    weighted: bool,
) -> _TrainingFits:
    """The base-parameter (O/W)LS on ``train``, then the prior-weighted standard-parameter fits
    (unconstrained and consistent) on its rows whitened by that fit's 1/σ_j [1/(N·m)]."""
    full = extended_regressor(robot, train.positions, train.velocities, train.accelerations, terms)
    torques = train.efforts.reshape(-1)
    base_regressor = base.regressor(full)
    solve = weighted_least_squares if weighted else least_squares
    fit = solve(base_regressor, torques, robot.num_joints, times=train.time)
    row_weights = np.tile(1.0 / fit.noise_std, len(train.time))
    weighted_full, weighted_torques = full * row_weights[:, None], torques * row_weights
    prior, precision = prior_parameters(robot, terms), prior_precision(robot, terms)
    unconstrained = prior_weighted_fit(
        weighted_full, weighted_torques, prior, precision, prior_weight
    )
    bodies = num_bodies(robot)
    nonnegative, static_levels = _sign_constraints(names, bodies, robot.num_joints)
    standard = consistent_fit(
        weighted_full,
        weighted_torques,
        prior,
        precision,
        prior_weight,
        bodies,
        nonnegative,
        static_levels,
    )
    return _TrainingFits(
        base_regressor,
        fit,
        prior,
        unconstrained,
        standard,
        pseudo_inertia_eigenvalues(unconstrained, bodies),
        pseudo_inertia_eigenvalues(standard, bodies),
    )


def _sign_constraints(names: tuple, bodies: int, num_joints: int) -> tuple:
    """(``nonnegative``, ``nonnegative_sums``) of :func:`consistent_fit`: the indices of the
    rotor inertia, viscous and Coulomb columns, and per joint with a Stribeck term the indices
    of its Coulomb and Stribeck columns."""
    nonnegative = [
        i for i, name in enumerate(names) if name[:2] in ('Ia', 'Fv', 'Fc') and i >= 10 * bodies
    ]
    static_levels = [  # Coulomb + Stribeck excess of a joint (the excess alone without Coulomb)
        [i for i, name in enumerate(names) if name in (f'Fc{j + 1}', f'Fs{j + 1}')]
        for j in range(num_joints)
        if f'Fs{j + 1}' in names
    ]
    return nonnegative, static_levels


@dataclass(frozen=True)
class _HeldOutScores:
    """Per-joint torque RMS [N·m] on the held-out data of the base-parameter fit
    (``identified``), the URDF (``nominal``) and the consistent fit (``consistent``) over
    ``samples`` samples; 0 samples and no RMS without held-out data."""

    samples: int = 0
    identified: Optional[np.ndarray] = None
    nominal: Optional[np.ndarray] = None
    consistent: Optional[np.ndarray] = None


def _held_out_scores(
    robot: RobotModel,
    held_out: Optional[PreparedData],
    terms: ModelTerms,
    base: BaseParameters,
    fits: _TrainingFits,
) -> _HeldOutScores:
    """The torque RMS of the three fits on ``held_out`` (none without it)."""
    if held_out is None:
        return _HeldOutScores()
    _check_joint_order(robot, held_out)
    held_full = extended_regressor(
        robot, held_out.positions, held_out.velocities, held_out.accelerations, terms
    )
    return _HeldOutScores(
        len(held_out.time),
        torque_rms(base.regressor(held_full) @ fits.base_fit.values, held_out),
        torque_rms(held_full @ fits.prior, held_out),
        torque_rms(held_full @ fits.standard, held_out),
    )


def _identification_report(
    robot: RobotModel,
    train: PreparedData,
    terms: ModelTerms,
    names: tuple,
    base: BaseParameters,
    fits: _TrainingFits,
    scores: _HeldOutScores,
    prior_weight: float,
) -> IdentificationReport:
    """The report of :func:`identify` from its fits and held-out scores."""
    links = body_link_names(robot)
    return IdentificationReport(
        model=robot.name,
        joint_names=robot.joint_names,
        friction=terms.friction,
        rotor_inertia=terms.rotor_inertia,
        num_standard_parameters=len(names),
        num_base_parameters=base.num_base,
        zero_columns=base.zero_columns,
        base_parameters=base.expressions(),
        base_values=fits.base_fit.values,
        base_std=fits.base_fit.std,
        condition_number=condition_number(fits.base_regressor),
        noise_std=fits.base_fit.noise_std,
        train_samples=len(train.time),
        held_out_samples=scores.samples,
        rms_in_sample=torque_rms(fits.base_regressor @ fits.base_fit.values, train),
        rms_held_out=scores.identified,
        rms_nominal_held_out=scores.nominal,
        rms_consistent_held_out=scores.consistent,
        prior_weight=prior_weight,
        link_names=links,
        infeasible_links_unconstrained=tuple(
            link
            for link, e in zip(links, fits.min_eigenvalue_unconstrained)
            if e < -FEASIBILITY_MARGIN
        ),
        min_eigenvalue_unconstrained=fits.min_eigenvalue_unconstrained,
        min_eigenvalue_consistent=fits.min_eigenvalue_consistent,
        feasible=bool(np.all(fits.min_eigenvalue_consistent >= -FEASIBILITY_MARGIN)),
        friction_values=friction_values(robot, terms, fits.standard),
    )


SIGN_VELOCITIES = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2)
"""Candidates [rad/s] of :func:`chosen_sign_velocities` (0: the exact sign)."""


def chosen_sign_velocities(
    robot: RobotModel, train: PreparedData, terms: ModelTerms, weighted: bool = True
) -> tuple:
    """Per joint, the σ of :data:`SIGN_VELOCITIES` whose fit of ``terms`` (the base-parameter
    least squares of :func:`identify`) leaves the smallest torque RMS on that joint of the
    training data: one number per joint chosen from seven, on the training part only (the
    held-out score stays unseen). ``terms.sign_velocity`` is ignored."""
    _check_joint_order(robot, train)
    if not {'coulomb', 'stribeck'} & set(terms.friction):
        return (0.0,) * robot.num_joints
    base = structural_base_parameters(robot, terms)  # the same columns for every σ
    torques, n = train.efforts.reshape(-1), robot.num_joints
    solve = weighted_least_squares if weighted else least_squares
    rigid = stacked_regressor(robot, train.positions, train.velocities, train.accelerations)
    rms = []
    for sigma in SIGN_VELOCITIES:
        candidate = ModelTerms(terms.friction, terms.rotor_inertia, terms.stribeck_velocity, sigma)
        joint_terms = joint_term_columns(train.velocities, train.accelerations, candidate)
        regressor = base.regressor(np.hstack([rigid, joint_terms]))
        fit = solve(regressor, torques, n)  # the values only: no covariance needed
        rms.append(torque_rms(regressor @ fit.values, train))
    return tuple(SIGN_VELOCITIES[k] for k in np.argmin(rms, axis=0))


def fitted_effort_delay(
    robot: RobotModel, train: PreparedData, terms: ModelTerms, weighted: bool = True
) -> tuple:
    """(δ, its standard deviation) [s]: how long before the positions the efforts of ``train``
    were measured, fitted with the base parameters of ``terms`` (the least squares of
    :func:`identify`) as one more column, −τ̇ of the filtered efforts (τ(t − δ) ≈ τ(t) − δ τ̇,
    one δ for every joint; τ̇ by central differences inside each segment). A delay is not in
    the span of the rigid-body columns (a phase, not a gain), so link parameters do not take
    it up as they bend a fit against a URDF's errors."""
    _check_joint_order(robot, train)
    rates = np.zeros_like(train.efforts)
    for start, stop in train.segments:
        if stop - start > 1:
            rates[start:stop] = np.gradient(
                train.efforts[start:stop], train.time[start:stop], axis=0
            )
    if not rates.any():
        raise InsufficientExcitation(
            'the effort delay needs consecutive samples whose efforts change (not decimated)'
        )
    base = structural_base_parameters(robot, terms)
    regressor = base.regressor(
        extended_regressor(robot, train.positions, train.velocities, train.accelerations, terms)
    )
    regressor = np.column_stack([regressor, -rates.reshape(-1)])
    solve = weighted_least_squares if weighted else least_squares
    fit = solve(regressor, train.efforts.reshape(-1), robot.num_joints, times=train.time)
    return float(fit.values[-1]), float(fit.std[-1])


def _check_joint_order(robot: RobotModel, data: PreparedData) -> None:
    if tuple(data.joint_names) != tuple(robot.joint_names):
        raise IdentificationError(
            f'data joints {list(data.joint_names)} are not the model joints '
            f'{list(robot.joint_names)} in order: select_joints(robot.joint_names) first'
        )
