"""Centroidal checks against a hand-worked torso case and closed forms: LIPM vs full ZMP and the
split of their difference, cond(A_G), momentum drift in a free flight integrated through
pinocchio, and the friction cone."""

import math

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

from robot_dynamics.core.floating_base.centroidal import (
    CentroidalInputError,
    centroidal_momentum_matrix,
    centroidal_momentum_rate,
    centroidal_state,
    zero_moment_point,
)
from robot_dynamics.core.floating_base.centroidal_checks import (
    FlightDriftMonitor,
    centroidal_matrix_condition,
    compare_zero_moment_points,
    friction_cone_check,
    friction_cone_checks,
    lipm_zero_moment_point,
    lipm_zmp_from_momentum_rate,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import QUADRUPED_URDF

G = 9.81


def single_body(mass, inertia_diagonal):
    """A free-flying rigid body with its CoM at the base origin and a diagonal inertia [kg·m²]."""
    ixx, iyy, izz = inertia_diagonal
    return RobotModel.from_urdf_string(
        '<robot name="body"><link name="torso"><inertial><origin xyz="0 0 0"/><mass '
        f'value="{mass}"/><inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" '
        'iyz="0"/></inertial></link></robot>',
        root_joint='floating',
    )


@pytest.fixture(scope='module')
def quadruped():
    return RobotModel.from_urdf_file(QUADRUPED_URDF, root_joint='floating')


def rate_at_rest(robot, pose, base_acceleration):
    """ḣ_G through pinocchio for a body at rest at ``pose`` given a base acceleration [lin, ang]."""
    q = robot.configuration(np.zeros(robot.num_joints), pose)
    state = centroidal_state(robot, q, np.zeros(robot.model.nv))
    rate = centroidal_momentum_rate(
        robot, q, np.zeros(robot.model.nv), np.asarray(base_acceleration, dtype=float)
    )
    return state, rate


# ---------------------------------------------------------------------------- ZMP
def test_case_b_torso_pitch_acceleration_moves_the_zmp_4_6_cm_from_the_lipm():
    """A 46.2 kg body, torso pitch acceleration 5 rad/s² with a pitch inertia of
    4.138 kg·m² gives k̇_y = 20.69 N·m; LIPM 0.0413 m, full ZMP −0.0044 m, 4.57 cm apart."""
    robot = single_body(46.2, (3.0, 4.138, 2.0))
    height, com_x = 0.9, 0.1
    forward = (com_x - 0.0413) * G / height  # c̈_x that puts the LIPM point at 0.0413 m
    state, rate = rate_at_rest(robot, [com_x, 0.0, height, 0, 0, 0, 1], [forward, 0, 0, 0, 5.0, 0])
    np.testing.assert_allclose(rate.angular, [0.0, 20.69, 0.0], atol=1e-9)
    comparison = compare_zero_moment_points(
        state.com, rate.com_acceleration, rate.angular, state.mass
    )
    shift = 20.69 / (46.2 * G)
    assert shift == pytest.approx(0.04565, abs=1e-5)
    assert comparison.lipm[0] == pytest.approx(0.0413, abs=1e-12)
    assert comparison.full[0] == pytest.approx(-0.0044, abs=5e-5)
    assert comparison.full[0] == pytest.approx(0.0413 - shift, abs=1e-12)
    assert comparison.distance == pytest.approx(shift, abs=1e-12)
    np.testing.assert_allclose(comparison.angular_momentum_contribution, [shift, 0.0], atol=1e-12)
    np.testing.assert_allclose(comparison.vertical_acceleration_contribution, 0.0, atol=1e-15)
    np.testing.assert_allclose(comparison.lipm[1:], [0.0, 0.0], atol=1e-15)


@pytest.mark.parametrize('spin', [[0.0, 0.0, 0.0], [3.0, -2.0, 7.0]])
def test_point_mass_at_constant_height_has_the_lipm_zmp_as_its_full_zmp(spin):
    """A point mass has no angular momentum about its CoM, so k̇ = 0 whatever its base spins;
    with c̈_z = 0 the full ZMP is the LIPM point c_xy − c_z c̈_xy / g."""
    robot = single_body(2.0, (0.0, 0.0, 0.0))
    state, rate = rate_at_rest(robot, [0.2, -0.3, 0.75, 0, 0, 0, 1], [1.5, -0.8, 0.0, *spin])
    np.testing.assert_allclose(rate.angular, 0.0, atol=1e-12)
    comparison = compare_zero_moment_points(
        state.com, rate.com_acceleration, rate.angular, state.mass
    )
    closed_form = [0.2 - 0.75 * 1.5 / G, -0.3 + 0.75 * 0.8 / G, 0.0]
    np.testing.assert_allclose(comparison.lipm, closed_form, atol=1e-12)
    np.testing.assert_allclose(comparison.full, closed_form, atol=1e-12)
    assert comparison.distance == pytest.approx(0.0, abs=1e-12)


def test_point_mass_accelerating_upwards_differs_from_the_lipm_by_the_vertical_part_only():
    """c̈_z = 2 m/s²: p_LIPM − p_full = −h c̈_z c̈_xy / (g (c̈_z + g)), the k̇ part is zero."""
    robot = single_body(2.0, (0.0, 0.0, 0.0))
    height, acceleration = 0.8, np.array([1.2, -0.4, 2.0])
    state, rate = rate_at_rest(robot, [0.0, 0.0, height, 0, 0, 0, 1], [*acceleration, 0, 0, 0])
    comparison = compare_zero_moment_points(
        state.com, rate.com_acceleration, rate.angular, state.mass
    )
    expected = -height * 2.0 * acceleration[:2] / (G * (2.0 + G))
    np.testing.assert_allclose(comparison.difference, expected, atol=1e-12)
    np.testing.assert_allclose(comparison.vertical_acceleration_contribution, expected, atol=1e-12)
    np.testing.assert_allclose(comparison.angular_momentum_contribution, 0.0, atol=1e-15)
    np.testing.assert_allclose(
        comparison.full[:2], -height * acceleration[:2] / (2.0 + G), atol=1e-12
    )


def test_the_two_parts_are_the_zmp_moves_of_switching_on_k_dot_and_then_vertical_acceleration():
    """Random states: the k̇ part is full(k̇ = 0) − full(k̇), the c̈_z part LIPM − full(k̇ = 0),
    so they add up to LIPM − full (the ZMP formula of centroidal.py as the reference)."""
    generator = np.random.default_rng(7)
    for _ in range(50):
        com = generator.uniform([-1, -1, 0.3], [1, 1, 1.2])
        acceleration = generator.uniform(-3.0, 3.0, 3)
        k_dot = generator.uniform(-30.0, 30.0, 3)
        mass, ground = generator.uniform(5.0, 80.0), generator.uniform(-0.2, 0.2)
        comparison = compare_zero_moment_points(com, acceleration, k_dot, mass, ground)
        full = zero_moment_point(com, acceleration, k_dot, mass, ground)
        without_k_dot = zero_moment_point(com, acceleration, np.zeros(3), mass, ground)
        np.testing.assert_allclose(comparison.full, full, atol=1e-14)
        np.testing.assert_allclose(
            comparison.angular_momentum_contribution, (without_k_dot - full)[:2], atol=1e-12
        )
        np.testing.assert_allclose(
            comparison.vertical_acceleration_contribution,
            (comparison.lipm - without_k_dot)[:2],
            atol=1e-12,
        )
        np.testing.assert_allclose(
            comparison.angular_momentum_contribution
            + comparison.vertical_acceleration_contribution,
            comparison.difference,
            atol=1e-12,
        )
        assert comparison.lipm[2] == ground


def test_the_stream_form_of_the_lipm_zmp_takes_the_momentum_rate():
    com, acceleration, mass = np.array([0.3, -0.1, 0.8]), np.array([1.1, -2.0, 0.7]), 12.5
    rate = [*(mass * acceleration), 3.0, -4.0, 5.0]
    expected = lipm_zero_moment_point(com, acceleration, 0.05, 1.62)
    np.testing.assert_allclose(
        lipm_zmp_from_momentum_rate(com.tolist(), rate, mass, 0.05, 1.62), expected, atol=1e-14
    )
    np.testing.assert_allclose(
        expected, [0.3 - 0.75 * 1.1 / 1.62, -0.1 + 0.75 * 2.0 / 1.62, 0.05], atol=1e-14
    )


def test_in_flight_there_is_a_lipm_point_but_no_full_zmp():
    comparison = compare_zero_moment_points([0, 0, 1.0], [0.5, 0.0, -G], [0, 0, 0], 30.0)
    assert comparison.full is None and comparison.distance is None and comparison.difference is None
    assert comparison.angular_momentum_contribution is None
    np.testing.assert_allclose(comparison.lipm, [-0.5 / G, 0.0, 0.0])


@pytest.mark.parametrize(
    'com, acceleration, gravity',
    [
        ([0, math.nan, 1], [0, 0, 0], G),
        ([0, 0], [0, 0, 0], G),
        ([0, 0, 1], [0, 0, 0], 0.0),
        ([0, 0, 1], 'abc', G),
    ],
)
def test_lipm_zmp_refuses_bad_input(com, acceleration, gravity):
    with pytest.raises(CentroidalInputError):
        lipm_zero_moment_point(com, acceleration, 0.0, gravity)


# ---------------------------------------------------------------------------- A_G
def test_condition_number_is_numpys_cond_of_the_centroidal_momentum_matrix(quadruped):
    generator = np.random.default_rng(3)
    data = quadruped.model.createData()
    for _ in range(10):
        pose = np.concatenate(
            [generator.uniform(-1, 1, 3), Rotation.random(random_state=generator).as_quat()]
        )
        q = quadruped.configuration(generator.uniform(-1.5, 1.5, quadruped.num_joints), pose)
        condition = centroidal_matrix_condition(quadruped, q, data)
        reference = np.linalg.cond(centroidal_momentum_matrix(quadruped, q))
        assert math.isfinite(condition) and condition >= 1.0
        assert condition == pytest.approx(reference, rel=1e-10)


def test_condition_number_of_a_single_body_is_its_inertia_spread():
    """One rigid body at its CoM: A_G = diag(m R, R I) on (v_body, ω_body), singular values m
    and the principal moments, whatever the orientation."""
    robot = single_body(10.0, (0.5, 2.0, 40.0))
    q = robot.configuration(
        np.zeros(0), [0.3, 0.1, 0.4, *Rotation.from_euler('xyz', [0.3, 1.0, -0.5]).as_quat()]
    )
    assert centroidal_matrix_condition(robot, q) == pytest.approx(40.0 / 0.5, rel=1e-12)


def test_condition_number_refuses_a_wrong_configuration(quadruped):
    with pytest.raises(CentroidalInputError):
        centroidal_matrix_condition(quadruped, np.zeros(5))


# ---------------------------------------------------------------------------- flight
def free_flight(robot, q, v, duration, step):
    """RK4 of the torque-free dynamics (pinocchio aba, gravity only) on the configuration
    manifold (pin.integrate); yields (t, q, v)."""
    model, data, zero = robot.model, robot.model.createData(), np.zeros(robot.model.nv)

    def acceleration(q, v):
        return pin.aba(model, data, q, v, zero)

    t = 0.0
    yield t, q, v
    for _ in range(int(round(duration / step))):
        a1 = acceleration(q, v)
        v2 = v + 0.5 * step * a1
        a2 = acceleration(pin.integrate(model, q, 0.5 * step * v), v2)
        v3 = v + 0.5 * step * a2
        a3 = acceleration(pin.integrate(model, q, 0.5 * step * v2), v3)
        v4 = v + step * a3
        a4 = acceleration(pin.integrate(model, q, step * v3), v4)
        q = pin.integrate(model, q, step / 6.0 * (v + 2 * v2 + 2 * v3 + v4))
        v = v + step / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4)
        t += step
        yield t, q, v


def flight_drifts(robot, q, v, duration, step):
    """Largest ‖l − l₀ − m g⃗ t‖ and ‖k − k₀‖ over a free flight, and the momenta h_G(t)."""
    monitor = FlightDriftMonitor(robot.total_mass(), G)
    worst_linear = worst_angular = 0.0
    momenta = []
    for t, q, v in free_flight(robot, q, v, duration, step):
        state = centroidal_state(robot, q, v)
        monitor.update(t, True, state.momentum)
        drift = monitor.drift(t, state.linear_momentum, state.angular_momentum)
        worst_linear = max(worst_linear, float(np.linalg.norm(drift.linear)))
        worst_angular = max(worst_angular, float(np.linalg.norm(drift.angular)))
        momenta.append(state.momentum)
    return worst_linear, worst_angular, np.array(momenta)


def test_a_body_spinning_about_a_principal_axis_in_free_flight_keeps_its_angular_momentum():
    """ω = 4 rad/s about the 2 kg·m² axis while falling and drifting sideways: ‖k‖ = I ω
    throughout; l − l₀ − m g t and k − k₀ stay at the integrator's error (m g t is 25 N·s)."""
    robot = single_body(5.0, (1.0, 2.0, 3.0))
    q = robot.configuration(np.zeros(0), [0, 0, 2.0, 0, 0, 0, 1])
    v = np.array([0.7, -0.2, 1.5, 0.0, 4.0, 0.0])
    linear, angular, momenta = flight_drifts(robot, q, v, 0.5, 0.002)
    np.testing.assert_allclose(np.linalg.norm(momenta[:, 3:], axis=1), 8.0, atol=1e-9)
    assert linear < 1e-8 and angular < 1e-9


def test_free_flight_with_moving_joints_conserves_k_and_falls_with_l_rate_m_g(quadruped):
    """The quadruped thrown with swinging legs and a tumbling base, no joint torque: the
    drifts are the integrator's error (they shrink with the step; m g t is 93 N·s here), and
    a central difference of l gives l̇ = m g⃗, k̇ = 0."""
    generator = np.random.default_rng(11)
    q = quadruped.configuration(np.tile([0.0, 0.8, -1.6], 4), [0, 0, 1.5, 0, 0, 0, 1])
    v = quadruped.tangent(
        generator.uniform(-3, 3, quadruped.num_joints), [0.5, 0.2, 2.0, 1.0, -0.7, 0.4]
    )
    coarse_linear, coarse_angular, _ = flight_drifts(quadruped, q, v, 0.4, 0.002)
    linear, angular, momenta = flight_drifts(quadruped, q, v, 0.4, 0.001)
    assert linear < 1e-6 and angular < 1e-7
    assert (
        coarse_linear > 3.0 * linear and coarse_angular > 3.0 * angular
    )  # convergent: integration error
    assert np.linalg.norm(momenta[0][3:]) > 1.0  # a real tumble, not a trivial zero
    mass = quadruped.total_mass()
    central = (momenta[2:] - momenta[:-2]) / 0.002
    np.testing.assert_allclose(
        central[:, :3], np.tile([0.0, 0.0, -mass * G], (len(central), 1)), atol=1e-5
    )
    np.testing.assert_allclose(central[:, 3:], 0.0, atol=1e-5)


def test_the_flight_reference_is_forgotten_when_the_flight_ends():
    monitor = FlightDriftMonitor(10.0, G)
    monitor.update(1.0, True, [0, 0, 1.0, 0, 0, 0])
    monitor.update(1.1, True, [0, 0, 5.0, 0, 0, 0])  # the first airborne state stays the reference
    assert monitor.start[0] == 1.0
    monitor.update(1.2, False, np.zeros(6))
    assert monitor.start is None and monitor.drift(1.2, [0, 0, 0], [0, 0, 0]) is None


def test_a_drift_reference_that_ignored_gravity_would_be_seen():
    """The drift is l − l₀ − m g⃗ t: a body at rest on a table for 0.2 s (l constant) shows the
    missing m g t = 0.2 m g N·s upwards."""
    monitor = FlightDriftMonitor(10.0, G)
    monitor.update(1.0, True, np.zeros(6))
    drift = monitor.drift(1.2, [0, 0, 0], [0, 0, 0.3])
    np.testing.assert_allclose(drift.linear, [0, 0, 10.0 * G * 0.2], atol=1e-12)
    np.testing.assert_allclose(drift.angular, [0, 0, 0.3])


# ---------------------------------------------------------------------------- friction cone
@pytest.mark.parametrize(
    'force, margin, inside, pushing',
    [
        ([0.3, 0.4, 2.0], 0.5, True, True),  # |f_t| = 0.5 < μ f_n = 1
        ([3.0, 4.0, 2.0], 1.0 - 5.0, False, True),  # slipping: |f_t| = 5 > 1
        ([1.0, 0.0, 2.0], 0.0, True, True),  # on the edge: |f_t| = μ f_n exactly
        ([0.0, 0.0, -2.0], -1.0, False, False),  # pulling: f_n < 0
        ([0.0, 0.0, 0.0], 0.0, True, True),  # no force at all: on the apex
    ],
)
def test_friction_cone_on_a_horizontal_ground(force, margin, inside, pushing):
    check = friction_cone_check(force, [0, 0, 1], 0.5)
    assert check.margin == pytest.approx(margin, abs=1e-15)
    assert check.inside is inside and check.pushing is pushing
    assert check.normal_force == pytest.approx(force[2])


def test_friction_cone_follows_a_tilted_normal_of_any_length():
    """The same contact rotated: margins unchanged; against the world +z normal it differs."""
    rotation = Rotation.from_euler('xyz', [0.4, -0.3, 1.0])
    forces = np.array([[0.3, 0.4, 2.0], [3.0, 4.0, 2.0]])
    checks = friction_cone_checks(rotation.apply(forces), 3.0 * rotation.apply([0, 0, 1]), 0.5)
    assert [check.inside for check in checks] == [True, False]
    np.testing.assert_allclose([check.margin for check in checks], [0.5, -4.0], atol=1e-12)
    np.testing.assert_allclose([check.tangential_force for check in checks], [0.5, 5.0], atol=1e-12)


@pytest.mark.parametrize(
    'normal, mu',
    [
        ([0, 0, 0], 0.5),
        ([0, 0, 1], 0.0),
        ([0, 0, 1], -1.0),
        ([0, 0, 1], math.nan),
        ([0, math.inf, 1], 0.5),
    ],
)
def test_friction_cone_refuses_a_zero_normal_or_a_non_positive_coefficient(normal, mu):
    with pytest.raises(CentroidalInputError):
        friction_cone_check([0, 0, 1], normal, mu)
