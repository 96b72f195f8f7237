"""Energy conservation of a passive fall integrated with the core forward dynamics.

With no joint torque, K + U is constant along the exact motion. Integrated with classical
RK4 (global error O(h⁴)), the largest energy drift over the run must shrink by about
2⁴ = 16 each time the step h is halved; a wrong forward dynamics (an acceleration that is
not M⁻¹(τ − C q̇ − g), a missing Gᵀ for a mimic joint) leaves an O(1) drift that does not
shrink. The turret gripper runs the mimic path (mass matrix solve), the arm pinocchio's ABA.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robot_dynamics.core.dynamics.joint_space import (
    forward_dynamics,
    kinetic_energy,
    potential_energy,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF

FIXTURES = Path(__file__).resolve().parent / 'data' / 'fixtures'
# URDF, simulated time [s], largest RK4 step [s] (halved twice), initial speed scale [rad/s]
RUNS = {
    'fr3_arm': (ARM_URDF, 0.4, 4e-3, 1.0),
    'turret_gripper': (FIXTURES / 'turret_gripper.urdf', 1.6, 4e-2, 6.0),
}


def _energy(robot: RobotModel, positions: np.ndarray, rates: np.ndarray) -> float:
    q = robot.configuration(positions)
    return kinetic_energy(robot, q, robot.tangent(rates)) + potential_energy(robot, q)


def _acceleration(robot: RobotModel, positions: np.ndarray, rates: np.ndarray) -> np.ndarray:
    return forward_dynamics(
        robot, robot.configuration(positions), robot.tangent(rates), np.zeros(robot.num_joints)
    )


def _largest_energy_drift(
    robot: RobotModel, positions: np.ndarray, rates: np.ndarray, step: float, duration: float
) -> float:
    """max |E(t) − E(0)| [J] over a passive RK4 run of ``duration`` seconds."""
    initial = _energy(robot, positions, rates)
    drift = 0.0
    for _ in range(int(round(duration / step))):
        k1p, k1v = rates, _acceleration(robot, positions, rates)
        k2p = rates + 0.5 * step * k1v
        k2v = _acceleration(robot, positions + 0.5 * step * k1p, k2p)
        k3p = rates + 0.5 * step * k2v
        k3v = _acceleration(robot, positions + 0.5 * step * k2p, k3p)
        k4p = rates + step * k3v
        k4v = _acceleration(robot, positions + step * k3p, k4p)
        positions = positions + step / 6.0 * (k1p + 2 * k2p + 2 * k3p + k4p)
        rates = rates + step / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v)
        drift = max(drift, abs(_energy(robot, positions, rates) - initial))
    return drift


@pytest.mark.parametrize('robot_name', sorted(RUNS))
def test_passive_fall_energy_drift_shrinks_sixteenfold_per_halved_step(robot_name):
    path, duration, step, speed = RUNS[robot_name]
    robot = RobotModel.from_urdf_file(path)
    rng = np.random.default_rng(5)
    positions = np.clip(
        rng.uniform(-1.0, 1.0, robot.num_joints), robot.limits.lower, robot.limits.upper
    )
    rates = rng.uniform(-speed, speed, robot.num_joints)
    drifts = [
        _largest_energy_drift(robot, positions, rates, step / 2**k, duration) for k in range(3)
    ]
    ratios = np.array(drifts[:-1]) / np.array(drifts[1:])
    assert drifts[-1] < 1e-6 * max(1.0, abs(_energy(robot, positions, rates)))
    assert np.all((ratios > 12.0) & (ratios < 22.0)), f'drifts {drifts} J, ratios {ratios}'
