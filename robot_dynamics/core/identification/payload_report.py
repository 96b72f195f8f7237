"""The result of a payload identification, built once from what its stages produced.

:class:`PayloadStages` holds the typed result of each stage (shared stretch, fit samples, mode
choice, fit, model match, estimate) as far as the data allowed; :meth:`PayloadReport.from_stages`
turns them and the refusal that stopped them, if any, into the immutable :class:`PayloadReport`,
whose fields are the report schema (docs/payload.md). Its words are in
:mod:`~robot_dynamics.core.identification.payload_words`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import numpy as np

from robot_dynamics.core.errors import NoPayloadDetected, PayloadIdentificationRefused
from robot_dynamics.core.identification import payload_words as words
from robot_dynamics.core.model.inertia import InertialParameters

if TYPE_CHECKING:
    from robot_dynamics.core.identification.payload_estimate import PayloadEstimate
    from robot_dynamics.core.identification.payload_fit import ModeChoice, ModelMatch, PayloadFit
    from robot_dynamics.core.identification.payload_samples import FitData, SharedStretch

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


@dataclass(frozen=True)
class PayloadStages:
    """The typed result of each stage of one identification, in the order they run; ``None``
    for the stages a refusal kept the data from reaching."""

    stretch: Optional[SharedStretch] = None
    samples: Optional[FitData] = None
    choice: Optional[ModeChoice] = None
    fit: Optional[PayloadFit] = None
    match: Optional[ModelMatch] = None
    estimate: Optional[PayloadEstimate] = None

    def warnings(self) -> tuple:
        """The warnings of every stage reached, in stage order."""
        reached = (self.samples, self.choice, self.fit, self.match)
        return tuple(text for stage in reached if stage is not None for text in stage.warnings)


@dataclass(frozen=True)
class PayloadReport:
    """Result of :func:`~robot_dynamics.core.identification.payload.identify_payload`; the fields
    are the report schema (docs/payload.md).

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
    ``success`` is False, ``reason`` says why, the estimate fields are ``None`` and the fields
    already measured are kept; when no payload is detectable (fitted mass within
    :data:`~robot_dynamics.core.identification.payload_estimate.DETECTION_SIGMAS` σ of zero,
    or below :data:`~robot_dynamics.core.identification.payload_estimate.LIGHTEST_PAYLOAD`)
    ``mass`` and ``mass_std`` say how little could be there.
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
    com: Optional[tuple] = None
    com_std: Optional[tuple] = None
    inertia: Optional[dict] = None
    inertia_std: Optional[dict] = None
    condition_number: Optional[float] = None
    min_normalized_singular_value: Optional[float] = None
    residual_rms_before: Optional[float] = None
    residual_rms_after: Optional[float] = None
    payload_torque_rms: Optional[float] = None
    samples: int = 0
    feasible: Optional[bool] = None
    warnings: tuple = ()
    solve_time: float = 0.0

    @classmethod
    def from_stages(
        cls,
        mode: str,
        payload_link: str,
        used_baseline: bool,
        stages: PayloadStages,
        refusal: Optional[PayloadIdentificationRefused],
        solve_time: float,
    ) -> PayloadReport:
        """The report of an identification in the requested ``mode`` on ``payload_link`` whose
        stages produced ``stages`` and, unless ``refusal`` is None, were stopped by it."""
        stretch, data, choice, fit = stages.stretch, stages.samples, stages.choice, stages.fit
        estimate = stages.estimate
        bound = refusal if isinstance(refusal, NoPayloadDetected) else estimate
        return cls(
            success=refusal is None,
            reason='' if refusal is None else str(refusal),
            mode=choice.mode if choice is not None and choice.mode is not None else mode,
            payload_link=payload_link,
            used_baseline=used_baseline,
            baseline_coverage=stretch.coverage if stretch and stretch.with_baseline else None,
            used_duration=stretch.duration if stretch else None,
            mass=bound.mass if bound else None,
            mass_std=bound.mass_std if bound else None,
            com=estimate.com if estimate else None,
            com_std=estimate.com_std if estimate else None,
            inertia=estimate.inertia if estimate else None,
            inertia_std=estimate.inertia_std if estimate else None,
            condition_number=choice.condition_number if choice else None,
            min_normalized_singular_value=choice.min_normalized_singular_value if choice else None,
            residual_rms_before=data.residual_rms if data else None,
            residual_rms_after=fit.residual_rms_after if fit else None,
            payload_torque_rms=fit.payload_torque_rms if fit else None,
            samples=len(data.sample.time) if data else 0,
            feasible=fit.feasible if fit and refusal is None else None,
            warnings=stages.warnings(),
            solve_time=solve_time,
        )

    def to_dict(self) -> dict:
        """The report as plain Python types (YAML/JSON ready), keys in schema order."""
        return {key: _plain(getattr(self, key)) for key in REPORT_KEYS}

    def summary(self) -> str:
        """One short operator line (the Trigger response message)."""
        return words.report_summary(self)

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


def _matrix_from_keys(inertia: dict) -> np.ndarray:
    return np.array(
        [
            [inertia['ixx'], inertia['ixy'], inertia['ixz']],
            [inertia['ixy'], inertia['iyy'], inertia['iyz']],
            [inertia['ixz'], inertia['iyz'], inertia['izz']],
        ]
    )


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
