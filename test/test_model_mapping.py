"""Joint-space mapping of the core: joint_states-like input → model order → pinocchio q,
continuous, mimic, prismatic and floating-base joints, payload attachment, URDF limits.

References: hand-built configuration vectors, forward kinematics written from the URDF
(reference_kinematics, no pinocchio), finite differences of the potential energy, hand
computations of weight wrenches and point-mass torques, and an independent parse of the
URDF limits with ElementTree.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import reference_kinematics as reference

from robot_dynamics.core.dynamics.joint_space import (
    gravity_torques,
    mass_matrix,
    potential_energy,
    torque_margins,
    wrench_torques,
)
from robot_dynamics.core.errors import DescriptionError, PayloadError, SettingError
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.joint_states import JointStateMerger
from robot_dynamics.models import ARM_URDF, QUADRUPED_URDF

FIXTURES = Path(__file__).resolve().parent / 'data' / 'fixtures'
GRIPPER_URDF = FIXTURES / 'turret_gripper.urdf'
GRAVITY = 9.81


@pytest.fixture(scope='module')
def arm() -> RobotModel:
    return RobotModel.from_urdf_file(ARM_URDF)


@pytest.fixture(scope='module')
def gripper() -> RobotModel:
    return RobotModel.from_urdf_file(GRIPPER_URDF)


@pytest.fixture(scope='module')
def quadruped() -> RobotModel:
    return RobotModel.from_urdf_file(QUADRUPED_URDF, root_joint='floating')


def _gripper_q(turret: float, lift: float, finger: float) -> np.ndarray:
    """pinocchio q of the turret gripper written by hand: (cos, sin) of the continuous turret,
    the lift, the left finger, the mimic right finger = −finger + 0.1."""
    return np.array([math.cos(turret), math.sin(turret), lift, finger, -finger + 0.1])


# ---------------------------------------------------------------------- joint order
def test_joint_names_are_independent_joints_in_tree_order(arm, gripper, quadruped):
    assert arm.joint_names == tuple(f'fr3_joint{i}' for i in range(1, 8))
    assert gripper.joint_names == ('turret', 'lift', 'finger_left')
    assert gripper.mimic_joint_names == ('finger_right',)
    assert set(quadruped.joint_names) == {
        f'{leg}_{j}' for leg in ('lf', 'rf', 'lh', 'rh') for j in ('haa', 'hfe', 'kfe')
    }


def test_leaf_joints_are_those_no_other_moving_joint_follows(arm, gripper, quadruped):
    assert arm.leaf_joints() == ('fr3_joint7',)
    # finger_right mimics finger_left (both on the lift): the left finger is still a leaf
    assert gripper.leaf_joints() == ('finger_left',)
    assert set(quadruped.leaf_joints()) == {f'{leg}_kfe' for leg in ('lf', 'rf', 'lh', 'rh')}
    two_fingers = RobotModel.from_urdf_string(
        re.sub(r'<mimic[^>]*/>', '', GRIPPER_URDF.read_text())
    )  # the right finger on its own now: two leaves
    assert two_fingers.leaf_joints() == ('finger_left', 'finger_right')


@pytest.mark.parametrize('seed', range(5))
def test_leaf_joints_of_random_trees_equal_a_walk_up_from_every_joint(seed):
    rng = np.random.default_rng(seed)
    inertial = (
        '<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" '
        'iyz="0"/></inertial>'
    )
    links, joints, parents, leaders = ['<link name="l0"/>'], [], {}, {}
    for i in range(1, 40):
        parent = int(rng.integers(0, i))
        parents[i] = parent
        mimic = ''
        earlier = [k for k in range(1, i) if k not in leaders]
        if earlier and rng.random() < 0.25:  # often its parent's joint: a finger's linkage
            leaders[i] = parent if parent in earlier else int(rng.choice(earlier))
            mimic = f'<mimic joint="j{leaders[i]}"/>'
        links.append(f'<link name="l{i}">{inertial}</link>')
        joints.append(
            f'<joint name="j{i}" type="revolute"><parent link="l{parent}"/><child link="l{i}"/>'
            f'<axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/>{mimic}'
            '</joint>'
        )
    robot = RobotModel.from_urdf_string(
        f'<robot name="tree">{"".join(links)}{"".join(joints)}</robot>'
    )

    def followed(j):  # some joint other than j and its followers has j above it
        for k in parents:
            if k == j or leaders.get(k) == j:
                continue
            above = parents[k]
            while above and above != j:
                above = parents[above]
            if above == j:
                return True
        return False

    expected = {f'j{j}' for j in parents if j not in leaders and not followed(j)}
    assert set(robot.leaf_joints()) == expected


@pytest.mark.parametrize('seed', (1, 2, 3))
def test_shuffled_joint_state_gives_model_order_configuration(arm, seed):
    rng = np.random.default_rng(seed)
    positions = rng.uniform(-1.0, 1.0, arm.num_joints)
    permutation = rng.permutation(arm.num_joints)
    merger = JointStateMerger(arm.joint_names)
    merger.update([arm.joint_names[i] for i in permutation], positions[permutation], stamp=1.0)
    assert merger.complete()
    np.testing.assert_array_equal(
        arm.configuration(merger.positions), positions
    )  # all-revolute: q is θ


def test_partial_joint_states_complete_only_when_every_joint_arrived(gripper):
    merger = JointStateMerger(gripper.joint_names)
    merger.update(['finger_left', 'camera_zoom'], [0.3, 5.0], velocities=[0.1, 0.0], stamp=1.0)
    assert not merger.complete(max_age=0.5)
    assert merger.stale_joints(now=1.0, max_age=1.0) == ['turret', 'lift']
    merger.update(['lift', 'turret'], [0.05, 2.0], velocities=[0.2, -1.0], stamp=1.01)
    assert merger.complete(max_age=0.5, need_velocity=True)
    np.testing.assert_allclose(
        gripper.configuration(merger.positions), _gripper_q(2.0, 0.05, 0.3), atol=1e-15
    )
    np.testing.assert_allclose(
        gripper.tangent(merger.velocities), [-1.0, 0.2, 0.1, -0.1], atol=1e-15
    )


def test_joint_never_received_is_missing_with_default_max_age(gripper):
    merger = JointStateMerger(gripper.joint_names)
    merger.update(['finger_left'], [0.3], stamp=1.0)
    assert not merger.complete()


# ---------------------------------------------------------------------- continuous joint
@pytest.mark.parametrize('turret', (math.pi + 0.4, -math.pi - 0.4, 3 * math.pi, 7.0))
def test_continuous_joint_past_pi_is_the_same_pose(gripper, turret):
    wrapped = math.remainder(turret, 2 * math.pi)
    q = gripper.configuration([turret, 0.1, 0.2])
    np.testing.assert_allclose(q, gripper.configuration([wrapped, 0.1, 0.2]), atol=1e-14)
    recovered = gripper.joint_positions(q)
    assert -math.pi < recovered[0] <= math.pi
    assert math.remainder(recovered[0] - turret, 2 * math.pi) == pytest.approx(0.0, abs=1e-14)
    np.testing.assert_allclose(recovered[1:], [0.1, 0.2], atol=1e-15)
    pin.framesForwardKinematics(gripper.model, gripper.data, q)
    placement = gripper.data.oMf[gripper.frame_id('turret_link')]
    np.testing.assert_allclose(
        placement.rotation, reference.rotation_about([0, 0, 1], turret), atol=1e-14
    )
    np.testing.assert_allclose(
        gravity_torques(gripper, q),
        gravity_torques(gripper, gripper.configuration([wrapped, 0.1, 0.2])),
        atol=1e-14,
    )


def test_continuous_joint_has_no_position_limits_but_keeps_effort(gripper):
    turret = gripper.joint_names.index('turret')
    assert gripper.limits.lower[turret] == -math.inf and gripper.limits.upper[turret] == math.inf
    assert gripper.limits.effort[turret] == 20.0 and gripper.limits.velocity[turret] == 3.0


def test_positions_and_velocities_beyond_the_urdf_limits_are_found(gripper):
    # turret continuous (no limits), lift prismatic ±0.2 m (5 mm allowed), finger −0.5..1 rad
    assert gripper.outside_limits(np.array([40.0, 0.204, 1.049])) == []
    assert gripper.outside_limits(np.array([-40.0, 0.206, -0.551])) == [1, 2]
    assert gripper.outside_limits(np.array([0.0, -0.3, 1.06])) == [1, 2]
    # velocities: beyond 1.2 × the URDF limit (turret 3 rad/s)
    assert gripper.beyond_velocity_limits(np.array([-3.59, 0.0, 0.0])) == []
    assert gripper.beyond_velocity_limits(np.array([-3.61, 0.0, 0.0])) == [0]


# ---------------------------------------------------------------------- mimic joint
def test_mimic_follower_is_computed_from_leader_and_never_expected(gripper):
    merger = JointStateMerger(gripper.joint_names)
    merger.update(
        ['turret', 'lift', 'finger_left', 'finger_right'], [0.5, 0.0, 0.4, 9.9], stamp=2.0
    )
    assert merger.complete()
    q = gripper.configuration(merger.positions)
    np.testing.assert_allclose(
        q, _gripper_q(0.5, 0.0, 0.4), atol=1e-15
    )  # 9.9 for the follower is ignored


def test_reduced_forces_are_coupling_transpose_times_full_forces(gripper):
    coupling = np.zeros((4, 3))
    coupling[0, 0] = coupling[1, 1] = coupling[2, 2] = 1.0
    coupling[3, 2] = -1.0  # d(finger_right)/d(finger_left)
    np.testing.assert_array_equal(gripper.coupling, coupling)
    full = np.array([0.3, -2.0, 0.7, 0.2])
    np.testing.assert_allclose(gripper.reduce(full), [0.3, -2.0, 0.5])


@pytest.mark.parametrize('seed', (4, 5, 6))
def test_mimic_reduced_gravity_is_gradient_of_potential_in_reduced_coordinates(gripper, seed):
    positions = np.random.default_rng(seed).uniform([-3.0, -0.2, -0.5], [3.0, 0.2, 1.0])
    step = 1e-4

    def energy(p):
        return potential_energy(gripper, gripper.configuration(p))

    gradient = np.array(
        [
            (energy(positions + step * e) - energy(positions - step * e)) / (2 * step)
            for e in np.eye(3)
        ]
    )
    np.testing.assert_allclose(
        gravity_torques(gripper, gripper.configuration(positions)), gradient, atol=1e-8
    )


def test_lift_carries_the_weight_of_everything_above_it(gripper):
    """A vertical prismatic lift holds carriage + camera + both fingers: 0.9 kg · 9.81 N/kg."""
    torques = gravity_torques(gripper, gripper.configuration([1.3, 0.1, 0.4]))
    assert torques[gripper.joint_names.index('lift')] == pytest.approx(0.9 * GRAVITY, rel=1e-12)


# ---------------------------------------------------------------------- floating base
FLOATING_ROBOTS = {'quadruped': (QUADRUPED_URDF, 23.6), 'turret_gripper': (GRIPPER_URDF, 3.9)}


@pytest.mark.parametrize('robot_name', sorted(FLOATING_ROBOTS))
@pytest.mark.parametrize('seed', (7, 8, 9))
def test_floating_base_gravity_rows_are_total_weight_wrench(robot_name, seed):
    """g[:6] = wrench holding the whole robot, in the base frame: f = Rᵀ(0, 0, m·g),
    n = c_b × f about the base origin (c_b: CoM in the base frame). The gripper adds a mimic
    joint on a floating base."""
    path, expected_mass = FLOATING_ROBOTS[robot_name]
    robot = RobotModel.from_urdf_file(path, root_joint='floating')
    rng = np.random.default_rng(seed)
    positions = rng.uniform(
        np.maximum(robot.limits.lower, -3.0), np.minimum(robot.limits.upper, 3.0)
    )
    quaternion = rng.normal(size=4)
    base_pose = np.concatenate([rng.uniform(-1, 1, 3), quaternion / np.linalg.norm(quaternion)])
    rotation = reference.quaternion_matrix(base_pose[3:])
    values = reference.all_joint_values(robot.description, dict(zip(robot.joint_names, positions)))
    poses = reference.link_poses(
        robot.description, values, reference.LinkPose(rotation, base_pose[:3])
    )
    mass, com = reference.total_mass_and_com(robot.description, poses)
    force = rotation.T @ np.array([0.0, 0.0, mass * GRAVITY])
    moment = np.cross(rotation.T @ (com - base_pose[:3]), force)
    torques = gravity_torques(robot, robot.configuration(positions, base_pose))
    assert mass == pytest.approx(expected_mass)
    assert torques.shape == (6 + robot.num_joints,)
    np.testing.assert_allclose(torques[:3], force, atol=1e-10)
    np.testing.assert_allclose(torques[3:6], moment, atol=1e-10)


def test_floating_base_joint_gravity_is_gradient_of_potential(quadruped):
    rng = np.random.default_rng(10)
    positions = rng.uniform(quadruped.limits.lower, quadruped.limits.upper)
    base_pose = np.array([0.1, -0.2, 0.5, 0.1, 0.2, -0.3, 0.9])
    base = reference.LinkPose(reference.quaternion_matrix(base_pose[3:]), base_pose[:3])
    step = 1e-6

    def energy(p):
        poses = reference.link_poses(
            quadruped.description, dict(zip(quadruped.joint_names, p)), base
        )
        return reference.potential_energy(
            quadruped.description, poses, np.array([0.0, 0.0, -GRAVITY]), False
        )

    gradient = [
        (energy(positions + step * e) - energy(positions - step * e)) / (2 * step)
        for e in np.eye(quadruped.num_joints)
    ]
    torques = gravity_torques(quadruped, quadruped.configuration(positions, base_pose))
    np.testing.assert_allclose(quadruped.joint_part(torques), gradient, atol=1e-7)


def test_floating_base_quaternion_is_normalised(quadruped):
    q = quadruped.configuration(np.zeros(12), np.array([0, 0, 0.4, 0, 0, 2.0, 2.0]))
    np.testing.assert_allclose(q[3:7], [0, 0, math.sqrt(0.5), math.sqrt(0.5)])


def _joint_block_at_rest(robot, positions, velocities, accelerations) -> tuple:
    """M, C, g and inverse dynamics of ``robot``'s joints, its floating base at rest at the
    identity pose, from pinocchio on the floating-base model itself."""
    q = robot.configuration(positions, np.array([0.0, 0, 0, 0, 0, 0, 1]))
    v, a = np.zeros(robot.model.nv), np.zeros(robot.model.nv)
    v[6:], a[6:] = velocities, accelerations
    model, data = robot.model, robot.model.createData()
    return (
        pin.crba(model, data, q).copy()[6:, 6:],
        pin.computeCoriolisMatrix(model, data, q, v).copy()[6:, 6:],
        pin.computeGeneralizedGravity(model, data, q)[6:],
        pin.rnea(model, data, q, v, a)[6:],
    )


@pytest.mark.parametrize('payload_link', [None, 'lf_shank', 'base'])
def test_fixed_base_twin_is_the_joint_block_of_the_floating_base_at_rest(payload_link):
    robot = RobotModel.from_urdf_file(QUADRUPED_URDF, root_joint='floating')
    robot.set_rotor_inertia(np.linspace(0.01, 0.12, robot.num_joints))
    if payload_link is not None:
        inertia = np.array([[0.02, 0.001, 0.0], [0.001, 0.03, 0.002], [0.0, 0.002, 0.025]])
        robot.attach_payload(
            payload_link, InertialParameters(1.7, np.array([0.02, -0.03, 0.05]), inertia)
        )
    twin = robot.fixed_base_twin()
    assert not twin.floating_base and twin.joint_names == robot.joint_names
    rng = np.random.default_rng(4)
    positions = rng.uniform(robot.limits.lower, robot.limits.upper)
    velocities, accelerations = rng.normal(size=(2, robot.num_joints))
    expected = _joint_block_at_rest(robot, positions, velocities, accelerations)
    model, data = twin.model, twin.data
    got = (
        pin.crba(model, data, positions).copy(),
        pin.computeCoriolisMatrix(model, data, positions, velocities).copy(),
        pin.computeGeneralizedGravity(model, data, positions),
        pin.rnea(model, data, positions, velocities, accelerations),
    )
    for name, value, reference_value in zip(('M', 'C', 'g', 'rnea'), got, expected):
        np.testing.assert_allclose(value, reference_value, atol=1e-10, err_msg=name)


def test_fixed_base_twin_follows_payload_and_rotor_inertia_changes():
    robot = RobotModel.from_urdf_file(QUADRUPED_URDF, root_joint='floating')
    bare = robot.fixed_base_twin()
    assert robot.fixed_base_twin() is bare  # built once
    robot.attach_payload('lf_shank', InertialParameters.point_mass(2.0, np.zeros(3)))
    loaded = robot.fixed_base_twin()
    positions = np.zeros(robot.num_joints)
    lifted = pin.computeGeneralizedGravity(loaded.model, loaded.data, positions)
    plain = pin.computeGeneralizedGravity(bare.model, bare.data, positions)
    assert np.abs(lifted - plain).max() > 0.1  # the 2 kg on the shank loads the leg
    robot.set_rotor_inertia(np.full(robot.num_joints, 0.05))
    np.testing.assert_allclose(robot.fixed_base_twin().rotor_inertia, 0.05)
    with pytest.raises(SettingError):
        RobotModel.from_urdf_file(ARM_URDF).fixed_base_twin()


# ---------------------------------------------------------------------- frames and wrenches
def test_frame_lookup_names_the_links_to_choose_from(arm):
    with pytest.raises(DescriptionError, match='frame "nowhere" is not a frame of model'):
        arm.frame_id('nowhere')
    with pytest.raises(PayloadError, match='payload link "nowhere".*fr3_link7, fr3_flange, tool0'):
        arm.frame_id('nowhere', PayloadError, 'payload link')
    assert arm.model.frames[arm.frame_id('tool0', moving=True)].name == 'tool0'


def test_frame_lookup_refuses_a_world_fixed_frame_only_when_asked(arm):
    assert arm.model.frames[arm.frame_id('fr3_link0')].parentJoint == 0
    with pytest.raises(PayloadError, match='"fr3_link0" is fixed to the world'):
        arm.frame_id('fr3_link0', PayloadError, moving=True)


def _virtual_work_torques(robot, positions, link, force, moment, world_aligned) -> np.ndarray:
    """τᵢ = F · ∂(pose of ``link``)/∂pᵢ by central differences of the hand-written forward
    kinematics (no pinocchio): fᵂ·∂o/∂pᵢ + mᵂ·ωᵢ, the wrench turned to world axes first when
    it is given in the link's own axes."""
    step = 1e-6

    def pose(values):
        independent = dict(zip(robot.joint_names, values))
        every = reference.all_joint_values(robot.description, independent)
        return reference.link_poses(robot.description, every)[link]

    rotation = pose(positions).rotation
    if not world_aligned:
        force, moment = rotation @ force, rotation @ moment
    torques = []
    for direction in np.eye(robot.num_joints):
        ahead, behind = pose(positions + step * direction), pose(positions - step * direction)
        velocity = (ahead.position - behind.position) / (2 * step)
        spin = (ahead.rotation - behind.rotation) / (2 * step) @ rotation.T
        angular = np.array([spin[2, 1], spin[0, 2], spin[1, 0]])
        torques.append(force @ velocity + moment @ angular)
    return np.array(torques)


@pytest.mark.parametrize('world_aligned', (False, True))
@pytest.mark.parametrize(
    'robot_name, link', [('arm', 'tool0'), ('gripper', 'finger_right'), ('gripper', 'tcp')]
)
def test_wrench_torques_equal_the_virtual_work_of_the_wrench(
    request, robot_name, link, world_aligned
):
    robot = request.getfixturevalue(robot_name)
    rng = np.random.default_rng(7)
    lower = np.where(np.isfinite(robot.limits.lower), robot.limits.lower, -math.pi)
    upper = np.where(np.isfinite(robot.limits.upper), robot.limits.upper, math.pi)
    reference_frame = pin.LOCAL_WORLD_ALIGNED if world_aligned else pin.LOCAL
    for _ in range(3):
        positions = rng.uniform(lower, upper)
        force, moment = rng.uniform(-20.0, 20.0, 3), rng.uniform(-2.0, 2.0, 3)
        torques = wrench_torques(
            robot,
            robot.configuration(positions),
            robot.frame_id(link),
            np.concatenate([force, moment]),
            reference_frame,
        )
        expected = _virtual_work_torques(robot, positions, link, force, moment, world_aligned)
        np.testing.assert_allclose(torques, expected, atol=1e-6)


# ---------------------------------------------------------------------- payload
def _point_mass_torques(
    robot: RobotModel, positions: np.ndarray, link: str, mass: float, point: np.ndarray
) -> np.ndarray:
    """Holding torques of a point mass fixed in ``link``'s frame, by hand: τᵢ = −(zᵢ × (c − oᵢ))·(m
    g)."""
    values = dict(zip(robot.joint_names, positions))
    poses = reference.link_poses(robot.description, values)
    com = poses[link].position + poses[link].rotation @ point
    torques = []
    for name in robot.joint_names:
        joint = robot.description.joints[name]
        child = poses[joint.child]
        axis = child.rotation @ np.asarray(joint.axis)
        torques.append(
            -np.cross(axis, com - child.position) @ np.array([0.0, 0.0, -mass * GRAVITY])
        )
    return np.array(torques)


@pytest.mark.parametrize('seed', (11, 12))
def test_attached_payload_adds_point_mass_holding_torques(seed):
    arm = RobotModel.from_urdf_file(ARM_URDF)
    rng = np.random.default_rng(seed)
    positions = rng.uniform(arm.limits.lower, arm.limits.upper)
    q = arm.configuration(positions)
    bare = gravity_torques(arm, q)
    point = np.array([0.01, -0.02, 0.06])
    inertia = np.diag([0.002, 0.003, 0.001])  # rotational inertia changes M, not g
    arm.attach_payload('fr3_flange', InertialParameters(1.5, point, inertia))
    loaded = gravity_torques(arm, q)
    np.testing.assert_allclose(
        loaded - bare, _point_mass_torques(arm, positions, 'fr3_flange', 1.5, point), atol=1e-10
    )
    assert arm.total_mass() == pytest.approx(RobotModel.from_urdf_file(ARM_URDF).total_mass() + 1.5)
    arm.detach_payload()
    np.testing.assert_array_equal(gravity_torques(arm, q), bare)


def test_payload_rotational_inertia_adds_axis_projection_to_mass_matrix():
    """A massless payload with inertia I adds Jωᵀ (R I Rᵀ) Jω to M, Jω = world joint axes."""
    arm = RobotModel.from_urdf_file(ARM_URDF)
    positions = np.array([0.3, -0.5, 0.2, -2.0, 0.4, 1.5, -0.6])
    q = arm.configuration(positions)
    bare = mass_matrix(arm, q)
    inertia = np.array([[0.02, 0.001, 0.0], [0.001, 0.03, -0.002], [0.0, -0.002, 0.01]])
    arm.attach_payload('fr3_link7', InertialParameters(0.0, np.zeros(3), inertia))
    poses = reference.link_poses(arm.description, dict(zip(arm.joint_names, positions)))
    axes = np.array(
        [poses[arm.description.joints[n].child].rotation[:, 2] for n in arm.joint_names]
    ).T
    rotation = poses['fr3_link7'].rotation
    np.testing.assert_allclose(
        mass_matrix(arm, q) - bare, axes.T @ rotation @ inertia @ rotation.T @ axes, atol=1e-12
    )


def test_payload_in_hand_reproduces_the_paper_arm_with_its_object():
    """The paper arm without its 50 g object, plus the object as a payload at the tip of
    link 2, has the paper arm's extended mass matrix (19886.67, 8120, 3520 g·cm²)."""
    text = (FIXTURES / 'paper_arm.urdf').read_text()
    text = re.sub(r'<link name="held_object">.*?</link>', '', text, flags=re.S)
    text = re.sub(r'<joint name="hand".*?</joint>', '', text, flags=re.S)
    arm = RobotModel.from_urdf_string(text)
    arm.attach_payload('link2', InertialParameters.point_mass(0.05, [0.08, 0.0, 0.0]))
    np.testing.assert_allclose(
        mass_matrix(arm, arm.configuration([0.0, 0.0])) / 1e-7,
        [[19886.6667, 8120.0], [8120.0, 3520.0]],
        atol=1e-3,
    )


@pytest.mark.parametrize(
    'link, payload, words',
    [
        ('no_such_link', InertialParameters.point_mass(1.0, np.zeros(3)), 'no_such_link'),
        ('fr3_link7', InertialParameters.point_mass(float('nan'), np.zeros(3)), 'not finite'),
        ('fr3_link7', InertialParameters.point_mass(-1.0, np.zeros(3)), 'non-negative'),
        ('fr3_link0', InertialParameters.point_mass(1.0, np.zeros(3)), 'fixed to the world'),
    ],
)
def test_bad_payload_is_refused_with_reason(link, payload, words):
    arm = RobotModel.from_urdf_file(ARM_URDF)
    with pytest.raises(PayloadError, match=words):
        arm.attach_payload(link, payload)
    assert arm.payload is None


# ---------------------------------------------------------------------- limits and margins
def test_limits_match_an_independent_parse_of_the_urdf(arm):
    root = ElementTree.parse(ARM_URDF).getroot()
    by_name = {j.get('name'): j.find('limit') for j in root.findall('joint')}
    for index, name in enumerate(arm.joint_names):
        limit = by_name[name]
        assert arm.limits.lower[index] == float(limit.get('lower'))
        assert arm.limits.upper[index] == float(limit.get('upper'))
        assert arm.limits.effort[index] == float(limit.get('effort'))
        assert arm.limits.velocity[index] == float(limit.get('velocity'))


def test_gripper_limits_in_joint_order(gripper):
    np.testing.assert_array_equal(gripper.limits.lower, [-math.inf, -0.2, -0.5])
    np.testing.assert_array_equal(gripper.limits.upper, [math.inf, 0.2, 1.0])
    np.testing.assert_array_equal(gripper.limits.effort, [20.0, 50.0, 2.0])
    np.testing.assert_array_equal(gripper.limits.velocity, [3.0, 0.5, 2.0])


def test_torque_margin_is_ratio_to_effort_limit_and_zero_when_unknown():
    urdf = (
        (FIXTURES / 'turret_gripper.urdf')
        .read_text()
        .replace('<limit effort="20" velocity="3"/>', '')
    )
    robot = RobotModel.from_urdf_string(urdf)
    np.testing.assert_allclose(torque_margins(robot, np.array([-7.0, -25.0, 3.0])), [0.0, 0.5, 1.5])
    np.testing.assert_allclose(
        torque_margins(RobotModel.from_urdf_file(GRIPPER_URDF), np.array([-7.0, 25.0, 1.0])),
        [0.35, 0.5, 0.5],
    )


# ---------------------------------------------------------------------- joint axes
@pytest.mark.parametrize('axis', ['0 -1 0', '0 -2 0', '0 -0.001 0'])
def test_joint_axis_length_does_not_scale_torques(axis):
    """URDF axes are directions: the standing rod holds m g l_c cos θ whatever the axis length."""
    text = (
        (FIXTURES / 'standing_rod.urdf')
        .read_text()
        .replace('<axis xyz="0 -1 0"/>', f'<axis xyz="{axis}"/>')
    )
    rod = RobotModel.from_urdf_string(text, gravity=(0.0, 0.0, -9.8))
    q = rod.configuration([0.3])
    assert gravity_torques(rod, q)[0] == pytest.approx(0.1 * 9.8 * 0.05 * math.cos(0.3), rel=1e-12)
    assert mass_matrix(rod, q)[0, 0] == pytest.approx(0.1 * 0.1**2 / 3.0, rel=1e-12)
