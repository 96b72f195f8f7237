"""Payload identification (robot_dynamics.core.identification.payload) on synthetic recordings with
known
truth and on the real Panda recording.

Truth comes from pinocchio's RNEA on a model with the payload attached by
RobotModel.attach_payload (an independent path from the regressor the estimator uses);
the estimator never sees the accelerations, only (t, q, q̇ + noise, τ + noise).
"""

from __future__ import annotations

import functools
import json
import math
import re

import numpy as np
import pinocchio as pin
import pytest
import yaml
from conftest import SHARED_DATA

from robot_dynamics.core.dynamics import regressor
from robot_dynamics.core.identification import recording_files as recordings
from robot_dynamics.core.identification.payload import (
    PayloadOptions,
    PayloadSettingsError,
    identify_payload,
)
from robot_dynamics.core.identification.payload_regressor import (
    nominal_body_parameters,
    payload_parameter_map,
    payload_regressor,
)
from robot_dynamics.core.identification.payload_report import REPORT_KEYS
from robot_dynamics.core.identification.recording import Recording
from robot_dynamics.core.model.inertia import InertialParameters, pseudo_inertia_from_vector
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF

PAYLOAD = InertialParameters(
    2.0,
    [0.05, -0.02, 0.08],
    [[0.012, 0.001, -0.0005], [0.001, 0.010, 0.0008], [-0.0005, 0.0008, 0.007]],
)
LINK = 'tool0'
PANDA = SHARED_DATA / 'panda_gaz2019'
needs_panda_data = pytest.mark.skipif(
    not (PANDA / 'panda_arm.urdf').is_file(),
    reason=f'the Gaz et al. 2019 Panda data are not at {PANDA} (a clone without ../shared): the '
    'real-robot checks need them',
)


# ------------------------------------------------------------------------------ synthetic data


def arm() -> RobotModel:
    return RobotModel.from_urdf_file(ARM_URDF)


def fourier_motion(
    robot: RobotModel, duration: float = 20.0, rate: float = 1000.0, seed: int = 0, moving=None
) -> tuple:
    """Multi-joint finite Fourier excitation (Swevers et al. 1997), 5 harmonics of 0.1 Hz, scaled
    to 80 % of the joint range around its middle and 1.2 rad/s peak; analytic q, q̇, q̈.
    ``moving``: indices of the joints that move (all by default)."""
    generator = np.random.default_rng(seed)
    n, harmonics, omega = robot.num_joints, np.arange(1, 6), 2 * np.pi * 0.1
    time = np.arange(0.0, duration, 1.0 / rate)
    sines, cosines = (
        np.sin(np.outer(time, harmonics * omega)),
        np.cos(np.outer(time, harmonics * omega)),
    )
    lower, upper = robot.limits.lower, robot.limits.upper
    q, v, a = (
        np.tile(0.5 * (lower + upper), (len(time), 1)),
        np.zeros((len(time), n)),
        np.zeros((len(time), n)),
    )
    for j in range(n) if moving is None else moving:
        cos_coefficients, sin_coefficients = generator.normal(size=5), generator.normal(size=5)
        frequencies = harmonics * omega
        position = sines @ (cos_coefficients / frequencies) - cosines @ (
            sin_coefficients / frequencies
        )
        velocity = cosines @ cos_coefficients + sines @ sin_coefficients
        acceleration = -sines @ (cos_coefficients * frequencies) + cosines @ (
            sin_coefficients * frequencies
        )
        scale = min(
            0.4 * (upper[j] - lower[j]) / np.abs(position).max(), 1.2 / np.abs(velocity).max()
        )
        q[:, j] += scale * position
        v[:, j], a[:, j] = scale * velocity, scale * acceleration
    return time, q, v, a


def static_motion(
    robot: RobotModel,
    poses: int,
    hold: float = 2.0,
    move: float = 1.0,
    rate: float = 1000.0,
    seed: int = 3,
    varied=None,
) -> tuple:
    """Random poses held ``hold`` s each, joined by cosine-profile moves of ``move`` s;
    ``varied``: indices of the joints that differ between poses (all by default)."""
    generator = np.random.default_rng(seed)
    middle, half = (
        0.5 * (robot.limits.lower + robot.limits.upper),
        0.35 * (robot.limits.upper - robot.limits.lower),
    )
    mask = np.zeros(robot.num_joints)
    mask[list(range(robot.num_joints)) if varied is None else varied] = 1.0
    targets = [
        middle + mask * half * generator.uniform(-1, 1, robot.num_joints) for _ in range(poses)
    ]
    pieces, start = [], 0.0
    for k, pose in enumerate(targets):
        still = np.arange(0.0, hold, 1.0 / rate)
        pieces.append(
            (
                start + still,
                np.tile(pose, (len(still), 1)),
                np.zeros((len(still), len(pose))),
                np.zeros((len(still), len(pose))),
            )
        )
        start += hold
        if k + 1 < len(targets):
            tau = np.arange(0.0, move, 1.0 / rate)
            step = targets[k + 1] - pose
            shape = 0.5 - 0.5 * np.cos(np.pi * tau / move)
            rate_ = 0.5 * np.pi / move * np.sin(np.pi * tau / move)
            curvature = 0.5 * (np.pi / move) ** 2 * np.cos(np.pi * tau / move)
            pieces.append(
                (
                    start + tau,
                    pose + np.outer(shape, step),
                    np.outer(rate_, step),
                    np.outer(curvature, step),
                )
            )
            start += move
    return tuple(np.concatenate([piece[k] for piece in pieces]) for k in range(4))


def true_robot(
    payload=PAYLOAD, perturbed: bool = False, heavier_link: int | None = None
) -> RobotModel:
    """The 'real' robot: the URDF with the payload attached, optionally with ±5 % mass / ±5 mm
    CoM errors on the last three links (signs from a seeded generator) or one link 40 % heavier."""
    robot, plain = arm(), arm()
    if payload is not None:
        robot.attach_payload(LINK, payload)
    generator = np.random.default_rng(1)
    wrong = {}
    if perturbed:
        for joint_id in range(robot.model.njoints - 3, robot.model.njoints):
            link = plain.model.inertias[joint_id]
            wrong[joint_id] = pin.Inertia(
                link.mass * (1 + 0.05 * generator.choice([-1, 1])),
                link.lever + 0.005 * generator.choice([-1, 1], 3),
                link.inertia,
            )
    if heavier_link is not None:
        link = plain.model.inertias[heavier_link]
        wrong[heavier_link] = pin.Inertia(1.4 * link.mass, link.lever, 1.4 * link.inertia)
    for joint_id, inertia in wrong.items():
        parameters = (
            robot.model.inertias[joint_id].toDynamicParameters()
            - plain.model.inertias[joint_id].toDynamicParameters()
            + inertia.toDynamicParameters()
        )
        robot.model.inertias[joint_id] = pin.Inertia.FromDynamicParameters(parameters)
    return robot


def measured(
    motion: tuple,
    truth: RobotModel,
    effort_noise: float = 0.05,
    velocity_noise: float = 1e-3,
    friction: bool = False,
    seed: int = 2,
    time_offset: float = 0.0,
) -> Recording:
    """A recording of ``truth`` following ``motion``: RNEA torques (+ viscous/Coulomb friction
    and offsets up to 0.2 N·m) + white noise; measured velocities with white noise."""
    time, q, v, a = motion
    torques = _rnea_torques(truth, q, v, a)
    if friction:
        fixed = np.random.default_rng(99)  # the same robot in every recording
        viscous, coulomb = fixed.uniform(0.1, 0.3, q.shape[1]), fixed.uniform(0.2, 0.5, q.shape[1])
        torques = (
            torques + viscous * v + coulomb * np.sign(v) + fixed.uniform(-0.2, 0.2, q.shape[1])
        )
    generator = np.random.default_rng(seed)
    return Recording(
        time + time_offset,
        q,
        v + generator.normal(0.0, velocity_noise, v.shape),
        torques + generator.normal(0.0, effort_noise, torques.shape),
        truth.joint_names,
    )


def _rnea_torques(robot: RobotModel, q, v, a) -> np.ndarray:
    return np.array([pin.rnea(robot.model, robot.data, *sample) for sample in zip(q, v, a)])


@functools.lru_cache(maxsize=None)
def excitation():
    return fourier_motion(arm())


def assert_payload_close(report, mass_tolerance: float, com_tolerance: float) -> None:
    assert report.success, report.reason
    assert abs(report.mass - PAYLOAD.mass) <= mass_tolerance, report.mass
    assert np.linalg.norm(np.array(report.com) - PAYLOAD.com) <= com_tolerance, report.com


FULL_OVERLAP = 'full overlap'
# [s] the payload recording's clock starts after any baseline (a node keeps stamps ordered)
PAYLOAD_START = 100.0


@functools.lru_cache(maxsize=None)
def overlap_cases(rate: float = 1000.0) -> dict:
    """Payload recording / baseline pairs of one 20 s excitation (two 10 s periods), as an operator
    records them by hand, on a realistic robot: ±5 % mass / ±5 mm CoM errors on links 5-7,
    viscous + Coulomb friction, torque offsets, σ_τ = 0.1 N·m, σ_q̇ = 1e-3 rad/s. The baseline
    runs from t = 0, the payload recording from t = PAYLOAD_START. Name → (recording, baseline,
    seconds of motion both share)."""
    robot = arm()
    loaded_robot, empty_robot = true_robot(perturbed=True), true_robot(payload=None, perturbed=True)

    def recorded(truth, duration, seed, offset):
        return measured(
            fourier_motion(robot, duration, rate),
            truth,
            effort_noise=0.1,
            friction=True,
            seed=seed,
            time_offset=offset,
        )

    loaded = recorded(loaded_robot, 20.0, 2, PAYLOAD_START)
    empty = recorded(empty_robot, 20.0, 7, 0.0)
    middle_of_loaded = loaded.slice_time(PAYLOAD_START + 3.0, PAYLOAD_START + 15.0)
    return {
        FULL_OVERLAP: (loaded, empty, 20.0),
        'baseline starts 6 s late': (loaded, empty.slice_time(6.0, 20.0), 14.0),
        'baseline ends 6 s early': (loaded, empty.slice_time(0.0, 14.0), 14.0),
        'baseline has more periods': (loaded, recorded(empty_robot, 40.0, 7, 0.0), 20.0),
        'payload recording shorter than the baseline': (middle_of_loaded, empty, 12.0),
    }


PARTIAL_OVERLAPS = (
    'baseline starts 6 s late',
    'baseline ends 6 s early',
    'baseline has more periods',
    'payload recording shorter than the baseline',
)
EDGE_TRIM = (
    0.2  # [s] the filter's transient trim at each end of each recording (2 cutoff periods at 10 Hz)
)


def assert_as_accurate_as_full_overlap(case: dict, reference: dict) -> None:
    """``case`` (report dict of a partial overlap) is as accurate as the full-overlap ``reference``
    on the same data, once the data it could use are accounted for: with s = √(used_ref / used),
    every 1σ is at most 1.75·s times the reference's, every error within s × (the reference's
    error + 3 of its σ), and within 4 of the case's own σ (its uncertainty is honest)."""
    assert case['success'] and reference['success'], (case['reason'], reference['reason'])
    assert case['mode'] == reference['mode'] == 'full'
    scale = math.sqrt(reference['used_duration'] / case['used_duration'])
    estimates = [
        (case['mass'], case['mass_std'], reference['mass'], reference['mass_std'], PAYLOAD.mass)
    ]
    estimates += list(
        zip(case['com'], case['com_std'], reference['com'], reference['com_std'], PAYLOAD.com)
    )
    for value, std, reference_value, reference_std, true in estimates:
        error = abs(value - true)
        assert std <= 1.75 * scale * reference_std, (std, reference_std, scale)
        assert error <= scale * (abs(reference_value - true) + 3 * reference_std), (
            error,
            reference_value - true,
        )
        assert error <= 4 * std, (error, std)


# ------------------------------------------------------------------------------ regressor


def test_payload_parameter_map_equals_pinocchio_se3_act_on_inertia():
    generator = np.random.default_rng(4)
    for _ in range(20):
        placement = pin.SE3.Random()
        body = pin.Inertia.Random()
        mapped = payload_parameter_map(placement) @ body.toDynamicParameters()
        np.testing.assert_allclose(mapped, placement.act(body).toDynamicParameters(), atol=1e-12)
        differences = generator.normal(size=10)  # linear: holds for non-physical vectors too
        left = payload_parameter_map(placement) @ (body.toDynamicParameters() + differences)
        np.testing.assert_allclose(
            left - mapped, payload_parameter_map(placement) @ differences, atol=1e-12
        )


def test_payload_regressor_predicts_the_torque_that_attaching_the_payload_adds():
    robot, loaded = arm(), arm()
    loaded.attach_payload(LINK, PAYLOAD)
    generator = np.random.default_rng(5)
    q, v, a = (generator.uniform(-1.5, 1.5, (6, robot.num_joints)) for _ in range(3))
    q = np.clip(q, robot.limits.lower, robot.limits.upper)
    added = _rnea_torques(loaded, q, v, a) - _rnea_torques(robot, q, v, a)
    predicted = payload_regressor(robot, LINK, q, v, a) @ PAYLOAD.pinocchio_vector()
    np.testing.assert_allclose(predicted, added.reshape(-1), atol=1e-9)


def test_nominal_body_parameters_exclude_an_attached_payload():
    live, plain = arm(), arm()
    live.attach_payload(LINK, PAYLOAD)
    np.testing.assert_allclose(
        nominal_body_parameters(live), regressor.body_parameter_vector(plain), atol=1e-12
    )


# ------------------------------------------------------------------------------ accuracy


def test_clean_excitation_recovers_mass_com_and_inertia_within_benchmark():
    report = identify_payload(arm(), measured(excitation(), true_robot()), LINK, 'auto')
    assert report.mode == 'full' and report.feasible
    assert_payload_close(report, 1e-3, 0.5e-3)
    assert np.abs(report.inertial_parameters().inertia_com - PAYLOAD.inertia_com).max() < 1e-3
    assert report.warnings == ()
    # solve_time is wall clock (perf_counter): ~3× headroom over the former 1 s so a loaded 2-core
    # CI machine does not fail it; still far below a solver that iterates to its limit.
    assert report.solve_time < 3.0


def test_realistic_robot_without_baseline_is_flagged_not_confidently_wrong():
    report = identify_payload(
        arm(),
        measured(excitation(), true_robot(perturbed=True), effort_noise=0.1, friction=True),
        LINK,
        'auto',
    )
    mass_error = abs(report.mass - PAYLOAD.mass)
    com_error = np.linalg.norm(np.array(report.com) - PAYLOAD.com)
    assert mass_error > 0.03  # the plain fit is wrong: body errors, friction and offsets leak in
    warned = any('record a baseline' in text for text in report.warnings)
    covered = mass_error <= 3 * report.mass_std and com_error <= 3 * np.linalg.norm(report.com_std)
    assert warned or covered


def test_baseline_of_the_same_motion_removes_body_errors_friction_and_offsets():
    motion = excitation()
    loaded = measured(motion, true_robot(perturbed=True), effort_noise=0.1, friction=True)
    # the baseline started 0.7 s later in the trajectory and on another clock
    empty = measured(
        motion,
        true_robot(payload=None, perturbed=True),
        effort_noise=0.1,
        friction=True,
        seed=7,
        time_offset=100.0,
    ).slice_time(100.7, 200.0)
    report = identify_payload(arm(), loaded, LINK, 'auto', baseline=empty)
    assert report.used_baseline
    assert_payload_close(report, 10e-3, 2e-3)
    assert abs(report.mass - PAYLOAD.mass) <= 4 * report.mass_std


def test_static_poses_give_mass_and_com_within_benchmark():
    report = identify_payload(arm(), measured(static_motion(arm(), 5), true_robot()), LINK, 'auto')
    assert report.mode == 'mass_com' and report.inertia is None and report.inertia_std is None
    assert any('static' in text for text in report.warnings)
    assert_payload_close(report, 20e-3, 3e-3)


def test_noise_free_static_poses_are_kept_as_holds_and_identify_the_payload():
    """A simulated (noise-free) robot holding a pose repeats its state exactly: those rows are the
    static data, not logger repeats, so the holds must not become gaps."""
    recording = measured(
        static_motion(arm(), 6), true_robot(), effort_noise=0.0, velocity_noise=0.0
    )
    report = identify_payload(arm(), recording, LINK, 'mass_com')
    assert_payload_close(report, 1e-3, 1e-3)
    assert report.samples > 6 * 40  # every hold contributes samples


def test_reported_standard_deviation_matches_monte_carlo_spread():
    robot, motion = arm(), fourier_motion(arm(), duration=10.0, rate=500.0, seed=11)
    clean = measured(motion, true_robot(), effort_noise=0.0, velocity_noise=0.0)
    options = PayloadOptions(
        body_mass_uncertainty=0.0, body_com_uncertainty=0.0, effort_scale_uncertainty=0.0
    )
    generator = np.random.default_rng(12)
    masses, stds = [], []
    for _ in range(12):
        noisy = Recording(
            clean.time,
            clean.positions,
            clean.velocities,
            clean.efforts + generator.normal(0.0, 0.5, clean.efforts.shape),
            clean.joint_names,
        )
        report = identify_payload(robot, noisy, LINK, 'mass_com', options=options)
        masses.append(report.mass)
        stds.append(report.mass_std)
    spread, predicted = np.std(masses, ddof=1), np.mean(stds)
    assert 0.4 * predicted < spread < 2.0 * predicted, (spread, predicted)


def test_reported_standard_deviation_carries_the_effort_scale_errors():
    """Each recording pair (with and without the payload, one baseline) has its own per-joint
    effort scale errors drawn with σ = 2 %, 0.05 N·m of noise: the spread of the identified mass and
    CoM is the systematic term, and the reported 1σ must carry it (it did not before: 1σ of the
    noise alone)."""
    robot, motion = arm(), fourier_motion(arm(), duration=10.0, rate=500.0, seed=11)
    loaded = measured(motion, true_robot(), effort_noise=0.05, velocity_noise=0.0)
    empty = measured(motion, true_robot(payload=None), effort_noise=0.05, velocity_noise=0.0)
    generator = np.random.default_rng(13)
    masses, stds, coms, com_stds = [], [], [], []
    for _ in range(16):
        scale = 1.0 + generator.normal(0.0, 0.02, robot.num_joints)
        scaled = [
            Recording(r.time, r.positions, r.velocities, r.efforts * scale, r.joint_names)
            for r in (loaded, empty)
        ]
        report = identify_payload(robot, scaled[0], LINK, 'mass_com', baseline=scaled[1])
        masses.append(report.mass)
        stds.append(report.mass_std)
        coms.append(report.com)
        com_stds.append(report.com_std)
    spread, predicted = np.std(masses, ddof=1), np.mean(stds)
    assert 0.4 * predicted < spread < 2.0 * predicted, (spread, predicted)
    com_spread, com_predicted = np.std(coms, axis=0, ddof=1), np.mean(com_stds, axis=0)
    assert np.all(com_spread < 2.0 * com_predicted), (com_spread, com_predicted)
    assert np.linalg.norm(com_spread) > 0.4 * np.linalg.norm(com_predicted)


def test_full_mode_estimate_is_physically_consistent():
    point_like = InertialParameters(0.3, [0.0, 0.0, 0.05], np.diag([1e-5, 1e-5, 1e-5]))
    robot = arm()
    report = identify_payload(
        robot,
        measured(fourier_motion(robot, 8.0, seed=3), true_robot(point_like), effort_noise=0.3),
        LINK,
        'full',
    )
    assert report.success and report.feasible
    pseudo = pseudo_inertia_from_vector(report.inertial_parameters().pinocchio_vector())
    assert np.linalg.eigvalsh(pseudo).min() >= -1e-8


def test_noise_free_efforts_of_the_same_load_find_no_payload_however_small_the_sigma():
    """Efforts computed from the model (no noise) give a σ at rounding level: a fitted mass of a
    fraction of a milligram then passes the 3σ test, yet it is no payload."""
    arm = true_robot(payload=None)
    motion = fourier_motion(arm, duration=6.0, rate=250.0, seed=3)
    recording = measured(motion, arm, effort_noise=0.0, velocity_noise=0.0)
    baseline = measured(motion, arm, effort_noise=0.0, velocity_noise=0.0, time_offset=100.0)
    report = identify_payload(arm, recording, LINK, 'mass_com', baseline=baseline)
    assert not report.success and 'no payload is detectable' in report.reason, report.reason
    assert abs(report.mass) < 1e-3 and report.com is None


@needs_panda_data
def test_panda_recording_without_payload_finds_no_payload_and_bounds_its_mass():
    robot = RobotModel.from_urdf_file(PANDA / 'panda_arm.urdf')
    report = identify_payload(robot, recordings.read_panda_gaz2019(PANDA), 'panda_link8', 'auto')
    assert not report.success and 'no payload is detectable' in report.reason, report.reason
    assert abs(report.mass) <= 2 * report.mass_std, (report.mass, report.mass_std)
    assert report.com is None and report.inertia is None  # no CoM of nothing
    assert any('model mismatch' in text for text in report.warnings)
    # solve_time is wall clock (perf_counter): ~3× headroom over the former 1 s so a loaded 2-core
    # CI machine does not fail it; still far below a solver that iterates to its limit.
    assert report.solve_time < 3.0


@needs_panda_data
def test_panda_second_trajectory_period_as_baseline_cancels_friction_and_finds_no_payload():
    # the Panda excitation repeats every 2π/(0.15π) = 13.33 s: the same motion twice, no payload
    robot = RobotModel.from_urdf_file(PANDA / 'panda_arm.urdf')
    recording = recordings.read_panda_gaz2019(PANDA)
    first, second = recording.slice_time(1.0, 7.0), recording.slice_time(13.0, 21.0)
    plain = identify_payload(robot, first, 'panda_link8', 'auto')
    differenced = identify_payload(robot, first, 'panda_link8', 'auto', baseline=second)
    assert not differenced.success and 'no payload is detectable' in differenced.reason, (
        differenced.reason
    )
    assert (
        abs(differenced.mass) <= max(2 * differenced.mass_std, 0.005)
        and abs(differenced.mass) < 0.01
    )
    assert differenced.residual_rms_before < 0.5 * plain.residual_rms_before
    assert not any('model mismatch' in text for text in differenced.warnings)


# ------------------------------------------------------------------------------ partial overlap


@functools.lru_cache(maxsize=None)
def full_overlap_report(rate: float = 1000.0) -> dict:
    loaded, empty, _ = overlap_cases(rate)[FULL_OVERLAP]
    return identify_payload(arm(), loaded, LINK, 'auto', baseline=empty).to_dict()


def expected_stretch(recording: Recording, shared: float) -> tuple:
    """(baseline_coverage, used_duration [s]) for ``shared`` seconds of common motion: both
    recordings lose EDGE_TRIM at each end to the filter."""
    analysed = recording.time[-1] - recording.time[0] - 2 * EDGE_TRIM
    used = shared - 2 * EDGE_TRIM
    return used / analysed, used


def test_a_full_overlap_uses_the_whole_recording():
    loaded, _, shared = overlap_cases()[FULL_OVERLAP]
    report = full_overlap_report()
    coverage, used = expected_stretch(loaded, shared)
    assert report['baseline_coverage'] == pytest.approx(coverage, abs=0.005)
    assert report['used_duration'] == pytest.approx(used, abs=0.05)
    assert abs(report['mass'] - PAYLOAD.mass) <= 3 * report['mass_std']


@pytest.mark.parametrize('case', PARTIAL_OVERLAPS)
def test_a_partial_baseline_is_used_where_it_overlaps_as_accurately_as_a_full_one(case):
    loaded, empty, shared = overlap_cases()[case]
    report = identify_payload(arm(), loaded, LINK, 'auto', baseline=empty)
    coverage, used = expected_stretch(loaded, shared)
    assert report.baseline_coverage == pytest.approx(coverage, abs=0.005)
    assert report.used_duration == pytest.approx(used, abs=0.05)
    assert_as_accurate_as_full_overlap(report.to_dict(), full_overlap_report())
    assert (
        f'covering {100 * report.baseline_coverage:.0f} % of the payload recording'
        in report.summary()
    )
    assert f'{report.used_duration:.1f} s used' in report.summary()


def test_without_a_baseline_the_whole_recording_is_used():
    loaded, _, shared = overlap_cases()[FULL_OVERLAP]
    report = identify_payload(arm(), loaded, LINK, 'auto')
    assert report.baseline_coverage is None and report.to_dict()['baseline_coverage'] is None
    assert report.used_duration == pytest.approx(expected_stretch(loaded, shared)[1], abs=0.05)
    assert (
        f'{report.used_duration:.1f} s used' in report.summary()
        and 'covering' not in report.summary()
    )


def advised_extension(reason: str) -> float:
    """The seconds in '... start the baseline about 0.8 s earlier in the motion', '... record
    the baseline about 0.8 s longer into the motion' or '... over about 0.8 s more of the payload
    motion' (a baseline as short as a fraction of the period may align anywhere in a periodic
    motion)."""
    found = re.search(
        r'(?:start|record) the baseline (?:over )?about ([0-9.]+) s (?:earlier|longer|more)', reason
    )
    assert found, reason
    return float(found.group(1))


def test_a_shared_stretch_too_short_is_refused_with_how_much_more_the_baseline_must_cover():
    loaded, empty, _ = overlap_cases()[FULL_OVERLAP]
    report = identify_payload(arm(), loaded, LINK, 'auto', baseline=empty.slice_time(19.3, 20.0))
    assert not report.success and report.mass is None
    assert re.search(
        rf'only {report.samples} usable samples in the 0.[23][0-9] s of motion the baseline and '
        r'the payload recording share \(2 % of the payload recording\) \(need 40\)',
        report.reason,
    ), report.reason
    earlier = advised_extension(report.reason)
    missing = (
        (40 - report.samples) * report.used_duration / report.samples
    )  # [s] at the fit-sample spacing
    assert missing <= earlier <= missing + 0.5
    assert (
        report.used_duration == pytest.approx(0.3, abs=0.05)
        and report.to_dict()['used_duration'] is not None
    )
    # following the advice is enough
    followed = identify_payload(
        arm(), loaded, LINK, 'auto', baseline=empty.slice_time(19.3 - earlier - 0.1, 20.0)
    )
    assert followed.success, followed.reason


def test_one_static_pose_is_refused_naming_the_unexcited_directions_and_missing_motion():
    robot = arm()
    motion = static_motion(
        robot, 5
    )  # poses held 2 s at t = 0, 3, 6, 9, 12 s, 1 s moves between them
    loaded = measured(motion, true_robot(perturbed=True), friction=True, time_offset=PAYLOAD_START)
    empty = measured(motion, true_robot(payload=None, perturbed=True), friction=True, seed=4)
    report = identify_payload(robot, loaded, LINK, 'auto', baseline=empty.slice_time(11.3, 20.0))
    assert not report.success
    assert (
        'cannot separate mass and centre of mass' in report.reason
        and 'least excited: m·c' in report.reason
    )
    assert (
        'move' in report.reason.split('earlier', 1)[1]
    )  # and which joints would do it without a new baseline
    assert 'start the baseline about' in report.reason
    earlier = advised_extension(report.reason)
    followed = identify_payload(
        robot, loaded, LINK, 'auto', baseline=empty.slice_time(11.3 - earlier - 0.1, 20.0)
    )
    assert followed.success and followed.mode == 'mass_com', followed.reason
    assert_payload_close(followed, 10e-3, 5e-3)


def test_a_partial_baseline_of_another_motion_is_still_refused():
    loaded, _, _ = overlap_cases()[FULL_OVERLAP]
    other = measured(
        fourier_motion(arm(), seed=9),
        true_robot(payload=None, perturbed=True),
        effort_noise=0.1,
        friction=True,
    ).slice_time(6.0, 20.0)
    report = identify_payload(arm(), loaded, LINK, 'auto', baseline=other)
    assert not report.success and 'not the same motion' in report.reason, report.reason


# ------------------------------------------------------------------------------ refusals


@pytest.mark.parametrize('mode', ['full', 'mass_com'])
def test_an_empty_gripper_is_no_payload_with_a_mass_bound_not_a_centre_of_mass(mode):
    robot, motion = arm(), fourier_motion(arm(), duration=10.0)
    empty = measured(motion, true_robot(payload=None), seed=5)
    # without a baseline the bound includes the assumed URDF error of the carrying link (~37 g)
    for baseline, bound in (
        (None, 0.15),
        (measured(motion, true_robot(payload=None), seed=6), 0.005),
    ):
        report = identify_payload(robot, empty, LINK, mode, baseline=baseline)
        assert not report.success and 'no payload is detectable' in report.reason, report.reason
        assert abs(report.mass) <= 3 * report.mass_std < bound, (report.mass, report.mass_std)
        assert report.com is None and report.com_std is None and report.inertia is None


def test_a_light_payload_well_above_its_std_is_found_with_a_baseline_and_refused_without():
    robot, motion = arm(), fourier_motion(arm(), duration=10.0)
    light = InertialParameters.point_mass(0.05, [0.0, 0.0, 0.05])
    loaded = measured(motion, true_robot(light), seed=5)
    found = identify_payload(
        robot, loaded, LINK, 'mass_com', baseline=measured(motion, true_robot(None), seed=6)
    )
    assert found.success, found.reason
    assert found.mass > 3 * found.mass_std and abs(found.mass - 0.05) < 3 * found.mass_std + 1e-3
    # 50 g is within 3σ of the carrying link's assumed URDF error: it cannot be told apart from none
    alone = identify_payload(robot, loaded, LINK, 'mass_com')
    assert not alone.success and 'no payload is detectable' in alone.reason


def test_full_mode_refuses_static_data():
    report = identify_payload(arm(), measured(static_motion(arm(), 5), true_robot()), LINK, 'full')
    assert not report.success and 'mass_com' in report.reason and report.mass is None


def test_single_pose_is_refused_and_names_joints_to_move():
    robot = arm()
    report = identify_payload(
        robot, measured(static_motion(robot, 1, hold=6.0), true_robot()), LINK, 'auto'
    )
    assert not report.success
    assert 'move' in report.reason and any(name in report.reason for name in robot.joint_names)


def test_poses_differing_only_about_the_vertical_axis_ask_for_tilting_joints():
    # fr3_joint1 is vertical: turning it never changes gravity in the payload frame
    robot = arm()
    report = identify_payload(
        robot, measured(static_motion(robot, 5, varied=[0]), true_robot()), LINK, 'auto'
    )
    assert not report.success and 'move' in report.reason
    advice = report.reason.split('move', 1)[1]
    assert 'fr3_joint1' not in advice and any(f'fr3_joint{j}' in advice for j in (2, 4, 6))


def test_motion_of_one_joint_falls_back_to_mass_and_com_with_the_reason():
    robot = arm()
    motion = fourier_motion(robot, 10.0, seed=5, moving=[0])
    report = identify_payload(robot, measured(motion, true_robot()), LINK, 'auto')
    assert report.mode == 'mass_com'
    assert any('inertia not identifiable' in text and 'move' in text for text in report.warnings)


def test_too_short_recording_is_refused_as_too_few_samples():
    time, q, v, a = excitation()
    short = measured((time[:600], q[:600], v[:600], a[:600]), true_robot())
    report = identify_payload(arm(), short, LINK, 'auto')
    assert not report.success and 'samples' in report.reason


def test_baseline_of_another_motion_is_refused():
    robot = arm()
    loaded = measured(excitation(), true_robot())
    other = measured(fourier_motion(robot, seed=9), true_robot(payload=None))
    report = identify_payload(robot, loaded, LINK, 'auto', baseline=other)
    assert not report.success and 'not the same motion' in report.reason


def test_grossly_wrong_model_is_refused_with_record_a_baseline():
    truth = true_robot(heavier_link=4)
    report = identify_payload(
        arm(), measured(excitation(), truth, effort_noise=0.05, velocity_noise=0.0), LINK, 'auto'
    )
    assert not report.success and 'record a baseline' in report.reason


# ------------------------------------------------------------------------------ report


def test_report_has_exactly_the_schema_keys_and_serialises():
    report = identify_payload(arm(), measured(static_motion(arm(), 5), true_robot()), LINK, 'auto')
    data = report.to_dict()
    assert tuple(data) == REPORT_KEYS
    assert yaml.safe_load(yaml.safe_dump(data)) == json.loads(json.dumps(data)) == data
    refused = identify_payload(
        arm(), measured(static_motion(arm(), 5), true_robot()), LINK, 'full'
    ).to_dict()
    assert tuple(refused) == REPORT_KEYS and refused['success'] is False and refused['mass'] is None


def test_identified_payload_attached_to_the_model_reproduces_the_measured_torques():
    robot = arm()
    report = identify_payload(robot, measured(excitation(), true_robot()), LINK, 'full')
    robot.attach_payload(LINK, report.inertial_parameters())
    truth = true_robot()
    time, q, v, a = excitation()
    sample = slice(0, len(time), 997)
    error = _rnea_torques(robot, q[sample], v[sample], a[sample]) - _rnea_torques(
        truth, q[sample], v[sample], a[sample]
    )
    assert math.sqrt(np.mean(error**2)) < 0.01


def test_bad_mode_and_unknown_link_raise_clear_errors():
    recording = measured(static_motion(arm(), 2), true_robot())
    with pytest.raises(PayloadSettingsError, match='mode must be one of auto, full, mass_com'):
        identify_payload(arm(), recording, LINK, 'everything')
    with pytest.raises(Exception, match='gripper_link'):
        identify_payload(arm(), recording, 'gripper_link', 'auto')


@pytest.mark.parametrize(
    'option, value',
    [
        ('cutoff_hz', 0.0),
        ('min_samples', -1),
        ('body_com_uncertainty', math.nan),
        ('effort_noise', 0),
    ],
)
def test_an_option_out_of_range_is_refused_naming_it_and_the_accepted_values(option, value):
    with pytest.raises(PayloadSettingsError, match=rf'payload option {option} must be a') as error:
        PayloadOptions(**{option: value})
    assert 'leave the default' in str(error.value)


def test_the_report_is_immutable():
    report = identify_payload(arm(), measured(static_motion(arm(), 5), true_robot()), LINK, 'auto')
    with pytest.raises(AttributeError):
        report.mass = 1.0
    assert isinstance(report.warnings, tuple) and isinstance(report.com, tuple)


def test_constrained_fit_reuses_its_compiled_problem_with_each_call_s_data():
    """The consistent fit is a parametrised cvxpy problem compiled once per thread: every call
    must still solve its own data (checked against plain least squares where that is physical)."""
    from robot_dynamics.core.identification.payload_fit import _constrained_fit

    rng = np.random.default_rng(7)
    rows = rng.normal(size=(600, 10)) * np.array(
        [1, 0.3, 0.3, 0.3, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05]
    )
    box = InertialParameters(
        0.8, np.array([0.02, -0.01, 0.05]), np.diag([2e-3, 3e-3, 2.5e-3])
    ).pinocchio_vector()
    impossible = box.copy()
    impossible[0] = -0.5  # negative mass: the fit must move to the boundary m ≥ 0, J ⪰ 0
    for truth in (impossible, box, impossible, box):
        target = rows @ truth + rng.normal(scale=1e-6, size=len(rows))
        fitted = _constrained_fit(rows, target)
        if truth is box:  # inside the physical set: the constraints are inactive
            np.testing.assert_allclose(
                fitted, np.linalg.lstsq(rows, target, rcond=None)[0], atol=1e-5
            )
        else:
            assert fitted[0] >= -1e-7
            assert np.linalg.eigvalsh(pseudo_inertia_from_vector(fitted)).min() >= -1e-6


def test_a_detection_limit_below_a_gram_is_given_in_its_own_digits():
    from robot_dynamics.core.identification.payload_words import no_payload_detected

    words = no_payload_detected(1e-6, 1e-5, 3.0)  # a baseline of the same motion: σ ~ 10 mg
    assert 'a payload lighter than 3e-05 kg cannot be told apart from none' in words, words
