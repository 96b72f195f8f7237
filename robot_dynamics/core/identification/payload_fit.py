"""The payload fits: mode choice, least squares, the physically consistent fit, covariance.

``full``: 10 parameters by least squares, constrained by J(π_L) ⪰ 0 and m ≥ 0 (the
pseudo-inertia LMI of Wensing, Kim & Slotine 2017, solved with cvxpy/Clarabel) when the
unconstrained fit is not physical. ``mass_com``: 4 parameters m, m·c; on moving data the
payload inertia is approximated by the point mass at the CoM, refined by fixed-point
iteration. ``auto`` picks ``full`` when the column-normalised 10-column regressor is well
conditioned. Covariance (1σ): σ̂²(YᵀY)⁻¹ from the residual (Khalil & Dombre 2002), raised to a
block sandwich estimate when the residual is correlated in time; without a baseline, plus
the assumed URDF error of the carrying body. Parameters in pinocchio order about the payload
link origin [kg, kg·m, kg·m²], torques in N·m.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Optional

import numpy as np

from robot_dynamics.core.dynamics import regressor
from robot_dynamics.core.errors import PayloadIdentificationRefused
from robot_dynamics.core.identification import payload_words as words
from robot_dynamics.core.identification.covariance import correlated_covariance
from robot_dynamics.core.identification.payload_advice import least_excited, motion_advice
from robot_dynamics.core.identification.payload_options import PayloadOptions
from robot_dynamics.core.identification.payload_regressor import (
    conditioning,
    matrix_from_vector,
    nominal_body_parameters,
    payload_parameter_map,
    vector_from_matrix,
)
from robot_dynamics.core.identification.payload_samples import FitData, rms
from robot_dynamics.core.model.model import RobotModel

if TYPE_CHECKING:
    import cvxpy as cp

_POINT_MASS_ITERATIONS = 50


@dataclass(frozen=True)
class ModeChoice:
    """The mode the data allow: ``mode`` (``'full'`` or ``'mass_com'``; ``None`` when refused),
    the ``condition_number`` and ``min_normalized_singular_value`` [-] of the column-normalised
    payload regressor it was judged on (``None`` when static data refuse mode full before any),
    the ``warnings`` the choice gives and the ``refusal`` reason (``None`` when a mode fits)."""

    mode: Optional[str]
    condition_number: Optional[float]
    min_normalized_singular_value: Optional[float]
    warnings: tuple = ()
    refusal: Optional[str] = None

    def accepted_mode(self) -> str:
        """The chosen mode; raises :class:`PayloadIdentificationRefused` with the reason when
        neither mode fits the data."""
        if self.refusal is not None:
            raise PayloadIdentificationRefused(self.refusal)
        return self.mode


def choose_mode(robot: RobotModel, data: FitData, mode: str, options: PayloadOptions) -> ModeChoice:
    """'full' or 'mass_com' for the requested ``mode`` after the static-data and conditioning
    checks (``options.max_condition_number``), or the refusal when neither fits."""
    limit, stretch = options.max_condition_number, data.stretch
    if data.static and mode == 'full':
        return ModeChoice(None, None, None, refusal=words.static_data_in_full_mode())
    warnings = ()
    if mode != 'mass_com' and not data.static:
        condition, smallest = conditioning(data.payload_rows)
        if condition <= limit:
            return ModeChoice('full', condition, smallest)
        advice = motion_advice(robot, data, 10, options)
        weakest = least_excited(data.payload_rows)
        if mode == 'full':
            refusal = words.inertia_not_excited(stretch, condition, limit, weakest, advice)
            return ModeChoice(None, condition, smallest, refusal=refusal)
        warnings = (words.inertia_not_identifiable(stretch, condition, limit, weakest, advice),)
    elif data.static and mode == 'auto':
        warnings = (words.static_poses_give_mass_and_com(),)
    rows = data.payload_rows[:, :4]
    condition, smallest = conditioning(rows)
    if condition > limit:
        advice = motion_advice(robot, data, 4, options)
        refusal = words.mass_and_com_not_separable(
            stretch, condition, limit, least_excited(rows), advice
        )
        return ModeChoice(None, condition, smallest, warnings, refusal)
    return ModeChoice('mass_com', condition, smallest, warnings)


@dataclass(frozen=True)
class PayloadFit:
    """The fitted payload: ``parameters`` (10, pinocchio order, payload link frame, about its
    origin [kg, kg·m, kg·m²]; in mass_com the inertia is the point mass's at the CoM), their
    ``covariance`` (10×10, squared units; NaN outside the mass and CoM block in mass_com),
    whether they are physically realisable (``feasible``), the RMS [N·m] of the fitted payload
    torque and of the residual it leaves, and the ``warnings`` of the fit."""

    parameters: np.ndarray
    covariance: np.ndarray
    feasible: bool
    payload_torque_rms: float
    residual_rms_after: float
    warnings: tuple = ()


def fit_payload(robot: RobotModel, data: FitData, mode: str, options: PayloadOptions) -> PayloadFit:
    """The fit of ``mode`` ('full' or 'mass_com') to the body-removed torque of ``data``.
    Without a baseline the covariance includes the assumed URDF error of the carrying body
    (:func:`body_model_covariance`), which the data cannot tell apart from payload."""
    fit = _full_fit(data) if mode == 'full' else _mass_com_fit(data)
    fitted = 10 if mode == 'full' else 4
    covariance = fit.covariance.copy()
    covariance[:fitted, :fitted] += effort_scale_covariance(
        data.payload_rows[:, :fitted],
        data.payload_rows @ fit.parameters,
        len(data.sample.joint_names),
        options.effort_scale_uncertainty,
    )
    if not data.stretch.with_baseline:
        covariance[:4, :4] += body_model_covariance(robot, data.link, options)
    return replace(fit, covariance=covariance)


def effort_scale_covariance(
    rows: np.ndarray, payload_torques: np.ndarray, joints: int, uncertainty: float
) -> np.ndarray:
    """Covariance of the fitted parameters from independent effort scale errors s_j ~ N(0, u²)
    per joint: the measured payload torques are (1 + s_j) τ_j, so the least-squares parameters
    move by δπ = Σ_j s_j a_j with a_j = (YᵀY)⁻¹ Yᵀ D_j τ (D_j keeps joint j's rows; rows are
    sample-major), and Cov = u² Σ_j a_j a_jᵀ."""
    size = rows.shape[1]
    if uncertainty <= 0.0:
        return np.zeros((size, size))
    norms = np.linalg.norm(rows, axis=0)
    norms = np.where(norms > 0, norms, 1.0)
    pseudo_inverse = np.linalg.pinv(rows / norms) / norms[:, None]
    shifts = np.array(
        [pseudo_inverse[:, j::joints] @ payload_torques[j::joints] for j in range(joints)]
    )
    return uncertainty**2 * shifts.T @ shifts


def _fit_result(data: FitData, parameters, covariance, feasible, warnings=()) -> PayloadFit:
    prediction = data.payload_rows @ parameters
    return PayloadFit(
        parameters,
        covariance,
        feasible,
        rms(prediction),
        rms(data.residual - prediction),
        tuple(warnings),
    )


def _least_squares(rows: np.ndarray, target: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=0)
    norms = np.where(norms > 0, norms, 1.0)
    solution, *_ = np.linalg.lstsq(rows / norms, target, rcond=None)
    return solution / norms


def _full_fit(data: FitData) -> PayloadFit:
    """All 10 parameters by least squares; constrained to J ⪰ 0, m ≥ 0 when that is not
    physical (the covariance stays the unconstrained fit's)."""
    rows, target = data.payload_rows, data.residual
    parameters = _least_squares(rows, target)
    covariance = correlated_covariance(
        rows, target - rows @ parameters, data.sample.time, len(data.sample.joint_names)
    )
    smallest = np.linalg.eigvalsh(_pseudo_inertia(parameters)).min()
    if smallest >= 0.0 and parameters[0] >= 0.0:
        return _fit_result(data, parameters, covariance, True)
    parameters = _constrained_fit(rows, target)
    feasible = bool(
        np.linalg.eigvalsh(_pseudo_inertia(parameters)).min() >= -1e-9 * max(1.0, parameters[0])
    )
    warning = words.not_physically_realisable(smallest)
    return _fit_result(data, parameters, covariance, feasible, (warning,))


def _constrained_fit(rows: np.ndarray, target: np.ndarray) -> np.ndarray:
    """min ‖Y π − r‖² s.t. J(π) ⪰ 0, m ≥ 0 (cvxpy + Clarabel), in column-normalised coordinates.

    ‖Y π − r‖² equals ‖R s − p‖² up to a constant, with s = π · norms, R the QR factor of the
    normalised Y and p its projection of r: the solver only ever sees a 10 × 10 problem."""
    import cvxpy as cp  # here, not at module import: ~0.6 s a node or a command-line run that
    # never fits a constrained payload would pay (a service's worker process pays it once)

    norms = np.linalg.norm(rows, axis=0)
    norms = np.where(norms > 0, norms, 1.0)
    factor = np.linalg.qr(rows / norms, mode='r')
    projected = np.linalg.lstsq(factor.T, (rows / norms).T @ target, rcond=None)[0]
    fit = _consistent_fit_problem()
    # Fewer than 10 rows: zero rows complete the factor and add nothing to the cost.
    fit.factor.value = np.vstack([factor, np.zeros((10 - len(factor), 10))])
    fit.projected.value = np.concatenate([projected, np.zeros(10 - len(projected))])
    fit.inverse_norms.value = 1.0 / norms
    try:
        fit.problem.solve(solver=cp.CLARABEL)
    except cp.error.SolverError as error:
        raise PayloadIdentificationRefused(words.constrained_solver_failed(error)) from None
    if fit.problem.status not in ('optimal', 'optimal_inaccurate') or fit.scaled.value is None:
        raise PayloadIdentificationRefused(words.constrained_solver_stopped(fit.problem.status))
    return np.asarray(fit.scaled.value) / norms


@dataclass(frozen=True)
class _ConsistentFit:
    """The compiled constrained-fit problem and the parameters a call fills in."""

    problem: cp.Problem
    factor: cp.Parameter
    projected: cp.Parameter
    inverse_norms: cp.Parameter
    scaled: cp.Variable


_THREAD_FITS = threading.local()


def _consistent_fit_problem() -> _ConsistentFit:
    """The constrained fit as a parametrised problem, built once per thread (cvxpy problems are
    not thread-safe): cvxpy compiles it on the first solve and afterwards only substitutes the
    data, which costs a fraction of the compilation."""
    import cvxpy as cp

    fit = getattr(_THREAD_FITS, 'fit', None)
    if fit is None:
        factor, projected = cp.Parameter((10, 10)), cp.Parameter(10)
        inverse_norms, scaled = cp.Parameter(10, nonneg=True), cp.Variable(10)
        parameters = cp.multiply(inverse_norms, scaled)
        problem = cp.Problem(
            cp.Minimize(cp.sum_squares(factor @ scaled - projected)),
            [_pseudo_inertia_expression(parameters) >> 0, parameters[0] >= 0],
        )
        fit = _THREAD_FITS.fit = _ConsistentFit(problem, factor, projected, inverse_norms, scaled)
    return fit


def _pseudo_inertia_expression(parameters):
    """J(π) as a cvxpy expression (linear in π), pinocchio order."""
    import cvxpy as cp

    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = (parameters[k] for k in range(10))
    half_trace = 0.5 * (ixx + iyy + izz)
    return cp.bmat(
        [
            [half_trace - ixx, -ixy, -ixz, hx],
            [-ixy, half_trace - iyy, -iyz, hy],
            [-ixz, -iyz, half_trace - izz, hz],
            [hx, hy, hz, m],
        ]
    )


def _pseudo_inertia(parameters: np.ndarray) -> np.ndarray:
    inertia = matrix_from_vector(parameters[4:])
    pseudo = np.zeros((4, 4))
    pseudo[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    pseudo[:3, 3] = pseudo[3, :3] = parameters[1:4]
    pseudo[3, 3] = parameters[0]
    return pseudo


def _mass_com_fit(data: FitData) -> PayloadFit:
    """(m, m·c) by least squares; on moving data the inertia torque of a point mass at the CoM
    is subtracted and the fit repeated until it settles (a fixed-point iteration)."""
    rows, inertia_rows = data.payload_rows[:, :4], data.payload_rows[:, 4:]
    target = data.residual
    first = _least_squares(rows, target)
    parameters, warnings = first, ()
    if not data.static:
        for _ in range(_POINT_MASS_ITERATIONS):
            corrected = target - inertia_rows @ _point_mass_inertia(parameters)
            updated = _least_squares(rows, corrected)
            settled = np.allclose(updated, parameters, rtol=0, atol=1e-9)
            parameters = updated
            if settled:
                break
        else:
            parameters, warnings = first, (words.point_mass_correction_unsettled(),)
    full = np.concatenate([parameters, _point_mass_inertia(parameters)])
    covariance = correlated_covariance(
        rows, target - data.payload_rows @ full, data.sample.time, len(data.sample.joint_names)
    )
    return _fit_result(data, full, _padded(covariance), bool(parameters[0] > 0), warnings)


def body_model_covariance(
    robot: RobotModel, payload_link: str, options: PayloadOptions
) -> np.ndarray:
    """Covariance (4×4, payload-link frame) of the (m, m·c) error that an uncertain URDF inertial
    of the carrying body adds: δm ~ N(0, (ε_m m_b)²), δc ~ N(0, ε_c²·1), δh = δm c_b + m_b δc."""
    body, placement = regressor.body_index(robot, payload_link)
    carrier = nominal_body_parameters(robot)[10 * body : 10 * body + 4]
    mass, first_moment = float(carrier[0]), carrier[1:4]
    if mass <= 0:
        return np.zeros((4, 4))
    com = first_moment / mass
    sensitivity = np.zeros(
        (4, 4)
    )  # ∂(m, h)/∂(δm/(ε_m m), δc/ε_c): independent unit-variance errors
    sensitivity[0, 0] = options.body_mass_uncertainty * mass
    sensitivity[1:, 0] = options.body_mass_uncertainty * mass * com
    sensitivity[1:, 1:] = options.body_com_uncertainty * mass * np.eye(3)
    to_link = np.linalg.inv(payload_parameter_map(placement))[:4, :4]
    return to_link @ sensitivity @ sensitivity.T @ to_link.T


def _point_mass_inertia(parameters: np.ndarray) -> np.ndarray:
    """Ī of a point mass m at c = h/m about the link origin: (|h|²1 − h hᵀ)/m (pinocchio order)."""
    mass, first_moment = parameters[0], parameters[1:4]
    if mass <= 0:
        return np.zeros(6)
    return vector_from_matrix(
        (first_moment @ first_moment * np.eye(3) - np.outer(first_moment, first_moment)) / mass
    )


def _padded(covariance: np.ndarray) -> np.ndarray:
    full = np.full((10, 10), np.nan)
    full[:4, :4] = covariance
    return full


@dataclass(frozen=True)
class ModelMatch:
    """``ratio`` [-] of the residual RMS left after the fit to the in-band torque noise, and
    the warning it gives (empty up to ``PayloadOptions.residual_ratio_warning``)."""

    ratio: float
    warnings: tuple = ()


def model_match(data: FitData, fit: PayloadFit, options: PayloadOptions) -> ModelMatch:
    """How well the fitted payload explains the data; refused above
    ``options.residual_ratio_limit`` (model mismatch)."""
    ratio = fit.residual_rms_after / max(data.noise, 1e-12)
    if ratio <= options.residual_ratio_warning:
        return ModelMatch(ratio)
    facts = (fit.residual_rms_after, data.noise, ratio, data.stretch.with_baseline)
    if ratio > options.residual_ratio_limit:
        raise PayloadIdentificationRefused(words.model_mismatch(*facts))
    return ModelMatch(ratio, (words.model_mismatch_warning(*facts),))
