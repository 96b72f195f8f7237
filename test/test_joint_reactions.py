"""Joint reaction wrenches and inverse dynamics with a known external wrench
(robot_dynamics.core.dynamics.joint_reactions) against the standing rod's closed forms, finite
differences of the forward kinematics and Newton–Euler consistency."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics.core.dynamics.joint_reactions import (
    KnownWrench,
    KnownWrenchError,
    inverse_dynamics_with_wrench,
    joint_reaction_wrenches,
)
from robot_dynamics.core.dynamics.joint_space import inverse_dynamics
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF

FIXTURES = Path(__file__).resolve().parent / 'data' / 'fixtures'
G, MASS, LENGTH = 9.8, 0.1, 0.1


@pytest.fixture(scope='module')
def rod():
    text = (
        (FIXTURES / 'standing_rod.urdf')
        .read_text()
        .replace(
            '</robot>',
            """
  <link name="tip"/>
  <joint name="tip_joint" type="fixed"><origin xyz="0.1 0 0"/><parent link="rod"/>
    <child link="tip"/></joint>
</robot>""",
        )
    )
    return RobotModel.from_urdf_string(text, gravity=(0.0, 0.0, -G))


@pytest.fixture(scope='module')
def arm():
    return RobotModel.from_urdf_file(ARM_URDF)


def _at_rest(robot, positions):
    return (
        robot.configuration(positions),
        robot.tangent(np.zeros(robot.num_joints)),
        robot.tangent(np.zeros(robot.num_joints)),
    )


def test_standing_rod_upright_bearing_carries_its_weight_and_nothing_else(rod):
    (reaction,) = joint_reaction_wrenches(rod, *_at_rest(rod, [math.pi / 2]))
    assert reaction.joint == 'motor'
    np.testing.assert_allclose(reaction.force_world, [0.0, 0.0, MASS * G], atol=1e-12)
    np.testing.assert_allclose(reaction.moment_world, [0.0, 0.0, 0.0], atol=1e-12)


def test_standing_rod_horizontal_carries_weight_and_moment_m_g_l_over_2(rod):
    (reaction,) = joint_reaction_wrenches(rod, *_at_rest(rod, [0.0]))
    np.testing.assert_allclose(reaction.force_world, [0.0, 0.0, MASS * G], atol=1e-12)
    # r_c × f = (l/2, 0, 0) × (0, 0, m g): about −y, the motor axis, so the motor gives +m g l/2
    np.testing.assert_allclose(
        reaction.moment_world, [0.0, -MASS * G * LENGTH / 2, 0.0], atol=1e-12
    )
    np.testing.assert_allclose(
        reaction.force, reaction.force_world, atol=1e-12
    )  # joint frame = world at θ = 0


def test_standing_rod_at_an_angle_reports_the_joint_frame_components(rod):
    theta = 0.6
    (reaction,) = joint_reaction_wrenches(rod, *_at_rest(rod, [theta]))
    # the bearing's upward m g seen in the joint frame (x along the rod, z across it)
    np.testing.assert_allclose(
        reaction.force, [MASS * G * math.sin(theta), 0.0, MASS * G * math.cos(theta)], atol=1e-12
    )
    assert -reaction.moment[1] == pytest.approx(MASS * G * LENGTH / 2 * math.cos(theta), rel=1e-12)


def test_pressing_down_on_the_rod_tip_adds_to_reaction_and_torque(rod):
    """The environment pushes the tip down with 1 N: the bearing carries m g + 1 N and the motor
    needs m g l/2 + 1 N × L."""
    push = KnownWrench('tip', [0.0, 0.0, -1.0], [0.0, 0.0, 0.0], expressed_in='world')
    state = _at_rest(rod, [0.0])
    torque = inverse_dynamics_with_wrench(rod, *state, push)
    assert torque[0] == pytest.approx(MASS * G * LENGTH / 2 + 1.0 * LENGTH, rel=1e-12)
    (reaction,) = joint_reaction_wrenches(rod, *state, push)
    np.testing.assert_allclose(reaction.force_world, [0.0, 0.0, MASS * G + 1.0], atol=1e-12)


def _wrench_torques_by_finite_differences(
    robot, positions, frame, force_world, moment_world, step=1e-6
):
    """Σ_k (f·∂p/∂q_k + m·∂θ/∂q_k): virtual work of the wrench, from frame placements only."""
    model, data = robot.model, robot.data
    frame_id = model.getFrameId(frame)
    torques = np.zeros(robot.num_joints)
    for k in range(robot.num_joints):
        placements = []
        for sign in (1.0, -1.0):
            shifted = positions.copy()
            shifted[k] += sign * step
            pin.framesForwardKinematics(model, data, robot.configuration(shifted))
            placements.append(data.oMf[frame_id].copy())
        displacement = (placements[0].translation - placements[1].translation) / (2 * step)
        rotation = pin.log3(placements[0].rotation @ placements[1].rotation.T) / (2 * step)
        torques[k] = force_world @ displacement + moment_world @ rotation
    return torques


@pytest.mark.parametrize('expressed_in', ('local', 'world'))
def test_known_wrench_torques_match_finite_differences_of_the_kinematics(arm, expressed_in):
    rng = np.random.default_rng(11)
    for _ in range(3):
        positions = rng.uniform(arm.limits.lower, arm.limits.upper)
        velocities, accelerations = rng.uniform(-1.0, 1.0, (2, 7))
        force, moment = rng.uniform(-20.0, 20.0, 3), rng.uniform(-3.0, 3.0, 3)
        wrench = KnownWrench('tool0', force, moment, expressed_in)
        q, v, a = arm.configuration(positions), arm.tangent(velocities), arm.tangent(accelerations)
        if expressed_in == 'local':
            pin.framesForwardKinematics(arm.model, arm.data, q)
            rotation = arm.data.oMf[arm.model.getFrameId('tool0')].rotation
            force_world, moment_world = rotation @ force, rotation @ moment
        else:
            force_world, moment_world = force, moment
        expected = inverse_dynamics(arm, q, v, a) - _wrench_torques_by_finite_differences(
            arm, positions, 'tool0', force_world, moment_world
        )
        np.testing.assert_allclose(
            inverse_dynamics_with_wrench(arm, q, v, a, wrench), expected, atol=1e-6
        )


def test_reaction_moment_about_each_axis_is_the_joint_torque(arm):
    """Newton–Euler: the motor supplies the axis component of the transmitted wrench (fr3 joints
    turn about z)."""
    rng = np.random.default_rng(12)
    positions, velocities, accelerations = rng.uniform(-1.0, 1.0, (3, 7))
    wrench = KnownWrench('tool0', [5.0, -2.0, 8.0], [0.3, 0.1, -0.4])
    q, v, a = arm.configuration(positions), arm.tangent(velocities), arm.tangent(accelerations)
    reactions = joint_reaction_wrenches(arm, q, v, a, wrench)
    torques = inverse_dynamics_with_wrench(arm, q, v, a, wrench)
    assert [r.joint for r in reactions] == list(arm.joint_names)
    np.testing.assert_allclose([r.moment[2] for r in reactions], torques, atol=1e-10)


def test_last_reaction_balances_the_outboard_body_newton_euler(arm):
    """Joint 7 carries link 7 (and the fixed tool frames): f₇ = m (a_c − g) − F_ext at rest."""
    positions = np.array([0.3, -0.5, 0.2, -1.9, 0.4, 1.6, -0.7])
    push = KnownWrench('tool0', [0.0, 0.0, -10.0], [0.0, 0.0, 0.0], expressed_in='world')
    reaction = joint_reaction_wrenches(arm, *_at_rest(arm, positions), push)[-1]
    outboard = arm.model.inertias[arm.model.njoints - 1].mass
    np.testing.assert_allclose(reaction.force_world, [0.0, 0.0, outboard * 9.81 + 10.0], atol=1e-10)


def test_bad_known_wrenches_are_refused(rod):
    with pytest.raises(KnownWrenchError, match='not a frame'):
        inverse_dynamics_with_wrench(
            rod, *_at_rest(rod, [0.0]), KnownWrench('nowhere', [0, 0, 1], [0, 0, 0])
        )
    with pytest.raises(KnownWrenchError, match='fixed to the world'):
        inverse_dynamics_with_wrench(
            rod, *_at_rest(rod, [0.0]), KnownWrench('base', [0, 0, 1], [0, 0, 0])
        )
    with pytest.raises(KnownWrenchError, match='finite'):
        KnownWrench('tip', [0, 0, math.nan], [0, 0, 0])
    with pytest.raises(KnownWrenchError, match='expressed_in'):
        KnownWrench('tip', [0, 0, 1], [0, 0, 0], 'base')
