"""Merging ``joint_states``-like samples from several sources into model joint order.

Real robots publish joint states from several drivers (arm, gripper...), each with its own
name order and subset. :class:`JointStateMerger` keeps the latest position, velocity and
effort of every model joint with the stamp it came with, rejects unusable samples with a
reason (counted by the caller), ignores names the model does not know, and says when
every joint has a recent value. Mimic followers are never expected: the model computes
them from their leaders (names of followers in the input are ignored).

A NaN velocity or effort means the joint does not report that field (ros2_control's
joint_state_broadcaster fills NaN for a joint without that state interface, e.g. a gripper
finger without an effort): the entry is skipped, the rest of the sample is used. NaN positions
and ±Inf anywhere are refused. The ``optional`` joints (a gripper's fingers, the tree's leaves)
need not report velocities and efforts at all: while the other joints report a field and they
have not, it counts as complete without them (their velocity reads 0, their effort 0:
:attr:`JointStateMerger.unreported` lists them for the caller to fill in). When they come in
messages of their own, their values stay fresh for :data:`SLOW_PERIODS` of those messages' period
if that is longer than the merger's ``stale_timeout`` (:data:`OPTIONAL_JOINT_MAX_AGE` at most): a
gripper driver publishing at a few hertz beside an arm at 1 kHz.

Stamps never go back: an older sample is refused (``out_of_order``), except that a merger with a
``stale_timeout`` says when the stream's time itself restarted (a bag played in a loop, a
simulation reset, a driver restarted with a new clock): :data:`RESTART_SAMPLES` consecutive
samples, none older than the one before and all more than ``stale_timeout`` older than the
newest held, raise ``time_went_back`` (:class:`TimeWentBack`) on the last one. A late message or
a stray stamp of 0 is one sample and stays an ``out_of_order`` refusal; a driver restarted with
its stamps left at 0 restarts the stream, whose repeated stamps then give g(q) only.

Stamps are in seconds (float). Positions rad/m, velocities rad/s or m/s, efforts N·m/N.
"""

from __future__ import annotations

import array
import math
import re
import sys
import warnings
from dataclasses import dataclass
from typing import NamedTuple, Optional, Sequence

import numpy as np

from robot_dynamics.core.errors import JointStateError
from robot_dynamics.core.streams.joint_names import renamed_prefix_hint

STALE_TIMEOUT = 0.1
"""Default age [s] beyond which a joint value is stale (older than this than the newest one)."""

MAX_ABS_VALUE = 1.0e6
"""Largest magnitude accepted for any joint value; beyond it a sample is corrupt."""

REJECTION_REASONS = (
    'empty',
    'length_mismatch',
    'duplicate_names',
    'non_finite',
    'out_of_range',
    'no_known_joints',
    'out_of_order',
    'bad_stamp',
)

OPTIONAL_JOINT_MAX_AGE = 1.0
"""[s] Longest age at which an optional joint's value (a gripper's finger) is fresh."""

SLOW_PERIODS = 2.5
"""Sample periods of its own driver for which an optional joint's value stays fresh."""

CADENCE_GAIN = 0.2
"""Weight of each new interval in a layout's running mean sample period."""

MAX_UNKNOWN_NAMES = 256
"""Names the model lacks kept for :meth:`JointStateMerger.missing_names_hint`."""

RESTART_SAMPLES = 3
"""Consecutive samples older than the newest held (each newer than the one before) that tell a
restarted time from a late message."""


class TimeWentBack(JointStateError):
    """The joint states' time restarted (module docstring): ``stamp`` [s] of the sample that
    showed it, ``jump`` [s] how far it went back from the newest held. The caller starts its
    stream afresh (a new merger) and gives it this sample again."""

    def __init__(self, stamp: float, jump: float):
        cause = (
            'a driver that leaves its stamps at 0 (set joint_state_stamps: arrival)'
            if stamp == 0.0
            else 'a bag played in a loop, a simulation reset or a restarted driver'
        )
        super().__init__(
            'time_went_back',
            f'joint state time went back {jump:.3f} s (to {stamp:.6f} s) and goes on from there: '
            f'{cause}',
        )
        self.stamp, self.jump = stamp, jump


@dataclass(frozen=True)
class _Layout:
    """Where the entries of one message layout (tuple of names) go in model order.

    ``targets`` is :data:`EVERY_JOINT` when the message carries every model joint in model
    order (the common single-driver case: no gather, no scatter), else the model indices."""

    message_indices: np.ndarray
    targets: object
    known: int
    no_known_joints: str = ''  # when ``known`` is 0: why, in words
    optional_targets: Optional[np.ndarray] = None  # the optional joints among ``targets``


POSITION, VELOCITY, EFFORT = 0, 1, 2
ALL_FIELDS = (POSITION, VELOCITY, EFFORT)
_NO_JOINTS = np.zeros(0, dtype=int)
EVERY_JOINT = slice(None)
_MAX_SQUARED = MAX_ABS_VALUE**2
_LARGEST = sys.float_info.max

# Σx² of a sample holding values beyond ~1e154 overflows to inf: the check rejects that sample as
# it should, and numpy's overflow warning about it would only be noise in a node's log.
warnings.filterwarnings(
    'ignore', 'overflow encountered in dot', RuntimeWarning, re.escape(__name__) + '$'
)


class JointSample(NamedTuple):
    """One joints sample as a sensor_msgs/JointState carries it: ``names`` in any order, with
    ``positions`` [rad, m], ``velocities`` [rad/s, m/s] and ``efforts`` [N·m, N] for those names
    (each may be empty), and the ``stamp`` [s]. Nothing is checked here:
    :meth:`JointStateMerger.update` does."""

    names: Sequence[str]
    positions: Sequence[float]
    velocities: Sequence[float]
    efforts: Sequence[float]
    stamp: float


class JointStateMerger:
    """Latest joint values in model order, merged by name from any number of sources.

    ``values`` is a read-only (3 × n) array of the latest positions, velocities and efforts;
    every accepted sample produces a new one, so ``positions``, ``velocities`` and ``efforts``
    (its rows) may be kept without copying.
    ``stamps`` (and ``position_stamps``, its first row) are the matching stamps (s; −inf =
    never received; an optional joint's unreported velocity or effort takes the stamps of the
    samples of every joint it comes in). ``repeated_stamp``: whether the last accepted sample
    carried joints whose positions already had its stamp (the same instant again: a driver that
    leaves its stamps unset or repeats them; nothing can be differentiated across it), and
    ``resent`` whether its values were the ones held too (a driver that resends its last
    sample). ``optional``: names of the joints that may never report a velocity or an effort
    (module docstring); ``unreported``: per field, the indices of the optional joints that have
    not reported it yet while another joint has. ``stale_timeout`` [s]: the age a caller passes
    to :meth:`freshness` (the optional joints' values are fresh for longer) and how much older
    than the newest held the samples must be to say that time restarted (module docstring; inf:
    a recording, one time line).
    """

    def __init__(
        self,
        joint_names: Sequence[str],
        max_layouts: int = 64,
        optional: Sequence[str] = (),
        stale_timeout: float = math.inf,
    ):
        self.joint_names = tuple(joint_names)
        self.stale_timeout = stale_timeout
        self.unknown_names: set = set()  # names received that the model lacks (some of them)
        self._earlier_run: list = []  # stamps of the consecutive samples refused as older
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        count = len(self.joint_names)
        self._reported = np.zeros((3, count), dtype=bool)
        self._optional = np.isin(self.joint_names, list(optional))
        # [s] added to the optional joints' stamps where freshness is judged (_note_cadence)
        self._hold = np.zeros(count)
        self._holds_any = False
        self._cadence: dict = {}  # per layout with optional joints: (last stamp, period) [s]
        self.unreported = (_NO_JOINTS,) * 3
        self._counted = [np.ones(count, dtype=bool)] * 3  # the joints _oldest_of looks at
        self._unreported_entries = None  # their flat (3 n) mask, None when there are none
        self._all_reported = False
        self._marked: set = set()  # what _mark_reported was given
        self._unreported_blocks: dict = {}  # per layout and fields, its part of the entries
        self.values = np.zeros((3, count))
        self.values.setflags(write=False)
        # Stamps are kept so that the usual stream (every joint, every field) writes one float per
        # sample: the stamp of the last such sample (_all_fresh_since); per field, that of the last
        # sample carrying it for every joint (_complete_since); per joint and field, those of
        # samples
        # with some joints only (_partial_stamps). A value's stamp is the largest of the three
        # (stamps
        # never decrease). _oldest: per field, the oldest over joints of the last two.
        self._all_fresh_since = -math.inf
        self._complete_since = [-math.inf] * 3
        self._partial_stamps = np.full((3, count), -math.inf)
        self._oldest = [-math.inf] * 3
        self._newest_position = -math.inf
        self.repeated_stamp = self.resent = False
        self._layouts: dict = {}
        self._max_layouts = max_layouts

    @property
    def positions(self) -> np.ndarray:
        return self.values[POSITION]

    @property
    def velocities(self) -> np.ndarray:
        return self.values[VELOCITY]

    @property
    def efforts(self) -> np.ndarray:
        return self.values[EFFORT]

    @property
    def stamps(self) -> np.ndarray:
        """(3 × n) stamps [s] of the latest positions, velocities and efforts (a new array)."""
        complete = np.maximum(self._complete_since, self._all_fresh_since)
        return np.maximum(self._partial_stamps, complete[:, None])

    @property
    def position_stamps(self) -> np.ndarray:
        return self.stamps[POSITION]

    def update(
        self,
        names: Sequence[str],
        positions: Sequence[float],
        velocities: Sequence[float] = (),
        efforts: Sequence[float] = (),
        stamp: float = 0.0,
    ) -> bool:
        """Take one sample. Returns True when it replaced every value (every joint with every
        field, in model order): then every value is fresh at ``stamp``.

        Raises :class:`JointStateError` with a ``reason`` from :data:`REJECTION_REASONS`, or
        :class:`TimeWentBack`; a rejected sample changes no value.
        """
        if not 0.0 <= stamp < math.inf:  # also false for NaN
            raise JointStateError('bad_stamp', f'stamp {stamp} is not a finite non-negative time')
        key = tuple(names)
        layout = self._layouts.get(key) or self._new_layout(key)
        if (
            layout.targets is EVERY_JOINT
            and len(positions) == len(velocities) == len(efforts) == layout.known != 0
        ):
            # The usual single driver (every joint in model order, every field): all values
            # replaced.
            flat = _joined(positions, velocities, efforts)
            unreported = self._unreported_entries
            every_entry = unreported is None or not np.array_equal(np.isnan(flat), unreported)
            if not every_entry:  # ros2_control's broadcaster: NaN where optional joints have none
                flat = np.where(unreported, 0.0, flat)
                flat.setflags(write=False)
            # Σx² ≤ M² bounds every |x|; NaN and Inf fail it (then _merge sorts them out)
            if flat.dot(flat) <= _MAX_SQUARED:
                self._take_whole(flat, stamp, every_entry)
                return True
        self._merge(layout, key, (positions, velocities, efforts), stamp)
        return False

    def _take_whole(self, flat: np.ndarray, stamp: float, every_entry: bool) -> None:
        """update() for a sample of every joint in model order with every field, ``flat``
        (read-only) its finite values; ``every_entry``: False when the unreported entries of
        the optional joints were NaN (0 in ``flat``)."""
        if stamp < self._newest_position:
            raise self._older(stamp, self._newest_position)
        if self._earlier_run:
            self._earlier_run = []
        self.repeated_stamp = stamp == self._newest_position
        self.resent = self.repeated_stamp and np.array_equal(flat, self.values.ravel())
        self.values = flat.reshape(3, -1)  # kept without a copy
        self._all_fresh_since = self._newest_position = stamp
        if every_entry and not self._all_reported:
            self._mark_reported((), EVERY_JOINT, True)

    def _merge(self, layout: _Layout, names: tuple, rows: tuple, stamp: float) -> None:
        """update() for a sample with some joints, another order or some fields only: its values
        are written, with their stamps, into a copy of ``values``."""
        fields = _present_fields(len(names), *rows)
        if layout.known == 0:
            raise JointStateError('no_known_joints', layout.no_known_joints)
        flat = _joined(*rows)
        incoming = flat.reshape(len(fields), -1)
        if layout.message_indices is not None:  # only the model's joints are checked and kept
            incoming = incoming[:, layout.message_indices]
            flat = incoming.reshape(-1)
        reported, every_entry = None, True
        if not flat.dot(flat) <= _MAX_SQUARED:
            missing = np.isnan(incoming)
            cleaned = np.where(missing, 0.0, incoming)
            if self._just_unreported(missing, names, fields, layout.targets) and (
                cleaned.ravel().dot(cleaned.ravel()) <= _MAX_SQUARED
            ):  # as in update(): the optional joints' NaNs read 0, the rest as usual
                incoming, every_entry = cleaned, False
            else:
                reported = _reported_entries(incoming, fields)
        every_joint, targets = layout.known == len(self.joint_names), layout.targets
        newest = self._newest_position if every_joint else self._newest_position_of(targets)
        if stamp < newest:
            raise self._older(stamp, newest)
        if self._earlier_run:
            self._earlier_run = []
        self.repeated_stamp = stamp == newest
        self.resent = self.repeated_stamp and self._holds(incoming, fields, targets, reported)
        values = self.values.copy()
        if reported is not None:  # some velocities or efforts NaN: the others only
            block = np.ix_(fields, np.arange(len(self.joint_names))[targets])
            values[block] = np.where(reported, incoming, values[block])
            self._partial_stamps[block] = np.where(reported, stamp, self._partial_stamps[block])
            if not self._all_reported:
                self._mark_reported((names, fields, reported.tobytes()), block, reported)
        elif targets is EVERY_JOINT and fields == ALL_FIELDS[: len(fields)]:
            values[: len(fields)] = incoming  # the usual driver without efforts: one block
        else:
            for row, field in enumerate(fields):
                values[field, targets] = incoming[row]
        if reported is None and every_entry and not self._all_reported:
            block = np.ix_(fields, np.arange(len(self.joint_names))[targets])
            self._mark_reported((names, fields), block, True)
        if layout.optional_targets is not None and not every_joint:
            self._note_cadence(names, layout.optional_targets, stamp)
        for field in fields:
            if reported is None and every_joint:
                self._complete_since[field] = self._oldest[field] = stamp
            else:
                if reported is None:
                    self._partial_stamps[field, targets] = stamp
                self._oldest[field] = self._oldest_of(field)
        values.setflags(write=False)
        self.values = values
        self._newest_position = max(self._newest_position, stamp)

    def _older(self, stamp: float, newest: float) -> JointStateError:
        """The error for a sample stamped ``stamp`` [s] older than ``newest``: ``out_of_order``,
        or :class:`TimeWentBack` when it completes a run of samples going on from an earlier
        time (module docstring)."""
        run = self._earlier_run
        if newest - stamp <= self.stale_timeout:
            self._earlier_run = []
            return _out_of_order(stamp)
        if run and stamp < run[-1]:  # not going on from the run: a new one starts
            run.clear()
        run.append(stamp)
        if len(run) < RESTART_SAMPLES:
            return _out_of_order(stamp)
        self._earlier_run = []
        return TimeWentBack(stamp, newest - run[0])

    def _just_unreported(self, missing: np.ndarray, names: tuple, fields: tuple, targets) -> bool:
        """Whether the ``missing`` entries (rows ``fields`` of joints ``targets`` of the layout
        ``names``) are those of the optional joints that report nothing."""
        table = self._unreported_entries
        if table is None:
            return False
        block = self._unreported_blocks.get((names, fields))
        if block is None:
            if len(self._unreported_blocks) >= self._max_layouts:
                self._unreported_blocks.clear()
            block = self._unreported_blocks[names, fields] = table.reshape(3, -1)[list(fields)][
                :, targets
            ]
        return np.array_equal(missing, block)

    def reports(self, field: int) -> bool:
        """Whether any joint has reported ``field`` (POSITION, VELOCITY, EFFORT)."""
        return self._all_reported or bool(self._reported[field].any())

    def _holds(self, incoming: np.ndarray, fields: tuple, targets, reported) -> bool:
        """Whether ``incoming`` (rows ``fields`` of joints ``targets``; ``reported``: the mask
        of its reported entries, None for all) equals the values held."""
        held = self.values[list(fields)][:, targets]
        if reported is None:
            return np.array_equal(incoming, held)
        return np.array_equal(incoming[reported], held[reported])

    def _mark_reported(self, key, block, reported) -> None:
        """Note the entries of ``block`` (an index of the (field × joint) table) that
        ``reported`` (a mask of the block, or True for all) says were reported; ``key`` names
        the layout, fields and mask: marking the same again changes nothing, so it is skipped."""
        if key in self._marked:
            return
        if len(self._marked) >= self._max_layouts:  # a memo: forgetting it costs time only
            self._marked.clear()
        self._marked.add(key)
        self._reported[block] |= reported
        self.unreported = (_NO_JOINTS,) + tuple(
            np.flatnonzero(self._optional & ~reported) if reported.any() else _NO_JOINTS
            for reported in self._reported[1:]
        )
        self._counted = [~np.isin(np.arange(len(self.joint_names)), u) for u in self.unreported]
        entries = np.zeros((3, len(self.joint_names)), dtype=bool)
        for field in (VELOCITY, EFFORT):
            entries[field, self.unreported[field]] = True
        self._unreported_entries = entries.reshape(-1) if entries.any() else None
        self._unreported_blocks = {}
        self._all_reported = bool(self._reported.all())

    def _oldest_of(self, field: int) -> float:
        """The oldest stamp [s] of ``field`` over the joints, the optional joints that have
        not reported it left out (−inf: some other joint never reported it)."""
        stamps = self._partial_stamps[field]
        if self._holds_any:
            stamps = stamps + self._hold
        if len(self.unreported[field]):
            stamps = stamps[self._counted[field]]
        return max(self._complete_since[field], stamps.min())

    def _newest_position_of(self, targets: np.ndarray) -> float:
        """Newest position stamp [s] among the model joints ``targets``."""
        return max(
            self._partial_stamps[POSITION, targets].max(),
            self._complete_since[POSITION],
            self._all_fresh_since,
        )

    def _new_layout(self, names: tuple) -> _Layout:
        if len(set(names)) != len(names):
            raise JointStateError('duplicate_names', 'joint state repeats a joint name')
        pairs = [(row, self._index[name]) for row, name in enumerate(names) if name in self._index]
        if names == self.joint_names:
            layout = _Layout(None, EVERY_JOINT, len(names))
        else:
            layout = _Layout(
                np.array([p[0] for p in pairs], dtype=int),
                np.array([p[1] for p in pairs], dtype=int),
                len(pairs),
                self._why_none_known(names) if not pairs else '',
                self._optional_among([p[1] for p in pairs]),
            )
            if len(self.unknown_names) < MAX_UNKNOWN_NAMES:
                self.unknown_names.update(name for name in names if name not in self._index)
        if len(self._layouts) >= self._max_layouts:
            self._layouts.clear()
            self._cadence.clear()
        self._layouts[names] = layout
        return layout

    def _optional_among(self, targets: list) -> Optional[np.ndarray]:
        optional = [index for index in targets if self._optional[index]]
        return np.array(optional, dtype=int) if optional else None

    def _note_cadence(self, names: tuple, optional_targets: np.ndarray, stamp: float) -> None:
        """The optional joints ``optional_targets`` of the layout ``names``, sampled at
        ``stamp`` [s], stay fresh for :data:`SLOW_PERIODS` of that layout's sample period (a
        running mean), :data:`OPTIONAL_JOINT_MAX_AGE` at most."""
        last, period = self._cadence.get(names, (None, 0.0))
        if last is not None and stamp > last:
            interval = stamp - last
            period = interval if period == 0.0 else period + CADENCE_GAIN * (interval - period)
        self._cadence[names] = (stamp, period)
        longest = min(SLOW_PERIODS * period, OPTIONAL_JOINT_MAX_AGE)
        self._hold[optional_targets] = max(0.0, longest - self.stale_timeout)
        self._holds_any = bool(self._hold.any())

    def _why_none_known(self, names: tuple) -> str:
        hint = renamed_prefix_hint(names, self.joint_names)
        listed = '' if hint else f' {list(names)[:5]}'
        return f'none of the joints{listed} is in the model{hint}'

    def missing_names_hint(self, missing: Sequence[str]) -> str:
        """How the unknown names received would be the ``missing`` model joints under another
        prefix ('; ...'), or ''."""
        return renamed_prefix_hint(self.unknown_names, missing)

    def complete(
        self,
        now: Optional[float] = None,
        max_age: float = math.inf,
        need_velocity: bool = False,
        need_effort: bool = False,
    ) -> bool:
        """True when every joint has a position (and velocity / effort if asked) at most
        ``max_age`` seconds older than ``now`` (the newest position stamp if ``now`` is None)."""
        fresh = self.freshness(self._newest_position if now is None else now, max_age)
        return fresh[0] and (fresh[1] or not need_velocity) and (fresh[2] or not need_effort)

    def freshness(self, now: float, max_age: float) -> tuple:
        """(positions complete, velocities complete, efforts complete): whether every joint's
        last position / velocity / effort is at most ``max_age`` seconds older than ``now`` (the
        optional joints of a slow driver: as old as it allows, module docstring; ``max_age`` is
        meant to be the merger's ``stale_timeout``)."""
        limit = now - max_age
        if limit < -_LARGEST:  # never received (−inf) is missing, even with no age limit
            limit = -_LARGEST
        if self._all_fresh_since >= limit:
            return True, True, True
        oldest = self._oldest
        return oldest[POSITION] >= limit, oldest[VELOCITY] >= limit, oldest[EFFORT] >= limit

    def stale_joints(self, now: float, max_age: float, field: int = POSITION) -> list:
        """Names of joints whose last ``field`` value is older than ``max_age`` seconds at
        ``now`` (the optional joints of a slow driver: older than it allows, module docstring;
        those that never reported a velocity or effort are not counted for it)."""
        stale = self.stamps[field] + self._hold < now - max_age
        stale[self.unreported[field]] = False
        return [self.joint_names[i] for i in np.flatnonzero(stale)]


def _joined(
    positions: Sequence[float], velocities: Sequence[float], efforts: Sequence[float]
) -> np.ndarray:
    """The fields a sample carries (the non-empty ones) end to end, as one new read-only float
    array.

    rclpy hands float64[] fields over as ``array.array('d')`` (empty when absent): those are
    joined as raw bytes, about half the cost of numpy's element-wise conversion; the nodes' wire
    reader hands float64 arrays over, joined by numpy (this is the node's per-message path).
    """
    if type(positions) is np.ndarray and positions.dtype == np.float64:
        rows = [row for row in (positions, velocities, efforts) if len(row)]
        if all(type(row) is np.ndarray for row in rows):
            joined = np.concatenate(rows)
            joined.setflags(write=False)
            return joined
    if type(positions) is array.array and positions.typecode == 'd':
        try:  # array + anything but an array of the same type code raises TypeError
            return np.frombuffer(
                (positions + velocities + efforts).tobytes()
            )  # read-only: it views bytes
        except TypeError:
            pass
    joined = np.array(
        [row for row in (positions, velocities, efforts) if len(row)], dtype=float
    ).reshape(-1)
    joined.setflags(write=False)
    return joined


def _present_fields(
    count: int, positions: Sequence[float], velocities: Sequence[float], efforts: Sequence[float]
) -> tuple:
    """The fields a sample carries (position always; velocity, effort when not empty), or
    'empty' / 'length_mismatch' when it cannot be used."""
    if count == 0 or len(positions) == 0:
        raise JointStateError('empty', 'joint state has no names or no positions')
    has_velocity, has_effort = len(velocities) > 0, len(efforts) > 0
    if (
        len(positions) != count
        or (has_velocity and len(velocities) != count)
        or (has_effort and len(efforts) != count)
    ):
        raise JointStateError(
            'length_mismatch',
            f'{count} names but {len(positions)} positions, {len(velocities)} velocities, '
            f'{len(efforts)} efforts',
        )
    return (POSITION,) + ((VELOCITY,) if has_velocity else ()) + ((EFFORT,) if has_effort else ())


def _out_of_order(stamp: float) -> JointStateError:
    return JointStateError(
        'out_of_order', f'stamp {stamp:.6f} s is older than the last sample of these joints'
    )


def repeated_stamp_error(stamp: float, resent: bool) -> JointStateError:
    """The error for a sample whose joints already had a position at ``stamp`` [s]
    (:attr:`JointStateMerger.repeated_stamp`), which only g(q) can be computed from: reason
    ``'resent_sample'`` when its values were the ones held too, else ``'repeated_stamp'``."""
    if resent:
        return JointStateError(
            'resent_sample', f'joint state at {stamp:.6f} s repeats the previous sample: g(q) only'
        )
    return JointStateError(
        'repeated_stamp',
        f'joint state stamp {stamp:.6f} s repeats the previous one of these joints with other '
        'values: gravity torques only (inverse dynamics, external torques and contacts need '
        'time between samples); have the driver stamp its joint states, or set '
        'joint_state_stamps: arrival',
    )


def _reported_entries(incoming: np.ndarray, fields: tuple) -> Optional[np.ndarray]:
    """For a sample whose Σx² check failed: raise 'non_finite' (±Inf, or a NaN position) or
    'out_of_range' for the first bad row; else the mask of its reported entries (NaN velocities
    and efforts are not reported), or None when every entry is (Σx² alone can exceed M² with
    every value in range)."""
    labels = ('position', 'velocity', 'effort')
    missing = np.isnan(incoming)
    refused = np.isinf(incoming)
    refused[0] |= missing[0]  # the first row is the positions
    beyond = np.abs(np.where(missing, 0.0, incoming)) > MAX_ABS_VALUE
    for rows, reason, what in (
        (refused.any(axis=1), 'non_finite', 'contains NaN or Inf'),
        (beyond.any(axis=1), 'out_of_range', f'has a value beyond ±{MAX_ABS_VALUE:g}'),
    ):
        if rows.any():
            raise JointStateError(reason, f'{labels[fields[int(rows.argmax())]]} {what}')
    return ~missing if missing.any() else None
