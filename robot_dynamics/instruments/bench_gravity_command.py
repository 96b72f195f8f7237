"""`robot_dynamics bench gravity-command`: dynamics_node's ``~/gravity_command`` against its
``~/gravity_torques``: the same values reordered (exact) and the same latency.

dynamics_node runs in its own process on the bundled arm with ``command_joints`` in reverse
model order; this process feeds joint_states at ``--rate`` (default 1 kHz) in ``--pairs``
phases of ``--duration`` seconds and receives both outputs. ``~/gravity_command``
(std_msgs/Float64MultiArray) carries no stamp: each command is matched to the
``~/gravity_torques`` message whose efforts, reordered, are bit for bit its data, and takes
that message's stamp (a command whose torques message was lost in transport stays unmatched;
more unmatched commands than lost messages would be a wrong command). Latency = receipt −
joint-state stamp. Target: every command equal to a gravity_torques message reordered, and
the command's p50 latency within 5 % of the torques' (median over the phases). The node
publishes the command first, then the JointState outputs, one after another.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

P50_TARGET = 0.05


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # --rate, --duration, --pairs, --warmup and --format of bench are used


def run(args: argparse.Namespace) -> int:
    """Print the figures; exit 0 when both targets are met."""
    result = measure(args.rate or 1000.0, args.duration or 4.0, args.pairs, args.warmup)
    if args.format == 'json':
        print(json.dumps(result, indent=2))
    else:
        print(_text(result))
    return 0 if result['met'] else 1


def measure(rate: float, duration: float, pairs: int, warmup: float) -> dict:
    """The run of the module docstring; per-phase p50 latencies [ms] and the verdicts."""
    from std_msgs.msg import Float64MultiArray

    from robot_dynamics.core.model.model import RobotModel
    from robot_dynamics.instruments.reliability_common import wait_for
    from robot_dynamics.instruments.stream_feeder import (
        BenchError,
        StreamFeeder,
        bench_node_name,
        output_topic,
        start_node,
        stop_node,
        wait_for_stragglers,
    )
    from robot_dynamics.models import model_path
    from robot_dynamics.ros.topics import JOINT_STATE_QOS

    urdf = str(model_path('fr3_arm.urdf'))
    names = RobotModel.from_urdf_file(urdf).joint_names
    order = list(reversed(range(len(names))))
    module = 'robot_dynamics.ros.dynamics_node'
    node = bench_node_name(module)
    joints = ', '.join(names[index] for index in order)
    process = start_node(
        [module, '-p', f'urdf_file:={urdf}', '-p', f'command_joints:=[{joints}]'], node
    )
    commands: list = []
    try:
        with StreamFeeder(
            output_topic(node, 'gravity_torques'),
            'gravity_torques',
            urdf,
            'fixed',
            efforts=True,
            keep_messages=True,
        ) as feeder:
            command_topic = output_topic(node, 'gravity_command')
            feeder.node.create_subscription(
                Float64MultiArray,
                command_topic,
                lambda message: commands.append((time.time_ns(), tuple(message.data))),
                JOINT_STATE_QOS,
            )
            feeder.wait_connected(process=process)
            if not wait_for(lambda: feeder.node.count_publishers(command_topic) >= 1, 30.0):
                raise BenchError('dynamics_node never published ~/gravity_command')
            feeder.feed(rate, max(warmup, 1.0))  # the node sees the command's subscriber
            phases = []
            for _ in range(max(1, pairs)):
                feeder.received.clear()
                feeder.messages.clear()
                commands.clear()
                sent = feeder.feed(rate, duration)
                wait_for_stragglers(feeder, len(sent))
                phases.append(_phase(sent, feeder.received, feeder.messages, commands, order))
    finally:
        stop_node(process)
    ratios = [p['command_p50_ms'] / p['torques_p50_ms'] for p in phases if p['torques_p50_ms']]
    ratio = statistics.median(ratios) if ratios else float('inf')
    exact = all(
        p['unmatched_commands'] <= p['sent'] - p['torques'] and p['commands'] > 0 for p in phases
    )
    return {
        'rate_hz': rate,
        'duration_s': duration,
        'phases': phases,
        'p50_ratio_median': ratio,
        'exact': exact,
        'met': bool(exact and abs(ratio - 1.0) <= P50_TARGET),
    }


def _phase(sent: list, received: list, messages: list, commands: list, order: list) -> dict:
    """One phase's figures: both outputs' p50 latency [ms] and the commands without an equal
    gravity_torques message."""
    sent_set = set(sent)
    stamp_of = {tuple(np.asarray(effort)[order].tolist()): stamp for stamp, _, effort in messages}
    torques_ms = [(arrival - stamp) * 1e-6 for stamp, arrival in received if stamp in sent_set]
    command_ms, unmatched = [], 0
    for arrival, data in commands:
        stamp = stamp_of.get(tuple(data))
        if stamp is None:
            unmatched += 1
        elif stamp in sent_set:
            command_ms.append((arrival - stamp) * 1e-6)
    return {
        'sent': len(sent),
        'torques': len(torques_ms),
        'commands': len(command_ms),
        'unmatched_commands': unmatched,
        'torques_p50_ms': float(np.median(torques_ms)) if torques_ms else None,
        'command_p50_ms': float(np.median(command_ms)) if command_ms else None,
    }


def _text(result: dict) -> str:
    lines = [
        f"bench gravity-command: dynamics_node, bundled arm, {result['rate_hz']:.0f} Hz, "
        f"{result['duration_s']:g} s per phase, command_joints in reverse order",
        f'{"phase":>6}{"sent":>8}{"torques":>9}{"commands":>10}{"unmatched":>11}'
        f'{"torques p50":>13}{"command p50":>13}',
    ]
    for index, phase in enumerate(result['phases'], 1):
        lines.append(
            f"{index:>6}{phase['sent']:>8}{phase['torques']:>9}{phase['commands']:>10}"
            f"{phase['unmatched_commands']:>11}{phase['torques_p50_ms'] or float('nan'):>10.3f} ms"
            f"{phase['command_p50_ms'] or float('nan'):>10.3f} ms"
        )
    lines.append(
        f"command p50 / torques p50, median over the phases: {result['p50_ratio_median']:.3f} "
        f"(target 1 ± {P50_TARGET:g}); every command the torques reordered: "
        + ('yes' if result['exact'] else 'NO')
        + ('; met' if result['met'] else '; NOT met')
    )
    return '\n'.join(lines)
