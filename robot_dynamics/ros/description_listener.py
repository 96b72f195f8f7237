"""The robot_description listener: a process of its own that subscribes to a node's
robot_description topic, so that a large or hostile description never enters the node's
process.

Taking a message from the middleware, parsing XML and building a pinocchio model all hold
the Python interpreter lock for their whole duration (a 50 MB std_msgs/String costs tens to
hundreds of milliseconds just to be taken), which no thread of a node streaming torques at
1 kHz may do. So the listener process (node ``<owner>_description_listener`` in the owner's
namespace, with its own rclpy context and the same ROS environment):

* subscribes with the description QoS (reliable + transient local);
* refuses a message longer than ``MAX_DESCRIPTION_BYTES`` by its length, without decoding it;
* checks the text exactly as the node would build it (:func:`description_problem`);
* sends the node only what the node needs, on a pipe: an accepted URDF's text (a repeat of the
  last accepted one is not sent again), or the reason a description was refused.

The node side (:class:`DescriptionListener`) starts the process from a reader thread that lives
as long as the listener (the kernel's parent-death signal is tied to the forking thread),
hands each accepted text and each refusal to callbacks on that thread, and restarts the process
if it crashes (a description it crashed on is reported as refused). The process ends when the
node closes its input, when the node dies (end of input and a SIGTERM from the kernel) or on
SIGTERM; it ignores SIGINT, which a terminal's Ctrl-C sends to the node's whole process group:
the node then stops it.

Protocol, listener → node: per item one JSON line, ``{"ready": true}`` once subscribed,
``{"accepted": <bytes>}`` followed by that many bytes of UTF-8 URDF, or ``{"refused": reason}``.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from typing import BinaryIO, Callable, Optional

from robot_dynamics.core.errors import DescriptionError
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.model.urdf import MAX_DESCRIPTION_BYTES, TooManyJoints
from robot_dynamics.ros.child_process import start_child_process
from robot_dynamics.ros.dds_files import dds_files_of, remove_unused_dds_files
from robot_dynamics.ros.node_log import shorten

LISTENER_NODE_SUFFIX = '_description_listener'
"""The listener's node name is the owner's name with this suffix
(``dynamics_description_listener``)."""

LISTENER_NICENESS = 10
"""CPU niceness of the listener process, every thread included (set before it starts: on Linux
a nice value is per thread, and the middleware's receive threads, which take a 50 MB message, would
otherwise keep the node's): below the torque stream, but not the lowest
(at niceness 19, other CPU-bound work on the machine can starve a check for many seconds)."""

STOP_TIMEOUT = 10.0
"""Seconds the listener may take to end cleanly once asked (a check in progress finishes
first) before it is killed; one second before, a listener still running writes its threads'
stacks to stderr (the node's log) and exits with status 1."""

RESTART_DELAYS = (1.0, 60.0)
"""Seconds before the first restart of a crashed listener, and the most it doubles up to
(a description that crashes the parser is received again by the restarted listener)."""

CDR_OVERHEAD = 16
"""Bytes of a serialized std_msgs/String beyond its text (encapsulation, length, terminator,
padding)."""


def usable_model(text: str, root_joint: str, gravity, max_joints: int) -> RobotModel:
    """The model of URDF ``text``; raises :class:`DescriptionError` or ValueError saying why
    the node cannot use it (also when it has no moving joints: nothing to compute from
    joint_states). ``gravity`` [m/s²] in the world frame."""
    try:
        robot = RobotModel.from_urdf_string(text, root_joint, gravity, max_moving_joints=max_joints)
    except TooManyJoints as error:
        raise TooManyJoints(
            f'{error}: raise max_joints to load it (~70 MB at 100 joints, 0.5 GB at 200)'
        ) from None
    if robot.num_joints == 0:
        raise DescriptionError(
            f'robot "{shorten(robot.name, 60)}" has no moving joints: nothing to compute from '
            'joint_states'
        )
    return robot


def description_problem(text: str, root_joint: str, gravity, max_joints: int) -> str:
    """'' when :func:`usable_model` accepts ``text``, else the reason it refuses it."""
    try:
        usable_model(text, root_joint, gravity, max_joints)
    except (DescriptionError, ValueError) as error:
        return str(error)
    return ''


def listener_node_name(owner_name: str) -> str:
    return f'{owner_name}{LISTENER_NODE_SUFFIX}'


@dataclass(frozen=True)
class ListenerSettings:
    """What the listener needs: the resolved topic, its node's name and namespace, and the
    owner's model parameters (``gravity`` [m/s²] in the world frame)."""

    topic: str
    node_name: str
    namespace: str
    root_joint: str
    gravity: tuple
    max_joints: int

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> 'ListenerSettings':
        values = json.loads(text)
        values['gravity'] = tuple(values['gravity'])
        return cls(**values)


# ---------------------------------------------------------------------------- node side
class DescriptionListener:
    """Runs the listener process for a node and calls ``on_accepted(text)`` with each accepted
    URDF and ``on_refused(reason)`` with each refusal, on a reader thread of its own (a
    callback may take long: the listener waits). Call :meth:`close` when the node is destroyed."""

    def __init__(
        self,
        settings: ListenerSettings,
        on_accepted: Callable[[str], None],
        on_refused: Callable[[str], None],
    ):
        self.settings = settings
        self._on_accepted = on_accepted
        self._on_refused = on_refused
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._process: Optional[subprocess.Popen] = None
        self._owned: set = set()  # the Fast DDS files of the listener processes
        self.ready = threading.Event()
        """Set once the current listener process has subscribed."""
        self.starts = 0
        self._reader = threading.Thread(target=self._run, name='description_listener', daemon=True)
        self._reader.start()

    @property
    def pid(self) -> Optional[int]:
        """Process id of the listener process now running (None between restarts)."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def _run(self) -> None:
        delay = RESTART_DELAYS[0]
        while not self._closed.is_set():
            started = time.monotonic()
            problem = self._run_one_listener()
            if self._closed.is_set():
                return
            self._on_refused(f'{problem}; it is restarted in {delay:g} s')
            if time.monotonic() - started > RESTART_DELAYS[1]:
                delay = RESTART_DELAYS[0]
            if self._closed.wait(delay):
                return
            delay = min(2.0 * delay, RESTART_DELAYS[1])

    def _run_one_listener(self) -> str:
        """Start a listener process and forward what it sends until it ends; returns why it
        ended."""
        try:
            output = self._start()
        except OSError as error:  # no process could be started (out of memory, process limit)
            return f'the description listener process could not be started ({error})'
        if output is None:
            return 'closed'
        with output:
            self._forward(output)
        code = self._reap()
        return (
            'the description could not be checked: the description listener process ended (exit '
            f'code {code})'
        )

    def _start(self) -> Optional[BinaryIO]:
        """Start a listener process (from this thread, which it dies with); its output pipe."""
        read_end, write_end = os.pipe()
        try:
            with self._lock:
                if self._closed.is_set():
                    return None
                self.ready.clear()
                self._process = start_child_process(
                    [
                        sys.executable,
                        '-m',
                        'robot_dynamics.ros.description_listener',
                        self.settings.to_json(),
                        str(write_end),
                    ],
                    niceness=LISTENER_NICENESS,
                    stdin=subprocess.PIPE,
                    pass_fds=(write_end,),
                )
                self.starts += 1
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        return os.fdopen(read_end, 'rb')

    def _forward(self, output: BinaryIO) -> None:
        """Hand each item the listener sends to the callbacks, until its output ends."""
        while True:
            line = output.readline()
            if not line:
                return
            try:
                item = json.loads(line)
                if 'accepted' in item:
                    length = int(item['accepted'])
                    data = output.read(length)
                    if len(data) != length:
                        return  # the listener ended in the middle of a text
                    text = data.decode('utf-8', 'surrogatepass')
                    if not self._closed.is_set():
                        self._on_accepted(text)
                elif 'refused' in item:
                    self._on_refused(str(item['refused']))
                elif item.get('ready'):
                    self._note_owned_files(self._process)
                    self.ready.set()
            except (
                ValueError,
                TypeError,
                KeyError,
            ) as error:  # a broken stream: restart the listener
                self._on_refused(
                    f'the description listener sent something unreadable ({error}); restarting it'
                )
                self._stop_process()
                return

    def _reap(self) -> Optional[int]:
        """Wait for the listener process that ended its output (kill it after
        :data:`STOP_TIMEOUT`) and remove the Fast DDS segments it left: one stuck in its
        middleware teardown ends by its own watchdog or is killed, with its participant never
        destroyed. Returns its exit code."""
        with self._lock:
            process = self._process
        if process is None:
            return None
        try:
            code = process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait()
        owned, self._owned = self._owned, set()
        remove_unused_dds_files(owned, ports=False)
        return code

    def _note_owned_files(self, process: subprocess.Popen) -> None:
        """Add the Fast DDS files ``process`` owns now to those removed after it ends (read
        while it lives: its lock files are held open; after its end nothing tells)."""
        self._owned |= dds_files_of(process.pid)

    def _stop_process(self) -> None:
        """Ask the listener to end (end of its input), kill it if it has not within
        :data:`STOP_TIMEOUT`."""
        with self._lock:
            process = self._process
        if process is None:
            return
        self._note_owned_files(process)
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def close(self) -> None:
        """Stop the listener process and the reader thread (idempotent)."""
        with self._lock:
            self._closed.set()
        self._stop_process()
        if self._reader is not threading.current_thread():
            self._reader.join(timeout=STOP_TIMEOUT)


# ---------------------------------------------------------------------------- listener side
class DescriptionForwarder:
    """The listener's judgement of each serialized std_msgs/String, written to ``output`` in
    the protocol above. ``last_accepted`` is the text last sent as accepted."""

    def __init__(self, settings: ListenerSettings, output: BinaryIO):
        self.settings = settings
        self.output = output
        self.last_accepted: Optional[str] = None

    def on_message(self, serialized: bytes) -> None:
        try:
            self._judge(serialized)
        except BrokenPipeError:  # the node is gone: the listener ends
            raise
        except Exception as error:  # the listener never dies from a message
            self._send({'refused': f'unexpected error while checking the description: {error!r}'})

    def _judge(self, serialized: bytes) -> None:
        from rclpy.serialization import deserialize_message
        from std_msgs.msg import String

        if len(serialized) > MAX_DESCRIPTION_BYTES + CDR_OVERHEAD:
            self._send(
                {
                    'refused': f'robot description message is {len(serialized)} bytes, over the '
                    f'{MAX_DESCRIPTION_BYTES}-byte limit'
                }
            )
            return
        text = deserialize_message(serialized, String).data
        if text == self.last_accepted:
            return
        settings = self.settings
        problem = description_problem(
            text, settings.root_joint, settings.gravity, settings.max_joints
        )
        if problem:
            self._send({'refused': problem})
            return
        data = text.encode('utf-8', 'surrogatepass')
        self._send({'accepted': len(data)}, data)
        self.last_accepted = text

    def send_ready(self) -> None:
        self._send({'ready': True})

    def _send(self, header: dict, data: bytes = b'') -> None:
        self.output.write(json.dumps(header).encode() + b'\n')
        if data:
            self.output.write(data)
        self.output.flush()


def listen(settings: ListenerSettings, output: BinaryIO) -> None:
    """The listener process's body: subscribe, judge each description, until the end of this
    process's input (the node closed it or died) or SIGTERM."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions
    from std_msgs.msg import String

    from robot_dynamics.ros.topics import DESCRIPTION_QOS

    stop = threading.Event()

    def stop_soon() -> None:
        stop.set()
        # a teardown stuck in the middleware: the stacks into the node's log, before its kill
        faulthandler.dump_traceback_later(STOP_TIMEOUT - 1.0, exit=True)

    signal.signal(
        signal.SIGINT, signal.SIG_IGN
    )  # Ctrl-C reaches the node's whole group: the node stops us
    signal.signal(signal.SIGTERM, lambda number, frame: stop_soon())
    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node(
        settings.node_name,
        namespace=settings.namespace,
        context=context,
        start_parameter_services=False,
    )
    executor = SingleThreadedExecutor(context=context)
    wake = node.create_guard_condition(lambda: None)

    def request_stop() -> None:
        stop_soon()
        wake.trigger()

    threading.Thread(
        target=_wait_for_end_of_input, args=(request_stop,), name='input watcher', daemon=True
    ).start()
    forwarder = DescriptionForwarder(settings, output)
    node.create_subscription(
        String, settings.topic, forwarder.on_message, DESCRIPTION_QOS, raw=True
    )
    executor.add_node(node)
    try:
        forwarder.send_ready()
        while not stop.is_set() and context.ok():
            executor.spin_once(timeout_sec=0.5)
    except BrokenPipeError:  # the node is gone
        pass
    finally:
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()


def _wait_for_end_of_input(on_end: Callable[[], None]) -> None:
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, ValueError):
        pass
    on_end()


def main(argv=None) -> None:
    """``python -m robot_dynamics.ros.description_listener SETTINGS_JSON OUTPUT_FD``."""
    argv = sys.argv[1:] if argv is None else argv
    settings = ListenerSettings.from_json(argv[0])
    with os.fdopen(int(argv[1]), 'wb') as output:
        listen(settings, output)


if __name__ == '__main__':
    main()
