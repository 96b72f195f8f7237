"""Tests of robot_dynamics.core.identification.recording: cleaning, resampling, zero-phase
filtering."""

import math

import numpy as np
import pytest

from robot_dynamics.core.identification.recording import (
    Recording,
    RecordingError,
    clean_recording,
    prepare_for_identification,
)

FREQUENCY = 0.7  # Hz, well inside the 10 Hz pass band


def sine_recording(times: np.ndarray) -> Recording:
    """Joint a: q = sin(ωt); joint b: q = 0.5 cos(ωt); effort = q (a smooth signal)."""
    omega = 2 * math.pi * FREQUENCY
    positions = np.column_stack([np.sin(omega * times), 0.5 * np.cos(omega * times)])
    velocities = np.column_stack(
        [omega * np.cos(omega * times), -0.5 * omega * np.sin(omega * times)]
    )
    return Recording(times, positions, velocities, positions.copy(), ('a', 'b'))


def jittered_times(rng: np.random.Generator, duration: float = 4.0) -> np.ndarray:
    ticks = np.arange(0.0, duration, 0.001)
    ticks = ticks[rng.random(len(ticks)) > 0.07]  # skipped ticks
    return ticks + rng.normal(0.0, 0.0002, len(ticks)).clip(-0.0004, 0.0004)


def test_cleaning_removes_exact_repeats_nan_rows_and_sorts():
    rng = np.random.default_rng(1)
    rec = sine_recording(np.arange(0.0, 1.0, 0.001))
    repeat_at = np.array([10, 200, 201, 600])
    time = np.insert(rec.time, repeat_at + 1, rec.time[repeat_at] + 0.0004)
    rows = lambda values: np.insert(values, repeat_at + 1, values[repeat_at], axis=0)  # noqa: E731
    positions, velocities, efforts = rows(rec.positions), rows(rec.velocities), rows(rec.efforts)
    positions[50, 1] = np.nan
    order = rng.permutation(len(time))
    dirty = Recording(
        time[order], positions[order], velocities[order], efforts[order], rec.joint_names
    )
    clean, report = clean_recording(dirty)
    assert report.duplicates_removed == len(repeat_at)
    assert report.non_finite_removed == 1
    assert clean.num_samples == rec.num_samples - 1
    assert np.all(np.diff(clean.time) > 0.0)
    assert report.median_period == pytest.approx(0.001)
    assert report.gaps == 1 and report.max_gap == pytest.approx(0.002)  # around the dropped NaN row
    assert 'repeated rows' in str(report)


def test_cleaning_removes_rows_beyond_the_live_merger_range():
    """A value beyond ±1e6 (a corrupt sample, which the live joint-state merger refuses) is
    removed like a NaN; a value at the bound is kept."""
    rec = sine_recording(np.arange(0.0, 0.1, 0.001))
    efforts, velocities = rec.efforts.copy(), rec.velocities.copy()
    efforts[20, 0], velocities[40, 1], efforts[60, 1] = 1e308, -2e6, 1e6
    clean, report = clean_recording(
        Recording(rec.time, rec.positions, velocities, efforts, rec.joint_names)
    )
    assert report.non_finite_removed == 2
    assert clean.num_samples == rec.num_samples - 2
    assert 1e6 in clean.efforts[:, 1]


def hold_then_move_recording() -> Recording:
    """1 kHz, noise-free: both joints hold where the sine motion starts for 1 s (q̇ = 0,
    constant effort), then follow it for 1 s; efforts quantised to 0.01 N·m."""
    hold = np.arange(0.0, 1.0, 0.001)
    moving = sine_recording(np.arange(1.0, 2.0, 0.001))
    still_positions = np.tile(moving.positions[0], (len(hold), 1))
    positions = np.vstack([still_positions, moving.positions])
    velocities = np.vstack([np.zeros_like(still_positions), moving.velocities])
    efforts = np.round(np.vstack([np.tile([1.5, -0.3], (len(hold), 1)), moving.efforts]), 2)
    return Recording(
        np.concatenate([hold, moving.time]), positions, velocities, efforts, ('a', 'b')
    )


def test_noise_free_standstill_rows_are_kept_not_taken_for_logger_repeats():
    rec = hold_then_move_recording()
    clean, report = clean_recording(rec)
    assert report.duplicates_removed == 0
    assert clean.num_samples == rec.num_samples
    assert report.gaps == 0 and report.max_gap == pytest.approx(0.001)
    data = prepare_for_identification(rec)
    assert len(data.segments) == 1  # the hold is data, not a gap that splits the recording
    still = data.time < 0.5  # the zero-phase filter answers the motion start ~0.4 s early
    assert data.positions[still] == pytest.approx(
        np.tile(rec.positions[0], (np.count_nonzero(still), 1)), abs=1e-5
    )
    assert data.velocities[still] == pytest.approx(0.0, abs=1e-4)


def test_stale_repeats_while_moving_are_removed_next_to_a_kept_standstill():
    rec = hold_then_move_recording()
    stale = np.array([1100, 1400, 1401, 1800])  # rows while moving, repeated under a later stamp
    time = np.insert(rec.time, stale + 1, rec.time[stale] + 0.0004)
    rows = lambda values: np.insert(values, stale + 1, values[stale], axis=0)  # noqa: E731
    dirty = Recording(
        time, rows(rec.positions), rows(rec.velocities), rows(rec.efforts), rec.joint_names
    )
    clean, report = clean_recording(dirty)
    assert report.duplicates_removed == len(stale)
    assert np.array_equal(clean.time, rec.time)
    assert np.array_equal(clean.positions, rec.positions)
    # a repeated stamp is stale whatever the robot does, standstill included
    same_stamp = Recording(
        np.insert(rec.time, 11, rec.time[10]),
        *(np.insert(v, 11, v[10], axis=0) for v in (rec.positions, rec.velocities, rec.efforts)),
        rec.joint_names,
    )
    assert clean_recording(same_stamp)[1].duplicates_removed == 1


def test_prepared_signals_match_the_analytic_derivatives_despite_jitter_and_skips():
    times = jittered_times(np.random.default_rng(2))
    data = prepare_for_identification(sine_recording(times))
    omega = 2 * math.pi * FREQUENCY
    assert np.allclose(np.diff(data.time), 0.001)
    assert data.accelerations == pytest.approx(
        -(omega**2) * np.column_stack([np.sin(omega * data.time), 0.5 * np.cos(omega * data.time)]),
        abs=0.02 * omega**2,
    )
    # zero phase: the filtered velocity is not delayed against the true one
    assert data.velocities[:, 0] == pytest.approx(
        omega * np.cos(omega * data.time), abs=0.01 * omega
    )
    assert data.efforts == pytest.approx(data.positions, abs=1e-6)
    assert data.time[0] >= times.min() + 0.05 - 1e-9 and data.time[-1] <= times.max() - 0.05 + 1e-9


def test_filter_removes_content_far_above_the_cutoff_and_keeps_the_raw_effort():
    times = np.arange(0.0, 3.0, 0.001)
    rec = sine_recording(times)
    noise = 0.3 * np.sin(2 * math.pi * 120.0 * times)
    rec.efforts[:, 0] += noise
    data = prepare_for_identification(rec, cutoff_hz=10.0)
    clean = np.sin(2 * math.pi * FREQUENCY * data.time)
    error = np.abs(data.efforts[:, 0] - clean)
    interior = (data.time > 0.3) & (data.time < 2.7)
    # 4th-order Butterworth run twice: |H(120 Hz)|² = 1/(1 + 12⁸) ≈ 2.3e-9
    assert np.max(error[interior]) < 1e-4
    assert np.max(error) < 0.03 * 0.3  # the edges keep at most 3 % of the noise
    assert np.sqrt(np.mean((data.measured_efforts[:, 0] - clean) ** 2)) == pytest.approx(
        0.3 / math.sqrt(2), rel=0.05
    )


def test_preparation_splits_at_gaps_and_never_interpolates_across_them():
    times = np.concatenate([np.arange(0.0, 1.0, 0.001), np.arange(1.3, 2.5, 0.001)])
    data = prepare_for_identification(sine_recording(times), max_gap=0.05)
    assert len(data.segments) == 2
    (a0, a1), (b0, b1) = data.segments
    assert a1 == b0 and b1 == data.num_samples
    assert data.time[a1 - 1] < 1.0 and data.time[b0] > 1.3
    assert not np.any((data.time > 0.999) & (data.time < 1.3))


def test_rows_subset_recomputes_segments():
    data = prepare_for_identification(sine_recording(np.arange(0.0, 2.0, 0.001)))
    subset = data.rows(data.time < 1.0)
    assert subset.segments == [(0, subset.num_samples)]
    assert subset.measured_efforts.shape == subset.efforts.shape


def test_select_joints_reorders_and_names_the_missing_joint():
    rec = sine_recording(np.arange(0.0, 0.1, 0.001))
    swapped = rec.select_joints(['b', 'a'])
    assert np.array_equal(swapped.positions[:, 0], rec.positions[:, 1])
    with pytest.raises(RecordingError, match="'c'"):
        rec.select_joints(['a', 'c'])
    part = rec.slice_time(0.02, 0.05)
    assert part.time.min() >= 0.02 and part.time.max() < 0.05 and part.num_samples == 30


def test_bad_shapes_and_cutoffs_are_refused_with_clear_errors():
    with pytest.raises(RecordingError, match='positions has shape'):
        Recording(np.zeros(3), np.zeros((3, 1)), np.zeros((3, 2)), np.zeros((3, 2)), ('a', 'b'))
    rec = sine_recording(np.arange(0.0, 1.0, 0.001))
    with pytest.raises(RecordingError, match='Nyquist'):
        prepare_for_identification(rec, cutoff_hz=600.0)
    with pytest.raises(RecordingError, match='long enough'):
        prepare_for_identification(rec.slice_time(0.0, 0.05))
