"""The settings and the result of a payload identification.

:class:`PayloadOptions` holds every threshold (SI units), validated once at construction;
:class:`PayloadReport` is the report schema (docs/payload.md) with its operator summary;
:func:`fill_estimate` turns fitted parameters and their covariance into the reported mass
[kg], CoM [m] and inertia about the CoM [kg·m²] (payload link frame) with 1σ standard
deviations, propagated by the delta method.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from robot_dynamics.core.errors import NoPayloadDetected
from robot_dynamics.core.identification.payload_regressor import matrix_from_vector
from robot_dynamics.core.model.inertia import InertialParameters

INERTIA_KEYS = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')

REPORT_KEYS = (
    'success',
    'reason',
    'mode',
    'payload_link',
    'used_baseline',
    'baseline_coverage',
    'used_duration',
    'mass',
    'mass_std',
    'com',
    'com_std',
    'inertia',
    'inertia_std',
    'condition_number',
    'min_normalized_singular_value',
    'residual_rms_before',
    'residual_rms_after',
    'payload_torque_rms',
    'samples',
    'feasible',
    'warnings',
    'solve_time',
)

DETECTION_SIGMAS = 3.0
"""A fitted mass below this many standard deviations cannot be told apart from no payload:
the identification is refused (there is no centre of mass to report)."""


@dataclass
class PayloadOptions:
    """Settings of :func:`identify_payload` (SI units).

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

    def __post_init__(self):
        positive = (
            'cutoff_hz',
            'min_samples',
            'max_condition_number',
            'residual_ratio_limit',
            'residual_ratio_warning',
            'static_velocity_threshold',
            'min_static_duration',
            'baseline_position_tolerance',
        )
        for name in positive:
            value = getattr(self, name)
            if not (isinstance(value, numbers.Real) and math.isfinite(value) and value > 0):
                raise ValueError(f'payload option {name} must be a positive number, got {value!r}')
        for name in ('body_mass_uncertainty', 'body_com_uncertainty'):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(
                    f'payload option {name} must be a non-negative number, got {value!r}'
                )
        if self.effort_noise is not None and not (
            math.isfinite(self.effort_noise) and self.effort_noise > 0
        ):
            raise ValueError(
                f'payload option effort_noise must be positive or None, got {self.effort_noise!r}'
            )


@dataclass
class PayloadReport:
    """Result of :func:`identify_payload`; the fields are the report schema (docs/payload.md).

    ``mass`` [kg] and ``com`` [m] (payload link frame), ``inertia`` {ixx, ixy, ixz, iyy, iyz,
    izz} [kg·m²] about the CoM in payload-link axes (``None`` in mass_com mode), each with a
    1σ standard deviation (``*_std``). ``baseline_coverage`` [-]: fraction of the (filtered)
    payload recording that the time-aligned baseline covers (``None`` without a baseline);
    ``used_duration`` [s]: length of the stretch the fit samples come from, the part the
    baseline covers (the whole recording without one). ``condition_number`` and
    ``min_normalized_singular_value`` describe the column-normalised payload regressor;
    ``residual_rms_before`` / ``_after`` [N·m]: RMS of the body-removed torque before and
    after subtracting the fitted payload torque, whose RMS is ``payload_torque_rms``;
    ``samples``: time samples used in the fit; ``feasible``: the estimate is physically
    realisable (J(π) ⪰ 0; m > 0 for a point mass); ``solve_time`` [s]. On a refusal
    ``success`` is False, ``reason`` says why and the estimate fields are ``None``, except
    when no payload is detectable (fitted mass within :data:`DETECTION_SIGMAS` σ of zero):
    ``mass`` and ``mass_std`` then say how little could be there.
    """

    success: bool
    reason: str
    mode: str
    payload_link: str
    used_baseline: bool
    baseline_coverage: Optional[float] = None
    used_duration: Optional[float] = None
    mass: Optional[float] = None
    mass_std: Optional[float] = None
    com: Optional[list] = None
    com_std: Optional[list] = None
    inertia: Optional[dict] = None
    inertia_std: Optional[dict] = None
    condition_number: Optional[float] = None
    min_normalized_singular_value: Optional[float] = None
    residual_rms_before: Optional[float] = None
    residual_rms_after: Optional[float] = None
    payload_torque_rms: Optional[float] = None
    samples: int = 0
    feasible: Optional[bool] = None
    warnings: list = field(default_factory=list)
    solve_time: float = 0.0

    def to_dict(self) -> dict:
        """The report as plain Python types (YAML/JSON ready), keys in schema order."""
        return {key: _plain(getattr(self, key)) for key in REPORT_KEYS}

    def summary(self) -> str:
        """One short operator line (the Trigger response message)."""
        if not self.success:
            told = (
                self.baseline_coverage is None
                or coverage_words(self.baseline_coverage) in self.reason
            )
            return f'payload not identified: {self.reason}' + (
                '' if told else f' ({self.stretch_text()})'
            )
        digits = _decimals(self.mass_std, 3)
        com_digits = _decimals(1e3 * max(self.com_std), 1)
        com = ', '.join(f'{1e3 * c:.{com_digits}f}' for c in self.com)
        com_std = max(self.com_std) * 1e3
        text = (
            f'payload {self.mass:.{digits}f} ± {self.mass_std:.{digits}f} kg, CoM [{com}] ± '
            f'{com_std:.{com_digits}f} mm in {self.payload_link} ({self.mode}, '
            f'{self.stretch_text()})'
        )
        return text + (
            f'; {len(self.warnings)} warning(s), see the report' if self.warnings else ''
        )

    def stretch_text(self) -> str:
        """'with baseline covering 70 % of the payload recording, 13.6 s used' (or '19.6 s
        used')."""
        used = f'{self.used_duration:.1f} s used' if self.used_duration is not None else ''
        if self.baseline_coverage is None:
            return used or ('with baseline' if self.used_baseline else 'no baseline')
        return f'with baseline covering {coverage_words(self.baseline_coverage)}, {used}'

    def inertial_parameters(self) -> Optional[InertialParameters]:
        """The estimate in the payload link frame, for ``RobotModel.attach_payload`` (a point
        mass in mass_com mode); ``None`` after a refusal."""
        if not self.success:
            return None
        if self.inertia is None:
            return InertialParameters.point_mass(self.mass, self.com)
        return InertialParameters(self.mass, self.com, _matrix_from_keys(self.inertia))

    def __repr__(self) -> str:
        return f'PayloadReport({self.summary()})'


def fill_estimate(report: PayloadReport, parameters: np.ndarray, covariance: np.ndarray) -> None:
    """Write mass [kg], CoM [m] and (full mode) the inertia about the CoM [kg·m²] with their 1σ
    into ``report`` from pinocchio-order ``parameters`` and their 10×10 ``covariance``; raises
    :class:`~robot_dynamics.core.errors.NoPayloadDetected` when the mass is within
    :data:`DETECTION_SIGMAS` σ of zero."""
    mass, first_moment = float(parameters[0]), parameters[1:4]
    mass_std = float(math.sqrt(covariance[0, 0]))
    if not mass > DETECTION_SIGMAS * mass_std:
        raise NoPayloadDetected(
            mass,
            mass_std,
            f'no payload is detectable in this data: the fitted mass is {mass:.4f} ± '
            f'{mass_std:.4f} kg, within {DETECTION_SIGMAS:g}σ of zero, so there is no centre of '
            f'mass to report (a payload lighter than {DETECTION_SIGMAS * mass_std:.3f} kg cannot '
            'be told apart from none with this motion: record a longer motion or a baseline)',
        )
    com = first_moment / mass
    jacobian = np.zeros((3, 4))
    jacobian[:, 0] = -com / mass
    jacobian[:, 1:] = np.eye(3) / mass
    com_covariance = jacobian @ covariance[:4, :4] @ jacobian.T
    report.mass, report.mass_std = mass, mass_std
    report.com, report.com_std = com.tolist(), np.sqrt(np.diag(com_covariance)).tolist()
    if report.mode != 'full':
        report.inertia = report.inertia_std = None
        return
    inertia_com, inertia_jacobian = _inertia_about_com(parameters)
    inertia_covariance = inertia_jacobian @ covariance @ inertia_jacobian.T
    report.inertia = dict(zip(INERTIA_KEYS, (float(v) for v in inertia_com)))
    report.inertia_std = dict(
        zip(INERTIA_KEYS, (float(v) for v in np.sqrt(np.diag(inertia_covariance))))
    )


def _inertia_about_com(parameters: np.ndarray) -> tuple:
    """I_C = Ī − (|h|²1 − h hᵀ)/m as the INERTIA_KEYS 6-vector, and its 6×10 Jacobian (delta
    method)."""
    mass, first_moment = parameters[0], parameters[1:4]
    key_index = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]

    def entries(matrix):
        return np.array([matrix[i, j] for i, j in key_index])

    shift = first_moment @ first_moment * np.eye(3) - np.outer(first_moment, first_moment)
    value = entries(matrix_from_vector(parameters[4:]) - shift / mass)
    jacobian = np.zeros((6, 10))
    jacobian[:, 0] = entries(shift / mass**2)
    for k in range(3):
        unit = np.eye(3)[k]
        derivative = (
            2 * first_moment[k] * np.eye(3)
            - np.outer(unit, first_moment)
            - np.outer(first_moment, unit)
        )
        jacobian[:, 1 + k] = -entries(derivative) / mass
    for k in range(6):
        unit = np.zeros(6)
        unit[k] = 1.0
        jacobian[:, 4 + k] = entries(matrix_from_vector(unit))
    return value, jacobian


def _matrix_from_keys(inertia: dict) -> np.ndarray:
    return np.array(
        [
            [inertia['ixx'], inertia['ixy'], inertia['ixz']],
            [inertia['ixy'], inertia['iyy'], inertia['iyz']],
            [inertia['ixz'], inertia['iyz'], inertia['izz']],
        ]
    )


def seconds_text(duration: float) -> str:
    """A duration [s] with one decimal, two below a second (0.04, not 0.0)."""
    return f'{duration:.1f}' if duration >= 0.95 else f'{duration:.2f}'


def coverage_words(coverage: float) -> str:
    percent = '< 1' if 0 < coverage < 0.005 else f'{100 * coverage:.0f}'
    return f'{percent} % of the payload recording'


def _decimals(std: float, least: int) -> int:
    """Decimal places that show two significant digits of ``std`` (at least ``least``)."""
    return max(least, 1 - math.floor(math.log10(std))) if std > 0 and math.isfinite(std) else least


def _plain(value):
    """numpy scalars/arrays → Python floats/lists; inf/nan → None (YAML/JSON safe)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(item) for item in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value
