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
velocities) cannot, and it lags the stream by about a block and a margin (1.5 s): a diagnostic,
not a control signal.

A fixed base only: a moving or floating base adds forces (the base's motion, the feet) that
are no part of this model.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import NamedTuple, Optional

import numpy as np
import pinocchio as pin

from robot_dynamics.core.dynamics.friction import FrictionModel
from robot_dynamics.core.identification.recording import (
    Recording,
    RecordingError,
    prepare_for_identification,
)
from robot_dynamics.core.model.model import RobotModel

BLOCK_SECONDS = 1.0
"""[s] of stream evaluated at a time."""
MARGIN_SECONDS = 0.5
"""[s] of samples kept on either side of a block: the zero-phase filter's ends fall outside it."""
STRIDE = 4
"""Every this many 1 ms grid points is evaluated (the filtered signals carry nothing above
10 Hz; the RMS of every fourth point estimates the RMS of all)."""
REST_SPEED = 0.01
"""[rad/s, m/s]: a point whose filtered |q̇| is at most this on every joint is at rest."""
KEPT_POINTS = 2500
"""The diagnostics' RMS is a moving average over about this many evaluated points (10 s at
1 kHz)."""
MAX_SAMPLES = 20000
"""Joint samples waiting for evaluation at most (20 s at 1 kHz): the oldest go first."""
KINDS = ('rest', 'moving', 'all')


class ResidualRows(NamedTuple):
    """Evaluated points: ``stamps`` (m,) [s], ``residuals`` (m, n) [N·m, N], ``at_rest`` (m,)."""

    stamps: np.ndarray
    residuals: np.ndarray
    at_rest: np.ndarray


class FilteredResidual:
    """The residual of ``robot`` (fixed base) with ``friction`` (None: none) on one stream
    (module docstring). :meth:`add` takes the stream's samples (any thread, cheap);
    :meth:`update` evaluates the complete blocks (another thread may call it)."""

    def __init__(self, robot: RobotModel, friction: Optional[FrictionModel]):
        self.robot, self.friction = robot, friction
        self._data = robot.model.createData()  # the stream's thread uses robot.data
        self._samples: deque = deque(maxlen=MAX_SAMPLES)
        self._lock = threading.Lock()  # the samples: stream thread against update()
        self._update_lock = threading.Lock()  # one update() at a time
        self._block_start: Optional[float] = None
        self._squares = {kind: np.zeros(robot.num_joints) for kind in KINDS}
        self._counts = dict.fromkeys(KINDS, 0)

    def add(self, stamp: float, positions, velocities, efforts) -> None:
        """One joint sample [s, rad, rad/s, N·m] in model order; arrays kept, not copied."""
        with self._lock:
            self._samples.append((stamp, positions, velocities, efforts))

    def update(self, final: bool = False) -> ResidualRows:
        """Evaluate every block whose margin after it has arrived (``final``: also the rest, up
        to the newest sample); the new points, also added to :meth:`rms`."""
        with self._update_lock:
            return self._update(final)

    def _update(self, final: bool) -> ResidualRows:
        with self._lock:
            samples = list(self._samples)
        rows = []
        if samples:
            if self._block_start is None:
                self._block_start = samples[0][0] + MARGIN_SECONDS
            newest = samples[-1][0]
            while self._block_start < newest and (
                final or self._block_start + BLOCK_SECONDS + MARGIN_SECONDS <= newest
            ):
                rows.append(self._block(samples, self._block_start))
                self._block_start = self._next_block_start(samples, self._block_start)
            self._forget_before(self._block_start - MARGIN_SECONDS)
        rows = [row for row in rows if row is not None]
        if not rows:
            n = self.robot.num_joints
            return ResidualRows(np.zeros(0), np.zeros((0, n)), np.zeros(0, dtype=bool))
        result = ResidualRows(*(np.concatenate(parts) for parts in zip(*rows)))
        self._accumulate(result)
        return result

    def rms(self, kind: str) -> Optional[np.ndarray]:
        """RMS per joint [N·m, N] over about the last :data:`KEPT_POINTS` points of ``kind``
        (:data:`KINDS`); None before the first."""
        return np.sqrt(self._squares[kind]) if self._counts[kind] else None

    def _next_block_start(self, samples: list, start: float) -> float:
        """The next block's start: one block on, or the first sample after a longer gap."""
        following = start + BLOCK_SECONDS
        later = next((s[0] for s in samples if s[0] >= following), None)
        return following if later is None or later < following + BLOCK_SECONDS else later

    def _forget_before(self, stamp: float) -> None:
        with self._lock:
            while self._samples and self._samples[0][0] < stamp:
                self._samples.popleft()

    def _block(self, samples: list, start: float) -> Optional[ResidualRows]:
        """The points of the block [start, start + BLOCK_SECONDS); None when it has none or its
        samples cannot be prepared (too few, a gap)."""
        end = start + BLOCK_SECONDS
        chosen = [s for s in samples if start - MARGIN_SECONDS <= s[0] <= end + MARGIN_SECONDS]
        if len(chosen) < 2 or any(s[3] is None or s[2] is None for s in chosen):
            return None
        stamps, positions, velocities, efforts = (np.array(column) for column in zip(*chosen))
        _let_the_stream_run()
        try:
            prepared = prepare_for_identification(
                Recording(stamps, positions, velocities, efforts, self.robot.joint_names)
            )
        except RecordingError:
            return None
        inside = np.flatnonzero((prepared.time >= start) & (prepared.time < end))[::STRIDE]
        if not inside.size:
            return None
        points = prepared.rows(inside)
        _let_the_stream_run()
        model = self.model_torques(points.positions, points.velocities, points.accelerations)
        at_rest = np.all(np.abs(points.velocities) <= REST_SPEED, axis=1)
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
        squares = np.square(rows.residuals)
        for kind, mask in (('rest', rows.at_rest), ('moving', ~rows.at_rest), ('all', None)):
            chosen = squares if mask is None else squares[mask]
            for row in chosen:
                count = self._counts[kind] = self._counts[kind] + 1
                self._squares[kind] += (row - self._squares[kind]) / min(count, KEPT_POINTS)


def _let_the_stream_run() -> None:
    """Release the GIL between the steps of a block (each ~1–3 ms): the stream's thread, waiting
    for it, goes on at once instead of after Python's 5 ms switch interval."""
    time.sleep(0)
