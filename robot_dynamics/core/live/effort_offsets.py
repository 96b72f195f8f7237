"""Joint-torque sensor offsets: measured at rest, told apart from a payload or gravity error,
persisted, and taken off every measured effort.

At rest the measured torque is τ_m = g(q) + Y(q) δ + o: the model's gravity (payload in use
included), a payload error δ at the payload link (mass and first moment, 4 numbers, Y its gravity
regressor) and the sensors' constant offsets o [N·m per joint]. One rest pose gives n equations
for n + 4 unknowns, so its mean residual r = τ_m − g(q) is taken as the offsets (δ = 0 assumed,
and said). Several rest poses stack to [1 Y(q_p)] [o; δ] = r_p; when that stack is well
conditioned, its least-squares solution separates o from δ, else the answer says the poses are too
few or too alike (:func:`estimate_offsets`).

A legged robot standing on its feet cannot be zeroed that way: the ground pushes on every leg
in contact. At rest its joint rows read o − Σ_c J_{c,j}ᵀ f_c = τ_m − g(q) and its base rows
Σ_c J_{c,b}ᵀ f_c = w(q) (the wrench the base needs to stand still), with one unknown force f_c
per foot in contact and pose. Each pose adds six equations beyond its own forces, and a lifted
foot's leg gives its offsets directly: stacked over rest poses that load the feet differently
(each foot lifted in turn), least squares gives the offsets (:func:`estimate_offsets_on_feet`).

File (``effort_offsets_file``)::

    joints:
      fr3_joint1: 0.12   # N·m, subtracted from the measured effort
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import yaml

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.floating_base.foot_forces import FootForceEstimator
from robot_dynamics.core.identification.payload_regressor import payload_regressor
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.text_files import (
    file_in_the_way,
    load_yaml,
    read_small_text,
    write_text_atomic,
    yaml_scalar,
)

REST_SPEED = 0.01
"""Largest |q̇| [rad/s, m/s] of any joint for a sample to count as at rest
(:class:`ResidualLevels`)."""
ZEROING_SPEED = 0.02
"""Largest |q̇| [rad/s, m/s] of any joint, averaged over the window, for zeroing at a rest pose; the
positions must also stay within ZEROING_SPEED × the window's length (a lifted leg held by a
compliant controller creeps at about 0.01 rad/s)."""
REST_ACCELERATION = 0.05
"""Largest estimated |q̈| [rad/s²] of a sample counted at rest by :class:`ResidualLevels`."""
SAMPLE_PERIOD = 0.004
"""Least time [s] between two samples kept by :class:`RestWindow` and :class:`ResidualLevels`
(250 Hz: enough for half-second means, a quarter of the work at 1 kHz)."""
REST_WINDOW = 0.5
"""Seconds of rest averaged for one pose."""
MAX_CONDITION = 1e3
"""Largest condition number of the stacked rest poses (columns normalised) that separates
offsets from a payload error."""
MAX_CONDITION_ON_FEET = 50.0
"""Largest condition number of the stacked rest poses on the feet (columns normalised) that gives
offsets. On the proving ground's quadruped and solo12, standing and each of the four feet lifted in
turn gave 14–24; one lifted foot fewer 19–161; standing with one foot lifted 600–840 (offsets off by
up to 10 N·m)."""
MAX_FILE_BYTES = 1_000_000


class EffortOffsetsError(RobotDynamicsError):
    """An offsets file cannot be read or written, or names other joints (file, joint, field)."""


class OffsetsRefused(RobotDynamicsError):
    """The offsets cannot be measured now (the robot moves, too few samples); says why."""


@dataclass(frozen=True)
class RestPose:
    """One rest window: mean joint positions [rad, m] and mean residual τ_m − model [N·m]."""

    positions: np.ndarray
    residual: np.ndarray
    samples: int


@dataclass(frozen=True)
class OffsetEstimate:
    """Offsets [N·m, model order], the payload error δ (mass [kg], first moment [kg·m]; None when
    not separable), the RMS residual left [N·m], and the words for the operator."""

    offsets: np.ndarray
    payload_error: Optional[np.ndarray]
    residual_rms: float
    poses: int
    message: str


class RestWindow:
    """The last samples' (stamp, q, q̇, τ_m − model) for zeroing; one stream appends,
    a service thread reads a copy (:meth:`rest_pose`)."""

    def __init__(self, num_joints: int, capacity: int = 2000):
        self._stamps = np.full(capacity, -np.inf)
        self._positions = np.zeros((capacity, num_joints))
        self._velocities = np.zeros((capacity, num_joints))
        self._residuals = np.zeros((capacity, num_joints))
        self._next = 0

    def append(self, stamp, positions, velocities, residual) -> None:
        index = self._next % len(self._stamps)
        self._positions[index], self._residuals[index] = positions, residual
        self._velocities[index] = 0.0 if velocities is None else velocities
        self._stamps[index] = stamp  # last: a reader never takes a half-written row as new
        self._next += 1

    def rest_pose(
        self, duration: float = REST_WINDOW, rest_speed: float = ZEROING_SPEED
    ) -> RestPose:
        """The mean of the last ``duration`` seconds; raises :class:`OffsetsRefused` while the
        robot moves or with fewer than 10 samples."""
        stamps = self._stamps.copy()
        newest = float(np.max(stamps))
        recent = stamps >= newest - duration
        if not math.isfinite(newest) or np.count_nonzero(recent) < 10:
            raise OffsetsRefused(
                'too few joint states with efforts: stream the robot at rest for '
                f'{duration:g} s, then call again'
            )
        # the mean over the window: a controller's jitter and sensor noise average out
        speed = float(np.abs(np.mean(self._velocities[recent], axis=0)).max())
        spread = float(np.max(np.ptp(self._positions[recent], axis=0)))
        if speed > rest_speed or spread > rest_speed * duration:
            raise OffsetsRefused(
                f'the robot moves (mean |q̇| up to {speed:.3g}, positions spread {spread:.3g} over '
                f'the last {duration:g} s; at rest means |q̇| ≤ {rest_speed:g}): stop it, then '
                'call again'
            )
        return RestPose(
            self._positions[recent].mean(axis=0),
            self._residuals[recent].mean(axis=0),
            int(np.count_nonzero(recent)),
        )


class ResidualLevels:
    """RMS per joint [N·m] of the inverse-dynamics residual (τ_measured − model, offsets taken
    off) at rest (every |q̇| ≤ :data:`REST_SPEED` and every estimated |q̈| ≤
    :data:`REST_ACCELERATION`: not a start from rest) and in motion, each a moving average over its
    last ``samples`` samples: what the model leaves unexplained, for diagnostics. A residual
    whose square is not finite (offsets or friction of 1e300 N·m) is left out: it would hold
    the averages at inf or NaN for good. One stream."""

    def __init__(self, num_joints: int, samples: int = 1000):
        self._samples = samples
        self._squares = {'rest': np.zeros(num_joints), 'moving': np.zeros(num_joints)}
        self._counts = {'rest': 0, 'moving': 0}

    def add(
        self,
        velocities: Optional[np.ndarray],
        accelerations: Optional[np.ndarray],
        residual: np.ndarray,
    ) -> bool:
        """Add one sample; returns whether it was at rest (False without velocities)."""
        if velocities is None or not len(velocities):
            return False
        still = -REST_SPEED <= velocities.min() and velocities.max() <= REST_SPEED
        if still and accelerations is not None:
            still = (
                -REST_ACCELERATION
                <= accelerations.min()
                <= accelerations.max()
                <= (REST_ACCELERATION)
            )
        with np.errstate(over='ignore', invalid='ignore'):
            squared = residual * residual
        if not np.all(np.isfinite(squared)):
            return still
        kind = 'rest' if still else 'moving'
        count = self._counts[kind] = self._counts[kind] + 1
        squares = self._squares[kind]
        squares += (squared - squares) / min(count, self._samples)
        return still

    def rms(self, kind: str) -> Optional[np.ndarray]:
        """The RMS per joint of ``kind`` ('rest' or 'moving'), None before its first sample."""
        return np.sqrt(self._squares[kind]) if self._counts[kind] else None


def estimate_offsets(
    robot: RobotModel, payload_link: str, poses: Sequence[RestPose]
) -> OffsetEstimate:
    """Offsets from ``poses`` (module docstring): separated from a payload error at
    ``payload_link`` when the stacked poses are well conditioned."""
    n = robot.num_joints
    residuals = np.concatenate([pose.residual for pose in poses])
    if len(poses) > 1:
        rows = np.vstack([_pose_rows(robot, payload_link, pose.positions) for pose in poses])
        condition = _condition(rows)
        if condition <= MAX_CONDITION:
            solution = np.linalg.lstsq(rows, residuals, rcond=None)[0]
            left = residuals - rows @ solution
            offsets, error = solution[:n], solution[n:]
            return OffsetEstimate(
                offsets,
                error,
                _rms(left),
                len(poses),
                f'offsets from {len(poses)} rest poses, separated from a payload error of '
                f'{error[0]:+.3f} kg at {payload_link} (residual left {_rms(left):.3g} N·m RMS)',
            )
        reason = f'the {len(poses)} poses are too alike (condition {condition:.3g})'
    else:
        reason = 'one pose cannot tell offsets from a payload or gravity error'
    offsets = np.mean([pose.residual for pose in poses], axis=0)
    left = residuals - np.tile(offsets, len(poses))
    return OffsetEstimate(
        offsets,
        None,
        _rms(left),
        len(poses),
        f'offsets from {len(poses)} rest pose(s), assuming the payload is right: {reason}; zero '
        'again at 3 or more rest poses that turn the wrist and the shoulder differently to '
        'separate them',
    )


@dataclass(frozen=True)
class FootRestPose:
    """A rest pose of a legged robot: the :class:`RestPose`, the gravity [m/s²] in base axes it
    was measured under, and which feet (``contact_frames`` order) touched the ground."""

    pose: RestPose
    gravity_in_base: np.ndarray
    touching: tuple


def estimate_offsets_on_feet(
    feet: FootForceEstimator, poses: Sequence[FootRestPose]
) -> OffsetEstimate:
    """Offsets of a legged robot from rest ``poses`` on its feet (module docstring); raises
    :class:`OffsetsRefused` when the poses cannot tell the offsets from the feet's forces."""
    n = feet.robot.num_joints
    touching = [np.flatnonzero(each.touching) for each in poses]
    rows, targets, column = [], [], n
    width = n + 3 * sum(len(t) for t in touching)
    for each, feet_down in zip(poses, touching):
        jacobians = feet.jacobians(each.pose.positions)[feet_down]  # m × 3 × (base + n)
        base = jacobians.shape[2] - n
        block = np.zeros((base + n, width))
        block[base:, :n] = np.eye(n)
        transposed = jacobians.transpose(2, 0, 1).reshape(base + n, -1)  # Σ J_cᵀ f_c columns
        block[:base, column : column + transposed.shape[1]] = transposed[:base]
        block[base:, column : column + transposed.shape[1]] = -transposed[base:]
        column += transposed.shape[1]
        rows.append(block)
        targets.append(
            np.concatenate(
                [
                    feet.base_wrench_at_rest(each.pose.positions, each.gravity_in_base),
                    each.pose.residual,
                ]
            )
        )
    stacked, target = np.vstack(rows), np.concatenate(targets)
    condition = _condition(stacked) if stacked.shape[0] >= stacked.shape[1] else math.inf
    if condition > MAX_CONDITION_ON_FEET:
        raise OffsetsRefused(
            f'rest pose kept ({len(poses)} so far), but they cannot tell the offsets from the '
            f'feet\'s forces yet (condition {condition:.3g}): hold the robot still with each foot '
            'lifted in turn and zero at each pose'
        )
    solution = np.linalg.lstsq(stacked, target, rcond=None)[0]
    left = _rms(target - stacked @ solution)
    return OffsetEstimate(
        solution[:n],
        None,
        left,
        len(poses),
        f'offsets from {len(poses)} rest poses on the feet (residual left {left:.3g} N·m RMS)',
    )


def _condition(rows: np.ndarray) -> float:
    """Condition number of ``rows`` with its columns normalised (inf when one is unseen)."""
    norms = np.linalg.norm(rows, axis=0)
    singular = np.linalg.svd(rows / np.where(norms > 0, norms, 1.0), compute_uv=False)
    return singular[0] / singular[-1] if singular[-1] > 0 else math.inf


def _pose_rows(robot: RobotModel, payload_link: str, positions: np.ndarray) -> np.ndarray:
    zeros = np.zeros((1, robot.num_joints))
    gravity = payload_regressor(robot, payload_link, positions[None, :], zeros, zeros)[:, :4]
    return np.hstack([np.eye(robot.num_joints), gravity])


def _rms(values: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(values)))) if len(values) else 0.0


def load_effort_offsets(path: str, joint_names: Sequence[str]) -> np.ndarray:
    """Offsets [N·m] in ``joint_names`` order from file ``path`` (joints it lacks: 0)."""
    text = read_small_text(path, MAX_FILE_BYTES, 'effort offsets file', EffortOffsetsError)
    try:
        document = load_yaml(text)
    except yaml.YAMLError as error:
        raise EffortOffsetsError(f'effort offsets file {path} is not YAML text: {error}') from None
    joints = document.get('joints') if isinstance(document, dict) else None
    if not isinstance(joints, dict):
        raise EffortOffsetsError(f"effort offsets file {path} has no 'joints' mapping")
    unknown = sorted(str(name) for name in joints if name not in joint_names)
    if unknown:
        raise EffortOffsetsError(
            f'effort offsets file {path} names joints the model does not have: {unknown}'
        )
    offsets = np.zeros(len(joint_names))
    for index, name in enumerate(joint_names):
        value = joints.get(name, 0.0)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise EffortOffsetsError(
                f'effort offsets file {path}: offset of joint {name} is not a finite number: '
                f'{value!r}'
            )
        offsets[index] = float(value)
    return offsets


def replacing_words(path: str) -> str:
    """'' when offsets may be written to ``path``: no file there, or one of effort offsets
    (a 'joints' mapping of numbers, for any model); else why they may not (another file, such as
    a friction file or a URDF given by mistake, would be lost)."""
    if not os.path.lexists(path):
        return ''
    try:
        text = read_small_text(path, MAX_FILE_BYTES, 'effort offsets file', EffortOffsetsError)
        document = load_yaml(text)
    except (EffortOffsetsError, yaml.YAMLError):
        document = None
    joints = document.get('joints') if isinstance(document, dict) else None
    if (
        isinstance(document, dict)
        and set(document) == {'joints'}
        and isinstance(joints, dict)
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in joints.values())
    ):
        return ''
    return (
        f'{path} exists and is not an effort offsets file: left as it is (set '
        'effort_offsets_file to a new path, or remove that file)'
    )


def absent_file_words(path: str) -> tuple:
    """(level, words) for an ``effort_offsets_file`` that does not exist: ('info', ...) when its
    folder exists, ('warning', ...) when that is missing too (a mistyped path?
    ``~/zero_effort_offsets`` would create it); ('', '') when ``path`` is empty or exists."""
    if not path or os.path.lexists(path):
        return '', ''
    folder = os.path.dirname(os.path.abspath(path))
    a_file = file_in_the_way(folder)
    if a_file is not None:
        return 'warning', (
            f'effort_offsets_file {path}: {a_file} is a file, not a folder; no effort offsets '
            '(~/zero_effort_offsets cannot save them there)'
        )
    if not os.path.isdir(folder):
        return 'warning', (
            f'effort_offsets_file {path}: folder {folder} does not exist (a mistyped path?); '
            'no effort offsets until ~/zero_effort_offsets writes the file, creating the folder'
        )
    return 'info', (
        f'effort_offsets_file {path} does not exist yet: no effort offsets until '
        '~/zero_effort_offsets writes it'
    )


def save_effort_offsets(path: str, joint_names: Sequence[str], offsets: np.ndarray) -> None:
    """Write ``offsets`` [N·m] to ``path`` (module docstring's format), replacing the file
    whole (:func:`~robot_dynamics.core.text_files.write_text_atomic`); check
    :func:`replacing_words` first."""
    lines = [
        '# Effort offsets [N·m] subtracted from the measured efforts (robot_dynamics).',
        'joints:',
    ]
    lines += [
        f'  {yaml_scalar(name)}: {float(value)!r}' for name, value in zip(joint_names, offsets)
    ]
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(file, '\n'.join(lines) + '\n')
