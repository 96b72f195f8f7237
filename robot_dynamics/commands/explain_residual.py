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
    parser.add_argument('--urdf', required=True, help='robot description (URDF file)')
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        '--bag',
        help='rosbag2 directory or .mcap/.db3 file with sensor_msgs/JointState, or a folder of '
        'the Gaz et al. 2019 Panda recording (exciting_traj_*.txt)',
    )
    source.add_argument('--csv', help='CSV recording (time, <joint>/position, /velocity, /effort)')
    parser.add_argument('--topic', default='/joint_states', help='JointState topic in the bag')
    parser.add_argument(
        '--effort-model', metavar='FILE.yaml', help='what the recorded efforts are (currents...)'
    )
    parser.add_argument(
        '--rotor-inertia', metavar='YAML', help='friction YAML whose rotor_inertia the model has'
    )
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
