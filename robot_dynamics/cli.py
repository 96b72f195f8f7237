"""The `robot_dynamics` command line: offline tools that call the core.

Each sub-command lives in ``robot_dynamics/commands/<module>.py`` (``bench`` in
``robot_dynamics/instruments/``) and provides
``add_arguments(parser)`` and ``run(args) -> int`` (the exit code); the first paragraph of
the module docstring is its one-line help. Heavy imports happen inside ``run``.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys

SUBCOMMANDS = {
    'demo': 'robot_dynamics.commands.demo',
    'validate': 'robot_dynamics.commands.validate',
    'identify-payload': 'robot_dynamics.commands.identify_payload',
    'identify': 'robot_dynamics.commands.identify',
    'identify-friction': 'robot_dynamics.commands.identify_friction',
    'explain-residual': 'robot_dynamics.commands.explain_residual',
    'identify-tool-ft': 'robot_dynamics.commands.identify_tool_ft',
    'excitation': 'robot_dynamics.commands.excitation',
    'bench': 'robot_dynamics.instruments.bench',
    'capacity': 'robot_dynamics.commands.capacity',
    'effective-mass': 'robot_dynamics.commands.effective_mass',
    'external-wrench': 'robot_dynamics.commands.external_wrench',
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='robot_dynamics', description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest='command', required=True, metavar='COMMAND')
    for name, module_name in SUBCOMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            continue
        help_line = ' '.join((module.__doc__ or name).strip().split('\n\n')[0].split())
        subparser = subparsers.add_parser(
            name,
            help=help_line,
            description=module.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(subparser)
        subparser.set_defaults(run=module.run)
    return parser


INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT, as a shell reports it)."""


BROKEN_PIPE = 141
"""Exit status when the reader of stdout went away (128 + SIGPIPE, as a shell reports it)."""

_OUTPUT_ERRORS = (errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT)
"""errno values of a stdout that cannot take the output (closed pipe, full or failing disk)."""


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status = int(args.run(args) or 0)
        sys.stdout.flush()
        return status
    except KeyboardInterrupt:  # Ctrl-C: every command has stopped what it started on the way out
        print(f'robot_dynamics {args.command}: interrupted', file=sys.stderr)
        return INTERRUPTED
    except OSError as error:
        if error.errno not in _OUTPUT_ERRORS:
            raise
        _detach_stdout()
        if error.errno == errno.EPIPE:  # `| head`: the reader has what it wanted
            return BROKEN_PIPE
        print(f'robot_dynamics {args.command}: cannot write the output: {error}', file=sys.stderr)
        return 1


def _detach_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's own flush at exit does not fail on the
    same broken or full output again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor (stdout replaced in-process)
        pass


if __name__ == '__main__':
    sys.exit(main())
