"""Every sentence a payload identification shows its operator: refusal reasons, warnings, advice
and the one-line summary.

The stages decide (refuse, warn, advise) from their own numbers; the words for each decision
are written here, once. Durations in seconds, torques in N·m, masses in kg, lengths in mm in
the summary (m everywhere else).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional, Sequence

if TYPE_CHECKING:  # types only: the stages import this module
    from robot_dynamics.core.identification.payload_advice import (
        BaselineExtension,
        MotionAdvice,
        SampleShortfall,
    )
    from robot_dynamics.core.identification.payload_report import PayloadReport
    from robot_dynamics.core.identification.payload_samples import SharedStretch


PARAMETER_NAMES = ('m', 'm·cx', 'm·cy', 'm·cz', 'Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')
"""The payload parameters in pinocchio order, as the operator reads them."""

PAYLOAD_RECORDING = 'the recording'
BASELINE = 'the baseline'


# ---------------------------------------------------------------------------- building blocks
def seconds_text(duration: float) -> str:
    """A duration [s] with one decimal, two below a second (0.04, not 0.0)."""
    return f'{duration:.1f}' if duration >= 0.95 else f'{duration:.2f}'


def coverage_words(coverage: float) -> str:
    """'70 % of the payload recording' for a coverage fraction [-] ('< 1 %' when tiny)."""
    percent = '< 1' if 0 < coverage < 0.005 else f'{100 * coverage:.0f}'
    return f'{percent} % of the payload recording'


def listed(names: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return names[0] if len(names) == 1 else ', '.join(names[:-1]) + ' and ' + names[-1]


def parameters_listed(indices: Sequence[int]) -> str:
    """'m·cy and m·cz' for payload parameter indices in pinocchio order."""
    return listed([PARAMETER_NAMES[k] for k in indices])


def stretch_words(stretch: SharedStretch) -> str:
    """The data the fit looked at, with its duration."""
    if stretch.with_baseline:
        return (
            f'the {seconds_text(stretch.duration)} s of motion the baseline and the payload '
            f'recording share ({coverage_words(stretch.coverage)})'
        )
    return f'the {seconds_text(stretch.duration)} s of motion recorded'


def _condition_text(condition: float) -> str:
    return 'infinite' if math.isinf(condition) else f'{condition:.0f}'


# ---------------------------------------------------------------------------- the recordings
def unusable_recording(label: str, error: Exception) -> str:
    return f'{label} has too few usable samples: {error}'


def sampled_too_slowly(label: str, rate_hz: float, cutoff_hz: float) -> str:
    return (
        f'{label} is sampled at {rate_hz:.0f} Hz, too slowly for the {cutoff_hz:g} Hz filter: '
        f'record at {4 * cutoff_hz:.0f} Hz or more, or lower the cutoff'
    )


def no_shared_stretch() -> str:
    return (
        'the baseline and the payload recording share no stretch of motion after aligning them '
        'in time: record the baseline with the same motion, overlapping the payload recording'
    )


def not_the_same_motion(joint: str, mismatch: float, tolerance: float) -> str:
    return (
        'the baseline is not the same motion as the payload recording: '
        f'{joint} differs by {mismatch:.3f} rad RMS after aligning them in time (accepted: '
        f'{tolerance:.3f} rad); record the baseline with exactly the same trajectory'
    )


def baseline_motion_differs(joint: str, mismatch: float, tolerance: float) -> str:
    return (
        f'the baseline motion differs from the payload recording by {mismatch:.4f} rad RMS at '
        f'{joint} (accepted up to {tolerance:.3f} rad); a closer repetition cancels the robot\'s '
        'own torques better'
    )


# ---------------------------------------------------------------------------- advice
def baseline_extension_words(extension: BaselineExtension) -> str:
    """'start the baseline about 3.2 s earlier in the motion' (or a later end, or both)."""
    if extension.where == 'start':
        return f'start the baseline about {extension.seconds:.1f} s earlier in the motion'
    if extension.where == 'end':
        return f'record the baseline about {extension.seconds:.1f} s longer into the motion'
    return f'record the baseline over about {extension.seconds:.1f} s more of the payload motion'


def motion_advice_words(advice: MotionAdvice) -> str:
    """'start the baseline about 3.2 s earlier in the motion, or move fr3_joint2 more' (the first
    part only when covering more of the payload recording would do)."""
    move = f'move {listed(advice.joints)} more'
    if advice.extension is None:
        return move
    return f'{baseline_extension_words(advice.extension)}, or {move}'


def too_few_samples(stretch: SharedStretch, shortfall: SampleShortfall) -> str:
    """The sample-count refusal, with how much more motion (or baseline coverage) would do."""
    text = (
        f'only {shortfall.samples} usable samples in {stretch_words(stretch)} '
        f'(need {shortfall.needed})'
    )
    if shortfall.static:
        return text + ': hold each static pose longer, or record more poses'
    if shortfall.extension is not None:
        return f'{text}: {baseline_extension_words(shortfall.extension)}'
    if stretch.with_baseline:
        return text + (
            ': record a longer motion, with the baseline covering at least '
            f'{shortfall.missing_seconds:.1f} s more of the payload recording'
        )
    return text + f': record a longer motion, at least {shortfall.missing_seconds:.1f} s more'


# ---------------------------------------------------------------------------- the mode
def static_data_in_full_mode() -> str:
    return (
        'the robot stood still in static poses: that gives mass and centre of mass only, not '
        'inertia; use mode mass_com, or run an excitation motion for the full inertia'
    )


def inertia_not_excited(
    stretch: SharedStretch,
    condition: float,
    limit: float,
    weakest: Sequence[int],
    advice: MotionAdvice,
) -> str:
    """The refusal of mode full when the 10-column regressor is ill-conditioned."""
    return (
        f'{stretch_words(stretch)} does not excite the payload inertia enough (condition number '
        f'{condition:.0f}, accepted up to {limit:.0f}; least excited: '
        f'{parameters_listed(weakest)}): {motion_advice_words(advice)}, or use mode mass_com'
    )


def inertia_not_identifiable(
    stretch: SharedStretch,
    condition: float,
    limit: float,
    weakest: Sequence[int],
    advice: MotionAdvice,
) -> str:
    """The warning of mode auto when it falls back to mass and centre of mass."""
    return (
        f'inertia not identifiable from {stretch_words(stretch)} (condition number '
        f'{condition:.0f} > {limit:.0f}; least excited: {parameters_listed(weakest)}); '
        f'reporting mass and centre of mass only ({motion_advice_words(advice)} to get the '
        'inertia)'
    )


def static_poses_give_mass_and_com() -> str:
    return 'static poses: reporting mass and centre of mass only (static data cannot show inertia)'


def mass_and_com_not_separable(
    stretch: SharedStretch,
    condition: float,
    limit: float,
    weakest: Sequence[int],
    advice: MotionAdvice,
) -> str:
    return (
        f'{stretch_words(stretch)} cannot separate mass and centre of mass (condition number '
        f'{_condition_text(condition)}, accepted up to {limit:.0f}; least excited: '
        f'{parameters_listed(weakest)}): {motion_advice_words(advice)}'
    )


# ---------------------------------------------------------------------------- the fit
def not_physically_realisable(smallest_eigenvalue: float) -> str:
    return (
        'the unconstrained fit is not physically realisable (smallest eigenvalue of the '
        f'pseudo-inertia {smallest_eigenvalue:.2e} kg·m²); the estimate is the closest physical '
        'one (J ⪰ 0, m ≥ 0), often on the boundary: treat its inertia with care'
    )


def constrained_solver_failed(error: Exception) -> str:
    return f'the constrained solver failed ({error}); try mode mass_com'


def constrained_solver_stopped(status: str) -> str:
    return (
        f'the constrained solver did not converge (status {status}); try mode mass_com or a '
        'longer motion'
    )


def point_mass_correction_unsettled() -> str:
    return (
        'the point-mass inertia correction did not settle; mass and CoM are from the plain '
        '4-parameter fit'
    )


def _mismatch_words(residual_rms: float, noise: float, ratio: float, used_baseline: bool) -> tuple:
    what = (
        f'the torques left after the fit ({residual_rms:.3f} N·m RMS) are {ratio:.0f}× the '
        f'torque noise ({noise:.4f} N·m)'
    )
    if used_baseline:
        cause = (
            'the baseline does not cancel the robot\'s own torques: check that it is the same '
            'motion at the same speed, without the payload'
        )
    else:
        cause = (
            'friction, sensor offsets or URDF errors are in the data and bias the payload: record '
            'a baseline (the same motion without the payload) and identify again with it'
        )
    return what, cause


def model_mismatch(residual_rms: float, noise: float, ratio: float, used_baseline: bool) -> str:
    """The refusal when the residual is far above the torque noise."""
    what, cause = _mismatch_words(residual_rms, noise, ratio, used_baseline)
    return f'model mismatch: {what}; {cause}'


def model_mismatch_warning(
    residual_rms: float, noise: float, ratio: float, used_baseline: bool
) -> str:
    what, cause = _mismatch_words(residual_rms, noise, ratio, used_baseline)
    return f'model mismatch: {what}; the standard deviations include it, but {cause}'


def no_payload_detected(mass: float, mass_std: float, sigmas: float) -> str:
    return (
        f'no payload is detectable in this data: the fitted mass is {mass:.4f} ± {mass_std:.4f} '
        f'kg, within {sigmas:g}σ of zero, so there is no centre of mass to report (a payload '
        f'lighter than {sigmas * mass_std:.3g} kg cannot be told apart from none with this '
        'motion: record a longer motion or a baseline)'
    )


def payload_too_light(mass: float, mass_std: float, lightest: float) -> str:
    return (
        f'no payload is detectable in this data: the fitted mass is {mass:.3g} ± {mass_std:.2g} '
        f'kg, under {lightest * 1e3:g} g, which is no payload (the recording and the baseline '
        'carry the same load)'
    )


# ---------------------------------------------------------------------------- the report
def report_stretch_text(report: PayloadReport) -> str:
    """'with baseline covering 70 % of the payload recording, 13.6 s used' (or '19.6 s used')."""
    used = f'{report.used_duration:.1f} s used' if report.used_duration is not None else ''
    if report.baseline_coverage is None:
        return used or ('with baseline' if report.used_baseline else 'no baseline')
    return f'with baseline covering {coverage_words(report.baseline_coverage)}, {used}'


def report_summary(report: PayloadReport) -> str:
    """One short operator line (the Trigger response message)."""
    if not report.success:
        told = (
            report.baseline_coverage is None
            or coverage_words(report.baseline_coverage) in report.reason
        )
        return f'payload not identified: {report.reason}' + (
            '' if told else f' ({report_stretch_text(report)})'
        )
    digits = _decimals(report.mass_std, 3)
    com_digits = _decimals(1e3 * max(report.com_std), 1)
    com = ', '.join(f'{1e3 * c:.{com_digits}f}' for c in report.com)
    text = (
        f'payload {report.mass:.{digits}f} ± {report.mass_std:.{digits}f} kg, CoM [{com}] ± '
        f'{1e3 * max(report.com_std):.{com_digits}f} mm in {report.payload_link} ({report.mode}, '
        f'{report_stretch_text(report)})'
    )
    warned = f'; {len(report.warnings)} warning(s), see the report' if report.warnings else ''
    return text + warned


def _decimals(std: Optional[float], least: int) -> int:
    """Decimal places that show two significant digits of ``std`` (at least ``least``)."""
    return max(least, 1 - math.floor(math.log10(std))) if std > 0 and math.isfinite(std) else least
