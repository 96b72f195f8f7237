"""relay: subscribes ``joint_states`` and republishes every message unchanged on
``relayed_joint_states`` — the do-nothing baseline of the latency benchmarks."""
from __future__ import annotations

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from sensor_msgs.msg import JointState

from robot_dynamics.ros.common import SENSOR_QOS


class RelayNode(Node):
    def __init__(self, node_name: str = 'relay', **kwargs):
        super().__init__(node_name, **kwargs)
        publisher = self.create_publisher(JointState, 'relayed_joint_states', SENSOR_QOS)
        self.create_subscription(JointState, 'joint_states', publisher.publish, SENSOR_QOS)


def main(args=None) -> None:
    rclpy.init(args=args)
    node = RelayNode()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
