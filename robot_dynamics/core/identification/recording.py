"""Time handling and zero-phase filtering of recorded joint signals for identification.

A :class:`Recording` is one recorded motion in model joint order. Real logs are rarely
clean (non-real-time loggers repeat rows, skip ticks and jitter), so
:func:`clean_recording` sorts, drops stale repeated rows (kept when the robot stands
still: an exact repeat is then genuine) and non-finite or corrupt rows, and measures the gaps,
and :func:`prepare_for_identification` resamples to a uniform grid, splits at gaps,
low-pass filters velocities and efforts with the *same* zero-phase Butterworth filter (so
they stay time-aligned on both sides of τ = Y π) and differentiates the filtered velocity.

Units: time in s; positions rad (m for prismatic joints); velocities rad/s (m/s);
accelerations rad/s² (m/s²); efforts N·m (N), the measured joint torque.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.streams.joint_states import MAX_ABS_VALUE


class RecordingError(RobotDynamicsError):
    """A recording cannot be used: missing joints, wrong shapes, too few or unusable samples."""


@dataclass
class Recording:
    """One recorded motion in model joint order.

    ``time`` (N,) [s], strictly increasing after :func:`clean_recording`; ``positions``,
    ``velocities``, ``efforts`` (N, n) [rad, rad/s, N·m] in ``joint_names`` order.
    """

    time: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    efforts: np.ndarray
    joint_names: tuple

    def __post_init__(self):
        self.time = np.asarray(self.time, dtype=float).reshape(-1)
        self.joint_names = tuple(self.joint_names)
        count, width = len(self.time), len(self.joint_names)
        for label in ('positions', 'velocities', 'efforts'):
            values = np.asarray(getattr(self, label), dtype=float)
            if values.ndim == 1 and width == 1:
                values = values.reshape(-1, 1)
            if values.shape != (count, width):
                raise RecordingError(
                    f'{label} has shape {values.shape}, expected ({count}, {width}) for {count} '
                    f'samples of joints {list(self.joint_names)}'
                )
            setattr(self, label, values)
        if len(set(self.joint_names)) != width:
            raise RecordingError(f'joint names repeat: {list(self.joint_names)}')

    @property
    def num_samples(self) -> int:
        return len(self.time)

    def rejection_summary(self) -> str:
        """Messages left out while reading, in words; '' here (a bag reader's
        :class:`~robot_dynamics.core.identification.recording_files.BagRecording` counts them)."""
        return ''

    def select_joints(self, names: Sequence[str]) -> 'Recording':
        """The same recording with columns reordered / subset to ``names``."""
        index = {name: i for i, name in enumerate(self.joint_names)}
        missing = [name for name in names if name not in index]
        if missing:
            raise RecordingError(
                f'recording has no data for joints {missing} (it has {list(self.joint_names)})'
            )
        columns = [index[name] for name in names]
        return Recording(
            self.time.copy(),
            self.positions[:, columns],
            self.velocities[:, columns],
            self.efforts[:, columns],
            tuple(names),
        )

    def slice_time(self, start: float, stop: float) -> 'Recording':
        """Samples with ``start <= time < stop`` [s]."""
        keep = (self.time >= start) & (self.time < stop)
        return Recording(
            self.time[keep],
            self.positions[keep],
            self.velocities[keep],
            self.efforts[keep],
            self.joint_names,
        )

    def with_effort_delay(self, delay: float) -> 'Recording':
        """Each effort paired with the state ``delay`` [s] before its stamp, for efforts
        measured that long before the positions and velocities they were recorded with
        (dynamics_node's ``effort_delay``): sample k becomes (t_k − delay, q(t_k − delay),
        q̇(t_k − delay), τ_k), the state interpolated linearly (positions unwrapped first: a
        continuous joint's turn is not interpolated through 0); the samples whose instant
        precedes the recording are dropped. Stamps must increase (:func:`clean_recording`)."""
        instants = self.time - delay
        keep = instants >= self.time[0]
        instants = instants[keep]

        def at_instants(values: np.ndarray) -> np.ndarray:
            return np.column_stack(
                [np.interp(instants, self.time, column) for column in values.T]
            ).reshape(len(instants), -1)

        return Recording(
            instants,
            at_instants(np.unwrap(self.positions, axis=0)),
            at_instants(self.velocities),
            self.efforts[keep],
            self.joint_names,
        )

    def check_efforts_measured(self, command: str, every_joint: bool = True) -> None:
        """Raise :class:`RecordingError` naming the joints whose effort is one value in every
        sample (of two or more): no sensor reads that while the robot moves or holds a pose
        against gravity and noise; a driver that never writes the effort (ros2_control's mock
        hardware: 0 everywhere) does. ``every_joint`` False: only when that is so of every
        joint (a command that uses some joints' efforts). ``command``: what needs them."""
        if self.num_samples < 2:
            return
        constant = np.all(self.efforts == self.efforts[0], axis=0)
        if not constant.any() or not (every_joint or constant.all()):
            return
        if constant.all() and not self.efforts[0].any():
            which = 'every effort is 0 in every sample'
        else:
            which = 'the efforts of ' + ', '.join(
                f'{name} ({value:g})'
                for name, value, same in zip(self.joint_names, self.efforts[0], constant)
                if same
            )
            which += ' are that value in every sample'
        raise RecordingError(
            f'{which}: not measured (a driver that does not write them, such as ros2_control '
            f'mock hardware); {command} needs measured efforts'
        )

    def __repr__(self) -> str:
        span = f'{self.time[0]:.3f}..{self.time[-1]:.3f} s' if len(self.time) else 'empty'
        return f'Recording({len(self.time)} samples, {span}, joints={list(self.joint_names)})'


@dataclass(frozen=True)
class CleaningReport:
    """What :func:`clean_recording` found and removed.

    ``duplicates_removed``: rows dropped as stale logger repeats (the previous row's stamp,
    or its exact values while some joint moves; see :func:`clean_recording`);
    ``non_finite_removed``: rows with NaN/Inf or a value beyond ±``MAX_ABS_VALUE`` (corrupt, as
    the live joint-state merger refuses them); ``gaps``: intervals longer than 1.5 median
    periods; ``max_gap`` / ``median_period`` / ``jitter_rms`` [s] (jitter: RMS deviation of
    the non-gap intervals from the median period); ``time_restarts``: (stamp before, stamp
    after) [s] where the stamps went back more than :data:`TIME_RESTART_STEP` in the order read,
    ``part_used`` the first and last stamp of the part kept and ``other_parts_removed`` the rows
    of the other parts.
    """

    duplicates_removed: int
    gaps: int
    max_gap: float
    median_period: float
    jitter_rms: float
    non_finite_removed: int = 0
    time_restarts: tuple = ()
    other_parts_removed: int = 0
    part_used: tuple = ()

    def __str__(self) -> str:
        return (
            f'{self.duplicates_removed} repeated rows and {self.non_finite_removed} non-finite or '
            f'corrupt rows removed; median period {self.median_period * 1e3:.3f} ms, jitter '
            f'{self.jitter_rms * 1e3:.3f} ms RMS, {self.gaps} gaps (longest '
            f'{self.max_gap * 1e3:.2f} ms)'
        ) + (f'; {self.restart_note()}' if self.time_restarts else '')

    def restart_note(self) -> str:
        """Where the stamps went back and which part was used, in words ('' if they never did)."""
        return _restart_words(self.time_restarts, self.part_used, self.other_parts_removed)


def clean_recording(rec: Recording) -> tuple:
    """Sort by time, drop non-finite or corrupt rows (a value beyond ±``MAX_ABS_VALUE``) and
    stale repeats; returns (Recording, CleaningReport).

    A row is a stale repeat (a logger that read the same robot state twice) when

    * its stamp equals the previous row's stamp, or
    * its positions, velocities and efforts equal the previous row's *and* some joint velocity
      in it is non-zero: a moving joint cannot report the exact same position twice, so the
      second row is old data under a new stamp.

    An identical row with every velocity exactly zero is kept: that is a robot standing
    still whose signals are noise-free or quantised (simulation, a held pose), and dropping
    it would turn every static hold into a gap. (Should a logger repeat a standstill row, the
    repeated values are still the true standstill state, so keeping it costs nothing.)
    Stamps that go back by more than :data:`TIME_RESTART_STEP` in the order read (a bag played
    twice, a simulation reset, a driver restarted with a new clock) split the recording when
    every part has :data:`MIN_PART_ROWS` rows: sorted together, its parts would interleave two
    motions. The longest part is kept (reported).
    Raises :class:`RecordingError` when fewer than 2 samples remain.
    """
    rec, restarts, part_used, others = _longest_part(rec)
    order = np.argsort(rec.time, kind='stable')
    time, positions = rec.time[order], rec.positions[order]
    velocities, efforts = rec.velocities[order], rec.efforts[order]
    finite = (
        np.isfinite(time)
        & np.all(np.abs(positions) <= MAX_ABS_VALUE, axis=1)
        & np.all(np.abs(velocities) <= MAX_ABS_VALUE, axis=1)
        & np.all(np.abs(efforts) <= MAX_ABS_VALUE, axis=1)
    )
    time, positions, velocities, efforts = (
        time[finite],
        positions[finite],
        velocities[finite],
        efforts[finite],
    )
    values = np.hstack([positions, velocities, efforts])
    repeat = np.zeros(len(time), dtype=bool)
    identical = np.all(values[1:] == values[:-1], axis=1)
    moving = np.any(velocities[1:] != 0.0, axis=1)
    repeat[1:] = (identical & moving) | (time[1:] == time[:-1])
    keep = ~repeat
    time, positions, velocities, efforts = (
        time[keep],
        positions[keep],
        velocities[keep],
        efforts[keep],
    )
    if len(time) < 2:
        raise RecordingError(
            f'only {len(time)} usable samples left after removing repeated and non-finite or '
            'corrupt rows'
        )
    intervals = np.diff(time)
    median_period = float(np.median(intervals))
    is_gap = intervals > 1.5 * median_period
    regular = intervals[~is_gap]
    jitter = float(np.sqrt(np.mean((regular - median_period) ** 2))) if len(regular) else 0.0
    report = CleaningReport(
        duplicates_removed=int(np.count_nonzero(repeat)),
        gaps=int(np.count_nonzero(is_gap)),
        max_gap=float(intervals.max()),
        median_period=median_period,
        jitter_rms=jitter,
        non_finite_removed=int(np.count_nonzero(~finite)),
        time_restarts=restarts,
        other_parts_removed=others,
        part_used=part_used,
    )
    return Recording(time, positions, velocities, efforts, rec.joint_names), report


TIME_RESTART_STEP = 0.1
"""[s] How far the stamps of a recording must go back, from one row to the next as read, for
its time to have restarted (the live node's default ``stale_timeout``); smaller steps back
are messages out of order, sorted."""


MIN_PART_ROWS = 10
"""Rows each part between two steps back must have for the steps to be restarts of the time;
with a shorter part the rows are in no order (sorted as they are)."""


def time_restart_note(rec: Recording) -> str:
    """Where the stamps of ``rec`` go back (:data:`TIME_RESTART_STEP`) and which part
    :func:`clean_recording` uses, in words; '' when they never go back."""
    _, restarts, used, others = _longest_part(rec)
    return _restart_words(restarts, used, others)


def _restart_words(restarts: tuple, used: tuple, others: int) -> str:
    if not restarts:
        return ''
    jumps = ', '.join(f'{before:.3f} s → {after:.3f} s' for before, after in restarts)
    return (
        f'the stamps go back ({jumps}: a bag played twice, a clock or a driver restarted): '
        f'the longest part, {used[0]:.3f}..{used[1]:.3f} s, is used and {others} rows of the '
        'others are left out'
    )


def _longest_part(rec: Recording) -> tuple:
    """(the part of ``rec`` between two time restarts with the most rows, the restarts as
    (stamp before, stamp after) pairs, (first, last) stamp of that part, rows of the other
    parts); ``rec`` itself when its time never restarted."""
    time = rec.time
    finite = np.flatnonzero(np.isfinite(time))
    steps = np.diff(time[finite])
    backs = np.flatnonzero(steps < -TIME_RESTART_STEP)
    if not len(backs):
        return rec, (), (), 0
    bounds = [0, *(int(finite[k + 1]) for k in backs), len(time)]
    parts = list(zip(bounds[:-1], bounds[1:]))
    if min(end - start for start, end in parts) < MIN_PART_ROWS:
        return rec, (), (), 0  # rows in no order (a shuffled file), not a restart: sorted
    restarts = tuple((float(time[finite[k]]), float(time[finite[k + 1]])) for k in backs)
    start, end = max(parts, key=lambda part: part[1] - part[0])
    part = Recording(
        time[start:end],
        rec.positions[start:end],
        rec.velocities[start:end],
        rec.efforts[start:end],
        rec.joint_names,
    )
    kept = part.time[np.isfinite(part.time)]
    used = (float(kept.min()), float(kept.max())) if len(kept) else (math.nan, math.nan)
    return part, restarts, used, len(time) - (end - start)


SLOWEST_SAMPLE_PERIOD = 0.1
"""[s] Median time between samples beyond which a recording cannot carry accelerations or
friction (joint states arrive at 10 Hz or faster; stamps in milliseconds read as seconds look
like 1000× slower)."""


def check_sample_period(report: CleaningReport) -> None:
    """Raise :class:`RecordingError` when the cleaned recording of ``report`` is sampled more
    slowly than one sample per :data:`SLOWEST_SAMPLE_PERIOD`."""
    if report.median_period > SLOWEST_SAMPLE_PERIOD:
        raise RecordingError(
            f'the samples are {report.median_period:.6g} s apart (median), more than '
            f'{SLOWEST_SAMPLE_PERIOD:g} s: are the stamps in seconds?'
        )


@dataclass
class PreparedData:
    """Uniformly sampled, filtered signals ready for a regressor.

    ``time`` (M,) [s]; ``positions``, ``velocities``, ``accelerations``, ``efforts`` (M, n);
    ``period`` [s] of the grid; ``cutoff_hz`` of the filter; ``segments``: (start, stop) row
    ranges of the continuous pieces (no gap inside a segment); ``measured_efforts`` (M, n):
    the *unfiltered* efforts interpolated onto the grid [N·m], to score predictions against
    what the sensor really reported (None when not available).
    """

    time: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    efforts: np.ndarray
    joint_names: tuple
    period: float
    cutoff_hz: float
    segments: list = field(default_factory=list)
    measured_efforts: Optional[np.ndarray] = None

    @property
    def num_samples(self) -> int:
        return len(self.time)

    def rows(self, keep: np.ndarray) -> 'PreparedData':
        """The samples selected by a boolean mask or index array (segments are recomputed)."""
        index = np.arange(len(self.time))[keep]
        breaks = np.flatnonzero(np.diff(index) != 1) + 1
        starts = np.concatenate([[0], breaks]) if len(index) else np.array([], dtype=int)
        stops = np.concatenate([breaks, [len(index)]]) if len(index) else np.array([], dtype=int)
        measured = None if self.measured_efforts is None else self.measured_efforts[index]
        return PreparedData(
            self.time[index],
            self.positions[index],
            self.velocities[index],
            self.accelerations[index],
            self.efforts[index],
            self.joint_names,
            self.period,
            self.cutoff_hz,
            [(int(a), int(b)) for a, b in zip(starts, stops)],
            measured,
        )

    def __repr__(self) -> str:
        return (
            f'PreparedData({len(self.time)} samples at {self.period * 1e3:.3g} ms, '
            f'{len(self.segments)} segments, cutoff {self.cutoff_hz:g} Hz)'
        )


MAX_UPSAMPLING = 100
"""Most grid samples :func:`prepare_for_identification` makes per recorded sample (a 1 ms grid
for a 10 Hz recording): a denser grid adds no information, only memory (a 1e-12 s period asked
for terabytes)."""


def prepare_for_identification(
    rec: Recording,
    period: float = 0.001,
    cutoff_hz: float = 10.0,
    max_gap: float = 0.05,
    order: int = 4,
    edge_trim: float = 0.05,
) -> PreparedData:
    """Resample, split at gaps, zero-phase filter and differentiate a (cleaned) recording.

    * linear interpolation onto a grid of ``period`` [s];
    * a new segment wherever two stamps are more than ``max_gap`` [s] apart;
    * Butterworth low-pass of ``order`` and ``cutoff_hz`` [Hz] applied forward-backward
      (filtfilt, zero phase) to positions, velocities and efforts alike;
    * accelerations = central difference of the filtered velocity [rad/s²];
    * ``edge_trim`` [s] dropped at both ends of every segment (filter transients);
    * the unfiltered efforts on the grid are kept as ``measured_efforts``.

    Raises :class:`RecordingError` when no segment is long enough, or when the grid would hold
    more than :data:`MAX_UPSAMPLING` samples per recorded one.
    """
    if not (period > 0.0 and cutoff_hz > 0.0 and cutoff_hz < 0.5 / period):
        raise RecordingError(
            f'cutoff {cutoff_hz} Hz must be positive and below the Nyquist frequency '
            f'{0.5 / period:g} Hz of the {period} s grid'
        )
    from scipy import signal  # ~1 s to import: not at the start of every node that imports this

    rec, cleaning = clean_recording(rec)
    numerator, denominator = signal.butter(order, cutoff_hz, fs=1.0 / period)
    breaks = np.flatnonzero(np.diff(rec.time) > max_gap) + 1
    starts, stops = np.concatenate([[0], breaks]), np.concatenate([breaks, [len(rec.time)]])
    grid_samples = float(np.sum(rec.time[stops - 1] - rec.time[starts])) / period
    if grid_samples > MAX_UPSAMPLING * len(rec.time):
        raise RecordingError(
            f'a {period:g} s grid would hold {grid_samples:.3g} samples, more than '
            f'{MAX_UPSAMPLING} per recorded one (median period {cleaning.median_period:.3g} s): '
            "choose a period near the recording's"
        )
    bounds = zip(starts, stops)
    pieces = [
        piece
        for start, stop in bounds
        if (
            piece := _prepared_segment(
                rec, start, stop, period, cutoff_hz, numerator, denominator, edge_trim
            )
        )
    ]
    if not pieces:
        shortest = max(2 * edge_trim, 3 * max(len(numerator), len(denominator)) * period)
        raise RecordingError(
            'no continuous segment of the recording is long enough to filter (need more than '
            f'{shortest:.3f} s without a gap over {max_gap} s)'
        )
    segments, start = [], 0
    for piece in pieces:
        segments.append((start, start + len(piece[0])))
        start += len(piece[0])
    columns = [np.concatenate([piece[k] for piece in pieces]) for k in range(6)]
    return PreparedData(
        columns[0],
        columns[1],
        columns[2],
        columns[3],
        columns[4],
        rec.joint_names,
        period,
        cutoff_hz,
        segments,
        columns[5],
    )


def _prepared_segment(
    rec: Recording,
    start: int,
    stop: int,
    period: float,
    cutoff_hz: float,
    numerator: np.ndarray,
    denominator: np.ndarray,
    edge_trim: float,
):
    """(time, q, dq, ddq, filtered tau, unfiltered tau) of one gap-free stretch, or None when too
    short."""
    time = rec.time[start:stop]
    grid = np.arange(time[0], time[-1] + 0.5 * period, period)
    grid = grid[grid <= time[-1]]
    trim = int(round(edge_trim / period))
    padding = 3 * max(len(numerator), len(denominator))
    if len(grid) <= max(padding, 2 * trim + 2):
        return None
    resampled = [
        np.column_stack(
            [np.interp(grid, time, values[start:stop, j]) for j in range(values.shape[1])]
        )
        for values in (rec.positions, rec.velocities, rec.efforts)
    ]
    pad = min(len(grid) - 1, max(padding, int(round(3.0 / (cutoff_hz * period)))))
    window = min(len(grid), max(2, int(round(0.5 / (cutoff_hz * period)))))
    positions, velocities, efforts = (
        _zero_phase(numerator, denominator, values, pad, window) for values in resampled
    )
    accelerations = np.gradient(velocities, period, axis=0)
    keep = slice(trim, len(grid) - trim)
    return (
        grid[keep],
        positions[keep],
        velocities[keep],
        accelerations[keep],
        efforts[keep],
        resampled[2][keep],
    )


def _zero_phase(
    numerator: np.ndarray, denominator: np.ndarray, values: np.ndarray, pad: int, window: int
) -> np.ndarray:
    """filtfilt along axis 0 with ``pad`` samples of odd extension at each end.

    The extension reflects about a straight-line fit of the first / last ``window`` samples
    rather than about the end sample itself, so noise on the end sample does not offset
    the whole padded stretch (scipy's default), and ~3 filter time constants of padding
    keep the edge transient inside the trimmed edge.
    """
    from scipy import signal

    design = np.column_stack([np.ones(window), np.arange(window)])
    head = np.linalg.lstsq(design, values[:window], rcond=None)[0][0]
    tail = np.linalg.lstsq(design, values[::-1][:window], rcond=None)[0][0]
    padded = np.concatenate(
        [2.0 * head - values[pad:0:-1], values, 2.0 * tail - values[-2 : -pad - 2 : -1]]
    )
    return signal.filtfilt(numerator, denominator, padded, axis=0, padlen=0)[
        pad : pad + len(values)
    ]
