"""bare_relay: the relay a user would write in ten lines — subscribe ``joint_states``,
republish every message unchanged on ``relayed_joint_states`` — with rclpy's defaults
throughout (a depth-100 reliable subscription and publisher, default event handlers,
``rclpy.spin``). It is the latency and CPU baseline `robot_dynamics bench` compares the nodes
with: what a node costs over doing nothing in plain rclpy."""

from __future__ import annotations

import rclpy
from rclpy.executors import ExternalShutdownException
from sensor_msgs.msg import JointState


def main(args=None) -> None:
    rclpy.init(args=args)
    node = rclpy.create_node('bare_relay')
    publisher = node.create_publisher(JointState, 'relayed_joint_states', 100)
    node.create_subscription(JointState, 'joint_states', publisher.publish, 100)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):  # Ctrl-C or SIGTERM: a clean exit
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
