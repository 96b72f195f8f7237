"""Aligning a baseline recording (the same motion without the payload) with the payload recording.

The baseline is shifted in time onto the payload recording: coarsely by the peak of the
cross-correlation of the joint velocities, then finely by the shift that minimises the mean
squared joint-position difference. It is then interpolated at the payload fit times and
refused where it is not the same motion (``PayloadOptions.baseline_position_tolerance``,
RMS [rad]). Times in seconds, positions in rad.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_dynamics.core.errors import PayloadIdentificationRefused
from robot_dynamics.core.identification import payload_words as words
from robot_dynamics.core.identification.payload_options import PayloadOptions
from robot_dynamics.core.identification.recording import PreparedData

# [rad²] worse than any real mismatch, but finite: the bounded minimiser's parabola steps cannot
# take inf
_NO_OVERLAP_MISMATCH = 1e12


@dataclass(frozen=True)
class AlignedBaseline:
    """The baseline at the payload fit times (shifted into the baseline's clock), and the warning
    its comparison with the payload motion gives (empty when the two agree well)."""

    data: PreparedData
    warnings: tuple


def covered_by(times: np.ndarray, base: PreparedData) -> np.ndarray:
    """Which ``times`` [s] (already in the baseline's clock) fall inside a segment of ``base``."""
    inside = np.zeros(len(times), bool)
    for start, stop in base.segments:
        inside |= (times >= base.time[start]) & (times <= base.time[stop - 1])
    return inside


def aligned_baseline(
    prepared: PreparedData,
    base: PreparedData,
    keep: np.ndarray,
    shift: float,
    options: PayloadOptions,
) -> AlignedBaseline:
    """The baseline interpolated at the payload fit times ``keep`` (all inside the baseline)
    shifted by ``shift`` [s]; refused when it is not the same motion there (RMS joint-position
    difference above ``options.baseline_position_tolerance`` [rad])."""
    times = prepared.time[keep] + shift
    columns = [
        interpolated(times, base.time, values)
        for values in (base.positions, base.velocities, base.accelerations, base.efforts)
    ]
    difference = prepared.positions[keep] - columns[0]
    mismatch = np.sqrt(np.mean(difference**2, axis=0))
    worst = int(np.argmax(mismatch))
    joint, tolerance = prepared.joint_names[worst], options.baseline_position_tolerance
    if mismatch[worst] > tolerance:
        raise PayloadIdentificationRefused(
            words.not_the_same_motion(joint, mismatch[worst], tolerance)
        )
    warnings = (
        (words.baseline_motion_differs(joint, mismatch[worst], tolerance),)
        if mismatch[worst] > 0.5 * tolerance
        else ()
    )
    aligned = PreparedData(
        times, *columns, base.joint_names, base.period, base.cutoff_hz, [(0, len(times))]
    )
    return AlignedBaseline(aligned, warnings)


def time_shift(prepared, base) -> float:
    """Offset s [s] such that baseline(t + s) best matches payload(t).

    Coarse: the peak of the summed cross-correlation of the joint velocities on a common
    uniform grid (biased by the finite windows); fine: the shift within ±0.5 s of it that
    minimises the mean squared joint-position difference over the overlap.
    """
    period = prepared.period
    grids = [np.arange(d.time[0], d.time[-1], period) for d in (prepared, base)]
    velocities = [
        interpolated(grid, d.time, d.velocities) for grid, d in zip(grids, (prepared, base))
    ]
    size = len(grids[0]) + len(grids[1])
    spectrum = np.sum(
        np.conj(np.fft.rfft(velocities[0], size, axis=0))
        * np.fft.rfft(velocities[1], size, axis=0),
        axis=1,
    )
    lag = int(np.argmax(np.fft.irfft(spectrum, size)))
    if lag > len(grids[1]):
        lag -= size
    coarse = grids[1][0] - grids[0][0] + lag * period

    def mismatch(shift: float) -> float:
        times = prepared.time + shift
        inside = (times >= base.time[0]) & (times <= base.time[-1])
        if inside.sum() < 2:
            return _NO_OVERLAP_MISMATCH
        difference = prepared.positions[inside] - interpolated(
            times[inside], base.time, base.positions
        )
        return float(np.mean(difference**2))

    from scipy import optimize  # here: a live node never aligns recordings

    result = optimize.minimize_scalar(
        mismatch,
        bounds=(coarse - 0.5, coarse + 0.5),
        method='bounded',
        options={'xatol': 0.1 * period},
    )
    return float(result.x) if result.fun <= mismatch(coarse) else coarse


def interpolated(times: np.ndarray, sample_times: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Columns of ``values`` (sampled at ``sample_times``) linearly interpolated at ``times``."""
    return np.column_stack(
        [np.interp(times, sample_times, values[:, j]) for j in range(values.shape[1])]
    )
