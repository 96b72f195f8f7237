"""Reliability runs of the nodes over ROS: soak, fuzzed joint_states, hostile descriptions,
service storm, restart and hot swap (`robot_dynamics bench
soak|fuzz|descriptions|storm|restart|hot-swap`).

This module holds the command line (:func:`run`: text or JSON output, pass/fail); the runs are
one module each (:mod:`~robot_dynamics.instruments.reliability_descriptions`,
:mod:`~robot_dynamics.instruments.reliability_fuzz`,
:mod:`~robot_dynamics.instruments.reliability_soak`,
:mod:`~robot_dynamics.instruments.reliability_storm`,
:mod:`~robot_dynamics.instruments.reliability_restarts`), on the shared plumbing of
:mod:`~robot_dynamics.instruments.reliability_common`.

Every run drives real node processes over loopback ROS from this process (the feeder and
figures of :mod:`robot_dynamics.instruments.stream_feeder`) and is bounded in count and time. The
generators (:func:`~robot_dynamics.instruments.reliability_fuzz.fuzzed_joint_states`,
:func:`~robot_dynamics.instruments.reliability_descriptions.hostile_descriptions`) label each input
with
what the node must do with it, so a run checks the node against the generator's intent:
every valid joint state answered, every invalid one counted under its reason, every hostile
description refused (or accepted with warnings) within a time bound with the last good model kept.

Stamps are ROS times (s + ns); latencies in ms; resident memory (VmRSS) in KiB.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict

from robot_dynamics.instruments.processes import busy_cores
from robot_dynamics.instruments.reliability_descriptions import (
    STORM_P99_RATIO_TARGET,
    STREAM_ANSWERED_TARGET,
    STREAM_GAP_TARGET_MS,
    description_scenario,
    descriptions_node,
    hostile_descriptions,
    screen_descriptions,
)
from robot_dynamics.instruments.reliability_fuzz import fuzz_core, fuzz_node
from robot_dynamics.instruments.reliability_restarts import (
    hot_swap,
    restart_recovery,
    startup_with_stream,
)
from robot_dynamics.instruments.reliability_soak import soak
from robot_dynamics.instruments.reliability_storm import service_storm


# ---------------------------------------------------------------------------- command line
def run(args: argparse.Namespace) -> int:
    """Run ``args.target`` (one of :data:`bench.RELIABILITY_TARGETS`); print, and return 0 when it
    passes."""
    from robot_dynamics.models import ARM_URDF

    urdf = str(ARM_URDF)
    target = args.target
    if target == 'soak':
        reports = [soak(node, args.duration or 20.0, args.rate, args.warmup) for node in args.nodes]
        result = {
            'soak': [report.to_dict() for report in reports],
            'rss_bound_kib': args.rss_bound_mib * 1024,
        }
        passed = all(
            r.node_alive
            and r.node.answered_fraction >= 0.999
            and r.rss_growth_kib <= args.rss_bound_mib * 1024
            for r in reports
        )
    elif target == 'fuzz':
        count = args.count or 100_000
        core, node = fuzz_core(urdf, count), fuzz_node(urdf, max(1000, count // 20))
        result = {'core': asdict(core), 'node': asdict(node)}
        passed = core.passed and node.passed
    elif target == 'descriptions':
        result, passed = _descriptions(urdf, args)
    elif target == 'storm':
        report = service_storm(
            urdf,
            args.count or 100,
            rate=args.rate or 1000.0,
            service_cpu_share=args.service_cpu_share,
        )
        result = report.to_dict()
        passed = (
            report.answered_calls == report.requested
            and report.storm.answered_fraction >= 0.999
            and report.p99_ratio <= 2.0
            and report.node_alive
        )
    elif target == 'restart':
        report = restart_recovery(urdf, args.count or 3, rate=args.rate or 1000.0)
        result = report.to_dict()
        passed = max(report.first_answer_s) <= 1.0 and report.answered_after_first >= 0.999
    else:
        report = hot_swap(urdf, args.count or 100, rate=args.rate or 1000.0)
        result = report.to_dict()
        passed = (
            report.wrong_outputs == 0
            and report.node_alive
            and report.last_model_in_force
            and report.observed_model_changes >= 0.9 * report.swaps
        )
    result.update(target=target, passed=passed, load_average_1_5_15=list(os.getloadavg()))
    print(
        json.dumps(result, indent=2, default=_jsonable) if args.format == 'json' else _text(result)
    )
    return 0 if passed else 1


def _descriptions(urdf: str, args: argparse.Namespace) -> tuple:
    """The hostile corpus into one node, then ``args.runs`` (default 5) runs of a description
    every 0.5 s each against its own quiet baseline, then start-up with and without a stream,
    all with ``args.busy_cores`` CPU-bound competitors; returns (result, passed)."""
    from robot_dynamics.models import ARM_URDF

    rate = args.rate or 1000.0
    corpus = hostile_descriptions(ARM_URDF.read_text())
    with busy_cores(args.busy_cores):
        core, node = screen_descriptions(corpus), descriptions_node(urdf, corpus, rate=rate)
        scenarios = [description_scenario(urdf, rate=rate) for _ in range(args.runs or 5)]
        startup = startup_with_stream(urdf, rate=rate)
    met = sum(scenario.meets_targets for scenario in scenarios)
    result = {
        'busy_cores': args.busy_cores,
        'intake': core.summary(),
        'node': node.summary(),
        'hostile_corpus_stream': node.stream.headline(),
        'every_half_second': [_scenario_headline(scenario) for scenario in scenarios],
        'every_half_second_runs_met': f'{met} of {len(scenarios)}',
        'startup_model_loaded_s': startup.to_dict(),
        'targets': {
            'answered_percent': 100.0 * STREAM_ANSWERED_TARGET,
            'longest_gap_ms': STREAM_GAP_TARGET_MS,
            'p99_over_quiet_p99': STORM_P99_RATIO_TARGET,
            'mixed_or_wrong_outputs': 0,
            'runs_met': 'all',
        },
    }
    passed = (
        not node.unexpected()
        and node.node_alive
        and node.model_kept
        and not node.wrong_outputs
        and not core.unexpected()
        and node.stream.meets_targets
        and met == len(scenarios)
    )
    return result, passed


def _scenario_headline(scenario) -> dict:
    return {
        **scenario.stream.headline(),
        'quiet_p99_ms': round(scenario.quiet_p99_ms, 2),
        'p99_ratio': round(scenario.p99_ratio, 2),
        'models_loaded': f'{scenario.models_loaded} of {scenario.models_expected}',
        'descriptions_rejected': (
            f'{scenario.descriptions_rejected} of {scenario.rejections_expected}'
        ),
        'node_alive': scenario.node_alive,
        'meets_targets': scenario.meets_targets,
    }


def _jsonable(value):
    return asdict(value) if hasattr(value, '__dataclass_fields__') else str(value)


def _text(result: dict, indent: str = '') -> str:
    lines = []
    for key, value in result.items():
        if isinstance(value, dict):
            lines += [f'{indent}{key}:', _text(value, indent + '  ')]
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for item in value:
                lines += [f'{indent}{key}:', _text(item, indent + '  ')]
        else:
            lines.append(
                f'{indent}{key}: {value:.4g}'
                if isinstance(value, float)
                else f'{indent}{key}: {value}'
            )
    return '\n'.join(lines)
