"""The `robot_dynamics` command line: offline tools that call the core.

Each sub-command lives in ``robot_dynamics/commands/<module>.py`` (``bench`` in
``robot_dynamics/instruments/``) and provides
``add_arguments(parser)`` and ``run(args) -> int`` (the exit code); the first paragraph of
the module docstring is its one-line help. Heavy imports happen inside ``run``.
"""

from __future__ import annotations

import argparse
import importlib
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


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:  # Ctrl-C: every command has stopped what it started on the way out
        print(f'robot_dynamics {args.command}: interrupted', file=sys.stderr)
        return INTERRUPTED


if __name__ == '__main__':
    sys.exit(main())
