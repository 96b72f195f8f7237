"""Service computations in a separate process, so they never hold the stream's Python lock.

Payload identification (least squares, a cvxpy SDP) and inertia validation run for tens to
hundreds of milliseconds in Python. In the node's own process they would take the global
interpreter lock from the torque stream for that long, whatever thread they run in. A
one-process pool started with ``spawn`` (never ``fork``: the node has DDS threads) takes the
work; the service thread only waits on the result, which releases the lock. The worker
(niceness 19 and the shortest time slice right after it starts: :func:`lower_priority`)
is started on the first call (importing pinocchio and cvxpy there takes about a second of
CPU, once) and kept. Entry points must guard their main code with
``if __name__ == '__main__'`` (``spawn`` re-imports the main module). No rclpy in this module:
the jobs are pure core calls on picklable inputs.

A call ships no sample data: the recording (the node's
:class:`~robot_dynamics.core.streams.ring_buffer.SampleRingBuffer`) and the baseline (a buffer
written
once) are in shared memory, and the job gets their
:class:`~robot_dynamics.core.streams.ring_buffer.RingBufferHandle`
(a name and two sizes) and copies the samples itself, while the node's stream keeps appending.

Back-to-back jobs are paced to a share of one core (:func:`_paced`): a lower priority alone is
not enough on a 2-core machine, where any CPU the worker takes slows the stream's wake-ups.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import os
import platform
import signal
import struct
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import (
    TimeoutError as FutureTimeout,
)  # the builtin TimeoutError only on Python ≥ 3.11
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import yaml

from robot_dynamics.core.identification.payload import identify_payload
from robot_dynamics.core.identification.payload_options import PayloadOptions
from robot_dynamics.core.identification.recording import Recording

# Imported here, not in the jobs: unpickling a job's report in the node needs these modules, and
# importing cvxpy there on the first call would hold the stream's interpreter lock for ~0.5 s.
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.model.urdf import parse_urdf
from robot_dynamics.core.streams.ring_buffer import RingBufferError, RingBufferHandle
from robot_dynamics.core.text_files import FileWriteError, write_text_atomic
from robot_dynamics.core.validation.checks import validate_description


@dataclass(frozen=True)
class SharedRecording:
    """A recording in shared memory, as a job receives it: the ring buffer's handle and the
    joint names of its columns (a few hundred bytes to pickle, whatever the recording's length)."""

    handle: RingBufferHandle
    joint_names: tuple
    until: Optional[int] = None
    """The buffer's ``written`` count when the call came: later samples are not part of it."""

    def load(self) -> Recording:
        """Copy the samples out of the shared block (consistent while its owner appends)."""
        try:
            with self.handle.attach() as buffer:
                time_, positions, velocities, efforts = buffer.arrays(until=self.until)
        except FileNotFoundError:
            raise RingBufferError(
                'the recording was replaced (new model or baseline) during the call; call again'
            ) from None
        return Recording(time_, positions, velocities, efforts, self.joint_names)


def identify_payload_job(
    description_text: str,
    floating_base: bool,
    gravity: Sequence[float],
    recording: SharedRecording,
    payload_link: str,
    mode: str,
    baseline: Optional[SharedRecording],
    report_directory: str,
    effort_scale_uncertainty: float = 0.02,
) -> tuple:
    """core.identification.payload.identify_payload on a fresh model built from the live
    description, on a copy
    of the shared recording (and baseline) taken here; returns (report, report-file error or '')
    after writing ``payload_*.yaml``, or (None, '') when fewer than 2 samples are recorded."""
    samples = recording.load()
    if samples.num_samples < 2:
        return None, ''
    robot = RobotModel(parse_urdf(description_text), floating_base=floating_base, gravity=gravity)
    report = identify_payload(
        robot,
        samples,
        payload_link,
        mode=mode,
        baseline=baseline.load() if baseline is not None else None,
        options=PayloadOptions(effort_scale_uncertainty=effort_scale_uncertainty),
    )
    return report, write_report(report_directory, 'payload', report.to_dict())


def explain_residual_job(
    description_text: str,
    floating_base: bool,
    gravity: Sequence[float],
    rotor_inertia: Sequence[float],
    payload: Optional[tuple],
    recording: SharedRecording,
    payload_link: str,
):
    """core.identification.residual_terms.explain_residual of the recording under the live
    model (its rotor inertia and ``payload`` (link, InertialParameters) or None); None when
    fewer than 2 samples are recorded."""
    from robot_dynamics.core.identification.residual_terms import explain_residual

    samples = recording.load()
    if samples.num_samples < 2:
        return None
    robot = RobotModel(parse_urdf(description_text), floating_base=floating_base, gravity=gravity)
    robot.set_rotor_inertia(rotor_inertia)
    if payload is not None:
        robot.attach_payload(*payload)
    return explain_residual(robot, samples, payload_link)


def validate_inertia_job(
    description_text: str,
    package_paths: dict,
    allowed_roots: Sequence[str],
    floating_base: bool,
    report_directory: str,
) -> tuple:
    """core.validation.validate_description of the live description; returns (report,
    report-file error or '') after writing ``validation_*.yaml``."""
    report = validate_description(
        parse_urdf(description_text),
        package_paths=package_paths,
        allowed_roots=list(allowed_roots),
        floating_base=floating_base,
    )
    return report, write_report(report_directory, 'validation', report.to_dict())


_YAML_DUMPER = getattr(yaml, 'CSafeDumper', yaml.SafeDumper)
"""libyaml's dumper when PyYAML has it: the same text as ``safe_dump`` for a fraction of the CPU."""


def write_report(directory: str, kind: str, content: dict) -> str:
    """Write ``content`` as YAML to ``directory/<kind>_<time>.yaml`` and ``<kind>_latest.yaml``
    (in the worker: YAML dumping takes milliseconds). Returns '' or the error in words."""
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        text = yaml.dump(content, Dumper=_YAML_DUMPER, sort_keys=False)
        write_text_atomic(folder / f'{kind}_{time.strftime("%Y%m%d_%H%M%S")}.yaml', text)
        write_text_atomic(folder / f'{kind}_latest.yaml', text)
    except (OSError, FileWriteError) as error:
        return f'could not write the {kind} report to {folder}: {error}'
    return ''


WORKER_NICENESS = 19
"""The worker runs at a lower CPU priority: on a busy machine the torque stream goes first."""
WORKER_SLICE_NS = 100_000
"""Time slice [ns] the worker asks for (the kernel's minimum). Linux's EEVDF scheduler (6.6+)
lets a task that starts running keep the CPU for its slice (1.4 ms by default on 2 cores)
before a woken task may preempt it, whatever its niceness, so niceness alone leaves the
stream's wake-ups waiting behind back-to-back jobs; the short slice bounds that wait
(docs/reliability.md). The kernel honours the slice for normal tasks from Linux 6.12."""

_SCHED_SETATTR = {'x86_64': 314, 'aarch64': 274}
"""sched_setattr(2) system call numbers (no Python wrapper exists)."""


def lower_priority(pid: int = 0) -> None:
    """Niceness :data:`WORKER_NICENESS` and a :data:`WORKER_SLICE_NS` time slice for the main
    thread of process ``pid`` (0: the calling thread); threads it starts later inherit both."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, WORKER_NICENESS)
    except OSError:
        pass
    number = _SCHED_SETATTR.get(platform.machine())
    if number is None or not sys.platform.startswith('linux'):
        return
    # struct sched_attr (first version, 48 bytes): size, policy, flags, nice, priority, runtime,
    # deadline, period.
    attributes = ctypes.create_string_buffer(
        struct.pack('IIQiIQQQ', 48, os.SCHED_OTHER, 0, WORKER_NICENESS, 0, WORKER_SLICE_NS, 0, 0)
    )
    syscall = ctypes.CDLL(None, use_errno=True).syscall
    syscall(
        ctypes.c_long(number), ctypes.c_long(pid), attributes, ctypes.c_long(0)
    )  # fails harmlessly on old kernels


class _LowPriorityProcess(multiprocessing.context.SpawnProcess):
    """A spawned process lowered (:func:`lower_priority`) right after it starts, so its start-up
    (re-importing the node's main module, pinocchio and cvxpy: ~1 s of CPU) yields to the stream
    too."""

    def start(self) -> None:
        super().start()
        lower_priority(self.pid)

    def run(self) -> None:
        # A terminal's Ctrl-C reaches the whole process group, this worker too (a traceback from
        # its queue read); the node ends its worker itself.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        super().run()


class _LowPrioritySpawnContext(multiprocessing.context.SpawnContext):
    Process = _LowPriorityProcess


DEFAULT_CPU_SHARE = 0.02
"""Average share of one core the worker may use over calls that come back to back. On 2 shared
cores any CPU the worker uses, even at the lowest priority, slows the torque stream's wake-ups:
pacing the worker is what keeps a storm of calls from raising the stream's p99 latency
(docs/reliability.md)."""
CPU_BURST_S = 0.1
"""CPU time [s] the worker may use at full speed after being idle: isolated calls (even the
first one, which also compiles the identification problem) are never paced."""

MAX_PACING_WAIT = 2.0
"""Longest wait [s] before a job: a long job (an explain_residual of ~20 s of CPU) overdraws the
budget by what would take its share many minutes to earn; the next call waits this long at most,
its debt forgiven, and the calls queued behind it are answered."""

_cpu_credit = CPU_BURST_S
_credit_since = 0.0
"""In the worker process: CPU seconds it may still use without waiting, as of time.monotonic()
_credit_since."""


def _paced(
    cpu_share: float,
    job,
    *arguments,
    clock=time.monotonic,
    cpu_clock=time.process_time,
    sleep=time.sleep,
):
    """Run ``job(*arguments)`` (in the worker) within a CPU budget: the worker earns ``cpu_share``
    seconds of CPU per second, keeps at most :data:`CPU_BURST_S` of it, and a job that finds the
    budget overdrawn first waits until it is even again, :data:`MAX_PACING_WAIT` at most (a
    token bucket over CPU time).

    ``clock`` (wall, [s]), ``cpu_clock`` (this process's CPU time, [s]) and ``sleep`` are the
    time sources; tests pass fake ones to check the pacing arithmetic exactly."""
    global _cpu_credit, _credit_since
    now = clock()
    credit = min(CPU_BURST_S, _cpu_credit + (now - _credit_since) * cpu_share)
    if credit < 0.0:
        sleep(min(-credit / cpu_share, MAX_PACING_WAIT))
        credit, now = 0.0, clock()
    cpu_started = cpu_clock()
    try:
        return job(*arguments)
    finally:
        _cpu_credit, _credit_since = credit - (cpu_clock() - cpu_started), now


def _exit_with_parent() -> None:
    """Pool initializer (in the worker): end the worker as soon as the process that started it
    is gone. A node killed with SIGKILL runs no clean-up; without this its worker would live on,
    and with it the resource tracker that keeps the recording's shared memory in /dev/shm."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(
            target=_exit_when_ready, args=(parent.sentinel,), name='exit-with-parent', daemon=True
        ).start()


def _exit_when_ready(sentinel) -> None:
    multiprocessing.connection.wait([sentinel])
    os._exit(1)


class ServiceWorker:
    """A single worker process, started on the first call and kept; ``run`` blocks the calling
    thread only. Back-to-back jobs are paced to use ``cpu_share`` (0 < share ≤ 1) of one core on
    average (:func:`_paced`, :data:`DEFAULT_CPU_SHARE`)."""

    def __init__(self, cpu_share: float = DEFAULT_CPU_SHARE):
        if not 0.0 < cpu_share <= 1.0:
            raise ValueError(f'cpu_share must be in (0, 1], got {cpu_share}')
        self.cpu_share = float(cpu_share)
        self._pool: Optional[ProcessPoolExecutor] = None

    def run(self, job, *arguments, timeout: float = 300.0):
        """Run ``job(*arguments)`` in the worker and return its result (its exception is re-raised).

        A worker that died is replaced on the next call. A job still running after ``timeout``
        seconds is stopped with its worker (so that it cannot hold up the calls that follow)
        and reported as a RuntimeError.
        """
        try:
            return (
                self._started_pool()
                .submit(_paced, self.cpu_share, job, *arguments)
                .result(timeout=timeout)
            )
        except BrokenProcessPool:
            self.shutdown()
            raise RuntimeError(
                'the service worker process died; it is restarted on the next call'
            ) from None
        except FutureTimeout:
            self._stop_workers()
            raise RuntimeError(
                f'the job did not finish within {timeout:g} s: it was stopped, and the service '
                'worker is restarted on the next call'
            ) from None

    def _started_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=1, mp_context=_LowPrioritySpawnContext(), initializer=_exit_with_parent
            )
        return self._pool

    def _stop_workers(self) -> None:
        """Terminate the worker process (a running job with it) and forget the pool."""
        pool = self._pool
        if pool is None:
            return
        # ProcessPoolExecutor has no public way to stop a running job: its processes are terminated.
        for process in list((getattr(pool, '_processes', None) or {}).values()):
            process.terminate()
        self.shutdown()

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
