"""relay: subscribes ``joint_states`` and republishes every message unchanged on
``relayed_joint_states`` — the do-nothing baseline of the latency benchmarks.

It is built from the same pieces as the nodes it is compared with, so that a latency ratio
measures their work and nothing else: the same input QoS (:data:`JOINT_STATE_QOS`), a
publisher without rclpy's default event handlers (:func:`create_output_publisher`) on the
nodes' output QoS, and the same spin (:func:`~robot_dynamics.ros.spinning.run_nodes`:
the EventsExecutor where rclpy has it, frozen garbage collector, short thread switch interval)."""

from __future__ import annotations

from rclpy.node import Node
from sensor_msgs.msg import JointState

from robot_dynamics.ros.spinning import run_nodes
from robot_dynamics.ros.topics import JOINT_STATE_QOS, SENSOR_QOS, create_output_publisher


class RelayNode(Node):
    def __init__(self, node_name: str = 'relay', **kwargs):
        super().__init__(node_name, **kwargs)
        publisher = create_output_publisher(self, JointState, 'relayed_joint_states', SENSOR_QOS)
        self.create_subscription(JointState, 'joint_states', publisher.publish, JOINT_STATE_QOS)


def main(args=None) -> None:
    run_nodes(lambda: [RelayNode()], args, program='relay')


if __name__ == '__main__':
    main()
