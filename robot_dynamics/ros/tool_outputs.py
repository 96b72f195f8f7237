"""dynamics_node's tool outputs: the effective mass at the tool and a known external wrench.

Parameters (read once at start-up, read-only afterwards; config/robot_dynamics.yaml and
docs/capacity.md): ``effective_mass_rate`` [Hz] (0: off), ``effective_mass_frame`` (empty: the
payload link), ``known_wrench_timeout`` [s].

Topics:

* publishes ``~/effective_mass`` (geometry_msgs/Vector3Stamped) at ``effective_mass_rate``,
  from the latest complete joint state with velocities: ``header.stamp`` = that joint state's
  stamp, ``header.frame_id`` = the frame whose origin the figures are for, ``vector.x`` = m_u
  [kg], the effective mass along the direction u of the origin's current linear velocity v,
  ``vector.y`` = the speed |v| [m/s], ``vector.z`` = E = ½ m_u (uᵀ v)² [J], the kinetic energy a
  collision along u can transfer. While |v| < :data:`REST_SPEED` the direction of motion is
  undefined and u is the vertical, up (−g/|g|, world frame), instead (E ≈ 0); /diagnostics
  says which. Nothing is published when m_u is infinite (no joint moves the frame along u),
  without joint velocities, or for a floating-base model. Computed by a timer on the stream's
  executor from the latest sample (only when a new one came), never per message.
* subscribes ``~/known_external_wrench`` (geometry_msgs/WrenchStamped, reliable, depth 10):
  ``header.frame_id`` = the link the wrench acts on (empty: the payload link), force [N] and
  moment [N·m] in that link's frame at its origin, applied by the environment to the robot
  (the convention of sim_robot's ``~/external_wrench_command``). While one is set,
  ``~/inverse_dynamics_torques`` is τ = ID(q, q̇, q̈) − Jᵀ(q) F and ``~/external_torques`` (and
  the contact outputs built on it) reports only what F does not explain, τ_ext − Jᵀ F, for
  both ``external_torque_method`` values. An all-zero wrench, or none received for
  ``known_wrench_timeout`` s, removes it. A message with a non-finite value or a frame the
  model lacks is refused (rate-limited log and /diagnostics); the node keeps running.

The math is in :mod:`~robot_dynamics.core.dynamics.effective_mass` and
:mod:`~robot_dynamics.core.dynamics.joint_reactions`; this class converts and publishes.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import Vector3Stamped, WrenchStamped
from rclpy.node import Node

from robot_dynamics.core.dynamics.effective_mass import (
    EffectiveMass,
    EffectiveMassError,
    effective_mass_at,
)
from robot_dynamics.core.dynamics.joint_reactions import (
    KnownWrench,
    KnownWrenchError,
    KnownWrenchTorques,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.ros.diagnostics import diagnostic_status
from robot_dynamics.ros.node_log import RateLimitedLogger, shorten
from robot_dynamics.ros.parameters import checked_parameter, positive_parameter
from robot_dynamics.ros.topics import create_output_publisher

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR
EFFECTIVE_MASS_RATE = 10.0  # Hz
MAX_EFFECTIVE_MASS_RATE = 100.0  # Hz: a low-rate output, off the per-message path
KNOWN_WRENCH_TIMEOUT = 0.5  # s
REST_SPEED = 0.005
"""Frame speed [m/s] below which the frame is taken as standing still: its velocity direction is
noise, so the effective mass is given along the vertical (up, against gravity) instead."""


@dataclass(frozen=True)
class _EffectiveMassReading:
    """The latest effective-mass result: ``value`` (None when not computed) and the reason why
    not."""

    frame: str = ''
    value: Optional[EffectiveMass] = None
    at_rest: bool = False
    problem: str = ''
    level: bytes = OK


@dataclass(frozen=True)
class _ReceivedWrench:
    """A known wrench as received, and when (monotonic time [s])."""

    wrench: KnownWrench
    received: float


class ToolOutputs:
    """Owned by dynamics_node: :meth:`process` per complete joint state (returns the sample with
    the known wrench taken into account), :meth:`statuses` for /diagnostics."""

    def __init__(self, node: Node, payload_link: Callable[[RobotModel], str]):
        self._node = node
        self._payload_link = payload_link  # callable: robot -> the payload link in use
        self._log = RateLimitedLogger(node.get_logger())
        self._declare_parameters()
        self._latest = None  # (robot, TorqueSample) of the latest complete joint state
        self._reading = _EffectiveMassReading(problem='no complete joint state yet')
        self._evaluated = None  # the (robot, sample) the last reading is from
        self._known: Optional[_ReceivedWrench] = None
        self._known_torques: Optional[KnownWrenchTorques] = (
            None  # for self._known and the latest model
        )
        self._wrench_counts = {'accepted': 0, 'rejected': 0, 'removed_stale': 0}
        self._wrench_event = 'none received yet'
        self._wrench_problem = ''  # the last refusal, cleared by the next accepted message
        self._mass_pub = create_output_publisher(node, Vector3Stamped, '~/effective_mass', 10)
        node.create_subscription(
            WrenchStamped, '~/known_external_wrench', self._on_known_wrench, 10
        )
        if self.effective_mass_rate > 0.0:
            node.create_timer(1.0 / self.effective_mass_rate, self._update_effective_mass)

    def _declare_parameters(self) -> None:
        checked = functools.partial(checked_parameter, self._node)
        self.effective_mass_rate = checked(
            'effective_mass_rate',
            EFFECTIVE_MASS_RATE,
            f'rate of ~/effective_mass [Hz] (0: off; at most {MAX_EFFECTIVE_MASS_RATE:g})',
            lambda rate: 0.0 <= rate <= MAX_EFFECTIVE_MASS_RATE,
            f'is not a rate in [0, {MAX_EFFECTIVE_MASS_RATE:g}] Hz',
        )
        self.effective_mass_frame = checked(
            'effective_mass_frame',
            '',
            'frame whose origin ~/effective_mass is for (the tool point); empty: the payload link',
        )
        self.known_wrench_timeout = positive_parameter(
            self._node,
            'known_wrench_timeout',
            KNOWN_WRENCH_TIMEOUT,
            'a known external wrench not received again within this time [s] is removed',
        )

    # ------------------------------------------------------------------ stream
    def process(self, robot: RobotModel, sample):
        """``sample`` (a :class:`~robot_dynamics.core.streams.live_torques.TorqueSample`) with the
        known wrench's Jᵀ F taken off its inverse dynamics and added to its external part (the
        same object when no known wrench is set)."""
        self._latest = (robot, sample)
        known = self._known
        if known is None:
            return sample
        torques = self._torques_for(robot, known)
        if torques is None:
            return sample
        known_torques = torques.torques(sample.positions)
        external = None if sample.external is None else sample.external + known_torques
        return dataclasses.replace(
            sample,
            inverse_dynamics=sample.inverse_dynamics - known_torques,
            external=external,
            known_torques=known_torques,
        )

    def _torques_for(
        self, robot: RobotModel, known: _ReceivedWrench
    ) -> Optional[KnownWrenchTorques]:
        """Jᵀ F of ``known`` for ``robot``; None once it is stale or the model lacks its frame."""
        if time.monotonic() - known.received > self.known_wrench_timeout:
            self._wrench_counts['removed_stale'] += 1
            self._remove(f'removed: none received for {self.known_wrench_timeout:g} s')
            return None
        torques = self._known_torques
        if torques is not None and torques.robot is robot and torques.known_wrench is known.wrench:
            return torques
        try:
            torques = self._known_torques = KnownWrenchTorques(robot, known.wrench)
        except KnownWrenchError as error:
            self._wrench_problem = shorten(str(error))
            self._remove(f'removed with the new model: {error}')
            return None
        return torques

    def _remove(self, event: str) -> None:
        if self._known is None:
            return
        self._known = self._known_torques = None
        self._wrench_event = event
        self._node.get_logger().info(f'known external wrench {event}')

    # ------------------------------------------------------------------ known wrench intake
    def _on_known_wrench(self, message: WrenchStamped) -> None:
        try:
            self._take_known_wrench(message)
        except KnownWrenchError as error:
            self._refuse(str(error))
        except Exception as error:  # a node never dies from a message
            self._refuse(f'internal error: {error!r}')

    def _take_known_wrench(self, message: WrenchStamped) -> None:
        force, moment = message.wrench.force, message.wrench.torque
        robot = self._node.robot
        frame = message.header.frame_id or (self._payload_link(robot) if robot is not None else '')
        wrench = KnownWrench(frame, [force.x, force.y, force.z], [moment.x, moment.y, moment.z])
        if not (np.any(wrench.force) or np.any(wrench.moment)):
            self._wrench_problem = ''
            self._remove('removed: zero wrench received')
            return
        if not frame:
            raise KnownWrenchError(
                'no robot model loaded yet: an empty frame_id (the payload link) cannot be resolved'
            )
        # Checked against the model in use now; a later model is checked at its first joint state.
        torques = KnownWrenchTorques(robot, wrench) if robot is not None else None
        self._known, self._known_torques = _ReceivedWrench(wrench, time.monotonic()), torques
        self._wrench_counts['accepted'] += 1
        self._wrench_problem = ''
        self._wrench_event = f'set at {frame}'

    def _refuse(self, reason: str) -> None:
        self._wrench_counts['rejected'] += 1
        self._wrench_problem = shorten(reason)
        self._log.warn(
            'known_wrench',
            f'known external wrench refused ({self._wrench_counts["rejected"]} so far): {reason}; '
            'the previous one, if any, stays in use',
        )

    # ------------------------------------------------------------------ effective mass
    def _update_effective_mass(self) -> None:
        """Timer: the effective mass at the latest joint state, published and kept for diagnostics
        (nothing new without a new joint state: a stopped stream is not republished)."""
        latest = self._latest
        if latest is not None and latest is self._evaluated:
            return
        self._evaluated = latest
        try:
            reading = self._reading = self._effective_mass(latest)
            value = reading.value
            if (
                value is not None
                and math.isfinite(value.mass)
                and self._mass_pub.get_subscription_count()
            ):
                self._mass_pub.publish(_effective_mass_message(reading.frame, value))
        except Exception as error:  # a timer never takes the node down
            self._reading = _EffectiveMassReading(
                problem=f'internal error: {shorten(repr(error))}', level=ERROR
            )
            self._log.error('effective_mass', f'effective mass failed: {error!r}')

    def _effective_mass(self, latest) -> _EffectiveMassReading:
        if latest is None:
            return _EffectiveMassReading(problem='no complete joint state yet')
        robot, sample = latest
        if robot.floating_base:
            return _EffectiveMassReading(problem='not computed: defined here for fixed-base arms')
        frame = self.effective_mass_frame or self._payload_link(robot)
        if sample.velocities is None:
            return _EffectiveMassReading(
                frame, problem='no joint velocities: the tool speed is unknown', level=WARN
            )
        q, v = robot.configuration(sample.positions), robot.tangent(sample.velocities)
        try:
            value = effective_mass_at(robot, q, v, frame, time=sample.stamp)
            at_rest = value.speed < REST_SPEED
        except EffectiveMassError as error:
            if not robot.model.existFrame(frame):
                return _EffectiveMassReading(frame, problem=str(error), level=WARN)
            at_rest = True  # exactly at rest: no direction of motion
        if at_rest:
            value = effective_mass_at(robot, q, v, frame, _up(robot), time=sample.stamp)
        if not math.isfinite(value.mass):
            return _EffectiveMassReading(
                frame,
                value,
                at_rest,
                'not published: infinite along the vertical (no joint moves the frame vertically)',
            )
        return _EffectiveMassReading(frame, value, at_rest)

    # ------------------------------------------------------------------ diagnostics
    def statuses(self) -> list:
        """The effective-mass and known-wrench statuses (reads cached results only: any thread)."""
        return [self._effective_mass_status(), self._known_wrench_status()]

    def _effective_mass_status(self) -> DiagnosticStatus:
        name = f'{self._node.get_name()}: effective mass'
        values = {'rate_hz': self.effective_mass_rate, 'rest_speed_m_s': REST_SPEED}
        if self.effective_mass_rate == 0.0:
            return diagnostic_status(name, OK, 'off (effective_mass_rate 0)', values)
        reading = self._reading
        values['frame'] = reading.frame
        value = reading.value
        if value is not None:
            values.update(
                {
                    'effective_mass_kg': value.mass,
                    'speed_m_s': value.speed,
                    'collision_energy_j': value.energy,
                    'stamp_s': value.time,
                    'direction': ' '.join(f'{x:.4f}' for x in value.direction),
                    'direction_source': 'vertical (at rest)' if reading.at_rest else 'velocity',
                }
            )
        if reading.problem:
            return diagnostic_status(name, reading.level, reading.problem, values)
        along = (
            f'along the vertical: at rest (|v| < {REST_SPEED:g} m/s), no direction of motion'
            if reading.at_rest
            else 'along the velocity'
        )
        return diagnostic_status(
            name,
            OK,
            f'{value.mass:.3f} kg at {reading.frame} {along}; {value.speed:.3f} m/s, '
            f'{value.energy:.3g} J',
            values,
        )

    def _known_wrench_status(self) -> DiagnosticStatus:
        name = f'{self._node.get_name()}: known external wrench'
        values = dict(
            self._wrench_counts,
            timeout_s=self.known_wrench_timeout,
            last_event=self._wrench_event,
            last_refusal=self._wrench_problem or 'none',
        )
        known = self._known
        level = WARN if self._wrench_problem else OK
        refusal = f'; last message refused: {self._wrench_problem}' if self._wrench_problem else ''
        if known is None:
            return diagnostic_status(
                name, level, f'none in use ({self._wrench_event}){refusal}', values
            )
        wrench, age = known.wrench, time.monotonic() - known.received
        values.update(
            {
                'frame': wrench.frame,
                'force_n': ' '.join(f'{x:.4g}' for x in wrench.force),
                'moment_nm': ' '.join(f'{x:.4g}' for x in wrench.moment),
                'age_s': age,
            }
        )
        state = (
            'expired (removed at the next joint state)'
            if age > self.known_wrench_timeout
            else 'in use'
        )
        return diagnostic_status(
            name,
            level,
            f'{state} at {wrench.frame}: force {np.round(wrench.force, 3).tolist()} N, moment '
            f'{np.round(wrench.moment, 3).tolist()} N·m{refusal}',
            values,
        )


def _up(robot: RobotModel) -> np.ndarray:
    """The vertical, up: −g/|g| in the world frame (world z without gravity)."""
    gravity = np.asarray(robot.model.gravity.linear, dtype=float)
    norm = float(np.linalg.norm(gravity))
    return -gravity / norm if norm > 0.0 else np.array([0.0, 0.0, 1.0])


def _effective_mass_message(frame: str, value: EffectiveMass) -> Vector3Stamped:
    message = Vector3Stamped()
    message.header.frame_id = frame
    message.header.stamp = _time(value.time)
    message.vector.x, message.vector.y, message.vector.z = (
        float(value.mass),
        value.speed,
        float(value.energy),
    )
    return message


def _time(seconds: float) -> Time:
    whole = math.floor(seconds)
    nanoseconds = min(int(round((seconds - whole) * 1e9)), 999_999_999)
    return Time(sec=int(whole), nanosec=nanoseconds)
