"""Check a URDF's (or xacro's) inertial parameters: what is wrong, the numbers, and the fix.

Exit code 0 when clean (or only notes), 1 when there are warnings, 2 when there are errors,
so a robot-description repository can run it in CI. Meshes are read only through
package://NAME/ (from --package-path NAME=DIR, then the ament index) and, for file:// or
plain paths, under the model's directory or an --allow-root. A xacro's $(find NAME) is
resolved the same way.

Example:
  robot_dynamics validate my_robot.urdf.xacro --package-path my_robot_description=./ --format yaml
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('model', help='URDF file, or xacro file (*.xacro)')
    parser.add_argument(
        '--package-path',
        action='append',
        default=[],
        metavar='NAME=DIR',
        help='directory of ROS package NAME for package://NAME/ meshes and xacro $(find NAME) '
        '(repeatable)',
    )
    parser.add_argument(
        '--allow-root',
        action='append',
        default=[],
        metavar='DIR',
        help='directory under which file:// and plain mesh paths may be read (repeatable; '
        'default: the model file\'s directory)',
    )
    parser.add_argument(
        '--floating-base',
        action='store_true',
        help='the root link is a free-flying base (so it must have mass)',
    )
    parser.add_argument(
        '--format',
        choices=('text', 'json', 'yaml'),
        default='text',
        help='text (default), json (a list of findings) or yaml (the full report)',
    )


def package_paths_from_arguments(pairs: list) -> dict:
    """{'NAME': 'DIR'} from ['NAME=DIR', ...]; raises argparse.ArgumentTypeError on a bad pair."""
    paths = {}
    for pair in pairs:
        name, separator, directory = pair.partition('=')
        if not separator or not name or not directory:
            raise argparse.ArgumentTypeError(f'--package-path "{pair}" is not NAME=DIR')
        paths[name] = directory
    return paths


def run(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from robot_dynamics.core.validation.checks import validate_file

    try:
        package_paths = package_paths_from_arguments(args.package_path)
    except argparse.ArgumentTypeError as error:
        print(f'robot_dynamics validate: {error}', file=sys.stderr)
        return 2
    allowed_roots = args.allow_root or [str(Path(args.model).resolve().parent)]
    report = validate_file(args.model, package_paths, allowed_roots, args.floating_base)
    if args.format == 'json':
        print(json.dumps(report.to_dict()['findings'], indent=2, ensure_ascii=False))
    elif args.format == 'yaml':
        import yaml

        print(
            yaml.safe_dump(report.to_dict(), sort_keys=False, allow_unicode=True, width=110), end=''
        )
    else:
        print(report.to_text())
    return report.exit_code()
