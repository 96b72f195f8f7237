"""The model's residual on the live stream, filtered as `robot_dynamics identify` scores it.

The residual is τ_measured − τ_model, τ_model = inverse dynamics of the model in use (rotor
inertia and payload included) plus the friction file's friction (offsets included) at the
joint positions, velocities and accelerations of the zero-phase low-passed signal. The joint
samples are taken block by block (:data:`BLOCK_SECONDS`), each with :data:`MARGIN_SECONDS` of
samples on either side, and prepared exactly as identification prepares a recording
(:func:`~robot_dynamics.core.identification.recording.prepare_for_identification`: a 1 ms grid,
4th-order Butterworth at 10 Hz forward and backward, q̈ the central difference of the filtered
q̇); the residual is evaluated on every :data:`STRIDE`-th grid point inside the block, against
the unfiltered measured torques. It therefore compares one for one with `identify`'s held-out
RMS of the same model, which the stream's own residual (q̈ from a causal fit of the noisy
velocities) cannot, and it lags the stream by about a block and a margin (5.5 s): a diagnostic,
not a control signal.

A fixed base only: a moving or floating base adds forces (the base's motion, the feet) that
are no part of this model.
"""

from __future__ import annotations

import threading
import time
from typing import NamedTuple, Optional

import numpy as np
import pinocchio as pin

from robot_dynamics.core.dynamics.friction import FrictionModel
from robot_dynamics.core.identification.recording import (
    Recording,
    RecordingError,
    prepare_for_identification,
)
from robot_dynamics.core.live.effort_offsets import REST_SPEED
from robot_dynamics.core.model.model import RobotModel

BLOCK_SECONDS = 5.0
"""[s] of stream evaluated at a time: one evaluation every 5 s (a few ms of the GIL now and
then, not every second)."""
MARGIN_SECONDS = 0.5
"""[s] of samples kept on either side of a block: the zero-phase filter's ends fall outside it."""
STRIDE = 4
"""Every this many 1 ms grid points is evaluated (the filtered signals carry nothing above
10 Hz; the RMS of every fourth point estimates the RMS of all)."""
KEPT_POINTS = 2500
"""The diagnostics' RMS is a moving average over about this many evaluated points (10 s of
stream: 250 points per second at any rate)."""
MAX_SAMPLES = 20000
"""Joint samples waiting for evaluation at most (20 s at 1 kHz): when full, the older half
goes."""
KINDS = ('rest', 'moving', 'all')


class ResidualRows(NamedTuple):
    """Evaluated points: ``stamps`` (m,) [s], ``residuals`` (m, n) [N·m, N], ``at_rest`` (m,)."""

    stamps: np.ndarray
    residuals: np.ndarray
    at_rest: np.ndarray


class FilteredResidual:
    """The residual of ``robot`` (fixed base) with ``friction`` (None: none) on one stream
    (module docstring). :meth:`add` takes the stream's samples (~2 µs); :meth:`update`
    evaluates the complete blocks (~14 ms per 5 s block of a 7-joint 1 kHz stream): call it
    from a thread other than the stream's."""

    def __init__(self, robot: RobotModel, friction: Optional[FrictionModel]):
        # with the model at the latest: on the first block it would hold the stream ~1 s
        import scipy.signal  # noqa: F401

        self.robot, self.friction = robot, friction
        self._data = robot.model.createData()  # the stream's thread uses robot.data
        self._window = _SampleWindow(robot.num_joints)
        self._update_lock = threading.Lock()  # one update() at a time
        self._block_start: Optional[float] = None
        self._squares = {kind: np.zeros(robot.num_joints) for kind in KINDS}
        self._counts = dict.fromkeys(KINDS, 0)

    def add(self, stamp: float, positions, velocities, efforts) -> None:
        """One joint sample [s, rad, rad/s, N·m] in model order."""
        self._window.append(stamp, positions, velocities, efforts)

    def update(self, final: bool = False) -> ResidualRows:
        """Evaluate every block whose margin after it has arrived (``final``: also the rest, up
        to the newest sample); the new points, also added to :meth:`rms`."""
        with self._update_lock:
            return self._update(final)

    def _update(self, final: bool) -> ResidualRows:
        stamps, rows = self._window.snapshot()
        parts = []
        if len(stamps):
            if self._block_start is None:
                self._block_start = stamps[0] + MARGIN_SECONDS
            newest = stamps[-1]
            while self._block_start < newest and (
                final or self._block_start + BLOCK_SECONDS + MARGIN_SECONDS <= newest
            ):
                parts.append(self._block(stamps, rows, self._block_start))
                self._block_start = _next_block_start(stamps, self._block_start)
            self._window.forget_before(self._block_start - MARGIN_SECONDS)
        parts = [part for part in parts if part is not None]
        if not parts:
            n = self.robot.num_joints
            return ResidualRows(np.zeros(0), np.zeros((0, n)), np.zeros(0, dtype=bool))
        result = ResidualRows(*(np.concatenate(columns) for columns in zip(*parts)))
        self._accumulate(result)
        return result

    def rms(self, kind: str) -> Optional[np.ndarray]:
        """RMS per joint [N·m, N] over about the last :data:`KEPT_POINTS` points of ``kind``
        (:data:`KINDS`); None before the first."""
        return np.sqrt(self._squares[kind]) if self._counts[kind] else None

    def _block(self, stamps: np.ndarray, rows: np.ndarray, start: float) -> Optional[ResidualRows]:
        """The points of the block [start, start + BLOCK_SECONDS); None when it has none or its
        samples cannot be prepared (too few, a gap)."""
        end = start + BLOCK_SECONDS
        first = int(np.searchsorted(stamps, start - MARGIN_SECONDS))
        stop = int(np.searchsorted(stamps, end + MARGIN_SECONDS, side='right'))
        if stop - first < 2:
            return None
        positions, velocities, efforts = rows[first:stop].transpose(1, 0, 2)
        try:
            prepared = prepare_for_identification(
                Recording(
                    stamps[first:stop], positions, velocities, efforts, self.robot.joint_names
                )
            )
        except RecordingError:
            return None
        inside = np.flatnonzero((prepared.time >= start) & (prepared.time < end))[::STRIDE]
        if not inside.size:
            return None
        points = prepared.rows(inside)
        _let_the_stream_run()
        model = self.model_torques(points.positions, points.velocities, points.accelerations)
        at_rest = np.all(np.abs(points.velocities) <= REST_SPEED, axis=1)  # filtered |q̇|
        return ResidualRows(points.time, points.measured_efforts - model, at_rest)

    def model_torques(self, positions, velocities, accelerations) -> np.ndarray:
        """τ_model (m, n) [N·m, N] at m joint states (model order): inverse dynamics plus the
        friction model's torques."""
        robot, data = self.robot, self._data
        torques = np.array(
            [
                robot.reduce(
                    pin.rnea(
                        robot.model,
                        data,
                        robot.configuration(q),
                        robot.tangent(v),
                        robot.tangent(a),
                    )
                )
                for q, v, a in zip(positions, velocities, accelerations)
            ]
        ).reshape(len(positions), robot.num_joints)
        if self.friction is not None:
            torques += self.friction.torques(velocities)
        return torques

    def _accumulate(self, rows: ResidualRows) -> None:
        """Fold the new points into the moving averages (each replaced by a new array in one
        assignment: :meth:`rms` may read it from another thread meanwhile)."""
        squares = np.square(rows.residuals)
        for kind, mask in (('rest', rows.at_rest), ('moving', ~rows.at_rest), ('all', None)):
            chosen = squares if mask is None else squares[mask]
            mean, count = self._squares[kind].copy(), self._counts[kind]
            for row in chosen:
                count += 1
                mean += (row - mean) / min(count, KEPT_POINTS)
            self._squares[kind], self._counts[kind] = mean, count


def _let_the_stream_run() -> None:
    """Release the GIL between the steps of a block: the stream's thread, if it waits for it,
    goes on at once instead of after Python's switch interval."""
    time.sleep(0)


def _next_block_start(stamps: np.ndarray, start: float) -> float:
    """The next block's start: one block on, or the first sample after a longer gap."""
    following = start + BLOCK_SECONDS
    index = int(np.searchsorted(stamps, following))
    if index == len(stamps) or stamps[index] < following + BLOCK_SECONDS:
        return following
    return float(stamps[index])


class _SampleWindow:
    """Joint samples waiting for evaluation, in preallocated arrays: the stream's thread appends,
    another takes copies and forgets the evaluated ones (at most :data:`MAX_SAMPLES`; when full,
    the older half goes)."""

    def __init__(self, joints: int, capacity: int = MAX_SAMPLES):
        self._stamps = np.empty(capacity)
        self._rows = np.empty((capacity, 3, joints))  # positions, velocities, efforts
        self._start = self._end = 0
        self._lock = threading.Lock()

    def append(self, stamp: float, positions, velocities, efforts) -> None:
        with self._lock:
            if self._end == len(self._stamps):
                self._compact()
            row = self._rows[self._end]
            row[0], row[1], row[2] = positions, velocities, efforts
            self._stamps[self._end] = stamp
            self._end += 1

    def _compact(self) -> None:
        """Move the waiting samples to the front (the newer half of them when full)."""
        start = max(self._start, self._end - len(self._stamps) // 2)
        kept = self._end - start
        self._stamps[:kept] = self._stamps[start : self._end]
        self._rows[:kept] = self._rows[start : self._end]
        self._start, self._end = 0, kept

    def snapshot(self) -> tuple:
        """(stamps (m,) [s], rows (m, 3, n)): copies of the waiting samples."""
        with self._lock:
            window = slice(self._start, self._end)
            return self._stamps[window].copy(), self._rows[window].copy()

    def forget_before(self, stamp: float) -> None:
        with self._lock:
            waiting = self._stamps[self._start : self._end]
            self._start += int(np.searchsorted(waiting, stamp))
