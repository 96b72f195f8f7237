"""Contact detection on external joint torques: per-joint thresholds, hysteresis, minimum duration.

A contact starts when some joint's |τ_ext,i| / threshold_i exceeds 1 for at least
``min_duration``. When it starts, the detector holds its *baseline*: τ_ext just before the
contact began (:class:`ContactDetector`). It ends when every ratio has stayed below
``release_ratio`` for at least ``release_duration``, or, while no ratio exceeds 1, every ratio of
τ_ext's change since the baseline: a model's error that keeps τ_ext near the thresholds with
nothing touching does not hold a contact for ever, and a force still over a threshold (one
that built up slowly, partly into the baseline) does not end it. Thresholds are given (N·m
per joint) or calibrated from the residual of contact-free motion: threshold_i = |mean_i| +
k·σ_i over the calibration window (:func:`calibrated_thresholds`). Units: N·m (N for prismatic
joints), s.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from robot_dynamics.core.errors import RobotDynamicsError

DEFAULT_SIGMA = 5.0
DEFAULT_MIN_DURATION = 0.005  # s
DEFAULT_RELEASE_RATIO = 0.7
DEFAULT_RELEASE_DURATION = 0.05  # s
MIN_THRESHOLD = 1e-3  # N·m: a calibrated threshold never goes below this (a noiseless joint)
MIN_CALIBRATION_SAMPLES = 100
STAMP_RESOLUTION = (
    1e-9  # s: a ROS time stamp's resolution; durations this close to a hold count as reached
)
DEFAULT_BASELINE_LOOKBACK = 0.04  # s: two time constants of the default momentum observer
DEFAULT_BASELINE_WINDOW = 0.02  # s: one
MAX_DETECTION_HOLD = 1.0
"""[s] the longest time from a contact's first sample over its threshold to the sample that
flags it (``min_duration`` is below it) that the baseline looks back over."""


class ContactCalibrationError(RobotDynamicsError):
    """Thresholds cannot be calibrated (too few samples, non-finite residuals, bad sigma)."""


class ThresholdError(RobotDynamicsError):
    """Given thresholds are unusable (wrong count, not positive and finite)."""


@dataclass(frozen=True)
class ContactUpdate:
    """Detector output for one sample: ``in_contact``; ``changed`` when this sample flipped
    it; ``ratios`` |τ_ext| / threshold per joint (a new array)."""

    in_contact: bool
    changed: bool
    ratios: np.ndarray


def checked_thresholds(thresholds: Sequence[float], num_joints: int) -> np.ndarray:
    """``thresholds`` as an array of ``num_joints`` positive finite values [N·m]
    (:class:`ThresholdError`)."""
    values = np.asarray(thresholds, dtype=float).reshape(-1)
    if values.shape != (num_joints,):
        raise ThresholdError(
            f'contact_thresholds needs one value per joint ({num_joints}), got {values.size}'
        )
    if not np.all(np.isfinite(values) & (values > 0.0)):
        raise ThresholdError(
            f'contact thresholds must be positive finite torques [N·m], got {values.tolist()}'
        )
    return values


def calibrated_thresholds(residuals: np.ndarray, sigma: float = DEFAULT_SIGMA) -> np.ndarray:
    """Per-joint thresholds |mean| + ``sigma``·std [N·m] of contact-free ``residuals``
    (samples × joints), at least :data:`MIN_THRESHOLD`."""
    if not (math.isfinite(sigma) and sigma > 0.0):
        raise ContactCalibrationError(
            f'contact_threshold_sigma must be a positive number, got {sigma!r}'
        )
    residuals = np.asarray(residuals, dtype=float)
    if residuals.ndim != 2 or len(residuals) < MIN_CALIBRATION_SAMPLES:
        raise ContactCalibrationError(
            f'only {len(residuals)} residual samples recorded; calibration needs at least '
            f'{MIN_CALIBRATION_SAMPLES} of contact-free motion (efforts published)'
        )
    if not np.all(np.isfinite(residuals)):
        raise ContactCalibrationError('the recorded residuals are not all finite')
    thresholds = np.abs(residuals.mean(axis=0)) + sigma * residuals.std(axis=0)
    return np.maximum(thresholds, MIN_THRESHOLD)


def check_below_effort_limits(
    names: Sequence[str], thresholds: np.ndarray, effort_limits: np.ndarray
) -> None:
    """Refuse calibrated ``thresholds`` [N·m] at or above their joints' URDF ``effort_limits``
    (unknown limits: inf or 0, not checked): no contact the joints can feel would reach them, so
    the residual they came from was no model error but broken inputs."""
    limits = np.asarray(effort_limits, dtype=float)
    known = np.isfinite(limits) & (limits > 0.0)
    above = [
        f'{name} {threshold:.3g} ≥ {limit:.3g}'
        for name, threshold, limit, checked in zip(names, thresholds, limits, known)
        if checked and threshold >= limit
    ]
    if above:
        raise ContactCalibrationError(
            f"calibrated thresholds at or above the joints' effort limits ({', '.join(above)} "
            'N·m): no contact could reach them. The residual over the window is not a model '
            'error: joint-state stamps that are not the sampling instants (set '
            'observer_momentum: velocities), efforts in another unit (effort_model_file) or a '
            'contact during the window; the thresholds are unchanged'
        )


class RecentSamples:
    """The (stamp [s], value) samples of the last ``span`` seconds (at up to ``max_rate`` [Hz]).
    A value is kept as the array itself, not a copy: the caller never writes it again."""

    def __init__(self, span: float, max_rate: float = 1000.0):
        self._recent: deque = deque(maxlen=int(max_rate * span) + 2)

    def add(self, stamp: float, value: np.ndarray) -> None:
        self._recent.append((stamp, value))

    def closest(self, stamp: float) -> np.ndarray:
        """The kept value whose stamp is closest to ``stamp`` (the oldest kept when none reaches
        back that far). Call :meth:`add` first."""
        closest_stamp, closest = self._recent[-1]
        for kept_stamp, value in reversed(self._recent):
            if abs(kept_stamp - stamp) > abs(closest_stamp - stamp):
                break
            closest_stamp, closest = kept_stamp, value
        return closest

    def mean(self, start: float, end: float) -> Optional[np.ndarray]:
        """The mean of the kept values stamped from ``start`` to ``end`` [s]; when none is, the
        newest one stamped before ``start``; None when every kept value is newer than ``end``."""
        values = []
        for stamp, value in reversed(self._recent):
            if stamp < start:
                return np.mean(values, axis=0) if values else value
            if stamp <= end:
                values.append(value)
        return np.mean(values, axis=0) if values else None


class ContactDetector:
    """Hysteresis and minimum-duration logic over per-joint ratios |τ_ext| / threshold, and the
    baseline of a contact in progress (:attr:`baseline`).

    The baseline is the mean of τ_ext [N·m] over ``baseline_window`` [s] ending
    ``baseline_lookback`` [s] before the contact's first sample over its threshold. A model's
    errors (link inertials, friction, effort offsets) show in τ_ext with nothing touching and
    change with the motion; the change of τ_ext since the baseline is what the contact adds,
    plus how much that error changed since. The lookback keeps the contact's own rise out of
    the baseline: a momentum observer's τ_ext rises with time constant 1/K_O, so two time
    constants before the first sample over its threshold it holds little of a force that
    crosses it; the mean over one more keeps the baseline's noise below one sample's. Over a
    long contact with large motions (hand guiding) the baseline grows stale."""

    def __init__(
        self,
        thresholds: np.ndarray,
        min_duration: float = DEFAULT_MIN_DURATION,
        release_ratio: float = DEFAULT_RELEASE_RATIO,
        release_duration: float = DEFAULT_RELEASE_DURATION,
        baseline_lookback: float = DEFAULT_BASELINE_LOOKBACK,
        baseline_window: float = DEFAULT_BASELINE_WINDOW,
        max_rate: float = 1000.0,
    ):
        self.thresholds = checked_thresholds(thresholds, len(np.atleast_1d(thresholds)))
        if not (0.0 <= min_duration < math.inf and 0.0 <= release_duration < math.inf):
            raise ThresholdError('contact durations must be non-negative times [s]')
        if not 0.0 < release_ratio <= 1.0:
            raise ThresholdError(f'release ratio must be in (0, 1], got {release_ratio!r}')
        self.min_duration, self.release_duration = float(min_duration), float(release_duration)
        self.release_ratio = float(release_ratio)
        self.baseline_lookback, self.baseline_window = baseline_lookback, baseline_window
        self._inverse = 1.0 / self.thresholds
        span = baseline_window + baseline_lookback + MAX_DETECTION_HOLD
        self._recent = RecentSamples(span, max_rate)
        self.reset()

    def reset(self) -> None:
        """No contact, no pending transition."""
        self.in_contact = False
        self._pending_since: Optional[float] = None
        self.contacts = 0
        self.onset: Optional[float] = None
        """Stamp [s] of the first sample over a threshold of the contact in progress or last."""
        self.baseline: Optional[np.ndarray] = None
        """τ_ext [N·m] just before the contact in progress began (class docstring); None out of
        contact, and for a contact that began with the detector's first samples."""

    def update(self, stamp: float, external_torques: np.ndarray) -> ContactUpdate:
        """Take one sample of external torques [N·m] at ``stamp`` [s] (kept as it is for the
        baseline: the caller never writes it again)."""
        self._recent.add(stamp, external_torques)
        ratios = np.abs(external_torques) * self._inverse
        peak = float(ratios.max()) if ratios.size else 0.0
        if self.in_contact:
            holds = peak >= self.release_ratio and (
                peak > 1.0 or self._change_peak(external_torques) >= self.release_ratio
            )
        else:
            holds = not peak > 1.0
        if holds:  # no pending transition
            self._pending_since = None
            return ContactUpdate(self.in_contact, False, ratios)
        if self._pending_since is None:
            self._pending_since = stamp
        hold = self.release_duration if self.in_contact else self.min_duration
        if stamp - self._pending_since < hold - STAMP_RESOLUTION:
            return ContactUpdate(self.in_contact, False, ratios)
        self.in_contact = not self.in_contact
        self.baseline = None
        if self.in_contact:
            self.contacts += 1
            self.onset = self._pending_since
            end = self.onset - self.baseline_lookback
            self.baseline = self._recent.mean(end - self.baseline_window, end)
        self._pending_since = None
        return ContactUpdate(self.in_contact, True, ratios)

    def _change_peak(self, external_torques: np.ndarray) -> float:
        """The largest |τ_ext − baseline| / threshold (infinite without a baseline)."""
        if self.baseline is None or not external_torques.size:
            return math.inf
        return float((np.abs(external_torques - self.baseline) * self._inverse).max())


class ResidualHistory:
    """The last ``capacity`` (stamp [s], τ_ext [N·m]) samples, for threshold calibration, each
    flagged when it is the first output of its observer after a restart."""

    def __init__(self, capacity: int, num_joints: int):
        self._stamps = np.full(max(1, int(capacity)), -np.inf)
        self._values = np.zeros((len(self._stamps), num_joints))
        self._restarted = np.zeros(len(self._stamps), dtype=bool)
        self._written = 0

    @property
    def capacity(self) -> int:
        return len(self._stamps)

    def append(self, stamp: float, values: np.ndarray, restarted: bool = False) -> None:
        index = self._written % len(self._stamps)
        self._stamps[index] = stamp
        self._values[index] = values
        self._restarted[index] = restarted
        self._written += 1

    def clear(self) -> None:
        self._written = 0
        self._stamps[:] = -np.inf

    def rows(self, duration: float) -> tuple:
        """(stamps, values, restarted) of the last ``duration`` seconds before the newest
        sample, in time order."""
        count = min(self._written, len(self._stamps))
        if count == 0:
            return self._stamps[:0].copy(), self._values[:0].copy(), self._restarted[:0].copy()
        newest = self._stamps[(self._written - 1) % len(self._stamps)]
        keep = np.flatnonzero(self._stamps >= newest - duration)
        keep = keep[np.argsort(self._stamps[keep], kind='stable')]
        return self._stamps[keep], self._values[keep], self._restarted[keep]

    def window(self, duration: float) -> np.ndarray:
        """The samples (rows, in time order) of the last ``duration`` seconds before the newest
        one."""
        return self.rows(duration)[1]
