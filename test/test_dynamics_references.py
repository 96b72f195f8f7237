"""The dynamics core against closed forms worked out by hand.

Fixtures (test/data/fixtures): the standing rod (10 cm, 100 g, θ from the horizontal,
upward; I₀ = m l²/3 about the motor axis) and the two-link horizontal "paper arm" (20 g + 15 g
links, 50 g object in the hand). The hand calculations use g = 9.8 m/s² and the textbook
equations of motion (Siciliano et al. 2009; Lynch & Park 2017; docs/references.md); each
expected value is rounded as written, and the tolerance is what those digits allow.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics.core.dynamics.joint_space import (
    forward_dynamics,
    gravity_torques,
    inverse_dynamics,
    kinetic_energy,
    mass_matrix,
    nonlinear_effects,
    torque_margins,
)
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel

FIXTURES = Path(__file__).resolve().parent / 'data' / 'fixtures'
HAND_GRAVITY = (0.0, 0.0, -9.8)
"""The gravity [m/s²] of the hand calculations."""
GRAM_CM2 = 1.0e-7
"""1 g·cm² in kg·m²."""

ROD_MASS, ROD_LENGTH, ROD_COM = 0.1, 0.1, 0.05
ROD_I0 = ROD_MASS * ROD_LENGTH**2 / 3.0


@pytest.fixture(scope='module')
def rod() -> RobotModel:
    return RobotModel.from_urdf_file(FIXTURES / 'standing_rod.urdf', gravity=HAND_GRAVITY)


@pytest.fixture(scope='module')
def paper_arm() -> RobotModel:
    return RobotModel.from_urdf_file(FIXTURES / 'paper_arm.urdf', gravity=HAND_GRAVITY)


def _rod_state(rod: RobotModel, theta: float, rate: float = 0.0, acceleration: float = 0.0):
    return rod.configuration([theta]), rod.tangent([rate]), rod.tangent([acceleration])


# ---------------------------------------------------------------------- standing rod
@pytest.mark.parametrize(
    'theta_deg, holding_torque, decimals',
    [
        (0.0, 0.049, 6),  # largest when horizontal
        (30.0, 0.0424, 4),  # rounded to 4 decimals
        (30.0, 0.04243524, 8),  # m g l_c cos θ to 8 decimals
        (60.0, 0.0245, 6),  # half the horizontal torque
        (90.0, 0.0, 9),  # vertical: no gravity torque
        (120.0, -0.0245, 6),  # past vertical the sign flips
    ],
)
def test_standing_rod_holding_torque_is_mglc_cos_theta(rod, theta_deg, holding_torque, decimals):
    torque = gravity_torques(rod, rod.configuration([math.radians(theta_deg)]))
    assert torque[0] == pytest.approx(holding_torque, abs=0.6 * 10.0**-decimals)


def test_standing_rod_mass_matrix_is_inertia_about_motor_axis(rod):
    assert mass_matrix(rod, rod.configuration([0.7]))[0, 0] == pytest.approx(ROD_I0, rel=1e-12)


@pytest.mark.parametrize(
    'theta_deg, torque, expected_acceleration',
    [
        (0.0, 0.0, -147.0),  # unactuated, horizontal
        (60.0, 0.05, 76.5),  # 0.05 N·m against half the horizontal torque
        (60.0, 0.0, -73.5),  # unactuated at 60°
        (90.0, 0.0, 0.0),  # balanced upright
    ],
)
def test_standing_rod_forward_dynamics_matches_closed_form(
    rod, theta_deg, torque, expected_acceleration
):
    q, v, _ = _rod_state(rod, math.radians(theta_deg))
    acceleration = forward_dynamics(rod, q, v, np.array([torque]))
    assert acceleration[0] == pytest.approx(expected_acceleration, abs=0.05)


@pytest.mark.parametrize(
    'theta, rate, acceleration, expected_torque',
    [
        (0.3, 1.5, -20.0, 0.040145),  # τ = I₀ θ̈ + m g l_c cos θ
        (2.0, -4.0, 100.0, 0.012942),
        (0.0, 2.0, 0.0, 0.049),  # the centripetal part adds no torque
    ],
)
def test_standing_rod_inverse_dynamics_matches_closed_form(
    rod, theta, rate, acceleration, expected_torque
):
    torque = inverse_dynamics(rod, *_rod_state(rod, theta, rate, acceleration))
    assert torque[0] == pytest.approx(expected_torque, abs=6e-7)


def test_standing_rod_joint_reaction_carries_weight_and_centripetal_pull(rod):
    """θ = 0, θ̇ = 2 rad/s, θ̈ = 0 → f₁ = (−m l_c θ̇², m g) = (−0.02, 0.98) N (x outward, z up),
    n₁ about the axis = 0.049 N·m."""
    q, v, a = _rod_state(rod, 0.0, 2.0, 0.0)
    pin.rnea(rod.model, rod.data, q, v, a)
    joint_wrench = rod.data.f[
        1
    ]  # wrench transmitted by the joint, joint frame = world axes at θ = 0
    np.testing.assert_allclose(joint_wrench.linear, [-0.02, 0.0, 0.98], atol=1e-12)
    assert joint_wrench.angular @ np.array([0.0, -1.0, 0.0]) == pytest.approx(0.049, abs=1e-12)


def test_standing_rod_drop_reaches_bottom_at_the_hand_integrated_time_and_speed(rod):
    """Released from horizontal, it points straight down after 0.153 s at −17.15 rad/s
    (= −√(2 m g l_c / I₀) by energy conservation)."""
    step = 1e-4

    def derivative(state):
        q, v, _ = _rod_state(rod, state[0], state[1])
        return np.array([state[1], forward_dynamics(rod, q, v, np.zeros(1))[0]])

    state, time = np.zeros(2), 0.0
    while state[0] > -math.pi / 2:
        previous = state
        k1 = derivative(state)
        k2 = derivative(state + 0.5 * step * k1)
        k3 = derivative(state + 0.5 * step * k2)
        k4 = derivative(state + step * k3)
        state = state + step / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        time += step
    fraction = (-math.pi / 2 - previous[0]) / (state[0] - previous[0])
    arrival_time = time - step + fraction * step
    arrival_rate = previous[1] + fraction * (state[1] - previous[1])
    assert arrival_time == pytest.approx(0.153, abs=5e-4)
    assert arrival_rate == pytest.approx(-17.15, abs=5e-3)
    assert arrival_rate == pytest.approx(
        -math.sqrt(2 * ROD_MASS * 9.8 * ROD_COM / ROD_I0), abs=1e-4
    )


def test_standing_rod_holding_torque_margin_against_servo_rating(rod):
    torque = gravity_torques(rod, rod.configuration([0.0]))
    assert torque_margins(rod, torque)[0] == pytest.approx(0.049 / 0.1, rel=1e-12)


def test_vertical_slider_force_is_m_times_acceleration_plus_g():
    """A 0.2 kg box on a vertical prismatic joint, 2 m/s² up → f = 2.36 N."""
    urdf = """<robot name="slider"><link name="ground"/>
      <link name="box"><inertial><mass value="0.2"/>
        <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>
      <joint name="height" type="prismatic"><parent link="ground"/><child link="box"/>
        <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint></robot>"""
    slider = RobotModel.from_urdf_string(urdf, gravity=HAND_GRAVITY)
    q, v = slider.configuration([0.3]), slider.tangent([0.5])
    assert inverse_dynamics(slider, q, v, slider.tangent([2.0]))[0] == pytest.approx(
        2.36, abs=1e-12
    )
    assert mass_matrix(slider, q)[0, 0] == pytest.approx(0.2, abs=1e-15)
    assert nonlinear_effects(slider, q, v)[0] == pytest.approx(
        0.2 * 9.8, abs=1e-12
    )  # V = 0, G = mg


# ---------------------------------------------------------------------- paper arm
PAPER_ARM_MASS_MATRICES = {  # g·cm², shoulder at 20°, by hand
    0.0: [[19886.6667, 8120.0], [8120.0, 3520.0]],
    90.0: [[10686.6667, 3520.0], [3520.0, 3520.0]],
    150.0: [[2719.233, -463.7169], [-463.7169, 3520.0]],
}


@pytest.mark.parametrize('elbow_deg', sorted(PAPER_ARM_MASS_MATRICES))
def test_paper_arm_mass_matrix_matches_closed_form(paper_arm, elbow_deg):
    matrix = mass_matrix(
        paper_arm, paper_arm.configuration([math.radians(20.0), math.radians(elbow_deg)])
    )
    np.testing.assert_allclose(matrix / GRAM_CM2, PAPER_ARM_MASS_MATRICES[elbow_deg], atol=1e-3)


@pytest.mark.parametrize(
    'elbow_deg, expected',
    [
        (0.0, (0.199, 0.081)),  # extended: the elbow must hold against the coupling
        (90.0, (0.107, 0.035)),
        (150.0, (0.027, -0.005)),  # folded: about 1/7 of the extended shoulder torque
    ],
)
def test_paper_arm_torques_for_shoulder_acceleration(paper_arm, elbow_deg, expected):
    """q̈ = (100, 0) rad/s² from rest; expected values rounded to 3 decimals."""
    q = paper_arm.configuration([math.radians(20.0), math.radians(elbow_deg)])
    torque = inverse_dynamics(
        paper_arm, q, paper_arm.tangent([0.0, 0.0]), paper_arm.tangent([100.0, 0.0])
    )
    np.testing.assert_allclose(torque, expected, atol=6e-4)


def test_paper_arm_extended_torques_exact_digits(paper_arm):
    """[0.1989, 0.0812] N·m = 100·(first column of M)."""
    torque = inverse_dynamics(
        paper_arm,
        paper_arm.configuration([0.0, 0.0]),
        paper_arm.tangent([0.0, 0.0]),
        paper_arm.tangent([100.0, 0.0]),
    )
    np.testing.assert_allclose(torque, [19886.6666667e-7 * 100, 8120e-7 * 100], rtol=1e-9)


@pytest.mark.parametrize('elbow_deg, ratio', [(0.0, -8120.0 / 3520.0), (90.0, -1.0)])
def test_paper_arm_passive_elbow_swings_back(paper_arm, elbow_deg, ratio):
    """Elbow motor off (τ₂ = 0) → θ̈₂ = −(M₂₁/M₂₂) θ̈₁: −230.7 rad/s² for θ̈₁ = 100 extended,
    θ̈₂ = −θ̈₁ at 90° (link 2 translates without rotating)."""
    q = paper_arm.configuration([0.0, math.radians(elbow_deg)])
    acceleration = forward_dynamics(
        paper_arm, q, paper_arm.tangent([0.0, 0.0]), np.array([0.05, 0.0])
    )
    assert acceleration[1] / acceleration[0] == pytest.approx(ratio, rel=1e-9)
    if elbow_deg == 0.0:
        assert 100.0 * ratio == pytest.approx(-230.7, abs=0.05)


def test_paper_arm_has_no_gravity_torque(paper_arm):
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = paper_arm.configuration(rng.uniform(-2.5, 2.5, 2))
        np.testing.assert_allclose(gravity_torques(paper_arm, q), 0.0, atol=1e-15)


def test_paper_arm_velocity_term_matches_closed_form(paper_arm):
    """V(q = (20°, 90°), q̇ = (10, 0)) = (0, 0.046) N·m."""
    q = paper_arm.configuration([math.radians(20.0), math.radians(90.0)])
    np.testing.assert_allclose(
        nonlinear_effects(paper_arm, q, paper_arm.tangent([10.0, 0.0])), [0.0, 0.046], atol=1e-12
    )


def test_paper_arm_kinetic_energy_matches_closed_form(paper_arm):
    """K(q = (20°, 60°), q̇ = (1, 2)) = 26323.33 g·cm²/s² = 2.6323333e-3 J."""
    q = paper_arm.configuration([math.radians(20.0), math.radians(60.0)])
    assert kinetic_energy(paper_arm, q, paper_arm.tangent([1.0, 2.0])) == pytest.approx(
        2.6323333e-3, abs=5e-11
    )


# ---------------------------------------------------------------------- inertia
def _box_inertia(mass: float, a: float, b: float, c: float) -> np.ndarray:
    """Uniform box about its CoM, edges a, b, c [m] along x, y, z: m/12·diag(b² + c², a² + c², a² +
    b²)."""
    return mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def test_cube_corner_inertia_matches_the_parallel_axis_theorem():
    """2 cm cube, 24 g: 16 g·cm² at the CoM; at a corner 64 on the diagonal, −24 off it."""
    cube = InertialParameters(0.024, [0.01, 0.01, 0.01], _box_inertia(0.024, 0.02, 0.02, 0.02))
    np.testing.assert_allclose(cube.inertia_com / GRAM_CM2, 16.0 * np.eye(3), atol=1e-9)
    expected = np.full((3, 3), -24.0) + 88.0 * np.eye(3)
    np.testing.assert_allclose(cube.inertia_origin() / GRAM_CM2, expected, atol=1e-9)


def test_rotated_plate_inertia_and_gyroscopic_term_match_hand_values():
    """6 × 2 cm plate, 12 g, turned 30° about z: R I Rᵀ = [[12, −13.8564, 0], [−13.8564, 28, 0],
    [0, 0, 40]] g·cm², principal moments (4, 36, 40); ω × Iω at ω = (10, 0, 0) = (0, 0,
    −1385.64)."""
    plate = InertialParameters(0.012, np.zeros(3), _box_inertia(0.012, 0.06, 0.02, 0.0))
    angle = math.radians(30.0)
    rotation = np.array(
        [
            [math.cos(angle), -math.sin(angle), 0.0],
            [math.sin(angle), math.cos(angle), 0.0],
            [0.0, 0.0, 1.0],
        ]
    )
    turned = plate.transformed(rotation, np.zeros(3)).inertia_com / GRAM_CM2
    np.testing.assert_allclose(
        turned, [[12.0, -13.8564, 0.0], [-13.8564, 28.0, 0.0], [0.0, 0.0, 40.0]], atol=1e-4
    )
    np.testing.assert_allclose(np.linalg.eigvalsh(turned), [4.0, 36.0, 40.0], atol=1e-9)
    omega = np.array([10.0, 0.0, 0.0])
    np.testing.assert_allclose(np.cross(omega, turned @ omega), [0.0, 0.0, -1385.6406], atol=1e-4)


def test_ten_parameter_orders_of_an_offset_box():
    """A box (4 × 2 × 2 cm, 60 g: 40, 100, 100 g·cm²) with its CoM at (2, 1, 1) cm:
    about the origin Ī = [[160, −120, −120], [−120, 400, −60], [−120, −60, 400]] g·cm² (hand
    parallel-axis), first moment h = m c = (0.0012, 0.0006, 0.0006) kg·m."""
    box = InertialParameters(0.06, [0.02, 0.01, 0.01], _box_inertia(0.06, 0.04, 0.02, 0.02))
    np.testing.assert_allclose(box.inertia_com / GRAM_CM2, np.diag([40.0, 100.0, 100.0]), atol=1e-9)
    first_moment = [0.0012, 0.0006, 0.0006]
    pinocchio_order = [0.06, *first_moment, 160e-7, -120e-7, 400e-7, -120e-7, -60e-7, 400e-7]
    upper_triangle_order = [0.06, *first_moment, 160e-7, -120e-7, -120e-7, 400e-7, -60e-7, 400e-7]
    np.testing.assert_allclose(box.pinocchio_vector(), pinocchio_order, atol=1e-15)
    np.testing.assert_allclose(box.upper_triangle_vector(), upper_triangle_order, atol=1e-15)
    round_trip = InertialParameters.from_upper_triangle_vector(np.array(upper_triangle_order))
    np.testing.assert_allclose(round_trip.com, box.com, atol=1e-15)
    np.testing.assert_allclose(round_trip.inertia_com, box.inertia_com, atol=1e-15)
