r"""Identify a payload (mass, CoM, inertia with 1σ) from a recorded bag or CSV of joint states.

Reads sensor_msgs/JointState from a rosbag2 (sqlite3 or mcap; directory or file) or a CSV
(header ``time`` then ``<joint>/position``, ``<joint>/velocity``, ``<joint>/effort``; efforts
that are motor currents or motor torques are converted with ``--effort-model``), removes
the robot's own torques with the URDF or, better, with a baseline recording of the same
motion without the payload (the two need not start and stop together: the stretch both
cover is used, and the output says how much), and fits the payload of ``--payload-link``.
Bag messages the merger refuses (NaN, out of range, out of order) are counted per reason on
stderr.

Exit status: 0 with an estimate, 2 when the data cannot give one (the reason is printed),
1 on unusable input (missing file, unknown link or joints, an --output that cannot be
written; if writing it still fails after the fit, the report goes to stdout and the exit
status is 1). Note that argparse also uses 2 for command-line usage errors.

Example:
  robot_dynamics identify-payload --urdf arm.urdf --bag with_gripper/ --baseline empty/ \
      --payload-link tool0 --output payload.yaml
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--urdf', required=True, help='robot description (URDF file)')
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        '--bag', help='rosbag2 directory or .mcap/.db3 file with the motion carrying the payload'
    )
    source.add_argument('--csv', help='CSV recording of the motion carrying the payload')
    source.add_argument(
        '--recording',
        help='any recording read_recording understands (CSV, bag, or a Gaz 2019 Panda data folder)',
    )
    parser.add_argument(
        '--baseline', help='the same motion recorded without the payload (bag or CSV)'
    )
    parser.add_argument(
        '--topic', default='/joint_states', help='JointState topic in bags (default %(default)s)'
    )
    parser.add_argument(
        '--effort-model',
        metavar='FILE.yaml',
        help='per-joint meaning of the recorded efforts (torque, current, motor_torque) with k_t, '
        'gear ratio, efficiency and sign, applied to the recording and the baseline; default: '
        'efforts are joint torques',
    )
    parser.add_argument(
        '--payload-link',
        help='link or frame the payload is fixed to, e.g. tool0 (default: the last frame of the '
        'model)',
    )
    parser.add_argument(
        '--mode',
        choices=('auto', 'full', 'mass_com'),
        default='auto',
        help='full: mass, CoM and inertia; mass_com: mass and CoM; auto: full when the motion '
        'excites the inertia (default)',
    )
    parser.add_argument(
        '--cutoff-hz',
        type=float,
        default=10.0,
        help='low-pass cutoff for velocities and efforts [Hz] (default %(default)s)',
    )
    parser.add_argument(
        '--max-condition-number',
        type=float,
        default=60.0,
        help='refuse above this condition number of the normalised regressor (default %(default)s)',
    )
    parser.add_argument(
        '--effort-scale-uncertainty',
        type=float,
        default=0.02,
        help='assumed 1σ relative scale error of each joint\'s efforts, carried into the 1σ of '
        'the answer; 0 for calibrated efforts (default %(default)s)',
    )
    parser.add_argument('--output', help='write the report to this YAML file')
    parser.add_argument(
        '--format', choices=('text', 'json'), default='text', help='stdout format (default text)'
    )


def run(args: argparse.Namespace) -> int:
    from robot_dynamics.core.errors import RobotDynamicsError

    try:
        report = _identify(args)
    except (RobotDynamicsError, OSError, ValueError, ArithmeticError) as error:
        print(f'identify-payload: {error}', file=sys.stderr)
        return 1
    write_error = _write_report(args.output, report) if args.output else None
    _print_report(report, args.format)
    if write_error is not None:
        print(
            f'identify-payload: could not write the report to {args.output} ({write_error}); it is '
            'printed above',
            file=sys.stderr,
        )
        return 1
    return 0 if report.success else 2


def _identify(args: argparse.Namespace):
    """The PayloadReport of the recordings ``args`` name; the --output path is checked first so
    that an unwritable one is refused before the fit."""
    from robot_dynamics.commands.output_paths import check_writable_file
    from robot_dynamics.core.identification.payload import PayloadOptions, identify_payload
    from robot_dynamics.core.model.model import RobotModel

    if args.output:
        reads = (args.urdf, args.bag, args.csv, args.recording, args.baseline, args.effort_model)
        check_writable_file(args.output, '--output', reads)
    robot = RobotModel.from_urdf_file(args.urdf)
    robot.check_moving_joints()
    link = _payload_link(robot, args.payload_link)
    recording, baseline = _read_recordings(args, robot)
    options = PayloadOptions(
        cutoff_hz=args.cutoff_hz,
        max_condition_number=args.max_condition_number,
        effort_scale_uncertainty=args.effort_scale_uncertainty,
    )
    return identify_payload(robot, recording, link, args.mode, baseline, options)


def _payload_link(robot, requested: Optional[str]) -> str:
    """``requested``, or the model's last frame when it is empty (ValueError for a model without
    a moving link)."""
    from robot_dynamics.core.identification.payload import default_payload_link

    if requested:
        return requested
    if not robot.joint_names:
        raise ValueError(f'model "{robot.name}" has no moving link: give --payload-link')
    return default_payload_link(robot)


def _read_recordings(args: argparse.Namespace, robot) -> tuple:
    """(the recording carrying the payload, the baseline or None), their efforts converted to
    joint torques [N·m] by the --effort-model when one is given."""
    from robot_dynamics.commands.recording_input import read_joint_recording
    from robot_dynamics.core.streams.effort_model import load_effort_model

    effort_model = load_effort_model(args.effort_model)
    if effort_model is not None:
        effort_model = effort_model.for_joints(robot.joint_names)  # refuses joints the model lacks
    recording = read_joint_recording(
        args.bag or args.csv or args.recording, robot, args.topic, 'identify-payload', effort_model
    )
    baseline = (
        read_joint_recording(args.baseline, robot, args.topic, 'identify-payload', effort_model)
        if args.baseline
        else None
    )
    return recording, baseline


def _write_report(path: str, report) -> Optional[OSError]:
    """Write ``report`` as YAML to ``path``; the error when that fails, else None."""
    import yaml

    try:
        with open(path, 'w', encoding='utf-8') as handle:
            yaml.safe_dump(report.to_dict(), handle, sort_keys=False, allow_unicode=True)
    except OSError as error:
        return error
    return None


def _print_report(report, output_format: str) -> None:
    """``report`` on stdout as JSON or as :func:`report_text`."""
    import json

    if output_format == 'json':
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(report_text(report))


def report_text(report) -> str:
    """Human-readable multi-line form of a PayloadReport (same numbers as the YAML/JSON)."""
    lines = [report.summary()]
    if report.success:
        lines.append(f'  mass      {report.mass:.4f} ± {report.mass_std:.4f} kg')
        lines.append(
            '  com       ['
            + ', '.join(f'{c:.4f}' for c in report.com)
            + '] ± ['
            + ', '.join(f'{c:.4f}' for c in report.com_std)
            + f'] m in {report.payload_link}'
        )
        if report.inertia is not None:
            lines.append(
                '  inertia   '
                + ', '.join(
                    f'{k}={report.inertia[k]:.5f}±{report.inertia_std[k]:.5f}'
                    for k in report.inertia
                )
                + ' kg·m² about the CoM'
            )
    numbers = []
    if report.used_duration is not None:
        numbers.append(
            f'{report.used_duration:.1f} s of the payload recording used'
            + (
                f' (the baseline covers {100 * report.baseline_coverage:.0f} % of it)'
                if report.baseline_coverage is not None
                else ''
            )
        )
    if report.condition_number is not None:
        numbers.append(f'condition number {report.condition_number:.1f}')
    if report.residual_rms_after is not None:
        numbers.append(
            f'residual {report.residual_rms_before:.3f} → {report.residual_rms_after:.4f} N·m RMS '
            f'(payload torque {report.payload_torque_rms:.3f} N·m RMS)'
        )
    numbers.append(f'{report.samples} samples, {report.solve_time:.2f} s')
    lines.append('  ' + '; '.join(numbers))
    lines.extend(f'  warning: {text}' for text in report.warnings)
    return '\n'.join(lines)
