"""A second rigid-body library: MuJoCo loading the same URDF gives the same inverse dynamics
and mass matrix as the core (pinocchio), to 1e-8 relative, on both bundled robots and on the
turret-gripper fixture (continuous, prismatic and mimic joints, fixed and floating base).

MuJoCo's ``mj_inverse`` also returns URDF ``<dynamics>`` damping and joint-limit constraint
forces, so the URDF's ``<dynamics>`` are stripped and constraints disabled; the compiler is
told to keep every link as its own body and not to touch the inertias.

Floating base (quadruped): pinocchio q = [p, (qx, qy, qz, qw), joints],
v = [v_base (base frame), ω (base frame), q̇]; a MuJoCo free joint has qpos = [p, (qw, qx, qy, qz)],
qvel = [ṗ in the world frame, ω in the body frame]. Hence qvel_lin = R v_base,
qacc_lin = R (a_lin + ω × v_base), forces f_pin = Rᵀ f_mujoco and M_pin = Jᵀ M_mujoco J with
J = diag(R, 1₃, 1). MuJoCo turns a URDF ``<mimic>`` into an equality constraint (disabled
here), so every joint is set explicitly (follower = multiplier·leader + offset) and MuJoCo's
full-coordinate τ and M are folded into the core's reduced coordinates with the coupling G
built from the URDF: Gᵀτ and Gᵀ M G.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip('mujoco')

import reference_kinematics as reference  # noqa: E402

from robot_dynamics.core.dynamics.joint_space import inverse_dynamics, mass_matrix  # noqa: E402
from robot_dynamics.core.model.model import RobotModel  # noqa: E402
from robot_dynamics.models import ARM_URDF, QUADRUPED_URDF  # noqa: E402

MUJOCO_COMPILER = (
    '<mujoco><compiler discardvisual="false" fusestatic="false" balanceinertia="false"/></mujoco>'
)
FIXTURES = Path(__file__).resolve().parent / 'data' / 'fixtures'
ROBOTS = {
    'fr3_arm': (ARM_URDF, 'fixed'),
    'quadruped': (QUADRUPED_URDF, 'floating'),
    'turret_gripper': (FIXTURES / 'turret_gripper.urdf', 'fixed'),
    'turret_gripper_floating': (FIXTURES / 'turret_gripper.urdf', 'floating'),
}
SEEDS = (21, 22, 23, 24)
RELATIVE_TOLERANCE = 1e-8


def _mujoco_model(urdf_text: str, floating_base: bool):
    text = re.sub(r'<dynamics\b[^>]*/>', '', urdf_text)
    text = re.sub(r'(<robot\b[^>]*>)', r'\1' + MUJOCO_COMPILER, text, count=1)
    spec = mujoco.MjSpec.from_string(text)
    if floating_base:
        spec.worldbody.first_body().add_freejoint()
    model = spec.compile()
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    return model


@pytest.fixture(scope='module', params=sorted(ROBOTS))
def robots(request):
    path, root_joint = ROBOTS[request.param]
    robot = RobotModel.from_urdf_file(path, root_joint=root_joint)
    return robot, _mujoco_model(path.read_text(), robot.floating_base)


def _random_state(robot: RobotModel, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    state = {
        'positions': rng.uniform(
            np.maximum(robot.limits.lower, -3.0), np.minimum(robot.limits.upper, 3.0)
        ),
        'rates': rng.uniform(-2.0, 2.0, robot.num_joints),
        'accelerations': rng.uniform(-5.0, 5.0, robot.num_joints),
    }
    if robot.floating_base:
        quaternion = rng.normal(size=4)
        state['base_pose'] = np.concatenate(
            [rng.uniform(-1.0, 1.0, 3), quaternion / np.linalg.norm(quaternion)]
        )
        state['base_velocity'] = rng.uniform(-1.0, 1.0, 6)
        state['base_acceleration'] = rng.uniform(-3.0, 3.0, 6)
    return state


def _pinocchio_side(robot: RobotModel, state: dict) -> tuple:
    q = robot.configuration(state['positions'], state.get('base_pose'))
    v = robot.tangent(state['rates'], state.get('base_velocity'))
    a = robot.tangent(state['accelerations'], state.get('base_acceleration'))
    return inverse_dynamics(robot, q, v, a), mass_matrix(robot, q)


def _mujoco_side(robot: RobotModel, model, state: dict) -> tuple:
    """MuJoCo's τ and M, mapped to the core's reduced coordinates (order, base conventions,
    mimic followers set from their leaders and folded back with Gᵀ)."""
    description, names = robot.description, list(robot.joint_names)
    moving = [name for name in description.joints if description.joints[name].type != 'fixed']
    positions = reference.all_joint_values(description, dict(zip(names, state['positions'])))
    rates = reference.all_joint_rates(description, dict(zip(names, state['rates'])))
    accelerations = reference.all_joint_rates(description, dict(zip(names, state['accelerations'])))
    data = mujoco.MjData(model)
    dofs = []
    for name in moving:
        joint = model.joint(name)
        data.qpos[joint.qposadr[0]] = positions[name]
        data.qvel[joint.dofadr[0]] = rates[name]
        data.qacc[joint.dofadr[0]] = accelerations[name]
        dofs.append(joint.dofadr[0])
    coupling = np.zeros((model.nv, robot.nv_reduced))
    coupling[dofs, robot.base_dofs :] = reference.mimic_coupling(description, names, moving)
    if robot.floating_base:
        x, y, z, qx, qy, qz, qw = state['base_pose']
        rotation = reference.quaternion_matrix([qx, qy, qz, qw])
        linear, angular = state['base_velocity'][:3], state['base_velocity'][3:]
        data.qpos[:7] = [x, y, z, qw, qx, qy, qz]
        data.qvel[:6] = np.concatenate([rotation @ linear, angular])
        data.qacc[:6] = np.concatenate(
            [
                rotation @ (state['base_acceleration'][:3] + np.cross(angular, linear)),
                state['base_acceleration'][3:],
            ]
        )
        coupling[:3, :3] = rotation
        coupling[3:6, 3:6] = np.eye(3)
    mujoco.mj_inverse(model, data)
    dense = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, dense)
    return coupling.T @ data.qfrc_inverse, coupling.T @ dense @ coupling


def test_mujoco_model_has_the_same_mass(robots):
    robot, model = robots
    moving_bodies = [i for i in range(model.nbody) if model.body_weldid[i] != 0]
    assert float(np.sum(model.body_mass[moving_bodies])) == pytest.approx(
        robot.total_mass(), rel=1e-12
    )


@pytest.mark.parametrize('seed', SEEDS)
def test_inverse_dynamics_matches_mujoco(robots, seed):
    robot, model = robots
    state = _random_state(robot, seed)
    torques, _ = _pinocchio_side(robot, state)
    expected, _ = _mujoco_side(robot, model, state)
    assert np.linalg.norm(torques - expected) <= RELATIVE_TOLERANCE * np.linalg.norm(expected)


@pytest.mark.parametrize('seed', SEEDS)
def test_mass_matrix_matches_mujoco(robots, seed):
    robot, model = robots
    state = _random_state(robot, seed)
    _, matrix = _pinocchio_side(robot, state)
    _, expected = _mujoco_side(robot, model, state)
    assert np.linalg.norm(matrix - expected) <= RELATIVE_TOLERANCE * np.linalg.norm(expected)


def test_gravity_only_matches_mujoco_at_rest(robots):
    """Zero velocity and acceleration: both libraries give the holding torques (and base wrench)."""
    robot, model = robots
    state = _random_state(robot, 99)
    for key in ('rates', 'accelerations', 'base_velocity', 'base_acceleration'):
        if key in state:
            state[key] = np.zeros_like(state[key])
    torques, _ = _pinocchio_side(robot, state)
    expected, _ = _mujoco_side(robot, model, state)
    assert np.linalg.norm(expected) > 1.0
    assert np.linalg.norm(torques - expected) <= RELATIVE_TOLERANCE * np.linalg.norm(expected)
