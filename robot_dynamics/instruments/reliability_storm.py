"""Reliability run: service storm (`robot_dynamics bench storm`).

The 1 kHz stream measured quiet and while client processes call the node's services
(:data:`STORM_SERVICES`). Each client is this module run as
``python -m robot_dynamics.instruments.reliability_storm NODE_PATH COUNT OFFSET``: it prints
one JSON line as each call ends (:func:`call_services`), so a client whose rclpy shutdown hangs
afterwards loses no result; the hang is cut short with the client's stacks, reported as a client
problem.
"""

from __future__ import annotations

import faulthandler
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from robot_dynamics.instruments import processes
from robot_dynamics.instruments.reliability_common import (
    NodeUnderTest,
    ReliabilityRunError,
    safe_ratio,
)
from robot_dynamics.instruments.stream_feeder import StreamFigures, latencies, stream_figures


@dataclass
class StormReport:
    """The 1 kHz stream quiet and during a storm of service calls; every call's outcome."""

    quiet: StreamFigures
    storm: StreamFigures
    calls: list
    requested: int
    storm_seconds: float
    node_alive: bool = True
    client_problems: list = field(default_factory=list)

    @property
    def answered_calls(self) -> int:
        return sum(1 for call in self.calls if call['answered'])

    @property
    def p99_ratio(self) -> float:
        return safe_ratio(self.storm.p99_ms, self.quiet.p99_ms)

    def to_dict(self) -> dict:
        per_service = Counter((c['service'], c['answered'], c['success']) for c in self.calls)
        return {
            'requested_calls': self.requested,
            'answered_calls': self.answered_calls,
            'calls_by_service_answered_success': {
                f'{s} answered={a} success={ok}': n for (s, a, ok), n in sorted(per_service.items())
            },
            'max_call_s': max((c['seconds'] for c in self.calls), default=0.0),
            'storm_seconds': self.storm_seconds,
            'quiet_latency_ms': latencies(self.quiet),
            'storm_latency_ms': latencies(self.storm),
            'storm_answered_fraction': self.storm.answered_fraction,
            'p99_ratio': self.p99_ratio,
            'node_alive': self.node_alive,
            'client_problems': self.client_problems,
        }


STORM_SERVICES = ('identify_payload', 'validate_inertia')


def service_storm(
    urdf: str,
    calls: int = 100,
    clients: int = 4,
    rate: float = 1000.0,
    quiet: float = 10.0,
    warmup: float = 2.0,
    buffer_duration: float = 5.0,
    timeout: float = 300.0,
    service_cpu_share: Optional[float] = None,
) -> StormReport:
    """Feed a dynamics_node process at ``rate`` [Hz] (with efforts, so its payload buffer fills):
    ``quiet`` seconds measured alone, then measured while ``clients`` processes make ``calls``
    calls in all, alternating ~/identify_payload and ~/validate_inertia. ``service_cpu_share``:
    the node's parameter (None: its default)."""
    with tempfile.TemporaryDirectory(prefix='storm_reports_') as reports:
        arguments = [
            '-p',
            f'urdf_file:={urdf}',
            '-p',
            f'buffer_duration:={buffer_duration}',
            '-p',
            f'report_directory:={reports}',
        ]
        if service_cpu_share is not None:
            arguments += ['-p', f'service_cpu_share:={float(service_cpu_share)}']
        with NodeUnderTest(
            'dynamics', arguments, 'inverse_dynamics_torques', urdf, efforts=True
        ) as run:
            quiet_sent = run.feeder.feed(rate, quiet, warmup)
            per_client = [calls // clients + (k < calls % clients) for k in range(clients)]
            printed = [[] for _ in per_client]  # each client's stdout lines, as read
            workers = [
                _start_service_client(run.node_name, count, k) for k, count in enumerate(per_client)
            ]
            # The clients' own start-up (interpreter, rclpy, discovery) is not part of the storm:
            # keep the stream fed while they connect, then release them all at once.
            ready = threading.Thread(
                target=_wait_for_all, args=(workers, 'ready', printed), daemon=True
            )
            ready.start()
            run.feeder.feed(rate, timeout, 0.0, until=lambda: not ready.is_alive())
            for worker in workers:
                _send_line(worker, 'go')
            # The storm lasts until the last call is answered; the clients' shutdown (rclpy,
            # interpreter) comes after it, once released, like their start-up before "go".
            done = threading.Thread(
                target=_wait_for_all, args=(workers, 'done', printed), daemon=True
            )
            done.start()
            started = time.monotonic()
            storm_sent = run.feeder.feed(rate, timeout, 0.0, until=lambda: not done.is_alive())
            storm_seconds = time.monotonic() - started
            for worker in workers:
                _send_line(worker, 'exit')
            time.sleep(1.0)
            results, problems = [], []
            for k, worker in enumerate(workers):
                calls_made, problem = _client_results(worker, printed[k])
                results += calls_made
                if problem:
                    problems.append(f'client {k}: {problem}')
            alive = run.process.poll() is None
            received = list(run.feeder.received)
    return StormReport(
        stream_figures(quiet_sent, received),
        stream_figures(storm_sent, received),
        results,
        calls,
        storm_seconds,
        alive,
        problems,
    )


def _start_service_client(node_name: str, count: int, offset: int) -> subprocess.Popen:
    """A storm client process, its stderr kept (:func:`processes.start_keeping_stderr`)."""
    command = [
        sys.executable,
        '-m',
        'robot_dynamics.instruments.reliability_storm',
        f'/{node_name}',
        str(count),
        str(offset),
    ]
    return processes.start_keeping_stderr(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def _wait_for_all(workers: list, expected: str, printed: list) -> None:
    """Block until every client process has printed the line ``expected`` (or has ended); the
    lines read are appended to its list in ``printed``."""
    for worker, lines in zip(workers, printed):
        for line in worker.stdout:
            lines.append(line)
            if line.strip() == expected:
                break


def _send_line(worker: subprocess.Popen, line: str) -> None:
    try:
        worker.stdin.write(line + '\n')
        worker.stdin.flush()
    except OSError:  # the client has ended already
        pass


def _client_results(worker: subprocess.Popen, printed: list, timeout: float = 60.0) -> tuple:
    """The client's JSON result lines (those already read, ``printed``, and the rest once it has
    ended; stopped after ``timeout`` seconds), and what went wrong with it ('' when it ended with
    status 0): its status and the end of its stderr."""
    try:
        output, _ = worker.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        processes.stop_node_process(worker)
        output, _ = worker.communicate()
    lines = printed + output.splitlines()
    results = [json.loads(line) for line in lines if line.startswith('{')]
    said = processes.stderr_tail(worker)
    processes.forget_stderr(worker)
    if worker.returncode == 0:
        return results, ''
    return results, f'ended with status {worker.returncode}: {said}'


SHUTDOWN_GRACE = 20.0
"""Seconds a storm client's rclpy shutdown may take before it prints its stacks and exits 1."""


def call_services(node_path: str, count: int, offset: int = 0, timeout: float = 120.0) -> None:
    """Make ``count`` std_srvs/Trigger calls on ``node_path``'s services in turn (starting at
    :data:`STORM_SERVICES` [offset]), printing one JSON line per call as it ends (service,
    answered, success, message, seconds). Talks to the bench on stdin/stdout: "ready" → "go"
    before the calls, "done" → "exit" after them."""
    import rclpy
    from std_srvs.srv import Trigger

    rclpy.init()
    node = rclpy.create_node(f'storm_client_{os.getpid()}')
    clients = {name: node.create_client(Trigger, f'{node_path}/{name}') for name in STORM_SERVICES}
    try:
        for name, client in clients.items():
            if not client.wait_for_service(timeout_sec=30.0):
                raise ReliabilityRunError(f'service {node_path}/{name} never appeared')
        print('ready', flush=True)
        sys.stdin.readline()
        for k in range(count):
            name = STORM_SERVICES[(k + offset) % len(STORM_SERVICES)]
            started = time.monotonic()
            future = clients[name].call_async(Trigger.Request())
            rclpy.spin_until_future_complete(node, future, timeout_sec=timeout)
            response = future.result() if future.done() else None
            result = {
                'service': name,
                'answered': response is not None,
                'success': bool(response and response.success),
                'message': response.message[:200] if response else '',
                'seconds': time.monotonic() - started,
            }
            print(json.dumps(result), flush=True)
        print('done', flush=True)  # then shut down only on the bench's "exit" (its measurement)
        sys.stdin.readline()
    finally:
        faulthandler.dump_traceback_later(SHUTDOWN_GRACE, exit=True)
        node.destroy_node()
        rclpy.try_shutdown()
        faulthandler.cancel_dump_traceback_later()


if __name__ == '__main__':  # one storm client process: NODE_PATH COUNT OFFSET
    call_services(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
