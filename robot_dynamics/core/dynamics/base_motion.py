"""Joint torques of a robot whose base moves or is tilted.

The joint torques of a robot depend on the motion of its base (the URDF's root link) only
through three vectors, all in the base frame: the base origin's *specific force*
f = a − g [m/s²] (what an accelerometer at the base origin reads: its acceleration a minus
gravity g), the base's angular velocity ω [rad/s] and its angular acceleration α [rad/s²].
Gravity is a fictitious upward acceleration of the base (Featherstone, *Rigid Body Dynamics
Algorithms*, 2008): a base at rest has f = −g, a base tilted by R (world ← base) has
f = −Rᵀ g_world, one accelerating upward at 5 m/s² has f = −g + 5 m/s² up.

:class:`MovingBaseTorques` evaluates them with pinocchio's RNEA on a twin of the model with a
free-flyer root at the root link (zero gravity, base velocity [0, ω], base acceleration
[f, α]), and keeps the joint rows. A base linear velocity changes nothing in the joint torques
(it only shifts the spatial acceleration by ω × v), so none is needed. Mimic joints are folded
in as in the model (:meth:`~robot_dynamics.core.model.model.RobotModel.reduce`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.errors import SettingError
from robot_dynamics.core.model.model import RobotModel


@dataclass(frozen=True)
class BaseMotion:
    """The base's motion as it enters the joint torques, base frame: ``specific_force``
    f = a − g [m/s²], ``angular_velocity`` ω [rad/s], ``angular_acceleration`` α [rad/s²]."""

    specific_force: np.ndarray
    angular_velocity: np.ndarray
    angular_acceleration: np.ndarray

    @classmethod
    def at_rest(cls, gravity_in_base: Sequence[float]) -> 'BaseMotion':
        """A base at rest; ``gravity_in_base`` [m/s²] is the gravity vector in base axes."""
        zero = np.zeros(3)
        return cls(-np.asarray(gravity_in_base, dtype=float), zero, zero.copy())

    @classmethod
    def mounted(cls, rpy: Sequence[float], gravity_world: Sequence[float]) -> 'BaseMotion':
        """A base at rest with attitude ``rpy`` [rad] (roll, pitch, yaw of the base in the world,
        URDF convention R = Rz(yaw) Ry(pitch) Rx(roll)); ``gravity_world`` [m/s²]."""
        rotation = rpy_matrix(rpy)
        return cls.at_rest(rotation.T @ np.asarray(gravity_world, dtype=float))


def rpy_matrix(rpy: Sequence[float]) -> np.ndarray:
    """Rotation matrix of roll-pitch-yaw ``rpy`` [rad], R = Rz(yaw) Ry(pitch) Rx(roll)."""
    values = np.asarray(rpy, dtype=float)
    if values.shape != (3,) or not np.all(np.isfinite(values)):
        raise SettingError(
            f'an orientation needs 3 finite angles [rad] (roll, pitch, yaw), got {rpy!r}'
        )
    return pin.rpy.rpyToMatrix(values)


class MovingBaseTorques:
    """Gravity and inverse-dynamics joint torques of ``robot`` on a moving base (module
    docstring). The twin copies the robot's payload and rotor inertia when built: build a new
    one for a robot whose payload or rotor inertia changes."""

    def __init__(self, robot: RobotModel):
        self.robot = robot
        twin = RobotModel(robot.description, floating_base=True, gravity=(0.0, 0.0, 0.0))
        if robot.payload is not None:
            twin.attach_payload(*robot.payload)
        twin.set_rotor_inertia(robot.rotor_inertia)
        self.twin = twin
        self._zeros = np.zeros(robot.num_joints)

    def torques(
        self,
        positions: np.ndarray,
        velocities: Optional[np.ndarray],
        accelerations: Optional[np.ndarray],
        motion: BaseMotion,
    ) -> np.ndarray:
        """Joint torques [N·m, N] (``joint_names`` order) at joint positions [rad, m],
        velocities and accelerations (None: zero) with the base moving as ``motion``."""
        return self.twin.joint_part(self.full_torques(positions, velocities, accelerations, motion))

    def full_torques(
        self,
        positions: np.ndarray,
        velocities: Optional[np.ndarray],
        accelerations: Optional[np.ndarray],
        motion: BaseMotion,
    ) -> np.ndarray:
        """:meth:`torques` with the base's rows first: the wrench [N, N·m] at the base origin,
        base axes, that the base must receive for this motion (m (c̈ − g) and the rate of the
        angular momentum), then the joint torques."""
        twin, zeros = self.twin, self._zeros
        q = twin.configuration(positions)
        v = twin.tangent(
            zeros if velocities is None else velocities,
            np.concatenate([np.zeros(3), motion.angular_velocity]),
        )
        a = twin.tangent(
            zeros if accelerations is None else accelerations,
            np.concatenate([motion.specific_force, motion.angular_acceleration]),
        )
        return twin.reduce(pin.rnea(twin.model, twin.data, q, v, a))

    def gravity(self, positions: np.ndarray, motion: BaseMotion) -> np.ndarray:
        """The torques that hold the joints still relative to the moving base [N·m, N]: the
        gravity torques of a tilted or moving base."""
        return self.torques(positions, None, None, motion)
