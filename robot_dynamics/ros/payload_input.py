"""dynamics_node's payload in use: ``~/set_payload``, the tool presets of ``tools_file`` chosen
by ``active_tool``, and ``~/payload`` / ``~/payload_source`` (transient local).

* ``~/set_payload`` (geometry_msgs/InertiaStamped): mass [kg], CoM [m] and inertia about the CoM
  [kg·m²] in ``header.frame_id``, a link of the model; a zero mass removes the payload.
* ``active_tool`` (runtime parameter): a tool of ``tools_file``; '' removes the payload. An
  unknown name is refused by the parameter service itself.
* Every change is built off the stream's thread and installed by one reference swap: the
  outputs use it from the next joint state on. A refused payload (negative mass, an inertia no
  rigid body has, a frame that is not a link) is logged with the reason and the previous one is
  kept.
* ``~/payload`` carries the payload in use (a zero mass when none), ``~/payload_source`` where it
  came from (``set``, ``tool <name>``, ``identified``, ``none``).
"""

from __future__ import annotations

import itertools
import threading
from typing import Callable, Optional

from geometry_msgs.msg import InertiaStamped
from rclpy.node import Node
from std_msgs.msg import Header, String

from robot_dynamics.core.errors import PayloadError
from robot_dynamics.core.live.payload_in_use import (
    PayloadInUse,
    ToolsFileError,
    checked_payload,
    inertia_matrix,
    load_tools,
)
from robot_dynamics.ros.topics import LATCHED_QOS, create_output_publisher

SET_PAYLOAD_QOS = 10


def inertia_message(link: str, parameters, stamp) -> InertiaStamped:
    """``~/payload`` for a payload on ``link`` (mass, CoM, inertia about the CoM, link frame)."""
    message = InertiaStamped()
    message.header.stamp, message.header.frame_id = stamp, link
    inertia = message.inertia
    inertia.m = float(parameters.mass)
    inertia.com.x, inertia.com.y, inertia.com.z = (float(c) for c in parameters.com)
    matrix = parameters.inertia_com
    inertia.ixx, inertia.ixy, inertia.ixz = (float(x) for x in matrix[0])
    inertia.iyy, inertia.iyz, inertia.izz = (
        float(matrix[1, 1]),
        float(matrix[1, 2]),
        float(matrix[2, 2]),
    )
    return message


class PayloadInput:
    """The payload inputs of ``node`` (module docstring). ``use(payload)`` installs a payload
    (None: none) in the live pipeline and returns None, or why it could not."""

    def __init__(
        self,
        node: Node,
        subscriber: Node,
        tools_file: str,
        payload_pub,
        use: Callable[[Optional[PayloadInUse]], Optional[str]],
    ):
        self._node, self._use, self._payload_pub = node, use, payload_pub
        self._source_pub = create_output_publisher(node, String, '~/payload_source', LATCHED_QOS)
        self._source_pub.publish(String(data='none'))  # a late subscriber learns there is none
        self._lock = threading.RLock()  # one change at a time
        self._requests = itertools.count(1)
        self._latest_request = 0  # a change asked for before it is superseded, not installed
        self._closed = False
        self.tools: dict = {}
        self.tools_problem = ''
        try:
            self.tools = load_tools(tools_file)
        except ToolsFileError as error:
            self.tools_problem = str(error)
            node.get_logger().error(f'no tools: {error}')
        subscriber.create_subscription(
            InertiaStamped,
            node.resolve_topic_name('~/set_payload'),
            self._on_set_payload,
            SET_PAYLOAD_QOS,
        )

    def is_tool(self, name: str) -> bool:
        return name == '' or name in self.tools

    def tools_listing(self) -> str:
        """The tools' names, and why there are none when tools_file could not be read."""
        listing = str(sorted(self.tools))
        return (
            f'{listing} (tools_file not loaded: {self.tools_problem})'
            if self.tools_problem
            else listing
        )

    def select_tool(self, name: str) -> None:
        """Use tool ``name`` ('' : none), built and installed on a thread of its own."""
        if name == '':
            payload = None
        else:
            tool = self.tools[name]
            payload = PayloadInUse(tool.link, tool.parameters, 'tool', name)
        request = self._latest_request = next(self._requests)
        threading.Thread(
            target=self._change, args=(payload, f'tool {name!r}', request), daemon=True
        ).start()

    def _on_set_payload(self, message: InertiaStamped) -> None:
        inertia = message.inertia
        try:
            parameters = checked_payload(
                inertia.m,
                (inertia.com.x, inertia.com.y, inertia.com.z),
                inertia_matrix(
                    inertia.ixx, inertia.ixy, inertia.ixz, inertia.iyy, inertia.iyz, inertia.izz
                ),
            )
        except PayloadError as error:
            self._node.get_logger().error(f'~/set_payload refused, previous payload kept: {error}')
            return
        payload = (
            None
            if parameters.mass == 0.0
            else PayloadInUse(message.header.frame_id, parameters, 'set')
        )
        request = self._latest_request = next(self._requests)
        self._change(payload, '~/set_payload', request)

    def _change(self, payload: Optional[PayloadInUse], what: str, request: int) -> None:
        """Install ``payload`` unless a later change was asked meanwhile (tool switches run on
        threads of their own, which take the lock in any order)."""
        with self._lock:
            if self._closed or request != self._latest_request:
                return
            problem = self._use(payload)
            if problem:
                self._node.get_logger().error(f'{what} refused, previous payload kept: {problem}')
                return
            self.publish(payload)

    def publish(self, payload: Optional[PayloadInUse]) -> None:
        """``~/payload`` (none: a zero mass, as ``~/set_payload`` removes one) and
        ``~/payload_source`` for ``payload``; nothing once closed."""
        with self._lock:
            if self._closed:
                return
            stamp = self._node.get_clock().now().to_msg()
            if payload is None:
                self._payload_pub.publish(InertiaStamped(header=Header(stamp=stamp)))
            else:
                self._payload_pub.publish(inertia_message(payload.link, payload.parameters, stamp))
            self._source_pub.publish(String(data=payload.describe() if payload else 'none'))

    def publish_identified(self, message: InertiaStamped) -> None:
        """``~/payload`` ``message``, an identified payload just installed, and its source."""
        with self._lock:
            if self._closed:
                return
            self._payload_pub.publish(message)
            self._source_pub.publish(String(data='identified'))

    def close(self) -> None:
        """No payload is installed or published once this returns (a change under way on a tool
        selection's thread finishes first): called before the node's publishers are destroyed."""
        with self._lock:
            self._closed = True
