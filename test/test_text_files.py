"""The configuration files the nodes load (friction, effort offsets, tools, contact profiles)
are refused with one error naming the file when they are missing, a directory, over the size
bound (never read further than it: a file cut short could still parse) or not UTF-8."""

from __future__ import annotations

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
from robot_dynamics.core.live.effort_offsets import (
    MAX_FILE_BYTES,
    EffortOffsetsError,
    load_effort_offsets,
)
from robot_dynamics.core.live.payload_in_use import (
    MAX_TOOLS_FILE_BYTES,
    ToolsFileError,
    load_tools,
)
from robot_dynamics.core.text_files import load_yaml, read_small_text

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
    cases = [
        (tmp_path / 'missing.yaml', 'cannot be read: No such file or directory'),
        (tmp_path, 'cannot be read: Is a directory'),
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
    with pytest.raises(yaml.YAMLError, match="found the key 'gripper' twice"):
        load_yaml('tools:\n  gripper: {mass: 1}\n  gripper: {mass: 2}\n')
    assert load_yaml('base: &b {mass: 1}\ntool: {<<: *b, mass: 2}\n')['tool'] == {'mass': 2}
