"""Tests of robot_dynamics.core.identification.recording_files: CSV, rosbag2 (sqlite3/mcap) and the
Panda data."""

from pathlib import Path

import numpy as np
import pytest

from robot_dynamics.core.identification.recording import Recording, RecordingError
from robot_dynamics.core.identification.recording_files import (
    PANDA_JOINT_NAMES,
    read_csv,
    read_panda_gaz2019,
    read_recording,
    read_rosbag,
    write_csv,
    write_rosbag,
)

PANDA_DIR = Path(__file__).resolve().parents[1].parent / 'shared' / 'data' / 'panda_gaz2019'


def example_recording(samples: int = 50) -> Recording:
    rng = np.random.default_rng(3)
    time = 0.5 + 0.002 * np.arange(samples)
    values = rng.normal(size=(3, samples, 3))
    return Recording(time, values[0], values[1], values[2], ('shoulder', 'elbow', 'wrist'))


def write_joint_state_bag(path, messages) -> None:
    """A rosbag2 (sqlite3) with one /joint_states connection holding ``messages``, each
    (header stamp [ns], names, positions, velocities, efforts); bag time k + 1 for the k-th."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.LATEST)
    state, header, stamp = (
        store.types[name]
        for name in (
            'sensor_msgs/msg/JointState',
            'std_msgs/msg/Header',
            'builtin_interfaces/msg/Time',
        )
    )
    with Writer(path, version=9) as writer:
        connection = writer.add_connection('/joint_states', state.__msgtype__, typestore=store)
        for k, (nanoseconds, names, positions, velocities, efforts) in enumerate(messages):
            message = state(
                header=header(
                    stamp=stamp(sec=nanoseconds // 10**9, nanosec=nanoseconds % 10**9), frame_id=''
                ),
                name=list(names),
                position=positions,
                velocity=velocities,
                effort=efforts,
            )
            writer.write(connection, k + 1, store.serialize_cdr(message, state.__msgtype__))


def assert_same(a: Recording, b: Recording) -> None:
    assert a.joint_names == b.joint_names
    for field in ('time', 'positions', 'velocities', 'efforts'):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field


def test_csv_round_trip_is_exact_and_header_follows_the_documented_layout(tmp_path):
    rec = example_recording()
    path = tmp_path / 'motion.csv'
    write_csv(path, rec)
    assert (
        path.read_text()
        .splitlines()[0]
        .startswith('time,shoulder/position,shoulder/velocity,shoulder/effort,')
    )
    assert_same(read_csv(path), rec)
    assert read_csv(path, joint_names=['wrist', 'shoulder']).joint_names == ('wrist', 'shoulder')


def test_csv_with_a_missing_column_names_it(tmp_path):
    path = tmp_path / 'bad.csv'
    path.write_text('time,a/position,a/velocity\n0,1,2\n')
    with pytest.raises(RecordingError, match='a/effort'):
        read_csv(path)


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_rosbag_round_trip_keeps_stamps_to_the_nanosecond(tmp_path, storage):
    rec = example_recording()
    write_rosbag(tmp_path / 'bag', rec, storage=storage)
    back = read_recording(tmp_path / 'bag')
    assert back.joint_names == rec.joint_names
    assert np.max(np.abs(back.time - rec.time)) < 1e-9
    assert np.array_equal(back.efforts, rec.efforts) and np.array_equal(
        back.positions, rec.positions
    )


def test_rosbag_merges_joint_states_from_two_drivers_by_name(tmp_path):
    messages = []
    for k, (names, offset) in enumerate(
        [(['arm_b', 'arm_a'], 0.0), (['gripper'], 5.0), (['arm_b', 'arm_a'], 100.0)]
    ):
        value = np.array([offset + i for i in range(len(names))], dtype=float)
        messages.append((10**9 + k * 10**8, names, value, value + 10, value + 20))
    write_joint_state_bag(tmp_path / 'bag', messages)
    rec = read_rosbag(tmp_path / 'bag', joint_names=['arm_a', 'arm_b', 'gripper'])
    assert rec.num_samples == 2  # complete only once the gripper driver has spoken
    assert rec.time == pytest.approx([1.1, 1.2])
    assert rec.positions.tolist() == [[1.0, 0.0, 5.0], [101.0, 100.0, 5.0]]
    assert rec.efforts[1].tolist() == [121.0, 120.0, 25.0]


def test_rosbag_without_efforts_names_the_joints_that_lack_them(tmp_path):
    write_joint_state_bag(
        tmp_path / 'bag', [(10**9, ['a', 'b'], np.zeros(2), np.zeros(2), np.zeros(0))]
    )
    with pytest.raises(
        RecordingError,
        match=r"\['a', 'b'\] never got position, velocity and effort; 0 of 1 messages rejected$",
    ):
        read_rosbag(tmp_path / 'bag')


def test_rosbag_with_an_unknown_topic_lists_the_topics_it_has(tmp_path):
    write_rosbag(tmp_path / 'bag', example_recording(), topic='/arm/joint_states')
    with pytest.raises(RecordingError, match='/arm/joint_states'):
        read_rosbag(tmp_path / 'bag')
    with pytest.raises(RecordingError, match='does not exist'):
        read_rosbag(tmp_path / 'missing')


@pytest.mark.skipif(not PANDA_DIR.is_dir(), reason=f'real-robot data not found at {PANDA_DIR}')
def test_panda_reader_matches_the_raw_files():
    rec = read_panda_gaz2019(PANDA_DIR)
    assert rec.joint_names == PANDA_JOINT_NAMES and rec.num_samples == 20544
    torque_lines = (PANDA_DIR / 'exciting_traj_torques.txt').read_text().split()
    time_lines = (PANDA_DIR / 'exciting_traj_time.txt').read_text().split()
    assert rec.efforts[1].tolist() == [float(v) for v in torque_lines[7:14]]
    assert rec.time[-1] == float(time_lines[-1])
    assert read_recording(PANDA_DIR, joint_names=['panda_joint7']).positions.shape == (20544, 1)


def test_unknown_formats_are_refused(tmp_path):
    (tmp_path / 'x.txt').write_text('1 2 3')
    with pytest.raises(RecordingError, match='cannot tell the format'):
        read_recording(tmp_path / 'x.txt')
    with pytest.raises(RecordingError, match='neither a rosbag2'):
        read_recording(tmp_path)


def test_csv_with_a_repeated_column_names_it(tmp_path):
    """A column named twice is refused by name: neither of the two may silently win."""
    path = tmp_path / 'repeated.csv'
    path.write_text('time,a/position,a/velocity,a/effort,a/position\n0,1,2,3,99\n0.01,1,2,3,98\n')
    with pytest.raises(RecordingError, match='column "a/position" appears more than once'):
        read_csv(path)


def test_csv_with_a_short_row_says_which_line_has_how_many_values(tmp_path):
    """A row with too few or too many values is refused with its line number and its count."""
    path = tmp_path / 'ragged.csv'
    path.write_text('time,a/position,a/velocity,a/effort\n0,1,2,3\n\n0.01,1,2\n0.02,1,2,3\n')
    with pytest.raises(RecordingError, match='line 4 has 3 values, the header 4 columns'):
        read_csv(path)
    path.write_text('time,a/position,a/velocity,a/effort\n0,1,2,3,\n')  # a trailing comma: 5 values
    with pytest.raises(RecordingError, match='line 2 has 5 values'):
        read_csv(path)


def test_csv_with_a_cell_that_is_not_a_number_names_its_line_and_column(tmp_path):
    path = tmp_path / 'typo.csv'
    path.write_text('time,a/position,a/velocity,a/effort\n0,1,2,3\n\n0.01,1,2,3\n0.02,1,,3\n')
    with pytest.raises(RecordingError, match='line 5, column "a/velocity": \'\' is not a number'):
        read_csv(path)
    path.write_text('time,a/position,a/velocity,a/effort\n0,1,2,3\n0.01,abc,2,3\n')
    with pytest.raises(
        RecordingError, match='line 3, column "a/position": \'abc\' is not a number'
    ):
        read_csv(path)


def nan_bag(path, samples: int = 100, joint_names=('j1', 'j2')) -> Recording:
    """A bag of ``samples`` messages, every 10th with a NaN effort and the 6th with a position
    beyond the merger's ±1e6 range: 11 messages the merger must refuse."""
    time = 100.0 + 0.01 * np.arange(samples)
    positions = np.stack(
        [np.sin(time), np.cos(time)] + [time * 0.0] * (len(joint_names) - 2), axis=1
    )
    efforts = positions.copy()
    efforts[::10, 1] = np.nan
    positions[5, 0] = 1e7
    write_rosbag(
        path, Recording(time, positions, positions.copy(), efforts, joint_names), storage='mcap'
    )


def test_a_bag_whose_joint_always_reports_a_nan_effort_is_refused_naming_it(tmp_path):
    # ros2_control's joint_state_broadcaster: NaN for a joint without an effort interface
    time = 100.0 + 0.01 * np.arange(30)
    positions = np.stack([np.sin(time), np.cos(time), 0.01 + 0 * time], axis=1)
    efforts = positions.copy()
    efforts[:, 2] = np.nan
    joints = ('j1', 'j2', 'finger')
    write_rosbag(tmp_path / 'bag', Recording(time, positions, positions, efforts, joints))
    with pytest.raises(RecordingError) as error:
        read_recording(tmp_path / 'bag')
    assert '30 of 30 messages rejected (non_finite: 30); NaN in: finger effort (30)' in str(
        error.value
    )


def test_rosbag_counts_the_messages_the_merger_rejects_per_reason(tmp_path):
    """The messages the merger refuses are counted per reason and summarised in words."""
    nan_bag(tmp_path / 'bag')
    rec = read_recording(tmp_path / 'bag')
    assert rec.num_samples == 89 and rec.messages == 100
    assert rec.rejected == {'non_finite': 10, 'out_of_range': 1}
    assert (
        rec.rejection_summary() == '11 of 100 messages rejected (non_finite: 10, out_of_range: 1)'
    )
    write_rosbag(tmp_path / 'clean', example_recording())
    clean = read_rosbag(tmp_path / 'clean')
    assert clean.rejected == {} and clean.rejection_summary() == '' and clean.messages == 50
    assert example_recording().rejection_summary() == ''  # a plain Recording has nothing left out


def test_files_that_are_not_utf8_text_are_refused_by_name(tmp_path):
    """A file that is not UTF-8 text is refused as a RecordingError naming the file."""
    junk = b'time,\x89PNG\r\n\x1a\n\xff\xfe' + bytes(range(256))
    (tmp_path / 'junk.csv').write_bytes(junk)
    with pytest.raises(
        RecordingError, match=f'cannot read {tmp_path / "junk.csv"}: not UTF-8 text'
    ):
        read_csv(tmp_path / 'junk.csv')
    for name in (
        'exciting_traj_time.txt',
        'exciting_traj_positions.txt',
        'exciting_traj_velocity.txt',
        'exciting_traj_torques.txt',
    ):
        (tmp_path / name).write_bytes(junk)
    with pytest.raises(RecordingError, match='exciting_traj_time.txt: not UTF-8 text'):
        read_panda_gaz2019(tmp_path)


def test_panda_files_that_are_empty_or_hold_a_word_are_named(tmp_path):
    names = ('time', 'positions', 'velocity', 'torques')
    for name in names:
        (tmp_path / f'exciting_traj_{name}.txt').write_text(
            '0 0 0 0 0 0 0\n' if name != 'time' else ''
        )
    with pytest.raises(RecordingError, match='exciting_traj_time.txt holds no numbers'):
        read_panda_gaz2019(tmp_path)
    (tmp_path / 'exciting_traj_time.txt').write_text('0\n0.001\n')
    (tmp_path / 'exciting_traj_positions.txt').write_text('0 0 0 0 0 0 0\n0 abc 0 0 0 0 0\n')
    with pytest.raises(RecordingError, match="exciting_traj_positions.txt: .*'abc'"):
        read_panda_gaz2019(tmp_path)


def test_rosbag_counts_messages_whose_stamp_steps_back(tmp_path):
    """Header stamps going back (a driver restart) while the bag time goes on: out_of_order."""
    write_joint_state_bag(
        tmp_path / 'bag',
        [
            (10**9 + milliseconds * 10**6, ['a'], np.zeros(1), np.zeros(1), np.zeros(1))
            for milliseconds in [0, 100, 50, 60, 200]
        ],
    )
    rec = read_rosbag(tmp_path / 'bag')
    assert rec.time == pytest.approx([1.0, 1.1, 1.2])
    assert rec.rejected == {'out_of_order': 2}


def test_a_bag_whose_time_restarts_is_cleaned_to_its_longest_part_and_says_so(tmp_path):
    """A driver restarted with a new clock 1.2 s into a recording (bag time goes on, header
    stamps go back 1.17 s): the merge starts again there (the restart's first two messages are
    out of order until the third shows it), the rows go back in time, and the cleaning keeps
    the longest part with its own values, not the two parts sorted into each other."""
    from robot_dynamics.core.identification.recording import clean_recording, time_restart_note

    stamps = [1.0 + 0.01 * k for k in range(120)] + [0.05 + 0.01 * k for k in range(80)]
    values = np.arange(len(stamps), dtype=float)  # a joint position that tells each row apart
    write_joint_state_bag(
        tmp_path / 'bag',
        [
            (round(stamp * 1e9), ['a'], np.array([value]), np.array([0.5]), np.array([2.0]))
            for stamp, value in zip(stamps, values)
        ],
    )
    rec = read_rosbag(tmp_path / 'bag')
    assert rec.rejected == {'out_of_order': 2} and len(rec.time) == 198
    cleaned, report = clean_recording(rec)
    assert np.array_equal(cleaned.positions[:, 0], values[:120])
    assert report.time_restarts == (pytest.approx((2.19, 0.07)),)
    assert report.part_used == pytest.approx((1.0, 2.19)) and report.other_parts_removed == 78
    note = time_restart_note(rec)
    assert note == report.restart_note() and '2.190 s → 0.070 s' in note and '78 rows' in note
    assert time_restart_note(cleaned) == ''


def test_identify_payload_cli_prints_the_rejected_bag_messages(tmp_path, capsys):
    from robot_dynamics.cli import main
    from robot_dynamics.core.model.model import RobotModel
    from robot_dynamics.models import ARM_URDF

    joints = RobotModel.from_urdf_file(ARM_URDF).joint_names
    nan_bag(tmp_path / 'bag', joint_names=joints)
    main(['identify-payload', '--urdf', str(ARM_URDF), '--bag', str(tmp_path / 'bag')])
    assert (
        f'{tmp_path / "bag"}: 11 of 100 messages rejected (non_finite: 10, out_of_range: 1)'
        in capsys.readouterr().err
    )


def test_identify_payload_cli_says_where_the_stamps_go_back(tmp_path, capsys):
    from robot_dynamics.cli import main
    from robot_dynamics.core.model.model import RobotModel
    from robot_dynamics.models import ARM_URDF

    joints = RobotModel.from_urdf_file(ARM_URDF).joint_names
    stamps = [10.0 + 0.005 * k for k in range(300)] + [5.0 + 0.005 * k for k in range(100)]
    write_joint_state_bag(
        tmp_path / 'bag',
        [(round(stamp * 1e9), joints, np.zeros(7), np.zeros(7), np.zeros(7)) for stamp in stamps],
    )
    main(['identify-payload', '--urdf', str(ARM_URDF), '--bag', str(tmp_path / 'bag')])
    said = capsys.readouterr().err
    assert f'{tmp_path / "bag"}: the stamps go back (11.495 s → 5.010 s' in said, said
    assert 'the longest part, 10.000..11.495 s, is used and 98 rows' in said, said


def test_an_effort_delay_pairs_each_effort_with_the_state_that_long_before():
    # closed forms: q(t) = sin t (a revolute joint) and a continuous joint turning at 2 rad/s,
    # wrapped to (-π, π]; each effort is a function of the state `delay` before its stamp
    period, delay = 0.001, 0.0043
    time = np.arange(0.0, 5.0, period)
    turning = 2.0 * time
    positions = np.column_stack([np.sin(time), np.angle(np.exp(1j * turning))])
    velocities = np.column_stack([np.cos(time), np.full(len(time), 2.0)])
    efforts = np.column_stack([3.0 * np.sin(time - delay), 2.0 * (time - delay)])
    shifted = Recording(time, positions, velocities, efforts, ('arm', 'wheel')).with_effort_delay(
        delay
    )
    np.testing.assert_allclose(shifted.time, time[time >= delay] - delay, atol=1e-15)
    assert shifted.num_samples == len(time) - 5  # 5 stamps before t_0 + delay
    # linear interpolation of sin between samples 1 ms apart: within period² / 8
    np.testing.assert_allclose(shifted.positions[:, 0], np.sin(shifted.time), atol=2e-7)
    np.testing.assert_allclose(shifted.velocities[:, 0], np.cos(shifted.time), atol=2e-7)
    np.testing.assert_allclose(shifted.efforts[:, 0], 3.0 * shifted.positions[:, 0], atol=1e-6)
    # the continuous joint's positions are its unwrapped angle: no sample through 0 at a turn
    np.testing.assert_allclose(shifted.positions[:, 1], 2.0 * shifted.time, atol=1e-9)
    np.testing.assert_allclose(shifted.efforts[:, 1], shifted.positions[:, 1], atol=1e-9)
