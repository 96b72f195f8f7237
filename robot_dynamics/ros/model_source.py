"""Where a node's robot model comes from, and how a new one replaces it while the node runs.

Model source precedence: the ``robot_description`` parameter when non-empty, else
``urdf_file`` when non-empty, else the ``robot_description`` topic (std_msgs/String,
reliable + transient local, as robot_state_publisher publishes it). A new description
replaces the model while the node runs (hot swap); an invalid one is rejected with the
reason and the last good model stays.

A description from the topic is kept off the node's torque stream:

* it is received by a subscription of the node's companion node
  (:class:`~robot_dynamics.ros.common.ServiceHost`), whose executor has its own thread, as the
  serialized message: one longer than ``MAX_DESCRIPTION_BYTES`` is refused by its length and
  never turned into a Python string;
* it is parsed, checked and built on a builder thread of its own, and the node installs the
  new model with one reference swap between two stream messages;
* a description longer than :data:`IN_PROCESS_LIMIT` is first checked in a checker process
  (:class:`DescriptionChecker`): parsing XML and building a pinocchio model hold the
  interpreter lock for their whole duration (about 0.1 µs per character), which no thread
  of the node may do for long. Only a description the checker found usable is built again
  in the node.

What stays in the node's process: rclpy holds the interpreter lock while it takes a message
from the middleware, for a time that grows with the message's size, so a message of tens of
megabytes still pauses the stream while it is taken (on any thread).
"""
from __future__ import annotations

import functools
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Optional

from rclpy.node import Node
from rclpy.serialization import deserialize_message
from std_msgs.msg import String

from robot_dynamics.core.errors import DescriptionError
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.model.urdf import MAX_DESCRIPTION_BYTES, MAX_MOVING_JOINTS, read_description_file
from robot_dynamics.ros.common import (DESCRIPTION_QOS, RateLimitedLogger, checked_parameter, gravity_parameter,
                                       shorten)

IN_PROCESS_LIMIT = 128 * 1024
"""Characters up to which a description is parsed and built in the node directly (a typical
arm is ~12 000 characters); a longer one is checked in the checker process first. One longer
than ``MAX_DESCRIPTION_BYTES`` is refused at once."""

CHECK_TIMEOUT = 60.0
"""Seconds the checker may take for one description (its start-up included) before the
description is refused and the checker stopped."""

CHECKER_NICENESS = 10
"""CPU priority of the checker process once it has started: below the torque stream, but not
the lowest (at niceness 19, other CPU-bound work on the machine can starve a check for many
seconds)."""


def usable_model(text: str, root_joint: str, gravity, max_joints: int) -> RobotModel:
    """The model of URDF ``text``; raises :class:`DescriptionError` or ValueError saying why
    the node cannot use it (also when it has no moving joints: nothing to compute from
    joint_states). ``gravity`` [m/s²] in the world frame."""
    robot = RobotModel.from_urdf_string(text, root_joint, gravity, max_moving_joints=max_joints)
    if robot.num_joints == 0:
        raise DescriptionError(f'robot "{shorten(robot.name, 60)}" has no moving joints: nothing to compute from '
                               'joint_states')
    return robot


def description_problem(text: str, root_joint: str, gravity, max_joints: int) -> str:
    """'' when :func:`usable_model` accepts ``text``, else the reason it refuses it."""
    try:
        usable_model(text, root_joint, gravity, max_joints)
    except (DescriptionError, ValueError) as error:
        return str(error)
    return ''


def serve_checks() -> None:
    """The checker process's loop: per request, a JSON header line (``root_joint``, ``gravity``,
    ``max_joints``, ``length`` in bytes) then the UTF-8 text; per answer, a JSON line
    ``{"problem": reason or ""}``. Ends when its input closes (also when the node dies)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the node's whole process group
    try:
        os.setpriority(os.PRIO_PROCESS, 0, CHECKER_NICENESS)
    except OSError:
        pass
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = requests.readline()
        if not header:
            return
        request = json.loads(header)
        text = requests.read(request['length']).decode('utf-8', 'surrogatepass')
        problem = description_problem(text, request['root_joint'], request['gravity'], request['max_joints'])
        answers.write(json.dumps({'problem': problem}).encode() + b'\n')
        answers.flush()


class DescriptionChecker:
    """A process that checks descriptions with :func:`description_problem`, so that their XML
    parse and pinocchio build never hold this process's interpreter lock. Started by :meth:`start`
    or the first check (~1 s of CPU to import, ~100 MB), kept, and restarted after a crash or a
    timeout. It ends when this process closes its input, or dies."""

    def __init__(self, timeout: float = CHECK_TIMEOUT):
        self.timeout = timeout
        self._process: Optional[subprocess.Popen] = None
        self._lock = threading.Lock()

    def problem(self, text: str, root_joint: str, gravity, max_joints: int) -> str:
        """'' when ``text`` gives a usable model, else the reason (also when the check failed)."""
        data = text.encode('utf-8', 'surrogatepass')
        header = json.dumps({'root_joint': root_joint, 'gravity': list(gravity), 'max_joints': max_joints,
                             'length': len(data)}).encode() + b'\n'
        with self._lock:
            try:
                process = self._started()
                process.stdin.write(header)
                process.stdin.write(data)
                process.stdin.flush()
                return json.loads(self._answer(process))['problem']
            except (OSError, ValueError, KeyError, TimeoutError) as error:
                self._stop()
                return f'the description could not be checked ({error}); the checker is restarted for the next one'

    def start(self) -> None:
        """Start the process now (it is otherwise started by the first check)."""
        with self._lock:
            self._started()

    def _started(self) -> subprocess.Popen:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, '-c', 'from robot_dynamics.ros.model_source import serve_checks; serve_checks()'],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        return self._process

    def _answer(self, process: subprocess.Popen) -> bytes:
        deadline = time.monotonic() + self.timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f'no answer within {self.timeout:g} s')
            readable, _, _ = select.select([process.stdout], [], [], remaining)
            if readable:
                line = process.stdout.readline()
                if not line:
                    raise OSError(f'the checker process exited (code {process.wait()})')
                return line

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def close(self) -> None:
        """Stop the checker process (idempotent)."""
        self._stop()


_CDR_OVERHEAD = 16
"""Bytes of a serialized std_msgs/String beyond its text (encapsulation, length, terminator, padding)."""


class _Refused(str):
    """A description refused before it was built: the reason."""


class _LatestDescription:
    """The description waiting for the builder thread (a serialized message, or a
    :class:`_Refused`): a newer one replaces it, like the topic's keep-last-1 QoS, so a burst
    never queues large strings."""

    def __init__(self):
        self._condition = threading.Condition()
        self._item = None
        self._closed = False

    def put(self, item) -> None:
        with self._condition:
            self._item = item
            self._condition.notify()

    def take(self):
        """The next description (blocks); None once closed."""
        with self._condition:
            while self._item is None and not self._closed:
                self._condition.wait()
            item, self._item = self._item, None
            return None if self._closed else item

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        with self._condition:
            self._closed = True
            self._condition.notify_all()


class ModelSource:
    """Owns the node's current :class:`RobotModel` and rebuilds it when a description arrives.

    ``on_model(robot)`` is called with each new model, from the builder thread for a
    description from the topic (the node swaps one reference to an immutable bundle; the old
    model is never mutated). Declares the parameters ``robot_description``, ``urdf_file``,
    ``root_joint``, ``gravity`` and ``max_joints``, all read-only once the node runs (they are
    read once; a new model comes from the topic). A description without moving joints is
    refused. Call :meth:`close` when the node is destroyed.
    """

    def __init__(self, node: Node, on_model: Callable[[RobotModel], None], callback_group=None,
                 gravity_check: Optional[tuple] = None, intake_node: Optional[Node] = None):
        """``gravity_check`` = (is_valid, requirement): what the node needs of the gravity
        vector beyond three finite numbers (centroidal_node: along −z of the world).
        ``intake_node`` receives the topic (default ``node``, in ``callback_group``): the node's
        companion, so that taking a large message never runs on the stream's executor."""
        self._node = node
        self._on_model = on_model
        self._log = RateLimitedLogger(node.get_logger(), period=1.0)
        checked = functools.partial(checked_parameter, node)
        self.max_joints = checked('max_joints', MAX_MOVING_JOINTS, 'descriptions with more moving joints are refused '
                                  '(model memory grows ~cubically with joints)', lambda count: count >= 1,
                                  'is not at least 1')
        self.root_joint = checked('root_joint', 'fixed', "'fixed' (arm on a table) or 'floating' (free-flyer base)",
                                  ('fixed', 'floating').__contains__, "is neither 'fixed' nor 'floating'")
        self.gravity = gravity_parameter(node, *(gravity_check or ()))
        self.robot: Optional[RobotModel] = None
        self.swaps = 0
        self.rejected = 0
        self.last_error = ''
        self._current_text: Optional[str] = None
        self._waiting = _LatestDescription()
        self._builder: Optional[threading.Thread] = None
        self._checker: Optional[DescriptionChecker] = None
        description = checked('robot_description', '', 'URDF text; when set it overrides the robot_description '
                              'topic and urdf_file')
        urdf_file = checked('urdf_file', '', 'path of a URDF file used when robot_description is empty')
        self.source = 'parameter' if description else ('file' if urdf_file else 'topic')
        if description:
            self.load(description)
        elif urdf_file:
            try:
                self.load(read_description_file(urdf_file))
            except DescriptionError as error:  # missing, a directory, unreadable, too large, not UTF-8, invalid
                self._reject(f'urdf_file {urdf_file}: {error}')
        else:
            self._subscribe(intake_node, callback_group)

    def _subscribe(self, intake_node: Optional[Node], callback_group) -> None:
        self._checker = DescriptionChecker()
        self._builder = threading.Thread(target=self._build_descriptions, name='model_source', daemon=True)
        self._builder.start()
        intake = intake_node or self._node
        # Resolved against the owner, so its remappings apply to the companion's subscription too.
        topic = self._node.resolve_topic_name('robot_description')
        intake.create_subscription(String, topic, self._on_description, DESCRIPTION_QOS,
                                   callback_group=callback_group if intake is self._node else None, raw=True)

    def _on_description(self, serialized: bytes) -> None:
        """Intake thread: hand the message over to the builder thread, or its refusal when it
        is too long to be a description (without decoding it)."""
        if len(serialized) > MAX_DESCRIPTION_BYTES + _CDR_OVERHEAD:
            self._waiting.put(_Refused(f'robot description message is {len(serialized)} bytes, over the '
                                       f'{MAX_DESCRIPTION_BYTES}-byte limit'))
        else:
            self._waiting.put(serialized)

    def _build_descriptions(self) -> None:
        """Builder thread: load each description handed over by :meth:`_on_description`."""
        while True:
            item = self._waiting.take()
            if item is None:
                return
            try:
                if isinstance(item, _Refused):
                    self._reject(str(item))
                elif self.load(deserialize_message(item, String).data) and self.swaps == 1:
                    self._checker.start()  # imported by the time a large one comes
            except Exception as error:  # a node never dies from a message
                self._reject(f'unexpected error while loading the description: {error!r}')

    def load(self, text: str) -> bool:
        """Build a model from URDF text; on failure keep the last good model. Returns success."""
        if text == self._current_text:
            return True
        if self._waiting.closed:
            return False
        problem = self._checked_apart(text)
        if problem:
            self._reject(problem)
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
        return True

    def _checked_apart(self, text: str) -> str:
        """'' or why the checker refuses ``text``; '' without asking it when the node may parse
        ``text`` itself: it is short, refused at once for its length, or no model is in use yet
        (no stream to hold up)."""
        if self._checker is None or self.robot is None or not IN_PROCESS_LIMIT < len(text) <= MAX_DESCRIPTION_BYTES:
            return ''
        return self._checker.problem(text, self.root_joint, self.gravity, self.max_joints)

    def _reject(self, reason: str) -> None:
        self.rejected += 1
        self.last_error = shorten(reason, 500)
        kept = f'keeping model "{self.robot.name}"' if self.robot else 'no model loaded yet'
        self._log.error('description', f'robot description rejected ({kept}): {reason}')

    def close(self) -> None:
        """Stop the builder thread and the checker process (idempotent)."""
        self._waiting.close()
        if self._checker is not None:
            self._checker.close()
        if self._builder is not None and self._builder is not threading.current_thread():
            self._builder.join(timeout=1.0)
