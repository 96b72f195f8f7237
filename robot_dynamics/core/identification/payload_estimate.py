"""The reported payload: mass, centre of mass and inertia about it, with 1σ, from the fit.

:func:`payload_estimate` turns fitted parameters and their covariance into the mass [kg], the
CoM [m] and (mode full) the inertia about the CoM [kg·m²], all in the payload link frame, with
standard deviations propagated by the delta method; it refuses a mass that cannot be told
apart from zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from robot_dynamics.core.errors import NoPayloadDetected
from robot_dynamics.core.identification import payload_words as words
from robot_dynamics.core.identification.payload_regressor import matrix_from_vector

INERTIA_KEYS = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')
"""The inertia entries of the report, tensor entries as in a URDF."""

DETECTION_SIGMAS = 3.0
"""A fitted mass below this many standard deviations cannot be told apart from no payload:
the identification is refused (there is no centre of mass to report)."""
LIGHTEST_PAYLOAD = 1e-3
"""[kg] A fitted mass below this is no payload, however small its σ: noise-free efforts (a
simulation, efforts computed from a model) give σ at rounding level, and a 0.2 mg "payload"
with a CoM metres away would pass the σ test."""

_KEY_INDEX = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


@dataclass(frozen=True)
class PayloadEstimate:
    """``mass`` [kg] and ``com`` [m] (payload link frame) with their 1σ ``mass_std`` and
    ``com_std``, and in mode full the ``inertia`` about the CoM in payload-link axes
    {:data:`INERTIA_KEYS`} [kg·m²] with ``inertia_std`` (both ``None`` in mode mass_com)."""

    mass: float
    mass_std: float
    com: tuple
    com_std: tuple
    inertia: Optional[dict] = None
    inertia_std: Optional[dict] = None


def payload_estimate(parameters: np.ndarray, covariance: np.ndarray, mode: str) -> PayloadEstimate:
    """The estimate of pinocchio-order ``parameters`` (about the payload link origin) and their
    10×10 ``covariance``; the inertia only in ``mode`` 'full'. Raises
    :class:`~robot_dynamics.core.errors.NoPayloadDetected` when the mass is within
    :data:`DETECTION_SIGMAS` σ of zero or below :data:`LIGHTEST_PAYLOAD`."""
    mass, first_moment = float(parameters[0]), parameters[1:4]
    mass_std = float(math.sqrt(covariance[0, 0]))
    if not mass > DETECTION_SIGMAS * mass_std:
        raise NoPayloadDetected(
            mass, mass_std, words.no_payload_detected(mass, mass_std, DETECTION_SIGMAS)
        )
    if mass < LIGHTEST_PAYLOAD:
        raise NoPayloadDetected(
            mass, mass_std, words.payload_too_light(mass, mass_std, LIGHTEST_PAYLOAD)
        )
    com = first_moment / mass
    jacobian = np.zeros((3, 4))
    jacobian[:, 0] = -com / mass
    jacobian[:, 1:] = np.eye(3) / mass
    com_std = np.sqrt(np.diag(jacobian @ covariance[:4, :4] @ jacobian.T))
    estimate = PayloadEstimate(mass, mass_std, tuple(com.tolist()), tuple(com_std.tolist()))
    if mode != 'full':
        return estimate
    inertia_com, inertia_jacobian = _inertia_about_com(parameters)
    inertia_std = np.sqrt(np.diag(inertia_jacobian @ covariance @ inertia_jacobian.T))
    return replace(
        estimate,
        inertia=dict(zip(INERTIA_KEYS, (float(v) for v in inertia_com))),
        inertia_std=dict(zip(INERTIA_KEYS, (float(v) for v in inertia_std))),
    )


def _inertia_about_com(parameters: np.ndarray) -> tuple:
    """I_C = Ī − (|h|²1 − h hᵀ)/m as the INERTIA_KEYS 6-vector, and its 6×10 Jacobian (delta
    method)."""
    mass, first_moment = parameters[0], parameters[1:4]

    def entries(matrix):
        return np.array([matrix[i, j] for i, j in _KEY_INDEX])

    shift = first_moment @ first_moment * np.eye(3) - np.outer(first_moment, first_moment)
    value = entries(matrix_from_vector(parameters[4:]) - shift / mass)
    jacobian = np.zeros((6, 10))
    jacobian[:, 0] = entries(shift / mass**2)
    for k in range(3):
        unit = np.eye(3)[k]
        derivative = (
            2 * first_moment[k] * np.eye(3)
            - np.outer(unit, first_moment)
            - np.outer(first_moment, unit)
        )
        jacobian[:, 1 + k] = -entries(derivative) / mass
    for k in range(6):
        unit = np.zeros(6)
        unit[k] = 1.0
        jacobian[:, 4 + k] = entries(matrix_from_vector(unit))
    return value, jacobian
