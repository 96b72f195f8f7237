"""Ctrl-C on a command-line run ends it quietly: exit status 130, no traceback, and every
process it started (here a benchmark's node and relay processes) gone with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ros_harness import wait_for

ROOT = Path(__file__).resolve().parents[1]


def children_of(pid: int) -> set:
    """PIDs of the live processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in Path('/proc').iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / 'stat').read_text().rsplit(')', 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != 'Z':
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0]
    except OSError:
        return False
    return state != 'Z'


def test_ctrl_c_on_a_bench_run_exits_130_without_traceback_and_stops_its_nodes():
    command = [sys.executable, '-m', 'robot_dynamics', 'bench', 'dynamics', '--duration', '120']
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert wait_for(
            lambda: len(children_of(process.pid)) >= 2 or process.poll() is not None, 120.0
        )
        assert process.poll() is None, process.communicate()
        started = children_of(process.pid)
        time.sleep(1.0)
        os.killpg(process.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group
        _, error = process.communicate(timeout=60.0)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 130, error
    assert 'Traceback' not in error, error
    assert 'interrupted' in error
    assert wait_for(lambda: not any(alive(pid) for pid in started), 10.0), error
