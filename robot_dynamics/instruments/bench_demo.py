"""`robot_dynamics bench demo`: how often the demo passes, run after run, optionally beside
CPU-bound competitors.

Runs ``python -m robot_dynamics demo`` ``--runs`` times in a row, each a fresh process with
its own ROS domain and output directory, while ``--busy-cores`` plain ``while True: pass``
processes (normal priority) compete for the CPU. A run passes when the demo exits 0 and its
output has no traceback and no error line. Prints each run's verdict, wall time and the
identified payload's errors (mass [g], CoM [mm], largest axis), then the totals; exit code 0
only when every run passed.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from robot_dynamics.commands.argument_types import number
from robot_dynamics.instruments.processes import (
    busy_cores,
    start_node_process,
    stop_node_process,
)

FAILURE_LINES = re.compile(
    r'Traceback|\[ERROR\]|\[FATAL\]|Segmentation fault|InvalidHandle|Exception in thread'
)
"""Output lines that fail a run even when the demo exits 0."""


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """This target's options (:mod:`robot_dynamics.instruments.bench` calls it)."""
    group = parser.add_argument_group('bench demo')
    group.add_argument(
        '--demo-duration',
        type=number(0.0, above=True),
        help="demo: the demo's --duration [s] (default: the demo's own default)",
    )
    group.add_argument(
        '--keep-output', help="demo: directory that keeps each run's output (default: discarded)"
    )


@dataclass(frozen=True)
class DemoRun:
    """One demo run: verdict, wall time [s], identified-payload errors and the failure reason."""

    passed: bool
    seconds: float
    mass_error_g: Optional[float]
    com_error_mm: Optional[float]
    reason: str


def run(args: argparse.Namespace) -> int:
    with busy_cores(args.busy_cores), tempfile.TemporaryDirectory(prefix='bench_demo_') as scratch:
        folder = Path(args.keep_output or scratch)
        runs = []
        for index in range(args.runs or 20):
            runs.append(_run_demo(folder / f'run_{index + 1:02d}', args.demo_duration))
            _print_run(index + 1, runs[-1])
    _print_totals(runs, args.busy_cores)
    return 0 if all(run.passed for run in runs) else 1


def _run_demo(output: Path, duration: Optional[float]) -> DemoRun:
    """One demo in a fresh process with a fresh ROS environment (the demo picks its own domain)."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE')
    }
    command = [
        sys.executable,
        '-m',
        'robot_dynamics',
        'demo',
        '--output-dir',
        str(output),
        '--no-plots',
    ]
    if duration is not None:
        command += ['--duration', str(duration)]
    started = time.monotonic()
    process = start_node_process(
        command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        text, _ = process.communicate(timeout=600.0)
    except subprocess.TimeoutExpired:
        stop_node_process(process)
        return DemoRun(False, time.monotonic() - started, None, None, 'did not finish within 600 s')
    seconds = time.monotonic() - started
    (output / 'demo_output.txt').write_text(text)
    mass_error, com_error = _payload_errors(output / 'demo_result.yaml')
    failures = [line.strip() for line in text.splitlines() if FAILURE_LINES.search(line)]
    if process.returncode != 0:
        verdict = [
            line for line in text.splitlines() if line.startswith(('result:', 'demo:', '  ->'))
        ]
        reason = f'exit {process.returncode}: {"; ".join(verdict) or text[-300:]}'
    elif failures:
        reason = f'{len(failures)} error line(s), first: {failures[0][:200]}'
    else:
        reason = ''
    return DemoRun(not reason, seconds, mass_error, com_error, reason)


def _payload_errors(result_path: Path) -> tuple:
    """(|mass error| [g], largest |CoM error| [mm]) from the demo's result file, or Nones."""
    import yaml

    if not result_path.is_file():
        return None, None
    result = yaml.safe_load(result_path.read_text()) or {}
    errors = result.get('payload_errors') or {}
    if 'mass' not in errors:
        return None, None
    return 1e3 * abs(errors['mass']), 1e3 * max(abs(value) for value in errors['com'])


def _print_run(index: int, result: DemoRun) -> None:
    errors = (
        f'mass {result.mass_error_g:.2f} g, CoM {result.com_error_mm:.2f} mm'
        if result.mass_error_g is not None
        else 'no payload identified'
    )
    verdict = 'PASS' if result.passed else f'FAIL ({result.reason})'
    print(f'run {index:2d}: {verdict}, {result.seconds:.1f} s, {errors}', flush=True)


def _print_totals(runs: list, busy_cores: int) -> None:
    passed = sum(run.passed for run in runs)
    seconds = [run.seconds for run in runs]
    mass = [run.mass_error_g for run in runs if run.mass_error_g is not None]
    com = [run.com_error_mm for run in runs if run.com_error_mm is not None]
    print(
        f'bench demo: {passed} of {len(runs)} runs passed with {busy_cores} busy core(s); time per '
        f'run median {statistics.median(seconds):.1f} s, max {max(seconds):.1f} s'
        + (
            f'; |mass error| median {statistics.median(mass):.2f} g, max {max(mass):.2f} g; '
            f'largest |CoM error| median {statistics.median(com):.2f} mm, max {max(com):.2f} mm'
            if mass
            else ''
        )
    )
