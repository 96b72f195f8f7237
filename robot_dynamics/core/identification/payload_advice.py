"""What a refused payload identification tells the operator to record instead.

For too few samples or a badly conditioned regressor: how many seconds more the baseline must
cover (searched on the payload recording beyond the shared stretch), which payload parameters
are least excited (the right singular vector of the smallest singular value of the
column-normalised regressor) and which joints to move more (tried on hypothetical samples
around the recorded ones). Durations in seconds.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from robot_dynamics.core.identification.payload_regressor import payload_regressor
from robot_dynamics.core.identification.payload_report import (
    PayloadOptions,
    coverage_words,
    seconds_text,
)
from robot_dynamics.core.identification.payload_samples import FitData, fit_step
from robot_dynamics.core.model.model import RobotModel

_PARAMETER_NAMES = ('m', 'm·cx', 'm·cy', 'm·cz', 'Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')


def stretch_words(data: FitData) -> str:
    """The data the fit looked at, in operator words (with its duration)."""
    stretch = data.stretch
    if stretch.with_baseline:
        return (
            f'the {seconds_text(stretch.duration)} s of motion the baseline and the payload '
            f'recording share ({coverage_words(stretch.coverage)})'
        )
    return f'the {seconds_text(stretch.duration)} s of motion recorded'


def too_few_samples(robot, data: FitData, mode: str, options: PayloadOptions) -> str:
    """The sample-count refusal, with how much more motion (or baseline coverage) would do."""
    samples, needed = len(data.sample.time), options.min_samples
    text = f'only {samples} usable samples in {stretch_words(data)} (need {needed})'
    if data.static:
        return text + ': hold each static pose longer, or record more poses'
    missing = (
        (needed - samples) * fit_step(data.stretch.prepared, options) * data.stretch.prepared.period
    )
    extension = _extension_needed(robot, data, 10 if mode == 'full' else 4, options)
    if extension is not None:
        return f'{text}: {_baseline_extension_words(data, extension)}'
    if data.stretch.with_baseline:
        return text + (
            f': record a longer motion, with the baseline covering at least {missing:.1f} s more '
            'of the payload recording'
        )
    return text + f': record a longer motion, at least {missing:.1f} s more'


def more_motion(robot, data: FitData, columns: int, options: PayloadOptions) -> str:
    """'start the baseline about 3.2 s earlier in the motion, or move fr3_joint2 more' (the first
    part only when the payload recording beyond the shared stretch would do)."""
    advice = _motion_advice(robot, data, columns)
    extension = _extension_needed(robot, data, columns, options)
    if extension is None:
        return advice
    return f'{_baseline_extension_words(data, extension)}, or {advice}'


def _baseline_extension_words(data: FitData, extension: float) -> str:
    """'start the baseline about 3.2 s earlier in the motion' (or later end, or both)."""
    covered, prepared = data.stretch.covered, data.stretch.prepared
    index = np.flatnonzero(covered)
    # a few edge samples outside the baseline are alignment jitter, not a late start or early end
    jitter = int(round(1.0 / (prepared.cutoff_hz * prepared.period)))
    started_late, ended_early = index[0] > jitter, index[-1] < len(covered) - 1 - jitter
    if started_late and not ended_early:
        return f'start the baseline about {extension:.1f} s earlier in the motion'
    if ended_early and not started_late:
        return f'record the baseline about {extension:.1f} s longer into the motion'
    return f'record the baseline over about {extension:.1f} s more of the payload motion'


def _extension_needed(
    robot, data: FitData, columns: int, options: PayloadOptions
) -> Optional[float]:
    """Seconds [s] of the payload recording the baseline would have to cover beyond the shared
    stretch for the fit samples there to pass the sample-count and conditioning checks on the
    first ``columns`` payload parameters; ``None`` without a baseline, when the baseline already
    covers everything, or when even the whole payload recording would not pass."""
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


def least_excited(rows: np.ndarray) -> str:
    """The payload parameters that dominate the least excited direction (the right singular
    vector of the smallest singular value of the column-normalised ``rows``), e.g. 'Ixz and Iyz'."""
    norms = np.linalg.norm(rows, axis=0)
    scale = np.where(norms > 1e-10 * norms.max(), norms, np.inf)
    direction = np.abs(np.linalg.svd(rows / scale, full_matrices=False)[2][-1])
    names = [
        _PARAMETER_NAMES[k] for k in range(len(direction)) if direction[k] >= 0.5 * direction.max()
    ]
    return names[0] if len(names) == 1 else ', '.join(names[:-1]) + ' and ' + names[-1]


def _motion_advice(robot: RobotModel, data: FitData, columns: int) -> str:
    """'move <joints> more': the joints whose extra motion most raises the smallest normalised
    singular value of the payload regressor, tried on hypothetical samples around the recorded
    ones."""
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
    chosen.sort(key=robot.joint_names.index)
    names = chosen[0] if len(chosen) == 1 else ', '.join(chosen[:-1]) + ' and ' + chosen[-1]
    return f'move {names} more'


def normalised_singular_values(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=0)
    scale = np.where(norms > 1e-10 * norms.max(), norms, np.inf)
    return np.linalg.svd(rows / scale, compute_uv=False)


def conditioning(rows: np.ndarray) -> tuple:
    values = normalised_singular_values(rows)
    smallest = float(values[-1])
    return (float(values[0] / smallest) if smallest > 0 else math.inf), smallest
