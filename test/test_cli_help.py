"""`robot_dynamics --help` lists every command, and building the command line loads none of the
numerical libraries a command needs only when it runs (scipy.signal, cvxpy, MuJoCo, rclpy):
help and argument refusals answer before those imports."""

from __future__ import annotations

import subprocess
import sys

from robot_dynamics import cli

LOADED_ONLY_BY_A_RUN = ('scipy.signal', 'cvxpy', 'mujoco', 'rclpy')


def test_help_lists_every_command():
    finished = subprocess.run(
        [sys.executable, '-m', 'robot_dynamics', '--help'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 0, finished.stderr
    for command in cli.SUBCOMMANDS:
        assert command in finished.stdout


def test_the_parser_is_built_without_the_libraries_a_run_loads():
    script = (
        'import sys; from robot_dynamics import cli; cli.build_parser(); '
        f'print(*[name for name in {LOADED_ONLY_BY_A_RUN!r} if name in sys.modules])'
    )
    finished = subprocess.run(
        [sys.executable, '-c', script], capture_output=True, text=True, timeout=60
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.split() == []
