"""`robot_dynamics bench gravity-command`: dynamics_node's ``~/gravity_command`` against its
``~/gravity_torques``: the same values reordered (exact) and the same latency.

dynamics_node runs in its own process on the bundled arm with ``command_joints`` in reverse
model order; this process feeds joint_states at ``--rate`` (default 1 kHz) in ``--pairs``
phases of ``--duration`` seconds and receives both outputs. ``~/gravity_command``
(std_msgs/Float64MultiArray) carries no stamp: each command is matched to the
``~/gravity_torques`` message whose efforts, reordered, are bit for bit its data, and takes
that message's stamp (a command whose torques message was lost in transport stays unmatched;
more unmatched commands than lost messages would be a wrong command). Latency = arrival −
joint-state stamp, the arrival taken when the middleware of this process received the message
(rmw ``received_timestamp``): both outputs reach this process within microseconds, and the
callback that records the first one (~0.1 ms of rclpy executor) would otherwise delay the
recorded arrival of the second. The arrival at this process's callbacks is printed beside it.
Target: every command equal to a gravity_torques message reordered, and the command's p50
latency within 5 % of the torques' (median over the phases). The node publishes the command
first, then the JointState outputs, one after another.
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
                lambda message, info: commands.append(
                    (time.time_ns(), info['received_timestamp'], tuple(message.data))
                ),
                JOINT_STATE_QOS,
            )
            feeder.wait_connected(process=process)
            if not wait_for(lambda: feeder.node.count_publishers(command_topic) >= 1, 30.0):
                raise BenchError('dynamics_node never published ~/gravity_command')
            feeder.feed(rate, max(warmup, 1.0))  # the node sees the command's subscriber
            phases = []
            for _ in range(max(1, pairs)):
                feeder.received.clear()
                feeder.received_by_middleware.clear()
                feeder.messages.clear()
                commands.clear()
                sent = feeder.feed(rate, duration)
                wait_for_stragglers(feeder, len(sent))
                phases.append(_phase(sent, feeder, commands, order))
    finally:
        stop_node(process)
    ratio = _median_ratio(phases, 'command_p50_ms', 'torques_p50_ms')
    exact = all(
        p['unmatched_commands'] <= p['sent'] - p['torques'] and p['commands'] > 0 for p in phases
    )
    return {
        'rate_hz': rate,
        'duration_s': duration,
        'phases': phases,
        'p50_ratio_median': ratio,
        'p50_ratio_median_at_callback': _median_ratio(
            phases, 'command_p50_at_callback_ms', 'torques_p50_at_callback_ms'
        ),
        'exact': exact,
        'met': bool(exact and abs(ratio - 1.0) <= P50_TARGET),
    }


def _median_ratio(phases: list, numerator: str, denominator: str) -> float:
    ratios = [p[numerator] / p[denominator] for p in phases if p[numerator] and p[denominator]]
    return statistics.median(ratios) if ratios else float('inf')


def _phase(sent: list, feeder, commands: list, order: list) -> dict:
    """One phase's figures: both outputs' p50 latency [ms] (middleware arrival, and arrival at
    the callback) and the commands without an equal gravity_torques message."""
    sent_set = set(sent)
    stamp_of = {
        tuple(np.asarray(effort)[order].tolist()): stamp for stamp, _, effort in feeder.messages
    }
    command_ms, command_at_callback_ms, unmatched = [], [], 0
    for at_callback, by_middleware, data in commands:
        stamp = stamp_of.get(tuple(data))
        if stamp is None:
            unmatched += 1
        elif stamp in sent_set:
            command_ms.append((by_middleware - stamp) * 1e-6)
            command_at_callback_ms.append((at_callback - stamp) * 1e-6)
    torques_ms = _latencies_ms(feeder.received_by_middleware, sent_set)
    return {
        'sent': len(sent),
        'torques': len(torques_ms),
        'commands': len(command_ms),
        'unmatched_commands': unmatched,
        'torques_p50_ms': _median(torques_ms),
        'command_p50_ms': _median(command_ms),
        'torques_p50_at_callback_ms': _median(_latencies_ms(feeder.received, sent_set)),
        'command_p50_at_callback_ms': _median(command_at_callback_ms),
    }


def _latencies_ms(arrivals: list, sent_set: set) -> list:
    return [(arrival - stamp) * 1e-6 for stamp, arrival in arrivals if stamp in sent_set]


def _median(values: list):
    return float(np.median(values)) if values else None


def _pair(middleware_ms, callback_ms) -> str:
    return f"{middleware_ms or float('nan'):.3f} ({callback_ms or float('nan'):.3f})"


def _text(result: dict) -> str:
    lines = [
        f"bench gravity-command: dynamics_node, bundled arm, {result['rate_hz']:.0f} Hz, "
        f"{result['duration_s']:g} s per phase, command_joints in reverse order",
        'p50 latency [ms] at the middleware (at this process\'s callback)',
        f'{"phase":>6}{"sent":>8}{"torques":>9}{"commands":>10}{"unmatched":>11}'
        f'{"torques p50":>20}{"command p50":>20}',
    ]
    for index, phase in enumerate(result['phases'], 1):
        lines.append(
            f"{index:>6}{phase['sent']:>8}{phase['torques']:>9}{phase['commands']:>10}"
            f"{phase['unmatched_commands']:>11}"
            f"{_pair(phase['torques_p50_ms'], phase['torques_p50_at_callback_ms']):>20}"
            f"{_pair(phase['command_p50_ms'], phase['command_p50_at_callback_ms']):>20}"
        )
    lines.append(
        f"command p50 / torques p50, median over the phases: {result['p50_ratio_median']:.3f} "
        f"(at the callback {result['p50_ratio_median_at_callback']:.3f}; target 1 ± "
        f"{P50_TARGET:g}); every command the torques reordered: "
        + ('yes' if result['exact'] else 'NO')
        + ('; met' if result['met'] else '; NOT met')
    )
    return '\n'.join(lines)
