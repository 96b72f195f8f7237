"""sim_robot: the proving ground, a simulated robot whose truth is known (docs/proving_ground.md).

``engine: mujoco`` (default): a scene of :mod:`robot_dynamics.simulation.scenes` (``scene``:
arm, legged, tilted_base, moving_base) with the robot profile ``robot_profile`` drawn with
``profile_seed`` (every drawn value logged at start); joint states as the profile's sensors
report them; ``odom`` (nav_msgs/Odometry, pose in ``world_frame``, twist in the URDF's root
link), ``~/imu`` (sensor_msgs/Imu at the root link), ``ft_sensor`` (WrenchStamped at
``payload_link``, arm scenes) and the truth topics ``~/true_contact_wrenches/<link>``,
``~/true_cop``, ``~/true_com``, ``~/true_payload``, ``~/true_friction_torques``,
``~/true_rotor_torques``, ``~/true_base_state`` beside the two below, all stamped like the
joint state of their sample (:mod:`robot_dynamics.ros.sim_messages`). Pushes, payload and
motion start as below; the node's noise and ``controller_feedback`` parameters apply to the
pinocchio engine only. ``engine: pinocchio``: the exact reference described below.

Topics (relative names; the node's default name is ``sim_robot``):

* publishes ``robot_description`` (std_msgs/String, reliable + transient local: the URDF
  *without* the hidden payload, as a real robot's description would be) and
  ``joint_states`` (sensor_msgs/JointState at ``publish_rate``, stamps exactly
  1/``publish_rate`` apart on the simulation clock);
* fixed base (``root_joint: fixed``): forward dynamics (pinocchio ABA at
  ``simulation_rate`` ≥ 1 kHz) tracking a periodic multi-joint Fourier excitation with
  computed-torque control; ``effort`` is the applied joint torque [N·m] plus noise; every
  published sample is one integration step, so ``simulation_rate`` is a whole multiple of
  ``publish_rate`` (another value, or one below 1 kHz, is logged and the smallest whole
  multiple ≥ 1 kHz used: 1200 Hz for 300 Hz publishing);
* floating base (``root_joint: floating``): a *kinematic* scripted sway of the base over
  feet fixed on the ground (no contact simulation, no efforts) published on ``odom``
  (nav_msgs/Odometry: pose in ``world_frame``, twist in ``base_frame``) and ``joint_states``;
* service ``~/attach_payload`` (std_srvs/SetBool): ``true`` attaches the hidden payload
  (``payload_*`` parameters), ``false`` removes it; either way the motion restarts from its
  first sample, so runs with and without the payload repeat the same motion;
* service ``~/restart_motion`` (std_srvs/Trigger): the motion (arm excitation or legged
  script) back to its first sample, in every scene, payload unchanged;
* ``~/motion_start`` (std_msgs/Header, reliable + transient local): published at every start
  of the motion (start-up and each restart), ``stamp`` = the stamp the motion's time zero has
  on the joint_states clock (a sample of motion time t is stamped ``stamp`` + t), ``frame_id``
  = ``payload`` or ``no payload``. A client that must cover whole periods of the excitation
  (the demo) measures them on this clock, not on its own wall clock.
* fixed base: subscribes ``~/external_wrench_command`` (geometry_msgs/WrenchStamped:
  ``header.frame_id`` = the link, empty = ``payload_link``; force [N] and moment [N·m] in
  that link's frame, applied at its origin, from the next integration step on; an all-zero
  wrench removes it) and publishes the applied truth with every joint state, same stamp:
  ``~/true_external_wrench`` (WrenchStamped in the pushed link's frame, zero when none) and
  ``~/true_external_torques`` (sensor_msgs/JointState, ``effort`` = J(q)ᵀ F [N·m]). The
  controller does not know the push: ``effort`` stays the motor torque.

The simulation follows the wall clock: each timer tick integrates up to the current time,
never more than ``max_catch_up`` seconds at once (a stalled process slows the simulated
time down instead of bursting). A simulation failure (e.g. feet out of the legs' reach)
is logged with its reason and stops the motion; the node keeps running. All math is in
:mod:`robot_dynamics.simulation` (``reference`` for the pinocchio engine).
"""

from __future__ import annotations

import json
import time
from typing import Optional

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Header, String
from std_srvs.srv import SetBool, Trigger

from robot_dynamics.core.errors import PayloadError, RobotDynamicsError
from robot_dynamics.core.live.payload_in_use import checked_payload
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.model.urdf import read_description_file
from robot_dynamics.models import ARM_URDF, QUADRUPED_URDF
from robot_dynamics.ros.node_log import RateLimitedLogger, never_raises, shorten
from robot_dynamics.ros.parameter_schema import NodeParameters, warn_unknown_parameters
from robot_dynamics.ros.sim_messages import SceneOutputs
from robot_dynamics.ros.sim_robot_parameters import (
    SIM_ROBOT_PARAMETERS,
    minimum_simulation_rate,
    smallest_whole_multiple,
)
from robot_dynamics.ros.spinning import run_nodes
from robot_dynamics.ros.topics import DESCRIPTION_QOS, SENSOR_QOS
from robot_dynamics.simulation.errors import SimulationError
from robot_dynamics.simulation.mujoco_model import boxes_from_text
from robot_dynamics.simulation.profiles import load_profile
from robot_dynamics.simulation.reference import (
    ArmSimulation,
    FloatingSample,
    JointSample,
    SensorNoise,
    StanceMotion,
    scripted_excitation,
)
from robot_dynamics.simulation.scenes import (
    ArmScene,
    SceneSample,
    make_scene,
)

WALL_CLOCK_WORDS = (
    'sim_robot runs on the wall clock and publishes no /clock: use_sim_time must stay false '
    '(it would wait for a /clock nothing publishes)'
)


def _refuse_sim_time(parameters: list) -> SetParametersResult:
    """``ros2 param set sim_robot use_sim_time true`` would stop the simulation's timer."""
    for parameter in parameters:
        if parameter.name == 'use_sim_time' and parameter.value:
            return SetParametersResult(successful=False, reason=WALL_CLOCK_WORDS)
    return SetParametersResult(successful=True)


class SimRobot(Node):
    """Publishes the simulated robot's description, joint states and (floating base) odometry."""

    def __init__(self, node_name: str = 'sim_robot', **kwargs):
        super().__init__(node_name, **kwargs)
        self._stopped_by: Optional[str] = None  # why a failure stopped the simulation
        self._resumed_from: Optional[str] = None
        self._declare_parameters()
        self.scene = None
        self.simulation: Optional[ArmSimulation] = None
        self.motion: Optional[StanceMotion] = None
        self.carrying = False
        self.payload_link = self.value('payload_link')
        self.payload = self._payload()
        if self.engine == 'mujoco':
            text = self._start_scene()
        else:
            text = self._start_reference()
        self.published = 0
        self._description_pub = self.create_publisher(String, 'robot_description', DESCRIPTION_QOS)
        self._joint_pub = self.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        self._odom_pub = (
            self.create_publisher(Odometry, 'odom', SENSOR_QOS) if self.motion else None
        )
        self._scene_outputs = (
            SceneOutputs(self, self.scene, self.world_frame) if self.scene else None
        )
        self._motion_start_pub = self.create_publisher(Header, '~/motion_start', DESCRIPTION_QOS)
        self._description_pub.publish(String(data=text))
        self.create_service(SetBool, '~/attach_payload', self._attach_payload)
        self.create_service(Trigger, '~/restart_motion', self._restart_motion)
        self._create_external_wrench_interface()
        self._restart()
        self._timer = self.create_timer(1.0 / self.publish_rate, self._tick)
        warn_unknown_parameters(self)

    def _start_scene(self) -> str:
        """The MuJoCo scene of the parameters; returns the published description."""
        profile = load_profile(self.value('robot_profile'))
        scene_name = self.value('scene')
        options = {'step': 1.0 / self.simulation_rate, 'gravity': self.gravity}
        if scene_name == 'legged':
            self.scene = make_scene(
                'legged',
                profile,
                self.value('profile_seed'),
                legged_robot_name=self.value('legged_robot'),
                **options,
            )
            text = read_description_file(self.scene.robot.urdf)
        else:
            text = self._description_text()
            nominal = RobotModel.from_urdf_string(text, gravity=self.gravity)
            trajectory = scripted_excitation(
                nominal,
                self.value('excitation_frequency'),
                self.value('excitation_harmonics'),
                self.value('trajectory_seed'),
                self.value('max_acceleration'),
                self.value('velocity_fraction'),
            )
            self.scene = make_scene(
                scene_name,
                profile,
                self.value('profile_seed'),
                description_text=text,
                trajectory=trajectory,
                bandwidth_hz=self.value('tracking_bandwidth'),
                payload_link=self.payload_link,
                payload=self.payload,
                carrying=self.value('start_with_payload'),
                obstacles=boxes_from_text(self.value('obstacles')),
                base_tilt=self.value('base_tilt'),
                base_motion=self.value('base_motion'),
                **options,
            )
            self.carrying = self.scene.carrying
        self.robot = self.scene.nominal
        self.get_logger().info(
            f'robot profile drawn (engine mujoco, scene {scene_name}): '
            f'{json.dumps(self.scene.true_robot.drawn_values())}'
        )
        return text

    def _start_reference(self) -> str:
        """The pinocchio engine (today's exact reference); returns the published description."""
        text = self._description_text()
        self.robot = RobotModel.from_urdf_string(
            text, root_joint=self.root_joint, gravity=self.gravity
        )
        self.noise = SensorNoise(
            self.value('position_noise'),
            self.value('velocity_noise'),
            self.value('effort_noise'),
            self.value('seed'),
        )
        self._rng = self.noise.generator()
        if self.robot.floating_base:
            self.motion = StanceMotion(
                self.robot,
                self.value('contact_frames'),
                list(self.value('stance_positions')),
                self.value('sway_amplitude'),
                self.value('sway_tilt'),
                self.value('sway_frequency'),
                self.value('ground_height'),
            )
        else:
            trajectory = scripted_excitation(
                self.robot,
                self.value('excitation_frequency'),
                self.value('excitation_harmonics'),
                self.value('trajectory_seed'),
                self.value('max_acceleration'),
                self.value('velocity_fraction'),
            )
            self.simulation = ArmSimulation(
                self.robot,
                trajectory,
                1.0 / self.simulation_rate,
                self.value('tracking_bandwidth'),
                self.value('controller_feedback'),
                self.noise,
            )
            if self.value('start_with_payload'):
                self._set_payload(True)
        return text

    # ------------------------------------------------------------------ parameters
    def _declare_parameters(self) -> None:
        """Every parameter (:data:`SIM_ROBOT_PARAMETERS`) is read once at start-up, then
        read-only (a change is refused with a reason). A whole number is taken for a float; a
        value of the wrong type, out of its range or failing its check is logged and its
        default used; an unknown ``root_joint`` (below) stops the node with the reason.
        ``simulation_rate`` 0 (the default) is the smallest whole multiple of ``publish_rate``
        of at least 1000 Hz (500 Hz on the legged scene): so the published steps are exactly
        1/``publish_rate`` apart."""
        self.parameters = NodeParameters(self, SIM_ROBOT_PARAMETERS)
        if self.get_parameter('use_sim_time').value:
            raise SimulationError(WALL_CLOCK_WORDS)
        self.add_on_set_parameters_callback(_refuse_sim_time)
        self.simulation_rate = self.value('simulation_rate') or smallest_whole_multiple(
            self.value('publish_rate'),
            minimum_simulation_rate(self.value('engine'), self.value('scene')),
        )
        self.engine = self.value('engine')
        self.root_joint = self.value('root_joint')
        if self.root_joint not in ('fixed', 'floating'):
            raise SimulationError(
                f"root_joint must be 'fixed' or 'floating', got {self.root_joint!r}"
            )
        if (self.root_joint, self.engine) == ('floating', 'mujoco') and self.value(
            'scene'
        ) != 'legged':
            raise SimulationError(
                "root_joint floating is engine pinocchio's kinematic quadruped; on engine mujoco "
                'a floating base stands on the legged scene: scene legged'
            )
        self.gravity = list(self.value('gravity'))
        self.publish_rate = self.value('publish_rate')
        self.max_catch_up = self.value('max_catch_up')
        self.world_frame, self.base_frame = self.value('world_frame'), self.value('base_frame')

    def value(self, name: str):
        """The value in use of parameter ``name`` (converted, or its default when unusable)."""
        return self.parameters[name]

    def _description_text(self) -> str:
        text = self.value('robot_description')
        if text:
            return text
        default = QUADRUPED_URDF if self.root_joint == 'floating' else ARM_URDF
        return read_description_file(self.value('urdf_file') or default)

    def _payload(self) -> Optional[InertialParameters]:
        mass = float(self.value('payload_mass'))
        if mass <= 0.0:
            return None
        com, inertia = list(self.value('payload_com')), list(self.value('payload_inertia'))
        if len(com) != 3 or len(inertia) != 6:
            raise SimulationError(
                'payload_com needs 3 values [m] and payload_inertia 6 (ixx, ixy, ixz, iyy, iyz, '
                f'izz) [kg m^2]; got {len(com)} and {len(inertia)}'
            )
        ixx, ixy, ixz, iyy, iyz, izz = (float(x) for x in inertia)
        try:
            return checked_payload(mass, com, [[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        except PayloadError as error:
            raise SimulationError(
                f'hidden payload (payload_mass, payload_com, payload_inertia): {error}'
            ) from None

    # ------------------------------------------------------------------ payload service
    def _set_payload(self, attached: bool) -> None:
        if self.scene is not None:
            if not isinstance(self.scene, ArmScene):
                raise SimulationError('the legged scene has no payload')
            self.scene.set_carrying(attached)
            self.carrying = self.scene.carrying
            return
        if self.simulation is None:
            raise SimulationError('the floating-base motion is kinematic: it has no payload')
        self.simulation.set_payload(self.payload_link, self.payload if attached else None)
        self.carrying = attached and self.payload is not None

    @never_raises
    def _attach_payload(self, request, response):
        try:
            self._set_payload(request.data)
        except (SimulationError, PayloadError) as error:
            response.success, response.message = False, str(error)
            return response
        self._restart()
        state = 'attached' if request.data and self.payload else 'removed'
        response.success = True
        response.message = f'hidden payload {state}; motion restarted{self._resumed_words()}'
        return response

    @never_raises
    def _restart_motion(self, request, response):
        self._restart()
        response.success = True
        response.message = f'motion restarted from its first sample{self._resumed_words()}'
        return response

    # ------------------------------------------------------------------ external wrench
    def _create_external_wrench_interface(self) -> None:
        """``~/external_wrench_command`` in; the applied truth on ``~/true_external_wrench`` and
        ``~/true_external_torques`` with every joint state (zeros while nothing pushes)."""
        self._log = RateLimitedLogger(self.get_logger())
        self.create_subscription(
            WrenchStamped, '~/external_wrench_command', self._on_external_wrench_command, 10
        )
        self._true_wrench_pub = self.create_publisher(
            WrenchStamped, '~/true_external_wrench', SENSOR_QOS
        )
        self._true_torques_pub = self.create_publisher(
            JointState, '~/true_external_torques', SENSOR_QOS
        )
        self._true_wrench_frame = self.payload_link

    def _on_external_wrench_command(self, message: WrenchStamped) -> None:
        try:
            self._apply_external_wrench(message)
        except SimulationError as error:
            self._log.warn('external_wrench', f'external wrench command refused: {error}')
        except Exception as error:  # a node never dies from a message
            self._log.error('external_wrench', f'external wrench command failed: {error!r}')

    def _apply_external_wrench(self, message: WrenchStamped) -> None:
        force, moment = message.wrench.force, message.wrench.torque
        link = message.header.frame_id or self._true_wrench_frame
        if self.scene is not None:
            self.scene.set_push(link, [force.x, force.y, force.z], [moment.x, moment.y, moment.z])
            if self.scene.engine.push is not None:
                self._true_wrench_frame = link
            return
        if self.simulation is None:
            raise SimulationError(
                'the floating-base motion is kinematic: it takes no external wrench'
            )
        self.simulation.set_external_wrench(
            link, [force.x, force.y, force.z], [moment.x, moment.y, moment.z]
        )
        if self.simulation.external_wrench is not None:
            self._true_wrench_frame = link

    def _publish_external_truth(self, torques: Optional[np.ndarray], wrench, stamp: Time) -> None:
        """``torques`` J(q)ᵀ F [N·m] (None: no push) of the applied ``wrench`` (a link, force and
        moment in its frame), stamped like the joint state."""
        if self._true_torques_pub.get_subscription_count():
            message = JointState(
                name=list(self.robot.joint_names),
                effort=[0.0] * self.robot.num_joints if torques is None else torques.tolist(),
            )
            message.header.stamp = stamp
            self._true_torques_pub.publish(message)
        if self._true_wrench_pub.get_subscription_count():
            message = WrenchStamped()
            message.header.stamp, message.header.frame_id = stamp, self._true_wrench_frame
            if torques is not None and wrench is not None:
                message.header.frame_id = wrench.link
                force, moment = message.wrench.force, message.wrench.torque
                force.x, force.y, force.z = (float(x) for x in wrench.force)
                moment.x, moment.y, moment.z = (float(x) for x in wrench.moment)
            self._true_wrench_pub.publish(message)

    # ------------------------------------------------------------------ stream
    def _restart(self) -> None:
        """Motion back to its first sample; the stamps continue from the wall clock. A
        simulation stopped by a failure publishes again."""
        if self._stopped_by is not None:  # the push it diverged under would stop it again
            self._resumed_from, self._stopped_by = self._stopped_by, None
            if self.scene is not None:
                self.scene.engine.set_push(None)
            self._timer.reset()
        if self.simulation is not None:
            self.simulation.reset()
        if self.scene is not None:
            self.scene.reset()
        self._start_wall = time.monotonic()
        self._start_nanoseconds = self.get_clock().now().nanoseconds
        self._next_publish = 0.0
        self._motion_start_pub.publish(
            Header(stamp=self._stamp(0.0), frame_id='payload' if self.carrying else 'no payload')
        )

    def _tick(self) -> None:
        try:
            self._step()
        except (
            Exception
        ) as error:  # e.g. leg IK out of reach: stop cleanly, say why; a timer never raises
            reason = str(error) if isinstance(error, RobotDynamicsError) else repr(error)
            self.get_logger().error(
                f'simulation stopped: {shorten(reason)}; ~/restart_motion starts it again'
            )
            self._timer.cancel()
            self._stopped_by = reason

    def _resumed_words(self) -> str:
        """What a restart resumed ('' when the simulation was running), said once."""
        resumed, self._resumed_from = self._resumed_from, None
        return (
            '' if resumed is None else f' (it had stopped: {shorten(resumed)}; any push is removed)'
        )

    def _step(self) -> None:
        elapsed = time.monotonic() - self._start_wall
        horizon = self._next_publish + self.max_catch_up
        if elapsed > horizon:  # stalled: slow simulated time down instead of bursting
            self._start_wall += elapsed - horizon
            elapsed = horizon
        if self.scene is not None:
            self._advance_scene(elapsed)
        elif self.simulation is not None:
            self._advance_dynamics(elapsed)
        else:
            while self._next_publish <= elapsed:
                self._publish_floating(self.motion.sample(self._next_publish))
                self._next_publish += 1.0 / self.publish_rate

    def _advance_dynamics(self, until: float) -> None:
        simulation = self.simulation
        while simulation.time <= until:
            sample = simulation.advance()
            if sample.time >= self._next_publish - 0.5 * simulation.step_size:
                self._publish_joints(sample)
                self._next_publish += 1.0 / self.publish_rate

    def _advance_scene(self, until: float) -> None:
        scene = self.scene
        while scene.time <= until:
            sample = scene.step()
            if sample.time >= self._next_publish - 0.5 * scene.step_size:
                self._publish_scene(sample)
                self._next_publish += 1.0 / self.publish_rate

    def _publish_scene(self, sample: SceneSample) -> None:
        stamp = self._stamp(sample.time)
        joints = sample.joints
        message = JointState(
            name=list(self.robot.joint_names),
            position=joints.positions.tolist(),
            velocity=joints.velocities.tolist(),
            effort=joints.efforts.tolist(),
        )
        message.header.stamp = stamp
        self._joint_pub.publish(message)
        self.published += 1
        push = sample.truth.push
        self._publish_external_truth(sample.truth.external_torques if push else None, push, stamp)
        self._scene_outputs.publish(sample, stamp)

    def run_for(self, seconds: float) -> float:
        """Advance ``seconds`` [s] of simulated time as fast as it computes, publishing as usual,
        with the timer stopped (benches); returns the wall time it took [s]."""
        self._timer.cancel()
        start = time.monotonic()
        if self.scene is not None:
            self._advance_scene(self.scene.time + seconds)
        elif self.simulation is not None:
            self._advance_dynamics(self.simulation.time + seconds)
        else:
            raise SimulationError(
                'the kinematic floating-base motion is paced by the wall clock only'
            )
        return time.monotonic() - start

    @property
    def start_stamp(self) -> float:
        """The stamp [s] of the motion's time zero (see ``~/motion_start``)."""
        return self._start_nanoseconds * 1e-9

    def _stamp(self, sample_time: float) -> Time:
        seconds, nanoseconds = divmod(
            self._start_nanoseconds + round(sample_time * 1e9), 1_000_000_000
        )
        return Time(sec=seconds, nanosec=nanoseconds)

    def _publish_joints(self, sample: JointSample) -> None:
        noisy = self.noise.applied(sample, self._rng)
        message = JointState(
            name=list(self.robot.joint_names),
            position=noisy.positions.tolist(),
            velocity=noisy.velocities.tolist(),
            effort=noisy.efforts.tolist(),
        )
        message.header.stamp = self._stamp(sample.time)
        self._joint_pub.publish(message)
        self.published += 1
        if self.simulation is not None:
            self._publish_external_truth(
                sample.external_torques, self.simulation.external_wrench, message.header.stamp
            )

    def _publish_floating(self, sample: FloatingSample) -> None:
        stamp = self._stamp(sample.time)
        odometry = Odometry(child_frame_id=self.base_frame)
        odometry.header.stamp, odometry.header.frame_id = stamp, self.world_frame
        pose, twist = odometry.pose.pose, odometry.twist.twist
        pose.position.x, pose.position.y, pose.position.z = (float(x) for x in sample.base_pose[:3])
        (pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w) = (
            float(x) for x in sample.base_pose[3:]
        )
        twist.linear.x, twist.linear.y, twist.linear.z = (float(x) for x in sample.base_twist[:3])
        twist.angular.x, twist.angular.y, twist.angular.z = (
            float(x) for x in sample.base_twist[3:]
        )
        self._odom_pub.publish(odometry)
        self._publish_joints(sample.joints)


def main(args=None) -> None:
    run_nodes(lambda: [SimRobot()], args, program='sim_robot')


if __name__ == '__main__':
    main()
