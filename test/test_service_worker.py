"""The service worker: pacing of back-to-back jobs, jobs in the spawned process."""
import time

import pytest

from robot_dynamics.ros import service_worker
from robot_dynamics.ros.service_worker import MAX_PAUSE_S, ServiceWorker


def burn_cpu(seconds: float) -> tuple:
    """Spin until this process has used ``seconds`` of CPU; (wall start, wall end)."""
    started, cpu_started = time.monotonic(), time.process_time()
    while time.process_time() - cpu_started < seconds:
        pass
    return started, time.monotonic()


def test_back_to_back_jobs_are_paced_to_the_cpu_share_and_an_isolated_job_is_not(monkeypatch):
    monkeypatch.setattr(service_worker, '_next_job_start', 0.0)
    before = time.monotonic()
    first_start, first_end = service_worker._paced(0.25, burn_cpu, 0.04)
    assert first_start - before < 0.02  # nothing ran before it: no pause
    second_start, _ = service_worker._paced(0.25, burn_cpu, 0.01)
    # 0.04 s of CPU at a 25 % share: the next job starts ≥ 0.04 × (1/0.25 − 1) = 0.12 s later.
    assert second_start - first_end >= 0.12 * 0.98
    assert second_start - first_end < 0.12 + 0.5
    monkeypatch.setattr(service_worker, '_next_job_start', 0.0)
    service_worker._paced(0.01, burn_cpu, 0.05)  # would ask for 4.95 s of pause
    started = time.monotonic()
    service_worker._paced(1.0, time.sleep, 0.0)
    assert MAX_PAUSE_S * 0.98 <= time.monotonic() - started < MAX_PAUSE_S + 0.5


def test_a_job_error_still_paces_the_next_job(monkeypatch):
    monkeypatch.setattr(service_worker, '_next_job_start', 0.0)
    with pytest.raises(ZeroDivisionError):
        service_worker._paced(0.5, lambda: (burn_cpu(0.03), 1 / 0)[1])
    assert service_worker._next_job_start > time.monotonic()


def test_worker_runs_jobs_in_another_process_and_refuses_a_bad_share():
    import os
    worker = ServiceWorker(cpu_share=1.0)
    try:
        assert worker.run(os.getpid) != os.getpid()
        assert worker.run(sum, range(1000)) == 499500
    finally:
        worker.shutdown()
    for share in (0.0, -0.1, 1.5, float('nan')):
        with pytest.raises(ValueError):
            ServiceWorker(cpu_share=share)
