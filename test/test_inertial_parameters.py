"""InertialParameters from 10-parameter vectors: a vector without a positive finite mass has no
centre of mass and is refused with InertialParametersError, never turned into NaNs."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.model.inertia import (
    PINOCCHIO_TO_UPPER_TRIANGLE,
    InertialParameters,
    InertialParametersError,
)

UNIT_INERTIA = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0]  # Ixx, Ixy, Iyy, Ixz, Iyz, Izz (pinocchio order)


@pytest.mark.parametrize('mass', [0.0, -1.0, float('nan'), float('inf')])
@pytest.mark.parametrize('first_moment', [[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]])
def test_vector_without_a_positive_finite_mass_is_refused_in_both_orders(mass, first_moment):
    pinocchio_vector = np.array([mass, *first_moment, *UNIT_INERTIA])
    with pytest.raises(InertialParametersError, match='mass|finite'):
        InertialParameters.from_pinocchio_vector(pinocchio_vector)
    with pytest.raises(InertialParametersError, match='mass|finite'):
        InertialParameters.from_upper_triangle_vector(pinocchio_vector[PINOCCHIO_TO_UPPER_TRIANGLE])


def test_refusal_is_a_robot_dynamics_error_naming_the_mass():
    with pytest.raises(RobotDynamicsError, match='mass 0 kg is not positive'):
        InertialParameters.from_pinocchio_vector(np.array([0.0, 0.1, 0.0, 0.0, *UNIT_INERTIA]))


def test_wrong_length_and_overflowing_com_are_refused():
    with pytest.raises(InertialParametersError, match='10 entries'):
        InertialParameters.from_pinocchio_vector(np.ones(9))
    with pytest.raises(InertialParametersError, match='overflows'):
        InertialParameters.from_pinocchio_vector(np.array([1e-320, 1e10, 0.0, 0.0, *UNIT_INERTIA]))


def test_positive_mass_vector_round_trips_through_pinocchio():
    reference = pin.Inertia(
        2.0,
        np.array([0.05, -0.02, 0.08]),
        np.array([[0.012, 0.001, -0.0005], [0.001, 0.010, 0.0008], [-0.0005, 0.0008, 0.007]]),
    )
    vector = reference.toDynamicParameters()
    for parameters in (
        InertialParameters.from_pinocchio_vector(vector),
        InertialParameters.from_upper_triangle_vector(vector[PINOCCHIO_TO_UPPER_TRIANGLE]),
    ):
        assert parameters.mass == pytest.approx(2.0)
        assert parameters.com == pytest.approx(reference.lever)
        assert parameters.inertia_com == pytest.approx(reference.inertia)
