"""Identify each joint's friction (viscous, Coulomb, Stribeck, offset) from a recording.

`robot_dynamics identify-friction --urdf M --bag DIR|--csv F [--output friction.yaml]`: the
residual τ_measured − inverse dynamics of the URDF (plus the rotor inertia of --rotor-inertia,
a friction YAML) is fitted per joint to viscous·q̇ + (coulomb + (stribeck_static −
coulomb)·exp(−(q̇/v_s)²))·sgn(q̇) + offset, v_s chosen from a grid. Constant-velocity sweeps of
the joints, both ways at several speeds (0.01 to 1 rad/s), separate the terms best; any
recording that moves every joint both ways works. The YAML written is what dynamics_node's
friction_file and `robot_dynamics excitation --friction` read. With efforts that are link-side
torque-sensor readings (Franka, KUKA) the motors' friction is not in them: identify from motor
currents or motor torques (--effort-model). See docs/motors.md.

Exit status: 0 with the friction written or printed; 2 with a one-line reason on stderr.
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from robot_dynamics.commands.recording_input import add_model_and_recording_arguments

    add_model_and_recording_arguments(parser)
    parser.add_argument('--no-stribeck', action='store_true', help='fit viscous + Coulomb only')
    parser.add_argument('--output', help='write the friction YAML here (default: print it)')


def run(args: argparse.Namespace) -> int:
    from robot_dynamics.core.errors import RobotDynamicsError

    try:
        return _run(args)
    except (RobotDynamicsError, OSError, ValueError) as error:
        print(f'identify-friction: {error}', file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from robot_dynamics.commands.output_paths import check_writable_file
    from robot_dynamics.commands.recording_input import model_and_recording
    from robot_dynamics.core.identification.friction_fit import fit_friction, friction_file_text
    from robot_dynamics.core.text_files import write_text_atomic

    if args.output:
        reads = (args.urdf, args.bag, args.csv, args.effort_model, args.rotor_inertia)
        check_writable_file(args.output, '--output', reads)
    robot, recording = model_and_recording(args, 'identify-friction')
    fit = fit_friction(robot, recording, stribeck=not args.no_stribeck)
    for note in fit.notes:
        print(f'identify-friction: note: {note}', file=sys.stderr)
    for name, before, after in zip(robot.joint_names, fit.rms_before, fit.rms_after):
        print(
            f'{name}: residual RMS {before:.4g} -> {after:.4g} N·m with friction',
            file=sys.stderr,
        )
    text = friction_file_text(robot, fit)
    if args.output:
        write_text_atomic(Path(args.output), text)
        print(f'identify-friction: wrote {args.output}', file=sys.stderr)
    else:
        print(text, end='')
    return 0
