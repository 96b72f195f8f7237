"""Parameter covariance of a linear least-squares fit whose residual is correlated in time.

The classic 1σ² covariance σ̂²(YᵀY)⁻¹ (chapter 002 §1.5) assumes independent rows. Rows
taken from low-pass filtered signals (or a residual that carries model mismatch) are not:
neighbouring samples share their noise, and σ̂²(YᵀY)⁻¹ is then too small by roughly the
square root of the number of samples per correlation time (×8 for a 1 kHz grid filtered
at 10 Hz). :func:`correlated_covariance` raises each parameter's standard deviation to a
batch-means sandwich estimate when that is larger:

    Cov_sandwich = (YᵀY)⁻¹ S (YᵀY)⁻¹ · B/(B − 1),   S = Σ_b s_b s_bᵀ,   s_b = Σ_{rows in b} y_k r_k

with B blocks of :data:`CORRELATION_BLOCK` seconds, long against the correlation time of
the residual, so that block sums are nearly independent (Newey–West / batch means).
Units: those of the rows and residual (the covariance is in the parameters' units²).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

CORRELATION_BLOCK = 1.0
"""Block length [s] of the batch-means estimate of time-correlated residuals: 10 periods of a
10 Hz filter cutoff, so the correlation between neighbouring block sums is small."""
MIN_BLOCKS = 3
"""Fewer non-empty blocks than this give no usable batch-means estimate: the classic
covariance is returned unchanged."""


def correlated_covariance(rows: np.ndarray, residual: np.ndarray, times: np.ndarray, joints: int,
                          information_inverse: Optional[np.ndarray] = None,
                          block: float = CORRELATION_BLOCK) -> np.ndarray:
    """1σ² covariance of the least-squares parameters of ``rows @ x ≈ target``.

    ``rows`` (N·joints, p): the (weighted) regressor, sample-major with ``joints`` rows per
    sample; ``residual`` (N·joints,): target − rows @ x, in the same (weighted) units;
    ``times`` (N,) [s]: the time of every sample, len(times)·joints == N·joints (gaps allowed;
    blocks are cut by time);
    ``information_inverse`` (p, p): (rowsᵀ rows)⁻¹ when the caller has a better-conditioned
    form of it (e.g. R⁻¹R⁻ᵀ from a QR), else computed as the pseudo-inverse; ``block`` [s].

    Returns σ̂²(YᵀY)⁻¹ with σ̂² = ‖r‖²/(rows − p) (chapter 002 §1.5), each parameter's
    standard deviation raised to the batch-means sandwich estimate over ``block``-second
    blocks when that is larger (correlations between parameters are kept). With fewer than
    :data:`MIN_BLOCKS` blocks the classic covariance is returned.
    """
    count, parameters = rows.shape
    if information_inverse is None:
        information_inverse = np.linalg.pinv(rows.T @ rows)
    variance = residual @ residual / max(count - parameters, 1)
    classic = variance * information_inverse
    times = np.asarray(times, dtype=float).reshape(-1)
    scores = (rows * residual[:, None]).reshape(-1, joints, parameters).sum(axis=1)
    index = np.floor((times - times.min()) / block).astype(int)
    sums = np.zeros((index.max() + 1, parameters))
    np.add.at(sums, index, scores)
    sums = sums[np.any(sums != 0, axis=1)]
    blocks = len(sums)
    if blocks < MIN_BLOCKS:
        return classic
    sandwich = information_inverse @ (sums.T @ sums) @ information_inverse * blocks / (blocks - 1)
    classic_std, sandwich_std = np.sqrt(np.diag(classic)), np.sqrt(np.maximum(np.diag(sandwich), 0.0))
    ratio = np.divide(sandwich_std, classic_std, out=np.ones_like(classic_std), where=classic_std > 0)
    scale = np.maximum(1.0, ratio)
    return classic * np.outer(scale, scale)
