"""Merging ``joint_states``-like samples from several sources into model joint order.

Real robots publish joint states from several drivers (arm, gripper...), each with its own
name order and subset. :class:`JointStateMerger` keeps the latest position, velocity and
effort of every model joint with the stamp it came with, rejects unusable samples with a
reason (counted by the caller), ignores names the model does not know, and says when
every joint has a recent value. Mimic followers are never expected: the model computes
them from their leaders (names of followers in the input are ignored).

Stamps are in seconds (float). Positions rad/m, velocities rad/s or m/s, efforts N·m/N.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from robot_dynamics.core.errors import JointStateError

MAX_ABS_VALUE = 1.0e6
"""Largest magnitude accepted for any joint value; beyond it a sample is corrupt."""

REJECTION_REASONS = ('empty', 'length_mismatch', 'duplicate_names', 'non_finite', 'out_of_range',
                     'no_known_joints', 'out_of_order', 'bad_stamp')


@dataclass(frozen=True)
class _Layout:
    """Where the entries of one message layout (tuple of names) go in model order."""

    message_indices: np.ndarray
    model_indices: np.ndarray


class JointStateMerger:
    """Latest joint values in model order, merged by name from any number of sources."""

    def __init__(self, joint_names: Sequence[str], max_layouts: int = 64):
        self.joint_names = tuple(joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        count = len(self.joint_names)
        self.positions = np.zeros(count)
        self.velocities = np.zeros(count)
        self.efforts = np.zeros(count)
        self.position_stamps = np.full(count, -math.inf)
        self.velocity_stamps = np.full(count, -math.inf)
        self.effort_stamps = np.full(count, -math.inf)
        self._layouts: dict = {}
        self._max_layouts = max_layouts

    def update(self, names: Sequence[str], positions: Sequence[float], velocities: Sequence[float] = (),
               efforts: Sequence[float] = (), stamp: float = 0.0) -> int:
        """Take one sample. Returns how many model joints it updated.

        Raises :class:`JointStateError` with a ``reason`` from :data:`REJECTION_REASONS`; a
        rejected sample changes nothing.
        """
        if not math.isfinite(stamp) or stamp < 0.0:
            raise JointStateError('bad_stamp', f'stamp {stamp} is not a finite non-negative time')
        count = len(names)
        if count == 0 or len(positions) == 0:
            raise JointStateError('empty', 'joint state has no names or no positions')
        if len(positions) != count or len(velocities) not in (0, count) or len(efforts) not in (0, count):
            raise JointStateError('length_mismatch',
                                  f'{count} names but {len(positions)} positions, {len(velocities)} velocities, '
                                  f'{len(efforts)} efforts')
        layout = self._layout(tuple(names))
        if len(layout.model_indices) == 0:
            raise JointStateError('no_known_joints', f'none of the joints {list(names)[:5]} is in the model')
        rows = layout.message_indices
        position = np.asarray(positions, dtype=float)[rows]
        velocity = np.asarray(velocities, dtype=float)[rows] if len(velocities) else None
        effort = np.asarray(efforts, dtype=float)[rows] if len(efforts) else None
        for label, values in (('position', position), ('velocity', velocity), ('effort', effort)):
            # One comparison catches NaN, Inf and absurd magnitudes; the reason is sorted out only on failure.
            if values is not None and not (np.abs(values) <= MAX_ABS_VALUE).all():
                if not np.isfinite(values).all():
                    raise JointStateError('non_finite', f'{label} contains NaN or Inf')
                raise JointStateError('out_of_range', f'{label} has a value beyond ±{MAX_ABS_VALUE:g}')
        targets = layout.model_indices
        if stamp < self.position_stamps[targets].max():
            raise JointStateError('out_of_order', f'stamp {stamp:.6f} s is older than the last sample of these joints')
        self.positions[targets] = position
        self.position_stamps[targets] = stamp
        if velocity is not None:
            self.velocities[targets] = velocity
            self.velocity_stamps[targets] = stamp
        if effort is not None:
            self.efforts[targets] = effort
            self.effort_stamps[targets] = stamp
        return len(targets)

    def _layout(self, names: tuple) -> _Layout:
        layout = self._layouts.get(names)
        if layout is not None:
            return layout
        if len(set(names)) != len(names):
            raise JointStateError('duplicate_names', 'joint state repeats a joint name')
        pairs = [(row, self._index[name]) for row, name in enumerate(names) if name in self._index]
        layout = _Layout(np.array([p[0] for p in pairs], dtype=int), np.array([p[1] for p in pairs], dtype=int))
        if len(self._layouts) >= self._max_layouts:
            self._layouts.clear()
        self._layouts[names] = layout
        return layout

    def complete(self, now: Optional[float] = None, max_age: float = math.inf, need_velocity: bool = False,
                 need_effort: bool = False) -> bool:
        """True when every joint has a position (and velocity / effort if asked) at most
        ``max_age`` seconds older than ``now`` (the newest position stamp if ``now`` is None)."""
        if now is None:
            now = float(np.max(self.position_stamps)) if len(self.position_stamps) else 0.0
        fresh = self.freshness(now, max_age)
        return fresh[0] and (fresh[1] or not need_velocity) and (fresh[2] or not need_effort)

    def freshness(self, now: float, max_age: float) -> tuple:
        """(positions complete, velocities complete, efforts complete): whether every joint's
        last position / velocity / effort is at most ``max_age`` seconds older than ``now``."""
        # Stamps start at -inf (never received), which must fail even when max_age is inf.
        oldest = now - max_age
        return tuple(bool(stamps.min() > -math.inf and stamps.min() >= oldest)
                     for stamps in (self.position_stamps, self.velocity_stamps, self.effort_stamps))

    def stale_joints(self, now: float, max_age: float) -> list:
        """Names of joints whose last position is older than ``max_age`` seconds at ``now``."""
        return [self.joint_names[i] for i in np.flatnonzero(self.position_stamps < now - max_age)]

