"""The shared-memory SampleRingBuffer: order across the wrap, clear, copies taken by another
process, copies taken while the writer appends (never a torn or out-of-order row), close()
while other threads read (never a crash), and no /dev/shm entry left behind. Real processes
and threads, no mocks."""

import gc
import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from robot_dynamics.core.streams.ring_buffer import (
    HEADER_BYTES,
    RingBufferError,
    SampleRingBuffer,
    SharedMemoryFull,
)
from robot_dynamics.instruments import processes

JOINTS = 7


def shm_path(buffer_or_handle) -> str:
    handle = getattr(buffer_or_handle, 'handle', buffer_or_handle)
    return os.path.join('/dev/shm', handle.name)


def sample(seq: int, joints: int = JOINTS) -> tuple:
    """Row ``seq`` of a synthetic stream whose every value is a known function of its stamp."""
    stamp = float(seq)
    offsets = np.arange(joints, dtype=float)
    return stamp, stamp + offsets, -stamp - offsets, 2.0 * stamp + offsets


def torn_or_disordered(time_, positions, velocities, efforts) -> int:
    """Rows that are not exactly sample(stamp), plus breaks in the consecutive stamp order."""
    offsets = np.arange(positions.shape[1], dtype=float)
    wrong = ~(
        np.all(positions == time_[:, None] + offsets, axis=1)
        & np.all(velocities == -time_[:, None] - offsets, axis=1)
        & np.all(efforts == 2.0 * time_[:, None] + offsets, axis=1)
    )
    return int(np.count_nonzero(wrong)) + int(np.count_nonzero(np.diff(time_) != 1.0))


@pytest.fixture
def buffer():
    made = []

    def make(capacity, joints=JOINTS):
        made.append(SampleRingBuffer(capacity, joints))
        return made[-1]

    yield make
    for each in made:
        each.close()


def test_wraparound_keeps_the_newest_samples_oldest_first(buffer):
    ring = buffer(5, 2)
    assert len(ring) == 0 and ring.duration() == 0.0
    assert [len(a) for a in ring.arrays()] == [0, 0, 0, 0]
    for k in range(3):
        ring.append(*sample(k, 2))
    np.testing.assert_array_equal(ring.arrays()[0], [0, 1, 2])
    for k in range(3, 13):
        ring.append(*sample(k, 2))
        time_ = ring.arrays()[0]
        np.testing.assert_array_equal(time_, np.arange(max(0, k - 4), k + 1))
        assert len(ring) == len(time_) and ring.duration() == time_[-1] - time_[0]
    arrays = ring.arrays()
    assert torn_or_disordered(*arrays) == 0
    assert arrays[1].shape == arrays[2].shape == arrays[3].shape == (5, 2)
    # Fixed memory, as documented: a 64-byte header and capacity + 1 rows of (seq, stamp, q, q̇, τ).
    assert ring.nbytes == HEADER_BYTES + 8 * 6 * (2 + 3 * 2) == os.path.getsize(shm_path(ring))


def test_clear_forgets_everything_recorded_so_far(buffer):
    ring = buffer(4, 1)
    for k in range(10):
        ring.append(*sample(k, 1))
    ring.clear()
    assert len(ring) == 0 and ring.duration() == 0.0 and len(ring.arrays()[0]) == 0
    ring.append(*sample(10, 1))
    np.testing.assert_array_equal(ring.arrays()[0], [10])
    for k in range(11, 20):
        ring.append(*sample(k, 1))
    np.testing.assert_array_equal(ring.arrays()[0], [16, 17, 18, 19])
    assert ring.duration() == 3.0


def test_a_buffer_made_from_arrays_holds_exactly_them(buffer):
    time_ = np.linspace(0.0, 1.0, 11)
    positions, velocities, efforts = np.random.default_rng(0).normal(size=(3, 11, 3))
    ring = SampleRingBuffer.from_arrays(time_, positions, velocities, efforts)
    try:
        assert len(ring) == ring.capacity == 11 and ring.num_joints == 3
        for got, expected in zip(ring.arrays(), (time_, positions, velocities, efforts)):
            np.testing.assert_array_equal(got, expected)
    finally:
        ring.close()


def _copy_in_another_process(handle) -> tuple:
    with handle.attach() as ring:
        return ring.arrays()


def test_a_copy_taken_by_another_process_equals_the_writers_data(buffer):
    ring = buffer(1000)
    for k in range(2500):
        ring.append(*sample(k))
    context = multiprocessing.get_context('spawn')
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        copied = pool.submit(_copy_in_another_process, ring.handle).result(timeout=60)
    for got, mine in zip(copied, ring.arrays()):
        np.testing.assert_array_equal(got, mine)
    np.testing.assert_array_equal(copied[0], np.arange(1500, 2500))
    # The reader process has exited: the block is still there, still the owner's.
    assert os.path.exists(shm_path(ring))
    ring.append(*sample(2500))
    assert ring.arrays()[0][-1] == 2500


ENDS_WANTED = 200  # distinct newest samples a reader must have seen: the writer really moved
MIN_WRITTEN = 5_000  # samples written in all: the ring (1000 rows) overwritten 5 times
READER_DEADLINE = 120.0  # [s] a reader that sees too few ends gives up (and fails the test)


def _copies_while_written(handle) -> dict:
    """Take copies until :data:`ENDS_WANTED` distinct newest samples were seen (or
    :data:`READER_DEADLINE`); count bad rows. Counts, not a duration: on a busy machine a reader
    thread gets the GIL less often, and it then only takes longer."""
    copies = torn = shortened = 0
    ends = set()
    deadline = time.monotonic() + READER_DEADLINE
    with handle.attach() as ring:
        while len(ends) < ENDS_WANTED and time.monotonic() < deadline:
            arrays = ring.arrays()
            copies += 1
            torn += torn_or_disordered(*arrays)
            if len(arrays[0]):
                ends.add(float(arrays[0][-1]))
                shortened += len(arrays[0]) < ring.capacity
    return {'copies': copies, 'torn': torn, 'distinct_ends': len(ends), 'shortened': shortened}


def _write(ring: SampleRingBuffer, first: int, until) -> int:
    """Append samples first, first + 1, ... in batches of 100 until ``until(written)`` is true;
    returns how many were written."""
    k = first
    while not until(k - first):
        for _ in range(100):
            ring.append(*sample(k))
            k += 1
    return k - first


def test_copies_taken_while_the_writer_appends_are_never_torn_nor_out_of_order(buffer):
    ring = buffer(1000)
    first = _write(ring, 0, lambda written: written >= 2 * ring.capacity)  # full before reading
    context = multiprocessing.get_context('spawn')
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        pool.submit(time.sleep, 0).result(timeout=60)  # the reader process is up
        other_process = pool.submit(_copies_while_written, ring.handle)
        in_process = {}
        reader = threading.Thread(
            target=lambda: in_process.update(_copies_while_written(ring.handle))
        )
        reader.start()

        def done(written: int) -> bool:
            readers_done = other_process.done() and not reader.is_alive()
            return readers_done and written >= MIN_WRITTEN

        _write(ring, first, done)
        reader.join()
        result = other_process.result(timeout=60)
    for outcome in (result, in_process):
        assert outcome['torn'] == 0, outcome
        assert outcome['distinct_ends'] >= ENDS_WANTED, outcome  # the writer really moved


def test_close_unlinks_the_block_and_readers_only_close_their_mapping():
    owner = SampleRingBuffer(10, 2)
    path, handle = shm_path(owner), owner.handle
    assert os.path.exists(path)
    reader = handle.attach()
    reader.close()
    assert os.path.exists(path), 'a reader closing must not remove the owner\'s block'
    reader = handle.attach()
    owner.append(*sample(0, 2))
    owner.close()
    assert not os.path.exists(path)
    assert owner.closed
    with pytest.raises(RingBufferError):
        len(owner)
    owner.append(*sample(1, 2))  # ignored, not a crash: the stream may still hold the old buffer
    np.testing.assert_array_equal(reader.arrays()[0], [0])  # an attached reader keeps its mapping
    reader.close()
    with pytest.raises(FileNotFoundError):
        handle.attach()


def test_an_owner_that_is_dropped_without_close_leaves_no_block():
    owner = SampleRingBuffer(10, 2)
    path = shm_path(owner)
    del owner
    gc.collect()
    assert not os.path.exists(path)


def test_attaching_with_the_wrong_shape_is_refused(buffer):
    ring = buffer(10, 2)
    wrong = type(ring.handle)(ring.handle.name, 10, 3)
    with pytest.raises(RingBufferError):
        wrong.attach()
    assert os.path.exists(shm_path(ring))


def test_a_buffer_larger_than_the_free_shared_memory_is_refused_not_a_crash_later():
    before = set(os.listdir('/dev/shm'))
    with pytest.raises(SharedMemoryFull, match='/dev/shm'):
        SampleRingBuffer(10**11, JOINTS)  # 18 TB: more than any /dev/shm, still a mappable size
    new = set(os.listdir('/dev/shm')) - before  # another test process may make blocks meanwhile
    assert not processes.unheld_python_blocks(new, ignore_pid=os.getpid())


def test_a_buffer_too_large_to_map_is_refused_without_a_resource_tracker_traceback():
    """1e12 samples (a buffer_duration of 1e9 s): refused before any block is made, in a fresh
    process whose stderr would show the tracker's KeyError traceback."""
    script = (
        'from robot_dynamics.core.streams.ring_buffer import SampleRingBuffer, SharedMemoryFull\n'
        'try:\n'
        '    SampleRingBuffer(10**12, 7)\n'
        'except SharedMemoryFull as error:\n'
        '    print(error)\n'
    )
    finished = subprocess.run(
        [sys.executable, '-c', script], capture_output=True, text=True, timeout=60
    )
    assert finished.returncode == 0 and 'no room for a' in finished.stdout, finished
    assert finished.stderr == ''


def test_copy_until_a_count_leaves_out_later_samples():
    with SampleRingBuffer(capacity=8, num_joints=1) as buffer:
        for k in range(5):
            buffer.append(float(k), [k], [0.0], [0.0])
        until = buffer.written
        for k in range(5, 7):  # appended after the call that asked for the copy
            buffer.append(float(k), [k], [0.0], [0.0])
        stamps = buffer.arrays(until=until)[0]
        np.testing.assert_array_equal(stamps, [0, 1, 2, 3, 4])
        np.testing.assert_array_equal(buffer.arrays()[0], np.arange(7.0))
        buffer.clear()
        assert (
            len(buffer.arrays(until=until)[0]) == 0
        )  # cleared after the call: nothing of it is left


def mapped_blocks(*names) -> list:
    """Lines of this process's memory map that map one of the shared blocks ``names``."""
    with open('/proc/self/maps') as maps:
        return [line for line in maps if any(name.lstrip('/') in line for name in names)]


def test_close_under_a_view_in_use_unlinks_at_once_and_unmaps_with_the_last_view():
    """What a read on the service thread holds while the stream thread closes the buffer:
    before the fix close() unmapped the block under it (reading the view was a SIGSEGV)."""
    ring = SampleRingBuffer(4, 1)
    ring.append(1.5, [0.0], [0.0], [0.0])
    name = ring.handle.name
    header, rows = ring._open()  # the views duration()/arrays()/append() hold during a call
    ring.close()
    assert not os.path.exists(shm_path(ring)), 'close() must unlink the name at once'
    assert header[0] == 1 and rows[0, 1] == 1.5  # still mapped: the call under way finishes
    with pytest.raises(RingBufferError, match='closed'):
        ring.duration()  # a call made after close()
    assert mapped_blocks(name), 'the view in use must keep the mapping'
    del header, rows
    gc.collect()
    assert mapped_blocks(name) == [], 'the mapping must go with the last view'


RACE = """
import collections, gc, json, os, sys, threading, time
from robot_dynamics.core.streams.ring_buffer import RingBufferError, SampleRingBuffer
sys.setswitchinterval(1e-6)  # switch threads as often as possible: inside every read

def fresh():
    buffer = SampleRingBuffer(4, 1)
    for k in range(3):
        buffer.append(float(k), [0.0], [0.0], [0.0])
    return buffer

current = fresh()
names, stop, seen = [current.handle.name], False, collections.Counter()

def service_thread():  # what dynamics_node's service callbacks call on the live buffer
    while not stop:
        buffer = current
        try:
            len(buffer), buffer.duration(), buffer.written, buffer.clear(), buffer.arrays()
            seen['read'] += 1
        except RingBufferError:
            seen['closed'] += 1

threads = [threading.Thread(target=service_thread) for _ in range(2)]
for thread in threads:
    thread.start()
deadline = time.monotonic() + float(sys.argv[1])
while time.monotonic() < deadline:  # the stream thread: model swaps
    replacement = fresh()
    names.append(replacement.handle.name)
    previous, current = current, replacement
    previous.append(9.0, [0.0], [0.0], [0.0])
    previous.close()
stop = True
for thread in threads:
    thread.join()
current.close()
del previous, replacement, current
gc.collect()
left = [name for name in names if os.path.exists('/dev/shm/' + name.lstrip('/'))]
with open('/proc/self/maps') as maps:
    mapped = [line for line in maps if any(name.lstrip('/') in line for name in names)]
print(json.dumps({'seen': seen, 'swaps': len(names) - 1, 'left': left, 'mapped': mapped}))
"""


def test_closing_while_other_threads_read_never_crashes_nor_leaks_a_block():
    """Two threads loop on len/duration/written/clear/arrays of the current buffer while the
    main thread swaps in a new one and closes the old, for 2 s (before the fix: SIGSEGV within
    about a second). Afterwards no block of any buffer is left in /dev/shm nor mapped."""
    run = subprocess.run(
        [sys.executable, '-c', RACE, '2.0'], capture_output=True, text=True, timeout=30
    )
    assert run.returncode == 0, f'exit {run.returncode} (-11: SIGSEGV): {run.stderr[-2000:]}'
    assert 'Exception ignored' not in run.stderr, run.stderr
    result = json.loads(run.stdout)
    assert result['swaps'] > 100 and result['seen'].get('read', 0) > 100, result
    assert result['left'] == [] and result['mapped'] == [], result
