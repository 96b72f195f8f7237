"""A third rigid-body library: Drake (pydrake 1.51) loading three published robots of
example-robot-data gives the same gravity and inverse-dynamics torques as the core
(pinocchio), to 1e-12 relative (measured: 4e-16): UR5 (fixed base), Panda (fixed base, a
mimic finger), Solo12 (floating base) and TIAGo++ (101 moving joints with its two hands, the
largest published robot there, within the default joint limit).

Drake's URDF parser floats a root link that no joint welds to the world, so the fixed-base
roots are welded here. URDF ``<dynamics>`` (damping, friction) are stripped: neither side
should add them to inverse dynamics. Drake's ``CalcInverseDynamics`` adds only the forces it
is given, so gravity comes from ``CalcForceElementsContribution``; its
``CalcGravityGeneralizedForces`` is the force gravity applies, the negative of the core's
holding torques. Drake keeps a ``<mimic>`` follower as an independent joint in these
computations; its torque is folded into the leader's with Gᵀ, as the core reports it.

Floating base (Drake's quaternion floating joint): q = [qw, qx, qy, qz, p], v = [ω, ṗ] both
in the world frame, and the base generalized force is (torque, force) at the base origin in
the world frame. The core's base part is (v, ω) in the base frame and its wrench (force,
moment) in the base frame. Hence ṗ = R v, ω_W = R ω, v̇_W = R (a_lin + ω × v), ω̇_W = R α,
and the core's wrench is (Rᵀ f, Rᵀ n).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip('pydrake')

import reference_kinematics as reference  # noqa: E402

from robot_dynamics.core.dynamics.joint_space import gravity_torques, inverse_dynamics  # noqa: E402
from robot_dynamics.core.model.model import STANDARD_GRAVITY, RobotModel  # noqa: E402
from robot_dynamics.instruments.validation_corpus import default_robots_directory  # noqa: E402

ROBOTS_DIRECTORY = default_robots_directory()
pytestmark = pytest.mark.skipif(
    ROBOTS_DIRECTORY is None, reason='example-robot-data is not installed'
)
ROBOTS = {
    'ur5': ('ur_description/urdf/ur5_robot.urdf', 'fixed'),
    'panda': ('panda_description/urdf/panda.urdf', 'fixed'),
    'solo12': ('solo_description/robots/solo12.urdf', 'floating'),
    'tiago_dual': ('tiago_description/robots/tiago_dual.urdf', 'fixed'),
}
SEEDS = (31, 32, 33)
RELATIVE_TOLERANCE = 1e-12


@pytest.fixture(scope='module', params=sorted(ROBOTS))
def robots(request):
    path, root_joint = ROBOTS[request.param]
    text = re.sub(r'<dynamics\b[^>]*/>', '', (ROBOTS_DIRECTORY / path).read_text())
    robot = RobotModel.from_urdf_string(text, root_joint=root_joint)
    return robot, _drake_plant(text, robot.floating_base)


def _drake_plant(text: str, floating_base: bool):
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    plant = MultibodyPlant(0.0)
    model = Parser(plant).AddModelsFromString(text, 'urdf')[0]
    children = {
        plant.get_joint(index).child_body().index() for index in plant.GetJointIndices(model)
    }
    root = next(
        (plant.get_body(index) for index in plant.GetBodyIndices(model) if index not in children),
        None,
    )
    if root is not None and not floating_base:  # UR5 welds its base to a "world" link itself
        plant.WeldFrames(plant.world_frame(), root.body_frame())
    plant.mutable_gravity_field().set_gravity_vector(STANDARD_GRAVITY)
    plant.Finalize()
    return plant, root


def _state(robot: RobotModel, seed: int, moving: bool = True) -> dict:
    rng = np.random.default_rng(seed)
    scale = 1.0 if moving else 0.0
    state = {
        'positions': rng.uniform(
            np.maximum(robot.limits.lower, -3.0), np.minimum(robot.limits.upper, 3.0)
        ),
        'rates': scale * rng.uniform(-2.0, 2.0, robot.num_joints),
        'accelerations': scale * rng.uniform(-5.0, 5.0, robot.num_joints),
    }
    if robot.floating_base:
        quaternion = rng.normal(size=4)
        state['base_pose'] = np.concatenate(
            [rng.uniform(-1.0, 1.0, 3), quaternion / np.linalg.norm(quaternion)]
        )
        state['base_velocity'] = scale * rng.uniform(-1.0, 1.0, 6)
        state['base_acceleration'] = scale * rng.uniform(-3.0, 3.0, 6)
    return state


def _core_torques(robot: RobotModel, state: dict) -> tuple:
    """(inverse-dynamics torques, gravity torques), reduced coordinates (base wrench first)."""
    q = robot.configuration(state['positions'], state.get('base_pose'))
    v = robot.tangent(state['rates'], state.get('base_velocity'))
    a = robot.tangent(state['accelerations'], state.get('base_acceleration'))
    return inverse_dynamics(robot, q, v, a), gravity_torques(robot, q)


def _drake_torques(robot: RobotModel, drake, state: dict) -> tuple:
    """Drake's (inverse-dynamics, holding) generalized forces in the core's coordinates."""
    from pydrake.common.eigen_geometry import Quaternion
    from pydrake.math import RigidTransform, RotationMatrix
    from pydrake.multibody.math import SpatialVelocity
    from pydrake.multibody.tree import MultibodyForces

    plant, root = drake
    context = plant.CreateDefaultContext()
    description, names = robot.description, list(robot.joint_names)
    moving = [name for name in description.joints if description.joints[name].type != 'fixed']
    positions = reference.all_joint_values(description, dict(zip(names, state['positions'])))
    rates = reference.all_joint_rates(description, dict(zip(names, state['rates'])))
    accelerations = reference.all_joint_rates(description, dict(zip(names, state['accelerations'])))
    vdot = np.zeros(plant.num_velocities())
    columns = []
    for name in moving:
        joint = plant.GetJointByName(name)
        joint.set_angle(
            context, positions[name]
        ) if joint.type_name() != 'prismatic' else joint.set_translation(context, positions[name])
        plant.SetVelocities(
            context, _with(plant.GetVelocities(context), joint.velocity_start(), rates[name])
        )
        vdot[joint.velocity_start()] = accelerations[name]
        columns.append(joint.velocity_start())
    coupling = np.zeros((plant.num_velocities(), robot.nv_reduced))
    coupling[columns, robot.base_dofs :] = reference.mimic_coupling(description, names, moving)
    if robot.floating_base:
        x, y, z, qx, qy, qz, qw = state['base_pose']
        rotation = reference.quaternion_matrix([qx, qy, qz, qw])
        linear, angular = state['base_velocity'][:3], state['base_velocity'][3:]
        plant.SetFreeBodyPose(
            context, root, RigidTransform(RotationMatrix(Quaternion(qw, qx, qy, qz)), [x, y, z])
        )
        plant.SetFreeBodySpatialVelocity(
            context, root, SpatialVelocity(rotation @ angular, rotation @ linear)
        )
        start = plant.GetJointByName(_floating_joint_name(plant, root)).velocity_start()
        vdot[start : start + 6] = np.concatenate(
            [
                rotation @ state['base_acceleration'][3:],
                rotation @ (state['base_acceleration'][:3] + np.cross(angular, linear)),
            ]
        )
        coupling[start : start + 3, 3:6] = (
            rotation  # Drake (torque, force) in the world ← core (force, moment)
        )
        coupling[start + 3 : start + 6, 0:3] = rotation
    forces = MultibodyForces(plant)
    plant.CalcForceElementsContribution(context, forces)
    inverse = plant.CalcInverseDynamics(context, vdot, forces)
    holding = -plant.CalcGravityGeneralizedForces(context)
    return coupling.T @ inverse, coupling.T @ holding


def _with(vector: np.ndarray, index: int, value: float) -> np.ndarray:
    vector = np.array(vector)
    vector[index] = value
    return vector


def _floating_joint_name(plant, body) -> str:
    return next(
        plant.get_joint(index).name()
        for index in plant.GetJointIndices()
        if plant.get_joint(index).child_body().index() == body.index()
    )


def test_drake_model_has_the_same_moving_mass(robots):
    from pydrake.multibody.tree import BodyIndex

    robot, (plant, _) = robots
    welded = {int(body.index()) for body in plant.GetBodiesWeldedTo(plant.world_body())}
    moving = sum(
        plant.get_body(BodyIndex(index)).default_mass()
        for index in range(plant.num_bodies())
        if index not in welded
    )
    assert moving == pytest.approx(robot.total_mass(), rel=1e-12)


@pytest.mark.parametrize('seed', SEEDS)
def test_inverse_dynamics_matches_drake(robots, seed):
    robot, drake = robots
    state = _state(robot, seed)
    torques, _ = _core_torques(robot, state)
    expected, _ = _drake_torques(robot, drake, state)
    assert np.linalg.norm(expected) > 1.0
    assert np.linalg.norm(torques - expected) <= RELATIVE_TOLERANCE * np.linalg.norm(expected)


@pytest.mark.parametrize('seed', SEEDS)
def test_gravity_torques_match_drake(robots, seed):
    """Holding torques (and base wrench) at random poses: the core's g(q) against the negative
    of Drake's gravity generalized forces, and against Drake's inverse dynamics at rest."""
    robot, drake = robots
    state = _state(robot, seed, moving=False)
    at_rest, gravity = _core_torques(robot, state)
    expected_at_rest, expected_gravity = _drake_torques(robot, drake, state)
    assert np.linalg.norm(expected_gravity) > 1.0
    assert np.linalg.norm(gravity - expected_gravity) <= RELATIVE_TOLERANCE * np.linalg.norm(
        expected_gravity
    )
    assert np.linalg.norm(at_rest - expected_at_rest) <= RELATIVE_TOLERANCE * np.linalg.norm(
        expected_at_rest
    )
