"""The worked examples of the source texts, and the conventions where this package differs.

docs/identification.md (*Conventions of the source texts*) lists what each text gives and
what it leaves out. Where the inputs of an example are printed, the example is recomputed
through the package's own functions and compared with the printed values to their printed
digits; where they are not, the identity the example illustrates is checked on a system of
our own.

* The rigid-body text's payload: a 2 kg box held at the flange, its CoM about 0.12 m away.
  Printed: static support force 19.62 N, static moment 0.439 N·m, I_xx about the flange
  0.03942 against 0.01042 about the CoM (3.8×), and 0.196 N·m of static moment per cm of
  horizontal CoM error. The text prints |c| ≈ 0.12 m but not the CoM vector nor the box; the
  CoM c = (0.02, 0.01, 0.12) m (|c| = 0.1225 m) and a box with 0.15 m × 0.20 m faces about x
  reproduce every printed digit together, so those are the inputs used.
* The Lagrangian text's Rayleigh damping: ΔE = −∫ q̇ᵀ B q̇ dt (printed: −22.358752 J both
  ways, within 5.8e-8 J). B, the robot, the state and the duration are not printed, so the
  identity is checked on the bundled arm with a full damping matrix, integrated by SciPy.
* The identification text's prior-weighted consistent fit scales its prior by κ/σ², this
  package's by κ alone on 1/σ-whitened rows: the same minimiser when κ_text = κ_here · σ².
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from robot_dynamics.core.dynamics.joint_reactions import joint_reaction_wrenches
from robot_dynamics.core.dynamics.joint_space import (
    forward_dynamics,
    gravity_torques,
    kinetic_energy,
    mass_matrix,
    potential_energy,
)
from robot_dynamics.core.identification.whole_robot import consistent_fit, prior_weighted_fit
from robot_dynamics.core.model.inertia import (
    InertialParameters,
    box_inertia,
    parallel_axis,
    pseudo_inertia_from_vector,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF

# ------------------------------------------------------------------------------ rigid body
PAYLOAD_MASS = 2.0  # [kg], printed
PAYLOAD_COM = np.array([0.02, 0.01, 0.12])  # [m] in the flange frame, |c| printed as 0.12 m
PAYLOAD_BOX = (0.10, 0.15, 0.20)  # [m]; the 0.15 × 0.20 face gives the printed I_c,xx

FLANGE_ON_A_HORIZONTAL_AXIS = """
<robot name="flange_payload">
  <link name="base"/>
  <link name="flange"/>
  <joint name="wrist" type="revolute">
    <parent link="base"/>
    <child link="flange"/>
    <origin xyz="0 0 0.5"/>
    <axis xyz="1 0 0"/>
    <limit lower="-3" upper="3" effort="100" velocity="5"/>
  </joint>
</robot>
"""
"""A massless flange on a horizontal revolute joint whose origin is the flange origin; gravity
along −z, the package default (0, 0, −9.81) m/s²."""


def payload() -> InertialParameters:
    return InertialParameters(PAYLOAD_MASS, PAYLOAD_COM, box_inertia(PAYLOAD_MASS, PAYLOAD_BOX))


def flange_holding(load: InertialParameters) -> RobotModel:
    robot = RobotModel.from_urdf_string(FLANGE_ON_A_HORIZONTAL_AXIS)
    robot.attach_payload('flange', load)
    return robot


def test_the_flange_carries_the_2_kg_payload_with_19_62_n_and_0_439_nm():
    robot = flange_holding(payload())
    (reaction,) = joint_reaction_wrenches(robot, np.zeros(1), np.zeros(1), np.zeros(1))
    assert round(float(np.linalg.norm(reaction.force_world)), 2) == 19.62
    np.testing.assert_allclose(reaction.force_world, [0.0, 0.0, 19.62], atol=1e-12)
    assert round(float(np.linalg.norm(reaction.moment_world)), 3) == 0.439
    assert round(float(np.linalg.norm(PAYLOAD_COM)), 2) == 0.12  # the one printed CoM figure


def test_inertia_about_the_flange_is_the_parallel_axis_shift_of_the_inertia_about_the_com():
    load = payload()
    about_com, about_flange = load.inertia_com[0, 0], load.inertia_origin()[0, 0]
    assert round(about_com, 5) == 0.01042 and round(about_flange, 5) == 0.03942
    assert round(about_flange / about_com, 1) == 3.8
    # the same I_O as the joint inertia the dynamics sees about the flange's x axis (CRBA)
    joint_inertia = mass_matrix(flange_holding(load), np.zeros(1))[0, 0]
    assert joint_inertia == pytest.approx(about_flange, rel=1e-12)


def test_parallel_axis_shift_equals_the_point_mass_sum_about_the_new_point():
    generator = np.random.default_rng(8)
    masses = generator.uniform(0.01, 0.2, 40)
    points = PAYLOAD_COM + generator.normal(scale=0.05, size=(40, 3))

    def about(origin):
        offsets = points - origin
        return sum(m * (r @ r * np.eye(3) - np.outer(r, r)) for m, r in zip(masses, offsets))

    com = masses @ points / masses.sum()
    np.testing.assert_allclose(
        parallel_axis(about(com), masses.sum(), com), about(np.zeros(3)), atol=1e-15
    )


def test_a_horizontal_com_error_of_1_cm_moves_the_static_moment_by_0_196_nm():
    # the joint axis is x: an error along y is horizontal and perpendicular to it
    nominal = gravity_torques(flange_holding(payload()), np.zeros(1))[0]
    shifted = InertialParameters(
        PAYLOAD_MASS, PAYLOAD_COM + [0.0, 0.01, 0.0], payload().inertia_com
    )
    error = gravity_torques(flange_holding(shifted), np.zeros(1))[0] - nominal
    assert round(abs(error), 3) == 0.196
    assert abs(error) == pytest.approx(PAYLOAD_MASS * 9.81 * 0.01, rel=1e-12)  # m g Δc


# ------------------------------------------------------------------------------ Lagrangian
def damped_motion(robot: RobotModel, damping: np.ndarray, duration: float):
    """The unactuated arm with Rayleigh damping τ = −B q̇, integrated by SciPy's DOP853 from a
    moving start; the state carries D(t) = ∫ q̇ᵀ B q̇ dt [J] as its last entry."""
    n = robot.num_joints
    generator = np.random.default_rng(5)
    start = np.concatenate([robot.neutral_positions(), generator.uniform(-1.5, 1.5, n), [0.0]])

    def rates(_, state):
        q, v = state[:n], state[n : 2 * n]
        a = forward_dynamics(robot, robot.configuration(q), robot.tangent(v), -damping @ v)
        return np.concatenate([v, a, [v @ damping @ v]])

    return solve_ivp(
        rates, (0.0, duration), start, method='DOP853', rtol=1e-11, atol=1e-11, dense_output=True
    )


def mechanical_energy(robot: RobotModel, state: np.ndarray) -> float:
    n = robot.num_joints
    q = robot.configuration(state[:n])
    return kinetic_energy(robot, q, robot.tangent(state[n : 2 * n])) + potential_energy(robot, q)


def test_rayleigh_damping_removes_exactly_the_dissipated_energy():
    robot = RobotModel.from_urdf_file(ARM_URDF)
    generator = np.random.default_rng(6)
    root = generator.normal(scale=0.3, size=(robot.num_joints,) * 2)
    damping = root @ root.T + 0.2 * np.eye(robot.num_joints)  # [N·m·s/rad], SPD, coupled
    motion = damped_motion(robot, damping, duration=1.0)
    assert motion.success, motion.message
    initial = mechanical_energy(robot, motion.y[:, 0])
    for time in np.linspace(0.1, 1.0, 10):
        state = motion.sol(time)
        change, dissipated = mechanical_energy(robot, state) - initial, state[-1]
        assert change == pytest.approx(-dissipated, abs=1e-9), time  # [J]
    assert motion.y[-1, -1] > 1.0  # [J]: the damping did real work, the balance is not 0 = 0


# ------------------------------------------------------------------------------ identification
def prior_fit_problem(seed: int = 3):
    """One body's regressor rows Y (N·m per parameter), torques τ [N·m] of a physically
    inconsistent truth plus noise σ, the prior π0 and the precision Λ (1 kg, 0.1 kg·m,
    0.05 kg·m² scales, as in both the text and this package)."""
    generator = np.random.default_rng(seed)
    rows = generator.normal(size=(300, 10)) * np.array([3, 1, 1, 1, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3])
    prior = InertialParameters(1.0, [0.02, 0.0, 0.05], np.diag([4e-3, 5e-3, 3e-3]))
    truth = prior.pinocchio_vector() + generator.normal(scale=0.02, size=10)
    truth[0] = -0.1  # a negative mass: the constraint J ⪰ 0 must act
    sigma = 0.05
    torques = rows @ truth + generator.normal(scale=sigma, size=len(rows))
    precision = 1.0 / np.array([1.0, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05]) ** 2
    return rows, torques, sigma, prior.pinocchio_vector(), precision


def test_prior_weight_is_the_source_texts_kappa_divided_by_the_noise_variance():
    rows, torques, sigma, prior, precision = prior_fit_problem()
    ours = 100.0
    fitted = prior_weighted_fit(rows / sigma, torques / sigma, prior, precision, ours)

    def text_minimiser(kappa):
        """argmin (1/σ²)‖τ − Yπ‖² + (κ/σ²)(π − π0)ᵀΛ(π − π0), as one stacked least squares."""
        weight = np.sqrt(kappa * precision)
        stacked = np.vstack([rows, np.diag(weight)]) / sigma
        target = np.concatenate([torques, weight * prior]) / sigma
        return np.linalg.lstsq(stacked, target, rcond=None)[0]

    np.testing.assert_allclose(fitted, text_minimiser(ours * sigma**2), rtol=1e-9, atol=1e-12)
    # the same number read in the other convention is another fit
    assert np.abs(fitted - text_minimiser(ours)).max() > 1e-3


def test_consistent_fit_is_the_source_texts_constrained_problem_with_kappa_over_sigma_squared():
    rows, torques, sigma, prior, precision = prior_fit_problem()
    ours = 100.0
    fitted = consistent_fit(rows / sigma, torques / sigma, prior, precision, ours, bodies=1)

    unknown = cp.Variable(10)
    kappa = ours * sigma**2
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = (unknown[k] for k in range(10))
    half_trace = 0.5 * (ixx + iyy + izz)
    pseudo = cp.bmat(
        [
            [half_trace - ixx, -ixy, -ixz, hx],
            [-ixy, half_trace - iyy, -iyz, hy],
            [-ixz, -iyz, half_trace - izz, hz],
            [hx, hy, hz, m],
        ]
    )
    text = cp.Problem(
        cp.Minimize(
            cp.sum_squares(torques - rows @ unknown) / sigma**2
            + kappa / sigma**2 * cp.sum(cp.multiply(precision, cp.square(unknown - prior)))
        ),
        [pseudo >> 1e-7 * np.eye(4)],
    )
    text.solve(solver=cp.CLARABEL)
    assert text.status == cp.OPTIMAL
    np.testing.assert_allclose(fitted, unknown.value, atol=2e-5 * np.abs(prior).max())
    # the constraint acts: without it the mass is negative, with it J(π) ⪰ 0
    free = prior_weighted_fit(rows / sigma, torques / sigma, prior, precision, ours)
    assert free[0] < 0.0
    assert np.linalg.eigvalsh(pseudo_inertia_from_vector(fitted)).min() >= -1e-7
