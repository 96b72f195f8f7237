"""Per-joint friction identified from a recording, one joint at a time.

The residual of each joint, r_j = τ_measured − (M(q)q̈ + C(q,q̇)q̇ + g(q))_j with the model as
given (its rotor inertia included), is fitted by linear least squares to

    r_j ≈ viscous·q̇ + coulomb·sgn(q̇) + offset + (stribeck_static − coulomb)·exp(−(q̇/v_s)²)·sgn(q̇)

for each characteristic velocity v_s of a grid, keeping the v_s with the lowest RMS (the model of
:mod:`robot_dynamics.core.dynamics.friction`), on the measured samples away from velocity reversals
(only q̈ is low-passed; a filter on the velocities or efforts would mix the friction of different
speeds). Any recording works; constant-velocity sweeps, both directions and several speeds
(from 0.01 to 1 rad/s), separate the terms best. Friction levels that come out negative are set
to 0 and said; a v_s the recording hardly moves that slowly for is not tried (said when none is
left: no Stribeck term).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_dynamics.core.dynamics import joint_space
from robot_dynamics.core.dynamics.friction import FrictionModel, smooth_sign, stribeck_shape
from robot_dynamics.core.errors import IdentificationRefused
from robot_dynamics.core.identification.recording import Recording
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.text_files import yaml_scalar

STRIBECK_VELOCITIES = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2)
"""Grid of characteristic velocities [rad/s] the Stribeck fit chooses from."""
MIN_STRIBECK_SUPPORT = 0.05
"""A characteristic velocity v_s is tried only when the Stribeck column exp(−(q̇/v_s)²) has at
least this RMS over a joint's fitted samples (its peak is 1): with less, the recording hardly
moves that slowly, and the level is extrapolated from the column's tail (thousands of N·m)."""
MIN_SAMPLES = 200
"""Fewest samples a friction fit takes (the q̈ filter alone needs more than 15)."""
MIN_MOVING_FRACTION = 0.2
"""A joint needs |q̇| above its Stribeck range on this share of the samples, both directions."""


class FrictionFitRefused(IdentificationRefused):
    """The recording cannot identify a joint's friction (it hardly moves, or one way only)."""


@dataclass(frozen=True)
class FrictionFit:
    """The identified :class:`FrictionModel`, per joint the residual RMS before and after [N·m],
    and notes for the operator."""

    model: FrictionModel
    rms_before: np.ndarray
    rms_after: np.ndarray
    notes: tuple


def model_residuals(robot: RobotModel, recording: Recording, cutoff_hz: float) -> tuple:
    """(residuals, period, accelerations): τ_measured − inverse dynamics of ``robot`` per sample
    (N, n) [N·m], with q̈ (N, n) [rad/s²] from the zero-phase low-passed (``cutoff_hz``)
    velocities, and the median sample period [s]. Positions, velocities and efforts stay as
    measured: a filter would mix the friction of different speeds (stick-slip at low speed,
    Coulomb's step at a reversal)."""
    period = float(np.median(np.diff(recording.time)))
    accelerations = filtered_accelerations(recording, cutoff_hz)
    inverse = np.array(
        [
            robot.joint_part(
                joint_space.inverse_dynamics(
                    robot, robot.configuration(q), robot.tangent(v), robot.tangent(a)
                )
            )
            for q, v, a in zip(recording.positions, recording.velocities, accelerations)
        ]
    )
    return recording.efforts - inverse, period, accelerations


def filtered_accelerations(recording: Recording, cutoff_hz: float) -> np.ndarray:
    """q̈ (N, n) [rad/s²]: the derivative of the zero-phase low-passed (``cutoff_hz``)
    velocities of ``recording``."""
    return filtered_derivative(recording.velocities, recording.time, cutoff_hz)


def filtered_derivative(values: np.ndarray, time: np.ndarray, cutoff_hz: float) -> np.ndarray:
    """d/dt of ``values`` (N, n) sampled at ``time`` (N,) [s], zero-phase low-passed at
    ``cutoff_hz`` first (4th-order Butterworth, forwards and backwards)."""
    from scipy import signal  # ~1 s to import: not at the start of every node that imports this

    period = float(np.median(np.diff(time)))
    numerator, denominator = signal.butter(4, min(cutoff_hz * 2.0 * period, 0.99))
    smooth = signal.filtfilt(numerator, denominator, values, axis=0)
    return np.gradient(smooth, time, axis=0)


def fit_friction(
    robot: RobotModel,
    recording: Recording,
    stribeck: bool = True,
    stribeck_velocities=STRIBECK_VELOCITIES,
    cutoff_hz: float = 10.0,
) -> FrictionFit:
    """Identify every joint's friction from ``recording`` (module docstring; joints in
    ``robot.joint_names`` order); raises :class:`FrictionFitRefused` naming a joint the
    recording does not move both ways, or that has fewer than :data:`MIN_SAMPLES` samples."""
    if len(recording.time) < MIN_SAMPLES:
        raise FrictionFitRefused(
            f'{len(recording.time)} samples: a friction fit needs at least {MIN_SAMPLES}'
        )
    residuals, period, _ = model_residuals(robot, recording, cutoff_hz)
    window = max(1, int(round(1.0 / (cutoff_hz * period))))
    n = robot.num_joints
    values = {key: np.zeros(n) for key in ('viscous', 'coulomb', 'offset', 'static', 'velocity')}
    before, after, notes = np.zeros(n), np.zeros(n), []
    grid = tuple(stribeck_velocities) if stribeck else (None,)
    for j, name in enumerate(robot.joint_names):
        steady = _steady(recording.velocities[:, j], window)
        velocity, residual = recording.velocities[steady, j], residuals[steady, j]
        _check_motion(name, velocity)
        candidates = _supported(grid, velocity)
        if candidates == (None,) and grid != (None,):
            notes.append(
                f'{name}: too few samples near or below {max(grid):g} rad/s to fit a Stribeck '
                'term: none fitted; sweep the joint at 0.01-0.05 rad/s as well'
            )
        best = min(
            (_joint_fit(velocity, residual, speed) for speed in candidates), key=lambda f: f[0]
        )
        rms, coefficients, speed = best
        viscous, coulomb, offset = coefficients[:3]
        static = coulomb + (coefficients[3] if speed is not None else 0.0)
        if min(viscous, coulomb, static) < 0.0:
            notes.append(
                f'{name}: a negative friction level came out (viscous {viscous:.3g} N·m·s/rad, '
                f'Coulomb {coulomb:.3g}, static {static:.3g} N·m): set to 0'
            )
            viscous, coulomb, static = max(viscous, 0.0), max(coulomb, 0.0), max(static, 0.0)
        for key, value in zip(values, (viscous, coulomb, offset, static, speed or 0.05)):
            values[key][j] = value
        before[j] = float(np.sqrt(np.mean(residual**2)))
        after[j] = rms
    model = FrictionModel(
        robot.joint_names,
        values['viscous'],
        values['coulomb'],
        values['offset'],
        rotor_inertia=robot.rotor_inertia,
        stribeck_static=values['static'],
        stribeck_velocity=values['velocity'],
    )
    return FrictionFit(model, before, after, tuple(notes))


def _supported(grid: tuple, velocity: np.ndarray) -> tuple:
    """The characteristic velocities of ``grid`` (None: no Stribeck term) whose Stribeck column
    over ``velocity`` [rad/s] has an RMS of at least :data:`MIN_STRIBECK_SUPPORT`; (None,) when
    none has."""
    if grid == (None,):
        return grid
    kept = tuple(
        v_s
        for v_s in grid
        if np.sqrt(np.mean(np.exp(-2.0 * (velocity / v_s) ** 2))) >= MIN_STRIBECK_SUPPORT
    )
    return kept or (None,)


def _steady(velocity: np.ndarray, window: int) -> np.ndarray:
    """Samples whose velocity keeps its sign (and exceeds 0.005 rad/s) for ``window`` samples
    either side: q̈ is smoothed over about that span, so the samples around a reversal are left
    out."""
    moving = np.where(np.abs(velocity) > 0.005, np.sign(velocity), 0.0)
    kernel = np.ones(2 * window + 1)
    agreement = np.convolve(moving, kernel, mode='same')
    return np.abs(agreement) == len(kernel)


def _joint_fit(velocity: np.ndarray, residual: np.ndarray, stribeck_velocity) -> tuple:
    columns = [velocity, smooth_sign(velocity, 0.0), np.ones_like(velocity)]
    if stribeck_velocity is not None:
        columns.append(stribeck_shape(velocity, stribeck_velocity, 0.0))
    matrix = np.column_stack(columns)
    coefficients = np.linalg.lstsq(matrix, residual, rcond=None)[0]
    rms = float(np.sqrt(np.mean((residual - matrix @ coefficients) ** 2)))
    return rms, coefficients, stribeck_velocity


def _check_motion(name: str, velocity: np.ndarray) -> None:
    threshold = 0.02
    if velocity.size == 0:  # it never moves steadily (np.mean would give NaN and pass)
        raise FrictionFitRefused(
            f'joint {name} never moves steadily faster than 0.005 rad/s: friction needs it '
            'moving both ways; sweep it at a few constant speeds'
        )
    forward = np.mean(velocity > threshold)
    backward = np.mean(velocity < -threshold)
    if forward < MIN_MOVING_FRACTION / 2 or backward < MIN_MOVING_FRACTION / 2:
        raise FrictionFitRefused(
            f'joint {name} moves faster than {threshold} rad/s forward on {forward:.0%} and '
            f'backward on {backward:.0%} of the samples: friction needs it moving both ways '
            f'(at least {MIN_MOVING_FRACTION / 2:.0%} each); sweep it at a few constant speeds'
        )


def friction_file_text(robot: RobotModel, fit: FrictionFit) -> str:
    """The friction YAML of ``fit`` (the format :func:`load_friction_file` reads)."""
    model = fit.model
    lines = [
        '# Friction identified by robot_dynamics identify-friction; model in',
        '# robot_dynamics/core/dynamics/friction.py. Units: N m, N m s/rad, rad/s, kg m^2.',
        f'model: {yaml_scalar(robot.name)}',
        'joints:',
    ]
    for j, name in enumerate(robot.joint_names):
        lines += [
            f'  {yaml_scalar(name)}:',
            f'    viscous: {float(model.viscous[j])!r}',
            f'    coulomb: {float(model.coulomb[j])!r}',
            f'    offset: {float(model.offset[j])!r}',
            f'    stribeck_static: {float(model.stribeck_static[j])!r}',
            f'    stribeck_velocity: {float(model.stribeck_velocity[j])!r}',
            f'    rotor_inertia: {float(model.rotor_inertia[j])!r}',
        ]
    return '\n'.join(lines) + '\n'
