"""dynamics_node services through real rclpy service calls: identify_payload (with known
truth, refusals and applying the result), record_baseline / clear_payload_buffer and
validate_inertia (same findings as the CLI)."""

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from rclpy.parameter import Parameter
from ros_harness import wait_for
from test_payload import LINK, PAYLOAD, fourier_motion, measured, static_motion, true_robot

from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.identification.payload_report import REPORT_KEYS
from robot_dynamics.core.identification.recording import Recording
from robot_dynamics.core.identification.recording_files import write_rosbag
from robot_dynamics.models import ARM_URDF

pytest.importorskip('rclpy')
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from geometry_msgs.msg import InertiaStamped  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from robot_dynamics.ros.dynamics_node import DynamicsNode  # noqa: E402
from robot_dynamics.ros.topics import LATCHED_QOS, SENSOR_QOS

CORPUS = Path(__file__).resolve().parent / 'data' / 'broken_urdfs'


def make_node(tmp_path, **parameters) -> DynamicsNode:
    defaults = {
        'robot_description': ARM_URDF.read_text(),
        'payload_link': LINK,
        'report_directory': str(tmp_path),
        'acceleration_mode': 'zero',
    }
    defaults.update(parameters)
    overrides = [Parameter(name, value=value) for name, value in defaults.items()]
    return DynamicsNode(
        node_name=f'dynamics_srv_{time.monotonic_ns()}', parameter_overrides=overrides
    )


def publish_recording(harness, node, recording, stride: int = 2) -> None:
    """Publish every ``stride``-th sample as a JointState (stamps from the recording) and
    wait until the node has buffered them."""
    publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
    assert wait_for(lambda: publisher.get_subscription_count() >= 1, 5)
    names = list(recording.joint_names)
    rows = range(0, len(recording.time), stride)
    start = node._processed + node._incomplete
    for count, row in enumerate(rows):
        message = JointState(
            name=names,
            position=recording.positions[row].tolist(),
            velocity=recording.velocities[row].tolist(),
            effort=recording.efforts[row].tolist(),
        )
        message.header.stamp.sec, nanoseconds = divmod(
            int(round(recording.time[row] * 1e9)), 1_000_000_000
        )
        message.header.stamp.nanosec = nanoseconds
        publisher.publish(message)
        if count % 20 == 0:  # flow control: the subscriber keeps the last 50 messages
            assert wait_for(
                lambda: node._processed + node._incomplete - start >= count - 20, 5, period=0.0005
            )
    assert wait_for(lambda: node._processed + node._incomplete - start >= len(rows), 20)
    assert len(node._live.recording) >= min(0.98 * len(rows), node._live.recording.capacity - 1), (
        len(node._live.recording)
    )


def test_identify_payload_service_recovers_a_known_payload_and_applies_it(ros, tmp_path):
    truth = true_robot(PAYLOAD)
    recording = measured(fourier_motion(truth, duration=8.0), truth, effort_noise=0.05)
    tools = tmp_path / 'tools.yaml'
    node = make_node(
        tmp_path,
        apply_identified_payload=True,
        buffer_duration=20.0,
        tools_file=str(tools),
        save_identified_payload_as='identified_gripper',
    )
    with ros(node) as harness:
        payloads = harness.collect(InertiaStamped, f'/{node.get_name()}/payload', LATCHED_QOS)
        publish_recording(harness, node, recording)
        response = harness.call(Trigger, f'/{node.get_name()}/identify_payload')
        assert response.success, response.message
        assert 'kg' in response.message
        assert '; now the payload in use' in response.message
        assert "; saved as tool 'identified_gripper' in" in response.message
        assert wait_for(lambda: bool(payloads), 5)
        message = payloads[-1]
        assert message.header.frame_id == LINK
        assert abs(message.inertia.m - PAYLOAD.mass) < 0.02
        com = np.array([message.inertia.com.x, message.inertia.com.y, message.inertia.com.z])
        assert np.linalg.norm(com - PAYLOAD.com) < 0.003
        report = yaml.safe_load((tmp_path / 'payload_latest.yaml').read_text())
        assert tuple(report) == REPORT_KEYS and report['success'] is True
        # The offline CLI on a bag of the same recording gives the same answer as the service.
        write_rosbag(tmp_path / 'bag', node._snapshot())
        cli = subprocess.run(
            [
                sys.executable,
                '-m',
                'robot_dynamics',
                'identify-payload',
                '--urdf',
                str(ARM_URDF),
                '--bag',
                str(tmp_path / 'bag'),
                '--payload-link',
                LINK,
                '--format',
                'json',
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert cli.returncode == 0, cli.stderr
        offline = json.loads(cli.stdout)
        assert offline['mass'] == pytest.approx(report['mass'], rel=1e-9)
        np.testing.assert_allclose(offline['com'], report['com'], rtol=1e-9, atol=1e-12)
        # Applied: the live model's gravity torques now include the payload.
        assert wait_for(lambda: node.robot.payload is not None, 5)
        status = {kv.key: kv.value for kv in node._model_status().values}
        assert status['identified_payload'].startswith(f'{report["mass"]:.4g} ± ')
        assert status['identified_payload'].endswith(f' m in {LINK}')
        q = node.robot.configuration(recording.positions[-1])
        applied = node.robot.joint_part(dynamics.gravity_torques(node.robot, q))
        expected = truth.joint_part(
            dynamics.gravity_torques(truth, truth.configuration(recording.positions[-1]))
        )
        np.testing.assert_allclose(applied, expected, atol=0.05)
        # Saved as a tool preset: in the tools file, and selectable by name.
        saved = yaml.safe_load(tools.read_text())['tools']['identified_gripper']
        assert saved['link'] == LINK and saved['mass'] == pytest.approx(report['mass'])
        result = node.set_parameters([Parameter('active_tool', value='identified_gripper')])
        assert result[0].successful, result[0].reason


def test_service_refusals_are_answered_in_operator_words(ros, tmp_path):
    truth = true_robot(PAYLOAD)
    static = measured(static_motion(truth, poses=4, hold=1.5, move=0.8), truth)
    node = make_node(tmp_path, payload_mode='full')
    with ros(node) as harness:
        nothing = harness.call(Trigger, f'/{node.get_name()}/identify_payload')
        assert not nothing.success and 'nothing recorded' in nothing.message
        no_baseline = harness.call(Trigger, f'/{node.get_name()}/record_baseline')
        assert not no_baseline.success
        publish_recording(harness, node, static)
        refused = harness.call(Trigger, f'/{node.get_name()}/identify_payload')
        assert not refused.success
        assert 'static' in refused.message.lower() or 'still' in refused.message.lower(), (
            refused.message
        )
        kept = harness.call(Trigger, f'/{node.get_name()}/record_baseline')
        assert kept.success and 'baseline kept' in kept.message
        cleared = harness.call(Trigger, f'/{node.get_name()}/clear_payload_buffer')
        assert cleared.success and len(node._live.recording) == 0
        assert node.baseline is not None, 'clearing the recording must not drop the baseline'
        refused_after_clear = harness.call(Trigger, f'/{node.get_name()}/identify_payload')
        assert not refused_after_clear.success and 'nothing recorded' in refused_after_clear.message
        kept_baseline = node.baseline
        first = static.slice_time(static.time[0], static.time[6])  # 6 samples, 3 published
        later = Recording(
            first.time + 100.0, first.positions, first.velocities, first.efforts, first.joint_names
        )
        publish_recording(harness, node, later)
        too_short = harness.call(Trigger, f'/{node.get_name()}/record_baseline')
        assert not too_short.success and 'under 0.5 s' in too_short.message, too_short.message
        assert node.baseline is kept_baseline
        # Recording and baseline live in shared memory; destroying the node removes both blocks.
        blocks = [
            Path('/dev/shm') / buffer.handle.name
            for buffer in (node._live.recording, node._shared_baseline)
        ]
        assert all(block.exists() for block in blocks)
    assert not any(block.exists() for block in blocks)


def test_every_service_of_a_node_without_a_model_says_so(ros, tmp_path):
    """The description is awaited on the topic: no service pretends the robot has not moved."""
    node = make_node(tmp_path, robot_description='')
    services = ('identify_payload', 'record_baseline', 'explain_residual', 'validate_inertia')
    services += ('zero_effort_offsets', 'calibrate_contact_thresholds')
    with ros(node) as harness:
        for service in services:
            answer = harness.call(Trigger, f'/{node.get_name()}/{service}')
            assert not answer.success and answer.message == 'no robot model loaded yet', (
                service,
                answer.message,
            )


def test_validate_inertia_service_reports_the_same_findings_as_the_cli(ros, tmp_path):
    urdf = CORPUS / 'triangle_violation.urdf'
    node = make_node(tmp_path, robot_description=urdf.read_text(), payload_link='')
    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        response = harness.call(Trigger, f'/{node.get_name()}/validate_inertia')
        assert not response.success and 'error' in response.message
        service_report = yaml.safe_load((tmp_path / 'validation_latest.yaml').read_text())
        cli = subprocess.run(
            [sys.executable, '-m', 'robot_dynamics', 'validate', str(urdf), '--format', 'json'],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert cli.returncode == 2, cli.stderr
        cli_findings = json.loads(cli.stdout)

        def keyed(findings):
            return sorted((f['link'], f['check'], f['severity'], f['message']) for f in findings)

        assert keyed(service_report['findings']) == keyed(cli_findings)

        def link_error_published():
            return any(
                status.name.endswith('inertia arm') and status.level == DiagnosticStatus.ERROR
                for array in diagnostics
                for status in array.status
            )

        assert wait_for(link_error_published, 5)


def _short(motion, seconds: float):
    time_, *signals = motion
    keep = time_ < seconds
    return (time_[keep], *(signal[keep] for signal in signals))


REFUSALS = {
    # case: (recording with the payload, baseline or None, words the operator must read)
    'too few samples': (
        lambda truth: measured(_short(fourier_motion(truth, duration=8.0), 0.6), truth),
        None,
        'samples',
    ),
    'one pose only': (
        lambda truth: measured(static_motion(truth, 1, hold=4.0), truth),
        None,
        'move',
    ),
    'baseline of another motion': (
        lambda truth: measured(fourier_motion(truth, duration=8.0), truth, time_offset=20.0),
        lambda: measured(
            fourier_motion(true_robot(payload=None), duration=8.0, seed=9), true_robot(payload=None)
        ),
        'same motion',
    ),
    'model mismatch': (
        lambda truth: measured(
            fourier_motion(truth, duration=20.0), true_robot(heavier_link=4), velocity_noise=0.0
        ),
        None,
        'record a baseline',
    ),
}


@pytest.mark.parametrize('case', sorted(REFUSALS))
def test_each_refusal_reaches_the_operator_through_the_service(ros, tmp_path, case):
    make_recording, make_baseline, words = REFUSALS[case]
    truth = true_robot(PAYLOAD)
    node = make_node(tmp_path, payload_mode='auto', baseline_file=str(tmp_path / 'baseline.csv'))
    with ros(node) as harness:
        if make_baseline is not None:
            publish_recording(harness, node, make_baseline())
            assert harness.call(Trigger, f'/{node.get_name()}/record_baseline').success
            assert (tmp_path / 'baseline.csv').is_file()
            assert harness.call(Trigger, f'/{node.get_name()}/clear_payload_buffer').success
        publish_recording(harness, node, make_recording(truth))
        response = harness.call(Trigger, f'/{node.get_name()}/identify_payload')
        assert not response.success
        assert words in response.message, response.message
        report = yaml.safe_load((tmp_path / 'payload_latest.yaml').read_text())
        assert report['success'] is False and words in report['reason']


def test_a_saved_baseline_is_loaded_by_a_restarted_node(ros, tmp_path):
    truth = true_robot(payload=None)
    baseline_file = tmp_path / 'baseline.csv'
    node = make_node(tmp_path, baseline_file=str(baseline_file))
    with ros(node) as harness:
        publish_recording(harness, node, measured(fourier_motion(truth, duration=2.0), truth))
        assert harness.call(Trigger, f'/{node.get_name()}/record_baseline').success
        kept = node.baseline
    restarted = make_node(tmp_path, baseline_file=str(baseline_file))
    try:
        assert restarted.baseline is not None
        np.testing.assert_allclose(restarted.baseline.time, kept.time, atol=1e-9)
        np.testing.assert_allclose(restarted.baseline.efforts, kept.efforts, atol=1e-9)
    finally:
        restarted.destroy_node()


def test_service_cpu_share_is_taken_and_an_impossible_one_falls_back_to_the_default(ros, tmp_path):
    from robot_dynamics.ros.service_worker import DEFAULT_CPU_SHARE

    for requested, expected in ((0.5, 0.5), (5.0, DEFAULT_CPU_SHARE), (0.0, DEFAULT_CPU_SHARE)):
        node = make_node(tmp_path, service_cpu_share=requested)
        try:
            assert node.get_parameter('service_cpu_share').value == expected  # the value in use
            assert node._worker.cpu_share == expected
        finally:
            node.destroy_node()


def mesh_robot(meshes: dict) -> str:
    """URDF text of a chain with one link per entry of ``meshes`` (link name → collision mesh
    filename), each with the inertia of the 0.2 × 0.1 × 0.05 m box of box_inverted.stl (masses
    differ: identical tensors on several links would be reported as a copied placeholder)."""
    parts = ['<robot name="meshes"><link name="base"/>']
    parent = 'base'
    for number, (link, filename) in enumerate(meshes.items()):
        mass = 1.0 + 0.1 * number
        ixx, iyy, izz = (
            mass * (a * a + b * b) / 12.0 for a, b in ((0.1, 0.05), (0.2, 0.05), (0.2, 0.1))
        )
        parts.append(
            f'<link name="{link}"><inertial><origin xyz="0.05 0 0.025"/><mass '
            f'value="{mass:g}"/><inertia ixx="{ixx:.12g}" ixy="0" ixz="0" iyy="{iyy:.12g}" iyz="0" '
            f'izz="{izz:.12g}"/></inertial><collision><origin xyz="0 0 0"/><geometry><mesh '
            f'filename="{filename}"/></geometry></collision></link><joint name="{link}_joint" '
            f'type="revolute"><origin xyz="0 0 0.1"/><parent link="{parent}"/><child '
            f'link="{link}"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" '
            'velocity="1"/></joint>'
        )
        parent = link
    return ''.join(parts) + '</robot>'


def test_validate_inertia_reads_meshes_only_where_its_parameters_allow(ros, tmp_path):
    from test_dynamics_node import set_parameters

    # The same inside-out mesh (a mesh_orientation warning whenever it is read) in a package, in an
    # allowed directory and outside both, reached directly, through "..", a symlink and a package
    # escape.
    inverted = (CORPUS / 'meshes' / 'box_inverted.stl').read_bytes()
    package, allowed, outside = tmp_path / 'arm_pkg', tmp_path / 'allowed', tmp_path / 'outside'
    for directory in (package / 'meshes', allowed, outside):
        directory.mkdir(parents=True)
        (directory / 'box_inverted.stl').write_bytes(inverted)
    (allowed / 'link.stl').symlink_to(outside / 'box_inverted.stl')
    readable = {
        'in_package': 'package://arm_pkg/meshes/box_inverted.stl',
        'in_root': f'file://{allowed}/box_inverted.stl',
    }
    forbidden = {
        'outside_root': f'file://{outside}/box_inverted.stl',
        'dot_dot': f'file://{allowed}/../outside/box_inverted.stl',
        'symlink': f'file://{allowed}/link.stl',
        'package_escape': 'package://arm_pkg/../outside/box_inverted.stl',
    }
    reports = tmp_path / 'reports'
    node = make_node(
        reports, robot_description=mesh_robot({**readable, **forbidden}), payload_link=''
    )
    assert (
        node.get_parameter('mesh_allowed_roots').value
        == []
        == node.get_parameter('mesh_package_paths').value
    )

    def validate(harness):
        response = harness.call(Trigger, f'/{node.get_name()}/validate_inertia')
        findings = yaml.safe_load((reports / 'validation_latest.yaml').read_text())['findings']
        return response, {(f['link'], f['check']): f for f in findings}

    with ros(node) as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        # Nothing set (a description from the graph names the files): no mesh is read.
        response, findings = validate(harness)
        assert response.success and '0 warnings' in response.message, response.message
        assert not [key for key in findings if key[1] != 'mesh'], sorted(findings)
        for link in ('in_root', 'outside_root', 'dot_dot', 'symlink'):
            assert (
                'file paths are only read under allowed roots, and none are set'
                in findings[link, 'mesh']['message']
            ), findings[link, 'mesh']
        for link in ('in_package', 'package_escape'):
            assert 'package "arm_pkg" is not known' in findings[link, 'mesh']['message'], findings[
                link, 'mesh'
            ]
        # Set at run time, read at the next call: the package and the allowed root are read, nothing
        # else.
        results = set_parameters(
            harness,
            node,
            mesh_package_paths=[f'arm_pkg={package}'],
            mesh_allowed_roots=[str(allowed)],
        )
        assert all(result.successful for result in results), results
        response, findings = validate(harness)
        assert response.success and '2 warnings' in response.message, response.message
        for link, filename in readable.items():
            finding = findings[link, 'mesh_orientation']
            assert finding['severity'] == 'warning' and 'negative volume' in finding['message'], (
                finding
            )
            assert (link, 'mesh') not in findings
        real = {'allowed': str(allowed.resolve()), 'package': str(package.resolve())}
        for link, where in (
            ('outside_root', 'allowed'),
            ('dot_dot', 'allowed'),
            ('symlink', 'allowed'),
            ('package_escape', 'package'),
        ):
            assert (link, 'mesh_orientation') not in findings, link
            assert (
                f'resolves outside {real[where]}; refused' in findings[link, 'mesh']['message']
            ), findings[link, 'mesh']

        def published(link, level):
            return any(
                status.name == f'{node.get_name()}: inertia {link}' and status.level == level
                for array in diagnostics
                for status in array.status
            )

        assert wait_for(
            lambda: (
                published('in_package', DiagnosticStatus.WARN)
                and published('in_root', DiagnosticStatus.WARN)
                and published('symlink', DiagnosticStatus.OK)
            ),
            5,
        )
        assert published('base', DiagnosticStatus.OK)  # one status per link, clean links too


def test_a_report_that_cannot_be_written_is_said_in_the_answer(ros, tmp_path):
    blocker = tmp_path / 'not_a_directory'
    blocker.write_text('')
    node = make_node(tmp_path, report_directory=str(blocker / 'reports'))
    with ros(node) as harness:
        response = harness.call(Trigger, f'/{node.get_name()}/validate_inertia')
    assert response.success, response.message
    assert f'could not write the validation report to {blocker / "reports"}' in response.message
