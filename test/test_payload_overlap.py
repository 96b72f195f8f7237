"""dynamics_node's identify_payload service on a baseline that covers only part of the payload
recording (or more than it), through real rclpy topics and service calls: the baseline is
published as joint_states and kept with record_baseline, the recording cleared, the payload run
published, then identify_payload called. Each partial case is held to the accuracy the
full-overlap case reaches on the same data (test_payload.assert_as_accurate_as_full_overlap)."""

import pytest
import yaml
from test_payload import (
    FULL_OVERLAP,
    PARTIAL_OVERLAPS,
    advised_extension,
    assert_as_accurate_as_full_overlap,
    full_overlap_report,
    overlap_cases,
)

pytest.importorskip('rclpy')
from std_srvs.srv import Trigger  # noqa: E402
from test_dynamics_node_services import make_node, publish_recording  # noqa: E402

SERVICE_RATE = (
    100.0  # [Hz] joint_states rate of these runs (keeps each case to a few thousand messages)
)


def identified_through_the_service(ros, tmp_path, recording, baseline) -> tuple:
    """(Trigger response, YAML report) of identify_payload after record_baseline on ``baseline``."""
    node = make_node(tmp_path, payload_mode='auto')
    with ros(node) as harness:
        name = node.get_name()
        publish_recording(harness, node, baseline, stride=1)
        kept = harness.call(Trigger, f'/{name}/record_baseline')
        assert kept.success, kept.message
        assert harness.call(Trigger, f'/{name}/clear_payload_buffer').success
        publish_recording(harness, node, recording, stride=1)
        response = harness.call(Trigger, f'/{name}/identify_payload')
    return response, yaml.safe_load((tmp_path / 'payload_latest.yaml').read_text())


@pytest.mark.parametrize('case', PARTIAL_OVERLAPS)
def test_service_uses_the_stretch_a_partial_baseline_shares_as_accurately_as_a_full_one(
    ros, tmp_path, case
):
    recording, baseline, shared = overlap_cases(SERVICE_RATE)[case]
    response, report = identified_through_the_service(ros, tmp_path, recording, baseline)
    assert response.success, response.message
    assert report['used_duration'] == pytest.approx(
        shared - 0.4, abs=0.05
    )  # 0.2 s filter edge at each end
    assert_as_accurate_as_full_overlap(report, full_overlap_report(SERVICE_RATE))
    assert (
        f"covering {100 * report['baseline_coverage']:.0f} % of the payload recording"
        in response.message
    )
    assert f"{report['used_duration']:.1f} s used" in response.message


def test_service_refuses_a_shared_stretch_too_short_saying_how_much_more_the_baseline_must_cover(
    ros, tmp_path
):
    recording, baseline, _ = overlap_cases(SERVICE_RATE)[FULL_OVERLAP]
    response, report = identified_through_the_service(
        ros, tmp_path, recording, baseline.slice_time(19.3, 20.0)
    )
    assert not response.success and report['success'] is False and report['mass'] is None
    assert f"only {report['samples']} usable samples" in response.message, response.message
    seconds_per_sample = report['used_duration'] / report['samples']
    assert advised_extension(response.message) >= (40 - report['samples']) * seconds_per_sample
    assert report['used_duration'] < 0.5 and report['baseline_coverage'] < 0.05
