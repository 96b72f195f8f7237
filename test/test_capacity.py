"""Worst-case torques and maximum payload (robot_dynamics.core.dynamics.capacity and the `capacity`
CLI)
against closed forms: the standing rod (test/data/fixtures) and a 2R arm in a vertical plane."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import vertical_2r

from robot_dynamics.cli import main as cli_main
from robot_dynamics.core.dynamics import capacity
from robot_dynamics.core.dynamics.joint_space import gravity_torques, inverse_dynamics
from robot_dynamics.core.dynamics.sampled_motion import (
    SampledMotion,
    random_poses,
    read_trajectory_csv,
    static_poses,
)
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel

FIXTURES = Path(__file__).resolve().parent / 'data' / 'fixtures'
ROD_URDF = FIXTURES / 'standing_rod.urdf'
G = 9.8
ROD_MASS, ROD_LENGTH, ROD_COM, ROD_EFFORT = 0.1, 0.1, 0.05, 0.1
ROD_I0 = ROD_MASS * ROD_LENGTH**2 / 3.0
TIP = (ROD_LENGTH, 0.0, 0.0)
EFFORT1, EFFORT2 = 10.0, 4.0
L2 = vertical_2r.L2


@pytest.fixture(scope='module')
def rod():
    return RobotModel.from_urdf_file(ROD_URDF, gravity=(0.0, 0.0, -G))


@pytest.fixture(scope='module')
def arm():
    return vertical_2r.model(EFFORT1, EFFORT2)


def rod_max_payload(theta):
    """(τ_max − m g l_c |cos θ|) / (g L |cos θ|): a point mass at the rod's tip."""
    cos = np.abs(np.cos(theta))
    return (ROD_EFFORT - ROD_MASS * G * ROD_COM * cos) / (G * ROD_LENGTH * cos)


def two_r_torques(q, qd, qdd):
    """(own torques, torques per kg at the tip of link 2) of the 2R arm, Lagrange closed form."""
    return vertical_2r.torques(q, qd, qdd), vertical_2r.tip_torques_per_kilogram(q, qd, qdd)


# ---------------------------------------------------------------------- standing rod
def test_rod_payload_per_pose_matches_closed_form(rod):
    thetas = np.array([0.0, 0.3, -0.8, 1.2, 2.5])
    report = capacity.payload_capacity(rod, static_poses(thetas[:, None]), 'rod', TIP)
    np.testing.assert_allclose(report.per_sample_max_payload, rod_max_payload(thetas), rtol=1e-12)
    # horizontal is the worst pose: (0.1 − 0.049) / 0.98 kg
    assert report.max_payload == pytest.approx(0.051 / 0.98, rel=1e-12)
    assert report.limiting_joint == 'motor' and report.limiting_time == 0.0
    assert report.joints[0].worst_torque == pytest.approx(ROD_MASS * G * ROD_COM, rel=1e-12)
    assert report.joints[0].worst_ratio == pytest.approx(0.49, rel=1e-12)


def test_rod_with_the_max_payload_attached_is_exactly_at_its_limit(rod):
    """Independent of the a = Jᵀ(p̈ − g) path: pinocchio's gravity with the mass in the link
    inertia."""
    report = capacity.payload_capacity(rod, static_poses([[0.4]]), 'rod', TIP)
    loaded = RobotModel.from_urdf_file(ROD_URDF, gravity=(0.0, 0.0, -G))
    loaded.attach_payload('rod', InertialParameters.point_mass(report.max_payload, np.array(TIP)))
    assert gravity_torques(loaded, loaded.configuration([0.4]))[0] == pytest.approx(
        ROD_EFFORT, rel=1e-12
    )


def test_rod_vertical_pose_allows_any_payload(rod):
    report = capacity.payload_capacity(rod, static_poses([[math.pi / 2]]), 'rod', TIP)
    assert math.isinf(report.max_payload) and report.limiting_joint is None


def test_rod_trajectory_uses_inverse_dynamics_of_robot_and_payload(rod, tmp_path):
    times = np.linspace(0.0, 3.0, 301)
    theta, rate, acceleration = (
        0.6 * np.sin(2 * times),
        1.2 * np.cos(2 * times),
        -2.4 * np.sin(2 * times),
    )
    path = tmp_path / 'rod.csv'
    np.savetxt(
        path,
        np.column_stack([times, theta, rate, acceleration]),
        delimiter=',',
        comments='',
        header='time,motor/position,motor/velocity,motor/acceleration',
    )
    motion = read_trajectory_csv(path, rod)
    report = capacity.payload_capacity(rod, motion, 'rod', TIP)
    own = ROD_I0 * acceleration + ROD_MASS * G * ROD_COM * np.cos(theta)
    per_kilogram = ROD_LENGTH**2 * acceleration + G * ROD_LENGTH * np.cos(theta)
    expected = (ROD_EFFORT - np.sign(per_kilogram) * own) / np.abs(per_kilogram)
    assert report.dynamic
    np.testing.assert_allclose(report.per_sample_max_payload, expected, rtol=1e-10)
    worst = int(np.argmax(np.abs(own)))
    assert report.joints[0].worst_torque == pytest.approx(own[worst], rel=1e-10)
    assert report.joints[0].worst_time == pytest.approx(times[worst])


# ---------------------------------------------------------------------- 2R arm
def test_two_r_gravity_payload_matches_closed_form_per_joint_and_pose(arm):
    motion = random_poses(arm, 60, seed=4)
    report = capacity.payload_capacity(arm, motion, 'link2', (L2, 0.0, 0.0))
    limits = np.array([EFFORT1, EFFORT2])
    expected = []
    for q in motion.positions:
        own, per_kilogram = two_r_torques(q, np.zeros(2), np.zeros(2))
        expected.append((limits - np.sign(per_kilogram) * own) / np.abs(per_kilogram))
    expected = np.array(expected)
    np.testing.assert_allclose(report.per_sample_max_payload, expected.min(axis=1), rtol=1e-10)
    for j, joint in enumerate(report.joints):
        assert joint.max_payload == pytest.approx(expected[:, j].min(), rel=1e-10)
    assert report.max_payload == pytest.approx(expected.min(), rel=1e-10)


def test_two_r_trajectory_torques_and_payload_match_lagrangian(arm):
    times = np.linspace(0.0, 2.0, 81)
    positions = np.column_stack([0.5 + 0.7 * np.sin(3 * times), -0.4 + 0.9 * np.cos(2 * times)])
    velocities = np.column_stack([2.1 * np.cos(3 * times), -1.8 * np.sin(2 * times)])
    accelerations = np.column_stack([-6.3 * np.sin(3 * times), -3.6 * np.cos(2 * times)])
    motion = SampledMotion(times, positions, velocities, accelerations, 'test motion')
    per_kilogram = capacity.payload_torques_per_kilogram(arm, 'link2', (L2, 0.0, 0.0), motion)
    own = capacity.robot_torques(arm, motion)
    for k in range(len(times)):
        expected_own, expected_per_kilogram = two_r_torques(
            positions[k], velocities[k], accelerations[k]
        )
        np.testing.assert_allclose(own[k], expected_own, atol=1e-12)
        np.testing.assert_allclose(per_kilogram[k], expected_per_kilogram, atol=1e-12)


def test_payload_torque_is_linear_in_mass_with_a_com_offset():
    """τ(m) − τ(0) = m·a against pinocchio's rnea with the mass attached (a second path)."""
    from robot_dynamics.models import ARM_URDF

    robot = RobotModel.from_urdf_file(ARM_URDF)
    rng = np.random.default_rng(3)
    motion = SampledMotion(np.arange(4.0), *rng.uniform(-1.0, 1.0, (3, 4, 7)), 'random states')
    offset = np.array([0.02, -0.01, 0.08])
    per_kilogram = capacity.payload_torques_per_kilogram(robot, 'tool0', offset, motion)
    loaded = RobotModel.from_urdf_file(ARM_URDF)
    loaded.attach_payload('tool0', InertialParameters.point_mass(2.5, offset))
    for k in range(4):
        args = [
            (
                model.configuration(motion.positions[k]),
                model.tangent(motion.velocities[k]),
                model.tangent(motion.accelerations[k]),
            )
            for model in (robot, loaded)
        ]
        difference = inverse_dynamics(loaded, *args[1]) - inverse_dynamics(robot, *args[0])
        np.testing.assert_allclose(difference, 2.5 * per_kilogram[k], atol=1e-10)


def test_overloaded_joint_allows_no_payload(rod):
    weak = RobotModel.from_urdf_string(
        ROD_URDF.read_text().replace('effort="0.1"', 'effort="0.03"'), gravity=(0.0, 0.0, -G)
    )
    report = capacity.payload_capacity(weak, static_poses([[0.0], [1.4]]), 'rod', TIP)
    assert report.max_payload == 0.0 and report.overloaded == ('motor',)
    assert report.per_sample_max_payload[1] > 0.0


# ---------------------------------------------------------------------- command line
def test_cli_reports_the_minimum_over_its_seeded_poses(rod, capsys):
    code = cli_main(
        [
            'capacity',
            '--urdf',
            str(ROD_URDF),
            '--payload-link',
            'rod',
            '--com-offset',
            '0.1',
            '0',
            '0',
            '--poses',
            '50',
            '--seed',
            '7',
            '--format',
            'json',
        ]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    rod_981 = RobotModel.from_urdf_file(ROD_URDF)  # the CLI uses standard gravity 9.81
    thetas = random_poses(rod_981, 50, seed=7).positions[:, 0]
    cos = np.abs(np.cos(thetas))
    expected = (ROD_EFFORT - ROD_MASS * 9.81 * ROD_COM * cos) / (9.81 * ROD_LENGTH * cos)
    assert result['max_payload'] == pytest.approx(expected.min(), rel=1e-10)
    assert result['limiting_joint'] == 'motor' and len(result['per_sample']) == 50


@pytest.mark.parametrize(
    'extra, words',
    [
        (['--payload-link', 'nowhere'], 'nowhere'),
        (['--payload-link', 'base'], 'fixed to the world'),
        (['--trajectory', '/nonexistent.csv'], 'cannot read'),
        (['--box', '0.1', '-1', '0.1'], '--box takes positive finite lengths [m]'),
        (['--cylinder', 'nan', '0.1'], '--cylinder takes positive finite lengths [m]'),
        (['--tool', 'gripper'], '--tool names a tool of --tools-file'),
        (
            ['--tool', 'gripper', '--com-offset', '0.5', '0', '0'],
            '--tool gripper sets the payload link and CoM (its tools-file entry): drop '
            '--com-offset',
        ),
        (
            ['--tool', 'gripper', '--payload-link', 'rod', '--com-offset', '0', '0', '0'],
            'drop --payload-link and --com-offset',
        ),
    ],
)
def test_cli_refuses_bad_input_with_exit_2(extra, words, capsys):
    assert cli_main(['capacity', '--urdf', str(ROD_URDF)] + extra) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize(
    'header, rows, words',
    [
        ('time,elbow/position', ['0,0.1', '1,0.2'], 'not in model'),
        ('time,motor/velocity', ['0,0.1', '1,0.2'], 'no position column'),
        ('time,motor/position', ['0,0.1', '0,0.2', '1,0.3'], 'times must increase'),
        ('time,motor/position', ['0,0.1', '1,nan', '2,0.3'], 'NaN'),
        ('time,motor/position', ['0,0.1', '1'], 'line 3'),
        ('time,motor/speed', ['0,0.1'], 'is not <joint>/position'),
        ('time,motor/position,motor/position', ['0,0.1,0.1'], 'appears more than once'),
        ('time,motor/position', ['0,0.1', '1,abc'], 'line 3, column "motor/position": \'abc\''),
        ('time,motor/position', ['0,0.1', ',0.2'], 'line 3, column "time": \'\' is not a'),
    ],
)
def test_trajectory_files_that_do_not_fit_the_model_are_refused(rod, tmp_path, header, rows, words):
    from robot_dynamics.core.dynamics.sampled_motion import MotionFileError

    path = tmp_path / 'bad.csv'
    path.write_text('\n'.join([header] + rows) + '\n')
    with pytest.raises(MotionFileError, match=words):
        read_trajectory_csv(path, rod)


def test_a_huge_ratio_is_printed_in_a_few_digits(tmp_path, capsys):
    """A rotor inertia of 1e300 kg·m² (a friction file accepts it) gives a torque ratio of
    ~1e301: printed as 1e+301, not as 300 digits."""
    friction = tmp_path / 'friction.yaml'
    friction.write_text('joints:\n  motor: {rotor_inertia: 1.0e300}\n')
    trajectory = tmp_path / 'swing.csv'
    trajectory.write_text(
        'time,motor/position,motor/velocity,motor/acceleration\n0,0,0,1\n1,0,0,1\n'
    )
    arguments = ['capacity', '--urdf', str(ROD_URDF), '--trajectory', str(trajectory)]
    assert cli_main(arguments + ['--rotor-inertia', str(friction)]) == 0
    output = capsys.readouterr().out
    assert '1e+301' in output and max(len(line) for line in output.splitlines()) < 200, output


def test_trajectory_without_derivative_columns_is_differentiated(rod, tmp_path):
    times = np.linspace(0.0, 1.0, 101)
    path = tmp_path / 'positions.csv'
    np.savetxt(
        path,
        np.column_stack([times, times**2]),
        delimiter=',',
        comments='',
        header='time,motor/position',
    )
    motion = read_trajectory_csv(path, rod)
    np.testing.assert_allclose(motion.velocities[1:-1, 0], 2 * times[1:-1], atol=1e-12)
    np.testing.assert_allclose(motion.accelerations[2:-2, 0], 2.0, atol=1e-9)


def test_a_payload_with_inertia_matches_mujoco_along_a_trajectory(tmp_path):
    """A 0.1 × 0.1 × 0.4 m box on tool0: its torques per kilogram against MuJoCo's inverse
    dynamics of the arm with and without that body (a second library), and the capacity it
    leaves below the point mass's on a fast trajectory; the CLI reports both."""
    import re

    mujoco = pytest.importorskip('mujoco')
    from robot_dynamics.core.model.inertia import box_inertia
    from robot_dynamics.models import ARM_URDF

    robot = RobotModel.from_urdf_file(ARM_URDF)
    offset, edges = np.array([0.0, 0.02, 0.2]), (0.1, 0.1, 0.4)
    shape = box_inertia(1.0, edges)
    times = np.linspace(0.0, 1.0, 21)
    rng = np.random.default_rng(5)
    phases, speeds = rng.uniform(0, 6, 7), rng.uniform(2.0, 4.0, 7)
    middle = 0.5 * (robot.limits.lower + robot.limits.upper)
    amplitude = 0.25 * (robot.limits.upper - robot.limits.lower)
    angle = np.outer(times, speeds) + phases
    positions = middle + amplitude * np.sin(angle)
    velocities = amplitude * speeds * np.cos(angle)
    accelerations = -amplitude * speeds**2 * np.sin(angle)
    motion = SampledMotion(times, positions, velocities, accelerations, 'fast sines')
    per_kilogram = capacity.payload_torques_per_kilogram(robot, 'tool0', offset, motion, shape)

    text = re.sub(r'<dynamics\b[^>]*/>', '', ARM_URDF.read_text())
    compiler = '<mujoco><compiler fusestatic="false" balanceinertia="false"/></mujoco>'
    text = re.sub(r'(<robot\b[^>]*>)', r'\1' + compiler, text, count=1)

    def mujoco_torques(with_payload: bool) -> np.ndarray:
        spec = mujoco.MjSpec.from_string(text)
        if with_payload:
            body = spec.body('tool0').add_body(name='box', pos=offset)
            body.explicitinertial, body.mass, body.ipos = True, 1.0, [0, 0, 0]
            body.fullinertia = [shape[0, 0], shape[1, 1], shape[2, 2], 0, 0, 0]
        model = spec.compile()
        model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
        data = mujoco.MjData(model)
        addresses = [model.joint(name).qposadr[0] for name in robot.joint_names]
        torques = []
        for q, qd, qdd in zip(positions, velocities, accelerations):
            data.qpos[addresses], data.qvel[addresses], data.qacc[addresses] = q, qd, qdd
            mujoco.mj_inverse(model, data)
            torques.append(data.qfrc_inverse[addresses].copy())
        return np.array(torques)

    np.testing.assert_allclose(
        per_kilogram, mujoco_torques(True) - mujoco_torques(False), rtol=0, atol=1e-8
    )
    body = capacity.payload_capacity(robot, motion, 'tool0', offset, shape)
    point = capacity.payload_capacity(robot, motion, 'tool0', offset)
    assert body.max_payload < point.max_payload

    trajectory = tmp_path / 'fast.csv'
    header = ['time'] + [
        f'{n}/{k}' for k in ('position', 'velocity', 'acceleration') for n in robot.joint_names
    ]
    rows = np.column_stack([times, positions, velocities, accelerations])
    np.savetxt(trajectory, rows, delimiter=',', header=','.join(header), comments='')
    code = cli_main(
        [
            'capacity',
            '--trajectory',
            str(trajectory),
            '--com-offset',
            *map(str, offset),
            '--box',
            *map(str, edges),
        ]
    )
    assert code == 0


def test_a_trajectory_beyond_the_position_limits_is_said_and_evaluated(tmp_path, capsys):
    from robot_dynamics.models import ARM_URDF

    robot = RobotModel.from_urdf_file(ARM_URDF)
    inside = (robot.limits.lower + robot.limits.upper) / 2
    beyond = inside.copy()
    beyond[3] = robot.limits.upper[3] + 0.25
    for name, pose, warned in (('inside', inside, False), ('beyond', beyond, True)):
        path = tmp_path / f'{name}.csv'
        header = 'time,' + ','.join(f'{joint}/position' for joint in robot.joint_names)
        rows = [f'{t},' + ','.join(str(value) for value in pose) for t in (0.0, 1.0, 2.0)]
        path.write_text('\n'.join([header, *rows]) + '\n')
        assert cli_main(['capacity', '--trajectory', str(path)]) == 0
        printed = capsys.readouterr()
        assert 'max payload' in printed.out.lower(), printed.out
        expected = f'leaves the URDF position limits of {robot.joint_names[3]} (up to 0.25 past)'
        assert (expected in printed.err) is warned, printed.err
        assert ('position limits' in printed.err) is warned, printed.err
