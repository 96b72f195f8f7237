"""Bounded recording of joint samples for payload identification.

:class:`SampleRingBuffer` preallocates ``capacity`` rows of (stamp, q, q̇, τ_measured) and
overwrites the oldest: O(1) per sample, memory fixed at construction:
``8 · capacity · (1 + 3·n_joints)`` bytes (30 s at 1 kHz for 7 joints: 5.3 MB). A lock makes
appends (the stream thread) and snapshots or clears (a service thread) safe together.
"""
from __future__ import annotations

import threading

import numpy as np


class SampleRingBuffer:
    """Fixed-size ring of joint samples in model joint order (s, rad, rad/s, N·m)."""

    def __init__(self, capacity: int, num_joints: int):
        if capacity < 1:
            raise ValueError('capacity must be at least one sample')
        self.capacity = int(capacity)
        self.num_joints = int(num_joints)
        self._time = np.zeros(self.capacity)
        self._positions = np.zeros((self.capacity, self.num_joints))
        self._velocities = np.zeros((self.capacity, self.num_joints))
        self._efforts = np.zeros((self.capacity, self.num_joints))
        self._next = 0
        self._count = 0
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Memory held by the buffer's arrays [bytes]."""
        return self._time.nbytes + self._positions.nbytes + self._velocities.nbytes + self._efforts.nbytes

    def __len__(self) -> int:
        return self._count

    def clear(self) -> None:
        with self._lock:
            self._next = 0
            self._count = 0

    def append(self, stamp: float, positions: np.ndarray, velocities: np.ndarray, efforts: np.ndarray) -> None:
        with self._lock:
            row = self._next
            self._time[row] = stamp
            self._positions[row] = positions
            self._velocities[row] = velocities
            self._efforts[row] = efforts
            self._next = (row + 1) % self.capacity
            self._count = min(self._count + 1, self.capacity)

    def arrays(self) -> tuple:
        """Copies (time, positions, velocities, efforts), oldest sample first."""
        with self._lock:
            if self._count < self.capacity:
                order = np.arange(self._count)
            else:
                order = (np.arange(self.capacity) + self._next) % self.capacity
            return (self._time[order], self._positions[order], self._velocities[order], self._efforts[order])

    def duration(self) -> float:
        """Time span covered by the buffered samples [s]."""
        if self._count < 2:
            return 0.0
        time = self.arrays()[0]
        return float(time[-1] - time[0])
