"""centroidal_node through real rclpy: real publishers for joint_states, odom, foot wrenches
and robot_description; assertions on the published messages and diagnostics."""

import itertools
import time

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

from robot_dynamics.core.floating_base.centroidal import (
    centroidal_momentum_matrix,
    centroidal_momentum_rate,
    centroidal_state,
    floating_base_model,
)
from robot_dynamics.core.floating_base.centroidal_checks import compare_zero_moment_points
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF, QUADRUPED_URDF

pytest.importorskip('rclpy')
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from geometry_msgs.msg import PointStamped, PolygonStamped, Vector3Stamped, WrenchStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from ros_harness import wait_for  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from test_centroidal_base_source import arc  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

from robot_dynamics.ros.centroidal_node import CentroidalNode  # noqa: E402
from robot_dynamics.ros.topics import DESCRIPTION_QOS, SENSOR_QOS

G = 9.81
WAIT = 30.0
"""Longest wait [s] for an expected output: a busy machine slows the test, never fails it."""
FEET = ['lf_foot', 'rf_foot', 'lh_foot', 'rh_foot']
STANCE = np.tile([0.0, 0.8, -1.6], 4)
_namespaces = itertools.count()


@pytest.fixture(scope='module')
def quadruped():
    return RobotModel.from_urdf_file(QUADRUPED_URDF, root_joint='floating')


class Rig:
    """A CentroidalNode in its own namespace, spun with a probe that publishes its inputs and
    collects its outputs."""

    def __init__(self, ros, urdf_text=None, **parameters):
        self.namespace = f'/centroidal_test_{next(_namespaces)}'
        if urdf_text is not None:
            parameters['robot_description'] = urdf_text
        parameters.setdefault('diagnostics_period', 0.2)
        self.node = CentroidalNode(
            namespace=self.namespace,
            parameter_overrides=[
                Parameter(name, value=value) for name, value in parameters.items()
            ],
        )
        self.harness = ros(self.node)
        probe = self.harness.probe
        self.joint_pub = probe.create_publisher(
            JointState, f'{self.namespace}/joint_states', SENSOR_QOS
        )
        self.odom_pub = probe.create_publisher(Odometry, f'{self.namespace}/odom', SENSOR_QOS)
        self.description_pub = probe.create_publisher(
            String, f'{self.namespace}/robot_description', DESCRIPTION_QOS
        )
        out = f'{self.namespace}/centroidal'
        self.com = self.harness.collect(PointStamped, f'{out}/com', SENSOR_QOS)
        self.linear = self.harness.collect(
            Vector3Stamped, f'{out}/centroidal_momentum/linear', SENSOR_QOS
        )
        self.angular = self.harness.collect(
            Vector3Stamped, f'{out}/centroidal_momentum/angular', SENSOR_QOS
        )
        self.zmp = self.harness.collect(PointStamped, f'{out}/zmp', SENSOR_QOS)
        self.capture_point = self.harness.collect(PointStamped, f'{out}/capture_point', SENSOR_QOS)
        self.margins = self.harness.collect(JointState, f'{out}/stability_margins', SENSOR_QOS)
        self.polygon = self.harness.collect(PolygonStamped, f'{out}/support_polygon', SENSOR_QOS)
        self.markers = self.harness.collect(MarkerArray, f'{out}/markers', 10)
        self.diagnostics = self.harness.collect(DiagnosticArray, '/diagnostics', 10)
        assert wait_for(
            lambda: (
                self.joint_pub.get_subscription_count() > 0
                and self.odom_pub.get_subscription_count() > 0
                and self.node.count_subscribers(f'{out}/com') > 0
                and self.node.count_subscribers(f'{out}/zmp') > 0
                and self.node.count_subscribers(f'{out}/stability_margins') > 0
            ),
            timeout=WAIT,
        )

    def send(
        self,
        stamp,
        joint_names,
        positions,
        velocities=None,
        base_pose=None,
        base_twist=None,
        frame='odom',
        child_frame='base',
    ):
        """A joint state stamped ``stamp`` [s], after odometry of ``child_frame`` (pose
        [x, y, z, qx, qy, qz, qw] in ``frame``, twist in ``child_frame`` axes) when
        ``base_pose`` is given."""
        if base_pose is not None:
            odom = Odometry()
            odom.header.stamp = _stamp(stamp)
            odom.header.frame_id = frame
            odom.child_frame_id = child_frame
            p, o = odom.pose.pose.position, odom.pose.pose.orientation
            p.x, p.y, p.z, o.x, o.y, o.z, o.w = (float(x) for x in base_pose)
            t = odom.twist.twist
            t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z = (
                float(x) for x in base_twist
            )
            self.odom_pub.publish(odom)
        message = JointState(name=list(joint_names), position=[float(x) for x in positions])
        message.velocity = [
            float(x) for x in (np.zeros(len(positions)) if velocities is None else velocities)
        ]
        message.header.stamp = _stamp(stamp)
        self.joint_pub.publish(message)
        time.sleep(0.003)

    def balance(self):
        """The latest 'balance' diagnostic status of this node, as a dict (None until one)."""
        return self.status('balance')

    def status(self, part: str):
        """The latest diagnostic status ``part`` of this node, as a dict (None until one)."""
        for array in reversed(self.diagnostics):
            for status in array.status:
                if status.name == f'{self.node.get_name()}: {part}' and status.values:
                    return {kv.key: kv.value for kv in status.values} | {'message': status.message}
        return None

    def level(self, part: str):
        """The level of this node's latest diagnostic status ``part`` (None until one)."""
        for array in reversed(self.diagnostics):
            for status in array.status:
                if status.name == f'{self.node.get_name()}: {part}':
                    return status.level
        return None

    def message(self, part: str) -> str:
        """The latest message of this node's diagnostic status ``part`` ('' until one)."""
        return (self.status(part) or {}).get('message', '')

    def close(self):
        self.harness.close()  # the publishers go with the probe, after the spin has stopped


def _stamp(seconds):
    from builtin_interfaces.msg import Time

    return Time(sec=int(seconds), nanosec=int(round((seconds % 1.0) * 1e9)))


@pytest.fixture
def quadruped_rig(ros):
    rigs = []

    def make(**parameters):
        parameters.setdefault('root_joint', 'floating')
        parameters.setdefault('contact_frames', FEET)
        rig = Rig(ros, QUADRUPED_URDF.read_text(), **parameters)
        rigs.append(rig)
        return rig

    yield make
    for rig in rigs:
        rig.close()


def standing_pose(robot):
    q = robot.configuration(STANCE)
    pin.framesForwardKinematics(robot.model, robot.data, q)
    lowest = min(robot.data.oMf[robot.model.getFrameId(f)].translation[2] for f in FEET)
    return np.array([0.3, -0.1, -lowest, 0.0, 0.0, 0.0, 1.0])


def test_translating_base_publishes_mass_times_world_velocity(quadruped, quadruped_rig):
    """Odometry with a rotated base and its body-frame twist: l = m v_world, k = 0, and the CoM
    the core computes for the same pose (quaternion order and twist frame through the messages)."""
    rig = quadruped_rig()
    orientation = Rotation.from_euler('xyz', [0.3, -0.2, 1.1])
    world_velocity = np.array([0.5, -0.2, 0.1])
    pose = np.concatenate([[1.0, 2.0, 0.6], orientation.as_quat()])
    twist = np.concatenate([orientation.inv().apply(world_velocity), np.zeros(3)])
    for k in range(5):
        rig.send(10.0 + 0.002 * k, quadruped.joint_names, STANCE, base_pose=pose, base_twist=twist)
    assert wait_for(lambda: len(rig.linear) >= 5 and len(rig.com) >= 5, timeout=WAIT), dict(
        rig.node.rejections.counts
    )
    linear, angular, com = rig.linear[-1].vector, rig.angular[-1].vector, rig.com[-1]
    np.testing.assert_allclose(
        [linear.x, linear.y, linear.z], quadruped.total_mass() * world_velocity, atol=1e-9
    )
    np.testing.assert_allclose([angular.x, angular.y, angular.z], 0.0, atol=1e-9)
    expected = centroidal_state(quadruped, quadruped.configuration(STANCE, pose), np.zeros(18)).com
    np.testing.assert_allclose([com.point.x, com.point.y, com.point.z], expected, atol=1e-9)
    assert com.header.frame_id == 'odom' and com.header.stamp.sec == 10


def test_standing_still_publishes_zmp_at_com_projection_inside_the_polygon(
    quadruped, quadruped_rig
):
    rig = quadruped_rig(marker_rate=1000.0)
    pose = standing_pose(quadruped)
    for k in range(15):
        rig.send(
            1.0 + 0.002 * k, quadruped.joint_names, STANCE, base_pose=pose, base_twist=np.zeros(6)
        )
    assert wait_for(lambda: len(rig.zmp) >= 7 and len(rig.polygon) >= 15, timeout=WAIT), dict(
        rig.node.rejections.counts
    )
    com, zmp = rig.com[-1].point, rig.zmp[-1].point
    np.testing.assert_allclose([zmp.x, zmp.y, zmp.z], [com.x, com.y, 0.0], atol=1e-9)
    corners = {(round(p.x, 6), round(p.y, 6)) for p in rig.polygon[-1].polygon.points}
    assert len(corners) == 4
    assert wait_for(
        lambda: rig.balance() is not None and rig.balance()['zmp_margin_m'] != 'none', timeout=3.0
    )
    balance = rig.balance()
    assert balance['airborne'] == 'False' and float(balance['zmp_margin_m']) > 0.05
    assert balance['contacts'].split() == FEET and balance['zmp_source'] == 'kinematic'
    assert wait_for(
        lambda: any(m.ns == 'zmp' and m.action == 0 for a in rig.markers for m in a.markers), 3.0
    )
    namespaces = {m.ns for m in rig.markers[-1].markers}
    assert {
        'com',
        'com_projection',
        'zmp',
        'capture_point',
        'support_polygon',
        'linear_momentum',
        'angular_momentum',
        'lipm_zmp',
    } <= namespaces


def test_standing_with_no_foot_on_the_ground_is_a_warning_that_names_the_lowest(
    quadruped, quadruped_rig
):
    """Odometry 0.5 m higher than the feet stand (a ground_height or odom offset): not falling,
    so not in flight, and no foot within contact_height_threshold: the balance status says so."""
    rig = quadruped_rig()
    pose = standing_pose(quadruped) + [0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0]
    for k in range(30):
        rig.send(
            1.0 + 0.002 * k, quadruped.joint_names, STANCE, base_pose=pose, base_twist=np.zeros(6)
        )
    words = 'no contact frame touches the ground (within contact_height_threshold 0.02 m'
    assert wait_for(lambda: words in rig.message('balance'), timeout=WAIT), rig.message('balance')
    assert rig.level('balance') == DiagnosticStatus.WARN
    assert 'foot at z = 0.500 m' in rig.message('balance'), rig.message('balance')


def _inputs_statuses(rig, words):
    return [
        status
        for array in list(rig.diagnostics)
        for status in array.status
        if status.name == f'{rig.node.get_name()}: inputs' and words in status.message
    ]


def test_slow_odometry_of_a_circling_base_is_carried_along_its_twist_to_each_joint_state(
    quadruped, quadruped_rig
):
    """The base circling at 0.5 m/s and 1 rad/s, odometry at every tenth joint state: each
    joint state's CoM is the one at the pose on the circle at its own stamp (closed form), and a
    constant twist is not said to be too slow."""
    rig = quadruped_rig()
    start = standing_pose(quadruped)
    speed, yaw_rate, count = 0.5, 1.0, 300
    true_poses = {}
    for k in range(count):
        stamp = 1.0 + 0.002 * k
        x, y, yaw = arc(start[:2], 0.0, speed, yaw_rate, stamp - 1.0)
        pose = np.array([x, y, start[2], *Rotation.from_euler('z', yaw).as_quat()])
        true_poses[_stamp(stamp).nanosec] = pose
        rig.send(
            stamp,
            quadruped.joint_names,
            STANCE,
            base_pose=pose if k % 10 == 0 else None,
            base_twist=[speed, 0.0, 0.0, 0.0, 0.0, yaw_rate],
        )
    assert wait_for(lambda: len(rig.com) >= count - 10, timeout=WAIT), len(rig.com)
    for com in list(rig.com):
        pose = true_poses[com.header.stamp.nanosec]
        expected = centroidal_state(quadruped, quadruped.configuration(STANCE, pose), np.zeros(18))
        np.testing.assert_allclose([com.point.x, com.point.y, com.point.z], expected.com, atol=1e-9)
    assert wait_for(lambda: bool(_inputs_statuses(rig, 'Hz')), timeout=WAIT)
    assert not _inputs_statuses(rig, 'publish odometry at the rate of the joint states')


def test_slow_odometry_of_an_accelerating_base_is_said(quadruped, quadruped_rig):
    """The base speeding up at 1 m/s² with odometry at every tenth joint state: the pose carried
    along each odometry's twist misses the acceleration, which the inputs status says."""
    rig = quadruped_rig()
    start = standing_pose(quadruped)
    for k in range(300):
        elapsed = 0.002 * k
        pose = start + [0.5 * elapsed**2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        rig.send(
            1.0 + elapsed,
            quadruped.joint_names,
            STANCE,
            base_pose=pose if k % 10 == 0 else None,
            base_twist=[elapsed, 0.0, 0.0, 0.0, 0.0, 0.0],
        )
    words = 'publish odometry at the rate of the joint states'
    assert wait_for(lambda: bool(_inputs_statuses(rig, words)), timeout=WAIT), [
        status.message for array in rig.diagnostics for status in array.status
    ][-5:]
    said = _inputs_statuses(rig, words)[-1]
    assert said.level == DiagnosticStatus.WARN
    assert "the base's twist changes by up to 1.00 m/s² and 0.00 rad/s²" in said.message, (
        said.message
    )


def test_noisy_odometry_lengthens_the_rate_window_and_diagnostics_say_so(quadruped, quadruped_rig):
    """5 mm/s and 5 mrad/s of white noise on the odometry twist of a robot standing still: the
    node's ḣ_G fit grows from 9 samples until the predicted ZMP noise meets zmp_noise_limit."""
    rig = quadruped_rig()
    pose, rng = standing_pose(quadruped), np.random.default_rng(3)
    for k in range(150):
        twist = rng.normal(scale=0.005, size=6)
        rig.send(1.0 + 0.002 * k, quadruped.joint_names, STANCE, base_pose=pose, base_twist=twist)
    assert wait_for(
        lambda: rig.balance() is not None and rig.balance().get('zmp_noise_m', 'none') != 'none',
        timeout=WAIT,
    ), dict(rig.node.rejections.counts)
    balance = rig.balance()
    assert 9 < int(balance['rate_window']) <= 51
    assert 0.0 < float(balance['zmp_noise_m']) <= 0.004


def test_standing_still_publishes_the_capture_point_at_the_com_projection_and_equal_margins(
    quadruped, quadruped_rig
):
    """ċ = 0: ξ is the CoM ground projection, so its margin equals the CoM-projection margin and
    (with ḣ_G = 0) the ZMP margin, in ~/stability_margins, /diagnostics and the markers."""
    rig = quadruped_rig(marker_rate=1000.0, ground_height=0.05)
    pose = standing_pose(quadruped) + [0.0, 0.0, 0.05, 0.0, 0.0, 0.0, 0.0]
    for k in range(15):
        rig.send(
            1.0 + 0.002 * k, quadruped.joint_names, STANCE, base_pose=pose, base_twist=np.zeros(6)
        )
    assert wait_for(
        lambda: len(rig.capture_point) >= 15 and len(rig.margins) >= 15, timeout=WAIT
    ), dict(rig.node.rejections.counts)
    com, capture = rig.com[-1].point, rig.capture_point[-1]
    np.testing.assert_allclose(
        [capture.point.x, capture.point.y, capture.point.z], [com.x, com.y, 0.05], atol=1e-9
    )
    assert capture.header.frame_id == 'odom' and capture.header.stamp == rig.com[-1].header.stamp
    margins = rig.margins[-1]
    assert margins.name == ['zmp', 'capture_point', 'com_projection']
    assert margins.header.stamp == rig.com[-1].header.stamp and margins.header.frame_id == 'odom'
    zmp_margin, capture_margin, com_margin = margins.position
    assert capture_margin > 0.05
    np.testing.assert_allclose([zmp_margin, capture_margin], com_margin, atol=1e-9)
    first = rig.margins[0].position  # the ḣ_G estimator still warming up: no ZMP, a NaN margin
    assert np.isnan(first[0]) and np.isfinite(first[1:]).all()
    assert wait_for(
        lambda: rig.balance() is not None and rig.balance()['capture_point_margin_m'] != 'none', 3.0
    )
    assert float(rig.balance()['capture_point_margin_m']) == pytest.approx(capture_margin, abs=1e-6)
    assert wait_for(
        lambda: any(
            m.ns == 'capture_point' and m.action == 0 for a in rig.markers for m in a.markers
        ),
        3.0,
    )


def test_constant_base_velocity_publishes_the_capture_point_ahead_by_velocity_over_omega(
    quadruped, quadruped_rig
):
    """A rigid stance gliding at a constant world velocity v (twist in the yawed base frame):
    ξ = c + v/ω with ω = √(g/c_z); fast enough sideways it leaves the stance: a WARN."""
    rig = quadruped_rig()
    yaw = Rotation.from_euler('z', 0.5)
    world_velocity = np.array([0.3, 2.5, 0.0])
    start = standing_pose(quadruped)
    start[3:] = yaw.as_quat()
    twist = np.concatenate([yaw.inv().apply(world_velocity), np.zeros(3)])
    for k in range(12):
        pose = start.copy()
        pose[:3] += world_velocity * 0.002 * k
        rig.send(3.0 + 0.002 * k, quadruped.joint_names, STANCE, base_pose=pose, base_twist=twist)
    assert wait_for(lambda: len(rig.capture_point) >= 12, timeout=WAIT), dict(
        rig.node.rejections.counts
    )
    com, capture = rig.com[-1].point, rig.capture_point[-1].point
    omega = np.sqrt(G / com.z)
    np.testing.assert_allclose(
        [capture.x, capture.y, capture.z],
        [com.x + world_velocity[0] / omega, com.y + world_velocity[1] / omega, 0.0],
        atol=1e-9,
    )
    assert wait_for(lambda: len(rig.margins) >= 12, timeout=WAIT)
    _, capture_margin, com_margin = rig.margins[-1].position
    assert capture_margin < 0.0 < com_margin
    assert wait_for(
        lambda: rig.balance() is not None and 'capture point' in rig.balance()['message'], 3.0
    )


def test_free_fall_publishes_no_zmp_and_reports_airborne(quadruped, quadruped_rig):
    rig = quadruped_rig()
    for k in range(20):
        t = 0.002 * k
        pose = [0.0, 0.0, 3.0 - 0.5 * G * t**2, 0.0, 0.0, 0.0, 1.0]
        rig.send(
            5.0 + t,
            quadruped.joint_names,
            STANCE,
            base_pose=pose,
            base_twist=[0, 0, -G * t, 0, 0, 0],
        )
    assert wait_for(lambda: len(rig.com) >= 20, timeout=WAIT), dict(rig.node.rejections.counts)
    assert rig.node.rejections.total() == 0
    assert wait_for(
        lambda: rig.balance() is not None and rig.balance()['airborne'] == 'True', timeout=3.0
    )
    assert rig.zmp == [] and rig.polygon[-1].polygon.points == []
    assert rig.balance()['message'] == 'airborne: no ZMP'
    assert wait_for(lambda: len(rig.margins) >= 20, timeout=3.0)
    assert all(
        np.isnan(m.position).all() for m in rig.margins
    )  # no support polygon: every margin undefined
    assert len(rig.capture_point) == 20  # the CoM is above the ground: ξ is defined (where to land)


def test_measured_foot_wrenches_give_the_zmp(quadruped, quadruped_rig):
    """Wrench route: vertical foot forces that hold the robot still put the ZMP under the CoM."""
    topics = [f'{foot}/wrench' for foot in FEET]
    rig = quadruped_rig(contact_wrench_topics=topics)
    pose = standing_pose(quadruped)
    q = quadruped.configuration(STANCE, pose)
    state = centroidal_state(quadruped, q, np.zeros(18))
    pin.framesForwardKinematics(quadruped.model, quadruped.data, q)
    feet = np.array([quadruped.data.oMf[quadruped.model.getFrameId(f)].translation for f in FEET])
    equations = np.vstack([np.ones(4), feet[:, 0] - state.com[0], feet[:, 1] - state.com[1]])
    vertical = np.linalg.lstsq(equations, [state.mass * G, 0.0, 0.0], rcond=None)[0]
    publishers = [
        rig.harness.probe.create_publisher(WrenchStamped, f'{rig.namespace}/{topic}', SENSOR_QOS)
        for topic in topics
    ]
    assert wait_for(lambda: all(p.get_subscription_count() > 0 for p in publishers), timeout=WAIT)
    for k in range(3):
        for foot, publisher, force in zip(FEET, publishers, vertical):
            message = WrenchStamped()
            message.header.stamp = _stamp(2.0 + 0.002 * k)
            message.header.frame_id = foot
            message.wrench.force.z = float(force)
            publisher.publish(message)
        time.sleep(0.01)
        rig.send(
            2.0 + 0.002 * k, quadruped.joint_names, STANCE, base_pose=pose, base_twist=np.zeros(6)
        )
    assert wait_for(lambda: len(rig.zmp) >= 1, timeout=WAIT)
    zmp = rig.zmp[-1].point
    np.testing.assert_allclose([zmp.x, zmp.y, zmp.z], [*state.com[:2], 0.0], atol=1e-9)
    assert wait_for(
        lambda: rig.balance() is not None and rig.balance()['zmp_source'] == 'wrenches', timeout=3.0
    )


def test_fixed_base_arm_is_placed_at_the_base_pose_parameter(ros):
    arm = RobotModel.from_urdf_file(ARM_URDF)
    mounting = [0.5, -0.2, 0.8, *Rotation.from_euler('z', 0.8).as_quat()]
    rig = Rig(ros, ARM_URDF.read_text(), world_frame='world', base_pose=mounting)
    try:
        positions = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])
        rig.send(3.0, arm.joint_names, positions)
        assert wait_for(lambda: len(rig.com) >= 1, timeout=WAIT)
        floating = floating_base_model(arm)
        expected = centroidal_state(
            floating, floating.configuration(positions, mounting), np.zeros(13)
        ).com
        point = rig.com[-1].point
        np.testing.assert_allclose([point.x, point.y, point.z], expected, atol=1e-9)
        assert rig.com[-1].header.frame_id == 'world'
        # On a mobile base: once odom arrives it moves the arm; a translating base carries
        # the whole arm (root link included) at the base velocity, l = m_urdf · v_world.
        heading = Rotation.from_euler('z', -1.2)
        world_velocity = np.array([0.4, 0.3, 0.0])
        twist = [*heading.inv().apply(world_velocity), 0.0, 0.0, 0.0]
        for stamp in (3.002, 3.004):
            rig.send(
                stamp,
                arm.joint_names,
                positions,
                base_pose=[2.0, 1.0, 0.3, *heading.as_quat()],
                base_twist=twist,
                frame='world',
                child_frame=arm.description.root,
            )
            assert wait_for(
                lambda: rig.node.base_source.newest_odometry_stamp == stamp, timeout=WAIT
            )
        assert wait_for(lambda: rig.linear[-1].header.stamp.nanosec == 4_000_000, timeout=WAIT)
        urdf_mass = sum(
            link.inertial.mass for link in arm.description.links.values() if link.inertial
        )
        linear = rig.linear[-1].vector
        np.testing.assert_allclose(
            [linear.x, linear.y, linear.z], urdf_mass * world_velocity, atol=1e-9
        )
    finally:
        rig.close()


@pytest.mark.parametrize('stamps', ['header', 'arrival'])
def test_unstamped_joint_states_give_a_zmp_only_when_stamped_on_arrival(ros, stamps):
    arm = RobotModel.from_urdf_file(ARM_URDF)
    rig = Rig(ros, ARM_URDF.read_text(), world_frame='world', joint_state_stamps=stamps)
    try:
        positions = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])
        for _ in range(30):
            rig.send(0.0, arm.joint_names, positions)
        assert wait_for(lambda: len(rig.com) >= 25, timeout=WAIT), dict(rig.node.rejections.counts)
        repeated = rig.node.rejections.counts['repeated_stamp']
        if stamps == 'header':
            assert repeated >= 24 and rig.zmp == []
        else:  # at rest on a fixed base: the ZMP under the CoM
            assert repeated == 0
            assert wait_for(lambda: len(rig.zmp) >= 10, timeout=WAIT)
            com, zmp = rig.com[-1].point, rig.zmp[-1].point
            np.testing.assert_allclose([zmp.x, zmp.y], [com.x, com.y], atol=1e-9)
            assert rig.com[-1].header.stamp.sec > 0
    finally:
        rig.close()


def test_a_bag_played_in_a_loop_gives_the_zmp_again_from_its_start(ros):
    """The same 0.3 s of joint states twice (ros2 bag play --loop, a simulation reset): the
    outputs go on from the earlier time, the restart counted in diagnostics."""
    arm = RobotModel.from_urdf_file(ARM_URDF)
    rig = Rig(ros, ARM_URDF.read_text(), world_frame='world', diagnostics_period=0.2)
    try:
        positions = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])
        for loop in range(2):
            for k in range(30):
                rig.send(5.0 + 0.01 * k, arm.joint_names, positions)
            assert wait_for(lambda: len(rig.com) >= 28 * (loop + 1), timeout=WAIT)
        assert rig.node.time_restarts == 1
        assert rig.node.rejections.counts['out_of_order'] == 2
        stamps = [m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in rig.zmp]
        assert max(stamps) == pytest.approx(5.29) and len(stamps) >= 20
        again = stamps[stamps.index(max(stamps)) + 1 :]
        assert again and min(again) < 5.15 and again == sorted(again)
        com, zmp = rig.com[-1].point, rig.zmp[-1].point  # at rest: the ZMP under the CoM
        np.testing.assert_allclose([zmp.x, zmp.y], [com.x, com.y], atol=1e-9)
        assert wait_for(lambda: (rig.status('inputs') or {}).get('time_restarts') == '1', WAIT)
    finally:
        rig.close()


def test_joint_names_under_another_prefix_are_named_in_diagnostics(ros):
    """Two joints under the model's names, the others under Franka's driver names: no state,
    and the inputs status names the joints missing and the prefix that differs."""
    rig = Rig(ros, ARM_URDF.read_text(), world_frame='world', diagnostics_period=0.2)
    try:
        names = ['fr3_joint1', 'fr3_joint2'] + [f'panda_joint{k}' for k in range(3, 8)]
        for k in range(10):
            rig.send(1.0 + 0.01 * k, names, np.zeros(7))

        def explained():
            inputs = rig.status('inputs') or {}
            message = inputs.get('message', '')
            return (
                'no joint state yet for fr3_joint3, fr3_joint4' in message
                and "the names have 'panda_' where the model's have 'fr3_'" in message
            )

        assert wait_for(explained, timeout=WAIT), rig.status('inputs')
        assert rig.com == []
    finally:
        rig.close()


def test_positions_that_jump_between_two_sources_are_said_with_the_publishers(ros):
    """Every tenth joint state from a stale source at zero (a joint_state_publisher left
    running beside the driver): the inputs status says the positions jump and names the
    publisher of joint_states."""
    arm = RobotModel.from_urdf_file(ARM_URDF)
    rig = Rig(ros, ARM_URDF.read_text(), world_frame='world')
    try:
        pose = np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6])
        for k in range(60):
            rig.send(1.0 + 0.01 * k, arm.joint_names, np.zeros(7) if k % 10 == 9 else pose)
            time.sleep(0.005)

        def said():
            message = rig.message('inputs')
            return (
                'jump faster than the joints can move' in message
                and 'last fr3_joint4 by' in message
                and rig.harness.probe.get_name() in message
            )

        assert wait_for(said, timeout=WAIT), rig.status('inputs')
        assert rig.node._live.jumps.count >= 10
    finally:
        rig.close()


def test_velocities_in_degrees_per_second_are_said(ros):
    """Positions in radians, velocities in degrees per second: the inputs status says so."""
    arm = RobotModel.from_urdf_file(ARM_URDF)
    rig = Rig(ros, ARM_URDF.read_text(), world_frame='world')
    try:
        pose = np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6])

        def said():
            return 'velocities are not the rate of the positions: fr3_joint1 57.3 ×' in (
                rig.message('inputs')
            )

        for k in range(1500):  # 0.5 rad/s sines at 250 Hz for 6 s, or until said
            t = 0.004 * k
            rates = 0.5 * np.cos(2.5 * t) * np.ones(7)
            rig.send(1.0 + t, arm.joint_names, pose + 0.2 * np.sin(2.5 * t), np.degrees(rates))
            if k % 50 == 49 and wait_for(said, 0.01):
                break
            time.sleep(0.002)
        assert wait_for(said, timeout=WAIT), rig.status('inputs')
        assert 'degrees per second beside positions in radians' in rig.status('inputs')['message']
    finally:
        rig.close()


def test_positions_in_degrees_are_said(ros):
    """A driver sending degrees: the inputs status names the joints beyond their limits and
    the likely cause."""
    arm = RobotModel.from_urdf_file(ARM_URDF)
    rig = Rig(ros, ARM_URDF.read_text(), world_frame='world')
    try:
        degrees = np.degrees([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6])
        for k in range(20):
            rig.send(1.0 + 0.01 * k, arm.joint_names, degrees)

        def said():
            message = rig.message('inputs')
            return (
                'positions beyond their URDF limits: fr3_joint1 17.189' in message
                and 'the driver sends degrees' in message
            )

        assert wait_for(said, timeout=WAIT), rig.status('inputs')
        assert 'fr3_joint4' in rig.status('inputs')['positions_beyond_limits']
    finally:
        rig.close()


@pytest.mark.parametrize('velocities', ['empty', 'zeros'])
def test_joint_states_without_measured_velocities_get_them_from_the_positions(ros, velocities):
    # a positions-only driver, and ros2_control's mock hardware (every velocity exactly 0)
    arm = RobotModel.from_urdf_file(ARM_URDF)
    rig = Rig(ros, ARM_URDF.read_text(), world_frame='world')
    start, rate = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4]), np.linspace(0.6, -0.6, 7)
    try:
        for k in range(40):
            positions = start + rate * 0.01 * k
            message = JointState(name=list(arm.joint_names), position=list(positions))
            message.velocity = [0.0] * 7 if velocities == 'zeros' else []
            message.header.stamp = _stamp(1.0 + 0.01 * k)
            rig.joint_pub.publish(message)
            time.sleep(0.005)
        assert wait_for(
            lambda: rig.linear and rig.linear[-1].header.stamp.nanosec == 390_000_000, WAIT
        )
        # constant joint rates: the positions' slope is exact; Σ m v of pinocchio's fixed arm
        expected = pin.computeCentroidalMomentum(
            arm.model, arm.model.createData(), positions, rate
        ).linear
        linear = rig.linear[-1].vector
        np.testing.assert_allclose([linear.x, linear.y, linear.z], expected, atol=1e-9)
        assert np.linalg.norm(expected) > 0.1
        said = (
            'every velocity in joint_states is exactly 0' if velocities == 'zeros' else 'no joint'
        )
        assert wait_for(lambda: said in rig.message('inputs'), timeout=WAIT), rig.message('inputs')
        assert 'q̇ is the slope of the positions' in rig.message('inputs')
        for k in range(20):  # one joint without a velocity: the joints are taken at rest
            velocity = [float('nan'), *rate[1:]]  # (not the last joint: a leaf may lack one)
            rig.send(2.0 + 0.01 * k, arm.joint_names, positions, velocities=velocity)
        assert wait_for(lambda: 'no joint velocities' in rig.message('inputs'), timeout=WAIT)
        for k in range(40):  # measured
            rig.send(3.0 + 0.01 * k, arm.joint_names, positions + rate * 0.01 * k, rate)
        assert wait_for(
            lambda: ' Hz' in rig.message('inputs') and 'velocit' not in rig.message('inputs'),
            timeout=WAIT,
        ), rig.message('inputs')
    finally:
        rig.close()


def test_bad_inputs_are_counted_and_the_node_keeps_working(quadruped, ros):
    """Description from the topic (hot swap), then garbage everywhere, then good input again."""
    rig = Rig(ros, root_joint='floating', contact_frames=FEET)
    try:
        rig.description_pub.publish(String(data=QUADRUPED_URDF.read_text()))
        assert wait_for(lambda: rig.node.robot is not None, timeout=WAIT)
        rig.description_pub.publish(String(data='<robot name="broken"><link name="a"/>'))
        assert wait_for(lambda: rig.node.model_source.rejected == 1, timeout=WAIT)
        pose = standing_pose(quadruped)
        names = quadruped.joint_names
        rig.send(1.000, names, np.full(12, np.nan), base_pose=pose, base_twist=np.zeros(6))
        rig.send(1.002, names, STANCE, base_pose=[0, 0, 0.4, 0, 0, 0, 0], base_twist=np.zeros(6))
        rig.send(1.004, names, STANCE, base_pose=pose, base_twist=np.zeros(6), frame='map')
        rig.send(1.006, names[:5], STANCE, velocities=np.zeros(12))
        rig.joint_pub.publish(b'\x00\x01\x00\x00\x01\x02')  # serialized bytes that end early
        counts = rig.node.rejections.counts
        assert wait_for(
            lambda: (
                counts['non_finite'] >= 1
                and counts['bad_odometry'] >= 2
                and counts['length_mismatch'] >= 1
                and counts['malformed_joint_state'] == 1
            ),
            timeout=WAIT,
        ), dict(counts)
        rig.send(2.0, names, STANCE, base_pose=pose, base_twist=np.zeros(6))
        assert wait_for(lambda: rig.com and rig.com[-1].header.stamp.sec == 2, timeout=WAIT), dict(
            counts
        )
        rig.send(
            2.0, names, STANCE, base_pose=pose, base_twist=np.zeros(6)
        )  # unstamped-style repeat
        assert wait_for(lambda: counts['repeated_stamp'] == 1, timeout=WAIT), dict(counts)
        assert rig.node.robot.name == 'quadruped'
    finally:
        rig.close()


def test_odometry_all_refused_is_said_with_its_reason_while_no_state_is_complete(
    quadruped, quadruped_rig
):
    """Odometry in another frame than world_frame, every message: no output, and the inputs
    status gives the reason, not only a counter."""
    rig = quadruped_rig()
    pose = standing_pose(quadruped)
    for k in range(20):
        stamp = 1.0 + 0.002 * k
        rig.send(
            stamp,
            quadruped.joint_names,
            STANCE,
            base_pose=pose,
            base_twist=np.zeros(6),
            frame='map',
        )
    words = 'odom pose is in "map", not in world_frame "odom"'
    assert wait_for(lambda: bool(_inputs_statuses(rig, words)), timeout=WAIT), [
        status.message for array in rig.diagnostics for status in array.status
    ][-5:]
    said = _inputs_statuses(rig, words)[-1]
    assert said.level == DiagnosticStatus.WARN and said.message.startswith('no complete state yet')
    assert not rig.com


@pytest.mark.parametrize('child_frame', ['nowhere', 'lf_shank'])
def test_odometry_of_a_frame_not_fixed_to_the_base_is_refused_as_dynamics_node_refuses_it(
    quadruped, quadruped_rig, child_frame
):
    """Odometry whose child_frame_id the model lacks, or names a frame a joint moves (the
    shank): centroidal_node and dynamics_node on the same odom topic both count it as
    odom_unknown_frame; centroidal_node says so in its inputs status and publishes nothing from
    it (the floating base waits for usable odometry). The same pose then given for the base
    link, by name or by an empty child_frame_id, is used."""
    from robot_dynamics.ros.dynamics_node import DynamicsNode

    rig = quadruped_rig()
    dynamics = rig.harness.add(
        DynamicsNode(
            namespace=rig.namespace,
            parameter_overrides=[
                Parameter('robot_description', value=QUADRUPED_URDF.read_text()),
                Parameter('root_joint', value='floating'),
                Parameter('base_state', value='odom'),
            ],
        )
    )
    assert wait_for(
        lambda: dynamics.robot is not None and rig.odom_pub.get_subscription_count() == 2,
        timeout=WAIT,
    )
    pose, names = standing_pose(quadruped), quadruped.joint_names
    for k in range(3):
        rig.send(1.0 + 0.002 * k, names, STANCE, None, pose, np.zeros(6), child_frame=child_frame)
    for node in (rig.node, dynamics):
        counts = node.rejections.counts
        assert wait_for(lambda c=counts: c['odom_unknown_frame'] == 3, timeout=WAIT), dict(counts)
    assert wait_for(
        lambda: (rig.status('inputs') or {}).get('rejected_odom_unknown_frame') == '3',
        timeout=WAIT,
    ), rig.status('inputs')
    assert not rig.com
    for k, base_link in enumerate(('base', '')):
        rig.send(2.0 + 0.002 * k, names, STANCE, None, pose, np.zeros(6), child_frame=base_link)
    assert wait_for(lambda: len(rig.com) == 2, timeout=WAIT), dict(rig.node.rejections.counts)
    assert {message.header.stamp.sec for message in rig.com} == {2}
    assert rig.node.rejections.counts['odom_unknown_frame'] == 3


IMU_ORIGIN, IMU_RPY = (0.1, 0.2, 0.05), (0.3, 0.0, 0.5 * np.pi)
DECK_ARM_URDF = f"""<robot name="deck_arm">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1"
    iyz="0" izz="0.1"/></inertial></link>
  <link name="imu_link"/>
  <joint name="imu_mount" type="fixed"><parent link="base"/><child link="imu_link"/>
    <origin xyz="{' '.join(map(str, IMU_ORIGIN))}" rpy="{' '.join(map(str, IMU_RPY))}"/></joint>
  <link name="arm"><inertial><origin xyz="0.3 0 0"/><mass value="1"/><inertia ixx="0.01"
    ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="3"/></joint>
</robot>"""
"""A base link with an IMU frame fixed on it (offset and turned) and one arm joint."""


def test_odometry_of_a_frame_fixed_on_the_base_is_carried_to_the_base_link(ros):
    """Odometry of imu_link (pose world ← imu, twist in imu axes at the imu origin): the node
    takes the base pose world ← imu · imu ← base and the twist at the base origin in base axes,
    so CoM and momentum equal pinocchio's for the base's own pose and twist."""
    robot = RobotModel.from_urdf_string(DECK_ARM_URDF, root_joint='floating')
    base_imu = pin.SE3(Rotation.from_euler('xyz', IMU_RPY).as_matrix(), np.array(IMU_ORIGIN))
    world_base = pin.SE3(Rotation.from_euler('xyz', (0.2, -0.1, 0.7)).as_matrix(), np.ones(3))
    base_twist = pin.Motion(np.array([0.4, -0.2, 0.1, 0.3, -0.5, 0.8]))  # base axes, origin
    imu_pose = pin.SE3ToXYZQUAT(world_base * base_imu)
    imu_twist = base_imu.actInv(base_twist).vector
    rig = Rig(ros, DECK_ARM_URDF, root_joint='floating')
    try:
        for stamp in (1.0, 1.002):
            rig.send(stamp, ['shoulder'], [0.4], [0.7], imu_pose, imu_twist, child_frame='imu_link')
        counts = rig.node.rejections.counts
        assert wait_for(lambda: len(rig.com) == 2 and len(rig.angular) == 2, timeout=WAIT), dict(
            counts
        )
        q = robot.configuration(np.array([0.4]), pin.SE3ToXYZQUAT(world_base))
        expected = centroidal_state(robot, q, robot.tangent(np.array([0.7]), base_twist.vector))
        point, linear, angular = rig.com[-1].point, rig.linear[-1].vector, rig.angular[-1].vector
        np.testing.assert_allclose([point.x, point.y, point.z], expected.com, atol=1e-9)
        np.testing.assert_allclose(
            [linear.x, linear.y, linear.z], expected.linear_momentum, atol=1e-9
        )
        np.testing.assert_allclose(
            [angular.x, angular.y, angular.z], expected.angular_momentum, atol=1e-9
        )
        assert not counts
    finally:
        rig.close()


def test_rviz_config_shows_what_the_node_publishes():
    """config/robot_dynamics.rviz subscribes to the default node's topics and enables every
    marker namespace the node emits (see the standing-still test)."""
    from pathlib import Path

    import yaml

    config = yaml.safe_load(
        (Path(__file__).resolve().parents[1] / 'config' / 'robot_dynamics.rviz').read_text()
    )

    def displays(entries):
        for entry in entries:
            yield entry
            yield from displays(entry.get('Displays', []))

    shown = list(displays(config['Visualization Manager']['Displays']))
    topics = {d['Topic']['Value'] for d in shown if 'Topic' in d}
    assert {
        '/centroidal/markers',
        '/centroidal/support_polygon',
        '/centroidal/zmp',
        '/centroidal/capture_point',
        '/centroidal/lipm_zmp',
    } <= topics
    markers = next(d for d in shown if d['Class'] == 'rviz_default_plugins/MarkerArray')
    assert set(markers['Namespaces']) == {
        'com',
        'com_projection',
        'zmp',
        'capture_point',
        'support_polygon',
        'linear_momentum',
        'angular_momentum',
        'lipm_zmp',
    }
    assert config['Visualization Manager']['Global Options']['Fixed Frame'] == 'odom'
    assert any(d['Class'] == 'rviz_default_plugins/RobotModel' for d in shown)


@pytest.mark.parametrize(
    'name, requested, taken',
    [
        ('stale_timeout', 0.3, 0.3),
        ('stale_timeout', 0.0, 0.1),
        ('stale_timeout', float('inf'), 0.1),
        ('diagnostics_period', 0.5, 0.5),
        ('diagnostics_period', 0.0, 1.0),
        ('diagnostics_period', float('nan'), 1.0),
    ],
)
def test_an_impossible_time_parameter_falls_back_to_its_default(ros, name, requested, taken):
    node = CentroidalNode(parameter_overrides=[Parameter(name, value=requested)])
    try:
        used = (
            node.stale_timeout
            if name == 'stale_timeout'
            else min(timer.timer_period_ns for timer in node.timers) * 1e-9
        )
        assert used == pytest.approx(taken)
    finally:
        node.destroy_node()


def test_zmp_and_flight_use_the_gravity_parameter(quadruped, quadruped_rig):
    moon = 1.62
    rig = quadruped_rig(gravity=[0.0, 0.0, -moon])
    start, names, push = (
        standing_pose(quadruped),
        quadruped.joint_names,
        0.5,
    )  # base accelerates along x [m/s²]
    for k in range(15):
        t = 0.002 * k
        pose = start + [0.5 * push * t**2, 0, 0, 0, 0, 0, 0]
        rig.send(1.0 + t, names, STANCE, base_pose=pose, base_twist=[push * t, 0, 0, 0, 0, 0])
    assert wait_for(lambda: len(rig.zmp) >= 5 and len(rig.com) >= 15, timeout=WAIT), dict(
        rig.node.rejections.counts
    )
    com, zmp = rig.com[-1].point, rig.zmp[-1].point
    # p_x = c_x − c_z·c̈_x/g with the Moon's g (with 9.81 the ZMP would sit 6× closer to the CoM).
    np.testing.assert_allclose([zmp.x, zmp.y], [com.x - com.z * push / moon, com.y], atol=1e-6)
    for k in range(
        20
    ):  # falling at the Moon's g: airborne (c̈_z + g = 0 < ε); with 9.81 it would not be
        t = 0.002 * k
        pose = [0.0, 0.0, 3.0 - 0.5 * moon * t**2, 0.0, 0.0, 0.0, 1.0]
        rig.send(5.0 + t, names, STANCE, base_pose=pose, base_twist=[0, 0, -moon * t, 0, 0, 0])
    assert wait_for(
        lambda: (
            rig.com
            and rig.com[-1].header.stamp.sec == 5
            and rig.com[-1].header.stamp.nanosec == 38_000_000
        ),
        timeout=WAIT,
    )
    assert wait_for(
        lambda: rig.balance() is not None and rig.balance()['airborne'] == 'True', timeout=3.0
    )
    assert all(message.header.stamp.sec == 1 for message in rig.zmp)


def test_a_gravity_not_along_minus_z_is_refused_for_the_zmp(ros):
    node = CentroidalNode(
        parameter_overrides=[
            Parameter('gravity', value=[0.0, -9.81, 0.0]),
            Parameter('robot_description', value=ARM_URDF.read_text()),
        ]
    )
    try:
        assert node.settings.gravity == pytest.approx(9.81)
        np.testing.assert_allclose(node.robot.model.gravity.linear, [0.0, 0.0, -9.81])
        assert node.get_parameter('gravity').value == [0.0, 0.0, -9.81]
    finally:
        node.destroy_node()


@pytest.mark.parametrize(
    'given, frames',
    [('lf_foot', ('lf_foot',)), (5, ()), (['lf_foot', 'rf_foot'], ('lf_foot', 'rf_foot'))],
)
def test_contact_frames_takes_one_name_or_a_list(quadruped, quadruped_rig, given, frames):
    rig = quadruped_rig(
        contact_frames=given
    )  # before: 'lf_foot' was split into letters, 5 raised TypeError
    assert rig.node.contact_frame_names == frames
    pose = standing_pose(quadruped)
    rig.send(1.0, quadruped.joint_names, STANCE, base_pose=pose, base_twist=np.zeros(6))
    assert wait_for(lambda: len(rig.polygon) >= 1, timeout=WAIT), (
        rig.node.model_error,
        dict(rig.node.rejections.counts),
    )
    assert len(rig.polygon[-1].polygon.points) == len(frames)


NOWHERE = 'parameter contact_frames: "nowhere" is not a frame of model "quadruped"'
"""How the node names a contact_frames entry the quadruped lacks (log, diagnostics)."""


def test_a_contact_frame_the_model_lacks_is_left_out_and_named_with_its_parameter(
    quadruped, quadruped_rig, capfd
):
    """contact_frames [nowhere, lf_foot, rf_foot]: the log and the model status (WARN) name the
    parameter and the missing frame; CoM and momentum are published, the support polygon is the
    two feet the model has, and no joint state is refused."""
    rig = quadruped_rig(contact_frames=['nowhere', 'lf_foot', 'rf_foot'])
    pose = standing_pose(quadruped)
    rig.send(1.0, quadruped.joint_names, STANCE, base_pose=pose, base_twist=np.zeros(6))
    counts = rig.node.rejections.counts
    assert wait_for(lambda: rig.polygon and rig.com, timeout=WAIT), dict(counts)
    assert len(rig.polygon[-1].polygon.points) == 2
    assert wait_for(lambda: NOWHERE in rig.message('model'), timeout=WAIT), rig.message('model')
    assert rig.level('model') == DiagnosticStatus.WARN
    assert rig.status('model')['contact_frames_left_out'] == 'nowhere'
    assert f'{NOWHERE} (its links: base, lf_hip' in capfd.readouterr().err
    assert not rig.node.model_error and 'no_model' not in counts


def test_contact_frames_the_model_has_none_of_refuse_it_and_each_rejection_says_why(
    quadruped, quadruped_rig, capfd
):
    """contact_frames [nowhere]: no contact point can be placed, so the model is not used. The
    log, each refused joint state and the model status (ERROR) name the parameter; nothing is
    published."""
    rig = quadruped_rig(contact_frames=['nowhere'])
    pose, counts = standing_pose(quadruped), rig.node.rejections.counts
    for k in range(3):
        rig.send(
            1.0 + 0.002 * k, quadruped.joint_names, STANCE, base_pose=pose, base_twist=np.zeros(6)
        )
    assert wait_for(lambda: counts['no_model'] == 3, timeout=WAIT), dict(counts)
    why = f'no usable robot model: {NOWHERE}'
    assert wait_for(lambda: rig.message('model').startswith(why), timeout=WAIT), rig.message(
        'model'
    )
    assert rig.level('model') == DiagnosticStatus.ERROR
    assert wait_for(
        lambda: (rig.status('inputs') or {}).get('rejected_no_model') == '3', timeout=WAIT
    )
    logged = capfd.readouterr().err
    assert f'model "quadruped" not usable for centroidal dynamics: {NOWHERE}' in logged
    assert f'rejected input (no_model, 1 so far): {why}' in logged
    assert rig.node.robot is None and not rig.com


@pytest.mark.parametrize(
    'name, given, attribute, used',
    [
        ('stale_timeout', 1, lambda node: node.stale_timeout, 1.0),  # an int for a float: taken
        ('marker_rate', 10, lambda node: node.marker_period, 0.1),
        ('ground_height', 1, lambda node: node.settings.ground_height, 1.0),
        (
            'rate_window',
            1,
            lambda node: node.settings.rate_window,
            9,
        ),  # before: the model was refused
        ('rate_degree', 2.5, lambda node: node.settings.rate_degree, 2),
        (
            'base_pose',
            [1.0, 2.0],
            lambda node: list(node.fixed_base_pose),
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
        ),
        ('world_frame', 3, lambda node: node.world_frame, 'odom'),
    ],
)
def test_a_parameter_of_another_type_or_out_of_range_is_converted_or_defaulted(
    ros, name, given, attribute, used
):
    node = CentroidalNode(
        parameter_overrides=[
            Parameter(name, value=given),
            Parameter('robot_description', value=ARM_URDF.read_text()),
        ]
    )
    try:
        assert attribute(node) == pytest.approx(used)
        assert node.robot is not None and not node.model_error
    finally:
        node.destroy_node()


def test_a_runtime_parameter_change_is_refused_with_the_reason(ros):
    from rcl_interfaces.srv import SetParameters

    rig = Rig(ros, ARM_URDF.read_text())
    try:
        for name, value in (
            ('contact_frames', ['lf_foot']),
            ('ground_height', 0.5),
            ('gravity', [0.0, 0.0, -1.0]),
        ):
            request = SetParameters.Request(
                parameters=[Parameter(name, value=value).to_parameter_msg()]
            )
            (result,) = rig.harness.call(
                SetParameters, f'{rig.namespace}/centroidal/set_parameters', request, timeout=10
            ).results
            assert not result.successful and 'read-only' in result.reason, (name, result)
        assert rig.node.settings.ground_height == 0.0
    finally:
        rig.close()


def test_an_odometry_twist_that_overflows_the_momentum_is_counted_as_a_bad_state(
    quadruped, quadruped_rig
):
    """A finite but absurd base twist (1e308 m/s passes the odometry check) makes h_G overflow
    to Inf: counted as bad_state (not internal_error), nothing published for that state, and
    the next sane state is published. (A non-finite stamp, the case this replaces, cannot come
    from a message: builtin_interfaces/Time is int32 sec + uint32 nanosec.)"""
    rig = quadruped_rig()
    pose, names = standing_pose(quadruped), quadruped.joint_names
    rig.send(1.0, names, STANCE, base_pose=pose, base_twist=[1e308, 0.0, 0.0, 1e308, 0.0, 0.0])
    counts = rig.node.rejections.counts
    assert wait_for(lambda: counts['bad_state'] == 1, timeout=WAIT), dict(counts)
    rig.send(1.002, names, STANCE, base_pose=pose, base_twist=np.zeros(6))
    assert wait_for(lambda: len(rig.com) >= 1, timeout=WAIT), dict(counts)
    assert [(m.header.stamp.sec, m.header.stamp.nanosec) for m in rig.com] == [(1, 2_000_000)]
    assert dict(counts) == {'bad_state': 1}


def test_non_default_contact_height_threshold_and_flight_epsilon_parameters_decide_the_outputs(
    quadruped, quadruped_rig
):
    """Feet exactly 3 cm above the ground: in contact with contact_height_threshold 0.05 (with
    the default 0.02 they are not), so a 4-corner polygon and all four feet as contacts. Then a
    fall at c̈_z + g = 0.5 m/s²: with flight_epsilon 0.25 a ZMP is published (with the default
    1.0 the robot is airborne and none is)."""
    rig = quadruped_rig(contact_height_threshold=0.05, flight_epsilon=0.25)
    names = quadruped.joint_names
    rig.send(
        1.0,
        names,
        STANCE,
        base_pose=standing_pose(quadruped) + [0, 0, 0.03, 0, 0, 0, 0],
        base_twist=np.zeros(6),
    )
    assert wait_for(lambda: len(rig.polygon) >= 1, timeout=WAIT), dict(rig.node.rejections.counts)
    corners = {(round(p.x, 6), round(p.y, 6)) for p in rig.polygon[-1].polygon.points}
    assert len(corners) == 4
    assert wait_for(
        lambda: rig.balance() is not None and rig.balance()['contacts'] != '', timeout=3.0
    )
    assert rig.balance()['contacts'].split() == FEET
    fall = G - 0.5
    for k in range(15):
        t = 0.002 * k
        rig.send(
            5.0 + t,
            names,
            STANCE,
            base_pose=[0.0, 0.0, 3.0 - 0.5 * fall * t**2, 0.0, 0.0, 0.0, 1.0],
            base_twist=[0.0, 0.0, -fall * t, 0.0, 0.0, 0.0],
        )
    assert wait_for(lambda: len(rig.com) >= 16 and len(rig.zmp) >= 7, timeout=WAIT), dict(
        rig.node.rejections.counts
    )
    assert [m.header.stamp.sec for m in rig.zmp] == [
        5
    ] * 7  # samples 9 to 15, once the rate estimate is ready
    assert rig.zmp[-1].header.stamp == rig.com[-1].header.stamp
    com, zmp = rig.com[-1].point, rig.zmp[-1].point
    np.testing.assert_allclose([zmp.x, zmp.y, zmp.z], [com.x, com.y, 0.0], atol=1e-6)


# ---------------------------------------------------------------------------- centroidal checks
def centroidal_checks(rig):
    """The latest 'centroidal checks' diagnostic status of this node, as a dict (None until one)."""
    for array in reversed(rig.diagnostics):
        for status in array.status:
            if status.name == f'{rig.node.get_name()}: centroidal checks' and status.values:
                return {kv.key: kv.value for kv in status.values} | {
                    'message': status.message,
                    'level': status.level,
                }
    return None


def _floats(text):
    return [float(x) for x in text.split()]


def test_lipm_zmp_is_published_at_the_closed_form_on_a_static_and_an_accelerating_stream(
    quadruped, quadruped_rig
):
    """Standing still: the LIPM point is the CoM ground projection. Base accelerating at
    0.5 m/s² along x (c̈_z = 0, k̇ = 0): p = c_xy − c_z c̈_xy / g, equal to the full ZMP, and
    the diagnostics carry the zero difference, cond(A_G) of the state and ‖k‖ = 0."""
    rig = quadruped_rig(marker_rate=1000.0)
    start, names, push = standing_pose(quadruped), quadruped.joint_names, 0.5
    lipm = rig.harness.collect(PointStamped, f'{rig.namespace}/centroidal/lipm_zmp', SENSOR_QOS)
    assert wait_for(
        lambda: rig.node.count_subscribers(f'{rig.namespace}/centroidal/lipm_zmp') > 0, timeout=WAIT
    )
    for k in range(12):
        rig.send(1.0 + 0.002 * k, names, STANCE, base_pose=start, base_twist=np.zeros(6))
    assert wait_for(lambda: len(lipm) >= 4 and len(rig.com) >= 12, timeout=WAIT), dict(
        rig.node.rejections.counts
    )
    com, point = rig.com[-1].point, lipm[-1]
    np.testing.assert_allclose(
        [point.point.x, point.point.y, point.point.z], [com.x, com.y, 0.0], atol=1e-9
    )
    assert point.header.frame_id == 'odom' and point.header.stamp == rig.com[-1].header.stamp
    assert wait_for(
        lambda: any(m.ns == 'lipm_zmp' and m.action == 0 for a in rig.markers for m in a.markers),
        3.0,
    )
    published = len(lipm)
    for k in range(15):
        t = 0.002 * k
        pose = start + [0.5 * push * t**2, 0, 0, 0, 0, 0, 0]
        rig.send(2.0 + t, names, STANCE, base_pose=pose, base_twist=[push * t, 0, 0, 0, 0, 0])
    assert wait_for(
        lambda: (
            len(lipm) >= published + 7
            and rig.com[-1].header.stamp.sec == 2
            and rig.com[-1].header.stamp.nanosec == 28_000_000
        ),
        timeout=WAIT,
    )
    com, point = rig.com[-1].point, lipm[-1].point
    np.testing.assert_allclose(
        [point.x, point.y, point.z], [com.x - com.z * push / G, com.y, 0.0], atol=1e-6
    )
    zmp = rig.zmp[-1].point
    np.testing.assert_allclose([point.x, point.y], [zmp.x, zmp.y], atol=1e-6)
    last_q = quadruped.configuration(STANCE, pose)
    assert wait_for(
        lambda: (
            (centroidal_checks(rig) or {}).get('lipm_zmp', 'none') != 'none'
            and abs(_floats(centroidal_checks(rig)['lipm_zmp'])[0] - point.x) < 1e-5
        ),
        timeout=3.0,
    )
    checks = centroidal_checks(rig)
    assert checks['level'] == b'\x00' and checks['friction_coefficient'] == '0.7'
    assert float(checks['lipm_minus_full_m']) < 1e-6
    np.testing.assert_allclose(_floats(checks['angular_momentum_rate_part_xy_m']), 0.0, atol=1e-6)
    np.testing.assert_allclose(_floats(checks['vertical_acceleration_part_xy_m']), 0.0, atol=1e-6)
    cond = np.linalg.cond(centroidal_momentum_matrix(quadruped, last_q))
    assert float(checks['cmm_condition_number']) == pytest.approx(cond, rel=1e-5)
    assert float(checks['angular_momentum_norm_Nms']) < 1e-9
    assert checks['flight_s'] == 'none' and checks['flight_linear_drift_Ns'] == 'none'


def test_swinging_legs_split_the_lipm_to_full_zmp_difference_as_the_analytic_momentum_rate_does(
    quadruped, quadruped_rig
):
    """Base still, hip and knee joints at ±20 rad/s²: k̇_y ≈ 2.9 N·m and c̈_z ≈ 0.5 m/s². The
    node's split (from its estimated ḣ_G) matches the split of pinocchio's analytic ḣ_G at the
    last state, and its two parts add up to LIPM − full."""
    rig = quadruped_rig()
    pose, alpha = standing_pose(quadruped), np.tile([0.0, 20.0, -20.0], 4)
    for k in range(15):
        t = 0.002 * k
        rig.send(
            3.0 + t,
            quadruped.joint_names,
            STANCE + 0.5 * alpha * t**2,
            velocities=alpha * t,
            base_pose=pose,
            base_twist=np.zeros(6),
        )
    assert wait_for(lambda: len(rig.com) >= 15, timeout=WAIT), dict(rig.node.rejections.counts)
    q, v = quadruped.configuration(STANCE + 0.5 * alpha * t**2, pose), quadruped.tangent(alpha * t)
    state, rate = (
        centroidal_state(quadruped, q, v),
        centroidal_momentum_rate(quadruped, q, v, quadruped.tangent(alpha)),
    )
    reference = compare_zero_moment_points(
        state.com, rate.com_acceleration, rate.angular, state.mass
    )
    assert wait_for(
        lambda: (
            (centroidal_checks(rig) or {}).get('lipm_zmp', 'none') != 'none'
            and abs(_floats(centroidal_checks(rig)['lipm_zmp'])[0] - reference.lipm[0]) < 1e-3
        ),
        timeout=3.0,
    )
    checks = centroidal_checks(rig)
    angular = _floats(checks['angular_momentum_rate_part_xy_m'])
    vertical = _floats(checks['vertical_acceleration_part_xy_m'])
    assert (
        reference.angular_momentum_contribution[0] > 0.01
        and reference.vertical_acceleration_contribution[0] > 5e-4
    )
    np.testing.assert_allclose(
        angular, reference.angular_momentum_contribution, rtol=0.02, atol=1e-5
    )
    np.testing.assert_allclose(
        vertical, reference.vertical_acceleration_contribution, rtol=0.02, atol=1e-5
    )
    np.testing.assert_allclose(
        _floats(checks['lipm_minus_full_xy_m']), np.add(angular, vertical), atol=2e-6
    )
    assert float(checks['lipm_minus_full_m']) == pytest.approx(reference.distance, rel=0.02)
    np.testing.assert_allclose(
        _floats(checks['full_zmp_from_momentum_rate']), reference.full, atol=2e-4
    )


def test_a_thrown_tumbling_robot_reports_momentum_drift_at_the_integration_error_and_no_lipm_zmp(
    quadruped, quadruped_rig
):
    """A free flight integrated through pinocchio (legs swinging, base tumbling, no joint
    torque) streamed as joint_states + odom: airborne, no LIPM ZMP, ‖k‖ of the last state and
    l − l₀ − m g⃗ t, k − k₀ at the integrator's error (m g t is ≈ 40 N·s here)."""
    from test_centroidal_checks import free_flight

    rig = quadruped_rig()
    lipm = rig.harness.collect(PointStamped, f'{rig.namespace}/centroidal/lipm_zmp', SENSOR_QOS)
    assert wait_for(
        lambda: rig.node.count_subscribers(f'{rig.namespace}/centroidal/lipm_zmp') > 0, timeout=WAIT
    )
    generator = np.random.default_rng(5)
    q = quadruped.configuration(STANCE, [0, 0, 1.5, 0, 0, 0, 1])
    v = quadruped.tangent(
        generator.uniform(-3, 3, quadruped.num_joints), [0.5, 0.2, 2.0, 1.0, -0.7, 0.4]
    )
    states = list(free_flight(quadruped, q, v, 0.2, 0.002))
    for t, q, v in states:
        rig.send(
            4.0 + t,
            quadruped.joint_names,
            quadruped.joint_positions(q),
            velocities=v[6:],
            base_pose=q[:7],
            base_twist=v[:6],
        )
    assert wait_for(lambda: len(rig.com) >= len(states), timeout=10.0), dict(
        rig.node.rejections.counts
    )
    assert rig.node.rejections.total() == 0, dict(rig.node.rejections.counts)
    last_k = centroidal_state(quadruped, states[-1][1], states[-1][2]).angular_momentum
    assert wait_for(
        lambda: (
            (centroidal_checks(rig) or {}).get('flight_s', 'none') != 'none'
            and float(centroidal_checks(rig)['flight_s']) > 0.15
        ),
        timeout=3.0,
    )
    checks = centroidal_checks(rig)
    assert (
        float(checks['flight_linear_drift_Ns']) < 1e-4
        and float(checks['flight_angular_drift_Nms']) < 1e-4
    )
    assert float(checks['angular_momentum_norm_Nms']) == pytest.approx(
        np.linalg.norm(last_k), rel=1e-5
    )
    assert np.linalg.norm(last_k) > 1.0
    assert checks['lipm_zmp'] == 'none' and checks['full_zmp_from_momentum_rate'] == 'none'
    assert checks['lipm_minus_full_m'] == 'none'
    assert lipm == []  # airborne from the first rate estimate on
    assert rig.balance()['airborne'] == 'True'


def test_a_contact_wrench_outside_the_friction_cone_is_flagged(quadruped, quadruped_rig):
    """Wrench route, μ = 0.4: four feet holding the weight, the left-front one also pushed
    sideways by 2 μ f_n (world x): that foot is outside its cone with margin −μ f_n, a WARN;
    the others are inside with margin μ f_n. Wrenches are sent in the (tilted) foot frames."""
    topics = [f'{foot}/wrench' for foot in FEET]
    mu = 0.4
    rig = quadruped_rig(contact_wrench_topics=topics, friction_coefficient=mu)
    pose = standing_pose(quadruped)
    q = quadruped.configuration(STANCE, pose)
    state = centroidal_state(quadruped, q, np.zeros(18))
    pin.framesForwardKinematics(quadruped.model, quadruped.data, q)
    placements = [quadruped.data.oMf[quadruped.model.getFrameId(f)] for f in FEET]
    feet = np.array([placement.translation for placement in placements])
    equations = np.vstack([np.ones(4), feet[:, 0] - state.com[0], feet[:, 1] - state.com[1]])
    vertical = np.linalg.lstsq(equations, [state.mass * G, 0.0, 0.0], rcond=None)[0]
    world_forces = np.column_stack([np.zeros(4), np.zeros(4), vertical])
    world_forces[0, 0] = 2.0 * mu * vertical[0]
    publishers = [
        rig.harness.probe.create_publisher(WrenchStamped, f'{rig.namespace}/{topic}', SENSOR_QOS)
        for topic in topics
    ]
    assert wait_for(lambda: all(p.get_subscription_count() > 0 for p in publishers), timeout=WAIT)
    for k in range(3):
        for foot, publisher, placement, force in zip(FEET, publishers, placements, world_forces):
            message = WrenchStamped()
            message.header.stamp = _stamp(2.0 + 0.002 * k)
            message.header.frame_id = foot
            local = placement.rotation.T @ force
            message.wrench.force.x, message.wrench.force.y, message.wrench.force.z = (
                float(x) for x in local
            )
            publisher.publish(message)
        time.sleep(0.01)
        rig.send(
            2.0 + 0.002 * k, quadruped.joint_names, STANCE, base_pose=pose, base_twist=np.zeros(6)
        )
    assert wait_for(
        lambda: (
            centroidal_checks(rig) is not None
            and 'lf_foot_friction' in centroidal_checks(rig)
            and centroidal_checks(rig)['lf_foot_friction'] != 'no_wrench'
        ),
        timeout=WAIT,
    ), dict(rig.node.rejections.counts)
    checks = centroidal_checks(rig)
    assert checks['level'] == b'\x01' and 'lf_foot (outside_cone)' in checks['message']
    assert checks['lf_foot_friction'] == 'outside_cone'
    assert float(checks['lf_foot_friction_margin_N']) == pytest.approx(-mu * vertical[0], rel=1e-5)
    for foot, force in zip(FEET[1:], vertical[1:]):
        assert checks[f'{foot}_friction'] == 'inside'
        assert float(checks[f'{foot}_friction_margin_N']) == pytest.approx(mu * force, rel=1e-5)


def test_zero_contact_wrenches_mean_flight_with_a_ballistic_drift_of_zero_and_unloaded_feet(
    quadruped, quadruped_rig
):
    """Wrench route with every foot wrench zero: airborne. A ballistic base motion (thrown
    up and sideways, no rotation) gives l − l₀ − m g⃗ t = 0 and k − k₀ = 0; every foot is
    'unloaded' (not judged), the status OK."""
    topics = [f'{foot}/wrench' for foot in FEET]
    rig = quadruped_rig(contact_wrench_topics=topics)
    publishers = [
        rig.harness.probe.create_publisher(WrenchStamped, f'{rig.namespace}/{topic}', SENSOR_QOS)
        for topic in topics
    ]
    assert wait_for(lambda: all(p.get_subscription_count() > 0 for p in publishers), timeout=WAIT)
    throw = np.array([0.8, -0.3, 2.5])
    for k in range(20):
        t = 0.002 * k
        stamp = 6.0 + t
        for foot, publisher in zip(FEET, publishers):
            message = WrenchStamped()
            message.header.stamp, message.header.frame_id = _stamp(stamp), foot
            publisher.publish(message)
        time.sleep(0.005)
        position = np.array([0.0, 0.0, 2.0]) + throw * t + [0.0, 0.0, -0.5 * G * t**2]
        velocity = throw + [0.0, 0.0, -G * t]
        rig.send(
            stamp,
            quadruped.joint_names,
            STANCE,
            base_pose=[*position, 0, 0, 0, 1],
            base_twist=[*velocity, 0, 0, 0],
        )
    assert wait_for(lambda: len(rig.com) >= 20, timeout=WAIT), dict(rig.node.rejections.counts)
    assert wait_for(
        lambda: (
            (centroidal_checks(rig) or {}).get('flight_s', 'none') != 'none'
            and float(centroidal_checks(rig)['flight_s']) > 0.03
        ),
        timeout=3.0,
    ), centroidal_checks(rig)
    checks = centroidal_checks(rig)
    assert (
        float(checks['flight_linear_drift_Ns']) < 1e-9
        and float(checks['flight_angular_drift_Nms']) < 1e-9
    )
    assert checks['level'] == b'\x00'
    assert all(checks[f'{foot}_friction'] == 'unloaded' for foot in FEET)
    assert rig.balance()['airborne'] == 'True' and rig.balance()['zmp_source'] == 'wrenches'


@pytest.mark.parametrize(
    'given, used', [(0.3, 0.3), (1, 1.0), (0.0, 0.7), (-0.5, 0.7), (float('nan'), 0.7)]
)
def test_friction_coefficient_must_be_positive(ros, given, used):
    node = CentroidalNode(parameter_overrides=[Parameter('friction_coefficient', value=given)])
    try:
        assert node.checks.friction_coefficient == pytest.approx(used)
    finally:
        node.destroy_node()


def _imu(stamp, frame, orientation_xyzw, gyro):
    from sensor_msgs.msg import Imu

    message = Imu()
    message.header.stamp = _stamp(stamp)
    message.header.frame_id = frame
    o = message.orientation
    o.x, o.y, o.z, o.w = (float(x) for x in orientation_xyzw)
    w = message.angular_velocity
    w.x, w.y, w.z = (float(x) for x in gyro)
    return message


@pytest.mark.parametrize('base_state', ['mounting', 'imu', 'none'])
def test_base_state_places_and_turns_a_fixed_base_arm(ros, base_state):
    """mounting: base_orientation; imu: the IMU's attitude and angular velocity; none: at
    base_pose, at rest, whatever odom says. CoM and momentum against pinocchio at that base
    state."""
    from sensor_msgs.msg import Imu

    arm = RobotModel.from_urdf_file(ARM_URDF)
    root = arm.description.root
    rpy = (0.2, -0.35, 0.9)
    attitude = Rotation.from_euler('xyz', rpy)
    gyro = np.array([0.1, -0.3, 0.2]) if base_state == 'imu' else np.zeros(3)
    position = [0.5, -0.2, 0.8]
    rig = Rig(
        ros,
        ARM_URDF.read_text(),
        world_frame='world',
        base_pose=[*position, 0.0, 0.0, 0.0, 1.0],
        base_state=base_state,
        base_orientation=list(rpy) if base_state == 'mounting' else [0.0, 0.0, 0.0],
    )
    try:
        imu_pub = rig.harness.probe.create_publisher(Imu, f'{rig.namespace}/imu', SENSOR_QOS)
        if base_state == 'imu':
            assert wait_for(lambda: imu_pub.get_subscription_count() > 0, timeout=WAIT)
        positions = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])
        for stamp in (3.0, 3.002):
            imu_pub.publish(_imu(stamp, root, attitude.as_quat(), gyro))
            rig.send(
                stamp,
                arm.joint_names,
                positions,
                base_pose=[9.0, 9.0, 9.0, 0.0, 0.0, 0.0, 1.0],  # ignored but by odom
                base_twist=[1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                frame='world',
            )
        assert wait_for(lambda: len(rig.com) >= 2 and len(rig.angular) >= 2, timeout=WAIT)
        floating = floating_base_model(arm)
        expected_attitude = attitude if base_state != 'none' else Rotation.identity()
        q = floating.configuration(positions, [*position, *expected_attitude.as_quat()])
        v = floating.tangent(np.zeros(arm.num_joints), [0.0, 0.0, 0.0, *gyro])
        expected = centroidal_state(floating, q, v)
        point, angular = rig.com[-1].point, rig.angular[-1].vector
        np.testing.assert_allclose([point.x, point.y, point.z], expected.com, atol=1e-9)
        np.testing.assert_allclose(
            [angular.x, angular.y, angular.z], expected.angular_momentum, atol=1e-9
        )
        if base_state == 'imu':
            assert np.linalg.norm(expected.angular_momentum) > 0.01  # the gyro is in it
    finally:
        rig.close()


def test_base_state_imu_waits_for_the_imu_and_counts_why(ros):
    arm = RobotModel.from_urdf_file(ARM_URDF)
    rig = Rig(ros, ARM_URDF.read_text(), world_frame='world', base_state='imu')
    try:
        # a joint state waits for the IMU of its tick until stale_timeout (0.1 s) later ones
        for stamp in (1.0, 1.05, 1.11, 1.2):
            rig.send(stamp, arm.joint_names, np.zeros(arm.num_joints))
        assert wait_for(lambda: rig.node.rejections.counts.get('no_imu', 0) >= 1, timeout=WAIT)
        assert not rig.com
    finally:
        rig.close()


def test_contact_source_force_without_contact_frames_says_so_at_start_and_in_each_rejection(
    quadruped, quadruped_rig, capfd
):
    """contact_source force and contact_frames []: no foot force can be estimated, and the start
    log and each rejection name the missing contact_frames (not the efforts)."""
    rig = quadruped_rig(contact_frames=[], contact_source='force')
    pose, counts = standing_pose(quadruped), rig.node.rejections.counts
    rig.send(1.0, quadruped.joint_names, STANCE, base_pose=pose, base_twist=np.zeros(6))
    assert wait_for(lambda: counts['no_foot_forces'] >= 1, timeout=WAIT), dict(counts)
    logged = capfd.readouterr().err
    why = 'no contact_frames given (contact_source force needs them)'
    assert f'contact_source force: {why}' in logged
    assert f'rejected input (no_foot_forces, 1 so far): no foot forces: {why}' in logged
    assert 'without efforts' not in logged


def test_with_contact_source_force_the_root_link_is_left_out_of_the_contact_frames(
    quadruped, quadruped_rig, capfd
):
    """contact_source force and contact_frames [base, lf_foot, rf_foot]: no joint torque shows a
    force on the root link, so base is left out, named with why in the log and the model status
    (WARN); the two feet go on."""
    rig = quadruped_rig(contact_frames=['base', 'lf_foot', 'rf_foot'], contact_source='force')
    why = (
        'parameter contact_frames: contact frame base is the root link (or fixed to it): no '
        'joint torque shows a force there'
    )
    assert wait_for(lambda: why in rig.message('model'), timeout=WAIT), rig.message('model')
    assert rig.level('model') == DiagnosticStatus.WARN
    assert rig.status('model')['contact_frames_left_out'] == 'base'
    assert rig.node._live.contacts.names == ('lf_foot', 'rf_foot')
    assert why in capfd.readouterr().err
