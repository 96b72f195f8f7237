"""The configuration files the nodes load (friction, effort offsets, tools, contact profiles)
are refused with one error naming the file when they are missing, not a regular file (a
directory, a FIFO, a device), over the size bound (never read further than it: a file cut short
could still parse) or not UTF-8. The files the project writes are replaced whole or not at all,
with names YAML would read as something else quoted."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import yaml

from robot_dynamics.core.contact.contact_profiles import (
    MAX_PROFILES_FILE_BYTES,
    ContactProfileError,
    load_profiles,
)
from robot_dynamics.core.dynamics.friction import (
    MAX_FRICTION_FILE_BYTES,
    FrictionFileError,
    load_friction_file,
)
from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.live.effort_offsets import (
    MAX_FILE_BYTES,
    EffortOffsetsError,
    load_effort_offsets,
    replacing_words,
    save_effort_offsets,
)
from robot_dynamics.core.live.payload_in_use import (
    MAX_TOOLS_FILE_BYTES,
    ToolsFileError,
    load_tools,
)
from robot_dynamics.core.text_files import load_yaml, read_small_text, yaml_scalar

JOINTS = ('fr3_joint1', 'fr3_joint2')
LOADERS = [
    (lambda path: load_friction_file(path, JOINTS), FrictionFileError, MAX_FRICTION_FILE_BYTES),
    (lambda path: load_effort_offsets(path, JOINTS), EffortOffsetsError, MAX_FILE_BYTES),
    (load_tools, ToolsFileError, MAX_TOOLS_FILE_BYTES),
    (load_profiles, ContactProfileError, MAX_PROFILES_FILE_BYTES),
]


@pytest.mark.parametrize('load, error, max_bytes', LOADERS)
def test_each_loader_names_the_file_and_why_it_cannot_use_it(tmp_path, load, error, max_bytes):
    # an offsets file over the bound whose first max_bytes are valid YAML: refused, not cut
    oversize = tmp_path / 'oversize.yaml'
    oversize.write_text('joints:\n  fr3_joint1: 0.1\n' + '#' * max_bytes + '\n')
    latin1 = tmp_path / 'latin1.yaml'
    latin1.write_bytes('joints:\n  fr3_joint1: 0.1  # réglé\n'.encode('latin-1'))
    fifo = tmp_path / 'fifo.yaml'
    os.mkfifo(fifo)  # opening it would wait for a writer
    cases = [
        (tmp_path / 'missing.yaml', 'cannot be read: No such file or directory'),
        (tmp_path, 'is not a regular file'),
        (fifo, 'is not a regular file'),
        ('/dev/zero', 'is not a regular file'),
        (oversize, f'is larger than {max_bytes} bytes'),
        (latin1, 'is not UTF-8 text'),
    ]
    for path, words in cases:
        with pytest.raises(error, match=words) as raised:
            load(str(path))
        assert str(path) in str(raised.value)


def test_a_file_of_exactly_the_bound_is_read(tmp_path):
    path = tmp_path / 'exact.yaml'
    path.write_bytes(b'a' * 64)
    assert read_small_text(str(path), 64, 'test file', ValueError) == 'a' * 64
    with pytest.raises(ValueError, match='test file .* is larger than 63 bytes'):
        read_small_text(str(path), 63, 'test file', ValueError)


def test_numbers_with_an_exponent_and_no_point_are_read_as_numbers():
    """YAML 1.1 (PyYAML) reads 1e-5 as text; these files read it as the number a user wrote,
    as ROS 2 parameter files do. Quoted, or not a number, it stays text."""
    document = load_yaml('a: 1e-5\nb: -2E3\nc: 1.5e2\nd: "1e-5"\ne: 1e\nf: 7\n')
    assert document == {'a': 1e-5, 'b': -2000.0, 'c': 150.0, 'd': '1e-5', 'e': '1e', 'f': 7}
    assert isinstance(document['f'], int)


def test_a_key_given_twice_is_refused_and_a_merge_may_be_overridden():
    twice = r"^found the key 'gripper' twice \(line 3, column 3\)$"
    with pytest.raises(yaml.YAMLError, match=twice):
        load_yaml('tools:\n  gripper: {mass: 1}\n  gripper: {mass: 2}\n')
    assert load_yaml('base: &b {mass: 1}\ntool: {<<: *b, mass: 2}\n')['tool'] == {'mass': 2}


@pytest.mark.parametrize(
    'text, words',
    [
        ('joints: [1, 2\n', "expected ',' or ']', but got '<stream end>' (line 2, column 1)"),
        ('a: b: c\n', 'mapping values are not allowed here (line 1, column 5)'),
        ('a: 1\x00\n', 'unacceptable character #x0000'),
        ('a: 1\n---\nb: 2\n', 'expected a single document in the stream, but found another'),
        ('a: !!float x\n', "could not convert string to float: 'x'"),
    ],
)
def test_text_that_is_not_yaml_is_refused_in_one_line_with_where(text, words):
    with pytest.raises(yaml.YAMLError) as refusal:
        load_yaml(text)
    assert isinstance(refusal.value, RobotDynamicsError)
    assert words in str(refusal.value) and '\n' not in str(refusal.value), str(refusal.value)


ODD_NAMES = ('on', '1.5', 'null', 'j#2', 'j #3', 'j: 5', "'quoted'", '[7]', 'yes', '', 'elbow')


def test_names_yaml_reads_as_something_else_are_quoted_and_read_back():
    for name in ODD_NAMES + ('a\nb', 'wrist/roll', 'été'):
        assert load_yaml(f'{yaml_scalar(name)}: 1') == {name: 1}, name
    assert yaml_scalar('fr3_joint1') == 'fr3_joint1'  # a plain name stays as it is


def test_offsets_of_joints_with_odd_names_are_read_back_by_the_node(tmp_path):
    path = tmp_path / 'offsets.yaml'
    offsets = np.linspace(-0.3, 0.3, len(ODD_NAMES))
    save_effort_offsets(str(path), ODD_NAMES, offsets)
    np.testing.assert_array_equal(load_effort_offsets(str(path), ODD_NAMES), offsets)


def test_offsets_replace_only_an_offsets_file(tmp_path):
    path = tmp_path / 'offsets.yaml'
    assert replacing_words(str(path)) == ''  # nothing there yet
    save_effort_offsets(str(path), JOINTS, np.array([0.1, -0.2]))
    assert replacing_words(str(path)) == ''
    for other in ('<robot name="arm"/>\n', 'joints:\n  fr3_joint1: {viscous: 0.3}\n'):
        path.write_text(other)  # a URDF, a friction file
        assert 'is not an effort offsets file' in replacing_words(str(path))


def test_a_write_that_fails_leaves_the_old_file_whole_and_names_the_file(tmp_path):
    """A file-size limit (as a full disk) stops the write: the old file is still there, whole,
    with no temporary file beside it, and the error names the file."""
    path = tmp_path / 'friction.yaml'
    path.write_text('joints: {}\n')
    os.chmod(path, 0o640)
    script = (
        'import resource, signal, sys\n'
        'from robot_dynamics.core.text_files import FileWriteError, write_text_atomic\n'
        'signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n'
        'resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))\n'
        'try:\n'
        '    write_text_atomic(sys.argv[1], "x" * 5000)\n'
        'except FileWriteError as error:\n'
        '    print(error)\n'
        'print(repr(open(sys.argv[1]).read()))\n'
        'write_text_atomic(sys.argv[1], "joints:\\n  j: 0.5\\n")\n'
    )
    done = subprocess.run(
        [sys.executable, '-c', script, str(path)], capture_output=True, text=True, timeout=60
    )
    assert f'{path} cannot be written: File too large' in done.stdout, done
    assert repr('joints: {}\n') in done.stdout  # the old file, whole, after the failed write
    assert path.read_text() == 'joints:\n  j: 0.5\n'  # the second write, whole
    assert os.stat(path).st_mode & 0o777 == 0o640  # the file's mode kept
    assert sorted(os.listdir(tmp_path)) == ['friction.yaml']
