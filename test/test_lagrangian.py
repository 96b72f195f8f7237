"""Lagrangian cross-checks of the dynamics core (Siciliano et al. 2009, docs/references.md).

The reference Lagrangian L = K − U is computed by hand from the URDF (reference_kinematics:
link poses from the joint origins, velocities from textbook Jacobian columns; no pinocchio).
Its derivatives are taken by finite differences:

* RNEA torques = d/dt(∂L/∂q̇) − ∂L/∂q, in the reduced coordinates the core exposes
  (a mimic follower moves with its leader, so the leader's torque is Gᵀτ);
* M(q) is the Hessian of K in q̇ (exact from three evaluations, K is quadratic in q̇),
  symmetric positive definite;
* Ṁ − 2C is skew-symmetric, and C q̇ = Ṁ q̇ − ½[q̇ᵀ(∂M/∂qᵢ)q̇]ᵢ (the Christoffel form of C).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import reference_kinematics as reference

from robot_dynamics.core.dynamics.joint_space import (
    coriolis_matrix,
    gravity_torques,
    inverse_dynamics,
    kinetic_energy,
    mass_matrix,
    potential_energy,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF

FIXTURES = Path(__file__).resolve().parent / 'data' / 'fixtures'
ROBOT_FILES = {'fr3_arm': ARM_URDF, 'turret_gripper': FIXTURES / 'turret_gripper.urdf'}
SEEDS = (11, 12, 13)
STEP = 1e-3
"""Finite-difference step [rad, m, s]; the 5-point stencil's error is O(STEP⁴)."""


@pytest.fixture(scope='module', params=sorted(ROBOT_FILES))
def robot(request) -> RobotModel:
    return RobotModel.from_urdf_file(ROBOT_FILES[request.param])


def _random_state(robot: RobotModel, seed: int) -> tuple:
    """Positions inside the limits (±2 rad where unlimited), velocities, accelerations."""
    rng = np.random.default_rng(seed)
    lower = np.maximum(robot.limits.lower, -2.0)
    upper = np.minimum(robot.limits.upper, 2.0)
    positions = rng.uniform(lower, upper)
    return (
        positions,
        rng.uniform(-1.5, 1.5, robot.num_joints),
        rng.uniform(-3.0, 3.0, robot.num_joints),
    )


def _every_joint(robot: RobotModel, positions: np.ndarray) -> dict:
    return reference.all_joint_values(robot.description, dict(zip(robot.joint_names, positions)))


def _kinetic(robot: RobotModel, positions: np.ndarray, rates: np.ndarray) -> float:
    return reference.kinetic_energy(
        robot.description,
        _every_joint(robot, positions),
        reference.all_joint_rates(robot.description, dict(zip(robot.joint_names, rates))),
    )


def _potential(robot: RobotModel, positions: np.ndarray) -> float:
    poses = reference.link_poses(robot.description, _every_joint(robot, positions))
    return reference.potential_energy(robot.description, poses, robot.model.gravity.linear)


def _derivative(function, step: float = STEP) -> float:
    """d/dx f at 0 by the 5-point central stencil."""
    return (
        -function(2 * step) + 8 * function(step) - 8 * function(-step) + function(-2 * step)
    ) / (12 * step)


def _momentum(robot: RobotModel, positions: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """∂K/∂q̇: exact central difference with a unit step because K is quadratic in q̇."""
    unit = np.eye(robot.num_joints)
    return np.array(
        [
            (_kinetic(robot, positions, rates + e) - _kinetic(robot, positions, rates - e)) / 2.0
            for e in unit
        ]
    )


def _lagrangian_torques(robot: RobotModel, positions, rates, accelerations) -> np.ndarray:
    def momentum_along_path(t):
        return _momentum(
            robot, positions + t * rates + 0.5 * t * t * accelerations, rates + t * accelerations
        )

    def lagrangian(q):
        return _kinetic(robot, q, rates) - _potential(robot, q)

    momentum_rate = _derivative(momentum_along_path)
    unit = np.eye(robot.num_joints)
    position_gradient = np.array(
        [_derivative(lambda h, e=e: lagrangian(positions + h * e)) for e in unit]
    )
    return momentum_rate - position_gradient


@pytest.mark.parametrize('seed', SEEDS)
def test_energies_match_hand_computation_from_urdf(robot, seed):
    positions, rates, _ = _random_state(robot, seed)
    q, v = robot.configuration(positions), robot.tangent(rates)
    assert kinetic_energy(robot, q, v) == pytest.approx(
        _kinetic(robot, positions, rates), rel=1e-12
    )
    assert potential_energy(robot, q) == pytest.approx(
        _potential(robot, positions), rel=1e-12, abs=1e-12
    )


@pytest.mark.parametrize('seed', SEEDS)
def test_rnea_matches_lagrangian(robot, seed):
    positions, rates, accelerations = _random_state(robot, seed)
    torques = inverse_dynamics(
        robot, robot.configuration(positions), robot.tangent(rates), robot.tangent(accelerations)
    )
    expected = _lagrangian_torques(robot, positions, rates, accelerations)
    np.testing.assert_allclose(
        torques, expected, rtol=0, atol=1e-8 * (1.0 + np.max(np.abs(expected)))
    )


@pytest.mark.parametrize('seed', SEEDS)
def test_gravity_torques_are_gradient_of_potential_energy(robot, seed):
    positions, _, _ = _random_state(robot, seed)
    unit = np.eye(robot.num_joints)
    gradient = np.array(
        [_derivative(lambda h, e=e: _potential(robot, positions + h * e)) for e in unit]
    )
    np.testing.assert_allclose(
        gravity_torques(robot, robot.configuration(positions)), gradient, atol=1e-8
    )


@pytest.mark.parametrize('seed', SEEDS)
def test_mass_matrix_is_hessian_of_kinetic_energy_and_positive_definite(robot, seed):
    positions, _, _ = _random_state(robot, seed)
    matrix = mass_matrix(robot, robot.configuration(positions))
    unit = np.eye(robot.num_joints)
    energy = [_kinetic(robot, positions, e) for e in unit]
    hessian = np.array(
        [
            [
                _kinetic(robot, positions, unit[i] + unit[j]) - energy[i] - energy[j]
                for j in range(robot.num_joints)
            ]
            for i in range(robot.num_joints)
        ]
    )
    for i in range(robot.num_joints):
        hessian[i, i] = 2.0 * energy[i]
    np.testing.assert_allclose(matrix, hessian, atol=1e-12 * np.max(np.abs(hessian)) + 1e-15)
    np.testing.assert_array_equal(matrix, matrix.T)
    assert np.min(np.linalg.eigvalsh(matrix)) > 0.0


def _mass_matrix_derivative(
    robot: RobotModel, positions: np.ndarray, direction: np.ndarray
) -> np.ndarray:
    """d/dt M(q + t·direction) at t = 0."""
    return _derivative(lambda t: mass_matrix(robot, robot.configuration(positions + t * direction)))


@pytest.mark.parametrize('seed', SEEDS)
def test_mass_matrix_rate_minus_twice_coriolis_is_skew_symmetric(robot, seed):
    positions, rates, _ = _random_state(robot, seed)
    coriolis = coriolis_matrix(robot, robot.configuration(positions), robot.tangent(rates))
    skew = _mass_matrix_derivative(robot, positions, rates) - 2.0 * coriolis
    scale = np.max(np.abs(coriolis))
    assert scale > 1e-3  # a real test: C is not trivially zero here
    np.testing.assert_allclose(skew + skew.T, 0.0, atol=1e-9 * scale)


@pytest.mark.parametrize('seed', SEEDS)
def test_coriolis_term_follows_from_mass_matrix(robot, seed):
    """V = Ṁ q̇ − ½ [q̇ᵀ (∂M/∂qᵢ) q̇]ᵢ (from the Euler–Lagrange equations)."""
    positions, rates, _ = _random_state(robot, seed)
    coriolis = coriolis_matrix(robot, robot.configuration(positions), robot.tangent(rates))
    unit = np.eye(robot.num_joints)
    quadratic = np.array(
        [rates @ _mass_matrix_derivative(robot, positions, e) @ rates for e in unit]
    )
    expected = _mass_matrix_derivative(robot, positions, rates) @ rates - 0.5 * quadratic
    np.testing.assert_allclose(
        coriolis @ rates, expected, atol=1e-9 * (1.0 + np.max(np.abs(expected)))
    )
