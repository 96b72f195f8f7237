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
import sys
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
    """Where the entries of one message layout (tuple of names) go in model order.

    ``targets`` is a slice when the message carries every model joint in model order (the
    common single-driver case: no gather, no scatter), else the model indices."""

    message_indices: np.ndarray
    targets: object
    known: int


POSITION, VELOCITY, EFFORT = 0, 1, 2


class JointStateMerger:
    """Latest joint values in model order, merged by name from any number of sources.

    ``positions``, ``velocities``, ``efforts`` and their ``*_stamps`` (s; −inf = never
    received) are views of two (3 × n) arrays, so freshness is one reduction.
    """

    def __init__(self, joint_names: Sequence[str], max_layouts: int = 64):
        self.joint_names = tuple(joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        count = len(self.joint_names)
        self._values = np.zeros((3, count))
        self._stamps = np.full((3, count), -math.inf)
        self.positions, self.velocities, self.efforts = self._values
        self.position_stamps, self.velocity_stamps, self.effort_stamps = self._stamps
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
        has_velocity, has_effort = len(velocities) > 0, len(efforts) > 0
        if len(positions) != count or (has_velocity and len(velocities) != count) or (
                has_effort and len(efforts) != count):
            raise JointStateError('length_mismatch',
                                  f'{count} names but {len(positions)} positions, {len(velocities)} velocities, '
                                  f'{len(efforts)} efforts')
        layout = self._layout(tuple(names))
        if layout.known == 0:
            raise JointStateError('no_known_joints', f'none of the joints {list(names)[:5]} is in the model')
        fields = [(POSITION, positions)]
        if has_velocity:
            fields.append((VELOCITY, velocities))
        if has_effort:
            fields.append((EFFORT, efforts))
        incoming = np.array([values for _, values in fields], dtype=float)
        if layout.message_indices is not None:
            incoming = incoming[:, layout.message_indices]
        # One comparison catches NaN, Inf and absurd magnitudes; the reason is sorted out only on failure.
        if not (np.abs(incoming) <= MAX_ABS_VALUE).all():
            _raise_value_error(incoming, [field for field, _ in fields])
        targets = layout.targets
        if stamp < self._stamps[POSITION, targets].max():
            raise JointStateError('out_of_order', f'stamp {stamp:.6f} s is older than the last sample of these joints')
        if len(fields) == 3:
            self._values[:, targets] = incoming
            self._stamps[:, targets] = stamp
        else:
            for row, (field, _) in enumerate(fields):
                self._values[field, targets] = incoming[row]
                self._stamps[field, targets] = stamp
        return layout.known

    def _layout(self, names: tuple) -> _Layout:
        layout = self._layouts.get(names)
        if layout is not None:
            return layout
        if len(set(names)) != len(names):
            raise JointStateError('duplicate_names', 'joint state repeats a joint name')
        pairs = [(row, self._index[name]) for row, name in enumerate(names) if name in self._index]
        if names == self.joint_names:
            layout = _Layout(None, slice(None), len(names))
        else:
            layout = _Layout(np.array([p[0] for p in pairs], dtype=int), np.array([p[1] for p in pairs], dtype=int),
                             len(pairs))
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
        # Never-received stamps are -inf and must count as missing even when max_age is inf.
        oldest = max(now - max_age, -sys.float_info.max)
        position, velocity, effort = (self._stamps.min(axis=1) >= oldest).tolist()
        return position, velocity, effort

    def stale_joints(self, now: float, max_age: float) -> list:
        """Names of joints whose last position is older than ``max_age`` seconds at ``now``."""
        return [self.joint_names[i] for i in np.flatnonzero(self.position_stamps < now - max_age)]



def _raise_value_error(incoming: np.ndarray, fields: list) -> None:
    labels = ('position', 'velocity', 'effort')
    for row, field in enumerate(fields):
        if not np.isfinite(incoming[row]).all():
            raise JointStateError('non_finite', f'{labels[field]} contains NaN or Inf')
    for row, field in enumerate(fields):
        if not (np.abs(incoming[row]) <= MAX_ABS_VALUE).all():
            raise JointStateError('out_of_range', f'{labels[field]} has a value beyond ±{MAX_ABS_VALUE:g}')
