"""A recorded bag or CSV read for a command: joints in model order, efforts as joint torques,
and the messages the reader refused reported on stderr under the command's name."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def read_joint_recording(
    path, robot, topic: str, command: str, effort_model=None, measured_efforts: str = 'some'
):
    """The :class:`~robot_dynamics.core.identification.recording.Recording` at ``path`` in
    ``robot.joint_names`` order, efforts in N·m (N for prismatic joints).

    ``topic``: the JointState topic, read in bags only; ``effort_model``
    (:class:`~robot_dynamics.core.streams.effort_model.EffortModel`) converts recorded currents
    or motor torques. Messages the reader refused (NaN, out of range, out of order...) are
    counted on stderr as ``<command>: <path>: <counts>``, and where the stamps go back, with the
    part the commands use
    (:func:`~robot_dynamics.core.identification.recording.clean_recording`). Raises what
    :func:`~robot_dynamics.core.identification.recording_files.read_recording` raises, and a
    RecordingError when the efforts the command needs were not measured
    (:meth:`~robot_dynamics.core.identification.recording.Recording.check_efforts_measured`):
    ``measured_efforts`` 'every joint', 'some' (not every joint's is constant) or 'none'.
    """
    from robot_dynamics.core.identification.recording import time_restart_note
    from robot_dynamics.core.identification.recording_files import read_recording

    is_bag = (
        Path(path).suffix.lower() in ('.mcap', '.db3') or (Path(path) / 'metadata.yaml').is_file()
    )
    extra = {'topic': topic} if is_bag else {}
    recording = read_recording(path, effort_model, joint_names=robot.joint_names, **extra)
    for note in (recording.rejection_summary(), time_restart_note(recording)):
        if note:
            print(f'{command}: {path}: {note}', file=sys.stderr)
    if measured_efforts != 'none':
        recording.check_efforts_measured(command, every_joint=measured_efforts == 'every joint')
    return recording


def add_recording_arguments(parser: argparse.ArgumentParser) -> None:
    """--urdf, then --bag or --csv, and --topic: a model and the recording to read with it."""
    parser.add_argument('--urdf', required=True, help='robot description (URDF file)')
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        '--bag',
        help='rosbag2 directory or .mcap/.db3 file with sensor_msgs/JointState, or a folder of '
        'the Gaz et al. 2019 Panda recording (exciting_traj_*.txt)',
    )
    source.add_argument('--csv', help='CSV recording (time, <joint>/position, /velocity, /effort)')
    parser.add_argument(
        '--topic', default='/joint_states', help='JointState topic in bags (default %(default)s)'
    )


def add_model_and_recording_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments :func:`model_and_recording` reads: those of :func:`add_recording_arguments`,
    --effort-model and --rotor-inertia."""
    add_recording_arguments(parser)
    parser.add_argument(
        '--effort-model', metavar='FILE.yaml', help='what the recorded efforts are (currents...)'
    )
    parser.add_argument(
        '--rotor-inertia', metavar='YAML', help='friction YAML whose rotor_inertia the model gets'
    )


def model_and_recording(args, command: str) -> tuple:
    """(robot, cleaned recording) of a command's --urdf, --rotor-inertia (a friction YAML whose
    rotor inertia the model gets), --effort-model and --bag / --csv with --topic; a recording
    sampled more slowly than 10 Hz is refused (stamps in milliseconds?)."""
    from robot_dynamics.core.dynamics.friction import load_friction_file
    from robot_dynamics.core.identification.recording import check_sample_period, clean_recording
    from robot_dynamics.core.model.model import RobotModel
    from robot_dynamics.core.streams.effort_model import load_effort_model

    robot = RobotModel.from_urdf_file(args.urdf)
    robot.check_moving_joints()
    if args.rotor_inertia:
        robot.set_rotor_inertia(
            load_friction_file(args.rotor_inertia, robot.joint_names).rotor_inertia
        )
    effort_model = load_effort_model(args.effort_model)
    if effort_model is not None:
        effort_model = effort_model.for_joints(robot.joint_names)
    recording = read_joint_recording(
        args.bag or args.csv, robot, args.topic, command, effort_model, 'every joint'
    )
    cleaned, report = clean_recording(recording)
    check_sample_period(report)
    return robot, cleaned
