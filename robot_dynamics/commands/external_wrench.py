"""External joint torques and the external wrench at a frame from a recorded bag or CSV (CSV out).

Runs the generalized-momentum observer (no joint accelerations; ``--gain`` K_O [1/s],
``--filter-gain`` K_F [1/s] of its optional second stage, ``--momentum``
auto|positions|velocities, optional ``--friction-file`` from ``robot_dynamics identify``)
and the damped least-squares wrench
τ_ext = Jᵀ F at ``--frame`` (default: the last link of the chain) over every sample: the same
core calls dynamics_node makes live (docs/contact.md). Output columns: ``time`` [s],
``<joint>/external_torque`` [N·m], ``force_x..z`` [N] and ``torque_x..z`` [N·m] on the frame at
its origin in its axes, ``identifiable`` (resolved wrench directions of 6; fewer for chains with
fewer than 6 joints or near singular poses). Rows are the recording's samples in time order,
without non-finite, corrupt (beyond ±1e6) and repeated ones (counted on stderr). A row that
restarted the observer (the first two with positions, the first with velocities, and the same
after a gap in the stamps) is empty; a recording where every row is empty is refused.

Exit status: 0 on success, 1 on unusable input (missing file, unknown frame or joints, no
sample the observer could answer, an --output that cannot be written).

Example:
  robot_dynamics external-wrench --urdf arm.urdf --bag run/ --frame tool0 --output wrench.csv
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from robot_dynamics.commands.recording_input import add_recording_arguments

    add_recording_arguments(parser)
    parser.add_argument('--frame', help='frame of the wrench (default: the last link of the chain)')
    parser.add_argument(
        '--gain', type=float, default=50.0, help='observer gain K_O [1/s] (default %(default)s)'
    )
    parser.add_argument(
        '--filter-gain',
        type=float,
        default=0.0,
        help="K_F [1/s] of the observer's second low-pass stage, as dynamics_node's "
        'observer_filter_gain (default %(default)s: none)',
    )
    parser.add_argument(
        '--momentum',
        choices=('auto', 'positions', 'velocities'),
        default='auto',
        help="the observer's momentum: from joint-position increments, p = M q_dot, or auto "
        "(as dynamics_node: positions unless their residual is 3x noisier from step to step; "
        'default %(default)s)',
    )
    parser.add_argument('--friction-file', help='friction YAML written by robot_dynamics identify')
    parser.add_argument(
        '--damping', type=float, default=None, help='largest least-squares damping [m]'
    )
    parser.add_argument('--output', help='CSV file to write (default: stdout)')


def run(args: argparse.Namespace) -> int:
    from robot_dynamics.commands.output_paths import check_writable_file
    from robot_dynamics.commands.recording_input import read_joint_recording
    from robot_dynamics.core.contact.external_wrench import DEFAULT_DAMPING, external_wrench_series
    from robot_dynamics.core.dynamics.friction import load_friction_file
    from robot_dynamics.core.errors import RobotDynamicsError
    from robot_dynamics.core.identification.payload import default_payload_link
    from robot_dynamics.core.model.model import RobotModel

    try:
        if args.output:
            reads = (args.urdf, args.bag, args.csv, args.friction_file)
            check_writable_file(args.output, '--output', reads)
        robot = RobotModel.from_urdf_file(args.urdf)
        robot.check_moving_joints()
        friction = (
            load_friction_file(args.friction_file, robot.joint_names)
            if args.friction_file
            else None
        )
        recording = read_joint_recording(args.bag or args.csv, robot, args.topic, 'external-wrench')
        recording = _cleaned(recording, args.bag or args.csv)
        series = external_wrench_series(
            robot,
            recording,
            args.frame or default_payload_link(robot),
            args.gain,
            friction,
            DEFAULT_DAMPING if args.damping is None else args.damping,
            momentum=args.momentum,
            filter_gain=args.filter_gain,
        )
        _check_answered(series)
    except (RobotDynamicsError, OSError, ValueError, ArithmeticError) as error:
        print(f'external-wrench: {error}', file=sys.stderr)
        return 1
    if series.momentum_reason:
        print(
            f'external-wrench: momentum from velocities: {series.momentum_reason}',
            file=sys.stderr,
        )
    text = csv_text(series)
    if not args.output:
        sys.stdout.write(text)
        return 0
    try:
        with open(args.output, 'w', encoding='utf-8') as handle:
            handle.write(text)
    except OSError as error:
        print(f'external-wrench: could not write {args.output}: {error}', file=sys.stderr)
        return 1
    fewer = int((series.identifiable[series.identifiable > 0] < 6).sum())
    print(
        f'external-wrench: {len(series.time)} samples, wrench at {series.frame} written to '
        f'{args.output}'
        + (f'; {fewer} samples resolve fewer than 6 wrench directions' if fewer else ''),
        file=sys.stderr,
    )
    return 0


def _cleaned(recording, path):
    """``recording`` without non-finite, corrupt and repeated rows, what was removed said on
    stderr."""
    from robot_dynamics.core.identification.recording import clean_recording

    cleaned, report = clean_recording(recording)
    removed = {
        'non-finite or corrupt': report.non_finite_removed,
        'repeated': report.duplicates_removed,
    }
    said = ', '.join(f'{count} {kind}' for kind, count in removed.items() if count)
    if said:
        print(f'external-wrench: {path}: rows removed: {said}', file=sys.stderr)
    return cleaned


def _check_answered(series) -> None:
    """Raise ValueError when the observer answered no sample (every interval a gap)."""
    import numpy as np

    from robot_dynamics.core.contact.momentum_observer import DEFAULT_MAX_GAP

    if np.isnan(series.torques).all():
        period = float(np.median(np.diff(series.time)))
        raise ValueError(
            f'the observer answered no sample: the stamps are {period:.6g} s apart (median), '
            f'longer than the {DEFAULT_MAX_GAP:g} s it bridges (are they in seconds?)'
        )


def csv_text(series) -> str:
    """The series as CSV text (empty cells where the observer restarted)."""
    import numpy as np

    header = (
        ['time']
        + [f'{name}/external_torque' for name in series.joint_names]
        + ['force_x', 'force_y', 'force_z', 'torque_x', 'torque_y', 'torque_z', 'identifiable']
    )
    lines = [','.join(header)]
    for k, stamp in enumerate(series.time):
        if np.isnan(series.torques[k]).any():
            lines.append(repr(float(stamp)) + ',' * (len(header) - 1))
            continue
        values = [f'{x:.9g}' for x in np.concatenate([series.torques[k], series.wrenches[k]])]
        lines.append(','.join([repr(float(stamp))] + values + [str(int(series.identifiable[k]))]))
    return '\n'.join(lines) + '\n'
