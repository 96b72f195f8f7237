"""centroidal_node: centre of mass, centroidal momentum, ZMP and support polygon, with rviz markers.

Topics (relative names; the node's default name is ``centroidal``):

* subscribes ``joint_states`` (sensor_msgs/JointState, merged by name), ``robot_description``
  (std_msgs/String, transient local; same intake and hot swap as dynamics_node), ``odom``
  (nav_msgs/Odometry: pose of ``child_frame_id``, a frame fixed to the base link (empty: the
  base link), in ``header.frame_id`` = ``world_frame``, twist in ``child_frame_id``; another
  child frame is refused as ``odom_unknown_frame``) and, when ``contact_wrench_topics`` is set, one
  geometry_msgs/WrenchStamped per contact frame (the force the ground applies to that
  foot, expressed in and about the contact frame);
* publishes, for every complete joint state (stamp copied from it, frame ``world_frame``):
  ``~/com`` (PointStamped) [m], ``~/centroidal_momentum/linear`` [N·s] and
  ``~/centroidal_momentum/angular`` [N·m·s] (Vector3Stamped, about the CoM, world-aligned),
  ``~/zmp`` (PointStamped, not published in flight or while the ḣ_G estimator warms up),
  ``~/lipm_zmp`` (the same for the LIPM point c_xy − (c_z − z_g) c̈_xy / g; the checks of
  :mod:`robot_dynamics.ros.centroidal_diagnostics` are in ``/diagnostics``),
  ``~/capture_point`` (PointStamped, on the ground plane; not published when the CoM is not
  above it), ``~/support_polygon`` (PolygonStamped, on the ground plane; empty without
  contacts), ``~/stability_margins`` (sensor_msgs/JointState used as a stamped, named vector:
  ``name`` = ``zmp``, ``capture_point``, ``com_projection``, ``position`` = the signed distances
  [m] of the ZMP, the capture point and the CoM ground projection to the support polygon edge,
  positive inside, NaN when undefined), ``~/markers`` (MarkerArray, at most ``marker_rate`` Hz) and
  ``/diagnostics``.

With ``contact_source: force`` the feet's ground forces are estimated from the joint torques
(:class:`~robot_dynamics.core.floating_base.foot_forces.FootForceEstimator`, base motion from
``odom``) and give the contacts (above ``contact_force_threshold``), the support polygon and the
ZMP (the wrench route); a joint state without efforts or fresh odom falls back to heights.

A ``contact_frames`` entry the model lacks, an entry given twice and, with ``contact_source:
force``, the root link (or a frame fixed to it: no joint torque shows a force there) are left
out (the log and the model status name the parameter and why; the wrench route is then off for
that model); a model with none of them left is not used, and each joint state refused says why.
``contact_source: force`` without ``contact_frames`` estimates no force: the log at start and
each rejection say so, and contacts come from heights.

A fixed-base robot (``root_joint: fixed``) is computed as the same robot on a free-flyer
whose pose is the ``base_pose`` parameter (twist zero), or the odometry once ``odom``
messages arrive (an arm on a mobile base). All math is in
:mod:`robot_dynamics.core.floating_base.centroidal`.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field, replace
from typing import NamedTuple, Optional

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import PointStamped, PolygonStamped, Vector3Stamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Header
from visualization_msgs.msg import MarkerArray

from robot_dynamics.core.errors import DescriptionError, JointStateError
from robot_dynamics.core.floating_base.base_source import (
    BaseSourceUnavailable,
    CentroidalBaseSource,
)
from robot_dynamics.core.floating_base.centroidal import (
    BalanceReport,
    BalanceSettings,
    CentroidalInputError,
    CentroidalMonitor,
    CentroidalState,
    OdometryError,
    base_odometry,
    base_pose_from_odometry,
    floating_base_model,
)
from robot_dynamics.core.floating_base.contact_frame_choice import ContactFrameChoice
from robot_dynamics.core.live.input_findings import (
    beyond_limits_words,
    unmeasured_velocities_words,
    velocity_rate_words,
)
from robot_dynamics.core.live.live_dynamics import LiveDynamics
from robot_dynamics.core.live.settings import ACCELERATION_WINDOW, LiveSettings
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.base_state import BaseStateError, RigidMount, rigid_mount
from robot_dynamics.core.streams.differentiation import PositionSlope
from robot_dynamics.core.streams.joint_states import (
    VELOCITY,
    JointSample,
    JointStateMerger,
    TimeWentBack,
)
from robot_dynamics.core.streams.position_jumps import PositionJumps
from robot_dynamics.core.streams.velocity_rate import VelocityRate
from robot_dynamics.ros.base_state_input import UNKNOWN, vector_tuple
from robot_dynamics.ros.centroidal_diagnostics import CentroidalChecks
from robot_dynamics.ros.centroidal_messages import (
    balance_markers,
    margins_state,
    polygon_stamped,
    vector_stamped,
)
from robot_dynamics.ros.centroidal_parameters import (
    CENTROIDAL_PARAMETERS,
    contact_frames_on,
    missing_contact_frames_words,
)
from robot_dynamics.ros.diagnostics import (
    PositionJumpNotes,
    RateMeter,
    best_effort_note,
    diagnostic_status,
    model_status,
)
from robot_dynamics.ros.joint_state_wire import (
    JointStateReader,
    JointStateWireError,
    stamped_on_arrival,
)
from robot_dynamics.ros.lifecycle import ManagedModelNode
from robot_dynamics.ros.node_log import RateLimitedLogger, RejectionCounter
from robot_dynamics.ros.odometry_wire import OdometryFields, OdometryWireError, read_odometry
from robot_dynamics.ros.output_bytes import XyzMessageWriter
from robot_dynamics.ros.parameter_schema import NodeParameters, warn_unknown_parameters
from robot_dynamics.ros.spinning import run_nodes, steady_timer
from robot_dynamics.ros.topics import (
    JOINT_STATE_QOS,
    SENSOR_QOS,
    SubscribedOutputs,
    create_output_publisher,
    no_event_handlers,
    stamp_seconds,
)

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR

PENDING_LIMIT = 1000
"""Joint samples held at most while waiting for the odometry of their tick."""


class _JointSample(NamedTuple):
    """A complete joint state in model order, waiting for (or given to) the computation."""

    sec: int
    nanosec: int
    stamp: float
    positions: np.ndarray
    velocities: np.ndarray
    foot_forces: Optional[np.ndarray] = None


NO_CONTACT_FRAMES = 'no contact_frames given (contact_source force needs them)'
"""Why no foot force is estimated with contact_source force and no contact_frames."""


@dataclass(frozen=True)
class _LiveModel:
    """What the stream needs for one model; replaced as a whole on a hot swap (one reference
    assignment), so a sample merged for one model is never computed with another."""

    robot: RobotModel
    merger: JointStateMerger
    monitor: CentroidalMonitor
    zeros: np.ndarray
    jumps: PositionJumps
    velocity_rate: VelocityRate
    position_slope: PositionSlope
    contacts: ContactFrameChoice
    feet: Optional[LiveDynamics] = None
    contacts_note: str = ''
    """What the model lacks of ``contact_frames`` and what is left out for it ('' when
    nothing)."""
    pending: deque = field(default_factory=lambda: deque(maxlen=PENDING_LIMIT))
    """Complete joint samples of this model waiting for their odometry
    (:meth:`CentroidalNode._drain`)."""
    odometry_mounts: dict = field(default_factory=dict)
    """{odometry child frame: its :class:`RigidMount` on the base}, of the frames seen."""


class CentroidalNode(ManagedModelNode, Node):
    """Publishes CoM, h_G, ZMP and the support polygon for every complete joint state; with
    ``managed: true`` a lifecycle node (:mod:`robot_dynamics.ros.lifecycle`)."""

    def __init__(self, node_name: str = 'centroidal', **kwargs):
        Node.__init__(self, node_name, **kwargs)
        self._declare_parameters()
        self.rejections = RejectionCounter(self.get_logger())
        self._log = RateLimitedLogger(self.get_logger())
        self.time_restarts = 0  # the joint states' time went back (TimeWentBack)
        self._jump_notes = PositionJumpNotes()
        self._joint_rate, self._odom_rate, self._imu_rate = RateMeter(), RateMeter(), RateMeter()
        self.base_source = CentroidalBaseSource(
            self.parameters['base_state'],
            self.parameters['root_joint'] == 'floating',
            self.fixed_base_pose,
            self.parameters['base_orientation'],
            self.parameters['imu_frame'],
            self.stale_timeout,
        )
        self._wrenches: list = [None] * len(self.wrench_topics)
        self._live: Optional[_LiveModel] = None
        self.model_error = ''
        self.last_report: Optional[BalanceReport] = None
        self._last_report_wall: Optional[float] = None
        self._last_markers_wall = -math.inf
        self._processed = 0
        self._incomplete = 0
        self._processing_times = np.zeros(1000)
        self._point_writers: dict = {}
        self._header = Header(frame_id=self.world_frame)  # the outputs' header, restamped per state
        self._create_outputs()
        self._outputs = SubscribedOutputs()
        # robot_description is received and checked in a listener process
        # (ros.description_listener).
        self.start_lifecycle(self.parameters['managed'])
        self._create_inputs()
        self._warned_best_effort: set = set()
        steady_timer(self, self.diagnostics_period, self._publish_diagnostics)
        warn_unknown_parameters(self)

    def _create_outputs(self) -> None:
        """The output publishers (the points and vectors in ``world_frame``)."""
        self._com_pub = create_output_publisher(self, PointStamped, '~/com', SENSOR_QOS)
        self._linear_pub = create_output_publisher(
            self, Vector3Stamped, '~/centroidal_momentum/linear', SENSOR_QOS
        )
        self._angular_pub = create_output_publisher(
            self, Vector3Stamped, '~/centroidal_momentum/angular', SENSOR_QOS
        )
        self._zmp_pub = create_output_publisher(self, PointStamped, '~/zmp', SENSOR_QOS)
        self._lipm_zmp_pub = create_output_publisher(self, PointStamped, '~/lipm_zmp', SENSOR_QOS)
        self._capture_point_pub = create_output_publisher(
            self, PointStamped, '~/capture_point', SENSOR_QOS
        )
        self._margins_pub = create_output_publisher(
            self, JointState, '~/stability_margins', SENSOR_QOS
        )
        self._polygon_pub = create_output_publisher(
            self, PolygonStamped, '~/support_polygon', SENSOR_QOS
        )
        self._markers_pub = create_output_publisher(self, MarkerArray, '~/markers', 10)
        self._diagnostics_pub = create_output_publisher(self, DiagnosticArray, '/diagnostics', 10)

    def _create_inputs(self) -> None:
        """The joint-state, odometry, IMU (when the base state uses it) and wrench inputs."""
        # Raw: joint_state_wire and odometry_wire read the fields used from the bytes (an
        # Odometry object costs more to build than the whole computation of a sample).
        self._joint_state_reader = JointStateReader()
        self.create_subscription(
            JointState,
            'joint_states',
            self._on_joint_state,
            JOINT_STATE_QOS,
            raw=True,
            event_callbacks=no_event_handlers(),
        )
        self.create_subscription(
            Odometry,
            'odom',
            self._on_odometry,
            JOINT_STATE_QOS,
            raw=True,
            event_callbacks=no_event_handlers(),
        )
        if self.base_source.uses_imu:
            self.create_subscription(
                Imu, 'imu', self._on_imu, JOINT_STATE_QOS, event_callbacks=no_event_handlers()
            )
        for index, topic in enumerate(self.wrench_topics):
            self.create_subscription(
                WrenchStamped,
                topic,
                lambda message, i=index: self._on_wrench(i, message),
                JOINT_STATE_QOS,
                event_callbacks=no_event_handlers(),
            )

    # ------------------------------------------------------------------ parameters
    def _declare_parameters(self) -> None:
        """Every parameter is declared from :data:`CENTROIDAL_PARAMETERS`: read once at start-up,
        then read-only (a change is refused with a reason); a value of the wrong type or out of
        range is logged and its default used."""
        parameters = self.parameters = NodeParameters(self, CENTROIDAL_PARAMETERS)
        self.world_frame = parameters['world_frame']
        self.contact_frame_names = tuple(parameters['contact_frames'])
        base_pose = parameters['base_pose']
        self.fixed_base_pose = base_pose_from_odometry(base_pose[:3], base_pose[3:])
        self.wrench_topics = tuple(parameters['contact_wrench_topics'])
        self.contact_source = parameters['contact_source']
        if self.contact_source == 'force' and not self.contact_frame_names:
            self.get_logger().error(
                f'contact_source force: {NO_CONTACT_FRAMES}; contacts come from heights'
            )
        if self.wrench_topics and len(self.wrench_topics) != len(self.contact_frame_names):
            self.get_logger().error(
                f'contact_wrench_topics has {len(self.wrench_topics)} entries but contact_frames '
                f'{len(self.contact_frame_names)}: wrench route disabled'
            )
            self.wrench_topics = ()
        self.stale_timeout = parameters['stale_timeout']
        self._stamp_on_arrival = parameters['joint_state_stamps'] == 'arrival'
        self.velocity_source = 'measured'  # of the last joint state's q̇, for diagnostics
        self.marker_period = 1.0 / parameters['marker_rate']
        self.arrow_scale = parameters['momentum_arrow_scale']
        self.diagnostics_period = parameters['diagnostics_period']
        self.checks = CentroidalChecks(parameters['friction_coefficient'])
        rate_degree = parameters['rate_degree']
        self.settings = BalanceSettings(
            contact_frames=self.contact_frame_names,
            ground_height=parameters['ground_height'],
            contact_height_threshold=parameters['contact_height_threshold'],
            contact_force_threshold=parameters['contact_force_threshold'],
            min_normal_force=parameters['min_normal_force'],
            flight_epsilon=parameters['flight_epsilon'],
            rate_window=max(parameters['rate_window'], rate_degree + 2),
            rate_window_max=parameters['rate_window_max'],
            zmp_noise_limit=parameters['zmp_noise_limit'],
            rate_degree=rate_degree,
            max_gap=parameters['max_gap'],
        )

    # ------------------------------------------------------------------ model
    def _on_model(self, robot: RobotModel) -> None:
        """Install ``robot`` (called on the model source's builder thread while the stream runs).
        A ``contact_frames`` entry the model lacks is left out (logged, in diagnostics); the
        model is refused when it has none of them."""
        try:
            floating = floating_base_model(robot)
            contacts = contact_frames_on(
                floating, self.contact_frame_names, need_joint=self.contact_source == 'force'
            )
            # The ZMP and flight test use |g| of the model's gravity (the gravity parameter).
            settings = replace(
                self.settings,
                gravity=float(np.linalg.norm(robot.model.gravity.linear)),
                contact_frames=contacts.names,
            )
            monitor = CentroidalMonitor(floating, settings)
        except (DescriptionError, ValueError) as error:
            self.model_error = str(error)
            self.get_logger().error(
                f'model "{robot.name}" not usable for centroidal dynamics: {error}'
            )
            return
        self.model_error = ''
        self.settings = settings
        note = self._contacts_note(floating, contacts)
        if note:
            self.get_logger().error(note)
        previous = self._live
        merger = (
            previous.merger
            if previous and previous.robot.joint_names == floating.joint_names
            else self._new_merger(floating)
        )
        feet = (
            self._foot_forces(floating, contacts.names) if self.contact_source == 'force' else None
        )
        self.base_source.use_model(floating)
        self._live = _LiveModel(
            floating,
            merger,
            monitor,
            np.zeros(floating.num_joints),
            PositionJumps(floating),
            _velocity_rate(floating),
            _position_slope(floating),
            contacts,
            feet,
            note,
        )
        self.last_report = None

    def _contacts_note(self, robot: RobotModel, contacts: ContactFrameChoice) -> str:
        """The ``contact_frames`` entries left out on ``robot`` (a frame it lacks, an entry
        given twice, with contact_source force the root link) and why, in words ('' when
        none)."""
        if not contacts.left_out:
            return ''
        wrenches = (
            '; contact_wrench_topics not used with this model (the ZMP comes from the estimated '
            'rate of momentum)'
            if self.wrench_topics
            else ''
        )
        reasons = [f'parameter contact_frames: {reason}' for reason in contacts.refused]
        if contacts.missing:
            reasons.insert(0, missing_contact_frames_words(robot, contacts.missing))
        return (
            f'{"; ".join(reasons)}: left out, contacts and support polygon from '
            f'{", ".join(contacts.names)} only{wrenches}'
        )

    def _new_merger(self, floating: RobotModel) -> JointStateMerger:
        return JointStateMerger(
            floating.joint_names,
            optional=floating.leaf_joints(),
            stale_timeout=self.stale_timeout,
        )

    def _restarted(self, live: _LiveModel, error: TimeWentBack) -> _LiveModel:
        """``live`` with its stream started afresh for joint states whose time went back (a
        bag played in a loop, a simulation reset): new merger, rate estimate and foot forces,
        nothing pending; installed unless a model swap came meanwhile."""
        restarted = replace(
            live,
            merger=self._new_merger(live.robot),
            monitor=CentroidalMonitor(live.robot, live.monitor.settings),
            jumps=PositionJumps(live.robot),
            velocity_rate=_velocity_rate(live.robot),
            position_slope=_position_slope(live.robot),
            feet=None if live.feet is None else live.feet.restarted(),
            pending=deque(maxlen=PENDING_LIMIT),
        )
        if self._live is live:
            self._live = restarted
        self.time_restarts += 1
        self._log.warn(
            'time_went_back',
            f'{error}; the stream restarted there ({self.time_restarts} so far)',
        )
        return restarted

    def _foot_forces(self, floating: RobotModel, contact_frames: tuple) -> Optional[LiveDynamics]:
        """The live pipeline that estimates the ground forces on ``contact_frames`` from the
        joint torques (its own copy of the model; the base's motion from the same base_state),
        or None with the reason logged (none without ``contact_frames``, said at start)."""
        if not contact_frames:
            return None
        twin = RobotModel(floating.description, True, floating.model.gravity.linear)
        settings = LiveSettings(
            base_state=self.parameters['base_state'],
            base_orientation=tuple(self.parameters['base_orientation']),
            imu_frame=self.parameters['imu_frame'],
            contact_frames=contact_frames,
            external_torque_method='inverse_dynamics',
            contact_profile='off',
        )
        feet = LiveDynamics(twin, settings)
        problems = [p for p in feet.problems if 'foot' in p]
        if problems:
            self.get_logger().error(f'contact_source force: {"; ".join(problems)}')
            return None
        return feet

    def _drop_model(self) -> None:
        """Forget the model (lifecycle cleanup)."""
        self._live = None
        self.last_report = None
        self.model_error = ''

    def model_refusal(self) -> str:
        return self.model_error

    def destroy_node(self):
        if self.model_source is not None:
            self.model_source.close()
        return super().destroy_node()

    @property
    def robot(self) -> Optional[RobotModel]:
        live = self._live
        return live.robot if live else None

    # ------------------------------------------------------------------ inputs
    def _on_imu(self, message: Imu) -> None:
        """One sensor_msgs/Imu (base_state imu or odom+imu): the base's attitude and angular
        velocity (and, for the feet's forces, its acceleration)."""
        self._imu_rate.tick()
        try:
            if message.angular_velocity_covariance[0] == UNKNOWN:
                raise BaseStateError('missing_field', 'IMU message without angular velocity')
            stamp, frame = stamp_seconds(message.header.stamp), message.header.frame_id
            gyro = vector_tuple(message.angular_velocity)
            orientation = None
            if message.orientation_covariance[0] != UNKNOWN:
                orientation = (*vector_tuple(message.orientation), message.orientation.w)
            self.base_source.take_imu(stamp, frame, orientation, gyro)
            live = self._live
            if live is not None and live.feet is not None:
                live.feet.take_base_imu(
                    stamp, frame, gyro, vector_tuple(message.linear_acceleration), orientation
                )
        except BaseStateError as error:
            self.rejections.reject(f'imu_{error.reason}', str(error))
            return
        except Exception as error:  # a node never dies from a message
            self.rejections.reject('internal_error', repr(error))
            return
        self._drain_waiting()

    def _on_odometry(self, serialized: bytes) -> None:
        """One serialized nav_msgs/Odometry (the subscription is raw), used once a model is
        loaded and when ``base_state`` takes odometry. A child frame the model lacks, or one a
        joint moves, is counted as ``odom_unknown_frame`` (as dynamics_node does); other
        unusable messages as ``bad_odometry``."""
        self._odom_rate.tick()
        live = self._live
        if live is None or not self.base_source.uses_odom:
            return
        try:
            self._take_odometry(live, read_odometry(serialized))
        except BaseStateError as error:
            self.rejections.reject(f'odom_{error.reason}', str(error))
            return
        except (OdometryError, OdometryWireError) as error:
            self.rejections.reject('bad_odometry', str(error))
            return
        except Exception as error:  # a node never dies from a message
            self.rejections.reject('internal_error', repr(error))
            return
        self._drain_waiting()

    def _take_odometry(self, live: _LiveModel, odometry: OdometryFields) -> None:
        """Give ``odometry`` to the base source (carried to the base link) and the foot-force
        pipeline. Raises BaseStateError with a reason (``unknown_frame``: its child frame; the
        foot-force pipeline's base-state checks) and OdometryError for the rest."""
        frame = odometry.frame_id
        if frame and frame.lstrip('/') != self.world_frame.lstrip('/'):
            raise OdometryError(
                f'odom pose is in "{frame}", not in world_frame "{self.world_frame}"'
            )
        mount = self._odometry_mount(live, odometry.child_frame_id)
        stamp = odometry.stamp
        self.base_source.take_odom(
            stamp,
            *base_odometry(
                mount,
                odometry.position,
                odometry.orientation,
                odometry.linear,
                odometry.angular,
            ),
        )
        if live.feet is not None:
            live.feet.take_base_odom(
                stamp,
                odometry.child_frame_id,
                odometry.orientation,
                odometry.linear,
                odometry.angular,
            )

    @staticmethod
    def _odometry_mount(live: _LiveModel, child_frame: str) -> RigidMount:
        """Where the odometry's ``child_frame`` (empty: the base link) sits on the base link of
        ``live``'s model; raises BaseStateError ('unknown_frame') for a frame the model lacks or
        one a joint moves (:func:`~robot_dynamics.core.streams.base_state.rigid_mount`)."""
        name = child_frame or live.robot.description.root
        mount = live.odometry_mounts.get(name)
        if mount is None:
            mount = live.odometry_mounts[name] = rigid_mount(live.robot, name)
        return mount

    def _drain_waiting(self) -> None:
        """A base-state sample arrived: compute the joint states that waited for it."""
        live = self._live
        if live is not None:
            self._drain(live)

    def _on_wrench(self, index: int, message: WrenchStamped) -> None:
        try:
            self._take_wrench(index, message)
        except Exception as error:  # a node never dies from a message
            self.rejections.reject('internal_error', repr(error))

    def _take_wrench(self, index: int, message: WrenchStamped) -> None:
        frame, expected = message.header.frame_id, self.contact_frame_names[index]
        if frame and frame != expected:
            self.rejections.reject(
                'wrench_frame',
                f'wrench on {self.wrench_topics[index]} is in "{frame}", expected contact frame '
                f'"{expected}"',
            )
            return
        force, torque = message.wrench.force, message.wrench.torque
        values = np.array([force.x, force.y, force.z, torque.x, torque.y, torque.z])
        if not np.all(np.isfinite(values)):
            self.rejections.reject(
                'non_finite_wrench', f'wrench on {self.wrench_topics[index]} has NaN or Inf'
            )
            return
        self._wrenches[index] = (stamp_seconds(message.header.stamp), values)

    def _on_joint_state(self, serialized: bytes) -> None:
        """One serialized sensor_msgs/JointState (the subscription is raw)."""
        self._joint_rate.tick()
        live = self._live
        if not self.accepts_joint_states():
            return
        if live is None:
            self.rejections.reject('no_model', self._no_model_words())
            return
        self._guarded(self._take_joint_state, live, serialized)

    def _no_model_words(self) -> str:
        """Why there is no model to compute with."""
        error = self.model_error
        return f'no usable robot model: {error}' if error else 'no robot model loaded yet'

    def _guarded(self, step, *args) -> None:
        try:
            step(*args)
        except JointStateError as error:
            self.rejections.reject(error.reason, str(error))
        except CentroidalInputError as error:
            self.rejections.reject('bad_state', str(error))
        except JointStateWireError as error:
            self.rejections.reject('malformed_joint_state', str(error))
        except Exception as error:  # a node never dies from a message
            self.rejections.reject('internal_error', repr(error))

    def _take_joint_state(self, live: _LiveModel, serialized: bytes) -> None:
        """Merge, then queue the complete sample for :meth:`_drain`."""
        message = self._joint_state_reader.read(serialized)
        if self._stamp_on_arrival:
            message = stamped_on_arrival(message, self.get_clock().now().nanoseconds)
        fields = message.sample
        names, positions, velocities, efforts, stamp = fields
        try:
            live.merger.update(names, positions, velocities, efforts, stamp)
        except TimeWentBack as error:
            live = self._restarted(live, error)
            live.merger.update(names, positions, velocities, efforts, stamp)
        merger = live.merger
        positions_fresh, velocities_fresh, _ = merger.freshness(stamp, self.stale_timeout)
        if not positions_fresh:
            self._incomplete += 1
            return
        live.jumps.check(stamp, merger.positions)
        velocities = self._joint_velocities(live, stamp, velocities_fresh)
        forces = None
        if live.feet is not None:
            forces = self._estimated_forces(live.feet, fields)
        elif self.contact_source == 'force' and not self.contact_frame_names:
            self.rejections.reject('no_foot_forces', f'no foot forces: {NO_CONTACT_FRAMES}')
        sample = _JointSample(
            message.sec, message.nanosec, stamp, merger.positions, velocities, forces
        )
        live.pending.append(sample)
        self._drain(live)

    def _joint_velocities(self, live: _LiveModel, stamp: float, fresh: bool) -> np.ndarray:
        """q̇ [rad/s, m/s] of the merged sample: as measured; the positions' slope when no joint
        reports a velocity or every one is exactly 0 (mock hardware); zeros when some are missing
        or stale. Sets ``velocity_source`` ('measured', 'positions', 'none') for diagnostics."""
        merger = live.merger
        from_positions = not merger.reports(VELOCITY) if not fresh else not merger.velocities.any()
        if from_positions:
            if self.velocity_source != 'positions':
                live.position_slope.restart()
            self.velocity_source = 'positions'
            return live.position_slope.update(stamp, merger.positions)
        if not fresh:
            self.velocity_source = 'none'
            return live.zeros
        self.velocity_source = 'measured'
        live.velocity_rate.check(stamp, merger.positions, merger.velocities)
        return merger.velocities

    def _estimated_forces(self, feet: LiveDynamics, sample: JointSample) -> Optional[np.ndarray]:
        """The feet's ground forces [N] (world axes) of ``sample``; None (counted, the ZMP and
        contacts then come from heights) without efforts or fresh odom."""
        try:
            result = feet.update(sample)
        except JointStateError as error:
            self.rejections.reject('no_foot_forces', f'no foot forces: {error}')
            return None
        if result is None or result.feet is None:
            if result is None:
                why = 'the joint state is incomplete, or its base state missing or stale'
            elif feet.efforts_all_zero:
                why = 'every effort is exactly 0, which no torque sensor reads (mock hardware)'
            else:
                why = 'joint states without efforts (contact_source force needs them)'
            self.rejections.reject('no_foot_forces', f'no foot forces: {why}')
            return None
        return result.feet.forces

    def _drain(self, live: _LiveModel) -> None:
        """Compute the queued joint samples, oldest first, once the base state (odometry, IMU)
        has caught up with them (joint_states and odom or imu of one tick race on two topics) or
        once they are ``stale_timeout`` older than the newest joint sample (base state late or
        missing)."""
        base_until = self.base_source.caught_up_until()
        pending = live.pending
        while pending and (
            pending[0].stamp <= base_until
            or pending[-1].stamp - pending[0].stamp > self.stale_timeout
        ):
            self._guarded(self._compute, live, pending.popleft())

    def _compute(self, live: _LiveModel, sample: _JointSample) -> None:
        started = time.perf_counter()
        base = self._base_state(sample.stamp)
        if base is None:
            return
        pose, twist = base
        robot = live.robot
        q = robot.configuration(sample.positions, pose)
        v = robot.tangent(sample.velocities, twist)
        monitor, header = live.monitor, self._header
        stamped = monitor.state(sample.stamp, q, v)
        header.stamp.sec, header.stamp.nanosec = sample.sec, sample.nanosec
        self._outputs.refresh()
        self._publish_state(header, stamped.state)  # before the balance figures: they wait on it
        if sample.foot_forces is not None:
            report = monitor.report(stamped, foot_forces=sample.foot_forces)
        else:
            report = monitor.report(stamped, self._fresh_wrenches(live, sample.stamp))
        if report.stamp_not_newer:
            self.rejections.reject(
                'repeated_stamp',
                f'joint state stamp {sample.stamp:.6f} s is not newer than the previous one: no '
                'rate of momentum, no ZMP for it',
            )
        self.checks.on_report(robot, q, report, self.settings)
        self._publish_balance(header, report)
        self.last_report = report
        self._last_report_wall = time.monotonic()
        self._processing_times[self._processed % len(self._processing_times)] = (
            time.perf_counter() - started
        )
        self._processed += 1

    def _base_state(self, stamp: float) -> Optional[tuple]:
        """(base pose, twist) for the joint state at ``stamp``; None (counted) without one."""
        try:
            return self.base_source.at(stamp)
        except BaseSourceUnavailable as error:
            self.rejections.reject(error.reason, str(error))
            return None

    def _fresh_wrenches(self, live: _LiveModel, stamp: float) -> Optional[tuple]:
        """(forces [N], torques [N·m]) of the contact wrenches, each in its contact frame, when
        all are within ``stale_timeout`` of ``stamp`` [s]; None without the wrench route (not
        set, or ``live``'s model lacks a contact frame)."""
        if not self.wrench_topics or live.contacts.left_out:
            return None
        if any(w is None or abs(w[0] - stamp) > self.stale_timeout for w in self._wrenches):
            self.rejections.reject(
                'stale_wrench',
                'a contact wrench is missing or stale: ZMP from the estimated rate of momentum '
                'instead',
            )
            return None
        values = np.array([w[1] for w in self._wrenches])
        return values[:, :3], values[:, 3:]

    # ------------------------------------------------------------------ outputs
    def _publish_state(self, header: Header, state: CentroidalState) -> None:
        """``~/com`` and the momentum of ``state``, stamped ``header``, on the outputs that have
        subscribers."""
        wanted = self._outputs.has_subscriber
        if wanted(self._com_pub):
            self._com_pub.publish(self._stamped_point(self._com_pub, header, state.com))
        if wanted(self._linear_pub):
            self._linear_pub.publish(vector_stamped(header, state.linear_momentum))
        if wanted(self._angular_pub):
            self._angular_pub.publish(vector_stamped(header, state.angular_momentum))

    def _publish_balance(self, header: Header, report: BalanceReport) -> None:
        """The balance outputs of ``report``, stamped ``header``, on the outputs that have
        subscribers (the support polygon and the margins are computed only when one of their
        topics, the markers or diagnostics ask)."""
        now = time.monotonic()
        wanted, point = self._outputs.has_subscriber, self._stamped_point
        for publisher, xyz in (
            (self._zmp_pub, report.zmp),
            (self._lipm_zmp_pub, self.checks.lipm_zmp),
            (self._capture_point_pub, report.capture_point),
        ):
            if xyz is not None and wanted(publisher):
                publisher.publish(point(publisher, header, xyz))
        if wanted(self._margins_pub):
            self._margins_pub.publish(margins_state(header, report))
        if wanted(self._polygon_pub):
            self._polygon_pub.publish(polygon_stamped(header, report.polygon))
        if now - self._last_markers_wall >= self.marker_period:
            self._last_markers_wall = now
            if wanted(self._markers_pub):
                self._markers_pub.publish(
                    balance_markers(
                        header,
                        report,
                        self.settings.ground_height,
                        self.arrow_scale,
                        self.checks.lipm_marker(header),
                    )
                )

    def _stamped_point(self, publisher, header: Header, xyz) -> bytes:
        """The serialized PointStamped of ``publisher`` (one writer per output) with ``header``
        and the point ``xyz`` [m]."""
        writer = self._point_writers.get(publisher)
        if writer is None:
            writer = self._point_writers[publisher] = XyzMessageWriter()
        stamp = header.stamp
        return writer.serialized(stamp.sec, stamp.nanosec, header.frame_id, xyz)

    # ------------------------------------------------------------------ diagnostics
    def _publish_diagnostics(self) -> None:
        try:
            array = DiagnosticArray()
            array.header.stamp = self.get_clock().now().to_msg()
            array.status = [
                self._model_status(),
                self._input_status(),
                self._balance_status(),
                self.checks.status(
                    f'{self.get_name()}: centroidal checks',
                    *self._checked_wrenches(),
                    self.stale_timeout,
                ),
            ]
            self._diagnostics_pub.publish(array)
        except Exception as error:  # a timer never takes the node down either
            self.rejections.reject('internal_error', f'diagnostics: {error!r}')

    def _checked_wrenches(self) -> tuple:
        """(contact frame names, their wrenches) for the friction checks; no wrenches when the
        model in use lacks a contact frame (the wrench route is off then)."""
        live = self._live
        if live is None or not live.contacts.left_out:
            return self.contact_frame_names, self._wrenches
        return live.contacts.names, []

    def _model_status(self) -> DiagnosticStatus:
        """``<node>: model``: ERROR naming why no model is usable, WARN naming the
        ``contact_frames`` the model in use lacks."""
        if self.model_source is None:
            return self.unconfigured_status()
        live = self._live
        values = {
            'root_joint': self.model_source.root_joint,
            'contact_frames': ' '.join(self.contact_frame_names),
            'contact_source': self.contact_source,
            'base_state': self.base_source.mode,
        }
        if live is not None and live.contacts.left_out:
            taken = live.contacts.indices
            values['contact_frames_left_out'] = ' '.join(
                name for i, name in enumerate(self.contact_frame_names) if i not in taken
            )
        status = model_status(
            self.get_name(),
            self.robot,
            self.model_source,
            values,
            self.model_error,
            self.parameters.refused,
        )
        if live is None and self.model_error:
            status.message = self._no_model_words()
        elif live is not None and live.contacts_note and not self.model_error:
            status.level = max(status.level, WARN)
            status.message = f'{status.message}; {live.contacts_note}'
        return status

    def _input_status(self) -> DiagnosticStatus:
        name = f'{self.get_name()}: inputs'
        filled = min(self._processed, len(self._processing_times))
        times = self._processing_times[:filled] * 1e3
        values = {
            'joint_states_hz': self._joint_rate.rate(),
            'odom_hz': self._odom_rate.rate(),
            **({'imu_hz': self._imu_rate.rate()} if self.base_source.uses_imu else {}),
            'processed': self._processed,
            'incomplete': self._incomplete,
            'rejected_total': self.rejections.total(),
            'time_restarts': self.time_restarts,
            'processing_ms_p50': float(np.median(times)) if filled else 0.0,
            'processing_ms_max': float(times.max()) if filled else 0.0,
        }
        counts = dict(self.rejections.counts)  # one copy: the stream may count while this runs
        values.update({f'rejected_{reason}': count for reason, count in sorted(counts.items())})
        inactive = self.inactive_input_status(name, values)
        if inactive is not None:
            return inactive
        if self._last_report_wall is None:
            return diagnostic_status(
                name,
                WARN,
                f'no complete state yet (joint_states and the base state: base_state '
                f'{self.base_source.mode}){self._never_received()}{self.rejections.news()}'
                f'{self._best_effort_note(values)}',
                values,
            )
        age = time.monotonic() - self._last_report_wall
        if age > max(self.stale_timeout, 1.0):
            return diagnostic_status(
                name,
                WARN,
                f'stale: last complete state {age:.1f} s ago{self.rejections.news()}'
                f'{self._best_effort_note(values)}',
                values,
            )
        live = self._live
        if live is not None:
            findings = self._input_findings(live, values)
            if findings:
                return diagnostic_status(name, WARN, findings, values)
        without_velocities = (
            '; no joint velocities (NaN, empty or stale in joint_states): momentum, ZMP and '
            "capture point take the joints at rest, only the base's motion"
            if self.velocity_source == 'none'
            else ''
        )
        from_positions = (
            f'; {unmeasured_velocities_words(live.merger.reports(VELOCITY))}: q̇ is the slope '
            f'of the positions (momentum and capture point lag ~{(ACCELERATION_WINDOW - 1) // 2}'
            ' samples)'
            if self.velocity_source == 'positions' and live is not None
            else ''
        )
        slow = self._slow_odometry_words()
        news = self.rejections.news()
        return diagnostic_status(
            name,
            WARN if news or without_velocities or slow else OK,
            f'{self._joint_rate.rate():.0f} Hz{without_velocities}{from_positions}{slow}{news}',
            values,
        )

    def _slow_odometry_words(self) -> str:
        """'' or why the odometry is too slow for the joint states: each takes the pose carried
        along the nearest odometry's twist, which misses how the twist changes in between."""
        odom_rate, joint_rate = self._odom_rate.rate(), self._joint_rate.rate()
        if not self.base_source.uses_odom or not odom_rate:
            return ''
        linear, angular = self.base_source.odometry.largest_twist_change()
        slow = odom_rate * SLOW_ODOMETRY_RATIO < joint_rate
        if not slow or (linear < MISSED_ACCELERATION and angular < MISSED_ANGULAR_ACCELERATION):
            return ''
        return (
            f'; odometry at {odom_rate:.0f} Hz beside joint states at {joint_rate:.0f} Hz while '
            f"the base's twist changes by up to {linear:.2f} m/s² and {angular:.2f} rad/s² "
            f'between its messages: each joint state takes the pose carried along a twist up to '
            f'{1e3 / odom_rate:.0f} ms old, which misses those accelerations (the ZMP jumps at '
            'each odometry message): publish odometry at the rate of the joint states'
        )

    def _input_findings(self, live: _LiveModel, values: dict) -> str:
        """What the latest joint states say about the set-up, in words ('' when nothing):
        positions that jump, velocities that are not the positions' rate, positions or
        velocities beyond the URDF limits (into ``values``: ``position_jumps``,
        ``positions_beyond_limits``, ``velocities_beyond_limits``)."""
        robot, merger = live.robot, live.merger
        findings = [
            self._jump_notes.new_jumps(self, robot, live.jumps, values),
            velocity_rate_words(robot, live.velocity_rate.factors(), merger.unreported[VELOCITY]),
        ]
        for kind, latest, beyond in (
            ('positions', merger.positions, robot.outside_limits),
            ('velocities', merger.velocities, robot.beyond_velocity_limits),
        ):
            joints = beyond(latest)
            if joints:
                values[f'{kind}_beyond_limits'] = ' '.join(robot.joint_names[i] for i in joints)
                findings.append(beyond_limits_words(robot, kind, latest, joints, beyond))
        return '; '.join(finding for finding in findings if finding)

    def _never_received(self) -> str:
        """'; no joint state yet for' the joints never received, with a hint when the names
        received would be theirs under another prefix; '' when each joint has had a value."""
        live = self._live
        if live is None:
            return ''
        merger = live.merger
        missing = [
            name
            for name, stamp in zip(merger.joint_names, merger.position_stamps)
            if stamp == -math.inf
        ]
        if not missing:
            return ''
        return (
            f'; no joint state yet for {", ".join(missing[:6])}{merger.missing_names_hint(missing)}'
        )

    def _best_effort_note(self, values: dict) -> str:
        """:func:`~robot_dynamics.ros.diagnostics.best_effort_note` of the stream's inputs: its
        subscriptions have no QoS event handlers, each of which is one more entity in the
        executor's wait set per message."""
        topics = ('joint_states', 'odom', *self.wrench_topics)
        return best_effort_note(self, topics, values, self._warned_best_effort)

    def _no_contact_words(self, report) -> str:
        """The balance status when no contact frame touches the ground and the robot is not in
        flight (a standing robot whose feet are not where the contact set-up says)."""
        how = (
            f'within contact_height_threshold {self.parameters["contact_height_threshold"]:g} m '
            f'of ground_height {report.ground_height:g} m'
            if self.contact_source == 'height'
            else 'by its estimated force'
        )
        return (
            f'no contact frame touches the ground ({how}; lowest: {_lowest_contact_words(report)})'
            ' while the robot is not in flight: no support polygon; check contact_frames, '
            "ground_height and odom's height"
        )

    def _balance_status(self) -> DiagnosticStatus:
        name = f'{self.get_name()}: balance'
        report = self.last_report
        if report is None:
            return diagnostic_status(name, OK, 'no state yet', {})
        contacts = [n for n, touching in zip(report.contacts.names, report.in_contact) if touching]
        values = {
            'airborne': report.airborne,
            'zmp_source': report.zmp_source,
            'zmp_margin_m': _optional(report.zmp_margin),
            'capture_point_margin_m': _optional(report.capture_point_margin),
            'com_margin_m': _optional(report.com_margin),
            'contacts': ' '.join(contacts),
            'mass_kg': report.state.mass,
            'zmp': _coordinates(report.zmp),
            'capture_point': _coordinates(report.capture_point),
        }
        live = self._live
        if live is not None:
            values['rate_window'] = live.monitor.estimator.window
            values['zmp_noise_m'] = _optional(live.monitor.zmp_noise)
        if report.airborne:
            return diagnostic_status(name, WARN, 'airborne: no ZMP', values)
        if report.zmp is None:
            return diagnostic_status(name, OK, 'estimating the rate of momentum', values)
        if not report.in_contact.any() and len(report.contacts.names):
            return diagnostic_status(name, WARN, self._no_contact_words(report), values)
        if report.zmp_margin is not None and report.zmp_margin < 0.0:
            return diagnostic_status(
                name, WARN, f'ZMP {-report.zmp_margin:.3f} m outside the support polygon', values
            )
        if report.capture_point_margin is not None and report.capture_point_margin < 0.0:
            return diagnostic_status(
                name,
                WARN,
                f'capture point {-report.capture_point_margin:.3f} m outside the support polygon: '
                'the robot cannot stop without a step',
                values,
            )
        margin = (
            'no support polygon'
            if report.zmp_margin is None
            else f'ZMP margin {report.zmp_margin:.3f} m'
        )
        return diagnostic_status(name, OK, margin, values)


SLOW_ODOMETRY_RATIO = 4.0
"""Odometry this many times slower than the joint states is too slow for a moving base."""
MISSED_ACCELERATION = 0.1
"""[m/s²] Change of the odometry's linear velocity per second from which slow odometry is said
(at a 0.5 m CoM height it moves the ZMP by ~5 mm: z a / g)."""
MISSED_ANGULAR_ACCELERATION = 0.1
"""[rad/s²] The same for the odometry's angular velocity."""


def _lowest_contact_words(report) -> str:
    """Which contact frame is lowest, and how high, in words."""
    heights = report.contacts.positions[:, 2]
    lowest = int(np.argmin(heights))
    return f'{report.contacts.names[lowest]} at z = {heights[lowest]:.3f} m'


def _velocity_rate(robot: RobotModel) -> VelocityRate:
    return VelocityRate(robot.num_joints, robot.continuous_joints())


def _position_slope(robot: RobotModel) -> PositionSlope:
    return PositionSlope(robot.num_joints, ACCELERATION_WINDOW, robot.continuous_joints())


def _optional(value: Optional[float]):
    return 'none' if value is None else float(value)


def _coordinates(point) -> str:
    return 'none' if point is None else ' '.join(f'{x:.4f}' for x in point)


def main(args=None) -> None:
    run_nodes(lambda: [CentroidalNode()], args, program='centroidal_node')


if __name__ == '__main__':
    main()
