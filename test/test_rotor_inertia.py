"""Reflected rotor inertia in M(q): against MuJoCo's joint armature (a second library), against
the 2R arm's closed form plus I_a q̈ through the live pipeline, and the friction file's
``rotor_inertia`` field with its bad input."""

from __future__ import annotations

import re

import numpy as np
import pytest
import vertical_2r

from robot_dynamics.core.dynamics.friction import FrictionFileError, load_friction_file
from robot_dynamics.core.dynamics.joint_space import inverse_dynamics, mass_matrix
from robot_dynamics.core.errors import SettingError
from robot_dynamics.core.live.live_dynamics import LiveDynamics
from robot_dynamics.core.live.settings import LiveSettings
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.joint_states import JointSample
from robot_dynamics.models import ARM_URDF

mujoco = pytest.importorskip('mujoco')

MUJOCO_COMPILER = (
    '<mujoco><compiler discardvisual="false" fusestatic="false" balanceinertia="false"/></mujoco>'
)
ROTOR_INERTIA_2R = np.array([0.12, 0.05])  # kg·m², a geared drive's order of magnitude


def _mujoco_arm(armature: dict):
    """The bundled arm in MuJoCo (URDF <dynamics> stripped, constraints off) with ``armature``
    [kg·m²] per joint name."""
    text = re.sub(r'<dynamics\b[^>]*/>', '', ARM_URDF.read_text())
    text = re.sub(r'(<robot\b[^>]*>)', r'\1' + MUJOCO_COMPILER, text, count=1)
    spec = mujoco.MjSpec.from_string(text)
    for joint in spec.joints:
        joint.armature = armature.get(joint.name, 0.0)
    model = spec.compile()
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    return model


def test_inverse_dynamics_and_mass_matrix_equal_mujoco_with_the_same_armature():
    robot = RobotModel.from_urdf_file(ARM_URDF)
    rng = np.random.default_rng(7)
    rotor_inertia = rng.uniform(0.05, 0.6, robot.num_joints)
    robot.set_rotor_inertia(rotor_inertia)
    model = _mujoco_arm(dict(zip(robot.joint_names, rotor_inertia)))
    data = mujoco.MjData(model)
    addresses = [model.joint(name).qposadr[0] for name in robot.joint_names]
    for _ in range(4):
        q = rng.uniform(np.maximum(robot.limits.lower, -2.5), np.minimum(robot.limits.upper, 2.5))
        qd, qdd = rng.uniform(-2, 2, robot.num_joints), rng.uniform(-5, 5, robot.num_joints)
        data.qpos[addresses], data.qvel[addresses], data.qacc[addresses] = q, qd, qdd
        mujoco.mj_inverse(model, data)
        full = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, full)
        np.testing.assert_allclose(
            inverse_dynamics(robot, q, qd, qdd), data.qfrc_inverse[addresses], rtol=0, atol=1e-9
        )
        np.testing.assert_allclose(
            mass_matrix(robot, q), full[np.ix_(addresses, addresses)], rtol=0, atol=1e-9
        )


def test_rotor_inertia_adds_exactly_its_diagonal_and_can_be_removed():
    robot = vertical_2r.model()
    q = np.array([0.4, -0.9])
    bare = mass_matrix(robot, q)
    robot.set_rotor_inertia(ROTOR_INERTIA_2R)
    np.testing.assert_allclose(mass_matrix(robot, q) - bare, np.diag(ROTOR_INERTIA_2R), atol=1e-14)
    np.testing.assert_array_equal(robot.rotor_inertia, ROTOR_INERTIA_2R)
    robot.set_rotor_inertia(np.zeros(2))
    np.testing.assert_allclose(mass_matrix(robot, q), bare, atol=1e-14)


@pytest.mark.parametrize(
    'values, named', [([0.1, -0.01], 'elbow'), ([float('nan'), 0.1], 'shoulder'), ([0.1], '2')]
)
def test_bad_rotor_inertia_is_refused_naming_the_joint_and_keeps_the_model(values, named):
    robot = vertical_2r.model()
    robot.set_rotor_inertia(ROTOR_INERTIA_2R)
    with pytest.raises(SettingError, match=named):
        robot.set_rotor_inertia(values)
    np.testing.assert_array_equal(robot.rotor_inertia, ROTOR_INERTIA_2R)


def _trajectory(count: int = 1500, step: float = 0.001):
    """A smooth motion of the 2R arm and the torques of the plant with rotor inertia: the closed
    form (Lynch & Park eq. 8.9) + I_a q̈."""
    t = np.arange(count) * step
    q = np.stack([0.5 + 0.6 * np.sin(2.1 * t), -0.8 + 0.5 * np.sin(3.3 * t + 0.4)], axis=1)
    qd = np.stack([0.6 * 2.1 * np.cos(2.1 * t), 0.5 * 3.3 * np.cos(3.3 * t + 0.4)], axis=1)
    qdd = np.stack([-0.6 * 2.1**2 * np.sin(2.1 * t), -0.5 * 3.3**2 * np.sin(3.3 * t + 0.4)], axis=1)
    efforts = np.array(
        [vertical_2r.torques(*state) + ROTOR_INERTIA_2R * state[2] for state in zip(q, qd, qdd)]
    )
    return t, q, qd, efforts


def _phantom_external_torque(settings: LiveSettings) -> float:
    """RMS of the external torques [N·m] the live pipeline reports for the contact-free motion,
    after the first 0.5 s."""
    live = LiveDynamics(vertical_2r.model(), settings)
    t, q, qd, efforts = _trajectory()
    names = ('shoulder', 'elbow')
    external = [
        live.update(JointSample(names, *state)).external_torques
        for state in zip(q, qd, efforts, 1.0 + t)
    ]
    settled = np.array([value for value in external[500:] if value is not None])
    return float(np.sqrt(np.mean(settled**2)))


@pytest.mark.parametrize('route', ['observer', 'inverse_dynamics'])
def test_live_external_torque_of_a_plant_with_rotor_inertia_vanishes_once_it_is_modelled(
    route, tmp_path
):
    friction_file = tmp_path / 'friction.yaml'
    friction_file.write_text(
        'joints:\n'
        + ''.join(
            f'  {name}: {{rotor_inertia: {value}}}\n'
            for name, value in zip(('shoulder', 'elbow'), ROTOR_INERTIA_2R)
        )
    )
    without = _phantom_external_torque(LiveSettings(external_torque_method=route))
    from_parameter = _phantom_external_torque(
        LiveSettings(external_torque_method=route, rotor_inertia=tuple(ROTOR_INERTIA_2R))
    )
    from_file = _phantom_external_torque(
        LiveSettings(external_torque_method=route, friction_file=str(friction_file))
    )
    assert without > 0.1
    assert from_parameter < without / 20
    assert from_file == pytest.approx(from_parameter, rel=1e-9, abs=1e-12)


def test_friction_file_rotor_inertia_is_read_and_bad_values_name_file_joint_and_field(tmp_path):
    names = ('shoulder', 'elbow')
    good = tmp_path / 'good.yaml'
    good.write_text('joints:\n  elbow: {viscous: 0.2, rotor_inertia: 0.05}\n')
    model = load_friction_file(str(good), names)
    np.testing.assert_array_equal(model.rotor_inertia, [0.0, 0.05])
    np.testing.assert_array_equal(model.viscous, [0.0, 0.2])
    for text in ('-0.01', '.nan'):
        bad = tmp_path / 'bad.yaml'
        bad.write_text(f'joints:\n  elbow: {{rotor_inertia: {text}}}\n')
        with pytest.raises(FrictionFileError) as raised:
            load_friction_file(str(bad), names)
        message = str(raised.value)
        assert str(bad) in message and 'elbow' in message and 'rotor_inertia' in message


def test_live_pipeline_reports_a_bad_rotor_inertia_and_runs_without_it():
    live = LiveDynamics(vertical_2r.model(), LiveSettings(rotor_inertia=(0.1, 0.2, 0.3)))
    assert any('rotor inertia not applied' in problem for problem in live.problems)
    np.testing.assert_array_equal(live.robot.rotor_inertia, [0.0, 0.0])
