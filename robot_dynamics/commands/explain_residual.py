"""Split a recording's model residual into what a real robot adds to its URDF.

`robot_dynamics explain-residual --urdf M --bag DIR|--csv F`: the residual τ_measured − inverse
dynamics of the URDF (plus --rotor-inertia, a friction YAML) is fitted at once as effort offsets,
viscous, Coulomb and Stribeck friction, rotor inertia, per-joint effort scale errors, one effort
delay and a payload on --payload-link; printed per joint: the residual RMS, what each term
explains (N·m and %), what stays unexplained (link inertias that differ from the URDF:
`robot_dynamics identify`), and what to do about the largest term. See docs/motors.md.

Exit status: 0 with the table printed; 2 with a one-line reason on stderr.
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from robot_dynamics.commands.recording_input import add_model_and_recording_arguments

    add_model_and_recording_arguments(parser)
    parser.add_argument(
        '--payload-link', help='where a payload would sit (default: the end of the chain)'
    )


def run(args: argparse.Namespace) -> int:
    from robot_dynamics.core.errors import RobotDynamicsError

    try:
        return _run(args)
    except (RobotDynamicsError, OSError, ValueError) as error:
        print(f'explain-residual: {error}', file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from robot_dynamics.commands.recording_input import model_and_recording
    from robot_dynamics.core.identification.payload import default_payload_link
    from robot_dynamics.core.identification.residual_terms import explain_residual

    robot, recording = model_and_recording(args, 'explain-residual')
    link = args.payload_link or default_payload_link(robot)
    print(explain_residual(robot, recording, link).report())
    return 0
