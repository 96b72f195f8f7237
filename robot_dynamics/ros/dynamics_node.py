"""dynamics_node: live gravity, inverse-dynamics and external joint torques from joint_states.

Topics (relative names; the node's default name is ``dynamics``):

* subscribes ``joint_states`` (sensor_msgs/JointState, any number of publishers, any order
  and subset: merged by name) and ``robot_description`` (std_msgs/String, transient local);
* publishes ``~/inverse_dynamics_torques``, ``~/gravity_torques``, ``~/external_torques``
  (sensor_msgs/JointState: names in model order, ``effort`` filled [N·m / N], stamp copied
  from the input that triggered them), ``~/payload`` (geometry_msgs/InertiaStamped,
  transient local) and ``/diagnostics``;
* services (std_srvs/Trigger): ``~/identify_payload``, ``~/validate_inertia``,
  ``~/clear_payload_buffer``, ``~/record_baseline``;
* contact handling (:mod:`~robot_dynamics.ros.contact_outputs`): ``~/external_torques`` is the
  momentum observer's r by default (``external_torque_method``), plus ``~/contact``,
  ``~/contact_ratio``, ``~/external_wrench`` and ``~/calibrate_contact_thresholds``;
* tool outputs (:mod:`~robot_dynamics.ros.tool_outputs`): ``~/effective_mass`` (a low-rate timer)
  and ``~/known_external_wrench`` (taken into ``~/inverse_dynamics_torques`` and
  ``~/external_torques``).

q̈ for inverse dynamics comes from
:class:`~robot_dynamics.core.streams.differentiation.CausalDifferentiator`
on the measured velocities (least-squares slope over ``acceleration_window`` samples,
delay ≈ half the window: 7 ms for 15 samples at 1 kHz), or is zero with
``acceleration_mode: zero``. The torque stream runs on rclpy's EventsExecutor (the
lowest-latency one in rclpy); the services are served by a companion node on its own
executor thread (:class:`~robot_dynamics.ros.service_host.ServiceHost`), so a long
identification never stalls the stream; identification and validation themselves run in a
worker process (:mod:`~robot_dynamics.ros.service_worker`), so they do not hold the
stream's interpreter lock either. The payload recording is a shared-memory ring buffer
(:class:`~robot_dynamics.core.streams.ring_buffer.SampleRingBuffer`) the stream appends to without a
lock; the worker copies it (and the baseline, kept in shared memory too) itself, so a call
ships no samples out of this process. Every model change installs a new model object
(never mutated while the stream uses it), so services and stream share no pinocchio Data.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from array import array as typed_array
from dataclasses import dataclass
from typing import Optional

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import InertiaStamped
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.errors import JointStateError, PayloadError
from robot_dynamics.core.identification.payload import MODES as PAYLOAD_MODES
from robot_dynamics.core.identification.payload import default_payload_link
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.effort_model import (
    EffortModelError,
    effort_model_problem,
    load_effort_model,
)
from robot_dynamics.core.streams.live_torques import ACCELERATION_MODES, LiveTorqueEstimator
from robot_dynamics.core.streams.ring_buffer import RingBufferError, SampleRingBuffer
from robot_dynamics.ros.contact_outputs import ContactOutputs
from robot_dynamics.ros.diagnostics import (
    DIAGNOSTICS_PERIOD,
    RateMeter,
    diagnostic_status,
    model_status,
)
from robot_dynamics.ros.model_source import ModelSource
from robot_dynamics.ros.node_log import RateLimitedLogger, RejectionCounter, never_raises
from robot_dynamics.ros.parameters import (
    STALE_TIMEOUT,
    RuntimeParameters,
    checked_parameter,
    positive_parameter,
)
from robot_dynamics.ros.service_host import ServiceHost
from robot_dynamics.ros.service_worker import (
    DEFAULT_CPU_SHARE,
    ServiceWorker,
    SharedRecording,
    identify_payload_job,
    validate_inertia_job,
)
from robot_dynamics.ros.spinning import run_nodes
from robot_dynamics.ros.tool_outputs import ToolOutputs
from robot_dynamics.ros.topics import (
    JOINT_STATE_QOS,
    LATCHED_QOS,
    SENSOR_QOS,
    create_output_publisher,
    joint_state_fields,
)

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR

# Parameter defaults (README, config/robot_dynamics.yaml); a value out of range falls back to them.
BUFFER_DURATION = 30.0  # s
BUFFER_MAX_RATE = 1000.0  # Hz
ACCELERATION_WINDOW = 15  # samples
MAX_ACCELERATION_WINDOW = 1000  # samples (0.5 s of delay at 1 kHz)
TORQUE_WARN_RATIO = 0.8


@dataclass(frozen=True)
class _LiveModel:
    """Everything the torque stream needs for one model; replaced as a whole on a swap."""

    robot: RobotModel
    estimator: LiveTorqueEstimator
    buffer: SampleRingBuffer


class DynamicsNode(Node):
    """Publishes g(q), M q̈ + C q̇ + g and τ_measured − τ_model for every complete joint state."""

    def __init__(self, node_name: str = 'dynamics', **kwargs):
        super().__init__(node_name, **kwargs)
        self._live: Optional[_LiveModel] = (
            None  # before the parameters: payload_link's check reads it
        )
        self._swap_lock = (
            threading.Lock()
        )  # model installs come from the builder and the service threads
        self._declare_parameters()
        self.rejections = RejectionCounter(self.get_logger())
        self._log = RateLimitedLogger(self.get_logger())
        self._rate = RateMeter()
        self._processing_times = np.zeros(1000)
        self._processed = 0
        self._incomplete = 0
        self._last_torques: Optional[np.ndarray] = None
        self._last_input_wall = None
        self.baseline = None  # the no-payload Recording (record_baseline / baseline_file)
        self._shared_baseline: Optional[SampleRingBuffer] = (
            None  # the same, in shared memory for the worker
        )
        self._validation_statuses: list = []
        self._gravity_topic = _TorqueTopic(self, '~/gravity_torques')
        self._inverse_topic = _TorqueTopic(self, '~/inverse_dynamics_torques')
        self._external_topic = _TorqueTopic(self, '~/external_torques')
        self.contact = ContactOutputs(self, self.payload_link)
        self.tool = ToolOutputs(self, self.payload_link)
        self._payload_pub = create_output_publisher(self, InertiaStamped, '~/payload', LATCHED_QOS)
        self._diagnostics_pub = create_output_publisher(self, DiagnosticArray, '/diagnostics', 10)
        self.service_host = ServiceHost(self)
        self.model_source = ModelSource(self, self._on_model)
        self.create_subscription(JointState, 'joint_states', self._on_joint_state, JOINT_STATE_QOS)
        self._worker = ServiceWorker(self.service_cpu_share)
        for name, handler in (
            ('~/identify_payload', self._identify_payload),
            ('~/validate_inertia', self._validate_inertia),
            ('~/clear_payload_buffer', self._clear_payload_buffer),
            ('~/record_baseline', self._record_baseline),
        ):
            self.service_host.create_service(Trigger, name, handler)
        self.contact.create_service(self.service_host)
        self.create_timer(self.diagnostics_period, self._publish_diagnostics)
        self._load_baseline_file()

    # ------------------------------------------------------------------ parameters
    def _declare_parameters(self) -> None:
        """Every parameter is read once at start-up (read-only afterwards: a change is refused
        with a reason) except the ones the services read at each call
        (:attr:`runtime_parameters`)."""
        checked = functools.partial(checked_parameter, self)
        positive = functools.partial(positive_parameter, self)
        self.runtime_parameters = RuntimeParameters(self)
        runtime = self.runtime_parameters.declare
        runtime(
            'payload_link',
            '',
            'link whose frame carries the payload; empty: the last link of the chain (following '
            'fixed joints); read at each identify_payload call',
            self._is_model_link,
            'is not a link of the robot model',
        )
        self.buffer_duration = positive(
            'buffer_duration',
            BUFFER_DURATION,
            'seconds of (q, qd, effort) kept for payload identification',
        )
        buffer_max_rate = positive(
            'buffer_max_rate',
            BUFFER_MAX_RATE,
            'highest joint_states rate the buffer is sized for [Hz]',
            'rate [Hz]',
        )
        self._buffer_capacity = max(2, int(self.buffer_duration * buffer_max_rate))
        runtime(
            'payload_mode',
            'auto',
            "'auto', 'mass_com' (4 parameters) or 'full' (10 parameters)",
            PAYLOAD_MODES.__contains__,
            f'is not one of {PAYLOAD_MODES}',
        )
        runtime('apply_identified_payload', False, 'attach an identified payload to the live model')
        self.acceleration_mode = checked(
            'acceleration_mode',
            'estimated',
            "'estimated' (causal differentiation of velocity) or 'zero' (q̈ = 0 in the inverse "
            "dynamics)",
            ACCELERATION_MODES.__contains__,
            f'is not one of {ACCELERATION_MODES}',
        )
        self.acceleration_window = checked(
            'acceleration_window',
            ACCELERATION_WINDOW,
            'samples in the least-squares velocity slope (delay ≈ half; 2 to '
            f'{MAX_ACCELERATION_WINDOW})',
            lambda window: 2 <= window <= MAX_ACCELERATION_WINDOW,
            f'is not a window of 2 to {MAX_ACCELERATION_WINDOW} samples',
        )
        self.stale_timeout = positive(
            'stale_timeout',
            STALE_TIMEOUT,
            'a joint value older than this [s] than the newest is stale',
        )
        self.effort_model = load_effort_model(
            checked(
                'effort_model_file',
                '',
                'YAML file: per joint what effort is (torque, current, motor_torque) with k_t, '
                'gear ratio and efficiency; empty: efforts are joint torques',
                self._is_effort_model_file,
                'is not a usable effort model file (reason above)',
            )
        )
        self.torque_warn_ratio = checked(
            'torque_warn_ratio',
            TORQUE_WARN_RATIO,
            '|tau|/effort limit above which diagnostics warn (0 < ratio <= 1; error above 1)',
            lambda ratio: 0.0 < ratio <= 1.0,
            'is not in (0, 1]',
        )
        self.diagnostics_period = positive(
            'diagnostics_period', DIAGNOSTICS_PERIOD, 'period of /diagnostics [s]'
        )
        runtime('report_directory', '', 'where YAML reports go; empty: ~/.ros/robot_dynamics')
        self.service_cpu_share = checked(
            'service_cpu_share',
            DEFAULT_CPU_SHARE,
            'average share of one CPU core identify_payload and validate_inertia may use when '
            'called back to back (0 < share <= 1; an isolated call runs at full speed): the '
            'torque stream goes first',
            lambda share: 0.0 < share <= 1.0,
            'is not in (0, 1]',
        )
        runtime(
            'baseline_file',
            '',
            'CSV file the no-payload baseline is saved to (record_baseline, read at each call) / '
            'loaded from (at start)',
        )
        runtime(
            'mesh_package_paths',
            [],
            'NAME=DIR entries to resolve package:// meshes for validate_inertia',
        )
        runtime(
            'mesh_allowed_roots',
            [],
            'directories file:// meshes may be read from (validate_inertia)',
        )

    def _is_effort_model_file(self, path: str) -> bool:
        problem = effort_model_problem(path)
        if problem:
            self.get_logger().error(problem)
        return not problem

    # ------------------------------------------------------------------ model
    def _on_model(self, robot: RobotModel) -> None:
        """Install ``robot`` (called on the model source's builder thread while the stream runs)."""
        previous = self._live
        if previous is not None and previous.robot.joint_names == robot.joint_names:
            merger, buffer = previous.estimator.merger, previous.buffer
        else:
            merger, buffer = None, self._new_recording(robot.num_joints)
        self._install(_LiveModel(robot, self._estimator(robot, merger), buffer))
        if previous is not None and previous.buffer is not buffer:
            # recorded with other joints; frees its shared memory (safe mid-append)
            previous.buffer.close()

    def _new_recording(self, num_joints: int) -> SampleRingBuffer:
        """The ring buffer identify_payload reads, sized by buffer_duration × buffer_max_rate; the
        default size when /dev/shm cannot hold that (the torque stream does not depend on it)."""
        try:
            return SampleRingBuffer(self._buffer_capacity, num_joints)
        except OSError as error:
            fallback = int(BUFFER_DURATION * BUFFER_MAX_RATE)
            self.get_logger().error(
                f'recording of {self._buffer_capacity} samples refused ({error}); keeping '
                f'{fallback} samples'
            )
            self._buffer_capacity, self.buffer_duration = fallback, BUFFER_DURATION
            return SampleRingBuffer(fallback, num_joints)

    def _estimator(self, robot: RobotModel, merger=None) -> LiveTorqueEstimator:
        return LiveTorqueEstimator(
            robot,
            self.stale_timeout,
            self.acceleration_mode,
            self.acceleration_window,
            merger,
            self._effort_model_for(robot),
        )

    def _effort_model_for(self, robot: RobotModel):
        """The effort model in ``robot``'s joints; None (efforts are torques) if it names others."""
        try:
            return (
                None
                if self.effort_model is None
                else self.effort_model.for_joints(robot.joint_names)
            )
        except EffortModelError as error:
            self.get_logger().error(
                f'effort_model_file not applied to model "{robot.name}": {error}; efforts are '
                'taken as joint torques'
            )
            return None

    def _install(self, live: _LiveModel, replacing: Optional[_LiveModel] = None) -> bool:
        """Make ``live`` the stream's model (only if ``replacing`` is still in use, when given).
        One reference assignment: the stream reads self._live once per message, so it never
        sees half a swap; everything in ``live`` was built before and is never mutated after."""
        with self._swap_lock:
            if replacing is not None and self._live is not replacing:
                return False
            self._live = live
            self._last_torques = None
            return True

    def destroy_node(self):
        self.model_source.close()
        self._worker.shutdown()
        for buffer in (self._live.buffer if self._live else None, self._shared_baseline):
            if buffer is not None:
                buffer.close()
        return super().destroy_node()

    def payload_link(self, robot: RobotModel) -> str:
        """The ``payload_link`` parameter (read at each use), or the end of ``robot``'s chain."""
        return self.runtime_parameters.value('payload_link') or default_payload_link(robot)

    def _is_model_link(self, link: str) -> bool:
        """A payload_link change names a link of the live model (any link before one is loaded)."""
        live = self._live
        return not link or live is None or link in live.robot.description.links

    @property
    def robot(self) -> Optional[RobotModel]:
        live = self._live
        return live.robot if live else None

    # ------------------------------------------------------------------ torque stream
    def _on_joint_state(self, message: JointState) -> None:
        started = time.perf_counter()
        self._rate.tick()
        live = self._live
        if live is None:
            self.rejections.reject('no_model', 'no robot model loaded yet')
            return
        try:
            self._process(live, message)
        except JointStateError as error:
            self.rejections.reject(error.reason, str(error))
            return
        except Exception as error:  # a node never dies from a message
            self.rejections.reject('internal_error', repr(error))
            return
        elapsed = time.perf_counter() - started
        self._processing_times[self._processed % len(self._processing_times)] = elapsed
        self._processed += 1

    def _process(self, live: _LiveModel, message: JointState) -> None:
        sample = live.estimator.update(*joint_state_fields(message))
        if sample is None:
            self._incomplete += 1
            return
        sample = self.tool.process(live.robot, sample)
        names, header = live.robot.joint_names, message.header
        self._inverse_topic.publish(header, names, sample.inverse_dynamics)
        self._gravity_topic.publish(header, names, sample.gravity)
        self._external_topic.publish(
            header, names, self.contact.process(header, live.robot, sample)
        )
        if sample.external is not None and sample.velocities is not None:
            live.buffer.append(sample.stamp, sample.positions, sample.velocities, sample.efforts)
        self._last_torques = sample.inverse_dynamics
        self._last_input_wall = time.monotonic()

    # ------------------------------------------------------------------ services
    @never_raises
    def _clear_payload_buffer(self, request, response):
        live = self._live
        if live is None:
            return _answer(response, False, 'no robot model loaded yet')
        try:
            live.buffer.clear()
        except RingBufferError:
            pass  # replaced by a model swap meanwhile: the new recording starts empty anyway
        return _answer(
            response,
            True,
            f'recording restarted: keeps the last {self.buffer_duration:g} s of motion',
        )

    @never_raises
    def _record_baseline(self, request, response):
        recording = self._snapshot()
        if recording is None:
            return _answer(
                response,
                False,
                'nothing recorded yet: move the robot (with efforts published) first',
            )
        try:
            self._keep_baseline(recording)
        except OSError as error:  # no shared memory left
            return _answer(response, False, f'baseline not kept: {error}')
        message = (
            f'baseline kept: {len(recording.time)} samples over '
            f'{recording.time[-1] - recording.time[0]:.1f} s'
        )
        path = self.runtime_parameters.value('baseline_file')
        if path:
            try:
                from robot_dynamics.core.identification.recording_files import write_csv

                write_csv(path, recording)
                message += f', saved to {path}'
            except Exception as error:
                message += f' (not saved to {path}: {error})'
        return _answer(response, True, message)

    @never_raises
    def _identify_payload(self, request, response):
        nothing = (
            'nothing recorded yet: move the robot with the payload (efforts published), then call '
            'identify_payload'
        )
        live = self._live
        if live is None or _recorded(live.buffer) < 2:
            return _answer(response, False, nothing)
        baseline = self._shared_baseline
        link = self.payload_link(live.robot)
        try:
            # The worker may copy the recording seconds later (its start-up, a queued call): it
            # takes the samples recorded up to this call, not the motion that follows.
            recording = SharedRecording(
                live.buffer.handle, live.robot.joint_names, until=live.buffer.written
            )
            report, write_error = self._worker.run(
                identify_payload_job,
                live.robot.description.text,
                live.robot.floating_base,
                live.robot.model.gravity.linear.tolist(),
                recording,
                link,
                self.runtime_parameters.value('payload_mode'),
                SharedRecording(baseline.handle, self.baseline.joint_names)
                if baseline is not None
                else None,
                self._report_directory(),
            )
        except Exception as error:
            self.get_logger().error(f'identify_payload failed: {error!r}')
            return _answer(response, False, f'identification failed: {error}')
        if report is None:  # cleared between the check above and the worker's copy
            return _answer(response, False, nothing)
        if write_error:
            self._log.warn('report', write_error)
        if report.success:
            self._publish_payload(link, report)
            if self.runtime_parameters.value('apply_identified_payload'):
                self._apply_payload(live, link, report)
        return _answer(response, report.success, report.summary())

    @never_raises
    def _validate_inertia(self, request, response):
        live = self._live
        if live is None:
            return _answer(response, False, 'no robot model loaded yet')
        try:
            report, write_error = self._worker.run(
                validate_inertia_job,
                live.robot.description.text,
                self._package_paths(),
                self.runtime_parameters.value('mesh_allowed_roots'),
                live.robot.floating_base,
                self._report_directory(),
            )
        except Exception as error:
            self.get_logger().error(f'validate_inertia failed: {error!r}')
            return _answer(response, False, f'validation failed: {error}')
        self._validation_statuses = _validation_statuses(self.get_name(), report)
        if write_error:
            self._log.warn('report', write_error)
        self._publish_diagnostics()
        return _answer(response, report.worst_severity() != 'error', report.summary())

    def _snapshot(self):
        """A copy of the recording as a Recording, or None with fewer than 2 samples."""
        live = self._live
        if live is None or _recorded(live.buffer) < 2:
            return None
        from robot_dynamics.core.identification.recording import Recording

        try:
            stamps, positions, velocities, efforts = live.buffer.arrays()
        except RingBufferError:  # closed by a model swap meanwhile
            return None
        if len(stamps) < 2:
            return None
        return Recording(
            time=stamps,
            positions=positions,
            velocities=velocities,
            efforts=efforts,
            joint_names=live.robot.joint_names,
        )

    def _keep_baseline(self, recording) -> None:
        """Keep ``recording`` as the baseline, and a copy in shared memory that every
        identify_payload call hands to the worker by name (written once, not per call)."""
        shared = SampleRingBuffer.from_arrays(
            recording.time, recording.positions, recording.velocities, recording.efforts
        )
        previous, self._shared_baseline, self.baseline = self._shared_baseline, shared, recording
        if previous is not None:
            previous.close()

    def _publish_payload(self, link: str, report) -> None:
        message = InertiaStamped()
        message.header.stamp = self.get_clock().now().to_msg()
        message.header.frame_id = link
        message.inertia.m = float(report.mass)
        message.inertia.com.x, message.inertia.com.y, message.inertia.com.z = (
            float(c) for c in report.com
        )
        inertia = report.inertia or {}
        for key in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'):
            setattr(message.inertia, key, float(inertia.get(key, 0.0)))
        self._payload_pub.publish(message)

    def _apply_payload(self, live: _LiveModel, link: str, report) -> None:
        parameters = report.inertial_parameters()
        if parameters is None:
            return
        robot = RobotModel(
            live.robot.description, live.robot.floating_base, live.robot.model.gravity.linear
        )
        try:
            robot.attach_payload(link, parameters)
        except PayloadError as error:
            self.get_logger().error(f'identified payload not applied: {error}')
            return
        if not self._install(
            _LiveModel(robot, self._estimator(robot, live.estimator.merger), live.buffer),
            replacing=live,
        ):
            self.get_logger().warn(
                'identified payload not applied: the model changed during the call'
            )
            return
        self.get_logger().info(f'payload applied to the live model: {parameters!r}')

    def _report_directory(self) -> str:
        return self.runtime_parameters.value('report_directory') or os.path.join(
            os.path.expanduser('~'), '.ros', 'robot_dynamics'
        )

    def _package_paths(self) -> dict:
        paths = {}
        for entry in self.runtime_parameters.value('mesh_package_paths'):
            name, _, directory = str(entry).partition('=')
            if name and directory:
                paths[name] = directory
        return paths

    def _load_baseline_file(self) -> None:
        path = self.runtime_parameters.value('baseline_file')
        if not path or not os.path.isfile(path):
            return
        try:
            from robot_dynamics.core.identification.recording_files import read_csv

            self._keep_baseline(read_csv(path))
            self.get_logger().info(f'baseline loaded from {path}')
        except Exception as error:
            self.get_logger().error(f'baseline file {path} not loaded: {error}')

    # ------------------------------------------------------------------ diagnostics
    def _publish_diagnostics(self) -> None:
        try:
            array = DiagnosticArray()
            array.header.stamp = self.get_clock().now().to_msg()
            array.status = [self._model_status(), self._input_status(), self._margin_status()]
            array.status.extend(self.contact.statuses())
            array.status.extend(self.tool.statuses())
            array.status.extend(self._validation_statuses)
            self._diagnostics_pub.publish(array)
        except (
            Exception
        ) as error:  # a timer (or the service that calls this) never takes the node down either
            self.rejections.reject('internal_error', f'diagnostics: {error!r}')

    def _model_status(self) -> DiagnosticStatus:
        robot = self.robot
        if robot is None:
            return model_status(self.get_name(), None, self.model_source, {})
        payload = robot.payload
        return model_status(
            self.get_name(),
            robot,
            self.model_source,
            {
                'joints': ' '.join(robot.joint_names),
                'warnings': '; '.join(robot.warnings),
                'payload': f'{payload[1].mass:.4g} kg on {payload[0]}' if payload else 'none',
            },
        )

    def _input_status(self) -> DiagnosticStatus:
        name = f'{self.get_name()}: joint_states'
        rate = self._rate.rate()
        filled = min(self._processed, len(self._processing_times))
        times = self._processing_times[:filled] * 1e3
        values = {
            'input_rate_hz': rate,
            'processed': self._processed,
            'incomplete': self._incomplete,
            'rejected_total': self.rejections.total(),
            'processing_ms_p50': float(np.median(times)) if filled else 0.0,
            'processing_ms_max': float(times.max()) if filled else 0.0,
        }
        values.update(
            {
                f'rejected_{reason}': count
                for reason, count in sorted(self.rejections.counts.items())
            }
        )
        live = self._live
        stale = []
        if live is not None:
            values['recorded_s'] = _recorded_seconds(live.buffer)
            values['buffer_bytes'] = live.buffer.nbytes
            merger = live.estimator.merger
            newest = float(merger.position_stamps.max())
            stale = (
                merger.stale_joints(newest, self.stale_timeout)
                if newest > -np.inf
                else list(merger.joint_names)
            )
            values['stale_joints'] = ' '.join(stale)
        if stale:
            return diagnostic_status(
                name,
                WARN,
                f'stale or missing joints (no value within {self.stale_timeout:g} s of the '
                f'newest): {", ".join(stale[:6])}',
                values,
            )
        if self._last_input_wall is None:
            return diagnostic_status(name, WARN, 'no complete joint state yet', values)
        age = time.monotonic() - self._last_input_wall
        if age > max(self.stale_timeout, 1.0):
            return diagnostic_status(
                name, WARN, f'stale: last complete joint state {age:.1f} s ago', values
            )
        level = WARN if self.rejections.total() else OK
        return diagnostic_status(name, level, f'{rate:.0f} Hz', values)

    def _margin_status(self) -> DiagnosticStatus:
        name = f'{self.get_name()}: torque margins'
        torques, robot = self._last_torques, self.robot
        if torques is None or robot is None or len(torques) != robot.num_joints:
            return diagnostic_status(name, OK, 'no torques yet', {})
        margins = dynamics.torque_margins(robot, torques)
        worst = int(np.argmax(margins)) if len(margins) else 0
        values = {joint: round(float(m), 4) for joint, m in zip(robot.joint_names, margins)}
        peak = float(margins[worst]) if len(margins) else 0.0
        level = ERROR if peak > 1.0 else WARN if peak > self.torque_warn_ratio else OK
        return diagnostic_status(
            name,
            level,
            f'highest |tau|/limit {peak:.2f} at {robot.joint_names[worst]}'
            if len(margins)
            else 'no joints',
            values,
        )


class _TorqueTopic:
    """One torque output (sensor_msgs/JointState, ``effort`` in model order). Like
    :func:`~robot_dynamics.ros.topics.publish_if_subscribed`, it publishes only while a
    subscription is matched; it reuses one message (rclpy serialises it within ``publish``),
    setting the names again only when the model's name tuple changes."""

    def __init__(self, node: Node, topic: str):
        self.publisher = create_output_publisher(node, JointState, topic, SENSOR_QOS)
        self._message = JointState()
        self._names: Optional[tuple] = None

    def publish(self, header, names: tuple, torques: Optional[np.ndarray]) -> None:
        if torques is None or not self.publisher.get_subscription_count():
            return
        message = self._message
        if names is not self._names:
            message.name, self._names = list(names), names
        message.header = header
        message.effort = typed_array(
            'd', np.asarray(torques, dtype=np.float64).tobytes()
        )  # half tolist()'s cost
        self.publisher.publish(message)


def _recorded(buffer: SampleRingBuffer) -> int:
    """Samples in ``buffer``; 0 once it is closed (a model swap replaced it)."""
    try:
        return len(buffer)
    except RingBufferError:
        return 0


def _recorded_seconds(buffer: SampleRingBuffer) -> float:
    """Time span of ``buffer`` [s]; 0 once it is closed (also when a model swap on the stream
    thread closes it while validate_inertia's diagnostics read it on the service thread)."""
    try:
        return buffer.duration()
    except RingBufferError:
        return 0.0


def _answer(response, success: bool, message: str):
    response.success = bool(success)
    response.message = message
    return response


def _validation_statuses(node_name: str, report) -> list:
    """One status per link of the validation report (``<node>: inertia <link>``, clean links
    included; ``description`` for findings about the whole file) and its summary."""
    levels = {'error': ERROR, 'warning': WARN}
    statuses = [
        diagnostic_status(
            f'{node_name}: inertia {status.link or "description"}',
            levels.get(status.level, OK),
            status.message,
            status.values,
        )
        for status in report.link_statuses()
    ]
    statuses.append(
        diagnostic_status(
            f'{node_name}: inertia validation',
            levels.get(report.worst_severity(), OK),
            report.summary(),
            {},
        )
    )
    return statuses


def main(args=None) -> None:
    run_nodes(lambda: [DynamicsNode()], args, program='dynamics_node')


if __name__ == '__main__':
    main()
