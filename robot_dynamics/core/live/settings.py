"""The settings of the live pipeline: one frozen value, each field a dynamics_node parameter.

:class:`LiveSettings` is what :class:`~robot_dynamics.core.live.live_dynamics.LiveDynamics` is
built from; the node fills it from its parameter table (``ros/dynamics_parameters.py``), a test
or a command from its own values. Out-of-range values raise :class:`LiveSettingsError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from robot_dynamics.core.contact.contact_detection import (
    DEFAULT_MIN_DURATION,
    DEFAULT_RELEASE_DURATION,
    DEFAULT_RELEASE_RATIO,
    DEFAULT_SIGMA,
)
from robot_dynamics.core.contact.external_wrench import (
    DEFAULT_DAMPING,
    DEFAULT_SINGULAR_THRESHOLD,
    WRENCH_REFERENCES,
)
from robot_dynamics.core.contact.momentum_observer import (
    DEFAULT_GAIN,
    MOMENTUM_SOURCES,
    observer_lag,
)
from robot_dynamics.core.errors import SettingError
from robot_dynamics.core.live.known_wrench import KNOWN_WRENCH_TIMEOUT
from robot_dynamics.core.streams.base_state import (
    BASE_STATES,
    MAX_BASE_STATE_AGE,
    SMOOTHING_TIME,
)
from robot_dynamics.core.streams.effort_model import EffortModel
from robot_dynamics.core.streams.joint_states import STALE_TIMEOUT
from robot_dynamics.core.streams.live_torques import ACCELERATION_MODES, MAX_EFFORT_DELAY

ROUTES = ('observer', 'inverse_dynamics')
"""How the external torques are obtained (``external_torque_method``)."""

MOMENTUM_CHOICES = ('auto',) + MOMENTUM_SOURCES
"""Where the observer's momentum comes from; ``auto``: positions until a calibration keeps the
quieter of the two."""

ACCELERATION_WINDOW = 15
"""Default samples of the least-squares velocity slope giving q̈ (delay ≈ half)."""

MAX_ACCELERATION_WINDOW = 1000
"""Largest q̈ window [samples] (0.5 s of delay at 1 kHz)."""

CALIBRATION_DURATION = 10.0
"""Default seconds of contact-free motion a threshold calibration uses (the last ones)."""

HISTORY_MAX_RATE = 1000.0
"""Highest sample rate [Hz] the residual history is sized for."""

TORQUE_WARN_RATIO = 0.8
"""Default |τ| / effort limit above which the torque margins warn (error above 1)."""


class LiveSettingsError(SettingError):
    """A live setting is out of its range: fix the value (the node's parameter of that name)."""


@dataclass(frozen=True)
class LiveSettings:
    """Every setting of the live pipeline (the dynamics_node parameters of the same names).

    Torques: ``stale_timeout`` [s] (a joint value older than this than the newest is stale),
    ``acceleration_mode`` (``'estimated'``: q̈ from the causal slope of the velocities over
    ``acceleration_window`` samples; ``'zero'``), ``effort_model`` (what the measured efforts are;
    None: joint torques), ``effort_delay`` [s] (how long before the positions the efforts were
    measured; the outputs then describe that instant:
    :mod:`~robot_dynamics.core.streams.live_torques`). External torques:
    ``external_torque_method`` (:data:`ROUTES`),
    ``observer_gain`` K_O [1/s], ``observer_filter_gain`` K_F [1/s] (the observer's second
    low-pass stage; 0: none), ``observer_momentum`` (:data:`MOMENTUM_CHOICES`), ``friction_file``
    (friction YAML of ``robot_dynamics identify``, subtracted from the efforts by the observer; ''
    none), ``effort_offsets_file`` (offsets [N·m] taken off the measured efforts, written by
    :meth:`~robot_dynamics.core.live.live_dynamics.LiveDynamics.zero_effort_offsets`' caller),
    ``rotor_inertia`` [kg·m² per joint, model order, put into M(q):
    :meth:`~robot_dynamics.core.model.model.RobotModel.set_rotor_inertia`; empty or all zero: the
    friction file's ``rotor_inertia``, else none). Contact: ``contact_thresholds`` [N·m per joint,
    model order; empty or all zero: none given], calibrated as |mean| + ``contact_threshold_sigma``
    σ over the last ``contact_calibration_duration`` [s]; a contact starts once a ratio |τ_ext| /
    threshold exceeded 1 for ``contact_min_duration`` [s] and ends once every ratio stayed below
    ``contact_release_ratio`` for ``contact_release_duration`` [s]; ``contact_profile`` of the
    shipped profiles and ``contact_profiles_file``
    (:mod:`~robot_dynamics.core.contact.contact_profiles`). Wrench: ``wrench_frame`` ('' the
    payload link), ``wrench_damping`` [m], ``wrench_singular_threshold``, ``wrench_reference``
    (:data:`~robot_dynamics.core.contact.external_wrench.WRENCH_REFERENCES`). Tool:
    ``known_wrench_timeout`` [s], ``effective_mass_frame`` ('' the payload link). Diagnostics:
    ``torque_warn_ratio`` (|τ| / effort limit that warns, in (0, 1]). ros2_control command:
    ``command_joints`` (the joint order of the gravity command; empty: model order),
    ``command_friction`` (add the friction file's friction at the measured velocities). Base:
    ``base_state`` (:data:`~robot_dynamics.core.streams.base_state.BASE_STATES`),
    ``base_orientation`` (roll, pitch, yaw [rad] of a ``mounting``), ``imu_frame`` ('' the IMU
    message's frame), ``max_base_state_age`` [s], ``base_state_smoothing`` [s] (low-pass time
    constant of the IMU and odometry before differentiation; 0: none). Feet (floating base):
    ``contact_frames`` (the contact points whose forces are estimated), ``foot_contact_force``
    [N] (a foot is in contact above it, until below half of it; 0: 3 % and 1.5 % of the weight).
    """

    stale_timeout: float = STALE_TIMEOUT
    acceleration_mode: str = 'estimated'
    acceleration_window: int = ACCELERATION_WINDOW
    effort_model: Optional[EffortModel] = None
    effort_delay: float = 0.0
    external_torque_method: str = 'observer'
    observer_gain: float = DEFAULT_GAIN
    observer_filter_gain: float = 0.0
    observer_momentum: str = 'auto'
    friction_file: str = ''
    effort_offsets_file: str = ''
    rotor_inertia: tuple = ()
    contact_thresholds: tuple = ()
    contact_threshold_sigma: float = DEFAULT_SIGMA
    contact_calibration_duration: float = CALIBRATION_DURATION
    contact_min_duration: float = DEFAULT_MIN_DURATION
    contact_release_ratio: float = DEFAULT_RELEASE_RATIO
    contact_release_duration: float = DEFAULT_RELEASE_DURATION
    contact_profiles_file: str = ''
    contact_profile: str = 'default'
    wrench_frame: str = ''
    wrench_damping: float = DEFAULT_DAMPING
    wrench_singular_threshold: float = DEFAULT_SINGULAR_THRESHOLD
    wrench_reference: str = 'contact_onset'
    known_wrench_timeout: float = KNOWN_WRENCH_TIMEOUT
    effective_mass_frame: str = ''
    torque_warn_ratio: float = TORQUE_WARN_RATIO
    command_joints: tuple = ()
    command_friction: bool = False
    base_state: str = 'none'
    base_orientation: tuple = (0.0, 0.0, 0.0)
    imu_frame: str = ''
    max_base_state_age: float = MAX_BASE_STATE_AGE
    base_state_smoothing: float = SMOOTHING_TIME
    contact_frames: tuple = ()
    foot_contact_force: float = 0.0

    @property
    def observer_lag(self) -> float:
        """How long [s] the observer's external torques lag a slow external torque."""
        return observer_lag(self.observer_gain, self.observer_filter_gain)

    def __post_init__(self):
        object.__setattr__(self, 'contact_thresholds', tuple(self.contact_thresholds))
        object.__setattr__(self, 'rotor_inertia', tuple(self.rotor_inertia))
        object.__setattr__(self, 'command_joints', tuple(self.command_joints))
        object.__setattr__(self, 'base_orientation', tuple(self.base_orientation))
        object.__setattr__(self, 'contact_frames', tuple(self.contact_frames))
        choices = (
            ('acceleration_mode', ACCELERATION_MODES),
            ('external_torque_method', ROUTES),
            ('observer_momentum', MOMENTUM_CHOICES),
            ('base_state', BASE_STATES),
            ('wrench_reference', WRENCH_REFERENCES),
        )
        for name, allowed in choices:
            if getattr(self, name) not in allowed:
                raise LiveSettingsError(
                    f'{name} must be one of {allowed}, got {getattr(self, name)!r}'
                )
        positive = (
            'stale_timeout',
            'observer_gain',
            'contact_threshold_sigma',
            'contact_calibration_duration',
            'wrench_damping',
            'wrench_singular_threshold',
            'known_wrench_timeout',
            'max_base_state_age',
        )
        for name in positive:
            if not 0.0 < getattr(self, name) < np.inf:
                raise LiveSettingsError(
                    f'{name} must be a positive number, got {getattr(self, name)!r}'
                )
        if not 2 <= self.acceleration_window <= MAX_ACCELERATION_WINDOW:
            raise LiveSettingsError(
                f'acceleration_window must be 2 to {MAX_ACCELERATION_WINDOW} samples, got '
                f'{self.acceleration_window!r}'
            )
        orientation = np.asarray(self.base_orientation, dtype=float)
        if orientation.shape != (3,) or not np.all(np.isfinite(orientation)):
            raise LiveSettingsError(
                f'base_orientation must be 3 finite angles [rad] (roll, pitch, yaw), got '
                f'{self.base_orientation!r}'
            )
        if not 0.0 <= self.effort_delay <= MAX_EFFORT_DELAY:
            raise LiveSettingsError(
                f'effort_delay must be a time in s in [0, {MAX_EFFORT_DELAY:g}], got '
                f'{self.effort_delay!r}'
            )
        if not 0.0 <= self.observer_filter_gain < np.inf:
            raise LiveSettingsError(
                f'observer_filter_gain must be 0 (none) or a positive number [1/s], got '
                f'{self.observer_filter_gain!r}'
            )
        if not 0.0 < self.torque_warn_ratio <= 1.0:
            raise LiveSettingsError(
                f'torque_warn_ratio must be in (0, 1], got {self.torque_warn_ratio!r}'
            )
