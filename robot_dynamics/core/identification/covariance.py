"""Parameter covariance of a linear least-squares fit whose residual is correlated in time.

The classic 1σ² covariance σ̂²(YᵀY)⁻¹ (Khalil & Dombre 2002) assumes independent rows. Rows
taken from low-pass filtered signals (or a residual that carries model mismatch) are not:
neighbouring samples share their noise, and σ̂²(YᵀY)⁻¹ is then too small by roughly the
square root of the number of samples per correlation time (×8 for a 1 kHz grid filtered
at 10 Hz). :func:`correlated_covariance` raises each parameter's standard deviation to a
block (cluster-robust) sandwich estimate when that is larger. The rows are cut into B blocks
of :data:`CORRELATION_BLOCK` seconds, long against the correlation time of the residual, so
that the blocks are nearly independent (batch means), and the sandwich is the bias-reduced
linearisation "CR2" of Bell & McCaffrey (2002):

    Cov = A [Σ_b Y_bᵀ (I − H_bb)^(−1/2) r_b r_bᵀ (I − H_bb)^(−1/2) Y_b] A,
    A = (YᵀY)⁻¹,   H_bb = Y_b A Y_bᵀ   (the block's diagonal block of the hat matrix).

The plain batch-means sandwich A (Σ_b s_b s_bᵀ) A · B/(B − 1), s_b = Y_bᵀ r_b, is too small
when the parameters are many for the blocks (43 base parameters, 10–20 blocks): the fit
absorbs part of every block's noise into its own residual. (I − H_bb)^(−1/2) undoes that
shrinkage (exactly for independent rows with equal variance); the delete-one-block
jackknife (I − H_bb)⁻¹ (Shao & Tu 1995, "CR3") over-corrects at 10 blocks. Only p×p
algebra is needed: with G_b = Y_bᵀY_b = V diag(w) Vᵀ, s = √w, M = diag(s) Vᵀ A V diag(s)
(the non-zero spectrum of H_bb),

    Y_bᵀ (I − H_bb)^(−1/2) r_b = V diag(s) (I − M)^(−1/2) diag(1/s) Vᵀ s_b.

The reported std matches the Monte-Carlo spread of the estimates at 5 to 20 blocks, where the
plain batch means stay too small (figures in docs/identification.md and docs/payload.md).
Units: those of the rows and residual (the covariance is in the parameters' units²).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

CORRELATION_BLOCK = 1.0
"""Block length [s] of the block sandwich estimate of time-correlated residuals: 10 periods of
a 10 Hz filter cutoff, so the correlation between neighbouring blocks is small."""
MIN_BLOCKS = 3
"""Fewer non-empty blocks than this give no usable block estimate: the classic covariance is
returned unchanged."""
MIN_RESIDUAL_FRACTION = 1e-2
"""Floor of the eigenvalues of I − H_bb (the fraction of a block's noise left in its residual):
a block that alone determines some parameter direction (leverage → 1) has no residual there;
its correction is capped at 1/√floor = ×10 instead of dividing by zero."""


def classic_covariance(residual: np.ndarray, information_inverse: np.ndarray) -> np.ndarray:
    """σ̂²(YᵀY)⁻¹ with σ̂² = ‖r‖²/(rows − p) (Khalil & Dombre 2002): the 1σ² covariance for
    independent rows, from the ``residual`` (rows,) and ``information_inverse`` (YᵀY)⁻¹ (p, p)."""
    return (
        residual @ residual / max(len(residual) - len(information_inverse), 1) * information_inverse
    )


def correlated_covariance(
    rows: np.ndarray,
    residual: np.ndarray,
    times: np.ndarray,
    joints: int,
    information_inverse: Optional[np.ndarray] = None,
) -> np.ndarray:
    """1σ² covariance of the least-squares parameters of ``rows @ x ≈ target``.

    ``rows`` (N·joints, p): the (weighted) regressor, sample-major with ``joints`` rows per
    sample; ``residual`` (N·joints,): target − rows @ x, in the same (weighted) units;
    ``times`` (N,) [s]: the time of every sample, len(times) == N (gaps allowed; blocks are
    cut by time);
    ``information_inverse`` (p, p): (rowsᵀ rows)⁻¹ when the caller has a better-conditioned
    form of it (e.g. R⁻¹R⁻ᵀ from a QR), else computed as the pseudo-inverse.

    Returns :func:`classic_covariance`, each parameter's standard deviation raised to the CR2
    block sandwich estimate over :data:`CORRELATION_BLOCK`-second blocks (module docstring)
    when that is larger (correlations between parameters are kept). With fewer than
    :data:`MIN_BLOCKS` blocks the classic covariance is returned.
    """
    parameters = rows.shape[1]
    if information_inverse is None:
        information_inverse = np.linalg.pinv(rows.T @ rows)
    classic = classic_covariance(residual, information_inverse)
    times = np.asarray(times, dtype=float).reshape(-1)
    index = np.floor((times - times.min()) / CORRELATION_BLOCK).astype(int)
    sample_rows, sample_residual = (
        rows.reshape(-1, joints, parameters),
        residual.reshape(-1, joints),
    )
    if np.any(np.diff(index) < 0):
        order = np.argsort(index, kind='stable')
        index, sample_rows, sample_residual = (
            index[order],
            sample_rows[order],
            sample_residual[order],
        )
    starts = np.flatnonzero(np.r_[True, np.diff(index) > 0, True])
    corrected = []
    for start, stop in zip(starts[:-1], starts[1:]):
        block_rows = sample_rows[start:stop].reshape(-1, parameters)
        score = block_rows.T @ sample_residual[start:stop].reshape(-1)
        if not np.any(score):
            continue
        corrected.append(
            _leverage_corrected_score(block_rows.T @ block_rows, score, information_inverse)
        )
    if len(corrected) < MIN_BLOCKS:
        return classic
    corrected = np.array(corrected) @ information_inverse  # rows: A Y_bᵀ (I − H_bb)^(−1/2) r_b
    classic_std, sandwich_std = (
        np.sqrt(np.diag(classic)),
        np.sqrt(np.einsum('bi,bi->i', corrected, corrected)),
    )
    ratio = np.divide(
        sandwich_std, classic_std, out=np.ones_like(classic_std), where=classic_std > 0
    )
    scale = np.maximum(1.0, ratio)
    return classic * np.outer(scale, scale)


def _leverage_corrected_score(
    gram: np.ndarray, score: np.ndarray, information_inverse: np.ndarray
) -> np.ndarray:
    """Y_bᵀ (I − H_bb)^(−1/2) r_b from G_b = Y_bᵀY_b, s_b = Y_bᵀr_b and A = (YᵀY)⁻¹ (p-space
    only)."""
    eigenvalues, vectors = np.linalg.eigh(gram)
    keep = eigenvalues > eigenvalues.max() * 1e-12
    vectors, root = vectors[:, keep], np.sqrt(eigenvalues[keep])
    leverage = root[:, None] * (vectors.T @ information_inverse @ vectors) * root[None, :]
    remaining, basis = np.linalg.eigh(np.eye(len(root)) - leverage)
    inverse_root = (basis / np.sqrt(np.maximum(remaining, MIN_RESIDUAL_FRACTION))) @ basis.T
    return vectors @ (root * (inverse_root @ ((vectors.T @ score) / root)))
