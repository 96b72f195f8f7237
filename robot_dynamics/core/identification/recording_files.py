"""Readers and writers of recorded joint motions; every reader returns a :class:`Recording`.

Formats:

* CSV: header ``time``, then per joint ``<joint>/position``, ``<joint>/velocity``,
  ``<joint>/effort``; one row per sample; time in s, SI values (rad, rad/s, N·m).
  Efforts that are motor currents or motor-side torques are turned into joint torques by an
  :class:`~robot_dynamics.core.streams.effort_model.EffortModel`
  (``read_recording(effort_model=...)``).
* rosbag2 (sqlite3 or mcap storage, read with the ``rosbags`` library, no ROS needed):
  ``sensor_msgs/JointState`` messages, merged by joint name like the live node (several
  drivers may each publish a subset); the stamp is the header stamp (the bag receive time
  when the header stamp is zero). Messages the merger refuses (NaN/Inf, beyond ±1e6,
  older than the last sample of their joints...) add no row; the returned
  :class:`BagRecording` counts them per reason, and the command-line tools print the count.
* The whitespace format of the Gaz et al. 2019 Panda data (``exciting_traj_*.txt``: one
  number per line, 7 lines per sample).
"""

from __future__ import annotations

import csv
import math
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from robot_dynamics.core.errors import JointStateError
from robot_dynamics.core.identification.recording import (
    TIME_RESTART_STEP,
    Recording,
    RecordingError,
)
from robot_dynamics.core.streams.joint_states import JointStateMerger, TimeWentBack

if TYPE_CHECKING:
    from robot_dynamics.core.streams.effort_model import EffortModel

_FIELDS = ('position', 'velocity', 'effort')
_PANDA_FILES = (
    'exciting_traj_time.txt',
    'exciting_traj_positions.txt',
    'exciting_traj_velocity.txt',
    'exciting_traj_torques.txt',
)
PANDA_JOINT_NAMES = tuple(f'panda_joint{i}' for i in range(1, 8))
_BAG_SUFFIXES = ('.mcap', '.db3')


@dataclass
class BagRecording(Recording):
    """A :class:`Recording` read from a bag, with the messages the merge left out.

    ``messages``: JointState messages read from the topic; ``rejected``: how many of them
    :class:`~robot_dynamics.core.streams.joint_states.JointStateMerger` refused, per reason (keys of
    ``joint_states.REJECTION_REASONS``: ``'non_finite'``, ``'out_of_range'``,
    ``'out_of_order'``, ``'bad_stamp'``...). A refused message adds no row, so
    :func:`~robot_dynamics.core.identification.recording.clean_recording` never sees it: these
    counts are the
    only trace of it. (:meth:`select_joints` returns a plain Recording without them.)
    """

    messages: int = 0
    rejected: dict = field(default_factory=dict)

    def rejection_summary(self) -> str:
        """'' when every message was taken, else e.g. '10 of 100 messages rejected (non_finite:
        10)'."""
        return _rejections(self.rejected, self.messages) if self.rejected else ''


def _rejections(rejected: dict, messages: int) -> str:
    """E.g. '10 of 100 messages rejected (non_finite: 10)'; the reasons in alphabetical order."""
    reasons = ', '.join(f'{reason}: {count}' for reason, count in sorted(rejected.items()))
    return f'{sum(rejected.values())} of {messages} messages rejected' + (
        f' ({reasons})' if reasons else ''
    )


def read_csv(path, joint_names: Optional[Sequence[str]] = None) -> Recording:
    """Read the CSV layout above; ``joint_names`` selects / reorders joints (default: file order).

    Raises :class:`RecordingError` naming the problem: a column that is not ``time`` or
    ``<joint>/<field>``, a column that appears twice, a missing column, a line (numbered from
    1, the header) whose number of values differs from the header's, a value that is not a
    number, a file that is not UTF-8 text. Empty lines are skipped.
    """
    path = Path(path)
    try:
        with path.open(newline='', encoding='utf-8') as handle:
            rows = list(csv.reader(handle))
    except OSError as error:
        raise RecordingError(f'cannot read CSV recording {path}: {error.strerror}') from None
    except UnicodeDecodeError as error:
        raise _not_utf8(path, error) from None
    if len(rows) < 2:
        raise RecordingError(f'CSV recording {path} has no data rows')
    header = [cell.strip() for cell in rows[0]]
    if not header or header[0] != 'time':
        raise RecordingError(f'CSV recording {path}: first column must be "time", got {header[:1]}')
    repeated = [column for k, column in enumerate(header) if column in header[:k]]
    if repeated:
        raise RecordingError(f'CSV recording {path}: column "{repeated[0]}" appears more than once')
    names = []
    for column in header[1:]:
        joint, _, kind = column.rpartition('/')
        if kind not in _FIELDS or not joint:
            raise RecordingError(
                f'CSV recording {path}: column "{column}" is not <joint>/position|velocity|effort'
            )
        if joint not in names:
            names.append(joint)
    index = {column: i for i, column in enumerate(header)}
    missing = [
        f'{joint}/{kind}' for joint in names for kind in _FIELDS if f'{joint}/{kind}' not in index
    ]
    if missing:
        raise RecordingError(f'CSV recording {path} lacks columns {missing}')
    for line, row in enumerate(rows[1:], start=2):
        if row and len(row) != len(header):
            raise RecordingError(
                f'CSV recording {path}: line {line} has {len(row)} values, the header '
                f'{len(header)} columns'
            )
    table = np.array(
        [_numbers(path, line, row, header) for line, row in enumerate(rows[1:], start=2) if row],
        dtype=float,
    )
    columns = {kind: table[:, [index[f'{joint}/{kind}'] for joint in names]] for kind in _FIELDS}
    recording = Recording(
        table[:, 0], columns['position'], columns['velocity'], columns['effort'], tuple(names)
    )
    return recording.select_joints(joint_names) if joint_names is not None else recording


def _numbers(path: Path, line: int, row: list, header: list) -> list:
    """The cells of CSV ``row`` (at ``line``, numbered from 1) as floats; RecordingError naming
    the line and column of a cell that is not a number."""
    try:
        return [float(cell) for cell in row]
    except ValueError:
        column = next(k for k, cell in enumerate(row) if not _is_number(cell))
        raise RecordingError(
            f'CSV recording {path}: line {line}, column "{header[column]}": '
            f'{row[column]!r} is not a number'
        ) from None


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def write_csv(path, rec: Recording) -> None:
    """Write ``rec`` in the CSV layout above (full float precision)."""
    header = ['time'] + [f'{joint}/{kind}' for joint in rec.joint_names for kind in _FIELDS]
    interleaved = np.stack([rec.positions, rec.velocities, rec.efforts], axis=2).reshape(
        len(rec.time), -1
    )
    with Path(path).open('w', newline='', encoding='utf-8') as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for stamp, row in zip(rec.time, interleaved):
            writer.writerow([repr(float(stamp))] + [repr(float(v)) for v in row])


def _typestore():
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.LATEST)


def read_rosbag(
    path, topic: str = '/joint_states', joint_names: Optional[Sequence[str]] = None
) -> BagRecording:
    """Read ``sensor_msgs/JointState`` messages of ``topic`` from a rosbag2 (directory, or a
    single .mcap / .db3 file) into a Recording.

    Messages are merged by name; a row is emitted at every accepted message once every joint
    has a position, velocity and effort. A message the merger rejects is skipped and counted
    under its reason in :attr:`BagRecording.rejected`. ``joint_names`` defaults to every name
    seen, in order of first appearance.
    """
    messages = _joint_state_messages(Path(path), topic)
    if not messages:
        raise RecordingError(f'bag {path} has no messages on topic "{topic}"')
    if joint_names is None:
        joint_names = list(dict.fromkeys(name for names, *_ in messages for name in names))
    return _merged_recording(messages, tuple(joint_names), f'bag {path}')


def _joint_state_messages(path: Path, topic: str) -> list:
    messages = []
    for message, receive_time in _bag_messages(path, topic, 'sensor_msgs/msg/JointState'):
        stamp = message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
        messages.append(
            (
                tuple(message.name),
                np.asarray(message.position),
                np.asarray(message.velocity),
                np.asarray(message.effort),
                stamp if stamp > 0.0 else 1e-9 * receive_time,
            )
        )
    return messages


def read_wrenches(path, topic: str) -> tuple:
    """(stamps (N,) [s], frame_id, wrenches (N, 6) [N, N·m]) of the ``geometry_msgs/
    WrenchStamped`` messages of ``topic`` in a rosbag2 (header stamps; the bag's receive time when
    a stamp is zero). Raises :class:`RecordingError` for a missing topic, another type, several
    frames or no message."""
    stamps, frames, wrenches = [], set(), []
    for message, receive_time in _bag_messages(
        Path(path), topic, 'geometry_msgs/msg/WrenchStamped'
    ):
        stamp = message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
        stamps.append(stamp if stamp > 0.0 else 1e-9 * receive_time)
        frames.add(message.header.frame_id)
        force, torque = message.wrench.force, message.wrench.torque
        wrenches.append([force.x, force.y, force.z, torque.x, torque.y, torque.z])
    if not stamps:
        raise RecordingError(f'bag {path} has no messages on topic "{topic}"')
    if len(frames) != 1:
        raise RecordingError(f'topic "{topic}" in bag {path} has several frames: {sorted(frames)}')
    return np.array(stamps), frames.pop(), np.array(wrenches)


def _bag_messages(path: Path, topic: str, message_type: str) -> list:
    """[(message, receive time [ns])] of ``topic`` in the bag at ``path``; RecordingError for a
    missing bag or topic, another message type or a bag rosbags cannot read."""
    from rosbags.rosbag2 import Reader

    if not path.exists():
        raise RecordingError(f'bag {path} does not exist')
    typestore = _typestore()
    short_type = message_type.replace('/msg/', '/')
    try:
        with Reader(path) as reader:
            connections = [c for c in reader.connections if c.topic == topic]
            if not connections:
                topics = sorted({c.topic for c in reader.connections})
                raise RecordingError(f'bag {path} has no topic "{topic}" (topics: {topics})')
            wrong = [c.msgtype for c in connections if c.msgtype != message_type]
            if wrong:
                raise RecordingError(
                    f'topic "{topic}" in bag {path} carries {wrong[0]}, not {short_type}'
                )
            return [
                (typestore.deserialize_cdr(raw, connection.msgtype), receive_time)
                for connection, receive_time, raw in reader.messages(connections=connections)
            ]
    except RecordingError:
        raise
    except Exception as error:  # rosbags raises several unrelated types for corrupt bags
        raise RecordingError(f'cannot read bag {path}: {error}') from None


def _merged_recording(messages: list, joint_names: tuple, source: str) -> BagRecording:
    """The rows of ``messages`` merged as the live node merges joint states; where their time
    restarts (a bag of a loop, a restarted driver) the merge starts again, and the rows go back
    in time there (:func:`~robot_dynamics.core.identification.recording.clean_recording` keeps
    the longest part)."""
    merger = JointStateMerger(joint_names, stale_timeout=TIME_RESTART_STEP)
    rows, rejected, nans, known = [], Counter(), Counter(), frozenset(joint_names)
    for names, positions, velocities, efforts, stamp in messages:
        not_numbers = _nans_of_joints(names, (positions, velocities, efforts), known)
        if not_numbers:  # a row needs every value: a NaN is no 'not reported' here
            rejected['non_finite'] += 1
            nans.update(not_numbers)
            continue
        try:
            try:
                merger.update(names, positions, velocities, efforts, stamp)
            except TimeWentBack:
                merger = JointStateMerger(joint_names, stale_timeout=TIME_RESTART_STEP)
                merger.update(names, positions, velocities, efforts, stamp)
        except JointStateError as error:
            rejected[error.reason] += 1
            continue
        if _every_joint_seen(merger):
            rows.append((stamp, merger.positions, merger.velocities, merger.efforts))
    if not rows:
        seen = np.isfinite(merger.stamps).all(axis=0)
        lacking = [name for name, ok in zip(joint_names, seen) if not ok]
        raise RecordingError(
            f'{source}: joints {lacking} never got position, velocity and effort; '
            f'{_rejections(rejected, len(messages))}{_nans_named(nans)}'
        )
    return BagRecording(
        np.array([r[0] for r in rows]),
        np.array([r[1] for r in rows]),
        np.array([r[2] for r in rows]),
        np.array([r[3] for r in rows]),
        joint_names,
        messages=len(messages),
        rejected=dict(rejected),
    )


def _nans_of_joints(names: Sequence[str], fields: tuple, joints: frozenset) -> list:
    """('joint field', ...) of a message's NaN values for ``joints`` (fields of another length
    than ``names`` are left to the merger, which refuses them)."""
    found = []
    for label, values in zip(('position', 'velocity', 'effort'), fields):
        if len(values) == len(names):
            found += [
                f'{name} {label}'
                for name, value in zip(names, values)
                if name in joints and math.isnan(value)
            ]
    return found


def _nans_named(nans: Counter) -> str:
    """'' or '; NaN in: <joint> <field> (<messages>), ...' (ros2_control's broadcaster fills
    NaN for a joint without that sensor)."""
    if not nans:
        return ''
    named = ', '.join(f'{entry} ({count})' for entry, count in nans.most_common(4))
    return (
        f'; NaN in: {named} (a joint without that sensor, as ros2_control reports it: give a '
        'URDF where that joint is fixed)'
    )


def _every_joint_seen(merger: JointStateMerger) -> bool:
    """True once every joint has had a position, a velocity and an effort."""
    return bool(np.isfinite(merger.stamps).all())


def write_rosbag(
    path, rec: Recording, topic: str = '/joint_states', storage: str = 'sqlite3'
) -> None:
    """Write ``rec`` as ``sensor_msgs/JointState`` messages into a new rosbag2 directory.

    ``storage`` is ``'sqlite3'`` or ``'mcap'``; the header stamp and bag time are ``rec.time``.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer

    plugins = {'sqlite3': StoragePlugin.SQLITE3, 'mcap': StoragePlugin.MCAP}
    if storage not in plugins:
        raise RecordingError(f"storage must be 'sqlite3' or 'mcap', got {storage!r}")
    typestore = _typestore()
    joint_state = typestore.types['sensor_msgs/msg/JointState']
    header, stamp_type = (
        typestore.types['std_msgs/msg/Header'],
        typestore.types['builtin_interfaces/msg/Time'],
    )
    with Writer(Path(path), version=9, storage_plugin=plugins[storage]) as writer:
        connection = writer.add_connection(topic, joint_state.__msgtype__, typestore=typestore)
        for k, stamp in enumerate(rec.time):
            nanoseconds = int(round(float(stamp) * 1e9))
            message = joint_state(
                header=header(
                    stamp=stamp_type(sec=nanoseconds // 10**9, nanosec=nanoseconds % 10**9),
                    frame_id='',
                ),
                name=list(rec.joint_names),
                position=rec.positions[k].astype(float),
                velocity=rec.velocities[k].astype(float),
                effort=rec.efforts[k].astype(float),
            )
            writer.write(
                connection, nanoseconds, typestore.serialize_cdr(message, joint_state.__msgtype__)
            )


def read_panda_gaz2019(folder) -> Recording:
    """Read the Gaz et al. 2019 Panda excitation data (``exciting_traj_*.txt`` in ``folder``).

    Joints are named ``panda_joint1..7``; torques are the link-side measurements [N·m].
    """
    folder = Path(folder)
    missing = [name for name in _PANDA_FILES if not (folder / name).is_file()]
    if missing:
        raise RecordingError(f'{folder} is not a Panda Gaz 2019 data folder: missing {missing}')
    time = _load_numbers(folder / _PANDA_FILES[0])
    arrays = []
    for name in _PANDA_FILES[1:]:
        values = _load_numbers(folder / name)
        if values.size != 7 * time.size:
            raise RecordingError(
                f'{folder / name} has {values.size} numbers, expected 7 × {time.size}'
            )
        arrays.append(values.reshape(time.size, 7))
    return Recording(time, arrays[0], arrays[1], arrays[2], PANDA_JOINT_NAMES)


def _load_numbers(path: Path) -> np.ndarray:
    """The whitespace-separated numbers of a text file, as a 1-D or 2-D array; RecordingError
    naming the file when it holds none or something that is not a number."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('error', UserWarning)  # numpy's "input contained no data"
            return np.loadtxt(path, ndmin=1)
    except UnicodeDecodeError as error:
        raise _not_utf8(path, error) from None
    except UserWarning:
        raise RecordingError(f'{path} holds no numbers') from None
    except ValueError as error:
        raise RecordingError(f'{path}: {error}') from None


def _not_utf8(path: Path, error: UnicodeDecodeError) -> RecordingError:
    return RecordingError(f'cannot read {path}: not UTF-8 text ({error.reason}); save it as UTF-8')


def read_recording(path, effort_model: Optional['EffortModel'] = None, **kw) -> Recording:
    """Read any supported recording, chosen by extension or directory content.

    ``.csv`` → :func:`read_csv`; ``.mcap``/``.db3`` or a rosbag2 directory → :func:`read_rosbag`;
    a directory with ``exciting_traj_time.txt`` → :func:`read_panda_gaz2019`. ``kw`` go to
    the reader (``joint_names``; ``topic`` for bags). With ``effort_model``
    (:class:`~robot_dynamics.core.streams.effort_model.EffortModel`), the efforts the file holds
    (currents, motor torques) are returned as joint torques [N·m].
    """
    recording = _read_any(Path(path), **kw)
    return recording if effort_model is None else effort_model.converted(recording)


def _read_any(path: Path, **kw) -> Recording:
    """:func:`read_recording` without the effort conversion."""
    if not path.exists():
        raise RecordingError(f'recording {path}: no such file or directory')
    if path.is_dir():
        if (path / _PANDA_FILES[0]).is_file():
            recording = read_panda_gaz2019(path)
            names = kw.get('joint_names')
            return recording.select_joints(names) if names is not None else recording
        if (path / 'metadata.yaml').is_file() or any(
            p.suffix in _BAG_SUFFIXES for p in path.iterdir()
        ):
            return read_rosbag(path, **kw)
        raise RecordingError(
            f'directory {path} is neither a rosbag2 nor a Panda Gaz 2019 data folder'
        )
    if path.suffix.lower() == '.csv':
        return read_csv(path, **kw)
    if path.suffix.lower() in _BAG_SUFFIXES:
        return read_rosbag(path, **kw)
    raise RecordingError(
        f'cannot tell the format of {path}: expected .csv, .mcap, .db3 or a directory'
    )
