"""dynamics_node: live gravity, inverse-dynamics and external joint torques from joint_states.

Topics (relative names; the node's default name is ``dynamics``):

* subscribes ``joint_states`` (sensor_msgs/JointState, any number of publishers, any order
  and subset: merged by name), ``imu`` and ``odom`` with a ``base_state`` that uses them
  (:mod:`~robot_dynamics.ros.base_state_input`), ``robot_description`` (std_msgs/String,
  transient local) and
  ``~/known_external_wrench`` (geometry_msgs/WrenchStamped, reliable, depth 10: a wrench on link
  ``header.frame_id`` (empty: the payload link), force [N] and moment [N·m] in that link's frame
  at its origin, applied by the environment; zero, or none for ``known_wrench_timeout`` s,
  removes it; a non-finite one or one on a frame the model lacks is refused);
* publishes ``~/inverse_dynamics_torques``, ``~/gravity_torques``, ``~/external_torques``,
  ``~/gravity_command``, ``~/contact``, ``~/contact_ratio``, ``~/external_wrench`` and
  ``~/effective_mass`` (:mod:`~robot_dynamics.ros.dynamics_outputs`), ``~/payload``
  (geometry_msgs/InertiaStamped, transient local) and ``/diagnostics``;
* services (std_srvs/Trigger): ``~/identify_payload``, ``~/validate_inertia``,
  ``~/clear_payload_buffer``, ``~/record_baseline``, ``~/calibrate_contact_thresholds``,
  ``~/zero_effort_offsets``.

Everything published for one joint state is the result of one core object,
:class:`~robot_dynamics.core.live.live_dynamics.LiveDynamics` (torques, external torques by the
momentum observer or inverse dynamics, contact, wrench, known wrench, effective mass, the payload
recording): this node converts the message to a sample, calls it, and converts the result to
messages. It publishes the first stage's g and ID before the second stage runs the observer, so
their latency does not include it. Its parameters are declared from one table
(:mod:`~robot_dynamics.ros.dynamics_parameters`).

A joint state that repeats its joints' stamp (a driver that leaves the stamps unset) gets
``~/gravity_torques`` and ``~/gravity_command`` only and is counted as ``repeated_stamp``
(``resent_sample`` when its values are the ones held too): q̈, the observer and the contact
detection need time between samples. With ``joint_state_stamps``
``arrival`` each joint state takes the node's clock at its arrival as its stamp instead.

The torque stream runs on rclpy's EventsExecutor (the lowest-latency one in rclpy); the services
are served by a companion node on its own executor thread
(:class:`~robot_dynamics.ros.service_host.ServiceHost`), so a long identification never stalls
the stream; identification and validation themselves run in a worker process
(:mod:`~robot_dynamics.ros.service_worker`), so they do not hold the stream's interpreter lock
either. The payload recording is a shared-memory ring buffer
(:class:`~robot_dynamics.core.streams.ring_buffer.SampleRingBuffer`) the stream appends to
without a lock; the worker copies it (and the baseline, kept in shared memory too) itself, so a
call ships no samples out of this process. Every model change (a new description, an applied
payload) installs a new LiveDynamics built before and never mutated after, by one reference
assignment, so services and stream share no pinocchio Data and the stream never sees half a
swap.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections import deque
from dataclasses import replace
from typing import NamedTuple, Optional

import numpy as np
import scipy.signal  # noqa: F401  the filtered residual's filters (~1 s): at start, not at a model
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import InertiaStamped, Vector3Stamped, WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from robot_dynamics.core.contact.contact_detection import ContactCalibrationError
from robot_dynamics.core.contact.contact_profiles import (
    ContactProfileError,
    check_profile_name,
)
from robot_dynamics.core.dynamics.joint_reactions import KnownWrenchError
from robot_dynamics.core.errors import JointStateError, PayloadError, RobotDynamicsError
from robot_dynamics.core.identification.payload import default_payload_link
from robot_dynamics.core.identification.payload_options import MIN_BASELINE_SECONDS
from robot_dynamics.core.live import status as live_status
from robot_dynamics.core.live.effective_mass_reading import EffectiveMassReading
from robot_dynamics.core.live.effort_offsets import (
    EffortOffsetsError,
    OffsetsRefused,
    absent_file_words,
    replacing_words,
    save_effort_offsets,
)
from robot_dynamics.core.live.live_dynamics import LiveDynamics
from robot_dynamics.core.live.payload_in_use import (
    PayloadInUse,
    ToolsFileError,
    load_tools,
    save_tool,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.joint_states import TimeWentBack, repeated_stamp_error
from robot_dynamics.core.streams.ring_buffer import RingBufferError, SampleRingBuffer
from robot_dynamics.ros.base_state_input import BaseStateInput
from robot_dynamics.ros.diagnostics import (
    PositionJumpNotes,
    RateMeter,
    best_effort_note,
    core_status,
    diagnostic_status,
    model_status,
)
from robot_dynamics.ros.dynamics_outputs import (
    CommandTopic,
    ContactTopics,
    FeetTopics,
    TorqueTopic,
    effective_mass_message,
)
from robot_dynamics.ros.dynamics_parameters import (
    BUFFER_DURATION,
    BUFFER_MAX_RATE,
    DYNAMICS_PARAMETERS,
    live_settings,
)
from robot_dynamics.ros.ft_sensor_input import FtSensorInput
from robot_dynamics.ros.joint_state_wire import (
    JointStateReader,
    JointStateWireError,
    stamped_on_arrival,
)
from robot_dynamics.ros.lifecycle import ManagedModelNode
from robot_dynamics.ros.node_log import RateLimitedLogger, RejectionCounter, never_raises, shorten
from robot_dynamics.ros.parameter_schema import (
    NodeParameters,
    converted_value,
    warn_unknown_parameters,
)
from robot_dynamics.ros.payload_input import PayloadInput
from robot_dynamics.ros.rclpy_compat import add_post_set_callback
from robot_dynamics.ros.service_host import ServiceHost
from robot_dynamics.ros.service_worker import (
    ServiceWorker,
    SharedRecording,
    explain_residual_job,
    identify_payload_job,
    validate_inertia_job,
)
from robot_dynamics.ros.spinning import run_nodes, steady_timer
from robot_dynamics.ros.topics import (
    JOINT_STATE_QOS,
    LATCHED_QOS,
    SubscribedOutputs,
    create_output_publisher,
)

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR
SHORT_SWITCH_INTERVAL = 1e-4
"""[s] Python's GIL switch interval while the filtered residual is evaluated."""


_REPEATED_STAMP_WARNINGS = {
    'repeated_stamp': 'joint states repeat their stamps with new values (rejected_repeated_stamp):'
    ' gravity torques only for those; have the driver stamp its joint states, or set '
    'joint_state_stamps: arrival',
    'resent_sample': 'joint states resend their previous sample, same stamp and values '
    '(rejected_resent_sample): gravity torques only for those',
}


class _Header(NamedTuple):
    """A joint state's stamp [s] and the header fields the outputs copy."""

    stamp: float
    sec: int
    nanosec: int
    frame_id: str


class DynamicsNode(ManagedModelNode, Node):
    """Publishes g(q), M q̈ + C q̇ + g, the external torques, contact and wrench for every
    complete joint state (one :class:`LiveDynamics` call per message).

    With ``managed: true`` it is a lifecycle node (``ros2 lifecycle set``): configure loads the
    model, activate starts the outputs, deactivate stops them, cleanup forgets the model.
    Unmanaged (the default) it loads and publishes from the start, with no lifecycle interface."""

    def __init__(self, node_name: str = 'dynamics', **kwargs):
        Node.__init__(self, node_name, **kwargs)
        self._live: Optional[LiveDynamics] = None  # before the parameters: payload_link's check
        self._unknown_payload_link: tuple = ()  # (model, link) last logged by payload_link()
        # model installs come from the builder and the service threads
        self._swap_lock = threading.Lock()
        self.parameters = NodeParameters(self, DYNAMICS_PARAMETERS)
        self.settings = live_settings(self.parameters)
        self.buffer_duration = self.parameters['buffer_duration']
        self._buffer_capacity = max(
            2, int(self.buffer_duration * self.parameters['buffer_max_rate'])
        )
        self._set_up_stream_state()
        self._create_outputs()
        self.service_host = ServiceHost(self)
        self._payload_in_use: Optional[PayloadInUse] = None
        self._untying_tool = False  # active_tool set to '' to follow the payload in use
        self.payload_input = PayloadInput(
            self,
            self.service_host.node,
            self.parameters['tools_file'],
            self._payload_pub,
            self._use_payload,
        )
        self._select_initial_tool()
        # checked while being set, acted on only once every parameter of the request is accepted
        self.add_on_set_parameters_callback(self._check_active_tool)
        self.add_on_set_parameters_callback(self._check_contact_profile)
        add_post_set_callback(self, self._after_parameters_set)
        self.start_lifecycle(self.parameters['managed'])
        self._create_inputs()
        self._create_services()
        if self.effective_mass_rate > 0.0:
            steady_timer(self, 1.0 / self.effective_mass_rate, self._update_effective_mass)
        steady_timer(self, self.parameters['diagnostics_period'], self._publish_diagnostics)
        # off the stream's thread: ~14 ms per 5 s block of a 1 kHz arm
        steady_timer(
            self.service_host.node,
            self.parameters['diagnostics_period'],
            self._update_filtered_residual,
        )
        self._load_baseline_file()
        self._report_absent_offsets_file()
        warn_unknown_parameters(self)

    def _set_up_stream_state(self) -> None:
        """Counters, meters and the state the stream and diagnostics share."""
        self.effective_mass_rate = self.parameters['effective_mass_rate']
        self.rejections = RejectionCounter(self.get_logger())
        self._log = RateLimitedLogger(self.get_logger())
        self._rate = RateMeter()
        self._processing_times = np.zeros(1000)
        self._processed = 0
        self._incomplete = 0
        self._last_input_wall = None
        self._last_repeated_stamp = (-math.inf, '')  # (monotonic time [s], reason)
        self._warned_best_effort: set = set()  # joint_states topics already logged as such
        self._stamp_on_arrival = self.parameters['joint_state_stamps'] == 'arrival'
        self.effective_mass_reading = EffectiveMassReading(problem='no complete joint state yet')
        self.baseline = None  # the no-payload Recording (record_baseline / baseline_file)
        # the same, in shared memory for the worker
        self._shared_baseline: Optional[SampleRingBuffer] = None
        self._validation_statuses: list = []

    def _create_outputs(self) -> None:
        """The output publishers; the stream's topics publish only while subscribed."""
        self._outputs = outputs = SubscribedOutputs()
        self._gravity_topic = TorqueTopic(self, '~/gravity_torques', outputs)
        self._inverse_topic = TorqueTopic(self, '~/inverse_dynamics_torques', outputs)
        self._external_topic = TorqueTopic(self, '~/external_torques', outputs)
        self._command_topic = CommandTopic(self, outputs)
        self._contact_topics = ContactTopics(self, self.parameters['contact_rate'], outputs)
        self._feet_topics = FeetTopics(
            self, tuple(self.parameters['contact_frames']), self.parameters['world_frame'], outputs
        )
        self._mass_pub = create_output_publisher(self, Vector3Stamped, '~/effective_mass', 10)
        self._payload_pub = create_output_publisher(self, InertiaStamped, '~/payload', LATCHED_QOS)
        self._diagnostics_pub = create_output_publisher(self, DiagnosticArray, '/diagnostics', 10)

    def _create_inputs(self) -> None:
        """The joint-state, base-state, known-wrench and F/T sensor inputs."""
        # Raw: joint_state_wire reads the message from its bytes (names decoded once).
        self._joint_state_reader = JointStateReader()
        # with effort_delay the outputs describe an earlier joint state: its header is kept here
        self._earlier_headers = deque(maxlen=1024) if self.parameters['effort_delay'] else None
        self.time_restarts = 0  # the joint states' time went back (TimeWentBack)
        self._jump_notes = PositionJumpNotes()
        self.create_subscription(
            JointState, 'joint_states', self._on_joint_state, JOINT_STATE_QOS, raw=True
        )
        self.base_state_input = BaseStateInput(
            self, self.settings.base_state, lambda: self._live, self.rejections
        )
        self.create_subscription(
            WrenchStamped, '~/known_external_wrench', self._on_known_wrench, 10
        )
        self.ft_sensor_input = None
        self._joint_payload: Optional[tuple] = None  # (mass, 1σ) [kg] identified from torques
        self._identified_words = 'none'  # the last identified payload, for the model status
        if self.parameters['ft_sensor_topic']:
            self.ft_sensor_input = FtSensorInput(
                self,
                self.service_host,
                self.parameters['ft_sensor_topic'],
                self.parameters['wrench_frame'],
                lambda: self._live,
                self._tool_bias,
                self.rejections,
            )

    def _create_services(self) -> None:
        """The worker and the Trigger services on the companion node."""
        self._worker = ServiceWorker(self.parameters['service_cpu_share'])
        for name, handler in (
            ('~/identify_payload', self._identify_payload),
            ('~/validate_inertia', self._validate_inertia),
            ('~/clear_payload_buffer', self._clear_payload_buffer),
            ('~/record_baseline', self._record_baseline),
            ('~/calibrate_contact_thresholds', self._calibrate_contact_thresholds),
            ('~/zero_effort_offsets', self._zero_effort_offsets),
            ('~/explain_residual', self._explain_residual),
        ):
            self.service_host.create_service(Trigger, name, handler)

    # ------------------------------------------------------------------ model
    def _on_model(self, robot: RobotModel) -> None:
        """Install ``robot`` (called on the model source's builder thread while the stream runs)."""
        previous = self._live
        if previous is None:  # the start, or a configure after a cleanup: the profile set now
            settings = replace(self.settings, contact_profile=self.parameters['contact_profile'])
            live = LiveDynamics(
                robot, settings, self._new_recording(robot.num_joints), self.payload_link
            )
        elif previous.robot.joint_names == robot.joint_names:
            live = previous.with_model(robot)
        else:
            live = previous.with_model(robot, self._new_recording(robot.num_joints))
        for problem in live.problems:
            self.get_logger().error(problem)
        live = self._with_payload_in_use(live)
        self._install(live)
        if previous is not None and previous.recording is not live.recording:
            # recorded with other joints; frees its shared memory (safe mid-append)
            previous.recording.close()

    # ------------------------------------------------------------------ payload in use
    def _select_initial_tool(self) -> None:
        name = self.parameters['active_tool']
        if not name:
            return
        tool = self.payload_input.tools.get(name)
        if tool is None:
            self.get_logger().error(
                f'active_tool {name!r} is not a tool of tools_file, no payload (active_tool set '
                f"to ''); tools: {self.payload_input.tools_listing()}"
            )
            self.set_parameters([Parameter('active_tool', value='')])
            return
        self._payload_in_use = PayloadInUse(tool.link, tool.parameters, 'tool', name)

    def _tool_bias(self) -> tuple:
        """(name, F/T bias or None) of the tool preset in use; ('', None) without one."""
        payload = self._payload_in_use
        if payload is None or payload.source != 'tool':
            return '', None
        tool = self.payload_input.tools.get(payload.tool)
        return payload.tool, None if tool is None else tool.ft_bias

    def _with_payload_in_use(self, live: LiveDynamics) -> LiveDynamics:
        """``live`` with the payload in use attached (a new model keeps it when it has the
        link); publishes it the first time."""
        payload = self._payload_in_use
        if payload is None:
            return live
        try:
            loaded = live.with_payload(payload.link, payload.parameters)
        except PayloadError as error:
            dropped_tool = payload.source == 'tool'
            self.get_logger().error(
                f'payload {payload.describe()} dropped: {error}'
                + (" (active_tool set to '')" if dropped_tool else '')
            )
            self._payload_in_use = None
            self.payload_input.publish(None)
            if dropped_tool:
                self.set_parameters([Parameter('active_tool', value='')])
            return live
        self.payload_input.publish(payload)
        return loaded

    def _use_payload(self, payload: Optional[PayloadInUse]) -> Optional[str]:
        """Install the pipeline with ``payload`` (None: no payload); None, or why not (the
        previous pipeline stays). Before a model is loaded the payload waits for it (the model
        refuses it then if it lacks its link)."""
        live = self._live
        if live is None:
            self._payload_in_use = payload
            return None
        try:
            if payload is None:
                loaded = live.without_payload()
            else:
                loaded = live.with_payload(payload.link, payload.parameters)
        except PayloadError as error:
            return str(error)
        if not self._install(loaded, replacing=live):
            return 'the model changed meanwhile; send it again'
        self._payload_in_use = payload
        self._untie_active_tool()
        return None

    def _check_active_tool(self, parameters: list) -> SetParametersResult:
        """Refuse an active_tool that is no tool of tools_file, or whose link the model in use
        lacks or does not move."""
        for parameter in parameters:
            name = converted_value(parameter.value, '')
            if parameter.name != 'active_tool' or not isinstance(name, str):
                continue  # a value of the wrong type: the parameter table refuses it
            problem = self._tool_problem(name)
            if problem:
                return SetParametersResult(successful=False, reason=problem)
        return SetParametersResult(successful=True)

    def _tool_problem(self, name: str) -> str:
        if not self.payload_input.is_tool(name):
            if not self.parameters['tools_file']:
                return (
                    f'active_tool {name!r}: no tools_file is set (it is read at start: give it '
                    'at launch)'
                )
            return (
                f'active_tool {name!r} is not a tool of tools_file; tools: '
                f'{self.payload_input.tools_listing()}'
            )
        live = self._live
        if not name or live is None:
            return ''
        link = self.payload_input.tools[name].link
        try:
            live.robot.frame_id(link, PayloadError, f'link of tool {name!r}', moving=True)
        except PayloadError as error:
            return str(error)
        return ''

    def _check_contact_profile(self, parameters: list) -> SetParametersResult:
        """Refuse a contact_profile that is no profile, or one that does not fit the model
        (without a model, as a managed node before configure: only the name is checked; the
        model loaded later starts with it)."""
        for parameter in parameters:
            name = converted_value(parameter.value, '')
            if parameter.name != 'contact_profile' or not isinstance(name, str):
                continue  # a value of the wrong type: the parameter table refuses it
            live = self._live
            try:
                if live is None:
                    check_profile_name(name, self.settings.contact_profiles_file)
                else:
                    live.check_contact_profile(name)
            except ContactProfileError as error:
                return SetParametersResult(successful=False, reason=str(error))
        return SetParametersResult(successful=True)

    def _after_parameters_set(self, parameters: list) -> None:
        """Act on an active_tool or contact_profile every callback has accepted."""
        for parameter in parameters:
            value = converted_value(parameter.value, '')
            if parameter.name == 'active_tool' and not self._untying_tool:
                self.payload_input.select_tool(value)
            elif parameter.name == 'contact_profile' and self._live is not None:
                self._live.use_contact_profile(value)

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

    def _install(
        self, live: Optional[LiveDynamics], replacing: Optional[LiveDynamics] = None
    ) -> bool:
        """Make ``live`` the stream's pipeline (only if ``replacing`` is still in use, when
        given). One reference assignment: the stream reads self._live once per message, so it
        never sees half a swap; ``live`` was built before and is not swapped again after."""
        with self._swap_lock:
            if replacing is not None and self._live is not replacing:
                return False
            self._live = live
            return True

    def _drop_model(self) -> None:
        """Forget the model (lifecycle cleanup): no pipeline, its recording released."""
        live = self._live
        self._install(None)
        self.effective_mass_reading = EffectiveMassReading(problem='no robot model')
        if live is not None and live.recording is not None:
            live.recording.close()

    def destroy_node(self):
        """Release what the node holds, also when its construction stopped half-way (rclpy's
        shutdown destroys such a node too): only the parts that exist."""
        for part, release in (
            ('payload_input', 'close'),
            ('model_source', 'close'),
            ('_worker', 'shutdown'),
        ):
            held = getattr(self, part, None)
            if held is not None:
                getattr(held, release)()
        live = getattr(self, '_live', None)
        for buffer in (live.recording if live else None, getattr(self, '_shared_baseline', None)):
            if buffer is not None:
                buffer.close()
        return super().destroy_node()

    def payload_link(self, robot: RobotModel) -> str:
        """The ``payload_link`` parameter (read at each use) when it is a link of ``robot``, else
        the end of ``robot``'s chain. A parameter given before the model came (at launch, or
        with the description on a topic) that names none of its links is logged by name, once
        per model and value."""
        link = self.parameters['payload_link']
        if link and link in robot.description.links:
            return link
        fallback = default_payload_link(robot)
        if link and self._unknown_payload_link != (robot.name, link):
            self._unknown_payload_link = (robot.name, link)
            self.get_logger().error(
                f'parameter payload_link {link!r} is not a link of robot model "{robot.name}"; '
                f'using the end of its chain, {fallback!r}'
            )
        return fallback

    @property
    def robot(self) -> Optional[RobotModel]:
        live = self._live
        return live.robot if live else None

    # ------------------------------------------------------------------ torque stream
    def _on_joint_state(self, serialized: bytes) -> None:
        """One serialized sensor_msgs/JointState (the subscription is raw)."""
        started = time.perf_counter()
        self._rate.tick()
        live = self._live
        if not self.accepts_joint_states():
            return
        if live is None:
            self.rejections.reject('no_model', 'no robot model loaded yet')
            return
        try:
            try:
                self._process(live, serialized)
            except TimeWentBack as error:
                self._process(self._restarted(live, error), serialized)
        except JointStateError as error:
            self.rejections.reject(error.reason, str(error))
            return
        except JointStateWireError as error:
            self.rejections.reject('malformed_joint_state', str(error))
            return
        except Exception as error:  # a node never dies from a message
            self.rejections.reject('internal_error', repr(error))
            return
        elapsed = time.perf_counter() - started
        self._processing_times[self._processed % len(self._processing_times)] = elapsed
        self._processed += 1

    def _process(self, live: LiveDynamics, serialized: bytes) -> None:
        message = self._joint_state_reader.read(serialized)
        if self._stamp_on_arrival:
            message = stamped_on_arrival(message, self.get_clock().now().nanoseconds)
        if self._earlier_headers is not None:
            sample = message.sample
            self._earlier_headers.append(
                _Header(sample.stamp, message.sec, message.nanosec, message.frame_id)
            )
        torques = live.torques(message.sample)
        if torques is None:
            self._incomplete += 1
            return
        if torques.stamp != message.sample.stamp:  # effort_delay: an earlier instant
            message = self._header_at(torques.stamp, message)
        self._outputs.refresh()
        names = live.robot.joint_names
        if self._command_topic.wanted():  # first: a control loop waits on it
            self._command_topic.publish(live.gravity_command(torques))
        # the outputs take the input's stamp and frame from message (sec, nanosec, frame_id)
        self._inverse_topic.publish(message, names, torques.inverse_dynamics)
        self._gravity_topic.publish(message, names, torques.gravity)
        self._last_input_wall = time.monotonic()
        if torques.inverse_dynamics is None:
            error = repeated_stamp_error(torques.stamp, live.estimator.merger.resent)
            self._last_repeated_stamp = (self._last_input_wall, error.reason)
            raise error
        external = live.external_torques(torques)
        self._external_topic.publish(message, names, external)
        result = live.result(torques, external, wrench=self._contact_topics.wants_wrench())
        self._contact_topics.publish(message, result, live.wrench_frame)
        self._feet_topics.publish(message, result, live.robot.description.root)
        live.record()

    def _restarted(self, live: LiveDynamics, error: TimeWentBack) -> LiveDynamics:
        """The pipeline that takes the joint states from the earlier time on (``live``
        restarted, or the one a model swap installed meanwhile), counted and logged."""
        restarted = live.restarted()
        if not self._install(restarted, replacing=live):
            return self._live
        if self._earlier_headers is not None:
            self._earlier_headers.clear()
        self.time_restarts += 1
        self._log.warn(
            'time_went_back',
            f'{error}; the stream restarted there ({self.time_restarts} so far)',
        )
        return restarted

    def _header_at(self, stamp: float, newest):
        """The kept header of the joint state whose stamp is ``stamp`` [s] (its ``sec``,
        ``nanosec`` and ``frame_id`` stamp the outputs), ``newest`` when none is kept."""
        for header in reversed(self._earlier_headers):
            if header.stamp == stamp:
                return header
        return newest

    # ------------------------------------------------------------------ known wrench, tool
    def _on_known_wrench(self, message: WrenchStamped) -> None:
        try:
            live = self._live
            if live is None:
                raise KnownWrenchError('no robot model loaded yet: it cannot be checked')
            force, moment = message.wrench.force, message.wrench.torque
            live.take_known_wrench(
                message.header.frame_id,
                [force.x, force.y, force.z],
                [moment.x, moment.y, moment.z],
            )
        except KnownWrenchError as error:
            self._refuse_known_wrench(str(error))
        except Exception as error:  # a node never dies from a message
            self._refuse_known_wrench(f'internal error: {error!r}')

    def _refuse_known_wrench(self, reason: str) -> None:
        live = self._live
        count = '' if live is None else f' ({live.known_wrench.refuse(shorten(reason))} so far)'
        self._log.warn(
            'known_wrench',
            f'known external wrench refused{count}: {reason}; the previous one, if any, stays '
            'in use',
        )

    def _update_effective_mass(self) -> None:
        """Timer: the effective mass at the latest joint state, published and kept for
        diagnostics (nothing new without a new joint state: a stopped stream is not republished;
        nothing while a managed node is not active)."""
        live = self._live
        if live is None or not self.active:
            return
        try:
            reading = live.effective_mass()
            if reading is None:
                return
            self.effective_mass_reading = reading
            if reading.publishable and self._mass_pub.get_subscription_count():
                self._mass_pub.publish(effective_mass_message(reading))
        except Exception as error:  # a timer never takes the node down
            self.effective_mass_reading = EffectiveMassReading(
                problem=f'internal error: {shorten(repr(error))}', level=live_status.ERROR
            )
            self._log.error('effective_mass', f'effective mass failed: {error!r}')

    # ------------------------------------------------------------------ services
    @never_raises
    def _clear_payload_buffer(self, request, response):
        live = self._live
        if live is None:
            return _answer(response, False, self.no_model_words())
        try:
            live.recording.clear()
        except RingBufferError:
            pass  # replaced by a model swap meanwhile: the new recording starts empty anyway
        return _answer(
            response,
            True,
            f'recording restarted: keeps the last {self.buffer_duration:g} s of motion',
        )

    @never_raises
    def _record_baseline(self, request, response):
        if self._live is None:
            return _answer(response, False, self.no_model_words())
        recording = self._snapshot()
        if recording is None:
            return _answer(
                response,
                False,
                'nothing recorded yet: move the robot (with efforts published) first',
            )
        seconds = recording.time[-1] - recording.time[0]
        if seconds < MIN_BASELINE_SECONDS:
            kept = '; the previous baseline stays' if self.baseline is not None else ''
            return _answer(
                response,
                False,
                f'baseline not kept: {len(recording.time)} samples over {seconds:.3f} s, under '
                f'{MIN_BASELINE_SECONDS:g} s: record the motion without the payload, then call '
                f'again{kept}',
            )
        span = f'{len(recording.time)} samples over {seconds:.1f} s'
        try:
            self._keep_baseline(recording)
        except OSError as error:  # no shared memory left
            return _answer(response, False, f'baseline not kept: {error}')
        message = f'baseline kept: {span}'
        path = self.parameters['baseline_file']
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
        if live is None:
            return _answer(response, False, self.no_model_words())
        if _recorded(live.recording) < 2:
            return _answer(response, False, nothing)
        baseline = self._shared_baseline
        link = self.payload_link(live.robot)
        try:
            # The worker may copy the recording seconds later (its start-up, a queued call): it
            # takes the samples recorded up to this call, not the motion that follows.
            recording = SharedRecording(
                live.recording.handle, live.robot.joint_names, until=live.recording.written
            )
            report, write_error = self._worker.run(
                identify_payload_job,
                live.robot.description.text,
                live.robot.floating_base,
                live.robot.model.gravity.linear.tolist(),
                recording,
                link,
                self.parameters['payload_mode'],
                SharedRecording(baseline.handle, self.baseline.joint_names)
                if baseline is not None
                else None,
                self._report_directory(),
                self.parameters['effort_scale_uncertainty'],
            )
        except Exception as error:
            self.get_logger().error(f'identify_payload failed: {error!r}')
            return _answer(response, False, f'identification failed: {error}')
        if report is None:  # cleared between the check above and the worker's copy
            return _answer(response, False, nothing)
        if write_error:
            self._log.warn('report', write_error)
        if report.success:
            self._joint_payload = (report.mass, report.mass_std)
            self._identified_words = _identified_payload_words(link, report)
            applied = self.parameters['apply_identified_payload'] and self._apply_payload(
                live, link, report
            )
            if applied:
                self.payload_input.publish_identified(self._payload_message(link, report))
            outcome = self._identified_use_words(applied) + self._save_identified(link, report)
        else:
            outcome = ''
        return _answer(
            response, report.success, report.summary() + outcome + _not_written(write_error)
        )

    def _identified_use_words(self, applied: bool) -> str:
        """What became of an identified payload, for the service's answer."""
        if applied:
            return '; now the payload in use'
        in_use = self._payload_in_use
        return (
            '; not applied (apply_identified_payload false or refused): the payload in use is '
            f'{in_use.describe() if in_use else "none"}'
        )

    @never_raises
    def _validate_inertia(self, request, response):
        live = self._live
        if live is None:
            return _answer(response, False, self.no_model_words())
        try:
            report, write_error = self._worker.run(
                validate_inertia_job,
                live.robot.description.text,
                self._package_paths(),
                self.parameters['mesh_allowed_roots'],
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
        return _answer(
            response,
            report.worst_severity() != 'error',
            report.summary() + _not_written(write_error),
        )

    def _snapshot(self):
        """A copy of the recording as a Recording, or None with fewer than 2 samples."""
        live = self._live
        if live is None or _recorded(live.recording) < 2:
            return None
        from robot_dynamics.core.identification.recording import Recording

        try:
            stamps, positions, velocities, efforts = live.recording.arrays()
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

    def _payload_message(self, link: str, report) -> InertiaStamped:
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
        return message

    def _apply_payload(self, live: LiveDynamics, link: str, report) -> bool:
        parameters = report.inertial_parameters()
        if parameters is None:
            return False
        try:
            loaded = live.with_payload(link, parameters)
        except PayloadError as error:
            self.get_logger().error(f'identified payload not applied: {error}')
            return False
        if not self._install(loaded, replacing=live):
            self.get_logger().warn(
                'identified payload not applied: the model changed during the call'
            )
            return False
        self._payload_in_use = PayloadInUse(link, parameters, 'identified')
        self._untie_active_tool()
        self.get_logger().info(f'payload applied to the live model: {parameters!r}')
        return True

    def _untie_active_tool(self) -> None:
        """``active_tool`` reads '' once the payload in use is no tool (set, identified, none),
        without that setting removing the payload in use."""
        payload = self._payload_in_use
        if (payload is not None and payload.source == 'tool') or not self.parameters['active_tool']:
            return
        self._untying_tool = True
        try:
            self.set_parameters([Parameter('active_tool', value='')])
        finally:
            self._untying_tool = False

    def _save_identified(self, link: str, report) -> str:
        """Save the identified payload as tool ``save_identified_payload_as`` in tools_file;
        what happened, for the service's answer ('' when no save is asked)."""
        name, path = self.parameters['save_identified_payload_as'], self.parameters['tools_file']
        parameters = report.inertial_parameters()
        if not name or parameters is None:
            return ''
        if not path:
            words = f'not saved as tool {name!r}: save_identified_payload_as needs tools_file'
            self.get_logger().error(words)
            return f'; {words}'
        try:
            save_tool(path, name, link, parameters)
            self.payload_input.tools = load_tools(path)
        except (OSError, ToolsFileError) as error:
            words = f'not saved as tool {name!r}: {error}'
            self.get_logger().error(f'identified payload {words}')
            return f'; {words}'
        self.get_logger().info(f'identified payload saved as tool {name!r} in {path}')
        return f'; saved as tool {name!r} in {path}'

    def _report_directory(self) -> str:
        return self.parameters['report_directory'] or os.path.join(
            os.path.expanduser('~'), '.ros', 'robot_dynamics'
        )

    def _package_paths(self) -> dict:
        paths = {}
        for entry in self.parameters['mesh_package_paths']:
            name, _, directory = str(entry).partition('=')
            if name and directory:
                paths[name] = directory
        return paths

    def _load_baseline_file(self) -> None:
        path = self.parameters['baseline_file']
        if not path or not os.path.isfile(path):
            return
        try:
            from robot_dynamics.core.identification.recording_files import read_csv

            self._keep_baseline(read_csv(path))
            self.get_logger().info(f'baseline loaded from {path}')
        except Exception as error:
            self.get_logger().error(f'baseline file {path} not loaded: {error}')

    def _report_absent_offsets_file(self) -> None:
        level, words = absent_file_words(self.parameters['effort_offsets_file'])
        if level:
            getattr(self.get_logger(), level)(words)

    @never_raises
    def _zero_effort_offsets(self, request, response):
        live = self._live
        if live is None:
            return _answer(response, False, self.no_model_words())
        try:
            estimate = live.zero_effort_offsets(self.payload_link(live.robot))
        except OffsetsRefused as error:
            return _answer(response, False, f'offsets not measured: {error}')
        path = self.parameters['effort_offsets_file']
        saved = '; not saved (effort_offsets_file is empty)'
        if path:
            refusal = replacing_words(path)
            try:
                if refusal:
                    raise EffortOffsetsError(refusal)
                save_effort_offsets(path, live.robot.joint_names, estimate.offsets)
                saved = f'; saved to {path}'
            except (OSError, RobotDynamicsError) as error:
                saved = f'; NOT saved: {error}'
        values = ', '.join(f'{value:+.4f}' for value in estimate.offsets)
        return _answer(response, True, f'{estimate.message}; offsets [N·m]: {values}{saved}')

    def _explain_residual(self, request, response):
        live = self._live
        if live is None:
            return _answer(response, False, self.no_model_words())
        if _recorded(live.recording) < 2:
            return _answer(
                response, False, 'nothing recorded yet: move the robot (efforts published)'
            )
        robot = live.robot
        try:
            explanation = self._worker.run(
                explain_residual_job,
                robot.description.text,
                robot.floating_base,
                robot.model.gravity.linear.tolist(),
                robot.rotor_inertia.tolist(),
                robot.payload,
                SharedRecording(
                    live.recording.handle, robot.joint_names, until=live.recording.written
                ),
                self.payload_link(robot),
            )
        except Exception as error:
            return _answer(response, False, f'residual not explained: {error}')
        if explanation is None:
            return _answer(response, False, 'nothing recorded yet')
        report, unmeasured = explanation.report(), live.unmeasured_effort_names()
        if unmeasured:
            report += (
                f'\nnot measured: the efforts of {", ".join(unmeasured)} (none reported, or '
                'they stopped changing): recorded as their model torques once found, so their '
                'rows say nothing of the robot'
            )
        return _answer(response, True, report)

    @never_raises
    def _calibrate_contact_thresholds(self, request, response):
        live = self._live
        if live is None:
            return _answer(response, False, self.no_model_words())
        try:
            calibration = live.calibrate_thresholds()
        except ContactCalibrationError as error:
            return _answer(response, False, f'thresholds not calibrated: {error}')
        return _answer(response, True, calibration.summary())

    # ------------------------------------------------------------------ diagnostics
    def _update_filtered_residual(self) -> None:
        """Evaluate the model's residual of the stream's complete blocks (services thread)."""
        previous = sys.getswitchinterval()
        try:
            live = self._live
            if live is not None and live.filtered_residual is not None:
                # the stream's thread takes the GIL back within ~0.1 ms meanwhile
                sys.setswitchinterval(SHORT_SWITCH_INTERVAL)
                live.filtered_residual.update()
        except Exception as error:  # a timer never raises
            self.rejections.reject('internal_error', f'filtered residual: {error!r}')
        finally:
            sys.setswitchinterval(previous)

    def _publish_diagnostics(self) -> None:
        try:
            array = DiagnosticArray()
            array.header.stamp = self.get_clock().now().to_msg()
            array.status = [self._model_status(), self._input_status(), *self._live_statuses()]
            array.status.extend(self._validation_statuses)
            self._diagnostics_pub.publish(array)
        except Exception as error:  # a timer (or the service that calls this) never raises
            self.rejections.reject('internal_error', f'diagnostics: {error!r}')

    def _model_status(self) -> DiagnosticStatus:
        robot = self.robot
        if self.model_source is None:
            return self.unconfigured_status()
        refused = self.parameters.refused
        if robot is None:
            return model_status(self.get_name(), None, self.model_source, {}, refused=refused)
        payload = robot.payload
        return model_status(
            self.get_name(),
            robot,
            self.model_source,
            {
                'joints': ' '.join(robot.joint_names),
                'warnings': '; '.join(robot.warnings),
                'payload': f'{payload[1].mass:.4g} kg on {payload[0]}' if payload else 'none',
                'identified_payload': self._identified_words,
            },
            refused=refused,
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
            'time_restarts': self.time_restarts,
            'processing_ms_p50': float(np.median(times)) if filled else 0.0,
            'processing_ms_max': float(times.max()) if filled else 0.0,
        }
        values.update(
            {
                f'rejected_{reason}': count
                for reason, count in sorted(self.rejections.counts.items())
            }
        )
        inactive = self.inactive_input_status(name, values)
        if inactive is not None:
            return inactive
        live = self._live
        stale = ()
        if live is not None:
            values['recorded_s'] = live.recorded_seconds()
            values['buffer_bytes'] = live.recording.nbytes
            stale = live.stale_joints()
            values['stale_joints'] = ' '.join(stale)
        timeout = self.settings.stale_timeout
        now = time.monotonic()
        missing = None
        if stale:
            missing = (
                f'stale or missing joints (no value within {timeout:g} s of the newest): '
                f'{", ".join(stale[:6])}{live.estimator.merger.missing_names_hint(stale)}'
            )
        elif self._last_input_wall is None:
            missing = 'no complete joint state yet'
        elif now - self._last_input_wall > max(timeout, 1.0):
            missing = f'stale: last complete joint state {now - self._last_input_wall:.1f} s ago'
        if missing is not None:  # a best-effort publisher would be why
            unreachable = best_effort_note(
                self, ('joint_states',), values, self._warned_best_effort
            )
            return diagnostic_status(name, WARN, missing + unreachable, values)
        repeated_at, reason = self._last_repeated_stamp
        if now - repeated_at < max(timeout, 1.0):
            return diagnostic_status(name, WARN, _REPEATED_STAMP_WARNINGS[reason], values)
        jumps = ''
        if live is not None:
            jumps = self._jump_notes.new_jumps(self, live.robot, live.position_jumps, values)
        if jumps:
            return diagnostic_status(name, WARN, jumps, values)
        news = self.rejections.news()
        return diagnostic_status(name, WARN if news else OK, f'{rate:.0f} Hz{news}', values)

    def _live_statuses(self) -> list:
        """Torque margins, contact, effective mass and known wrench, from the live pipeline."""
        node, live = self.get_name(), self._live
        if live is None:
            statuses = [
                diagnostic_status(f'{node}: torque margins', OK, 'no torques yet', {}),
                diagnostic_status(f'{node}: contact', OK, 'no robot model loaded yet', {}),
            ]
        else:
            statuses = [
                core_status(f'{node}: torque margins', live.margin_status()),
                core_status(f'{node}: contact', live.contact_status()),
            ]
        statuses.append(self._effective_mass_status())
        if self.ft_sensor_input is not None:
            statuses.append(self.ft_sensor_input.status(f'{node}: F/T sensor', self._joint_payload))
        name = f'{node}: known external wrench'
        if live is None:
            statuses.append(diagnostic_status(name, OK, 'none in use (no model yet)', {}))
        else:
            statuses.append(core_status(name, live.known_wrench_status()))
        return statuses

    def _effective_mass_status(self) -> DiagnosticStatus:
        name = f'{self.get_name()}: effective mass'
        rate = {'rate_hz': self.effective_mass_rate}
        if self.effective_mass_rate == 0.0:
            return diagnostic_status(name, OK, 'off (effective_mass_rate 0)', rate)
        return core_status(name, self.effective_mass_reading.status(), rate)


def _recorded(buffer: SampleRingBuffer) -> int:
    """Samples in ``buffer``; 0 once it is closed (a model swap replaced it)."""
    try:
        return len(buffer)
    except RingBufferError:
        return 0


def _not_written(write_error: str) -> str:
    """'' or '; <why the report file was not written>' for a service's answer."""
    return f'; {write_error}' if write_error else ''


def _identified_payload_words(link: str, report) -> str:
    """The last identified payload in one line: mass ± 1σ [kg] and CoM [m] in ``link``."""
    spread = '' if report.mass_std is None else f' ± {report.mass_std:.2g}'
    com = (
        '' if report.com is None else ', CoM (' + ', '.join(f'{c:.4f}' for c in report.com) + ') m'
    )
    return f'{report.mass:.4g}{spread} kg{com} in {link}'


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
