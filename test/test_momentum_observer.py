"""Momentum observer, contact detection and external wrench (core) against closed forms and
independent references.

References: the standing rod's closed-form dynamics I₀ θ̈ = τ − m g l_c cos θ (integrated by
scipy to 1e-12, not by pinocchio); pinocchio's RNEA with external forces for Jᵀ F (not the
Jacobian route under test); the sim's forward dynamics with f_ext for a push.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from conftest import SHARED_DATA
from scipy.integrate import solve_ivp

from robot_dynamics.core.contact.contact_detection import (
    ContactCalibrationError,
    ContactDetector,
    ResidualHistory,
    ThresholdError,
    calibrated_thresholds,
    checked_thresholds,
)
from robot_dynamics.core.contact.external_wrench import WrenchEstimationError, WrenchEstimator
from robot_dynamics.core.contact.momentum_observer import (
    MOMENTUM_SOURCES,
    MomentumObserver,
    ObserverError,
    outputs_at_gain,
    quieter_momentum_source,
)
from robot_dynamics.core.dynamics.friction import (
    FrictionFileError,
    friction_from_yaml,
    load_friction_file,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF
from robot_dynamics.simulation.reference import ArmSimulation, SensorNoise, scripted_excitation

FIXTURES = Path(__file__).resolve().parent / 'data' / 'fixtures'
GRAVITY = 9.8
ROD_MASS, ROD_LENGTH, ROD_COM = 0.1, 0.1, 0.05
ROD_I0 = ROD_MASS * ROD_LENGTH**2 / 3.0
PANDA_URDF = SHARED_DATA / 'panda_gaz2019' / 'panda_arm.urdf'


@pytest.fixture(scope='module')
def rod() -> RobotModel:
    return RobotModel.from_urdf_file(FIXTURES / 'standing_rod.urdf', gravity=(0.0, 0.0, -GRAVITY))


@pytest.fixture(scope='module')
def arm() -> RobotModel:
    return RobotModel.from_urdf_file(ARM_URDF)


def _rod_motion(external: float, friction=lambda rate: 0.0, duration: float = 0.3, seed: int = 0):
    """Closed-form rod under a wobbling motor torque plus ``external`` [N·m]: samples at random
    steps of 0.3–2 ms: (times, θ, θ̇, motor torque)."""

    def motor(t):
        return ROD_MASS * GRAVITY * ROD_COM * 0.8 + 0.01 * math.sin(2 * math.pi * 3.0 * t)

    def derivative(t, state):
        theta, rate = state
        return [
            rate,
            (motor(t) + external - friction(rate) - ROD_MASS * GRAVITY * ROD_COM * math.cos(theta))
            / ROD_I0,
        ]

    steps = np.random.default_rng(seed).uniform(0.3e-3, 2e-3, int(duration / 0.3e-3))
    times = np.concatenate([[0.0], np.cumsum(steps)])
    times = times[times <= duration]
    solution = solve_ivp(
        derivative,
        (0.0, duration),
        [0.3, 0.0],
        method='DOP853',
        t_eval=times,
        rtol=1e-12,
        atol=1e-12,
    )
    return times, solution.y[0], solution.y[1], np.array([motor(t) for t in times])


STARTING_SAMPLES = {'velocities': 1, 'positions': 2}  # samples without an output after a restart


def _run(observer, times, positions, velocities, efforts):
    """The rod observer's r from its first output on, and the time that output counts from
    (r = (1 − e^{−K(t − t_s)})τ for a constant τ)."""
    outputs = [
        observer.update(t, np.array([q]), np.array([v]), np.array([e]))
        for t, q, v, e in zip(times, positions, velocities, efforts)
    ]
    starting = STARTING_SAMPLES[observer.momentum]
    assert all(r is None for r in outputs[:starting]) and all(
        r is not None for r in outputs[starting:]
    )
    return np.array([r[0] for r in outputs[starting:]]), times[starting - 1]


# ---------------------------------------------------------------------------- observer
@pytest.mark.parametrize('momentum', MOMENTUM_SOURCES)
def test_observer_converges_as_one_minus_exp_for_constant_external_torque_on_the_rod(rod, momentum):
    gain, external = 40.0, 0.012
    times, positions, velocities, efforts = _rod_motion(external)
    residual, start = _run(
        MomentumObserver(rod, gain, momentum=momentum), times, positions, velocities, efforts
    )
    expected = external * (1.0 - np.exp(-gain * (times[-len(residual) :] - start)))
    assert np.max(np.abs(residual - expected)) < 1e-3 * external


@pytest.mark.parametrize('momentum', MOMENTUM_SOURCES)
def test_observer_residual_is_zero_without_external_torque_on_the_rod(rod, momentum):
    times, positions, velocities, efforts = _rod_motion(0.0)
    residual, _ = _run(
        MomentumObserver(rod, 200.0, momentum=momentum), times, positions, velocities, efforts
    )
    # only the quadrature's O(Δt²) error on ∫β (and, from positions, on the mean momentum) remains
    assert np.max(np.abs(residual)) < 1e-4 * np.max(np.abs(efforts))


@pytest.mark.parametrize('momentum', MOMENTUM_SOURCES)
def test_a_filter_stage_makes_the_step_response_the_second_order_one(rod, momentum):
    """With K_F the response to a constant τ_ext is the cascade's closed form
    τ[1 − (K_F e^{−K_O t} − K_O e^{−K_F t})/(K_F − K_O)], within the one sample (≤ 2 ms) the
    filter stage's held input leads it by."""
    gain, filter_gain, external = 40.0, 150.0, 0.012
    times, positions, velocities, efforts = _rod_motion(external)
    observer = MomentumObserver(rod, gain, momentum=momentum, filter_gain=filter_gain)
    residual, start = _run(observer, times, positions, velocities, efforts)
    elapsed = times[-len(residual) :] - start
    decays = filter_gain * np.exp(-gain * elapsed) - gain * np.exp(-filter_gain * elapsed)
    expected = external * (1.0 - decays / (filter_gain - gain))
    peak = np.log(filter_gain / gain) / (filter_gain - gain)  # where dr_f/dt is largest
    steepest = external * gain * filter_gain / (filter_gain - gain)
    steepest *= math.exp(-gain * peak) - math.exp(-filter_gain * peak)
    assert np.max(np.abs(residual - expected)) < steepest * 2e-3
    first_order = external * (1.0 - np.exp(-gain * elapsed))
    assert np.max(np.abs(residual - first_order)) > 2 * steepest * 2e-3


def test_a_filter_stage_takes_most_of_the_velocity_noise_out(rod):
    """The rod at rest, held by exactly its gravity torque, with white velocity noise σ_v at
    1 kHz (velocities form): the observer passes ≈ K_O I₀ σ_v of it; with a K_F = 200 /s stage
    over K_O = 50 /s less than a third of that is left (the cascade's noise falls off above
    K_F)."""
    count, sigma = 20000, 0.01
    times = np.arange(count) * 1e-3
    positions = np.full(count, 0.3)
    velocities = np.random.default_rng(3).normal(0.0, sigma, count)
    efforts = np.full(count, ROD_MASS * GRAVITY * ROD_COM * math.cos(0.3))
    noise = {}
    for filter_gain in (0.0, 200.0):
        observer = MomentumObserver(rod, 50.0, momentum='velocities', filter_gain=filter_gain)
        residual, _ = _run(observer, times, positions, velocities, efforts)
        noise[filter_gain] = float(np.std(residual[1000:]))
    assert noise[0.0] == pytest.approx(50.0 * ROD_I0 * sigma, rel=0.15)
    assert noise[200.0] < noise[0.0] / 3.0


@pytest.mark.parametrize('momentum', MOMENTUM_SOURCES)
@pytest.mark.parametrize('filter_gain', [0.0, 150.0])
def test_outputs_at_half_the_gain_are_those_of_an_observer_at_that_gain(rod, momentum, filter_gain):
    """The rod under an external torque, white velocity noise, samples 0.3–2 ms apart and a gap
    that restarts the observers: the outputs of an observer at K_O = 50 /s taken to 25 /s are
    those of an observer at 25 /s. Each segment starts from the 50 /s output, so they differ by
    that start's difference decaying: exactly as e^{−K'(t − t_s)} with one stage, and below 1 %
    of the external torque once settled."""
    external = 0.004
    times, positions, velocities, efforts = _rod_motion(external, duration=1.2)
    velocities = velocities + np.random.default_rng(5).normal(0.0, 0.05, len(times))
    times = np.where(times > 0.6, times + 0.3, times)  # a gap: both observers restart
    observers = [
        MomentumObserver(rod, gain, momentum=momentum, filter_gain=filter_gain)
        for gain in (50.0, 25.0)
    ]
    rows = []
    for t, q, v, e in zip(times, positions, velocities, efforts):
        outputs = [
            each.update(t, np.array([q]), np.array([v]), np.array([e])) for each in observers
        ]
        if outputs[0] is not None:
            restarted = observers[0].outputs_since_restart == 1
            rows.append((t, outputs[0][0], outputs[1][0], restarted))
    stamps, at_50, at_25, restarted = (np.array(column) for column in zip(*rows))
    assert np.count_nonzero(restarted) == 2  # the first output and the one after the gap
    taken, settled = outputs_at_gain(stamps, at_50[:, None], restarted, 50.0, filter_gain, 25.0)
    difference = taken[:, 0] - at_25
    assert 0.2 < np.count_nonzero(settled) / len(settled) < 0.9
    if filter_gain == 0.0:
        for start, end in zip(np.flatnonzero(restarted), [*np.flatnonzero(restarted)[1:], None]):
            elapsed = stamps[start:end] - stamps[start]
            decay = difference[start] * np.exp(-25.0 * elapsed)
            np.testing.assert_allclose(difference[start:end], decay, rtol=0, atol=1e-12)
    assert np.max(np.abs(difference[settled])) < 0.01 * external


@pytest.mark.parametrize('filter_gain', [-1.0, math.inf, math.nan])
def test_observer_refuses_a_filter_gain_that_is_negative_or_not_finite(rod, filter_gain):
    with pytest.raises(ObserverError, match='filter gain'):
        MomentumObserver(rod, filter_gain=filter_gain)


def test_observer_from_positions_ignores_the_velocities_but_for_coriolis_and_friction(rod):
    """A velocity that lags (as a robot's filtered one does) delays the velocity form, not the
    positions form: the rod's response to a step is unchanged when q̇ is 5 ms late."""
    gain, external = 40.0, 0.012
    times, positions, velocities, efforts = _rod_motion(external)
    late = np.interp(times - 5e-3, times, velocities)
    from_late, start = _run(MomentumObserver(rod, gain), times, positions, late, efforts)
    by_velocities, velocity_start = _run(
        MomentumObserver(rod, gain, momentum='velocities'), times, positions, late, efforts
    )
    expected = external * (1.0 - np.exp(-gain * (times[-len(from_late) :] - start)))
    assert np.max(np.abs(from_late - expected)) < 1e-3 * external  # rod: Cᵀq̇ = 0, no friction
    expected_by_velocities = external * (
        1.0 - np.exp(-gain * (times[-len(by_velocities) :] - velocity_start))
    )
    assert np.max(np.abs(by_velocities - expected_by_velocities)) > 0.1 * external


def test_observer_unwraps_a_continuous_joint_position_that_jumps_by_two_pi():
    robot = RobotModel.from_urdf_string(
        (FIXTURES / 'standing_rod.urdf')
        .read_text()
        .replace('type="revolute"', 'type="continuous"'),
        gravity=(0.0, 0.0, -GRAVITY),
    )
    assert robot.model.nq == 2  # (cos θ, sin θ)
    times, positions, velocities, efforts = _rod_motion(0.0)
    wrapped = positions + 2 * math.pi * (
        np.arange(len(times)) > len(times) // 2
    )  # as published past ±π
    residual, _ = _run(MomentumObserver(robot, 200.0), times, wrapped, velocities, efforts)
    assert np.max(np.abs(residual)) < 1e-4 * np.max(np.abs(efforts))


def test_observer_refuses_an_unknown_momentum_source(rod):
    with pytest.raises(ObserverError, match='positions, velocities'):
        MomentumObserver(rod, momentum='accelerations')


def test_observer_subtracts_the_identified_friction_model(rod):
    viscous, offset, external = 0.004, 0.003, 0.01
    motion = _rod_motion(external, friction=lambda rate: viscous * rate + offset)
    friction = friction_from_yaml(
        f'model: standing_rod\njoints:\n  motor:\n    rotor_inertia: 0.0\n    viscous: {viscous}\n '
        f'   coulomb: 0.0\n    offset: {offset}\n',
        rod.joint_names,
    )
    with_model, _ = _run(MomentumObserver(rod, 50.0, friction), *motion)
    without, _ = _run(MomentumObserver(rod, 50.0), *motion)
    assert abs(with_model[-1] - external) < 1e-3 * external
    assert abs(without[-1] - external) > 0.2 * offset


def test_observer_stays_at_noise_level_on_a_fast_arm_motion(arm):
    robot = RobotModel.from_urdf_file(ARM_URDF)
    simulation = ArmSimulation(
        robot, scripted_excitation(robot, base_frequency=0.5, max_acceleration=8.0)
    )
    observer = MomentumObserver(arm, 50.0)
    residuals, torques = [], []
    for _ in range(3000):
        sample = simulation.advance()
        residual = observer.update(sample.time, sample.positions, sample.velocities, sample.efforts)
        torques.append(sample.efforts)
        if residual is not None:
            residuals.append(residual)
    # semi-implicit Euler plant vs trapezoid observer: O(Δt) model error only
    assert np.max(np.abs(residuals)) < 2e-3 * np.max(np.abs(torques))


def test_observer_recovers_a_push_applied_in_the_simulated_forward_dynamics(arm):
    robot = RobotModel.from_urdf_file(ARM_URDF)
    simulation = ArmSimulation(robot, scripted_excitation(robot))
    observer = MomentumObserver(arm, 100.0)
    for step in range(1500):
        if step == 500:
            simulation.set_external_wrench('tool0', [6.0, -8.0, 4.0], [0.3, 0.0, -0.2])
        sample = simulation.advance()
        residual = observer.update(sample.time, sample.positions, sample.velocities, sample.efforts)
    np.testing.assert_allclose(
        residual, sample.external_torques, atol=0.02 * np.max(np.abs(sample.external_torques))
    )


@pytest.mark.parametrize('momentum', MOMENTUM_SOURCES)
def test_observer_restarts_on_a_gap_and_on_a_stamp_that_goes_back(rod, momentum):
    observer = MomentumObserver(rod, 50.0, max_gap=0.05, momentum=momentum)
    state = (np.array([0.3]), np.array([0.1]), np.array([0.04]))
    silent = STARTING_SAMPLES[momentum]

    def outputs(*stamps):
        return [observer.update(stamp, *state) is not None for stamp in stamps]

    assert outputs(0.0, 0.001, 0.002, 0.003) == [False] * silent + [True] * (4 - silent)
    assert outputs(0.2) == [False] and 'time step' in observer.last_restart_reason
    assert outputs(0.201, 0.202, 0.203) == [False] * (silent - 1) + [True] * (4 - silent)
    assert outputs(0.1) == [False]
    observer.reset('efforts stale')
    assert not observer.running
    assert outputs(0.3) == [False] and observer.last_restart_reason == 'efforts stale'
    assert observer.restarts == 4


@pytest.mark.parametrize('gain', [0.0, -1.0, math.nan, [1.0, 2.0]])
def test_observer_refuses_a_gain_that_is_not_positive_per_joint(rod, gain):
    with pytest.raises(ObserverError):
        MomentumObserver(rod, gain)


def test_friction_file_errors_name_the_problem(rod, tmp_path):
    with pytest.raises(FrictionFileError, match='not in the model'):
        friction_from_yaml('joints:\n  elbow: {viscous: 1.0}\n', rod.joint_names)
    with pytest.raises(FrictionFileError, match='finite'):
        friction_from_yaml('joints:\n  motor: {viscous: .nan}\n', rod.joint_names)
    with pytest.raises(FrictionFileError, match="'joints'"):
        friction_from_yaml('- 1\n- 2\n', rod.joint_names)
    with pytest.raises(FrictionFileError, match='cannot be read'):
        load_friction_file(str(tmp_path / 'missing.yaml'), rod.joint_names)


# ---------------------------------------------------------------------------- contact detection
def test_contact_needs_the_minimum_duration_and_releases_with_hysteresis():
    detector = ContactDetector(
        np.array([1.0, 2.0]), min_duration=0.003, release_ratio=0.5, release_duration=0.01
    )
    stamps = np.arange(0.0, 0.1, 0.001)

    def feed(start, values):
        return [detector.update(t, np.asarray(values, float)) for t in stamps[start : start + 5]]

    assert not any(u.in_contact for u in feed(0, [0.5, 1.0]))
    spike = [
        detector.update(0.005, np.array([1.5, 0.0])),
        detector.update(0.006, np.array([0.0, 0.0])),
    ]
    assert not any(u.in_contact for u in spike)  # shorter than min_duration
    updates = [detector.update(t, np.array([0.0, 2.5])) for t in stamps[10:15]]
    assert [u.changed for u in updates] == [False, False, False, True, False]
    np.testing.assert_allclose(updates[-1].ratios, [0.0, 1.25])
    held = [detector.update(t, np.array([0.6, 0.0])) for t in stamps[15:40]]  # above release: held
    assert all(u.in_contact for u in held)
    released = [detector.update(t, np.array([0.4, 0.0])) for t in stamps[40:60]]
    first_free = next(i for i, u in enumerate(released) if not u.in_contact)
    assert first_free == 10 and released[first_free].changed and detector.contacts == 1


def test_a_contact_holds_its_baseline_and_ends_when_the_torques_return_to_it():
    """A model error keeps joint 1 at 0.80 + 0.05 t of its threshold with nothing touching (the
    ratios never fall below the release ratio 0.7) and a push adds 3 thresholds on joint 2 from
    1.0 to 1.3 s, at 1 kHz. The baseline is the mean of the 20 ms ending 40 ms before the first
    sample over a threshold (the ramp at 0.95 s); the contact ends 50 ms (release_duration) after
    the push, once the change since the baseline is below the release ratio. A contact that
    begins with the detector's first sample has no baseline and is held by the error."""
    stamps = np.arange(1600) * 0.001

    def torques(t):
        return np.array([0.80 + 0.05 * t, 3.0 if 1.0 <= t < 1.3 else 0.0])

    detector = ContactDetector(np.array([1.0, 1.0]))
    updates = {round(t, 3): detector.update(t, torques(t)) for t in stamps}
    assert updates[1.005].changed and updates[1.005].in_contact and detector.onset == 1.0
    released = [t for t, update in updates.items() if update.changed and not update.in_contact]
    assert released == [1.35] and detector.baseline is None and detector.contacts == 1

    detector = ContactDetector(np.array([1.0, 1.0]))
    baselines = []
    for t in stamps:
        detector.update(t, torques(t))
        baselines.append(detector.baseline)
    np.testing.assert_allclose(baselines[1100], [0.80 + 0.05 * 0.95, 0.0], atol=1e-4)

    unreferenced = ContactDetector(np.array([1.0, 1.0]))
    held = [unreferenced.update(t, torques(t)) for t in stamps[1000:]]
    assert held[5].changed and unreferenced.baseline is None
    assert all(update.in_contact for update in held[5:])


def test_a_force_that_builds_up_slowly_holds_one_contact_until_it_is_gone():
    """A force ramping on joint 2 from 0 at 0.5 s to 2 thresholds at 1.5 s, held to 2.0 s: its
    baseline holds 0.9 of a threshold of it (the ramp 40–60 ms before it crossed), so its change
    since falls below the release ratio at once. While a ratio of τ_ext exceeds 1 the contact
    still holds: one contact, from 1.006 s to 50 ms after the force is gone."""
    stamps = np.arange(2500) * 0.001

    def torques(t):
        ramp = 2.0 * min(max(t - 0.5, 0.0), 1.0) if t < 2.0 else 0.0
        return np.array([0.5, ramp])

    detector = ContactDetector(np.array([1.0, 1.0]))
    changes = [
        (round(t, 3), u.in_contact) for t in stamps if (u := detector.update(t, torques(t))).changed
    ]
    assert changes == [(1.006, True), (2.05, False)]


def test_calibrated_thresholds_are_mean_plus_k_sigma():
    rng = np.random.default_rng(3)
    residuals = rng.normal([0.1, -0.2, 0.0], [0.05, 0.3, 0.0], (20000, 3))
    thresholds = calibrated_thresholds(residuals, 5.0)
    np.testing.assert_allclose(thresholds[:2], [0.1 + 5 * 0.05, 0.2 + 5 * 0.3], rtol=0.02)
    assert thresholds[2] > 0.0  # a noiseless joint still gets a usable threshold


def test_calibration_and_thresholds_refuse_unusable_input():
    with pytest.raises(ContactCalibrationError, match='at least'):
        calibrated_thresholds(np.zeros((5, 3)))
    with pytest.raises(ContactCalibrationError, match='finite'):
        calibrated_thresholds(np.full((500, 3), np.inf))
    with pytest.raises(ThresholdError, match='one value per joint'):
        checked_thresholds([1.0, 2.0], 3)
    with pytest.raises(ThresholdError, match='positive'):
        checked_thresholds([1.0, 0.0, 2.0], 3)


def test_residual_history_window_keeps_the_last_seconds():
    history = ResidualHistory(100, 2)
    for k in range(250):
        history.append(k * 0.01, np.array([k, -k], float), restarted=k % 40 == 0)
    window = history.window(0.505)
    assert window[:, 0].min() == 199 and window[:, 0].max() == 249 and len(window) == 51
    stamps, values, restarted = history.rows(0.505)  # in time order across the ring's wrap
    np.testing.assert_array_equal(values[:, 0], np.arange(199, 250))
    np.testing.assert_allclose(stamps, np.arange(199, 250) * 0.01)
    assert list(values[restarted, 0]) == [200, 240]
    history.clear()
    assert len(history.window(10.0)) == 0 and len(history.rows(10.0)[0]) == 0


# ---------------------------------------------------------------------------- external wrench
def _torques_by_rnea_with_external_force(
    robot: RobotModel, positions: np.ndarray, frame: str, wrench: np.ndarray
):
    """τ_ext = rnea(q, 0, 0) − rnea(q, 0, 0, f_ext): the joint torques of a wrench on ``frame``
    (LOCAL, at its origin)."""
    model, data = robot.model, robot.model.createData()
    q, zero = robot.configuration(positions), np.zeros(model.nv)
    forces = pin.StdVec_Force()
    forces.extend([pin.Force.Zero() for _ in range(model.njoints)])
    frame_data = model.frames[model.getFrameId(frame)]
    forces[frame_data.parentJoint] = frame_data.placement.act(pin.Force(wrench[:3], wrench[3:]))
    difference = pin.rnea(model, data, q, zero, zero) - pin.rnea(model, data, q, zero, zero, forces)
    return robot.joint_part(robot.reduce(difference))


def _random_positions(robot: RobotModel, rng) -> np.ndarray:
    lower = np.where(np.isfinite(robot.limits.lower), robot.limits.lower, -math.pi)
    upper = np.where(np.isfinite(robot.limits.upper), robot.limits.upper, math.pi)
    return rng.uniform(lower, upper)


@pytest.mark.parametrize('urdf, frame', [(ARM_URDF, 'tool0'), (PANDA_URDF, 'panda_link8')])
def test_wrench_recovered_from_joint_torques_on_random_poses(urdf, frame):
    if not Path(urdf).exists():
        pytest.skip(f'{urdf} is not available')
    robot = RobotModel.from_urdf_file(urdf)
    estimator = WrenchEstimator(robot, frame)
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(40):
        positions = _random_positions(robot, rng)
        if np.linalg.svd(estimator.jacobian(positions), compute_uv=False)[-1] < 0.05:
            continue  # near-singular poses: see the singular-pose test
        wrench = np.concatenate([rng.uniform(-20, 20, 3), rng.uniform(-2, 2, 3)])
        estimate = estimator.estimate(
            positions, _torques_by_rnea_with_external_force(robot, positions, frame, wrench)
        )
        np.testing.assert_allclose(estimate.wrench, wrench, atol=1e-8)
        assert estimate.identifiable == 6
        checked += 1
    assert checked >= 20


def test_wrench_of_a_short_chain_reports_only_its_identifiable_part():
    robot = RobotModel.from_urdf_file(FIXTURES / 'turret_gripper.urdf')
    estimator = WrenchEstimator(robot, 'tcp')
    rng = np.random.default_rng(2)
    for _ in range(10):
        positions = _random_positions(robot, rng)
        wrench = np.concatenate([rng.uniform(-10, 10, 3), rng.uniform(-1, 1, 3)])
        torques = _torques_by_rnea_with_external_force(robot, positions, 'tcp', wrench)
        estimate = estimator.estimate(positions, torques)
        jacobian = estimator.jacobian(positions)
        assert estimate.identifiable <= robot.num_joints < 6
        np.testing.assert_allclose(
            jacobian.T @ estimate.wrench, torques, atol=1e-6
        )  # explains the torques
        # minimum norm: no component a joint cannot feel (the null space of Jᵀ)
        projection = np.linalg.pinv(jacobian.T) @ jacobian.T
        np.testing.assert_allclose(projection @ estimate.wrench, estimate.wrench, atol=1e-6)


def test_wrench_at_a_singular_pose_is_finite_and_bounded(arm):
    estimator = WrenchEstimator(arm, 'tool0')
    positions = np.zeros(arm.num_joints)  # stretched up: joints 1, 3, 5, 7 share the vertical axis
    assert np.linalg.svd(estimator.jacobian(positions), compute_uv=False)[-1] < 1e-9
    for torques in (
        np.ones(arm.num_joints),
        np.random.default_rng(1).normal(0.0, 50.0, arm.num_joints),
    ):
        estimate = estimator.estimate(positions, torques)
        assert np.all(np.isfinite(estimate.wrench)) and estimate.identifiable < 6
        bound = max(1.0 / estimator.singular_threshold, 1.0 / (2.0 * estimator.damping))
        assert np.linalg.norm(estimate.wrench) <= bound * np.linalg.norm(torques)


def test_wrench_frame_must_move_with_a_joint(arm):
    with pytest.raises(WrenchEstimationError, match='not a frame'):
        WrenchEstimator(arm, 'nowhere')
    with pytest.raises(WrenchEstimationError, match='fixed to the world'):
        WrenchEstimator(arm, arm.model.frames[1].name)


def test_sensor_noise_keeps_the_observer_residual_small_relative_to_a_ten_newton_push(arm):
    robot = RobotModel.from_urdf_file(ARM_URDF)
    simulation = ArmSimulation(robot, scripted_excitation(robot))
    noise = SensorNoise(velocity=0.001, effort=0.02, seed=4)
    rng = noise.generator()
    observer = MomentumObserver(arm, 50.0)
    free = []
    for step in range(4000):
        sample = noise.applied(simulation.advance(), rng)
        residual = observer.update(sample.time, sample.positions, sample.velocities, sample.efforts)
        if residual is not None and step > 200:
            free.append(residual)
    simulation.set_external_wrench('tool0', [10.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    push = simulation.external_torques(robot.configuration(simulation.advance().positions))
    assert np.max(np.abs(push)) > 10.0 * np.max(np.std(free, axis=0))


def test_the_quieter_momentum_source_has_the_lower_geometric_mean_threshold():
    # one joint far quieter outweighs two slightly noisier ones: the product of thresholds decides
    thresholds = {'positions': np.array([0.01, 1.2, 1.2]), 'velocities': np.array([1.0, 1.0, 1.0])}
    assert quieter_momentum_source(thresholds) == 'positions'
    thresholds['positions'][0] = 0.9
    assert quieter_momentum_source(thresholds) == 'velocities'
