"""What the residual of a robot's model is made of: a recording's τ_measured − τ_model split into
the terms a real robot adds to its URDF, with the share each explains and what to do about it.

The residual of every joint j and sample, r = τ_measured − (M(q) q̈ + C(q, q̇) q̇ + g(q)) with q̈
from the zero-phase low-passed velocities, is fitted at once by linear least squares to

    r_j ≈ o_j                                              offset
          + f_v,j q̇_j + f_c,j sgn(q̇_j)
          + f_s,j exp(−(q̇_j/v_s)²) sgn(q̇_j)                  friction
          + I_a,j q̈_j                                        rotor inertia
          + s_j τ_model,j                                    effort scale error
          − δ τ̇_measured,j                                   effort delay
          + Y_payload(q, q̇, q̈)_j φ                          a payload (10 parameters)

(sgn smoothed over :data:`SIGN_VELOCITY`; v_s chosen from a grid; τ̇_measured the derivative
of the zero-phase low-passed efforts). δ [s], one for every joint, is how long before the
positions they are paired with the efforts were measured (a drive's torque filter, a bus
cycle): τ(t − δ) ≈ τ(t) − δ τ̇(t); it is what dynamics_node's ``effort_delay`` takes. What no
term explains is
noise, Coulomb switching the smoothed sign misses, and link inertial parameters that differ
from the URDF: ``robot_dynamics identify`` finds those. A term's contribution on a joint is the
RMS over the samples of its fitted torque on that joint [N·m]; with correlated terms the split
is the least-squares one, not unique, so a term is only named as the cause when its
contribution stands out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_dynamics.core.dynamics.friction import smooth_sign, stribeck_shape
from robot_dynamics.core.errors import IdentificationRefused
from robot_dynamics.core.identification.friction_fit import (
    STRIBECK_VELOCITIES,
    filtered_derivative,
    model_residuals,
)
from robot_dynamics.core.identification.payload_regressor import payload_regressor
from robot_dynamics.core.identification.recording import Recording
from robot_dynamics.core.model.model import RobotModel

TERMS = ('offset', 'friction', 'rotor_inertia', 'effort_scale', 'effort_delay', 'payload')
SIGN_VELOCITY = 0.005
"""Velocity scale [rad/s] of the smoothed sign of the friction terms."""
MAX_SAMPLES = 20000
"""Samples fitted at most (evenly spaced over the recording)."""
MIN_SAMPLES = 200
ACTIONS = {
    'offset': 'zero the effort offsets at rest (~/zero_effort_offsets) or set effort_offsets_file',
    'friction': 'identify the friction (robot_dynamics identify-friction) and set friction_file',
    'rotor_inertia': 'set the reflected rotor inertia (rotor_inertia, or the rotor_inertia of a '
    'friction file from robot_dynamics identify-friction --rotor-inertia / identify)',
    'effort_scale': 'calibrate the effort scale: the torque constants and gear ratios of '
    'effort_model_file, or the torque sensors',
    'effort_delay': 'set effort_delay to the delay found (the efforts are older than the '
    'positions they arrive with), and identify with --effort-delay auto',
    'payload': 'identify the payload (~/identify_payload) or set it (~/set_payload, active_tool)',
    'unexplained': 'the link inertias differ from the URDF: identify the robot '
    '(robot_dynamics identify) and use the identified URDF',
}
"""What an operator does about each term when it dominates."""


@dataclass(frozen=True)
class ResidualExplanation:
    """Per joint (``joint_names`` order): ``residual_rms`` before the fit [N·m], each term's
    ``contributions[term]`` [N·m] (RMS of its fitted torque), ``own_share[term]`` (0–1, all
    joints together: the part of the term's fitted torque that the other terms cannot fit, ‖(I −
    P₋) Xβ‖/‖Xβ‖ with P₋ the projection on the other terms' columns; low when the recording
    cannot tell the term from the others), ``unexplained_rms`` after the fit; the fitted
    ``offsets`` [N·m], ``scale_errors`` (relative), ``effort_delay`` δ [s], ``payload`` 10
    parameters about the payload link (pinocchio order), the ``samples`` used and the
    recording's median sample ``period`` [s]."""

    joint_names: tuple
    residual_rms: np.ndarray
    contributions: dict
    own_share: dict
    unexplained_rms: np.ndarray
    offsets: np.ndarray
    scale_errors: np.ndarray
    effort_delay: float
    payload: np.ndarray
    samples: int
    period: float

    def dominant(self) -> str:
        """The term with the largest contribution summed over the joints, or 'unexplained'."""
        totals = {term: float(np.sum(values)) for term, values in self.contributions.items()}
        totals['unexplained'] = float(np.sum(self.unexplained_rms))
        return max(totals, key=totals.get)

    def report(self) -> str:
        """A table per joint, each term's own share and the recommended action, in words."""
        header = f'{"joint":<16}{"residual":>10}' + ''.join(f'{t:>15}' for t in TERMS)
        lines = [
            'residual RMS [N·m] and what each term explains (N·m, % of the residual RMS):',
            header + f'{"unexplained":>13}',
        ]
        for j, name in enumerate(self.joint_names):
            total = self.residual_rms[j]
            cells = ''.join(
                f'{self.contributions[t][j]:>8.3f} ({_share(self.contributions[t][j], total)})'
                for t in TERMS
            )
            unexplained = (
                f'{self.unexplained_rms[j]:>6.3f} ({_share(self.unexplained_rms[j], total)})'
            )
            lines.append(f'{name:<16}{total:>10.3f}{cells}{unexplained}')
        lines.append(
            "of each term's torque, what no other term fits: "
            + ', '.join(f'{t} {100.0 * self.own_share[t]:.0f} %' for t in TERMS)
        )
        lines.append(self._delay_words())
        dominant = self.dominant()
        lines.append(f'largest: {dominant}: {ACTIONS[dominant]}')
        if self.own_share.get(dominant, 1.0) < 0.5:
            lines.append(
                f'  (the other terms can fit most of the {dominant} torque too: on this recording '
                'they are hard to tell apart, and noise or a model error moves the split between '
                'them; a motion through more varied poses and speeds separates them)'
            )
        return '\n'.join(lines)

    def _delay_words(self) -> str:
        delay, period = self.effort_delay, self.period
        words = (
            f'effort delay: the efforts fit best as measured {1e3 * delay:.2f} ms '
            f'({delay / period:.1f} samples) before the positions they arrive with'
        )
        if self.dominant() == 'unexplained':
            return (
                f'{words}: not to be set from this model, whose link inertias are further off '
                'than every term (their error bends the fit): identify the robot, then explain '
                'the residual of its identified model'
            )
        if delay >= 0.5 * period:
            return (
                f'{words}: set effort_delay {delay:.4f} s (added to the one in use when the '
                'node recorded it)'
            )
        if delay <= -0.5 * period:
            return (
                f'{words}: the efforts are newer than the positions (a filter lag of the '
                'positions, or the stamps)'
            )
        return f'{words}: no delay to set'


def _share(part: float, total: float) -> str:
    return f'{100.0 * part / total:3.0f}%' if total > 0.0 else '  -%'


SLOWEST_MOTION = 0.05
"""[rad/s or m/s] A recording whose joints never move faster than this is refused: what the terms
explain at rest is their confusion, not the robot."""


def explain_residual(
    robot: RobotModel, recording: Recording, payload_link: str, cutoff_hz: float = 10.0
) -> ResidualExplanation:
    """Split the residual of ``recording`` under ``robot`` (module docstring); ``payload_link``:
    where a payload would sit. Raises
    :class:`~robot_dynamics.core.errors.IdentificationRefused` for a recording too short."""
    if len(recording.time) < MIN_SAMPLES:
        raise IdentificationRefused(
            f'{len(recording.time)} samples: explaining the residual needs at least {MIN_SAMPLES}'
        )
    fastest = float(np.max(np.abs(recording.velocities))) if recording.velocities.size else 0.0
    if fastest < SLOWEST_MOTION:
        raise IdentificationRefused(
            f'the robot hardly moved (fastest joint speed {fastest:.3g}, below '
            f'{SLOWEST_MOTION:g} rad/s): at rest, offsets, a payload and the effort scale cannot '
            'be told apart, nor friction, rotor inertia or a delay; move it through its range '
            '(`robot_dynamics excitation`), then call again'
        )
    residuals, period, accelerations = model_residuals(robot, recording, cutoff_hz)
    model_torques = recording.efforts - residuals
    effort_rates = filtered_derivative(recording.efforts, recording.time, cutoff_hz)
    keep = np.unique(np.linspace(0, len(recording.time) - 1, MAX_SAMPLES).astype(int))
    q, v = recording.positions[keep], recording.velocities[keep]
    a, r = accelerations[keep], residuals[keep]
    torques = (model_torques[keep], effort_rates[keep])
    payload_rows = payload_regressor(robot, payload_link, q, v, a)
    fits = [_fit(q, v, a, r, torques, payload_rows, speed) for speed in STRIBECK_VELOCITIES]
    design, solution, blocks = min(fits, key=lambda fit: fit[3])[:3]
    n = robot.num_joints
    fitted = {
        term: (design[:, cols] @ solution[cols]).reshape(-1, n) for term, cols in blocks.items()
    }
    unexplained = r - sum(fitted.values())
    return ResidualExplanation(
        robot.joint_names,
        _rms(r),
        {term: _rms(values) for term, values in fitted.items()},
        _own_shares(design, solution, blocks, r.reshape(-1)),
        _rms(unexplained),
        solution[blocks['offset']][:n],
        solution[blocks['effort_scale']],
        float(solution[blocks['effort_delay']][0]),
        solution[blocks['payload']],
        len(keep),
        period,
    )


def _fit(q, v, a, r, torques, payload_rows, stribeck_velocity) -> tuple:
    """(design, solution, {term: columns}, residual sum of squares) for one Stribeck velocity;
    ``torques``: the model's torques and the time derivative of the measured ones."""
    model_torques, effort_rates = torques
    samples, n = v.shape

    def per_joint(values: np.ndarray) -> np.ndarray:
        """(samples·n, n): each joint's column holds its own values, sample-major rows."""
        block = np.zeros((samples, n, n))
        block[:, np.arange(n), np.arange(n)] = values
        return block.reshape(samples * n, n)

    sign = smooth_sign(v, SIGN_VELOCITY)
    columns = {
        'offset': per_joint(np.ones_like(v)),
        'friction': np.hstack(
            [
                per_joint(v),
                per_joint(sign),
                per_joint(stribeck_shape(v, stribeck_velocity, SIGN_VELOCITY)),
            ]
        ),
        'rotor_inertia': per_joint(a),
        'effort_scale': per_joint(model_torques),
        'effort_delay': -effort_rates.reshape(-1, 1),  # one δ for every joint
        'payload': payload_rows,
    }
    blocks, start = {}, 0
    for term in TERMS:
        width = columns[term].shape[1]
        blocks[term] = np.arange(start, start + width)
        start += width
    design = np.hstack([columns[term] for term in TERMS])
    target = r.reshape(-1)
    solution = _least_squares(design, target)
    rss = float(np.sum((target - design @ solution) ** 2))
    return design, solution, blocks, rss


def _least_squares(design: np.ndarray, target: np.ndarray) -> np.ndarray:
    """argmin ‖design x − target‖ on unit-norm columns (a zero column gets 0)."""
    scale = np.linalg.norm(design, axis=0)
    scale[scale == 0.0] = 1.0
    return np.linalg.lstsq(design / scale, target, rcond=1e-10)[0] / scale


def _own_shares(design: np.ndarray, solution: np.ndarray, blocks: dict, target: np.ndarray):
    """{term: ‖(I − P₋) X_t β_t‖ / ‖X_t β_t‖} (:class:`ResidualExplanation`): the whole fit's
    torque less the fit without the term, over the term's own fitted torque."""
    fitted, shares = design @ solution, {}
    for term, columns in blocks.items():
        own = design[:, columns] @ solution[columns]
        size = np.linalg.norm(own)
        others = np.setdiff1d(np.arange(design.shape[1]), columns)
        without = design[:, others] @ _least_squares(design[:, others], target)
        shares[term] = float(np.linalg.norm(fitted - without) / size) if size > 0.0 else 0.0
    return shares


def _rms(values: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(np.square(values), axis=0))
