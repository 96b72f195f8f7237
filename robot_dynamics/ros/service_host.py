"""The companion node that serves a node's services from its own executor thread."""

from __future__ import annotations

import rclpy
from rclpy.node import Node


class ServiceHost:
    """A companion node that serves ``owner``'s services from its own executor thread, so a
    long service (identification, validation) never delays the owner's topic stream.

    Service names resolve against the owner: ``~/identify_payload`` on node ``dynamics`` is
    ``/dynamics/identify_payload``, exactly as if the owner served it.
    """

    def __init__(self, owner: Node):
        self.owner = owner
        name, namespace = f'{owner.get_name()}_services', owner.get_namespace()
        # Node-local remaps take precedence over the process's global ones: without them the
        # global `-r __node:=dynamics` that `ros2 launch` passes would name this node `dynamics`
        # too.
        self.node = rclpy.create_node(
            name,
            namespace=namespace,
            context=owner.context,
            cli_args=['--ros-args', '-r', f'__node:={name}', '-r', f'__ns:={namespace}'],
            start_parameter_services=False,
        )

    def create_service(self, service_type, name: str, handler):
        return self.node.create_service(
            service_type, self.owner.resolve_service_name(name), handler
        )
