"""Closed forms for the detection delay of a torque step: when each external-torque route crosses
its threshold.

A contact is flagged once some joint's |τ̂_ext,i| exceeds its threshold T_i for the minimum
duration. For a step τ_ext (constant from t = 0) the estimate of each route is a known
function of time, so the crossing time follows in closed form:

* the momentum observer: r(t) = (1 − e^{−K_O t}) τ_ext, crossing at
  t = −ln(1 − T/|τ|) / K_O;
* the inverse-dynamics route on a robot held by a critically damped computed-torque controller
  (natural frequency ω): the motor torque reacts to the push as
  Δτ_m(t) = −(1 − e^{−ωt}(1 − ωt)) τ_ext, and M q̈ − Δτ_m reads that reaction at once (q̈ from
  a lagging slope adds a little, neglected here: an upper bound of the crossing time). This
  mean reaction is the same whether the controller feeds back the true or the measured state;
  with the measured one, its damping term also passes 2ω·M_i·n_v of the velocity noise into
  τ_m, so the calibrated thresholds T_i, and with them the crossing time ≈ T_i / (2ω|τ_i|),
  grow: to ≈ k σ_v ‖M_i‖ / |τ_i| when that term dominates, the observer's crossing time.

The observer's noise under white noise on the velocities σ_v [rad/s], positions σ_q [rad] and
efforts σ_τ [N·m] at a fixed sample period Δt, a = 1 − e^{−K_O Δt}, M_i the i-th row of M(q):
each momentum source makes ū_k a short FIR g of the noise, and the low-pass r_k turns a white
input's variance into a/(2 − a) · Σ_{m,m'} g_m g_m' (1 − a)^{|m − m'|}. So

    velocities: σ_r,i² = (a/Δt)² · 2/(2 − a) · σ_v² ‖M_i‖² + (a/2) σ_τ² ,
    positions:  σ_r,i² = a/(2 − a) · [(6 − 8b + 2b²)/Δt⁴ · σ_q² ‖M_i‖² + (18 + 16b + 2b²)/36 ·
    σ_τ²],  b = 1 − a,

the positions form neglecting the velocity noise in Cᵀq̇. For velocities σ_r ≈ K_O σ_v ‖M_i‖:
the threshold kσ grows with K_O as fast as the step response does, and the crossing time
T/(K_O |τ|) ≈ k σ_v ‖M_i‖ / |τ| does not depend on K_O while T ≪ |τ|. From positions the
velocity noise drops out, and the effort noise (or σ_q ≈ σ_v Δt/√2, where both forms are equal)
sets the threshold.

Units: s, N·m (N for prismatic joints), 1/s; arrays in model joint order.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

COMPUTED_TORQUE_PEAK_TIME = 2.0
"""ω t at which the computed-torque reaction 1 − e^{−ωt}(1 − ωt) peaks at 1 + e^{−2}; it rises
monotonically
before."""


def observer_noise_std(
    mass_row_norms: np.ndarray,
    gain: float,
    period: float,
    velocity_noise: float,
    effort_noise: float,
    momentum: str = 'positions',
    position_noise: float = 0.0,
) -> np.ndarray:
    """σ [N·m] of the observer residual per joint for white velocity noise [rad/s], effort
    noise [N·m] and position noise [rad] at sample ``period`` [s], for the observer's
    ``momentum`` source; ``mass_row_norms`` ‖M_i(q)‖ [kg·m²] (or their RMS over the poses of a
    motion)."""
    smoothing = 1.0 - math.exp(-gain * period)
    if momentum == 'velocities':
        motion_part = (
            _low_passed_variance([1.0 / period, -1.0 / period], smoothing) * velocity_noise**2
        )
        effort_part = _low_passed_variance([0.5, 0.5], smoothing) * effort_noise**2
    else:
        second_difference = np.array([1.0, -2.0, 1.0]) / period**2
        motion_part = _low_passed_variance(second_difference, smoothing) * position_noise**2
        effort_part = (
            _low_passed_variance(np.array([1.0, 4.0, 1.0]) / 6.0, smoothing) * effort_noise**2
        )
    return np.sqrt(motion_part * np.square(mass_row_norms) + effort_part)


def _low_passed_variance(taps, smoothing: float) -> float:
    """Variance of r_k = (1 − a) r_{k−1} + a Σ_m g_m x_{k−m} for unit white x: a/(2 − a) ·
    Σ_{m,m'} g_m g_m' (1 − a)^{|m − m'|}, a = ``smoothing``, g = ``taps``."""
    taps = np.asarray(taps, dtype=float)
    lags = np.abs(np.subtract.outer(np.arange(taps.size), np.arange(taps.size)))
    return smoothing / (2.0 - smoothing) * float(taps @ ((1.0 - smoothing) ** lags) @ taps)


def observer_crossing_time(
    thresholds: np.ndarray, step: np.ndarray, gain: float, lag: float = 0.0
) -> float:
    """First time [s] some joint's observer residual (1 − e^{−K_O (t − lag)})|τ_i| reaches its
    threshold [N·m] after a torque step ``step`` [N·m]; inf when none ever does. ``lag`` [s]:
    0 for the velocities form, half a sample period for the positions form (its ū is centred
    one sample back)."""
    ratios = np.asarray(thresholds, dtype=float) / np.maximum(np.abs(step), 1e-300)
    crossing = ratios < 1.0
    if not np.any(crossing):
        return math.inf
    return float(np.min(-np.log1p(-ratios[crossing]))) / gain + lag


def computed_torque_crossing_time(
    thresholds: np.ndarray, step: np.ndarray, bandwidth: float
) -> float:
    """First time [s] some joint's computed-torque reaction (1 − e^{−ωt}(1 − ωt))|τ_i| reaches
    its threshold [N·m], ω = 2π·``bandwidth`` [Hz]; inf when none reaches it before the
    reaction peaks (ωt = 2)."""
    omega = 2.0 * math.pi * bandwidth
    ratios = np.asarray(thresholds, dtype=float) / np.maximum(np.abs(step), 1e-300)
    smallest = float(np.min(ratios))
    if smallest >= 1.0:
        return math.inf
    return (
        brentq(lambda x: 1.0 - math.exp(-x) * (1.0 - x) - smallest, 0.0, COMPUTED_TORQUE_PEAK_TIME)
        / omega
    )


def first_sample_time(crossing: float, period: float) -> float:
    """The crossing [s] on the sample clock of ``period`` [s]: the first sample at or after it,
    at least one period (a step acting from a sample is seen in the next one); inf stays inf."""
    if not math.isfinite(crossing):
        return math.inf
    return max(1, math.ceil(crossing / period - 1e-9)) * period


def detection_time(crossing: float, period: float, min_duration: float) -> float:
    """Delay [s] on the sample clock: the first sample at or after ``crossing``, then the
    samples until ``min_duration`` [s] has passed (the detector's hold)."""
    return first_sample_time(crossing, period) + math.ceil(min_duration / period - 1e-9) * period
