"""Identify the whole robot's dynamic parameters (base + friction, physically consistent URDF) from
a recording.

Reads a recording (rosbag2, CSV or the Panda Gaz 2019 folder; bag messages the merger
refuses are counted per reason on stderr), turns its efforts into joint torques when
``--effort-model`` says they are motor currents or motor torques, cleans and filters it, fits the
base parameters
(OLS then WLS) on the first part and scores the torque prediction on the held-out rest, then
fits physically consistent link parameters
(J(π_i) ⪰ 0, prior = the URDF) and writes an identified URDF plus a friction YAML.
See docs/identification.md for the report keys.

Exit status: 0 on success, 2 with a one-line reason on stderr (bad option, unreadable or
unusable recording, insufficient excitation, solver failure, unwritable output). Note that
argparse also uses 2 for command-line usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

MAX_PRIOR_WEIGHT = 1e9
"""Largest --prior-weight: at 1e9 the fit's held-out RMS is already the URDF's (0.51 against
0.54 N·m on the bundled arm), and far above it the SDP solver fails."""

if TYPE_CHECKING:  # imported when a command runs: `robot_dynamics --help` stays fast
    from robot_dynamics.core.identification.recording import PreparedData
    from robot_dynamics.core.identification.whole_robot import IdentificationResult, ModelTerms


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--urdf', required=True, help='robot description (its inertials are the prior)'
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        '--bag', help='rosbag2 directory or .mcap/.db3 file with sensor_msgs/JointState'
    )
    source.add_argument(
        '--csv', help='CSV: time, <joint>/position, <joint>/velocity, <joint>/effort'
    )
    source.add_argument(
        '--panda-dir', help='folder with the Gaz et al. 2019 exciting_traj_*.txt files'
    )
    parser.add_argument(
        '--topic', default='/joint_states', help='JointState topic in the bag (default %(default)s)'
    )
    parser.add_argument(
        '--effort-model',
        metavar='FILE.yaml',
        help='per-joint meaning of the recorded efforts (torque, current, motor_torque) with k_t, '
        'gear ratio, efficiency and sign; default: efforts are joint torques',
    )
    parser.add_argument(
        '--effort-delay',
        default='0',
        metavar='SECONDS|auto',
        help='the efforts were measured this long before the positions they were recorded with '
        '(what dynamics_node\'s effort_delay takes): each is paired with the state that long '
        'before; auto: fitted on the training part with the base parameters, applied from half '
        'a sample on (default %(default)s)',
    )
    parser.add_argument(
        '--friction',
        default='viscous,coulomb,offset',
        help='comma-separated per-joint terms from viscous,coulomb,offset,stribeck, or "none" '
        '(default %(default)s)',
    )
    parser.add_argument(
        '--stribeck-velocity',
        type=float,
        default=0.05,
        help='characteristic velocity of the stribeck term [rad/s] (default %(default)s)',
    )
    parser.add_argument(
        '--sign-velocity',
        default='auto',
        metavar='SIGMA|auto',
        help='velocity scale [rad/s] of the coulomb and stribeck terms\' smooth sign '
        'tanh(dq/SIGMA), 0 for the exact sign; auto: per joint, the one of 0, 0.005, 0.01, '
        '0.02, 0.05, 0.1, 0.2 that fits the training part best (default %(default)s)',
    )
    parser.add_argument(
        '--rotor-inertia', action='store_true', help='add a rotor inertia I_a per joint'
    )
    parser.add_argument(
        '--train-fraction',
        type=float,
        default=0.5,
        help='fraction of the recording (by time) used for the fit; the rest is held out (default '
        '%(default)s)',
    )
    parser.add_argument(
        '--split-time',
        type=float,
        help='fit on t < SPLIT_TIME [s], hold out the rest (overrides --train-fraction)',
    )
    parser.add_argument(
        '--cutoff', type=float, default=10.0, help='low-pass cutoff [Hz] (default %(default)s)'
    )
    parser.add_argument(
        '--period', type=float, default=0.001, help='resampling period [s] (default %(default)s)'
    )
    parser.add_argument(
        '--max-gap',
        type=float,
        default=0.05,
        help='split the recording at gaps longer than this [s] (default %(default)s)',
    )
    parser.add_argument(
        '--decimate', type=int, default=1, help='fit on every k-th training sample (default 1)'
    )
    parser.add_argument(
        '--prior-weight',
        type=float,
        default=100.0,
        help='weight κ of the URDF prior in the consistent fit (default %(default)s)',
    )
    parser.add_argument(
        '--ols', action='store_true', help='ordinary instead of per-joint weighted least squares'
    )
    parser.add_argument(
        '--output', help='write the identified URDF here (and <stem>_friction.yaml next to it)'
    )
    parser.add_argument('--report', help='also write the report as JSON to this file')
    parser.add_argument(
        '--format', choices=('text', 'json'), default='text', help='report on stdout'
    )


def run(args: argparse.Namespace) -> int:
    from robot_dynamics.core.errors import RobotDynamicsError

    try:
        _check_options(args)
        return _run(args)
    except (RobotDynamicsError, OSError) as error:
        print(f'identify: {error}', file=sys.stderr)
        return 2
    except (ValueError, ArithmeticError) as error:
        print(
            f'identify: unusable data or options: {type(error).__name__}: {error}', file=sys.stderr
        )
        return 2


def _split(recording, delay: float, args: argparse.Namespace) -> tuple:
    """(the prepared data, split time [s], training rows (every ``--decimate``-th), held-out
    rows or None) of the cleaned ``recording`` with each effort paired with the state
    ``delay`` [s] before it, resampled and filtered."""
    import numpy as np

    from robot_dynamics.core.identification.recording import prepare_for_identification
    from robot_dynamics.core.identification.whole_robot import IdentificationError

    if delay > 0.0:
        recording = recording.with_effort_delay(delay)
    data = prepare_for_identification(
        recording, period=args.period, cutoff_hz=args.cutoff, max_gap=args.max_gap
    )
    split = (
        args.split_time
        if args.split_time is not None
        else data.time[0] + args.train_fraction * (data.time[-1] - data.time[0]) + 0.5 * data.period
    )
    training = np.flatnonzero(data.time < split)
    if len(training) == 0:
        raise IdentificationError(
            f'--split-time {split:g} s is not after the start of the recording '
            f'({data.time[0]:g} s): no sample to fit on (it is a time in the recording\'s stamps)'
        )
    if len(training) < 100 * args.decimate and args.decimate > 1:
        raise IdentificationError(
            f'--decimate {args.decimate} leaves {len(training[:: args.decimate])} of the '
            f'{len(training)} training samples: keep at least 100'
        )
    train = data.rows(training[:: args.decimate])
    held_out = data.rows(data.time >= split) if np.any(data.time >= split) else None
    return data, split, train, held_out


def _nonnegative_number(text: str) -> bool:
    import math

    try:
        value = float(text)
    except ValueError:
        return False
    return math.isfinite(value) and value >= 0.0


def _check_options(args: argparse.Namespace) -> None:
    """Range-check the numeric options and the output paths before reading anything."""
    import math

    from robot_dynamics.commands.output_paths import check_writable_file
    from robot_dynamics.core.identification.whole_robot import IdentificationError
    from robot_dynamics.core.streams.live_torques import MAX_EFFORT_DELAY

    if args.friction.strip().lower() != 'none' and not args.friction.replace(',', '').strip():
        raise IdentificationError(
            f'--friction lists no term, got {args.friction!r}: give terms from '
            'viscous,coulomb,offset,stribeck, or none'
        )
    for name in ('period', 'cutoff', 'max_gap', 'prior_weight', 'stribeck_velocity'):
        value = getattr(args, name)
        if not (value > 0.0 and math.isfinite(value)):
            raise IdentificationError(
                f'--{name.replace("_", "-")} must be a positive number, got {value}'
            )
    if args.prior_weight > MAX_PRIOR_WEIGHT:
        raise IdentificationError(
            f'--prior-weight must be at most {MAX_PRIOR_WEIGHT:g}, got {args.prior_weight:g}: '
            'the prior then swamps the data (the fit stays at the URDF) and the solver fails'
        )
    if not 0.0 < args.train_fraction <= 1.0:
        raise IdentificationError(f'--train-fraction must be in (0, 1], got {args.train_fraction}')
    if args.sign_velocity != 'auto' and not _nonnegative_number(args.sign_velocity):
        raise IdentificationError(
            f'--sign-velocity must be auto or a number >= 0 [rad/s], got {args.sign_velocity!r}'
        )
    if args.split_time is not None and not math.isfinite(args.split_time):
        raise IdentificationError(f'--split-time must be a finite time [s], got {args.split_time}')
    if args.effort_delay != 'auto' and not (
        _nonnegative_number(args.effort_delay) and float(args.effort_delay) <= MAX_EFFORT_DELAY
    ):
        raise IdentificationError(
            f'--effort-delay must be auto or a time in s in [0, {MAX_EFFORT_DELAY:g}], got '
            f'{args.effort_delay!r}'
        )
    if args.decimate < 1:
        raise IdentificationError(f'--decimate must be at least 1, got {args.decimate}')
    reads = (args.urdf, args.bag, args.csv, args.effort_model)
    for option, value in (('--output', args.output), ('--report', args.report)):
        if value is not None:
            check_writable_file(value, option, reads)
    if args.output is not None:
        check_writable_file(
            _friction_path(Path(args.output)), '--output (its friction file)', reads
        )


def _run(args: argparse.Namespace) -> int:
    from robot_dynamics.core.identification import whole_robot as ident
    from robot_dynamics.core.model.model import RobotModel

    robot = RobotModel.from_urdf_file(args.urdf)
    robot.check_moving_joints()
    friction = '' if args.friction.strip().lower() == 'none' else args.friction
    terms = ident.ModelTerms.parse(friction, args.rotor_inertia, args.stribeck_velocity)
    recording, cleaning = _read_recording(args, robot)
    fit = _fit(args, robot, recording, cleaning, terms)
    report = _report(robot, fit, cleaning)
    if args.output:
        report['outputs'] = _write_model(robot, fit, Path(args.output))
    if args.report:
        from robot_dynamics.core.text_files import write_text_atomic

        write_text_atomic(Path(args.report), json.dumps(report, indent=2, ensure_ascii=False))
    if args.format == 'json':
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        _print_text(fit, cleaning, report)
    return 0


@dataclass
class _Fit:
    """One identification: the model's terms, the effort delay applied [s] (and, with
    ``--effort-delay auto``, the fitted one: value and σ), the split time [s], the rows fitted and
    the result."""

    terms: ModelTerms
    delay: float
    fitted_delay: Optional[tuple]
    split: float
    train: PreparedData
    held_out: Optional[PreparedData]
    result: IdentificationResult


def _read_recording(args: argparse.Namespace, robot) -> tuple:
    """The recording of ``--panda-dir``, ``--bag`` or ``--csv`` on the model's joints, efforts
    converted by ``--effort-model`` and cleaned; with the cleaning's summary."""
    from robot_dynamics.core.identification.recording import clean_recording, time_restart_note
    from robot_dynamics.core.identification.recording_files import (
        read_panda_gaz2019,
        read_recording,
    )
    from robot_dynamics.core.streams.effort_model import load_effort_model

    effort_model = load_effort_model(args.effort_model)
    if effort_model is not None:  # refuses joints the model lacks, before reading
        effort_model = effort_model.for_joints(robot.joint_names)
    if args.panda_dir:
        recording = read_panda_gaz2019(args.panda_dir)
    elif args.bag:
        recording = read_recording(args.bag, topic=args.topic)
    else:
        recording = read_recording(args.csv)
    for note in (recording.rejection_summary(), time_restart_note(recording)):
        if note:
            print(f'identify: {args.bag or args.csv}: {note}', file=sys.stderr)
    recording = recording.select_joints(robot.joint_names)
    recording.check_efforts_measured('identify')
    if effort_model is not None:
        recording = effort_model.converted(recording)
    return clean_recording(recording)


def _fit(args: argparse.Namespace, robot, recording, cleaning, terms) -> _Fit:
    """The effort delay (given, or fitted on every training row and applied from half a sample
    on), the smooth sign's velocity scale, then the fit on the training rows."""
    import dataclasses

    from robot_dynamics.core.identification import whole_robot as ident
    from robot_dynamics.core.streams.live_torques import MAX_EFFORT_DELAY

    auto_delay = args.effort_delay == 'auto'
    delay = 0.0 if auto_delay else float(args.effort_delay)
    fitted = None
    data, split, train, held_out = _split(recording, delay, args)
    if auto_delay:  # on every training row: consecutive rows give the efforts' rate
        every_row = data.rows(data.time < split)
        fitted = ident.fitted_effort_delay(robot, every_row, terms, weighted=not args.ols)
        if fitted[0] >= 0.5 * cleaning.median_period:
            delay = min(fitted[0], MAX_EFFORT_DELAY)
            data, split, train, held_out = _split(recording, delay, args)
    if args.sign_velocity == 'auto':
        sign_velocity = ident.chosen_sign_velocities(robot, train, terms, weighted=not args.ols)
    else:
        sign_velocity = float(args.sign_velocity)
    terms = dataclasses.replace(terms, sign_velocity=sign_velocity)
    result = ident.identify(
        robot, train, held_out, terms, prior_weight=args.prior_weight, weighted=not args.ols
    )
    return _Fit(terms, delay, fitted, float(split), train, held_out, result)


def _report(robot, fit: _Fit, cleaning) -> dict:
    """The report's dictionary (``--format json``, ``--report``)."""
    import numpy as np

    report = fit.result.report.to_dict()
    report['cleaning'] = {
        'duplicates_removed': cleaning.duplicates_removed,
        'gaps': cleaning.gaps,
        'max_gap': cleaning.max_gap,
        'median_period': cleaning.median_period,
        'jitter_rms': cleaning.jitter_rms,
    }
    report['split_time'] = fit.split
    report['effort_delay'] = fit.delay
    if fit.fitted_delay is not None:
        report['effort_delay_fitted'] = {'value': fit.fitted_delay[0], 'std': fit.fitted_delay[1]}
    signs = np.broadcast_to(fit.terms.sign_velocity, (robot.num_joints,)).tolist()
    report['sign_velocity'] = dict(zip(robot.joint_names, signs))
    return report


def _friction_path(output: Path) -> Path:
    """Where the friction file of an identified URDF written at ``output`` goes: beside it."""
    return output.with_name(output.stem + '_friction.yaml')


def _write_model(robot, fit: _Fit, output: Path) -> dict:
    """The identified URDF at ``output`` and its friction file beside it; returns their paths."""
    from robot_dynamics.core.identification import identified_model
    from robot_dynamics.core.text_files import write_text_atomic

    standard = fit.result.standard
    write_text_atomic(output, identified_model.identified_urdf(robot, standard))
    friction_path = _friction_path(output)
    write_text_atomic(
        friction_path, identified_model.friction_yaml(robot, fit.terms, standard, fit.delay)
    )
    return {'urdf': str(output), 'friction': str(friction_path)}


def _print_text(fit: _Fit, cleaning, report: dict) -> None:
    """The report as text (``--format text``)."""
    held_out = 0 if fit.held_out is None else fit.held_out.num_samples
    print(f'recording: {cleaning}')
    print(
        f'fit on t < {fit.split:.3f} s ({fit.train.num_samples} samples), held out '
        f'{held_out} samples'
    )
    if fit.fitted_delay is not None:
        value, sigma = fit.fitted_delay
        print(
            f'effort delay fitted: {1e3 * value:.2f} ± {1e3 * sigma:.2f} ms '
            f'({value / cleaning.median_period:.1f} samples)'
            + ('' if fit.delay else ': under half a sample, none applied')
        )
    if fit.delay:
        print(
            f'efforts paired with the state {1e3 * fit.delay:.3g} ms before them: run '
            f'dynamics_node with effort_delay {fit.delay:.4g} with this model'
        )
    print(fit.result.report)
    if {'coulomb', 'stribeck'} & set(fit.terms.friction):
        print(
            'smooth sign of the coulomb term, tanh(dq/sigma), sigma [rad/s]: '
            + ' '.join(f'{value:g}' for value in report['sign_velocity'].values())
        )
    for path in report.get('outputs', {}).values():
        print(f'wrote {path}')
