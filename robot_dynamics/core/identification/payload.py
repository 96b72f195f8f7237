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
  depends on the motion only — URDF mass/CoM errors, friction of any shape (Stribeck included),
  sensor
  offsets, cable forces — cancels without being modelled; subtracting the URDF torque of
  each recording also removes the first-order effect of small tracking differences. This
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
whole-robot identification);
without a baseline, plus the assumed URDF error of the carrying body (which the data cannot
tell apart from payload); propagated to the CoM and the inertia about it by the delta method.

Signals go through :func:`robot_dynamics.core.identification.recording.prepare_for_identification`
(uniform
grid, zero-phase Butterworth on velocities and efforts alike, q̈ by central differences);
the fit then uses one sample every 1/(4·cutoff) s, since the filtered signals carry nothing
faster. Units: SI (kg, m, kg·m², N·m, s).

Where each step lives: ``payload_regressor`` (Y_L and the frame map), ``payload_samples``
(filtering, fit samples, removal of the body's torque), ``payload_alignment`` (the baseline
in time), ``payload_fit`` (mode choice, fits, covariance), ``payload_advice`` (what to record
after a refusal), ``payload_report`` (options, report, propagation to CoM and inertia).
"""

from __future__ import annotations

import time as clock
from typing import Optional

from robot_dynamics.core.dynamics import regressor
from robot_dynamics.core.errors import NoPayloadDetected, PayloadIdentificationRefused
from robot_dynamics.core.identification.payload_advice import too_few_samples
from robot_dynamics.core.identification.payload_fit import (
    body_model_covariance,
    check_model_match,
    full_fit,
    mass_com_fit,
    resolved_mode,
)
from robot_dynamics.core.identification.payload_report import (
    PayloadOptions,
    PayloadReport,
    fill_estimate,
)
from robot_dynamics.core.identification.payload_samples import fit_data, rms
from robot_dynamics.core.identification.recording import Recording
from robot_dynamics.core.model.model import RobotModel

__all__ = ['MODES', 'PayloadOptions', 'PayloadReport', 'default_payload_link', 'identify_payload']

MODES = ('auto', 'full', 'mass_com')


def default_payload_link(robot: RobotModel) -> str:
    """The link at the end of the chain, where a payload usually sits: the child of the last
    moving joint, then down single fixed joints (fr3_link7 → fr3_flange → tool0); the root
    link when no joint moves."""
    description = robot.description
    moving = [joint for joint in description.joints.values() if joint.name in robot.joint_names]
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
    ``success=False`` and an operator-language ``reason``. Raises ``ValueError`` for a bad
    ``mode``, :class:`~robot_dynamics.core.errors.DescriptionError` for an unknown link and
    :class:`~robot_dynamics.core.identification.recording.RecordingError` for a recording without
    the model's joints.
    """
    if mode not in MODES:
        raise ValueError(f'payload mode must be one of {MODES}, got {mode!r}')
    options = options or PayloadOptions()
    regressor.body_index(robot, payload_link)
    recording = recording.select_joints(robot.joint_names)
    baseline = baseline.select_joints(robot.joint_names) if baseline is not None else None
    started = clock.perf_counter()
    report = PayloadReport(
        success=False,
        reason='',
        mode=mode,
        payload_link=payload_link,
        used_baseline=baseline is not None,
    )
    try:
        _identify(robot, recording, payload_link, mode, baseline, options, report)
        report.success = True
    except PayloadIdentificationRefused as refusal:
        report.reason = str(refusal)
        for key in ('mass', 'mass_std', 'com', 'com_std', 'inertia', 'inertia_std', 'feasible'):
            setattr(report, key, None)
        if isinstance(
            refusal, NoPayloadDetected
        ):  # the mass bound is the answer to "is anything there?"
            report.mass, report.mass_std = refusal.mass, refusal.mass_std
    report.solve_time = clock.perf_counter() - started
    return report


def _identify(robot, recording, payload_link, mode, baseline, options, report) -> None:
    data = fit_data(robot, recording, payload_link, baseline, options, report)
    report.samples = len(data.sample.time)
    if report.samples < options.min_samples:
        raise PayloadIdentificationRefused(too_few_samples(robot, data, mode, options))
    report.residual_rms_before = rms(data.residual)
    resolved = resolved_mode(robot, data, mode, options, report)
    report.mode = resolved
    if resolved == 'full':
        parameters, covariance = full_fit(data, report)
    else:
        parameters, covariance = mass_com_fit(data, report)
    prediction = data.payload_rows @ parameters
    report.payload_torque_rms = rms(prediction)
    report.residual_rms_after = rms(data.residual - prediction)
    check_model_match(data, report, options)
    if baseline is None:
        covariance[:4, :4] += body_model_covariance(robot, payload_link, options)
    fill_estimate(report, parameters, covariance)
