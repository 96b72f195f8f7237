"""Short forms of the reliability runs (issue 8): fuzzed joint states, hostile descriptions,
soak, service storm, restart and hot swap, each against a real node process over loopback ROS.

The soak runs RELIABILITY_SOAK_SECONDS (default 20; the issue's test-suite form is 60) per
test; the long form is ``robot_dynamics bench soak --duration 600``. Each check compares the
node with the generator's labels (what every input must do), or the output torques with g(q)
of the model whose joint names they carry — never with the node's own bookkeeping alone.
"""
import os
from collections import Counter

import pytest

pytest.importorskip('rclpy')

from robot_dynamics.core.joint_states import REJECTION_REASONS  # noqa: E402
from robot_dynamics.models import ARM_URDF  # noqa: E402
from robot_dynamics.tools import reliability  # noqa: E402
from robot_dynamics.tools.reliability import REJECTED, WARNED  # noqa: E402

URDF = str(ARM_URDF)
SOAK_SECONDS = float(os.environ.get('RELIABILITY_SOAK_SECONDS', '20'))
MIB = 1024


@pytest.fixture(scope='module')
def corpus():
    return reliability.hostile_descriptions(ARM_URDF.read_text())


def test_fuzzer_labels_each_invalid_message_with_its_single_fault():
    model_names = set(reliability._joint_names(URDF))
    last_valid_stamp = 0.0
    for message in reliability.fuzzed_joint_states(sorted(model_names), 5000, seed=7):
        count = len(message.names)
        values = message.positions + message.velocities + message.efforts
        known = [name for name in message.names if name in model_names]
        checks = {
            'valid': lambda: (sorted(known) == sorted(model_names) and message.stamp > last_valid_stamp
                              and len(message.positions) == count),
            'non_finite': lambda: any(v != v or abs(v) == float('inf') for v in values),
            'out_of_range': lambda: max(abs(v) for v in values) > 1e6 and max(abs(v) for v in values) < float('inf'),
            'length_mismatch': lambda: bool({len(message.positions), len(message.velocities),
                                             len(message.efforts)} - {0, count}),
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
    report = reliability.fuzz_core(URDF, count=100_000, seed=0)
    assert report.messages == 100_000
    assert report.misclassified == 0, report
    assert report.answered_valid == report.valid and report.answered_invalid == 0, report
    assert report.expected_rejections == report.counted_rejections, report
    assert set(report.expected_rejections) == set(REJECTION_REASONS)
    assert min(report.expected_rejections.values()) > 1000, report


def test_fuzzed_joint_states_over_ros_are_all_answered_or_counted_by_reason():
    report = reliability.fuzz_node(URDF, count=5000, seed=1)
    assert report.node_alive
    assert report.answered_valid == report.valid, report
    assert report.answered_invalid == 0, report
    assert report.counted_rejections == report.expected_rejections, report


def test_model_intake_refuses_hostile_descriptions_quickly(corpus):
    assert len(corpus) >= 200
    categories = Counter(case.category for case in corpus)
    for category in ('truncated', 'cycle', 'missing_parent', 'bad_mass', 'non_physical_inertia', 'entity_bomb',
                     'oversize_50MB', 'thousands_of_links', 'thousands_of_joints'):
        assert categories[category] >= 1, category
    report = reliability.screen_descriptions(corpus)
    assert report.max_seconds < 2.0, sorted(report.outcomes, key=lambda o: -o.seconds)[:3]
    wrong = [(o.category, o.expected, o.outcome, o.message[:100]) for o in report.unexpected()
             if o.expected != WARNED]
    assert not wrong
    assert sum(o.outcome != REJECTED for o in report.outcomes) >= 10  # valid oddities are not refused


def test_model_intake_refuses_or_warns_about_non_physical_inertias(corpus):
    report = reliability.screen_descriptions([case for case in corpus if case.expected == WARNED])
    assert not report.unexpected()


def test_node_keeps_the_good_model_and_bounded_memory_through_hostile_descriptions(corpus):
    first_of_each: dict = {}
    for case in corpus:
        if case.expected == REJECTED:
            first_of_each.setdefault(case.category, case)
    # One of each refused category (the 50 MB string among them) plus more truncations.
    sample = list(first_of_each.values()) + [case for case in corpus if case.category == 'truncated'][1:11]
    report = reliability.descriptions_node(URDF, sample)
    assert report.node_alive and report.model_kept
    assert len(report.outcomes) == len(sample) and not report.unexpected(), report.unexpected()
    assert report.wrong_outputs == 0
    assert report.max_seconds < 2.0
    assert report.stream_answered_fraction >= 0.995
    # One 50 MB message is held by the DDS and allocator pools (~60 MiB); repeats do not add to it.
    assert report.rss_end_kib - report.rss_start_kib < 128 * MIB


def test_soak_answers_every_message_without_memory_growth():
    report = reliability.soak('dynamics', SOAK_SECONDS, warmup=2.0, baseline_duration=5.0)
    figures = report.to_dict()
    assert report.node_alive
    assert report.node.sent >= 0.95 * SOAK_SECONDS * 1000
    assert report.node.answered_fraction >= 0.999, figures
    assert len(report.rss_samples_kib) >= SOAK_SECONDS - 2
    assert report.rss_growth_kib <= 16 * MIB, figures


@pytest.fixture(scope='module')
def storm():
    # The full 100 calls (paced by the node's service_cpu_share: ~60 s): in a short storm a single
    # scheduling stall of the shared machine (0.15-0.3 s, ~1 run in 10) is more than 1 % of it.
    return reliability.service_storm(URDF, calls=100, clients=4, quiet=5.0)


def test_service_storm_answers_every_call_and_drops_no_torque(storm):
    figures = storm.to_dict()
    assert storm.node_alive
    assert storm.answered_calls == 100, figures
    assert {call['service'] for call in storm.calls} == set(reliability.STORM_SERVICES)
    assert storm.quiet.answered_fraction >= 0.999, figures
    assert storm.storm.answered_fraction >= 0.999, figures


def test_service_storm_keeps_the_stream_p99_near_the_quiet_run(storm):
    # The criterion (≤ 2×) is measured by `robot_dynamics bench storm` (docs/reliability.md:
    # 1.2-1.8× at the default pacing); here, on a shared CI machine, a margin above it. Without
    # pacing the ratio was 2.6-6.3×.
    assert storm.storm.p99_ms <= 2.5 * storm.quiet.p99_ms, storm.to_dict()


def test_node_restarted_mid_stream_answers_within_a_second():
    report = reliability.restart_recovery(URDF, restarts=1, settle=3.0)
    assert max(report.first_answer_s) <= 1.0, report
    assert report.answered_after_first >= 0.995, report  # a few may fall in the DDS match window
    assert report.downtime_s[0] < 15.0, report


def test_hot_swaps_mid_stream_never_give_a_wrong_model_output():
    report = reliability.hot_swap(URDF, swaps=100, interval=0.05)
    assert report.node_alive
    assert report.outputs > 1000
    assert report.wrong_outputs == 0, report
    # Under load two swaps can land between two joint states; the second then hides the first.
    assert report.observed_model_changes >= 0.9 * report.swaps, report
    assert report.stream_answered_fraction >= 0.999, report
