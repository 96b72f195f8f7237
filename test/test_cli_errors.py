"""The `identify` command line refuses bad input with a one-line reason on stderr and exit
status 2 (docs/identification.md), never with a Python traceback.

The refusals are checked through ``cli.main`` in this process (an exception would fail the
test as a traceback would); one test runs ``python -m robot_dynamics`` to check that the
installed entry point gives the same status and words."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics import cli
from robot_dynamics.core.identification.excitation import FourierTrajectory, rest_constrained
from robot_dynamics.core.identification.recording import Recording
from robot_dynamics.core.identification.recording_files import read_recording, write_csv
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    """``robot_dynamics ARGUMENTS`` through ``cli.main`` here (exit code, stdout, stderr)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = cli.main(list(arguments))
        except SystemExit as exit_:  # argparse's refusals
            code = exit_.code
    return subprocess.CompletedProcess(arguments, code, stdout.getvalue(), stderr.getvalue())


def run_cli_process(*arguments: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """``python -m robot_dynamics ARGUMENTS`` in a fresh process (exit code, stdout, stderr)."""
    environment = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    return subprocess.run(
        [sys.executable, '-m', 'robot_dynamics', *arguments],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope='module')
def motion_csv(tmp_path_factory) -> Path:
    """A short, valid recording of the bundled arm (Fourier motion, zero efforts)."""
    robot = RobotModel.from_urdf_file(ARM_URDF)
    rng = np.random.default_rng(4)
    sine, cosine = rest_constrained(*rng.uniform(-0.3, 0.3, (2, robot.num_joints, 4)))
    centre = 0.5 * (robot.limits.lower + robot.limits.upper)
    trajectory = FourierTrajectory(robot.joint_names, centre, sine, cosine, 0.2, 5.0)
    times = trajectory.sample_times(100.0)
    positions, velocities, _ = trajectory.evaluate(times)
    path = tmp_path_factory.mktemp('cli_errors') / 'motion.csv'
    write_csv(
        path, Recording(times, positions, velocities, np.zeros_like(positions), robot.joint_names)
    )
    return path


def assert_refused(finished: subprocess.CompletedProcess, code: int, message: str) -> None:
    assert finished.returncode == code, (finished.stdout, finished.stderr)
    assert message in finished.stderr, finished.stderr
    assert 'Traceback' not in finished.stderr + finished.stdout


def test_identify_names_a_csv_that_is_not_utf8_text(tmp_path):
    junk = tmp_path / 'junk.csv'
    junk.write_bytes(b'time,\x89PNG\r\n\x1a\n\xff\xfe' + bytes(range(256)))
    arguments = ('identify', '--urdf', str(ARM_URDF), '--csv', str(junk))
    assert_refused(run_cli(*arguments), 2, f'cannot read {junk}: not UTF-8 text')
    assert_refused(run_cli_process(*arguments), 2, f'cannot read {junk}: not UTF-8 text')


@pytest.mark.parametrize(
    'option, value',
    [
        ('--period', '0'),
        ('--period', '-0.001'),
        ('--period', 'inf'),
        ('--prior-weight', 'nan'),
        ('--prior-weight', '-1'),
        ('--prior-weight', '0'),
        ('--cutoff', 'nan'),
        ('--max-gap', '0'),
        ('--stribeck-velocity', '0'),
        ('--stribeck-velocity', '-1'),
        ('--stribeck-velocity', 'nan'),
    ],
)
def test_identify_range_checks_numeric_options_before_reading(motion_csv, option, value):
    finished = run_cli('identify', '--urdf', str(ARM_URDF), '--csv', str(motion_csv), option, value)
    assert_refused(finished, 2, f'{option} must be a positive number, got')


def test_identify_refuses_a_prior_weight_that_breaks_the_solver(motion_csv):
    arguments = ('identify', '--urdf', str(ARM_URDF), '--csv', str(motion_csv))
    finished = run_cli(*arguments, '--prior-weight', '1e300')
    assert_refused(finished, 2, '--prior-weight must be at most 1e+09, got 1e+300')


@pytest.mark.parametrize('value', [',', '', ' , '])
def test_identify_refuses_a_friction_list_without_a_term(motion_csv, value):
    finished = run_cli(
        'identify', '--urdf', str(ARM_URDF), '--csv', str(motion_csv), '--friction', value
    )
    assert_refused(finished, 2, '--friction lists no term')


@pytest.mark.parametrize('value', ['-0.01', 'nan', 'fast'])
def test_identify_refuses_a_sign_velocity_that_is_not_auto_or_a_velocity(motion_csv, value):
    finished = run_cli(
        'identify', '--urdf', str(ARM_URDF), '--csv', str(motion_csv), '--sign-velocity', value
    )
    assert_refused(finished, 2, '--sign-velocity must be auto or a number >= 0 [rad/s], got')


@pytest.mark.parametrize('value', ['-0.001', 'nan', '0.2', 'fast'])
def test_identify_refuses_an_effort_delay_out_of_its_range(motion_csv, value):
    finished = run_cli(
        'identify', '--urdf', str(ARM_URDF), '--csv', str(motion_csv), '--effort-delay', value
    )
    assert_refused(finished, 2, '--effort-delay must be auto or a time in s in [0, 0.1], got')


@pytest.fixture(scope='module')
def one_joint_unmeasured_csv(motion_csv, tmp_path_factory) -> Path:
    """``motion_csv`` with efforts of a real arm's size, except joint 3's: 0 in every row."""
    recording = read_recording(motion_csv)
    efforts = np.sin(np.outer(recording.time, np.arange(1, 8)))
    efforts[:, 2] = 0.0
    path = tmp_path_factory.mktemp('unmeasured') / 'joint3.csv'
    write_csv(
        path,
        Recording(
            recording.time,
            recording.positions,
            recording.velocities,
            efforts,
            recording.joint_names,
        ),
    )
    return path


@pytest.mark.parametrize(
    'command, code, every_joint',
    [('identify', 2, True), ('explain-residual', 2, True), ('identify-friction', 2, True)]
    # unusable input is status 1 for these two (docs/payload.md), and they refuse only when no
    # joint's effort was measured: they use some joints' efforts
    + [('identify-payload', 1, False), ('external-wrench', 1, False)],
)
def test_efforts_never_measured_are_refused_before_any_fit(
    motion_csv, one_joint_unmeasured_csv, command, code, every_joint
):
    finished = run_cli(command, '--urdf', str(ARM_URDF), '--csv', str(motion_csv))
    assert_refused(finished, code, 'every effort is 0 in every sample: not measured')
    assert f'{command} needs measured efforts' in finished.stderr
    finished = run_cli(command, '--urdf', str(ARM_URDF), '--csv', str(one_joint_unmeasured_csv))
    words = 'the efforts of fr3_joint3 (0) are that value in every sample: not measured'
    assert (words in finished.stderr) == every_joint, finished.stderr


def test_identify_refuses_a_split_time_that_is_not_finite(motion_csv):
    finished = run_cli(
        'identify', '--urdf', str(ARM_URDF), '--csv', str(motion_csv), '--split-time', 'nan'
    )
    assert_refused(finished, 2, '--split-time must be a finite time')


@pytest.mark.parametrize('option', ['--output', '--report'])
def test_identify_refuses_an_unwritable_output_before_the_fit(tmp_path, option):
    # the recording does not exist: the output is checked first, so its error is the one reported
    missing = str(tmp_path / 'missing.csv')
    for target in (tmp_path / 'no_such_dir' / 'out.urdf', tmp_path):
        finished = run_cli(
            'identify', '--urdf', str(ARM_URDF), '--csv', missing, option, str(target)
        )
        assert_refused(finished, 2, f'{option} {target}: cannot write there')
    a_file = tmp_path / 'a_file'
    a_file.write_text('kept\n')
    for under_a_file in (a_file / 'out.urdf', a_file / 'sub' / 'out.urdf'):
        finished = run_cli(
            'identify', '--urdf', str(ARM_URDF), '--csv', missing, option, str(under_a_file)
        )
        assert_refused(finished, 2, f'{a_file} is a file, not a directory')
    assert a_file.read_text() == 'kept\n'


SINGLE_LINK_URDF = """<robot name="single"><link name="base"><inertial><mass value="1"/>
<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link></robot>"""


@pytest.mark.parametrize(
    'command, code',
    [('identify', 2), ('explain-residual', 2), ('identify-friction', 2), ('excitation', 2)]
    + [('identify-payload', 1), ('external-wrench', 1), ('effective-mass', 2), ('capacity', 2)],
)
def test_a_model_without_a_moving_joint_is_refused_by_name(motion_csv, tmp_path, command, code):
    """A one-link robot: a clear refusal, not an empty result (identify-friction exited 0),
    a library message, or a crash (effective-mass: a segmentation fault in pinocchio)."""
    urdf = tmp_path / 'single.urdf'
    urdf.write_text(SINGLE_LINK_URDF)
    arguments = {
        'excitation': ['--output', str(tmp_path / 'design')],
        'effective-mass': ['--poses', '1', '--direction', '1', '0', '0'],
        'capacity': [],
    }.get(command, ['--csv', str(motion_csv)])
    finished = run_cli_process(command, '--urdf', str(urdf), *arguments)
    assert_refused(finished, code, 'model "single" has no moving joint')
    assert list(tmp_path.iterdir()) == [urdf]


@pytest.mark.parametrize(
    'command, code',
    [('identify', 2), ('explain-residual', 2), ('identify-friction', 2)]
    + [('identify-payload', 1), ('external-wrench', 1), ('identify-tool-ft', 2)],
)
def test_a_mistyped_recording_path_is_said_not_to_exist(tmp_path, command, code):
    missing = tmp_path / 'no_such_bag'
    finished = run_cli(command, '--urdf', str(ARM_URDF), '--bag', str(missing))
    assert_refused(finished, code, f'recording {missing}: no such file or directory')


@pytest.mark.parametrize(
    'command, code, read, option',
    [
        ('identify', 2, 'model', '--output'),
        ('identify', 2, 'recording', '--report'),
        ('identify-payload', 1, 'recording', '--output'),
        ('identify-friction', 2, 'recording', '--output'),
        ('external-wrench', 1, 'model', '--output'),
    ],
)
def test_an_output_that_is_an_input_is_refused_and_the_input_kept(
    motion_csv, tmp_path, command, code, read, option
):
    model, recording = tmp_path / 'arm.urdf', tmp_path / 'motion.csv'
    model.write_text(ARM_URDF.read_text())
    recording.write_bytes(motion_csv.read_bytes())
    target = {'model': model, 'recording': recording}[read]
    before = target.read_bytes()
    finished = run_cli(command, '--urdf', str(model), '--csv', str(recording), option, str(target))
    assert_refused(finished, code, f'{option} {target}: cannot write there, the command reads it')
    assert target.read_bytes() == before


def test_excitation_refuses_outputs_that_overwrite_an_input_or_name_no_file(tmp_path):
    friction = tmp_path / 'design.yaml'
    friction.write_text('joints: {}\n')
    finished = run_cli(
        'excitation', '--friction', str(friction), '--output', str(tmp_path / 'design')
    )
    assert_refused(finished, 2, f'--output {friction}: cannot write there, the command reads it')
    assert friction.read_text() == 'joints: {}\n'
    for prefix in ('', f'{tmp_path}/'):
        finished = run_cli('excitation', '--output', prefix)
        assert_refused(finished, 2, '--output is a prefix of file names')
    assert list(tmp_path.iterdir()) == [friction]


def test_identify_checks_the_friction_file_beside_its_output_before_the_fit(motion_csv, tmp_path):
    (tmp_path / 'identified_friction.yaml').mkdir()
    output = tmp_path / 'identified.urdf'
    finished = run_cli(
        'identify', '--urdf', str(ARM_URDF), '--csv', str(motion_csv), '--output', str(output)
    )
    assert_refused(finished, 2, '--output (its friction file)')
    assert 'it is a directory' in finished.stderr
    assert not output.exists()


@pytest.mark.parametrize(
    'arguments, code, words',
    [
        (['identify', '--period', '1e-12'], 2, 'a 1e-12 s grid would hold'),
        (['identify-payload', '--cutoff-hz', '1e9'], 2, 'too slowly for the 1e+09 Hz filter'),
        (['excitation', '--rate', '1e9'], 2, 'more than the 1e+07 a design writes'),
        (['excitation', '--duration', '1e12'], 2, 'more than the 1e+07 a design writes'),
    ],
)
def test_sizes_that_would_need_terabytes_are_refused_before_allocating(
    motion_csv, tmp_path, arguments, code, words
):
    command, *options = arguments
    recording = read_recording(motion_csv)
    measured = tmp_path / 'measured.csv'
    write_csv(
        measured,
        Recording(
            recording.time,
            recording.positions,
            recording.velocities,
            np.sin(np.outer(recording.time, np.arange(1, 8))),
            recording.joint_names,
        ),
    )
    source = (
        ['--output', str(tmp_path / 'design')]
        if command == 'excitation'
        else ['--urdf', str(ARM_URDF), '--csv', str(measured)]
    )
    finished = run_cli(command, *source, *options)
    assert finished.returncode == code, (finished.stdout, finished.stderr)
    assert words in finished.stdout + finished.stderr
    assert 'Traceback' not in finished.stdout + finished.stderr


@pytest.mark.parametrize('command', ['identify-friction', 'explain-residual'])
def test_stamps_in_milliseconds_are_refused_by_their_spacing(motion_csv, tmp_path, command):
    recording = read_recording(motion_csv)
    in_milliseconds = tmp_path / 'milliseconds.csv'
    write_csv(
        in_milliseconds,
        Recording(
            recording.time * 1000.0,
            recording.positions,
            recording.velocities,
            np.sin(np.outer(recording.time, np.arange(1, 8))),
            recording.joint_names,
        ),
    )
    finished = run_cli(command, '--urdf', str(ARM_URDF), '--csv', str(in_milliseconds))
    assert_refused(finished, 2, 'the samples are 10 s apart (median), more than 0.1 s')


INVERTED_RANGE_URDF = """<robot name="inverted"><link name="base"/><link name="l1"><inertial>
<mass value="1"/><origin xyz="0.1 0 0"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0"
izz="0.01"/></inertial></link><joint name="j1" type="revolute"><parent link="base"/>
<child link="l1"/><axis xyz="0 1 0"/><limit lower="1" upper="-1" effort="10" velocity="2"/>
</joint></robot>"""


@pytest.mark.parametrize(
    'command, arguments, code, words',
    [
        ('validate', [], 2, 'joint "j1": lower limit 1 is above upper limit -1'),
        ('capacity', [], 2, 'joint j1 has its lower limit above its upper one'),
        ('effective-mass', ['--direction', '1', '0', '0'], 2, 'joint j1 has its lower limit'),
    ],
)
def test_a_joint_range_with_lower_above_upper_is_named(tmp_path, command, arguments, code, words):
    urdf = tmp_path / 'inverted.urdf'
    urdf.write_text(INVERTED_RANGE_URDF)
    source = [str(urdf)] if command == 'validate' else ['--urdf', str(urdf)]
    finished = run_cli(command, *source, *arguments)
    assert finished.returncode == code, (finished.stdout, finished.stderr)
    assert words in finished.stdout + finished.stderr


@pytest.mark.parametrize(
    'arguments, words',
    [
        (['capacity', '--seed', '-1'], 'argument --seed: must be ≥ 0, got -1'),
        (['effective-mass', '--seed', '-1'], 'argument --seed: must be ≥ 0, got -1'),
        (['capacity', '--poses', '100000000'], 'argument --poses: must be ≥ 1 and ≤ 1e+06'),
        (['capacity', '--poses', 'many'], "argument --poses: 'many' is not a whole number"),
        (['bench', 'contact', '--free-seconds', '-5'], 'argument --free-seconds: must be > 0'),
        (['bench', 'contact', '--rate', '-250'], 'argument --rate: must be > 0, got -250'),
        (['bench', 'realtime', '--duration', '0'], 'argument --duration: must be > 0, got 0'),
        (['bench', 'payload', '--seeds', '0'], 'argument --seeds: must be ≥ 1, got 0'),
        (['bench', 'storm', '--service-cpu-share', '2'], 'must be > 0 and ≤ 1, got 2'),
        (['bench', 'dynamics', '--warmup', 'nan'], 'argument --warmup: must be ≥ 0, got nan'),
    ],
)
def test_pose_counts_and_seeds_out_of_range_are_refused_by_option(arguments, words):
    assert_refused(run_cli(*arguments), 2, words)


@pytest.mark.parametrize(
    'option, value, words',
    [
        ('--split-time', '0', '--split-time 0 s is not after the start of the recording (5.05 s)'),
        ('--decimate', '100000', '--decimate 100000 leaves 1 of the'),
    ],
)
def test_identify_names_the_option_that_leaves_nothing_to_fit(
    motion_csv, tmp_path, option, value, words
):
    recording = read_recording(motion_csv)
    measured = tmp_path / 'measured.csv'
    write_csv(
        measured,
        Recording(
            recording.time + 5.0,
            recording.positions,
            recording.velocities,
            np.sin(np.outer(recording.time, np.arange(1, 8))),
            recording.joint_names,
        ),
    )
    finished = run_cli('identify', '--urdf', str(ARM_URDF), '--csv', str(measured), option, value)
    assert_refused(finished, 2, words)


def test_identify_tool_ft_refuses_an_empty_tool_name(tmp_path):
    finished = run_cli(
        'identify-tool-ft', '--urdf', str(ARM_URDF), '--bag', str(tmp_path), '--name', ' '
    )
    assert_refused(finished, 2, '--name must name the tool')


def test_an_output_that_cannot_be_written_is_said_in_one_line():
    """stdout on a full disk: one line on stderr and exit 1; stdout a pipe whose reader has
    gone (`| head`): exit 141 (128 + SIGPIPE), silently. Never a traceback."""
    arguments = [sys.executable, '-m', 'robot_dynamics', 'validate', str(ARM_URDF)]
    environment = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    with open('/dev/full', 'w') as full:
        finished = subprocess.run(
            arguments, stdout=full, stderr=subprocess.PIPE, text=True, env=environment, timeout=60
        )
    assert finished.returncode == 1, finished.stderr
    assert finished.stderr == (
        'robot_dynamics validate: cannot write the output: [Errno 28] No space left on device\n'
    )
    reader_gone = subprocess.Popen(
        arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment
    )
    reader_gone.stdout.close()
    _, errors = reader_gone.communicate(timeout=60)
    assert reader_gone.returncode == 141 and errors == ''
