"""The MuJoCo engine: steps a compiled scene (:mod:`robot_dynamics.simulation.mujoco_model`)
under motor torques, with the profile's friction applied and every force known.

Per step k (MuJoCo's semi-implicit Euler, the pinocchio reference engine's integrator), with the
state (q_k, q̇_k) and the motor torques τ_m:

    (M(q) + diag(armature)) q̈ + h(q, q̇) = τ_m − τ_f(q̇_k) + J_cᵀ f_c + J_extᵀ F_ext

τ_f is the profile's friction (:meth:`JointDrive.friction`), applied as a generalised force.
The link-side torque a joint torque sensor measures is τ_link = τ_m − τ_f − armature·q̈
(= M q̈ + h − J_cᵀ f_c − J_extᵀ F_ext). A scripted base (``mount: scripted``) gets, each step,
the six generalised forces that make its acceleration exactly the one asked (a partitioned
solve with MuJoCo's mass matrix: f_b = (Eᵀ M⁻¹ E)⁻¹ (a_b − q̈_b,0)).

Conventions: joint arrays in the order the scene model was built with (the core model's);
base pose [x, y, z, qx, qy, qz, qw] of the root link in the world, base twist [v, ω] in the
root link's frame (pinocchio's free-flyer convention). SI units.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import mujoco
import numpy as np

from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.simulation.errors import SimulationError
from robot_dynamics.simulation.mujoco_model import SceneModel
from robot_dynamics.simulation.profiles import TrueRobot


@dataclass(frozen=True)
class EngineStep:
    """One integration step: the state at its start (``time`` [s], positions [rad], velocities
    [rad/s]), the acceleration it produced [rad/s²] and the joint torques [N·m] acting during
    it: ``motor`` (commanded), ``friction`` (τ_f, opposing the motion), ``rotor`` (armature·q̈),
    ``link`` (the link-side torque a joint torque sensor measures) and ``external`` (J_extᵀ F of
    the applied push; zeros without one); the root link's pose and twist at the step start
    (module conventions). MuJoCo's ``data`` holds the contacts, sensors and CoM of this state
    until the next step."""

    time: float
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    motor: np.ndarray
    friction: np.ndarray
    rotor: np.ndarray
    link: np.ndarray
    external: np.ndarray
    base_pose: np.ndarray
    base_twist: np.ndarray


@dataclass(frozen=True)
class Push:
    """A wrench on ``link`` at its origin, in its frame: ``force`` [N], ``moment`` [N·m]."""

    link: str
    force: np.ndarray
    moment: np.ndarray


class MujocoEngine:
    """Steps ``scene`` with ``true_robot``'s drives (friction, armature)."""

    def __init__(self, scene: SceneModel, true_robot: TrueRobot):
        self.scene = scene
        self.model = scene.model
        self.data = mujoco.MjData(self.model)
        self.drives = [true_robot.drives[name] for name in scene.joint_names]
        self.armature = np.array([drive.armature for drive in self.drives])
        self._frictionless = all(
            not (drive.viscous or drive.coulomb or drive.stribeck_static) for drive in self.drives
        )
        self.push: Optional[Push] = None
        self.payload: Optional[InertialParameters] = None
        self._push_body = -1

    @property
    def time(self) -> float:
        return float(self.data.time)

    @property
    def step_size(self) -> float:
        return float(self.model.opt.timestep)

    # ------------------------------------------------------------------ state
    def reset(
        self,
        positions: Sequence[float],
        velocities: Optional[Sequence[float]] = None,
        base_pose: Optional[Sequence[float]] = None,
        base_twist: Optional[Sequence[float]] = None,
        base_coordinates: Optional[Sequence[float]] = None,
        base_rates: Optional[Sequence[float]] = None,
    ) -> None:
        """Time 0 at the given joint state. A free base takes ``base_pose``/``base_twist``
        (module conventions); a scripted base its six coordinates and rates (m, rad)."""
        mujoco.mj_resetData(self.model, self.data)
        scene, data = self.scene, self.data
        data.qpos[scene.qpos_index] = positions
        if velocities is not None:
            data.qvel[scene.dof_index] = velocities
        if scene.base_dofs.size:
            start = self.model.jnt_qposadr[self.model.body_jntadr[scene.root_body]]
            if base_coordinates is not None:
                data.qpos[start : start + 6] = base_coordinates
                data.qvel[scene.base_dofs] = np.zeros(6) if base_rates is None else base_rates
            elif base_pose is not None:
                x, y, z, qx, qy, qz, qw = base_pose
                data.qpos[start : start + 7] = [x, y, z, qw, qx, qy, qz]
                if base_twist is not None:
                    rotation = _rotation_xyzw(base_pose[3:])
                    data.qvel[scene.base_dofs] = np.concatenate(
                        [rotation @ np.asarray(base_twist[:3]), base_twist[3:]]
                    )
        mujoco.mj_forward(self.model, self.data)

    def positions(self) -> np.ndarray:
        return self.data.qpos[self.scene.qpos_index].copy()

    def velocities(self) -> np.ndarray:
        return self.data.qvel[self.scene.dof_index].copy()

    def base_pose(self) -> np.ndarray:
        """[x, y, z, qx, qy, qz, qw] of the root link in the world."""
        root = self.scene.root_body
        w, x, y, z = self.data.xquat[root]
        return np.concatenate([self.data.xpos[root], [x, y, z, w]])

    def base_twist(self) -> np.ndarray:
        """[v, ω] of the root link origin in its own frame [m/s, rad/s]."""
        velocity = np.zeros(6)
        mujoco.mj_objectVelocity(
            self.model, self.data, mujoco.mjtObj.mjOBJ_XBODY, self.scene.root_body, velocity, 1
        )
        return np.concatenate([velocity[3:], velocity[:3]])

    # ------------------------------------------------------------------ scene changes
    def set_payload(self, payload: Optional[InertialParameters]) -> None:
        """Weld ``payload`` (mass [kg], CoM [m] and inertia about the CoM [kg·m²] in the payload
        link's frame) to the payload link, or remove it (None); effective from the next step."""
        body = self.scene.payload_body
        if body < 0:
            raise SimulationError('this scene has no payload link')
        model = self.model
        if payload is None or payload.mass <= 0.0:
            model.body_mass[body], model.body_inertia[body] = 0.0, 0.0
            model.body_ipos[body], model.body_iquat[body] = 0.0, [1.0, 0.0, 0.0, 0.0]
            self.payload = None
            return
        moments, axes = np.linalg.eigh(payload.inertia_com)
        if np.linalg.det(axes) < 0.0:
            axes[:, 0] = -axes[:, 0]
        quaternion = np.zeros(4)
        mujoco.mju_mat2Quat(quaternion, np.ascontiguousarray(axes).reshape(-1))
        model.body_mass[body], model.body_ipos[body] = payload.mass, payload.com
        model.body_inertia[body], model.body_iquat[body] = np.maximum(moments, 0.0), quaternion
        self.payload = payload

    def set_push(self, push: Optional[Push]) -> None:
        """Apply ``push`` from the next step on (None removes it)."""
        if push is None:
            self.push, self._push_body = None, -1
            return
        body = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, push.link)
        if body < 0 or body not in self.scene.robot_bodies:
            raise SimulationError(
                f'external wrench link "{push.link}" is not a link of the simulated robot'
            )
        if self.model.body_weldid[body] == 0:
            raise SimulationError(
                f'external wrench link "{push.link}" is fixed to the world: nothing would move'
            )
        self.push, self._push_body = push, body

    # ------------------------------------------------------------------ step
    def friction(self, velocities: np.ndarray) -> np.ndarray:
        """τ_f [N·m] of every joint at ``velocities`` [rad/s]."""
        if self._frictionless:
            return np.zeros(len(self.drives))
        return np.array(
            [drive.friction(velocity) for drive, velocity in zip(self.drives, velocities)]
        )

    def step(
        self, motor_torques: np.ndarray, base_acceleration: Optional[np.ndarray] = None
    ) -> EngineStep:
        """Integrate one step under ``motor_torques`` [N·m]; a scripted base moves with
        ``base_acceleration`` (six coordinate accelerations [m/s², rad/s²]) exactly."""
        model, data, scene = self.model, self.data, self.scene
        time, q, v = self.time, self.positions(), self.velocities()
        unstable = _instability_warnings(data)
        mujoco.mj_step1(model, data)  # kinematics, mass matrix, contacts at (q_k, q̇_k)
        pose, twist = self.base_pose(), self.base_twist()
        friction = self.friction(v)
        data.ctrl[scene.actuator_index] = motor_torques
        data.qfrc_applied[:] = 0.0
        data.qfrc_applied[scene.dof_index] = -friction
        external = self._apply_push()
        if base_acceleration is not None:
            self._drive_base(np.asarray(base_acceleration, dtype=float))
        mujoco.mj_step2(model, data)  # forces, acceleration, semi-implicit Euler
        acceleration = data.qacc[scene.dof_index].copy()
        if _instability_warnings(data) != unstable or not (
            np.all(np.isfinite(acceleration)) and np.all(np.isfinite(data.qpos))
        ):
            pushed = (
                ''
                if self.push is None
                else f'under a push of {np.linalg.norm(self.push.force):.3g} N and '
                f'{np.linalg.norm(self.push.moment):.3g} N m on "{self.push.link}" (a smaller '
                'push, or '
            )
            advice = f'{pushed}lower gains or a smaller step' + (')' if pushed else '')
            raise SimulationError(f'MuJoCo integration diverged (non-finite state) {advice}')
        rotor = self.armature * acceleration
        motor = np.asarray(motor_torques, dtype=float).copy()
        return EngineStep(
            time,
            q,
            v,
            acceleration,
            motor,
            friction,
            rotor,
            motor - friction - rotor,
            external,
            pose,
            twist,
        )

    def _apply_push(self) -> np.ndarray:
        """Set xfrc_applied for the push (at the link's CoM, world axes) and return J_extᵀ F."""
        data, scene = self.data, self.scene
        data.xfrc_applied[:] = 0.0
        if self.push is None:
            return np.zeros(len(scene.joint_names))
        body = self._push_body
        rotation, origin = data.xmat[body].reshape(3, 3), data.xpos[body]
        force, moment = rotation @ self.push.force, rotation @ self.push.moment
        lever = origin - data.xipos[body]
        data.xfrc_applied[body] = np.concatenate([force, moment + np.cross(lever, force)])
        jacp, jacr = np.zeros((3, self.model.nv)), np.zeros((3, self.model.nv))
        mujoco.mj_jac(self.model, data, jacp, jacr, origin, body)
        return (jacp.T @ force + jacr.T @ moment)[scene.dof_index]

    def _drive_base(self, acceleration: np.ndarray) -> None:
        """Base generalised forces giving the scripted acceleration exactly (partitioned solve)."""
        model, data, base = self.model, self.data, self.scene.base_dofs
        mujoco.mj_fwdActuation(model, data)
        mujoco.mj_fwdAcceleration(model, data)
        units, columns = np.zeros((6, model.nv)), np.zeros((6, model.nv))
        units[np.arange(6), base] = 1.0
        mujoco.mj_solveM(model, data, columns, units)  # rows: M⁻¹ e_b
        force = np.linalg.solve(columns[:, base].T, acceleration - data.qacc_smooth[base])
        data.qfrc_applied[base] += force


def _rotation_xyzw(quaternion: Sequence[float]) -> np.ndarray:
    x, y, z, w = quaternion
    matrix = np.zeros(9)
    mujoco.mju_quat2Mat(matrix, np.array([w, x, y, z], dtype=float) / np.linalg.norm([w, x, y, z]))
    return matrix.reshape(3, 3)


def _instability_warnings(data: mujoco.MjData) -> int:
    """How many times MuJoCo found a non-finite or huge position, velocity or acceleration (it
    then resets the state to the model's rest pose, silently but for this count)."""
    warnings = data.warning
    return sum(
        warnings[kind].number
        for kind in (
            mujoco.mjtWarning.mjWARN_BADQPOS,
            mujoco.mjtWarning.mjWARN_BADQVEL,
            mujoco.mjtWarning.mjWARN_BADQACC,
        )
    )
