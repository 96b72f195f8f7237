"""The settings of a payload identification: the mode and the thresholds (SI units).

:class:`PayloadOptions` is checked once, when it is built; :func:`checked_mode` checks a mode.
Both raise :class:`PayloadSettingsError`, whose message names the setting and the accepted
values.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Optional

from robot_dynamics.core.errors import RobotDynamicsError

MODES = ('auto', 'full', 'mass_com')
"""``full``: mass, CoM and inertia; ``mass_com``: mass and CoM; ``auto``: ``full`` when the
motion excites the inertia, else ``mass_com``."""

MIN_BASELINE_SECONDS = 0.5
"""Shortest no-payload baseline [s] record_baseline keeps (a shorter one would replace a useful
one): the identification trims two filter periods (0.2 s at the default 10 Hz cutoff) off each
end of a moving stretch, which leaves under 0.1 s of it (more is trimmed at a lower cutoff:
identify_payload then says how much more the baseline must cover)."""

_POSITIVE = (
    'cutoff_hz',
    'min_samples',
    'max_condition_number',
    'residual_ratio_limit',
    'residual_ratio_warning',
    'static_velocity_threshold',
    'min_static_duration',
    'baseline_position_tolerance',
)
_NON_NEGATIVE = ('body_mass_uncertainty', 'body_com_uncertainty', 'effort_scale_uncertainty')


class PayloadSettingsError(RobotDynamicsError):
    """A payload identification setting (the mode or an option) is not usable; the message names
    it, the value given and the values accepted."""


def checked_mode(mode: str) -> str:
    """``mode`` when it is one of :data:`MODES`; raises :class:`PayloadSettingsError`."""
    if mode not in MODES:
        raise PayloadSettingsError(
            f'payload mode must be one of {", ".join(MODES)}, got {mode!r}: use full for mass, '
            'centre of mass and inertia, mass_com for mass and centre of mass, auto to let the '
            'motion decide'
        )
    return mode


@dataclass(frozen=True)
class PayloadOptions:
    """Settings of :func:`~robot_dynamics.core.identification.payload.identify_payload` (SI units).

    * ``cutoff_hz`` [Hz]: low-pass cutoff of the zero-phase filter applied to velocities and
      efforts before differentiating (and the bandwidth of the fit).
    * ``min_samples`` [-]: fewest fit samples (at 4·cutoff_hz, stationary ones only for
      static data) accepted.
    * ``max_condition_number`` [-]: largest accepted condition number of the
      column-normalised payload regressor; above it the data cannot separate the parameters.
    * ``residual_ratio_limit`` [-]: largest accepted ratio of the post-fit residual RMS to the
      torque noise RMS within the filter band (model mismatch above it).
    * ``residual_ratio_warning`` [-]: above this ratio the report carries a model-mismatch
      warning (the standard deviations already include the residual's time correlation).
    * ``static_velocity_threshold`` [rad/s]: a sample is stationary when every filtered joint
      speed is below it.
    * ``min_static_duration`` [s]: shortest stationary stretch counted as a static pose.
    * ``baseline_position_tolerance`` [rad]: largest accepted RMS joint-position difference
      between the payload recording and the time-aligned baseline.
    * ``effort_noise`` [N·m]: white torque noise σ of the raw samples; ``None`` estimates it
      from the effort content above ``cutoff_hz``.
    * ``body_mass_uncertainty`` [-] and ``body_com_uncertainty`` [m]: assumed 1σ relative mass
      error and CoM error of the URDF inertial of the body that carries the payload link. Without
      a baseline such an error is indistinguishable from payload (same regressor columns), so it
      is added to the mass and CoM covariance; with a baseline it cancels and is not added.
    * ``effort_scale_uncertainty`` [-]: assumed 1σ relative scale error of each joint's effort
      (a torque constant, gear ratio or torque-sensor gain off by a few %, independently per
      joint). It scales the payload's own torques, which no baseline removes: its effect on the
      fitted parameters is added to their covariance. 0 for a robot whose efforts are calibrated.

    Raises :class:`PayloadSettingsError` for a value out of range.
    """

    cutoff_hz: float = 10.0
    min_samples: int = 40
    max_condition_number: float = 60.0
    residual_ratio_limit: float = 40.0
    residual_ratio_warning: float = 3.0
    static_velocity_threshold: float = 0.02
    min_static_duration: float = 0.4
    baseline_position_tolerance: float = 0.02
    effort_noise: Optional[float] = None
    body_mass_uncertainty: float = 0.05
    body_com_uncertainty: float = 0.005
    effort_scale_uncertainty: float = 0.02

    def __post_init__(self):
        for name in _POSITIVE:
            if not _finite_above(getattr(self, name), 0.0, strict=True):
                raise self._refused(name, 'a positive number')
        for name in _NON_NEGATIVE:
            if not _finite_above(getattr(self, name), 0.0, strict=False):
                raise self._refused(name, 'a non-negative number (0 when the URDF is exact)')
        if self.effort_noise is not None and not _finite_above(self.effort_noise, 0.0, True):
            raise self._refused('effort_noise', 'a positive number [N·m], or None to estimate it')

    def _refused(self, name: str, accepted: str) -> PayloadSettingsError:
        return PayloadSettingsError(
            f'payload option {name} must be {accepted}, got {getattr(self, name)!r}: give '
            f'{accepted} or leave the default ({getattr(PayloadOptions, name)!r})'
        )


def _finite_above(value, bound: float, strict: bool) -> bool:
    """``value`` is a real, finite number above ``bound`` (or equal to it when not ``strict``)."""
    if not isinstance(value, numbers.Real) or not math.isfinite(value):
        return False
    return value > bound if strict else value >= bound
