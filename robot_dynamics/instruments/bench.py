"""Benchmark a node against a bare rclpy relay measured in the same run (latency, answered
fraction, CPU).

`robot_dynamics bench dynamics|centroidal [--urdf FILE] [--root-joint fixed|floating] [--rate HZ]`:
the node in its own process, fed joint_states (and odom for a floating base) from this
process; latency = receipt of its output (~/inverse_dynamics_torques or ``--output``, ~/com) −
input stamp.
Defaults: dynamics on the bundled 7-DoF arm at 1 kHz, centroidal on the bundled floating-base
quadruped at 500 Hz. The baseline is the relay a user would write
(:mod:`robot_dynamics.instruments.bare_relay`:
rclpy defaults, depth 100, ``rclpy.spin``); ``--tuned-relay`` adds the relay built like the
nodes (:mod:`robot_dynamics.instruments.relay`) as a second figure. Relay and node run side by side
for the whole run and are fed in alternating short phases (relay, node, relay, node…): each
ratio is the median of the per-pair ratios, so one noisy phase of a shared machine cannot
decide the verdict. CPU = user + system time of the fed process per second of stream.
`robot_dynamics bench soak|fuzz|descriptions|storm|restart|hot-swap`: the reliability runs of
:mod:`robot_dynamics.instruments.reliability` (`bench soak --duration 600` is the long soak).

The feeder and the node processes are in :mod:`robot_dynamics.instruments.stream_feeder`, the
per-message compute figures in :mod:`robot_dynamics.instruments.compute_figures`.

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
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robot_dynamics.commands.argument_types import number, whole_number
from robot_dynamics.instruments import processes
from robot_dynamics.instruments.compute_figures import (
    CORE_RATIO_TARGET,
    bench_contact_frames,
    compute_figures,
)
from robot_dynamics.instruments.stream_feeder import (
    BenchError,
    StreamFeeder,
    StreamFigures,
    bench_node_name,
    latencies,
    output_topic,
    start_node,
    stop_node,
    stream_figures,
    wait_for_stragglers,
)
from robot_dynamics.ros.ros_domain import claim_ros_domain

TARGETS = {
    # stream target: (module, output topic, default rate [Hz], bundled model, root joint)
    'dynamics': (
        'robot_dynamics.ros.dynamics_node',
        'inverse_dynamics_torques',
        1000.0,
        'fr3_arm.urdf',
        'fixed',
    ),
    'centroidal': (
        'robot_dynamics.ros.centroidal_node',
        'com',
        500.0,
        'quadruped.urdf',
        'floating',
    ),
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
    'realtime': 'robot_dynamics.instruments.bench_realtime:run',
    'moving-base': 'robot_dynamics.instruments.bench_moving_base:run',
    'balance': 'robot_dynamics.instruments.bench_balance:run',
    'payload': 'robot_dynamics.instruments.bench_payload:run',
    'residual': 'robot_dynamics.instruments.bench_residual:run',
    'gravity-command': 'robot_dynamics.instruments.bench_gravity_command:run',
}
"""``bench TARGET`` → ``'module:function'`` called with the parsed arguments (returns the exit
code). To add a target, add one entry here; a module that needs options of its own defines
``add_bench_arguments(parser)``, which :func:`add_arguments` calls."""

BARE_RELAY = 'robot_dynamics.instruments.bare_relay'
TUNED_RELAY = 'robot_dynamics.instruments.relay'
DYNAMICS_OUTPUTS = ('inverse_dynamics_torques', 'gravity_torques', 'external_torques')
HUMANOID_JOINTS = 30
"""A floating-base model with at least this many joints is held to the humanoid targets."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        'target', choices=list(BENCH_TARGETS), help='which node to measure, or which run'
    )
    parser.add_argument(
        '--duration',
        type=number(0.0, above=True),
        help='seconds of measured feed per phase (default 4; soak: per node, default 20)',
    )
    parser.add_argument(
        '--pairs',
        type=whole_number(1),
        default=5,
        help='relay/node phase pairs (default 5); the ratios are medians over the pairs',
    )
    parser.add_argument(
        '--rate',
        type=number(0.0, above=True),
        help='feed rate [Hz] (default: 1000 dynamics, 500 centroidal)',
    )
    parser.add_argument(
        '--urdf', help='robot model to measure (default: the bundled arm or quadruped)'
    )
    parser.add_argument(
        '--root-joint',
        choices=('fixed', 'floating'),
        help="'floating' for a free-flyer base, fed odom too (default: fixed for the arm and any "
        "--urdf, floating for the quadruped)",
    )
    parser.add_argument(
        '--output',
        choices=DYNAMICS_OUTPUTS,
        help='dynamics: the output whose latency is measured (default inverse_dynamics_torques, '
        'published first; external_torques is published last)',
    )
    parser.add_argument(
        '--feet',
        action='store_true',
        help="dynamics, floating base: the node with base_state odom and the model's feet as "
        'contact_frames (foot forces, legged inverse dynamics) on',
    )
    parser.add_argument(
        '--tuned-relay',
        action='store_true',
        help='also measure the relay built like the nodes (second baseline figure)',
    )
    parser.add_argument(
        '--motors',
        action='store_true',
        help='dynamics: also measure the node with a friction file (viscous, Coulomb, Stribeck, '
        'rotor inertia) and effort offsets, against the plain node (target: p50 within 5 %%)',
    )
    parser.add_argument(
        '--warmup',
        type=number(0.0),
        default=1.0,
        help='seconds fed before each phase is measured (default 1)',
    )
    parser.add_argument('--format', choices=('text', 'json'), default='text')
    parser.add_argument(
        '--count',
        type=whole_number(1),
        help='reliability runs: fuzzed messages (core; 5%% of it over ROS), service calls, '
        'restarts or description swaps',
    )
    parser.add_argument(
        '--nodes',
        nargs='+',
        choices=sorted(TARGETS),
        default=sorted(TARGETS),
        help='soak: which nodes (default both)',
    )
    parser.add_argument(
        '--service-cpu-share',
        type=number(0.0, 1.0, above=True),
        help="storm: the node's service_cpu_share (default: the node's default, 0.02)",
    )
    parser.add_argument(
        '--runs',
        type=whole_number(1),
        help='demo: runs in a row (default 20); descriptions: runs of the description storm '
        '(default 5)',
    )
    parser.add_argument(
        '--busy-cores',
        type=whole_number(0),
        default=0,
        help="demo, descriptions: CPU-bound competitors ('while True: pass') running meanwhile "
        '(default 0)',
    )
    parser.add_argument(
        '--rss-bound-mib',
        type=number(0.0, above=True),
        default=16.0,
        help='soak: largest accepted resident-memory growth of a node once its buffers are full '
        '[MiB] (default 16)',
    )
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
        print(
            f'ROS_DOMAIN_ID={domain} (no other participant on it), discovery LOCALHOST',
            file=sys.stderr,
        )
        module, function = BENCH_TARGETS[args.target].split(':')
        return int(getattr(importlib.import_module(module), function)(args) or 0)
    finally:
        tracker.stop()
        processes.stop_stray_node_processes(os.getpid())
        tracker.remove_leftovers()


# ---------------------------------------------------------------------------- stream benchmark


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
    if args.target == 'dynamics' and args.output:
        output = args.output
    urdf, root_joint = _model_of(args, model, default_root)
    rate = args.rate or default_rate
    duration = args.duration or 4.0
    subjects = [
        StreamSubject('bare relay', [BARE_RELAY], 'relayed_joint_states', '/bench/bare', False)
    ]
    if args.tuned_relay:
        subjects.append(
            StreamSubject(
                'tuned relay', [TUNED_RELAY], 'relayed_joint_states', '/bench/tuned', False
            )
        )
    node_args = [module, '-p', f'urdf_file:={urdf}', '-p', f'root_joint:={root_joint}']
    if args.feet and root_joint != 'floating':
        raise BenchError('--feet needs a floating-base model (--root-joint floating)')
    feet = args.target == 'centroidal' or args.feet
    if feet:
        node_args += [
            '-p',
            f"contact_frames:=[{', '.join(bench_contact_frames(urdf, root_joint))}]",
        ]
    if args.target == 'dynamics' and feet:
        node_args += ['-p', 'base_state:=odom']
    subjects.append(StreamSubject('node', node_args, output, '/bench/node', True, reads_odom=feet))
    compute = compute_figures(args.target, urdf, root_joint)
    with tempfile.TemporaryDirectory(prefix='bench_motors_') as folder:
        if args.motors and args.target == 'dynamics':
            motors = node_args + _motor_files(urdf, root_joint, Path(folder))
            subjects.append(StreamSubject('node + motors', motors, output, '/bench/motors', True))
        phases = alternate_phases(
            subjects, urdf, root_joint, rate, duration, args.warmup, args.pairs
        )
    result = _stream_result(args.target, urdf, root_joint, rate, duration, phases, compute)
    result['output'] = output
    result['feet'] = feet
    result['targets'] = stream_targets(result)
    print(json.dumps(result, indent=2) if args.format == 'json' else _stream_text(result))
    return 0 if all(target['met'] for target in result['targets']) else 1


def _motor_files(urdf: str, root_joint: str, folder: Path) -> list:
    """dynamics_node arguments for a friction file (every friction term and rotor inertia) and
    an effort offsets file for the model's joints, written in ``folder``."""
    from robot_dynamics.core.live.effort_offsets import save_effort_offsets
    from robot_dynamics.core.model.model import RobotModel

    names = RobotModel.from_urdf_file(urdf, root_joint=root_joint).joint_names
    friction, offsets = folder / 'friction.yaml', folder / 'offsets.yaml'
    entry = (
        '    viscous: 0.21\n    coulomb: 0.5\n    offset: 0.0\n    stribeck_static: 0.65\n'
        '    stribeck_velocity: 0.05\n    sign_velocity: 0.005\n    rotor_inertia: 0.074\n'
    )
    friction.write_text('joints:\n' + ''.join(f'  {name}:\n{entry}' for name in names))
    save_effort_offsets(str(offsets), names, np.full(len(names), 0.1))
    return ['-p', f'friction_file:={friction}', '-p', f'effort_offsets_file:={offsets}']


def _model_of(args: argparse.Namespace, bundled: str, bundled_root: str) -> tuple:
    if args.urdf:
        if not os.path.isfile(args.urdf):
            raise BenchError(f'--urdf {args.urdf}: no such file')
        return os.path.abspath(args.urdf), args.root_joint or 'fixed'
    from robot_dynamics.models import model_path

    return str(model_path(bundled)), args.root_joint or bundled_root


def alternate_phases(
    subjects: list,
    urdf: str,
    root_joint: str,
    rate: float,
    duration: float,
    warmup: float,
    pairs: int,
) -> dict:
    """Start every subject's process once, then feed them one at a time, ``pairs`` rounds (every
    other round in reverse order); returns label → list of :class:`StreamFigures` (one per
    round)."""
    started, feeders = [], []
    try:
        for subject in subjects:
            node_name = bench_node_name(subject.module_args[0])
            started.append(start_node(subject.module_args, node_name, subject.lane))
            feeders.append(
                StreamFeeder(
                    output_topic(node_name, subject.output, subject.node_output, subject.lane),
                    subject.output,
                    urdf,
                    root_joint,
                    efforts=True,
                    input_namespace=subject.lane,
                )
            )
        for subject, process, feeder in zip(subjects, started, feeders):
            feeder.wait_connected(process=process, odom=subject.reads_odom)
        phases = {subject.label: [] for subject in subjects}
        lanes = list(zip(subjects, started, feeders))
        for round_index in range(max(1, pairs)):
            # every other round backwards: a subject's place in the round biases none of them
            for subject, process, feeder in lanes if round_index % 2 == 0 else lanes[::-1]:
                phases[subject.label].append(
                    _measured_phase(feeder, process, rate, duration, warmup)
                )
        return phases
    finally:
        for feeder in feeders:
            feeder.close()
        for process in started:
            stop_node(process)


def _measured_phase(
    feeder: 'StreamFeeder', process, rate: float, duration: float, warmup: float
) -> StreamFigures:
    """Feed ``warmup`` seconds, then ``duration`` measured seconds, then wait for the answers in
    flight; latency and CPU of the measured part."""
    feeder.received.clear()
    feeder.feed(rate, warmup)
    cpu_before, wall_before = process_cpu_seconds(process.pid), time.monotonic()
    sent = feeder.feed(rate, duration)
    wait_for_stragglers(feeder, len(sent))
    cpu, seconds = process_cpu_seconds(process.pid) - cpu_before, time.monotonic() - wall_before
    if process.poll() is not None:
        raise BenchError(f'the process under test ended (exit {process.returncode}) during the run')
    figures = stream_figures(sent, feeder.received)
    figures.cpu_s, figures.seconds = cpu, seconds
    return figures


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
    return {
        'sent': sent,
        'answered': answered,
        'answered_fraction': answered / sent if sent else 0.0,
        'p50_ms_median': statistics.median(f.p50_ms for f in figures),
        'p99_ms_median': statistics.median(f.p99_ms for f in figures),
        'max_ms': max(f.max_ms for f in figures),
        'cpu_per_second_median': statistics.median(f.cpu_per_second for f in figures),
        'phases': [latencies(f) for f in figures],
    }


def _stream_result(
    target: str,
    urdf: str,
    root_joint: str,
    rate: float,
    duration: float,
    phases: dict,
    compute: dict,
) -> dict:
    from robot_dynamics.core.model.model import RobotModel

    joints = RobotModel.from_urdf_file(urdf, root_joint=root_joint).num_joints
    node = phases['node']
    result = {
        'target': target,
        'urdf': urdf,
        'root_joint': root_joint,
        'joints': joints,
        'rate_hz': rate,
        'phase_s': duration,
        'pairs': len(node),
        'figures': {label: _pooled(f) for label, f in phases.items()},
        'compute_us': compute,
        'load_average_1_5_15': list(os.getloadavg()),
    }
    if 'node + motors' in phases:
        motors = phases['node + motors']
        result['motors_ratios'] = {
            'p50': _pair_ratio(motors, node, lambda f: f.p50_ms),
            'p99': _pair_ratio(motors, node, lambda f: f.p99_ms),
            'cpu': _pair_ratio(motors, node, lambda f: f.cpu_per_second),
        }
    for label, key in (('bare relay', 'bare'), ('tuned relay', 'tuned')):
        if label in phases:
            baseline = phases[label]
            result[f'{key}_ratios'] = {
                'p50': _pair_ratio(node, baseline, lambda f: f.p50_ms),
                'p99': _pair_ratio(node, baseline, lambda f: f.p99_ms),
                'cpu': _pair_ratio(node, baseline, lambda f: f.cpu_per_second),
            }
    return result


def stream_targets(result: dict) -> list:
    """The targets the measured model is held to, each with its value and whether it is met.

    Every model: node and bare relay each answer ≥ 99.9 % (a baseline that dropped its slowest
    messages would flatter its percentiles) and the node's CPU per second of stream ≤ 2× the
    relay's. Arm (fixed base) dynamics: p50 ≤ 1.25×, p99 ≤ 1.5× the bare relay. Humanoid
    (floating base, ≥ :data:`HUMANOID_JOINTS` joints), both nodes: p50 ≤ 1.25×, p99 ≤ 1.6×.
    centroidal: core per message ≤ :data:`CORE_RATIO_TARGET` × its raw pinocchio calls."""
    figures, ratios = result['figures'], result['bare_ratios']
    targets = [
        _target('node answered', figures['node']['answered_fraction'], '>=', 0.999),
        _target('bare relay answered', figures['bare relay']['answered_fraction'], '>=', 0.999),
        _target('CPU ratio to bare relay', ratios['cpu'], '<=', 2.0),
    ]
    if result['target'] == 'centroidal':
        targets.append(
            _target(
                'core ratio to raw pinocchio calls',
                result['compute_us']['ratio'],
                '<=',
                CORE_RATIO_TARGET,
            )
        )
    if 'motors_ratios' in result:
        targets.append(
            _target('p50 with motors / without', result['motors_ratios']['p50'], '<=', 1.05)
        )
    humanoid = result['root_joint'] == 'floating' and result['joints'] >= HUMANOID_JOINTS
    if humanoid:
        targets += [
            _target('p50 ratio to bare relay', ratios['p50'], '<=', 1.25),
            _target('p99 ratio to bare relay', ratios['p99'], '<=', 1.6),
        ]
    elif result['target'] == 'dynamics' and result['root_joint'] == 'fixed':
        targets += [
            _target('p50 ratio to bare relay', ratios['p50'], '<=', 1.25),
            _target('p99 ratio to bare relay', ratios['p99'], '<=', 1.5),
        ]
    return targets


def _target(name: str, value: float, relation: str, bound: float) -> dict:
    met = value >= bound if relation == '>=' else value <= bound
    return {'name': name, 'value': value, 'target': f'{relation} {bound:g}', 'met': bool(met)}


def _stream_text(result: dict) -> str:
    lines = [
        f"bench {result['target']}: {os.path.basename(result['urdf'])} ({result['joints']} joints, "
        f"{result['root_joint']} base) at {result['rate_hz']:.0f} Hz, {result['pairs']} "
        f"alternating pairs of {result['phase_s']:g} s phases; node latency on "
        f"~/{result['output']}" + ('; feet and base state on' if result['feet'] else ''),
        f"{'':14}{'answered':>10}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'CPU s/s':>9}   (medians "
        "over phases)",
    ]
    for label, pooled in result['figures'].items():
        lines.append(
            f"{label:14}{pooled['answered_fraction']:>10.4%}{pooled['p50_ms_median']:>9.3f}{pooled['p99_ms_median']:>9.3f}{pooled['max_ms']:>9.3f}{pooled['cpu_per_second_median']:>9.3f}"
        )
    for key, label in (('bare_ratios', 'bare relay'), ('tuned_ratios', 'tuned relay')):
        if key in result:
            ratios = result[key]
            lines.append(
                f"node / {label} (median of pair ratios): p50 {ratios['p50']:.2f}, p99 "
                f"{ratios['p99']:.2f}, CPU {ratios['cpu']:.2f}"
            )
    if 'motors_ratios' in result:
        ratios = result['motors_ratios']
        lines.append(
            f"node + motors / node (friction, rotor inertia, offsets): p50 {ratios['p50']:.3f}, "
            f"p99 {ratios['p99']:.3f}, CPU {ratios['cpu']:.3f}"
        )
    compute = result['compute_us']
    lines.append(
        f"compute per message: node core {compute['node_core']:.1f} us vs raw pinocchio "
        f"{compute['raw_pinocchio']:.1f} us, ratio {compute['ratio']:.2f} "
        f"({compute.get('note', 'figure only')})"
    )
    if 'with_support_us' in compute:
        lines.append(
            f"  contact frames {' '.join(compute['contact_frames']) or 'none'}; with the support "
            f"polygon and margins read too: {compute['with_support_us']:.1f} us"
        )
    observer = compute.get('observer')
    if observer:
        lines.append(
            f"  and its contact observer {observer['node_core']:.1f} us vs raw pinocchio "
            f"{observer['raw_pinocchio']:.1f} us, ratio {observer['ratio']:.2f} (figure only)"
        )
    for target in result['targets']:
        value = (
            f"{target['value']:.4%}"
            if target['target'].startswith('>=')
            else f"{target['value']:.2f}"
        )
        lines.append(
            f"target {target['name']}: {value} ({target['target']}): "
            f"{'met' if target['met'] else 'NOT met'}"
        )
    load = result['load_average_1_5_15']
    lines.append(f'load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}')
    return '\n'.join(lines)


# ---------------------------------------------------------------------------- one node measured
# alone
def measure_process(
    module_args: list,
    output: str,
    urdf: str,
    root_joint: str,
    rate: float,
    args: argparse.Namespace,
    node_output: bool = False,
) -> StreamFigures:
    """Start a node process, feed it ``args.warmup`` then ``args.duration`` seconds, and measure
    latency on its output topic and its CPU use."""
    node_name = bench_node_name(module_args[0])
    process = start_node(module_args, node_name)
    try:
        with StreamFeeder(
            output_topic(node_name, output, node_output), output, urdf, root_joint, efforts=True
        ) as feeder:
            feeder.wait_connected(process=process, odom=output == 'com')
            return _measured_phase(feeder, process, rate, args.duration, args.warmup)
    finally:
        stop_node(process)
