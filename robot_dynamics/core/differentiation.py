"""Causal, jitter-tolerant differentiation of sampled signals (live estimates).

Two estimators with a different trade-off, both least-squares fits over the actual stamps:

* :class:`CausalDifferentiator`: straight line through the last samples, slope read at the
  window's centre: lowest noise, delayed by half the window (dynamics_node's q̈).
* :class:`PolynomialDifferentiator`: polynomial fit read at the newest sample: no delay for
  motion polynomial over the window, higher noise (centroidal_node's ḣ_G).

:class:`CausalDifferentiator` keeps the last ``window`` samples (time-stamped, so uneven
sampling is fine) and returns the least-squares slope of a straight line through them.
That is the derivative delayed by about half the window span (window 10 at 1 kHz: ~4.5 ms)
with noise gain 1/√(Σ(tᵢ − t̄)²). It is the estimator the live nodes use for q̈ and for
the rate of centroidal momentum; offline tools use zero-phase filtering instead
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
    two samples are in. Each update is O(window · width) with no allocation growth.
    """

    def __init__(self, width: int, window: int = 10):
        if window < 2:
            raise ValueError('window must be at least 2 samples')
        self.window = window
        self._times = np.zeros(window)
        self._values = np.zeros((window, width))
        self._count = 0
        self._next = 0

    def reset(self) -> None:
        self._count = 0
        self._next = 0

    def update(self, time: float, value: np.ndarray) -> np.ndarray:
        self._times[self._next] = time
        self._values[self._next] = value
        self._next = (self._next + 1) % self.window
        self._count = min(self._count + 1, self.window)
        return self.derivative()

    def derivative(self) -> np.ndarray:
        """The current slope estimate (zeros with fewer than two distinct times)."""
        if self._count < 2:
            return np.zeros(self._values.shape[1])
        times = self._times[:self._count]
        values = self._values[:self._count]
        centred = times - times.mean()
        spread = centred @ centred
        if spread <= 0.0:
            return np.zeros(self._values.shape[1])
        # Σ(tᵢ − t̄) = 0, so the values need no centring: slope = Σ(tᵢ − t̄) xᵢ / Σ(tᵢ − t̄)².
        return centred @ values / spread

    def delay(self) -> float:
        """Current group delay of the estimate [s]: newest time minus the window's mean time."""
        if self._count == 0:
            return 0.0
        times = self._times[:self._count]
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
