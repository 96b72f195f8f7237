"""Tests of robot_dynamics.core.identification.excitation and the `excitation` CLI."""

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from robot_dynamics.cli import main as cli_main
from robot_dynamics.core.identification import excitation as ex
from robot_dynamics.core.identification.whole_robot import (
    condition_number,
    extended_regressor,
    structural_base_parameters,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF


@pytest.fixture(scope='module')
def arm():
    return RobotModel.from_urdf_file(ARM_URDF)


@pytest.fixture(scope='module')
def design(arm):
    limits = ex.ExcitationLimits.from_model(arm, max_acceleration=4.0, velocity_fraction=0.7)
    return ex.design_excitation(
        arm, duration=10.0, harmonics=4, base_frequency=0.1, limits=limits, iterations=60, seed=3
    )


def test_every_sample_respects_position_velocity_and_acceleration_limits(design):
    times = design.trajectory.sample_times(100.0)
    positions, velocities, accelerations = design.trajectory.evaluate(times)
    limits = design.limits
    assert np.all(positions <= limits.upper) and np.all(positions >= limits.lower)
    assert np.all(np.abs(velocities) <= limits.velocity)
    assert np.all(np.abs(accelerations) <= limits.acceleration)
    # scaled to the limits: at least one limit is (almost) reached
    usage = max(
        np.max(np.abs(velocities) / limits.velocity),
        np.max(np.abs(accelerations) / limits.acceleration),
        np.max((positions - limits.lower) / (limits.upper - limits.lower)),
    )
    assert usage > 0.99


def test_derivatives_are_consistent_with_finite_differences(design):
    times = np.linspace(0.0, 10.0, 20001)
    positions, velocities, accelerations = design.trajectory.evaluate(times)
    step = times[1] - times[0]
    assert np.gradient(positions, step, axis=0)[1:-1] == pytest.approx(velocities[1:-1], abs=1e-5)
    assert np.gradient(velocities, step, axis=0)[1:-1] == pytest.approx(
        accelerations[1:-1], abs=1e-4
    )


def test_motion_starts_and_ends_at_rest_over_whole_periods(design):
    _, velocities, accelerations = design.trajectory.evaluate(np.array([0.0, 10.0]))
    assert np.max(np.abs(velocities)) < 1e-12 and np.max(np.abs(accelerations)) < 1e-12


def test_optimisation_lowers_the_condition_number_of_the_random_start(arm, design):
    assert design.condition_number < 0.7 * design.initial_condition_number
    # recompute independently of the optimiser's bookkeeping, on a finer sampling
    base = structural_base_parameters(arm, seed=21)
    times = np.linspace(0.0, 10.0, 400)
    regressor = base.regressor(extended_regressor(arm, *design.trajectory.evaluate(times)))
    assert condition_number(regressor) == pytest.approx(design.condition_number, rel=0.3)


def test_only_the_requested_joints_move(arm):
    chosen = ['fr3_joint2', 'fr3_joint4']
    result = ex.design_excitation(arm, 10.0, 3, 0.1, iterations=10, joints=chosen)
    positions, _, _ = result.trajectory.evaluate(np.linspace(0.0, 10.0, 101))
    moving = np.ptp(positions, axis=0) > 1e-9
    assert [name for name, flag in zip(arm.joint_names, moving) if flag] == chosen
    assert np.isfinite(result.condition_number)
    with pytest.raises(ex.ExcitationError, match='not joints'):
        ex.design_excitation(arm, 10.0, 3, 0.1, iterations=1, joints=['elbow'])


def test_joint_trajectory_is_a_valid_ros_message_with_increasing_times(design):
    from rosbags.typesys import Stores, get_typestore

    message = ex.joint_trajectory(design.trajectory, rate=50.0, lead_in=2.0)
    stamps = [
        p['time_from_start']['sec'] + 1e-9 * p['time_from_start']['nanosec']
        for p in message['points']
    ]
    assert stamps[0] == pytest.approx(2.0) and stamps[-1] == pytest.approx(12.0)
    assert np.all(np.diff(stamps) > 0.0) and len(stamps) == 501
    store = get_typestore(Stores.LATEST)
    types = store.types
    point_type = types['trajectory_msgs/msg/JointTrajectoryPoint']
    duration_type = types['builtin_interfaces/msg/Duration']
    points = [
        point_type(
            positions=np.array(p['positions']),
            velocities=np.array(p['velocities']),
            accelerations=np.array(p['accelerations']),
            effort=np.array(p['effort'], dtype=float),
            time_from_start=duration_type(**p['time_from_start']),
        )
        for p in message['points'][:3]
    ]
    header = types['std_msgs/msg/Header'](
        stamp=types['builtin_interfaces/msg/Time'](sec=0, nanosec=0), frame_id=''
    )
    msg = types['trajectory_msgs/msg/JointTrajectory'](
        header=header, joint_names=message['joint_names'], points=points
    )
    raw = store.serialize_cdr(msg, 'trajectory_msgs/msg/JointTrajectory')
    back = store.deserialize_cdr(raw, 'trajectory_msgs/msg/JointTrajectory')
    assert back.joint_names == list(design.trajectory.joint_names)


def test_impossible_requests_are_refused(arm):
    with pytest.raises(ex.ExcitationError, match='at least 2 harmonics'):
        ex.design_excitation(arm, 10.0, 1, 0.1)
    with pytest.raises(ex.ExcitationError, match='must be positive'):
        ex.design_excitation(arm, -1.0, 3, 0.1)
    with pytest.raises(ex.ExcitationError, match='acceleration'):
        ex.ExcitationLimits.from_model(arm, max_acceleration=0.0)


def test_cli_writes_parameters_samples_and_joint_trajectory(tmp_path, capsys):
    prefix = tmp_path / 'exc'
    code = cli_main(
        [
            'excitation',
            '--duration',
            '5',
            '--base-frequency',
            '0.2',
            '--harmonics',
            '3',
            '--iterations',
            '15',
            '--rate',
            '50',
            '--output',
            str(prefix),
            '--format',
            'json',
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary['condition_number'] <= summary['initial_condition_number']
    assert summary['max_limit_violation'] <= 0.0
    parameters = yaml.safe_load((tmp_path / 'exc.yaml').read_text())
    assert parameters['harmonics'] == 3 and len(parameters['sine']) == 7
    samples = np.genfromtxt(tmp_path / 'exc.csv', delimiter=',', names=True)
    assert len(samples) == 251 and 'fr3_joint1position' in samples.dtype.names
    message = yaml.safe_load((tmp_path / 'exc_joint_trajectory.yaml').read_text())
    assert len(message['points']) == 251
    expected = [samples[10][f'fr3_joint{j}position'] for j in range(1, 8)]
    assert message['points'][10]['positions'] == pytest.approx(expected)


def test_cli_publish_sends_the_written_joint_trajectory_to_a_subscriber(ros, tmp_path, capsys):
    """`robot_dynamics excitation --publish TOPIC` (the CLI entry point, in this process: it
    publishes from its own rclpy context) reaches a real subscriber with the message it wrote."""
    from ros_harness import wait_for
    from trajectory_msgs.msg import JointTrajectory

    topic = '/test_excitation/joint_trajectory'
    prefix = tmp_path / 'exc'
    arguments = [
        'excitation',
        '--iterations',
        '2',
        '--rate',
        '20',
        '--output',
        str(prefix),
        '--publish',
        topic,
        '--wait',
        '8',
        '--format',
        'json',
    ]
    with ros() as harness:
        received = harness.collect(JointTrajectory, topic)
        for _ in range(2):  # DDS discovery on a loaded machine occasionally misses the first round
            assert cli_main(arguments) == 0
            if wait_for(lambda: len(received) > 0, timeout=4.0):
                break
        assert received, 'the published JointTrajectory never arrived'
    summary, _ = json.JSONDecoder().raw_decode(capsys.readouterr().out)
    assert summary['published_on'] == topic
    written = yaml.safe_load((tmp_path / 'exc_joint_trajectory.yaml').read_text())
    trajectory = received[0]
    assert list(trajectory.joint_names) == written['joint_names'] and len(trajectory.points) == 201
    for index in (0, 7, 200):
        point, expected = trajectory.points[index], written['points'][index]
        assert list(point.positions) == pytest.approx(expected['positions'], abs=1e-12)
        assert list(point.velocities) == pytest.approx(expected['velocities'], abs=1e-12)
        assert (point.time_from_start.sec, point.time_from_start.nanosec) == (
            expected['time_from_start']['sec'],
            expected['time_from_start']['nanosec'],
        )
    assert trajectory.points[-1].time_from_start.sec == 13  # 3 s lead-in + the 10 s motion


def test_cli_publish_without_a_subscriber_writes_the_files_publishes_nothing_and_exits_2(
    tmp_path, capsys
):
    """With nobody subscribed the trajectory is not published into the void: the files are
    written, the command says so and exits with status 2."""
    topic = f'/test_excitation/nobody_listens_{os.getpid()}'
    prefix = tmp_path / 'exc'
    started = time.monotonic()
    code = cli_main(
        [
            'excitation',
            '--iterations',
            '2',
            '--rate',
            '20',
            '--output',
            str(prefix),
            '--publish',
            topic,
            '--wait',
            '0.5',
            '--format',
            'json',
        ]
    )
    seconds = time.monotonic() - started
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert f'no subscriber on {topic} after 0.5 s: nothing published' in captured.err, captured.err
    assert 'files are written' in captured.err and 'Traceback' not in captured.err
    summary = json.loads(captured.out)
    assert summary['published_on'] is None
    for path in summary['outputs'].values():
        assert Path(path).is_file(), path
    assert seconds < 15.0

    code = cli_main(
        [
            'excitation',
            '--iterations',
            '2',
            '--rate',
            '20',
            '--output',
            str(prefix),
            '--publish',
            topic,
            '--wait',
            '0',
        ]
    )
    captured = capsys.readouterr()
    assert code == 2 and 'published the JointTrajectory' not in captured.out
    assert f'wrote {prefix}_joint_trajectory.yaml' in captured.out
    assert f'no subscriber on {topic} after 0 s' in captured.err


@pytest.mark.parametrize(
    'option, value, message',
    [
        ('--position-margin', '-0.4', 'position margin must be in [0, 0.5)'),
        ('--position-margin', '0.5', 'position margin must be in [0, 0.5)'),
        ('--velocity-fraction', '-1', 'velocity fraction must be in (0, 1]'),
        ('--velocity-fraction', '1.5', 'velocity fraction must be in (0, 1]'),
        ('--velocity-fraction', 'nan', 'velocity fraction must be in (0, 1]'),
        (
            '--max-acceleration',
            'nan',
            'acceleration limits must be positive numbers [rad/s²], got [nan',
        ),
        (
            '--max-acceleration',
            '0',
            'acceleration limits must be positive numbers [rad/s²], got [0.0',
        ),
        ('--duration', '7', 'use a duration of 10 s'),
        (
            '--duration',
            'inf',
            'duration (inf s), base frequency (0.1 Hz) and rate (100.0 Hz) must be positive finite',
        ),
        ('--rate', '0', 'rate (0.0 Hz) must be positive finite'),
        ('--rate', '100.05', 'whole number of samples'),
        ('--rate', '4', 'rate 4 Hz is under 10 samples per period of the highest harmonic'),
        ('--base-frequency', '1e9', 'under 10 samples per period'),
        ('--harmonics', '1', 'at least 2 harmonics'),
        ('--lead-in', '-1', '--lead-in must be a number ≥ 0'),
        ('--seed', '-1', 'seed (-1) must be ≥ 0'),
    ],
)
def test_cli_refuses_out_of_range_options_without_writing(tmp_path, capsys, option, value, message):
    code = cli_main(
        ['excitation', '--iterations', '2', '--output', str(tmp_path / 'exc'), option, value]
    )
    captured = capsys.readouterr()
    assert code == 2, captured.out
    assert message in captured.err and 'Traceback' not in captured.err
    assert not list(tmp_path.iterdir())


def test_limits_outside_their_range_are_refused_by_the_core(arm):
    for keywords in (
        {'position_margin': -0.4},
        {'position_margin': 0.5},
        {'velocity_fraction': -1.0},
        {'velocity_fraction': 0.0},
        {'velocity_fraction': 1.01},
        {'velocity_fraction': float('nan')},
        {'default_velocity': 0.0},
    ):
        with pytest.raises(ex.ExcitationError):
            ex.ExcitationLimits.from_model(arm, **keywords)


def test_design_refuses_limits_wider_than_the_urdf(arm):
    urdf = ex.ExcitationLimits.from_model(arm, position_margin=0.0, velocity_fraction=1.0)
    wide = ex.ExcitationLimits(urdf.lower - 0.5, urdf.upper, urdf.velocity, urdf.acceleration)
    with pytest.raises(ex.ExcitationError, match='wider than the URDF limits'):
        ex.design_excitation(arm, 10.0, 3, 0.1, limits=wide, iterations=1)
    fast = ex.ExcitationLimits(urdf.lower, urdf.upper, urdf.velocity * 2.0, urdf.acceleration)
    with pytest.raises(ex.ExcitationError, match='wider than the URDF limits'):
        ex.design_excitation(arm, 10.0, 3, 0.1, limits=fast, iterations=1)


def test_durations_that_are_not_whole_periods_are_refused(arm):
    with pytest.raises(ex.ExcitationError, match='0.7 periods.*use a duration of 10 s'):
        ex.design_excitation(arm, duration=7.0, iterations=1)
    with pytest.raises(ex.ExcitationError, match='use a duration of 20 s or 30 s'):
        ex.design_excitation(arm, duration=25.0, base_frequency=0.1, iterations=1)
    assert ex.whole_periods(10.0, 0.1) == 1 and ex.whole_periods(5.0, 0.4) == 2
    result = ex.design_excitation(arm, duration=5.0, harmonics=3, base_frequency=0.4, iterations=2)
    positions, velocities, accelerations = result.trajectory.evaluate(np.array([0.0, 5.0]))
    assert np.max(np.abs(velocities)) < 1e-12 and np.max(np.abs(accelerations)) < 1e-12
    assert positions[1] == pytest.approx(positions[0], abs=1e-12)


def test_cli_output_at_full_margins_stays_within_the_urdf_limits(tmp_path, capsys, arm):
    prefix = tmp_path / 'exc'
    code = cli_main(
        [
            'excitation',
            '--iterations',
            '3',
            '--position-margin',
            '0',
            '--velocity-fraction',
            '1',
            '--output',
            str(prefix),
            '--format',
            'json',
        ]
    )
    assert code == 0
    assert json.loads(capsys.readouterr().out)['max_limit_violation'] <= 0.0
    samples = np.genfromtxt(tmp_path / 'exc.csv', delimiter=',', names=True)
    for index, name in enumerate(
        arm.joint_names
    ):  # the written samples against the URDF's own limits
        position, velocity = samples[f'{name}position'], samples[f'{name}velocity']
        assert (
            arm.limits.lower[index] <= position.min() and position.max() <= arm.limits.upper[index]
        )
        assert np.abs(velocity).max() <= arm.limits.velocity[index]
        assert np.abs(samples[f'{name}acceleration']).max() <= 5.0  # the default --max-acceleration
    assert np.abs([samples[f'{name}velocity'][-1] for name in arm.joint_names]).max() < 1e-9


# ------------------------------------------------------------------ torque limits
TORQUE_TEST_OFFSETS = [1.2, 0.3]  # arm raised: the start pose at rest is within the limits


@pytest.fixture(scope='module')
def vertical_arm():
    import vertical_2r

    return vertical_2r.model(5.0, 2.0)


def _torque_limits(robot, payload_mass=0.5, fraction=0.8):
    import vertical_2r

    from robot_dynamics.core.dynamics.friction import FrictionModel
    from robot_dynamics.core.model.inertia import InertialParameters

    friction = FrictionModel(
        robot.joint_names, np.array([0.3, 0.1]), np.array([0.4, 0.2]), np.array([0.05, -0.02])
    )
    payload = InertialParameters.point_mass(payload_mass, np.array([vertical_2r.L2, 0.0, 0.0]))
    return ex.TorqueLimits(robot, fraction, payload, 'link2', friction)


def _lagrangian_torques(times, trajectory, payload_mass=0.5):
    """Closed-form 2R torques with a tip point mass plus the friction of ``_torque_limits``."""
    import vertical_2r

    positions, velocities, accelerations = trajectory.evaluate(times)
    rigid = np.array(
        [
            vertical_2r.with_tip_payload(q, qd, qdd, payload_mass)
            for q, qd, qdd in zip(positions, velocities, accelerations)
        ]
    )
    return (
        rigid
        + np.array([0.3, 0.1]) * velocities
        + np.array([0.4, 0.2]) * np.sign(velocities)
        + [0.05, -0.02]
    )


def test_the_prediction_has_the_models_rotor_inertia(vertical_arm):
    """τ gains I_a q̈ per joint: the closed form of a rotor inertia (the friction file's, which
    `robot_dynamics excitation --friction` sets on the model)."""
    import vertical_2r

    rng = np.random.default_rng(4)
    q, qd, qdd = (rng.uniform(-1.0, 1.0, (5, 2)) for _ in range(3))
    without = _torque_limits(vertical_arm).predicted_torques(q, qd, qdd)
    geared = vertical_2r.model(5.0, 2.0)
    geared.set_rotor_inertia([50.0, 0.3])
    np.testing.assert_allclose(
        _torque_limits(geared).predicted_torques(q, qd, qdd) - without,
        qdd * [50.0, 0.3],
        atol=1e-9,
    )


def test_torque_limited_design_keeps_lagrangian_torques_within_the_fraction(vertical_arm):
    limits = ex.ExcitationLimits.from_model(
        vertical_arm, max_acceleration=20.0, velocity_fraction=1.0
    )
    torque_limits = _torque_limits(vertical_arm)
    arguments = dict(
        duration=5.0,
        harmonics=3,
        base_frequency=0.2,
        limits=limits,
        offsets=TORQUE_TEST_OFFSETS,
        iterations=20,
        seed=1,
    )
    times = np.arange(501) / 100.0
    allowed = 0.8 * np.array([5.0, 2.0])
    unlimited = ex.design_excitation(vertical_arm, **arguments)
    assert (
        np.max(np.abs(_lagrangian_torques(times, unlimited.trajectory)) / allowed) > 1.5
    )  # the limit matters
    design = ex.design_excitation(vertical_arm, torque_limits=torque_limits, **arguments)
    usage = np.abs(_lagrangian_torques(times, design.trajectory)) / allowed
    assert usage.max() <= 1.0 + 1e-9
    assert usage.max() > 0.99  # scaled up to the torque limit, not below it
    worst_sample, worst_joint = np.unravel_index(np.argmax(usage), usage.shape)
    margin = design.torque_margin
    assert margin.joint == vertical_arm.joint_names[worst_joint] and margin.time == pytest.approx(
        times[worst_sample]
    )
    assert abs(margin.torque) == pytest.approx(usage.max() * allowed[worst_joint], rel=1e-9)
    assert (
        margin.margin == pytest.approx(margin.allowed - abs(margin.torque)) and margin.margin >= 0.0
    )
    assert ex.limit_violation(design.trajectory, limits, times) <= 0.0


def test_torque_limits_refuse_naming_joint_and_time_when_the_start_pose_is_too_heavy(vertical_arm):
    import vertical_2r

    limits = ex.ExcitationLimits.from_model(
        vertical_arm, max_acceleration=20.0, velocity_fraction=1.0
    )
    with pytest.raises(
        ex.TorqueLimitRefused, match=r'joint shoulder needs .* at t = 0 s'
    ) as refusal:
        ex.design_excitation(
            vertical_arm,
            5.0,
            3,
            0.2,
            limits,
            offsets=[0.1, 0.0],
            iterations=2,
            torque_limits=_torque_limits(vertical_arm),
        )
    holding = vertical_2r.with_tip_payload([0.1, 0.0], [0.0, 0.0], [0.0, 0.0], 0.5)[0] + 0.05
    assert refusal.value.joint == 'shoulder' and refusal.value.time == 0.0
    assert refusal.value.torque == pytest.approx(
        holding, rel=1e-9
    ) and refusal.value.allowed == pytest.approx(4.0)


def test_torque_fraction_outside_its_range_is_refused(vertical_arm):
    for fraction in (0.0, 1.5):
        with pytest.raises(ex.ExcitationError, match='torque fraction'):
            ex.TorqueLimits(vertical_arm, fraction)


def test_cli_keeps_torques_within_the_fraction_with_a_payload(tmp_path, capsys, arm):
    prefix = tmp_path / 'exc'
    code = cli_main(
        [
            'excitation',
            '--duration',
            '5',
            '--base-frequency',
            '0.2',
            '--harmonics',
            '3',
            '--iterations',
            '5',
            '--rate',
            '50',
            '--torque-fraction',
            '0.5',
            '--max-acceleration',
            '8',
            '--payload-mass',
            '2.0',
            '--payload-com',
            '0',
            '0',
            '0.05',
            '--output',
            str(prefix),
            '--format',
            'json',
        ]
    )
    assert code == 0
    worst = json.loads(capsys.readouterr().out)['worst_torque_margin']
    assert worst['usage'] <= 1.0 and worst['allowed'] == pytest.approx(0.5 * worst['effort_limit'])
    # the written samples, through inverse dynamics of the arm with the payload attached
    from robot_dynamics.core.dynamics.joint_space import inverse_dynamics
    from robot_dynamics.core.model.inertia import InertialParameters

    loaded = RobotModel.from_urdf_file(ARM_URDF)
    loaded.attach_payload('tool0', InertialParameters.point_mass(2.0, np.array([0.0, 0.0, 0.05])))
    samples = np.genfromtxt(tmp_path / 'exc.csv', delimiter=',', skip_header=1)[:, 1:].reshape(
        -1, 7, 3
    )
    torques = np.array(
        [
            inverse_dynamics(
                loaded,
                loaded.configuration(s[:, 0]),
                loaded.tangent(s[:, 1]),
                loaded.tangent(s[:, 2]),
            )
            for s in samples
        ]
    )
    assert np.max(np.abs(torques) / (0.5 * arm.limits.effort)) == pytest.approx(
        worst['usage'], rel=1e-9
    )


def test_cli_refuses_an_impossible_payload_with_joint_and_time(tmp_path, capsys):
    prefix = tmp_path / 'exc'
    code = cli_main(
        [
            'excitation',
            '--duration',
            '5',
            '--base-frequency',
            '0.2',
            '--harmonics',
            '3',
            '--iterations',
            '2',
            '--rate',
            '50',
            '--payload-mass',
            '500',
            '--output',
            str(prefix),
        ]
    )
    assert code == 2
    error = capsys.readouterr().err
    assert 'joint fr3_joint' in error and 'at t = ' in error and 'no scaling' in error
    assert not (tmp_path / 'exc.yaml').exists()


@pytest.mark.parametrize('topic', ['bad topic!', '', '/', '1abc'])
def test_cli_refuses_a_publish_topic_ros_would_refuse_before_writing(tmp_path, capsys, topic):
    arguments = ['excitation', '--output', str(tmp_path / 'design'), '--publish', topic]
    assert cli_main(arguments) == 2
    assert f'--publish {topic!r} is not a ROS topic name' in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_torque_limits_report_the_friction_coefficients_they_add(vertical_arm):
    """The design's record of its friction is the coefficients (null without friction), not a
    Python repr a reader cannot use."""
    from robot_dynamics.core.model.inertia import InertialParameters

    limits = _torque_limits(vertical_arm).to_dict()
    assert limits['friction'] == {
        name: {
            'viscous': viscous,
            'coulomb': coulomb,
            'offset': offset,
            'stribeck_static': coulomb,
            'stribeck_velocity': 0.05,
            'sign_velocity': 0.0,
            'rotor_inertia': 0.0,
        }
        for name, viscous, coulomb, offset in zip(
            vertical_arm.joint_names, (0.3, 0.1), (0.4, 0.2), (0.05, -0.02)
        )
    }
    payload = InertialParameters.point_mass(0.5, np.zeros(3))
    assert ex.TorqueLimits(vertical_arm, 0.8, payload, 'link2').to_dict()['friction'] is None


@pytest.mark.parametrize('extra', [[], ['--payload-mass', '2'], ['--ignore-torque-limits']])
def test_cli_names_an_unknown_payload_link_whether_or_not_a_payload_uses_it(
    tmp_path, capsys, extra
):
    arguments = ['excitation', '--output', str(tmp_path / 'design'), '--payload-link', 'nosuch']
    assert cli_main(arguments + extra) == 2
    assert 'payload link "nosuch" is not a frame of model "fr3_arm"' in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
