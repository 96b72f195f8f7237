"""Truth of one simulated sample, read from MuJoCo after the step (its ``data`` then holds the
contacts, sensors and CoM of the step's start state). Never given to the nodes: it is what
their estimates are measured against.

* contact wrenches: every MuJoCo contact touching a robot link, its force (``mj_contactForce``,
  contact frame → world) summed per link with the moment about the link origin: world axes.
* centre of pressure of the floor contacts (world): p = Σ pᵢ f_z,i / Σ f_z,i over the contacts
  with the floor, None while no floor contact pushes.
* CoM of the whole robot with its payload (world), the root link's pose, twist and acceleration
  (classical: the derivative of the origin's world velocity, and ω̇, both in the root frame).
* F/T sensor: the wrench the payload (tool) exerts on the payload link, in the link frame at its
  origin [N, N·m] (at rest: its weight).
* IMU at the root link: angular velocity [rad/s] and specific force [m/s²] in the root frame,
  orientation (world → root) as a quaternion [qx, qy, qz, qw].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

import mujoco
import numpy as np

from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.simulation.mujoco_engine import EngineStep, MujocoEngine, Push


@dataclass(frozen=True)
class ContactWrench:
    """Contacts on ``link`` summed at its origin, world axes: force [N], moment [N·m]."""

    link: str
    force: np.ndarray
    moment: np.ndarray


@dataclass(frozen=True)
class ImuReading:
    """IMU at the root link: ``angular_velocity`` [rad/s] and ``specific_force`` (a − g) [m/s²]
    in the root frame, ``orientation`` [qx, qy, qz, qw] of the root in the world."""

    angular_velocity: np.ndarray
    specific_force: np.ndarray
    orientation: np.ndarray


@dataclass(frozen=True)
class Truth:
    """Everything true about one sample (module docstring). Joint arrays in model order: the
    accelerations [rad/s²] the step produced, torques [N·m]."""

    time: float
    joint_accelerations: np.ndarray
    external_torques: np.ndarray
    push: Optional[Push]
    friction_torques: np.ndarray
    rotor_torques: np.ndarray
    motor_torques: np.ndarray
    link_torques: np.ndarray
    contact_wrenches: Mapping[str, ContactWrench]
    center_of_pressure: Optional[np.ndarray]
    center_of_mass: np.ndarray
    payload: Optional[InertialParameters]
    base_pose: np.ndarray
    base_twist: np.ndarray
    base_acceleration: np.ndarray
    imu: ImuReading
    ft_wrench: Optional[np.ndarray]


def read_truth(engine: MujocoEngine, step: EngineStep) -> Truth:
    """The :class:`Truth` of ``step`` (call right after :meth:`MujocoEngine.step`)."""
    data, scene = engine.data, engine.scene
    wrenches, cop = contact_wrenches(engine)
    imu = ImuReading(
        data.sensor('imu_gyro').data.copy(),
        imu_specific_force(engine),
        _xyzw(data.sensor('imu_orientation').data),
    )
    ft = None
    if scene.payload_body >= 0:
        ft = -np.concatenate([data.sensor('ft_force').data, data.sensor('ft_torque').data])
    return Truth(
        step.time,
        step.accelerations,
        step.external,
        engine.push,
        step.friction,
        step.rotor,
        step.motor,
        step.link,
        wrenches,
        cop,
        center_of_mass(engine),
        engine.payload,
        step.base_pose,
        step.base_twist,
        base_acceleration(engine),
        imu,
        ft,
    )


def center_of_mass(engine: MujocoEngine) -> np.ndarray:
    """CoM [m] (world) of every robot link and the payload (MuJoCo's inertial frames)."""
    model, data, scene = engine.model, engine.data, engine.scene
    bodies = list(scene.robot_bodies) + ([scene.payload_body] if scene.payload_body >= 0 else [])
    masses = model.body_mass[bodies]
    return masses @ data.xipos[bodies] / masses.sum()


def imu_specific_force(engine: MujocoEngine) -> np.ndarray:
    """What the IMU's accelerometer reads, a − g [m/s²] in the IMU site's frame."""
    model, data = engine.model, engine.data
    site = model.sensor_objid[model.sensor('imu_accelerometer').id]
    rotation = data.site_xmat[site].reshape(3, 3)
    return frame_acceleration(engine, model.site_bodyid[site], data.site_xpos[site], rotation)[3:]


def base_acceleration(engine: MujocoEngine) -> np.ndarray:
    """[a, ω̇] of the root origin in the root frame [m/s², rad/s²], gravity excluded."""
    model, data, root = engine.model, engine.data, engine.scene.root_body
    rotation = data.xmat[root].reshape(3, 3)
    spatial = frame_acceleration(engine, root, data.xpos[root], rotation)
    return np.concatenate([spatial[3:] + rotation.T @ model.opt.gravity, spatial[:3]])


def frame_acceleration(engine: MujocoEngine, body: int, position, rotation) -> np.ndarray:
    """(ω̇, a − g) [rad/s², m/s²] of a frame fixed to ``body`` at ``position`` (world) with axes
    ``rotation`` (world ← frame), in the frame's axes: what ``mj_objectAcceleration`` returns,
    from the body's ``cvel`` and ``cacc`` (about the subtree CoM of its tree, world axes; ``cacc``
    holds −g, computed at every step for the model's acceleration-stage sensors) moved to the
    frame, plus ω × v. Computed here because before MuJoCo 4.0 (the newest for Python 3.10)
    ``mj_objectAcceleration`` and the accelerometer read 0 on a body welded to the world, such
    as a tilted base."""
    model, data = engine.model, engine.data
    lever = position - data.subtree_com[model.body_rootid[body]]
    angular_velocity, angular_acceleration = data.cvel[body][:3], data.cacc[body][:3]
    velocity = data.cvel[body][3:] + _cross(angular_velocity, lever)
    acceleration = data.cacc[body][3:] + _cross(angular_acceleration, lever)
    acceleration = acceleration + _cross(angular_velocity, velocity)
    return np.concatenate([rotation.T @ angular_acceleration, rotation.T @ acceleration])


def contact_wrenches(engine: MujocoEngine) -> tuple:
    """({link: ContactWrench} of the contacts on robot links, centre of pressure of the floor
    contacts or None)."""
    model, data, scene = engine.model, engine.data, engine.scene
    robot_bodies = set(int(body) for body in scene.robot_bodies)
    floor = scene.environment_geoms.get('floor', -1)
    sums, weighted, normal = {}, np.zeros(3), 0.0
    result = np.zeros(6)
    for index in range(data.ncon):
        contact = data.contact[index]
        mujoco.mj_contactForce(model, data, index, result)
        frame = contact.frame.reshape(3, 3)
        force_on_second = frame.T @ result[:3]
        if not np.any(force_on_second):  # within the margin but not pushing
            continue
        for geom, sign in ((contact.geom1, -1.0), (contact.geom2, 1.0)):
            body = int(model.geom_bodyid[geom])
            if body not in robot_bodies:
                continue
            force = sign * force_on_second
            lever = contact.pos - data.xpos[body]
            total = sums.setdefault(body, [np.zeros(3), np.zeros(3)])
            total[0] += force
            total[1] += _cross(lever, force)
            if floor in (contact.geom1, contact.geom2) and force[2] > 0.0:
                weighted += contact.pos * force[2]
                normal += force[2]
    wrenches = {
        model.body(body).name: ContactWrench(model.body(body).name, force, moment)
        for body, (force, moment) in sums.items()
    }
    return wrenches, (weighted / normal if normal > 0.0 else None)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b of two 3-vectors (np.cross costs ~30 µs per call; this runs per step and contact)."""
    return np.array(
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    )


def _xyzw(quaternion_wxyz: np.ndarray) -> np.ndarray:
    w, x, y, z = quaternion_wxyz
    return np.array([x, y, z, w])
