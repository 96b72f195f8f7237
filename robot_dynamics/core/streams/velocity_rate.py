"""Reported joint velocities that are not the rate of the reported positions.

A driver can report its velocities with the other sign than its positions (two conventions in
one driver), in degrees per second beside positions in radians, on the motor side of the
gearbox (the gear ratio times the joint's), or fill the field with zeros it never measured
(ros2_control's mock hardware). The inverse dynamics, the observer's momentum and the
acceleration estimate then all take a wrong q̇, and nothing else says so.

Over a span of :data:`SPAN` steps from t_0 to t_N the positions change by Δq; velocities that
are the positions' rate predict Δq / (t_N − t_0) as their trapezoid mean
Σ (q̇_i + q̇_{i−1}) / (2N) (exact for velocities linear between samples; a stamp's jitter is
spread over the span). :class:`VelocityRate` fits, per joint, the factor f in
(predicted rate) ≈ f · (positions' rate) by least squares over the recent spans (sums forgotten
by :data:`FORGETTING` per span). f is 1 for the positions' rate, −1 for the opposite sign, 57.3
for degrees per second, 0 for zeros. A joint is judged only once it has moved (the RMS of its
positions' rate over the spans above :data:`MIN_SPEED`) and one factor explains its motion
(correlation² above :data:`MIN_FIT`), so noise, a velocity filter's lag and quantised encoders
do not count; continuous joints are unwrapped. Per sample it costs one vector sum.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

SPAN = 16
"""Steps (SPAN + 1 samples) over which the positions' change meets the velocities' integral."""

FORGETTING = 0.98
"""Weight kept by the sums per span (a memory of ~50 spans: 0.8 s at 1 kHz, 3 s at 250 Hz)."""

MIN_SPEED = 0.05
"""[rad/s, m/s] RMS rate of the positions over the spans below which a joint is not judged."""

MIN_FIT = 0.8
"""Correlation² of the velocities' trapezoid with the position change above which f is said."""


class VelocityRate:
    """Per joint, the factor between reported velocities and the rate of the positions (module
    docstring): :meth:`factors` (NaN for a joint not judged yet)."""

    def __init__(self, joint_count: int, continuous: list):
        self._continuous = continuous
        self._start: Optional[tuple] = None  # (stamp, positions, velocities) of the span's start
        self._velocity_sum = np.zeros(joint_count)  # Σ q̇_i over the span, start included
        self._steps = 0
        # forgotten sums over spans, per joint: Σ rate², Σ predicted², Σ predicted·rate
        self._weight = 0.0
        self._sums = np.zeros((3, joint_count))

    def check(self, stamp: float, positions: np.ndarray, velocities: np.ndarray) -> None:
        """Take a sample's ``positions`` [rad, m] and reported ``velocities`` [rad/s, m/s] at
        ``stamp`` [s] (a stamp not after the span's start starts a new span); the arrays are
        kept, not copied (the caller never writes them)."""
        start = self._start
        if start is None or not stamp > start[0]:
            self._start_span(stamp, positions, velocities)
            return
        self._velocity_sum += velocities
        self._steps += 1
        if self._steps < SPAN:
            return
        change = positions - start[1]
        if self._continuous:
            turn = 2.0 * math.pi
            change[self._continuous] -= turn * np.round(change[self._continuous] / turn)
        rate = change / (stamp - start[0])
        predicted = (self._velocity_sum - 0.5 * (start[2] + velocities)) / self._steps
        sums = self._sums
        sums *= FORGETTING
        sums[0] += rate * rate
        sums[1] += predicted * predicted
        sums[2] += predicted * rate
        self._weight = FORGETTING * self._weight + 1.0
        self._start_span(stamp, positions, velocities)

    def _start_span(self, stamp: float, positions: np.ndarray, velocities: np.ndarray) -> None:
        self._start = (stamp, positions, velocities)
        self._velocity_sum[:] = velocities  # its own buffer: no array per sample
        self._steps = 0

    def factors(self) -> np.ndarray:
        """Per joint f, the reported velocities over the positions' rate; NaN for a joint that
        has not moved enough, or whose velocities do not follow its positions well enough for
        one factor (the module docstring's tests)."""
        rate_squares, predicted_squares, products = self._sums
        if self._weight == 0.0:
            return np.full(rate_squares.shape, np.nan)
        with np.errstate(divide='ignore', invalid='ignore'):
            factor = products / rate_squares
            fit = products * products / (rate_squares * predicted_squares)
        moved = rate_squares / self._weight > MIN_SPEED**2
        zeros = predicted_squares == 0.0
        judged = moved & (zeros | (fit > MIN_FIT))
        return np.where(judged, np.where(zeros, 0.0, factor), np.nan)
