"""Bounded recording of joint samples for payload identification, in shared memory.

:class:`SampleRingBuffer` preallocates ``capacity`` rows of (stamp, q, q̇, τ_measured) and
overwrites the oldest: O(1) per sample, memory fixed at construction. The rows live in a
:class:`multiprocessing.shared_memory.SharedMemory` block, so another process (the service
worker) can attach by a small picklable :class:`RingBufferHandle` and copy the recording
itself: a service call ships no sample data.

Memory: ``64 + 8 · (capacity + 1) · (2 + 3·n_joints)`` bytes — a 64-byte header, one spare
row, and per row a sequence number, the stamp and q, q̇, τ (30 s at 1 kHz for 7 joints: 5.5 MB).

One writer (the owner's stream thread) and any number of readers in any process, with no
lock the writer waits on (a seqlock on a monotone counter):

* the writer fills row ``seq % (capacity + 1)`` (the spare row: never one of the ``capacity``
  newest complete samples), stores ``seq`` in it, then sets the header's sample counter to
  ``seq + 1``;
* a reader reads the counter ``c0``, copies the rows of samples ``[c0 − capacity, c0)``,
  reads the counter again (``c1``) and keeps only the samples the writer cannot have
  overwritten meanwhile, ``[max(c0 − capacity, c1 − capacity), c0)``, and only if every
  kept row carries its own sequence number (a defence against stores seen out of order on
  weakly ordered CPUs). It retries when too few rows survive.

:meth:`SampleRingBuffer.clear` stores the counter as "cleared at" in the header; readers
keep nothing older. The owner unlinks the block on :meth:`~SampleRingBuffer.close` (or when
garbage-collected); readers only close their mapping.

Closing while another thread reads or appends (the stream thread replaces the recording on a
model swap while the service thread asks its length) never lets an access touch unmapped
memory. Every numpy view of the block holds a buffer export on the mapping (``np.frombuffer``,
not ``np.ndarray(buffer=...)``, which holds none), so :meth:`~SampleRingBuffer.close` unlinks
the name at once but cannot unmap under a view in use: the mapping goes with the last view. A
call already under way finishes on that still-mapped memory; a call made after close() raises
:class:`RingBufferError` (:meth:`~SampleRingBuffer.append` is ignored).
"""

from __future__ import annotations

import errno
import math
import os
import shutil
import weakref
from dataclasses import dataclass
from multiprocessing import resource_tracker
from multiprocessing.shared_memory import SharedMemory
from typing import Optional

import numpy as np

from robot_dynamics.core.errors import RobotDynamicsError, SettingError

HEADER_BYTES = 64
"""Header of the shared block: int64 slots below, padded so the rows start 64-byte aligned."""
_WRITTEN, _CLEARED_AT, _CAPACITY, _NUM_JOINTS = range(4)
_SEQ, _STAMP = 0, 1
"""Row layout: sequence number, stamp [s], then q [rad], q̇ [rad/s], τ [N·m] of every joint."""


class RingBufferError(RobotDynamicsError, RuntimeError):
    """A ring buffer cannot be read: closed, or changed under every attempted copy."""


class SharedMemoryFull(RobotDynamicsError, OSError):
    """/dev/shm has no room for the recording; the message says how to make room.

    Also an OSError (the operating system's refusal, with its errno), as it raised before this
    class existed: the node catches it as one.
    """


@dataclass(frozen=True)
class RingBufferHandle:
    """What another process needs to attach: shared-memory block name, capacity and joint count."""

    name: str
    capacity: int
    num_joints: int

    def attach(self) -> 'SampleRingBuffer':
        return SampleRingBuffer.attach(self)


class SampleRingBuffer:
    """Fixed-size ring of joint samples in model joint order (s, rad, rad/s, N·m)."""

    def __init__(self, capacity: int, num_joints: int, *, _attach_to: RingBufferHandle = None):
        if capacity < 1:
            raise SettingError(
                f'a ring buffer holds at least one sample, got capacity {capacity}: raise the '
                'recording duration'
            )
        if num_joints < 0:
            raise SettingError(f'num_joints must be 0 or more, got {num_joints}')
        self.capacity = int(capacity)
        self.num_joints = int(num_joints)
        self._slots = self.capacity + 1
        n = self.num_joints
        self._columns = (
            slice(2, 2 + n),
            slice(2 + n, 2 + 2 * n),
            slice(2 + 2 * n, 2 + 3 * n),
        )  # q, q̇, τ
        width = 2 + 3 * n
        size = HEADER_BYTES + 8 * self._slots * width
        self._owner = _attach_to is None
        if self._owner:
            self._shm = _create_shared_memory(size)
        else:
            self._shm = _attach_shared_memory(_attach_to.name)
        self._closer = weakref.finalize(self, _release, self._shm, self._owner)
        self._views = None
        if self._shm.size < size:
            self.close()
            raise RingBufferError(
                f'shared block {self._shm.name} holds {self._shm.size} bytes, expected {size} for '
                f'{capacity} samples of {num_joints} joints'
            )
        # np.frombuffer (unlike np.ndarray(buffer=...)) keeps a buffer export on the mapping for as
        # long as the view lives: SharedMemory.close() then refuses to unmap it under a reader.
        header = np.frombuffer(self._shm.buf, dtype=np.int64, count=HEADER_BYTES // 8)
        rows = np.frombuffer(
            self._shm.buf, dtype=np.float64, count=self._slots * width, offset=HEADER_BYTES
        ).reshape(self._slots, width)
        self._views = (header, rows)
        if self._owner:
            header[:] = 0
            header[_CAPACITY], header[_NUM_JOINTS] = self.capacity, self.num_joints
        elif (header[_CAPACITY], header[_NUM_JOINTS]) != (self.capacity, self.num_joints):
            del header, rows
            self.close()
            raise RingBufferError(
                f'shared block {_attach_to.name} is not a ring buffer of {capacity} samples of '
                f'{num_joints} joints'
            )
        self._written = int(header[_WRITTEN])  # the writer's own copy of the counter

    # ------------------------------------------------------------------ sharing
    @property
    def handle(self) -> RingBufferHandle:
        """Picklable handle another process attaches with (:meth:`attach`)."""
        return RingBufferHandle(self._shm.name, self.capacity, self.num_joints)

    @classmethod
    def attach(cls, handle: RingBufferHandle) -> 'SampleRingBuffer':
        """Map the owner's block (read-only by convention: never append or clear through it)."""
        return cls(handle.capacity, handle.num_joints, _attach_to=handle)

    @classmethod
    def from_arrays(cls, time, positions, velocities, efforts) -> 'SampleRingBuffer':
        """A new buffer holding exactly these samples (written once, e.g. a baseline recording)."""
        time, positions = (
            np.asarray(time, dtype=float).reshape(-1),
            np.asarray(positions, dtype=float),
        )
        count = len(time)
        n = positions.shape[1] if positions.ndim == 2 else 1
        buffer = cls(max(1, count), n)
        header, rows = buffer._views
        rows[:count, _SEQ] = np.arange(count)
        rows[:count, _STAMP] = time
        for column, values in zip(buffer._columns, (positions, velocities, efforts)):
            rows[:count, column] = np.asarray(values, dtype=float).reshape(count, n)
        buffer._written = count
        header[_WRITTEN] = count
        return buffer

    @property
    def closed(self) -> bool:
        return self._views is None

    def close(self) -> None:
        """Release the mapping; the owner also unlinks the block (its name disappears at once;
        a reader still attached, in any process, keeps its mapping until it closes).

        Safe while other threads use this buffer: a read or append already under way finishes
        on memory that stays mapped (its views hold the mapping, unmapped when the last of them
        is gone); every later read raises :class:`RingBufferError`, a later :meth:`append` is
        ignored. Idempotent."""
        self._views = None
        self._closer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def nbytes(self) -> int:
        """Size of the shared block: header and rows [bytes]."""
        return HEADER_BYTES + 8 * self._slots * (2 + 3 * self.num_joints)

    # ------------------------------------------------------------------ writer
    def append(
        self, stamp: float, positions: np.ndarray, velocities: np.ndarray, efforts: np.ndarray
    ) -> None:
        """Add one sample (owner's writer thread only; a closed buffer ignores it)."""
        views = self._views
        if views is None:
            return
        header, rows = views
        seq = self._written
        row = rows[seq % self._slots]
        row[_STAMP] = stamp
        q_column, v_column, tau_column = self._columns
        row[q_column] = positions
        row[v_column] = velocities
        row[tau_column] = efforts
        row[_SEQ] = seq
        self._written = seq + 1
        header[_WRITTEN] = seq + 1

    def clear(self) -> None:
        """Forget every sample recorded so far (owner only; safe while the writer appends)."""
        header, _ = self._open()
        header[_CLEARED_AT] = header[_WRITTEN]

    # ------------------------------------------------------------------ readers
    @property
    def written(self) -> int:
        """Samples appended since the buffer was created (cleared ones included)."""
        return int(self._open()[0][_WRITTEN])

    def __len__(self) -> int:
        header, _ = self._open()
        return int(min(header[_WRITTEN] - header[_CLEARED_AT], self.capacity))

    def duration(self) -> float:
        """Time span covered by the buffered samples [s] (newest stamp − oldest stamp)."""
        header, rows = self._open()
        for _ in range(10):
            written = int(header[_WRITTEN])
            oldest = max(int(header[_CLEARED_AT]), written - self.capacity)
            if written - oldest < 2:
                return 0.0
            newest_row, oldest_row = rows[(written - 1) % self._slots], rows[oldest % self._slots]
            span = float(newest_row[_STAMP] - oldest_row[_STAMP])
            if (
                oldest_row[_SEQ] == oldest
                and newest_row[_SEQ] == written - 1
                and int(header[_WRITTEN]) - self.capacity <= oldest
            ):
                return span
        return 0.0

    def arrays(self, attempts: int = 5, until: Optional[int] = None) -> tuple:
        """Copies (time, positions, velocities, efforts) of the buffered samples, oldest first.

        ``until`` (a :attr:`written` count) leaves out the samples appended after it, e.g. after
        the service call that asked for the copy. Consistent without stopping the writer: rows
        overwritten during the copy are dropped (at the oldest end); tried again, up to
        ``attempts`` times, while fewer than half of the copied rows survive. Raises
        :class:`RingBufferError` when every attempt saw a row that is not the sample it should be.
        """
        header, rows = self._open()
        for _ in range(max(1, attempts)):
            first_written = int(header[_WRITTEN])
            if until is not None:
                first_written = min(first_written, until)
            start = max(int(header[_CLEARED_AT]), first_written - self.capacity)
            copy = self._copy_rows(rows, start, first_written)
            last_written, cleared_at = int(header[_WRITTEN]), int(header[_CLEARED_AT])
            keep_from = max(start, cleared_at, last_written - self.capacity)
            kept = copy[max(0, keep_from - start) :]
            intact = np.array_equal(kept[:, _SEQ], np.arange(keep_from, first_written, dtype=float))
            if intact and 2 * len(kept) >= len(copy):
                break
        else:
            if not intact:
                raise RingBufferError('the ring buffer changed under every attempt to copy it')
        return (kept[:, _STAMP].copy(), *(kept[:, column].copy() for column in self._columns))

    def _copy_rows(self, rows: np.ndarray, start: int, stop: int) -> np.ndarray:
        """Copy of the rows of samples [start, stop) in order (two slices at most)."""
        if stop <= start:
            return rows[:0].copy()
        first, last = start % self._slots, (stop - 1) % self._slots
        if first <= last:
            return rows[first : last + 1].copy()
        return np.concatenate((rows[first:], rows[: last + 1]))

    def _open(self) -> tuple:
        """(header, rows) views, taken in one read so a concurrent close() cannot split them;
        they keep the block mapped for as long as the caller holds them."""
        views = self._views
        if views is None:
            raise RingBufferError('the ring buffer is closed')
        return views


def _create_shared_memory(size: int) -> SharedMemory:
    """A new block of ``size`` bytes with its memory reserved now: a block on a full /dev/shm
    (tmpfs, e.g. Docker's 64 MB default) would otherwise kill the writer with SIGBUS on the
    first write to a missing page. Raises :class:`SharedMemoryFull` when the space is not there
    (checked before the block is made when /dev/shm can be measured: a block too large to map
    fails inside CPython after the block was announced to the resource tracker, which then
    prints a KeyError traceback)."""
    free = _free_shared_memory()
    if size > free:
        raise SharedMemoryFull(
            errno.ENOSPC,
            f'no room for a {size}-byte recording in shared memory (/dev/shm has {free} bytes '
            'free); lower buffer_duration or enlarge /dev/shm',
        )
    shm = SharedMemory(create=True, size=size)
    descriptor = getattr(shm, '_fd', -1)  # CPython keeps the POSIX descriptor open here
    if descriptor >= 0 and hasattr(os, 'posix_fallocate'):
        try:
            os.posix_fallocate(descriptor, 0, size)
        except OSError as error:
            shm.close()
            shm.unlink()
            raise SharedMemoryFull(
                error.errno,
                f'no room for a {size}-byte recording in shared memory (/dev/shm): '
                f'{error.strerror}; lower buffer_duration or enlarge /dev/shm',
            ) from None
    return shm


def _free_shared_memory() -> float:
    """Free bytes of /dev/shm, where POSIX shared memory lives on Linux (inf elsewhere)."""
    try:
        return float(shutil.disk_usage('/dev/shm').free)
    except OSError:
        return math.inf


def _attach_shared_memory(name: str) -> SharedMemory:
    """Map an existing block without registering it with this process's resource tracker.

    Before Python 3.13 every attachment registers the block, and the tracker unlinks it when
    the attaching process exits (or, shared with the owner, loses the owner's entry), so a
    reader would destroy the owner's recording. The owner alone is responsible for it.
    """
    try:
        return SharedMemory(name=name, track=False)  # Python >= 3.13
    except TypeError:
        pass
    register = resource_tracker.register
    resource_tracker.register = lambda *args, **kwargs: None
    try:
        return SharedMemory(name=name)
    finally:
        resource_tracker.register = register


def _release(shm: SharedMemory, owner: bool) -> None:
    if owner:
        try:
            shm.unlink()
        except FileNotFoundError:
            pass
    try:
        shm.close()
    except BufferError:
        # A view in use in another thread holds an export on the mapping (np.frombuffer), which
        # refuses to unmap under it. Leave the mmap object to those views alone: it is unmapped
        # when the last of them is gone (not at shm's own finalization, which would fail again).
        if hasattr(shm, '_mmap'):
            shm._mmap = None
            shm.close()  # the descriptor
