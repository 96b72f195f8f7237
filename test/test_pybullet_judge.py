"""PyBullet (3.2.7) as a third judge: what the findings' PyBullet sentences say is what
``pybullet.loadURDF`` does. By default it keeps the URDF mass but computes the inertia from
the collision shapes; with URDF_USE_INERTIA_FROM_FILE it uses the principal moments and zeroes
an impossible tensor with a warning (not on the root of a fixed base); it refuses a file that
is not XML, has no link or no robot name, and loads broken mimics and absurd magnitudes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip(
    'pybullet',
    reason='pybullet is not installed: requirements-test.txt installs it below Python 3.12 only '
    '(no wheel for 3.12, the Jazzy run)',
)

from robot_dynamics.core.validation.checks import validate_file, validate_urdf_text  # noqa: E402
from robot_dynamics.instruments.pybullet_judge import judge_inertials  # noqa: E402

CORPUS = Path(__file__).resolve().parent / 'data' / 'broken_urdfs'
BOX = (0.2, 0.1, 0.05)


def _arm(
    inertia: str, mass: float = 2.0, joint_extra: str = '', root_inertial: str = '', name='r'
) -> str:
    size = ' '.join(str(side) for side in BOX)
    return f'''<robot name="{name}"><link name="base">{root_inertial}</link>
      <link name="arm"><inertial><mass value="{mass}"/><inertia {inertia}/></inertial>
        <collision><geometry><box size="{size}"/></geometry></collision></link>
      <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
        <limit effort="1" velocity="1" lower="-1" upper="1"/>{joint_extra}</joint></robot>'''


VALID = 'ixx="0.01" ixy="0.004" ixz="0" iyy="0.02" iyz="0" izz="0.025"'
TRIANGLE = 'ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.03"'


def test_by_default_the_inertia_comes_from_the_collision_box_not_from_the_file():
    verdict = judge_inertials(_arm(VALID), keep_geometry=True)
    x, y, z = BOX
    box = 2.0 / 12.0 * np.array([y * y + z * z, x * x + z * z, x * x + y * y])
    assert np.allclose(verdict.default_inertias['arm'], box, rtol=1e-6)
    finding = next(
        f for f in validate_urdf_text(_arm(TRIANGLE)).findings if f.check == 'triangle_inequality'
    )
    assert 'computes an inertia from the collision shapes' in finding.consumers['pybullet']


def test_with_inertia_from_file_it_uses_the_principal_moments():
    verdict = judge_inertials(_arm(VALID))
    tensor = np.array([[0.01, -0.004, 0.0], [-0.004, 0.02, 0.0], [0.0, 0.0, 0.025]])
    assert np.allclose(sorted(verdict.file_inertias['arm']), np.linalg.eigvalsh(tensor), rtol=1e-9)
    assert not verdict.zeroed


def test_an_impossible_tensor_is_zeroed_with_a_warning_except_on_a_fixed_root():
    verdict = judge_inertials(_arm(TRIANGLE))
    assert set(verdict.zeroed) == {'arm'} and 'setting inertia to zero' in verdict.zeroed['arm']
    assert verdict.file_inertias['arm'] == (0.0, 0.0, 0.0)
    root = f'<inertial><mass value="1"/><inertia {TRIANGLE}/></inertial>'
    assert judge_inertials(_arm(VALID, root_inertial=root)).zeroed == {}


@pytest.mark.parametrize(
    'text',
    [
        '<robot name="r"><link name="a"></robot>',
        '<robot name="r"></robot>',
        _arm(VALID).replace('<robot name="r">', '<robot>'),
    ],
    ids=['not XML', 'no link', 'no robot name'],
)
def test_it_refuses_a_file_without_xml_links_or_name(text):
    assert judge_inertials(text).refusal == 'Cannot load URDF file.'


@pytest.mark.parametrize(
    'text',
    [
        _arm(VALID, joint_extra='<mimic joint="nowhere"/>'),
        _arm('ixx="1e8" ixy="0" ixz="0" iyy="1e8" iyz="0" izz="1e8"', mass=1e9),
        _arm('ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"', mass=0.0),
    ],
    ids=['mimic', 'magnitude', 'massless'],
)
def test_it_loads_broken_mimics_absurd_magnitudes_and_massless_links_without_a_word(text):
    verdict = judge_inertials(text)
    assert verdict.refusal == '' and verdict.zeroed == {} and 'arm' in verdict.file_inertias


def test_a_massless_link_is_loaded_with_zero_inertia():
    verdict = judge_inertials(_arm('ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"', mass=0.0))
    assert verdict.file_inertias['arm'] == (0.0, 0.0, 0.0)


@pytest.mark.parametrize('path', sorted(CORPUS.glob('*.urdf')), ids=lambda path: path.stem)
def test_every_link_pybullet_zeroes_carries_an_error(path):
    zeroed = judge_inertials(path.read_text()).zeroed
    errors = {
        finding.link for finding in validate_file(path).findings if finding.severity == 'error'
    }
    assert set(zeroed) <= errors
    if path.stem in ('triangle_violation', 'negative_diagonal', 'row_major_slip', 'product_sign'):
        assert set(zeroed) == {'arm'}
