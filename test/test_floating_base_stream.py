"""dynamics_node's per-message core on floating-base models (base at rest at the identity pose).

Independent reference: with the base neither moving nor accelerating, the joint torques of a
floating-base model are those of the same robot with its root link fixed to the world at the
identity pose (the base only transmits the reaction wrench). The general configuration mapping
of :mod:`robot_dynamics.core.dynamics.joint_space` is the second reference, to the last bit.
"""

import array
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics.core.contact.momentum_observer import MomentumObserver
from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.live_torques import LiveTorqueEstimator
from robot_dynamics.models import model_path

_ROBOTS = (
    Path(__import__('sysconfig').get_paths()['purelib'])
    / 'cmeel.prefix/share/example-robot-data/robots'
)
TALOS_URDF = _ROBOTS / 'talos_data/robots/talos_reduced.urdf'
MODELS = [
    pytest.param(model_path('quadruped.urdf'), id='quadruped'),
    pytest.param(
        TALOS_URDF,
        id='talos',
        marks=pytest.mark.skipif(
            not TALOS_URDF.is_file(), reason='example-robot-data not installed'
        ),
    ),
]


def _stream(robot: RobotModel, count: int, seed: int = 0) -> list:
    """(positions, velocities, efforts) as rclpy hands them over, inside the joint limits."""
    rng = np.random.default_rng(seed)
    lower, upper = np.maximum(robot.limits.lower, -1.0), np.minimum(robot.limits.upper, 1.0)
    return [
        (
            array.array('d', rng.uniform(lower, upper)),
            array.array('d', rng.uniform(-1.0, 1.0, robot.num_joints)),
            array.array('d', rng.uniform(-5.0, 5.0, robot.num_joints)),
        )
        for _ in range(count)
    ]


@pytest.mark.parametrize('urdf', MODELS)
def test_floating_base_torques_equal_the_fixed_base_ones_and_the_general_mapping(urdf):
    floating = RobotModel.from_urdf_file(urdf, root_joint='floating')
    fixed = RobotModel.from_urdf_file(urdf, root_joint='fixed')
    assert floating.joint_names == fixed.joint_names
    estimators = [LiveTorqueEstimator(robot) for robot in (floating, fixed)]
    names = list(floating.joint_names)
    for k, (positions, velocities, efforts) in enumerate(_stream(floating, 60)):
        on_floating, on_fixed = (
            e.update(names, positions, velocities, efforts, 1.0 + 1e-3 * k) for e in estimators
        )
        scale = 1.0 + np.abs(on_fixed.inverse_dynamics).max()
        np.testing.assert_allclose(on_floating.gravity, on_fixed.gravity, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(
            on_floating.inverse_dynamics, on_fixed.inverse_dynamics, rtol=0, atol=1e-9 * scale
        )
        np.testing.assert_allclose(
            on_floating.external,
            np.asarray(efforts) - on_fixed.inverse_dynamics,
            rtol=0,
            atol=1e-9 * scale,
        )
        q = floating.configuration(np.asarray(positions))
        assert np.array_equal(on_floating.gravity, dynamics.gravity_torques(floating, q)[6:])
        if (
            k == 0
        ):  # no acceleration estimate from one sample (zero): the general RNEA to the last bit
            v, a = floating.tangent(np.asarray(velocities)), np.zeros(floating.model.nv)
            assert np.array_equal(
                on_floating.inverse_dynamics, dynamics.inverse_dynamics(floating, q, v, a)[6:]
            )


@pytest.mark.parametrize('momentum, starting', [('positions', 2), ('velocities', 1)])
@pytest.mark.parametrize('urdf', MODELS)
def test_floating_base_observer_residual_equals_the_fixed_base_one(urdf, momentum, starting):
    floating = RobotModel.from_urdf_file(urdf, root_joint='floating')
    fixed = RobotModel.from_urdf_file(urdf, root_joint='fixed')
    observers = [MomentumObserver(robot, momentum=momentum) for robot in (floating, fixed)]
    answered = 0
    for k, sample in enumerate(_stream(floating, 60, seed=1)):
        residuals = [o.update(1.0 + 1e-3 * k, *(np.asarray(x) for x in sample)) for o in observers]
        if residuals[1] is None:
            assert residuals[0] is None
            continue
        answered += 1
        np.testing.assert_allclose(
            residuals[0], residuals[1], rtol=0, atol=1e-8 * (1.0 + np.abs(residuals[1]).max())
        )
    assert answered == 60 - starting
