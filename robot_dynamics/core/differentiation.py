"""Causal, jitter-tolerant differentiation of sampled signals (live estimates).

Two estimators with a different trade-off, both least-squares fits over the actual stamps:

* :class:`CausalDifferentiator`: straight line through the last samples, slope read at the
  window's centre: lowest noise, delayed by half the window (dynamics_node's q̈).
* :class:`PolynomialDifferentiator`: polynomial fit read at the newest sample: no delay for
  motion polynomial over the window, higher noise (centroidal_node's ḣ_G).

:class:`CausalDifferentiator` keeps the last ``window`` samples (time-stamped, so uneven
sampling is fine) and returns the least-squares slope of a straight line through them.
That is the derivative delayed by about half the window span (window 10 at 1 kHz: ~4.5 ms)
with noise gain 1/√(Σ(tᵢ − t̄)²). It is the estimator dynamics_node uses for q̈; offline
tools use zero-phase filtering instead
(:mod:`robot_dynamics.core.signals`).
"""
from __future__ import annotations

import math
from collections import deque
from typing import Optional

import numpy as np

from robot_dynamics.core.errors import RobotDynamicsError


class SampleOrderError(RobotDynamicsError):
    """A sample is not newer than the previous one."""


class CausalDifferentiator:
    """Least-squares slope over the last ``window`` samples of a vector signal.

    ``update(t, x)`` takes time ``t`` [s] and a vector ``x`` of size ``width`` and returns
    dx/dt estimated at the window's centre (delay ≈ half the window span), or zeros until
    two distinct times are in. Each update is a fixed handful of operations (two small
    matrix products), with no growing state.

    The slope is Σ(tᵢ − t̄)xᵢ / Σ(tᵢ − t̄)² = (Σtᵢxᵢ − t̄Σxᵢ) / (Σtᵢ² − t̄Σtᵢ): the sums over
    the times are kept as floats (updated per sample, recomputed exactly once per window),
    and one product of [t; 1] with the stored samples gives Σtᵢxᵢ and Σxᵢ.
    """

    MIN_SPREAD = 1e-14
    """Σ(tᵢ − t̄)² [s²] below which the window's times count as one instant (no slope)."""

    def __init__(self, width: int, window: int = 10):
        if window < 2:
            raise ValueError('window must be at least 2 samples')
        self.window = window
        # Times are kept relative to a recent origin so that they are small numbers: the sums
        # then lose nothing (stamps since the epoch would lose ~1e-7 s to rounding).
        # Rows never filled since the last reset stay zero, so they add nothing to the sums.
        self._values = np.zeros((window, width))
        self._design = np.ones((2, window))  # row 0: tᵢ − origin; row 1: ones
        self._design[0] = 0.0
        self._moments = np.zeros((2, width))
        self._coefficients = np.zeros(2)
        self._sum = 0.0
        self._sum_of_squares = 0.0
        self._origin = 0.0
        self._count = 0
        self._next = 0

    def reset(self) -> None:
        self._values.fill(0.0)
        self._design[0] = 0.0
        self._sum = self._sum_of_squares = 0.0
        self._count = 0
        self._next = 0

    def update(self, time: float, value: np.ndarray) -> np.ndarray:
        """Take the sample ``value`` at ``time`` [s] (not older than the previous one) and
        return the slope over the last ``window`` samples (zeros with fewer than two distinct times)."""
        count = self._count
        if count == 0:
            self._origin = time
        design, row, relative = self._design, self._next, time - self._origin
        replaced = design.item(0, row)
        design[0, row] = relative
        self._values[row] = value
        self._sum += relative - replaced
        self._sum_of_squares += relative * relative - replaced * replaced
        if count < self.window:
            count = self._count = count + 1
        if row + 1 < self.window:
            self._next = row + 1
        else:
            self._next = 0
            self._move_origin(time)
        total, squares = self._sum, self._sum_of_squares
        mean = total / count
        spread = squares - mean * total  # Σ(tᵢ − t̄)²
        if count < 2 or spread <= self.MIN_SPREAD:
            return np.zeros(self._values.shape[1])
        moments = design.dot(self._values, out=self._moments)  # [Σtᵢxᵢ, Σxᵢ]
        self._coefficients[0] = 1.0 / spread
        self._coefficients[1] = -mean / spread
        return self._coefficients.dot(moments)

    def _move_origin(self, time: float) -> None:
        """Re-express the stored times relative to ``time`` and recompute their sums exactly
        (once per window, when every row is filled: the times stay small, rounding does not build up)."""
        times = self._design[0]
        times -= time - self._origin
        self._sum = math.fsum(times)
        self._sum_of_squares = math.fsum(times * times)
        self._origin = time

    def delay(self) -> float:
        """Current group delay of the estimate [s]: newest time minus the window's mean time."""
        if self._count == 0:
            return 0.0
        times = self._design[0, :self._count]
        return float(times.max() - times.mean())


class PolynomialDifferentiator:
    """Causal derivative of a vector signal at its newest sample (used for ḣ_G).

    A ring buffer keeps the last ``window`` samples; a least-squares polynomial of degree
    ``degree`` is fitted to them (Savitzky–Golay with the actual, possibly uneven, stamps)
    and its derivative is evaluated at the *newest* sample. So the estimate has no group
    delay for any signal that is a polynomial of degree ≤ ``degree`` over the window
    (e.g. constant ḣ_G is exact), and is causal; the price is a higher noise gain than a
    centred fit, which would lag by half the window ((window − 1)/2 samples). A gap longer than
    ``max_gap`` seconds restarts the buffer (the motion before it is not trusted).
    """

    def __init__(self, window: int = 9, degree: int = 2, max_gap: float = 0.1):
        if degree < 1 or window < degree + 2:
            raise ValueError(f'need degree ≥ 1 and window ≥ degree + 2, got window={window}, degree={degree}')
        if not (math.isfinite(max_gap) and max_gap > 0.0):
            raise ValueError(f'max_gap must be a positive time in s, got {max_gap}')
        self.window = int(window)
        self.degree = int(degree)
        self.max_gap = float(max_gap)
        self._stamps: deque = deque(maxlen=self.window)
        self._values: deque = deque(maxlen=self.window)

    def add(self, stamp: float, value: np.ndarray) -> None:
        """Append a sample: ``stamp`` [s] (strictly increasing), ``value`` a finite vector."""
        value = np.asarray(value, dtype=float)
        if not math.isfinite(stamp) or not np.all(np.isfinite(value)):
            raise ValueError(f'sample at {stamp} s is not finite')
        if self._stamps:
            last = self._stamps[-1]
            if stamp <= last:
                raise SampleOrderError(f'stamp {stamp:.6f} s is not newer than the previous {last:.6f} s')
            if stamp - last > self.max_gap or value.shape != self._values[-1].shape:
                self.reset()
        self._stamps.append(float(stamp))
        self._values.append(value.copy())

    def reset(self) -> None:
        """Forget every sample."""
        self._stamps.clear()
        self._values.clear()

    @property
    def ready(self) -> bool:
        """True once the buffer is full (a rate is available)."""
        return len(self._stamps) == self.window

    def rate(self) -> Optional[np.ndarray]:
        """d(value)/dt at the newest stamp [value unit / s]; None until the buffer is full."""
        if not self.ready:
            return None
        stamps = np.fromiter(self._stamps, dtype=float, count=self.window)
        span = stamps[-1] - stamps[0]
        local = (stamps - stamps[-1]) / span
        vandermonde = np.vander(local, self.degree + 1, increasing=True)
        coefficients, *_ = np.linalg.lstsq(vandermonde, np.stack(self._values), rcond=None)
        return coefficients[1] / span
