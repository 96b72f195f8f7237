"""Reported velocities against the rate of the positions (core/streams/velocity_rate.py): the
factor per joint on closed-form motions (the rate, its opposite, degrees, a gear ratio, zeros),
with a realistic encoder, velocity noise, a filter's lag and jittered stamps; not judged at rest
or in an unclear fit; 1 on the real Panda recording; said by the live pipeline."""

import math

import numpy as np
import pytest
from conftest import SHARED_DATA

from robot_dynamics.core.identification.recording_files import read_panda_gaz2019
from robot_dynamics.core.live.live_dynamics import LiveDynamics
from robot_dynamics.core.live.settings import LiveSettings
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.joint_states import JointSample
from robot_dynamics.core.streams.velocity_rate import VelocityRate
from robot_dynamics.models import ARM_URDF

RATE = 1000.0
AMPLITUDE = np.array([0.4, 0.3, 0.5, 0.3, 0.6, 0.4, 0.8])  # [rad]
FREQUENCY = np.array([0.3, 0.5, 0.4, 0.7, 0.6, 0.9, 1.1])  # [Hz]


def motion(seconds: float = 3.0, rate: float = RATE):
    """Stamps [s], positions [rad] and their exact rates [rad/s] of seven sines."""
    stamps = 1.0 + np.arange(int(seconds * rate)) / rate
    phase = 2 * np.pi * FREQUENCY * (stamps[:, None] - 1.0)
    return stamps, AMPLITUDE * np.sin(phase), AMPLITUDE * 2 * np.pi * FREQUENCY * np.cos(phase)


def fed(stamps, positions, velocities, continuous=()) -> np.ndarray:
    check = VelocityRate(positions.shape[1], list(continuous))
    for stamp, q, v in zip(stamps, positions, velocities):
        check.check(float(stamp), q, v)
    return check.factors()


@pytest.mark.parametrize(
    'scale', [1.0, -1.0, math.degrees(1.0), 100.0, 0.0], ids=['rate', 'sign', 'deg', 'gear', '0']
)
def test_the_factor_is_what_the_velocities_are_times_the_positions_rate(scale):
    stamps, positions, rates = motion()
    np.testing.assert_allclose(fed(stamps, positions, scale * rates), scale, rtol=1e-4, atol=0)


def test_a_real_encoder_velocity_noise_a_filters_lag_and_jittered_stamps_still_give_one():
    rng = np.random.default_rng(3)
    stamps, positions, rates = motion()
    encoder = 2 * np.pi / 2**19
    positions = np.round(positions / encoder) * encoder
    lagged = np.vstack([rates[:5], rates[:-5]])  # a filter 5 ms behind
    velocities = lagged + rng.normal(0.0, 0.001, rates.shape)
    jittered = stamps + rng.uniform(-0.0004, 0.0004, stamps.shape)  # stamped when published
    factors = fed(jittered, positions, velocities)
    np.testing.assert_allclose(factors, 1.0, atol=0.02)


def test_at_rest_and_where_no_factor_explains_the_velocities_nothing_is_judged():
    stamps, positions, rates = motion()
    still = np.tile(positions[0], (len(stamps), 1))
    assert np.all(np.isnan(fed(stamps, still, rates * 0.0 + 0.001)))
    other_joint = np.roll(rates, 1, axis=1)  # each joint sent another joint's velocity
    assert np.all(np.isnan(fed(stamps, positions, other_joint)))


def test_a_continuous_joint_turning_through_pi_is_unwrapped():
    stamps = 1.0 + np.arange(3000) / RATE
    angle = 3.0 * (stamps - 1.0)  # 3 rad/s, through ±π twice
    wrapped = np.angle(np.exp(1j * angle))[:, None]
    factors = fed(stamps, wrapped, np.full((len(stamps), 1), 3.0), continuous=[0])
    np.testing.assert_allclose(factors, 1.0, rtol=1e-9)


def test_the_real_panda_reports_velocities_that_are_its_positions_rate():
    """Gaz et al. 2019: filtered velocities and stamps 0.7–2 ms apart for 1 ms samples."""
    recording = read_panda_gaz2019(SHARED_DATA / 'panda_gaz2019')
    factors = fed(recording.time, recording.positions, recording.velocities)
    np.testing.assert_allclose(factors, 1.0, atol=0.01)


def test_the_live_pipeline_names_a_joint_with_reversed_velocities_and_not_an_unreported_one():
    robot = RobotModel.from_urdf_file(ARM_URDF)
    stamps, positions, rates = motion(2.0, 500.0)
    for velocities, words in (
        (rates, None),
        (rates * [1, 1, -1, 1, 1, 1, 1], 'fr3_joint3 -1 ×: the opposite sign'),
        (rates * [0, 0, 0, 1, 1, 1, 1], 'fr3_joint1 0 ×, fr3_joint2 0 ×, fr3_joint3 0 ×'),
        (np.degrees(rates), 'degrees per second beside positions in radians'),
    ):
        live = LiveDynamics(robot, LiveSettings())
        for stamp, q, v in zip(stamps, positions, velocities):
            live.update(JointSample(robot.joint_names, q, v, np.ones(7), float(stamp)))
        status = live.margin_status()
        if words is None:
            assert 'not the rate of the positions' not in status.message, status.message
        else:
            assert 'velocities are not the rate of the positions' in status.message
            assert words in status.message, status.message
    # zeros at every joint (mock hardware) are taken as not measured: q̇ from the positions
    live = LiveDynamics(robot, LiveSettings())
    for stamp, q in zip(stamps, positions):
        live.update(JointSample(robot.joint_names, q, np.zeros(7), np.ones(7), float(stamp)))
    message = live.margin_status().message
    assert 'not the rate of the positions' not in message, message
    assert 'every velocity in joint_states is exactly 0' in message, message
