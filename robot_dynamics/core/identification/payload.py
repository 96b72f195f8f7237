"""Payload identification: mass, centre of mass and inertia of a load from joint torques.

A payload rigidly fixed to ``payload_link`` adds ``Y_L(q, q̇, q̈) π_L`` to every joint torque
(the load identification of Khalil & Dombre 2002), where π_L are its 10 inertial
parameters in the payload link frame (pinocchio order
``[m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``, inertia about the link frame origin)
and ``Y_L`` is the 10-column block of pinocchio's joint-torque regressor of the body that
carries the link, mapped from that body's joint frame to the link frame by
:func:`payload_parameter_map`. All joint rows are used.

The body's own torque is removed in one of two ways:

* **URDF model** (no baseline): ``r = τ_measured − Y π_body``. Any error of the URDF, joint
  friction and torque-sensor offsets end up in ``r``; a large residual after the fit is
  reported as a model mismatch.
* **Baseline** (the same motion recorded without the payload): *aligned differencing*.
  The baseline is shifted in time onto the payload recording (cross-correlation of the
  joint velocities, refined on the joint positions), and its own URDF residual is subtracted:
  ``r = (τ_p − Y(q_p) π_body) − (τ_b − Y(q_b) π_body)``, on the stretch of the payload
  recording the aligned baseline covers (the two need not start or stop together, and either
  may repeat the motion more often; the report gives ``baseline_coverage`` and
  ``used_duration``). That stretch must pass the same sample-count and conditioning checks as
  any recording; a refusal says how much longer the baseline must cover it. Everything that
  depends on the motion only — URDF mass/CoM errors, friction of any shape (Stribeck
  included), sensor offsets, cable forces — cancels without being modelled; subtracting the
  URDF torque of each recording also removes the first-order effect of small tracking
  differences. This
  was chosen over re-identifying the body's base parameters, friction and offsets on the
  baseline because that needs a trajectory exciting all ~70 base parameters, leaves
  whatever the friction model cannot express (Stribeck, load-dependent effects are not
  linear in fixed parameters) in the payload estimate, and is itself an identification
  that can fail; differencing only asks the operator to repeat the motion. Its costs: the
  noise variance doubles, the motion must really be the same (checked:
  :attr:`PayloadOptions.baseline_position_tolerance`), and load-dependent friction does not
  cancel.

Modes: ``full`` (10 parameters, least squares constrained by J(π_L) ⪰ 0 and m ≥ 0 with
cvxpy/Clarabel when the unconstrained fit is not physical), ``mass_com`` (4 parameters
m, m·c; on moving data the payload inertia is approximated by the point mass at the CoM,
refined by fixed-point iteration), ``auto`` (``full`` when the
column-normalised 10-column regressor is well conditioned, else ``mass_com``).

Uncertainty (1σ): σ̂²(YᵀY)⁻¹ from the residual (Khalil & Dombre 2002), each standard deviation
raised to a block sandwich estimate when the residual is correlated in time (model mismatch;
:func:`robot_dynamics.core.identification.covariance.correlated_covariance`, shared with
whole-robot identification); without a baseline, plus the assumed URDF error of the carrying
body (which the data cannot tell apart from payload); propagated to the CoM and the inertia
about it by the delta method.

Signals go through
:func:`robot_dynamics.core.identification.recording.prepare_for_identification` (uniform grid,
zero-phase Butterworth on velocities and efforts alike, q̈ by central differences); the fit
then uses one sample every 1/(4·cutoff) s, since the filtered signals carry nothing faster.
Units: SI (kg, m, kg·m², N·m, s).

The stages, each a function returning a typed, frozen result, in the order they run:
``payload_samples`` (filtering, the baseline aligned in time by ``payload_alignment``, the
shared stretch; then the fit samples with the body's torque removed), the sample count,
``payload_fit`` (the mode choice, the fit with its covariance, the model match),
``payload_estimate`` (mass, CoM and inertia with 1σ). A stage that cannot give a trustworthy
result raises :class:`~robot_dynamics.core.errors.PayloadIdentificationRefused`; the report
(``payload_report``) is built once from the results reached and that refusal. The settings
are in ``payload_options``, the regressor in ``payload_regressor``, what to record after a
refusal in ``payload_advice``, and every sentence the operator reads in ``payload_words``.
"""

from __future__ import annotations

import time as clock
from typing import Optional

from robot_dynamics.core.dynamics import regressor
from robot_dynamics.core.errors import PayloadIdentificationRefused
from robot_dynamics.core.identification import payload_words as words
from robot_dynamics.core.identification.payload_advice import sample_shortfall
from robot_dynamics.core.identification.payload_estimate import payload_estimate
from robot_dynamics.core.identification.payload_fit import choose_mode, fit_payload, model_match
from robot_dynamics.core.identification.payload_options import (
    MODES,
    PayloadOptions,
    PayloadSettingsError,
    checked_mode,
)
from robot_dynamics.core.identification.payload_report import PayloadReport, PayloadStages
from robot_dynamics.core.identification.payload_samples import (
    FitData,
    fit_samples,
    shared_stretch,
)
from robot_dynamics.core.identification.recording import Recording
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.model.urdf import MOVING_JOINT_TYPES

__all__ = [
    'MODES',
    'PayloadOptions',
    'PayloadReport',
    'PayloadSettingsError',
    'default_payload_link',
    'identify_payload',
]


def default_payload_link(robot: RobotModel) -> str:
    """The link at the end of the chain, where a payload usually sits: the child of the last
    moving joint (a mimic follower included), then down single fixed joints (fr3_link7 →
    fr3_flange → tool0); the root link when no joint moves."""
    description = robot.description
    moving = [joint for joint in description.joints.values() if joint.type in MOVING_JOINT_TYPES]
    if not moving:
        return description.root
    link = moving[-1].child
    while True:
        fixed_children = [
            j.child for j in description.joints.values() if j.parent == link and j.type == 'fixed'
        ]
        if len(fixed_children) != 1:
            return link
        link = fixed_children[0]


def identify_payload(
    robot: RobotModel,
    recording: Recording,
    payload_link: str,
    mode: str = 'auto',
    baseline: Optional[Recording] = None,
    options: Optional[PayloadOptions] = None,
) -> PayloadReport:
    """Identify the payload on ``payload_link`` from a recording of measured joint torques.

    ``recording`` (and ``baseline``, the same motion without the payload) must hold every
    joint of ``robot``; ``mode`` is ``'auto'``, ``'full'`` or ``'mass_com'``. Returns a
    :class:`PayloadReport`; when the data cannot give a trustworthy answer the report has
    ``success=False`` and an operator-language ``reason``. Raises
    :class:`~robot_dynamics.core.identification.payload_options.PayloadSettingsError` for a
    bad ``mode``, :class:`~robot_dynamics.core.errors.DescriptionError` for an unknown link and
    :class:`~robot_dynamics.core.identification.recording.RecordingError` for a recording without
    the model's joints.
    """
    checked_mode(mode)
    options = options or PayloadOptions()
    regressor.body_index(robot, payload_link)
    recording = recording.select_joints(robot.joint_names)
    baseline = baseline.select_joints(robot.joint_names) if baseline is not None else None
    started = clock.perf_counter()
    stages, refusal = _run_stages(robot, recording, payload_link, mode, baseline, options)
    return PayloadReport.from_stages(
        mode, payload_link, baseline is not None, stages, refusal, clock.perf_counter() - started
    )


def _run_stages(robot, recording, payload_link, mode, baseline, options) -> tuple:
    """(:class:`PayloadStages`, the refusal that stopped them or ``None``): each stage runs on
    the results of the ones before it, until one refuses."""
    stretch = data = choice = fit = match = estimate = None
    try:
        stretch = shared_stretch(recording, baseline, options)
        data = fit_samples(robot, payload_link, stretch, options)
        _check_sample_count(robot, data, mode, options)
        choice = choose_mode(robot, data, mode, options)
        fit = fit_payload(robot, data, choice.accepted_mode(), options)
        match = model_match(data, fit, options)
        estimate = payload_estimate(fit.parameters, fit.covariance, choice.mode)
        refusal = None
    except PayloadIdentificationRefused as stopped:
        refusal = stopped
    return PayloadStages(stretch, data, choice, fit, match, estimate), refusal


def _check_sample_count(robot, data: FitData, mode: str, options: PayloadOptions) -> None:
    """Refuses fewer fit samples than ``options.min_samples``, saying what would make them up."""
    if len(data.sample.time) < options.min_samples:
        shortfall = sample_shortfall(robot, data, mode, options)
        raise PayloadIdentificationRefused(words.too_few_samples(data.stretch, shortfall))
