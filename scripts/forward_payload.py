#!/usr/bin/env python3
"""Forward dynamics_node's payload in use (``~/payload``) to a robot driver.

Usage (where the driver's message packages are installed; not a robot_dynamics dependency):

    scripts/forward_payload.py ur|franka [--payload /dynamics/payload] [--service NAME]

(default services: ur /io_and_status_controller/set_payload, franka /service_server/set_load)

``ur``: ur_msgs/srv/SetPayload (mass [kg], center_of_gravity [m] in the tool flange frame);
``franka``: franka_msgs/srv/SetLoad (mass [kg], center_of_mass [m] and load_inertia [kg·m²,
row-major 3×3] in the flange frame). ``~/payload`` is in the frame its header names: publish it in
the driver's flange frame (set ``payload_link`` / the tool's ``link`` to that frame).
"""

import argparse
import sys

import rclpy
from geometry_msgs.msg import InertiaStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

DEFAULT_SERVICES = {
    'ur': '/io_and_status_controller/set_payload',
    'franka': '/service_server/set_load',
}


def ur_request(message: InertiaStamped):
    from ur_msgs.srv import SetPayload

    request = SetPayload.Request()
    request.mass = float(message.inertia.m)
    request.center_of_gravity = message.inertia.com
    return SetPayload, request


def franka_request(message: InertiaStamped):
    from franka_msgs.srv import SetLoad

    i = message.inertia
    request = SetLoad.Request()
    request.mass = float(i.m)
    request.center_of_mass = [i.com.x, i.com.y, i.com.z]
    request.load_inertia = [i.ixx, i.ixy, i.ixz, i.ixy, i.iyy, i.iyz, i.ixz, i.iyz, i.izz]
    return SetLoad, request


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('driver', choices=('ur', 'franka'))
    parser.add_argument('--payload', default='/dynamics/payload')
    parser.add_argument('--service')
    args = parser.parse_args()
    build = ur_request if args.driver == 'ur' else franka_request
    rclpy.init()
    node = rclpy.create_node('forward_payload')
    latched = QoSProfile(
        depth=1,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )
    clients = {}

    def forward(message: InertiaStamped) -> None:
        service_type, request = build(message)
        name = args.service or DEFAULT_SERVICES[args.driver]
        client = clients.get(name) or clients.setdefault(
            name, node.create_client(service_type, name)
        )
        if not client.wait_for_service(timeout_sec=5.0):
            node.get_logger().error(f'{name} is not available: payload not forwarded')
            return
        client.call_async(request)
        node.get_logger().info(f'forwarded {message.inertia.m:.3f} kg on {message.header.frame_id}')

    node.create_subscription(InertiaStamped, args.payload, forward, latched)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
