"""Short forms of the reliability runs: fuzzed joint states, hostile descriptions, soak,
service storm, restart and hot swap, each against a real node process over loopback ROS; and
the instruments' own promises (node processes end with their parent, a killed node's DDS
files are removed, a bench run claims an empty ROS domain).

The soak runs RELIABILITY_SOAK_SECONDS (default 12) per test; the long form is
``robot_dynamics bench soak --duration 600``. Each check compares the node with the
generator's labels (what every input must do), or the output torques with g(q) of the model
whose joint names they carry — never with the node's own bookkeeping alone. The tests assert
behaviour (every call answered, no wrong output, the node alive, memory bounded by design)
with margins that hold with other CPU-bound work on the machine; the throughput and latency
targets are `robot_dynamics bench`'s (docs/reliability.md, docs/performance.md).
"""

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

pytest.importorskip('rclpy')

from robot_dynamics.core.streams.joint_states import REJECTION_REASONS  # noqa: E402
from robot_dynamics.instruments import (  # noqa: E402
    bench,
    processes,
    reliability_common,
    reliability_descriptions,
    reliability_fuzz,
    reliability_restarts,
    reliability_soak,
    reliability_storm,
    stream_feeder,
)
from robot_dynamics.instruments.reliability_descriptions import REJECTED, WARNED  # noqa: E402
from robot_dynamics.models import ARM_URDF  # noqa: E402
from robot_dynamics.ros import ros_domain  # noqa: E402

URDF = str(ARM_URDF)
SOAK_SECONDS = float(os.environ.get('RELIABILITY_SOAK_SECONDS', '12'))
MIB = 1024


@pytest.fixture(scope='module')
def corpus():
    return reliability_descriptions.hostile_descriptions(ARM_URDF.read_text())


def test_fuzzer_labels_each_invalid_message_with_its_single_fault():
    model_names = set(reliability_common.joint_names_of(URDF))
    last_valid_stamp = 0.0
    for message in reliability_fuzz.fuzzed_joint_states(sorted(model_names), 5000, seed=7):
        count = len(message.names)
        values = message.positions + message.velocities + message.efforts
        known = [name for name in message.names if name in model_names]
        checks = {
            'valid': lambda: (
                sorted(known) == sorted(model_names)
                and message.stamp > last_valid_stamp
                and len(message.positions) == count
            ),
            'non_finite': lambda: any(v != v or abs(v) == float('inf') for v in values),
            'out_of_range': lambda: (
                max(abs(v) for v in values) > 1e6 and max(abs(v) for v in values) < float('inf')
            ),
            'length_mismatch': lambda: bool(
                {len(message.positions), len(message.velocities), len(message.efforts)} - {0, count}
            ),
            'duplicate_names': lambda: len(set(message.names)) < count,
            'no_known_joints': lambda: count > 0 and not known,
            'bad_stamp': lambda: message.stamp < 0,
            'out_of_order': lambda: 0 <= message.stamp < last_valid_stamp,
            'empty': lambda: count == 0 or not message.positions,
        }
        assert checks[message.expected](), message
        if message.expected == 'valid':
            last_valid_stamp = message.stamp


def test_every_fuzzed_joint_state_is_answered_or_rejected_under_its_reason_in_the_core():
    report = reliability_fuzz.fuzz_core(URDF, count=100_000, seed=0)
    assert report.messages == 100_000
    assert report.misclassified == 0, report
    assert report.answered_valid == report.valid and report.answered_invalid == 0, report
    assert report.expected_rejections == report.counted_rejections, report
    assert set(report.expected_rejections) == set(REJECTION_REASONS)
    assert min(report.expected_rejections.values()) > 1000, report


def test_fuzzed_joint_states_over_ros_are_all_answered_or_counted_by_reason():
    # Paced so that a node on a busy machine keeps up: what is checked is each message's fate.
    report = reliability_fuzz.fuzz_node(URDF, count=3000, seed=1, rate=300.0)
    assert report.node_alive
    assert report.answered_valid == report.valid, report
    assert report.answered_invalid == 0, report
    assert report.counted_rejections == report.expected_rejections, report


def test_model_intake_refuses_hostile_descriptions_quickly(corpus):
    assert len(corpus) >= 200
    categories = Counter(case.category for case in corpus)
    for category in (
        'truncated',
        'cycle',
        'missing_parent',
        'bad_mass',
        'non_physical_inertia',
        'entity_bomb',
        'oversize_50MB',
        'thousands_of_links',
        'thousands_of_joints',
    ):
        assert categories[category] >= 1, category
    report = reliability_descriptions.screen_descriptions(corpus)
    # 0.1 s on a quiet machine (docs/reliability.md); the bound is for a busy one.
    assert report.max_seconds < 10.0, sorted(report.outcomes, key=lambda o: -o.seconds)[:3]
    wrong = [
        (o.category, o.expected, o.outcome, o.message[:100])
        for o in report.unexpected()
        if o.expected != WARNED
    ]
    assert not wrong
    assert (
        sum(o.outcome != REJECTED for o in report.outcomes) >= 10
    )  # valid oddities are not refused


def test_model_intake_refuses_or_warns_about_non_physical_inertias(corpus):
    report = reliability_descriptions.screen_descriptions(
        [case for case in corpus if case.expected == WARNED]
    )
    assert not report.unexpected()


def test_node_keeps_the_good_model_and_bounded_memory_through_hostile_descriptions(corpus):
    first_of_each: dict = {}
    for case in corpus:
        if case.expected == REJECTED:
            first_of_each.setdefault(case.category, case)
    # One of each refused category (the 50 MB string among them) plus more truncations.
    sample = (
        list(first_of_each.values())
        + [case for case in corpus if case.category == 'truncated'][1:11]
    )
    report = reliability_descriptions.descriptions_node(URDF, sample)
    assert report.node_alive and report.model_kept
    assert len(report.outcomes) == len(sample) and not report.unexpected(), report.unexpected()
    assert report.wrong_outputs == 0
    assert report.max_seconds < 10.0  # each counted (bench descriptions holds the time targets)
    # Behaviour, not throughput (bench descriptions holds the >= 99.9 % target): the stream goes on.
    assert report.stream_answered_fraction >= 0.9
    # One 50 MB message is held by the DDS and allocator pools (~60 MiB); repeats do not add to it.
    assert report.rss_end_kib - report.rss_start_kib < 128 * MIB


def test_description_storm_run_measures_its_own_quiet_baseline_and_loads_every_model():
    report = reliability_descriptions.description_scenario(URDF, duration=3.5, quiet=2.0)
    assert report.node_alive
    assert report.descriptions == 7 and report.models_expected == 3
    assert report.models_loaded == report.models_expected  # the other model, then the first again
    assert report.stream.mixed_outputs == 0 and report.stream.wrong_outputs == 0
    assert 0.0 < report.quiet_p99_ms < math.inf and report.stream.sent > 0
    assert set(report.to_dict()) >= {'quiet_p99_ms', 'p99_ratio', 'meets_targets'}


def test_a_gap_in_what_the_feeder_sent_is_not_the_nodes():
    class Answers:  # what a StreamFeeder records: (input stamp, arrival) [ns]
        received = [(0, 500_000), (1_000_000, 1_500_000), (60_000_000, 60_500_000)]
        received += [(61_000_000, 101_500_000)]  # the node held this one 40 ms

    gaps = reliability_descriptions._output_gaps([0, 1_000_000, 60_000_000, 61_000_000], Answers)
    assert [round(gap, 3) for _, gap, _ in gaps] == [1.0, 59.0, 41.0]
    assert [round(node, 3) for _, _, node in gaps] == [0.0, 0.0, 40.0]


def test_a_node_started_into_a_running_stream_loads_its_model():
    report = reliability_restarts.startup_with_stream(URDF, starts=1)
    # How long is `bench descriptions`'s figure; here: it starts, with and without the stream.
    assert len(report.quiet_s) == 1 and len(report.streaming_s) == 1
    assert 0.0 < max(report.quiet_s + report.streaming_s) < 60.0, report
    assert math.isfinite(report.stream_cost_s)


def test_soak_answers_the_stream_with_memory_bounded_by_design():
    report = reliability_soak.soak('dynamics', SOAK_SECONDS, warmup=2.0, baseline_duration=5.0)
    figures = report.to_dict()
    assert report.node_alive
    assert report.node.sent >= 0.5 * SOAK_SECONDS * 1000  # the feeder itself shares the busy cores
    # A node that stopped answering would fail; the >= 99.9 % target is `bench soak`'s (a busy
    # machine brought it down to 65 % here).
    assert report.node.answered_fraction >= 0.25, figures
    assert len(report.rss_samples_kib) >= SOAK_SECONDS / 2
    # Private memory (the fixed-size recording ring buffer and DDS segments excluded): its growth
    # is what would grow without bound.
    assert report.rss_growth_kib <= 16 * MIB, figures


@pytest.fixture(scope='module')
def storm():
    # 4 calls, both services from each of 2 concurrent clients (paced by the node's
    # service_cpu_share: ~1 per second on a quiet machine, several seconds each on a busy one);
    # `bench storm` makes the full 100 from 4 clients and holds the stream targets.
    return reliability_storm.service_storm(URDF, calls=4, clients=2, quiet=3.0, timeout=600.0)


def test_service_storm_answers_every_call_while_the_stream_goes_on(storm):
    figures = storm.to_dict()
    assert storm.node_alive
    assert storm.answered_calls == 4, figures
    assert {call['service'] for call in storm.calls} == set(reliability_storm.STORM_SERVICES)
    # The calls run off the stream's thread: a stream blocked by them would answer nothing during
    # the storm. The >= 99.9 % and p99 <= 2x quiet targets are `bench storm`'s (a busy machine
    # alone brought the quiet 1 kHz stream down to 22 % here).
    assert storm.storm.answered > 0, figures


def test_a_node_under_test_that_ends_before_connecting_is_reported_with_what_it_said():
    with pytest.raises(stream_feeder.BenchError) as raised:
        reliability_common.NodeUnderTest('dynamics', ['-p', 'urdf_file'], 'gravity_torques', URDF)
    message = str(raised.value)
    assert message.startswith('the node under test ended (exit 1) before connecting'), message
    assert 'dynamics_node: cannot start ROS 2 with these arguments' in message, message


def test_a_storm_client_stuck_after_its_calls_keeps_its_results_and_is_reported():
    result = {'service': 'validate_inertia', 'answered': True, 'success': True}
    script = (
        f'import sys, time; print({json.dumps(result)!r}, flush=True); '
        "sys.stderr.write('stuck in shutdown'); sys.stderr.flush(); time.sleep(60)"
    )
    client = processes.start_keeping_stderr(
        [sys.executable, '-c', script], stdout=subprocess.PIPE, text=True
    )
    results, problem = reliability_storm._client_results(client, [], timeout=3.0)
    assert results == [result]
    assert problem.startswith('ended with status -15') and 'stuck in shutdown' in problem, problem


def test_node_killed_mid_stream_is_restarted_answers_and_leaves_no_dds_files():
    report = reliability_restarts.restart_recovery(URDF, restarts=1, settle=3.0)
    # The 1 s and >= 99.9 % targets are `bench restart`'s; here: it answers, and keeps answering.
    assert max(report.first_answer_s) <= 5.0, report
    assert report.downtime_s[0] < 30.0, report
    assert report.tail_answered_fraction >= 0.5, report
    assert report.dds_files_removed >= 2, report  # at least its segment and the segment's lock file


def test_hot_swaps_mid_stream_never_give_a_wrong_model_output():
    report = reliability_restarts.hot_swap(URDF, swaps=100, interval=0.05)
    assert report.node_alive
    assert report.outputs > 1000
    assert report.wrong_outputs == 0, report
    assert report.last_model_in_force, report
    # Under load several swaps can land between two answered joint states and hide each other.
    assert report.observed_model_changes >= 2, report
    assert report.tail_answered_fraction >= 0.5, report


# ---------------------------------------------------------------------------- the instruments
BENCH_LIKE_PARENT = '''
import sys, time
from robot_dynamics.instruments import bench, stream_feeder
process = stream_feeder.start_node([bench.BARE_RELAY], sys.argv[1])
print(process.pid, flush=True)
time.sleep(600)
'''


def _node_pid_started_by_a_parent(node_name: str) -> tuple:
    parent = subprocess.Popen(
        [sys.executable, '-c', BENCH_LIKE_PARENT, node_name], stdout=subprocess.PIPE, text=True
    )
    return parent, int(parent.stdout.readline())


def _segments_owned_by(pid: int, timeout: float = 30.0) -> set:
    """The node's own Fast DDS segment files, once it has created them."""
    segments = set()
    reliability_common.wait_for(
        lambda: (
            segments.update(name for name in processes.dds_files_of(pid) if '_port' not in name)
            or bool(segments)
        ),
        timeout,
    )
    return segments


def test_node_process_ends_and_cleans_up_when_its_parent_is_killed():
    parent, node = _node_pid_started_by_a_parent(f'orphan_check_{os.getpid()}')
    try:
        segments = _segments_owned_by(node)
        assert segments, 'the node never created its shared-memory segment'
        parent.kill()  # SIGKILL: the parent cannot forward anything
        parent.wait(timeout=10)
        assert reliability_common.wait_for(lambda: processes._parent_pid(node) is None, 10.0), (
            f'node {node} outlived its killed parent'
        )
        # It got SIGTERM and ended cleanly: Fast DDS removed its own segment.
        assert not segments & processes.existing_dds_files()
    finally:
        if processes._parent_pid(node) is not None:
            os.kill(node, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()
        parent.stdout.close()


def test_a_killed_node_leaves_dds_files_and_the_instrument_removes_only_them():
    from robot_dynamics.models import ARM_URDF as arm

    other = stream_feeder.start_node([bench.BARE_RELAY], f'bystander_{os.getpid()}', '/bystander')
    victim = stream_feeder.start_node([bench.BARE_RELAY], f'victim_{os.getpid()}')
    try:
        # Talk to the victim, so that its segments carry traffic. The feeder goes before the
        # kill: destroying a Fast DDS reader whose matched writer was just SIGKILLed segfaulted
        # this process once in a few runs (inside rclpy's destroy_node), and so did removing a
        # segment a live reader of this process still maps.
        with stream_feeder.StreamFeeder(
            '/bench/relayed', 'relayed_joint_states', str(arm), 'fixed'
        ) as feeder:
            feeder.wait_connected(process=victim)
            feeder.feed(200.0, 0.5)
            victim_files, bystander_files = (
                _segments_owned_by(victim.pid),
                _segments_owned_by(other.pid),
            )
            assert victim_files and bystander_files
        victim.kill()  # a crash: nothing of the victim removes its files ...
        victim.wait(timeout=10)
        time.sleep(0.5)
        assert victim_files <= processes.existing_dds_files()
        # ... the instrument removes exactly them.
        removed = processes.remove_unused_dds_files(victim_files | bystander_files)
        assert set(removed) == victim_files, removed
        assert not victim_files & processes.existing_dds_files()
        assert bystander_files <= processes.existing_dds_files()
    finally:
        processes.kill_node_process(victim) if victim.poll() is None else None
        stream_feeder.stop_node(other)


def test_bench_claims_a_ros_domain_no_other_participant_uses(monkeypatch):
    taken = int(os.environ['ROS_DOMAIN_ID'])
    squatter = stream_feeder.start_node([bench.BARE_RELAY], f'squatter_{os.getpid()}')
    try:
        assert reliability_common.wait_for(
            lambda: bool(ros_domain.other_nodes_on_domain(taken, listen=1.0)), 30.0
        )
        monkeypatch.setenv('ROS_DOMAIN_ID', str(taken))
        claimed = ros_domain.claim_ros_domain()
        assert claimed != taken
        assert os.environ['ROS_DOMAIN_ID'] == str(claimed)
        assert not ros_domain.other_nodes_on_domain(claimed, listen=1.0)
    finally:
        stream_feeder.stop_node(squatter)
