"""Scenes of the proving ground on the MuJoCo engine; each :meth:`step` returns a typed
:class:`SceneSample` (what the robot publishes) with its :class:`~.truth.Truth`.

* :class:`ArmScene` — a fixed-base arm on a table (``arm``), on a base tilted by ``base_tilt``
  rpy (``tilted_base``) or on a scripted moving base (``moving_base``: ``mobile``, a base
  driving a circle of 1.2 m radius with its heading along the path and a varying speed,
  |a| ≤ 1.8 m/s²; ``deck``, rolling ±10° at 0.2 Hz), tracking a periodic Fourier excitation
  with :class:`~.controllers.TrackingController` (nominal URDF, measured state, gravity as
  mounted; ``saturate``: torques clipped at the URDF effort limits). A payload body welded to
  the payload link is attached and detached while running; optional box obstacles make the
  excitation collide.
* :class:`LeggedScene` — a floating-base robot (the bundled quadruped, or ``solo12`` from
  example-robot-data) standing on a floor (friction 0.8) under
  :class:`~.controllers.StanceController`, with a periodic script (:data:`LEGGED_PHASES`):
  standing, weight shifts, a three-leg stance, stepping in place one leg at a time, and
  pushes on the base of 15 % of its weight; or (``calibration``) standing, then each foot lifted
  and held still in turn (:data:`CALIBRATION_HOLDS`), to zero the effort offsets on the feet.

Time [s] starts at 0 at construction and at each :meth:`reset`. SI units throughout.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence, Union

import mujoco
import numpy as np
import pinocchio as pin

from robot_dynamics.core.identification.excitation import FourierTrajectory
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.model.urdf import parse_urdf, read_description_file
from robot_dynamics.models import QUADRUPED_URDF
from robot_dynamics.simulation.controllers import (
    StanceController,
    TrackingController,
    base_pose,
    stance_inverse_kinematics,
)
from robot_dynamics.simulation.errors import SceneError
from robot_dynamics.simulation.measurement import BodySensors, JointSensors, MeasuredJoints
from robot_dynamics.simulation.mujoco_engine import MujocoEngine, Push
from robot_dynamics.simulation.mujoco_model import Box, SceneLayout, build_scene_model
from robot_dynamics.simulation.profiles import RobotProfile
from robot_dynamics.simulation.reference import checked_push, scripted_excitation
from robot_dynamics.simulation.truth import ImuReading, Truth, read_truth

SCENES = ('arm', 'legged', 'tilted_base', 'moving_base')
BASE_MOTIONS = ('mobile', 'deck')
TABLE = Box('table', (0.0, 0.0, -0.025), (1.0, 0.8, 0.05))
"""The arm's table: top face at z = 0, under the arm's base [m]."""
BASE_GAINS = (400.0, 40.0)
"""Stiffness [1/s²] and damping [1/s] that keep the scripted base on its script (the acceleration
they give is applied exactly, so the truth stays exact)."""


@dataclass(frozen=True)
class SceneSample:
    """One published sample: ``joints`` as measured, odometry (pose [x, y, z, qx, qy, qz, qw] in
    the world, twist [v, ω] in the root frame), ``imu`` as measured, the force/torque sensor
    (force [N], moment [N·m] at the payload link; None without one) and the ``truth``."""

    time: float
    joints: MeasuredJoints
    odom_pose: np.ndarray
    odom_twist: np.ndarray
    imu: ImuReading
    ft_wrench: Optional[np.ndarray]
    truth: Truth


class _Scene:
    """What every scene shares: the engine, the true robot, the sensors, pushes."""

    def __init__(
        self,
        description_text: str,
        nominal: RobotModel,
        profile: RobotProfile,
        profile_seed: int,
        layout: SceneLayout,
    ):
        self.description = parse_urdf(description_text)
        self.nominal = nominal
        self.true_robot = profile.draw(self.description, profile_seed)
        self.scene_model = build_scene_model(
            self.description, nominal.joint_names, self.true_robot, layout
        )
        self.engine = MujocoEngine(self.scene_model, self.true_robot)
        self.joint_sensors = JointSensors(self.true_robot, nominal.joint_names)
        self.body_sensors = BodySensors(self.true_robot)

    @property
    def time(self) -> float:
        return self.engine.time

    @property
    def step_size(self) -> float:
        return self.engine.step_size

    def record(self, seconds: float, rate: float):
        """Step ``seconds`` [s] and return the samples published at ``rate`` [Hz] (every
        1/(rate · step) steps) as a :class:`~robot_dynamics.core.identification.recording.Recording`
        of the measured joints."""
        from robot_dynamics.core.identification.recording import Recording

        every = max(1, round(1.0 / (rate * self.step_size)))
        samples = [self.step() for _ in range(int(round(seconds / self.step_size)))][::every]
        return Recording(
            np.array([sample.time for sample in samples]),
            [sample.joints.positions for sample in samples],
            [sample.joints.velocities for sample in samples],
            [sample.joints.efforts for sample in samples],
            self.nominal.joint_names,
        )

    def set_push(self, link: str, force: Sequence[float], moment: Sequence[float]) -> None:
        """Push ``link`` at its origin with ``force`` [N] and ``moment`` [N·m] in its frame from
        the next step; an all-zero wrench removes the push."""
        force, moment = checked_push(force, moment, SceneError)
        self.engine.set_push(
            None if not (np.any(force) or np.any(moment)) else Push(link, force, moment)
        )

    def _sample(self, step, measured: tuple) -> SceneSample:
        truth = read_truth(self.engine, step)
        efforts = self.joint_sensors.effort(step.link, step.motor)
        pose, twist = self.body_sensors.odometry(step.time, step.base_pose, step.base_twist)
        gyro, accelerometer = self.body_sensors.imu(
            truth.imu.angular_velocity, truth.imu.specific_force
        )
        imu = ImuReading(gyro, accelerometer, truth.imu.orientation)
        ft = None if truth.ft_wrench is None else self.body_sensors.ft_wrench(truth.ft_wrench)
        return SceneSample(
            step.time,
            MeasuredJoints(measured[0], measured[1], efforts),
            pose,
            twist,
            imu,
            ft,
            truth,
        )

    def _check_start_clear(self) -> None:
        """Refuse an environment box that overlaps the robot at the start pose."""
        model, data = self.engine.model, self.engine.data
        mujoco.mj_forward(model, data)
        boxes = {
            geom: name
            for name, geom in self.scene_model.environment_geoms.items()
            if name != 'floor'
        }
        for index in range(data.ncon):
            contact = data.contact[index]
            for geom, other in ((contact.geom1, contact.geom2), (contact.geom2, contact.geom1)):
                if geom in boxes and contact.dist < 0.0:
                    link = model.body(int(model.geom_bodyid[other])).name
                    raise SceneError(
                        f'obstacle "{boxes[geom]}" overlaps link "{link}" at the start pose '
                        f'({-1000.0 * contact.dist:.1f} mm deep): move or shrink it'
                    )


class ArmScene(_Scene):
    """An arm tracking a periodic excitation (module docstring). ``payload``: inertial
    parameters in ``payload_link``'s frame, welded while :attr:`carrying`."""

    def __init__(
        self,
        description_text: str,
        profile: RobotProfile,
        profile_seed: int = 0,
        *,
        trajectory: Optional[FourierTrajectory] = None,
        step: float = 1e-3,
        bandwidth_hz: float = 10.0,
        payload_link: str = 'tool0',
        payload: Optional[InertialParameters] = None,
        carrying: bool = False,
        obstacles: Sequence[Box] = (),
        table: bool = True,
        base_tilt: Sequence[float] = (0.0, 0.0, 0.0),
        base_motion: Optional[str] = None,
        gravity: Sequence[float] = (0.0, 0.0, -9.81),
        saturate: bool = False,
    ):
        if base_motion is not None and base_motion not in BASE_MOTIONS:
            raise SceneError(
                f'base_motion must be one of {list(BASE_MOTIONS)}, got {base_motion!r}'
            )
        tilt = np.asarray(base_tilt, dtype=float)
        rotation = base_pose(np.zeros(3), tilt)
        mounting = _rotation(rotation[3:])
        nominal = RobotModel.from_urdf_string(
            description_text, gravity=list(mounting.T @ np.asarray(gravity, float))
        )
        layout = SceneLayout(
            mount='scripted' if base_motion else 'world',
            root_rpy=tuple(tilt),
            gravity=tuple(gravity),
            timestep=step,
            table=TABLE if table and base_motion is None and not np.any(tilt) else None,
            obstacles=tuple(obstacles),
            payload_link=payload_link,
        )
        super().__init__(description_text, nominal, profile, profile_seed, layout)
        self.base_motion = base_motion
        self.trajectory = trajectory or scripted_excitation(nominal)
        if tuple(self.trajectory.joint_names) != nominal.joint_names:
            raise SceneError(
                f'trajectory joints {list(self.trajectory.joint_names)} are not the model joints '
                f'{list(nominal.joint_names)}'
            )
        self.controller = TrackingController(nominal, bandwidth_hz, saturate)
        self.payload_link, self.payload = payload_link, payload
        self.carrying = False
        self._held: Optional[np.ndarray] = None
        self.reset()
        self._check_start_clear()
        self.set_carrying(carrying)

    def set_carrying(self, carrying: bool) -> None:
        """Weld the payload to its link (True) or remove it, from the next step on."""
        self.carrying = bool(carrying) and self.payload is not None
        self.engine.set_payload(self.payload if self.carrying else None)

    def hold(self, positions: Optional[Sequence[float]]) -> None:
        """Track the still pose ``positions`` [rad] (model joint order) instead of the
        excitation from the next step; None: back to the excitation."""
        if positions is None:
            self._held = None
            return
        held = np.asarray(positions, dtype=float)
        if held.shape != (self.nominal.num_joints,) or not np.all(np.isfinite(held)):
            raise SceneError(
                f'a held pose needs {self.nominal.num_joints} finite joint positions [rad]'
            )
        self._held = held

    def reference(self, time: float) -> tuple:
        """(q, q̇, q̈) tracked at ``time`` [s]: the held pose, or the excitation (periodic)."""
        if self._held is not None:
            zeros = np.zeros(len(self._held))
            return self._held.copy(), zeros, zeros.copy()
        positions, velocities, accelerations = self.trajectory.evaluate(
            np.array([time % self.trajectory.duration])
        )
        return positions[0], velocities[0], accelerations[0]

    def reset(self) -> None:
        """Back to time 0 at the excitation's start pose, at rest (the payload state is kept)."""
        positions, velocities, _ = self.reference(0.0)
        coordinates, rates, _ = base_script(self.base_motion, 0.0)
        self.engine.reset(
            positions,
            velocities,
            base_coordinates=coordinates if self.base_motion else None,
            base_rates=rates if self.base_motion else None,
        )

    def step(self) -> SceneSample:
        """Control, integrate one step, measure; the sample of the step's start state."""
        engine = self.engine
        time = engine.time
        measured = self.joint_sensors.state(engine.positions(), engine.velocities())
        torques = self.controller.torques(measured[0], measured[1], self.reference(time))
        acceleration = None
        if self.base_motion is not None:
            coordinates, rates, accelerations = base_script(self.base_motion, time)
            base = self.scene_model.base_dofs
            start = engine.model.jnt_qposadr[engine.model.body_jntadr[self.scene_model.root_body]]
            stiffness, damping = BASE_GAINS
            acceleration = (
                accelerations
                + stiffness * (coordinates - engine.data.qpos[start : start + 6])
                + damping * (rates - engine.data.qvel[base])
            )
        return self._sample(engine.step(torques, acceleration), measured)


def base_script(motion: Optional[str], time: float) -> tuple:
    """(coordinates, rates, accelerations) of the scripted base [x, y, z, yaw, pitch, roll] at
    ``time`` [s] (module docstring); zeros without a motion."""
    zeros = np.zeros(6)
    if motion is None:
        return zeros, zeros.copy(), zeros.copy()
    if motion == 'deck':
        amplitude, omega = math.radians(10.0), 2.0 * math.pi * 0.2
        s, c = math.sin(omega * time), math.cos(omega * time)
        return (
            np.array([0, 0, 0, 0, 0, amplitude * s]),
            np.array([0, 0, 0, 0, 0, amplitude * omega * c]),
            np.array([0, 0, 0, 0, 0, -amplitude * omega**2 * s]),
        )
    radius, rate, modulation = 1.2, 0.8, 0.5
    phase = rate * time + modulation * math.sin(rate * time)
    phase_rate = rate * (1.0 + modulation * math.cos(rate * time))
    phase_acceleration = -modulation * rate**2 * math.sin(rate * time)
    s, c = math.sin(phase), math.cos(phase)
    coordinates = np.array([radius * s, radius * (1.0 - c), 0.0, phase, 0.0, 0.0])
    rates = np.array([radius * c * phase_rate, radius * s * phase_rate, 0.0, phase_rate, 0.0, 0.0])
    accelerations = np.array(
        [
            -radius * s * phase_rate**2 + radius * c * phase_acceleration,
            radius * c * phase_rate**2 + radius * s * phase_acceleration,
            0.0,
            phase_acceleration,
            0.0,
            0.0,
        ]
    )
    return coordinates, rates, accelerations


# ---------------------------------------------------------------------- legged
@dataclass(frozen=True)
class LeggedRobot:
    """A legged robot the scene knows: URDF path, feet (contact frames), stance joint positions
    by joint name [rad], PD gains [N·m/rad, N·m·s/rad], foot sphere radius [m]."""

    name: str
    urdf: Path
    feet: tuple
    stance: dict
    stiffness: float
    damping: float
    foot_radius: float = 0.02


def legged_robot(name: str) -> LeggedRobot:
    """``quadruped`` (bundled) or ``solo12`` (from the example-robot-data package)."""
    if name == 'quadruped':
        stance = {
            f'{leg}_{joint}': value
            for leg in ('lf', 'rf', 'lh', 'rh')
            for joint, value in (('haa', 0.0), ('hfe', 0.8), ('kfe', -1.6))
        }
        return LeggedRobot(
            'quadruped',
            QUADRUPED_URDF,
            ('lf_foot', 'rf_foot', 'lh_foot', 'rh_foot'),
            stance,
            400.0,
            2.5,
            0.02,
        )
    if name == 'solo12':
        stance = {}
        for leg, sign in (('FL', 1.0), ('FR', 1.0), ('HL', -1.0), ('HR', -1.0)):
            stance.update({f'{leg}_HAA': 0.0, f'{leg}_HFE': 0.8 * sign, f'{leg}_KFE': -1.6 * sign})
        return LeggedRobot(
            'solo12',
            _solo12_urdf(),
            ('FL_FOOT', 'FR_FOOT', 'HL_FOOT', 'HR_FOOT'),
            stance,
            6.0,
            0.15,
            0.016,
        )
    raise SceneError(f"legged robot must be 'quadruped' or 'solo12', got {name!r}")


def _solo12_urdf() -> Path:
    """solo12.urdf of the installed example-robot-data package (its cmeel share directory)."""
    for root in [Path(path) for path in sys.path if path]:
        candidate = (
            root
            / 'cmeel.prefix'
            / 'share'
            / 'example-robot-data'
            / 'robots'
            / 'solo_description'
            / 'robots'
            / 'solo12.urdf'
        )
        if candidate.is_file():
            return candidate
    raise SceneError('solo12 needs the example-robot-data package (pip install example-robot-data)')


@dataclass(frozen=True)
class LeggedPhase:
    """What the legged script does at one time: base offset from the stance [m], the lifted
    foot's index (None: all feet down), how high it is lifted [m], a base push [N] (world)."""

    offset: np.ndarray
    lifted: Optional[int] = None
    lift: float = 0.0
    push: np.ndarray = field(default_factory=lambda: np.zeros(3))


LEGGED_PHASES = (
    ('stand', 0.0, 2.0),
    ('weight_shifts', 2.0, 6.0),
    ('three_legs', 6.0, 12.0),
    ('stepping', 12.0, 20.0),
    ('pushes', 20.0, 24.0),
)
"""(phase, start [s], end [s]) of the legged script; it repeats every 24 s."""
LEGGED_PERIOD = 24.0
CALIBRATION_LEG_TIME = 8.0
"""Seconds per lifted foot of the ``calibration`` script, after 2 s standing."""
CALIBRATION_HOLDS = (2.0, 0.35, 0.65)
"""Standing still until 2 s; then each foot of the calibration script is held still (lifted)
between these shares of its :data:`CALIBRATION_LEG_TIME`."""


def _blend(value: float) -> float:
    """Smooth 0 → 1 on [0, 1] (cosine), clamped."""
    value = min(max(value, 0.0), 1.0)
    return 0.5 - 0.5 * math.cos(math.pi * value)


class LeggedScene(_Scene):
    """A legged robot standing on a floor (module docstring)."""

    def __init__(
        self,
        robot: str,
        profile: RobotProfile,
        profile_seed: int = 0,
        *,
        step: float = 2e-3,
        gravity: Sequence[float] = (0.0, 0.0, -9.81),
        script: Union[bool, str] = True,
    ):
        if script not in (True, False, 'calibration'):
            raise SceneError(f"script must be True, False or 'calibration', got {script!r}")
        self.robot = legged_robot(robot)
        text = read_description_file(self.robot.urdf)
        nominal = RobotModel.from_urdf_string(text, root_joint='floating', gravity=list(gravity))
        missing = [name for name in nominal.joint_names if name not in self.robot.stance]
        if missing:
            raise SceneError(f'legged robot "{robot}": no stance position for joints {missing}')
        self.stance = np.array([self.robot.stance[name] for name in nominal.joint_names])
        feet = {name: self.robot.foot_radius for name in self.robot.feet}
        layout = SceneLayout(
            mount='free', gravity=tuple(gravity), timestep=step, floor_height=0.0, feet=feet
        )
        super().__init__(text, nominal, profile, profile_seed, layout)
        self.script = script
        self.controller = StanceController(
            nominal, self.robot.feet, self.robot.stiffness, self.robot.damping
        )
        self.weight = nominal.total_mass() * float(np.linalg.norm(gravity))
        start = base_pose(np.zeros(3))
        feet_points = self._feet_points(self.stance, start)
        self.start_position = np.array([0.0, 0.0, self.robot.foot_radius - feet_points[:, 2].min()])
        self.feet_targets = feet_points + self.start_position
        self.centre = pin.centerOfMass(
            nominal.model,
            nominal.data,
            nominal.configuration(self.stance, base_pose(self.start_position)),
        )[:2]
        self._desired = self.stance.copy()
        self._scripted = False
        self.reset()

    def _feet_points(self, positions: np.ndarray, pose: np.ndarray) -> np.ndarray:
        robot = self.nominal
        pin.framesForwardKinematics(robot.model, robot.data, robot.configuration(positions, pose))
        return np.array(
            [robot.data.oMf[robot.frame_id(name)].translation for name in self.robot.feet]
        )

    def reset(self) -> None:
        """Standing at the stance pose, feet on the floor, at rest, time 0."""
        self._desired = self.stance.copy()
        self.engine.reset(
            self.stance, base_pose=base_pose(self.start_position), base_twist=np.zeros(6)
        )

    def phase(self, time: float) -> LeggedPhase:
        """The script at ``time`` [s] (:data:`LEGGED_PHASES`; standing still when not scripted)."""
        if not self.script:
            return LeggedPhase(np.zeros(3))
        if self.script == 'calibration':
            return self._calibration_phase(time)
        t = time % LEGGED_PERIOD
        if t < 2.0:
            return LeggedPhase(np.zeros(3))
        if t < 6.0:
            u = t - 2.0
            return LeggedPhase(
                0.02 * np.array([math.sin(math.pi * u), math.sin(0.5 * math.pi * u), 0.0])
            )
        if t < 12.0:
            return self._step_phase(0, (t - 6.0) / 6.0, lift=0.06)
        if t < 20.0:
            leg = int((t - 12.0) // 2.0)
            return self._step_phase(leg, ((t - 12.0) % 2.0) / 2.0, lift=0.04)
        push = np.zeros(3)
        if 21.0 <= t < 21.15:
            push = np.array([0.0, 0.15 * self.weight, 0.0])
        elif 22.5 <= t < 22.65:
            push = np.array([-0.15 * self.weight, 0.0, 0.0])
        return LeggedPhase(np.zeros(3), push=push)

    def _calibration_phase(self, time: float) -> LeggedPhase:
        """Standing still for 2 s, then each foot lifted 6 cm in turn (the three-leg stance's
        motion, :data:`CALIBRATION_LEG_TIME` per foot), then standing still."""
        leg = int((time - CALIBRATION_HOLDS[0]) // CALIBRATION_LEG_TIME)
        if time < CALIBRATION_HOLDS[0] or leg >= len(self.robot.feet):
            return LeggedPhase(np.zeros(3))
        u = (time - CALIBRATION_HOLDS[0]) / CALIBRATION_LEG_TIME - leg
        return self._step_phase(leg, u, lift=0.06)

    def calibration_rests(self) -> tuple:
        """Times [s] at the end of each rest of the ``calibration`` script: standing, then each
        foot held lifted."""
        start, _, last = CALIBRATION_HOLDS
        lifted = tuple(
            start + CALIBRATION_LEG_TIME * (leg + last) - 0.05
            for leg in range(len(self.robot.feet))
        )
        return (start - 0.05,) + lifted

    def _step_phase(self, leg: int, u: float, lift: float) -> LeggedPhase:
        """One leg lifted: shift the CoM over the other feet's centroid (first quarter), lift, hold,
        lower, shift back (last quarter); ``u`` in [0, 1)."""
        others = [index for index in range(len(self.robot.feet)) if index != leg]
        shift = np.zeros(3)
        shift[:2] = self.feet_targets[others, :2].mean(axis=0) - self.centre
        weight = _blend(u / 0.25) if u < 0.5 else _blend((1.0 - u) / 0.25)
        height = _blend((u - 0.25) / 0.1) if u < 0.5 else _blend((0.75 - u) / 0.1)
        down = height <= 0.0
        return LeggedPhase(weight * shift, None if down else leg, lift * height)

    def _recentre(self) -> None:
        """Move the script's stance to where the feet now are (pushes and steps shift them)."""
        data, model = self.engine.data, self.engine.model
        feet = np.array([data.xpos[model.body(name).id] for name in self.robot.feet])
        shift = np.zeros(3)
        shift[:2] = (feet[:, :2] - self.feet_targets[:, :2]).mean(axis=0)
        self.feet_targets = self.feet_targets + shift
        self.start_position = self.start_position + shift
        self.centre = self.centre + shift[:2]

    def desired_positions(self, phase: LeggedPhase) -> np.ndarray:
        """Leg joint positions [rad] for the phase's base offset and lifted foot (inverse
        kinematics)."""
        targets = self.feet_targets.copy()
        if phase.lifted is not None:
            targets[phase.lifted, 2] += phase.lift
        pose = base_pose(self.start_position + phase.offset)
        self._desired = stance_inverse_kinematics(
            self.nominal, self.robot.feet, targets, pose, self._desired
        )
        return self._desired

    def step(self) -> SceneSample:
        """Control, integrate one step, measure; the sample of the step's start state."""
        engine = self.engine
        time = engine.time
        if self.script is True and time > 0.0 and time % LEGGED_PERIOD < 0.5 * self.step_size:
            self._recentre()
        phase = self.phase(time)
        measured = self.joint_sensors.state(engine.positions(), engine.velocities())
        support = [index != phase.lifted for index in range(len(self.robot.feet))]
        torques = self.controller.torques(
            measured[0], measured[1], self.desired_positions(phase), engine.base_pose(), support
        )
        scripted_push = np.any(phase.push)
        if scripted_push:
            root = self.description.root
            rotation = _rotation(engine.base_pose()[3:])
            self.set_push(root, rotation.T @ phase.push, np.zeros(3))
        elif engine.push is not None and self._scripted:
            self.set_push(engine.push.link, np.zeros(3), np.zeros(3))
        self._scripted = scripted_push
        return self._sample(engine.step(torques), measured)


def make_scene(
    scene: str,
    profile: RobotProfile,
    profile_seed: int = 0,
    *,
    description_text: str = '',
    legged_robot_name: str = 'quadruped',
    **options,
) -> _Scene:
    """The scene named ``scene`` (:data:`SCENES`); ``options`` go to its constructor
    (``base_tilt`` is used by ``tilted_base`` only, ``base_motion`` by ``moving_base`` only)."""
    if scene == 'legged':
        return LeggedScene(legged_robot_name, profile, profile_seed, **options)
    if scene not in SCENES:
        raise SceneError(f'scene must be one of {list(SCENES)}, got {scene!r}')
    if scene != 'tilted_base':
        options.pop('base_tilt', None)
    if scene == 'moving_base':
        options.setdefault('base_motion', 'mobile')
    else:
        options.pop('base_motion', None)
    return ArmScene(description_text, profile, profile_seed, **options)


def _rotation(quaternion_xyzw: Sequence[float]) -> np.ndarray:
    x, y, z, w = quaternion_xyzw
    matrix = np.zeros(9)
    mujoco.mju_quat2Mat(matrix, np.array([w, x, y, z], dtype=float))
    return matrix.reshape(3, 3)
