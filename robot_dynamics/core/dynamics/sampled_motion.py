"""Sampled joint motions for offline checks: a trajectory CSV or seeded random static poses.

Trajectory CSV: header ``time`` then per joint ``<joint>/position`` and, optionally,
``<joint>/velocity`` and ``<joint>/acceleration`` (the layout ``robot_dynamics excitation``
writes; ``<joint>/effort`` columns of a recording are accepted and ignored). Time in s,
positions in rad (m), velocities in rad/s, accelerations in rad/s². Missing velocities or
accelerations are taken as central differences of the columns before them.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.model.model import RobotModel

_KINDS = ('position', 'velocity', 'acceleration', 'effort')


class MotionFileError(RobotDynamicsError):
    """A trajectory file cannot be read or does not fit the model."""


@dataclass(frozen=True)
class SampledMotion:
    """Samples in ``joint_names`` order: ``times`` [s] (N,), ``positions`` [rad], ``velocities``
    [rad/s], ``accelerations`` [rad/s²], each (N, n). ``label`` says where they come from."""

    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    label: str

    @property
    def is_static(self) -> bool:
        return not (np.any(self.velocities) or np.any(self.accelerations))

    def __len__(self) -> int:
        return len(self.times)


def random_poses(robot: RobotModel, count: int, seed: int = 0) -> SampledMotion:
    """``count`` static poses uniform within the URDF position limits (±π where a joint has
    none), from ``seed``; ``times`` are the pose indices 0, 1, ... :class:`MotionFileError`
    when a joint's range is empty (lower limit above upper)."""
    if count < 1:
        raise MotionFileError(f'need at least 1 pose, got {count}')
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(robot.limits.lower), robot.limits.lower, -math.pi)
    upper = np.where(np.isfinite(robot.limits.upper), robot.limits.upper, math.pi)
    empty = [name for name, low, high in zip(robot.joint_names, lower, upper) if low > high]
    if empty:
        raise MotionFileError(
            f'joint {empty[0]} has its lower limit above its upper one in the URDF: no pose is '
            'within its range (robot_dynamics validate reports it)'
        )
    positions = rng.uniform(lower, upper, (count, robot.num_joints))
    zeros = np.zeros_like(positions)
    return SampledMotion(
        np.arange(count, dtype=float),
        positions,
        zeros,
        zeros.copy(),
        f'{count} random poses (seed {seed})',
    )


def static_poses(positions: Sequence[Sequence[float]]) -> SampledMotion:
    """Given static poses [rad] (N, n); ``times`` are the pose indices."""
    positions = np.atleast_2d(np.asarray(positions, dtype=float))
    zeros = np.zeros_like(positions)
    return SampledMotion(
        np.arange(len(positions), dtype=float),
        positions,
        zeros,
        zeros.copy(),
        f'{len(positions)} given poses',
    )


def read_trajectory_csv(path, robot: RobotModel) -> SampledMotion:
    """Read the trajectory CSV of the module docstring for ``robot`` (every model joint needs a
    position column; columns of other joints are an error)."""
    path = Path(path)
    header, table = _read_table(path)
    columns = {}
    for index, column in enumerate(header[1:], start=1):
        joint, _, kind = column.rpartition('/')
        if kind not in _KINDS or not joint:
            raise MotionFileError(
                f'trajectory {path}: column "{column}" is not '
                '<joint>/position|velocity|acceleration'
            )
        if joint not in robot.joint_names:
            raise MotionFileError(
                f'trajectory {path}: joint "{joint}" is not in model "{robot.name}"'
            )
        if (joint, kind) in columns:
            raise MotionFileError(f'trajectory {path}: column "{column}" appears more than once')
        columns[(joint, kind)] = index
    missing = [name for name in robot.joint_names if (name, 'position') not in columns]
    if missing:
        raise MotionFileError(f'trajectory {path} has no position column for joints {missing}')
    times = table[:, 0]
    if len(times) > 1 and not np.all(np.diff(times) > 0.0):
        raise MotionFileError(f'trajectory {path}: times must increase from row to row')
    positions = _joint_columns(table, columns, robot.joint_names, 'position')
    velocities = _joint_columns(table, columns, robot.joint_names, 'velocity')
    if velocities is None:
        velocities = _derivative(positions, times)
    accelerations = _joint_columns(table, columns, robot.joint_names, 'acceleration')
    if accelerations is None:
        accelerations = _derivative(velocities, times)
    return SampledMotion(
        times,
        positions,
        velocities,
        accelerations,
        f'trajectory {path.name} ({len(times)} samples)',
    )


def outside_position_limits(motion: SampledMotion, robot: RobotModel) -> str:
    """'' when every position of ``motion`` lies within the URDF limits of ``robot``; else the
    joints that leave them and by how much [rad or m], in words."""
    below = np.max(robot.limits.lower - motion.positions, axis=0, initial=0.0)
    above = np.max(motion.positions - robot.limits.upper, axis=0, initial=0.0)
    past = np.maximum(below, above)
    joints = [
        f'{name} (up to {excess:.3g} past)'
        for name, excess in zip(robot.joint_names, past)
        if excess > 0.0
    ]
    if not joints:
        return ''
    return f'{motion.label} leaves the URDF position limits of {", ".join(joints)}'


def _read_table(path: Path) -> tuple:
    try:
        with path.open(newline='', encoding='utf-8') as handle:
            rows = [row for row in csv.reader(handle) if row]
    except OSError as error:
        raise MotionFileError(f'cannot read trajectory {path}: {error.strerror or error}') from None
    except UnicodeDecodeError:
        raise MotionFileError(f'trajectory {path} is not UTF-8 text') from None
    if len(rows) < 2:
        raise MotionFileError(f'trajectory {path} has no data rows')
    header = [cell.strip() for cell in rows[0]]
    if header[0] != 'time':
        raise MotionFileError(f'trajectory {path}: first column must be "time", got "{header[0]}"')
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise MotionFileError(
                f'trajectory {path}: line {line} has {len(row)} values, the header {len(header)} '
                'columns'
            )
    table = np.array([_numbers(path, line, row, header) for line, row in enumerate(rows[1:], 2)])
    if not np.all(np.isfinite(table)):
        raise MotionFileError(f'trajectory {path} holds NaN or Inf values')
    return header, table


def _numbers(path: Path, line: int, row: list, header: list) -> list:
    """The cells of ``row`` (file line ``line``) as floats; raises :class:`MotionFileError`
    with the line and column of a cell that is not a number."""
    values = []
    for cell, column in zip(row, header):
        try:
            values.append(float(cell))
        except ValueError:
            raise MotionFileError(
                f'trajectory {path}: line {line}, column "{column}": {cell!r} is not a number'
            ) from None
    return values


def _joint_columns(table: np.ndarray, columns: dict, joint_names, kind: str):
    present = [(name, kind) in columns for name in joint_names]
    if not any(present):
        return None
    if not all(present):
        lacking = [name for name, flag in zip(joint_names, present) if not flag]
        raise MotionFileError(f'trajectory gives {kind} for some joints but not for {lacking}')
    return table[:, [columns[(name, kind)] for name in joint_names]]


def _derivative(values: np.ndarray, times: np.ndarray) -> np.ndarray:
    if len(times) < 3:
        raise MotionFileError(
            'a trajectory without velocity/acceleration columns needs at least 3 samples'
        )
    return np.gradient(values, times, axis=0)
