"""Feet of a legged robot from its joint torques: chosen ground forces recovered exactly from the
torques they cause (core and real node); the live pipeline against MuJoCo's contact forces on
the proving ground's legged scene (standing, weight shifted, one foot lifted); the consistency
check catching a wrong total mass; feet that cannot be told apart and bad set-ups named."""

from __future__ import annotations

import re
import sysconfig
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from ros_harness import wait_for

from robot_dynamics.core.dynamics.base_motion import BaseMotion
from robot_dynamics.core.errors import SettingError
from robot_dynamics.core.floating_base import foot_forces
from robot_dynamics.core.floating_base.foot_forces import FootForceEstimator
from robot_dynamics.core.live.live_dynamics import LiveDynamics, LiveResult
from robot_dynamics.core.live.settings import LiveSettings
from robot_dynamics.core.live.status import OK, WARN
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.joint_states import JointSample
from robot_dynamics.models import QUADRUPED_URDF

FEET = ('lf_foot', 'rf_foot', 'lh_foot', 'rh_foot')
STANCE = np.tile([0.0, 0.8, -1.6], 4)
GRAVITY = np.array([0.0, 0.0, -9.81])


def quadruped(text: str = '') -> RobotModel:
    return RobotModel.from_urdf_string(text or QUADRUPED_URDF.read_text(), root_joint='floating')


def torques_for_forces(robot: RobotModel, positions: np.ndarray, forces: np.ndarray) -> tuple:
    """Joint torques τ = g(q) − Σ J_cᵀ f_c that hold the robot still (base at rest, upright) with
    the ground pushing each foot with ``forces`` (world axes): built from pinocchio's
    computeFrameJacobian, frame by frame."""
    q = robot.configuration(positions)
    model, data = robot.model, robot.data
    gravity = pin.computeGeneralizedGravity(model, data, q)
    tau = gravity.copy()
    for name, force in zip(FEET, forces):
        jacobian = pin.computeFrameJacobian(
            model, data, q, model.getFrameId(name), pin.LOCAL_WORLD_ALIGNED
        )[:3]
        tau -= jacobian.T @ force
    return tau[6:], tau[:3]


def gravity_and_foot_jacobians(robot: RobotModel, positions: np.ndarray) -> tuple:
    """g(q) (base rows first) and each foot's linear Jacobian (LOCAL_WORLD_ALIGNED), both from
    pinocchio directly, base at rest upright."""
    q = robot.configuration(positions)
    gravity = pin.computeGeneralizedGravity(robot.model, robot.data, q)
    jacobians = [
        pin.computeFrameJacobian(
            robot.model, robot.data, q, robot.model.getFrameId(f), pin.LOCAL_WORLD_ALIGNED
        )[:3]
        for f in FEET
    ]
    return gravity, jacobians


def motor_torques(gravity: np.ndarray, jacobians: list, forces: np.ndarray) -> np.ndarray:
    """τ = g_j − Σ J_jᵀ f: the joints' torques holding the robot still on ground ``forces``."""
    return gravity[6:] - sum(j[:, 6:].T @ f for j, f in zip(jacobians, forces))


def live_inverse_dynamics(robot: RobotModel, frames: tuple, positions, efforts) -> LiveResult:
    """The pipeline's result for the robot held still at ``positions`` with ``efforts``."""
    live = LiveDynamics(
        robot, LiveSettings(contact_frames=frames, external_torque_method='inverse_dynamics')
    )
    zeros = np.zeros(robot.num_joints)
    for k in range(3):
        result = live.update(JointSample(robot.joint_names, positions, zeros, efforts, 0.01 * k))
    return result


def test_chosen_ground_forces_come_back_from_the_torques_they_cause():
    robot = quadruped()
    rng = np.random.default_rng(3)
    positions = STANCE + rng.uniform(-0.2, 0.2, 12)
    forces = rng.uniform([-20, -20, 10], [20, 20, 90], (4, 3))
    efforts, _ = torques_for_forces(robot, positions, forces)
    result = live_inverse_dynamics(robot, FEET, positions, efforts)
    np.testing.assert_allclose(result.feet.forces, forces, atol=1e-9)
    assert result.feet.contact == (True, True, True, True)
    # the centre of pressure: the feet's points weighted by their vertical forces, base frame
    pin.framesForwardKinematics(robot.model, robot.data, robot.configuration(positions))
    points = np.array([robot.data.oMf[robot.model.getFrameId(f)].translation for f in FEET])
    expected = (points * forces[:, 2:]).sum(axis=0) / forces[:, 2].sum()
    np.testing.assert_allclose(result.feet.cop, expected, atol=1e-12)


TALOS_URDF = (
    Path(sysconfig.get_paths()['purelib'])
    / 'cmeel.prefix/share/example-robot-data/robots/talos_data/robots/talos_reduced.urdf'
)


@pytest.mark.skipif(not TALOS_URDF.is_file(), reason='example-robot-data not installed')
def test_six_joint_legs_give_each_leg_the_least_squares_force():
    """Talos (example-robot-data): a sole's force from its leg's six joints is numpy's lstsq of
    that leg's rows on pinocchio's Jacobian: exact for torques a force causes, least squares for
    torques no force explains, and the minimum-norm force for straight legs (all joints at zero:
    no joint moves the sole along the leg, the leg's Jacobian is rank 2)."""
    robot = RobotModel.from_urdf_file(str(TALOS_URDF), root_joint='floating')
    soles = ('left_sole_link', 'right_sole_link')
    estimator = FootForceEstimator(robot, soles)
    assert [len(leg.joints) for leg in estimator.legs] == [6, 6]
    rng = np.random.default_rng(5)
    forces = rng.uniform([-60, -60, 100], [60, 60, 400], (2, 3))
    for positions in (rng.uniform(-0.3, 0.3, robot.num_joints), np.zeros(robot.num_joints)):
        q = robot.configuration(positions)
        jacobians = [
            pin.computeFrameJacobian(
                robot.model, robot.data, q, robot.model.getFrameId(f), pin.LOCAL_WORLD_ALIGNED
            )[:3, 6:]
            for f in soles
        ]
        legs = [j[:, leg.joints] for j, leg in zip(jacobians, estimator.legs)]
        straight = not positions.any()
        assert [np.linalg.matrix_rank(leg) for leg in legs] == ([2, 2] if straight else [3, 3])
        caused = sum(j.T @ f for j, f in zip(jacobians, forces))
        noise = rng.normal(0.0, 2.0, robot.num_joints)
        for tau in (caused, caused + noise):
            expected = [
                np.linalg.lstsq(leg.T, tau[joints.joints], rcond=None)[0]
                for leg, joints in zip(legs, estimator.legs)
            ]
            if tau is caused and not straight:
                np.testing.assert_allclose(expected, forces, rtol=1e-10)
            estimate = estimator.estimate(positions, None, None, tau, BaseMotion.at_rest(GRAVITY))
            np.testing.assert_allclose(estimate.forces, expected, rtol=1e-10, atol=1e-9)


def test_a_straight_leg_gives_the_least_squares_force():
    """A straight leg (hip pitch and knee axes in line with the foot) cannot tell one direction of
    force from none: its 3 × 3 system is singular. The estimator must still give that leg the
    minimum-norm least-squares force (numpy's lstsq on pinocchio's Jacobian: the force's part
    the torques show) and the bent legs beside it their exact forces."""
    robot = quadruped()
    positions = STANCE.copy()
    positions[:3] = 0.0  # lf leg straight down
    forces = np.array([[15.0, -7.0, 40.0], [10.0, 4.0, 60.0], [-5.0, 3.0, 55.0], [2.0, -1.0, 70.0]])
    efforts, _ = torques_for_forces(robot, positions, forces)
    _, jacobians = gravity_and_foot_jacobians(robot, positions)
    leg = jacobians[0][:, 6:9]
    assert np.linalg.matrix_rank(leg) == 2
    expected = forces.copy()
    expected[0] = np.linalg.lstsq(leg.T, leg.T @ forces[0], rcond=None)[0]
    assert np.linalg.norm(expected[0] - forces[0]) > 1.0  # the leg really hides a part
    result = live_inverse_dynamics(robot, FEET, positions, efforts)
    np.testing.assert_allclose(result.feet.forces, expected, atol=1e-9)
    assert np.all(np.isfinite(result.inverse_dynamics))


def test_inverse_dynamics_of_a_standing_robot_takes_the_ground_forces_off():
    """Forces that carry the robot (their base rows balance its weight, built here from
    pinocchio's frame Jacobians by least change from chosen forces) cause motor torques
    τ = g_j − Σ J_jᵀ f; inverse dynamics with contact_frames equals them, without it equals
    g_j. A push on the trunk the feet do not take leaves ID at what the motion needs."""
    robot = quadruped()
    rng = np.random.default_rng(7)
    positions = STANCE + rng.uniform(-0.15, 0.15, 12)
    gravity, jacobians = gravity_and_foot_jacobians(robot, positions)
    base_columns = np.hstack([j[:, :6].T for j in jacobians])
    chosen = rng.uniform([-10, -10, 30], [10, 10, 80], (4, 3)).ravel()
    carrying = chosen + np.linalg.pinv(base_columns) @ (gravity[:6] - base_columns @ chosen)
    forces = carrying.reshape(4, 3)
    assert forces[:, 2].min() > 0.0  # every foot pushes: all four in contact
    motors = motor_torques(gravity, jacobians, forces)

    def inverse_dynamics(frames: tuple, efforts: np.ndarray) -> np.ndarray:
        return live_inverse_dynamics(robot, frames, positions, efforts).inverse_dynamics

    np.testing.assert_allclose(inverse_dynamics(FEET, motors), motors, atol=1e-9)
    np.testing.assert_allclose(inverse_dynamics((), motors), gravity[6:], atol=1e-9)
    assert np.abs(motors - gravity[6:]).max() > 5.0  # the feet's share is not small
    # a push on the trunk the feet hold: they push 30 N sideways more than the motion needs.
    # ID's forces (from its torques, leg by leg) balance the base again, by the least change.
    pushed_forces = forces + np.array([[0.0, 15.0, 0.0], [0.0, 15.0, 0.0], [0, 0, 0], [0, 0, 0]])
    pushed = motor_torques(gravity, jacobians, pushed_forces)
    ground = gravity[6:] - inverse_dynamics(FEET, pushed)
    legs = [np.flatnonzero(np.abs(j[:, 6:]).sum(axis=0)) for j in jacobians]  # its 3 joints
    implied = np.concatenate(
        [np.linalg.solve(j[:, 6 + leg].T, ground[leg]) for j, leg in zip(jacobians, legs)]
    )
    np.testing.assert_allclose(base_columns @ implied, gravity[:6], atol=1e-9)
    change = implied - pushed_forces.ravel()
    np.testing.assert_allclose(
        np.linalg.pinv(base_columns) @ base_columns @ change, change, atol=1e-9
    )
    assert np.linalg.norm(change) > 10.0


def test_inverse_dynamics_on_two_diagonal_feet_stays_finite():
    """Two point feet cannot take a moment about the line through them: the base columns of
    their Jacobians are rank 5. The forces that fit the base rows best (least squares, built
    here with numpy) give motor torques that inverse dynamics reproduces, finite."""
    robot = quadruped()
    gravity, jacobians = gravity_and_foot_jacobians(robot, STANCE)
    pair = [0, 3]  # left front and right hind
    base_columns = np.hstack([jacobians[k][:, :6].T for k in pair])
    assert np.linalg.matrix_rank(base_columns) == 5
    forces = np.zeros((4, 3))
    forces[pair] = np.linalg.lstsq(base_columns, gravity[:6], rcond=None)[0].reshape(2, 3)
    result = live_inverse_dynamics(robot, FEET, STANCE, motor_torques(gravity, jacobians, forces))
    assert result.feet.contact == (True, False, False, True)
    np.testing.assert_allclose(
        result.inverse_dynamics, motor_torques(gravity, jacobians, forces), atol=1e-9
    )


@pytest.mark.parametrize('touching', [(0,), (0, 3), (1, 2), (0, 1, 3), (0, 1, 2, 3)])
def test_the_feet_in_contact_are_balanced_by_the_least_change(touching):
    """For one to four feet in contact, the ground forces inverse dynamics takes off are the
    estimated forces moved by the least change that gives the base rows what they need,
    f* = f + A⁺ (w − A f), A⁺ numpy's pseudo-inverse of the touching feet's base columns
    (pinocchio's frame Jacobians): with one foot A has full column rank, with two it is rank 5
    (a moment about the line through both feet is left over), with three or four full row rank.
    The base rows w are chosen here, not the robot's own, so that every case must correct."""
    robot = quadruped()
    rng = np.random.default_rng(len(touching) * 10 + touching[-1])
    positions = STANCE + rng.uniform(-0.2, 0.2, 12)
    _, jacobians = gravity_and_foot_jacobians(robot, positions)
    forces = np.zeros((4, 3))
    forces[list(touching)] = rng.uniform([-20, -20, 40], [20, 20, 90], (len(touching), 3))
    tau = sum(j[:, 6:].T @ f for j, f in zip(jacobians, forces))
    full = np.concatenate((rng.normal(0.0, 30.0, 6), np.zeros(12)))  # w: the base rows
    estimate = FootForceEstimator(robot, FEET).estimate(
        positions, None, None, tau, BaseMotion.at_rest(GRAVITY), full_torques=full
    )
    assert estimate.contact == tuple(k in touching for k in range(4))
    base_columns = np.hstack([jacobians[k][:, :6].T for k in touching])
    estimated = forces[list(touching)].ravel()
    balanced = estimated + np.linalg.pinv(base_columns) @ (full[:6] - base_columns @ estimated)
    expected = sum(jacobians[k][:, 6:].T @ f for k, f in zip(touching, balanced.reshape(-1, 3)))
    np.testing.assert_allclose(estimate.contact_torques, expected, rtol=1e-10, atol=1e-9)
    assert np.linalg.norm(balanced - estimated) > 1.0  # the base rows did ask for a change


@pytest.mark.parametrize(
    'layout',
    ['one', 'two', 'three', 'five', 'two apart by 1 mm', 'three in a line', 'four in a line'],
)
def test_the_least_change_is_the_pseudo_inverse_for_any_feet(layout):
    """The balancing correction's closed forms (one foot, two feet, three or more about their
    centroid) and their least-squares fallback (feet in a line) equal numpy's pseudo-inverse of
    the point feet's base columns [I …; [p_i]× …] (the layout the test above checks on
    pinocchio's Jacobians), for base wrenches the feet can and cannot give."""
    rng = np.random.default_rng(len(layout))
    line = np.array([0.3, -0.1, -0.5]) + np.outer(rng.normal(0, 1, 4), [0.1, 0.2, 0.0])
    points = {
        'one': rng.normal(0.0, 0.4, (1, 3)),
        'two': rng.normal(0.0, 0.4, (2, 3)),
        'three': rng.normal(0.0, 0.4, (3, 3)),
        'five': rng.normal(0.0, 0.4, (5, 3)),
        'two apart by 1 mm': np.array([[0.2, 0.1, -0.5], [0.2, 0.101, -0.5]]),
        'three in a line': line[:3],
        'four in a line': line,
    }[layout]
    columns = np.vstack(
        (
            np.tile(np.eye(3), len(points)),
            np.hstack([[[0, -z, y], [z, 0, -x], [-y, x, 0]] for x, y, z in points]),
        )
    )
    for shortfall in rng.normal(0.0, 40.0, (3, 6)):
        expected = np.linalg.pinv(columns) @ shortfall
        change = foot_forces._least_change(points.tolist(), *shortfall.reshape(2, 3).tolist())
        np.testing.assert_allclose(
            change.ravel(), expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max()
        )


def test_the_consistency_check_flags_a_wrong_total_mass():
    """Forces that do carry the robot pass; the same torques read with a model whose trunk is
    30 % heavier leave the base rows unbalanced, and diagnostics say why."""
    robot = quadruped()
    weight = robot.total_mass() * 9.81
    positions, zeros = STANCE, np.zeros(12)
    # carry the weight: solve the base rows for vertical forces, equal pairs left and right
    pin.framesForwardKinematics(robot.model, robot.data, robot.configuration(positions))
    x = [robot.data.oMf[robot.model.getFrameId(f)].translation[0] for f in FEET]
    com_x = pin.centerOfMass(robot.model, robot.data, robot.configuration(positions))[0]
    front = weight * (com_x - x[2]) / (x[0] - x[2]) / 2
    forces = np.array([[0, 0, front]] * 2 + [[0, 0, weight / 2 - front]] * 2)
    efforts, base_rows = torques_for_forces(robot, positions, forces)
    assert np.linalg.norm(base_rows) < 1e-9 * weight  # they do carry it

    def mismatch(model: RobotModel) -> tuple:
        settings = LiveSettings(
            contact_frames=FEET, external_torque_method='inverse_dynamics', contact_profile='off'
        )
        live = LiveDynamics(model, settings)
        for k in range(200):
            live.update(JointSample(model.joint_names, positions, zeros, efforts, 0.01 * k))
        return live.contact_status()

    right = mismatch(robot)
    assert right.values['foot_force_mismatch_n'] < 1e-6
    assert right.level == OK, right.message
    text = QUADRUPED_URDF.read_text()
    trunk = re.search(r'<link name="base">.*?<mass value="([0-9.]+)"', text, re.S)
    heavier = text.replace(
        trunk.group(0), trunk.group(0).replace(trunk.group(1), str(1.3 * float(trunk.group(1))))
    )
    wrong = mismatch(quadruped(heavier))
    assert wrong.values['foot_force_mismatch_n'] > 0.1 * weight
    assert 'wrong total mass' in wrong.message and wrong.level == WARN


def test_feet_that_share_a_short_leg_are_named_and_a_fixed_base_refused():
    robot = quadruped()
    estimator = FootForceEstimator(robot, ('lf_foot', 'lf_shank', 'rf_foot'))
    assert [leg.feet for leg in estimator.legs] == [(0, 1), (2,)]
    assert estimator.unobservable == ('lf_foot lf_shank',)
    live = LiveDynamics(robot, LiveSettings(contact_frames=('lf_foot', 'lf_shank')))
    assert any('lf_foot lf_shank' in problem for problem in live.problems)
    with pytest.raises(SettingError, match='floating-base'):
        FootForceEstimator(RobotModel.from_urdf_string(QUADRUPED_URDF.read_text()), FEET)
    unknown = LiveDynamics(robot, LiveSettings(contact_frames=('lf_toe',)))
    assert any('no foot forces' in p and 'lf_toe' in p for p in unknown.problems)


def test_the_live_pipeline_matches_mujocos_contact_forces_on_the_legged_scene():
    """The proving ground's quadruped (ideal profile) standing, shifting its weight and lifting
    its left front foot; the pipeline sees what a robot gives (joint states with efforts, the
    IMU) and estimates q̈ itself."""
    from robot_dynamics.simulation.profiles import load_profile
    from robot_dynamics.simulation.scenes import LeggedScene

    scene = LeggedScene('quadruped', load_profile('ideal'), 5)
    robot, root = scene.nominal, scene.description.root
    live = LiveDynamics(
        robot,
        LiveSettings(
            base_state='imu', contact_frames=FEET, external_torque_method='inverse_dynamics'
        ),
    )
    errors, lifted, applied, id_errors, rigid_errors = [], [], [], [], []
    for _ in range(int(9.0 / scene.step_size)):
        sample = scene.step()
        imu, joints, truth = sample.imu, sample.joints, sample.truth
        live.take_base_imu(
            sample.time, root, imu.angular_velocity, imu.specific_force, imu.orientation
        )
        result = live.update(
            JointSample(
                robot.joint_names, joints.positions, joints.velocities, joints.efforts, sample.time
            )
        )
        if sample.time < 1.0:
            continue
        true = np.array(
            [
                truth.contact_wrenches[f].force if f in truth.contact_wrenches else np.zeros(3)
                for f in FEET
            ]
        )
        errors.append(np.linalg.norm(result.feet.forces - true, axis=1))
        applied.append(truth.link_torques)
        id_errors.append(result.inverse_dynamics - truth.link_torques)
        rigid_errors.append(id_errors[-1] + result.feet.contact_torques)
        if 8.0 <= sample.time < 9.0:  # the left front foot is 6 cm up
            assert 'lf_foot' not in truth.contact_wrenches
            lifted.append(result.feet.contact)
    rms = np.sqrt(np.mean(np.square(errors)))
    assert rms < 0.02 * scene.weight
    assert all(contact == (False, True, True, True) for contact in lifted)
    # inverse dynamics with the feet's share is what the joints apply; without it, it is not
    applied_rms, id_rms, rigid_rms = (
        np.sqrt(np.mean(np.square(v))) for v in (applied, id_errors, rigid_errors)
    )
    assert id_rms < 0.05 * applied_rms and rigid_rms > 0.5 * applied_rms


def test_the_node_publishes_each_foot_and_the_centre_of_pressure(ros):
    from geometry_msgs.msg import PointStamped, Vector3Stamped
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Bool
    from test_dynamics_node import joint_state

    from robot_dynamics.ros.dynamics_node import DynamicsNode
    from robot_dynamics.ros.topics import SENSOR_QOS

    robot = quadruped()
    forces = np.array([[5.0, 0, 60], [0, -5.0, 60], [0, 0, 0.5], [0, 0, 55]])
    efforts, _ = torques_for_forces(robot, STANCE, forces)
    overrides = [
        Parameter('urdf_file', value=str(QUADRUPED_URDF)),
        Parameter('root_joint', value='floating'),
        Parameter('contact_frames', value=list(FEET)),
        Parameter('external_torque_method', value='inverse_dynamics'),
        Parameter('world_frame', value='map'),
    ]
    node = DynamicsNode(node_name='feet_node', parameter_overrides=overrides)
    with ros(node) as harness:
        prefix = '/feet_node'
        lf = harness.collect(Vector3Stamped, f'{prefix}/feet/lf_foot/force', SENSOR_QOS)
        lh = harness.collect(Bool, f'{prefix}/feet/lh_foot/contact', SENSOR_QOS)
        rf = harness.collect(Bool, f'{prefix}/feet/rf_foot/contact', SENSOR_QOS)
        cop = harness.collect(PointStamped, f'{prefix}/cop', SENSOR_QOS)
        inverse = harness.collect(JointState, f'{prefix}/inverse_dynamics_torques', SENSOR_QOS)
        feed = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: node.robot is not None and feed.get_subscription_count(), 30)
        outputs = (lf, lh, rf, cop, inverse)
        for k in range(200):
            message = joint_state(
                robot.joint_names, STANCE, np.zeros(12), efforts, stamp=1 + k / 100
            )
            feed.publish(message)
            if wait_for(lambda: min(map(len, outputs)) >= 3, 0.05):
                break
        assert wait_for(lambda: min(map(len, outputs)) >= 3, 30), dict(node.rejections.counts)
        force = lf[-1]
        assert force.header.frame_id == 'map'
        np.testing.assert_allclose(
            [force.vector.x, force.vector.y, force.vector.z], forces[0], atol=1e-6
        )
        assert rf[-1].data is True and lh[-1].data is False  # 0.5 N: below 3 % of the weight
        assert cop[-1].header.frame_id == 'base'
        # inverse dynamics less the feet's share (the core's figure; checked above)
        expected = live_inverse_dynamics(robot, FEET, STANCE, efforts).inverse_dynamics
        np.testing.assert_allclose(inverse[-1].effort, expected, atol=1e-9)
        gravity = pin.computeGeneralizedGravity(
            robot.model, robot.data, robot.configuration(STANCE)
        )
        assert np.abs(np.array(inverse[-1].effort) - gravity[6:]).max() > 5.0


def test_centroidal_node_takes_its_contacts_and_zmp_from_the_foot_forces(ros, capfd):
    """The quadruped standing still with its feet on the ground, its left hind foot carrying
    0.5 N: by height all four feet touch, by force three; the ZMP is the forces' centre of
    pressure. Then efforts all exactly 0 (mock hardware): no foot forces, and the log says
    why."""
    from geometry_msgs.msg import PointStamped, PolygonStamped
    from nav_msgs.msg import Odometry
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from test_dynamics_node import joint_state

    from robot_dynamics.ros.centroidal_node import CentroidalNode
    from robot_dynamics.ros.topics import JOINT_STATE_QOS, SENSOR_QOS

    robot = quadruped()
    weight = robot.total_mass() * 9.81
    pin.framesForwardKinematics(robot.model, robot.data, robot.configuration(STANCE))
    points = np.array([robot.data.oMf[robot.model.getFrameId(f)].translation for f in FEET])
    height = -points[:, 2].min()  # the base this high puts the feet on the ground (z = 0)
    forces = np.array(
        [[0, 0, 0.3 * weight], [0, 0, 0.3 * weight], [0, 0, 0.5], [0, 0, 0.4 * weight]]
    )
    efforts, _ = torques_for_forces(robot, STANCE, forces)
    node = CentroidalNode(
        node_name='feet_centroidal',
        parameter_overrides=[
            Parameter('urdf_file', value=str(QUADRUPED_URDF)),
            Parameter('root_joint', value='floating'),
            Parameter('contact_frames', value=list(FEET)),
            Parameter('contact_source', value='force'),
            Parameter('world_frame', value='odom'),
        ],
    )
    with ros(node) as harness:
        zmp = harness.collect(PointStamped, '/feet_centroidal/zmp', SENSOR_QOS)
        polygons = harness.collect(PolygonStamped, '/feet_centroidal/support_polygon', SENSOR_QOS)
        feed = harness.probe.create_publisher(JointState, 'joint_states', JOINT_STATE_QOS)
        odom = harness.probe.create_publisher(Odometry, 'odom', JOINT_STATE_QOS)
        assert wait_for(lambda: node.robot is not None and feed.get_subscription_count(), 30)
        for k in range(300):
            stamp = 1.0 + k / 100
            message = Odometry()
            message.header.frame_id, message.child_frame_id = 'odom', 'base'
            message.header.stamp = joint_state((), (), stamp=stamp).header.stamp
            message.pose.pose.position.z = height
            message.pose.pose.orientation.w = 1.0
            odom.publish(message)
            feed.publish(joint_state(robot.joint_names, STANCE, np.zeros(12), efforts, stamp=stamp))
            if wait_for(lambda: len(zmp) >= 20 and len(polygons) >= 20, 0.02):
                break
        assert wait_for(lambda: len(zmp) >= 20 and len(polygons) >= 20, 30), dict(
            node.rejections.counts
        )
        assert len(polygons[-1].polygon.points) == 3  # the unloaded foot is not a support
        pressure = (points[:, :2] * forces[:, 2:]).sum(axis=0) / forces[:, 2].sum()
        np.testing.assert_allclose([zmp[-1].point.x, zmp[-1].point.y], pressure, atol=1e-6)
        logged = ''  # a reason is logged at most once a second: several seconds of them
        for k in range(500):
            stamp = 10.0 + k / 100
            message.header.stamp = joint_state((), (), stamp=stamp).header.stamp
            odom.publish(message)
            feed.publish(joint_state(robot.joint_names, STANCE, np.zeros(12), 0 * efforts, stamp))
            time.sleep(0.01)
            logged += capfd.readouterr().err
            if 'every effort is exactly 0' in logged:
                break
        assert 'no foot forces: every effort is exactly 0' in logged, logged
        assert node.rejections.counts['no_foot_forces'] > 0


def test_offsets_of_a_standing_robot_come_back_from_rest_poses_on_its_feet():
    """Chosen offsets and ground forces (each pose's forces hold the base, built with pinocchio's
    computeFrameJacobian): standing and each foot lifted in turn give the offsets back; standing
    with one foot lifted cannot, and says so."""
    from robot_dynamics.core.live.effort_offsets import (
        FootRestPose,
        OffsetsRefused,
        RestPose,
        estimate_offsets_on_feet,
    )

    robot, rng = quadruped(), np.random.default_rng(4)
    offsets = rng.uniform(-0.2, 0.2, robot.num_joints)
    poses = []
    for lifted in (None, 0, 1, 2, 3):
        positions = STANCE + rng.uniform(-0.05, 0.05, robot.num_joints)
        gravity, jacobians = gravity_and_foot_jacobians(robot, positions)
        down = [k for k in range(len(FEET)) if k != lifted]
        base_columns = np.hstack([jacobians[k][:, :6].T for k in down])  # 6 × 3m
        forces = np.zeros((len(FEET), 3))
        forces[down] = np.linalg.lstsq(base_columns, gravity[:6], rcond=None)[0].reshape(-1, 3)
        residual = motor_torques(gravity, jacobians, forces) + offsets - gravity[6:]
        touching = tuple(k != lifted for k in range(len(FEET)))
        poses.append(FootRestPose(RestPose(positions, residual, 100), [0, 0, -9.81], touching))
    feet = FootForceEstimator(robot, FEET)
    with pytest.raises(OffsetsRefused, match='each foot lifted in turn'):
        estimate_offsets_on_feet(feet, poses[:2])
    estimate = estimate_offsets_on_feet(feet, poses)
    np.testing.assert_allclose(estimate.offsets, offsets, atol=1e-9)
    assert estimate.residual_rms < 1e-9


def test_offsets_are_zeroed_on_the_feet_on_the_proving_ground():
    """solo12 on MuJoCo with the realistic profile's drawn offsets, noise, delay and quantisation
    (its link inertials and scales as the URDF says): the calibration script's rests (standing,
    then each foot lifted and held) zeroed through the live pipeline give the offsets back."""
    import yaml

    from robot_dynamics.core.live.effort_offsets import OffsetsRefused
    from robot_dynamics.instruments.bench_moving_base import _fed as feed_live_pipeline
    from robot_dynamics.simulation.profiles import profile_from_dict, profile_path
    from robot_dynamics.simulation.scenes import LeggedScene

    document = yaml.safe_load(profile_path('realistic').read_text())
    document['links']['spread'] = {'mass': 0.0, 'com': 0.0, 'inertia': 0.0}
    document['joints']['default']['scale_error'] = 0.0
    scene = LeggedScene('solo12', profile_from_dict(document, 'offsets'), 3, script='calibration')
    live = LiveDynamics(
        scene.nominal,
        LiveSettings(
            base_state='imu',
            contact_frames=scene.robot.feet,
            external_torque_method='inverse_dynamics',
            effort_delay=scene.step_size,  # the profile's one sample
        ),
    )
    rests, answers = list(scene.calibration_rests()), []
    while rests:
        sample = scene.step()
        feed_live_pipeline(scene, live, sample)
        if sample.time >= rests[0]:
            rests.pop(0)
            lifted = scene.robot.feet[len(answers) - 1] if answers else None
            assert set(sample.truth.contact_wrenches) == set(scene.robot.feet) - {lifted}
            try:
                answers.append(live.zero_effort_offsets(''))
            except OffsetsRefused as refusal:
                answers.append(str(refusal))
    assert 'cannot tell the offsets' in answers[0]  # standing alone
    truth = scene.joint_sensors.offset
    assert np.abs(truth).max() > 0.15
    np.testing.assert_allclose(answers[-1].offsets, truth, atol=0.06)
    np.testing.assert_allclose(live.effort_offsets, answers[-1].offsets)


def test_a_legged_scene_script_must_be_one_it_knows():
    from robot_dynamics.simulation.errors import SceneError
    from robot_dynamics.simulation.profiles import load_profile
    from robot_dynamics.simulation.scenes import LeggedScene

    with pytest.raises(SceneError, match="'calibration'"):
        LeggedScene('quadruped', load_profile('ideal'), script='walk')


@pytest.mark.parametrize(
    'frames, words',
    [
        (('lf_foot', 'lf_foot', 'rf_foot'), 'contact frame lf_foot given twice'),
        (
            ('base', 'lf_foot'),
            'contact frame base is the root link (or fixed to it): no joint torque shows a force',
        ),
    ],
)
def test_a_contact_frame_given_twice_or_on_the_root_link_is_refused_by_name(frames, words):
    with pytest.raises(SettingError, match=re.escape(words)):
        FootForceEstimator(quadruped(), frames)


def test_the_live_feet_leave_out_the_entries_the_model_cannot_take_and_go_on():
    """contact_frames with an unknown frame, the root link and a repeat among the four feet:
    each is named in the problems; the feet go on with the forces they would have alone, one
    row per entry (the left-out ones NaN, out of contact) so each entry keeps its place."""
    robot = quadruped()
    forces = np.array([[5.0, 0, 60], [0, -5.0, 60], [0, 0, 0.5], [0, 0, 55]])
    efforts, _ = torques_for_forces(robot, STANCE, forces)
    given = ('lf_foot', 'nowhere', 'base', 'lf_foot', 'rf_foot', 'lh_foot', 'rh_foot')
    result = live_inverse_dynamics(robot, given, STANCE, efforts)
    (problem,) = [p for p in result.problems if 'foot' in p]
    for words in (
        'contact frame nowhere is not a frame of model "quadruped"',
        'contact frame base is the root link',
        'contact frame lf_foot given twice',
        'the feet lf_foot rf_foot lh_foot rh_foot go on',
    ):
        assert words in problem, problem
    assert result.feet.frames == given
    np.testing.assert_allclose(result.feet.forces[[0, 4, 5, 6]], forces, atol=1e-6)
    assert np.isnan(result.feet.forces[1:4]).all()
    assert result.feet.contact == (True, False, False, False, True, False, True)
    alone = live_inverse_dynamics(robot, FEET, STANCE, efforts)
    np.testing.assert_allclose(result.inverse_dynamics, alone.inverse_dynamics, atol=1e-9)
    none_left = LiveDynamics(robot, LiveSettings(contact_frames=('base', 'nowhere')))
    assert any(p.startswith('no foot forces: contact frame nowhere') for p in none_left.problems)
