"""`robot_dynamics bench realtime`: the proving ground's real-time factor with the nodes beside it.

For the arm scene at 1 kHz (dynamics_node beside it) and the legged scene at 500 Hz
(centroidal_node beside it), each with the `ideal` and the `realistic` profile in the same run:
sim_robot (MuJoCo engine) runs in this process, publishing every integration step on
joint_states (and odom) as fast as it computes, while the node, in its own process, is fed
every sample. Real-time factor = simulated seconds / wall seconds (target ≥ 1). ``--duration``
sets the simulated seconds per column (default 10).
"""

from __future__ import annotations

import argparse
import json
import os

from robot_dynamics.instruments.stream_feeder import (
    bench_node_name,
    start_node,
    stop_node,
)
from robot_dynamics.models import model_path
from robot_dynamics.ros.ros_domain import shutdown_context

SCENES = (
    ('arm', 1000.0, 'robot_dynamics.ros.dynamics_node', 'fr3_arm.urdf', 'fixed'),
    ('legged', 500.0, 'robot_dynamics.ros.centroidal_node', 'quadruped.urdf', 'floating'),
)
"""(scene, simulation and publishing rate [Hz], node beside it, its model, root joint)."""
PROFILES = ('ideal', 'realistic')
LANE = '/bench/realtime'
TARGET = 1.0
WARMUP = 3.0
"""Simulated seconds run before each column is measured [s]."""


def run(args: argparse.Namespace) -> int:
    """Print the real-time factors; exit 0 when every one is ≥ :data:`TARGET`."""
    import rclpy

    duration = args.duration or 10.0
    context = rclpy.Context()
    rclpy.init(context=context)
    factors = {}
    try:
        for scene, rate, module, model, root_joint in SCENES:
            node_args = [
                module,
                '-p',
                f'urdf_file:={model_path(model)}',
                '-p',
                f'root_joint:={root_joint}',
            ]
            if module.endswith('centroidal_node'):
                node_args += ['-p', 'contact_frames:=[lf_foot, rf_foot, lh_foot, rh_foot]']
            process = start_node(node_args, bench_node_name(module), LANE)
            try:
                for profile in PROFILES:
                    factors[(scene, profile)] = _factor(context, scene, rate, profile, duration)
                    if process.poll() is not None:
                        raise RuntimeError(
                            f'{module} ended (exit {process.returncode}) during the run'
                        )
            finally:
                stop_node(process)
    finally:
        shutdown_context(context)
    result = {
        'duration_s': duration,
        'target': TARGET,
        'rows': [
            {
                'scene': scene,
                'rate_hz': rate,
                **{profile: round(factors[(scene, profile)], 2) for profile in PROFILES},
            }
            for scene, rate, *_ in SCENES
        ],
    }
    met = all(value >= TARGET for value in factors.values())
    print(json.dumps(result, indent=2) if args.format == 'json' else _text(result, met))
    return 0 if met else 1


def _factor(context, scene: str, rate: float, profile: str, duration: float) -> float:
    """Simulated / wall seconds of ``duration`` simulated seconds of sim_robot on ``scene``."""
    import rclpy.logging
    from rclpy.parameter import Parameter

    from robot_dynamics.ros.sim_robot import SimRobot

    rclpy.logging.set_logger_level(
        f'{LANE.strip("/").replace("/", ".")}.sim_robot', rclpy.logging.LoggingSeverity.WARN
    )
    overrides = [
        Parameter('engine', value='mujoco'),
        Parameter('scene', value=scene),
        Parameter('robot_profile', value=profile),
        Parameter('publish_rate', value=rate),
        Parameter('simulation_rate', value=rate),
        Parameter('payload_mass', value=1.5),
    ]
    sim = SimRobot('sim_robot', namespace=LANE, context=context, parameter_overrides=overrides)
    try:
        sim.run_for(WARMUP)  # the node beside it connects and warms up
        return duration / sim.run_for(duration)
    finally:
        sim.destroy_node()


def _text(result: dict, met: bool) -> str:
    lines = [
        f'proving ground real-time factor (simulated s / wall s, {result["duration_s"]:g} s '
        f'simulated per column), the node beside it fed every sample; pid {os.getpid()}',
        f'{"scene":<10}{"rate":>10}' + ''.join(f'{profile:>12}' for profile in PROFILES),
    ]
    for row in result['rows']:
        lines.append(
            f'{row["scene"]:<10}{row["rate_hz"]:>7.0f} Hz'
            + ''.join(f'{row[p]:>12.2f}' for p in PROFILES)
        )
    lines.append(f'target ≥ {TARGET:g}: {"met" if met else "NOT met"}')
    return '\n'.join(lines)
