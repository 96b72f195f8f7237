"""The MuJoCo model of a scene, built from the robot's URDF with MuJoCo's model-editing API
(``mujoco.MjSpec``).

Kept from the URDF: every link as its own body (``fusestatic="false"``), the joints, their axes
and limits, the inertials exactly as written (``balanceinertia="false"``; the robot profile may
replace them, :mod:`robot_dynamics.simulation.profiles`) and the collision primitives (box,
cylinder, sphere). Dropped: ``<visual>``, mesh collisions (their files are not needed by the
dynamics) and ``<dynamics>`` damping/friction (the profile's friction is applied instead).
Added here: the mount of the root link (world-fixed at a pose, a free joint, or six scripted
degrees of freedom), a motor per joint (torque, unlimited), the profile's rotor inertia as joint
armature, the floor, the table, box obstacles, feet spheres, the payload body welded to its
link (inertia set at run time, F/T sensor site at its origin) and the IMU site at the root.

Contacts: robot geoms collide with the environment (floor, table, obstacles), never with each
other. Units: SI; positions in the world frame unless stated.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

import mujoco
import numpy as np

from robot_dynamics.core.model.urdf import UrdfDescription
from robot_dynamics.simulation.errors import SceneError
from robot_dynamics.simulation.profiles import TrueRobot

MUJOCO_COMPILER = (
    '<mujoco><compiler discardvisual="true" fusestatic="false" balanceinertia="false" '
    'strippath="true"/></mujoco>'
)
"""Inserted into the URDF's ``<robot>``: keep every link a body and the inertias as written."""
ROBOT_CONTYPE, ENVIRONMENT_CONAFFINITY = 1, 1
FLOOR_SOLIMP = [0.95, 0.99, 0.001, 0.5, 2.0]
"""Floor contact impedance; with a time constant of two steps it keeps feet within ~1 mm of the
surface (MuJoCo's default, 0.02 s, lets a light leg sink by centimetres)."""
NOSLIP_ITERATIONS = 5
"""Iterations of MuJoCo's no-slip solver on a floor: feet that stick do not creep (soft
contacts would)."""
PAYLOAD_BODY, IMU_SITE, FT_SITE = 'payload', 'imu', 'ft_sensor'
MOUNTS = ('world', 'free', 'scripted')
SCRIPTED_JOINTS = ('base_x', 'base_y', 'base_z', 'base_yaw', 'base_pitch', 'base_roll')
"""The scripted base's degrees of freedom, in composition order (world → root link)."""


@dataclass(frozen=True)
class Box:
    """A box obstacle fixed in the world: ``center`` [m], full edge lengths ``size`` [m]."""

    name: str
    center: tuple
    size: tuple

    def __post_init__(self):
        center, size = np.asarray(self.center, float), np.asarray(self.size, float)
        if (
            center.shape != (3,)
            or size.shape != (3,)
            or not np.all(np.isfinite(center))
            or np.any(size <= 0.0)
        ):
            raise SceneError(
                f'obstacle "{self.name}": center needs 3 finite values [m] and size 3 positive '
                f'edge lengths [m], got center {self.center} and size {self.size}'
            )


@dataclass(frozen=True)
class SceneLayout:
    """What a scene adds around the robot. ``mount``: ``world`` (root fixed at ``root_position`` [m]
    and ``root_rpy`` [rad]), ``free`` (a free joint) or ``scripted`` (six driven degrees of
    freedom :data:`SCRIPTED_JOINTS` starting at that pose). ``feet``: contact frame → sphere
    radius [m]; when given, the URDF's collision geometry is dropped and only these spheres touch
    the floor."""

    mount: str = 'world'
    root_position: tuple = (0.0, 0.0, 0.0)
    root_rpy: tuple = (0.0, 0.0, 0.0)
    gravity: tuple = (0.0, 0.0, -9.81)
    timestep: float = 1e-3
    floor_height: Optional[float] = None
    floor_friction: float = 0.8
    table: Optional[Box] = None
    obstacles: Sequence[Box] = ()
    feet: Mapping[str, float] = field(default_factory=dict)
    payload_link: Optional[str] = None


@dataclass(frozen=True)
class SceneModel:
    """A compiled scene: the ``mujoco.MjModel`` and the indices the engine and truth need.
    ``joint_names`` are in the order given at build time (the core model's), with their qpos
    and dof addresses."""

    model: mujoco.MjModel
    joint_names: tuple
    qpos_index: np.ndarray
    dof_index: np.ndarray
    actuator_index: np.ndarray
    base_dofs: np.ndarray
    root_body: int
    payload_body: int
    robot_bodies: np.ndarray
    environment_geoms: dict


def robot_spec(description: UrdfDescription) -> mujoco.MjSpec:
    """The URDF as an ``MjSpec`` (module docstring: what is kept and dropped). Raises
    :class:`SceneError` naming the element and quoting MuJoCo when MuJoCo cannot read it."""
    text = re.sub(r'<dynamics\b[^>]*/>', '', description.text)
    text = re.sub(r'<visual\b.*?</visual>', '', text, flags=re.DOTALL)
    text = re.sub(
        r'<collision\b(?:(?!</collision>).)*<mesh\b.*?</collision>', '', text, flags=re.DOTALL
    )
    text = re.sub(r'<mujoco\b.*?</mujoco>', '', text, flags=re.DOTALL)
    text = re.sub(r'(<robot\b[^>]*>)', r'\1' + MUJOCO_COMPILER, text, count=1)
    try:
        return mujoco.MjSpec.from_string(text)
    except ValueError as error:
        raise SceneError(_compile_message(description.name, error)) from None


def build_scene_model(
    description: UrdfDescription,
    joint_names: Sequence[str],
    true_robot: TrueRobot,
    layout: SceneLayout,
) -> SceneModel:
    """Compile the scene: the URDF with ``true_robot``'s inertials and rotor inertias, plus what
    ``layout`` adds. Raises :class:`SceneError` with MuJoCo's reason and the element it names."""
    _check_simulable(description, layout)
    spec = robot_spec(description)
    _set_options(spec, layout)
    root = spec.worldbody.first_body()
    _mount_root(root, layout)
    if true_robot.perturbs_links:
        _apply_links(spec, true_robot)
    _configure_robot_geoms(spec, layout)
    _add_motors(spec, joint_names, true_robot)
    environment = _add_environment(spec, layout)
    has_payload = layout.payload_link is not None
    if has_payload:
        _add_payload_body(spec, layout.payload_link)
    _add_sensors(spec, root, has_payload)
    fix = (
        f'Fix the URDF or the link values of profile "{true_robot.profile.name}" (its spreads or '
        'per_link entries)'
        if true_robot.perturbs_links
        else 'Fix the URDF'
    )
    model = _compile(spec, description.name, fix)
    return _indexed(model, description, joint_names, layout, environment, has_payload)


def _check_simulable(description: UrdfDescription, layout: SceneLayout) -> None:
    """Refuse (SceneError) a mount other than :data:`MOUNTS` and a robot with mimic joints."""
    if layout.mount not in MOUNTS:
        raise SceneError(f'mount must be one of {list(MOUNTS)}, got {layout.mount!r}')
    mimic = [name for name, joint in description.joints.items() if joint.mimic is not None]
    if mimic:
        raise SceneError(
            f'robot "{description.name}": mimic joints {mimic} are not simulated by the MuJoCo '
            f'engine; use engine: pinocchio'
        )


def _set_options(spec: mujoco.MjSpec, layout: SceneLayout) -> None:
    """Gravity [m/s², world frame] and time step [s]; the no-slip solver when there is a
    floor."""
    spec.option.gravity = list(layout.gravity)
    spec.option.timestep = layout.timestep
    if layout.floor_height is not None:
        spec.option.noslip_iterations = NOSLIP_ITERATIONS


def _mount_root(root, layout: SceneLayout) -> None:
    """Place the root link at the layout's position [m] and roll-pitch-yaw [rad] in the world,
    then give it the joints of its mount (none when world-fixed)."""
    root.pos = list(layout.root_position)
    root.quat = list(_quaternion_wxyz(layout.root_rpy))
    if layout.mount == 'free':
        root.add_freejoint()
    elif layout.mount == 'scripted':
        _add_scripted_base(root)


def _add_motors(spec: mujoco.MjSpec, joint_names: Sequence[str], true_robot: TrueRobot) -> None:
    """A torque motor per joint, unlimited in control and force, and the joint's reflected rotor
    inertia [kg·m²] as armature."""
    for name in joint_names:
        joint = spec.joint(name)
        joint.armature = true_robot.drives[name].armature
        joint.actfrclimited = mujoco.mjtLimited.mjLIMITED_FALSE
        spec.add_actuator(
            name=name,
            target=name,
            trntype=mujoco.mjtTrn.mjTRN_JOINT,
            ctrllimited=mujoco.mjtLimited.mjLIMITED_FALSE,
        )


def _add_sensors(spec: mujoco.MjSpec, root, has_payload: bool) -> None:
    """The IMU site at the root link's origin with its gyro, accelerometer and orientation
    sensors; with a payload, the force and torque sensors at its F/T site."""
    root.add_site(name=IMU_SITE)
    for name, sensor_type in (
        ('imu_gyro', mujoco.mjtSensor.mjSENS_GYRO),
        ('imu_accelerometer', mujoco.mjtSensor.mjSENS_ACCELEROMETER),
        ('imu_orientation', mujoco.mjtSensor.mjSENS_FRAMEQUAT),
    ):
        spec.add_sensor(
            name=name, type=sensor_type, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=IMU_SITE
        )
    if has_payload:
        for name, sensor_type in (
            ('ft_force', mujoco.mjtSensor.mjSENS_FORCE),
            ('ft_torque', mujoco.mjtSensor.mjSENS_TORQUE),
        ):
            spec.add_sensor(
                name=name, type=sensor_type, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=FT_SITE
            )


def _compile(spec: mujoco.MjSpec, robot: str, fix: str) -> mujoco.MjModel:
    """The compiled model; SceneError quoting MuJoCo when it refuses ``spec``, then ``fix``
    (what to change)."""
    try:
        return spec.compile()
    except ValueError as error:
        raise SceneError(_compile_message(robot, error, fix)) from None


def _indexed(
    model: mujoco.MjModel,
    description: UrdfDescription,
    joint_names: Sequence[str],
    layout: SceneLayout,
    environment: dict,
    has_payload: bool,
) -> SceneModel:
    qpos = np.array([model.joint(name).qposadr[0] for name in joint_names], dtype=int)
    dofs = np.array([model.joint(name).dofadr[0] for name in joint_names], dtype=int)
    actuators = np.array([model.actuator(name).id for name in joint_names], dtype=int)
    root = model.body(description.root).id
    base = (
        []
        if layout.mount == 'world'
        else list(range(model.body_dofadr[root], model.body_dofadr[root] + 6))
    )
    robot_bodies = np.array([model.body(name).id for name in description.links], dtype=int)
    payload = model.body(PAYLOAD_BODY).id if has_payload else -1
    if has_payload:  # its inertial frame is set at run time: never assume it is the body frame
        model.body_sameframe[payload] = mujoco.mjtSameFrame.mjSAMEFRAME_NONE
    geoms = {name: model.geom(name).id for name in environment}
    return SceneModel(
        model,
        tuple(joint_names),
        qpos,
        dofs,
        actuators,
        np.array(base, dtype=int),
        root,
        payload,
        robot_bodies,
        geoms,
    )


def _add_scripted_base(root) -> None:
    """Three slides then yaw, pitch, roll hinges on the root link (world axes → body axes)."""
    for name, kind, axis in zip(
        SCRIPTED_JOINTS,
        ['slide'] * 3 + ['hinge'] * 3,
        ([1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1], [0, 1, 0], [1, 0, 0]),
    ):
        joint_type = mujoco.mjtJoint.mjJNT_SLIDE if kind == 'slide' else mujoco.mjtJoint.mjJNT_HINGE
        root.add_joint(
            name=name, type=joint_type, axis=axis, limited=mujoco.mjtLimited.mjLIMITED_FALSE
        )


def _apply_links(spec: mujoco.MjSpec, true_robot: TrueRobot) -> None:
    """Each link's true mass, CoM and inertia about the CoM (link axes) on its body."""
    for name, values in true_robot.links.items():
        if values is None:
            continue
        mass, com, inertia = values
        body = spec.body(name)
        body.explicitinertial = True
        body.mass, body.ipos, body.iquat = mass, list(com), [1.0, 0.0, 0.0, 0.0]
        body.inertia = [0.0, 0.0, 0.0]
        body.fullinertia = [
            inertia[0, 0],
            inertia[1, 1],
            inertia[2, 2],
            inertia[0, 1],
            inertia[0, 2],
            inertia[1, 2],
        ]


def _configure_robot_geoms(spec: mujoco.MjSpec, layout: SceneLayout) -> None:
    """Robot geoms touch the environment only; with feet, only the feet spheres remain."""
    if layout.feet:
        for geom in list(spec.geoms):
            spec.delete(geom)
        for frame, radius in layout.feet.items():
            body = spec.body(frame)
            if body is None:
                raise SceneError(f'contact frame "{frame}" is not a link of the robot')
            body.add_geom(
                name=f'{frame}_sphere', type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[radius, 0.0, 0.0]
            )
    for geom in spec.geoms:
        geom.contype, geom.conaffinity = ROBOT_CONTYPE, 0
        geom.mass, geom.density = 0.0, 0.0
        geom.condim = 3


def _environment_geom(body, name: str, **attributes):
    geom = body.add_geom(name=name, **attributes)
    geom.contype, geom.conaffinity = 0, ENVIRONMENT_CONAFFINITY
    return geom


def _add_environment(spec: mujoco.MjSpec, layout: SceneLayout) -> dict:
    """Floor, table and obstacles in the world body; returns their geom names → kind."""
    names = {}
    world = spec.worldbody
    if layout.floor_height is not None:
        _environment_geom(
            world,
            'floor',
            type=mujoco.mjtGeom.mjGEOM_PLANE,
            size=[0.0, 0.0, 1.0],
            pos=[0.0, 0.0, layout.floor_height],
            friction=[layout.floor_friction, 0.005, 0.0001],
            solref=[2.0 * layout.timestep, 1.0],
            solimp=FLOOR_SOLIMP,
        )
        names['floor'] = 'floor'
    for kind, box in [('table', layout.table)] + [('obstacle', box) for box in layout.obstacles]:
        if box is None:
            continue
        _environment_geom(
            world,
            box.name,
            type=mujoco.mjtGeom.mjGEOM_BOX,
            pos=list(box.center),
            size=list(0.5 * np.asarray(box.size, float)),
        )
        names[box.name] = kind
    return names


def _add_payload_body(spec: mujoco.MjSpec, link: str):
    parent = spec.body(link)
    if parent is None:
        raise SceneError(f'payload link "{link}" is not a link of the robot')
    if spec.body(PAYLOAD_BODY) is not None:
        raise SceneError(
            f'the URDF has a link named "{PAYLOAD_BODY}", the name of the body the proving ground '
            'adds for its hidden payload: rename that link'
        )
    body = parent.add_body(name=PAYLOAD_BODY)
    body.explicitinertial = True
    body.mass, body.inertia = 0.0, [0.0, 0.0, 0.0]
    body.add_site(name=FT_SITE)
    return body


def _compile_message(robot: str, error: Exception, fix: str = 'Fix the URDF') -> str:
    """MuJoCo's reason, quoted, with the element it names first."""
    reason = ' '.join(str(error).split())
    element = re.search(r"Element name '([^']*)'", reason)
    named = f'element "{element.group(1)}": ' if element and element.group(1) else ''
    return (
        f'MuJoCo cannot compile robot "{robot}": {named}MuJoCo says "{reason}". {fix} or use '
        'engine: pinocchio'
    )


def _quaternion_wxyz(rpy: Sequence[float]) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of fixed-axis roll-pitch-yaw [rad] (R = Rz(y) Ry(p) Rx(r))."""
    roll, pitch, yaw = (0.5 * float(x) for x in rpy)
    cr, sr, cp, sp, cy, sy = (
        math.cos(roll),
        math.sin(roll),
        math.cos(pitch),
        math.sin(pitch),
        math.cos(yaw),
        math.sin(yaw),
    )
    return np.array(
        [
            cr * cp * cy + sr * sp * sy,
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
        ]
    )


def boxes_from_text(entries) -> tuple:
    """Obstacles from strings of six numbers each, 'x y z sx sy sz' (centre [m] in the world,
    full edge lengths [m]), named ``obstacle_<i>``; refuses anything else by entry."""
    boxes = []
    for index, entry in enumerate(entry for entry in entries if str(entry).strip()):
        try:
            values = [float(value) for value in str(entry).replace(',', ' ').split()]
        except ValueError:
            values = []
        if len(values) != 6:
            raise SceneError(
                f'obstacle {index} "{entry}": give six numbers "x y z sx sy sz" (centre and edge '
                f'lengths, m)'
            )
        boxes.append(Box(f'obstacle_{index}', tuple(values[:3]), tuple(values[3:])))
    return tuple(boxes)
