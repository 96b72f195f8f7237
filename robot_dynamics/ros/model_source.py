"""Where a node's robot model comes from, and how a new one replaces it while the node runs.

Model source precedence: the ``robot_description`` parameter when non-empty, else
``urdf_file`` when non-empty, else the ``robot_description`` topic (std_msgs/String,
reliable + transient local, as robot_state_publisher publishes it). A new description
replaces the model while the node runs (hot swap); an invalid one is rejected with the
reason and the last good model stays.

A description from the topic never enters the node's process until it is known to be usable:

* it is received, size-limited and checked by the description listener, a process of its own
  (:mod:`robot_dynamics.ros.description_listener`, node ``<node>_description_listener``):
  taking a message of tens of megabytes from the middleware, parsing XML and building a
  pinocchio model hold the interpreter lock for their whole duration, which no thread of a
  node streaming torques may do for long;
* the listener sends only an accepted URDF's text (or the reason it refused one); the node
  builds the model on the listener's reader thread and installs it with one reference swap
  between two stream messages (the node's lock is held only for that swap).

What stays in the node's process for an accepted description: its build (XML parse and
pinocchio model, about 1 ms for a 7-joint arm, 20–100 ms for a 100-joint robot, mostly in
calls that hold the interpreter lock).
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Mapping, Optional

from rclpy.node import Node

from robot_dynamics.core.errors import DescriptionError
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.model.urdf import MAX_MOVING_JOINTS, read_description_file
from robot_dynamics.ros.description_listener import (
    DescriptionListener,
    ListenerSettings,
    listener_node_name,
    usable_model,
)
from robot_dynamics.ros.node_log import RateLimitedLogger, shorten
from robot_dynamics.ros.parameter_schema import GRAVITY, ParameterSpec

MODEL_SOURCE_PARAMETERS = (
    ParameterSpec(
        'robot_description',
        '',
        'URDF text; when set it overrides the robot_description topic and urdf_file',
    ),
    ParameterSpec('urdf_file', '', 'path of a URDF file used when robot_description is empty'),
    ParameterSpec(
        'root_joint',
        'fixed',
        "'fixed' (arm on a table) or 'floating' (free-flyer base)",
        choices=('fixed', 'floating'),
    ),
    GRAVITY,
    ParameterSpec(
        'max_joints',
        MAX_MOVING_JOINTS,
        'descriptions with more moving joints are refused (model memory grows ~cubically with '
        'joints)',
        low=1,
    ),
)
"""The parameters of a node's model source (rows of its parameter table)."""


def process_age_s() -> float:
    """Seconds since this process started (Linux /proc; 10 ms resolution)."""
    with open('/proc/self/stat', encoding='ascii') as stat:
        start_ticks = int(stat.read().rsplit(')', 1)[1].split()[19])
    with open('/proc/uptime', encoding='ascii') as uptime:
        return float(uptime.read().split()[0]) - start_ticks / os.sysconf('SC_CLK_TCK')


class ModelSource:
    """Owns the node's current :class:`RobotModel` and rebuilds it when a description arrives.

    ``on_model(robot)`` is called with each new model, from the listener's reader thread for a
    description from the topic (the node swaps one reference to an immutable bundle; the old
    model is never mutated). Reads the parameters of :data:`MODEL_SOURCE_PARAMETERS`, all
    read-only once the node runs (they are read once; a new model comes from the topic). A
    description without moving joints is refused. Call :meth:`close` when the node is destroyed.
    """

    def __init__(
        self, node: Node, on_model: Callable[[RobotModel], None], parameters: Mapping[str, Any]
    ):
        """``parameters``: the node's values of :data:`MODEL_SOURCE_PARAMETERS` (declared from
        the node's table)."""
        self._node = node
        self._on_model = on_model
        self._log = RateLimitedLogger(node.get_logger(), period=1.0)
        self.max_joints = parameters['max_joints']
        self.root_joint = parameters['root_joint']
        self.gravity = parameters['gravity']
        self.robot: Optional[RobotModel] = None
        self.swaps = 0
        self.first_model_after_s: Optional[float] = None
        """Seconds from this process's start to its first model in use (start-up time)."""
        self.rejected = 0
        self.last_error = ''
        self._current_text: Optional[str] = None
        self._closed = threading.Event()
        self.listener: Optional[DescriptionListener] = None
        description, urdf_file = parameters['robot_description'], parameters['urdf_file']
        self.source = 'parameter' if description else ('file' if urdf_file else 'topic')
        if description:
            self.load(description)
        elif urdf_file:
            try:
                self.load(read_description_file(urdf_file))
            except (
                DescriptionError
            ) as error:  # missing, a directory, unreadable, too large, not UTF-8, invalid
                self._reject(f'urdf_file {urdf_file}: {error}')
        else:
            self.listener = DescriptionListener(
                self._listener_settings(), self._on_accepted, self._reject
            )

    def _listener_settings(self) -> ListenerSettings:
        node = self._node
        # Resolved here, so the node's remappings apply to the listener's subscription too.
        return ListenerSettings(
            topic=node.resolve_topic_name('robot_description'),
            node_name=listener_node_name(node.get_name()),
            namespace=node.get_namespace(),
            root_joint=self.root_joint,
            gravity=tuple(float(g) for g in self.gravity),
            max_joints=int(self.max_joints),
        )

    def _on_accepted(self, text: str) -> None:
        """Reader thread: build and install a description the listener accepted."""
        try:
            self.load(text)
        except Exception as error:  # a node never dies from a message
            self._reject(f'unexpected error while loading the description: {error!r}')

    def load(self, text: str) -> bool:
        """Build a model from URDF text; on failure keep the last good model. Returns success."""
        if text == self._current_text:
            return True
        if self._closed.is_set():
            return False
        try:
            robot = usable_model(text, self.root_joint, self.gravity, self.max_joints)
        except (DescriptionError, ValueError) as error:
            self._reject(str(error))
            return False
        self._current_text = text
        self.robot = robot
        self.swaps += 1
        self._node.get_logger().info(f'model loaded: {robot!r}')
        for warning in robot.warnings:
            self._node.get_logger().warning(f'robot description: {warning}')
        self._on_model(robot)
        if self.first_model_after_s is None:
            self.first_model_after_s = process_age_s()
        return True

    def _reject(self, reason: str) -> None:
        self.rejected += 1
        self.last_error = shorten(reason, 500)
        kept = f'keeping model "{self.robot.name}"' if self.robot else 'no model loaded yet'
        self._log.error('description', f'robot description rejected ({kept}): {reason}')

    def close(self) -> None:
        """Stop the description listener process (idempotent)."""
        self._closed.set()
        if self.listener is not None:
            self.listener.close()
