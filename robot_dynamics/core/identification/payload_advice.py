"""What a refused payload identification should have recorded instead, as numbers and names.

For too few samples or a badly conditioned regressor: how many seconds more of the payload
recording the baseline must cover (searched on the payload recording beyond the shared
stretch), which payload parameters are least excited (the right singular vector of the
smallest singular value of the column-normalised regressor) and which joints to move more
(tried on hypothetical samples around the recorded ones). The sentences are in
:mod:`~robot_dynamics.core.identification.payload_words`. Durations in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from robot_dynamics.core.identification.payload_options import PayloadOptions
from robot_dynamics.core.identification.payload_regressor import (
    conditioning,
    normalised_singular_values,
    payload_regressor,
)
from robot_dynamics.core.identification.payload_samples import FitData, fit_step
from robot_dynamics.core.model.model import RobotModel


@dataclass(frozen=True)
class BaselineExtension:
    """``seconds`` [s] more of the payload recording the baseline must cover, and ``where``:
    ``'start'`` (it started late in the motion), ``'end'`` (it ended early) or ``'both'``."""

    seconds: float
    where: str


@dataclass(frozen=True)
class MotionAdvice:
    """The ``joints`` whose extra motion would most help (model order), and the baseline
    ``extension`` that alone would do (``None`` without a baseline or when it would not)."""

    joints: tuple
    extension: Optional[BaselineExtension]


@dataclass(frozen=True)
class SampleShortfall:
    """Too few fit samples: ``samples`` counted, ``needed``, whether the data are ``static``
    poses, the motion ``missing_seconds`` [s] at the fit-sample spacing, and the baseline
    ``extension`` that would do (``None`` for static data or when it would not)."""

    samples: int
    needed: int
    static: bool
    missing_seconds: float
    extension: Optional[BaselineExtension]


def sample_shortfall(
    robot: RobotModel, data: FitData, mode: str, options: PayloadOptions
) -> SampleShortfall:
    """How far ``data`` fall short of ``options.min_samples`` and what would make up for it."""
    prepared = data.stretch.prepared
    samples, needed = len(data.sample.time), options.min_samples
    missing = (needed - samples) * fit_step(prepared, options) * prepared.period
    if data.static:
        return SampleShortfall(samples, needed, True, missing, None)
    columns = 10 if mode == 'full' else 4
    return SampleShortfall(
        samples, needed, False, missing, baseline_extension(robot, data, columns, options)
    )


def motion_advice(
    robot: RobotModel, data: FitData, columns: int, options: PayloadOptions
) -> MotionAdvice:
    """What would separate the first ``columns`` payload parameters (4: mass and CoM, 10: all)."""
    return MotionAdvice(
        joints_to_move(robot, data, columns), baseline_extension(robot, data, columns, options)
    )


def baseline_extension(
    robot: RobotModel, data: FitData, columns: int, options: PayloadOptions
) -> Optional[BaselineExtension]:
    """The seconds [s] of the payload recording the baseline would have to cover beyond the
    shared stretch for the fit samples there to pass the sample-count and conditioning checks on
    the first ``columns`` payload parameters, and at which end; ``None`` without a baseline,
    when the baseline already covers everything, or when even the whole payload recording
    would not pass."""
    seconds = _extension_seconds(robot, data, columns, options)
    if seconds is None:
        return None
    covered, prepared = data.stretch.covered, data.stretch.prepared
    index = np.flatnonzero(covered)
    # a few edge samples outside the baseline are alignment jitter, not a late start or early end
    jitter = int(round(1.0 / (prepared.cutoff_hz * prepared.period)))
    started_late, ended_early = index[0] > jitter, index[-1] < len(covered) - 1 - jitter
    if started_late and not ended_early:
        return BaselineExtension(seconds, 'start')
    if ended_early and not started_late:
        return BaselineExtension(seconds, 'end')
    return BaselineExtension(seconds, 'both')


def _extension_seconds(
    robot: RobotModel, data: FitData, columns: int, options: PayloadOptions
) -> Optional[float]:
    """The seconds of :func:`baseline_extension`, found by widening the shared stretch step by
    step into the rest of the payload recording."""
    stretch = data.stretch
    if not stretch.with_baseline or stretch.covered.all() or len(stretch.candidates) == 0:
        return None
    prepared, candidates = stretch.prepared, stretch.candidates
    distance = _distance_to(prepared.time, prepared.time[stretch.covered])
    rows = payload_regressor(
        robot,
        data.link,
        prepared.positions[candidates],
        prepared.velocities[candidates],
        prepared.accelerations[candidates],
    )[:, :columns].reshape(len(candidates), -1, columns)
    reach = distance[candidates]
    step = max(prepared.period, reach.max() / 100)
    for margin in np.arange(step, reach.max() + step, step):
        chosen = reach <= margin
        if chosen.sum() < options.min_samples:
            continue
        if conditioning(rows[chosen].reshape(-1, columns))[0] <= options.max_condition_number:
            return float((distance <= margin).sum() * prepared.period) - stretch.duration
    return None


def _distance_to(times: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Distance [s] from each of ``times`` to the nearest of the sorted, non-empty ``reference``
    times."""
    index = np.searchsorted(reference, times)
    right = reference[np.clip(index, 0, len(reference) - 1)]
    left = reference[np.clip(index - 1, 0, len(reference) - 1)]
    return np.minimum(np.abs(times - left), np.abs(right - times))


def least_excited(rows: np.ndarray) -> tuple:
    """Indices (pinocchio order) of the payload parameters that dominate the least excited
    direction of the column-normalised ``rows``: the right singular vector of the smallest
    singular value."""
    norms = np.linalg.norm(rows, axis=0)
    scale = np.where(norms > 1e-10 * norms.max(), norms, np.inf)
    direction = np.abs(np.linalg.svd(rows / scale, full_matrices=False)[2][-1])
    return tuple(k for k in range(len(direction)) if direction[k] >= 0.5 * direction.max())


def joints_to_move(robot: RobotModel, data: FitData, columns: int) -> tuple:
    """The joints (at most 3, model order) whose extra motion most raises the smallest normalised
    singular value of the first ``columns`` payload regressor columns, tried on hypothetical
    samples around the recorded ones (±0.5 rad, and for 10 columns ±1 rad/s and ±3 rad/s²)."""
    sample = data.sample
    picks = np.linspace(0, len(sample.time) - 1, min(30, len(sample.time))).astype(int)
    positions, velocities = sample.positions[picks], sample.velocities[picks]
    accelerations = sample.accelerations[picks]
    recorded = data.payload_rows.reshape(len(sample.time), -1, 10)[picks].reshape(-1, 10)[
        :, :columns
    ]
    generator = np.random.default_rng(0)
    scores = []
    for joint in range(robot.num_joints):
        signs = generator.choice([-1.0, 1.0], size=(3, len(picks)))
        moved_q, moved_v, moved_a = positions.copy(), velocities.copy(), accelerations.copy()
        moved_q[:, joint] += 0.5 * signs[0]
        if columns == 10:
            moved_v[:, joint] += 1.0 * signs[1]
            moved_a[:, joint] += 3.0 * signs[2]
        hypothetical = payload_regressor(robot, data.link, moved_q, moved_v, moved_a)[:, :columns]
        scores.append(normalised_singular_values(np.vstack([recorded, hypothetical]))[-1])
    scores = np.array(scores)
    chosen = [
        robot.joint_names[j] for j in np.argsort(-scores)[:3] if scores[j] >= 0.8 * scores.max()
    ]
    return tuple(sorted(chosen, key=robot.joint_names.index))
