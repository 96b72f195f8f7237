"""Worst-case joint torques and the largest payload the URDF effort limits allow.

Per joint: the worst gravity torque over seeded random poses within the joint limits
(--poses N), or the worst inverse-dynamics torque along a trajectory (--trajectory F: the
CSV `robot_dynamics excitation` writes), against its URDF effort limit; and the largest
point mass at the payload link (plus --com-offset, in that link's frame) that keeps every
joint within its limit at every sample, with the joint and sample that set it. With a shape
(--box, --cylinder, or --tool from a tools file) the payload has that shape's rotational inertia
(scaled with its mass) and the point-mass figure is printed beside it. Torques are linear in the
payload mass, so the largest mass is a closed form. See docs/capacity.md.

Exit status: 0 with a report; 2 with a one-line reason on stderr (bad option, unreadable
model or trajectory, floating base).
"""

from __future__ import annotations

import argparse
import json
import math
import sys

MAX_POSES = 1_000_000
"""Most random poses a command evaluates (about a minute of a 7-joint arm's gravity torques)."""


def add_motion_arguments(parser: argparse.ArgumentParser, default_poses: int) -> None:
    """--poses N / --trajectory F and --seed: the samples a command evaluates."""
    from robot_dynamics.commands.argument_types import whole_number

    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        '--poses',
        type=whole_number(1, MAX_POSES),
        default=default_poses,
        help='number of seeded random static poses within the joint limits, at most '
        f'{MAX_POSES:g} (default %(default)s)',
    )
    source.add_argument(
        '--trajectory',
        metavar='CSV',
        help='trajectory CSV: time, <joint>/position[, /velocity, /acceleration]',
    )
    parser.add_argument(
        '--seed',
        type=whole_number(0),
        default=0,
        help='seed of the random poses (default %(default)s)',
    )


def motion_from_arguments(args: argparse.Namespace, robot):
    """The SampledMotion --trajectory or --poses/--seed asks for; a trajectory beyond the URDF
    position limits is said on stderr (it is used as given)."""
    from robot_dynamics.core.dynamics import sampled_motion

    if not args.trajectory:
        return sampled_motion.random_poses(robot, args.poses, args.seed)
    motion = sampled_motion.read_trajectory_csv(args.trajectory, robot)
    outside = sampled_motion.outside_position_limits(motion, robot)
    if outside:
        print(f'warning: {outside}: evaluated there as given', file=sys.stderr)
    return motion


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--urdf', help='robot description (default: the bundled 7-DoF arm)')
    parser.add_argument(
        '--payload-link', help='link the payload is fixed to (default: the end of the chain)'
    )
    add_motion_arguments(parser, default_poses=500)
    parser.add_argument(
        '--com-offset',
        type=float,
        nargs=3,
        metavar=('X', 'Y', 'Z'),
        help='payload CoM in the payload link frame [m] (default 0 0 0)',
    )
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument(
        '--box',
        type=float,
        nargs=3,
        metavar=('X', 'Y', 'Z'),
        help='the payload is a solid box with these edges [m] along the payload link axes',
    )
    shape.add_argument(
        '--cylinder',
        type=float,
        nargs=2,
        metavar=('RADIUS', 'LENGTH'),
        help='the payload is a solid cylinder [m] along the payload link z axis',
    )
    shape.add_argument(
        '--tool', help='the payload is this tool of --tools-file (its link, CoM and inertia)'
    )
    parser.add_argument('--tools-file', help='tools YAML (as dynamics_node tools_file) for --tool')
    parser.add_argument(
        '--rotor-inertia',
        metavar='YAML',
        help='friction YAML of `robot_dynamics identify`: its per-joint rotor_inertia [kg·m²] is '
        'added to M(q) (the torques along --trajectory include I_a q̈)',
    )
    parser.add_argument(
        '--per-sample', action='store_true', help='text output: also list every sample'
    )
    parser.add_argument('--format', choices=('text', 'json'), default='text', help='output format')


def run(args: argparse.Namespace) -> int:
    from robot_dynamics.core.errors import RobotDynamicsError

    try:
        return _run(args)
    except (RobotDynamicsError, OSError, ValueError) as error:
        print(f'capacity: {error}', file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from robot_dynamics.core.dynamics.capacity import payload_capacity
    from robot_dynamics.core.model.model import RobotModel
    from robot_dynamics.models import ARM_URDF

    robot = RobotModel.from_urdf_file(args.urdf or ARM_URDF)
    robot.check_moving_joints()
    if args.rotor_inertia:
        from robot_dynamics.core.dynamics.friction import load_friction_file

        robot.set_rotor_inertia(
            load_friction_file(args.rotor_inertia, robot.joint_names).rotor_inertia
        )
    motion = motion_from_arguments(args, robot)
    link, offset, shape, label = _payload_shape(args, robot)
    report = payload_capacity(robot, motion, link, offset, shape)
    point = payload_capacity(robot, motion, link, offset) if shape is not None else None
    if args.format == 'json':
        result = report.to_dict()
        if point is not None:
            result.update(shape=label, point_mass_max_payload=point.to_dict()['max_payload'])
        print(json.dumps(result, indent=2))
        return 0
    print(_text(report, args.per_sample))
    if point is not None:
        print(
            f'with its inertia ({label}): {report.max_payload:.4g} kg; as a point mass: '
            f'{point.max_payload:.4g} kg ({_change(report.max_payload, point.max_payload)})'
        )
    return 0


_TOOL_SETS = {'--payload-link': 'payload_link', '--com-offset': 'com_offset'}
"""The options whose values a --tool brings itself (option → argument name)."""


def _payload_shape(args: argparse.Namespace, robot) -> tuple:
    """(link, CoM offset [m], inertia per kilogram Î [m²] or None, words) of the options."""
    import numpy as np

    from robot_dynamics.core.identification.payload import default_payload_link
    from robot_dynamics.core.live.payload_in_use import load_tools
    from robot_dynamics.core.model.inertia import box_inertia, cylinder_inertia

    link = args.payload_link or default_payload_link(robot)
    offset = args.com_offset or (0.0, 0.0, 0.0)
    for option, lengths in (('--box', args.box), ('--cylinder', args.cylinder)):
        if lengths and not all(math.isfinite(length) and length > 0.0 for length in lengths):
            raise ValueError(f'{option} takes positive finite lengths [m], got {list(lengths)}')
    if args.box:
        return link, offset, box_inertia(1.0, args.box), f'box {args.box} m'
    if args.cylinder:
        radius, length = args.cylinder
        label = f'cylinder r {radius:g} m, length {length:g} m'
        return link, offset, cylinder_inertia(1.0, radius, length), label
    if args.tool:
        given = [name for name, value in _TOOL_SETS.items() if getattr(args, value) is not None]
        if given:
            raise ValueError(
                f'--tool {args.tool} sets the payload link and CoM (its tools-file entry): drop '
                f'{" and ".join(given)}'
            )
        if not args.tools_file:
            raise ValueError('--tool names a tool of --tools-file: give the tools file too')
        tools = load_tools(args.tools_file)
        if args.tool not in tools:
            raise ValueError(f'--tool {args.tool!r} is not in --tools-file ({sorted(tools)})')
        tool = tools[args.tool]
        parameters = tool.parameters
        shape = np.asarray(parameters.inertia_com) / parameters.mass
        return tool.link, parameters.com, shape, f'tool {args.tool}'
    return link, offset, None, 'point mass'


def _change(value: float, reference: float) -> str:
    if not (0.0 < reference < float('inf')):
        return '-'
    return f'{100.0 * (value - reference) / reference:+.1f} %'


def _text(report, per_sample: bool) -> str:
    kind = 'inverse-dynamics' if report.dynamic else 'gravity'
    at_label = 'at t [s]' if report.dynamic else 'at pose'
    lines = [
        f'{report.robot_name}: {report.motion_label}, {kind} torques; payload at '
        f'{report.payload_link} + {report.com_offset.tolist()} m',
        f'{"joint":<20} {"limit [N·m]":>11} {"worst τ [N·m]":>14} {"ratio":>7} {at_label:>9} '
        f'{"max payload [kg]":>17} {at_label:>9}',
    ]
    for joint in report.joints:
        mass = f'{joint.max_payload:.4g}' if joint.max_payload != float('inf') else 'unlimited'
        at = f'{joint.limiting_time:g}' if joint.limiting_sample >= 0 else '-'
        lines.append(
            f'{joint.name:<20} {joint.effort_limit:>11.4g} {joint.worst_torque:>14.4g} '
            f'{joint.worst_ratio:>7.4g} {joint.worst_time:>9g} {mass:>17} {at:>9}'
        )
    if report.limiting_joint is None:
        lines.append('max payload: unlimited (no joint with an effort limit carries it)')
    else:
        where = (
            f't = {report.limiting_time:g} s'
            if report.dynamic
            else f'pose {report.limiting_time:g}'
        )
        lines.append(
            f'max payload: {report.max_payload:.4g} kg, set by {report.limiting_joint} at {where}'
        )
    if report.overloaded:
        lines.append(
            f'WARNING: the robot alone exceeds the effort limit of {list(report.overloaded)}'
        )
    if per_sample:
        for time, mass, joint in zip(
            report.times, report.per_sample_max_payload, report.per_sample_limiting_joint
        ):
            lines.append(f'  t={time:g}: {mass:.4g} kg ({joint})')
    return '\n'.join(lines)
