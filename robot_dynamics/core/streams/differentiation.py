"""Causal, jitter-tolerant differentiation of sampled signals (live estimates).

Two estimators with a different trade-off, both least-squares fits over the actual stamps:

* :class:`CausalDifferentiator`: straight line through the last samples, slope read at the
  window's centre: lowest noise, delayed by half the window (dynamics_node's q̈).
* :class:`PolynomialDifferentiator`: polynomial fit read at the newest sample: no delay for
  motion polynomial over the window, higher noise (centroidal_node's ḣ_G).

:class:`PositionSlope` gives both nodes q̇ from the positions when velocities are not measured.

:class:`CausalDifferentiator` keeps the last ``window`` samples (time-stamped, so uneven
sampling is fine) and returns the least-squares slope of a straight line through them.
That is the derivative delayed by about half the window span (window 10 at 1 kHz: ~4.5 ms)
with noise gain 1/√(Σ(tᵢ − t̄)²). It is the estimator dynamics_node uses for q̈; offline
tools use zero-phase filtering instead
(:mod:`robot_dynamics.core.identification.recording`).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from robot_dynamics.core.errors import RobotDynamicsError, SettingError
from robot_dynamics.core.small_algebra import solve_symmetric_3x3

_FLOAT64 = np.dtype(np.float64)


class SampleOrderError(RobotDynamicsError):
    """A sample is not newer than the previous one."""


class NonFiniteSampleError(RobotDynamicsError, ValueError):
    """A sample's stamp or value is NaN or infinite; the differentiator is left as it was.

    Also a ValueError, as it raised before this class existed.
    """


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
            raise SettingError(
                f'the differentiation window must be at least 2 samples, got {window}'
            )
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
        return the slope over the last ``window`` samples (zeros with fewer than two distinct
        times)."""
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
        (once per window, when every row is filled: the times stay small, rounding does not build
        up)."""
        times = self._design[0]
        times -= time - self._origin
        self._sum = math.fsum(times)
        self._sum_of_squares = math.fsum(times * times)
        self._origin = time

    def delay(self) -> float:
        """Current group delay of the estimate [s]: newest time minus the window's mean time."""
        if self._count == 0:
            return 0.0
        times = self._design[0, : self._count]
        return float(times.max() - times.mean())


class PositionSlope:
    """q̇ [rad/s, m/s] of joints whose velocities are not measured (a positions-only driver, or
    ros2_control's mock hardware sending zeros): the :class:`CausalDifferentiator` slope of
    their positions [rad, m] over ``window`` samples, continuous joints (indices
    ``continuous``) unwrapped, delayed by about half the window.

    The slope is taken of the change since :meth:`restart` (the first sample after it gives
    zeros): a joint at rest gives exactly 0, and positions from before a pause in the stream's
    use (velocities measured meanwhile) do not enter it.
    """

    def __init__(self, width: int, window: int, continuous: list):
        self._slope = CausalDifferentiator(width, window)
        self._continuous = continuous
        self._offsets: Optional[np.ndarray] = None  # − the restart's positions, + whole turns
        self._last = np.zeros(width)

    def restart(self) -> None:
        self._offsets = None

    def update(self, stamp: float, positions: np.ndarray) -> np.ndarray:
        if self._offsets is None:
            self._slope.reset()
            self._offsets, self._last = -positions, positions
        continuous = self._continuous
        jumps = positions[continuous] - self._last[continuous]
        self._offsets[continuous] -= 2.0 * math.pi * np.round(jumps / (2.0 * math.pi))
        self._last = positions
        return self._slope.update(stamp, positions + self._offsets)


class PolynomialDifferentiator:
    """Causal derivative of a vector signal at its newest sample (used for ḣ_G).

    A ring buffer keeps the last ``longest_window`` samples; a least-squares polynomial of
    degree ``degree`` is fitted to the newest ``window`` of them, a window :meth:`use_window`
    changes while running (Savitzky–Golay with the actual, possibly uneven, stamps)
    and its derivative is evaluated at the *newest* sample. So the estimate has no group
    delay for any signal that is a polynomial of degree ≤ ``degree`` over the window
    (e.g. constant ḣ_G is exact), and is causal; the price is a higher noise gain than a
    centred fit, which would lag by half the window ((window − 1)/2 samples). A gap longer than
    ``max_gap`` seconds restarts the buffer (the motion before it is not trusted).

    The fit is linear in the samples: rate = Σ wᵢ xᵢ / span, with weights w that depend on
    the stamps only. While the intervals between stamps stay equal (within the float
    resolution of the stamps themselves), w is the one computed for evenly spaced stamps and
    is reused; otherwise it is solved for the actual stamps.
    """

    NORMAL_EQUATIONS_DEGREE = 4
    """Up to this degree the fit is solved by its normal equations (well conditioned on times
    scaled to [−1, 0]); above it by an SVD least squares."""

    def __init__(
        self,
        window: int = 9,
        degree: int = 2,
        max_gap: float = 0.1,
        longest_window: Optional[int] = None,
    ):
        if degree < 1 or window < degree + 2:
            raise SettingError(
                f'the polynomial fit needs degree ≥ 1 and window ≥ degree + 2 samples, got '
                f'window={window}, degree={degree}'
            )
        if not (math.isfinite(max_gap) and max_gap > 0.0):
            raise SettingError(f'max_gap must be a positive, finite time in s, got {max_gap}')
        self.window = int(window)
        self.degree = int(degree)
        self.max_gap = float(max_gap)
        self.capacity = max(self.window, int(longest_window or window))
        """The most samples kept: the longest window :meth:`use_window` can select."""
        self._powers = np.arange(self.degree + 1)
        self._unit_derivative = np.eye(self.degree + 1)[1]
        # Each sample is written at row r and r + capacity: the newest n samples are then
        # always rows next + capacity − n .. next + capacity − 1, in time order, as one view.
        self._stamps = np.zeros(2 * self.capacity)
        self._shape: tuple = ()
        self._values = np.zeros((2 * self.capacity,))
        self._even_weights = {}
        self.use_window(self.window)
        self.reset()

    def use_window(self, window: int) -> None:
        """Fit the newest ``window`` samples from now on (clipped to degree + 2 .. capacity);
        the samples already kept are used, so a longer window is ready as soon as that many
        have arrived."""
        window = min(max(int(window), self.degree + 2), self.capacity)
        self._evenly_spaced_weights(window)
        self.window = window

    def _evenly_spaced_weights(self, window: int) -> np.ndarray:
        """The fit's weights for ``window`` evenly spaced samples (computed once per window)."""
        weights = self._even_weights.get(window)
        if weights is None:
            weights = self._even_weights[window] = self._weights(np.linspace(-1.0, 0.0, window))
        return weights

    def noise_gain(self, window: int) -> float:
        """The standard deviation of the rate, in units of the samples' white-noise standard
        deviation per sampling period, for evenly spaced samples and a fit of ``window``
        samples: rate noise = σ × noise_gain / period (the fit's weights' norm over the span)."""
        return float(np.linalg.norm(self._evenly_spaced_weights(window))) / (window - 1)

    @property
    def samples(self) -> int:
        """How many samples are kept (since the start or the last restart, up to capacity)."""
        return self._count

    @property
    def period(self) -> float:
        """The mean interval between the samples kept [s] (NaN with fewer than two)."""
        count = self._count
        if count < 2:
            return math.nan
        newest = self._next + self.capacity - 1
        return float(self._stamps[newest] - self._stamps[newest - count + 1]) / (count - 1)

    def add(self, stamp: float, value: np.ndarray) -> None:
        """Append a sample: ``stamp`` [s] (strictly increasing), ``value`` a finite vector."""
        if type(value) is not np.ndarray or value.dtype is not _FLOAT64:
            value = np.asarray(value, dtype=float)
        flat = value.tolist() if value.ndim == 1 else value.ravel().tolist()
        # One sum proves finiteness unless it overflows; only then look at each entry.
        if not (math.isfinite(stamp) and math.isfinite(sum(flat))):
            if not math.isfinite(stamp) or not np.all(np.isfinite(value)):
                raise NonFiniteSampleError(
                    f'sample at {stamp} s is not finite: skip it and add the next finite one'
                )
        count = self._count
        if count:
            if stamp <= self._last:
                raise SampleOrderError(
                    f'stamp {stamp:.6f} s is not newer than the previous {self._last:.6f} s'
                )
            if stamp - self._last > self.max_gap or value.shape != self._shape:
                self.reset()
                count = 0
        if value.shape != self._shape:
            self._shape = value.shape
            self._values = np.zeros((2 * self.capacity,) + value.shape)
        if count == 0:
            self._interval, self._even_run = math.nan, 0
        else:
            self._track_spacing(stamp - self._last, stamp)
        row, capacity = self._next, self.capacity
        self._stamps[row] = self._stamps[row + capacity] = stamp
        self._values[row] = self._values[row + capacity] = value
        self._next = row + 1 if row + 1 < capacity else 0
        self._count = count + 1 if count < capacity else count
        self._last = float(stamp)

    def _track_spacing(self, interval: float, stamp: float) -> None:
        """Count the consecutive intervals equal to the first of their run, within the rounding
        of the stamps (two ulps of the stamp, which a difference of rounded stamps can carry)."""
        if abs(interval - self._interval) <= 2.0 * math.ulp(stamp) + 1e-9 * interval:
            self._even_run += 1
        else:
            self._interval, self._even_run, self._run_start = interval, 1, self._last

    def reset(self) -> None:
        """Forget every sample."""
        self._count = self._next = self._even_run = 0
        self._last = self._interval = self._run_start = math.nan

    @property
    def ready(self) -> bool:
        """True once the window is full (a rate is available)."""
        return self._count >= self.window

    def rate(self) -> Optional[np.ndarray]:
        """d(value)/dt at the newest stamp [value unit / s]; None until the window is full."""
        window = self.window
        if self._count < window:
            return None
        start = self._next + self.capacity - window
        values = self._values[start : start + window]
        if self._even_run >= window - 1:
            # The period is the mean interval of the whole even run: the rounding of each stamp
            # shrinks with the run's length instead of scaling every rate.
            period = (self._last - self._run_start) / self._even_run
            return self._even_weights[window].dot(values) * (1.0 / (period * (window - 1)))
        stamps = self._stamps[start : start + window]
        span = stamps[-1] - stamps[0]
        return self._weights((stamps - stamps[-1]) / span).dot(values) / span

    def _weights(self, local_times: np.ndarray) -> np.ndarray:
        """w with Σ wᵢ xᵢ = derivative at t = 0 of the least-squares polynomial through
        (tᵢ, xᵢ), for times ``local_times`` in [−1, 0] (row 1 of the fit's pseudo-inverse)."""
        if self.degree == 2:
            weights = _parabola_slope_weights(local_times)
            if weights is not None:
                return weights
        vandermonde = local_times[:, None] ** self._powers
        if self.degree <= self.NORMAL_EQUATIONS_DEGREE:
            return vandermonde.dot(_solve_symmetric((vandermonde.T @ vandermonde).tolist(), 1))
        return np.linalg.lstsq(vandermonde.T, self._unit_derivative, rcond=None)[0]


class WhiteNoiseLevel:
    """The standard deviation of the white noise on a vector signal, per component, from its
    third differences x_k − 3 x_k−1 + 3 x_k−2 − x_k−3: for white noise of standard deviation σ
    they have standard deviation √20 σ, while a motion smooth over four samples contributes
    only its third derivative times the period cubed. Their mean absolute value (√(2/π) × their
    standard deviation for Gaussian noise) is averaged over the last ``samples`` samples
    (exponentially; the running mean until then), so that an impact's single large difference
    moves it little. Noise correlated over several samples (a filtered velocity) is seen only in
    part."""

    ABSOLUTE_TO_SIGMA = 1.0 / (math.sqrt(20.0) * math.sqrt(2.0 / math.pi))

    def __init__(self, samples: int = 250):
        self.samples = int(samples)
        self.reset()

    def reset(self) -> None:
        """Forget every sample (the next three only fill the differences again)."""
        self._previous: list = []
        self._mean_absolute: Optional[np.ndarray] = None
        self._count = 0

    def add(self, value: np.ndarray) -> None:
        """The next sample (a finite vector, the same size every time)."""
        value = np.asarray(value, dtype=float)
        previous = self._previous
        if len(previous) == 3:
            third = np.abs(value - 3.0 * previous[2] + 3.0 * previous[1] - previous[0])
            self._count += 1
            if self._mean_absolute is None:
                self._mean_absolute = third
            else:
                weight = 1.0 / min(self._count, self.samples)
                self._mean_absolute = self._mean_absolute + weight * (third - self._mean_absolute)
            previous.pop(0)
        previous.append(value)

    def sigma(self, least_samples: int = 20) -> Optional[np.ndarray]:
        """σ per component, in the signal's unit; None before ``least_samples`` differences."""
        if self._count < least_samples:
            return None
        return self._mean_absolute * self.ABSOLUTE_TO_SIGMA


def _parabola_slope_weights(times: np.ndarray) -> Optional[np.ndarray]:
    """The weights of a quadratic fit's slope at t = 0 (degree 2 of
    :meth:`PolynomialDifferentiator._weights`): w = y₀ + y₁ t + y₂ t² with y the middle column of
    the inverse of the moment matrix [[S₀ S₁ S₂] [S₁ S₂ S₃] [S₂ S₃ S₄]], S_k = Σ tᵢᵏ; None if
    rounding left that matrix without a positive determinant."""
    squares = times * times
    s1, s2, s3, s4 = (
        float(x) for x in (times.sum(), squares.sum(), squares @ times, squares @ squares)
    )
    s0 = len(times)
    column = solve_symmetric_3x3([[s0, s1, s2], [s1, s2, s3], [s2, s3, s4]], (0, 1, 0), 0.0)
    if column is None:
        return None
    y0, y1, y2 = column
    return y0 + y1 * times + y2 * squares


def _solve_symmetric(matrix: list, unit_index: int) -> list:
    """y with matrix · y = e_unit_index for a small symmetric positive definite matrix (lists),
    by Gaussian elimination in plain floats (numpy's solver costs more than the arithmetic
    at this size)."""
    size = len(matrix)
    rows = [row + [1.0 if i == unit_index else 0.0] for i, row in enumerate(matrix)]
    for pivot in range(size):
        head = rows[pivot]
        for row in rows[pivot + 1 :]:
            factor = row[pivot] / head[pivot]
            for column in range(pivot, size + 1):
                row[column] -= factor * head[column]
    solution = [0.0] * size
    for i in range(size - 1, -1, -1):
        row = rows[i]
        solution[i] = (row[size] - sum(row[j] * solution[j] for j in range(i + 1, size))) / row[i]
    return solution
