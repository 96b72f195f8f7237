"""Tests of robot_dynamics.core.dynamics.regressor against pinocchio's RNEA (an independent
algorithm)."""

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics.core.dynamics.regressor import (
    body_index,
    body_link_names,
    body_parameter_vector,
    joint_torque_regressor,
    stacked_regressor,
)
from robot_dynamics.core.errors import DescriptionError, ModelInputError
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF, QUADRUPED_URDF

# A 2-joint chain whose second body carries a fixed, massive tool and whose joints have
# non-axis-aligned axes: exercises merged fixed links and generic geometry.
CHAIN_URDF = """<robot name="chain">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0.1 0.02 -0.03" rpy="0.2 0.1 0.3"/><mass value="2.0"/>
    <inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0.002" izz="0.015"/></inertial></link>
  <link name="lower"><inertial><origin xyz="0.2 0 0"/><mass value="1.0"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="tool"><inertial><origin xyz="0 0.05 0"/><mass value="0.4"/>
    <inertia ixx="0.0004" ixy="0" ixz="0" iyy="0.0004" iyz="0" izz="0.0004"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="upper"/><origin xyz="0 0 0.3"/>
    <axis xyz="0 0.6 0.8"/><limit lower="-2" upper="2" effort="50" velocity="2"/></joint>
  <joint name="j2" type="revolute"><parent link="upper"/><child link="lower"/>
    <origin xyz="0.4 0 0" rpy="0.3 0 0"/>
    <axis xyz="1 0 0"/><limit lower="-2" upper="2" effort="50" velocity="2"/></joint>
  <joint name="tool_mount" type="fixed"><parent link="lower"/><child link="tool"/>
    <origin xyz="0.3 0 0"/></joint>
</robot>"""


def random_motion(robot, count, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.5, 1.5, (3, count, robot.num_joints))


@pytest.mark.parametrize(
    'robot',
    [RobotModel.from_urdf_file(ARM_URDF), RobotModel.from_urdf_string(CHAIN_URDF)],
    ids=['fr3_arm', 'chain_with_fixed_tool'],
)
def test_stacked_regressor_times_model_parameters_equals_rnea(robot):
    positions, velocities, accelerations = random_motion(robot, 6, seed=4)
    stacked = stacked_regressor(robot, positions, velocities, accelerations)
    predicted = stacked @ body_parameter_vector(robot)
    reference = np.concatenate(
        [
            pin.rnea(robot.model, robot.data, q, v, a)
            for q, v, a in zip(positions, velocities, accelerations)
        ]
    )
    assert predicted == pytest.approx(reference, abs=1e-10)
    assert stacked.shape == (6 * robot.num_joints, 10 * robot.num_joints)


def test_floating_base_rows_are_the_joint_torques_at_a_still_base():
    robot = RobotModel.from_urdf_file(QUADRUPED_URDF, root_joint='floating')
    positions, velocities, accelerations = random_motion(robot, 3, seed=5)
    stacked = stacked_regressor(robot, positions, velocities, accelerations)
    for k, (q, v, a) in enumerate(zip(positions, velocities, accelerations)):
        tau = pin.rnea(
            robot.model, robot.data, robot.configuration(q), robot.tangent(v), robot.tangent(a)
        )
        rows = stacked[k * robot.num_joints : (k + 1) * robot.num_joints]
        assert rows @ body_parameter_vector(robot) == pytest.approx(tau[6:], abs=1e-9)
    full = joint_torque_regressor(
        robot,
        robot.configuration(positions[0]),
        robot.tangent(velocities[0]),
        robot.tangent(accelerations[0]),
    )
    assert full.shape == (robot.nv_reduced, 10 * (robot.model.njoints - 1))


def test_body_index_finds_the_joint_body_and_the_frame_offset():
    robot = RobotModel.from_urdf_file(ARM_URDF)
    index, placement = body_index(robot, 'fr3_flange')
    assert index == 6 and placement.translation == pytest.approx([0.0, 0.0, 0.107])
    assert body_index(robot, 'fr3_link3')[0] == 2
    assert body_link_names(robot)[2] == 'fr3_link3'
    with pytest.raises(DescriptionError, match='fixed to the world'):
        body_index(robot, 'fr3_link0')
    with pytest.raises(DescriptionError, match='not a frame'):
        body_index(robot, 'no_such_link')


def test_mismatched_sample_shapes_are_refused():
    robot = RobotModel.from_urdf_string(CHAIN_URDF)
    with pytest.raises(ModelInputError, match='velocities'):
        stacked_regressor(robot, np.zeros((4, 2)), np.zeros((3, 2)), np.zeros((4, 2)))
