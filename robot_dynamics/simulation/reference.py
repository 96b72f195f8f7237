"""The reference engine: simulated robots integrated with pinocchio, whose truth is exact and
known (``sim_robot engine: pinocchio``).

* :class:`ArmSimulation` — a fixed-base robot integrated with pinocchio's forward dynamics
  (ABA) at a fixed step (≤ 1 ms, semi-implicit Euler), tracking a Fourier trajectory with
  computed-torque control. The control model is the simulated plant itself (hidden payload
  included), so tracking is near perfect and a run with and a run without the payload
  follow the same motion. The controller feeds back the true state, or the noisy measured
  one that the sample then carries (``feedback='measured'``). Each :class:`JointSample`
  holds (q_k, q̇_k, τ_k) of the step start, where τ_k is the torque applied during that step, so
  τ_k + τ_ext,k = M(q_k) q̈_k + h(q_k, q̇_k)
  exactly: τ_k is the effort a perfect joint torque sensor would report. An external wrench
  (:meth:`ArmSimulation.set_external_wrench`) pushes a link; the controller does not know
  it, and τ_ext,k = J(q_k)ᵀ F is in the sample as the truth.
* :class:`StanceMotion` — a floating-base robot moved *kinematically*: a scripted base sway
  over feet that stay fixed on the ground, joint positions from leg inverse kinematics and
  joint velocities that keep the feet still. No contact forces, no dynamics: it feeds CoM,
  momentum and ZMP computations with an exactly known motion.
* :class:`SensorNoise` — seeded white noise added to what a robot would publish.

Units: SI (s, rad, rad/s, N·m, m). Joint arrays in ``RobotModel.joint_names`` order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.identification.excitation import (
    ExcitationLimits,
    FourierTrajectory,
    fit_to_limits,
    rest_constrained,
)
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.simulation.errors import SimulationError

MAX_STEP = 1e-3
"""Longest integration step [s] (the simulation runs at ≥ 1 kHz)."""
FEEDBACK_MODES = ('exact', 'measured')
"""What the simulated controller feeds back: the exact state, or the noisy measured one."""


@dataclass(frozen=True)
class JointSample:
    """Exact joint state at ``time`` [s] since the start of the motion: positions [rad],
    velocities [rad/s] and the applied joint torques ``efforts`` [N·m] (empty for kinematic
    motion), in model joint order."""

    time: float
    positions: np.ndarray
    velocities: np.ndarray
    efforts: np.ndarray
    external_torques: Optional[np.ndarray] = None
    """J(q)ᵀ F [N·m] of the external wrench applied during the step; None without one."""
    measured_positions: Optional[np.ndarray] = None
    """The noisy positions [rad] the controller fed back (``feedback='measured'``); None
    otherwise."""
    measured_velocities: Optional[np.ndarray] = None
    """The noisy velocities [rad/s] the controller fed back (``feedback='measured'``); None
    otherwise."""


@dataclass(frozen=True)
class ExternalWrench:
    """A wrench on ``link`` at its frame origin, in its frame: ``force`` [N], ``moment`` [N·m]."""

    link: str
    force: np.ndarray
    moment: np.ndarray

    @property
    def wrench(self) -> np.ndarray:
        """(force, moment): pinocchio's (linear, angular) order."""
        return np.concatenate([self.force, self.moment])


@dataclass(frozen=True)
class FloatingSample:
    """Exact state of a kinematic floating-base motion at ``time`` [s]: ``base_pose``
    [x, y, z, qx, qy, qz, qw] of the base frame in the world frame, ``base_twist``
    [v, ω] of the base in the base (body) frame [m/s, rad/s], and the joint state."""

    time: float
    base_pose: np.ndarray
    base_twist: np.ndarray
    joints: JointSample


@dataclass(frozen=True)
class SensorNoise:
    """1σ of white Gaussian noise on published positions [rad], velocities [rad/s] and
    efforts [N·m]; ``seed`` makes the sequence reproducible."""

    position: float = 0.0
    velocity: float = 0.0
    effort: float = 0.0
    seed: int = 0

    def __post_init__(self):
        for name in ('position', 'velocity', 'effort'):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise SimulationError(f'{name} noise must be a non-negative number, got {value!r}')

    def generator(self) -> np.random.Generator:
        return np.random.default_rng(self.seed)

    def applied(self, sample: JointSample, rng: np.random.Generator) -> JointSample:
        """``sample`` as a robot publishes it: noise added (efforts stay empty when they are).
        A sample whose controller fed back measured positions and velocities publishes those
        very values (their noise is already in them) and adds only the effort noise."""

        def noisy(values: np.ndarray, sigma: float) -> np.ndarray:
            return (
                values + sigma * rng.standard_normal(values.shape)
                if sigma > 0.0 and values.size
                else values
            )

        if sample.measured_positions is not None:
            return JointSample(
                sample.time,
                sample.measured_positions,
                sample.measured_velocities,
                noisy(sample.efforts, self.effort),
            )
        return JointSample(
            sample.time,
            noisy(sample.positions, self.position),
            noisy(sample.velocities, self.velocity),
            noisy(sample.efforts, self.effort),
        )


def scripted_excitation(
    robot: RobotModel,
    base_frequency: float = 0.2,
    harmonics: int = 4,
    seed: int = 1,
    max_acceleration: float = 3.0,
    velocity_fraction: float = 0.5,
    position_margin: float = 0.15,
) -> FourierTrajectory:
    """A rest-to-rest multi-joint Fourier trajectory with seeded random coefficients, scaled
    to the URDF limits (shrunk by ``position_margin`` of each range per side, velocity ×
    ``velocity_fraction``, |q̈| ≤ ``max_acceleration`` [rad/s²]). Periodic with period
    1/``base_frequency`` [s]; it starts and ends each period at rest at the same pose.
    Cheap (no optimisation): good enough to excite a payload, see
    :func:`robot_dynamics.core.identification.excitation.design_excitation` for an optimised one."""
    if not (base_frequency > 0.0 and harmonics >= 2):
        raise SimulationError(
            f'need base_frequency > 0 and ≥ 2 harmonics, got {base_frequency} Hz, {harmonics}'
        )
    limits = ExcitationLimits.from_model(
        robot,
        max_acceleration=max_acceleration,
        velocity_fraction=velocity_fraction,
        position_margin=position_margin,
    )
    rng = np.random.default_rng(seed)
    sine, cosine = rest_constrained(*rng.uniform(-1.0, 1.0, (2, robot.num_joints, harmonics)))
    raw = FourierTrajectory(
        robot.joint_names, limits.center, sine, cosine, base_frequency, 1.0 / base_frequency
    )
    return fit_to_limits(raw, limits, np.linspace(0.0, 1.0 / base_frequency, 2001))


MAX_PUSH_FORCE = 10_000.0
"""[N] Largest push force accepted (a ton's weight: beyond any contact a robot survives)."""
MAX_PUSH_MOMENT = 1_000.0
"""[N·m] Largest push moment accepted."""


def checked_push(force: Sequence[float], moment: Sequence[float], error: type) -> tuple:
    """(force [N], moment [N·m]) as arrays of 3 finite values of norm at most
    :data:`MAX_PUSH_FORCE` and :data:`MAX_PUSH_MOMENT`; raises ``error`` otherwise."""
    force, moment = (
        np.asarray(force, dtype=float).reshape(-1),
        np.asarray(moment, dtype=float).reshape(-1),
    )
    if (
        force.shape != (3,)
        or moment.shape != (3,)
        or not np.all(np.isfinite(np.concatenate([force, moment])))
    ):
        raise error(
            'an external wrench needs a finite force (3 values, N) and moment (3 values, N·m)'
        )
    if np.linalg.norm(force) > MAX_PUSH_FORCE or np.linalg.norm(moment) > MAX_PUSH_MOMENT:
        raise error(
            f'an external wrench of {np.linalg.norm(force):.3g} N and {np.linalg.norm(moment):.3g} '
            f'N m is beyond what a robot meets (at most {MAX_PUSH_FORCE:g} N and '
            f'{MAX_PUSH_MOMENT:g} N m)'
        )
    return force, moment


class ArmSimulation:
    """Forward dynamics of a fixed-base :class:`RobotModel` tracking ``trajectory``.

    ``step`` [s] ≤ 1 ms; ``bandwidth_hz``: natural frequency of the critically damped
    tracking error dynamics of the computed-torque controller. ``feedback``: what that
    controller feeds back each step, ``'exact'`` (the true state) or ``'measured'`` (the
    state plus ``measurement_noise``'s position and velocity noise, drawn once per step, as a
    real controller reads its encoders; the sample then carries these measured values, and
    :meth:`SensorNoise.applied` publishes them). The trajectory is repeated periodically
    after its ``duration``. Attach a hidden payload with :meth:`set_payload`.
    """

    def __init__(
        self,
        robot: RobotModel,
        trajectory: FourierTrajectory,
        step: float = MAX_STEP,
        bandwidth_hz: float = 10.0,
        feedback: str = 'exact',
        measurement_noise: Optional[SensorNoise] = None,
    ):
        if robot.floating_base:
            raise SimulationError(
                f'model "{robot.name}" has a floating base: use StanceMotion (kinematic)'
            )
        if tuple(trajectory.joint_names) != robot.joint_names:
            raise SimulationError(
                f'trajectory joints {list(trajectory.joint_names)} are not the model joints '
                f'{list(robot.joint_names)}'
            )
        if not (0.0 < step <= MAX_STEP):
            raise SimulationError(f'integration step must be in (0, {MAX_STEP}] s, got {step}')
        if not bandwidth_hz > 0.0:
            raise SimulationError(f'tracking bandwidth must be positive, got {bandwidth_hz} Hz')
        if feedback not in FEEDBACK_MODES:
            raise SimulationError(
                f'controller feedback must be one of {list(FEEDBACK_MODES)}, got {feedback!r}'
            )
        self.feedback = feedback
        self._measurement_noise = measurement_noise or SensorNoise()
        # a stream of its own: the published effort noise (seeded alike) stays independent of it
        self._measurement_rng = np.random.default_rng([self._measurement_noise.seed, 1])
        self.robot = robot
        self.trajectory = trajectory
        self.step_size = float(step)
        omega = 2.0 * math.pi * bandwidth_hz
        self._stiffness, self._damping = omega * omega, 2.0 * omega
        self.external_wrench: Optional[ExternalWrench] = None
        self._wrench_frame: Optional[int] = None
        self.reset()

    def set_payload(self, link: str, payload: Optional[InertialParameters]) -> None:
        """Attach ``payload`` (inertial parameters in ``link``'s frame) to the simulated plant,
        or remove it with ``None``. The motion is not restarted (see :meth:`reset`)."""
        if payload is None:
            self.robot.detach_payload()
        else:
            self.robot.attach_payload(link, payload)

    def set_external_wrench(
        self, link: str, force: Sequence[float], moment: Sequence[float]
    ) -> None:
        """Push ``link`` from the next step on with ``force`` [N] and ``moment`` [N·m], both in
        ``link``'s frame, applied at its origin; an all-zero wrench removes the push."""
        force, moment = checked_push(force, moment, SimulationError)
        if not np.any(force) and not np.any(moment):
            self.external_wrench, self._wrench_frame = None, None
            return
        frame_id = self.robot.frame_id(link, SimulationError, 'external wrench link', moving=True)
        self.external_wrench, self._wrench_frame = ExternalWrench(link, force, moment), frame_id

    def external_torques(self, q_model: np.ndarray) -> Optional[np.ndarray]:
        """J(q)ᵀ F [N·m] (reduced joint order) of the applied external wrench, None without one."""
        if self.external_wrench is None:
            return None
        return dynamics.wrench_torques(
            self.robot, q_model, self._wrench_frame, self.external_wrench.wrench
        )

    def _external_forces(self) -> pin.StdVec_Force:
        """The applied wrench as pinocchio joint forces (in the frame's parent-joint frame) for
        aba."""
        model = self.robot.model
        forces = pin.StdVec_Force()
        forces.extend([pin.Force.Zero() for _ in range(model.njoints)])
        frame = model.frames[self._wrench_frame]
        wrench = self.external_wrench
        forces[frame.parentJoint] = frame.placement.act(pin.Force(wrench.force, wrench.moment))
        return forces

    def _accelerations(
        self,
        q_model: np.ndarray,
        v_model: np.ndarray,
        torque: np.ndarray,
        external: Optional[np.ndarray],
    ) -> np.ndarray:
        """q̈ of the plant under ``torque`` and the external wrench (pinocchio aba with f_ext)."""
        robot = self.robot
        if external is None:
            return dynamics.forward_dynamics(robot, q_model, v_model, torque)
        if (
            robot.mimic_joint_names
        ):  # aba runs on the full joint set: push through the reduced torques instead
            return dynamics.forward_dynamics(robot, q_model, v_model, torque + external)
        accelerations = pin.aba(
            robot.model, robot.data, q_model, v_model, torque, self._external_forces()
        ).copy()
        if not np.all(np.isfinite(accelerations)):
            raise SimulationError(
                f'model "{robot.name}": forward dynamics is not finite under the external wrench'
            )
        return accelerations

    def reset(self) -> None:
        """Restart the motion at the trajectory's start pose, at rest, time 0."""
        positions, velocities, _ = self.trajectory.evaluate(np.zeros(1))
        self._steps = 0
        self._q, self._v = positions[0].copy(), velocities[0].copy()

    @property
    def time(self) -> float:
        """Simulated time since the last reset [s]."""
        return self._steps * self.step_size

    def reference(self, time: float) -> tuple:
        """(positions, velocities, accelerations) of the trajectory at ``time`` [s] (periodic)."""
        period = self.trajectory.duration
        positions, velocities, accelerations = self.trajectory.evaluate(np.array([time % period]))
        return positions[0], velocities[0], accelerations[0]

    def _fed_back_state(self, q: np.ndarray, v: np.ndarray) -> tuple:
        """(positions, velocities) the controller reads this step: the true state, or it with
        the measurement noise (new arrays)."""
        if self.feedback == 'exact':
            return q, v
        noise, rng = self._measurement_noise, self._measurement_rng
        return (
            q + noise.position * rng.standard_normal(q.shape),
            v + noise.velocity * rng.standard_normal(v.shape),
        )

    def advance(self) -> JointSample:
        """Integrate one step; returns the state at the step *start* with the torque applied
        during the step."""
        time = self.time
        q_ref, v_ref, a_ref = self.reference(time)
        q, v = self._q, self._v
        q_fed, v_fed = self._fed_back_state(q, v)
        command = a_ref + self._stiffness * (q_ref - q_fed) + self._damping * (v_ref - v_fed)
        robot = self.robot
        q_model, v_model = robot.configuration(q), robot.tangent(v)
        torque = dynamics.inverse_dynamics(robot, q_model, v_model, robot.tangent(command))
        external = self.external_torques(q_model)
        acceleration = self._accelerations(q_model, v_model, torque, external)
        measured = self.feedback == 'measured'
        sample = JointSample(
            time,
            q.copy(),
            v.copy(),
            torque.copy(),
            external,
            q_fed if measured else None,
            v_fed if measured else None,
        )
        self._v = v + self.step_size * acceleration
        self._q = q + self.step_size * self._v
        self._steps += 1
        return sample


class StanceMotion:
    """Kinematic sway of a floating-base robot standing on ``contact_frames``.

    The base starts at ``stance_positions`` (joint positions, model order) with the lowest
    contact point on the ground plane z = ``ground_height``; the contact points then stay
    fixed in the world while the base moves as
        p(t) = p₀ + [a sin ωt, a cos ωt − a, (a/2) sin 2ωt]  [m],
        roll(t) = r sin ωt, pitch(t) = r cos 2ωt − r  [rad],   ω = 2π·``frequency``,
    with a = ``amplitude`` [m] and r = ``tilt`` [rad]. Joint positions come from Newton
    iterations on the contact positions, joint velocities from J_joints q̇ = −J_base v_base
    (contact points at rest). Kinematic only: no forces, no contact dynamics.
    """

    def __init__(
        self,
        robot: RobotModel,
        contact_frames: Sequence[str],
        stance_positions: Optional[Sequence[float]] = None,
        amplitude: float = 0.04,
        tilt: float = 0.05,
        frequency: float = 0.5,
        ground_height: float = 0.0,
    ):
        if not robot.floating_base:
            raise SimulationError(
                f'model "{robot.name}" has a fixed base: StanceMotion needs a floating base'
            )
        if not contact_frames:
            raise SimulationError('StanceMotion needs at least one contact frame')
        frame_ids = [
            robot.frame_id(name, SimulationError, 'contact frame') for name in contact_frames
        ]
        if 3 * len(contact_frames) != robot.num_joints:
            raise SimulationError(
                f'{len(contact_frames)} contact points fix 3 coordinates each, but the model has '
                f'{robot.num_joints} joints: the leg inverse kinematics needs 3 per contact'
            )
        self.robot = robot
        self.contact_frames = tuple(contact_frames)
        self._frame_ids = frame_ids
        self.amplitude, self.tilt, self.frequency = float(amplitude), float(tilt), float(frequency)
        stance = (
            np.clip(0.5 * (robot.limits.lower + robot.limits.upper), -math.pi, math.pi)
            if stance_positions is None or len(stance_positions) == 0
            else np.asarray(stance_positions, float)
        )
        if stance.shape != (robot.num_joints,):
            raise SimulationError(
                f'stance_positions needs {robot.num_joints} values (one per joint of '
                f'{list(robot.joint_names)}), got {len(stance)}'
            )
        self.stance = stance
        points = self._contact_points(robot.configuration(stance))
        self.start_position = np.array([0.0, 0.0, ground_height - points[:, 2].min()])
        self.contact_points = points + self.start_position
        self._positions = stance.copy()

    def _contact_points(self, q: np.ndarray) -> np.ndarray:
        pin.framesForwardKinematics(self.robot.model, self.robot.data, q)
        return np.array([self.robot.data.oMf[i].translation for i in self._frame_ids])

    def _contact_jacobian(self, q: np.ndarray) -> np.ndarray:
        """Stacked linear Jacobians of the contact points (world axes) w.r.t. the reduced
        velocity [v_base (body), ω_base (body), q̇]."""
        model, data = self.robot.model, self.robot.data
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        rows = [
            pin.getFrameJacobian(model, data, i, pin.LOCAL_WORLD_ALIGNED)[:3]
            for i in self._frame_ids
        ]
        return np.vstack(rows) @ self.robot.coupling

    def base_state(self, time: float) -> tuple:
        """(pose [x, y, z, qx, qy, qz, qw] in the world, twist [v, ω] in the base frame) at
        ``time`` [s]."""
        a, r, w = self.amplitude, self.tilt, 2.0 * math.pi * self.frequency
        s, c, s2, c2 = (
            math.sin(w * time),
            math.cos(w * time),
            math.sin(2 * w * time),
            math.cos(2 * w * time),
        )
        position = self.start_position + np.array([a * s, a * c - a, 0.5 * a * s2])
        velocity_world = np.array([a * w * c, -a * w * s, a * w * c2])
        rpy = np.array([r * s, r * c2 - r, 0.0])
        rpy_rate = np.array([r * w * c, -2.0 * r * w * s2, 0.0])
        rotation = pin.rpy.rpyToMatrix(rpy)
        angular_body = pin.rpy.computeRpyJacobian(rpy, pin.LOCAL) @ rpy_rate
        pose = np.concatenate([position, pin.Quaternion(rotation).coeffs()])
        return pose, np.concatenate([rotation.T @ velocity_world, angular_body])

    def sample(self, time: float) -> FloatingSample:
        """The exact state at ``time`` [s] (call with increasing times: the inverse kinematics
        starts from the previous solution)."""
        pose, twist = self.base_state(time)
        robot = self.robot
        positions = self._positions
        for _ in range(20):
            q = robot.configuration(positions, pose)
            error = (self.contact_points - self._contact_points(q)).reshape(-1)
            if np.max(np.abs(error)) < 1e-10:
                break
            jacobian = self._contact_jacobian(q)[:, robot.base_dofs :]
            positions = positions + np.linalg.lstsq(jacobian, error, rcond=None)[0]
        else:
            raise SimulationError(
                f'leg inverse kinematics did not converge at t = {time:.3f} s (contact error '
                f'{np.max(np.abs(error)):.2e} m): reduce the sway amplitude'
            )
        self._positions = positions
        jacobian = self._contact_jacobian(robot.configuration(positions, pose))
        velocities = np.linalg.solve(
            jacobian[:, robot.base_dofs :], -jacobian[:, : robot.base_dofs] @ twist
        )
        return FloatingSample(
            time, pose, twist, JointSample(time, positions.copy(), velocities, np.zeros(0))
        )
