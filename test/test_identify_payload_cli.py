"""The `robot_dynamics identify-payload` command: bags (sqlite3 and mcap) and CSV files
written by robot_dynamics.core.identification.recording_files give the same answer as the core
function."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import yaml
from test_payload import (
    FULL_OVERLAP,
    LINK,
    PARTIAL_OVERLAPS,
    PAYLOAD,
    advised_extension,
    arm,
    assert_as_accurate_as_full_overlap,
    fourier_motion,
    measured,
    overlap_cases,
    static_motion,
    true_robot,
)

from robot_dynamics.cli import main
from robot_dynamics.core.identification import recording_files as recordings
from robot_dynamics.core.identification.payload import identify_payload
from robot_dynamics.core.identification.payload_report import REPORT_KEYS
from robot_dynamics.models import ARM_URDF

OVERLAP_RATE = 250.0  # [Hz] a typical logged joint_states rate


@pytest.fixture(scope='module')
def loaded_recording():
    return measured(fourier_motion(arm(), duration=8.0, rate=250.0, seed=21), true_robot())


def run_cli(capsys, *arguments) -> tuple:
    code = main(['identify-payload', '--urdf', str(ARM_URDF), *arguments])
    return code, capsys.readouterr().out


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_cli_on_a_bag_gives_the_core_answer(tmp_path, capsys, loaded_recording, storage):
    bag = tmp_path / f'loaded_{storage}'
    recordings.write_rosbag(bag, loaded_recording, storage=storage)
    code, out = run_cli(capsys, '--bag', str(bag), '--payload-link', LINK, '--format', 'json')
    direct = identify_payload(arm(), loaded_recording, LINK, 'auto').to_dict()
    answer = json.loads(out)
    assert code == 0 and answer['success']
    assert tuple(answer) == REPORT_KEYS
    for key in ('mass', 'mass_std', 'condition_number', 'residual_rms_after'):
        assert answer[key] == pytest.approx(direct[key], rel=1e-6)
    np.testing.assert_allclose(answer['com'], direct['com'], rtol=1e-6)
    assert answer['mode'] == direct['mode'] and answer['samples'] == direct['samples']
    assert abs(answer['mass'] - PAYLOAD.mass) < 0.01


def test_cli_with_csv_and_baseline_writes_the_yaml_report(tmp_path, capsys):
    motion = fourier_motion(arm(), duration=8.0, rate=250.0, seed=22)
    loaded = measured(motion, true_robot(perturbed=True), effort_noise=0.1, friction=True)
    empty = measured(
        motion, true_robot(payload=None, perturbed=True), effort_noise=0.1, friction=True, seed=8
    )
    recordings.write_csv(tmp_path / 'loaded.csv', loaded)
    recordings.write_csv(tmp_path / 'empty.csv', empty)
    report_path = tmp_path / 'payload.yaml'
    code, out = run_cli(
        capsys,
        '--csv',
        str(tmp_path / 'loaded.csv'),
        '--baseline',
        str(tmp_path / 'empty.csv'),
        '--output',
        str(report_path),
    )
    report = yaml.safe_load(report_path.read_text())
    assert code == 0 and report['used_baseline'] and report['payload_link'] == 'tool0'
    assert tuple(report) == REPORT_KEYS
    assert abs(report['mass'] - PAYLOAD.mass) < 0.01
    assert f"{report['mass']:.4f}" in out and 'kg' in out


def test_cli_refusal_exits_with_2_and_prints_the_reason(tmp_path):
    static = measured(static_motion(arm(), 4, rate=250.0), true_robot())
    recordings.write_csv(tmp_path / 'static.csv', static)
    finished = subprocess.run(
        [
            sys.executable,
            '-m',
            'robot_dynamics',
            'identify-payload',
            '--urdf',
            str(ARM_URDF),
            '--csv',
            str(tmp_path / 'static.csv'),
            '--mode',
            'full',
            '--format',
            'json',
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 2, finished.stderr
    answer = json.loads(finished.stdout)
    assert answer['success'] is False and 'mass_com' in answer['reason'] and answer['mass'] is None


def test_cli_reports_unusable_input_with_exit_1(tmp_path, capsys):
    code = main(
        ['identify-payload', '--urdf', str(ARM_URDF), '--csv', str(tmp_path / 'missing.csv')]
    )
    assert code == 1 and 'missing.csv' in capsys.readouterr().err


@pytest.mark.parametrize('where', ['missing_directory', 'directory'])
def test_cli_refuses_an_unwritable_output_before_the_fit(tmp_path, where):
    target = tmp_path / 'no_such_dir' / 'payload.yaml' if where == 'missing_directory' else tmp_path
    # the recording does not exist either: the output is checked first, so its error is the one
    # reported
    finished = subprocess.run(
        [
            sys.executable,
            '-m',
            'robot_dynamics',
            'identify-payload',
            '--urdf',
            str(ARM_URDF),
            '--csv',
            str(tmp_path / 'missing.csv'),
            '--output',
            str(target),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 1, finished.stderr
    assert f'--output {target}' in finished.stderr and 'Traceback' not in finished.stderr


def test_cli_prints_the_report_when_writing_the_output_fails_after_the_fit(
    tmp_path, capsys, loaded_recording
):
    recordings.write_csv(tmp_path / 'loaded.csv', loaded_recording)
    # /dev/full passes every check up front (an existing, writable file) and fails on write
    code = main(
        [
            'identify-payload',
            '--urdf',
            str(ARM_URDF),
            '--csv',
            str(tmp_path / 'loaded.csv'),
            '--payload-link',
            LINK,
            '--output',
            '/dev/full',
            '--format',
            'json',
        ]
    )
    captured = capsys.readouterr()
    assert code == 1
    assert (
        'could not write the report to /dev/full' in captured.err
        and 'printed above' in captured.err
    )
    answer = json.loads(captured.out)
    assert answer['success'] and abs(answer['mass'] - PAYLOAD.mass) < 0.01


def identify_csv_pair(tmp_path, capsys, recording, baseline) -> tuple:
    """(exit code, text output, YAML report) of identify-payload on the two recordings as CSV
    files."""
    recordings.write_csv(tmp_path / 'loaded.csv', recording)
    recordings.write_csv(tmp_path / 'baseline.csv', baseline)
    report_path = tmp_path / 'payload.yaml'
    code, out = run_cli(
        capsys,
        '--csv',
        str(tmp_path / 'loaded.csv'),
        '--baseline',
        str(tmp_path / 'baseline.csv'),
        '--payload-link',
        LINK,
        '--output',
        str(report_path),
    )
    return code, out, yaml.safe_load(report_path.read_text())


@pytest.fixture(scope='module')
def full_overlap_cli_report(tmp_path_factory):
    loaded, empty, _ = overlap_cases(OVERLAP_RATE)[FULL_OVERLAP]
    directory = tmp_path_factory.mktemp('full_overlap')
    recordings.write_csv(directory / 'loaded.csv', loaded)
    recordings.write_csv(directory / 'baseline.csv', empty)
    code = main(
        [
            'identify-payload',
            '--urdf',
            str(ARM_URDF),
            '--csv',
            str(directory / 'loaded.csv'),
            '--baseline',
            str(directory / 'baseline.csv'),
            '--payload-link',
            LINK,
            '--output',
            str(directory / 'payload.yaml'),
        ]
    )
    assert code == 0
    return yaml.safe_load((directory / 'payload.yaml').read_text())


@pytest.mark.parametrize('case', PARTIAL_OVERLAPS)
def test_cli_uses_the_stretch_a_partial_baseline_shares_as_accurately_as_a_full_one(
    tmp_path, capsys, case, full_overlap_cli_report
):
    loaded, empty, shared = overlap_cases(OVERLAP_RATE)[case]
    code, out, report = identify_csv_pair(tmp_path, capsys, loaded, empty)
    assert code == 0, out
    assert tuple(report) == REPORT_KEYS
    assert report['used_duration'] == pytest.approx(
        shared - 0.4, abs=0.05
    )  # 0.2 s filter edge at each end
    assert_as_accurate_as_full_overlap(report, full_overlap_cli_report)
    assert f"covering {100 * report['baseline_coverage']:.0f} % of the payload recording" in out
    assert f"{report['used_duration']:.1f} s used" in out
    assert f"{report['used_duration']:.1f} s of the payload recording used" in out


def test_cli_refuses_a_shared_stretch_too_short_saying_how_much_more_the_baseline_must_cover(
    tmp_path, capsys
):
    loaded, empty, _ = overlap_cases(OVERLAP_RATE)[FULL_OVERLAP]
    code, out, report = identify_csv_pair(tmp_path, capsys, loaded, empty.slice_time(19.3, 20.0))
    assert code == 2 and report['success'] is False and report['mass'] is None
    assert f"only {report['samples']} usable samples" in out and '(need 40)' in out
    seconds_per_sample = report['used_duration'] / report['samples']
    assert advised_extension(out) >= (40 - report['samples']) * seconds_per_sample
    assert (
        report['used_duration'] == pytest.approx(0.3, abs=0.05)
        and report['baseline_coverage'] < 0.05
    )
