"""Closed forms of the detection delay against the observer, the detector and an ODE integration.

References: the observer's exact response (1 − e^{−K t})τ on the closed-form rod (scipy, 1e-12);
the noise formula against the observer's residual on sampled white noise; the computed-torque
reaction against scipy's integration of ë + 2ωė + ω²e = u; the sample-clock delay against
:class:`ContactDetector` fed a step.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from test_momentum_observer import _rod_motion, _run, rod  # noqa: F401  (the rod fixture)

from robot_dynamics.core.contact.contact_detection import ContactDetector
from robot_dynamics.core.contact.detection_delay import (
    computed_torque_crossing_time,
    detection_time,
    first_sample_time,
    observer_crossing_time,
    observer_noise_std,
)
from robot_dynamics.core.contact.momentum_observer import MOMENTUM_SOURCES, MomentumObserver
from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF


@pytest.mark.parametrize('momentum', MOMENTUM_SOURCES)
def test_observer_crosses_its_threshold_when_the_closed_form_says(rod, momentum):  # noqa: F811
    gain, external, threshold = 60.0, 0.012, 0.005
    times, positions, velocities, efforts = _rod_motion(external)
    residual, start = _run(
        MomentumObserver(rod, gain, momentum=momentum), times, positions, velocities, efforts
    )
    crossing = observer_crossing_time(np.array([threshold]), np.array([external]), gain)
    assert crossing == pytest.approx(-math.log(1.0 - threshold / external) / gain, rel=1e-12)
    first = times[-len(residual) :][np.argmax(residual >= threshold)] - start
    steps = np.diff(times)
    assert crossing <= first < crossing + steps.max()
    assert (
        observer_crossing_time(np.array([threshold]), np.array([external]), gain, lag=1e-3)
        == crossing + 1e-3
    )


def test_observer_crossing_takes_the_earliest_joint_and_is_infinite_below_threshold():
    thresholds, step = np.array([1.0, 0.5]), np.array([2.0, 4.0])
    assert observer_crossing_time(thresholds, step, 50.0) == pytest.approx(
        -math.log(1 - 0.125) / 50.0
    )
    assert observer_crossing_time(thresholds, np.array([0.5, -0.4]), 50.0) == math.inf


def test_observer_noise_matches_the_residual_of_white_velocity_and_effort_noise():
    robot = RobotModel.from_urdf_file(ARM_URDF)
    rng = np.random.default_rng(3)
    positions = 0.5 * (robot.limits.lower + robot.limits.upper) + 0.3
    gravity = dynamics.gravity_torques(robot, robot.configuration(positions))
    gain, period, velocity_noise, effort_noise = 50.0, 1e-3, 0.002, 0.05
    observer = MomentumObserver(robot, gain, momentum='velocities')
    residuals = []
    for k in range(40000):
        residual = observer.update(
            k * period,
            positions,
            velocity_noise * rng.standard_normal(robot.num_joints),
            gravity + effort_noise * rng.standard_normal(robot.num_joints),
        )
        if residual is not None and k > 500:
            residuals.append(residual)
    mass = dynamics.mass_matrix(robot, robot.configuration(positions))
    predicted = observer_noise_std(
        np.linalg.norm(mass, axis=1), gain, period, velocity_noise, effort_noise, 'velocities'
    )
    np.testing.assert_allclose(np.std(residuals, axis=0), predicted, rtol=0.06)
    velocity_only = observer_noise_std(
        np.linalg.norm(mass, axis=1), gain, period, velocity_noise, 0.0, 'velocities'
    )
    assert np.all(velocity_only < predicted)  # both terms count


def test_position_observer_noise_matches_position_and_effort_noise_not_velocity_noise():
    robot = RobotModel.from_urdf_file(ARM_URDF)
    rng = np.random.default_rng(5)
    rest = 0.5 * (robot.limits.lower + robot.limits.upper) + 0.3
    gravity = dynamics.gravity_torques(robot, robot.configuration(rest))
    gain, period, position_noise, velocity_noise, effort_noise = 50.0, 1e-3, 1e-6, 0.002, 0.05
    observer = MomentumObserver(robot, gain, momentum='positions')
    residuals = []
    for k in range(40000):
        noisy = [
            scale * rng.standard_normal(robot.num_joints)
            for scale in (position_noise, velocity_noise, effort_noise)
        ]
        residual = observer.update(k * period, rest + noisy[0], noisy[1], gravity + noisy[2])
        if residual is not None and k > 500:
            residuals.append(residual)
    norms = np.linalg.norm(dynamics.mass_matrix(robot, robot.configuration(rest)), axis=1)
    predicted = observer_noise_std(
        norms, gain, period, velocity_noise, effort_noise, 'positions', position_noise
    )
    np.testing.assert_allclose(np.std(residuals, axis=0), predicted, rtol=0.06)
    by_velocities = observer_noise_std(
        norms, gain, period, velocity_noise, effort_noise, 'velocities'
    )
    assert np.all(
        predicted < by_velocities
    )  # 1 µrad is below the break-even σ_v Δt / √2 = 1.4 µrad


def test_observer_noise_grows_with_the_gain_as_fast_as_its_step_response():
    norms, period = np.array([0.5, 2.0]), 1e-3
    low, high = (
        observer_noise_std(norms, gain, period, 1e-3, 0.0, 'velocities') for gain in (50.0, 100.0)
    )
    first_sample_low, first_sample_high = (1 - math.exp(-gain * period) for gain in (50.0, 100.0))
    # the threshold k·σ and the step response's first sample scale alike: the crossing time does not
    # improve
    np.testing.assert_allclose(high / low, first_sample_high / first_sample_low, rtol=0.03)


def test_computed_torque_reaction_crosses_when_the_integrated_error_dynamics_do():
    bandwidth, step, threshold = 10.0, 3.0, 0.6
    omega = 2 * math.pi * bandwidth

    def error_dynamics(t, state):  # ë + 2ω ė + ω² e = u, u = τ/M with M = 1
        return [state[1], step - 2 * omega * state[1] - omega**2 * state[0]]

    def reaction(t, state):  # the controller's reaction ω² e + 2ω ė reaches the threshold
        return omega**2 * state[0] + 2 * omega * state[1] - threshold

    reaction.terminal = True
    solution = solve_ivp(
        error_dynamics, (0.0, 0.1), [0.0, 0.0], events=reaction, rtol=1e-12, atol=1e-14
    )
    crossing = computed_torque_crossing_time(np.array([threshold]), np.array([step]), bandwidth)
    assert crossing == pytest.approx(solution.t_events[0][0], abs=1e-9)
    assert (
        computed_torque_crossing_time(np.array([threshold]), np.array([0.5]), bandwidth) == math.inf
    )


@pytest.mark.parametrize(
    'period, crossing, expected',
    [(0.004, 0.0015, 0.012), (0.004, 0.0, 0.012), (0.001, 0.0021, 0.008), (0.001, 0.002, 0.007)],
)
def test_detection_time_is_what_the_detector_flags_on_the_sample_clock(period, crossing, expected):
    min_duration = 0.005
    assert detection_time(crossing, period, min_duration) == pytest.approx(expected)
    detector = ContactDetector(np.array([1.0]), min_duration=min_duration)
    first = first_sample_time(crossing, period)
    flagged = next(
        k * period
        for k in range(1, 100)
        if detector.update(
            k * period, np.array([2.0 if k * period >= first - 1e-12 else 0.0])
        ).in_contact
    )
    assert flagged == pytest.approx(expected)
    assert detection_time(math.inf, period, min_duration) == math.inf
