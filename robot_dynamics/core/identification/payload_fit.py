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

import math
import threading
from dataclasses import dataclass

import cvxpy as cp  # imported up front: the first service call must not pay its ~1 s import
import numpy as np

from robot_dynamics.core.dynamics import regressor
from robot_dynamics.core.errors import PayloadIdentificationRefused
from robot_dynamics.core.identification.covariance import correlated_covariance
from robot_dynamics.core.identification.payload_advice import (
    conditioning,
    least_excited,
    more_motion,
    stretch_words,
)
from robot_dynamics.core.identification.payload_regressor import (
    matrix_from_vector,
    nominal_body_parameters,
    payload_parameter_map,
    vector_from_matrix,
)
from robot_dynamics.core.identification.payload_report import PayloadOptions
from robot_dynamics.core.identification.payload_samples import FitData
from robot_dynamics.core.model.model import RobotModel

_POINT_MASS_ITERATIONS = 50


def resolved_mode(robot, data: FitData, mode: str, options: PayloadOptions, report) -> str:
    """'full' or 'mass_com' after the static-data and conditioning checks (refuses when neither
    fits)."""
    if data.static and mode == 'full':
        raise PayloadIdentificationRefused(
            'the robot stood still in static poses: that gives mass and centre of mass only, not '
            'inertia; use mode mass_com, or run an excitation motion for the full inertia'
        )
    if mode != 'mass_com' and not data.static:
        condition, smallest = conditioning(data.payload_rows)
        report.condition_number, report.min_normalized_singular_value = condition, smallest
        if condition <= options.max_condition_number:
            return 'full'
        more, weakest = more_motion(robot, data, 10, options), least_excited(data.payload_rows)
        if mode == 'full':
            raise PayloadIdentificationRefused(
                f'{stretch_words(data)} does not excite the payload inertia enough (condition '
                f'number {condition:.0f}, accepted up to {options.max_condition_number:.0f}; least '
                f'excited: {weakest}): {more}, or use mode mass_com'
            )
        report.warnings.append(
            f'inertia not identifiable from {stretch_words(data)} (condition number '
            f'{condition:.0f} > {options.max_condition_number:.0f}; least excited: {weakest}); '
            f'reporting mass and centre of mass only ({more} to get the inertia)'
        )
    elif data.static and mode == 'auto':
        report.warnings.append(
            'static poses: reporting mass and centre of mass only (static data cannot show inertia)'
        )
    condition, smallest = conditioning(data.payload_rows[:, :4])
    report.condition_number, report.min_normalized_singular_value = condition, smallest
    if condition > options.max_condition_number:
        raise PayloadIdentificationRefused(
            f'{stretch_words(data)} cannot separate mass and centre of mass (condition number '
            f'{"infinite" if math.isinf(condition) else f"{condition:.0f}"}, accepted up to '
            f'{options.max_condition_number:.0f}; least excited: '
            f'{least_excited(data.payload_rows[:, :4])}): {more_motion(robot, data, 4, options)}'
        )
    return 'mass_com'


def _least_squares(rows: np.ndarray, target: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=0)
    norms = np.where(norms > 0, norms, 1.0)
    solution, *_ = np.linalg.lstsq(rows / norms, target, rcond=None)
    return solution / norms


def full_fit(data: FitData, report) -> tuple:
    rows, target = data.payload_rows, data.residual
    parameters = _least_squares(rows, target)
    covariance = correlated_covariance(
        rows, target - rows @ parameters, data.sample.time, len(data.sample.joint_names)
    )
    smallest = np.linalg.eigvalsh(_pseudo_inertia(parameters)).min()
    if smallest >= 0.0 and parameters[0] >= 0.0:
        report.feasible = True
        return parameters, covariance
    report.warnings.append(
        'the unconstrained fit is not physically realisable (smallest eigenvalue of the '
        f'pseudo-inertia {smallest:.2e} kg·m²); the estimate is the closest physical one (J ⪰ 0, m '
        '≥ 0), often on the boundary: treat its inertia with care'
    )
    parameters = _constrained_fit(rows, target)
    report.feasible = bool(
        np.linalg.eigvalsh(_pseudo_inertia(parameters)).min() >= -1e-9 * max(1.0, parameters[0])
    )
    return parameters, covariance


def _constrained_fit(rows: np.ndarray, target: np.ndarray) -> np.ndarray:
    """min ‖Y π − r‖² s.t. J(π) ⪰ 0, m ≥ 0 (cvxpy + Clarabel), in column-normalised coordinates.

    ‖Y π − r‖² equals ‖R s − p‖² up to a constant, with s = π · norms, R the QR factor of the
    normalised Y and p its projection of r: the solver only ever sees a 10 × 10 problem."""
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
        raise PayloadIdentificationRefused(
            f'the constrained solver failed ({error}); try mode mass_com'
        ) from None
    if fit.problem.status not in ('optimal', 'optimal_inaccurate') or fit.scaled.value is None:
        raise PayloadIdentificationRefused(
            f'the constrained solver did not converge (status {fit.problem.status}); try mode '
            'mass_com or a longer motion'
        )
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


def mass_com_fit(data: FitData, report) -> tuple:
    """(m, m·c) by least squares; on moving data the inertia torque of a point mass at the CoM
    is subtracted and the fit repeated until it settles (a fixed-point iteration)."""
    rows, inertia_rows = data.payload_rows[:, :4], data.payload_rows[:, 4:]
    target = data.residual
    first = _least_squares(rows, target)
    parameters = first
    if not data.static:
        for _ in range(_POINT_MASS_ITERATIONS):
            corrected = target - inertia_rows @ _point_mass_inertia(parameters)
            updated = _least_squares(rows, corrected)
            settled = np.allclose(updated, parameters, rtol=0, atol=1e-9)
            parameters = updated
            if settled:
                break
        else:
            report.warnings.append(
                'the point-mass inertia correction did not settle; mass and CoM are from the '
                'plain 4-parameter fit'
            )
            parameters = first
    full = np.concatenate([parameters, _point_mass_inertia(parameters)])
    covariance = correlated_covariance(
        rows, target - data.payload_rows @ full, data.sample.time, len(data.sample.joint_names)
    )
    report.feasible = bool(parameters[0] > 0)
    return full, _padded(covariance)


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


def check_model_match(data: FitData, report, options: PayloadOptions) -> None:
    ratio = report.residual_rms_after / max(data.noise, 1e-12)
    if ratio <= options.residual_ratio_warning:
        return
    what = (
        f'the torques left after the fit ({report.residual_rms_after:.3f} N·m RMS) are '
        f'{ratio:.0f}× the torque noise ({data.noise:.4f} N·m)'
    )
    if report.used_baseline:
        cause = (
            'the baseline does not cancel the robot\'s own torques: check that it is the same '
            'motion at the same speed, without the payload'
        )
    else:
        cause = (
            'friction, sensor offsets or URDF errors are in the data and bias the payload: record '
            'a baseline (the same motion without the payload) and identify again with it'
        )
    if ratio > options.residual_ratio_limit:
        raise PayloadIdentificationRefused(f'model mismatch: {what}; {cause}')
    report.warnings.append(
        f'model mismatch: {what}; the standard deviations include it, but {cause}'
    )
