"""`robot_dynamics --help` lists every command with a whole sentence, and building the command
line loads none of the numerical libraries a command needs only when it runs (scipy.signal,
cvxpy, MuJoCo, rclpy): help and argument refusals answer before those imports."""

from __future__ import annotations

import argparse
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


def test_each_command_help_is_a_whole_sentence():
    """A command's help is its module docstring's first paragraph, however many lines it wraps
    over: it ends where the sentence ends, not at a line break."""
    subparsers = next(
        action
        for action in cli.build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    helps = {choice.dest: choice.help for choice in subparsers._choices_actions}
    assert set(helps) == set(cli.SUBCOMMANDS)
    for command, help_line in helps.items():
        assert help_line.endswith('.'), (command, help_line)
        assert '\n' not in help_line, (command, help_line)


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
