"""`robot_dynamics external-wrench` on a recorded bag of the simulated arm pushed at its tool
(the push is the reference)."""

import csv

import numpy as np
import pytest

from robot_dynamics.cli import main
from robot_dynamics.core.identification.recording import Recording
from robot_dynamics.core.identification.recording_files import write_csv, write_rosbag
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF
from robot_dynamics.simulation.reference import ArmSimulation, scripted_excitation

PUSH = np.array([6.0, -9.0, 4.0, 0.2, 0.0, -0.3])


@pytest.fixture(scope='module')
def pushed_bag(tmp_path_factory):
    """2 s of the arm at 250 Hz, pushed at tool0 from 1 s on."""
    robot = RobotModel.from_urdf_file(ARM_URDF)
    simulation = ArmSimulation(robot, scripted_excitation(robot))
    samples = []
    for step in range(2000):
        if step == 1000:
            simulation.set_external_wrench('tool0', PUSH[:3], PUSH[3:])
        sample = simulation.advance()
        if step % 4 == 0:
            samples.append(sample)
    recording = Recording(
        np.array([s.time for s in samples]) + 10.0,
        [s.positions for s in samples],
        [s.velocities for s in samples],
        [s.efforts for s in samples],
        robot.joint_names,
    )
    path = tmp_path_factory.mktemp('bags') / 'pushed'
    write_rosbag(path, recording)
    return path


@pytest.mark.parametrize('momentum, starting', [('positions', 2), ('velocities', 1)])
def test_cli_recovers_the_push_from_a_bag(pushed_bag, tmp_path, momentum, starting):
    output = tmp_path / 'wrench.csv'
    assert (
        main(
            [
                'external-wrench',
                '--urdf',
                str(ARM_URDF),
                '--bag',
                str(pushed_bag),
                '--frame',
                'tool0',
                '--gain',
                '100',
                '--momentum',
                momentum,
                '--output',
                str(output),
            ]
        )
        == 0
    )
    with open(output, newline='') as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 500 and all(
        row['force_x'] == '' for row in rows[:starting]
    )  # they start the observer
    stamps = np.array([float(row['time']) for row in rows])  # plain numbers, in seconds
    assert stamps[0] == pytest.approx(10.0, abs=0.004)
    assert np.allclose(np.diff(stamps), 0.004)
    assert rows[starting]['force_x'] != ''
    columns = ['force_x', 'force_y', 'force_z', 'torque_x', 'torque_y', 'torque_z']
    free = np.array([[float(row[c]) for c in columns] for row in rows[starting:250]])
    settled = np.array(
        [[float(row[c]) for c in columns] for row in rows[300:]]
    )  # 0.2 s = 20/K after the push
    assert np.max(np.abs(free)) < 0.1
    # noise-free; what remains is the quadrature over 4 ms samples of a plant stepped every 1 ms
    error = np.abs(settled.mean(axis=0) - PUSH)
    assert np.all(error[:3] < 0.15) and np.all(error[3:] < 0.03), error
    assert {row['identifiable'] for row in rows[starting:]} == {'6'}


def _forces(bag, folder, *options) -> np.ndarray:
    """The force columns [N] of `external-wrench` on ``bag`` at tool0 (gain 100, velocities),
    NaN where the observer restarted."""
    output = folder / f'wrench{len(list(folder.iterdir()))}.csv'
    arguments = ['external-wrench', '--urdf', str(ARM_URDF), '--bag', str(bag)]
    arguments += ['--frame', 'tool0', '--gain', '100', '--momentum', 'velocities']
    assert main([*arguments, *options, '--output', str(output)]) == 0
    with open(output, newline='') as handle:
        rows = list(csv.DictReader(handle))
    return np.array(
        [[float(row[c] or 'nan') for c in ('force_x', 'force_y', 'force_z')] for row in rows]
    )


def test_cli_filter_gain_slows_the_rise_and_keeps_the_settled_push(pushed_bag, tmp_path):
    """With --filter-gain 100 the push (from row 250, 4 ms rows) rises as the cascade of two
    100 /s low-passes: 19 % of it 8 ms in against 55 % without the stage; settled, the same."""
    plain, filtered = (
        _forces(pushed_bag, tmp_path),
        _forces(pushed_bag, tmp_path, '--filter-gain', '100'),
    )
    early = 252  # 8 ms after the push
    share = [np.linalg.norm(f[early]) / np.linalg.norm(PUSH[:3]) for f in (plain, filtered)]
    assert share[0] == pytest.approx(1 - np.exp(-0.8), abs=0.1)
    assert share[1] == pytest.approx(1 - np.exp(-0.8) * 1.8, abs=0.1)  # 1 − (1 + Kt) e^{−Kt}
    assert np.all(np.abs(filtered[300:].mean(axis=0) - PUSH[:3]) < 0.15)


def test_cli_refuses_a_negative_filter_gain(pushed_bag, capsys):
    arguments = ['external-wrench', '--urdf', str(ARM_URDF), '--bag', str(pushed_bag)]
    assert main([*arguments, '--filter-gain', '-1']) == 1
    assert 'filter gain' in capsys.readouterr().err


def test_cli_names_an_unknown_frame_and_exits_1(pushed_bag, capsys):
    assert (
        main(
            [
                'external-wrench',
                '--urdf',
                str(ARM_URDF),
                '--bag',
                str(pushed_bag),
                '--frame',
                'nowhere',
            ]
        )
        == 1
    )
    assert 'nowhere' in capsys.readouterr().err


def test_cli_refuses_a_bad_friction_file(pushed_bag, tmp_path, capsys):
    friction = tmp_path / 'friction.yaml'
    friction.write_text('joints:\n  elbow: {viscous: 1.0}\n')
    assert (
        main(
            [
                'external-wrench',
                '--urdf',
                str(ARM_URDF),
                '--bag',
                str(pushed_bag),
                '--friction-file',
                str(friction),
            ]
        )
        == 1
    )
    assert 'not in the model' in capsys.readouterr().err


def test_cli_counts_refused_bag_messages_under_its_own_name(tmp_path, capsys):
    robot = RobotModel.from_urdf_file(ARM_URDF)
    simulation = ArmSimulation(robot, scripted_excitation(robot))
    samples = [simulation.advance() for _ in range(50)]
    efforts = np.array([s.efforts for s in samples])
    efforts[20, 1] = np.nan  # one message a reader must refuse
    recording = Recording(
        np.array([s.time for s in samples]) + 10.0,
        [s.positions for s in samples],
        [s.velocities for s in samples],
        efforts,
        robot.joint_names,
    )
    path = tmp_path / 'one_bad_message'
    write_rosbag(path, recording)
    output = tmp_path / 'wrench.csv'
    assert (
        main(
            [
                'external-wrench',
                '--urdf',
                str(ARM_URDF),
                '--bag',
                str(path),
                '--output',
                str(output),
            ]
        )
        == 0
    )
    errors = capsys.readouterr().err
    assert f'external-wrench: {path}: ' in errors and 'identify-payload' not in errors
    assert len(output.read_text().splitlines()) == 1 + 49  # header, the 49 accepted samples


@pytest.fixture(scope='module')
def free_motion():
    """1 s of the arm's free excitation at 1 kHz (no contact), stamps exact."""
    robot = RobotModel.from_urdf_file(ARM_URDF)
    simulation = ArmSimulation(robot, scripted_excitation(robot))
    samples = [simulation.advance() for _ in range(1000)]
    return Recording(
        np.array([s.time for s in samples]) + 10.0,
        [s.positions for s in samples],
        [s.velocities for s in samples],
        [s.efforts for s in samples],
        robot.joint_names,
    )


def _run_on_csv(recording, folder, capsys) -> tuple:
    """(exit status, stderr, rows) of `external-wrench` with default options on ``recording``
    written as CSV."""
    recording_path, output = folder / 'recording.csv', folder / 'wrench.csv'
    write_csv(recording_path, recording)
    arguments = ['external-wrench', '--urdf', str(ARM_URDF), '--csv', str(recording_path)]
    status = main([*arguments, '--output', str(output)])
    rows = []
    if status == 0:
        with open(output, newline='') as handle:
            rows = list(csv.DictReader(handle))
    return status, capsys.readouterr().err, rows


def _with_stamps(recording, stamps) -> Recording:
    return Recording(
        stamps,
        recording.positions,
        recording.velocities,
        recording.efforts,
        recording.joint_names,
    )


def test_auto_momentum_keeps_positions_on_exact_stamps(free_motion, tmp_path, capsys):
    status, errors, rows = _run_on_csv(free_motion, tmp_path, capsys)
    assert status == 0 and 'momentum from' not in errors
    assert [row['force_x'] == '' for row in rows[:3]] == [True, True, False]  # the positions form


def test_auto_momentum_takes_velocities_when_the_stamps_jitter(free_motion, tmp_path, capsys):
    """Stamps ±0.3 ms off the sampling instants (a driver stamping on publication) make the
    position form's residual tens of times noisier: the command keeps the velocity form, as
    dynamics_node does, and says why; its free-motion residual stays under 0.2 N·m (the position
    form's reaches hundreds of N·m on these stamps)."""
    jitter = np.random.default_rng(3).uniform(-3e-4, 3e-4, len(free_motion.time))
    status, errors, rows = _run_on_csv(
        _with_stamps(free_motion, free_motion.time + jitter), tmp_path, capsys
    )
    assert status == 0
    assert 'momentum from velocities: the positions\' residual' in errors
    assert rows[0]['force_x'] == '' and rows[1]['force_x'] != ''  # the velocity form
    torques = np.array(
        [
            [float(row[f'{name}/external_torque']) for name in free_motion.joint_names]
            for row in rows[1:]
        ]
    )
    assert np.max(np.abs(torques)) < 0.2


def test_corrupt_rows_are_removed_not_carried_into_every_later_row(free_motion, tmp_path, capsys):
    efforts, velocities = free_motion.efforts.copy(), free_motion.velocities.copy()
    efforts[300, 2], velocities[600, 4] = 1e308, np.nan
    damaged = Recording(
        free_motion.time, free_motion.positions, velocities, efforts, free_motion.joint_names
    )
    status, errors, rows = _run_on_csv(damaged, tmp_path, capsys)
    assert status == 0 and 'rows removed: 2 non-finite or corrupt' in errors
    assert len(rows) == 998 and all(row['force_x'] != '' for row in rows[2:])
    forces = np.array(
        [[float(row[c]) for c in ('force_x', 'force_y', 'force_z')] for row in rows[2:]]
    )
    assert np.max(np.abs(forces)) < 0.1


def test_stamps_in_milliseconds_are_refused_by_their_spacing(free_motion, tmp_path, capsys):
    status, errors, _ = _run_on_csv(
        _with_stamps(free_motion, free_motion.time * 1000.0), tmp_path, capsys
    )
    assert status == 1
    assert 'the observer answered no sample: the stamps are 1 s apart' in errors
    assert 'are they in seconds?' in errors
