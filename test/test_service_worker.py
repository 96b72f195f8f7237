"""The service worker: CPU pacing of back-to-back jobs, jobs in the spawned process."""

import os
import signal
import subprocess
import sys
import time

import pytest

from robot_dynamics.ros import service_worker
from robot_dynamics.ros.service_worker import ServiceWorker


def burn_cpu(seconds: float) -> tuple:
    """Spin until this process has used ``seconds`` of CPU; (wall start, wall end)."""
    started, cpu_started = time.monotonic(), time.process_time()
    while time.process_time() - cpu_started < seconds:
        pass
    return started, time.monotonic()


@pytest.fixture
def fresh_budget(monkeypatch):
    """An idle worker's full budget, with a 30 ms burst (small numbers keep the test short)."""
    monkeypatch.setattr(service_worker, 'CPU_BURST_S', 0.03)
    monkeypatch.setattr(service_worker, '_cpu_credit', 0.03)
    monkeypatch.setattr(service_worker, '_credit_since', 0.0)


class FakeClocks:
    """Wall clock, CPU clock and sleep for _paced that only move when told: a job 'uses' CPU and
    wall time by advancing them, a sleep advances the wall clock and is recorded."""

    def __init__(self):
        self.wall, self.cpu, self.sleeps = 1000.0, 5.0, []

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.wall += seconds

    def job(self, cpu_seconds, fail=False):
        started = self.wall
        self.cpu += cpu_seconds
        self.wall += cpu_seconds
        if fail:
            raise ZeroDivisionError('job failed')
        return started

    def paced(self, share, cpu_seconds, fail=False):
        return service_worker._paced(
            share,
            self.job,
            cpu_seconds,
            fail,
            clock=lambda: self.wall,
            cpu_clock=lambda: self.cpu,
            sleep=self.sleep,
        )


def test_jobs_within_the_burst_run_at_once_and_an_overdraft_is_waited_off(fresh_budget):
    """Token bucket of 0.03 s CPU earning 0.25 s/s, on fake clocks (exact, whatever the load)."""
    clocks = FakeClocks()
    assert (
        clocks.paced(0.25, 0.02) == 1000.0
    )  # idle worker, full 0.03 s burst: no wait; credit 0.01
    # 0.02 s later the credit is 0.01 + 0.25·0.02 = 0.015 ≥ 0: runs at once, then overdrawn to
    # −0.055
    assert clocks.paced(0.25, 0.07) == 1000.02 and clocks.sleeps == []
    # 0.07 s later: −0.055 + 0.25·0.07 = −0.0375, waited off at 0.25 s/s: 0.15 s
    assert clocks.paced(0.25, 0.0) == pytest.approx(1000.24, abs=1e-9)
    assert clocks.sleeps == [pytest.approx(0.15, rel=1e-9)]
    # right after the wait the budget is even (0): the next job runs at once and overdraws by 0.01
    clocks.paced(0.25, 0.01)
    assert len(clocks.sleeps) == 1
    clocks.paced(
        0.25, 0.0
    )  # 0.01 s of CPU after 0.01 s of wall: −0.01 + 0.0025 → waits 0.0075/0.25 s
    assert clocks.sleeps[1] == pytest.approx(0.03, rel=1e-9)


def test_idle_time_earns_at_most_the_burst(fresh_budget):
    clocks = FakeClocks()
    clocks.wall += 100.0  # idle for 100 s: 25 s earned, but only the 0.03 s burst is kept
    clocks.paced(0.25, 0.05)  # 0.03 − 0.05 = −0.02 left
    clocks.paced(0.25, 0.0)  # 0.05 s later: −0.02 + 0.0125 = −0.0075 → 0.03 s
    assert clocks.sleeps == [pytest.approx(0.03, rel=1e-9)]


def test_a_failing_job_is_charged_on_the_fake_clocks_too(fresh_budget):
    clocks = FakeClocks()
    with pytest.raises(ZeroDivisionError):
        clocks.paced(0.5, 0.05, True)  # 0.03 − 0.05 = −0.02
    clocks.paced(0.5, 0.0)  # 0.05 s later: −0.02 + 0.025 = 0.005 ≥ 0: no wait
    clocks.paced(0.5, 0.0)
    assert clocks.sleeps == []
    with pytest.raises(ZeroDivisionError):
        clocks.paced(0.5, 0.1, True)  # min(0.03, 0.005) − 0.1 = −0.095
    clocks.paced(0.5, 0.0)  # 0.1 s later: −0.095 + 0.05 = −0.045 → 0.09 s
    assert clocks.sleeps == [pytest.approx(0.09, rel=1e-9)]


def test_a_long_job_delays_the_next_one_by_at_most_the_longest_wait(fresh_budget):
    """A 20 s job at a 2 % share would take 1000 s to earn back; the next job waits
    MAX_PACING_WAIT and the debt is forgiven, the one after it is paced as usual."""
    clocks = FakeClocks()
    clocks.paced(0.02, 20.0)
    clocks.paced(0.02, 0.01)
    assert clocks.sleeps == [pytest.approx(service_worker.MAX_PACING_WAIT, rel=1e-9)]
    clocks.paced(0.02, 0.0)  # −0.01 + 0.02 · 0.01 (the job's wall time): waits 0.49 s
    assert clocks.sleeps[1] == pytest.approx(0.49, rel=1e-9)


def test_back_to_back_jobs_use_at_most_the_share_of_a_core(fresh_budget):
    """The one real-time check (default clocks): a lower bound only, which load cannot break."""
    started = time.monotonic()
    for _ in range(4):
        service_worker._paced(0.5, burn_cpu, 0.03)
    # The 4th job may start once 0.09 s of CPU is covered by the 0.03 s burst and 0.5 s/s of
    # earnings (≥ 0.12 s in), then runs 0.03 s: ≥ 0.15 s in all (unpaced: 0.12 s).
    elapsed = time.monotonic() - started
    assert elapsed >= 0.95 * ((0.09 - 0.03) / 0.5 + 0.03), elapsed


def test_worker_runs_jobs_in_another_process_and_refuses_a_bad_share():
    worker = ServiceWorker(cpu_share=1.0)
    try:
        assert worker.run(os.getpid) != os.getpid()
        assert worker.run(sum, range(1000)) == 499500
    finally:
        worker.shutdown()
    for share in (0.0, -0.1, 1.5, float('nan')):
        with pytest.raises(ValueError):
            ServiceWorker(cpu_share=share)


def _process_gone(pid: int) -> bool:
    """True when ``pid`` has exited (a zombie waiting to be reaped counts as exited)."""
    try:
        with open(f'/proc/{pid}/stat') as stat:
            return stat.read().rsplit(')', 1)[1].split()[0] in ('Z', 'X')
    except FileNotFoundError:
        return True


def test_a_job_over_its_timeout_is_stopped_with_its_worker_and_the_next_call_is_served():
    worker = ServiceWorker(cpu_share=1.0)
    try:
        first = worker.run(os.getpid)
        with pytest.raises(RuntimeError, match='did not finish within 0.5 s'):
            worker.run(time.sleep, 30.0, timeout=0.5)
        deadline = time.monotonic() + 5.0
        while not _process_gone(first) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _process_gone(first)  # the sleeping job did not keep running
        assert worker.run(os.getpid, timeout=60.0) not in (first, os.getpid())
    finally:
        worker.shutdown()


def test_the_worker_exits_when_its_node_is_killed(tmp_path):
    # A node process (here a plain interpreter) starts its worker, then dies by SIGKILL: no
    # clean-up runs in it, so only the worker itself can notice and end.
    script = tmp_path / 'node.py'
    script.write_text(
        'import os, signal, sys\n'
        'from robot_dynamics.ros.service_worker import ServiceWorker\n'
        "if __name__ == '__main__':\n"
        '    print(ServiceWorker(cpu_share=1.0).run(os.getpid), flush=True)\n'
        '    os.kill(os.getpid(), signal.SIGKILL)\n'
    )
    finished = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert finished.returncode == -signal.SIGKILL, finished.stderr
    worker_pid = int(finished.stdout.split()[0])
    deadline = time.monotonic() + 10.0
    while not _process_gone(worker_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _process_gone(worker_pid)
