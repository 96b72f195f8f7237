"""Effective mass m_u = 1/(uᵀ J M⁻¹ Jᵀ u) at a frame and the collision energy ½ m_u (uᵀv)².

Over a trajectory (--trajectory F: the CSV `robot_dynamics excitation` writes) u defaults to
the frame's direction of motion (undefined, and reported as such, where the frame is at
rest); over seeded random static poses (--poses N) a --direction X Y Z (world frame) is
needed, and the energy is 0. J is the frame origin's linear Jacobian in world-aligned axes.
See docs/capacity.md.

Exit status: 0 with a report; 2 with a one-line reason on stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from robot_dynamics.commands.capacity import add_motion_arguments, motion_from_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--urdf', help='robot description (default: the bundled 7-DoF arm)')
    parser.add_argument(
        '--frame',
        help='frame (link) whose origin is the contact point (default: the end of the chain)',
    )
    add_motion_arguments(parser, default_poses=20)
    parser.add_argument(
        '--direction',
        type=float,
        nargs=3,
        metavar=('X', 'Y', 'Z'),
        help='collision direction in the world frame (default: along the frame velocity)',
    )
    parser.add_argument('--format', choices=('text', 'json'), default='text', help='output format')


def run(args: argparse.Namespace) -> int:
    from robot_dynamics.core.errors import RobotDynamicsError

    try:
        return _run(args)
    except (RobotDynamicsError, OSError, ValueError) as error:
        print(f'effective-mass: {error}', file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from robot_dynamics.core.dynamics.effective_mass import EffectiveMassError, effective_mass_along
    from robot_dynamics.core.identification.payload import default_payload_link
    from robot_dynamics.core.model.model import RobotModel
    from robot_dynamics.models import ARM_URDF

    robot = RobotModel.from_urdf_file(args.urdf or ARM_URDF)
    robot.check_moving_joints()
    frame = args.frame or default_payload_link(robot)
    robot.frame_id(frame, EffectiveMassError, moving=True)  # named before anything else
    motion = motion_from_arguments(args, robot)
    if motion.is_static and args.direction is None:
        raise EffectiveMassError(
            'static poses do not move the frame, so there is no direction of motion: give '
            '--direction X Y Z (or a --trajectory)'
        )
    samples = effective_mass_along(robot, motion, frame, args.direction)
    result = _summary(robot.name, frame, motion.label, samples)
    if args.format == 'json':
        print(json.dumps(result, indent=2))
    else:
        print(_text(result, motion.times, samples))
    return 0


def _summary(robot_name: str, frame: str, label: str, samples: list) -> dict:
    defined = [sample for sample in samples if sample is not None]
    finite = [sample for sample in defined if math.isfinite(sample.mass)]
    summary = {
        'robot': robot_name,
        'frame': frame,
        'motion': label,
        'samples': len(samples),
        'undefined_at_rest': len(samples) - len(defined),
        'samples_detail': [sample.to_dict() if sample is not None else None for sample in samples],
    }
    if finite:
        lightest = min(finite, key=lambda sample: sample.mass)
        heaviest = max(finite, key=lambda sample: sample.mass)
        energetic = max(finite, key=lambda sample: sample.energy)
        summary.update(
            {
                'min_mass': lightest.mass,
                'min_mass_time': lightest.time,
                'max_mass': heaviest.mass,
                'max_mass_time': heaviest.time,
                'max_energy': energetic.energy,
                'max_energy_time': energetic.time,
                'max_energy_mass': energetic.mass,
                'max_energy_speed': energetic.speed,
            }
        )
    return summary


def _text(summary: dict, times, samples: list) -> str:
    lines = [
        f'{summary["robot"]}: frame {summary["frame"]}, {summary["motion"]}',
        f'{"time [s]":>10} {"speed [m/s]":>12} {"m_u [kg]":>10} {"energy [J]":>11}  direction '
        '(world)',
    ]
    for time, sample in zip(times, samples):
        if sample is None:
            lines.append(f'{time:>10g} {"0":>12} {"undefined (at rest)":>23}')
            continue
        mass = f'{sample.mass:.4g}' if math.isfinite(sample.mass) else 'inf'
        lines.append(
            f'{time:>10g} {sample.speed:>12.4g} {mass:>10} {sample.energy:>11.4g}  '
            f'[{", ".join(f"{x:.3f}" for x in sample.direction)}]'
        )
    if 'min_mass' in summary:
        line = f'effective mass {summary["min_mass"]:.4g} .. {summary["max_mass"]:.4g} kg'
        if summary['max_energy'] > 0.0:
            line += (
                f'; largest energy {summary["max_energy"]:.4g} J at t = '
                f'{summary["max_energy_time"]:g} s ({summary["max_energy_mass"]:.4g} kg at '
                f'{summary["max_energy_speed"]:.4g} m/s)'
            )
        lines.append(line)
    if summary['undefined_at_rest']:
        lines.append(
            f'{summary["undefined_at_rest"]} samples at rest: no direction of motion, effective '
            'mass undefined'
        )
    return '\n'.join(lines)
