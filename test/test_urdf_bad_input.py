"""Bad robot descriptions: a DescriptionError naming the element, never a crash in pinocchio.

Every malformed description is fed both to the parser (``parse_urdf``) and to the model
builder (``RobotModel.from_urdf_string``, which must stop before pinocchio sees it).
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from robot_dynamics.core.dynamics.joint_space import gravity_torques, mass_matrix
from robot_dynamics.core.errors import DescriptionError, SettingError
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.model.urdf import MAX_DESCRIPTION_BYTES, parse_urdf, read_description_file

INERTIAL = (
    '<inertial><origin xyz="0.1 0 0"/><mass value="{mass}"/><inertia ixx="{ixx}" ixy="0" ixz="0" '
    'iyy="0.01" iyz="0" izz="0.01"/></inertial>'
)
LIMIT = '<limit lower="-1" upper="1" effort="5" velocity="1"/>'


def _link(name: str, mass: str = '1.0', ixx: str = '0.01') -> str:
    return f'<link name="{name}">{INERTIAL.format(mass=mass, ixx=ixx)}</link>'


def _joint(
    name: str, parent: str, child: str, joint_type: str = 'revolute', extra: str = ''
) -> str:
    return (
        f'<joint name="{name}" type="{joint_type}"><parent link="{parent}"/><child '
        f'link="{child}"/><axis xyz="0 1 0"/>{LIMIT}{extra}</joint>'
    )


def _robot(*elements: str) -> str:
    return '<?xml version="1.0"?>\n<robot name="bad">' + ''.join(elements) + '</robot>'


def _mimic_chain(mimic_attributes: str) -> str:
    """base → a (j1) → b (j2), j2 mimicking j1 with ``mimic_attributes`` (multiplier, offset)."""
    return _robot(
        _link('base'),
        _link('a'),
        _link('b'),
        _joint('j1', 'base', 'a'),
        _joint('j2', 'a', 'b', extra=f'<mimic joint="j1" {mimic_attributes}/>'),
    )


BILLION_LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY a "aaaaaaaaaa"><!ENTITY b '
    '"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><robot '
    'name="&c;"><link name="base"/></robot>'
)
EXTERNAL_ENTITY = (
    '<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY secret SYSTEM "file:///etc/passwd">]><robot '
    'name="&secret;"><link name="base"/></robot>'
)

BAD_DESCRIPTIONS = {
    'not_xml': ('<robot name="bad"><link name="base"></robot>', 'not valid XML'),
    'empty': ('   ', 'empty'),
    'wrong_root_element': ('<sdf><link name="base"/></sdf>', '<sdf>'),
    'unexpanded_xacro_macro': (
        '<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="base"/>'
        '<xacro:macro name="leg" params="n"><link name="l${n}"/></xacro:macro></robot>',
        "xacro, not URDF ('<xacro:macro>'): expand it first",
    ),
    'unexpanded_xacro_expression': (
        '<robot name="x"><link name="base"><visual><geometry><mesh filename="$(find arm)/a.stl"/>'
        '</geometry></visual></link></robot>',
        "xacro, not URDF ('$(find arm)/a.stl')",
    ),
    'no_links': ('<robot name="bad"/>', 'no <link>'),
    'cycle_through_root': (
        _robot(
            _link('a'),
            _link('b'),
            _link('c'),
            _joint('ab', 'a', 'b'),
            _joint('bc', 'b', 'c'),
            _joint('ca', 'c', 'a'),
        ),
        'cycle',
    ),
    'detached_cycle': (
        _robot(
            _link('base'),
            _link('a'),
            _link('b'),
            _link('c'),
            _joint('base_a', 'base', 'a'),
            _joint('bc', 'b', 'c'),
            _joint('cb', 'c', 'b'),
        ),
        'links b, c are not connected',
    ),
    'two_roots': (
        _robot(_link('base'), _link('a'), _link('island')),
        '3 root links (base, a, island)',
    ),
    'child_of_two_joints': (
        _robot(_link('base'), _link('a'), _joint('j1', 'base', 'a'), _joint('j2', 'base', 'a')),
        'link "a" is the child of two joints',
    ),
    'unknown_joint_type': (
        _robot(_link('base'), _link('a'), _joint('wrist', 'base', 'a', 'ball')),
        'joint "wrist": unknown joint type "ball"',
    ),
    'floating_joint_inside_tree': (
        _robot(_link('base'), _link('a'), _joint('drift', 'base', 'a', 'floating')),
        'joint "drift": joint type "floating" is not supported',
    ),
    'unknown_parent_link': (
        _robot(_link('base'), _link('a'), _joint('j1', 'ghost', 'a')),
        'joint "j1": parent link "ghost" is not defined',
    ),
    'nan_mass': (
        _robot(_link('base'), _link('forearm', mass='nan'), _joint('j1', 'base', 'forearm')),
        'link "forearm" <mass>: value is NaN',
    ),
    'negative_mass': (
        _robot(_link('base'), _link('forearm', mass='-2.5'), _joint('j1', 'base', 'forearm')),
        'link "forearm": mass -2.5 kg',
    ),
    'infinite_mass': (
        _robot(_link('base'), _link('forearm', mass='inf'), _joint('j1', 'base', 'forearm')),
        'link "forearm": mass inf kg',
    ),
    'nan_inertia': (
        _robot(_link('base'), _link('forearm', ixx='NaN'), _joint('j1', 'base', 'forearm')),
        'link "forearm" <inertia>: ixx is NaN',
    ),
    'text_as_mass': (
        _robot(_link('base'), _link('forearm', mass='heavy'), _joint('j1', 'base', 'forearm')),
        'link "forearm" <mass>: value="heavy" is not a number',
    ),
    'zero_axis': (
        _robot(
            _link('base'),
            _link('a'),
            '<joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 '
            f'0 0"/>{LIMIT}</joint>',
        ),
        'joint "j1": axis has zero length',
    ),
    'mimic_of_unknown_joint': (
        _robot(
            _link('base'), _link('a'), _joint('j1', 'base', 'a', extra='<mimic joint="ghost"/>')
        ),
        'joint "j1" mimics unknown joint "ghost"',
    ),
    'entity_expansion_bomb': (BILLION_LAUGHS, 'DOCTYPE or ENTITY'),
    'external_entity': (EXTERNAL_ENTITY, 'DOCTYPE or ENTITY'),
    'duplicate_link': (_robot(_link('base'), _link('base')), 'link "base" is defined twice'),
    'infinite_mimic_multiplier': (
        _mimic_chain('multiplier="inf"'),
        'joint "j2": <mimic> multiplier=inf',
    ),
    'absurd_mimic_multiplier': (
        _mimic_chain('multiplier="1e308"'),
        'joint "j2": <mimic> multiplier=1e+308 is beyond the plausible ±1000',
    ),
    'negative_absurd_mimic_multiplier': (
        _mimic_chain('multiplier="-2e3"'),
        'joint "j2": <mimic> multiplier=-2000 is beyond',
    ),
    'infinite_mimic_offset': (
        _mimic_chain('offset="-inf"'),
        'joint "j2": <mimic> multiplier=1.0 offset=-inf is not finite',
    ),
    'nan_mimic_multiplier': (
        _mimic_chain('multiplier="nan"'),
        'joint "j2" <mimic>: multiplier is NaN',
    ),
}


@pytest.mark.parametrize('case', sorted(BAD_DESCRIPTIONS))
def test_bad_description_raises_description_error_naming_the_element(case):
    text, words = BAD_DESCRIPTIONS[case]
    with pytest.raises(DescriptionError, match=re.escape(words)):
        parse_urdf(text)
    with pytest.raises(DescriptionError, match=re.escape(words)):
        RobotModel.from_urdf_string(text)


def test_oversize_description_is_refused_before_parsing():
    text = _robot(_link('base')) + '<!--' + 'x' * MAX_DESCRIPTION_BYTES + '-->'
    with pytest.raises(DescriptionError, match='over the'):
        RobotModel.from_urdf_string(text)


def test_oversize_file_is_refused_before_reading(tmp_path):
    path = tmp_path / 'big.urdf'
    path.write_text(_robot(_link('base')) + ' ' * 2000)
    with pytest.raises(DescriptionError, match='over the 1000-byte limit'):
        read_description_file(path, max_bytes=1000)
    with pytest.raises(DescriptionError, match='cannot read'):
        read_description_file(tmp_path / 'missing.urdf')


@pytest.mark.parametrize('multiplier', ['-0.5', '100', '-1000'])
def test_plausible_mimic_multiplier_is_accepted_and_couples_the_joints(multiplier):
    text = _mimic_chain(f'multiplier="{multiplier}" offset="0.1"')
    mimic = parse_urdf(text).joints['j2'].mimic
    assert (mimic.joint, mimic.multiplier, mimic.offset) == ('j1', float(multiplier), 0.1)
    RobotModel.from_urdf_string(text)


def test_unreadable_paths_are_description_errors_naming_path_and_reason(tmp_path):
    with pytest.raises(DescriptionError, match=f'{re.escape(str(tmp_path))}: Is a directory'):
        read_description_file(tmp_path)
    latin1 = tmp_path / 'latin1.urdf'
    latin1.write_bytes(
        _robot(_link('base')).replace('name="bad"', 'name="bras_\xe9"').encode('latin-1')
    )
    with pytest.raises(
        DescriptionError, match=re.escape(f'{latin1} is not UTF-8 text (byte 0xe9 at offset ')
    ):
        read_description_file(latin1)
    with pytest.raises(DescriptionError, match='not UTF-8'):
        RobotModel.from_urdf_file(latin1)
    with pytest.raises(DescriptionError, match='Not a directory'):
        read_description_file(latin1 / 'inside.urdf')


def test_utf8_file_with_non_ascii_names_and_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / 'bom.urdf'
    text = _robot(_link('base')).replace('name="bad"', 'name="bras_\xe9"')
    path.write_bytes(b'\xef\xbb\xbf' + text.encode('utf-8'))
    assert read_description_file(path) == text
    assert parse_urdf(read_description_file(path)).name == 'bras_\xe9'


@pytest.mark.skipif(os.geteuid() == 0, reason='root reads files whatever their permissions')
def test_file_without_read_permission_is_a_description_error(tmp_path):
    path = tmp_path / 'secret.urdf'
    path.write_text(_robot(_link('base')))
    path.chmod(0)
    with pytest.raises(DescriptionError, match=f'{re.escape(str(path))}: Permission denied'):
        read_description_file(path)


def test_too_many_links_is_refused():
    links = [_link('base')] + [_link(f'l{i}') for i in range(30)]
    joints = [_joint(f'j{i}', 'base', f'l{i}') for i in range(30)]
    with pytest.raises(DescriptionError, match='31 links, over the 20 limit'):
        parse_urdf(_robot(*links, *joints), max_links=20)


def test_bad_root_joint_and_gravity_are_refused():
    text = _robot(_link('base'), _link('a'), _joint('j1', 'base', 'a'))
    with pytest.raises(SettingError, match='root_joint'):
        RobotModel.from_urdf_string(text, root_joint='planar')
    with pytest.raises(SettingError, match='gravity'):
        RobotModel.from_urdf_string(text, gravity=(0.0, float('nan'), -9.81))


SENSOR_ON_JOINT = _robot(
    _link('base'),
    _link('arm'),
    '<link name="sensor"><collision><geometry><sphere '
    'radius="0.02"/></geometry></collision></link>',
    _joint('shoulder', 'base', 'arm'),
    _joint('sensor_pan', 'arm', 'sensor'),
)
BARE_SENSOR_ON_JOINT = _robot(
    _link('base'),
    _link('arm'),
    '<link name="sensor"/>',
    _joint('shoulder', 'base', 'arm'),
    _joint('sensor_pan', 'arm', 'sensor'),
)


def test_moving_link_without_inertial_is_massless_and_reported():
    robot = RobotModel.from_urdf_string(SENSOR_ON_JOINT)
    assert robot.joint_names == ('shoulder', 'sensor_pan')
    assert robot.link_inertial_parameters('sensor').mass == 0.0
    assert robot.total_mass() == pytest.approx(1.0)
    q = robot.configuration(np.array([0.3, 0.5]))
    np.testing.assert_allclose(mass_matrix(robot, q)[1], 0.0)  # the massless link adds no inertia
    assert gravity_torques(robot, q)[1] == 0.0
    assert any('sensor' in warning for warning in robot.warnings)


def test_bare_moving_link_without_inertial_is_reported():
    robot = RobotModel.from_urdf_string(BARE_SENSOR_ON_JOINT)
    assert any('sensor' in warning for warning in robot.warnings)


def test_massless_frames_on_fixed_joints_are_not_warned_about():
    """Tool and foot frames (fixed joints, no <inertial>, no geometry) are normal, not
    suspicious."""
    text = _robot(
        _link('base'),
        _link('arm'),
        '<link name="tool0"/>',
        _joint('shoulder', 'base', 'arm'),
        '<joint name="tool_mount" type="fixed"><parent link="arm"/><child link="tool0"/></joint>',
    )
    robot = RobotModel.from_urdf_string(text)
    assert robot.warnings == []
    assert robot.frame_id('tool0') > 0


@pytest.mark.parametrize(
    'limit',
    ['', '<limit lower="-1" upper="1" velocity="1"/>', '<limit lower="-1" upper="1" effort="3"/>'],
)
def test_revolute_joint_without_effort_or_velocity_limit_is_named(limit):
    text = _robot(
        _link('base'),
        _link('a'),
        '<joint name="free_spin" type="revolute"><parent link="base"/><child link="a"/><axis '
        f'xyz="0 0 1"/>{limit}</joint>',
    )
    with pytest.raises(DescriptionError) as error:
        RobotModel.from_urdf_string(text)
    assert 'free_spin' in str(error.value)
