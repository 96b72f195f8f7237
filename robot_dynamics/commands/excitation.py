"""Design an exciting Fourier trajectory for identification (YAML + CSV +
trajectory_msgs/JointTrajectory).

A rest-to-rest finite Fourier series per joint, scaled to the URDF position and velocity
limits and an acceleration limit at every sample, optimised for the condition number of
the column-normalised base regressor. Writes PREFIX.yaml (coefficients and limits),
PREFIX.csv (time, <joint>/position, /velocity, /acceleration) and
PREFIX_joint_trajectory.yaml (a JointTrajectory message as YAML); --publish TOPIC also
publishes the JointTrajectory once (rclpy). The duration must be a whole number of base
periods (T·f_f = 1, 2, ...) so that the motion ends at rest where it started. The design
limits (--position-margin, --velocity-fraction, --max-acceleration) are never wider than the
URDF's own position and velocity limits, and every sample keeps them. The predicted joint
torques (inverse dynamics of the URDF, plus --payload-mass at --payload-link/--payload-com and
the friction and rotor inertia of --friction, a YAML written by `robot_dynamics identify`) are
also kept within --torque-fraction of the URDF effort limits at every sample (unless
--ignore-torque-limits, or the URDF gives no effort limit); the worst torque margin is
reported. When even the start pose at rest exceeds them, the design is refused with the joint
and time named. See docs/identification.md.

Exit status: 0 when the files are written (and, with --publish, the JointTrajectory
published to a matched subscriber); 2 with a one-line reason on stderr: a bad option,
unknown joint or unreadable model (then nothing is written), or --publish TOPIC with no
subscriber on TOPIC within --wait s (then the files are written but nothing is published: a
message sent to no subscriber would be lost). Note that argparse also uses 2 for
command-line usage errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--urdf', help='robot description (default: the bundled 7-DoF arm)')
    parser.add_argument(
        '--joints', nargs='+', help='joints to move (default all; the others stay at mid-range)'
    )
    parser.add_argument(
        '--duration',
        type=float,
        default=10.0,
        help='duration T [s]; T × f_f must be a whole number of periods (default %(default)s: one '
        'period at the default base frequency)',
    )
    parser.add_argument(
        '--harmonics', type=int, default=5, help='harmonics L per joint (default %(default)s)'
    )
    parser.add_argument(
        '--base-frequency',
        type=float,
        default=0.1,
        help='base frequency f_f [Hz]; the duration must be whole periods 1/f_f (default '
        '%(default)s)',
    )
    parser.add_argument(
        '--max-acceleration',
        type=float,
        default=5.0,
        help='acceleration limit for every joint [rad/s², > 0] (default %(default)s)',
    )
    parser.add_argument(
        '--velocity-fraction',
        type=float,
        default=0.8,
        help='fraction of the URDF velocity limit to use, in (0, 1] (default %(default)s)',
    )
    parser.add_argument(
        '--position-margin',
        type=float,
        default=0.05,
        help='fraction of each joint range kept free at both ends, in [0, 0.5) (default '
        '%(default)s)',
    )
    parser.add_argument(
        '--torque-fraction',
        type=float,
        default=0.8,
        help='fraction of the URDF effort limits the predicted torques may use, in (0, 1] '
        '(default %(default)s)',
    )
    parser.add_argument(
        '--ignore-torque-limits',
        action='store_true',
        help='do not limit the predicted torques (positions, velocities, accelerations only)',
    )
    parser.add_argument(
        '--payload-mass',
        type=float,
        default=0.0,
        help='expected payload mass [kg] in the torque prediction (default %(default)s)',
    )
    parser.add_argument(
        '--payload-com',
        type=float,
        nargs=3,
        default=(0.0, 0.0, 0.0),
        metavar=('X', 'Y', 'Z'),
        help='expected payload CoM in the payload link frame [m] (default 0 0 0)',
    )
    parser.add_argument(
        '--payload-link',
        help='link the expected payload is fixed to (default: the end of the chain)',
    )
    parser.add_argument(
        '--friction',
        metavar='YAML',
        help='friction file (as `robot_dynamics identify` writes): its friction and rotor inertia '
        'are added to the predicted torques',
    )
    parser.add_argument(
        '--iterations', type=int, default=200, help='(1+1)-ES iterations (default %(default)s)'
    )
    parser.add_argument(
        '--seed', type=int, default=0, help='random seed of the start and the search'
    )
    parser.add_argument(
        '--rate',
        type=float,
        default=100.0,
        help='sample rate [Hz] of the outputs and of the limit checks (default %(default)s)',
    )
    parser.add_argument(
        '--lead-in',
        type=float,
        default=3.0,
        help='time_from_start of the first JointTrajectory point [s] (default %(default)s)',
    )
    parser.add_argument(
        '--output',
        default='excitation',
        help='output prefix: PREFIX.yaml, PREFIX.csv, PREFIX_joint_trajectory.yaml',
    )
    parser.add_argument(
        '--publish', metavar='TOPIC', help='also publish the JointTrajectory on TOPIC'
    )
    parser.add_argument(
        '--wait',
        type=float,
        default=5.0,
        help='seconds to wait for a subscriber before publishing; none by then: nothing is '
        'published and the exit status is 2 (the files are written) (default %(default)s)',
    )
    parser.add_argument(
        '--format', choices=('text', 'json'), default='text', help='summary on stdout'
    )


def run(args: argparse.Namespace) -> int:
    from robot_dynamics.core.errors import RobotDynamicsError

    try:
        return _run(args)
    except (RobotDynamicsError, OSError, ValueError, ArithmeticError) as error:
        print(f'excitation: {error}', file=sys.stderr)
        return 2


def _check_options(args: argparse.Namespace) -> None:
    """Refuse bad options before the model is loaded: the design options through the core's
    own check, then what only this CLI uses (whole samples, --lead-in, --wait, the output
    folder)."""
    import math
    import os

    from robot_dynamics.commands.output_paths import check_writable_file
    from robot_dynamics.core.identification.excitation import (
        ExcitationError,
        check_design_arguments,
    )

    check_design_arguments(
        args.duration, args.harmonics, args.base_frequency, args.rate, args.iterations, args.seed
    )
    samples = args.duration * args.rate
    if abs(samples - round(samples)) > 1e-6:
        raise ExcitationError(
            '--duration × --rate must be a whole number of samples so that the last sample is the '
            f'end at rest, got {args.duration:g} s × {args.rate:g} Hz = {samples:g}'
        )
    if not (0.0 < args.torque_fraction <= 1.0):
        raise ExcitationError(f'--torque-fraction must be in (0, 1], got {args.torque_fraction}')
    if not (args.payload_mass >= 0.0 and math.isfinite(args.payload_mass)):
        raise ExcitationError(f'--payload-mass must be a number ≥ 0 [kg], got {args.payload_mass}')
    for name in ('lead_in', 'wait'):
        value = getattr(args, name)
        if not (value >= 0.0 and math.isfinite(value)):
            raise ExcitationError(f'--{name.replace("_", "-")} must be a number ≥ 0, got {value}')
    if not Path(args.output).name or args.output.endswith(('/', os.sep)):
        raise ExcitationError(
            f'--output is a prefix of file names (PREFIX.yaml, PREFIX.csv, ...), got '
            f'{args.output!r}: end it with a name, e.g. {os.path.join(args.output, "excitation")}'
        )
    for path in _output_paths(args.output).values():
        check_writable_file(path, '--output', (args.urdf, args.friction))
    if args.publish is not None:
        _check_topic(args.publish)


def _check_topic(topic: str) -> None:
    """Refuse a ``--publish`` topic that is not a valid ROS 2 name (rclpy's own rules), or any
    topic where rclpy is missing, before any file is written."""
    from robot_dynamics.core.identification.excitation import ExcitationError

    try:
        from rclpy.expand_topic_name import expand_topic_name
        from rclpy.validate_full_topic_name import validate_full_topic_name
    except ImportError:
        raise ExcitationError('--publish needs ROS 2 (rclpy), which this Python lacks') from None
    try:
        validate_full_topic_name(expand_topic_name(topic, 'excitation_publisher', '/'))
    except Exception as error:  # rclpy raises ValueError or InvalidTopicNameException
        reason = str(error).split(', at ')[0]
        raise ExcitationError(f'--publish {topic!r} is not a ROS topic name: {reason}') from None


def _run(args: argparse.Namespace) -> int:
    from robot_dynamics.core.identification import excitation
    from robot_dynamics.core.model.model import RobotModel
    from robot_dynamics.models import ARM_URDF

    _check_options(args)
    robot = RobotModel.from_urdf_file(args.urdf or ARM_URDF)
    robot.check_moving_joints()
    if args.payload_link:  # named even where no payload mass uses it
        robot.frame_id(args.payload_link, excitation.ExcitationError, 'payload link', moving=True)
    limits = excitation.ExcitationLimits.from_model(
        robot, args.max_acceleration, args.velocity_fraction, args.position_margin
    )
    design = excitation.design_excitation(
        robot,
        args.duration,
        args.harmonics,
        args.base_frequency,
        limits,
        iterations=args.iterations,
        seed=args.seed,
        rate=args.rate,
        joints=args.joints,
        torque_limits=_torque_limits(args, robot),
    )
    times = design.trajectory.sample_times(args.rate)
    excess = excitation.limit_violation(design.trajectory, limits, times)
    paths, message = _write_files(args, robot, design, times, excess)
    published = _publish(message, args.publish, args.wait) if args.publish is not None else False
    if args.format == 'json':
        result = {
            'initial_condition_number': design.initial_condition_number,
            'condition_number': design.condition_number,
            'samples': len(times),
            'max_limit_violation': excess,
            'worst_torque_margin': design.to_dict().get('worst_torque_margin'),
            'outputs': {key: str(path) for key, path in paths.items()},
            'published_on': args.publish if published else None,
        }
        print(json.dumps(result, indent=2))
    else:
        _print_text(args, robot, design, len(times), excess, paths, published)
    if args.publish and not published:
        print(
            f'excitation: no subscriber on {args.publish} after {args.wait:g} s: nothing '
            f'published. The files are written ({paths["joint_trajectory"]} holds the '
            'JointTrajectory): start the subscriber (e.g. the joint trajectory controller) and '
            'run again, or raise --wait',
            file=sys.stderr,
        )
        return 2
    return 0


def _output_paths(prefix: str) -> dict:
    """The files written for the output ``prefix``: parameters, samples and joint_trajectory."""
    prefix = Path(prefix)
    return {
        'parameters': prefix.with_name(prefix.name + '.yaml'),
        'samples': prefix.with_name(prefix.name + '.csv'),
        'joint_trajectory': prefix.with_name(prefix.name + '_joint_trajectory.yaml'),
    }


def _write_files(args: argparse.Namespace, robot, design, times, excess: float) -> tuple:
    """The design's parameters (YAML), its samples (CSV: time, then position, velocity and
    acceleration of each joint) and its JointTrajectory (YAML) beside ``--output``; returns
    their paths and the JointTrajectory message (a dict)."""
    import io

    import numpy as np
    import yaml

    from robot_dynamics.core.identification import excitation
    from robot_dynamics.core.text_files import write_text_atomic

    paths = _output_paths(args.output)
    summary = {
        **design.to_dict(),
        'samples': len(times),
        'rate_hz': args.rate,
        'max_limit_violation': excess,
    }
    write_text_atomic(paths['parameters'], yaml.safe_dump(summary, sort_keys=False))
    header = ['time'] + [
        f'{joint}/{kind}'
        for joint in robot.joint_names
        for kind in ('position', 'velocity', 'acceleration')
    ]
    positions, velocities, accelerations = design.trajectory.evaluate(times)
    table = np.column_stack(
        [times, np.stack([positions, velocities, accelerations], axis=2).reshape(len(times), -1)]
    )
    samples = io.StringIO()
    np.savetxt(samples, table, delimiter=',', header=','.join(header), comments='', fmt='%.10g')
    write_text_atomic(paths['samples'], samples.getvalue())
    message = excitation.joint_trajectory(design.trajectory, args.rate, args.lead_in)
    write_text_atomic(paths['joint_trajectory'], yaml.safe_dump(message, sort_keys=False))
    return paths, message


def _print_text(
    args: argparse.Namespace, robot, design, samples: int, excess: float, paths, published: bool
) -> None:
    """The design in words (``--format text``)."""
    trajectory = design.trajectory
    print(
        f'{robot.name}: {trajectory.harmonics} harmonics at {trajectory.base_frequency:g} Hz '
        f'for {trajectory.duration:g} s, {samples} samples at {args.rate:g} Hz'
    )
    print(
        f'condition number {design.initial_condition_number:.2f} (random start) -> '
        f'{design.condition_number:.2f} after {design.iterations} iterations'
    )
    print(f'largest limit excess {excess:.3g} (<= 0: every limit holds at every sample)')
    if design.torque_margin is not None:
        worst = design.torque_margin
        print(
            f'worst torque margin: {worst.joint} at t = {worst.time:g} s needs '
            f'{worst.torque:.4g} N·m of {worst.allowed:.4g} N·m allowed '
            f'({design.torque_limits.fraction:g} × {worst.effort_limit:g} N·m): '
            f'{100.0 * worst.usage:.1f} % used, margin {worst.margin:.4g} N·m'
        )
    for path in paths.values():
        print(f'wrote {path}')
    if published:
        print(f'published the JointTrajectory on {args.publish}')


def _torque_limits(args: argparse.Namespace, robot):
    """The TorqueLimits the options ask for; None with --ignore-torque-limits or when the URDF
    gives no effort limit (then a note on stderr)."""
    import numpy as np

    from robot_dynamics.core.dynamics.friction import load_friction_file
    from robot_dynamics.core.identification.excitation import TorqueLimits
    from robot_dynamics.core.model.inertia import InertialParameters

    if args.ignore_torque_limits:
        return None
    effort = robot.limits.effort
    if not np.any(np.isfinite(effort) & (effort > 0.0)):
        print(
            f'excitation: note: model "{robot.name}" gives no effort limits; the predicted torques '
            'are not limited',
            file=sys.stderr,
        )
        return None
    payload = link = None
    if args.payload_mass > 0.0:
        from robot_dynamics.core.identification.payload import default_payload_link

        payload = InertialParameters.point_mass(
            args.payload_mass, np.asarray(args.payload_com, dtype=float)
        )
        link = args.payload_link or default_payload_link(robot)
    friction = load_friction_file(args.friction, robot.joint_names) if args.friction else None
    if friction is not None:
        robot.set_rotor_inertia(friction.rotor_inertia)
    return TorqueLimits(robot, args.torque_fraction, payload, link, friction)


def _publish(message: dict, topic: str, wait: float) -> bool:
    """Publish the JointTrajectory once (rclpy, imported only here; a private context, so it
    also works inside a process that already runs rclpy) when a subscriber on ``topic``
    matches within ``wait`` seconds. Returns whether it was published: with no subscriber the
    volatile message would reach no one, so it is not sent."""
    import time

    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    import rclpy
    from builtin_interfaces.msg import Duration
    from rclpy.executors import SingleThreadedExecutor
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    trajectory = JointTrajectory()
    trajectory.joint_names = message['joint_names']
    for point in message['points']:
        stamp = point['time_from_start']
        trajectory.points.append(
            JointTrajectoryPoint(
                positions=point['positions'],
                velocities=point['velocities'],
                accelerations=point['accelerations'],
                time_from_start=Duration(sec=stamp['sec'], nanosec=stamp['nanosec']),
            )
        )
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node('excitation_publisher', context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        publisher = node.create_publisher(JointTrajectory, topic, 10)
        deadline = time.monotonic() + wait
        while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        if publisher.get_subscription_count() == 0:
            executor.shutdown()
            node.destroy_node()
            return False
        # The publisher sees the subscriber before the subscriber has matched the publisher;
        # a volatile message sent in between is lost.
        settle = time.monotonic() + 0.5
        while time.monotonic() < settle:
            executor.spin_once(timeout_sec=0.1)
        trajectory.header.stamp = node.get_clock().now().to_msg()
        publisher.publish(trajectory)
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
        executor.shutdown()
        node.destroy_node()
        return True
    finally:
        rclpy.try_shutdown(context=context)
