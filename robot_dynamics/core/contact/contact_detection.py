"""Contact detection on external joint torques: per-joint thresholds, hysteresis, minimum duration.

A contact starts when some joint's |τ_ext,i| / threshold_i exceeds 1 for at least
``min_duration``; it ends when every ratio has stayed below ``release_ratio`` for at least
``release_duration``. Thresholds are given (N·m per joint) or calibrated from the residual
of contact-free motion: threshold_i = |mean_i| + k·σ_i over the calibration window
(:func:`calibrated_thresholds`). Units: N·m (N for prismatic joints), s.
"""

from __future__ import annotations

import math
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


class ContactDetector:
    """Hysteresis and minimum-duration logic over per-joint ratios |τ_ext| / threshold."""

    def __init__(
        self,
        thresholds: np.ndarray,
        min_duration: float = DEFAULT_MIN_DURATION,
        release_ratio: float = DEFAULT_RELEASE_RATIO,
        release_duration: float = DEFAULT_RELEASE_DURATION,
    ):
        self.thresholds = checked_thresholds(thresholds, len(np.atleast_1d(thresholds)))
        if not (0.0 <= min_duration < math.inf and 0.0 <= release_duration < math.inf):
            raise ThresholdError('contact durations must be non-negative times [s]')
        if not 0.0 < release_ratio <= 1.0:
            raise ThresholdError(f'release ratio must be in (0, 1], got {release_ratio!r}')
        self.min_duration, self.release_duration = float(min_duration), float(release_duration)
        self.release_ratio = float(release_ratio)
        self._inverse = 1.0 / self.thresholds
        self.reset()

    def reset(self) -> None:
        """No contact, no pending transition."""
        self.in_contact = False
        self._pending_since: Optional[float] = None
        self.contacts = 0

    def update(self, stamp: float, external_torques: np.ndarray) -> ContactUpdate:
        """Take one sample of external torques [N·m] at ``stamp`` [s]."""
        ratios = np.abs(external_torques) * self._inverse
        peak = float(ratios.max()) if ratios.size else 0.0
        holds = peak >= self.release_ratio if self.in_contact else not peak > 1.0
        if holds:  # no pending transition
            self._pending_since = None
            return ContactUpdate(self.in_contact, False, ratios)
        if self._pending_since is None:
            self._pending_since = stamp
        hold = self.release_duration if self.in_contact else self.min_duration
        if stamp - self._pending_since < hold - STAMP_RESOLUTION:
            return ContactUpdate(self.in_contact, False, ratios)
        self.in_contact = not self.in_contact
        self.contacts += self.in_contact
        self._pending_since = None
        return ContactUpdate(self.in_contact, True, ratios)


class ResidualHistory:
    """The last ``capacity`` (stamp [s], τ_ext [N·m]) samples, for threshold calibration."""

    def __init__(self, capacity: int, num_joints: int):
        self._stamps = np.full(max(1, int(capacity)), -np.inf)
        self._values = np.zeros((len(self._stamps), num_joints))
        self._written = 0

    @property
    def capacity(self) -> int:
        return len(self._stamps)

    def append(self, stamp: float, values: np.ndarray) -> None:
        index = self._written % len(self._stamps)
        self._stamps[index] = stamp
        self._values[index] = values
        self._written += 1

    def clear(self) -> None:
        self._written = 0
        self._stamps[:] = -np.inf

    def window(self, duration: float) -> np.ndarray:
        """The samples (rows) of the last ``duration`` seconds before the newest one."""
        count = min(self._written, len(self._stamps))
        if count == 0:
            return self._values[:0].copy()
        newest = self._stamps[(self._written - 1) % len(self._stamps)]
        keep = self._stamps >= newest - duration
        return self._values[keep].copy()
