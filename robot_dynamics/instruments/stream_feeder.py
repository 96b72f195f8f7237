"""The bench's feed: node processes under test and the in-process feeder that drives them over ROS.

:class:`StreamFeeder` publishes joint_states (and odom for a floating base) and records every
answer on the node's output topic; :func:`start_node` starts a node or relay process remapped
onto a feed lane; :func:`stream_figures` turns the stamps sent and the answers received into
latency percentiles [ms] and the answered fraction. Stamps are ROS times in ns since the epoch.
Used by :mod:`robot_dynamics.instruments.bench` and the reliability runs.
"""

from __future__ import annotations

import gc
import math
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Optional

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.instruments import processes
from robot_dynamics.ros.ros_domain import shutdown_context


class BenchError(RobotDynamicsError):
    """A benchmark could not be carried out (no free ROS domain, a node never connected...)."""


@dataclass
class StreamFigures:
    """Latency [ms] percentiles and the answered fraction of one measured phase; ``cpu_s``: user
    + system CPU time [s] of the fed process over ``seconds`` of stream (0 when not measured)."""

    sent: int
    answered: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    cpu_s: float = 0.0
    seconds: float = 0.0

    @property
    def answered_fraction(self) -> float:
        return self.answered / self.sent if self.sent else 0.0

    @property
    def cpu_per_second(self) -> float:
        """CPU seconds of the fed process per second of stream."""
        return self.cpu_s / self.seconds if self.seconds else 0.0


def stream_figures(sent: list, received: list) -> StreamFigures:
    import numpy as np

    sent_set = set(sent)
    latency_ms = {}
    for stamp, arrival in received:
        if stamp in sent_set and stamp not in latency_ms:
            latency_ms[stamp] = (arrival - stamp) * 1e-6
    values = np.array(list(latency_ms.values())) if latency_ms else np.array([np.nan])
    return StreamFigures(
        sent=len(sent),
        answered=len(latency_ms),
        p50_ms=float(np.percentile(values, 50)),
        p90_ms=float(np.percentile(values, 90)),
        p99_ms=float(np.percentile(values, 99)),
        max_ms=float(np.max(values)),
    )


def latencies(figures: StreamFigures) -> dict:
    return {
        'p50': figures.p50_ms,
        'p90': figures.p90_ms,
        'p99': figures.p99_ms,
        'max': figures.max_ms,
        'sent': figures.sent,
        'answered': figures.answered,
        'cpu_per_second': figures.cpu_per_second,
    }


def wait_for_stragglers(
    feeder: 'StreamFeeder', expected: int, quiet: float = 0.3, limit: float = 10.0
) -> None:
    """Return once ``expected`` answers came, or none for ``quiet`` seconds (at most ``limit``)."""
    wait_until_quiet([feeder.received], expected, quiet, limit)


def wait_until_quiet(
    arrivals: list, expected: float = math.inf, quiet: float = 0.3, limit: float = 10.0
) -> None:
    """Return once the lists ``arrivals`` (appended to by subscriptions) hold ``expected`` items
    together, or none of them grew for ``quiet`` seconds (at most ``limit``)."""
    deadline = time.monotonic() + limit
    sizes, last_change = [len(a) for a in arrivals], time.monotonic()
    while time.monotonic() < deadline and sum(sizes) < expected:
        time.sleep(0.02)
        now = [len(a) for a in arrivals]
        if now != sizes:
            sizes, last_change = now, time.monotonic()
        elif time.monotonic() - last_change > quiet:
            return


def bench_node_name(module: str) -> str:
    return f'bench_{module.rsplit(".", 1)[-1]}_{os.getpid()}'


def output_topic(
    node_name: str, output: str, node_output: bool = True, lane: str = '/bench'
) -> str:
    return f'/{node_name}/{output}' if node_output else f'{lane}/relayed'


def start_node(module_args: list, node_name: str, lane: str = '/bench'):
    """Start ``python -m module_args[0]`` as node ``node_name`` reading ``lane``/joint_states and
    ``lane``/odom (a relay publishes ``lane``/relayed); ``module_args[1:]`` are extra ROS arguments
    (``-p name:=value``...). The process ends when this one does."""
    command = [
        sys.executable,
        '-m',
        module_args[0],
        '--ros-args',
        '-r',
        f'__node:={node_name}',
        '-r',
        f'joint_states:={lane}/joint_states',
        '-r',
        f'odom:={lane}/odom',
        '-r',
        'robot_description:=/bench/robot_description',
        '-r',
        f'relayed_joint_states:={lane}/relayed',
        '--log-level',
        'error',
    ] + module_args[1:]
    return processes.start_keeping_stderr(command, stdout=subprocess.DEVNULL)


def stop_node(process) -> None:
    """End a node process of :func:`start_node` in order (SIGTERM) and close its stderr file."""
    processes.stop_node_process(process)
    processes.forget_stderr(process)


def kill_node(process) -> list:
    """Kill a node process of :func:`start_node` (a crash: SIGKILL) and close its stderr file;
    returns the shared-memory files removed (:func:`processes.kill_node_process`)."""
    removed = processes.kill_node_process(process)
    processes.forget_stderr(process)
    return removed


class StreamFeeder:
    """Publishes joint_states (and odom for a floating base) on /bench/joint_states from this
    process, and records every message arriving on ``topic`` (None: no output subscription; the
    caller subscribes what it measures on ``node``).

    ``received`` holds (input stamp [ns], arrival wall time [ns]) per answer, the arrival taken
    when this process's callback runs; ``received_by_middleware`` the same pairs with the time
    the middleware received the message (rmw ``received_timestamp``, wall clock), before this
    process's executor queue. With ``keep_messages`` also ``messages``: (input stamp [ns],
    joint names, efforts [N·m]).
    ``names`` are the joint names sent (default: the model's joints); positions [rad] follow
    a slow sine about a fixed random pose inside the joint limits. joint_states are published
    with the outputs' QoS (50 deep), or as deep as the nodes' input queue with ``deep_history``,
    on ``input_namespace``/joint_states (and ``input_namespace``/odom).
    """

    def __init__(
        self,
        topic: Optional[str],
        output: str,
        urdf: str,
        root_joint: str,
        names=None,
        efforts: bool = False,
        keep_messages: bool = False,
        deep_history: bool = False,
        input_namespace: str = '/bench',
    ):
        import numpy as np
        import rclpy
        from geometry_msgs.msg import PointStamped
        from sensor_msgs.msg import JointState

        from robot_dynamics.core.model.model import RobotModel
        from robot_dynamics.ros.spinning import NodeSpinner
        from robot_dynamics.ros.topics import JOINT_STATE_QOS, SENSOR_QOS

        self.robot = RobotModel.from_urdf_file(urdf, root_joint=root_joint)
        self.topic = topic
        self.names = list(names or self.robot.joint_names)
        rng = np.random.default_rng(0)
        own = np.clip(
            rng.uniform(-0.5, 0.5, self.robot.num_joints),
            self.robot.limits.lower,
            self.robot.limits.upper,
        )
        self._base_positions = np.resize(own, len(self.names))
        self._efforts = efforts
        self.received: list = []
        self.received_by_middleware: list = []
        self.messages: list = []
        self.phase_of: dict = {}
        self._keep = keep_messages
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(
            f'bench_feeder_{os.getpid()}_{id(self)}', context=self.context
        )
        output_type = PointStamped if output == 'com' else JointState
        # As deep as the nodes' input queue: a burst of answers after a stall must not overflow
        # here.
        if topic is not None:
            self.node.create_subscription(output_type, topic, self._on_output, JOINT_STATE_QOS)
        # deep_history: keep as many unacknowledged joint states as the node's queue holds, so that
        # a node stalled on purpose (a huge description) can catch up instead of losing them here.
        self.joint_pub = self.node.create_publisher(
            JointState,
            f'{input_namespace}/joint_states',
            JOINT_STATE_QOS if deep_history else SENSOR_QOS,
        )
        self.odom_pub = None
        if root_joint == 'floating':
            from nav_msgs.msg import Odometry

            self.odom_pub = self.node.create_publisher(
                Odometry, f'{input_namespace}/odom', SENSOR_QOS
            )
        self.publish_failures = 0
        self._spinner = NodeSpinner([self.node])
        self._spin_thread = threading.Thread(target=self._spinner.spin, daemon=True)
        self._spin_thread.start()

    def _on_output(self, message, info) -> None:
        stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
        self.received.append((stamp, time.time_ns()))
        self.received_by_middleware.append((stamp, info['received_timestamp']))
        if self._keep:
            self.messages.append((stamp, tuple(message.name), tuple(message.effort)))

    def wait_connected(self, timeout: float = 30.0, process=None, odom: bool = False) -> None:
        """Block until the node under test publishes ``topic`` and reads joint_states (and, with
        ``odom``, odom for a floating base); ``process``: its Popen, to stop waiting when it
        ends."""
        deadline = time.monotonic() + timeout
        while not self._connected(odom):
            if process is not None and process.poll() is not None:
                said = processes.stderr_tail(process)  # it logs at level error only
                raise BenchError(
                    f'the node under test ended (exit {process.returncode}) before connecting'
                    + (f': {said}' if said else '')
                )
            if time.monotonic() > deadline:
                raise BenchError(f'the node under test never connected to {self.topic}')
            time.sleep(0.05)

    def _connected(self, odom: bool) -> bool:
        odom_read = not odom or self.odom_pub is None or self.odom_pub.get_subscription_count() >= 1
        return (
            (self.topic is None or self.node.count_publishers(self.topic) >= 1)
            and self.joint_pub.get_subscription_count() >= 1
            and odom_read
        )

    def positions(self, phase: float):
        """Joint positions [rad] sent at ``phase`` seconds into the feed, in ``names`` order."""
        import numpy as np

        return self._base_positions + 0.2 * np.sin(2.0 * phase)

    def feed(
        self, rate: float, duration: float, warmup: float = 0.0, until=None, sent=None
    ) -> list:
        """Publish at ``rate`` [Hz] for ``warmup + duration`` seconds (or until ``until()`` is true
        after the warm-up); returns the stamps [ns] sent after the warm-up, appended to ``sent``
        as they go when it is given (a list another thread may read). This process's garbage
        collector is off meanwhile: a full collection of its heap would stall both what it sends
        and the arrival times it records."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._feed(rate, duration, warmup, until, [] if sent is None else sent)
        finally:
            if collecting:
                gc.enable()

    def _feed(self, rate: float, duration: float, warmup: float, until, sent: list) -> list:
        import numpy as np
        from nav_msgs.msg import Odometry
        from sensor_msgs.msg import JointState

        message = JointState(name=self.names)
        odom = Odometry()
        odom.header.frame_id, odom.child_frame_id = 'odom', self.robot.description.root
        odom.pose.pose.position.z, odom.pose.pose.orientation.w = 0.45, 1.0
        total = warmup + duration
        count = len(self.names)
        period = 1.0 / rate
        start = time.monotonic()
        tick = 0
        while True:
            target = start + tick * period
            now = time.monotonic()
            if now - start >= total or (until is not None and now - start >= warmup and until()):
                break
            if target > now:
                time.sleep(max(0.0, target - now - 0.0002))
                while time.monotonic() < target:
                    pass
            phase = tick * period
            stamp_ns = time.time_ns()
            message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
            message.position = self.positions(phase).tolist()
            message.velocity = (0.4 * np.cos(2.0 * phase) * np.ones(count)).tolist()
            if self._efforts:
                message.effort = (5.0 * np.sin(3.0 * phase + np.arange(count))).tolist()
            tick += 1
            if not self._published(odom, message):
                continue
            if self._keep:
                self.phase_of[stamp_ns] = phase
            if phase >= warmup:
                sent.append(stamp_ns)
        return sent

    def _published(self, odom, message) -> bool:
        """Publish odometry (floating base) and the joint state; False when the middleware
        refused (a reliable writer whose history stayed full: the reader is stalled). Such a
        message was never sent and is counted in ``publish_failures``, not as unanswered."""
        from rclpy._rclpy_pybind11 import RCLError

        try:
            if self.odom_pub is not None:
                odom.header.stamp = message.header.stamp
                self.odom_pub.publish(odom)
            self.joint_pub.publish(message)
        except RCLError:
            self.publish_failures += 1
            return False
        return True

    def close(self) -> None:
        # The spinner leaves the executor before the node goes: a node destroyed under a
        # running wait raises InvalidHandle in the spinner.
        self._spinner.stop()
        self._spin_thread.join()
        self._spinner.close()
        self.node.destroy_node()
        shutdown_context(self.context)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
