"""Drake (pydrake 1.51) as a second judge of the validator: on every defect case, Drake
refuses, warns about or silently accepts exactly the links the findings' Drake sentences say,
and the sentences' specific claims (an impossible tensor replaced by a sphere of water density,
1 kg for a massless link with inertia, the tolerance of CouldBePhysicallyValid, the mesh
formats it reads) are what Drake does."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip('pydrake')

from robot_dynamics.core.validation.checks import validate_file, validate_urdf_text  # noqa: E402
from robot_dynamics.core.validation.consumers import drake_verdict  # noqa: E402
from robot_dynamics.instruments import drake_judge  # noqa: E402

CORPUS = Path(__file__).resolve().parent / 'data' / 'broken_urdfs'


def _inertial(mass, moments=(0.01, 0.01, 0.01), com='0 0 0') -> str:
    ixx, iyy, izz = moments
    return (
        f'<inertial><origin xyz="{com}"/><mass value="{mass}"/>'
        f'<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>'
    )


def _joint(name, parent, child, joint_type='revolute', axis='0 0 1', extra='') -> str:
    return (
        f'<joint name="{name}" type="{joint_type}">\n<parent link="{parent}"/>\n<child '
        f'link="{child}"/>\n'
        f'<origin xyz="0 0 0.1"/>\n<axis xyz="{axis}"/>\n<limit effort="1" velocity="1" '
        f'lower="-1" upper="1"/>\n'
        f'{extra}</joint>'
    )


def _robot(*elements, name='r') -> str:
    """One element per group of lines, as in real files (Drake reports line numbers); no name
    attribute when ``name`` is empty."""
    start = f'<robot name="{name}">' if name else '<robot>'
    return f'{start}\n<link name="base"/>\n' + '\n'.join(elements) + '\n</robot>'


def _link(name, inertial='') -> str:
    return f'<link name="{name}">\n{inertial}\n</link>'


CASES = {
    # case: (URDF text, links Drake refuses, links Drake warns about)
    'massless chain': (
        _robot(_link('a'), _link('b'), _joint('ja', 'base', 'a'), _joint('jb', 'a', 'b')),
        {'a', 'b'},
        set(),
    ),
    'massless link above a mass': (
        _robot(
            _link('a'),
            _link('b', _inertial(1.0, com='0.1 0 0')),
            _joint('ja', 'base', 'a'),
            _joint('jb', 'a', 'b', axis='0 1 0'),
        ),
        set(),
        set(),
    ),
    'point mass on the joint axis': (
        _robot(_link('a', _inertial(1.0, (0, 0, 0))), _joint('ja', 'base', 'a')),
        {'a'},
        set(),
    ),
    'point mass off the joint axis': (
        _robot(_link('a', _inertial(1.0, (0, 0, 0), '0.1 0 0')), _joint('ja', 'base', 'a')),
        set(),
        set(),
    ),
    'massless link with inertia': (
        _robot(
            _link('a', _inertial(0.0)),
            _link('b', _inertial(1.0)),
            _joint('ja', 'base', 'a'),
            _joint('jb', 'a', 'b', 'fixed'),
        ),
        set(),
        {'a'},
    ),
    'triangle violated by 1e-15': (
        _robot(_link('a', _inertial(1.0, (1, 1, 2 * (1 + 1e-15)))), _joint('ja', 'base', 'a')),
        set(),
        set(),
    ),
    'triangle violated by 4e-15': (
        _robot(_link('a', _inertial(1.0, (1, 1, 2 * (1 + 4e-15)))), _joint('ja', 'base', 'a')),
        set(),
        {'a'},
    ),
    'zero principal moment': (
        _robot(
            _link('a', _inertial(1.0, (0.01, 0.01, 0))), _joint('ja', 'base', 'a', axis='1 0 0')
        ),
        set(),
        set(),
    ),
    'zero moment about the joint axis': (
        _robot(_link('a', _inertial(1.0, (0.01, 0.01, 0))), _joint('ja', 'base', 'a')),
        {'a'},
        set(),
    ),
    'negative principal moment': (
        _robot(
            _link('a', _inertial(1.0, (0.01, 0.01, -1e-9))), _joint('ja', 'base', 'a', axis='1 0 0')
        ),
        set(),
        {'a'},
    ),
    'negative moment about the joint axis': (
        _robot(_link('a', _inertial(1.0, (0.01, 0.01, -1e-9))), _joint('ja', 'base', 'a')),
        set(),
        {'a'},
    ),
    'mimic of an unknown joint': (
        _robot(
            _link('a', _inertial(1.0)),
            _link('b', _inertial(1.0)),
            _joint('ja', 'base', 'a'),
            _joint('jb', 'a', 'b', extra='<mimic joint="x"/>\n'),
        ),
        {'b'},
        set(),
    ),
    'mimic on a fixed joint': (
        _robot(
            _link('a', _inertial(1.0)),
            _link('b', _inertial(1.0)),
            _joint('ja', 'base', 'a'),
            _joint('jb', 'a', 'b', 'fixed', extra='<mimic joint="ja"/>\n'),
        ),
        {'b'},
        set(),
    ),
    'mimic of a fixed joint': (
        _robot(
            _link('a', _inertial(1.0)),
            _link('b', _inertial(1.0)),
            _joint('ja', 'base', 'a', 'fixed'),
            _joint('jb', 'a', 'b', extra='<mimic joint="ja"/>\n'),
        ),
        {'b'},
        set(),
    ),
    'chained mimics': (
        _robot(
            _link('a', _inertial(1.0)),
            _link('b', _inertial(1.0)),
            _link('c', _inertial(1.0)),
            _joint('ja', 'base', 'a'),
            _joint('jb', 'a', 'b', extra='<mimic joint="ja"/>\n'),
            _joint('jc', 'b', 'c', extra='<mimic joint="jb"/>\n'),
        ),
        set(),
        set(),
    ),
    'transmission of an unknown joint': (
        _robot(
            _link('a', _inertial(1.0)),
            _joint('ja', 'base', 'a'),
            '<transmission name="t">\n<joint name="nowhere"/>\n</transmission>',
        ),
        {''},
        set(),
    ),
    'joint range with lower above upper': (
        _robot(
            _link('a', _inertial(1.0)),
            _joint('ja', 'base', 'a').replace('lower="-1" upper="1"', 'lower="1" upper="-1"'),
        ),
        {''},
        set(),
    ),
    'robot without a name': (
        _robot(_link('a', _inertial(1.0)), _joint('ja', 'base', 'a'), name=''),
        {''},
        set(),
    ),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_drake_refuses_and_warns_about_exactly_the_links_the_findings_predict(case):
    text, refused, warned = CASES[case]
    verdict = drake_judge.judge_inertials(text)
    assert set(verdict.refused) == refused and set(verdict.warned) == warned, verdict
    report = validate_urdf_text(text)
    agreement = drake_judge.agreement(report, verdict)
    assert agreement.agrees, (agreement.text(), report.to_text())


@pytest.mark.parametrize('path', sorted(CORPUS.glob('*.urdf')), ids=lambda path: path.stem)
def test_drake_agrees_with_the_findings_on_every_defect_file(path):
    verdict = drake_judge.judge_inertials(path.read_text())
    agreement = drake_judge.agreement(validate_file(path), verdict)
    assert agreement.agrees, agreement.text()


def test_the_defect_files_cover_each_drake_verdict():
    """Drake refuses a massless moving link and an unparseable file, warns about impossible
    tensors and simulates a point mass and a massless link above a mass without a word."""
    verdicts = {
        path.stem: drake_judge.judge_inertials(path.read_text()) for path in CORPUS.glob('*.urdf')
    }
    assert set(verdicts['massless_moving'].refused) == {'arm'}
    assert set(verdicts['unparseable'].refused) == {''}
    for name in ('triangle_violation', 'negative_diagonal', 'row_major_slip', 'product_sign'):
        assert set(verdicts[name].warned) == {'arm'} and not verdicts[name].refused, name
    for name in ('mirror_zeroed', 'massless_intermediate', 'geometry_oversize', 'placeholder'):
        assert not verdicts[name].refused and not verdicts[name].warned, name


def test_every_drake_sentence_states_a_verdict_or_says_what_decides_it():
    for path in CORPUS.glob('*.urdf'):
        for finding in validate_file(path).findings:
            sentence = finding.consumers['drake']
            assert drake_verdict(sentence) or sentence.split(' ', 1)[0] in (
                'see',
                'depends',
                'reads',
            ), sentence


def _parsed_body(text: str, link: str) -> tuple:
    """(Drake's body for ``link`` after parsing ``text``, Drake's log records)."""
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    plant = MultibodyPlant(0.001)
    with drake_judge.captured_drake_log() as records:
        Parser(plant).AddModelsFromString(text, 'urdf')
    plant.Finalize()
    return plant.GetBodyByName(link), records


def _water_sphere_moment(mass: float) -> float:
    """Moment of inertia [kg·m²] of a solid sphere of ``mass`` [kg] and density 1000 kg/m³."""
    radius = (3.0 * mass / (4.0 * np.pi * 1000.0)) ** (1.0 / 3.0)
    return 0.4 * mass * radius**2


@pytest.mark.parametrize('mass', [0.5, 2.0, 7.0])
def test_drake_replaces_an_impossible_tensor_by_a_sphere_of_water_density(mass):
    """The consistency findings' Drake sentence: same mass and CoM, an isotropic inertia."""
    text = _robot(
        _link('a', _inertial(mass, (0.01, 0.01, 0.03), '0.1 0.02 0')), _joint('ja', 'base', 'a')
    )
    body, records = _parsed_body(text, 'a')
    assert any('CouldBePhysicallyValid' in message for _, message in records)
    assert body.default_mass() == pytest.approx(mass) and np.allclose(
        body.default_com(), [0.1, 0.02, 0.0]
    )
    about_com = (
        body.default_spatial_inertia()
        .Shift(body.default_com())
        .CalcRotationalInertia()
        .CopyToFullMatrix3()
    )
    assert np.allclose(about_com, _water_sphere_moment(mass) * np.eye(3), rtol=1e-9)
    finding = next(f for f in validate_urdf_text(text).findings if f.check == 'triangle_inequality')
    assert 'density of water' in finding.consumers['drake']


def test_drake_turns_a_massless_link_with_inertia_into_a_one_kilogram_sphere():
    """The massless_inertia sentence: Drake warns and simulates 1 kg where the file says 0."""
    text = CASES['massless link with inertia'][0]
    body, records = _parsed_body(text, 'a')
    assert any("'mass > 0'" in message for _, message in records)
    assert body.default_mass() == pytest.approx(1.0)
    assert body.default_rotational_inertia().CopyToFullMatrix3()[0, 0] == pytest.approx(
        _water_sphere_moment(1.0)
    )
    finding = next(f for f in validate_urdf_text(text).findings if f.check == 'massless_inertia')
    assert finding.severity == 'warning' and '1 kg solid sphere' in finding.consumers['drake']


def test_drake_logs_are_captured_not_printed(capfd, caplog):
    logger = logging.getLogger('drake')
    handlers = list(logger.handlers)
    with caplog.at_level(logging.WARNING):
        verdict = drake_judge.judge_inertials(CASES['negative principal moment'][0])
    assert 'CouldBePhysicallyValid' in verdict.warned['a'][0]
    assert 'CouldBePhysicallyValid' not in capfd.readouterr().err
    assert not caplog.records and logger.handlers == handlers


def test_drake_reads_only_obj_vtk_and_gltf_collision_meshes(tmp_path):
    """The mesh sentences: with a SceneGraph Drake refuses an .stl collision mesh and an
    unknown package, and loads the same box as .obj."""
    packages = {'broken_urdfs': str(CORPUS)}
    stl = drake_judge.geometry_refusal(CORPUS / 'mesh_box_clean.urdf', packages)
    assert (
        "MakeConvexHull only applies to .obj, .vtk, and .gltf meshes; unsupported extension '.stl'"
        in stl
    )
    obj = tmp_path / 'box_obj.urdf'
    obj.write_text((CORPUS / 'mesh_box_clean.urdf').read_text().replace('box.stl', 'box.obj'))
    assert drake_judge.geometry_refusal(obj, packages) == ''
    assert 'refers to unknown package' in drake_judge.geometry_refusal(
        CORPUS / 'mesh_box_clean.urdf', {}
    )


def test_a_point_mass_makes_drakes_mass_matrix_singular_without_a_warning():
    verdict = drake_judge.judge_inertials(CASES['point mass on the joint axis'][0])
    assert verdict.mass_matrix_singular and not verdict.warned
