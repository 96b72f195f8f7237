"""dynamics_node's contact handling: external torques by momentum observer, contact flag, external
wrench.

Parameters (read once at start-up, read-only afterwards; see config/robot_dynamics.yaml and
docs/contact.md): ``external_torque_method``, ``observer_gain``, ``observer_momentum``,
``friction_file``,
``contact_thresholds``, ``contact_threshold_sigma``, ``contact_calibration_duration``,
``contact_min_duration``, ``contact_release_ratio``, ``contact_release_duration``,
``contact_rate``, ``wrench_frame``, ``wrench_damping``, ``wrench_singular_threshold``.

Topics: ``~/external_torques`` (the node's; here: τ_ext = J(q)ᵀ F, the torques the environment
applies to the robot, by either method), ``~/contact`` (std_msgs/Bool, on every change and at
``contact_rate`` while joint states with efforts flow and thresholds exist: the stream publishes
it, no timer), ``~/contact_ratio`` (sensor_msgs/JointState, ``effort`` = |τ_ext| / threshold per
joint, stamp copied from the input), ``~/external_wrench`` (geometry_msgs/WrenchStamped in
``wrench_frame``: force [N] and torque [N·m] on that link at its origin, in its axes). Service
``~/calibrate_contact_thresholds`` (std_srvs/Trigger). All math is in the core
(:mod:`~robot_dynamics.core.contact.momentum_observer`,
:mod:`~robot_dynamics.core.contact.contact_detection`,
:mod:`~robot_dynamics.core.contact.external_wrench`); this class converts and publishes.

The per-model state (observer, detector, wrench estimator) is built on the stream thread at the
first message of a new model object: a model swap (or an applied payload) restarts the observer.
The calibration service runs on the service thread; it reads a copy of the residual history and
installs a new detector by one reference assignment.
"""

from __future__ import annotations

import functools
import threading
import time
from typing import Optional

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from std_srvs.srv import Trigger

from robot_dynamics.core.contact.contact_detection import (
    DEFAULT_MIN_DURATION,
    DEFAULT_RELEASE_DURATION,
    DEFAULT_RELEASE_RATIO,
    DEFAULT_SIGMA,
    ContactCalibrationError,
    ContactDetector,
    ResidualHistory,
    ThresholdError,
    calibrated_thresholds,
    checked_thresholds,
)
from robot_dynamics.core.contact.external_wrench import (
    DEFAULT_DAMPING,
    DEFAULT_SINGULAR_THRESHOLD,
    WrenchEstimator,
)
from robot_dynamics.core.contact.momentum_observer import (
    DEFAULT_GAIN,
    DEFAULT_MOMENTUM,
    MOMENTUM_SOURCES,
    MomentumObserver,
    external_torques_from_inverse_dynamics,
    quieter_momentum_source,
)
from robot_dynamics.core.dynamics.friction import load_friction_file
from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.ros.diagnostics import diagnostic_status
from robot_dynamics.ros.node_log import never_raises
from robot_dynamics.ros.parameters import checked_parameter, positive_parameter
from robot_dynamics.ros.topics import SENSOR_QOS, create_output_publisher

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR
METHODS = ('observer', 'inverse_dynamics')
MOMENTUM_CHOICES = ('auto',) + MOMENTUM_SOURCES
CALIBRATION_DURATION = 10.0  # s
HISTORY_MAX_RATE = 1000.0  # Hz the residual history is sized for
CONTACT_RATE = 10.0  # Hz
CONTACT_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


class _ModelState:
    """Everything contact handling keeps for one model object (replaced as a whole on a swap)."""

    def __init__(
        self,
        robot: RobotModel,
        observer: Optional[MomentumObserver],
        wrench: Optional[WrenchEstimator],
        history: ResidualHistory,
        detector: Optional[ContactDetector],
        problems: list,
        alternative: Optional[MomentumObserver] = None,
    ):
        self.robot, self.observer, self.wrench, self.history = robot, observer, wrench, history
        # observer_momentum auto, until a calibration chooses: the other source's observer and
        # history
        self.alternative = alternative
        self.alternative_history = (
            ResidualHistory(history.capacity, robot.num_joints) if alternative else None
        )
        self.detector = detector  # replaced by the calibration service (one reference assignment)
        self.problems = problems  # set-up problems for diagnostics (friction file, wrench frame)
        self.efforts_missing = False
        self.last_wrench = None
        self.lock = threading.Lock()  # history appends (stream) vs. copies (service)


class ContactOutputs:
    """Owned by dynamics_node: call :meth:`process` per complete joint state, :meth:`statuses`
    for /diagnostics and :meth:`create_service` once the node's service host exists."""

    def __init__(self, node: Node, payload_link):
        self._node = node
        self._payload_link = payload_link  # callable: robot -> the payload link in use
        self._declare_parameters()
        self._state: Optional[_ModelState] = None
        self._thresholds: Optional[tuple] = (
            None  # (joint names, thresholds [N·m], 'given' | 'calibrated')
        )
        self._contact_pub = create_output_publisher(node, Bool, '~/contact', CONTACT_QOS)
        self._ratio_pub = create_output_publisher(node, JointState, '~/contact_ratio', SENSOR_QOS)
        self._wrench_pub = create_output_publisher(
            node, WrenchStamped, '~/external_wrench', SENSOR_QOS
        )
        self._ratio_message, self._wrench_message = JointState(), WrenchStamped()
        self._next_contact_publication = 0.0  # monotonic time [s]

    # ------------------------------------------------------------------ parameters
    def _declare_parameters(self) -> None:
        node = self._node
        checked = functools.partial(checked_parameter, node)
        positive = functools.partial(positive_parameter, node)
        self.method = checked(
            'external_torque_method',
            'observer',
            "'observer' (generalized-momentum observer, no joint accelerations) or "
            "'inverse_dynamics' (measured effort minus inverse dynamics)",
            METHODS.__contains__,
            f'is not one of {METHODS}',
        )
        self.observer_gain = positive(
            'observer_gain',
            DEFAULT_GAIN,
            'momentum observer gain K_O [1/s]: r is a first-order low-pass of the external torque '
            'with time constant 1/K_O',
            'gain [1/s]',
        )
        self.observer_momentum = checked(
            'observer_momentum',
            'auto',
            "where the observer's momentum comes from: 'positions' (joint-position increments), "
            "'velocities' (p = M q_dot) or 'auto' (positions; the calibration keeps the quieter "
            "of the two)",
            MOMENTUM_CHOICES.__contains__,
            f'is not one of {MOMENTUM_CHOICES}',
        )
        # the source in use; None: auto and not calibrated yet (both run, positions publish)
        self._momentum = None if self.observer_momentum == 'auto' else self.observer_momentum
        self.friction_file = checked(
            'friction_file',
            '',
            'friction YAML of robot_dynamics identify, subtracted from the measured efforts; '
            'empty: no friction model',
        )
        self.given_thresholds = checked(
            'contact_thresholds',
            [0.0],
            'contact threshold per joint [N m], model joint order; [0.0]: none given (call '
            '~/calibrate_contact_thresholds)',
            lambda values: len(values) >= 1,
            'is not a list of numbers',
        )
        self.sigma = positive(
            'contact_threshold_sigma',
            DEFAULT_SIGMA,
            'calibrated threshold = |mean| + k sigma of the contact-free residual; this is k',
            'number',
        )
        self.calibration_duration = positive(
            'contact_calibration_duration',
            CALIBRATION_DURATION,
            'seconds of contact-free motion the calibration uses (the last ones)',
        )
        self.min_duration = checked(
            'contact_min_duration',
            DEFAULT_MIN_DURATION,
            'a contact starts once a ratio has exceeded 1 this long [s]',
            lambda value: 0.0 <= value < 1.0,
            'is not a time in [0, 1) s',
        )
        self.release_ratio = checked(
            'contact_release_ratio',
            DEFAULT_RELEASE_RATIO,
            'a contact ends once every ratio is below this (hysteresis, 0 < ratio <= 1)',
            lambda value: 0.0 < value <= 1.0,
            'is not in (0, 1]',
        )
        self.release_duration = checked(
            'contact_release_duration',
            DEFAULT_RELEASE_DURATION,
            '... for this long [s]',
            lambda value: 0.0 <= value < 10.0,
            'is not a time in [0, 10) s',
        )
        self.contact_rate = positive(
            'contact_rate', CONTACT_RATE, 'rate of ~/contact besides every change [Hz]', 'rate [Hz]'
        )
        self.wrench_frame = checked(
            'wrench_frame',
            '',
            'frame of ~/external_wrench (force and torque at its origin, in its axes); empty: the '
            'payload link',
        )
        self.wrench_damping = positive(
            'wrench_damping',
            DEFAULT_DAMPING,
            'largest damping of the wrench least squares, reached at a singular direction [m]',
            'damping [m]',
        )
        self.wrench_singular_threshold = positive(
            'wrench_singular_threshold',
            DEFAULT_SINGULAR_THRESHOLD,
            'Jacobian singular value below which a wrench direction is not identifiable (and '
            'damped)',
            'singular value',
        )

    # ------------------------------------------------------------------ per model
    def _state_for(self, robot: RobotModel) -> _ModelState:
        state = self._state
        if state is None or state.robot is not robot:
            state = self._state = self._new_state(robot)
        return state

    def _new_state(self, robot: RobotModel) -> _ModelState:
        problems = []
        friction = None
        if self.friction_file:
            try:
                friction = load_friction_file(self.friction_file, robot.joint_names)
            except RobotDynamicsError as error:
                problems.append(f'friction not subtracted: {error}')
        observer = alternative = None
        if self.method == 'observer':
            observer = MomentumObserver(
                robot, self.observer_gain, friction, momentum=self._momentum or DEFAULT_MOMENTUM
            )
            if self._momentum is None:
                alternative = MomentumObserver(
                    robot, self.observer_gain, friction, momentum='velocities'
                )
        frame = self.wrench_frame or self._payload_link(robot)
        try:
            wrench = WrenchEstimator(
                robot, frame, self.wrench_damping, self.wrench_singular_threshold
            )
        except RobotDynamicsError as error:
            wrench = None
            problems.append(f'no external wrench: {error}')
        history = ResidualHistory(
            int(self.calibration_duration * HISTORY_MAX_RATE), robot.num_joints
        )
        detector = self._detector(robot, problems)
        for problem in problems:
            self._node.get_logger().error(problem)
        return _ModelState(robot, observer, wrench, history, detector, problems, alternative)

    def _detector(self, robot: RobotModel, problems: list) -> Optional[ContactDetector]:
        known = self._thresholds
        if known is not None and known[0] == robot.joint_names:
            return self._new_detector(known[1])
        given = np.asarray(self.given_thresholds, dtype=float)
        if not np.any(given):
            return None
        try:
            thresholds = checked_thresholds(given, robot.num_joints)
        except ThresholdError as error:
            problems.append(f'contact detection off: {error}')
            return None
        self._thresholds = (robot.joint_names, thresholds, 'given')
        return self._new_detector(thresholds)

    def _new_detector(self, thresholds: np.ndarray) -> ContactDetector:
        return ContactDetector(
            thresholds, self.min_duration, self.release_ratio, self.release_duration
        )

    # ------------------------------------------------------------------ stream
    def process(self, header, robot: RobotModel, sample) -> Optional[np.ndarray]:
        """One complete joint state: returns the external torques to publish on ~/external_torques
        (r with the observer, effort − inverse dynamics otherwise; None without efforts)."""
        state = self._state_for(robot)
        external = self._external_torques(state, sample)
        if external is None:
            return None
        stamp = sample.stamp
        with state.lock:
            state.history.append(stamp, external)
        detector = state.detector
        if detector is not None:
            update = detector.update(stamp, external)
            if self._ratio_pub.get_subscription_count():
                self._publish_ratio(header, robot.joint_names, update.ratios)
            now = time.monotonic()
            if update.changed or now >= self._next_contact_publication:
                self._contact_pub.publish(Bool(data=update.in_contact))
                self._next_contact_publication = now + 1.0 / self.contact_rate
        if state.wrench is not None and self._wrench_pub.get_subscription_count():
            self._publish_wrench(header, state, sample.positions, external)
        return external

    def _external_torques(self, state: _ModelState, sample) -> Optional[np.ndarray]:
        observer = state.observer
        alternative = (
            state.alternative
        )  # read after the observer: the calibration clears it before a switch
        if observer is None:
            state.efforts_missing = sample.external is None
            return external_torques_from_inverse_dynamics(sample.external)
        if sample.efforts is None or sample.velocities is None:
            for each in (observer, alternative):
                if each is not None and each.running:
                    each.reset('efforts or velocities missing or stale')
            state.efforts_missing = True
            return None
        state.efforts_missing = False
        efforts = (
            sample.efforts
            if sample.known_torques is None
            else sample.efforts + sample.known_torques
        )
        if alternative is None:
            return observer.update(
                sample.stamp, sample.positions, sample.velocities, efforts
            )  # τ_ext − Jᵀ F_known
        terms = observer.terms(sample.positions, sample.velocities, efforts)
        other = alternative.update(
            sample.stamp, sample.positions, sample.velocities, efforts, terms
        )
        if other is not None:
            with state.lock:
                state.alternative_history.append(sample.stamp, other)
        return observer.update(sample.stamp, sample.positions, sample.velocities, efforts, terms)

    def _publish_ratio(self, header, names: tuple, ratios: np.ndarray) -> None:
        message = self._ratio_message
        message.header = header
        message.name = list(names)
        message.effort = ratios.tolist()
        self._ratio_pub.publish(message)

    def _publish_wrench(
        self, header, state: _ModelState, positions: np.ndarray, external: np.ndarray
    ) -> None:
        estimate = state.wrench.estimate(positions, external)
        state.last_wrench = estimate
        message = self._wrench_message
        message.header.stamp, message.header.frame_id = header.stamp, state.wrench.frame
        force, torque = message.wrench.force, message.wrench.torque
        force.x, force.y, force.z = (float(x) for x in estimate.force)
        torque.x, torque.y, torque.z = (float(x) for x in estimate.moment)
        self._wrench_pub.publish(message)

    # ------------------------------------------------------------------ service
    def create_service(self, service_host) -> None:
        service_host.create_service(Trigger, '~/calibrate_contact_thresholds', self._calibrate)

    @never_raises
    def _calibrate(self, request, response):
        state = self._state
        if state is None:
            return _answer(
                response,
                False,
                'no joint states with efforts received yet: move the robot without contact for a '
                'while, then call again',
            )
        with state.lock:
            residuals = state.history.window(self.calibration_duration)
            other = (
                state.alternative_history.window(self.calibration_duration)
                if state.alternative
                else None
            )
        try:
            thresholds = calibrated_thresholds(residuals, self.sigma)
        except ContactCalibrationError as error:
            return _answer(response, False, f'thresholds not calibrated: {error}')
        choice = ''
        if other is not None:
            thresholds, choice = self._choose_momentum(
                state, thresholds, calibrated_thresholds(other, self.sigma)
            )
        self._thresholds = (state.robot.joint_names, thresholds, 'calibrated')
        state.detector = self._new_detector(thresholds)
        values = ', '.join(
            f'{name} {value:.3g}' for name, value in zip(state.robot.joint_names, thresholds)
        )
        return _answer(
            response,
            True,
            f'contact thresholds ({self.sigma:g} sigma over {len(residuals)} samples of the last '
            f'{self.calibration_duration:g} s, N m): {values}{choice}',
        )

    def _choose_momentum(
        self, state: _ModelState, by_positions: np.ndarray, by_velocities: np.ndarray
    ) -> tuple:
        """observer_momentum auto: keep the source with the lower calibrated thresholds; returns
        its thresholds and a note for the answer. The stream reads ``observer`` before
        ``alternative``, so clearing the alternative first never lets it update one observer
        twice."""
        thresholds = {'positions': by_positions, 'velocities': by_velocities}
        self._momentum = quieter_momentum_source(thresholds)
        kept = state.observer if self._momentum == state.observer.momentum else state.alternative
        if kept is state.alternative:  # later calibrations read the kept source's residuals
            with state.lock:
                state.history, state.alternative_history = state.alternative_history, state.history
        state.alternative = None
        state.observer = kept
        ratio = float(np.exp(np.mean(np.log(by_velocities / by_positions))))
        return thresholds[self._momentum], (
            f'; observer momentum from {self._momentum} (velocity thresholds {ratio:.3g} x those '
            'from positions)'
        )

    # Calling _calibrate as a bound method with never_raises needs a `node` with get_logger().
    def get_logger(self):
        return self._node.get_logger()

    # ------------------------------------------------------------------ diagnostics
    def statuses(self) -> list:
        name = f'{self._node.get_name()}: contact'
        state = self._state
        values = {
            'external_torque_method': self.method,
            'observer_gain_per_s': self.observer_gain,
            'observer_momentum': self._momentum
            or 'auto: positions until a calibration compares both',
        }
        if state is None:
            return [diagnostic_status(name, OK, 'no complete joint state yet', values)]
        level, messages = OK, []
        observer = state.observer
        if observer is not None:
            values.update(
                {
                    'observer_running': observer.running,
                    'observer_restarts': observer.restarts,
                    'observer_last_restart': observer.last_restart_reason,
                    'friction': repr(observer.friction)
                    if observer.friction is not None
                    else 'none',
                }
            )
        if state.efforts_missing:
            level = WARN
            messages.append(
                'no external torques: efforts or velocities missing or stale (the observer '
                'restarts when they return)'
            )
        detector, known = state.detector, self._thresholds
        if detector is None:
            level = max(level, WARN)
            messages.append(
                'contact detection not armed: set contact_thresholds or call '
                '~/calibrate_contact_thresholds'
            )
        else:
            values.update(
                {
                    'in_contact': detector.in_contact,
                    'contacts': detector.contacts,
                    'thresholds_source': known[2] if known else 'given',
                    'thresholds_nm': ' '.join(f'{t:.4g}' for t in detector.thresholds),
                }
            )
            messages.append('CONTACT' if detector.in_contact else 'no contact')
        self._wrench_values(state, values, messages)
        if state.problems:
            level = max(level, WARN)
            messages.extend(state.problems)
        if any('only' in m and 'identifiable' in m for m in messages):
            level = max(level, WARN)
        return [diagnostic_status(name, level, '; '.join(messages), values)]

    @staticmethod
    def _wrench_values(state: _ModelState, values: dict, messages: list) -> None:
        if state.wrench is None:
            return
        values['wrench_frame'] = state.wrench.frame
        estimate = state.last_wrench
        if estimate is None:
            return
        values['wrench_identifiable_directions'] = estimate.identifiable
        values['jacobian_smallest_singular_value'] = estimate.smallest_singular_value
        if estimate.identifiable < 6:
            messages.append(
                f'external wrench at {state.wrench.frame}: only {estimate.identifiable} of 6 '
                'directions identifiable (fewer than 6 joints or near a singular pose): the '
                'others are damped towards 0'
            )


def _answer(response, success: bool, message: str):
    response.success = bool(success)
    response.message = message
    return response
