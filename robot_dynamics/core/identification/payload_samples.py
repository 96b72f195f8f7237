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
from typing import Optional

import numpy as np

from robot_dynamics.core.errors import PayloadIdentificationRefused
from robot_dynamics.core.identification import payload_words as words
from robot_dynamics.core.identification.payload_alignment import (
    aligned_baseline,
    covered_by,
    interpolated,
    time_shift,
)
from robot_dynamics.core.identification.payload_options import PayloadOptions
from robot_dynamics.core.identification.payload_regressor import (
    nominal_body_parameters,
    rows_and_body_residual,
)
from robot_dynamics.core.identification.recording import (
    PreparedData,
    Recording,
    RecordingError,
    clean_recording,
    prepare_for_identification,
)
from robot_dynamics.core.model.model import RobotModel

STATIC_FRACTION = 0.5
"""A recording is *static* when at least this fraction of its samples is stationary."""

_FIT_SAMPLES_PER_CUTOFF = 4.0  # per 1/cutoff s: the filtered signals carry nothing faster
_STATIC_EDGE = 0.1  # [s] left out at each end of a stationary stretch
_EDGE_PERIODS = 2.0  # filter transients last about two cutoff periods when a segment starts moving


MIN_EFFORT_NOISE = 1e-3
"""Smallest white effort noise σ [N·m] assumed per sample: a torque reading's resolution."""


@dataclass(frozen=True)
class SharedStretch:
    """The part of the filtered payload recording ``prepared`` the fit may use.

    ``baseline``: the filtered baseline (``None`` without one), whose clock is ``shift`` [s]
    ahead of the payload recording's; ``noise``: the in-band torque noise σ [N·m] of what the
    fit sees (both recordings' with a baseline); ``covered`` marks the samples of ``prepared``
    inside the time-aligned baseline (all of them without a baseline); ``candidates`` are the
    fit-sample indices over the whole recording (stationary ones for ``static`` data) and
    ``used`` those of them inside the covered part.
    """

    prepared: PreparedData
    baseline: Optional[PreparedData]
    shift: float
    noise: float
    covered: np.ndarray
    candidates: np.ndarray
    used: np.ndarray
    static: bool

    @property
    def with_baseline(self) -> bool:
        return self.baseline is not None

    @property
    def duration(self) -> float:
        """Length [s] of the covered part of the payload recording."""
        return float(self.covered.sum() * self.prepared.period)

    @property
    def coverage(self) -> float:
        """Fraction [-] of the payload recording's samples that the baseline covers."""
        return float(self.covered.mean())


@dataclass(frozen=True)
class FitData:
    """Fit samples: payload regressor rows (N·n, 10) in the payload link frame, body-removed
    torque ``residual`` (N·n,) [N·m], the filtered samples themselves (``sample``), the
    stretch of the payload recording they come from, the payload link, and the warnings the
    comparison with the baseline gave."""

    payload_rows: np.ndarray
    residual: np.ndarray
    sample: PreparedData
    stretch: SharedStretch
    link: str
    warnings: tuple = ()

    @property
    def static(self) -> bool:
        """The data are static poses."""
        return self.stretch.static

    @property
    def noise(self) -> float:
        """In-band torque noise σ [N·m] of the residual."""
        return self.stretch.noise

    @property
    def residual_rms(self) -> float:
        """RMS [N·m] of the body-removed torque, before any payload is fitted."""
        return rms(self.residual)


def shared_stretch(
    recording: Recording, baseline: Optional[Recording], options: PayloadOptions
) -> SharedStretch:
    """Filter the payload recording (and the baseline), align the baseline in time and find the
    stretch of the payload recording it covers, with its fit-sample candidates. Refused when a
    recording cannot be filtered."""
    prepared, noise = _prepared(recording, options, words.PAYLOAD_RECORDING)
    covered, shift, base_prepared = np.ones(len(prepared.time), bool), 0.0, None
    if baseline is not None:
        base_prepared, base_noise = _prepared(baseline, options, words.BASELINE)
        shift = time_shift(prepared, base_prepared)
        covered = covered_by(prepared.time + shift, base_prepared)
        noise = math.hypot(noise, base_noise)
    stationary = _stationary_mask(prepared, options)
    static = bool(covered.any() and stationary[covered].mean() >= STATIC_FRACTION)
    candidates = _fit_rows(
        prepared, stationary if static else np.ones(len(prepared.time), bool), options
    )
    used = candidates[covered[candidates]]
    return SharedStretch(prepared, base_prepared, shift, noise, covered, candidates, used, static)


def fit_samples(
    robot: RobotModel, payload_link: str, stretch: SharedStretch, options: PayloadOptions
) -> FitData:
    """The fit samples of ``stretch`` with the body's torque removed: by the URDF, then by the
    aligned baseline's own URDF residual when there is a baseline (aligned differencing).
    Refused when the baseline shares no stretch with the payload recording or is not the same
    motion."""
    if not stretch.covered.any():
        raise PayloadIdentificationRefused(words.no_shared_stretch())
    body = nominal_body_parameters(robot)
    sample = stretch.prepared.rows(stretch.used)
    rows, residual = rows_and_body_residual(robot, payload_link, sample, body)
    if stretch.baseline is None:
        return FitData(rows, residual, sample, stretch, payload_link)
    aligned = aligned_baseline(
        stretch.prepared, stretch.baseline, stretch.used, stretch.shift, options
    )
    _, base_residual = rows_and_body_residual(robot, payload_link, aligned.data, body)
    return FitData(rows, residual - base_residual, sample, stretch, payload_link, aligned.warnings)


def _prepared(recording, options, label):
    """Filtered data and the in-band white-noise σ of the efforts [N·m] for one recording."""
    try:
        cleaned, cleaning = clean_recording(recording)
        nyquist = 0.5 / cleaning.median_period
        if nyquist < 2.0 * options.cutoff_hz:
            raise PayloadIdentificationRefused(
                words.sampled_too_slowly(label, 2 * nyquist, options.cutoff_hz)
            )
        period = min(cleaning.median_period, 0.2 / options.cutoff_hz)
        prepared = prepare_for_identification(
            cleaned,
            period=period,
            cutoff_hz=options.cutoff_hz,
            edge_trim=_EDGE_PERIODS / options.cutoff_hz,
        )
    except RecordingError as error:
        raise PayloadIdentificationRefused(words.unusable_recording(label, error)) from None
    if options.effort_noise is not None:
        sample_noise = options.effort_noise
    else:
        high = interpolated(prepared.time, cleaned.time, cleaned.efforts) - prepared.efforts
        sample_noise = rms(high) * math.sqrt(nyquist / (nyquist - options.cutoff_hz))
    # a noise-free (simulated) recording would make any model error look infinitely large
    sample_noise = max(sample_noise, MIN_EFFORT_NOISE)
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
    """Root mean square of all ``values`` (0 for none), in their unit."""
    return float(np.sqrt(np.mean(np.square(values)))) if np.size(values) else 0.0
