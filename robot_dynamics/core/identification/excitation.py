"""Exciting trajectories for identification: finite Fourier series (Swevers et al. 1997).

Per joint j, with ω_f = 2π·f_f the base frequency [rad/s] and L harmonics:
    q_j(t)  = q0_j + s Σ_k [a_jk/(kω_f) sin(kω_f t) − b_jk/(kω_f) cos(kω_f t)]      [rad]
    q̇_j(t)  = s Σ_k [a_jk cos(kω_f t) + b_jk sin(kω_f t)]                            [rad/s]
    q̈_j(t)  = s Σ_k kω_f [−a_jk sin(kω_f t) + b_jk cos(kω_f t)]                      [rad/s²]
The coefficients are constrained so that q̇(0) = q̈(0) = 0 (Σ_k a_jk = 0, Σ_k k b_jk = 0): the
motion starts at rest and, as ``design_excitation`` only accepts whole periods 1/f_f, ends at
rest at its start pose. The scale s is the largest that keeps
position, velocity and acceleration limits at every sample (:func:`fit_to_limits`). A
(1+1) evolution strategy (step ×1.3 on success, ×0.93 on failure) lowers the condition
number of the column-normalised base regressor along the trajectory.

Torque limits (optional, :class:`TorqueLimits`): the predicted joint torques
τ = ID(q, q̇, q̈) of the URDF (plus an expected payload) + friction(q̇) must stay within
``fraction`` × the URDF effort limit at every sample. τ is not linear in s (q moves with s
too), so the largest such s ≤ the kinematic one is found by bisection; during the search on a
coarse subset of the samples, for the result on every sample. When even the motion at rest at
the start pose (s → 0: gravity, payload and friction offset only) exceeds them, no scaling
can meet them and the design is refused with the joint and time named. It knows no
self-collision or contact limit: check the result before running it on a robot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from robot_dynamics.core.dynamics.friction import FrictionModel
from robot_dynamics.core.dynamics.joint_space import inverse_dynamics
from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.identification.whole_robot import (
    ModelTerms,
    base_parameters,
    condition_number,
    extended_regressor,
    parameter_names,
    random_states,
)
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel

TORQUE_SEARCH_SAMPLES = 100
"""Samples the torque limit is checked at during the search (the result: at every sample)."""
TORQUE_SCALE_TOLERANCE = 1e-3
"""Relative width of the bisection bracket on the torque scale s at which the search stops."""


class ExcitationError(RobotDynamicsError):
    """An excitation design request cannot be met (bad limits, durations, joints)."""


class TorqueLimitRefused(ExcitationError):
    """No scaling of the motion keeps the predicted torques within the limits: ``joint`` needs
    ``torque`` [N·m] > ``allowed`` [N·m] at ``time`` [s] even at rest at the start pose."""

    def __init__(self, joint: str, time: float, torque: float, allowed: float, message: str):
        super().__init__(message)
        self.joint, self.time, self.torque, self.allowed = joint, time, torque, allowed


@dataclass(frozen=True)
class ExcitationLimits:
    """Per-joint limits (model joint order): positions [rad], velocity and acceleration
    magnitudes [rad/s, rad/s²]. All finite."""

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray

    def __post_init__(self):
        lower, upper, velocity, acceleration = arrays = [
            np.asarray(value, dtype=float)
            for value in (self.lower, self.upper, self.velocity, self.acceleration)
        ]
        if len({array.shape for array in arrays}) != 1 or lower.ndim != 1:
            raise ExcitationError(
                'lower, upper, velocity and acceleration limits must be vectors of one length'
            )
        if not (
            np.all(np.isfinite(lower)) and np.all(np.isfinite(upper)) and np.all(lower < upper)
        ):
            raise ExcitationError(
                'every lower limit must be finite and below its finite upper limit [rad]: lower '
                f'{lower.tolist()}, upper {upper.tolist()}'
            )
        for name, values, unit in (
            ('velocity', velocity, 'rad/s'),
            ('acceleration', acceleration, 'rad/s²'),
        ):
            if not (np.all(np.isfinite(values)) and np.all(values > 0.0)):
                raise ExcitationError(
                    f'{name} limits must be positive numbers [{unit}], got {values.tolist()}'
                )

    @classmethod
    def from_model(
        cls,
        robot: RobotModel,
        max_acceleration: float = 5.0,
        velocity_fraction: float = 0.8,
        position_margin: float = 0.05,
        default_velocity: float = 1.0,
    ) -> 'ExcitationLimits':
        """URDF limits shrunk by ``position_margin`` (fraction of each range, per side, in
        [0, 0.5)), URDF velocity × ``velocity_fraction`` (in (0, 1]; ``default_velocity``
        [rad/s] where the URDF has none), and ``max_acceleration`` [rad/s², > 0] for every joint.
        Joints without position limits get ±π. Never wider than the URDF's own limits."""
        if not 0.0 <= position_margin < 0.5:
            raise ExcitationError(
                f'position margin must be in [0, 0.5) of each joint range, got {position_margin}'
            )
        if not 0.0 < velocity_fraction <= 1.0:
            raise ExcitationError(
                'velocity fraction must be in (0, 1] of the URDF velocity limit, got '
                f'{velocity_fraction}'
            )
        if not (default_velocity > 0.0 and math.isfinite(default_velocity)):
            raise ExcitationError(
                f'default velocity must be a positive number, got {default_velocity}'
            )
        lower = np.where(np.isfinite(robot.limits.lower), robot.limits.lower, -math.pi)
        upper = np.where(np.isfinite(robot.limits.upper), robot.limits.upper, math.pi)
        span = upper - lower
        if np.any(span <= 0.0):
            bad = [name for name, width in zip(robot.joint_names, span) if width <= 0.0]
            raise ExcitationError(f'joints {bad} have no position range to move in')
        velocity = (
            np.where(_urdf_gives_velocity_limit(robot), robot.limits.velocity, default_velocity)
            * velocity_fraction
        )
        return cls(
            lower + position_margin * span,
            upper - position_margin * span,
            velocity,
            np.full(robot.num_joints, float(max_acceleration)),
        )

    @property
    def center(self) -> np.ndarray:
        return 0.5 * (self.lower + self.upper)


def sample_times(duration: float, rate: float) -> np.ndarray:
    """0, 1/``rate``, ... up to and including ``duration`` [s] (``rate`` in Hz)."""
    return np.arange(int(math.floor(duration * rate + 1e-9)) + 1) / rate


@dataclass(frozen=True)
class FourierTrajectory:
    """A finite Fourier series per joint (module docstring). ``sine``/``cosine`` are the
    scaled velocity amplitudes a_jk, b_jk [rad/s] (n × L); ``offsets`` q0 [rad];
    ``base_frequency`` f_f [Hz]; ``duration`` [s]."""

    joint_names: tuple
    offsets: np.ndarray
    sine: np.ndarray
    cosine: np.ndarray
    base_frequency: float
    duration: float

    @property
    def harmonics(self) -> int:
        return self.sine.shape[1]

    def evaluate(self, times: np.ndarray) -> tuple:
        """(positions, velocities, accelerations), each (N, n), at ``times`` [s]."""
        omega = 2.0 * math.pi * self.base_frequency
        k = np.arange(1, self.harmonics + 1)
        phase = np.outer(np.asarray(times, dtype=float), k * omega)
        sin, cos = np.sin(phase), np.cos(phase)
        positions = (
            self.offsets + sin @ (self.sine / (k * omega)).T - cos @ (self.cosine / (k * omega)).T
        )
        velocities = cos @ self.sine.T + sin @ self.cosine.T
        accelerations = -sin @ (self.sine * k * omega).T + cos @ (self.cosine * k * omega).T
        return positions, velocities, accelerations

    def sample_times(self, rate: float) -> np.ndarray:
        """0, 1/rate, ... up to and including ``duration`` [s]."""
        return sample_times(self.duration, rate)

    def scaled(self, factor: float) -> 'FourierTrajectory':
        return FourierTrajectory(
            self.joint_names,
            self.offsets,
            self.sine * factor,
            self.cosine * factor,
            self.base_frequency,
            self.duration,
        )

    def to_dict(self) -> dict:
        return {
            'joint_names': list(self.joint_names),
            'base_frequency_hz': self.base_frequency,
            'duration': self.duration,
            'harmonics': self.harmonics,
            'offsets': self.offsets.tolist(),
            'sine': self.sine.tolist(),
            'cosine': self.cosine.tolist(),
        }


def rest_constrained(sine: np.ndarray, cosine: np.ndarray) -> tuple:
    """Coefficients with q̇(0) = 0 (Σ_k a_k = 0) and q̈(0) = 0 (Σ_k k b_k = 0), by adjusting
    the first harmonic."""
    sine, cosine = sine.copy(), cosine.copy()
    k = np.arange(1, sine.shape[1] + 1)
    sine[:, 0] = -sine[:, 1:].sum(axis=1)
    cosine[:, 0] = -(cosine[:, 1:] * k[1:]).sum(axis=1)
    return sine, cosine


def limit_scale(
    trajectory: FourierTrajectory, limits: ExcitationLimits, times: np.ndarray
) -> float:
    """The largest s such that the trajectory scaled by s keeps every limit at ``times``."""
    positions, velocities, accelerations = trajectory.evaluate(times)
    excursion = positions - trajectory.offsets
    with np.errstate(divide='ignore'):
        bounds = [
            np.min((limits.upper - trajectory.offsets) / np.max(excursion, axis=0).clip(1e-300)),
            np.min((trajectory.offsets - limits.lower) / np.max(-excursion, axis=0).clip(1e-300)),
            np.min(limits.velocity / np.max(np.abs(velocities), axis=0).clip(1e-300)),
            np.min(limits.acceleration / np.max(np.abs(accelerations), axis=0).clip(1e-300)),
        ]
    return float(min(bounds))


def fit_to_limits(
    trajectory: FourierTrajectory, limits: ExcitationLimits, times: np.ndarray
) -> FourierTrajectory:
    """The trajectory scaled to the largest size the limits allow at ``times``."""
    return trajectory.scaled(limit_scale(trajectory, limits, times) * (1.0 - 1e-9))


def limit_violation(
    trajectory: FourierTrajectory, limits: ExcitationLimits, times: np.ndarray
) -> float:
    """Largest limit excess over ``times`` (≤ 0 when every limit holds) [rad, rad/s or rad/s²]."""
    positions, velocities, accelerations = trajectory.evaluate(times)
    return float(
        max(
            np.max(positions - limits.upper),
            np.max(limits.lower - positions),
            np.max(np.abs(velocities) - limits.velocity),
            np.max(np.abs(accelerations) - limits.acceleration),
        )
    )


@dataclass(frozen=True)
class TorqueMargin:
    """The sample closest to its torque limit: ``joint`` at ``time`` [s] needs ``torque`` [N·m]
    (signed) of ``allowed`` = fraction × ``effort_limit`` [N·m]; ``usage`` = |torque| / allowed
    (≤ 1 when the limit holds) and ``margin`` = allowed − |torque| [N·m]."""

    joint: str
    time: float
    torque: float
    allowed: float
    effort_limit: float

    @property
    def usage(self) -> float:
        return abs(self.torque) / self.allowed

    @property
    def margin(self) -> float:
        return self.allowed - abs(self.torque)

    def to_dict(self) -> dict:
        return {
            'joint': self.joint,
            'time': self.time,
            'torque': self.torque,
            'allowed': self.allowed,
            'effort_limit': self.effort_limit,
            'usage': self.usage,
            'margin': self.margin,
        }


class TorqueLimits:
    """Predicted joint torques [N·m] against ``fraction`` × the URDF effort limits.

    The prediction is the inverse dynamics of its own copy of the URDF model (with ``payload``,
    in ``payload_link``'s frame, attached; a payload attached to ``robot`` itself is not carried
    over) plus ``friction`` torques. Joints without an effort
    limit (none, inf or ≤ 0 in the URDF) are not limited.
    """

    def __init__(
        self,
        robot: RobotModel,
        fraction: float = 0.8,
        payload: Optional[InertialParameters] = None,
        payload_link: Optional[str] = None,
        friction: Optional[FrictionModel] = None,
    ):
        if not (0.0 < fraction <= 1.0):
            raise ExcitationError(
                f'torque fraction must be in (0, 1] of the URDF effort limits, got {fraction}'
            )
        if robot.floating_base:
            raise ExcitationError(
                f'model "{robot.name}" has a floating base: torque limits are for fixed-base arms'
            )
        effort = robot.limits.effort
        self.effort = np.where(np.isfinite(effort) & (effort > 0.0), effort, math.inf)
        if not np.any(np.isfinite(self.effort)):
            raise ExcitationError(
                f'model "{robot.name}" gives no joint an effort limit: there is no torque limit to '
                'keep'
            )
        self.fraction = float(fraction)
        self.allowed = self.fraction * self.effort
        self.prediction = RobotModel(
            robot.description, robot.floating_base, robot.model.gravity.linear
        )
        self.prediction.set_rotor_inertia(robot.rotor_inertia)
        if payload is not None:
            if payload_link is None:
                raise ExcitationError('an expected payload needs the link it is fixed to')
            self.prediction.attach_payload(payload_link, payload)
        self.payload, self.payload_link = payload, payload_link
        self.friction = friction or FrictionModel.none(robot.joint_names)
        if tuple(self.friction.joint_names) != tuple(robot.joint_names):
            raise ExcitationError('the friction model is not for the joints of this model')

    def predicted_torques(
        self, positions: np.ndarray, velocities: np.ndarray, accelerations: np.ndarray
    ) -> np.ndarray:
        """τ = ID(q, q̇, q̈) + friction(q̇) [N·m] (N, n) at samples of positions [rad],
        velocities [rad/s] and accelerations [rad/s²] (N, n)."""
        robot = self.prediction
        torques = np.empty_like(positions)
        for k, (position, velocity, acceleration) in enumerate(
            zip(positions, velocities, accelerations)
        ):
            torques[k] = inverse_dynamics(
                robot,
                robot.configuration(position),
                robot.tangent(velocity),
                robot.tangent(acceleration),
            )
        return torques + self.friction.torques(velocities)

    def to_dict(self) -> dict:
        return {
            'fraction': self.fraction,
            'effort_limits': [float(e) if math.isfinite(e) else None for e in self.effort],
            'payload_link': self.payload_link,
            'payload_mass': self.payload.mass if self.payload is not None else 0.0,
            'payload_com': self.payload.com.tolist() if self.payload is not None else None,
            'friction': self.friction.coefficients() or None,
        }

    def __repr__(self) -> str:
        mass = self.payload.mass if self.payload is not None else 0.0
        return f'TorqueLimits(fraction={self.fraction}, payload={mass:g} kg, {self.friction!r})'


def torque_margin(
    trajectory: FourierTrajectory, torque_limits: TorqueLimits, times: np.ndarray
) -> TorqueMargin:
    """The sample of largest |τ| / allowed over ``times`` [s] and the limited joints."""
    torques = torque_limits.predicted_torques(*trajectory.evaluate(times))
    usage = np.abs(torques) / torque_limits.allowed
    sample, joint = np.unravel_index(int(np.argmax(usage)), usage.shape)
    return TorqueMargin(
        trajectory.joint_names[joint],
        float(times[sample]),
        float(torques[sample, joint]),
        float(torque_limits.allowed[joint]),
        float(torque_limits.effort[joint]),
    )


def fit_to_torque_limits(
    trajectory: FourierTrajectory, torque_limits: TorqueLimits, times: np.ndarray
) -> FourierTrajectory:
    """The trajectory scaled by the largest s ≤ 1 found by bisection whose predicted torques
    keep ``torque_limits`` at ``times`` (module docstring). Raises :class:`TorqueLimitRefused`
    when the start pose at rest already exceeds them."""
    if torque_margin(trajectory, torque_limits, times).usage <= 1.0:
        return trajectory
    at_rest = torque_margin(trajectory.scaled(0.0), torque_limits, times)
    if at_rest.usage > 1.0:
        raise TorqueLimitRefused(
            at_rest.joint,
            at_rest.time,
            at_rest.torque,
            at_rest.allowed,
            f'joint {at_rest.joint} needs {abs(at_rest.torque):.4g} N·m at t = {at_rest.time:g} s, '
            f'more than {torque_limits.fraction:g} × its effort limit {at_rest.effort_limit:g} N·m '
            f'= {at_rest.allowed:.4g} N·m, even at rest at the start pose (gravity, payload and '
            'friction offset): no scaling of the motion can meet the torque limit; lower the '
            'payload, raise the torque fraction or choose other offsets',
        )
    feasible, infeasible = 0.0, 1.0
    while infeasible - feasible > TORQUE_SCALE_TOLERANCE * infeasible:
        middle = 0.5 * (feasible + infeasible)
        if torque_margin(trajectory.scaled(middle), torque_limits, times).usage <= 1.0:
            feasible = middle
        else:
            infeasible = middle
    return trajectory.scaled(feasible)


def _urdf_gives_velocity_limit(robot: RobotModel) -> np.ndarray:
    """Per joint (model order): whether the URDF gives a velocity limit [rad/s]: a finite
    value > 0 (an absent limit reads as inf; 0 is taken as none)."""
    velocity = robot.limits.velocity
    return np.isfinite(velocity) & (velocity > 0.0)


@dataclass(frozen=True)
class ExcitationDesign:
    """Result of :func:`design_excitation`: the trajectory, its condition number before and
    after optimisation, the limits used and the number of ES iterations."""

    trajectory: FourierTrajectory
    initial_condition_number: float
    condition_number: float
    limits: ExcitationLimits
    iterations: int
    accepted: int
    torque_limits: Optional[TorqueLimits] = None
    torque_margin: Optional[TorqueMargin] = None

    def to_dict(self) -> dict:
        result = {
            **self.trajectory.to_dict(),
            'initial_condition_number': self.initial_condition_number,
            'condition_number': self.condition_number,
            'iterations': self.iterations,
            'accepted_steps': self.accepted,
            'limits': {
                'lower': self.limits.lower.tolist(),
                'upper': self.limits.upper.tolist(),
                'velocity': self.limits.velocity.tolist(),
                'acceleration': self.limits.acceleration.tolist(),
            },
        }
        if self.torque_limits is not None:
            result['torque_limits'] = self.torque_limits.to_dict()
            result['worst_torque_margin'] = self.torque_margin.to_dict()
        return result


class _Objective:
    """Condition number of the column-normalised base regressor along a trajectory.

    The base set is that of the model with the joints outside ``moving`` held at their
    offsets, so that parameters no moving joint can excite do not count.
    """

    def __init__(
        self,
        robot: RobotModel,
        terms: ModelTerms,
        times: np.ndarray,
        evaluation_samples: int,
        moving: np.ndarray,
        offsets: np.ndarray,
    ):
        self.robot, self.terms = robot, terms
        self.evaluation_times = np.linspace(times[0], times[-1], evaluation_samples)
        positions, velocities, accelerations = random_states(robot, 80, seed=0)
        positions[:, ~moving] = offsets[~moving]
        velocities[:, ~moving] = accelerations[:, ~moving] = 0.0
        full = extended_regressor(robot, positions, velocities, accelerations, terms)
        self.base = base_parameters(full, parameter_names(robot, terms))

    def __call__(self, trajectory: FourierTrajectory) -> float:
        positions, velocities, accelerations = trajectory.evaluate(self.evaluation_times)
        full = extended_regressor(self.robot, positions, velocities, accelerations, self.terms)
        return condition_number(self.base.regressor(full))


def design_excitation(
    robot: RobotModel,
    duration: float,
    harmonics: int = 5,
    base_frequency: float = 0.1,
    limits: Optional[ExcitationLimits] = None,
    offsets: Optional[Sequence[float]] = None,
    iterations: int = 200,
    seed: int = 0,
    rate: float = 100.0,
    evaluation_samples: int = 120,
    terms: ModelTerms = ModelTerms(),
    joints: Optional[Sequence[str]] = None,
    torque_limits: Optional[TorqueLimits] = None,
) -> ExcitationDesign:
    """Optimise a rest-to-rest Fourier excitation for the model's joints (module docstring).

    ``duration`` [s] (a whole number of base periods 1/f_f, see :func:`whole_periods`),
    ``base_frequency`` f_f [Hz], ``rate`` [Hz] of the samples the limits are
    checked at, ``offsets`` q0 [rad] (default: the middle of each joint's range),
    ``evaluation_samples``: samples of the regressor used for the condition number;
    ``joints``: the joints that move (default all; the others stay at their offsets).
    ``limits`` must lie within the URDF's own position and velocity limits; ``torque_limits``
    (optional) also keeps the predicted torques within them at every sample (module docstring).
    """
    check_design_arguments(
        duration, harmonics, base_frequency, rate, iterations, seed, evaluation_samples
    )
    limits = limits or ExcitationLimits.from_model(robot)
    _check_within_urdf(robot, limits)
    centre = _checked_offsets(robot, limits, offsets)
    moving = _moving_mask(robot, joints)
    times = sample_times(duration, rate)
    objective = _Objective(robot, terms, times, evaluation_samples, moving, centre)
    candidate = _candidate_maker(
        robot, limits, centre, moving, base_frequency, duration, times, torque_limits
    )
    search = _evolve(candidate, objective, seed, (robot.num_joints, harmonics), iterations)
    if torque_limits is None:
        return ExcitationDesign(
            search.best, search.initial, search.value, limits, iterations, search.accepted
        )
    best = fit_to_torque_limits(search.best, torque_limits, times)
    return ExcitationDesign(
        best,
        search.initial,
        objective(best),
        limits,
        iterations,
        search.accepted,
        torque_limits,
        torque_margin(best, torque_limits, times),
    )


def _checked_offsets(
    robot: RobotModel, limits: ExcitationLimits, offsets: Optional[Sequence[float]]
) -> np.ndarray:
    """q0 [rad]: ``offsets``, or the middle of each joint's range in ``limits``; refused unless
    one value per joint strictly inside the limits."""
    centre = limits.center if offsets is None else np.asarray(offsets, dtype=float)
    if (
        centre.shape != (robot.num_joints,)
        or np.any(centre <= limits.lower)
        or np.any(centre >= limits.upper)
    ):
        raise ExcitationError(
            f'offsets {centre.tolist()} must be one value per joint strictly inside the limits'
        )
    return centre


def _candidate_maker(
    robot: RobotModel,
    limits: ExcitationLimits,
    centre: np.ndarray,
    moving: np.ndarray,
    base_frequency: float,
    duration: float,
    times: np.ndarray,
    torque_limits: Optional[TorqueLimits],
) -> Callable[[np.ndarray, np.ndarray], FourierTrajectory]:
    """A function (sine, cosine) → the candidate trajectory of those raw coefficients (n × L):
    zero for joints outside ``moving``, made rest-to-rest (:func:`rest_constrained`), scaled to
    ``limits`` at ``times`` [s] and, with ``torque_limits``, to those at about
    :data:`TORQUE_SEARCH_SAMPLES` of ``times``."""
    search_times = times[:: max(1, len(times) // TORQUE_SEARCH_SAMPLES)]

    def candidate(sine, cosine):
        sine, cosine = rest_constrained(sine * moving[:, None], cosine * moving[:, None])
        raw = FourierTrajectory(robot.joint_names, centre, sine, cosine, base_frequency, duration)
        fitted = fit_to_limits(raw, limits, times)
        return (
            fitted
            if torque_limits is None
            else fit_to_torque_limits(fitted, torque_limits, search_times)
        )

    return candidate


@dataclass(frozen=True)
class _Evolution:
    """Outcome of :func:`_evolve`: the ``best`` trajectory, the objective of the random start
    (``initial``) and of ``best`` (``value``), and the number of ``accepted`` steps."""

    best: FourierTrajectory
    initial: float
    value: float
    accepted: int


def _evolve(
    candidate: Callable[[np.ndarray, np.ndarray], FourierTrajectory],
    objective: _Objective,
    seed: int,
    shape: tuple,
    iterations: int,
) -> _Evolution:
    """(1+1) evolution strategy on the raw coefficients (sine, cosine), each of ``shape``
    (module docstring): a start uniform in ±1, ``iterations`` Gaussian steps from step size
    0.3, ×1.3 after a step that lowers the objective, ×0.93 after one that does not."""
    rng = np.random.default_rng(seed)
    coefficients = rng.uniform(-1.0, 1.0, (2,) + shape)
    best = candidate(*coefficients)
    best_value = initial = objective(best)
    step, accepted = 0.3, 0
    for _ in range(iterations):
        trial_coefficients = coefficients + step * rng.standard_normal(coefficients.shape)
        trial = candidate(*trial_coefficients)
        value = objective(trial)
        if value < best_value:
            coefficients, best, best_value, accepted = (
                trial_coefficients,
                trial,
                value,
                accepted + 1,
            )
            step *= 1.3
        else:
            step *= 0.93
    return _Evolution(best, initial, best_value, accepted)


MAX_SAMPLES = 10_000_000
"""Most output samples of a design (about 3 hours at 1 kHz; the CSV of a 7-joint arm would take
about 4 GB)."""


SAMPLES_PER_PERIOD = 10
"""Fewest samples per period of the highest harmonic at which a design's limits are checked:
between samples a sinusoid then rises at most 1 − cos(π/10) ≈ 5 % of its amplitude above them."""


def check_design_arguments(
    duration: float,
    harmonics: int,
    base_frequency: float,
    rate: float,
    iterations: int = 0,
    seed: int = 0,
    evaluation_samples: int = 2,
) -> None:
    """Raises :class:`ExcitationError` unless ``duration`` [s], ``base_frequency`` [Hz] and
    ``rate`` [Hz] are positive finite numbers with a whole number of periods
    (:func:`whole_periods`) and at most :data:`MAX_SAMPLES` samples, ``rate`` at least
    :data:`SAMPLES_PER_PERIOD` samples per period of the highest harmonic, ``harmonics`` ≥ 2,
    ``iterations`` and ``seed`` ≥ 0 and ``evaluation_samples`` ≥ 2: the arguments
    :func:`design_excitation` checks first. Cheap (no model), so a CLI can check
    its options before loading one."""
    if not all(value > 0.0 and math.isfinite(value) for value in (duration, base_frequency, rate)):
        raise ExcitationError(
            f'duration ({duration} s), base frequency ({base_frequency} Hz) and rate ({rate} Hz) '
            'must be positive finite numbers'
        )
    whole_periods(duration, base_frequency)
    if duration * rate > MAX_SAMPLES:
        raise ExcitationError(
            f'{duration:g} s at {rate:g} Hz is {duration * rate:.3g} samples, more than the '
            f'{MAX_SAMPLES:.0e} a design writes: shorten the duration or lower the rate'
        )
    if harmonics < 2:
        raise ExcitationError(
            f'need at least 2 harmonics for a rest-to-rest motion, got {harmonics}'
        )
    highest = harmonics * base_frequency
    if rate < SAMPLES_PER_PERIOD * highest:
        raise ExcitationError(
            f'rate {rate:g} Hz is under {SAMPLES_PER_PERIOD} samples per period of the highest '
            f'harmonic ({harmonics} × {base_frequency:g} Hz = {highest:g} Hz): the limits are '
            'checked at the samples, and between them the motion could break them; raise the '
            'rate or lower the harmonics or the base frequency'
        )
    if iterations < 0 or seed < 0 or evaluation_samples < 2:
        raise ExcitationError(
            f'iterations ({iterations}) and seed ({seed}) must be ≥ 0 and evaluation samples '
            f'({evaluation_samples}) ≥ 2'
        )


def whole_periods(duration: float, base_frequency: float) -> int:
    """The number of base periods in ``duration`` [s] at ``base_frequency`` [Hz]; raises
    :class:`ExcitationError` unless it is a whole number ≥ 1 (within 1e-9): only then does
    the rest-to-rest series also end at rest at its start pose."""
    periods = duration * base_frequency
    nearest = round(periods)
    if nearest >= 1 and abs(periods - nearest) <= 1e-9:
        return int(nearest)
    candidates = sorted({max(1, math.floor(periods)), max(1, math.ceil(periods))})
    valid = ' or '.join(f'{count / base_frequency:g} s' for count in candidates)
    raise ExcitationError(
        f'duration {duration:g} s is {periods:.6g} periods of the base frequency '
        f'{base_frequency:g} Hz: the motion ends at rest only after whole periods; use a duration '
        f'of {valid}, or a base frequency of a whole multiple of {1.0 / duration:g} Hz'
    )


def _check_within_urdf(robot: RobotModel, limits: ExcitationLimits) -> None:
    """Refuse design limits wider than the URDF's own position and velocity limits."""
    if limits.lower.shape != (robot.num_joints,):
        raise ExcitationError(
            f'limits for {limits.lower.shape[0]} joints, model "{robot.name}" has '
            f'{robot.num_joints}'
        )
    lower, upper, velocity = robot.limits.lower, robot.limits.upper, robot.limits.velocity
    with np.errstate(invalid='ignore'):
        wide = (
            (np.isfinite(lower) & (limits.lower < lower))
            | (np.isfinite(upper) & (limits.upper > upper))
            | (_urdf_gives_velocity_limit(robot) & (limits.velocity > velocity))
        )
    if np.any(wide):
        bad = [name for name, flag in zip(robot.joint_names, wide) if flag]
        raise ExcitationError(
            f'the excitation limits of joints {bad} are wider than the URDF limits'
        )


def _moving_mask(robot: RobotModel, joints: Optional[Sequence[str]]) -> np.ndarray:
    if joints is None:
        return np.ones(robot.num_joints, dtype=bool)
    unknown = [name for name in joints if name not in robot.joint_names]
    if unknown or not joints:
        raise ExcitationError(
            f'joints {unknown or "(none)"} are not joints of model "{robot.name}" (it has '
            f'{list(robot.joint_names)})'
        )
    return np.array([name in joints for name in robot.joint_names])


def joint_trajectory(
    trajectory: FourierTrajectory, rate: float = 100.0, lead_in: float = 3.0
) -> dict:
    """A trajectory_msgs/JointTrajectory as plain data (ROS 2 message field names).

    Point k is at ``time_from_start = lead_in + k/rate`` [s]: the first point is the
    trajectory's start pose at rest, reached from wherever the robot is during the
    ``lead_in``; positions [rad], velocities [rad/s], accelerations [rad/s²].
    """
    times = trajectory.sample_times(rate)
    positions, velocities, accelerations = trajectory.evaluate(times)
    points = []
    for time, position, velocity, acceleration in zip(times, positions, velocities, accelerations):
        nanoseconds = int(round((lead_in + time) * 1e9))
        points.append(
            {
                'positions': position.tolist(),
                'velocities': velocity.tolist(),
                'accelerations': acceleration.tolist(),
                'effort': [],
                'time_from_start': {'sec': nanoseconds // 10**9, 'nanosec': nanoseconds % 10**9},
            }
        )
    return {
        'header': {'stamp': {'sec': 0, 'nanosec': 0}, 'frame_id': ''},
        'joint_names': list(trajectory.joint_names),
        'points': points,
    }
