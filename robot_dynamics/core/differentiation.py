"""Causal, jitter-tolerant differentiation of sampled signals (live acceleration estimates).

:class:`CausalDifferentiator` keeps the last ``window`` samples (time-stamped, so uneven
sampling is fine) and returns the least-squares slope of a straight line through them.
That is the derivative delayed by about half the window span (window 10 at 1 kHz: ~4.5 ms)
with noise gain 1/√(Σ(tᵢ − t̄)²). It is the estimator the live nodes use for q̈ and for
the rate of centroidal momentum; offline tools use zero-phase filtering instead
(:mod:`robot_dynamics.core.signals`).
"""
from __future__ import annotations

import numpy as np


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
