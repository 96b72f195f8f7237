"""Identify a tool's mass and CoM and a wrist F/T sensor's bias from a recorded bag.

`robot_dynamics identify-tool-ft --urdf M --bag DIR [--ft-topic /ft_sensor]`: the bag's
geometry_msgs/WrenchStamped readings (frame: a frame of the URDF) paired with its joint states,
as dynamics_node's ~/identify_tool_from_ft does live: each stretch of at least 0.3 s at rest is a
static pose (at least three orientations more than 10° apart, about two axes), else the motion
itself; too few or too alike orientations are refused with the reason. Prints the tool (sensor
frame) with 1σ and a tools-file entry with its ft_bias. The last two minutes of the bag are used.
See docs/stack.md.

Exit status: 0 with the tool printed; 2 with a one-line reason on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--urdf', required=True, help='robot description (URDF file)')
    parser.add_argument('--bag', required=True, help='rosbag2 with JointState and WrenchStamped')
    parser.add_argument('--topic', default='/joint_states', help='JointState topic in the bag')
    parser.add_argument('--ft-topic', default='/ft_sensor', help='WrenchStamped topic in the bag')
    parser.add_argument('--name', default='tool', help='name of the printed tools-file entry')


def run(args: argparse.Namespace) -> int:
    from robot_dynamics.core.errors import RobotDynamicsError

    try:
        return _run(args)
    except (RobotDynamicsError, OSError, ValueError) as error:
        print(f'identify-tool-ft: {error}', file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    import numpy as np
    import yaml

    from robot_dynamics.commands.recording_input import read_joint_recording
    from robot_dynamics.core.identification.friction_fit import filtered_accelerations
    from robot_dynamics.core.identification.recording import clean_recording
    from robot_dynamics.core.identification.recording_files import read_wrenches
    from robot_dynamics.core.live.ft_sensor import FtSensor, FtSensorError, JointMotion
    from robot_dynamics.core.model.model import RobotModel

    if not args.name.strip():
        raise ValueError('--name must name the tool, got an empty name')
    robot = RobotModel.from_urdf_file(args.urdf)
    recording, _ = clean_recording(
        read_joint_recording(
            args.bag, robot, args.topic, 'identify-tool-ft', measured_efforts='none'
        )
    )
    accelerations = filtered_accelerations(recording, 10.0)
    stamps, frame, wrenches = read_wrenches(args.bag, args.ft_topic)
    sensor = FtSensor(robot)
    skipped = Counter()
    for stamp, wrench in zip(stamps, wrenches):
        k = int(np.clip(np.searchsorted(recording.time, stamp), 0, len(recording.time) - 1))
        joints = JointMotion(
            recording.time[k], recording.positions[k], recording.velocities[k], accelerations[k]
        )
        try:
            sensor.take(float(stamp), frame, wrench, joints)
        except FtSensorError as error:
            if error.reason == 'unknown_frame':
                raise
            skipped[error.reason] += 1  # as the node skips them: the recording's ragged ends
    if skipped:
        print(
            f'skipped {sum(skipped.values())} of {len(stamps)} F/T readings: '
            + ', '.join(f'{reason} {count}' for reason, count in skipped.most_common()),
            file=sys.stderr,
        )
    fit = sensor.identify_tool()
    print(fit.summary())
    entry = {
        'link': frame,
        'mass': float(f'{fit.tool.mass:.6g}'),
        'com': np.round(fit.tool.com, 6).tolist(),
        'ft_bias': np.round(fit.bias, 6).tolist(),
    }
    print(yaml.safe_dump({'tools': {args.name: entry}}, sort_keys=False), end='')
    return 0
