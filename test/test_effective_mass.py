"""Effective mass m_u = 1/(uᵀ J M⁻¹ Jᵀ u) and collision energy
(robot_dynamics.core.dynamics.effective_mass,
`effective-mass` CLI) against closed forms (slider, rod, 2R arm) and MuJoCo's mass matrix."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import vertical_2r

from robot_dynamics.cli import main as cli_main
from robot_dynamics.core.dynamics import effective_mass as em
from robot_dynamics.core.dynamics.sampled_motion import SampledMotion
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF

FIXTURES = Path(__file__).resolve().parent / 'data' / 'fixtures'
SLIDER = """<robot name="slider"><link name="ground"/>
  <link name="carriage"><inertial><origin xyz="0.1 0.2 0"/><mass value="2.5"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial></link>
  <joint name="rail" type="prismatic"><parent link="ground"/><child link="carriage"/>
    <axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="100" velocity="1"/></joint>
</robot>"""


def _rod_with_tip() -> RobotModel:
    text = (
        (FIXTURES / 'standing_rod.urdf')
        .read_text()
        .replace(
            '</robot>',
            """
  <link name="tip"/>
  <joint name="tip_joint" type="fixed"><origin xyz="0.1 0 0"/><parent link="rod"/>
    <child link="tip"/></joint>
</robot>""",
        )
    )
    return RobotModel.from_urdf_string(text)


def _two_r_with_tip() -> RobotModel:
    text = vertical_2r.urdf().replace(
        '</robot>',
        f"""
  <link name="tip"/>
  <joint name="tip_joint" type="fixed"><origin xyz="{vertical_2r.L2} 0 0"/><parent link="link2"/>
    <child link="tip"/></joint>
</robot>""",
    )
    return RobotModel.from_urdf_string(text, gravity=(0.0, -vertical_2r.G, 0.0))


def test_slider_effective_mass_along_its_motion_is_its_mass():
    slider = RobotModel.from_urdf_string(SLIDER)
    q, v = slider.configuration([0.3]), slider.tangent([0.8])
    sample = em.effective_mass_at(slider, q, v, 'carriage')
    assert sample.mass == pytest.approx(2.5, rel=1e-12)
    np.testing.assert_allclose(sample.direction, [1.0, 0.0, 0.0], atol=1e-15)
    assert sample.energy == pytest.approx(0.5 * 2.5 * 0.8**2, rel=1e-12)
    # no joint moves it sideways: infinitely heavy that way
    assert math.isinf(em.effective_mass(slider, q, 'carriage', [0.0, 1.0, 0.0]))
    # at 60° off the rail: m / cos²(60°)
    assert em.effective_mass(slider, q, 'carriage', [0.5, math.sqrt(0.75), 0.0]) == pytest.approx(
        10.0, rel=1e-12
    )


def test_rod_tip_effective_mass_is_inertia_over_length_squared():
    """A rod of mass m, length L about its end, struck at the tip tangentially: I₀/L² = m/3."""
    rod = _rod_with_tip()
    for theta, rate in ((0.0, 2.0), (0.7, -1.3)):
        sample = em.effective_mass_at(rod, rod.configuration([theta]), rod.tangent([rate]), 'tip')
        assert sample.mass == pytest.approx(0.1 / 3.0, rel=1e-12)
        assert sample.speed == pytest.approx(abs(rate) * 0.1, rel=1e-12)
        assert sample.energy == pytest.approx(0.5 * (0.1 / 3.0) * (rate * 0.1) ** 2, rel=1e-12)


def test_two_r_inverse_operational_inertia_matches_closed_form():
    arm = _two_r_with_tip()
    l1, l2 = vertical_2r.L1, vertical_2r.L2
    rng = np.random.default_rng(5)
    for q1, q2 in rng.uniform(-2.5, 2.5, (6, 2)):
        s1, c1, s12, c12 = math.sin(q1), math.cos(q1), math.sin(q1 + q2), math.cos(q1 + q2)
        jacobian = np.array([[-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12]])
        zero = np.zeros(2)
        mass = np.column_stack(
            [
                vertical_2r.torques([q1, q2], zero, e) - vertical_2r.torques([q1, q2], zero, zero)
                for e in np.eye(2)
            ]
        )
        expected = jacobian @ np.linalg.solve(mass, jacobian.T)
        computed = em.inverse_operational_inertia(arm, arm.configuration([q1, q2]), 'tip')
        np.testing.assert_allclose(computed[:2, :2], expected, rtol=1e-10, atol=1e-12)
        assert np.all(computed[2] == 0.0) and np.all(
            computed[:, 2] == 0.0
        )  # planar: nothing along z
        direction = np.array([math.cos(q1 * 3), math.sin(q1 * 3)])
        assert em.effective_mass(
            arm, arm.configuration([q1, q2]), 'tip', [*direction, 0.0]
        ) == pytest.approx(1.0 / (direction @ expected @ direction), rel=1e-10)


def test_arm_effective_mass_matches_mujoco_mass_matrix_and_jacobian():
    mujoco = pytest.importorskip('mujoco')
    text = re.sub(r'<dynamics\b[^>]*/>', '', ARM_URDF.read_text())
    text = re.sub(
        r'(<robot\b[^>]*>)',
        r'\1<mujoco><compiler discardvisual="false" fusestatic="false" '
        r'balanceinertia="false"/></mujoco>',
        text,
        count=1,
    )
    model = mujoco.MjSpec.from_string(text).compile()
    data = mujoco.MjData(model)
    arm = RobotModel.from_urdf_file(ARM_URDF)
    body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, 'tool0')
    rng = np.random.default_rng(8)
    for _ in range(4):
        positions = rng.uniform(arm.limits.lower, arm.limits.upper)
        data.qpos[:] = positions
        mujoco.mj_forward(model, data)
        mass = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, mass)
        jacobian = np.zeros((3, model.nv))
        mujoco.mj_jacBody(model, data, jacobian, None, body)
        expected = jacobian @ np.linalg.solve(mass, jacobian.T)
        computed = em.inverse_operational_inertia(arm, arm.configuration(positions), 'tool0')
        np.testing.assert_allclose(computed, expected, rtol=1e-8, atol=1e-10)
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        assert em.effective_mass(
            arm, arm.configuration(positions), 'tool0', direction
        ) == pytest.approx(1.0 / (direction @ expected @ direction), rel=1e-8)


def test_frame_at_rest_has_no_direction_of_motion():
    rod = _rod_with_tip()
    with pytest.raises(em.EffectiveMassError, match='at rest'):
        em.effective_mass_at(rod, rod.configuration([0.3]), rod.tangent([0.0]), 'tip')
    motion = SampledMotion(
        np.array([0.0, 0.1]),
        np.array([[0.3], [0.3]]),
        np.array([[0.0], [1.0]]),
        np.zeros((2, 1)),
        'two samples',
    )
    samples = em.effective_mass_along(rod, motion, 'tip')
    assert samples[0] is None and samples[1].mass == pytest.approx(0.1 / 3.0)
    with pytest.raises(em.EffectiveMassError, match='direction'):
        em.effective_mass(rod, rod.configuration([0.3]), 'tip', [0.0, 0.0, 0.0])


def test_cli_prints_mass_and_energy_along_a_trajectory(tmp_path, capsys):
    times = np.linspace(0.0, 1.0, 11)
    path = tmp_path / 'slide.csv'
    np.savetxt(
        path,
        np.column_stack([times, 0.5 * times**2, times, np.ones_like(times)]),
        delimiter=',',
        comments='',
        header='time,rail/position,rail/velocity,rail/acceleration',
    )
    urdf = tmp_path / 'slider.urdf'
    urdf.write_text(SLIDER)
    code = cli_main(
        [
            'effective-mass',
            '--urdf',
            str(urdf),
            '--frame',
            'carriage',
            '--trajectory',
            str(path),
            '--format',
            'json',
        ]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result['undefined_at_rest'] == 1 and result['samples_detail'][0] is None
    assert result['min_mass'] == pytest.approx(2.5) and result['max_mass'] == pytest.approx(2.5)
    assert (
        result['max_energy'] == pytest.approx(0.5 * 2.5 * 1.0**2)
        and result['max_energy_time'] == 1.0
    )


def test_a_frame_fixed_to_the_world_is_refused_offline_and_reported_live():
    """No joint moves fr3_link0: its effective mass would be infinite in every direction. The
    core refuses it by name; the live reading reports it (WARN) instead of raising."""
    from robot_dynamics.core.live.effective_mass_reading import effective_mass_reading
    from robot_dynamics.core.live.status import WARN
    from robot_dynamics.core.streams.live_torques import TorqueSample

    arm = RobotModel.from_urdf_file(ARM_URDF)
    q, v = np.zeros(arm.num_joints), np.full(arm.num_joints, 0.3)
    with pytest.raises(em.EffectiveMassError, match='"fr3_link0" is fixed to the world'):
        em.effective_mass_at(arm, q, v, 'fr3_link0', [1.0, 0.0, 0.0])
    zeros = np.zeros(arm.num_joints)
    reading = effective_mass_reading(
        arm, TorqueSample(2.0, q, v, zeros, zeros, zeros, zeros), 'fr3_link0'
    )
    assert reading.value is None and reading.level == WARN
    assert 'effective_mass_frame "fr3_link0" is fixed to the world' in reading.problem


MIMIC_URDF = """<robot name="mimic"><link name="base"/>
<link name="l1"><inertial><mass value="1"/><origin xyz="0 0 0.1"/>
<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<link name="l2"><inertial><mass value="1"/><origin xyz="0 0 0.1"/>
<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 1 0"/>
<limit lower="-1" upper="1" effort="10" velocity="2"/></joint>
<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.3"/>
<axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="2"/>
<mimic joint="j1" multiplier="2" offset="0"/></joint></robot>"""


def test_a_mimic_follower_moves_with_its_leader_in_the_effective_mass():
    """l2 turns by 3 q1 (its joint follows j1 × 2); by hand, with one independent joint,
    M(q1) = 0.02 + 0.09 (2 + 2 cos 2q1) + 0.09 and the l2 origin's x velocity is 0.3 cos q1 · q̇1,
    so m_x = M / (0.3 cos q1)². The end of the chain is the follower's link, l2."""
    from robot_dynamics.core.identification.payload import default_payload_link

    robot = RobotModel.from_urdf_string(MIMIC_URDF)
    assert robot.joint_names == ('j1',) and default_payload_link(robot) == 'l2'
    q1, rate = 0.4, 0.7
    generalized = 0.02 + 0.09 * (2.0 + 2.0 * math.cos(2.0 * q1)) + 0.09
    expected = generalized / (0.3 * math.cos(q1)) ** 2
    sample = em.effective_mass_at(robot, robot.configuration([q1]), [rate], 'l2', [1, 0, 0])
    assert sample.mass == pytest.approx(expected, rel=1e-12)
    assert sample.velocity[0] == pytest.approx(0.3 * math.cos(q1) * rate, rel=1e-12)
    motion = SampledMotion(np.zeros(1), np.array([[q1]]), np.array([[rate]]), np.zeros((1, 1)), '')
    along = em.effective_mass_along(robot, motion, 'l2')[0]  # along the velocity: |u·J| = 0.3 m
    assert along.mass == pytest.approx(generalized / 0.3**2, rel=1e-12)


def test_cli_refuses_static_poses_without_a_direction(capsys):
    assert cli_main(['effective-mass', '--poses', '2']) == 2
    assert '--direction' in capsys.readouterr().err


def test_cli_names_an_unknown_frame_before_asking_for_a_direction(capsys):
    assert cli_main(['effective-mass', '--poses', '2', '--frame', 'nope']) == 2
    error = capsys.readouterr().err
    assert 'frame "nope" is not a frame of model "fr3_arm"' in error and 'tool0' in error
    assert '--direction' not in error
