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

The node publishes its outputs one after another, the command first: with both subscribed, the
torques arrive one publication after the command. So the latencies are also measured each on its
own, in ``--pairs`` alternating phases where this process subscribes only one of the two outputs
(a fresh subscriber per phase; commands matched by value to g(q) of the joint states sent,
computed here with pinocchio on the same model): what a controller that reads only the command
sees against what a reader of only the torques sees.
Targets: every command equal to the torques reordered (both subscribed), and the command's p50
within 5 % of the torques' p50 (median over the pairs of phases), both figures printed: each on
its own, and both subscribed.
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
    return 0 if result['met_alone'] and result['met_together'] else 1


def measure(rate: float, duration: float, pairs: int, warmup: float) -> dict:
    """The run of the module docstring; per-phase p50 latencies [ms] and the verdicts."""
    from robot_dynamics.core.model.model import RobotModel
    from robot_dynamics.instruments.stream_feeder import stop_node
    from robot_dynamics.models import model_path

    urdf = str(model_path('fr3_arm.urdf'))
    robot = RobotModel.from_urdf_file(urdf)
    order = list(reversed(range(len(robot.joint_names))))
    node, process = _start_dynamics_node(urdf, robot.joint_names, order)
    try:
        phases = _both_subscribed(node, process, urdf, order, (rate, duration, warmup), pairs)
        alone = [
            {
                'torques_p50_ms': _torques_alone(node, process, urdf, rate, duration, warmup),
                **_command_alone(node, process, urdf, robot, order, (rate, duration, warmup)),
            }
            for _ in range(max(1, pairs))
        ]
    finally:
        stop_node(process)
    return _summary(rate, duration, phases, alone)


def _start_dynamics_node(urdf: str, names: list, order: list) -> tuple:
    """(node name, process): dynamics_node on ``urdf`` with ``command_joints`` the joints
    ``names`` taken in ``order`` (indices into ``names``)."""
    from robot_dynamics.instruments.stream_feeder import bench_node_name, start_node

    module = 'robot_dynamics.ros.dynamics_node'
    node = bench_node_name(module)
    joints = ', '.join(names[index] for index in order)
    process = start_node(
        [module, '-p', f'urdf_file:={urdf}', '-p', f'command_joints:=[{joints}]'], node
    )
    return node, process


def _both_subscribed(node: str, process, urdf: str, order: list, feed: tuple, pairs: int) -> list:
    """:func:`_phase` of each of ``pairs`` phases (at least one) with both outputs subscribed by
    one feeder; ``feed``: (rate [Hz], duration [s], warm-up [s])."""
    from std_msgs.msg import Float64MultiArray

    from robot_dynamics.instruments.stream_feeder import StreamFeeder, output_topic
    from robot_dynamics.ros.topics import JOINT_STATE_QOS

    rate, duration, warmup = feed
    commands: list = []
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
        _wait_for_command_publisher(feeder, command_topic)
        feeder.feed(rate, max(warmup, 1.0))  # the node sees the command's subscriber
        return [_feed_phase(feeder, commands, order, rate, duration) for _ in range(max(1, pairs))]


def _feed_phase(feeder, commands: list, order: list, rate: float, duration: float) -> dict:
    """Feed one phase of ``duration`` [s] at ``rate`` [Hz] with both outputs subscribed, once
    the previous phase's answers have stopped arriving; its :func:`_phase`."""
    from robot_dynamics.instruments.stream_feeder import wait_for_stragglers, wait_until_quiet

    # each feed sends the same positions: a late answer to the previous one would match this
    # one's messages
    wait_until_quiet([commands, feeder.received], quiet=0.2, limit=2.0)
    feeder.received.clear()
    feeder.received_by_middleware.clear()
    feeder.messages.clear()
    commands.clear()
    sent = feeder.feed(rate, duration)
    wait_for_stragglers(feeder, len(sent))
    return _phase(sent, feeder, commands, order)


def _wait_for_command_publisher(feeder, command_topic: str) -> None:
    from robot_dynamics.instruments.reliability_common import wait_for
    from robot_dynamics.instruments.stream_feeder import BenchError

    if not wait_for(lambda: feeder.node.count_publishers(command_topic) >= 1, 30.0):
        raise BenchError('dynamics_node never published ~/gravity_command')


def _summary(rate: float, duration: float, phases: list, alone: list) -> dict:
    """:func:`measure`'s result: the phases with both outputs subscribed, the pairs of phases
    with each on its own, the median p50 ratios (command / torques) and the verdicts."""
    ratio = _median_ratio(phases, 'command_p50_ms', 'torques_p50_ms')
    exact = all(
        p['unmatched_commands'] <= p['sent'] - p['torques'] and p['commands'] > 0 for p in phases
    )
    alone_ratio = _median_ratio(alone, 'command_p50_ms', 'torques_p50_ms')
    return {
        'rate_hz': rate,
        'duration_s': duration,
        'phases': phases,
        'alone_phases': alone,
        'p50_ratio_alone_median': alone_ratio,
        'p50_ratio_median': ratio,
        'p50_ratio_median_at_callback': _median_ratio(
            phases, 'command_p50_at_callback_ms', 'torques_p50_at_callback_ms'
        ),
        'exact': exact,
        'met_alone': bool(exact and abs(alone_ratio - 1.0) <= P50_TARGET),
        'met_together': bool(exact and abs(ratio - 1.0) <= P50_TARGET),
    }


def _torques_alone(node: str, process, urdf: str, rate: float, duration: float, warmup: float):
    """p50 latency [ms] of ``~/gravity_torques`` at the middleware, the only output this
    process subscribes, over one phase."""
    from robot_dynamics.instruments.stream_feeder import (
        StreamFeeder,
        output_topic,
        wait_for_stragglers,
    )

    with StreamFeeder(
        output_topic(node, 'gravity_torques'), 'gravity_torques', urdf, 'fixed', efforts=True
    ) as feeder:
        feeder.wait_connected(process=process)
        feeder.feed(rate, max(warmup, 1.0))  # the node sees the new subscriber
        feeder.received_by_middleware.clear()
        feeder.received.clear()
        sent = feeder.feed(rate, duration)
        wait_for_stragglers(feeder, len(sent))
        return _median(_latencies_ms(feeder.received_by_middleware, set(sent)))


def _command_alone(node: str, process, urdf: str, robot, order: list, feed: tuple):
    """``command_p50_ms``: p50 latency [ms] of ``~/gravity_command`` at the middleware, the only
    output this process subscribes, over one phase, each command matched to the joint state whose
    g(q), reordered, it equals bit for bit; ``command_sent`` and ``commands_matched``."""
    import pinocchio as pin
    from std_msgs.msg import Float64MultiArray

    from robot_dynamics.instruments.reliability_common import wait_for
    from robot_dynamics.instruments.stream_feeder import (
        StreamFeeder,
        output_topic,
        wait_until_quiet,
    )
    from robot_dynamics.ros.topics import JOINT_STATE_QOS

    rate, duration, warmup = feed
    commands: list = []
    command_topic = output_topic(node, 'gravity_command')
    with StreamFeeder(
        None, 'gravity_command', urdf, 'fixed', efforts=True, keep_messages=True
    ) as feeder:
        feeder.node.create_subscription(
            Float64MultiArray,
            command_topic,
            lambda message, info: commands.append(
                (info['received_timestamp'], np.asarray(message.data).tobytes())
            ),
            JOINT_STATE_QOS,
        )
        feeder.wait_connected(process=process)
        _wait_for_command_publisher(feeder, command_topic)
        feeder.feed(rate, max(warmup, 1.0))
        # the warm-up's last commands: each feed repeats the same positions
        wait_until_quiet([commands], quiet=0.2, limit=2.0)
        commands.clear()
        sent = feeder.feed(rate, duration)
        wait_for(lambda: len(commands) >= len(sent), 2.0)
        model, data = robot.model, robot.data
        stamp_of = {}
        for stamp in sent:
            positions = np.array(feeder.positions(feeder.phase_of[stamp]).tolist())
            gravity = pin.computeGeneralizedGravity(model, data, positions)
            stamp_of[gravity[order].tobytes()] = stamp
        latencies = [
            (arrival - stamp_of[data_bytes]) * 1e-6
            for arrival, data_bytes in commands
            if data_bytes in stamp_of
        ]
        return {
            'command_p50_ms': _median(latencies),
            'command_sent': len(sent),
            'commands_matched': len(latencies),
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
        f"both subscribed: command p50 / torques p50, median over the phases: "
        f"{result['p50_ratio_median']:.3f} (at the callback "
        f"{result['p50_ratio_median_at_callback']:.3f}; target 1 ± {P50_TARGET:g}): "
        + _verdict(result['met_together'])
        + '; every command the torques reordered: '
        + ('yes' if result['exact'] else 'NO')
    )
    lines.append('each subscribed on its own, p50 latency [ms] at the middleware')
    lines.append(f'{"pair":>6}{"torques p50":>20}{"command p50":>20}{"commands matched":>20}')
    for index, pair in enumerate(result['alone_phases'], 1):
        lines.append(
            f"{index:>6}{pair['torques_p50_ms'] or float('nan'):>20.3f}"
            f"{pair['command_p50_ms'] or float('nan'):>20.3f}"
            f"{pair['commands_matched']:>11} of {pair['command_sent']}"
        )
    lines.append(
        f"each on its own: command p50 / torques p50, median over the pairs: "
        f"{result['p50_ratio_alone_median']:.3f} (target 1 ± {P50_TARGET:g}): "
        + _verdict(result['met_alone'])
    )
    return '\n'.join(lines)


def _verdict(met: bool) -> str:
    return 'met' if met else 'NOT met'
