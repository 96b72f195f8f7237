"""Generalized-momentum observer: the external joint torques without joint accelerations.

De Luca & Mattone, "Sensorless robot collision detection and hybrid force/motion control"
(ICRA 2005); Haddadin, De Luca & Albu-Schäffer, "Robot Collisions: A Survey on Detection,
Isolation, and Identification" (IEEE T-RO 2017). With p = M(q) q̇ the rigid-body dynamics
M q̈ + C q̇ + g = τ_m − τ_f + τ_ext give, using Ṁ = C + Cᵀ,

    ṗ = β + τ_ext,        β = τ_m − τ_f + Cᵀ(q, q̇) q̇ − g(q),

and the observer r(t) = K_O [p(t) − p(0) − ∫₀ᵗ (β + r) ds] obeys ṙ = K_O (τ_ext − r): a
first-order low-pass of τ_ext with time constant 1/K_O, r(0) = 0.

Discretisation (docs/contact.md): the observer takes the mean external torque ū_k over a
window of samples, exactly for any sample steps, and applies the exact zero-order-hold
solution of ṙ = K_O (u − r) for that ū held over the step Δt = t_k − t_{k−1}:

    r_k = e^{−K_O Δt} r_{k−1} + (1 − e^{−K_O Δt}) ū_k ,

so for a constant external torque r_k = (1 − e^{−K_O (t_k − t_s)}) τ_ext at every sample, t_s
the sample before the first output. The momentum comes from one of two sources (``momentum``):

* ``positions`` (default): the mean momentum over each step from the joint-position increment,
  p̄_k = ½(M_{k−1} + M_k)(q_k − q_{k−1})/Δt_k, and ū_k the tent-weighted mean of ṗ − β around
  t_{k−1}: (p̄_k − p̄_{k−1} − ∫w β dt) / ½(Δt_{k−1} + Δt_k), w the tent over [t_{k−2}, t_k] and β
  linear between samples. The velocity noise enters only through Cᵀq̇ and friction, and a
  filtered (lagging) velocity does not delay it; position noise σ_q enters as ≈ √2 σ_q/Δt of
  velocity noise: it is the quieter form while σ_q < σ_v Δt/√2. It answers from the third sample.
* ``velocities``: p_k = M_k q̇_k and ū_k = (p_k − p_{k−1} − ∫β dt)/Δt with ∫β by the trapezoid
  rule. Its noise is ≈ K_O ‖M_i‖ σ_v of the velocity noise σ_v. It answers from the second sample.

Either form passes momentum noise to r with a flat gain K_O up to the Nyquist frequency. An
optional second stage (``filter_gain`` K_F) low-passes the output, r_f,k = e^{−K_F Δt} r_f,k−1 +
(1 − e^{−K_F Δt}) r_k: from τ_ext to r_f the observer is then second order,
K_O K_F / ((s + K_O)(s + K_F)), and its momentum noise falls off as K_O K_F / ω above K_F
(white velocity noise sampled at 1 kHz, K_O = 50 /s: ÷3.7 with K_F = 200 /s, for 5 ms more lag).

Units: N·m (N for prismatic joints), s; arrays in ``robot.joint_names`` order. A floating
base is evaluated with the base at rest at the identity pose (joint block only).
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional, Sequence, Union

import numpy as np
import pinocchio as pin

from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.dynamics.friction import FrictionModel
from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.model.model import RobotModel

DEFAULT_GAIN = 50.0
"""Observer gain K_O [1/s]: time constant 20 ms. It sets the noise (∝ K_O) and the settling, not
the detection delay (:mod:`~robot_dynamics.core.contact.detection_delay`)."""

MOMENTUM_SOURCES = ('positions', 'velocities')
DEFAULT_MOMENTUM = 'positions'
"""Where p comes from: joint-position increments (default) or the measured velocities."""

DEFAULT_MAX_GAP = 0.1
"""Longest accepted time between two samples [s]; a longer gap restarts the observer."""


def observer_lag(gain: float, filter_gain: float = 0.0) -> float:
    """How long [s] the observer's output lags a slow external torque: 1/K_O, plus 1/K_F with a
    filter stage (``gain`` K_O, ``filter_gain`` K_F [1/s]; 0: none)."""
    return 1.0 / gain + (1.0 / filter_gain if filter_gain > 0.0 else 0.0)


SETTLE_TIME_CONSTANTS = 5.0
"""Time constants of :func:`outputs_at_gain`'s new stages after which its outputs no longer
carry their start (e^-5: under 1 % of it)."""


def outputs_at_gain(
    stamps: np.ndarray,
    outputs: np.ndarray,
    segment_starts: np.ndarray,
    gain: Union[float, np.ndarray],
    filter_gain: float,
    new_gain: Union[float, np.ndarray],
) -> tuple:
    """What the observer would have output at ``new_gain`` K' [1/s] (a number or one per joint)
    for the same inputs as its ``outputs`` [N·m] (rows: samples in time order at ``stamps`` [s])
    at ``gain`` K_O, its second stage ``filter_gain`` K_F (0: none) kept. Each stage is the
    exact zero-order-hold low-pass y_k = d_k y_{k−1} + (1 − d_k) x_k, d_k = e^{−K Δt_k}, so its
    input x_k = (y_k − d_k y_{k−1}) / (1 − d_k) follows from two consecutive outputs: the mean
    external torques ū are recovered, then low-passed at K'. ``segment_starts`` (a flag per
    row): the observer restarted before that row, whose predecessor is then not its previous
    state. Returns (the outputs at K', settled): each segment's new outputs start from its old
    ones, so the rows within :data:`SETTLE_TIME_CONSTANTS` of the new stages' time constants of
    a segment's start are not settled."""
    stamps, outputs = np.asarray(stamps, dtype=float), np.asarray(outputs, dtype=float)
    steps = np.diff(stamps, prepend=stamps[:1])[:, None]
    unknown = np.asarray(segment_starts, dtype=bool) | (steps[:, 0] <= 0.0)
    unknown[:1] = True
    filters = [filter_gain] if filter_gain > 0.0 else []
    inputs = outputs
    for index, stage in enumerate(reversed([gain] + filters)):  # the output's stage first
        if index:  # the input of the stage before needs two known rows of this stage's input
            unknown |= np.concatenate([[True], unknown[:-1]])
        decay = np.exp(-np.asarray(stage, dtype=float) * steps)
        previous = np.vstack([inputs[:1], inputs[:-1]])
        with np.errstate(divide='ignore', invalid='ignore'):  # rows of zero step: unknown
            inputs = (inputs - decay * previous) / (1.0 - decay)
    decays = [np.exp(-np.asarray(stage, dtype=float) * steps) for stage in [new_gain] + filters]
    result, since = np.empty_like(outputs), np.empty(len(stamps))
    states, start = [], -math.inf
    for k in range(len(stamps)):
        if unknown[k]:
            states, start = [outputs[k].copy() for _ in decays], stamps[k]
        else:
            value = inputs[k]
            for stage, decay in enumerate(decays):
                value = states[stage] = decay[k] * states[stage] + (1.0 - decay[k]) * value
        result[k], since[k] = states[-1], stamps[k] - start
    settle = SETTLE_TIME_CONSTANTS * observer_lag(float(np.min(new_gain)), filter_gain)
    return result, since >= settle


def quieter_momentum_source(thresholds: dict) -> str:
    """The source (a key of ``thresholds``: source → calibrated thresholds [N·m] per joint) whose
    thresholds have the lowest geometric mean over the joints: the quieter residual on this
    robot."""
    return min(thresholds, key=lambda source: float(np.mean(np.log(thresholds[source]))))


STEP_NOISE_FLOOR = 1e-3
"""[N·m] added to both forms' step-to-step RMS in :func:`step_noise_ratio`: below it neither
form is noisy enough to matter."""


def step_noise_ratio(by_positions: np.ndarray, by_velocities: np.ndarray) -> float:
    """How much noisier the position form's residual is than the velocity form's over the same
    samples (rows: samples, columns: joints [N·m]): the geometric mean over the joints of the ratio
    of their step-to-step RMS, each plus :data:`STEP_NOISE_FLOOR`. A contact or a model error
    moves both forms alike; what differs is each form's own noise."""
    positions_steps = np.sqrt(np.mean(np.square(np.diff(by_positions, axis=0)), axis=0))
    velocities_steps = np.sqrt(np.mean(np.square(np.diff(by_velocities, axis=0)), axis=0))
    ratios = (positions_steps + STEP_NOISE_FLOOR) / (velocities_steps + STEP_NOISE_FLOOR)
    return float(np.exp(np.mean(np.log(ratios))))


MOMENTUM_SWITCH_RATIO = 3.0
"""The position form's step-to-step noise over the velocity form's (:func:`step_noise_ratio`)
from which the velocity form is kept (``observer_momentum`` auto)."""


def positions_too_noisy(by_positions: np.ndarray, by_velocities: np.ndarray) -> str:
    """Why the velocity form should be kept over the position form, from both forms' residuals
    over the same samples (rows: samples, columns: joints [N·m]): the reason in words when the
    position form is :data:`MOMENTUM_SWITCH_RATIO` × noisier from step to step, else ''.
    Position increments divided by the stamps' intervals are only as good as the stamps: a
    driver that stamps joint states when it publishes them rather than when it samples them
    makes the position form unusable. Fewer than 2 samples: ''."""
    if len(by_positions) < 2:
        return ''
    ratio = step_noise_ratio(by_positions, by_velocities)
    if ratio < MOMENTUM_SWITCH_RATIO:
        return ''
    return (
        f"the positions' residual {ratio:.3g}× noisier from step to step (joint-state stamps that "
        'are not the sampling instants?)'
    )


class ObserverError(RobotDynamicsError):
    """The observer cannot be set up as requested (gain, friction model, sample shape)."""


class MomentumTerms(NamedTuple):
    """The model terms of one sample: M(q) [kg·m²] and β = τ_m − τ_f + Cᵀ q̇ − g [N·m]."""

    mass: np.ndarray
    beta: np.ndarray


class _Sample(NamedTuple):
    """One sample's stamp [s], positions [rad] (positions source), model terms and (velocities
    source) p = M q̇."""

    stamp: float
    positions: Optional[np.ndarray]
    terms: MomentumTerms
    momentum: Optional[np.ndarray]


class _Step(NamedTuple):
    """One step between two samples (positions source): its length [s], mean momentum p̄
    [N·m·s] and β at its start [N·m]."""

    duration: float
    mean_momentum: np.ndarray
    beta_at_start: np.ndarray


class MomentumObserver:
    """Discrete generalized-momentum observer for one model (one stream; not thread-safe).

    ``gain`` K_O [1/s]: a number, or one per joint. ``friction``: subtracted from the measured
    efforts. ``momentum``: ``'positions'`` (p̄ from joint-position increments) or
    ``'velocities'`` (p = M q̇). ``max_gap`` [s]: a longer time between two samples (or a stamp
    that does not increase) restarts the observer at that sample (r = 0). ``filter_gain`` K_F
    [1/s]: the output's second low-pass stage (0: none, r is the output).
    """

    def __init__(
        self,
        robot: RobotModel,
        gain: Union[float, Sequence[float]] = DEFAULT_GAIN,
        friction: Optional[FrictionModel] = None,
        max_gap: float = DEFAULT_MAX_GAP,
        momentum: str = DEFAULT_MOMENTUM,
        filter_gain: float = 0.0,
    ):
        gains = (
            np.broadcast_to(np.asarray(gain, dtype=float), (robot.num_joints,)).copy()
            if np.ndim(gain) == 0
            else np.asarray(gain, dtype=float)
        )
        if gains.shape != (robot.num_joints,) or not np.all(np.isfinite(gains) & (gains > 0.0)):
            raise ObserverError(
                f'observer gain must be a positive number [1/s] (or one per joint), got {gain!r}'
            )
        if friction is not None and tuple(friction.joint_names) != robot.joint_names:
            raise ObserverError('friction model joints are not the model joints')
        if not 0.0 < max_gap < math.inf:
            raise ObserverError(f'max_gap must be a positive time [s], got {max_gap!r}')
        if momentum not in MOMENTUM_SOURCES:
            raise ObserverError(
                f"observer momentum must be one of {', '.join(MOMENTUM_SOURCES)}, got {momentum!r}"
            )
        if not 0.0 <= filter_gain < math.inf:
            raise ObserverError(
                f'observer filter gain must be 0 (none) or a positive number [1/s], got '
                f'{filter_gain!r}'
            )
        self.robot = robot
        self.gain = gains
        self.filter_gain = float(filter_gain)
        self.friction = friction
        self.max_gap = float(max_gap)
        self.momentum = momentum
        # pinocchio's model and data where the joint vectors are its q and v (no mapping)
        direct = robot.joint_space_model()
        self._pinocchio = None if direct is None else (direct.model, direct.data)
        self._joints = slice(robot.base_dofs, None)
        self._uniform_gain = float(gains[0]) if np.all(gains == gains[0]) else None
        self._crba_fills_lower = direct is not None and _crba_fills_lower_triangle(direct)
        self._continuous = np.array(
            [joint.nq == 2 for joint in robot.joints if not joint.is_mimic], dtype=bool
        )
        self._any_continuous = bool(self._continuous.any())
        self.restarts = 0
        self.last_restart_reason = 'no sample yet'
        self.outputs_since_restart = 0
        """Outputs given since the observer last restarted (1: the last output was the first)."""
        self.reset('first sample')

    def reset(self, reason: str = 'reset') -> None:
        """Forget the history: the next sample restarts the observer (r = 0)."""
        self._previous: Optional[_Sample] = None
        self._last_step: Optional[_Step] = None
        self.residual = np.zeros(self.robot.num_joints)
        self.filtered = np.zeros(self.robot.num_joints)
        self._pending_reason = reason

    @property
    def running(self) -> bool:
        """True once a sample has started the observer (it answers from the next one with
        velocities, from the one after with positions)."""
        return self._previous is not None

    def terms(
        self,
        positions: np.ndarray,
        velocities: np.ndarray,
        efforts: np.ndarray,
        gravity: Optional[np.ndarray] = None,
    ) -> MomentumTerms:
        """M(q) and β = τ_m − τ_f + C(q, q̇)ᵀ q̇ − g(q) at one sample (joint order); ``gravity``:
        g(q) of this model at ``positions`` when the caller has it [N·m]."""
        mass, coriolis_transposed_velocities = self._mass_and_coriolis(positions, velocities)
        if gravity is None:
            gravity = self._gravity(positions)
        beta = efforts + coriolis_transposed_velocities - gravity
        if self.friction is not None:
            beta -= self.friction.torques(velocities)
        return MomentumTerms(mass, beta)

    def _mass_and_coriolis(self, positions: np.ndarray, velocities: np.ndarray) -> tuple:
        """M(q) and C(q, q̇)ᵀ q̇ of the joints."""
        if self._pinocchio is not None:
            model, data = self._pinocchio
            q, v = np.asarray(positions, dtype=float), np.asarray(velocities, dtype=float)
            mass = pin.crba(model, data, q)
            if not self._crba_fills_lower:  # pinocchio < 3 fills the upper triangle only
                mass = np.triu(mass) + np.triu(mass, 1).T
            coriolis = pin.computeCoriolisMatrix(model, data, q, v)
            return mass.copy(), coriolis.T @ v
        robot, joints = self.robot, self._joints
        q, v = robot.configuration(positions), robot.tangent(velocities)
        return (
            dynamics.mass_matrix(robot, q)[joints, joints],
            dynamics.coriolis_matrix(robot, q, v)[joints, joints].T @ velocities,
        )

    def _gravity(self, positions: np.ndarray) -> np.ndarray:
        """g(q) of the joints."""
        if self._pinocchio is not None:
            model, data = self._pinocchio
            return pin.computeGeneralizedGravity(model, data, np.asarray(positions, dtype=float))
        robot = self.robot
        return dynamics.gravity_torques(robot, robot.configuration(positions))[self._joints]

    def update(
        self,
        stamp: float,
        positions: np.ndarray,
        velocities: np.ndarray,
        efforts: np.ndarray,
        terms: Optional[MomentumTerms] = None,
    ) -> Optional[np.ndarray]:
        """Take one sample (stamp [s], q [rad], q̇ [rad/s], measured τ [N·m]); returns r [N·m]
        (r_f with a filter stage; a new array), or None while this sample (re)starts the
        observer. ``terms``: this sample's :meth:`terms` when already computed (by an observer of
        the same model)."""
        terms = self.terms(positions, velocities, efforts) if terms is None else terms
        if self.momentum == 'velocities':
            sample = _Sample(float(stamp), None, terms, terms.mass @ velocities)
        else:
            sample = _Sample(float(stamp), np.array(positions, dtype=float), terms, None)
        previous, self._previous = self._previous, sample
        if previous is None:
            self._restarted(self._pending_reason)
            return None
        step = sample.stamp - previous.stamp
        if not 0.0 < step <= self.max_gap:
            self._restarted(f'time step {step:.3g} s is not in (0, {self.max_gap:g}] s')
            return None
        if self.momentum == 'velocities':
            mean_external = (
                sample.momentum
                - previous.momentum
                - 0.5 * step * (sample.terms.beta + previous.terms.beta)
            ) / step
        else:
            mean_external = self._mean_external_from_positions(previous, sample, step)
            if mean_external is None:
                return None
        decay = (
            math.exp(-self._uniform_gain * step)
            if self._uniform_gain is not None
            else np.exp(-self.gain * step)
        )
        mean_external *= 1.0 - decay  # a new array: updated in place
        mean_external += decay * self.residual
        self.residual = mean_external
        self.outputs_since_restart += 1
        if self.filter_gain == 0.0:
            return mean_external.copy()
        kept = math.exp(-self.filter_gain * step)
        self.filtered *= kept
        self.filtered += (1.0 - kept) * mean_external
        return self.filtered.copy()

    def _mean_external_from_positions(
        self, previous: _Sample, sample: _Sample, step: float
    ) -> Optional[np.ndarray]:
        """ū around t_{k−1}: the tent-weighted mean of ṗ − β over the last two steps, with p̄
        from position increments; None at the first step after a restart."""
        increment = sample.positions - previous.positions
        if self._any_continuous:
            increment[self._continuous] = (
                np.remainder(increment[self._continuous] + math.pi, 2 * math.pi) - math.pi
            )
        mean_momentum = (previous.terms.mass + sample.terms.mass) @ increment
        mean_momentum *= 0.5 / step
        earlier, self._last_step = self._last_step, _Step(step, mean_momentum, previous.terms.beta)
        if earlier is None:
            return None
        before = earlier.duration
        # ∫ w β dt with β linear between samples: the tent's weights on β_{k−2}, β_{k−1}, β_k
        weighted_beta = (
            (before / 6.0) * earlier.beta_at_start
            + ((before + step) / 3.0) * previous.terms.beta
            + (step / 6.0) * sample.terms.beta
        )
        mean_external = mean_momentum - earlier.mean_momentum
        mean_external -= weighted_beta
        mean_external *= 2.0 / (before + step)
        return mean_external

    def _restarted(self, reason: str) -> None:
        self.residual = np.zeros(self.robot.num_joints)
        self.filtered = np.zeros(self.robot.num_joints)
        self._last_step = None
        self.restarts += 1
        self.outputs_since_restart = 0
        self.last_restart_reason = reason


def _crba_fills_lower_triangle(robot: RobotModel) -> bool:
    """True when this pinocchio's ``crba`` returns the whole symmetric M (pinocchio ≥ 3), not its
    upper triangle."""
    q = pin.randomConfiguration(robot.model, -np.ones(robot.model.nq), np.ones(robot.model.nq))
    mass = pin.crba(robot.model, robot.data, q)
    return bool(
        np.allclose(mass, mass.T, rtol=0.0, atol=1e-12 * max(1.0, float(np.abs(mass).max())))
    )


def external_torques_from_inverse_dynamics(
    measured_minus_model: Optional[np.ndarray],
) -> Optional[np.ndarray]:
    """τ_ext = M q̈ + C q̇ + g − τ_m [N·m] from the inverse-dynamics route's τ_m − τ_model
    (:class:`~robot_dynamics.core.streams.live_torques.TorqueSample` ``residual``): the torques the
    environment applies to the robot, J(q)ᵀ F, the sign the observer's r has."""
    return None if measured_minus_model is None else -measured_minus_model
