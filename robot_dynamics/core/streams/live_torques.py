"""Per-message torque estimation for a live joint-state stream (what dynamics_node runs).

:class:`LiveTorqueEstimator` merges joint-state samples by name, and once every joint has
a recent value computes, in ``robot.joint_names`` order:

* ``gravity`` g(q);
* ``inverse_dynamics`` M(q) q̈ + C(q, q̇) q̇ + g(q), with q̈ from the causal least-squares
  slope of the measured velocities (:class:`CausalDifferentiator`, delay ≈ half the
  window) or zero (``acceleration_mode='zero'``); a stream in which no joint reports a
  velocity (a positions-only driver), or only zeros (ros2_control's mock hardware: exact
  zeros at every joint, which no measured motion gives), gets q̇ as the same slope of its
  positions (continuous joints unwrapped), and q̈ as the slope of that;
* ``residual`` τ_measured − τ_inverse_dynamics when every joint has a recent effort: what the
  rigid-body model does not explain (its negative is the inverse-dynamics route's external torque,
  :class:`~robot_dynamics.core.live.live_dynamics.LiveDynamics`).

A sample whose joints already had a position at its stamp (a driver that leaves the stamps at
zero or repeats them: :attr:`JointStateMerger.repeated_stamp`) gives g(q) only: q̈ needs time
between samples, so ``inverse_dynamics`` and ``residual`` are None and the differentiator does
not take it.

With an :class:`~robot_dynamics.core.streams.effort_model.EffortModel`, efforts that are motor
currents or motor-side torques are turned into joint torques on intake: ``efforts`` and
``residual`` of every :class:`TorqueSample` are then joint torques.

With an ``effort_delay`` d > 0 (efforts measured d before the positions and velocities they
arrive with: a drive's torque filter, a bus cycle), each sample's efforts are paired with the
positions, velocities and q̈ of the earlier sample closest to its stamp − d, and the
:class:`TorqueSample` carries that sample's stamp: every output describes the instant the
efforts were measured.

Units: N·m for revolute, N for prismatic joints; stamps in seconds. Floating-base models
are evaluated with the base at rest at the identity pose (joint torques only).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.errors import SettingError
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.differentiation import CausalDifferentiator, PositionSlope
from robot_dynamics.core.streams.effort_model import EffortModel
from robot_dynamics.core.streams.joint_states import EFFORT, POSITION, VELOCITY, JointStateMerger

ACCELERATION_MODES = ('estimated', 'zero')
MAX_EFFORT_DELAY = 0.1
"""Longest ``effort_delay`` [s] accepted."""
_DELAY_HISTORY = 512  # samples kept for the effort delay: 0.1 s up to 5 kHz


@dataclass(slots=True)
class TorqueSample:
    """Torques for one complete joint state, joint space, arrays in ``robot.joint_names`` order,
    N·m (N for prismatic joints); ``stamp`` [s], ``positions`` [rad, m], ``velocities`` [rad/s,
    m/s] (None when not fresh), ``efforts`` the measured joint torques (None when not fresh).

    ``gravity`` g(q); ``inverse_dynamics`` M(q) q̈ + C(q, q̇) q̇ + g(q) (None for a sample that
    repeats its predecessor's stamp: no q̈); ``residual`` ``efforts`` − ``inverse_dynamics`` (None
    without efforts or inverse dynamics). ``known_torques``: Jᵀ F of a known external
    wrench already taken off ``inverse_dynamics`` (and so added to ``residual``); None without
    one. ``base_torques``: what the base's motion or tilt adds to ``inverse_dynamics`` beyond the
    upright base at rest (already in ``gravity``, ``inverse_dynamics`` and ``residual``; see
    :mod:`~robot_dynamics.core.dynamics.base_motion`); None without base state.
    ``accelerations``: the q̈ [rad/s², m/s²] ``inverse_dynamics`` used. ``ground_torques``:
    Σ J_cᵀ f_c of a legged robot's foot forces, already taken off ``inverse_dynamics``
    (``residual`` keeps them); None without ``contact_frames`` or efforts."""

    stamp: float
    positions: np.ndarray
    velocities: Optional[np.ndarray]
    efforts: Optional[np.ndarray]
    gravity: np.ndarray
    inverse_dynamics: Optional[np.ndarray]
    residual: Optional[np.ndarray]
    known_torques: Optional[np.ndarray] = None
    base_torques: Optional[np.ndarray] = None
    accelerations: Optional[np.ndarray] = None
    ground_torques: Optional[np.ndarray] = None


class LiveTorqueEstimator:
    """Joint states in, torques out; one instance per model (not thread-safe: one stream)."""

    def __init__(
        self,
        robot: RobotModel,
        stale_timeout: float = 0.1,
        acceleration_mode: str = 'estimated',
        acceleration_window: int = 15,
        merger: Optional[JointStateMerger] = None,
        effort_model: Optional[EffortModel] = None,
        effort_delay: float = 0.0,
    ):
        """``effort_model``: what the efforts mean (None: joint torques); raises
        :class:`~robot_dynamics.core.streams.effort_model.EffortModelError` when it names a joint
        the robot lacks. ``effort_delay`` [s]: how long before the positions the efforts were
        measured (module docstring)."""
        if acceleration_mode not in ACCELERATION_MODES:
            raise SettingError(
                f'acceleration_mode must be one of {ACCELERATION_MODES}, got {acceleration_mode!r}'
            )
        if not 0.0 < stale_timeout < math.inf:
            raise SettingError(
                f'stale_timeout must be a positive, finite time in s, got {stale_timeout}'
            )
        if not 0.0 <= effort_delay <= MAX_EFFORT_DELAY:
            raise SettingError(
                f'effort_delay must be a time in s in [0, {MAX_EFFORT_DELAY:g}], got {effort_delay}'
            )
        self.robot = robot
        self.effort_delay = float(effort_delay)
        self._history = deque(maxlen=_DELAY_HISTORY) if effort_delay > 0.0 else None
        self.stale_timeout = float(stale_timeout)
        self.acceleration_mode = acceleration_mode
        self.merger = (
            merger
            if merger is not None
            else JointStateMerger(
                robot.joint_names, optional=robot.leaf_joints(), stale_timeout=stale_timeout
            )
        )
        self.differentiator = CausalDifferentiator(robot.num_joints, acceleration_window)
        self._zeros = np.zeros(robot.num_joints)
        self._estimate_acceleration = acceleration_mode == 'estimated'
        self._base = slice(robot.base_dofs, None)
        # pinocchio's model and data where the joint vectors are its q and v (no mapping)
        direct = robot.joint_space_model()
        self._pinocchio = None if direct is None else (direct.model, direct.data)
        self._effort_model = self._used_effort_model(effort_model)
        self.velocities_from_positions = False  # the last sample's q̇ came from its positions
        self._position_slope = PositionSlope(
            robot.num_joints, acceleration_window, robot.continuous_joints()
        )

    def update(
        self,
        names: Sequence[str],
        positions: Sequence[float],
        velocities: Sequence[float],
        efforts: Sequence[float],
        stamp: float,
    ) -> Optional[TorqueSample]:
        """Take one sample; return the torques, or None while some joint has no recent value.

        Raises :class:`~robot_dynamics.core.errors.JointStateError` for an unusable sample.
        """
        merger = self.merger
        if merger.update(
            names, positions, velocities, efforts, stamp
        ):  # every value new: all fresh
            have_velocity = have_effort = True
        else:
            complete, have_velocity, have_effort = merger.freshness(stamp, self.stale_timeout)
            if not complete:
                return None
        # The merger never writes an array it has handed out: its rows are kept without copying.
        values = merger.values
        q = values[POSITION]
        v = values[VELOCITY] if have_velocity else None
        efforts_now = values[EFFORT] if have_effort else None
        if efforts_now is not None and self._effort_model is not None:
            efforts_now = self._effort_model.joint_torques(efforts_now, values[VELOCITY])
        if merger.repeated_stamp:
            return TorqueSample(stamp, q, v, efforts_now, self._gravity(q), None, None)
        from_positions = self._estimate_acceleration and (
            not merger.reports(VELOCITY) if v is None else not v.any()
        )
        if from_positions:
            if not self.velocities_from_positions:
                self._position_slope.restart()
            v = self._position_slope.update(stamp, q)
        self.velocities_from_positions = from_positions
        a = (
            self.differentiator.update(stamp, v)
            if v is not None and self._estimate_acceleration
            else self._zeros
        )
        if self._history is not None:
            earlier = self._state_before(stamp, q, v, a)
            if earlier is None:
                return None
            stamp, q, v, a = earlier
        if (
            self._pinocchio is not None
        ):  # both calls return new arrays (the bindings copy data.g and data.tau out)
            model, data = self._pinocchio
            gravity = pin.computeGeneralizedGravity(model, data, q)
            inverse = pin.rnea(model, data, q, self._zeros if v is None else v, a)
        else:
            gravity, inverse = self._mapped_torques(q, self._zeros if v is None else v, a)
        residual = None if efforts_now is None else efforts_now - inverse
        return TorqueSample(
            stamp,
            q,
            v,
            efforts_now,
            gravity,
            inverse,
            residual,
            accelerations=a.copy() if a is self._zeros else a,  # the estimate is a new array
        )

    def _state_before(self, stamp: float, q, v, a) -> Optional[tuple]:
        """(stamp, q, q̇, q̈) of the kept sample closest to ``stamp`` − ``effort_delay`` after
        keeping this one; None until the history reaches that far back (within half a step)."""
        history = self._history
        if history and stamp == history[-1][0]:  # more joints of the same instant
            history.pop()
        history.append((stamp, q, v, a))
        target = stamp - self.effort_delay
        for index in range(len(history) - 2, -1, -1):
            if history[index][0] <= target:
                later = history[index + 1]
                return later if later[0] - target < target - history[index][0] else history[index]
        if len(history) < 2:
            return None
        oldest, step = history[0], history[1][0] - history[0][0]
        return oldest if oldest[0] - target < 0.5 * step else None

    def _used_effort_model(self, effort_model: Optional[EffortModel]) -> Optional[EffortModel]:
        """``effort_model`` in the robot's joint order, or None when efforts already are torques."""
        if effort_model is None:
            return None
        ordered = effort_model.for_joints(self.robot.joint_names)
        return None if ordered.is_identity else ordered

    def _gravity(self, positions: np.ndarray) -> np.ndarray:
        """g(q) [N·m, N] at joint positions [rad, m]."""
        if self._pinocchio is not None:
            model, data = self._pinocchio
            return pin.computeGeneralizedGravity(model, data, positions)
        robot = self.robot
        return dynamics.gravity_torques(robot, robot.configuration(positions))[self._base]

    def _mapped_torques(
        self, positions: np.ndarray, velocities: np.ndarray, accelerations: np.ndarray
    ) -> tuple:
        """g and inverse dynamics for models whose joint vectors are not pinocchio's q, v
        (floating base, continuous joints, mimic followers)."""
        robot = self.robot
        q = robot.configuration(positions)
        gravity = dynamics.gravity_torques(robot, q)[self._base]
        inverse = dynamics.inverse_dynamics(
            robot, q, robot.tangent(velocities), robot.tangent(accelerations)
        )
        return gravity, inverse[self._base]
