"""Benchmark a node against a bare rclpy relay measured in the same run (latency, answered fraction, CPU).

`robot_dynamics bench dynamics|centroidal [--urdf FILE] [--root-joint fixed|floating] [--rate HZ]`:
the node in its own process, fed joint_states (and odom for a floating base) from this
process; latency = receipt of its output (~/inverse_dynamics_torques, ~/com) − input stamp.
Defaults: dynamics on the bundled 7-DoF arm at 1 kHz, centroidal on the bundled floating-base
quadruped at 500 Hz. The baseline is the relay a user would write (:mod:`robot_dynamics.instruments.bare_relay`:
rclpy defaults, depth 100, ``rclpy.spin``); ``--tuned-relay`` adds the relay built like the
nodes (:mod:`robot_dynamics.instruments.relay`) as a second figure. Relay and node run side by side
for the whole run and are fed in alternating short phases (relay, node, relay, node…): each
ratio is the median of the per-pair ratios, so one noisy phase of a shared machine cannot
decide the verdict. CPU = user + system time of the fed process per second of stream.
`robot_dynamics bench soak|fuzz|descriptions|storm|restart|hot-swap`: the reliability runs of
:mod:`robot_dynamics.instruments.reliability` (`bench soak --duration 600` is the long soak).

Every ROS process runs with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST on a ROS domain this run
has checked to be empty; every node process ends with the bench (even a killed one) and the
Fast DDS shared-memory files it leaves are removed.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.instruments import processes

TARGETS = {
    # stream target: (module, output topic, default rate [Hz], bundled model, root joint)
    'dynamics': ('robot_dynamics.ros.dynamics_node', 'inverse_dynamics_torques', 1000.0, 'fr3_arm.urdf', 'fixed'),
    'centroidal': ('robot_dynamics.ros.centroidal_node', 'com', 500.0, 'quadruped.urdf', 'floating'),
}

RELIABILITY_TARGETS = ('soak', 'fuzz', 'descriptions', 'storm', 'restart', 'hot-swap')
"""Targets run by :mod:`robot_dynamics.instruments.reliability`."""

BENCH_TARGETS = {
    'dynamics': 'robot_dynamics.instruments.bench:run_stream',
    'centroidal': 'robot_dynamics.instruments.bench:run_stream',
    **{target: 'robot_dynamics.instruments.reliability:run' for target in RELIABILITY_TARGETS},
    'contact': 'robot_dynamics.instruments.bench_contact:run',
    'validation-corpus': 'robot_dynamics.instruments.validation_corpus:run',
    'demo': 'robot_dynamics.instruments.bench_demo:run',
}
"""``bench TARGET`` → ``'module:function'`` called with the parsed arguments (returns the exit
code). To add a target, add one entry here; a module that needs options of its own defines
``add_bench_arguments(parser)``, which :func:`add_arguments` calls."""

BARE_RELAY = 'robot_dynamics.instruments.bare_relay'
TUNED_RELAY = 'robot_dynamics.instruments.relay'
HUMANOID_JOINTS = 30
"""A floating-base model with at least this many joints is held to the humanoid targets."""


class BenchError(RobotDynamicsError):
    """A benchmark could not be carried out (no free ROS domain, a node never connected...)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('target', choices=list(BENCH_TARGETS), help='which node to measure, or which run')
    parser.add_argument('--duration', type=float,
                        help='seconds of measured feed per phase (default 4; soak: per node, default 20)')
    parser.add_argument('--pairs', type=int, default=5,
                        help='relay/node phase pairs (default 5); the ratios are medians over the pairs')
    parser.add_argument('--rate', type=float, help='feed rate [Hz] (default: 1000 dynamics, 500 centroidal)')
    parser.add_argument('--urdf', help='robot model to measure (default: the bundled arm or quadruped)')
    parser.add_argument('--root-joint', choices=('fixed', 'floating'),
                        help="'floating' for a free-flyer base, fed odom too (default: fixed for the arm and "
                             "any --urdf, floating for the quadruped)")
    parser.add_argument('--tuned-relay', action='store_true',
                        help='also measure the relay built like the nodes (second baseline figure)')
    parser.add_argument('--warmup', type=float, default=1.0, help='seconds fed before each phase is measured '
                                                                  '(default 1)')
    parser.add_argument('--format', choices=('text', 'json'), default='text')
    parser.add_argument('--count', type=int, help='reliability runs: fuzzed messages (core; 5%% of it over ROS), '
                                                  'service calls, restarts or description swaps')
    parser.add_argument('--nodes', nargs='+', choices=sorted(TARGETS), default=sorted(TARGETS),
                        help='soak: which nodes (default both)')
    parser.add_argument('--service-cpu-share', type=float,
                        help="storm: the node's service_cpu_share (default: the node's default, 0.02)")
    parser.add_argument('--rss-bound-mib', type=float, default=16.0,
                        help='soak: largest accepted resident-memory growth of a node once its buffers are '
                             'full [MiB] (default 16)')
    for module in sorted({entry.split(':')[0] for entry in BENCH_TARGETS.values()} - {__name__}):
        extra = getattr(importlib.import_module(module), 'add_bench_arguments', None)
        if extra is not None:
            extra(parser)


def run(args: argparse.Namespace) -> int:
    """Claim an empty ROS domain, run ``args.target``, and remove the Fast DDS files this
    process and its children leave (Fast DDS keeps a port file whose last user has ended)."""
    tracker = processes.DdsFileTracker()
    try:
        domain = claim_ros_domain()
        print(f'ROS_DOMAIN_ID={domain} (no other participant on it), discovery LOCALHOST', file=sys.stderr)
        module, function = BENCH_TARGETS[args.target].split(':')
        return int(getattr(importlib.import_module(module), function)(args) or 0)
    finally:
        tracker.stop()
        processes.stop_stray_node_processes(os.getpid())
        tracker.remove_leftovers()


# ---------------------------------------------------------------------------- ROS domain
def claim_ros_domain(attempts: int = 12, listen: float = 5.0) -> int:
    """Pick a ROS domain no other participant uses and export it (ROS_DOMAIN_ID, with
    ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST) for this process and its children.

    Tried in turn: ROS_DOMAIN_ID if set, then domains derived from this process id; each is
    listened to for ``listen`` seconds. Raises :class:`BenchError` when none is free."""
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    first = int(os.environ.get('ROS_DOMAIN_ID') or os.getpid() % 100 + 1)
    candidates = [first] + [(os.getpid() + 37 * k) % 100 + 1 for k in range(1, attempts)]
    for domain in dict.fromkeys(candidates):
        others = other_nodes_on_domain(domain, listen)
        if not others:
            os.environ['ROS_DOMAIN_ID'] = str(domain)
            return domain
        print(f'ROS domain {domain} is in use ({", ".join(sorted(others)[:3])}...): trying another',
              file=sys.stderr)
    raise BenchError(f'no free ROS domain among {sorted(set(candidates))}: another run is using each of them')


def other_nodes_on_domain(domain: int, listen: float = 5.0) -> set:
    """Fully qualified names of the ROS nodes discovered on ``domain`` within ``listen`` seconds
    (loopback discovery), other than the probe itself."""
    import rclpy
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    name = f'bench_domain_probe_{os.getpid()}'
    node = rclpy.create_node(name, context=context)
    try:
        deadline = time.monotonic() + listen
        while True:
            others = {f'{namespace.rstrip("/")}/{other}' for other, namespace in node.get_node_names_and_namespaces()
                      if other != name}
            if others or time.monotonic() > deadline:
                return others
            time.sleep(0.05)
    finally:
        node.destroy_node()
        shutdown_context(context)


def shutdown_context(context) -> None:
    """Shut the rclpy ``context`` down and remove the Fast DDS segment files it leaves."""
    import rclpy
    owned = processes.dds_files_of(os.getpid())
    rclpy.try_shutdown(context=context)
    processes.remove_unused_dds_files(owned, ports=False)


# ---------------------------------------------------------------------------- stream benchmark
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


@dataclass
class StreamSubject:
    """One process fed in the alternating phases: a relay or the node under test."""

    label: str
    module_args: list
    output: str
    lane: str
    node_output: bool
    reads_odom: bool = False


def run_stream(args: argparse.Namespace) -> int:
    """`bench dynamics|centroidal`: print the node's figures against the bare relay; exit 0 when
    the targets are met."""
    module, output, default_rate, model, default_root = TARGETS[args.target]
    urdf, root_joint = _model_of(args, model, default_root)
    rate = args.rate or default_rate
    duration = args.duration or 4.0
    subjects = [StreamSubject('bare relay', [BARE_RELAY], 'relayed_joint_states', '/bench/bare', False)]
    if args.tuned_relay:
        subjects.append(StreamSubject('tuned relay', [TUNED_RELAY], 'relayed_joint_states', '/bench/tuned', False))
    subjects.append(StreamSubject('node', [module, '-p', f'urdf_file:={urdf}', '-p', f'root_joint:={root_joint}'],
                                  output, '/bench/node', True, reads_odom=args.target == 'centroidal'))
    compute = _compute_figures(args.target, urdf, root_joint)
    phases = alternate_phases(subjects, urdf, root_joint, rate, duration, args.warmup, args.pairs)
    result = _stream_result(args.target, urdf, root_joint, rate, duration, phases, compute)
    result['targets'] = stream_targets(result)
    print(json.dumps(result, indent=2) if args.format == 'json' else _stream_text(result))
    return 0 if all(target['met'] for target in result['targets']) else 1


def _model_of(args: argparse.Namespace, bundled: str, bundled_root: str) -> tuple:
    if args.urdf:
        if not os.path.isfile(args.urdf):
            raise BenchError(f'--urdf {args.urdf}: no such file')
        return os.path.abspath(args.urdf), args.root_joint or 'fixed'
    from robot_dynamics.models import model_path
    return str(model_path(bundled)), args.root_joint or bundled_root


def alternate_phases(subjects: list, urdf: str, root_joint: str, rate: float, duration: float, warmup: float,
                     pairs: int) -> dict:
    """Start every subject's process once, then feed them one at a time, ``pairs`` rounds;
    returns label → list of :class:`StreamFigures` (one per round)."""
    started, feeders = [], []
    try:
        for subject in subjects:
            node_name = _bench_node_name(subject.module_args[0])
            started.append(_start_node(subject.module_args, node_name, subject.lane))
            feeders.append(StreamFeeder(_output_topic(node_name, subject.output, subject.node_output, subject.lane),
                                        subject.output, urdf, root_joint, efforts=True,
                                        input_namespace=subject.lane))
        for subject, process, feeder in zip(subjects, started, feeders):
            feeder.wait_connected(process=process, odom=subject.reads_odom)
        phases = {subject.label: [] for subject in subjects}
        for _ in range(max(1, pairs)):
            for subject, process, feeder in zip(subjects, started, feeders):
                phases[subject.label].append(_measured_phase(feeder, process, rate, duration, warmup))
        return phases
    finally:
        for feeder in feeders:
            feeder.close()
        for process in started:
            _stop_node(process)


def _measured_phase(feeder: 'StreamFeeder', process, rate: float, duration: float, warmup: float) -> StreamFigures:
    """Feed ``warmup`` seconds, then ``duration`` measured seconds, then wait for the answers in
    flight; latency and CPU of the measured part."""
    feeder.received.clear()
    feeder.feed(rate, warmup)
    cpu_before, wall_before = process_cpu_seconds(process.pid), time.monotonic()
    sent = feeder.feed(rate, duration)
    _wait_for_stragglers(feeder, len(sent))
    cpu, seconds = process_cpu_seconds(process.pid) - cpu_before, time.monotonic() - wall_before
    if process.poll() is not None:
        raise BenchError(f'the process under test ended (exit {process.returncode}) during the run')
    figures = _figures(sent, feeder.received)
    figures.cpu_s, figures.seconds = cpu, seconds
    return figures


def _wait_for_stragglers(feeder: 'StreamFeeder', expected: int, quiet: float = 0.3, limit: float = 10.0) -> None:
    """Return once ``expected`` answers came, or none for ``quiet`` seconds (at most ``limit``)."""
    deadline = time.monotonic() + limit
    count, last_change = len(feeder.received), time.monotonic()
    while time.monotonic() < deadline and len(feeder.received) < expected:
        time.sleep(0.02)
        if len(feeder.received) != count:
            count, last_change = len(feeder.received), time.monotonic()
        elif time.monotonic() - last_change > quiet:
            return


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time [s] of process ``pid`` so far (all its threads; 0 when gone)."""
    try:
        with open(f'/proc/{pid}/stat', encoding='ascii', errors='replace') as stat:
            fields = stat.read().rsplit(')', 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def _pair_ratio(node: list, baseline: list, value) -> float:
    ratios = [value(n) / value(b) for n, b in zip(node, baseline) if value(b) > 0]
    return statistics.median(ratios) if ratios else float('inf')


def _pooled(figures: list) -> dict:
    sent, answered = sum(f.sent for f in figures), sum(f.answered for f in figures)
    return {'sent': sent, 'answered': answered, 'answered_fraction': answered / sent if sent else 0.0,
            'p50_ms_median': statistics.median(f.p50_ms for f in figures),
            'p99_ms_median': statistics.median(f.p99_ms for f in figures),
            'max_ms': max(f.max_ms for f in figures),
            'cpu_per_second_median': statistics.median(f.cpu_per_second for f in figures),
            'phases': [_latencies(f) for f in figures]}


def _stream_result(target: str, urdf: str, root_joint: str, rate: float, duration: float, phases: dict,
                   compute: dict) -> dict:
    from robot_dynamics.core.model.model import RobotModel
    joints = RobotModel.from_urdf_file(urdf, root_joint=root_joint).num_joints
    node = phases['node']
    result = {'target': target, 'urdf': urdf, 'root_joint': root_joint, 'joints': joints, 'rate_hz': rate,
              'phase_s': duration, 'pairs': len(node), 'figures': {label: _pooled(f) for label, f in phases.items()},
              'compute_us': compute, 'load_average_1_5_15': list(os.getloadavg())}
    for label, key in (('bare relay', 'bare'), ('tuned relay', 'tuned')):
        if label in phases:
            baseline = phases[label]
            result[f'{key}_ratios'] = {
                'p50': _pair_ratio(node, baseline, lambda f: f.p50_ms),
                'p99': _pair_ratio(node, baseline, lambda f: f.p99_ms),
                'cpu': _pair_ratio(node, baseline, lambda f: f.cpu_per_second)}
    return result


def stream_targets(result: dict) -> list:
    """The targets the measured model is held to, each with its value and whether it is met.

    Every model: node and bare relay each answer ≥ 99.9 % (a baseline that dropped its slowest
    messages would flatter its percentiles) and the node's CPU per second of stream ≤ 2× the
    relay's. Arm (fixed base) dynamics: p50 ≤ 1.25×, p99 ≤ 1.5× the bare relay. Humanoid
    (floating base, ≥ :data:`HUMANOID_JOINTS` joints): p50 ≤ 1.5×."""
    figures, ratios = result['figures'], result['bare_ratios']
    targets = [_target('node answered', figures['node']['answered_fraction'], '>=', 0.999),
               _target('bare relay answered', figures['bare relay']['answered_fraction'], '>=', 0.999),
               _target('CPU ratio to bare relay', ratios['cpu'], '<=', 2.0)]
    humanoid = result['root_joint'] == 'floating' and result['joints'] >= HUMANOID_JOINTS
    if humanoid:
        targets.append(_target('p50 ratio to bare relay', ratios['p50'], '<=', 1.5))
    elif result['target'] == 'dynamics' and result['root_joint'] == 'fixed':
        targets += [_target('p50 ratio to bare relay', ratios['p50'], '<=', 1.25),
                    _target('p99 ratio to bare relay', ratios['p99'], '<=', 1.5)]
    return targets


def _target(name: str, value: float, relation: str, bound: float) -> dict:
    met = value >= bound if relation == '>=' else value <= bound
    return {'name': name, 'value': value, 'target': f'{relation} {bound:g}', 'met': bool(met)}


def _stream_text(result: dict) -> str:
    lines = [f"bench {result['target']}: {os.path.basename(result['urdf'])} ({result['joints']} joints, "
             f"{result['root_joint']} base) at {result['rate_hz']:.0f} Hz, {result['pairs']} alternating pairs "
             f"of {result['phase_s']:g} s phases",
             f"{'':14}{'answered':>10}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'CPU s/s':>9}   (medians over phases)"]
    for label, pooled in result['figures'].items():
        lines.append(f"{label:14}{pooled['answered_fraction']:>10.4%}{pooled['p50_ms_median']:>9.3f}"
                     f"{pooled['p99_ms_median']:>9.3f}{pooled['max_ms']:>9.3f}{pooled['cpu_per_second_median']:>9.3f}")
    for key, label in (('bare_ratios', 'bare relay'), ('tuned_ratios', 'tuned relay')):
        if key in result:
            ratios = result[key]
            lines.append(f"node / {label} (median of pair ratios): p50 {ratios['p50']:.2f}, p99 {ratios['p99']:.2f}, "
                         f"CPU {ratios['cpu']:.2f}")
    compute = result['compute_us']
    lines.append(f"compute per message: node core {compute['node_core']:.1f} us vs raw pinocchio "
                 f"{compute['raw_pinocchio']:.1f} us, ratio {compute['ratio']:.2f} (figure only)")
    for target in result['targets']:
        value = f"{target['value']:.4%}" if target['target'].startswith('>=') else f"{target['value']:.2f}"
        lines.append(f"target {target['name']}: {value} ({target['target']}): {'met' if target['met'] else 'NOT met'}")
    load = result['load_average_1_5_15']
    lines.append(f'load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}')
    return '\n'.join(lines)


# ---------------------------------------------------------------------------- node processes and feed
def _latencies(figures: StreamFigures) -> dict:
    return {'p50': figures.p50_ms, 'p90': figures.p90_ms, 'p99': figures.p99_ms, 'max': figures.max_ms,
            'sent': figures.sent, 'answered': figures.answered, 'cpu_per_second': figures.cpu_per_second}


def _measure_process(module_args: list, output: str, urdf: str, root_joint: str, rate: float,
                     args: argparse.Namespace, node_output: bool = False) -> StreamFigures:
    """Start a node process, feed it ``args.warmup`` then ``args.duration`` seconds, and measure
    latency on its output topic and its CPU use."""
    node_name = _bench_node_name(module_args[0])
    process = _start_node(module_args, node_name)
    try:
        with StreamFeeder(_output_topic(node_name, output, node_output), output, urdf, root_joint,
                          efforts=True) as feeder:
            feeder.wait_connected(process=process, odom=output == 'com')
            return _measured_phase(feeder, process, rate, args.duration, args.warmup)
    finally:
        _stop_node(process)


def _bench_node_name(module: str) -> str:
    return f'bench_{module.rsplit(".", 1)[-1]}_{os.getpid()}'


def _output_topic(node_name: str, output: str, node_output: bool = True, lane: str = '/bench') -> str:
    return f'/{node_name}/{output}' if node_output else f'{lane}/relayed'


def _start_node(module_args: list, node_name: str, lane: str = '/bench'):
    """Start ``python -m module_args[0]`` as node ``node_name`` reading ``lane``/joint_states and
    ``lane``/odom (a relay publishes ``lane``/relayed); ``module_args[1:]`` are extra ROS arguments
    (``-p name:=value``...). The process ends when this one does."""
    command = [sys.executable, '-m', module_args[0], '--ros-args', '-r', f'__node:={node_name}',
               '-r', f'joint_states:={lane}/joint_states', '-r', f'odom:={lane}/odom',
               '-r', 'robot_description:=/bench/robot_description',
               '-r', f'relayed_joint_states:={lane}/relayed', '--log-level', 'error'] + module_args[1:]
    return processes.start_node_process(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _stop_node(process) -> None:
    processes.stop_node_process(process)


class StreamFeeder:
    """Publishes joint_states (and odom for a floating base) on /bench/joint_states from this
    process, and records every message arriving on ``topic``.

    ``received`` holds (input stamp [ns], arrival wall time [ns]) per answer; with
    ``keep_messages`` also ``messages``: (input stamp [ns], joint names, efforts [N·m]).
    ``names`` are the joint names sent (default: the model's joints); positions [rad] follow
    a slow sine about a fixed random pose inside the joint limits. joint_states are published
    with the outputs' QoS (50 deep), or as deep as the nodes' input queue with ``deep_history``,
    on ``input_namespace``/joint_states (and ``input_namespace``/odom).
    """

    def __init__(self, topic: str, output: str, urdf: str, root_joint: str, names=None, efforts: bool = False,
                 keep_messages: bool = False, deep_history: bool = False, input_namespace: str = '/bench'):
        import numpy as np
        import rclpy
        from geometry_msgs.msg import PointStamped
        from sensor_msgs.msg import JointState

        from robot_dynamics.core.model.model import RobotModel
        from robot_dynamics.ros.common import JOINT_STATE_QOS, SENSOR_QOS
        from robot_dynamics.ros.spinning import NodeSpinner

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
        self.joint_pub = self.node.create_publisher(JointState, f'{input_namespace}/joint_states',
                                                    JOINT_STATE_QOS if deep_history else SENSOR_QOS)
        self.odom_pub = None
        if root_joint == 'floating':
            from nav_msgs.msg import Odometry
            self.odom_pub = self.node.create_publisher(Odometry, f'{input_namespace}/odom', SENSOR_QOS)
        self.publish_failures = 0
        self._spinner = NodeSpinner([self.node])
        self._spin_thread = threading.Thread(target=self._spinner.spin, daemon=True)
        self._spin_thread.start()

    def _on_output(self, message) -> None:
        stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
        self.received.append((stamp, time.time_ns()))
        if self._keep:
            self.messages.append((stamp, tuple(message.name), tuple(message.effort)))

    def wait_connected(self, timeout: float = 30.0, process=None, odom: bool = False) -> None:
        """Block until the node under test publishes ``topic`` and reads joint_states (and, with
        ``odom``, odom for a floating base); ``process``: its Popen, to stop waiting when it ends."""
        deadline = time.monotonic() + timeout
        while not self._connected(odom):
            if process is not None and process.poll() is not None:
                raise BenchError(f'the node under test ended (exit {process.returncode}) before connecting')
            if time.monotonic() > deadline:
                raise BenchError(f'the node under test never connected to {self.topic}')
            time.sleep(0.05)

    def _connected(self, odom: bool) -> bool:
        odom_read = not odom or self.odom_pub is None or self.odom_pub.get_subscription_count() >= 1
        return (self.node.count_publishers(self.topic) >= 1 and self.joint_pub.get_subscription_count() >= 1
                and odom_read)

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

    from robot_dynamics.core.model.model import RobotModel

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

    from robot_dynamics.core.streams.live_torques import LiveTorqueEstimator

    n, names = robot.num_joints, list(robot.joint_names)
    # As rclpy hands them over: names a list of str, float64[] fields array.array('d').
    samples = [tuple(array.array('d', rng.uniform(-scale, scale, n)) for scale in (1, 1, 5)) for _ in range(64)]
    model, data, zeros = robot.model, robot.model.createData(), np.zeros(robot.model.nv)
    estimator = LiveTorqueEstimator(robot)
    raw_samples = samples
    if model.nq != n or model.nv != n:  # floating base, continuous joints: pinocchio's q, v built once, untimed
        raw_samples = [(array.array('d', robot.configuration(np.asarray(p))), array.array('d', robot.tangent(
            np.asarray(v))), e) for p, v, e in samples]

    def raw(k):
        position, velocity, _ = raw_samples[k % 64]
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

    from robot_dynamics.core.floating_base.centroidal import BalanceSettings, CentroidalMonitor

    feet = tuple(name for name in robot.description.links if name.endswith('_foot'))
    monitor = CentroidalMonitor(robot, BalanceSettings(contact_frames=feet))
    states = []
    for _ in range(64):
        joints = np.clip(rng.uniform(-0.5, 0.5, robot.num_joints), robot.limits.lower, robot.limits.upper)
        q = robot.configuration(joints, [0, 0, 0.45, 0, 0, 0, 1] if robot.floating_base else None)
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
