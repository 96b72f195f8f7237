"""3-vectors as lists of plain floats, for the per-sample paths: numpy's cost per call on a
3-vector (np.cross ~20 µs in its axis handling, a small product ~1 µs) exceeds the arithmetic.
Each function takes any three-element sequences and returns a list."""

from __future__ import annotations

from typing import Sequence


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
