"""`robot_dynamics external-wrench` on a recorded bag of the simulated arm pushed at its tool
(the push is the reference)."""

import csv

import numpy as np
import pytest

from robot_dynamics.cli import main
from robot_dynamics.core.identification.recording import Recording
from robot_dynamics.core.identification.recording_files import write_rosbag
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
