"""A recorded bag or CSV read for a command: joints in model order, efforts as joint torques,
and the messages the reader refused reported on stderr under the command's name."""

from __future__ import annotations

import sys
from pathlib import Path


def read_joint_recording(path, robot, topic: str, command: str, effort_model=None):
    """The :class:`~robot_dynamics.core.identification.recording.Recording` at ``path`` in
    ``robot.joint_names`` order, efforts in N·m (N for prismatic joints).

    ``topic``: the JointState topic, read in bags only; ``effort_model``
    (:class:`~robot_dynamics.core.streams.effort_model.EffortModel`) converts recorded currents
    or motor torques. Messages the reader refused (NaN, out of range, out of order...) are
    counted on stderr as ``<command>: <path>: <counts>``. Raises what
    :func:`~robot_dynamics.core.identification.recording_files.read_recording` raises.
    """
    from robot_dynamics.core.identification.recording_files import read_recording

    is_bag = (
        Path(path).suffix.lower() in ('.mcap', '.db3') or (Path(path) / 'metadata.yaml').is_file()
    )
    extra = {'topic': topic} if is_bag else {}
    recording = read_recording(path, effort_model, joint_names=robot.joint_names, **extra)
    rejected = recording.rejection_summary()
    if rejected:
        print(f'{command}: {path}: {rejected}', file=sys.stderr)
    return recording
