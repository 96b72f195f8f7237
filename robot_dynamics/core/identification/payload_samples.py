"""The fit samples of a payload identification: filtered data with the body's torque removed.

Each recording goes through
:func:`robot_dynamics.core.identification.recording.prepare_for_identification`
(uniform grid, zero-phase Butterworth on velocities and efforts alike, q̈ by central
differences); the fit then uses one sample every 1/(4·cutoff) s, since the filtered signals
carry nothing faster, and only stationary samples when the data are static poses. The body's
own torque is removed by its URDF parameters and, with a baseline, by also subtracting the
aligned baseline's own URDF residual (aligned differencing), on the stretch of the payload
recording the baseline covers. Units: SI (s, rad, N·m).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robot_dynamics.core.errors import PayloadIdentificationRefused
from robot_dynamics.core.identification.payload_alignment import (
    aligned_baseline,
    covered_by,
    interpolated,
    time_shift,
)
from robot_dynamics.core.identification.payload_regressor import (
    nominal_body_parameters,
    rows_and_body_residual,
)
from robot_dynamics.core.identification.payload_report import PayloadOptions
from robot_dynamics.core.identification.recording import (
    PreparedData,
    RecordingError,
    clean_recording,
    prepare_for_identification,
)

STATIC_FRACTION = 0.5
"""A recording is *static* when at least this fraction of its samples is stationary."""

_FIT_SAMPLES_PER_CUTOFF = (
    4.0  # fit samples per 1/cutoff s: the filtered signals carry nothing faster
)
_STATIC_EDGE = 0.1  # [s] left out at each end of a stationary stretch
_EDGE_PERIODS = 2.0  # filter transients last about two cutoff periods when a segment starts moving


@dataclass
class SharedStretch:
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
class FitData:
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
    stretch: SharedStretch


def fit_data(robot, recording, payload_link, baseline, options, report) -> FitData:
    """Filtered fit samples of the payload recording with the body's torque removed (by the
    URDF, then by the aligned baseline's own URDF residual when there is a baseline), taken
    from the stretch of the payload recording that the baseline covers."""
    prepared, noise = _prepared(recording, options, 'the recording')
    covered, shift, base_prepared = np.ones(len(prepared.time), bool), 0.0, None
    if baseline is not None:
        base_prepared, base_noise = _prepared(baseline, options, 'the baseline')
        shift = time_shift(prepared, base_prepared)
        covered = covered_by(prepared.time + shift, base_prepared)
        noise = math.hypot(noise, base_noise)
        report.baseline_coverage = float(covered.mean())
    report.used_duration = float(covered.sum() * prepared.period)
    if not covered.any():
        raise PayloadIdentificationRefused(
            'the baseline and the payload recording share no stretch of motion after aligning '
            'them in time: record the baseline with the same motion, overlapping the payload '
            'recording'
        )
    stretch = _shared_stretch(prepared, covered, options, baseline is not None)
    body = nominal_body_parameters(robot)
    sample = prepared.rows(stretch.used)
    rows, residual = rows_and_body_residual(robot, payload_link, sample, body)
    if base_prepared is not None:
        aligned = aligned_baseline(prepared, base_prepared, stretch.used, shift, options)
        report.warnings.extend(aligned.notes)
        _, base_residual = rows_and_body_residual(robot, payload_link, aligned.data, body)
        residual = residual - base_residual
    return FitData(rows, residual, sample, stretch.static, noise, payload_link, stretch)


def _shared_stretch(prepared, covered, options, with_baseline) -> SharedStretch:
    """Fit-sample candidates over the whole recording (stationary ones when the covered part is
    static) and those inside the covered part."""
    stationary = _stationary_mask(prepared, options)
    static = bool(stationary[covered].mean() >= STATIC_FRACTION)
    candidates = _fit_rows(
        prepared, stationary if static else np.ones(len(prepared.time), bool), options
    )
    return SharedStretch(
        prepared, covered, candidates, candidates[covered[candidates]], static, with_baseline
    )


def _prepared(recording, options, label):
    """Filtered data and the in-band white-noise σ of the efforts [N·m] for one recording."""
    try:
        cleaned, cleaning = clean_recording(recording)
        period = min(cleaning.median_period, 0.2 / options.cutoff_hz)
        prepared = prepare_for_identification(
            cleaned,
            period=period,
            cutoff_hz=options.cutoff_hz,
            edge_trim=_EDGE_PERIODS / options.cutoff_hz,
        )
    except RecordingError as error:
        raise PayloadIdentificationRefused(f'{label} has too few usable samples: {error}') from None
    nyquist = 0.5 / cleaning.median_period
    if nyquist < 2.0 * options.cutoff_hz:
        raise PayloadIdentificationRefused(
            f'{label} is sampled at {2 * nyquist:.0f} Hz, too slowly for the {options.cutoff_hz:g} '
            f'Hz filter: record at {4 * options.cutoff_hz:.0f} Hz or more, or lower the cutoff'
        )
    if options.effort_noise is not None:
        sample_noise = options.effort_noise
    else:
        high = interpolated(prepared.time, cleaned.time, cleaned.efforts) - prepared.efforts
        sample_noise = rms(high) * math.sqrt(nyquist / (nyquist - options.cutoff_hz))
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
                mask[start + run_start + edge : start + run_stop - edge] = True
    return mask


def _runs(flags: np.ndarray) -> list:
    """(start, stop) of every run of True values."""
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    changes = np.flatnonzero(np.diff(padded))
    return list(zip(changes[::2], changes[1::2]))


def fit_step(prepared: PreparedData, options: PayloadOptions) -> int:
    """Grid samples between two fit samples (about 1/(4·cutoff) s)."""
    return max(1, int(round(1.0 / (_FIT_SAMPLES_PER_CUTOFF * options.cutoff_hz * prepared.period))))


def _fit_rows(prepared: PreparedData, usable: np.ndarray, options: PayloadOptions) -> np.ndarray:
    """Indices of the fit samples: every 1/(4·cutoff) s within each segment, usable ones only."""
    step = fit_step(prepared, options)
    index = np.concatenate([np.arange(start, stop, step) for start, stop in prepared.segments])
    return index[usable[index]]


def rms(values: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(values)))) if np.size(values) else 0.0
