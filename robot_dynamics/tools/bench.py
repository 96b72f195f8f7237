"""Benchmark a node against a bare relay measured in the same run (latency, answered fraction, compute).

`robot_dynamics bench dynamics`: dynamics_node in its own process, fed 7-DoF joint_states
at 1 kHz from this process; latency = receipt of ~/inverse_dynamics_torques − input stamp.
`robot_dynamics bench centroidal`: centroidal_node on the floating-base quadruped fed
joint_states and odom at 500 Hz; latency = receipt of ~/com − input stamp.
`robot_dynamics bench soak|fuzz|descriptions|storm|restart|hot-swap`: the reliability runs of
:mod:`robot_dynamics.tools.reliability` (`bench soak --duration 600` is the long soak).
Each run first measures a relay node (subscribe joint_states, republish unchanged) under the
same feed, and prints the node's figures as ratios to it. Medians and percentiles over all
messages; the machine is shared, so read ratios, not absolute numbers. Every ROS process runs
with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and this run's own ROS_DOMAIN_ID.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

TARGETS = {
    # target: (module, output topic, default rate [Hz], model, root joint)
    'dynamics': ('robot_dynamics.ros.dynamics_node', 'inverse_dynamics_torques', 1000.0, 'fr3_arm.urdf', 'fixed'),
    'centroidal': ('robot_dynamics.ros.centroidal_node', 'com', 500.0, 'quadruped.urdf', 'floating'),
}


RELIABILITY_TARGETS = ('soak', 'fuzz', 'descriptions', 'storm', 'restart', 'hot-swap')
"""Targets run by :mod:`robot_dynamics.tools.reliability`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('target', choices=sorted(TARGETS) + list(RELIABILITY_TARGETS),
                        help='which node to measure, or which reliability run')
    parser.add_argument('--duration', type=float, default=20.0,
                        help='seconds of feed per phase; soak: per node (default 20)')
    parser.add_argument('--rate', type=float, help='feed rate [Hz] (default: 1000 dynamics, 500 centroidal)')
    parser.add_argument('--warmup', type=float, default=2.0, help='seconds fed before measuring (default 2)')
    parser.add_argument('--format', choices=('text', 'json'), default='text')
    parser.add_argument('--count', type=int, help='reliability runs: fuzzed messages (core; 5%% of it over ROS), '
                                                  'service calls, restarts or description swaps')
    parser.add_argument('--nodes', nargs='+', choices=sorted(TARGETS), default=sorted(TARGETS),
                        help='soak: which nodes (default both)')
    parser.add_argument('--service-cpu-share', type=float,
                        help="storm: the node's service_cpu_share (default: the node's default, 0.02)")
    parser.add_argument('--rss-bound-mib', type=float, default=16.0,
                        help='soak: largest accepted resident-memory growth of a node [MiB] (default 16)')


@dataclass
class StreamFigures:
    """Latency [ms] percentiles and the answered fraction of one measured phase."""

    sent: int
    answered: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float

    @property
    def answered_fraction(self) -> float:
        return self.answered / self.sent if self.sent else 0.0


def run(args: argparse.Namespace) -> int:
    _isolate_ros_environment()
    if args.target in RELIABILITY_TARGETS:
        from robot_dynamics.tools import reliability
        return reliability.run(args)
    module, output, default_rate, model, root_joint = TARGETS[args.target]
    rate = args.rate or default_rate
    from robot_dynamics.models import model_path
    urdf = str(model_path(model))
    relay = _measure_process(['robot_dynamics.ros.relay'], 'relayed_joint_states', urdf, root_joint, rate, args)
    node = _measure_process([module, '-p', f'urdf_file:={urdf}', '-p', f'root_joint:={root_joint}'],
                            output, urdf, root_joint, rate, args, node_output=True)
    compute = _compute_figures(args.target, urdf, root_joint)
    result = {
        'target': args.target, 'rate_hz': rate, 'duration_s': args.duration,
        'answered_fraction': node.answered_fraction, 'relay_answered_fraction': relay.answered_fraction,
        'p50_ratio': node.p50_ms / relay.p50_ms if relay.p50_ms else float('inf'),
        'p99_ratio': node.p99_ms / relay.p99_ms if relay.p99_ms else float('inf'),
        'compute_ratio': compute['ratio'],
        'node_latency_ms': _latencies(node), 'relay_latency_ms': _latencies(relay),
        'compute_us': compute,
    }
    if args.format == 'json':
        print(json.dumps(result, indent=2))
    else:
        _print_text(result)
    return 0 if _meets_targets(result) else 1


def _meets_targets(result: dict) -> bool:
    """Issue targets: every node answers ≥ 99.9 %; dynamics_node also p50 ≤ 1.25×, p99 ≤ 1.5× the
    relay and compute ≤ 3× raw pinocchio. The relay must answer ≥ 99.9 % too: a baseline that
    dropped its slowest messages would flatter its percentiles."""
    if min(result['answered_fraction'], result['relay_answered_fraction']) < 0.999:
        return False
    return result['target'] != 'dynamics' or (result['p50_ratio'] <= 1.25 and result['p99_ratio'] <= 1.5
                                              and result['compute_ratio'] <= 3.0)


def _isolate_ros_environment() -> None:
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))


def _latencies(figures: StreamFigures) -> dict:
    return {'p50': figures.p50_ms, 'p90': figures.p90_ms, 'p99': figures.p99_ms, 'max': figures.max_ms,
            'sent': figures.sent, 'answered': figures.answered}


def _measure_process(module_args: list, output: str, urdf: str, root_joint: str, rate: float,
                     args: argparse.Namespace, node_output: bool = False) -> StreamFigures:
    """Start a node process, feed it, and measure latency on its output topic."""
    node_name = _bench_node_name(module_args[0])
    process = _start_node(module_args, node_name)
    try:
        return _feed_and_measure(_output_topic(node_name, output, node_output), output, urdf, root_joint, rate,
                                 args.duration, args.warmup)
    finally:
        _stop_node(process)


def _bench_node_name(module: str) -> str:
    return f'bench_{module.rsplit(".", 1)[-1]}_{os.getpid()}'


def _output_topic(node_name: str, output: str, node_output: bool = True) -> str:
    return f'/{node_name}/{output}' if node_output else '/bench/relayed'


def _start_node(module_args: list, node_name: str) -> subprocess.Popen:
    """Start ``python -m module_args[0]`` as node ``node_name`` reading /bench/joint_states and /bench/odom;
    ``module_args[1:]`` are extra ROS arguments (``-p name:=value``...)."""
    command = [sys.executable, '-m', module_args[0], '--ros-args', '-r', f'__node:={node_name}',
               '-r', 'joint_states:=/bench/joint_states', '-r', 'odom:=/bench/odom',
               '-r', 'robot_description:=/bench/robot_description',
               '-r', 'relayed_joint_states:=/bench/relayed', '--log-level', 'error'] + module_args[1:]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _stop_node(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


def _feed_and_measure(topic: str, output: str, urdf: str, root_joint: str, rate: float, duration: float,
                      warmup: float) -> StreamFigures:
    # Position, velocity and effort, as a torque-sensing arm (the bundled FR3) publishes them: the
    # node then does all its per-message work (external torques, the recording for identify_payload).
    with StreamFeeder(topic, output, urdf, root_joint, efforts=True) as feeder:
        feeder.wait_connected()
        sent = feeder.feed(rate, duration, warmup)
        time.sleep(1.0)
    return _figures(sent, feeder.received)


class StreamFeeder:
    """Publishes joint_states (and odom for a floating base) on /bench/joint_states from this
    process, and records every message arriving on ``topic``.

    ``received`` holds (input stamp [ns], arrival wall time [ns]) per answer; with
    ``keep_messages`` also ``messages``: (input stamp [ns], joint names, efforts [N·m]).
    ``names`` are the joint names sent (default: the model's joints); positions [rad] follow
    a slow sine about a fixed random pose inside the joint limits. joint_states are published
    with the outputs' QoS (50 deep), or as deep as the nodes' input queue with ``deep_history``.
    """

    def __init__(self, topic: str, output: str, urdf: str, root_joint: str, names=None, efforts: bool = False,
                 keep_messages: bool = False, deep_history: bool = False):
        import numpy as np
        import rclpy
        from geometry_msgs.msg import PointStamped
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState

        from robot_dynamics.core.model import RobotModel
        from robot_dynamics.ros.common import JOINT_STATE_QOS, SENSOR_QOS

        self.robot = RobotModel.from_urdf_file(urdf, root_joint=root_joint)
        self.topic = topic
        self.names = list(names or self.robot.joint_names)
        rng = np.random.default_rng(0)
        own = np.clip(rng.uniform(-0.5, 0.5, self.robot.num_joints), self.robot.limits.lower,
                      self.robot.limits.upper)
        self._base_positions = np.resize(own, len(self.names))
        self._efforts = efforts
        self.received: list = []
        self.messages: list = []
        self.phase_of: dict = {}
        self._keep = keep_messages
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(f'bench_feeder_{os.getpid()}_{id(self)}', context=self.context)
        output_type = PointStamped if output == 'com' else JointState
        # As deep as the nodes' input queue: a burst of answers after a stall must not overflow here.
        self.node.create_subscription(output_type, topic, self._on_output, JOINT_STATE_QOS)
        # deep_history: keep as many unacknowledged joint states as the node's queue holds, so that
        # a node stalled on purpose (a huge description) can catch up instead of losing them here.
        self.joint_pub = self.node.create_publisher(JointState, '/bench/joint_states',
                                                    JOINT_STATE_QOS if deep_history else SENSOR_QOS)
        self.odom_pub = None
        if root_joint == 'floating':
            from nav_msgs.msg import Odometry
            self.odom_pub = self.node.create_publisher(Odometry, '/bench/odom', SENSOR_QOS)
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(self.node)
        self._spinner = threading.Thread(target=self._executor.spin, daemon=True)
        self._spinner.start()

    def _on_output(self, message) -> None:
        stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
        self.received.append((stamp, time.time_ns()))
        if self._keep:
            self.messages.append((stamp, tuple(message.name), tuple(message.effort)))

    def wait_connected(self, timeout: float = 30.0) -> None:
        """Block until the node under test publishes ``topic`` and reads joint_states."""
        deadline = time.monotonic() + timeout
        while self.node.count_publishers(self.topic) < 1 or self.joint_pub.get_subscription_count() < 1:
            if time.monotonic() > deadline:
                raise RuntimeError(f'the node under test never connected to {self.topic}')
            time.sleep(0.05)

    def positions(self, phase: float):
        """Joint positions [rad] sent at ``phase`` seconds into the feed, in ``names`` order."""
        import numpy as np
        return self._base_positions + 0.2 * np.sin(2.0 * phase)

    def feed(self, rate: float, duration: float, warmup: float = 0.0, until=None, sent=None) -> list:
        """Publish at ``rate`` [Hz] for ``warmup + duration`` seconds (or until ``until()`` is true
        after the warm-up); returns the stamps [ns] sent after the warm-up, appended to ``sent``
        as they go when it is given (a list another thread may read)."""
        import numpy as np
        from nav_msgs.msg import Odometry
        from sensor_msgs.msg import JointState

        count = len(self.names)
        message = JointState(name=self.names)
        odom = Odometry()
        odom.header.frame_id, odom.child_frame_id = 'odom', 'base'
        odom.pose.pose.position.z, odom.pose.pose.orientation.w = 0.45, 1.0
        sent = [] if sent is None else sent
        period = 1.0 / rate
        start = time.monotonic()
        total = warmup + duration
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
            if self.odom_pub is not None:
                odom.header.stamp = message.header.stamp
                self.odom_pub.publish(odom)
            self.joint_pub.publish(message)
            if self._keep:
                self.phase_of[stamp_ns] = phase
            if phase >= warmup:
                sent.append(stamp_ns)
            tick += 1
        return sent

    def close(self) -> None:
        import rclpy
        self._executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _figures(sent: list, received: list) -> StreamFigures:
    import numpy as np
    sent_set = set(sent)
    latencies = {}
    for stamp, arrival in received:
        if stamp in sent_set and stamp not in latencies:
            latencies[stamp] = (arrival - stamp) * 1e-6
    values = np.array(list(latencies.values())) if latencies else np.array([np.nan])
    return StreamFigures(sent=len(sent), answered=len(latencies), p50_ms=float(np.percentile(values, 50)),
                         p90_ms=float(np.percentile(values, 90)), p99_ms=float(np.percentile(values, 99)),
                         max_ms=float(np.max(values)))


def _compute_figures(target: str, urdf: str, root_joint: str, repeats: int = 15, count: int = 2000) -> dict:
    """Per-message compute of the node's core call vs the raw pinocchio calls it needs [µs].

    dynamics: LiveTorqueEstimator.update (name merge, checks, q̈ estimate, g and RNEA) vs
    computeGeneralizedGravity + rnea. centroidal: CentroidalMonitor.update (CoM, h_G, ḣ_G
    estimate, ZMP, contacts, support polygon) vs centerOfMass + ccrba + A_G v.
    Batches of ``count`` calls alternate between the two, ``repeats`` times: the ratio is the
    median of the per-pair ratios, so a burst of load from a neighbour hits both sides of a pair.
    """
    import statistics

    import numpy as np

    from robot_dynamics.core.model import RobotModel

    robot = RobotModel.from_urdf_file(urdf, root_joint=root_joint)
    raw, ours = (_dynamics_calls if target == 'dynamics' else _centroidal_calls)(robot, np.random.default_rng(1))
    raw_us, ours_us = [], []
    for repeat in range(repeats):
        raw_us.append(_batch_time_us(raw, repeat * count, count))
        ours_us.append(_batch_time_us(ours, repeat * count, count))
    return {'raw_pinocchio': statistics.median(raw_us), 'node_core': statistics.median(ours_us),
            'ratio': statistics.median(o / r for o, r in zip(ours_us, raw_us))}


def _dynamics_calls(robot, rng) -> tuple:
    import array

    import numpy as np
    import pinocchio as pin

    from robot_dynamics.core.live_torques import LiveTorqueEstimator

    n, names = robot.num_joints, list(robot.joint_names)
    # As rclpy hands them over: names a list of str, float64[] fields array.array('d').
    samples = [tuple(array.array('d', rng.uniform(-scale, scale, n)) for scale in (1, 1, 5)) for _ in range(64)]
    model, data, zeros = robot.model, robot.model.createData(), np.zeros(robot.model.nv)
    estimator = LiveTorqueEstimator(robot)

    def raw(k):
        position, velocity, _ = samples[k % 64]
        q = np.asarray(position)
        pin.computeGeneralizedGravity(model, data, q)
        pin.rnea(model, data, q, np.asarray(velocity), zeros)

    def ours(k):
        position, velocity, effort = samples[k % 64]
        estimator.update(names, position, velocity, effort, 1.0 + k * 1e-3)

    return raw, ours


def _centroidal_calls(robot, rng) -> tuple:
    import numpy as np
    import pinocchio as pin

    from robot_dynamics.core.centroidal import BalanceSettings, CentroidalMonitor

    feet = tuple(name for name in robot.description.links if name.endswith('_foot'))
    monitor = CentroidalMonitor(robot, BalanceSettings(contact_frames=feet))
    states = []
    for _ in range(64):
        q = robot.configuration(np.clip(rng.uniform(-0.5, 0.5, robot.num_joints), robot.limits.lower,
                                        robot.limits.upper), [0, 0, 0.45, 0, 0, 0, 1])
        states.append((q, rng.uniform(-0.5, 0.5, robot.model.nv)))
    model, data = robot.model, robot.model.createData()

    def raw(k):
        q, v = states[k % 64]
        pin.centerOfMass(model, data, q)
        pin.ccrba(model, data, q, v)

    def ours(k):
        q, v = states[k % 64]
        monitor.update(1.0 + k * 2e-3, q, v)

    return raw, ours


def _batch_time_us(function, start: int, count: int) -> float:
    """Mean time of ``function(k)`` for k in [start, start + count) [µs]."""
    started = time.perf_counter()
    for k in range(start, start + count):
        function(k)
    return (time.perf_counter() - started) / count * 1e6


def _print_text(result: dict) -> None:
    node, relay, compute = result['node_latency_ms'], result['relay_latency_ms'], result['compute_us']
    print(f"bench {result['target']}: {result['rate_hz']:.0f} Hz for {result['duration_s']:.0f} s per phase")
    print(f"{'':18}{'answered':>10}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for label, figures in (('relay (baseline)', relay), ('node', node)):
        fraction = figures['answered'] / figures['sent'] if figures['sent'] else 0.0
        print(f"{label:18}{fraction:>10.4%}{figures['p50']:>9.3f}{figures['p90']:>9.3f}"
              f"{figures['p99']:>9.3f}{figures['max']:>9.3f}")
    dynamics = result['target'] == 'dynamics'
    print(f"answered fraction {result['answered_fraction']:.4%} (target >= 99.9%)")
    print(f"p50 ratio {result['p50_ratio']:.2f}{' (target <= 1.25)' if dynamics else ''}, "
          f"p99 ratio {result['p99_ratio']:.2f}{' (target <= 1.5)' if dynamics else ''}")
    print(f"compute per message: node core {compute['node_core']:.1f} us vs raw pinocchio "
          f"{compute['raw_pinocchio']:.1f} us, ratio {compute['ratio']:.2f}{' (target <= 3)' if dynamics else ''}")
