"""Payload identification: mass, centre of mass and inertia of a load from joint torques.

A payload rigidly fixed to ``payload_link`` adds ``Y_L(q, q̇, q̈) π_L`` to every joint torque
(the load identification of Khalil & Dombre 2002), where π_L are its 10 inertial
parameters in the payload link frame (pinocchio order
``[m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``, inertia about the link frame origin)
and ``Y_L`` is the 10-column block of pinocchio's joint-torque regressor of the body that
carries the link, mapped from that body's joint frame to the link frame by
:func:`payload_parameter_map`. All joint rows are used.

The body's own torque is removed in one of two ways:

* **URDF model** (no baseline): ``r = τ_measured − Y π_body``. Any error of the URDF, joint
  friction and torque-sensor offsets end up in ``r``; a large residual after the fit is
  reported as a model mismatch.
* **Baseline** (the same motion recorded without the payload): *aligned differencing*.
  The baseline is shifted in time onto the payload recording (cross-correlation of the
  joint velocities, refined on the joint positions), and its own URDF residual is subtracted:
  ``r = (τ_p − Y(q_p) π_body) − (τ_b − Y(q_b) π_body)``, on the stretch of the payload
  recording the aligned baseline covers (the two need not start or stop together, and either
  may repeat the motion more often; the report gives ``baseline_coverage`` and
  ``used_duration``). That stretch must pass the same sample-count and conditioning checks as
  any recording; a refusal says how much longer the baseline must cover it. Everything that
  depends on the motion only — URDF mass/CoM errors, friction of any shape (Stribeck included), sensor
  offsets, cable forces — cancels without being modelled; subtracting the URDF torque of
  each recording also removes the first-order effect of small tracking differences. This
  was chosen over re-identifying the body's base parameters, friction and offsets on the
  baseline because that needs a trajectory exciting all ~70 base parameters, leaves
  whatever the friction model cannot express (Stribeck, load-dependent effects are not
  linear in fixed parameters) in the payload estimate, and is itself an identification
  that can fail; differencing only asks the operator to repeat the motion. Its costs: the
  noise variance doubles, the motion must really be the same (checked:
  :attr:`PayloadOptions.baseline_position_tolerance`), and load-dependent friction does not
  cancel.

Modes: ``full`` (10 parameters, least squares constrained by J(π_L) ⪰ 0 and m ≥ 0 with
cvxpy/Clarabel when the unconstrained fit is not physical), ``mass_com`` (4 parameters
m, m·c; on moving data the payload inertia is approximated by the point mass at the CoM,
refined by fixed-point iteration), ``auto`` (``full`` when the
column-normalised 10-column regressor is well conditioned, else ``mass_com``).

Uncertainty (1σ): σ̂²(YᵀY)⁻¹ from the residual (Khalil & Dombre 2002), each standard deviation
raised to a block sandwich estimate when the residual is correlated in time (model mismatch;
:func:`robot_dynamics.core.identification.covariance.correlated_covariance`, shared with whole-robot identification);
without a baseline, plus the assumed URDF error of the carrying body (which the data cannot
tell apart from payload); propagated to the CoM and the inertia about it by the delta method.

Signals go through :func:`robot_dynamics.core.identification.recording.prepare_for_identification` (uniform
grid, zero-phase Butterworth on velocities and efforts alike, q̈ by central differences);
the fit then uses one sample every 1/(4·cutoff) s, since the filtered signals carry nothing
faster. Units: SI (kg, m, kg·m², N·m, s).
"""
from __future__ import annotations

import math
import numbers
import threading
import time as clock
from dataclasses import dataclass, field
from typing import Optional

import cvxpy as cp  # imported up front: the first service call must not pay its ~1 s import
import numpy as np
import pinocchio as pin
from scipy import optimize

from robot_dynamics.core.dynamics import regressor
from robot_dynamics.core.identification.covariance import correlated_covariance
from robot_dynamics.core.identification.recording import (PreparedData, Recording, RecordingError, clean_recording,
                                                          prepare_for_identification)
from robot_dynamics.core.errors import IdentificationRefused
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel

MODES = ('auto', 'full', 'mass_com')
INERTIA_KEYS = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')
REPORT_KEYS = ('success', 'reason', 'mode', 'payload_link', 'used_baseline', 'baseline_coverage', 'used_duration',
               'mass', 'mass_std', 'com', 'com_std',
               'inertia', 'inertia_std', 'condition_number', 'min_normalized_singular_value',
               'residual_rms_before', 'residual_rms_after', 'payload_torque_rms', 'samples', 'feasible',
               'warnings', 'solve_time')
STATIC_FRACTION = 0.5
"""A recording is *static* when at least this fraction of its samples is stationary."""
DETECTION_SIGMAS = 3.0
"""A fitted mass below this many standard deviations cannot be told apart from no payload:
the identification is refused (there is no centre of mass to report)."""
_FIT_SAMPLES_PER_CUTOFF = 4.0
_STATIC_EDGE = 0.1
_EDGE_PERIODS = 2.0  # filter transients last about two cutoff periods when a segment starts moving
_POINT_MASS_ITERATIONS = 50
# [rad²] worse than any real mismatch, but finite: the bounded minimiser's parabola steps cannot take inf
_NO_OVERLAP_MISMATCH = 1e12
_PARAMETER_NAMES = ('m', 'm·cx', 'm·cy', 'm·cz', 'Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')


class PayloadIdentificationRefused(IdentificationRefused):
    """The payload cannot be identified from this data; the message says why, in operator words."""


class NoPayloadDetected(PayloadIdentificationRefused):
    """The fitted ``mass`` [kg] is within :data:`DETECTION_SIGMAS` standard deviations
    ``mass_std`` [kg] of zero: nothing distinguishable from no payload (empty gripper)."""

    def __init__(self, mass: float, mass_std: float, message: str):
        super().__init__(message)
        self.mass, self.mass_std = mass, mass_std


@dataclass
class PayloadOptions:
    """Settings of :func:`identify_payload` (SI units).

    * ``cutoff_hz`` [Hz]: low-pass cutoff of the zero-phase filter applied to velocities and
      efforts before differentiating (and the bandwidth of the fit).
    * ``min_samples`` [-]: fewest fit samples (at 4·cutoff_hz, stationary ones only for
      static data) accepted.
    * ``max_condition_number`` [-]: largest accepted condition number of the
      column-normalised payload regressor; above it the data cannot separate the parameters.
    * ``residual_ratio_limit`` [-]: largest accepted ratio of the post-fit residual RMS to the
      torque noise RMS within the filter band (model mismatch above it).
    * ``residual_ratio_warning`` [-]: above this ratio the report carries a model-mismatch
      warning (the standard deviations already include the residual's time correlation).
    * ``static_velocity_threshold`` [rad/s]: a sample is stationary when every filtered joint
      speed is below it.
    * ``min_static_duration`` [s]: shortest stationary stretch counted as a static pose.
    * ``baseline_position_tolerance`` [rad]: largest accepted RMS joint-position difference
      between the payload recording and the time-aligned baseline.
    * ``effort_noise`` [N·m]: white torque noise σ of the raw samples; ``None`` estimates it
      from the effort content above ``cutoff_hz``.
    * ``body_mass_uncertainty`` [-] and ``body_com_uncertainty`` [m]: assumed 1σ relative mass
      error and CoM error of the URDF inertial of the body that carries the payload link. Without
      a baseline such an error is indistinguishable from payload (same regressor columns), so it
      is added to the mass and CoM covariance; with a baseline it cancels and is not added.
    """

    cutoff_hz: float = 10.0
    min_samples: int = 40
    max_condition_number: float = 60.0
    residual_ratio_limit: float = 40.0
    residual_ratio_warning: float = 3.0
    static_velocity_threshold: float = 0.02
    min_static_duration: float = 0.4
    baseline_position_tolerance: float = 0.02
    effort_noise: Optional[float] = None
    body_mass_uncertainty: float = 0.05
    body_com_uncertainty: float = 0.005

    def __post_init__(self):
        positive = ('cutoff_hz', 'min_samples', 'max_condition_number', 'residual_ratio_limit',
                    'residual_ratio_warning', 'static_velocity_threshold', 'min_static_duration',
                    'baseline_position_tolerance')
        for name in positive:
            value = getattr(self, name)
            if not (isinstance(value, numbers.Real) and math.isfinite(value) and value > 0):
                raise ValueError(f'payload option {name} must be a positive number, got {value!r}')
        for name in ('body_mass_uncertainty', 'body_com_uncertainty'):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f'payload option {name} must be a non-negative number, got {value!r}')
        if self.effort_noise is not None and not (math.isfinite(self.effort_noise) and self.effort_noise > 0):
            raise ValueError(f'payload option effort_noise must be positive or None, got {self.effort_noise!r}')


@dataclass
class PayloadReport:
    """Result of :func:`identify_payload`; the fields are the report schema (docs/payload.md).

    ``mass`` [kg] and ``com`` [m] (payload link frame), ``inertia`` {ixx, ixy, ixz, iyy, iyz,
    izz} [kg·m²] about the CoM in payload-link axes (``None`` in mass_com mode), each with a
    1σ standard deviation (``*_std``). ``baseline_coverage`` [-]: fraction of the (filtered)
    payload recording that the time-aligned baseline covers (``None`` without a baseline);
    ``used_duration`` [s]: length of the stretch the fit samples come from, the part the
    baseline covers (the whole recording without one). ``condition_number`` and
    ``min_normalized_singular_value`` describe the column-normalised payload regressor;
    ``residual_rms_before`` / ``_after`` [N·m]: RMS of the body-removed torque before and
    after subtracting the fitted payload torque, whose RMS is ``payload_torque_rms``;
    ``samples``: time samples used in the fit; ``feasible``: the estimate is physically
    realisable (J(π) ⪰ 0; m > 0 for a point mass); ``solve_time`` [s]. On a refusal
    ``success`` is False, ``reason`` says why and the estimate fields are ``None``, except
    when no payload is detectable (fitted mass within :data:`DETECTION_SIGMAS` σ of zero):
    ``mass`` and ``mass_std`` then say how little could be there.
    """

    success: bool
    reason: str
    mode: str
    payload_link: str
    used_baseline: bool
    baseline_coverage: Optional[float] = None
    used_duration: Optional[float] = None
    mass: Optional[float] = None
    mass_std: Optional[float] = None
    com: Optional[list] = None
    com_std: Optional[list] = None
    inertia: Optional[dict] = None
    inertia_std: Optional[dict] = None
    condition_number: Optional[float] = None
    min_normalized_singular_value: Optional[float] = None
    residual_rms_before: Optional[float] = None
    residual_rms_after: Optional[float] = None
    payload_torque_rms: Optional[float] = None
    samples: int = 0
    feasible: Optional[bool] = None
    warnings: list = field(default_factory=list)
    solve_time: float = 0.0

    def to_dict(self) -> dict:
        """The report as plain Python types (YAML/JSON ready), keys in schema order."""
        return {key: _plain(getattr(self, key)) for key in REPORT_KEYS}

    def summary(self) -> str:
        """One short operator line (the Trigger response message)."""
        if not self.success:
            told = self.baseline_coverage is None or _coverage_words(self.baseline_coverage) in self.reason
            return f'payload not identified: {self.reason}' + ('' if told else f' ({self.stretch_text()})')
        digits = _decimals(self.mass_std, 3)
        com_digits = _decimals(1e3 * max(self.com_std), 1)
        com = ', '.join(f'{1e3 * c:.{com_digits}f}' for c in self.com)
        com_std = max(self.com_std) * 1e3
        text = (f'payload {self.mass:.{digits}f} ± {self.mass_std:.{digits}f} kg, CoM [{com}] ± '
                f'{com_std:.{com_digits}f} mm '
                f'in {self.payload_link} ({self.mode}, {self.stretch_text()})')
        return text + (f'; {len(self.warnings)} warning(s), see the report' if self.warnings else '')

    def stretch_text(self) -> str:
        """'with baseline covering 70 % of the payload recording, 13.6 s used' (or '19.6 s used')."""
        used = f'{self.used_duration:.1f} s used' if self.used_duration is not None else ''
        if self.baseline_coverage is None:
            return used or ('with baseline' if self.used_baseline else 'no baseline')
        return f'with baseline covering {_coverage_words(self.baseline_coverage)}, {used}'

    def inertial_parameters(self) -> Optional[InertialParameters]:
        """The estimate in the payload link frame, for ``RobotModel.attach_payload`` (a point
        mass in mass_com mode); ``None`` after a refusal."""
        if not self.success:
            return None
        if self.inertia is None:
            return InertialParameters.point_mass(self.mass, self.com)
        return InertialParameters(self.mass, self.com, _matrix_from_keys(self.inertia))

    def __repr__(self) -> str:
        return f'PayloadReport({self.summary()})'


# ---------------------------------------------------------------------------------------------
# the payload regressor

def payload_parameter_map(placement: pin.SE3) -> np.ndarray:
    """10×10 matrix A with π_joint = A π_link for a body whose frame has pose ``placement``
    (R, p) in the joint frame; both vectors in pinocchio order, inertia about each frame's origin.

    m' = m;  h' = R h + m p;  Ī' = R Ī Rᵀ + 2(p·g)1 − g pᵀ − p gᵀ + m(|p|²1 − p pᵀ), g = R h
    (the integral of |r|²1 − r rᵀ with r = R r_L + p). Linear, so it applies to parameter
    *differences* too (m = 0 is fine, unlike pinocchio's Inertia).
    """
    rotation, translation = placement.rotation, placement.translation
    columns = []
    for k in range(10):
        unit = np.zeros(10)
        unit[k] = 1.0
        mass, first_moment, inertia = unit[0], unit[1:4], _matrix_from_vector(unit[4:])
        rotated = rotation @ first_moment
        shifted = (rotation @ inertia @ rotation.T + 2.0 * (translation @ rotated) * np.eye(3)
                   - np.outer(rotated, translation) - np.outer(translation, rotated)
                   + mass * (translation @ translation * np.eye(3) - np.outer(translation, translation)))
        columns.append(np.concatenate([[mass], rotated + mass * translation, _vector_from_matrix(shifted)]))
    return np.column_stack(columns)


def payload_regressor(robot: RobotModel, payload_link: str, positions: np.ndarray, velocities: np.ndarray,
                      accelerations: np.ndarray) -> np.ndarray:
    """(N·n, 10): joint torques [N·m] per unit payload parameter in the ``payload_link`` frame.

    Arrays (N, n) in ``robot.joint_names`` order [rad, rad/s, rad/s²]; rows sample-major as in
    :func:`robot_dynamics.core.dynamics.regressor.stacked_regressor`.
    """
    body, placement = regressor.body_index(robot, payload_link)
    stacked = regressor.stacked_regressor(robot, positions, velocities, accelerations)
    return stacked[:, 10 * body:10 * body + 10] @ payload_parameter_map(placement)


def nominal_body_parameters(robot: RobotModel) -> np.ndarray:
    """The URDF body parameters (pinocchio order, about joint frames), without a payload that
    :meth:`RobotModel.attach_payload` may have added to the live model."""
    parameters = regressor.body_parameter_vector(robot)
    if robot.payload is not None:
        link, payload = robot.payload
        body, placement = regressor.body_index(robot, link)
        parameters[10 * body:10 * body + 10] -= payload_parameter_map(placement) @ payload.pinocchio_vector()
    return parameters


# ---------------------------------------------------------------------------------------------
# the public entry point

def default_payload_link(robot: RobotModel) -> str:
    """The link at the end of the chain, where a payload usually sits: the child of the last
    moving joint, then down single fixed joints (fr3_link7 → fr3_flange → tool0); the root
    link when no joint moves."""
    description = robot.description
    moving = [joint for joint in description.joints.values() if joint.name in robot.joint_names]
    if not moving:
        return description.root
    link = moving[-1].child
    while True:
        fixed_children = [j.child for j in description.joints.values() if j.parent == link and j.type == 'fixed']
        if len(fixed_children) != 1:
            return link
        link = fixed_children[0]


def identify_payload(robot: RobotModel, recording: Recording, payload_link: str, mode: str = 'auto',
                     baseline: Optional[Recording] = None,
                     options: Optional[PayloadOptions] = None) -> PayloadReport:
    """Identify the payload on ``payload_link`` from a recording of measured joint torques.

    ``recording`` (and ``baseline``, the same motion without the payload) must hold every
    joint of ``robot``; ``mode`` is ``'auto'``, ``'full'`` or ``'mass_com'``. Returns a
    :class:`PayloadReport`; when the data cannot give a trustworthy answer the report has
    ``success=False`` and an operator-language ``reason``. Raises ``ValueError`` for a bad
    ``mode``, :class:`~robot_dynamics.core.errors.DescriptionError` for an unknown link and
    :class:`~robot_dynamics.core.identification.recording.RecordingError` for a recording without the model's joints.
    """
    if mode not in MODES:
        raise ValueError(f'payload mode must be one of {MODES}, got {mode!r}')
    options = options or PayloadOptions()
    regressor.body_index(robot, payload_link)
    recording = recording.select_joints(robot.joint_names)
    baseline = baseline.select_joints(robot.joint_names) if baseline is not None else None
    started = clock.perf_counter()
    report = PayloadReport(success=False, reason='', mode=mode, payload_link=payload_link,
                           used_baseline=baseline is not None)
    try:
        _identify(robot, recording, payload_link, mode, baseline, options, report)
        report.success = True
    except PayloadIdentificationRefused as refusal:
        report.reason = str(refusal)
        for key in ('mass', 'mass_std', 'com', 'com_std', 'inertia', 'inertia_std', 'feasible'):
            setattr(report, key, None)
        if isinstance(refusal, NoPayloadDetected):  # the mass bound is the answer to "is anything there?"
            report.mass, report.mass_std = refusal.mass, refusal.mass_std
    report.solve_time = clock.perf_counter() - started
    return report


# ---------------------------------------------------------------------------------------------
# pipeline

@dataclass
class _SharedStretch:
    """The part of the filtered payload recording ``prepared`` the fit may use: ``covered``
    marks its samples inside the time-aligned baseline (all of them without a baseline),
    ``candidates`` are the fit-sample indices over the whole recording (stationary ones for
    static data) and ``used`` those of them inside the covered part."""

    prepared: PreparedData
    covered: np.ndarray
    candidates: np.ndarray
    used: np.ndarray
    static: bool
    with_baseline: bool

    @property
    def duration(self) -> float:
        """Length [s] of the covered part of the payload recording."""
        return float(self.covered.sum() * self.prepared.period)

    @property
    def coverage(self) -> float:
        """Fraction [-] of the payload recording's samples that the baseline covers."""
        return float(self.covered.mean())


@dataclass
class _FitData:
    """Fit samples: payload regressor rows (N·n, 10) in the payload link frame, body-removed
    torque ``residual`` (N·n,) [N·m], the filtered samples themselves (``sample``),
    whether the data are static poses, the in-band torque noise σ [N·m] and the stretch of
    the payload recording they come from."""

    payload_rows: np.ndarray
    residual: np.ndarray
    sample: PreparedData
    static: bool
    noise: float
    link: str
    stretch: _SharedStretch


def _identify(robot, recording, payload_link, mode, baseline, options, report) -> None:
    data = _fit_data(robot, recording, payload_link, baseline, options, report)
    report.samples = len(data.sample.time)
    if report.samples < options.min_samples:
        raise PayloadIdentificationRefused(_too_few_samples(robot, data, mode, options))
    report.residual_rms_before = _rms(data.residual)
    resolved = _resolved_mode(robot, data, mode, options, report)
    report.mode = resolved
    if resolved == 'full':
        parameters, covariance = _full_fit(data, report)
    else:
        parameters, covariance = _mass_com_fit(data, report)
    prediction = data.payload_rows @ parameters
    report.payload_torque_rms = _rms(prediction)
    report.residual_rms_after = _rms(data.residual - prediction)
    _check_model_match(data, report, options)
    if baseline is None:
        covariance[:4, :4] += _body_model_covariance(robot, payload_link, options)
    _fill_estimate(report, parameters, covariance)


def _fit_data(robot, recording, payload_link, baseline, options, report) -> _FitData:
    """Filtered fit samples of the payload recording with the body's torque removed (by the
    URDF, then by the aligned baseline's own URDF residual when there is a baseline), taken
    from the stretch of the payload recording that the baseline covers."""
    prepared, noise = _prepared(recording, options, 'the recording')
    covered, shift, base_prepared = np.ones(len(prepared.time), bool), 0.0, None
    if baseline is not None:
        base_prepared, base_noise = _prepared(baseline, options, 'the baseline')
        shift = _time_shift(prepared, base_prepared)
        covered = _covered_by(prepared.time + shift, base_prepared)
        noise = math.hypot(noise, base_noise)
        report.baseline_coverage = float(covered.mean())
    report.used_duration = float(covered.sum() * prepared.period)
    if not covered.any():
        raise PayloadIdentificationRefused(
            'the baseline and the payload recording share no stretch of motion after aligning them in time: '
            'record the baseline with the same motion, overlapping the payload recording')
    stretch = _shared_stretch(prepared, covered, options, baseline is not None)
    body = nominal_body_parameters(robot)
    sample = prepared.rows(stretch.used)
    rows, residual = _rows_and_body_residual(robot, payload_link, sample, body)
    if base_prepared is not None:
        aligned = _aligned_baseline(prepared, base_prepared, stretch.used, shift, options)
        report.warnings.extend(aligned.notes)
        _, base_residual = _rows_and_body_residual(robot, payload_link, aligned.data, body)
        residual = residual - base_residual
    return _FitData(rows, residual, sample, stretch.static, noise, payload_link, stretch)


def _shared_stretch(prepared, covered, options, with_baseline) -> _SharedStretch:
    """Fit-sample candidates over the whole recording (stationary ones when the covered part is
    static) and those inside the covered part."""
    stationary = _stationary_mask(prepared, options)
    static = bool(stationary[covered].mean() >= STATIC_FRACTION)
    candidates = _fit_rows(prepared, stationary if static else np.ones(len(prepared.time), bool), options)
    return _SharedStretch(prepared, covered, candidates, candidates[covered[candidates]], static, with_baseline)


def _rows_and_body_residual(robot, payload_link, sample, body) -> tuple:
    """Payload regressor rows (N·n, 10) and τ_measured − Y π_body (N·n,) [N·m] of the samples."""
    stacked = regressor.stacked_regressor(robot, sample.positions, sample.velocities, sample.accelerations)
    index, placement = regressor.body_index(robot, payload_link)
    rows = stacked[:, 10 * index:10 * index + 10] @ payload_parameter_map(placement)
    return rows, sample.efforts.reshape(-1) - stacked @ body


def _prepared(recording, options, label):
    """Filtered data and the in-band white-noise σ of the efforts [N·m] for one recording."""
    try:
        cleaned, cleaning = clean_recording(recording)
        period = min(cleaning.median_period, 0.2 / options.cutoff_hz)
        prepared = prepare_for_identification(cleaned, period=period, cutoff_hz=options.cutoff_hz,
                                                      edge_trim=_EDGE_PERIODS / options.cutoff_hz)
    except RecordingError as error:
        raise PayloadIdentificationRefused(f'{label} has too few usable samples: {error}') from None
    nyquist = 0.5 / cleaning.median_period
    if nyquist < 2.0 * options.cutoff_hz:
        raise PayloadIdentificationRefused(
            f'{label} is sampled at {2 * nyquist:.0f} Hz, too slowly for the {options.cutoff_hz:g} Hz filter: '
            f'record at {4 * options.cutoff_hz:.0f} Hz or more, or lower the cutoff')
    if options.effort_noise is not None:
        sample_noise = options.effort_noise
    else:
        high = _interpolated(prepared.time, cleaned.time, cleaned.efforts) - prepared.efforts
        sample_noise = _rms(high) * math.sqrt(nyquist / (nyquist - options.cutoff_hz))
    in_band = sample_noise * math.sqrt(options.cutoff_hz / nyquist)
    return prepared, in_band


def _stationary_mask(prepared: PreparedData, options: PayloadOptions) -> np.ndarray:
    """Samples inside stationary stretches of at least ``min_static_duration`` (edges trimmed)."""
    still = np.all(np.abs(prepared.velocities) < options.static_velocity_threshold, axis=1)
    mask = np.zeros_like(still)
    edge = int(round(_STATIC_EDGE / prepared.period))
    shortest = int(round(options.min_static_duration / prepared.period))
    for start, stop in prepared.segments:
        for run_start, run_stop in _runs(still[start:stop]):
            if run_stop - run_start >= shortest:
                mask[start + run_start + edge:start + run_stop - edge] = True
    return mask


def _runs(flags: np.ndarray) -> list:
    """(start, stop) of every run of True values."""
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    changes = np.flatnonzero(np.diff(padded))
    return list(zip(changes[::2], changes[1::2]))


def _fit_step(prepared: PreparedData, options: PayloadOptions) -> int:
    """Grid samples between two fit samples (about 1/(4·cutoff) s)."""
    return max(1, int(round(1.0 / (_FIT_SAMPLES_PER_CUTOFF * options.cutoff_hz * prepared.period))))


def _fit_rows(prepared: PreparedData, usable: np.ndarray, options: PayloadOptions) -> np.ndarray:
    """Indices of the fit samples: every 1/(4·cutoff) s within each segment, usable ones only."""
    step = _fit_step(prepared, options)
    index = np.concatenate([np.arange(start, stop, step) for start, stop in prepared.segments])
    return index[usable[index]]


# ---------------------------------------------------------------------------------------------
# baseline alignment

@dataclass
class _AlignedBaseline:
    """The baseline at the payload fit times (shifted into the baseline's clock), with the
    notes its comparison with the payload motion leaves for the report."""

    data: PreparedData
    notes: list


def _covered_by(times: np.ndarray, base: PreparedData) -> np.ndarray:
    """Which ``times`` [s] (already in the baseline's clock) fall inside a segment of ``base``."""
    inside = np.zeros(len(times), bool)
    for start, stop in base.segments:
        inside |= (times >= base.time[start]) & (times <= base.time[stop - 1])
    return inside


def _aligned_baseline(prepared, base, keep, shift, options) -> _AlignedBaseline:
    """The baseline interpolated at the payload fit times ``keep`` (all inside the baseline)
    shifted by ``shift`` [s]; refused when it is not the same motion there."""
    times = prepared.time[keep] + shift
    columns = [_interpolated(times, base.time, values)
               for values in (base.positions, base.velocities, base.accelerations, base.efforts)]
    difference = prepared.positions[keep] - columns[0]
    mismatch = np.sqrt(np.mean(difference ** 2, axis=0))
    worst = int(np.argmax(mismatch))
    if mismatch[worst] > options.baseline_position_tolerance:
        raise PayloadIdentificationRefused(
            f'the baseline is not the same motion as the payload recording: {prepared.joint_names[worst]} '
            f'differs by {mismatch[worst]:.3f} rad RMS after aligning them in time (accepted: '
            f'{options.baseline_position_tolerance:.3f} rad); record the baseline with exactly the same trajectory')
    notes = [f'the baseline motion differs from the payload recording by {mismatch[worst]:.4f} rad RMS at '
             f'{prepared.joint_names[worst]} (accepted up to {options.baseline_position_tolerance:.3f} rad); '
             'a closer repetition cancels the robot\'s own torques better'] \
        if mismatch[worst] > 0.5 * options.baseline_position_tolerance else []
    aligned = PreparedData(times, *columns, base.joint_names, base.period, base.cutoff_hz, [(0, len(times))])
    return _AlignedBaseline(aligned, notes)


def _time_shift(prepared, base) -> float:
    """Offset s [s] such that baseline(t + s) best matches payload(t).

    Coarse: the peak of the summed cross-correlation of the joint velocities on a common
    uniform grid (biased by the finite windows); fine: the shift within ±0.5 s of it that
    minimises the mean squared joint-position difference over the overlap.
    """
    period = prepared.period
    grids = [np.arange(d.time[0], d.time[-1], period) for d in (prepared, base)]
    velocities = [_interpolated(grid, d.time, d.velocities) for grid, d in zip(grids, (prepared, base))]
    size = len(grids[0]) + len(grids[1])
    spectrum = np.sum(np.conj(np.fft.rfft(velocities[0], size, axis=0)) * np.fft.rfft(velocities[1], size, axis=0),
                      axis=1)
    lag = int(np.argmax(np.fft.irfft(spectrum, size)))
    if lag > len(grids[1]):
        lag -= size
    coarse = grids[1][0] - grids[0][0] + lag * period

    def mismatch(shift: float) -> float:
        times = prepared.time + shift
        inside = (times >= base.time[0]) & (times <= base.time[-1])
        if inside.sum() < 2:
            return _NO_OVERLAP_MISMATCH
        difference = prepared.positions[inside] - _interpolated(times[inside], base.time, base.positions)
        return float(np.mean(difference ** 2))

    result = optimize.minimize_scalar(mismatch, bounds=(coarse - 0.5, coarse + 0.5), method='bounded',
                                      options={'xatol': 0.1 * period})
    return float(result.x) if result.fun <= mismatch(coarse) else coarse


def _interpolated(times: np.ndarray, sample_times: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Columns of ``values`` (sampled at ``sample_times``) linearly interpolated at ``times``."""
    return np.column_stack([np.interp(times, sample_times, values[:, j]) for j in range(values.shape[1])])


# ---------------------------------------------------------------------------------------------
# fits

def _normalised_singular_values(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=0)
    scale = np.where(norms > 1e-10 * norms.max(), norms, np.inf)
    return np.linalg.svd(rows / scale, compute_uv=False)


def _conditioning(rows: np.ndarray) -> tuple:
    values = _normalised_singular_values(rows)
    smallest = float(values[-1])
    return (float(values[0] / smallest) if smallest > 0 else math.inf), smallest


def _resolved_mode(robot, data: _FitData, mode: str, options: PayloadOptions, report) -> str:
    """'full' or 'mass_com' after the static-data and conditioning checks (refuses when neither fits)."""
    if data.static and mode == 'full':
        raise PayloadIdentificationRefused(
            'the robot stood still in static poses: that gives mass and centre of mass only, not inertia; '
            'use mode mass_com, or run an excitation motion for the full inertia')
    if mode != 'mass_com' and not data.static:
        condition, smallest = _conditioning(data.payload_rows)
        report.condition_number, report.min_normalized_singular_value = condition, smallest
        if condition <= options.max_condition_number:
            return 'full'
        more, weakest = _more_motion(robot, data, 10, options), _least_excited(data.payload_rows)
        if mode == 'full':
            raise PayloadIdentificationRefused(
                f'{_stretch_words(data)} does not excite the payload inertia enough (condition number '
                f'{condition:.0f}, accepted up to {options.max_condition_number:.0f}; least excited: {weakest}): '
                f'{more}, or use mode mass_com')
        report.warnings.append(f'inertia not identifiable from {_stretch_words(data)} (condition number '
                               f'{condition:.0f} > {options.max_condition_number:.0f}; least excited: {weakest}); '
                               f'reporting mass and centre of mass only ({more} to get the inertia)')
    elif data.static and mode == 'auto':
        report.warnings.append('static poses: reporting mass and centre of mass only (static data cannot '
                               'show inertia)')
    condition, smallest = _conditioning(data.payload_rows[:, :4])
    report.condition_number, report.min_normalized_singular_value = condition, smallest
    if condition > options.max_condition_number:
        raise PayloadIdentificationRefused(
            f'{_stretch_words(data)} cannot separate mass and centre of mass (condition number '
            f'{"infinite" if math.isinf(condition) else f"{condition:.0f}"}, accepted up to '
            f'{options.max_condition_number:.0f}; least excited: {_least_excited(data.payload_rows[:, :4])}): '
            f'{_more_motion(robot, data, 4, options)}')
    return 'mass_com'


# ---------------------------------------------------------------------------------------------
# how much more motion refused data need

def _stretch_words(data: _FitData) -> str:
    """The data the fit looked at, in operator words (with its duration)."""
    stretch = data.stretch
    if stretch.with_baseline:
        return (f'the {_seconds(stretch.duration)} s of motion the baseline and the payload recording share '
                f'({_coverage_words(stretch.coverage)})')
    return f'the {_seconds(stretch.duration)} s of motion recorded'


def _too_few_samples(robot, data: _FitData, mode: str, options: PayloadOptions) -> str:
    """The sample-count refusal, with how much more motion (or baseline coverage) would do."""
    samples, needed = len(data.sample.time), options.min_samples
    text = f'only {samples} usable samples in {_stretch_words(data)} (need {needed})'
    if data.static:
        return text + ': hold each static pose longer, or record more poses'
    missing = (needed - samples) * _fit_step(data.stretch.prepared, options) * data.stretch.prepared.period
    extension = _extension_needed(robot, data, 10 if mode == 'full' else 4, options)
    if extension is not None:
        return f'{text}: {_baseline_extension_words(data, extension)}'
    if data.stretch.with_baseline:
        return text + (f': record a longer motion, with the baseline covering at least {missing:.1f} s more of '
                       'the payload recording')
    return text + f': record a longer motion, at least {missing:.1f} s more'


def _more_motion(robot, data: _FitData, columns: int, options: PayloadOptions) -> str:
    """'start the baseline about 3.2 s earlier in the motion, or move fr3_joint2 more' (the first
    part only when the payload recording beyond the shared stretch would do)."""
    advice = _motion_advice(robot, data, columns)
    extension = _extension_needed(robot, data, columns, options)
    if extension is None:
        return advice
    return f'{_baseline_extension_words(data, extension)}, or {advice}'


def _baseline_extension_words(data: _FitData, extension: float) -> str:
    """'start the baseline about 3.2 s earlier in the motion' (or later end, or both)."""
    covered, prepared = data.stretch.covered, data.stretch.prepared
    index = np.flatnonzero(covered)
    # a few edge samples outside the baseline are alignment jitter, not a late start or early end
    jitter = int(round(1.0 / (prepared.cutoff_hz * prepared.period)))
    started_late, ended_early = index[0] > jitter, index[-1] < len(covered) - 1 - jitter
    if started_late and not ended_early:
        return f'start the baseline about {extension:.1f} s earlier in the motion'
    if ended_early and not started_late:
        return f'record the baseline about {extension:.1f} s longer into the motion'
    return f'record the baseline over about {extension:.1f} s more of the payload motion'


def _extension_needed(robot, data: _FitData, columns: int, options: PayloadOptions) -> Optional[float]:
    """Seconds [s] of the payload recording the baseline would have to cover beyond the shared
    stretch for the fit samples there to pass the sample-count and conditioning checks on the
    first ``columns`` payload parameters; ``None`` without a baseline, when the baseline already
    covers everything, or when even the whole payload recording would not pass."""
    stretch = data.stretch
    if not stretch.with_baseline or stretch.covered.all() or len(stretch.candidates) == 0:
        return None
    prepared, candidates = stretch.prepared, stretch.candidates
    distance = _distance_to(prepared.time, prepared.time[stretch.covered])
    rows = payload_regressor(robot, data.link, prepared.positions[candidates], prepared.velocities[candidates],
                             prepared.accelerations[candidates])[:, :columns].reshape(len(candidates), -1, columns)
    reach = distance[candidates]
    step = max(prepared.period, reach.max() / 100)
    for margin in np.arange(step, reach.max() + step, step):
        chosen = reach <= margin
        if chosen.sum() < options.min_samples:
            continue
        if _conditioning(rows[chosen].reshape(-1, columns))[0] <= options.max_condition_number:
            return float((distance <= margin).sum() * prepared.period) - stretch.duration
    return None


def _distance_to(times: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Distance [s] from each of ``times`` to the nearest of the sorted, non-empty ``reference`` times."""
    index = np.searchsorted(reference, times)
    right = reference[np.clip(index, 0, len(reference) - 1)]
    left = reference[np.clip(index - 1, 0, len(reference) - 1)]
    return np.minimum(np.abs(times - left), np.abs(right - times))


def _least_excited(rows: np.ndarray) -> str:
    """The payload parameters that dominate the least excited direction (the right singular
    vector of the smallest singular value of the column-normalised ``rows``), e.g. 'Ixz and Iyz'."""
    norms = np.linalg.norm(rows, axis=0)
    scale = np.where(norms > 1e-10 * norms.max(), norms, np.inf)
    direction = np.abs(np.linalg.svd(rows / scale, full_matrices=False)[2][-1])
    names = [_PARAMETER_NAMES[k] for k in range(len(direction)) if direction[k] >= 0.5 * direction.max()]
    return names[0] if len(names) == 1 else ', '.join(names[:-1]) + ' and ' + names[-1]


def _motion_advice(robot: RobotModel, data: _FitData, columns: int) -> str:
    """'move <joints> more': the joints whose extra motion most raises the smallest normalised
    singular value of the payload regressor, tried on hypothetical samples around the recorded ones."""
    sample = data.sample
    picks = np.linspace(0, len(sample.time) - 1, min(30, len(sample.time))).astype(int)
    positions, velocities = sample.positions[picks], sample.velocities[picks]
    accelerations = sample.accelerations[picks]
    recorded = data.payload_rows.reshape(len(sample.time), -1, 10)[picks].reshape(-1, 10)[:, :columns]
    generator = np.random.default_rng(0)
    scores = []
    for joint in range(robot.num_joints):
        signs = generator.choice([-1.0, 1.0], size=(3, len(picks)))
        moved_q, moved_v, moved_a = positions.copy(), velocities.copy(), accelerations.copy()
        moved_q[:, joint] += 0.5 * signs[0]
        if columns == 10:
            moved_v[:, joint] += 1.0 * signs[1]
            moved_a[:, joint] += 3.0 * signs[2]
        hypothetical = payload_regressor(robot, data.link, moved_q, moved_v, moved_a)[:, :columns]
        scores.append(_normalised_singular_values(np.vstack([recorded, hypothetical]))[-1])
    scores = np.array(scores)
    chosen = [robot.joint_names[j] for j in np.argsort(-scores)[:3] if scores[j] >= 0.8 * scores.max()]
    chosen.sort(key=robot.joint_names.index)
    names = chosen[0] if len(chosen) == 1 else ', '.join(chosen[:-1]) + ' and ' + chosen[-1]
    return f'move {names} more'


def _least_squares(rows: np.ndarray, target: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=0)
    norms = np.where(norms > 0, norms, 1.0)
    solution, *_ = np.linalg.lstsq(rows / norms, target, rcond=None)
    return solution / norms


def _full_fit(data: _FitData, report) -> tuple:
    rows, target = data.payload_rows, data.residual
    parameters = _least_squares(rows, target)
    covariance = correlated_covariance(rows, target - rows @ parameters, data.sample.time,
                                       len(data.sample.joint_names))
    smallest = np.linalg.eigvalsh(_pseudo_inertia(parameters)).min()
    if smallest >= 0.0 and parameters[0] >= 0.0:
        report.feasible = True
        return parameters, covariance
    report.warnings.append(f'the unconstrained fit is not physically realisable (smallest eigenvalue of the '
                           f'pseudo-inertia {smallest:.2e} kg·m²); the estimate is the closest physical one '
                           '(J ⪰ 0, m ≥ 0), often on the boundary: treat its inertia with care')
    parameters = _constrained_fit(rows, target)
    report.feasible = bool(np.linalg.eigvalsh(_pseudo_inertia(parameters)).min() >= -1e-9 * max(1.0, parameters[0]))
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
        raise PayloadIdentificationRefused(f'the constrained solver failed ({error}); try mode mass_com') from None
    if fit.problem.status not in ('optimal', 'optimal_inaccurate') or fit.scaled.value is None:
        raise PayloadIdentificationRefused(f'the constrained solver did not converge (status {fit.problem.status}); '
                                           'try mode mass_com or a longer motion')
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
        problem = cp.Problem(cp.Minimize(cp.sum_squares(factor @ scaled - projected)),
                             [_pseudo_inertia_expression(parameters) >> 0, parameters[0] >= 0])
        fit = _THREAD_FITS.fit = _ConsistentFit(problem, factor, projected, inverse_norms, scaled)
    return fit


def _pseudo_inertia_expression(parameters):
    """J(π) as a cvxpy expression (linear in π), pinocchio order."""
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = (parameters[k] for k in range(10))
    half_trace = 0.5 * (ixx + iyy + izz)
    return cp.bmat([[half_trace - ixx, -ixy, -ixz, hx],
                    [-ixy, half_trace - iyy, -iyz, hy],
                    [-ixz, -iyz, half_trace - izz, hz],
                    [hx, hy, hz, m]])


def _pseudo_inertia(parameters: np.ndarray) -> np.ndarray:
    inertia = _matrix_from_vector(parameters[4:])
    pseudo = np.zeros((4, 4))
    pseudo[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    pseudo[:3, 3] = pseudo[3, :3] = parameters[1:4]
    pseudo[3, 3] = parameters[0]
    return pseudo


def _mass_com_fit(data: _FitData, report) -> tuple:
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
            report.warnings.append('the point-mass inertia correction did not settle; mass and CoM are from '
                                   'the plain 4-parameter fit')
            parameters = first
    full = np.concatenate([parameters, _point_mass_inertia(parameters)])
    covariance = correlated_covariance(rows, target - data.payload_rows @ full, data.sample.time,
                                       len(data.sample.joint_names))
    report.feasible = bool(parameters[0] > 0)
    return full, _padded(covariance)


def _body_model_covariance(robot: RobotModel, payload_link: str, options: PayloadOptions) -> np.ndarray:
    """Covariance (4×4, payload-link frame) of the (m, m·c) error that an uncertain URDF inertial
    of the carrying body adds: δm ~ N(0, (ε_m m_b)²), δc ~ N(0, ε_c²·1), δh = δm c_b + m_b δc."""
    body, placement = regressor.body_index(robot, payload_link)
    carrier = nominal_body_parameters(robot)[10 * body:10 * body + 4]
    mass, first_moment = float(carrier[0]), carrier[1:4]
    if mass <= 0:
        return np.zeros((4, 4))
    com = first_moment / mass
    sensitivity = np.zeros((4, 4))  # ∂(m, h)/∂(δm/(ε_m m), δc/ε_c): independent unit-variance errors
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
    return _vector_from_matrix((first_moment @ first_moment * np.eye(3) - np.outer(first_moment, first_moment)) / mass)


def _padded(covariance: np.ndarray) -> np.ndarray:
    full = np.full((10, 10), np.nan)
    full[:4, :4] = covariance
    return full


# ---------------------------------------------------------------------------------------------
# checks and report

def _check_model_match(data: _FitData, report, options: PayloadOptions) -> None:
    ratio = report.residual_rms_after / max(data.noise, 1e-12)
    if ratio <= options.residual_ratio_warning:
        return
    what = (f'the torques left after the fit ({report.residual_rms_after:.3f} N·m RMS) are {ratio:.0f}× the '
            f'torque noise ({data.noise:.4f} N·m)')
    if report.used_baseline:
        cause = ('the baseline does not cancel the robot\'s own torques: check that it is the same motion '
                 'at the same speed, without the payload')
    else:
        cause = ('friction, sensor offsets or URDF errors are in the data and bias the payload: record a '
                 'baseline (the same motion without the payload) and identify again with it')
    if ratio > options.residual_ratio_limit:
        raise PayloadIdentificationRefused(f'model mismatch: {what}; {cause}')
    report.warnings.append(f'model mismatch: {what}; the standard deviations include it, but {cause}')


def _fill_estimate(report: PayloadReport, parameters: np.ndarray, covariance: np.ndarray) -> None:
    mass, first_moment = float(parameters[0]), parameters[1:4]
    mass_std = float(math.sqrt(covariance[0, 0]))
    if not mass > DETECTION_SIGMAS * mass_std:
        raise NoPayloadDetected(
            mass, mass_std, f'no payload is detectable in this data: the fitted mass is {mass:.4f} ± {mass_std:.4f} kg, within '
            f'{DETECTION_SIGMAS:g}σ of zero, so there is no centre of mass to report (a payload lighter than '
            f'{DETECTION_SIGMAS * mass_std:.3f} kg cannot be told apart from none with this motion: record a longer '
            'motion or a baseline)')
    com = first_moment / mass
    jacobian = np.zeros((3, 4))
    jacobian[:, 0] = -com / mass
    jacobian[:, 1:] = np.eye(3) / mass
    com_covariance = jacobian @ covariance[:4, :4] @ jacobian.T
    report.mass, report.mass_std = mass, mass_std
    report.com, report.com_std = com.tolist(), np.sqrt(np.diag(com_covariance)).tolist()
    if report.mode != 'full':
        report.inertia = report.inertia_std = None
        return
    inertia_com, inertia_jacobian = _inertia_about_com(parameters)
    inertia_covariance = inertia_jacobian @ covariance @ inertia_jacobian.T
    report.inertia = dict(zip(INERTIA_KEYS, (float(v) for v in inertia_com)))
    report.inertia_std = dict(zip(INERTIA_KEYS, (float(v) for v in np.sqrt(np.diag(inertia_covariance)))))


def _inertia_about_com(parameters: np.ndarray) -> tuple:
    """I_C = Ī − (|h|²1 − h hᵀ)/m as the INERTIA_KEYS 6-vector, and its 6×10 Jacobian (delta method)."""
    mass, first_moment = parameters[0], parameters[1:4]
    key_index = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]

    def entries(matrix):
        return np.array([matrix[i, j] for i, j in key_index])

    shift = first_moment @ first_moment * np.eye(3) - np.outer(first_moment, first_moment)
    value = entries(_matrix_from_vector(parameters[4:]) - shift / mass)
    jacobian = np.zeros((6, 10))
    jacobian[:, 0] = entries(shift / mass ** 2)
    for k in range(3):
        unit = np.eye(3)[k]
        derivative = 2 * first_moment[k] * np.eye(3) - np.outer(unit, first_moment) - np.outer(first_moment, unit)
        jacobian[:, 1 + k] = -entries(derivative) / mass
    for k in range(6):
        unit = np.zeros(6)
        unit[k] = 1.0
        jacobian[:, 4 + k] = entries(_matrix_from_vector(unit))
    return value, jacobian


def _matrix_from_vector(values: np.ndarray) -> np.ndarray:
    """3×3 symmetric tensor from pinocchio's [Ixx, Ixy, Iyy, Ixz, Iyz, Izz]."""
    ixx, ixy, iyy, ixz, iyz, izz = values
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def _vector_from_matrix(matrix: np.ndarray) -> np.ndarray:
    """pinocchio's [Ixx, Ixy, Iyy, Ixz, Iyz, Izz] from a symmetric 3×3 tensor."""
    return np.array([matrix[0, 0], matrix[0, 1], matrix[1, 1], matrix[0, 2], matrix[1, 2], matrix[2, 2]])


def _matrix_from_keys(inertia: dict) -> np.ndarray:
    return np.array([[inertia['ixx'], inertia['ixy'], inertia['ixz']],
                     [inertia['ixy'], inertia['iyy'], inertia['iyz']],
                     [inertia['ixz'], inertia['iyz'], inertia['izz']]])


def _seconds(duration: float) -> str:
    """A duration [s] with one decimal, two below a second (0.04, not 0.0)."""
    return f'{duration:.1f}' if duration >= 0.95 else f'{duration:.2f}'


def _coverage_words(coverage: float) -> str:
    percent = '< 1' if 0 < coverage < 0.005 else f'{100 * coverage:.0f}'
    return f'{percent} % of the payload recording'


def _decimals(std: float, least: int) -> int:
    """Decimal places that show two significant digits of ``std`` (at least ``least``)."""
    return max(least, 1 - math.floor(math.log10(std))) if std > 0 and math.isfinite(std) else least


def _rms(values: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(values)))) if np.size(values) else 0.0


def _plain(value):
    """numpy scalars/arrays → Python floats/lists; inf/nan → None (YAML/JSON safe)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(item) for item in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value
