"""Live dynamics of one joint-state stream: everything dynamics_node publishes for each message.

:class:`LiveDynamics` is built from a :class:`~robot_dynamics.core.model.model.RobotModel` and one
:class:`~robot_dynamics.core.live.settings.LiveSettings`. For each joint-state sample
:meth:`LiveDynamics.update` returns one :class:`LiveResult`, computed in stages that
dynamics_node interleaves with its publications (each output is sent as soon as its stage is
done, so the torques do not wait for the observer, nor τ_ext for the contact detection), then
records the sample once every output is sent:

1. :meth:`LiveDynamics.torques`: the sample merged by name into model order (stale joints: no
   result yet), efforts converted to joint torques (``effort_model``), q̈ estimated, then
   (:class:`~robot_dynamics.core.streams.live_torques.LiveTorqueEstimator`) gravity g(q), inverse
   dynamics ID = M(q) q̈ + C(q, q̇) q̇ + g(q) and the residual τ_measured − ID. A known external
   wrench F (:meth:`LiveDynamics.take_known_wrench`) is taken off: ID − Jᵀ(q) F and
   residual + Jᵀ F. With ``contact_frames`` the feet's ground forces are estimated from the
   residual (:class:`~robot_dynamics.core.floating_base.foot_forces.FootForceEstimator`) and
   their share taken off ID: ID − Σ J_cᵀ f_c, what the motors of a standing robot apply.
2. :meth:`LiveDynamics.external_torques`: the external torques τ_ext = Jᵀ F_ext the environment
   applies, by one of two routes (``external_torque_method``): ``observer``, the
   generalized-momentum observer's r (De Luca & Mattone 2005; a first-order low-pass of τ_ext,
   no q̈ needed; :class:`~robot_dynamics.core.contact.momentum_observer.MomentumObserver`), or
   ``inverse_dynamics``, −residual = ID − τ_measured.
3. :meth:`LiveDynamics.result`: contact detection on τ_ext (thresholds given or calibrated:
   :class:`~robot_dynamics.core.contact.contact_detection.ContactDetector`) and the external
   wrench at ``wrench_frame`` when the caller asks for it
   (:class:`~robot_dynamics.core.contact.external_wrench.WrenchEstimator`); during a raised
   contact, with ``wrench_reference`` ``contact_onset``, of τ_ext less the contact's baseline,
   τ_ext just before it began
   (:attr:`~robot_dynamics.core.contact.contact_detection.ContactDetector.baseline`).
4. :meth:`LiveDynamics.record`: τ_ext appended to the residual history the thresholds are
   calibrated from, the second momentum observer of ``observer_momentum`` auto updated (it
   competes with the first at the calibration; it publishes nothing) and the sample appended to
   the payload recording. :meth:`external_torques` records the previous sample first when the
   caller did not.

Units and frames: joint torques in N·m (N for prismatic joints), joint space, in
``robot.joint_names`` order; stamps in seconds; the wrench in ``wrench_frame`` at its origin. A
floating-base model is evaluated with the base at rest at the identity pose (joint part only)
unless ``base_state`` gives its tilt and motion.

Threads: :meth:`update` (or its stages), :meth:`take_known_wrench` and :meth:`effective_mass`
run on the stream's thread; :meth:`calibrate_thresholds` on a service thread (it copies the
residual history under a lock and installs a new detector by one reference assignment);
:meth:`with_model` and :meth:`with_payload` build a successor on any thread, which the caller
installs by one reference assignment and never mutates after. What a successor takes over —
the joint-state merger, the thresholds and the observer's momentum source (same joints), the
known wrench, the recording — is handed over by reference; the observer, detector, residual
history and wrench estimator are new (an observer restarts on a model swap).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, NamedTuple, Optional, Sequence

import numpy as np

from robot_dynamics.core.contact.contact_detection import (
    MIN_CALIBRATION_SAMPLES,
    ContactCalibrationError,
    ContactDetector,
    ContactUpdate,
    ResidualHistory,
    ThresholdError,
    calibrated_thresholds,
    check_below_effort_limits,
    checked_thresholds,
)
from robot_dynamics.core.contact.contact_profiles import (
    SHIPPED_PROFILES,
    ContactProfile,
    ContactProfileError,
    load_profiles,
)
from robot_dynamics.core.contact.external_wrench import (
    ObservedPositions,
    WrenchEstimate,
    WrenchEstimator,
)
from robot_dynamics.core.contact.momentum_observer import (
    DEFAULT_MOMENTUM,
    MomentumObserver,
    MomentumTerms,
    external_torques_from_inverse_dynamics,
    observer_lag,
    outputs_at_gain,
    positions_too_noisy,
    quieter_momentum_source,
)
from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.dynamics.base_motion import BaseMotion, MovingBaseTorques
from robot_dynamics.core.dynamics.friction import FrictionModel, load_friction_file
from robot_dynamics.core.dynamics.joint_reactions import KnownWrench
from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.floating_base.contact_frame_choice import (
    choice_words,
    chosen_contact_frames,
)
from robot_dynamics.core.floating_base.foot_forces import FootForceEstimator, FootForces
from robot_dynamics.core.identification.payload import default_payload_link
from robot_dynamics.core.live.effective_mass_reading import (
    EffectiveMassReading,
    effective_mass_reading,
)
from robot_dynamics.core.live.effort_offsets import (
    SAMPLE_PERIOD,
    EffortOffsetsError,
    FootRestPose,
    OffsetEstimate,
    ResidualLevels,
    RestWindow,
    estimate_offsets,
    estimate_offsets_on_feet,
    load_effort_offsets,
)
from robot_dynamics.core.live.filtered_residual import FilteredResidual
from robot_dynamics.core.live.input_findings import (
    FrozenEfforts,
    RestPoseFindings,
    beyond_limits_words,
    effort_scale_words,
    unmeasured_velocities_words,
    velocity_rate_words,
)
from robot_dynamics.core.live.known_wrench import KnownWrenchInput
from robot_dynamics.core.live.settings import HISTORY_MAX_RATE, LiveSettings
from robot_dynamics.core.live.status import ERROR, OK, WARN, LiveStatus, worst
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel, listed_names
from robot_dynamics.core.streams.base_state import (
    BaseState,
    BaseStateError,
    BaseStateUnavailable,
)
from robot_dynamics.core.streams.effort_model import EffortModel, EffortModelError
from robot_dynamics.core.streams.joint_states import (
    EFFORT,
    VELOCITY,
    JointSample,
    JointStateError,
    JointStateMerger,
    repeated_stamp_error,
)
from robot_dynamics.core.streams.live_torques import (
    LiveTorqueEstimator,
    TorqueSample,
)
from robot_dynamics.core.streams.position_jumps import PositionJumps
from robot_dynamics.core.streams.ring_buffer import RingBufferError, SampleRingBuffer
from robot_dynamics.core.streams.velocity_rate import VelocityRate

MOMENTUM_CHECK_PERIOD = 1.0
"""[s] observer_momentum auto, before a calibration: how often, and over how long, the two
momentum forms' residuals are compared."""
MOMENTUM_CHECK_SAMPLES = 50
"""Fewest samples of each form in a comparison."""
EFFORT_DELAY_MISMATCH = 0.0005
"""[s] How far ``effort_delay`` may be from the one a friction file's model was identified
with before the status says so (half a sample at 1 kHz)."""


@dataclass(frozen=True)
class HalfGainThresholds:
    """The thresholds [N·m] the same motion gives at half the observer gain (``gain`` [1/s],
    its ``lag`` and the gain in use's ``lag_in_use`` [s]): the observer's noise falls with its
    gain, a model error does not. ``ratio``: their geometric mean over the calibrated ones."""

    gain: float
    thresholds: np.ndarray
    ratio: float
    lag: float
    lag_in_use: float

    def words(self) -> str:
        return (
            f'; the same motion at observer_gain {self.gain:g} (lag {1e3 * self.lag:.0f} ms, '
            f'against {1e3 * self.lag_in_use:.0f}) gives thresholds {self.ratio:.2f} x these'
        )


@dataclass(frozen=True)
class Thresholds:
    """Contact thresholds [N·m per joint] for ``joint_names``, ``'given'`` or ``'calibrated'``
    (then, where known, what half the observer gain makes them: ``half_gain``)."""

    joint_names: tuple
    values: np.ndarray
    source: str
    half_gain: Optional[HalfGainThresholds] = None


@dataclass(frozen=True)
class ThresholdCalibration:
    """A calibration's thresholds [N·m] (``joint_names`` order) from ``samples`` residuals of the
    last ``duration`` [s] at ``sigma``; with ``observer_momentum`` auto, the momentum source kept
    (``kept_momentum``) and the geometric mean of the velocity thresholds over the position
    ones (``velocity_ratio``); on the observer's route, the thresholds at half its gain
    (``half_gain``, None where the window does not give them); ``at_rest``: no sample of the
    window moved."""

    joint_names: tuple
    thresholds: np.ndarray
    samples: int
    sigma: float
    duration: float
    kept_momentum: Optional[str] = None
    velocity_ratio: Optional[float] = None
    half_gain: Optional[HalfGainThresholds] = None
    at_rest: bool = False

    def summary(self) -> str:
        """One line for the operator."""
        values = ', '.join(
            f'{name} {value:.3g}' for name, value in zip(self.joint_names, self.thresholds)
        )
        choice = (
            f'; observer momentum from {self.kept_momentum} (velocity thresholds '
            f'{self.velocity_ratio:.3g} x those from positions)'
            if self.kept_momentum
            else ''
        )
        slower = '' if self.half_gain is None else self.half_gain.words()
        rest = (
            '; the robot was at rest over the whole window: these are the sensors\' noise alone, '
            'too low for motion (false contacts once it moves): calibrate while it moves as it '
            'will'
            if self.at_rest
            else ''
        )
        return (
            f'contact thresholds ({self.sigma:g} sigma over {self.samples} samples of the last '
            f'{self.duration:g} s, N m): {values}{choice}{slower}{rest}'
        )


@dataclass(frozen=True)
class LiveResult:
    """Everything dynamics_node publishes for one joint state (joint space, ``joint_names``
    order, N·m or N; ``stamp`` [s] of the sample).

    * ``gravity`` g(q) and ``inverse_dynamics`` M(q) q̈ + C(q, q̇) q̇ + g(q) − Jᵀ F_known, and
      with ``contact_frames`` − Σ J_cᵀ f_c of the feet's ground forces (what the motors apply);
    * ``external_torques`` τ_ext = J(q)ᵀ F_ext, the torques the environment applies beyond any
      known wrench, by ``route``: ``'observer'`` (the momentum observer's r) or
      ``'inverse_dynamics'`` (ID − τ_measured); None while efforts or velocities are missing
      (and while the observer starts);
    * ``contact``: the detector's state, per-joint ratios |τ_ext| / threshold and whether this
      sample changed it (None without thresholds or external torques);
    * ``wrench``: the external wrench at ``wrench_frame`` (force [N], moment [N·m] at its origin,
      in its axes), only when asked for;
    * ``known_torques`` Jᵀ F_known of the known wrench in use (None without one);
    * ``problems``: the set-up problems of this model, in words;
    * ``feet``: the ground forces, contacts and centre of pressure of ``contact_frames``, one
      row per entry (an entry the model cannot take: NaN force, no contact; None without them
      or without efforts).
    """

    stamp: float
    joint_names: tuple
    gravity: np.ndarray
    inverse_dynamics: np.ndarray
    external_torques: Optional[np.ndarray]
    route: str
    contact: Optional[ContactUpdate]
    wrench: Optional[WrenchEstimate]
    known_torques: Optional[np.ndarray]
    problems: tuple
    feet: Optional[FootForces] = None


class _Carried:
    """What a LiveDynamics hands to its successors: the thresholds in use, the observer's
    momentum source once chosen, the known wrench and the contact profile in use (each replaced
    by one assignment)."""

    def __init__(self, settings: LiveSettings):
        self.thresholds: Optional[Thresholds] = None
        self.momentum: Optional[str] = (
            None if settings.observer_momentum == 'auto' else settings.observer_momentum
        )
        self.momentum_reason = ''
        self.known_wrench = KnownWrenchInput(settings.known_wrench_timeout)
        self.profile_problem = ''
        try:
            self.profiles = load_profiles(settings.contact_profiles_file)
        except ContactProfileError as error:
            self.profiles, self.profile_problem = dict(SHIPPED_PROFILES), str(error)
        self.offsets: Optional[np.ndarray] = None
        self.rest_poses: list = []
        self.profile = self.profiles.get(settings.contact_profile, SHIPPED_PROFILES['default'])
        if settings.contact_profile not in self.profiles:
            unknown = (
                f'contact_profile {settings.contact_profile!r} unknown (profiles: '
                f'{sorted(self.profiles)}): using default'
            )  # after the file's refusal, which is why it is unknown
            self.profile_problem = '; '.join(filter(None, (self.profile_problem, unknown)))


class LiveDynamics:
    """The live pipeline of one model (module docstring). ``recording``: where complete samples
    with efforts are appended for payload identification (None: nowhere); ``payload_link``:
    the link the payload sits on for a model, the default of ``wrench_frame``,
    ``effective_mass_frame`` and a known wrench's empty frame (read at each use); ``clock``:
    monotonic time [s], for the known wrench's expiry."""

    def __init__(
        self,
        robot: RobotModel,
        settings: LiveSettings = LiveSettings(),
        recording: Optional[SampleRingBuffer] = None,
        payload_link: Callable[[RobotModel], str] = default_payload_link,
        clock: Callable[[], float] = time.monotonic,
        *,
        _carried: Optional[_Carried] = None,
        _merger: Optional[JointStateMerger] = None,
    ):
        self.robot, self.settings, self.recording = robot, settings, recording
        self._recording_gaps: deque = deque()  # (sample index, gap [s]) in the recording
        self._last_recorded = math.inf
        self._payload_link, self._clock = payload_link, clock
        self._carried = _carried if _carried is not None else _Carried(settings)
        problems: list = []
        in_file = self._friction(problems)
        friction = None if in_file is None else self._without_sensor_joints(in_file, problems)
        self._use_rotor_inertia(friction, problems)
        # the motors have their friction whatever the efforts measure: the command gets it all
        self._command_friction = in_file if settings.command_friction else None
        self._command_order = self._command_indices(problems)
        self._set_up_base_motion(problems)
        self._use_effort_offsets(problems)
        self._set_up_rest_tracking()
        self.estimator = LiveTorqueEstimator(
            robot,
            settings.stale_timeout,
            settings.acceleration_mode,
            settings.acceleration_window,
            _merger,
            self._effort_model(problems),
            settings.effort_delay,
        )
        self._set_up_residuals(friction)
        self._wrench = self._wrench_estimator(problems)
        self._observed_positions = None  # the joint state the wrench is solved at
        if self._wrench is not None and self._observer is not None:
            self._observed_positions = ObservedPositions(settings.observer_lag, HISTORY_MAX_RATE)
        self._detector = self._first_detector(problems)
        self.problems = tuple(problems)
        self._set_up_input_checks()
        self._last_wrench: Optional[WrenchEstimate] = None
        self._latest: Optional[TorqueSample] = None
        self._evaluated: Optional[TorqueSample] = None
        self._unrecorded: Optional[tuple] = None  # (torques, τ_ext, alternative, its terms)

    # ------------------------------------------------------------------ set-up
    def _set_up_base_motion(self, problems: list) -> None:
        """The base state input, the moving-base torques it feeds and the feet's estimator."""
        settings, robot = self.settings, self.robot
        self.base_state = BaseState(
            settings.base_state,
            robot,
            robot.model.gravity.linear,
            settings.base_orientation,
            settings.imu_frame,
            settings.max_base_state_age,
            settings.base_state_smoothing,
        )
        self._moving_base = MovingBaseTorques(robot) if settings.base_state != 'none' else None
        self._moving_base_rows: Optional[np.ndarray] = None  # this sample's full RNEA on it
        self._motion = BaseMotion.at_rest(robot.model.gravity.linear)
        self._feet = self._foot_estimator(problems)
        self._last_feet: Optional[FootForces] = None

    def _set_up_rest_tracking(self) -> None:
        """The rest window and residual levels the offsets service and diagnostics read."""
        self._rest = RestWindow(self.robot.num_joints)
        self._moved_at = -math.inf  # stamp [s] of the last sample in motion (not at rest)
        self._residual_levels = ResidualLevels(self.robot.num_joints)
        self._kept_stamp = -math.inf
        self._offsets_checked: Optional[np.ndarray] = None
        self._offsets_nonzero = False
        self._base_problem: Optional[str] = None

    def _set_up_residuals(self, friction: Optional[FrictionModel]) -> None:
        """The observers, the filtered residual and the residual histories contact
        calibration reads."""
        robot, settings = self.robot, self.settings
        self._observer, self._alternative = self._observers(friction)
        # the offsets are measured against the model the outputs use: with the friction file's
        # terms (its own offsets included) when the observer subtracts them
        self._rest_friction = friction if self._observer is not None else None
        self.filtered_residual = (
            FilteredResidual(robot, self._rest_friction)
            if not robot.floating_base and settings.base_state == 'none'
            else None
        )
        """The model's residual as `identify` scores it (fixed, still base only), for
        diagnostics: :mod:`~robot_dynamics.core.live.filtered_residual`."""
        capacity = int(settings.contact_calibration_duration * HISTORY_MAX_RATE)
        self._history = ResidualHistory(capacity, robot.num_joints)
        self._alternative_history = (
            ResidualHistory(capacity, robot.num_joints) if self._alternative else None
        )
        self._lock = threading.Lock()  # history appends (stream) against copies (service)
        self._next_momentum_check = -math.inf
        self._momentum_compared = False  # observer_momentum auto: compared the forms once

    def _set_up_input_checks(self) -> None:
        """The checks on each sample's inputs: missing, all-zero or frozen efforts, position
        jumps, velocity rate and the rest poses noted for the offsets."""
        robot = self.robot
        self._efforts_missing = False
        self.efforts_all_zero = False  # the last sample's efforts were 0.0 on every joint
        self.position_jumps = PositionJumps(robot)
        self.velocity_rate = VelocityRate(robot.num_joints, robot.continuous_joints())
        self._rest_findings = RestPoseFindings(robot, self._payload_link(robot))
        # a fixed base, upright or mounted: g(q) follows the positions alone
        gravity_of_positions = not robot.floating_base and self.settings.base_state in (
            'none',
            'mounting',
        )
        self._notes_rest_poses = gravity_of_positions
        self._frozen_efforts = FrozenEfforts(
            lambda: self.estimator.merger.unreported[EFFORT], judge_gravity=gravity_of_positions
        )

    def _effort_model(self, problems: list) -> Optional[EffortModel]:
        """The effort model in the robot's joints; None (efforts are torques) if it names
        others."""
        effort_model = self.settings.effort_model
        if effort_model is None:
            return None
        try:
            return effort_model.for_joints(self.robot.joint_names)
        except EffortModelError as error:
            problems.append(
                f'effort_model_file not applied to model "{self.robot.name}": {error}; efforts '
                'are taken as joint torques'
            )
            return None

    def _friction(self, problems: list) -> Optional[FrictionModel]:
        path = self.settings.friction_file
        if not path:
            return None
        try:
            friction = load_friction_file(path, self.robot.joint_names)
        except RobotDynamicsError as error:
            problems.append(f'friction not subtracted: {error}')
            return None
        identified_for, delay = friction.effort_delay, self.settings.effort_delay
        if identified_for is not None and abs(identified_for - delay) > EFFORT_DELAY_MISMATCH:
            problems.append(
                f'friction_file {path} is of a model identified with effort_delay '
                f'{identified_for:.4g} s, and this node runs effort_delay {delay:.4g} s: set '
                f'effort_delay {identified_for:.4g} (the identified URDF was fitted for it too)'
            )
        return friction

    def _without_sensor_joints(self, friction: FrictionModel, problems: list) -> FrictionModel:
        """``friction`` with no friction on the joints whose efforts the effort model calls
        link-side torque-sensor readings (kind ``torque``): the motors' friction is not in them.
        Without an effort model the efforts are taken as motor-side and friction applies."""
        effort_model = self.settings.effort_model
        if effort_model is None:
            return friction
        try:
            kinds = effort_model.for_joints(self.robot.joint_names).joints
        except RobotDynamicsError:
            return friction
        sensor = np.array([joint.kind == 'torque' for joint in kinds])
        if not np.any(sensor):
            return friction
        problems.append(
            'friction not subtracted on '
            f'{[n for n, s in zip(self.robot.joint_names, sensor) if s]}: effort_model_file '
            'says their efforts are link-side torque-sensor readings, which the motors\' '
            'friction does not reach'
        )
        keep = np.where(sensor, 0.0, 1.0)
        return replace(
            friction,
            viscous=friction.viscous * keep,
            coulomb=friction.coulomb * keep,
            offset=friction.offset * keep,
            stribeck_static=friction.stribeck_static * keep,
        )

    def _use_rotor_inertia(self, friction: Optional[FrictionModel], problems: list) -> None:
        """Put the rotor inertia in use into the robot's M(q): the ``rotor_inertia`` setting
        when it has a non-zero value, else the friction file's, else none."""
        robot, given = self.robot, np.asarray(self.settings.rotor_inertia, dtype=float)
        values = np.zeros(robot.num_joints)
        if np.any(given):
            values = given
        elif friction is not None:
            values = friction.rotor_inertia
        try:
            robot.set_rotor_inertia(values)
        except RobotDynamicsError as error:
            problems.append(f'rotor inertia not applied: {error}')
            robot.set_rotor_inertia(np.zeros(robot.num_joints))

    def _use_effort_offsets(self, problems: list) -> None:
        """The carried offsets for the same joints, else those of ``effort_offsets_file``."""
        carried, n = self._carried, self.robot.num_joints
        if carried.offsets is not None and len(carried.offsets) == n:
            return
        carried.rest_poses = []
        carried.offsets = np.zeros(n)
        path = self.settings.effort_offsets_file
        if path and Path(path).exists():
            try:
                carried.offsets = load_effort_offsets(path, self.robot.joint_names)
            except EffortOffsetsError as error:
                problems.append(f'effort offsets not applied: {error}')

    def _foot_estimator(self, problems: list) -> Optional[FootForceEstimator]:
        """The feet of the ``contact_frames`` the model can take, the others left out with why
        in ``problems``; None (without them, or a problem in words)."""
        frames, robot = self.settings.contact_frames, self.robot
        self._feet_places: Optional[tuple] = None  # the feet's places in contact_frames
        if not frames:
            return None
        if robot.floating_base:
            choice = chosen_contact_frames(robot, frames)
            if choice.left_out and choice.names:
                problems.append(
                    f'foot forces: {choice_words(robot, choice)}: left out (NaN force, no '
                    f'contact); the feet {" ".join(choice.names)} go on'
                )
                frames, self._feet_places = choice.names, choice.indices
        force = self.settings.foot_contact_force
        try:
            feet = FootForceEstimator(robot, frames, force or None, 0.5 * force if force else None)
        except RobotDynamicsError as error:
            problems.append(f'no foot forces: {error}')
            return None
        for group in feet.unobservable:
            problems.append(
                f'foot forces of {group}: fewer joints than force components, the minimum-norm '
                'split among them is reported (their sum is observable, not each)'
            )
        return feet

    def _command_indices(self, problems: list) -> Optional[np.ndarray]:
        """Model indices of ``command_joints`` in their order (model order when empty); None,
        with the joints named in ``problems``, when the model lacks some or one comes twice."""
        names, wanted = self.robot.joint_names, self.settings.command_joints
        if not wanted:
            return np.arange(len(names))
        missing = [name for name in wanted if name not in names]
        if missing:
            problems.append(
                f'no ~/gravity_command: command_joints names joints model "{self.robot.name}" '
                f'does not have: {missing}'
            )
            return None
        twice = sorted({name for name in wanted if wanted.count(name) > 1})
        if twice:
            problems.append(
                f'no ~/gravity_command: command_joints names {twice} more than once (a '
                "controller's joint list names each joint once)"
            )
            return None
        return np.array([names.index(name) for name in wanted], dtype=int)

    def _observers(self, friction: Optional[FrictionModel]) -> tuple:
        """(observer, alternative): the observer in use and, with observer_momentum auto before a
        calibration chose, the one from velocities beside it; (None, None) for the
        inverse-dynamics route."""
        settings, momentum = self.settings, self._carried.momentum
        if settings.external_torque_method != 'observer':
            return None, None
        gain, filter_gain = settings.observer_gain, settings.observer_filter_gain
        observer = MomentumObserver(
            self.robot,
            gain,
            friction,
            momentum=momentum or DEFAULT_MOMENTUM,
            filter_gain=filter_gain,
        )
        if momentum is not None:
            return observer, None
        return observer, MomentumObserver(
            self.robot, gain, friction, momentum='velocities', filter_gain=filter_gain
        )

    def _wrench_estimator(self, problems: list) -> Optional[WrenchEstimator]:
        settings = self.settings
        frame = settings.wrench_frame or self._payload_link(self.robot)
        try:
            return WrenchEstimator(
                self.robot, frame, settings.wrench_damping, settings.wrench_singular_threshold
            )
        except RobotDynamicsError as error:
            problems.append(f'no external wrench: {error}')
            return None

    def _first_detector(self, problems: list) -> Optional[ContactDetector]:
        """The carried thresholds for the same joints, else the given ones, else none; through
        the contact profile in use."""
        carried, robot = self._carried.thresholds, self.robot
        if self._carried.profile_problem:
            problems.append(self._carried.profile_problem)
        base = None
        if carried is not None and carried.joint_names == robot.joint_names:
            base = carried.values
        elif np.any(self.settings.contact_thresholds):
            try:
                base = checked_thresholds(self.settings.contact_thresholds, robot.num_joints)
            except ThresholdError as error:
                problems.append(f'contact detection off: {error}')
                return None
            self._carried.thresholds = Thresholds(robot.joint_names, base, 'given')
        try:
            return self._new_detector(base)
        except ContactProfileError as error:
            problems.append(f'contact detection off: {error}')
            return None

    def _new_detector(
        self, thresholds: Optional[np.ndarray], profile: Optional[ContactProfile] = None
    ) -> Optional[ContactDetector]:
        """A detector for the given or calibrated ``thresholds`` [N·m] through ``profile``
        (None: the one in use); None when the profile turns detection off or gives none."""
        settings, profile = self.settings, profile or self._carried.profile
        used = profile.thresholds_for(thresholds, self.robot.num_joints)
        if used is None:
            return None
        lag = settings.observer_lag  # the observer's rise, kept out of the baseline
        return ContactDetector(
            used,
            _first_given(profile.min_duration, settings.contact_min_duration),
            _first_given(profile.release_ratio, settings.contact_release_ratio),
            _first_given(profile.release_duration, settings.contact_release_duration),
            baseline_lookback=2.0 * lag,
            baseline_window=lag,
            max_rate=HISTORY_MAX_RATE,
        )

    def check_contact_profile(self, name: str) -> None:
        """Raise :class:`~robot_dynamics.core.contact.contact_profiles.ContactProfileError`
        (with the names there are) unless :meth:`use_contact_profile` can switch to ``name``."""
        self._contact_detector(name)

    def use_contact_profile(self, name: str) -> None:
        """Switch to contact profile ``name`` from the next sample on; raises
        :class:`~robot_dynamics.core.contact.contact_profiles.ContactProfileError` (with the
        names there are) for an unknown one or one that does not fit the model."""
        profile, detector = self._contact_detector(name)
        self._carried.profile = profile
        self._detector = detector

    def _contact_detector(self, name: str) -> tuple:
        """(profile ``name``, the contact detector with it and the thresholds carried)."""
        profile = self._carried.profiles.get(name)
        if profile is None:
            raise ContactProfileError(
                f'no contact profile {name!r}; profiles: {sorted(self._carried.profiles)}'
            )
        carried = self._carried.thresholds
        same = carried is not None and carried.joint_names == self.robot.joint_names
        return profile, self._new_detector(carried.values if same else None, profile)

    @property
    def contact_profile(self) -> ContactProfile:
        """The contact profile in use."""
        return self._carried.profile

    # ------------------------------------------------------------------ successors
    def with_model(
        self, robot: RobotModel, recording: Optional[SampleRingBuffer] = None
    ) -> LiveDynamics:
        """The pipeline for ``robot`` (a new description, or this robot with a payload),
        appending to ``recording`` (None: this one's when the joints are the same, else none).
        It keeps the merger and thresholds when the joints are the same, and always the momentum
        source chosen and the known wrench; its observer starts afresh."""
        same = robot.joint_names == self.robot.joint_names
        if recording is None and same:
            recording = self.recording
        return LiveDynamics(
            robot,
            self.settings,
            recording,
            self._payload_link,
            self._clock,
            _carried=self._carried,
            _merger=self.estimator.merger if same else None,
        )

    def _note_recording_gap(self, stamp: float) -> None:
        """Before the recording takes the sample at ``stamp`` [s]: keep the gap before it when it
        is longer than ``stale_timeout`` (a paused stream, a clock that jumped on)."""
        previous, self._last_recorded = self._last_recorded, stamp
        if stamp - previous > self.settings.stale_timeout:
            self._recording_gaps.append((self.recording.written, stamp - previous))

    def recorded_seconds(self) -> float:
        """Seconds of joint states in the recording [s]: its span less the gaps longer than
        ``stale_timeout`` in it; 0 without a recording or once it is closed (a model swap)."""
        recording, gaps = self.recording, self._recording_gaps
        if recording is None:
            return 0.0
        try:
            span, held, written = recording.duration(), len(recording), recording.written
        except RingBufferError:
            return 0.0
        while gaps and gaps[0][0] <= written - held:  # the sample before it is gone
            gaps.popleft()
        try:
            return max(0.0, span - sum(gap for _, gap in gaps))
        except RuntimeError:  # the stream appended meanwhile (a call from a service thread)
            return span

    def restarted(self) -> LiveDynamics:
        """The pipeline of this model with its stream started afresh, for joint states whose
        time went back (:class:`~robot_dynamics.core.streams.joint_states.TimeWentBack`: a bag
        played in a loop, a simulation reset): a new merger, base state, observer and filters
        (the base state's odometry and IMU are taken from the next ones on); the recording
        cleared; the thresholds, offsets, contact profile and known wrench kept."""
        if self.recording is not None:
            self.recording.clear()
        return LiveDynamics(
            self.robot,
            self.settings,
            self.recording,
            self._payload_link,
            self._clock,
            _carried=self._carried,
        )

    def with_payload(self, link: str, parameters: InertialParameters) -> LiveDynamics:
        """The pipeline for this robot's description with the payload ``parameters`` rigidly
        attached to ``link`` (replacing any payload of the model in use); raises
        :class:`~robot_dynamics.core.errors.PayloadError` when it cannot be attached."""
        robot = self.robot
        loaded = RobotModel(robot.description, robot.floating_base, robot.model.gravity.linear)
        loaded.attach_payload(link, parameters)
        return self.with_model(loaded)

    def without_payload(self) -> LiveDynamics:
        """The pipeline for this robot's description with no payload attached."""
        robot = self.robot
        return self.with_model(
            RobotModel(robot.description, robot.floating_base, robot.model.gravity.linear)
        )

    # ------------------------------------------------------------------ per sample
    def update(self, sample: JointSample, wrench: bool = False) -> Optional[LiveResult]:
        """Take one joint-state sample; its :class:`LiveResult` (``wrench``: estimate the
        external wrench too), or None while some joint has no recent value. Raises
        :class:`~robot_dynamics.core.errors.JointStateError` for an unusable sample."""
        torques = self.torques(sample)
        if torques is None:
            return None
        if torques.inverse_dynamics is None:
            raise repeated_stamp_error(torques.stamp, self.estimator.merger.resent)
        result = self.result(torques, self.external_torques(torques), wrench)
        self.record()
        return result

    def torques(self, sample: JointSample) -> Optional[TorqueSample]:
        """First stage of :meth:`update`: g, ID (with the known wrench taken off) and the
        residual of ``sample``, or None while some joint has no recent value. A sample that
        repeats its joints' stamp gives g only (``inverse_dynamics`` None): the later stages
        are not run for it."""
        torques = self.estimator.update(*sample)
        if torques is None:
            return None
        self.position_jumps.check(torques.stamp, torques.positions)
        if torques.velocities is not None and not self.estimator.velocities_from_positions:
            self.velocity_rate.check(torques.stamp, torques.positions, torques.velocities)
        self.efforts_all_zero = torques.efforts is not None and not torques.efforts.any()
        if self.efforts_all_zero:  # not measured: a driver that fills its effort field with 0
            torques = replace(torques, efforts=None, residual=None)
        if self._moving_base is not None:
            torques = self._on_moving_base(torques)
        if torques.inverse_dynamics is None:
            return torques
        self._frozen_efforts.note(torques)
        if torques.residual is not None:
            unmeasured = self._unmeasured_efforts()
            if len(unmeasured):
                torques = self._with_model_efforts(torques, unmeasured)
            torques = self._without_offsets(torques)
        if self._carried.known_wrench.current is not None:
            torques = self._with_known_wrench(torques)
        if self._feet is not None and torques.residual is not None:
            torques = self._with_foot_forces(torques)
        self._latest = torques
        if self._notes_rest_poses:
            self._rest_findings.note(torques)
        return torques

    def gravity_command(self, torques: TorqueSample) -> Optional[np.ndarray]:
        """The gravity torques g(q) [N·m, N] of ``torques`` (payload included) in the order of
        ``command_joints``, plus with ``command_friction`` the friction file's friction at the
        measured velocities (when the sample has them): the effort a ros2_control effort
        controller adds to hold the robot. None when ``command_joints`` does not fit the model."""
        order = self._command_order
        if order is None:
            return None
        command = torques.gravity
        friction = self._command_friction
        if friction is not None and torques.velocities is not None:
            command = command + friction.torques(torques.velocities)
        return command[order]

    def _on_moving_base(self, torques: TorqueSample) -> TorqueSample:
        """``torques`` with the base's tilt and motion at its stamp
        (:mod:`~robot_dynamics.core.dynamics.base_motion`); raises
        :class:`~robot_dynamics.core.errors.JointStateError` ('base_state_unavailable') while
        the base state is missing or stale: no outputs rather than wrong ones."""
        try:
            motion = self.base_state.motion_at(torques.stamp)
        except BaseStateUnavailable as error:
            self._base_problem = str(error)
            raise JointStateError('base_state_unavailable', str(error)) from None
        self._base_problem = None
        self._motion = motion
        moving_base, q = self._moving_base, torques.positions
        if torques.inverse_dynamics is None:
            return replace(torques, gravity=moving_base.gravity(q, motion))
        # one RNEA on the moving base, base rows kept: the feet balance against them
        full = self._moving_base_rows = moving_base.full_torques(
            q, torques.velocities, torques.accelerations, motion
        )
        inverse_dynamics = moving_base.twin.joint_part(full)
        base_torques = inverse_dynamics - torques.inverse_dynamics
        residual = None if torques.residual is None else torques.residual - base_torques
        return replace(
            torques,
            gravity=moving_base.gravity(q, motion),
            inverse_dynamics=inverse_dynamics,
            residual=residual,
            base_torques=base_torques,
        )

    def _unmeasured_efforts(self) -> np.ndarray:
        """Indices of the joints whose efforts are not measurements: those that report none (a
        gripper's fingers:
        :attr:`~robot_dynamics.core.streams.joint_states.JointStateMerger.unreported`) and
        those whose effort stopped changing (:class:`FrozenEfforts`)."""
        unreported, frozen = self.estimator.merger.unreported[EFFORT], self._frozen_efforts.joints
        return np.union1d(unreported, frozen) if len(frozen) else unreported

    def unmeasured_effort_names(self) -> list:
        """Names of the joints whose efforts are not measurements now (the joints that report
        none, those that stopped changing): their model torques are recorded in their place."""
        return [self.robot.joint_names[i] for i in self._unmeasured_efforts()]

    @staticmethod
    def _with_model_efforts(torques: TorqueSample, missing: np.ndarray) -> TorqueSample:
        """``torques`` with the joints ``missing`` (indices) given their model torque: no
        external torque is seen through them."""
        efforts, residual = torques.efforts.copy(), torques.residual.copy()
        efforts[missing] = torques.inverse_dynamics[missing]
        residual[missing] = 0.0
        return replace(torques, efforts=efforts, residual=residual)

    def _without_offsets(self, torques: TorqueSample) -> TorqueSample:
        """``torques`` with the effort offsets taken off the efforts and the residual; the raw
        residual less the friction file's torques (which the observer subtracts) goes to the rest
        window the offsets are measured from, the corrected one to the residual levels (both
        every :data:`SAMPLE_PERIOD` at most)."""
        stamp = torques.stamp
        kept = not stamp - SAMPLE_PERIOD < self._kept_stamp <= stamp
        if kept:
            self._kept_stamp = stamp
            residual = torques.residual
            if self._rest_friction is not None and torques.velocities is not None:
                residual = residual - self._rest_friction.torques(torques.velocities)
            self._rest.append(stamp, torques.positions, torques.velocities, residual)
        offsets = self._carried.offsets
        if offsets is not self._offsets_checked:  # replaced by one assignment: check it once
            self._offsets_checked, self._offsets_nonzero = offsets, bool(np.any(offsets))
        if self._offsets_nonzero:
            torques = replace(
                torques, efforts=torques.efforts - offsets, residual=torques.residual - offsets
            )
        if kept and not self._residual_levels.add(
            torques.velocities, torques.accelerations, torques.residual
        ):
            self._moved_at = stamp
        return torques

    def zero_effort_offsets(self, payload_link: str) -> OffsetEstimate:
        """Measure the effort offsets at the current rest pose (with the earlier rest poses of
        this model: separated from a payload error when they allow it; with ``contact_frames``,
        from the feet's forces, the feet touching as last estimated) and use them from the next
        sample on. Raises :class:`~robot_dynamics.core.live.effort_offsets.OffsetsRefused` while
        the robot moves, or (standing) while the poses cannot separate the offsets yet."""
        pose = self._rest.rest_pose()
        carried = self._carried
        if self._feet is None:
            estimate = estimate_offsets(self.robot, payload_link, carried.rest_poses + [pose])
            carried.rest_poses = carried.rest_poses + [pose]
        else:  # standing: the feet's forces are unknowns of every pose
            feet = self._last_feet
            touching = (True,) * len(self._feet.frames) if feet is None else feet.contact
            gravity = self._gravity_in_base()
            carried.rest_poses = carried.rest_poses + [FootRestPose(pose, gravity, touching)]
            estimate = estimate_offsets_on_feet(self._feet, carried.rest_poses)
        carried.offsets = estimate.offsets
        with self._lock:  # a calibration must not mix residuals of the former offsets in
            for history in (self._history, self._alternative_history):
                if history is not None:
                    history.clear()
        return estimate

    def _gravity_in_base(self) -> np.ndarray:
        """Gravity [m/s²] in base axes by the base's attitude (one sample's specific force would
        carry the accelerometer's noise); the last motion's without an attitude (upright or
        mounted: the same)."""
        attitude = self.base_state.attitude()
        if attitude is None:
            return -self._motion.specific_force
        return np.asarray(attitude).T @ self.base_state.gravity_world

    @property
    def latest_torques(self) -> Optional[TorqueSample]:
        """The newest sample's first-stage torques (None before the first complete one)."""
        return self._latest

    @property
    def effort_offsets(self) -> np.ndarray:
        """The effort offsets in use [N·m, model order]."""
        return self._carried.offsets.copy()

    def take_base_imu(
        self, stamp: float, frame: str, angular_velocity, linear_acceleration, orientation=None
    ):
        """One IMU sample for the base state (:meth:`BaseState.take_imu`)."""
        try:
            self.base_state.take_imu(
                stamp, frame, angular_velocity, linear_acceleration, orientation
            )
        except BaseStateError as error:
            self.base_state.note_refused('imu', error)
            raise

    def take_base_odom(self, stamp: float, child_frame: str, orientation, linear, angular):
        """One odometry sample for the base state (:meth:`BaseState.take_odom`)."""
        try:
            self.base_state.take_odom(stamp, child_frame, orientation, linear, angular)
        except BaseStateError as error:
            self.base_state.note_refused('odom', error)
            raise

    def _with_known_wrench(self, sample: TorqueSample) -> TorqueSample:
        """``sample`` with Jᵀ F of the known wrench taken off its inverse dynamics and added to
        its residual (``sample`` itself once the wrench expired or does not fit the model)."""
        torques = self._carried.known_wrench.torques(self.robot, self._clock())
        if torques is None:
            return sample
        shift = torques.torques(sample.positions)
        residual = None if sample.residual is None else sample.residual + shift
        return replace(
            sample,
            inverse_dynamics=sample.inverse_dynamics - shift,
            residual=residual,
            known_torques=shift,
        )

    def external_torques(self, torques: TorqueSample) -> Optional[np.ndarray]:
        """Second stage of :meth:`update`: τ_ext [N·m] for the first stage's ``torques`` by the
        route in use (None without efforts, or while the observer starts); :meth:`record`
        keeps the sample."""
        self.record()
        external, alternative = self._external_torques(torques)
        self._unrecorded = (torques, external) + alternative
        return external

    def result(
        self, torques: TorqueSample, external: Optional[np.ndarray], wrench: bool = False
    ) -> LiveResult:
        """Third stage of :meth:`update`: contact and (``wrench``) the external wrench from the
        second stage's τ_ext ``external`` of ``torques``."""
        stamp = torques.stamp
        contact = estimate = None
        if self._observed_positions is not None:
            self._observed_positions.add(stamp, torques.positions)
        if external is not None:
            detector = None if self._momentum_undecided() else self._detector
            if detector is not None:
                contact = detector.update(stamp, external)
                if not self._carried.profile.raise_contact:
                    contact = ContactUpdate(False, False, contact.ratios)
            if wrench and self._wrench is not None:
                positions = torques.positions
                if self._observed_positions is not None:
                    positions = self._observed_positions.at(stamp)
                explained = self._explained_by_wrench(external, contact, detector)
                estimate = self._last_wrench = self._wrench.estimate(positions, explained)
        return LiveResult(
            stamp,
            self.robot.joint_names,
            torques.gravity,
            torques.inverse_dynamics,
            external,
            self.settings.external_torque_method,
            contact,
            estimate,
            torques.known_torques,
            self.problems,
            None if torques.ground_torques is None else self._reported_feet(),
        )

    def _reported_feet(self) -> Optional[FootForces]:
        """The last feet, one row per ``contact_frames`` entry (an entry left out: NaN)."""
        feet, places = self._last_feet, self._feet_places
        if feet is None or places is None:
            return feet
        return feet.placed(self.settings.contact_frames, places)

    def _explained_by_wrench(
        self,
        external: np.ndarray,
        contact: Optional[ContactUpdate],
        detector: Optional[ContactDetector],
    ) -> np.ndarray:
        """The external torques [N·m] the wrench explains: during a contact ``detector``
        raised, with ``wrench_reference`` contact_onset, their change since its baseline."""
        referenced = self.settings.wrench_reference == 'contact_onset'
        if not referenced or contact is None or not contact.in_contact:
            return external
        return external if detector.baseline is None else external - detector.baseline

    def record(self) -> None:
        """Last stage of :meth:`update`, for the last :meth:`external_torques`: τ_ext into the
        residual history, the second observer's update (``observer_momentum`` auto, before a
        calibration), the sample into the payload recording and the filtered residual; nothing
        when it is recorded already."""
        unrecorded, self._unrecorded = self._unrecorded, None
        if unrecorded is None:
            return
        torques, external, alternative, inputs = unrecorded
        stamp = torques.stamp
        other = None
        if alternative is not None:
            other = alternative.update(
                stamp, torques.positions, torques.velocities, inputs.efforts, inputs.terms
            )
        with self._lock:
            observer = self._observer
            if external is not None:
                self._history.append(stamp, external, _first_output(observer))
            if other is not None:  # after a calibration that kept it, its history is _history
                kept = observer is alternative
                history = self._history if kept else self._alternative_history
                history.append(stamp, other, _first_output(alternative))
        if other is not None and stamp >= self._next_momentum_check:
            self._compare_momentum_sources(stamp)
        if torques.residual is None or torques.velocities is None:
            return
        if self.recording is not None:
            self._note_recording_gap(stamp)
            self.recording.append(stamp, torques.positions, torques.velocities, torques.efforts)
        if self.filtered_residual is not None:
            efforts = torques.efforts  # the known wrench's torques are no model error
            if torques.known_torques is not None:
                efforts = efforts + torques.known_torques
            self.filtered_residual.add(stamp, torques.positions, torques.velocities, efforts)

    def _with_foot_forces(self, torques: TorqueSample) -> TorqueSample:
        """``torques`` with the feet estimated from the inverse-dynamics route's τ_ext and
        their ground forces' share Σ J_cᵀ f_c taken off its inverse dynamics (what the motors
        apply; the residual keeps every external force, the ground's included). The feet are
        kept for :meth:`result`, which reports them."""
        feet = self._last_feet = self._feet.estimate(
            torques.positions,
            torques.velocities,
            torques.accelerations,
            external_torques_from_inverse_dynamics(torques.residual),
            self._motion,
            self.base_state.attitude(torques.stamp),
            None if self._moving_base is None else self._moving_base_rows,
        )
        return replace(
            torques,
            inverse_dynamics=torques.inverse_dynamics - feet.contact_torques,
            ground_torques=feet.contact_torques,
        )

    def _external_torques(self, sample: TorqueSample) -> tuple:
        """(τ_ext [N·m] by the route in use, or None without efforts or while the observer
        starts; (the second observer, its inputs) for :meth:`record`, or (None, None))."""
        observer = self._observer
        alternative = self._alternative  # read after the observer: a calibration clears it first
        if observer is None:
            self._efforts_missing = sample.residual is None
            return external_torques_from_inverse_dynamics(sample.residual), (None, None)
        if sample.efforts is None or sample.velocities is None:
            for each in (observer, alternative):
                if each is not None and each.running:
                    each.reset('efforts or velocities missing or stale')
            self._efforts_missing = True
            return None, (None, None)
        self._efforts_missing = False
        q, v = sample.positions, sample.velocities
        efforts = sample.efforts
        if sample.known_torques is not None:
            efforts = efforts + sample.known_torques
        if sample.base_torques is not None:  # the base's share is not the environment's
            efforts = efforts - sample.base_torques
        # g(q) of the sample is the observer's unless the base's tilt is in it
        gravity = sample.gravity if sample.base_torques is None else None
        terms = observer.terms(q, v, efforts, gravity)
        external = observer.update(sample.stamp, q, v, efforts, terms)
        if alternative is None:
            return external, (None, None)
        return external, (alternative, _ObserverInputs(efforts, terms))

    @property
    def observer(self) -> Optional[MomentumObserver]:
        """The momentum observer in use (None on the inverse-dynamics route)."""
        return self._observer

    @property
    def wrench_frame(self) -> Optional[str]:
        """The frame of :attr:`LiveResult.wrench` (None: no wrench for this model)."""
        return None if self._wrench is None else self._wrench.frame

    # ------------------------------------------------------------------ known wrench
    def take_known_wrench(
        self,
        frame: str,
        force: Sequence[float],
        moment: Sequence[float],
        now: Optional[float] = None,
    ) -> None:
        """Use the known wrench ``force`` [N], ``moment`` [N·m] on ``frame`` ('' the payload
        link), in its axes at its origin, received at ``now`` (monotonic [s]; default the
        clock's now); all zero removes the one in use. Raises
        :class:`~robot_dynamics.core.dynamics.joint_reactions.KnownWrenchError` for non-finite
        values or a frame the model lacks: count it with ``known_wrench.refuse``."""
        wrench = KnownWrench(frame or self._payload_link(self.robot), force, moment)
        self._carried.known_wrench.take(self.robot, wrench, self._clock() if now is None else now)

    @property
    def known_wrench(self) -> KnownWrenchInput:
        """The known wrench in use and its history (shared with this pipeline's successors)."""
        return self._carried.known_wrench

    def known_wrench_status(self) -> LiveStatus:
        """The known wrench in use, its age now, the counts and the last refusal."""
        return self._carried.known_wrench.status(self._clock())

    # ------------------------------------------------------------------ contact thresholds
    @property
    def thresholds(self) -> Optional[Thresholds]:
        """The contact thresholds in use (None: detection off)."""
        detector, carried = self._detector, self._carried.thresholds
        if detector is None:
            return None
        if carried is None:
            return Thresholds(self.robot.joint_names, detector.thresholds, 'given')
        return Thresholds(
            self.robot.joint_names, detector.thresholds, carried.source, carried.half_gain
        )

    def calibrate_thresholds(self) -> ThresholdCalibration:
        """Thresholds |mean| + sigma·σ of the residual over the last
        ``contact_calibration_duration`` s of (contact-free) motion, installed at once; with
        ``observer_momentum`` auto, the observer of the quieter momentum source is kept. Raises
        :class:`~robot_dynamics.core.contact.contact_detection.ContactCalibrationError` with
        what to do when the residuals cannot give thresholds."""
        settings = self.settings
        if self._latest is None:
            raise ContactCalibrationError(
                'no joint states with efforts received yet: move the robot without contact for a '
                'while, then call again'
            )
        duration, sigma = settings.contact_calibration_duration, settings.contact_threshold_sigma
        with self._lock:
            rows = self._history.rows(duration)
            other = self._alternative_history.rows(duration) if self._alternative else None
        residuals = rows[1]
        thresholds = calibrated_thresholds(residuals, sigma)
        kept = ratio = None
        if other is not None:
            by_velocities = calibrated_thresholds(other[1], sigma)
            kept, ratio = self._keep_quieter_observer(thresholds, by_velocities)
            if kept == 'velocities':
                thresholds, rows = by_velocities, other
        names = self.robot.joint_names
        check_below_effort_limits(names, thresholds, self.robot.limits.effort)
        half_gain = self._thresholds_at_half_gain(rows, thresholds)
        self._carried.thresholds = Thresholds(names, thresholds, 'calibrated', half_gain)
        self._detector = self._new_detector(thresholds)
        at_rest = self._moved_at < rows[0][0]
        return ThresholdCalibration(
            names, thresholds, len(residuals), sigma, duration, kept, ratio, half_gain, at_rest
        )

    def _thresholds_at_half_gain(
        self, rows: tuple, thresholds: np.ndarray
    ) -> Optional[HalfGainThresholds]:
        """The calibration's window ``rows`` (:meth:`ResidualHistory.rows` of the observer in
        use) as that observer would have given it at half its gain
        (:func:`~robot_dynamics.core.contact.momentum_observer.outputs_at_gain`), the rows that
        have settled; None on the inverse-dynamics route or with too few of them."""
        observer, settings = self._observer, self.settings
        if observer is None:
            return None
        stamps, outputs, restarted = rows
        gain, filter_gain = observer.gain, observer.filter_gain
        slower, settled = outputs_at_gain(stamps, outputs, restarted, gain, filter_gain, gain / 2)
        if np.count_nonzero(settled) < MIN_CALIBRATION_SAMPLES:
            return None
        at_half = calibrated_thresholds(slower[settled], settings.contact_threshold_sigma)
        half = settings.observer_gain / 2
        return HalfGainThresholds(
            half,
            at_half,
            _geometric_mean_ratio(at_half, thresholds),
            observer_lag(half, filter_gain),
            settings.observer_lag,
        )

    def _keep_quieter_observer(self, by_positions: np.ndarray, by_velocities: np.ndarray) -> tuple:
        """observer_momentum auto: keep the source with the lower thresholds; returns the source
        kept and the geometric mean of the velocity thresholds over the position ones."""
        source = quieter_momentum_source({'positions': by_positions, 'velocities': by_velocities})
        kept = self._keep_momentum_source(source, 'the quieter at a calibration')
        return kept, _geometric_mean_ratio(by_velocities, by_positions)

    def _compare_momentum_sources(self, stamp: float) -> None:
        """observer_momentum auto, before a calibration: keep the velocities' observer at once
        when the positions' residual is too noisy over the last :data:`MOMENTUM_CHECK_PERIOD` s
        (:func:`~robot_dynamics.core.contact.momentum_observer.positions_too_noisy`): first as
        soon as :data:`MOMENTUM_CHECK_SAMPLES` samples of each exist."""
        with self._lock:
            by_positions = self._history.window(MOMENTUM_CHECK_PERIOD)
            by_velocities = self._alternative_history.window(MOMENTUM_CHECK_PERIOD)
        if min(len(by_positions), len(by_velocities)) < MOMENTUM_CHECK_SAMPLES:
            return
        self._next_momentum_check = stamp + MOMENTUM_CHECK_PERIOD
        self._momentum_compared = True
        reason = positions_too_noisy(by_positions, by_velocities)
        if reason:
            self._keep_momentum_source('velocities', reason)

    def _momentum_undecided(self) -> bool:
        """observer_momentum auto before its first comparison: the position form's residual may
        still be the noise of stamps that are not the sampling instants (kN·m), so no contact is
        raised from it yet."""
        return self._alternative is not None and not self._momentum_compared

    def _keep_momentum_source(self, source: str, reason: str) -> str:
        """Run only the observer of ``source`` from now on; returns the source kept (the one
        already chosen when another thread chose first). The stream reads the observer before
        the alternative, so clearing the alternative first never lets it update one observer
        twice."""
        with self._lock:  # record() tells the histories apart by the observer in use
            if self._alternative is None:
                return self._observer.momentum
            kept = self._observer if source == self._observer.momentum else self._alternative
            if kept is self._alternative:  # later calibrations read the kept source's residuals
                self._history, self._alternative_history = self._alternative_history, self._history
            self._alternative = None
            self._observer = kept
            self._carried.momentum, self._carried.momentum_reason = source, reason
        return source

    # ------------------------------------------------------------------ low rate
    def effective_mass(self) -> Optional[EffectiveMassReading]:
        """The effective mass at ``effective_mass_frame`` for the latest sample; None when no
        sample came since the last call (a stopped stream is not evaluated again)."""
        latest = self._latest
        if latest is None or latest is self._evaluated:
            return None
        self._evaluated = latest
        frame = self.settings.effective_mass_frame or self._payload_link(self.robot)
        return effective_mass_reading(self.robot, latest, frame)

    def stale_joints(self) -> tuple:
        """Joints without a value within ``stale_timeout`` of the newest one (all before any)."""
        merger = self.estimator.merger
        newest = float(merger.position_stamps.max())
        if newest == -np.inf:
            return tuple(merger.joint_names)
        return tuple(merger.stale_joints(newest, self.settings.stale_timeout))

    def _joints_lacking(self, field: int) -> list:
        """Joints whose ``field`` (VELOCITY, EFFORT) is missing or stale against the newest
        position; the optional joints that never reported it aside."""
        merger = self.estimator.merger
        newest = float(merger.position_stamps.max())
        return merger.stale_joints(newest, self.settings.stale_timeout, field)

    def _unreported_by_optional_joints(self, values: dict) -> list:
        """What the joints that never reported a velocity or an effort are taken as, for
        ``values`` (``joints_without_velocity``, ``joints_without_effort``) and in words."""
        merger, messages = self.estimator.merger, []
        for field, label, taken_as in (
            (EFFORT, 'effort', 'the model torque is used instead (no external torque there)'),
            (VELOCITY, 'velocity', 'taken as 0'),
        ):
            joints = [merger.joint_names[index] for index in merger.unreported[field]]
            if joints:
                values[f'joints_without_{label}'] = ' '.join(joints)
                messages.append(
                    f'no {label} reported by {listed_names(joints, shown=6)}: {taken_as}'
                )
        return messages

    def margin_status(self) -> LiveStatus:
        """|τ| / effort limit per joint of the latest inverse dynamics: WARN above
        ``torque_warn_ratio``, ERROR above 1."""
        latest, robot = self._latest, self.robot
        if latest is None:
            return LiveStatus(OK, 'no torques yet')
        margins = dynamics.torque_margins(robot, latest.inverse_dynamics)
        if not len(margins):
            return LiveStatus(OK, 'no joints')
        values = {joint: round(float(m), 4) for joint, m in zip(robot.joint_names, margins)}
        worst_joint = int(np.argmax(margins))
        peak = float(margins[worst_joint])
        level = ERROR if peak > 1.0 else WARN if peak > self.settings.torque_warn_ratio else OK
        message = f'highest |tau|/limit {peak:.3g} at {robot.joint_names[worst_joint]}'
        if self.estimator.velocities_from_positions:
            reported = self.estimator.merger.reports(VELOCITY)
            message += (
                f'; {unmeasured_velocities_words(reported)}: q̇ is the slope of the positions, '
                'q̈ its slope '
                f'(inverse dynamics lags ~{self.settings.acceleration_window - 1} samples)'
            )
        for kind, values_of, beyond in (
            ('positions', latest.positions, robot.outside_limits),
            ('velocities', latest.velocities, robot.beyond_velocity_limits),
        ):
            joints = [] if values_of is None else beyond(values_of)
            if joints:
                level = worst(level, WARN)
                values[f'{kind}_beyond_limits'] = ' '.join(robot.joint_names[i] for i in joints)
                message += '; ' + beyond_limits_words(robot, kind, values_of, joints, beyond)
        unreported = self.estimator.merger.unreported[VELOCITY]
        rate_words = velocity_rate_words(robot, self.velocity_rate.factors(), unreported)
        if rate_words:
            level = worst(level, WARN)
            message += '; ' + rate_words
        if latest.velocities is None:  # inverse dynamics at q̇ = q̈ = 0: g(q) and nothing else
            level = worst(level, WARN)
            lacking = listed_names(self._joints_lacking(VELOCITY), shown=6) or 'some joints'
            message += (
                f'; no velocities of {lacking} (NaN, empty or stale in joint_states): inverse '
                'dynamics taken at rest, g(q) only'
            )
        return LiveStatus(level, message, values)

    def contact_status(self) -> LiveStatus:
        """The route, the observer's state, the thresholds, the contact and the wrench's
        identifiable directions, with the set-up problems."""
        settings = self.settings
        values = {
            'external_torque_method': settings.external_torque_method,
            'observer_gain_per_s': settings.observer_gain,
            'observer_filter_gain_per_s': settings.observer_filter_gain,
            'observer_momentum': _momentum_in_use(self._carried),
            'rotor_inertia_kg_m2': _listed_values(self.robot.rotor_inertia),
            'base_state': self.settings.base_state,
            'effort_offsets_nm': _listed_values(self._carried.offsets),
        }
        if self.robot.floating_base and self.settings.base_state == 'none':
            values['base_state'] = 'none: the floating base is taken at rest, upright'
        if self._base_problem is not None:
            return LiveStatus(WARN, f'no outputs: {self._base_problem}', values)
        if self._latest is None:
            return LiveStatus(OK, 'no complete joint state yet', values)
        level, messages = OK, []
        observer = self._observer
        if observer is not None:
            values.update(
                observer_running=observer.running,
                observer_restarts=observer.restarts,
                observer_last_restart=observer.last_restart_reason,
                friction=repr(observer.friction) if observer.friction is not None else 'none',
            )
        level = worst(level, self._effort_problems(values, messages))
        level = worst(level, self._detector_values(values, messages))
        level = worst(level, self._wrench_values(values, messages))
        self._residual_values(values)
        level = worst(level, self._feet_values(values, messages))
        if self.problems:
            level = worst(level, WARN)
            messages.extend(self.problems)
        return LiveStatus(level, '; '.join(messages), values)

    def _effort_problems(self, values: dict, messages: list) -> str:
        """Efforts or velocities missing, never reported, frozen, or of a wrong scale or unit."""
        level = OK
        if self._efforts_missing and self.efforts_all_zero:
            level = WARN
            messages.append(
                'no external torques: every effort in joint_states is exactly 0, which no '
                'torque sensor or motor current reads: the driver does not measure them '
                '(ros2_control mock hardware, or an effort interface left at 0)'
            )
        elif self._efforts_missing:
            level = WARN
            lacking = '; '.join(
                f'{label} of {listed_names(joints, shown=6)}'
                for label, joints in (
                    ('efforts', self._joints_lacking(EFFORT)),
                    ('velocities', self._joints_lacking(VELOCITY)),
                )
                if joints
            )
            messages.append(
                f'no external torques: {lacking or "efforts or velocities"} missing or stale '
                '(NaN or empty in joint_states, or old; the observer restarts when they return)'
            )
        messages.extend(self._unreported_by_optional_joints(values))
        frozen = self._frozen_efforts.words(self.robot)
        if frozen:
            level = WARN
            messages.append(frozen)
        # a tilt seen at two poses explains what one pose's scale check would take for a unit
        finding = self._rest_pose_words() or effort_scale_words(self.robot, self._latest)
        if finding:
            level = WARN
            messages.append(finding)
        return level

    def _residual_values(self, values: dict) -> None:
        """The residual RMS per joint at rest and in motion: τ_ext's, and the filtered model
        residual's (``filtered_residual``)."""
        for kind in ('rest', 'moving'):
            rms = self._residual_levels.rms(kind)
            if rms is not None:
                values[f'residual_rms_{kind}_nm'] = _listed_values(rms)
        if self.filtered_residual is not None:  # its update() runs on another thread
            for kind in ('rest', 'moving'):
                rms = self.filtered_residual.rms(kind)
                if rms is not None:
                    values[f'model_residual_rms_{kind}_nm'] = _listed_values(rms)

    def _feet_values(self, values: dict, messages: list) -> str:
        """The feet in contact and the base rows' force mismatch (``contact_frames``)."""
        feet = self._last_feet
        if feet is None:
            return OK
        values.update(
            feet_in_contact=' '.join(f for f, c in zip(feet.frames, feet.contact) if c),
            foot_force_mismatch_n=round(self._feet.mean_mismatch, 3),
        )
        warning = self._feet.mismatch_warning()
        if not warning:
            return OK
        messages.append(warning)
        return WARN

    def _rest_pose_words(self) -> str:
        """:class:`~robot_dynamics.core.live.input_findings.RestPoseFindings`' finding for the
        rest poses seen, on a fixed base taken upright or mounted, or ''."""
        if not self._notes_rest_poses:
            return ''
        mode = self.settings.base_state
        gravity = self.robot.model.gravity.linear if mode == 'none' else self._gravity_in_base()
        return self._rest_findings.words(self._latest, gravity, mounted=mode == 'mounting')

    def _detector_values(self, values: dict, messages: list) -> str:
        detector, thresholds, profile = self._detector, self.thresholds, self._carried.profile
        values['contact_profile'] = profile.name
        if not profile.detection:
            messages.append(f'contact detection off (contact_profile {profile.name})')
            return OK
        if detector is None:
            messages.append(
                'contact detection not armed: set contact_thresholds or call '
                '~/calibrate_contact_thresholds'
            )
            return WARN
        if self._momentum_undecided():
            messages.append(
                'contact detection waits for observer_momentum auto to compare the momentum '
                f'forms over {MOMENTUM_CHECK_SAMPLES} samples'
            )
            return OK
        values.update(
            in_contact=detector.in_contact,
            contacts=detector.contacts,
            thresholds_source=thresholds.source if thresholds else f'profile {profile.name}',
            thresholds_nm=' '.join(f'{t:.4g}' for t in detector.thresholds),
        )
        half_gain = thresholds.half_gain if thresholds else None
        if half_gain is not None:
            values['thresholds_at_half_gain'] = f'{half_gain.ratio:.2f} x at {half_gain.gain:g} /s'
        baseline = detector.baseline
        if baseline is not None:
            values['contact_baseline_nm'] = ' '.join(f'{t:.4g}' for t in baseline)
        if not profile.raise_contact:
            messages.append(f'~/contact never raised (contact_profile {profile.name})')
            return OK
        messages.append('CONTACT' if detector.in_contact else 'no contact')
        return OK

    def _wrench_values(self, values: dict, messages: list) -> str:
        if self._wrench is None:
            return OK
        frame = self._wrench.frame
        values['wrench_frame'] = frame
        values['wrench_reference'] = self.settings.wrench_reference
        estimate = self._last_wrench
        if estimate is None:
            return OK
        values['wrench_identifiable_directions'] = estimate.identifiable
        values['jacobian_smallest_singular_value'] = estimate.smallest_singular_value
        if estimate.identifiable == 6:
            return OK
        messages.append(
            f'external wrench at {frame}: only {estimate.identifiable} of 6 directions '
            'identifiable (fewer than 6 joints or near a singular pose): the others are damped '
            'towards 0'
        )
        return WARN


class _ObserverInputs(NamedTuple):
    """The efforts [N·m] the observers took and the model terms they share."""

    efforts: np.ndarray
    terms: MomentumTerms


def _geometric_mean_ratio(values: np.ndarray, references: np.ndarray) -> float:
    """The geometric mean over the joints of ``values`` / ``references`` (both positive)."""
    return float(np.exp(np.mean(np.log(values / references))))


def _first_output(observer: Optional[MomentumObserver]) -> bool:
    """Whether ``observer``'s last output was its first since it (re)started."""
    return observer is not None and observer.outputs_since_restart == 1


def _momentum_in_use(carried: _Carried) -> str:
    """The observer's momentum source for the diagnostics, with why it was kept."""
    if carried.momentum is None:
        return 'auto: positions until a calibration compares both'
    if carried.momentum_reason:
        return f'{carried.momentum} (auto: {carried.momentum_reason})'
    return carried.momentum


def _listed_values(values: np.ndarray) -> str:
    """'none' for all zeros, else the values to 4 significant digits."""
    if not np.any(values):
        return 'none'
    return ', '.join(f'{value:.4g}' for value in values)


def _first_given(value: Optional[float], default: float) -> float:
    return default if value is None else value
