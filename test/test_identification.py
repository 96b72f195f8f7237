"""Tests of robot_dynamics.core.identification.whole_robot: structure (base parameters, Khalil &
Dombre 2002), least squares and its covariance, physical consistency (Wensing, Kim & Slotine
2017), writing the model back, and the real-robot acceptance on the Gaz et al. 2019 Panda
recording."""

from pathlib import Path

import numpy as np
import pytest
import yaml

from robot_dynamics.core.dynamics.regressor import body_parameter_vector
from robot_dynamics.core.identification import identified_model
from robot_dynamics.core.identification import whole_robot as ident
from robot_dynamics.core.identification.excitation import FourierTrajectory, rest_constrained
from robot_dynamics.core.identification.recording import PreparedData, prepare_for_identification
from robot_dynamics.core.identification.recording_files import read_panda_gaz2019
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF

PANDA_DIR = Path(__file__).resolve().parents[1].parent / 'shared' / 'data' / 'panda_gaz2019'
PAPER_RMS = np.array([0.386, 0.632, 0.367, 0.460, 0.158, 0.147, 0.071])  # README table, t ≥ 10.39 s
ALL_TERMS = ident.ModelTerms(('viscous', 'coulomb', 'offset'), rotor_inertia=True)

PLANAR_2R = """<robot name="planar_2r">
  <link name="base"/>
  <link name="link1"><inertial><origin xyz="0.2 0.01 0"/><mass value="1.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="link2"><inertial><origin xyz="0.15 0 0"/><mass value="1.0"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="joint1" type="revolute"><parent link="base"/><child link="link1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="2"/></joint>
  <joint name="joint2" type="revolute"><parent link="link1"/><child link="link2"/>
    <origin xyz="0.4 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="2"/></joint>
</robot>"""


@pytest.fixture(scope='module')
def arm():
    return RobotModel.from_urdf_file(ARM_URDF)


def fourier_data(robot: RobotModel, seconds: float, rate: float, seed: int) -> PreparedData:
    """Exact samples of a random rest-to-rest Fourier motion around the middle of the limits."""
    rng = np.random.default_rng(seed)
    sine, cosine = rest_constrained(*rng.uniform(-0.4, 0.4, (2, robot.num_joints, 5)))
    centre = 0.5 * (robot.limits.lower + robot.limits.upper)
    trajectory = FourierTrajectory(robot.joint_names, centre, sine, cosine, 0.1, seconds)
    times = trajectory.sample_times(rate)
    positions, velocities, accelerations = trajectory.evaluate(times)
    return PreparedData(
        times,
        positions,
        velocities,
        accelerations,
        np.zeros_like(positions),
        robot.joint_names,
        1.0 / rate,
        np.inf,
        [(0, len(times))],
    )


def true_parameters(robot: RobotModel, terms: ident.ModelTerms) -> np.ndarray:
    per_joint = {'rotor_inertia': 0.1, 'viscous': 0.3, 'coulomb': 0.6, 'offset': -0.2}
    joint = [
        per_joint[t] * (1 + 0.1 * j) for j in range(robot.num_joints) for t in terms.joint_terms
    ]
    return np.concatenate([body_parameter_vector(robot), joint])


# ------------------------------------------------------------------ structure (exact counts)
def test_fr3_arm_has_43_base_parameters_and_11_zero_columns(arm):
    base = ident.structural_base_parameters(arm)
    assert base.num_base == 43
    assert set(base.zero_columns) == {
        'm1',
        'hx1',
        'hy1',
        'hz1',
        'Ixx1',
        'Ixy1',
        'Ixz1',
        'Iyy1',
        'Iyz1',
        'm2',
        'hz2',
    }


def test_rotor_inertia_and_friction_give_69_because_ia1_ia2_duplicate_izz1_izz2(arm):
    assert ident.structural_base_parameters(arm, ALL_TERMS).num_base == 69 == 43 + 28 - 2
    positions, velocities, accelerations = ident.random_states(arm, 30, seed=7)
    full = ident.extended_regressor(arm, positions, velocities, accelerations, ALL_TERMS)
    column = {name: full[:, i] for i, name in enumerate(ident.parameter_names(arm, ALL_TERMS))}
    for j in (1, 2):
        assert column[f'Ia{j}'] == pytest.approx(column[f'Izz{j}'], abs=1e-12)
    for j in range(3, 8):
        assert np.linalg.norm(column[f'Ia{j}'] - column[f'Izz{j}']) > 1.0


def test_static_poses_only_identify_12_gravity_parameters(arm):
    assert ident.structural_base_parameters(arm, samples=40, static=True).num_base == 12


def test_planar_2r_base_set_regroups_m2_with_l1_squared_and_l1():
    robot = RobotModel.from_urdf_string(PLANAR_2R, gravity=(0.0, -9.81, 0.0))  # in-plane gravity
    base = ident.structural_base_parameters(robot)
    assert base.num_base == 6
    assert base.coefficient('Izz1', 'm2') == pytest.approx(0.16, abs=1e-9)
    assert base.coefficient('hx1', 'm2') == pytest.approx(0.4, abs=1e-9)
    assert set(base.expressions()) == {
        'hx1 + 0.4·m2',
        'hy1',
        'Izz1 + 0.16·m2',
        'hx2',
        'hy2',
        'Izz2',
    }
    # both null vectors (on-axis mass Δm1; link-2 mass moved to link 1) leave τ unchanged
    positions, velocities, accelerations = ident.random_states(robot, 20, seed=8)
    regressor = ident.extended_regressor(robot, positions, velocities, accelerations)
    names = ident.parameter_names(robot)
    for change in ({'m1': 1.0}, {'m2': 1.0, 'Izz1': -0.16, 'hx1': -0.4}):
        null = np.array([change.get(name, 0.0) for name in names])
        assert np.max(np.abs(regressor @ null)) < 1e-12


def test_base_regressor_reproduces_the_full_model_for_any_parameters(arm):
    base = ident.structural_base_parameters(arm, ALL_TERMS)
    positions, velocities, accelerations = ident.random_states(arm, 10, seed=9)
    full = ident.extended_regressor(arm, positions, velocities, accelerations, ALL_TERMS)
    standard = np.random.default_rng(10).normal(size=full.shape[1])
    assert base.regressor(full) @ base.values(standard) == pytest.approx(full @ standard, abs=1e-9)


# ------------------------------------------------------------------ least squares and its
# covariance
def test_synthetic_identification_recovers_the_truth_within_3_sigma_of_its_std(arm):
    data = fourier_data(arm, 20.0, 100.0, seed=11)
    base = ident.structural_base_parameters(arm, ALL_TERMS)
    full = ident.extended_regressor(
        arm, data.positions, data.velocities, data.accelerations, ALL_TERMS
    )
    truth = true_parameters(arm, ALL_TERMS)
    noise = np.array([0.4, 0.5, 0.3, 0.3, 0.1, 0.1, 0.05])
    rng = np.random.default_rng(12)
    torques = full @ truth + (rng.standard_normal(data.positions.shape) * noise).reshape(-1)
    fit = ident.weighted_least_squares(base.regressor(full), torques, arm.num_joints)
    z = (fit.values - base.values(truth)) / fit.std
    assert np.all(np.abs(z) < 3.0), np.abs(z).max()
    assert np.mean(z**2) == pytest.approx(
        1.0, abs=0.4
    )  # χ²/69: the std is neither too small nor too big
    assert fit.noise_std == pytest.approx(noise, rel=0.05)


def test_blocked_triangular_factor_is_the_qr_of_the_whole_matrix():
    rng = np.random.default_rng(3)
    rows = 5 * ident.QR_BLOCK_ROWS + 17  # several blocks and a short last one
    # columns scaled over eight decades, as a regressor's are
    matrix = rng.standard_normal((rows, 30)) * np.logspace(-4, 4, 30)
    blocked, whole = ident.triangular_factor(matrix), np.linalg.qr(matrix, mode='r')
    assert blocked.shape == whole.shape == (30, 30)
    signs = np.sign(np.diag(blocked)) * np.sign(np.diag(whole))
    np.testing.assert_allclose(signs[:, None] * blocked, whole, rtol=1e-9, atol=1e-9)
    # and RᵀR is the Gram matrix AᵀA, whichever factorisation made it
    np.testing.assert_allclose(blocked.T @ blocked, matrix.T @ matrix, rtol=1e-10, atol=1e-6)


def test_predicted_std_matches_monte_carlo_spread(arm):
    data = fourier_data(arm, 10.0, 10.0, seed=13)
    base = ident.structural_base_parameters(arm)
    regressor = base.regressor(
        ident.extended_regressor(arm, data.positions, data.velocities, data.accelerations)
    )
    clean = regressor @ base.values(body_parameter_vector(arm))
    rng = np.random.default_rng(14)
    fits = [
        ident.least_squares(
            regressor, clean + 0.1 * rng.standard_normal(len(clean)), arm.num_joints
        )
        for _ in range(30)
    ]
    spread = np.std([fit.values for fit in fits], axis=0, ddof=1)
    predicted = np.mean([fit.std for fit in fits], axis=0)
    assert np.mean(spread / predicted) == pytest.approx(1.0, abs=0.1)


MONTE_CARLO_NOISE = 0.5  # N·m, white, per raw 1 kHz sample


@pytest.fixture(scope='module')
def filtered_monte_carlo(arm):
    """12 noisy 1 kHz recordings of one 10 s excitation, each through the identification
    pipeline (10 Hz zero-phase filter): WLS fits with and without the sample times."""
    from robot_dynamics.core.identification.recording import Recording
    from robot_dynamics.simulation import reference as simulation

    trajectory = simulation.scripted_excitation(arm, base_frequency=0.1)
    times = np.arange(0.0, 10.0, 0.001)
    positions, velocities, accelerations = trajectory.evaluate(times)
    truth_standard = body_parameter_vector(arm)
    clean = ident.extended_regressor(arm, positions, velocities, accelerations) @ truth_standard
    base = ident.structural_base_parameters(arm)
    rng = np.random.default_rng(21)
    regressor, with_times, without_times = None, [], []
    for _ in range(12):
        noisy = clean.reshape(positions.shape) + MONTE_CARLO_NOISE * rng.standard_normal(
            positions.shape
        )
        data = prepare_for_identification(
            Recording(times, positions, velocities, noisy, arm.joint_names)
        )
        if regressor is None:  # same motion every time: same filtered q, q̇, q̈ up to round-off
            regressor = base.regressor(
                ident.extended_regressor(arm, data.positions, data.velocities, data.accelerations)
            )
        torques = data.efforts.reshape(-1)
        with_times.append(
            ident.weighted_least_squares(regressor, torques, arm.num_joints, times=data.time)
        )
        if len(without_times) < 2:  # the old, independent-rows std: two fits show it
            without_times.append(ident.weighted_least_squares(regressor, torques, arm.num_joints))
    return base.values(truth_standard), with_times, without_times, data


def test_std_of_filtered_data_matches_monte_carlo_spread_when_times_are_given(filtered_monte_carlo):
    truth, with_times, without_times, _ = filtered_monte_carlo
    spread = np.std([fit.values for fit in with_times], axis=0, ddof=1)
    ratio = spread / np.mean([fit.std for fit in with_times], axis=0)
    independent_rows = spread / np.mean([fit.std for fit in without_times], axis=0)
    print(
        f'\nspread / predicted std: median {np.median(ratio):.2f} with times, '
        f'{np.median(independent_rows):.2f} without (rows taken as independent)'
    )
    # CR2 block sandwich: 0.87–1.14 over seeds 21–28 of this 12-fit Monte Carlo (0.98–1.04 with
    # 40 fits); the plain batch-means sandwich gave 1.08–1.42, rows taken as independent ~8
    assert 0.75 <= np.median(ratio) <= 1.35
    assert np.median(independent_rows) > 4.0  # rows of filtered signals are not independent
    z = (np.array([fit.values for fit in with_times]) - truth) / np.array(
        [fit.std for fit in with_times]
    )
    assert np.sqrt(np.mean(z**2)) < 1.5  # 1.06–1.24 over the same seeds


def test_noise_std_of_filtered_data_is_the_in_band_residual_not_the_sensor_noise(
    filtered_monte_carlo,
):
    _, with_times, _, data = filtered_monte_carlo
    # white noise σ through |H|² of a 4th-order Butterworth run forward and backward: equivalent
    # noise bandwidth ∫ df / (1 + (f/fc)^16) = fc·(π/16)/sin(π/16), so RMS σ·√(2·1.0065·fc·period)
    in_band = MONTE_CARLO_NOISE * np.sqrt(2.0 * 1.0065 * data.cutoff_hz * data.period)
    assert np.mean([fit.noise_std for fit in with_times], axis=0) == pytest.approx(
        np.full(7, in_band), rel=0.15
    )


def test_times_of_the_wrong_length_are_refused(arm):
    data = fourier_data(arm, 2.0, 50.0, seed=22)
    regressor = ident.extended_regressor(arm, data.positions, data.velocities, data.accelerations)
    with pytest.raises(ident.IdentificationError, match='sample times'):
        ident.least_squares(
            regressor, np.zeros(len(regressor)), arm.num_joints, times=data.time[1:]
        )


def test_static_data_is_refused_as_insufficient_excitation(arm):
    positions, velocities, accelerations = ident.random_states(arm, 40, seed=15, static=True)
    data = PreparedData(
        np.arange(40.0),
        positions,
        velocities,
        accelerations,
        np.zeros_like(positions),
        arm.joint_names,
        1.0,
        np.inf,
        [(0, 40)],
    )
    with pytest.raises(ident.InsufficientExcitation, match='excite'):
        ident.identify(arm, data)


# ------------------------------------------------------------------ physical consistency and the
# written model
@pytest.fixture(scope='module')
def synthetic_result(arm):
    terms = ident.ModelTerms(('viscous', 'coulomb'))
    train, held_out = fourier_data(arm, 6.0, 50.0, seed=16), fourier_data(arm, 4.0, 50.0, seed=17)
    truth = true_parameters(arm, terms)
    rng = np.random.default_rng(18)
    for data in (train, held_out):
        clean = (
            ident.extended_regressor(
                arm, data.positions, data.velocities, data.accelerations, terms
            )
            @ truth
        )
        data.efforts = clean.reshape(data.positions.shape) + 0.2 * rng.standard_normal(
            data.positions.shape
        )
    return ident.identify(arm, train, held_out, terms)


def test_constrained_fit_is_feasible_for_every_link(synthetic_result):
    report = synthetic_result.report
    assert report.feasible
    assert np.all(report.min_eigenvalue_consistent >= -ident.FEASIBILITY_MARGIN)
    assert (
        len(report.infeasible_links_unconstrained) >= 1
    )  # noisy data: the unconstrained fit breaks J ⪰ 0
    assert report.rms_held_out == pytest.approx(np.full(7, 0.2), rel=0.2)  # noise floor
    assert np.all(report.rms_nominal_held_out > report.rms_held_out)  # friction is not in the URDF


def test_identify_reports_the_std_of_time_correlated_rows(arm, synthetic_result):
    train = fourier_data(arm, 6.0, 50.0, seed=16)  # the fixture's training motion and efforts
    terms = synthetic_result.terms
    truth = true_parameters(arm, terms)
    full = ident.extended_regressor(
        arm, train.positions, train.velocities, train.accelerations, terms
    )
    rng = np.random.default_rng(18)
    torques = (full @ truth).reshape(train.positions.shape) + 0.2 * rng.standard_normal(
        train.positions.shape
    )
    regressor = synthetic_result.base.regressor(full)
    expected = ident.weighted_least_squares(
        regressor, torques.reshape(-1), arm.num_joints, times=train.time
    )
    assert synthetic_result.report.base_values == pytest.approx(expected.values)
    assert synthetic_result.report.base_std == pytest.approx(expected.std)


def test_identify_on_filtered_data_reports_a_std_that_matches_the_monte_carlo_spread(
    arm, filtered_monte_carlo
):
    """Independent of the code path above: identify() on one filtered recording must report a
    base_std near the spread of the estimates over 12 noise draws (the Monte Carlo truth), and
    well above the std computed as if the rows were independent (no sample times: ~8× too small)."""
    _, with_times, without_times, data = filtered_monte_carlo
    report = ident.identify(arm, data).report
    spread = np.std([fit.values for fit in with_times], axis=0, ddof=1)
    assert 0.7 <= np.median(spread / report.base_std) <= 1.4
    independent_rows_std = np.mean([fit.std for fit in without_times], axis=0)
    assert np.median(report.base_std / independent_rows_std) > 4.0


def test_identified_urdf_reloads_to_the_consistent_parameters(arm, synthetic_result, tmp_path):
    text = identified_model.identified_urdf(arm, synthetic_result.standard)
    reloaded = RobotModel.from_urdf_string(text)
    assert reloaded.joint_names == arm.joint_names
    assert body_parameter_vector(reloaded) == pytest.approx(
        synthetic_result.standard[:70], abs=1e-6
    )
    friction = yaml.safe_load(
        identified_model.friction_yaml(arm, synthetic_result.terms, synthetic_result.standard)
    )
    assert friction['joints']['fr3_joint3']['coulomb'] == pytest.approx(
        synthetic_result.standard[70 + 2 * 2 + 1]
    )


def test_report_dictionary_has_the_documented_keys(synthetic_result):
    report = synthetic_result.report.to_dict()
    for key in (
        'num_base_parameters',
        'condition_number',
        'rms_in_sample',
        'rms_held_out',
        'infeasible_links_unconstrained',
        'feasible',
    ):
        assert key in report
    assert set(report['rms_held_out']) == set(synthetic_result.report.joint_names)
    assert report['num_base_parameters'] == 43 + 14


# ------------------------------------------------------------------ real robot data
@pytest.mark.skipif(not PANDA_DIR.is_dir(), reason=f'real-robot data not found at {PANDA_DIR}')
def test_panda_held_out_torques_beat_the_published_model_on_every_joint():
    robot = RobotModel.from_urdf_file(PANDA_DIR / 'panda_arm.urdf')
    data = prepare_for_identification(
        read_panda_gaz2019(PANDA_DIR).select_joints(robot.joint_names)
    )
    train = data.rows(
        np.flatnonzero(data.time < 10.39)[::2]
    )  # every other ms: same fit, half the work
    held_out = data.rows(data.time >= 10.39)
    result = ident.identify(robot, train, held_out, ALL_TERMS)
    report = result.report
    print('\n' + report.table())
    print('published model (paper)     ' + ''.join(f'{v:>13.4f}' for v in PAPER_RMS))
    assert np.all(report.rms_held_out < PAPER_RMS)
    assert np.sqrt(np.mean(report.rms_held_out**2)) <= 0.30
    assert report.feasible
    # the default prior weight keeps the consistent link masses near the paper's (URDF) values
    assert result.standard[0:70:10] == pytest.approx(body_parameter_vector(robot)[0::10], rel=0.35)


@pytest.mark.skipif(not PANDA_DIR.is_dir(), reason=f'real-robot data not found at {PANDA_DIR}')
def test_an_effort_delay_put_into_the_real_panda_recording_is_found_and_taken_out(tmp_path, capsys):
    """The real Panda's efforts made 10 ms older than its positions (each paired with the
    positions 10 ms after it was measured, linearly interpolated): identify without
    --effort-delay fits a worse model; --effort-delay auto finds the delay, none in the
    recording as it was, and fits as good a model as on the recording as it was."""
    import json

    from robot_dynamics.cli import main as cli_main
    from robot_dynamics.core.identification.recording import Recording, clean_recording
    from robot_dynamics.core.identification.recording_files import write_csv

    recording, _ = clean_recording(read_panda_gaz2019(PANDA_DIR))
    delay = 0.01
    time = recording.time
    kept = time - delay >= time[0]
    older = np.column_stack([np.interp(time - delay, time, c) for c in recording.efforts.T])
    for name, efforts in (('as_recorded', recording.efforts), ('older', older)):
        write_csv(
            tmp_path / f'{name}.csv',
            Recording(
                time[kept],
                recording.positions[kept],
                recording.velocities[kept],
                efforts[kept],
                recording.joint_names,
            ),
        )
    reports = {}
    for name, delay_option in (('as_recorded', 'auto'), ('older', '0'), ('older', 'auto')):
        code = cli_main(
            ['identify', '--urdf', str(PANDA_DIR / 'panda_arm.urdf'), '--csv']
            + [str(tmp_path / f'{name}.csv'), '--split-time', '10.39', '--rotor-inertia']
            + ['--decimate', '2', '--format', 'json', '--effort-delay', delay_option]
        )
        assert code == 0
        reports[name, delay_option] = json.loads(capsys.readouterr().out)
    as_recorded, older_unaligned, older_found = reports.values()
    assert abs(as_recorded['effort_delay_fitted']['value']) < 0.0005  # under half a sample
    assert as_recorded['effort_delay'] == 0.0 and older_unaligned['effort_delay'] == 0.0
    found = older_found['effort_delay_fitted']
    assert found['value'] == pytest.approx(delay, abs=max(0.0015, 3 * found['std'])), found
    assert older_found['effort_delay'] == found['value']
    held_out = {key: report['rms_consistent_held_out_overall'] for key, report in reports.items()}
    reference = held_out['as_recorded', 'auto']
    assert held_out['older', '0'] > 1.04 * reference, held_out
    assert held_out['older', 'auto'] == pytest.approx(reference, rel=0.02), held_out


# ------------------------------------------------------------------ command line
def test_identify_cli_reports_json_and_writes_a_loadable_urdf_and_friction_yaml(
    arm, tmp_path, capsys
):
    import json

    from robot_dynamics.cli import main as cli_main
    from robot_dynamics.core.identification.recording import Recording
    from robot_dynamics.core.identification.recording_files import write_csv

    terms = ident.ModelTerms(('viscous', 'offset'))
    data = fourier_data(arm, 12.0, 200.0, seed=19)
    truth = true_parameters(arm, terms)
    clean = (
        ident.extended_regressor(arm, data.positions, data.velocities, data.accelerations, terms)
        @ truth
    )
    noise = 0.05 * np.random.default_rng(20).standard_normal(data.positions.shape)
    efforts = clean.reshape(data.positions.shape) + noise
    write_csv(
        tmp_path / 'motion.csv',
        Recording(data.time, data.positions, data.velocities, efforts, arm.joint_names),
    )
    code = cli_main(
        [
            'identify',
            '--urdf',
            str(ARM_URDF),
            '--csv',
            str(tmp_path / 'motion.csv'),
            '--friction',
            'viscous,offset',
            '--period',
            '0.005',
            '--cutoff',
            '20',
            '--train-fraction',
            '0.6',
            '--output',
            str(tmp_path / 'arm_identified.urdf'),
            '--format',
            'json',
        ]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report['num_base_parameters'] == 43 + 14 and report['feasible'] is True
    assert set(report['rms_held_out']) == set(arm.joint_names)
    assert (
        max(report['rms_held_out'].values()) < 0.1
    )  # noise 0.05 N·m plus a little filtering error
    assert isinstance(report['condition_number'], float) and isinstance(
        report['infeasible_links_unconstrained'], list
    )
    identified = RobotModel.from_urdf_file(tmp_path / 'arm_identified.urdf')
    assert identified.num_joints == 7
    friction = yaml.safe_load((tmp_path / 'arm_identified_friction.yaml').read_text())
    assert friction['joints']['fr3_joint7']['viscous'] == pytest.approx(0.3 * 1.6, rel=0.2)
    assert friction['effort_delay'] == 0.0  # the efforts as recorded: what the node must run


def identified_friction(arm, terms, truth, data, noise_seed, tmp_path):
    """The friction file identify writes for ``data`` whose efforts are the torques of the
    standard parameters ``truth`` plus 0.05 N·m noise, loaded as dynamics_node loads it."""
    from robot_dynamics.core.dynamics.friction import load_friction_file

    torques = (
        ident.extended_regressor(arm, data.positions, data.velocities, data.accelerations, terms)
        @ truth
    ).reshape(data.positions.shape)
    data.efforts = torques + 0.05 * np.random.default_rng(noise_seed).standard_normal(torques.shape)
    result = ident.identify(arm, data, terms=terms)
    path = tmp_path / 'friction.yaml'
    path.write_text(identified_model.friction_yaml(arm, terms, result.standard))
    return load_friction_file(str(path), arm.joint_names)


def test_friction_on_its_bound_identifies_to_a_friction_file_the_node_loads(arm, tmp_path):
    """Data whose best friction fit is negative put the constrained fit on its π ≥ 0 bound,
    which the solver meets only to its tolerance; the file the node loads refuses a negative
    coefficient, so what identify writes must be ≥ 0 exactly (a proving-ground recording gave
    a Coulomb coefficient of -6.5e-13)."""
    terms = ident.ModelTerms(('viscous', 'coulomb', 'offset'), rotor_inertia=True)
    truth = true_parameters(arm, terms)
    truth[70:] = -0.2  # every per-joint term below its bound
    friction = identified_friction(
        arm, terms, truth, fourier_data(arm, 8.0, 50.0, 23), 24, tmp_path
    )
    for values in (friction.viscous, friction.coulomb, friction.rotor_inertia):
        assert np.all(values >= 0.0) and np.all(values < 0.01)  # on the bound


def test_a_stribeck_level_below_zero_identifies_to_a_static_level_the_node_loads(arm, tmp_path):
    """Data whose best fit has a Stribeck excess larger than the Coulomb level below it (a
    negative static level, which the friction file refuses): the consistent fit keeps every
    joint's static level, Coulomb + excess, at or above zero, exactly."""
    terms = ident.ModelTerms(('viscous', 'coulomb', 'stribeck'))
    truth = true_parameters(arm, ident.ModelTerms(('viscous', 'coulomb')))
    truth = np.concatenate([truth[:70], np.tile([0.3, 0.1, -0.5], 7)])  # static level -0.4
    friction = identified_friction(
        arm, terms, truth, fourier_data(arm, 8.0, 50.0, 25), 26, tmp_path
    )
    assert np.all(friction.stribeck_static >= 0.0)
    assert np.all(friction.stribeck_static < 0.01)  # on the bound


def test_identify_cli_names_a_missing_joint(tmp_path, capsys):
    from robot_dynamics.cli import main as cli_main

    (tmp_path / 'one.csv').write_text(
        'time,fr3_joint1/position,fr3_joint1/velocity,fr3_joint1/effort\n0,0,0,0\n'
    )
    assert cli_main(['identify', '--urdf', str(ARM_URDF), '--csv', str(tmp_path / 'one.csv')]) == 2
    assert 'fr3_joint2' in capsys.readouterr().err


def test_chosen_sign_velocity_recovers_each_joints_smooth_sign_and_the_file_keeps_it(arm, tmp_path):
    """Torques whose Coulomb term is F_c tanh(q̇/σ_j) with a different σ_j per joint (0: the
    exact sign): the choice on the training data finds every σ_j, and the friction file written
    with them gives the live model F_c tanh(q̇/σ_j) in closed form."""
    from robot_dynamics.core.dynamics.friction import load_friction_file

    truth_sigma = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2)
    terms = ident.ModelTerms(('viscous', 'coulomb', 'offset'), sign_velocity=truth_sigma)
    data = fourier_data(arm, 20.0, 200.0, seed=31)
    truth = true_parameters(arm, terms)
    torques = (
        ident.extended_regressor(arm, data.positions, data.velocities, data.accelerations, terms)
        @ truth
    ).reshape(data.positions.shape)
    data.efforts = torques + 0.01 * np.random.default_rng(32).standard_normal(torques.shape)
    chosen = ident.chosen_sign_velocities(arm, data, ident.ModelTerms(terms.friction))
    assert chosen == truth_sigma
    result = ident.identify(arm, data, terms=terms)
    path = tmp_path / 'friction.yaml'
    path.write_text(identified_model.friction_yaml(arm, terms, result.standard))
    friction = load_friction_file(str(path), arm.joint_names)
    velocities = np.linspace(-0.3, 0.3, 61)[:, None] * np.ones(arm.num_joints)
    coulomb = 0.6 * (1 + 0.1 * np.arange(arm.num_joints))
    exact_sign = np.array(truth_sigma) == 0.0
    shape = np.where(
        exact_sign, np.sign(velocities), np.tanh(velocities / np.where(exact_sign, 1, truth_sigma))
    )
    expected = (
        0.3 * (1 + 0.1 * np.arange(arm.num_joints)) * velocities
        + coulomb * shape
        - 0.2 * (1 + 0.1 * np.arange(arm.num_joints))
    )
    np.testing.assert_allclose([friction.torques(v) for v in velocities], expected, atol=0.02)
    assert ident.chosen_sign_velocities(arm, data, ident.ModelTerms(('viscous',))) == (0.0,) * 7


def test_a_negative_sign_velocity_is_refused():
    with pytest.raises(ident.IdentificationError, match='sign velocity'):
        ident.ModelTerms(('coulomb',), sign_velocity=-0.01)


@pytest.mark.parametrize('velocity', [0.0, -0.05, float('nan'), float('inf')])
def test_model_terms_refuse_a_stribeck_velocity_that_is_not_a_positive_velocity(velocity):
    """exp(−(q̇/v_s)²) needs 0 < v_s < ∞ (at 0 it divides by zero)."""
    with pytest.raises(ident.IdentificationError, match='stribeck velocity must be a positive'):
        ident.ModelTerms(('stribeck',), stribeck_velocity=velocity)
