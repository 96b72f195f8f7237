"""Reliability run: soak (`robot_dynamics bench soak`).

A node fed for a long time against the bare relay measured in the same run, its private
resident memory [KiB] sampled every second (the memory sampler and /proc readers are here).
"""

from __future__ import annotations

import argparse
import os
import threading
from dataclasses import dataclass, field
from typing import Optional

from robot_dynamics.instruments import bench
from robot_dynamics.instruments.reliability_common import safe_ratio
from robot_dynamics.instruments.stream_feeder import (
    StreamFeeder,
    StreamFigures,
    bench_node_name,
    latencies,
    output_topic,
    start_node,
    stop_node,
    stream_figures,
    wait_for_stragglers,
)


@dataclass
class SoakReport:
    """One node fed for ``duration_s`` at ``rate_hz``: stream figures against the bare relay of
    the same run, and the node's private resident memory [KiB] (:func:`private_resident_kib`:
    its fixed-size shared-memory blocks, the recording ring buffer and the DDS segments, excluded)
    sampled every second."""

    target: str
    rate_hz: float
    duration_s: float
    node: StreamFigures
    relay: StreamFigures
    rss_samples_kib: list = field(default_factory=list)
    load_average: tuple = ()
    node_alive: bool = True

    @property
    def rss_start_kib(self) -> int:
        return self.rss_samples_kib[0] if self.rss_samples_kib else 0

    @property
    def rss_end_kib(self) -> int:
        return self.rss_samples_kib[-1] if self.rss_samples_kib else 0

    @property
    def rss_growth_kib(self) -> int:
        return self.rss_end_kib - self.rss_start_kib

    def to_dict(self) -> dict:
        relay, node = self.relay, self.node
        return {
            'target': self.target,
            'rate_hz': self.rate_hz,
            'duration_s': self.duration_s,
            'answered_fraction': node.answered_fraction,
            'relay_answered_fraction': relay.answered_fraction,
            'node_latency_ms': latencies(node),
            'relay_latency_ms': latencies(relay),
            'p50_ratio': safe_ratio(node.p50_ms, relay.p50_ms),
            'p99_ratio': safe_ratio(node.p99_ms, relay.p99_ms),
            'rss_start_kib': self.rss_start_kib,
            'rss_end_kib': self.rss_end_kib,
            'rss_max_kib': max(self.rss_samples_kib, default=0),
            'rss_growth_kib': self.rss_growth_kib,
            'load_average_1_5_15': list(self.load_average),
            'node_alive': self.node_alive,
        }


def soak(
    target: str,
    duration: float,
    rate: Optional[float] = None,
    warmup: float = 2.0,
    baseline_duration: Optional[float] = None,
) -> SoakReport:
    """Feed ``target`` ('dynamics': arm at 1 kHz, 'centroidal': quadruped at 500 Hz) for
    ``duration`` seconds after ``warmup``; the bare relay baseline runs for ``baseline_duration``
    (default: ``min(duration, 60)``) under the same feed just before."""
    module, output, default_rate, model, root_joint = bench.TARGETS[target]
    from robot_dynamics.models import model_path

    urdf = str(model_path(model))
    rate = rate or default_rate
    baseline = argparse.Namespace(duration=baseline_duration or min(duration, 60.0), warmup=warmup)
    relay = bench.measure_process(
        [bench.BARE_RELAY], 'relayed_joint_states', urdf, root_joint, rate, baseline
    )
    node_name = bench_node_name(module)
    process = start_node([module, *_node_arguments(urdf, root_joint)], node_name)
    try:
        with StreamFeeder(
            output_topic(node_name, output), output, urdf, root_joint, efforts=True
        ) as feeder:
            feeder.wait_connected(process=process)
            feeder.feed(rate, warmup)
            # Sampled from the end of the warm-up: start-up (imports, first messages) is not growth.
            sampler = _MemorySampler(process.pid, measure=private_resident_kib)
            try:
                sent = feeder.feed(rate, duration)
                wait_for_stragglers(feeder, len(sent))
            finally:
                sampler.stop()
            figures = stream_figures(sent, feeder.received)
        alive = process.poll() is None
    finally:
        stop_node(process)
    return SoakReport(
        target, rate, duration, figures, relay, sampler.samples, os.getloadavg(), alive
    )


def _node_arguments(urdf: str, root_joint: str) -> list:
    return ['-p', f'urdf_file:={urdf}', '-p', f'root_joint:={root_joint}']


class _MemorySampler:
    """Samples ``measure(pid)`` [KiB] (default VmRSS) once per ``period`` seconds in a background
    thread."""

    def __init__(self, pid: int, period: float = 1.0, start_after: float = 0.0, measure=None):
        self.samples: list = []
        self._measure = measure or resident_kib
        self._pid, self._period, self._start_after = pid, period, start_after
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if self._stopped.wait(self._start_after):
            return
        while not self._stopped.is_set():
            value = self._measure(self._pid)
            if value:
                self.samples.append(value)
            self._stopped.wait(self._period)

    def stop(self) -> None:
        # One last sample, so the end value is taken after the whole run.
        value = self._measure(self._pid)
        self._stopped.set()
        self._thread.join(timeout=5.0)
        if value:
            self.samples.append(value)


def resident_kib(pid: int) -> int:
    """VmRSS of process ``pid`` [KiB] from /proc (0 when it is gone)."""
    return _status_kib(pid).get('VmRSS', 0)


def private_resident_kib(pid: int) -> int:
    """Resident memory of process ``pid`` [KiB] outside shared memory (VmRSS − RssShmem: the
    heap, stacks and mapped files). Shared-memory blocks (the recording ring buffer, DDS segments)
    have a size fixed when they are created and become resident as they are first written, so
    they would show as growth while a buffer fills; 0 when the process is gone."""
    values = _status_kib(pid)
    return values.get('VmRSS', 0) - values.get('RssShmem', 0)


def _status_kib(pid: int) -> dict:
    values = {}
    try:
        with open(f'/proc/{pid}/status', encoding='ascii') as status:
            for line in status:
                key, _, rest = line.partition(':')
                if rest.strip().endswith('kB'):
                    values[key] = int(rest.split()[0])
    except OSError:
        return {}
    return values
