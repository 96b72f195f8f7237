"""External wrench at a frame from external joint torques: τ_ext = Jᵀ(q) F, solved by damped least
squares.

F = (f, m): force [N] and moment [N·m] acting on the frame's link at the frame's origin,
both expressed in that frame (pinocchio ``LOCAL`` Jacobian, (linear, angular) order), from
τ_ext [N·m] in ``robot.joint_names`` order. With the SVD J = Σ sᵢ uᵢ vᵢᵀ (6 × n),

    F = Σᵢ sᵢ / (sᵢ² + λᵢ²) · uᵢ (vᵢᵀ τ_ext),   λᵢ² = λ² · max(0, 1 − (sᵢ/ε)²),

i.e. the exact least-squares solution along the directions with sᵢ ≥ ε (undamped, no bias) and a
damping that grows to λ as sᵢ → 0 (singular-value filtering: Maciejewski & Klein, "Numerical
filtering for the operation of robotic manipulators through kinematically singular
configurations", J. Robotic Systems 1988; Chiaverini, IEEE T-RA 1997). A wrench direction uᵢ
with sᵢ < ε is *not identifiable* from joint torques (a chain with fewer than 6 joints has at
most n identifiable directions; a singular pose loses some): its component is attenuated towards
0, never amplified (|gain| ≤ 1/(2λ)), and :attr:`WrenchEstimate.identifiable` says how many
directions were resolved. Never NaN for finite input.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from robot_dynamics.core.contact.contact_detection import RecentSamples
from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.model.model import RobotModel

DEFAULT_DAMPING = 0.01
"""λ [m]: largest damping, reached at an exactly singular direction."""

DEFAULT_SINGULAR_THRESHOLD = 0.02
"""ε: singular values of the LOCAL Jacobian below this (m/rad for force directions, 1 for
moment directions) mark a direction as not identifiable."""


class WrenchEstimationError(RobotDynamicsError):
    """The wrench cannot be estimated as requested (unknown frame, frame on the world, bad
    damping)."""


@dataclass(frozen=True)
class WrenchEstimate:
    """``force`` [N] and ``moment`` [N·m] in the estimation frame at its origin; ``identifiable``:
    number of resolved wrench directions (6 = full wrench); ``smallest_singular_value`` of J."""

    force: np.ndarray
    moment: np.ndarray
    identifiable: int
    smallest_singular_value: float

    @property
    def wrench(self) -> np.ndarray:
        """(force, moment), 6 values."""
        return np.concatenate([self.force, self.moment])

    def __repr__(self) -> str:
        return (
            f'WrenchEstimate(force={np.round(self.force, 3).tolist()} N, '
            f'moment={np.round(self.moment, 3).tolist()} N·m, identifiable {self.identifiable}/6)'
        )


def wrench_from_torques(
    jacobian: np.ndarray,
    torques: np.ndarray,
    damping: float = DEFAULT_DAMPING,
    singular_threshold: float = DEFAULT_SINGULAR_THRESHOLD,
) -> WrenchEstimate:
    """Solve ``torques`` = ``jacobian``ᵀ F (jacobian 6 × n, LOCAL, (linear, angular)) by
    singular-value-filtered damped least squares (module docstring)."""
    left, singular, right_t = np.linalg.svd(jacobian, full_matrices=False)
    damping_sq = damping * damping * np.clip(1.0 - (singular / singular_threshold) ** 2, 0.0, None)
    gains = singular / (singular * singular + damping_sq + 1e-300)
    wrench = left @ (gains * (right_t @ torques))
    identifiable = int(np.count_nonzero(singular >= singular_threshold))
    smallest = float(singular[-1]) if len(singular) == 6 else 0.0
    return WrenchEstimate(wrench[:3], wrench[3:], identifiable, smallest)


class WrenchEstimator:
    """External wrench at ``frame`` of ``robot`` from external joint torques (one stream)."""

    def __init__(
        self,
        robot: RobotModel,
        frame: str,
        damping: float = DEFAULT_DAMPING,
        singular_threshold: float = DEFAULT_SINGULAR_THRESHOLD,
    ):
        self.frame_id = robot.frame_id(frame, WrenchEstimationError, 'wrench frame', moving=True)
        if not (
            math.isfinite(damping)
            and damping > 0.0
            and math.isfinite(singular_threshold)
            and singular_threshold > 0.0
        ):
            raise WrenchEstimationError(
                f'wrench damping and singular threshold must be positive, got {damping!r}, '
                f'{singular_threshold!r}'
            )
        self.robot, self.frame = robot, frame
        self.damping, self.singular_threshold = float(damping), float(singular_threshold)
        self._coupling = robot.coupling[:, robot.base_dofs :]

    def jacobian(self, positions: np.ndarray) -> np.ndarray:
        """J (6 × joints): the frame's LOCAL twist (linear, angular) per joint velocity."""
        robot = self.robot
        full = pin.computeFrameJacobian(
            robot.model, robot.data, robot.configuration(positions), self.frame_id, pin.LOCAL
        )
        return full @ self._coupling

    def estimate(self, positions: np.ndarray, torques: np.ndarray) -> WrenchEstimate:
        """The wrench at the frame [N, N·m] explaining external joint ``torques`` [N·m] at
        ``positions`` [rad]."""
        return wrench_from_torques(
            self.jacobian(positions),
            np.asarray(torques, dtype=float),
            self.damping,
            self.singular_threshold,
        )


class ObservedPositions(RecentSamples):
    """The joint positions a momentum observer's residual describes, for the wrench: its residual
    is τ_ext low-passed, which lags τ_ext by ``lag`` [s]
    (:func:`~robot_dynamics.core.contact.momentum_observer.observer_lag`), so a steady force on a
    moving arm acted through the Jacobian of the sample ``lag`` before the newest. Keeps the
    samples of the last ``lag`` (at up to ``max_rate`` [Hz]); :meth:`add` a sample's joint
    positions [rad]."""

    def __init__(self, lag: float, max_rate: float = 1000.0):
        self.lag = float(lag)
        super().__init__(self.lag, max_rate)

    def at(self, stamp: float) -> np.ndarray:
        """The kept positions [rad] whose stamp is closest to ``stamp`` − ``lag``."""
        return self.closest(stamp - self.lag)


WRENCH_REFERENCES = ('contact_onset', 'zero')
"""What the external wrench explains: ``contact_onset``, during a contact the change of τ_ext
since just before it began
(:attr:`~robot_dynamics.core.contact.contact_detection.ContactDetector.baseline`); ``zero``,
all of τ_ext."""


@dataclass(frozen=True)
class ExternalWrenchSeries:
    """External torques and wrench over a recording: ``time`` (N,) [s]; ``torques`` (N, n) [N·m]
    (observer r, NaN at a sample that restarted it); ``wrenches`` (N, 6) force [N] then moment [N·m]
    at ``frame``; ``identifiable`` (N,) resolved wrench directions (0 where no estimate)."""

    time: np.ndarray
    joint_names: tuple
    frame: str
    torques: np.ndarray
    wrenches: np.ndarray
    identifiable: np.ndarray
    momentum: str = 'positions'
    """The observer's momentum source used: 'positions' or 'velocities'."""
    momentum_reason: str = ''
    """Why ``auto`` kept the velocities ('' when the source was given or positions were kept)."""


def external_wrench_series(
    robot: RobotModel,
    recording,
    frame: str,
    gain: float = 50.0,
    friction=None,
    damping: float = DEFAULT_DAMPING,
    singular_threshold: float = DEFAULT_SINGULAR_THRESHOLD,
    momentum: str = 'auto',
    filter_gain: float = 0.0,
) -> ExternalWrenchSeries:
    """Run the momentum observer
    (:class:`~robot_dynamics.core.contact.momentum_observer.MomentumObserver`)
    and :class:`WrenchEstimator` over ``recording`` (a
    :class:`~robot_dynamics.core.identification.recording.Recording`
    in model joint order): the same core calls dynamics_node makes per message, the wrench solved
    with the Jacobian of the sample one observer time constant 1/K_O earlier, as there.

    ``momentum``: the observer's source, 'positions', 'velocities' or 'auto' (as dynamics_node's
    ``observer_momentum`` before a calibration: positions, unless their residual over the whole
    recording is too noisy next to the velocities'
    (:func:`~robot_dynamics.core.contact.momentum_observer.positions_too_noisy`))."""
    from robot_dynamics.core.contact.momentum_observer import (
        MOMENTUM_SOURCES,
        observer_lag,
        positions_too_noisy,
    )

    if tuple(recording.joint_names) != robot.joint_names:
        raise WrenchEstimationError(
            f'recording joints {list(recording.joint_names)} are not the model joints '
            f'{list(robot.joint_names)} in order'
        )
    sources = MOMENTUM_SOURCES if momentum == 'auto' else (momentum,)
    residuals = {
        source: _observer_residuals(robot, recording, gain, friction, source, filter_gain)
        for source in sources
    }
    reason = ''
    if momentum == 'auto':
        both = np.all(np.isfinite(residuals['positions']), axis=1) & np.all(
            np.isfinite(residuals['velocities']), axis=1
        )
        reason = positions_too_noisy(residuals['positions'][both], residuals['velocities'][both])
        momentum = 'velocities' if reason else 'positions'
    torques = residuals[momentum]
    count = len(recording.time)
    wrenches, identifiable = np.full((count, 6), np.nan), np.zeros(count, dtype=int)
    estimator = WrenchEstimator(robot, frame, damping, singular_threshold)
    described = ObservedPositions(observer_lag(gain, filter_gain))
    for k in range(count):
        described.add(recording.time[k], recording.positions[k])
        if np.isnan(torques[k]).any():
            continue
        estimate = estimator.estimate(described.at(recording.time[k]), torques[k])
        wrenches[k], identifiable[k] = estimate.wrench, estimate.identifiable
    return ExternalWrenchSeries(
        recording.time.copy(),
        robot.joint_names,
        frame,
        torques,
        wrenches,
        identifiable,
        momentum,
        reason,
    )


def _observer_residuals(robot, recording, gain, friction, momentum, filter_gain) -> np.ndarray:
    """The observer's residual r [N·m] at every sample of ``recording`` (rows), NaN where it
    restarted."""
    from robot_dynamics.core.contact.momentum_observer import MomentumObserver

    observer = MomentumObserver(robot, gain, friction, momentum=momentum, filter_gain=filter_gain)
    residuals = np.full((len(recording.time), robot.num_joints), np.nan)
    for k, stamp in enumerate(recording.time):
        residual = observer.update(
            stamp, recording.positions[k], recording.velocities[k], recording.efforts[k]
        )
        if residual is not None:
            residuals[k] = residual
    return residuals
