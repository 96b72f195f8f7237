"""centroidal_node's base_state sources (core): each against its closed form — a mounting's
attitude from roll, pitch, yaw; an IMU's attitude and angular velocity carried from a frame
turned on the base; odometry as given — and the refusals."""

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from robot_dynamics.core.floating_base.base_source import (
    BaseSourceUnavailable,
    CentroidalBaseSource,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.base_state import BaseStateError

IMU_YAW = 0.5 * math.pi
URDF = f"""<robot name="deck_arm">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1"
    iyz="0" izz="0.1"/></inertial></link>
  <link name="imu_link"/>
  <joint name="imu_mount" type="fixed"><parent link="base"/><child link="imu_link"/>
    <origin xyz="0.1 0.2 0.05" rpy="0 0 {IMU_YAW}"/></joint>
  <link name="arm"><inertial><origin xyz="0.3 0 0"/><mass value="1"/><inertia ixx="0.01"
    ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="3"/></joint>
</robot>"""
POSE = [0.4, -0.1, 0.7, 0.0, 0.0, 0.0, 1.0]


@pytest.fixture(scope='module')
def robot():
    return RobotModel.from_urdf_string(URDF, root_joint='floating')


def source(mode, robot, floating=False, **options):
    base = CentroidalBaseSource(mode, floating, POSE, max_age=0.05, **options)
    base.use_model(robot)
    return base


def test_none_and_mounting_stand_still_at_base_pose_with_their_attitude(robot):
    pose, twist = source('none', robot).at(1.0)
    np.testing.assert_array_equal(pose, POSE)
    np.testing.assert_array_equal(twist, np.zeros(6))
    rpy = (0.1, -0.4, 1.2)
    pose, twist = source('mounting', robot, base_orientation=rpy).at(1.0)
    np.testing.assert_array_equal(pose[:3], POSE[:3])
    expected = Rotation.from_euler('xyz', rpy)  # R = Rz(yaw) Ry(pitch) Rx(roll)
    assert Rotation.from_quat(pose[3:]).approx_equal(expected, atol=1e-12)
    np.testing.assert_array_equal(twist, np.zeros(6))


def test_odom_gives_its_pose_and_twist_and_a_fixed_base_waits_at_base_pose(robot):
    base = source('odom', robot)
    np.testing.assert_array_equal(base.at(1.0)[0], POSE)  # before any odometry
    quaternion = Rotation.from_euler('z', 0.7).as_quat()
    base.take_odom(1.0, [1.0, 2.0, 0.3], quaternion, [0.2, 0.0, 0.0], [0.0, 0.0, 0.1])
    pose, twist = base.at(1.0)
    np.testing.assert_allclose(pose, [1.0, 2.0, 0.3, *quaternion], atol=1e-12)
    np.testing.assert_allclose(twist, [0.2, 0.0, 0.0, 0.0, 0.0, 0.1])
    with pytest.raises(BaseSourceUnavailable) as stale:
        base.at(1.2)
    assert stale.value.reason == 'stale_odometry'
    with pytest.raises(BaseSourceUnavailable) as waiting:
        source('odom', robot, floating=True).at(1.0)
    assert waiting.value.reason == 'no_odometry'


def arc(start_xy, yaw, speed, yaw_rate, elapsed):
    """Position and yaw of a base driving at ``speed`` [m/s] along its x axis while turning at
    ``yaw_rate`` [rad/s] (a constant body twist: a circle), ``elapsed`` [s] after ``start_xy``,
    ``yaw``."""
    turned = yaw_rate * elapsed
    forward, left = speed * math.sin(turned) / yaw_rate, speed * (1 - math.cos(turned)) / yaw_rate
    c, s = math.cos(yaw), math.sin(yaw)
    return start_xy[0] + c * forward - s * left, start_xy[1] + s * forward + c * left, yaw + turned


@pytest.mark.parametrize('elapsed', [0.04, -0.03, 0.001])
def test_odom_is_carried_along_its_twist_to_the_joint_states_stamp(robot, elapsed):
    """Odometry of a base circling at a constant body twist, read by a joint state stamped
    ``elapsed`` after (or before) it: the pose on the circle at that stamp (closed form)."""
    base = source('odom', robot)
    yaw, speed, yaw_rate = 0.7, 0.5, 1.2
    base.take_odom(
        1.0,
        [1.0, 2.0, 0.3],
        Rotation.from_euler('z', yaw).as_quat(),
        [speed, 0.0, 0.0],
        [0.0, 0.0, yaw_rate],
    )
    pose, twist = base.at(1.0 + elapsed)
    x, y, heading = arc((1.0, 2.0), yaw, speed, yaw_rate, elapsed)
    np.testing.assert_allclose(pose[:3], [x, y, 0.3], atol=1e-12)
    assert Rotation.from_quat(pose[3:]).approx_equal(Rotation.from_euler('z', heading), atol=1e-12)
    np.testing.assert_allclose(twist, [speed, 0.0, 0.0, 0.0, 0.0, yaw_rate])


def test_imu_attitude_is_carried_along_its_gyro_to_the_joint_states_stamp(robot):
    """A base rolling at 0.8 rad/s about its own x axis, its IMU read 30 ms later: the attitude
    turned by 0.024 rad more about that axis."""
    base = source('imu', robot, imu_frame='base')
    world_base = Rotation.from_euler('xyz', (0.2, -0.1, 0.4))
    base.take_imu(2.0, '', world_base.as_quat(), [0.8, 0.0, 0.0])
    pose, _ = base.at(2.03)
    expected = world_base * Rotation.from_euler('x', 0.8 * 0.03)
    assert Rotation.from_quat(pose[3:]).approx_equal(expected, atol=1e-12)


def test_the_largest_change_of_the_odometry_twist_is_per_second_between_samples(robot):
    base = source('odom', robot)
    for k, (forward, turn) in enumerate([(0.0, 0.0), (0.1, 0.0), (0.1, 0.05), (0.1, 0.05)]):
        base.take_odom(0.1 * k, [0, 0, 0], [0, 0, 0, 1], [forward, 0, 0], [0, 0, turn])
    linear, angular = base.odometry.largest_twist_change()
    assert linear == pytest.approx(1.0) and angular == pytest.approx(0.5)


def test_imu_attitude_and_gyro_are_carried_from_the_imu_frame_to_the_base(robot):
    base = source('imu', robot)
    mount = Rotation.from_euler('z', IMU_YAW)  # base ← imu, from the URDF's <origin rpy>
    world_base = Rotation.from_euler('xyz', (0.2, -0.1, 0.4))
    world_imu = world_base * mount
    gyro_base = np.array([0.3, -0.2, 0.5])
    gyro_imu = mount.inv().apply(gyro_base)
    base.take_imu(2.0, 'imu_link', world_imu.as_quat(), gyro_imu)
    pose, twist = base.at(2.0)
    np.testing.assert_array_equal(pose[:3], POSE[:3])
    assert Rotation.from_quat(pose[3:]).approx_equal(world_base, atol=1e-12)
    np.testing.assert_allclose(twist, [0.0, 0.0, 0.0, *gyro_base], atol=1e-12)
    with pytest.raises(BaseSourceUnavailable) as stale:
        base.at(2.5)
    assert stale.value.reason == 'stale_imu'
    with pytest.raises(BaseSourceUnavailable) as waiting:
        source('imu', robot).at(2.0)
    assert waiting.value.reason == 'no_imu'


def test_odom_plus_imu_takes_position_and_velocity_from_odom_attitude_and_rate_from_imu(robot):
    base = source('odom+imu', robot, imu_frame='imu_link')
    world_base = Rotation.from_euler('xyz', (0.0, 0.3, 0.0))
    base.take_odom(3.0, [5.0, 1.0, 0.2], [0, 0, 0, 1], [0.5, 0.1, 0.0], [9.0, 9.0, 9.0])
    mount = Rotation.from_euler('z', IMU_YAW)
    base.take_imu(3.0, '', (world_base * mount).as_quat(), mount.inv().apply([0.0, 0.2, 0.0]))
    pose, twist = base.at(3.0)
    np.testing.assert_allclose(pose[:3], [5.0, 1.0, 0.2])
    assert Rotation.from_quat(pose[3:]).approx_equal(world_base, atol=1e-12)
    np.testing.assert_allclose(twist, [0.5, 0.1, 0.0, 0.0, 0.2, 0.0], atol=1e-12)


@pytest.mark.parametrize(
    'frame, orientation, gyro, reason',
    [
        ('imu_link', None, [0.0, 0.0, 0.0], 'no_orientation'),
        ('wrist_camera', [0, 0, 0, 1], [0.0, 0.0, 0.0], 'unknown_frame'),
        ('arm', [0, 0, 0, 1], [0.0, 0.0, 0.0], 'unknown_frame'),  # moved by a joint
        ('imu_link', [0, 0, 0, 0], [0.0, 0.0, 0.0], 'bad_orientation'),
        ('imu_link', [0, 0, 0, 1], [math.nan, 0.0, 0.0], 'non_finite'),
    ],
)
def test_an_unusable_imu_message_is_refused_by_reason_and_changes_nothing(
    robot, frame, orientation, gyro, reason
):
    base = source('imu', robot)
    base.take_imu(1.0, 'imu_link', [0, 0, 0, 1], [0.0, 0.0, 0.1])
    with pytest.raises(BaseStateError) as refused:
        base.take_imu(1.01, frame, orientation, gyro)
    assert refused.value.reason == reason
    np.testing.assert_allclose(base.at(1.01)[1], [0, 0, 0, 0, 0, 0.1])


def test_an_unknown_base_state_is_refused(robot):
    with pytest.raises(BaseStateError, match='base_state must be one of'):
        CentroidalBaseSource('gps', False, POSE)
