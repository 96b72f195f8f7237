"""Friction models against their closed forms, and identified back from a simulated robot that
has that friction: the 2R arm integrated with pinocchio's ABA, its motors fighting
viscous + Coulomb + Stribeck friction the model does not know, swept at constant speeds."""

from __future__ import annotations

import math

import numpy as np
import pytest
import vertical_2r

from robot_dynamics.core.dynamics import joint_space
from robot_dynamics.core.dynamics.friction import (
    FrictionFileError,
    FrictionModel,
    friction_from_yaml,
)
from robot_dynamics.core.identification.friction_fit import (
    FrictionFitRefused,
    fit_friction,
    friction_file_text,
)
from robot_dynamics.core.identification.recording import Recording

NAMES = ('shoulder', 'elbow')
TRUE = FrictionModel(
    NAMES,
    viscous=np.array([0.21, 0.12]),
    coulomb=np.array([0.5, 0.3]),
    offset=np.array([0.04, -0.02]),
    stribeck_static=np.array([0.65, 0.42]),
    stribeck_velocity=np.array([0.05, 0.05]),
)


def test_each_model_equals_its_closed_form():
    v = np.array([0.03, -0.2])
    viscous = 0.21 * 0.03, 0.12 * -0.2
    stribeck = (
        (0.5 + 0.15 * math.exp(-((0.03 / 0.05) ** 2))),
        -(0.3 + 0.12 * math.exp(-((0.2 / 0.05) ** 2))),
    )
    expected = np.array(viscous) + np.array(stribeck) + np.array([0.04, -0.02])
    np.testing.assert_allclose(TRUE.torques(v), expected, atol=1e-15)
    plain = FrictionModel(NAMES, np.array([0.2, 0.1]), np.array([0.5, 0.3]), np.zeros(2))
    np.testing.assert_allclose(plain.torques(v), [0.2 * 0.03 + 0.5, 0.1 * -0.2 - 0.3])
    smooth = friction_from_yaml('joints:\n  shoulder: {coulomb: 0.5, sign_velocity: 0.01}\n', NAMES)
    assert smooth.torques(np.array([0.01, 0.0]))[0] == pytest.approx(0.5 * math.tanh(1.0))


def _swept_recording(
    seconds_per_speed: float = 2.0, seed: int = 3, speeds: tuple = (0.02, 0.05, 0.15, 0.5)
) -> Recording:
    """Both joints swept back and forth at ``speeds`` [rad/s] under PD + model feed-forward; the
    efforts are the motor torques (friction included) + 0.01 N·m noise."""
    robot, step = vertical_2r.model(), 1e-3
    count = int(len(speeds) * seconds_per_speed / step)
    rng = np.random.default_rng(seed)
    q, v = np.array([0.3, -0.8]), np.zeros(2)
    target = q.copy()
    rows = []
    for k in range(count):
        t = k * step
        speed = speeds[int(t // seconds_per_speed)]
        phase = math.pi * (t % seconds_per_speed) / (seconds_per_speed / 2)
        wanted_v = speed * math.tanh(20 * math.sin(phase))
        wanted_a = speed * (1 - math.tanh(20 * math.sin(phase)) ** 2) * 20 * math.cos(phase)
        wanted_a *= math.pi / (seconds_per_speed / 2)
        target = target + wanted_v * step
        feed_forward = joint_space.inverse_dynamics(
            robot, target, np.full(2, wanted_v), np.full(2, wanted_a)
        )
        motor = feed_forward + 40.0 * (target - q) + 2.0 * (wanted_v - v)
        rows.append((t, q.copy(), v.copy(), motor + rng.normal(0.0, 0.01, 2)))
        a = joint_space.forward_dynamics(robot, q, v, motor - TRUE.torques(v))
        v = v + a * step
        q = q + v * step
    return Recording(
        time=np.array([r[0] for r in rows]),
        positions=np.array([r[1] for r in rows]),
        velocities=np.array([r[2] for r in rows]),
        efforts=np.array([r[3] for r in rows]),
        joint_names=NAMES,
    )


def test_friction_is_identified_back_within_five_percent():
    fit = fit_friction(vertical_2r.model(), _swept_recording())
    model = fit.model
    np.testing.assert_allclose(model.viscous, TRUE.viscous, rtol=0.05)
    np.testing.assert_allclose(model.coulomb, TRUE.coulomb, rtol=0.05)
    np.testing.assert_allclose(model.stribeck_static, TRUE.stribeck_static, rtol=0.05)
    np.testing.assert_allclose(model.offset, TRUE.offset, atol=0.01)
    assert np.all(fit.rms_after < fit.rms_before / 5)
    again = friction_from_yaml(friction_file_text(vertical_2r.model(), fit), NAMES)
    np.testing.assert_allclose(
        again.torques(np.array([0.1, -0.1])), model.torques(np.array([0.1, -0.1]))
    )


def test_a_recording_that_never_moves_slowly_fits_no_stribeck_level_out_of_range():
    """Swept at 0.5 and 1 rad/s only, exp(−(q̇/v_s)²) is almost 0 on every fitted sample for
    every v_s of the grid: no Stribeck term is fitted (said per joint), and the other terms
    still come back."""
    fit = fit_friction(vertical_2r.model(), _swept_recording(speeds=(0.5, 1.0)))
    assert [note.split(':')[0] for note in fit.notes if 'Stribeck' in note] == list(NAMES)
    np.testing.assert_allclose(fit.model.stribeck_static, fit.model.coulomb)
    np.testing.assert_allclose(fit.model.viscous, TRUE.viscous, rtol=0.1)
    np.testing.assert_allclose(fit.model.coulomb, TRUE.coulomb, rtol=0.1)


def test_a_recording_of_a_few_samples_is_refused_with_the_count():
    swept = _swept_recording(seconds_per_speed=0.05)
    recording = Recording(
        swept.time[:199], swept.positions[:199], swept.velocities[:199], swept.efforts[:199], NAMES
    )
    with pytest.raises(FrictionFitRefused, match='199 samples: a friction fit needs at least 200'):
        fit_friction(vertical_2r.model(), recording)


def test_a_joint_that_moves_one_way_only_is_refused_by_name():
    recording = _swept_recording(seconds_per_speed=0.5)
    forward = recording.velocities[:, 1] > 0.0
    one_way = Recording(
        time=recording.time[forward],
        positions=recording.positions[forward],
        velocities=recording.velocities[forward],
        efforts=recording.efforts[forward],
        joint_names=NAMES,
    )
    with pytest.raises(FrictionFitRefused, match='joint'):
        fit_friction(vertical_2r.model(), one_way)


def test_a_joint_that_never_moves_is_refused_by_name():
    recording = _swept_recording(seconds_per_speed=0.5)
    still = Recording(
        time=recording.time,
        positions=recording.positions * [1.0, 0.0],
        velocities=recording.velocities * [1.0, 0.0],
        efforts=recording.efforts,
        joint_names=NAMES,
    )
    with pytest.raises(FrictionFitRefused, match='joint elbow never moves'):
        fit_friction(vertical_2r.model(), still)


@pytest.mark.parametrize(
    'entry, words',
    [
        ('{stribeck_velocity: 0}', 'stribeck_velocity of joint elbow'),
        ('{coulomb: -0.3}', 'coulomb of joint elbow is negative'),
        ('{viscous: .nan}', 'viscous of joint elbow'),
        ('{stiction: 0.3}', "joint elbow has unknown fields \\['stiction'\\]"),
        ('0', 'friction entry of joint elbow is not a mapping of coefficients: 0'),
        ('false', 'friction entry of joint elbow is not a mapping of coefficients: False'),
        ('[]', 'friction entry of joint elbow is not a mapping of coefficients: \\[\\]'),
        ("''", "friction entry of joint elbow is not a mapping of coefficients: ''"),
    ],
)
def test_bad_friction_entries_are_refused_naming_joint_and_field(entry, words):
    with pytest.raises(FrictionFileError, match=words):
        friction_from_yaml(f'joints:\n  elbow: {entry}\n', NAMES)


def test_a_joint_named_with_nothing_after_it_has_no_friction():
    friction = friction_from_yaml('joints:\n  elbow:\n  shoulder: {viscous: 0.2}\n', NAMES)
    assert friction.viscous[NAMES.index('elbow')] == 0.0
    assert friction.viscous[NAMES.index('shoulder')] == 0.2


@pytest.mark.parametrize(
    'value, words',
    [('-0.001', 'is negative'), ('.nan', 'is not a finite number'), ('soon', 'is not a finite')],
)
def test_a_bad_effort_delay_of_a_friction_file_is_refused(value, words):
    with pytest.raises(FrictionFileError, match=f'effort_delay of the file {words}'):
        friction_from_yaml(f'effort_delay: {value}\njoints:\n  elbow: {{viscous: 0.1}}\n', NAMES)


@pytest.mark.parametrize('node_delay, said', [(0.0, True), (0.0094, False), (0.0092, False)])
def test_the_node_says_when_its_effort_delay_is_not_the_one_its_model_was_identified_with(
    tmp_path, node_delay, said
):
    from robot_dynamics.core.live.live_dynamics import LiveDynamics
    from robot_dynamics.core.live.settings import LiveSettings
    from robot_dynamics.core.streams.joint_states import JointSample

    friction = tmp_path / 'friction.yaml'
    friction.write_text('effort_delay: 0.0094\njoints:\n  elbow: {viscous: 0.1}\n')
    assert friction_from_yaml(friction.read_text(), NAMES).effort_delay == 0.0094
    live = LiveDynamics(
        vertical_2r.model(), LiveSettings(friction_file=str(friction), effort_delay=node_delay)
    )
    words = 'identified with effort_delay 0.0094 s, and this node runs effort_delay 0 s'
    assert any(words in problem for problem in live.problems) == said, live.problems
    if said:  # in the contact status once the stream runs
        live.update(JointSample(NAMES, (0.1, 0.2), (0.0, 0.0), (1.0, 1.0), 1.0))
        assert 'set effort_delay 0.0094' in live.contact_status().message


def test_the_cli_writes_a_friction_file_the_node_reads(tmp_path):
    import subprocess
    import sys

    from robot_dynamics.core.dynamics.friction import load_friction_file
    from robot_dynamics.core.identification.recording_files import write_csv

    urdf = tmp_path / 'vertical_2r.urdf'
    # The arm's plane turned upright, so that the CLI's default gravity (−z) is its −y.
    mount = (
        '<link name="world"/><joint name="mount" type="fixed">'
        '<origin rpy="1.5707963267948966 0 0"/>'
        '<parent link="world"/><child link="base"/></joint></robot>'
    )
    urdf.write_text(vertical_2r.urdf().replace('</robot>', mount))
    csv = tmp_path / 'sweeps.csv'
    write_csv(csv, _swept_recording())
    output = tmp_path / 'friction.yaml'
    run = subprocess.run(
        [
            sys.executable,
            '-m',
            'robot_dynamics',
            'identify-friction',
            '--urdf',
            str(urdf),
            '--csv',
            str(csv),
            '--output',
            str(output),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert 'residual RMS' in run.stderr
    model = load_friction_file(str(output), NAMES)
    np.testing.assert_allclose(model.coulomb, TRUE.coulomb, rtol=0.05)
    missing = subprocess.run(
        [
            sys.executable,
            '-m',
            'robot_dynamics',
            'identify-friction',
            '--urdf',
            str(urdf),
            '--csv',
            str(tmp_path / 'none.csv'),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2 and 'identify-friction:' in missing.stderr


def test_no_friction_is_subtracted_on_joints_with_link_side_torque_sensors(tmp_path):
    from robot_dynamics.core.live.live_dynamics import LiveDynamics
    from robot_dynamics.core.live.settings import LiveSettings
    from robot_dynamics.core.streams.effort_model import load_effort_model

    friction = tmp_path / 'friction.yaml'
    friction.write_text(
        'joints:\n  shoulder: {viscous: 0.2, coulomb: 0.5}\n  elbow: {viscous: 0.1, coulomb: 0.3}\n'
    )
    efforts = tmp_path / 'efforts.yaml'
    efforts.write_text('shoulder: {effort: motor_torque, gear_ratio: 1.0}\nelbow: torque\n')
    live = LiveDynamics(
        vertical_2r.model(),
        LiveSettings(friction_file=str(friction), effort_model=load_effort_model(str(efforts))),
    )
    np.testing.assert_allclose(live.observer.friction.coulomb, [0.5, 0.0])
    np.testing.assert_allclose(live.observer.friction.viscous, [0.2, 0.0])
    assert any("['elbow']" in problem and 'link-side' in problem for problem in live.problems)
