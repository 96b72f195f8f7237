"""What a joint state says about the set-up, in words for the torque-margin and contact
statuses: positions or velocities beyond the URDF limits (degrees sent for radians), velocities
that are not the rate of the positions (a sign, a unit, zeros), and efforts one factor from the
model's gravity torques at rest (a sign or a unit)."""

from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np

from robot_dynamics.core.model.model import RobotModel, listed_names
from robot_dynamics.core.streams.live_torques import TorqueSample

REST_SPEED_FOR_SCALE = 0.02
"""[rad/s, m/s] Fastest joint of a robot at rest, for the efforts' scale check."""

MIN_LOADED_TORQUE = 1.0
"""[N·m, N] Gravity torque below which a joint is not loaded enough for the scale check."""

RATE_TOLERANCE = 0.25
"""Velocities more than this (relative) from the positions' rate are said."""

SIGN_CAUSE = (
    'the opposite sign: the driver reports the torque on the motor, not on the link '
    '(effort_model_file: sign: -1 for those joints)'
)
"""Why efforts come out as −1 × the gravity torques at rest, and the setting that fixes it."""


def beyond_limits_words(
    robot: RobotModel, kind: str, values: np.ndarray, joints: list, beyond: Callable
) -> str:
    """The ``joints`` (indices) whose ``kind`` ('positions' or 'velocities') ``values`` are
    beyond their URDF limits (``beyond``: the model's test), in words, with the likely cause:
    degrees when some are far beyond (more than a turn; ten times the velocity limit) and in
    radians they would all be within."""
    limits = robot.limits
    if kind == 'positions':
        shown = [
            f'{values[i]:.3f} (limits {limits.lower[i]:.3f} to {limits.upper[i]:.3f})'
            for i in joints
        ]
        far = np.full(len(values), 2 * np.pi)  # [rad] more than a turn
    else:
        shown = [f'{values[i]:.3f} (limit {limits.velocity[i]:.3f})' for i in joints]
        far = 10 * limits.velocity  # far beyond what a drive overshoots
    listed = listed_names(
        [f'{robot.joint_names[i]} {text}' for i, text in zip(joints, shown)], shown=3
    )
    far_beyond = bool(np.any(np.abs(values[joints]) > far[joints]))
    if far_beyond and not beyond(np.radians(values)):
        cause = 'the driver sends degrees (in radians they are all within)'
    else:
        cause = (
            "a zero or calibration offset, a driver's other convention or units, or another "
            "robot's description"
        )
    return f'{kind} beyond their URDF limits: {listed}: {cause}'


def velocity_rate_words(robot: RobotModel, factors: np.ndarray, unreported) -> str:
    """The joints whose reported velocities are ``factors`` × the rate of their positions
    (:class:`~robot_dynamics.core.streams.velocity_rate.VelocityRate`; NaN: not judged) further
    than :data:`RATE_TOLERANCE` from 1, with the likely causes; ``unreported``: indices of
    joints that send no velocity (given 0 by the merger), left out. '' when none."""
    judged = np.isfinite(factors)
    judged[list(unreported)] = False
    joints = np.flatnonzero(judged & (np.abs(factors - 1.0) > RATE_TOLERANCE))
    if not joints.size:
        return ''
    listed = listed_names([f'{robot.joint_names[i]} {factors[i]:.3g} ×' for i in joints], shown=3)
    causes = '; '.join(dict.fromkeys(_rate_cause(float(factors[i])) for i in joints))
    return f"velocities are not the rate of the positions: {listed}: {causes}"


def _rate_cause(factor: float) -> str:
    if factor == 0.0:
        return 'zeros the driver sends without measuring (mock hardware)'
    if abs(factor + 1.0) <= 0.1:
        return "the opposite sign (the driver's velocities and positions follow two conventions)"
    if abs(factor / math.degrees(1.0) - 1.0) <= 0.1:
        return 'degrees per second beside positions in radians'
    return 'another unit, or the motor side of the gearbox (the gear ratio times the joint\'s)'


def effort_scale_words(robot: RobotModel, torques: Optional[TorqueSample]) -> str:
    """When ``torques`` is a sample at rest whose efforts are one same factor, far from 1,
    times the model's gravity torques on every loaded joint (a sign or a unit, not a model
    error, which differs joint by joint), or −1 times them on some loaded joints and 1 times
    them on the others (those joints' signs): that, in words; else ''."""
    if torques is None or torques.efforts is None or torques.velocities is None:
        return ''
    if np.max(np.abs(torques.velocities), initial=0.0) > REST_SPEED_FOR_SCALE:
        return ''
    gravity = torques.gravity
    loaded = np.abs(gravity) > max(MIN_LOADED_TORQUE, 0.2 * np.max(np.abs(gravity), initial=0.0))
    if not loaded.any():
        return ''
    ratios = torques.efforts[loaded] / gravity[loaded]
    loaded_names = [name for name, on in zip(robot.joint_names, loaded) if on]
    reversed_joints = np.abs(ratios + 1.0) <= 0.1
    as_modelled = np.abs(ratios - 1.0) <= 0.1
    if reversed_joints.any() and as_modelled.any() and np.all(reversed_joints | as_modelled):
        joints = listed_names([n for n, r in zip(loaded_names, reversed_joints) if r], shown=4)
        return (
            f"at rest the efforts of {joints} are -1 × the model's gravity torques and the "
            f"other loaded joints' 1 ×: {SIGN_CAUSE}"
        )
    factor = float(np.median(ratios))
    if abs(factor - 1.0) <= 0.5 or np.any(np.abs(ratios - factor) > 0.1 * abs(factor)):
        return ''
    if abs(factor + 1.0) < 0.25:
        cause = SIGN_CAUSE
    else:
        cause = (
            'another unit: motor currents [A] or motor-side torques (effort_model_file converts '
            'them), or a model far from this robot'
        )
    joints = listed_names(loaded_names, shown=4)
    return (
        f"at rest the efforts are {factor:.3g} × the model's gravity torques on every loaded "
        f'joint ({joints}): {cause}'
    )
