"""The service worker: CPU pacing of back-to-back jobs, jobs in the spawned process."""
import os
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


def test_jobs_within_the_burst_run_at_once_and_an_overdraft_is_waited_off(fresh_budget):
    before = time.monotonic()
    first_start, first_end = service_worker._paced(0.25, burn_cpu, 0.02)
    assert first_start - before < 0.02  # an idle worker starts at once
    second_start, second_end = service_worker._paced(0.25, burn_cpu, 0.07)
    assert second_start - first_end < 0.02  # 10 ms of the burst left: still no wait
    # Now overdrawn by ~0.06 s of CPU (minus what 0.25 s/s earned meanwhile): the next job waits
    # until 0.25 × wait covers it.
    third_start, _ = service_worker._paced(0.25, burn_cpu, 0.0)
    earned_while_running = 0.25 * (second_end - first_start)
    expected_wait = (0.02 + 0.07 - 0.03 - earned_while_running) / 0.25
    assert third_start - second_end >= 0.9 * expected_wait > 0.1
    assert third_start - second_end < expected_wait + 0.5


def test_back_to_back_jobs_use_at_most_the_share_of_a_core(fresh_budget):
    started = time.monotonic()
    for _ in range(4):
        service_worker._paced(0.5, burn_cpu, 0.03)
    # The 4th job may start once 0.09 s of CPU is covered by the 0.03 s burst and 0.5 s/s of
    # earnings (≥ 0.12 s in), then runs 0.03 s: ≥ 0.15 s in all (unpaced: 0.12 s).
    elapsed = time.monotonic() - started
    assert elapsed >= 0.95 * ((0.09 - 0.03) / 0.5 + 0.03), elapsed


def test_a_failing_job_still_counts_against_the_budget(fresh_budget):
    with pytest.raises(ZeroDivisionError):
        service_worker._paced(0.5, lambda: (burn_cpu(0.05), 1 / 0))
    assert service_worker._cpu_credit < -0.015


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
