"""`robot_dynamics demo` end to end in its short CI form, through the real in-process runner
(sim_robot, dynamics_node and centroidal_node in one process, real services)."""
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'


def run_demo(*arguments: str, timeout: float = 60.0) -> tuple:
    """(exit code, stdout, pid, seconds) of ``python -m robot_dynamics demo ARGUMENTS`` run
    without ROS_DOMAIN_ID and ROS_AUTOMATIC_DISCOVERY_RANGE (the demo must set both)."""
    environment = {key: value for key, value in os.environ.items()
                   if key not in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE')}
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, '-m', 'robot_dynamics', 'demo', *arguments], cwd=ROOT,
                               env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        raise AssertionError(f'demo did not finish in {timeout} s; output so far:\n{output}')
    return process.returncode, output, process.pid, time.monotonic() - started


def test_short_demo_identifies_the_hidden_payload_and_writes_summary_and_plots(tmp_path):
    code, output, pid, seconds = run_demo('--duration', '8', '--output-dir', str(tmp_path))
    assert code == 0, output
    assert f'ROS_DOMAIN_ID={pid % 100 + 1}, discovery LOCALHOST' in output, output
    for expected in ('phase "baseline"', '/dynamics/record_baseline: ok', '/dynamics/identify_payload: ok',
                     '/dynamics/validate_inertia: ok', 'external torque RMS per joint', 'support polygon 4 vertices',
                     'result: PASS'):
        assert expected in output, f'{expected!r} missing from the demo output:\n{output}'
    report = yaml.safe_load((tmp_path / 'payload_latest.yaml').read_text())
    assert report['success'] and report['used_baseline']
    assert abs(report['mass'] - 1.5) < 0.02  # the hidden mass of config/sim_robot.yaml
    for name in ('torques.png', 'centroidal.png'):
        assert (tmp_path / name).read_bytes()[:8] == PNG_SIGNATURE, name
    assert seconds < 25.0, f'short demo took {seconds:.1f} s'


def test_demo_refuses_a_duration_too_short_to_identify_anything(tmp_path):
    code, output, _, _ = run_demo('--duration', '1', '--output-dir', str(tmp_path), '--no-plots', timeout=20.0)
    assert code == 1
    assert '--duration must be between 4 and 600 s' in output


def test_demo_refuses_an_output_dir_that_is_an_existing_file(tmp_path):
    existing = tmp_path / 'report.txt'
    existing.write_text('not a directory\n')
    for target in (existing, existing / 'sub'):
        code, output, _, seconds = run_demo('--output-dir', str(target), '--no-plots', timeout=20.0)
        assert code == 1, output
        assert f'--output-dir {target}' in output and 'Traceback' not in output, output
        assert 'phase' not in output and 'sim_robot' not in output and seconds < 10.0, output
    assert existing.read_text() == 'not a directory\n'
