"""3-vectors and symmetric 3 × 3 systems in plain floats, for the per-sample paths: numpy's cost
per call at this size (np.cross ~20 µs in its axis handling, a small product or solve 1–10 µs)
exceeds the arithmetic. The vector functions take any three-element sequences and return a list."""

from __future__ import annotations

from typing import Optional, Sequence


def cross(a: Sequence[float], b: Sequence[float]) -> list:
    """a × b."""
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    """a · b."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def add(a: Sequence[float], b: Sequence[float]) -> list:
    """a + b."""
    return [a[0] + b[0], a[1] + b[1], a[2] + b[2]]


def difference(a: Sequence[float], b: Sequence[float]) -> list:
    """a − b."""
    return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def scaled(a: Sequence[float], factor: float) -> list:
    """factor a."""
    return [a[0] * factor, a[1] * factor, a[2] * factor]


def solve_symmetric_3x3(matrix: list, rhs: Sequence[float], min_ratio: float) -> Optional[list]:
    """x with ``matrix`` x = ``rhs`` for a symmetric positive (semi-)definite 3 × 3 matrix
    (nested lists; only its upper triangle is read) by its cofactors; None unless its
    determinant exceeds ``min_ratio`` times the product of its diagonal (which bounds it:
    Hadamard's inequality), i.e. for a matrix too close to singular for this formula."""
    (a, b, c), (_, d, e), (_, _, f) = matrix
    c00, c01, c02 = d * f - e * e, c * e - b * f, b * e - c * d
    c11, c12 = a * f - c * c, b * c - a * e
    det = a * c00 + b * c01 + c * c02
    if not det > min_ratio * a * d * f:
        return None
    c22 = a * d - b * b
    x, y, z = rhs
    return [
        (c00 * x + c01 * y + c02 * z) / det,
        (c01 * x + c11 * y + c12 * z) / det,
        (c02 * x + c12 * y + c22 * z) / det,
    ]
