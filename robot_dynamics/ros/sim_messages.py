"""sim_robot's outputs on the MuJoCo engine: one :class:`SceneSample` → its ROS messages
(joint state, odometry, IMU, F/T sensor, truth topics), all stamped with the sample's stamp.

Frames: ``world_frame`` for world quantities (CoM, CoP, poses; contact wrenches in world axes
about the link origin), the root link for odometry twists and the IMU, the payload link for
the F/T sensor and the payload.
"""

from __future__ import annotations

from builtin_interfaces.msg import Time
from geometry_msgs.msg import InertiaStamped, PointStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState

from robot_dynamics.ros.topics import SENSOR_QOS, create_output_publisher
from robot_dynamics.simulation.scenes import ArmScene, LeggedScene, SceneSample


def _vector(target, values) -> None:
    target.x, target.y, target.z = (float(x) for x in values[:3])


def _wrench(stamp: Time, frame: str, force, moment) -> WrenchStamped:
    message = WrenchStamped()
    message.header.stamp, message.header.frame_id = stamp, frame
    _vector(message.wrench.force, force)
    _vector(message.wrench.torque, moment)
    return message


def _point(stamp: Time, frame: str, values) -> PointStamped:
    message = PointStamped()
    message.header.stamp, message.header.frame_id = stamp, frame
    message.point.x, message.point.y, message.point.z = (float(x) for x in values[:3])
    return message


def _odometry(stamp: Time, world: str, base: str, pose, twist) -> Odometry:
    message = Odometry(child_frame_id=base)
    message.header.stamp, message.header.frame_id = stamp, world
    position, orientation = message.pose.pose.position, message.pose.pose.orientation
    position.x, position.y, position.z = (float(x) for x in pose[:3])
    orientation.x, orientation.y, orientation.z, orientation.w = (float(x) for x in pose[3:])
    _vector(message.twist.twist.linear, twist[:3])
    _vector(message.twist.twist.angular, twist[3:])
    return message


def _joints(stamp: Time, names, efforts) -> JointState:
    message = JointState(name=list(names), effort=[float(x) for x in efforts])
    message.header.stamp = stamp
    return message


class SceneOutputs:
    """The publishers of a MuJoCo scene (topics in sim_robot's docstring) and their messages."""

    def __init__(self, node: Node, scene, world_frame: str):
        self.node, self.scene, self.world = node, scene, world_frame
        self.base = scene.description.root
        self.joint_names = list(scene.nominal.joint_names)
        self.arm = isinstance(scene, ArmScene)

        def publisher(kind, topic):
            return create_output_publisher(node, kind, topic, SENSOR_QOS)

        self.odom = publisher(Odometry, 'odom')
        self.imu = publisher(Imu, '~/imu')
        self.ft = publisher(WrenchStamped, 'ft_sensor') if self.arm else None
        self.truth = {
            name: publisher(kind, f'~/{name}')
            for name, kind in (
                ('true_cop', PointStamped),
                ('true_com', PointStamped),
                ('true_payload', InertiaStamped),
                ('true_friction_torques', JointState),
                ('true_rotor_torques', JointState),
                ('true_base_state', Odometry),
            )
        }
        self.contacts = {}
        for link in (
            scene.robot.feet if isinstance(scene, LeggedScene) else ()
        ):  # lifted feet publish zeros
            self._contact_publisher(link)

    def _contact_publisher(self, link: str):
        if link not in self.contacts:
            self.contacts[link] = create_output_publisher(
                self.node, WrenchStamped, f'~/true_contact_wrenches/{link}', SENSOR_QOS
            )
        return self.contacts[link]

    def publish(self, sample: SceneSample, stamp: Time) -> None:
        """Every output of ``sample`` but joint_states and the external-wrench truth."""
        truth = sample.truth
        if self.odom.get_subscription_count():
            self.odom.publish(
                _odometry(stamp, self.world, self.base, sample.odom_pose, sample.odom_twist)
            )
        if self.imu.get_subscription_count():
            self.imu.publish(self._imu(sample, stamp))
        if self.ft is not None and sample.ft_wrench is not None:
            self.ft.publish(
                _wrench(stamp, self.scene.payload_link, sample.ft_wrench[:3], sample.ft_wrench[3:])
            )
        for link in truth.contact_wrenches:
            self._contact_publisher(link)
        for link, publisher in self.contacts.items():
            wrench = truth.contact_wrenches.get(link)
            force, moment = (
                ((0.0,) * 3, (0.0,) * 3) if wrench is None else (wrench.force, wrench.moment)
            )
            publisher.publish(_wrench(stamp, self.world, force, moment))
        publishers = self.truth
        if truth.center_of_pressure is not None and publishers['true_cop'].get_subscription_count():
            publishers['true_cop'].publish(_point(stamp, self.world, truth.center_of_pressure))
        if publishers['true_com'].get_subscription_count():
            publishers['true_com'].publish(_point(stamp, self.world, truth.center_of_mass))
        if self.arm and publishers['true_payload'].get_subscription_count():
            publishers['true_payload'].publish(self._payload(truth.payload, stamp))
        for name, values in (
            ('true_friction_torques', truth.friction_torques),
            ('true_rotor_torques', truth.rotor_torques),
        ):
            if publishers[name].get_subscription_count():
                publishers[name].publish(_joints(stamp, self.joint_names, values))
        if publishers['true_base_state'].get_subscription_count():
            publishers['true_base_state'].publish(
                _odometry(stamp, self.world, self.base, truth.base_pose, truth.base_twist)
            )

    def _imu(self, sample: SceneSample, stamp: Time) -> Imu:
        message = Imu()
        message.header.stamp, message.header.frame_id = stamp, self.base
        orientation = message.orientation
        orientation.x, orientation.y, orientation.z, orientation.w = (
            float(x) for x in sample.imu.orientation
        )
        _vector(message.angular_velocity, sample.imu.angular_velocity)
        _vector(message.linear_acceleration, sample.imu.specific_force)
        sensors = self.scene.true_robot.profile.sensors
        for index in (0, 4, 8):
            message.angular_velocity_covariance[index] = sensors.gyro_noise**2
            message.linear_acceleration_covariance[index] = sensors.accelerometer_noise**2
        return message

    def _payload(self, payload, stamp: Time) -> InertiaStamped:
        message = InertiaStamped()
        message.header.stamp, message.header.frame_id = stamp, self.scene.payload_link
        if payload is not None:
            inertia = message.inertia
            inertia.m = float(payload.mass)
            _vector(inertia.com, payload.com)
            tensor = payload.inertia_com
            inertia.ixx, inertia.ixy, inertia.ixz = (float(x) for x in tensor[0])
            inertia.iyy, inertia.iyz, inertia.izz = (
                float(tensor[1, 1]),
                float(tensor[1, 2]),
                float(tensor[2, 2]),
            )
        return message
