"""centroidal_node's centroidal checks: the ``~/lipm_zmp`` point and marker, and the
``<node>: centroidal checks`` diagnostic status.

Per state (stream thread) only the LIPM ZMP and the start of a flight are computed, a few
float operations. Everything else (the LIPM vs full ZMP split, the condition number of
A_G, ‖k‖, the flight drift, the friction cones) is computed when diagnostics are published,
on the diagnostics thread with its own pinocchio Data. The math is in
:mod:`robot_dynamics.core.floating_base.centroidal_checks`.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Sequence

import numpy as np
import pinocchio as pin
from diagnostic_msgs.msg import DiagnosticStatus
from visualization_msgs.msg import Marker

from robot_dynamics.core.floating_base.centroidal import BalanceReport, BalanceSettings
from robot_dynamics.core.floating_base.centroidal_checks import (
    FlightDriftMonitor,
    centroidal_matrix_condition,
    compare_zero_moment_points,
    flight_drift,
    friction_cone_check,
    lipm_zmp_from_momentum_rate,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.ros.centroidal_messages import make_marker, marker_deletion
from robot_dynamics.ros.diagnostics import diagnostic_status

FRICTION_COEFFICIENT = 0.7
"""Default Coulomb coefficient μ of the feet on the ground: a rubber sole on a dry, hard floor."""

GROUND_NORMAL = np.array([0.0, 0.0, 1.0])
"""Contact normal of the ground plane (world +z)."""


class _Latest(NamedTuple):
    """The newest state, handed from the stream thread to the diagnostics thread as one object."""

    robot: RobotModel
    q: np.ndarray
    report: BalanceReport
    settings: BalanceSettings
    lipm: Optional[tuple]
    flight_start: Optional[tuple]
    """(t₀, l₀, k₀) of the current flight (:meth:`FlightDriftMonitor.start`)."""


class CentroidalChecks:
    """LIPM ZMP per state; the other checks at the diagnostics rate."""

    def __init__(self, friction_coefficient: float = FRICTION_COEFFICIENT):
        self.friction_coefficient = float(friction_coefficient)
        self._latest: Optional[_Latest] = None
        self._flight: Optional[FlightDriftMonitor] = None
        self._flight_robot: Optional[RobotModel] = None
        self._data: Optional[pin.Data] = None  # diagnostics thread only
        self._data_robot: Optional[RobotModel] = None

    @property
    def lipm_zmp(self) -> Optional[tuple]:
        """The newest LIPM ZMP (x, y, z_g) [m, world frame], None in flight or without a rate."""
        latest = self._latest
        return None if latest is None else latest.lipm

    # ------------------------------------------------------------------ stream thread
    def on_report(
        self, robot: RobotModel, q: np.ndarray, report: BalanceReport, settings: BalanceSettings
    ) -> Optional[tuple]:
        """Take one state (``q`` of ``robot``, its ``report``, both checked by the monitor);
        returns its LIPM ZMP (x, y, z_g) [m] or None."""
        state, rate = report.state, report.rate
        if robot is not self._flight_robot:
            self._flight_robot, self._flight = (
                robot,
                FlightDriftMonitor(state.mass, settings.gravity),
            )
        self._flight.update(report.stamp, report.airborne, state.momentum)
        lipm = None
        if rate is not None and not report.airborne:
            lipm = lipm_zmp_from_momentum_rate(
                state.com.tolist(),
                rate.rate.tolist(),
                rate.mass,
                settings.ground_height,
                settings.gravity,
            )
        self._latest = _Latest(robot, q, report, settings, lipm, self._flight.start)
        return lipm

    def lipm_marker(self, header) -> Marker:
        """A flat orange disc at the LIPM ZMP, or the deletion of it."""
        lipm = self.lipm_zmp
        if lipm is None:
            return marker_deletion(header, 'lipm_zmp')
        return make_marker(
            header, 'lipm_zmp', Marker.CYLINDER, (1.0, 0.6, 0.1), (0.05, 0.05, 0.006), lipm
        )

    # ------------------------------------------------------------------ diagnostics thread
    def status(
        self, name: str, contact_names: Sequence[str], wrenches: Sequence, stale_timeout: float
    ) -> DiagnosticStatus:
        """The diagnostic status ``name``. ``wrenches``: per contact frame None or (stamp [s],
        [f_x, f_y, f_z, τ_x, τ_y, τ_z] in that frame), the force the ground applies; empty when
        no contact wrench topics are used. WARN when a loaded contact is outside its cone; ERROR
        (and the reason) when a check could not be computed."""
        try:
            return self._status(name, contact_names, wrenches, stale_timeout)
        except Exception as error:  # the other statuses of the array must still go out
            return diagnostic_status(
                name, DiagnosticStatus.ERROR, f'centroidal checks failed: {error!r}', {}
            )

    def _status(
        self, name: str, contact_names: Sequence[str], wrenches: Sequence, stale_timeout: float
    ) -> DiagnosticStatus:
        latest = self._latest
        if latest is None:
            return diagnostic_status(name, DiagnosticStatus.OK, 'no state yet', {})
        report = latest.report
        values = {'friction_coefficient': self.friction_coefficient}
        values.update(_zmp_values(latest))
        values['cmm_condition_number'] = centroidal_matrix_condition(
            latest.robot, latest.q, self._data_for(latest)
        )
        values['angular_momentum_norm_Nms'] = float(np.linalg.norm(report.state.angular_momentum))
        values.update(_flight_values(latest))
        verdicts = self._friction_verdicts(latest, contact_names, wrenches, stale_timeout, values)
        violated = [
            contact
            for contact, verdict in verdicts.items()
            if verdict in ('outside_cone', 'pulling')
        ]
        if violated:
            details = ', '.join(f'{contact} ({verdicts[contact]})' for contact in violated)
            return diagnostic_status(
                name, DiagnosticStatus.WARN, f'friction cone violated: {details}', values
            )
        message = (
            f'LIPM − full ZMP {_distance_text(values["lipm_minus_full_m"])}, cond(A_G) '
            f'{values["cmm_condition_number"]:.3g}'
        )
        return diagnostic_status(name, DiagnosticStatus.OK, message, values)

    def _data_for(self, latest: _Latest) -> pin.Data:
        if latest.robot is not self._data_robot:
            self._data_robot, self._data = latest.robot, latest.robot.model.createData()
        return self._data

    def _friction_verdicts(
        self,
        latest: _Latest,
        contact_names: Sequence[str],
        wrenches: Sequence,
        stale_timeout: float,
        values: dict,
    ) -> dict:
        """Per contact: 'inside', 'outside_cone', 'pulling' (f_n < 0), 'unloaded' (|f| not above
        the contact force threshold) or 'no_wrench' (missing or stale); margins into ``values``."""
        if not wrenches:
            return {}
        robot, data, report = latest.robot, self._data_for(latest), latest.report
        pin.framesForwardKinematics(robot.model, data, latest.q)
        verdicts = {}
        for contact, wrench in zip(contact_names, wrenches):
            margin, verdict = 'none', 'no_wrench'
            if wrench is not None and abs(wrench[0] - report.stamp) <= stale_timeout:
                force = data.oMf[robot.frame_id(contact)].rotation @ np.asarray(
                    wrench[1][:3], dtype=float
                )
                check = friction_cone_check(force, GROUND_NORMAL, self.friction_coefficient)
                margin = check.margin
                verdict = (
                    'unloaded'
                    if np.linalg.norm(force) <= latest.settings.contact_force_threshold
                    else 'inside'
                    if check.inside
                    else 'pulling'
                    if not check.pushing
                    else 'outside_cone'
                )
            values[f'{contact}_friction_margin_N'] = margin
            values[f'{contact}_friction'] = verdict
            verdicts[contact] = verdict
        return verdicts


def _zmp_values(latest: _Latest) -> dict:
    report, settings = latest.report, latest.settings
    rate = report.rate
    if rate is None:
        return {
            key: 'none'
            for key in (
                'lipm_zmp',
                'full_zmp_from_momentum_rate',
                'lipm_minus_full_m',
                'lipm_minus_full_xy_m',
                'angular_momentum_rate_part_xy_m',
                'vertical_acceleration_part_xy_m',
            )
        }
    comparison = compare_zero_moment_points(
        report.state.com,
        rate.com_acceleration,
        rate.angular,
        rate.mass,
        settings.ground_height,
        settings.gravity,
        settings.flight_epsilon,
    )
    return {
        'lipm_zmp': _coordinates(latest.lipm),  # as published: none in flight
        'full_zmp_from_momentum_rate': _coordinates(comparison.full),
        'lipm_minus_full_m': 'none' if comparison.distance is None else comparison.distance,
        'lipm_minus_full_xy_m': _coordinates(comparison.difference),
        'angular_momentum_rate_part_xy_m': _coordinates(comparison.angular_momentum_contribution),
        'vertical_acceleration_part_xy_m': _coordinates(
            comparison.vertical_acceleration_contribution
        ),
    }


def _flight_values(latest: _Latest) -> dict:
    report, start = latest.report, latest.flight_start
    if start is None:
        return {
            'flight_s': 'none',
            'flight_linear_drift_Ns': 'none',
            'flight_angular_drift_Nms': 'none',
        }
    state = report.state
    drift = flight_drift(
        *start,
        report.stamp,
        state.linear_momentum,
        state.angular_momentum,
        state.mass,
        latest.settings.gravity,
    )
    return {
        'flight_s': drift.duration,
        'flight_linear_drift_Ns': float(np.linalg.norm(drift.linear)),
        'flight_angular_drift_Nms': float(np.linalg.norm(drift.angular)),
    }


def _coordinates(point) -> str:
    return 'none' if point is None else ' '.join(f'{x:.6f}' for x in point)


def _distance_text(distance) -> str:
    return 'none (flight or no rate yet)' if distance == 'none' else f'{distance:.4f} m'
