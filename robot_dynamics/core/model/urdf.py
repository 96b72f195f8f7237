"""Safe reading of URDF robot descriptions into a checked, typed tree.

A description may come from anyone on the ROS graph, so it is treated as untrusted: a size
limit, no DOCTYPE / entity declarations (no billion-laughs, no external entities), a link
count limit, and a structural check (one root, every parent known, no cycles, known joint
types, finite non-negative masses) that names the offending element. Only after these
checks is the text handed to pinocchio's parser.

Conventions (URDF): ``<inertial><origin>`` is the pose of the centre-of-mass frame in the
link frame; ``ixx..izz`` are the inertia tensor entries about the CoM in that frame, with
the products as tensor entries (``ixy = -∫ρxy dV``). Lengths in m, masses in kg,
inertias in kg·m², angles in rad.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from robot_dynamics.core.errors import DescriptionError

MAX_DESCRIPTION_BYTES = 10 * 1024 * 1024
"""Largest description accepted (bytes). Real robots' URDFs are well under 1 MB."""

MAX_LINKS = 2000
"""Largest number of links accepted (a full humanoid has under 100)."""

MAX_MOVING_JOINTS = 128
"""Default largest number of moving joints: pinocchio's Data holds nv³ second-order tensors
(a model and its Data take about 70 MB at 100 joints, 140 MB at 128, 0.5 GB at 200 and hundreds
of GB at 1 500), so a hostile description could exhaust memory. The largest published robot in
example-robot-data, TIAGo++ with its two hands, has 101."""


MAX_ATTRIBUTES_PER_ELEMENT = 64
"""Largest number of attributes on one element: pinocchio's XML reader checks duplicate
attributes in quadratic time (1.5 s for 30 000 on one element); no URDF element needs more
than a handful."""

MAX_MIMIC_MULTIPLIER = 1e3
"""Largest accepted |multiplier| of a ``<mimic>`` joint. Real couplings (grippers, gear
trains, parallel fingers) are within ±100; beyond 1e3 the follower's torque and inertia
terms scale by ≥ 1e6 and the model is numerically meaningless, so such a value is a typo."""

PHYSICAL_TOLERANCE = 1e-9
"""Relative tolerance (of the largest principal moment) of the intake's physical checks."""

SUPPORTED_JOINT_TYPES = ('revolute', 'continuous', 'prismatic', 'fixed')
MOVING_JOINT_TYPES = ('revolute', 'continuous', 'prismatic')
_KNOWN_JOINT_TYPES = SUPPORTED_JOINT_TYPES + ('floating', 'planar')
_UNSAFE_MARKUP = re.compile(r'<!\s*(DOCTYPE|ENTITY)', re.IGNORECASE)


class TooManyJoints(DescriptionError):
    """A description has more moving joints than the limit it is parsed with."""


@dataclass(frozen=True)
class Pose:
    """A URDF ``<origin>``: translation ``xyz`` [m] and roll-pitch-yaw ``rpy`` [rad]."""

    xyz: tuple = (0.0, 0.0, 0.0)
    rpy: tuple = (0.0, 0.0, 0.0)

    def rotation(self) -> np.ndarray:
        """Rotation matrix R = Rz(yaw) Ry(pitch) Rx(roll) (URDF fixed-axis convention)."""
        roll, pitch, yaw = self.rpy
        cr, sr = math.cos(roll), math.sin(roll)
        cp, sp = math.cos(pitch), math.sin(pitch)
        cy, sy = math.cos(yaw), math.sin(yaw)
        return np.array(
            [
                [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                [-sp, cp * sr, cp * cr],
            ]
        )


@dataclass(frozen=True)
class UrdfInertial:
    """A link's ``<inertial>``: mass [kg], CoM frame pose in the link frame, and the
    inertia tensor about the CoM in the CoM frame [kg·m²] (URDF tensor entries)."""

    mass: float
    origin: Pose
    ixx: float
    ixy: float
    ixz: float
    iyy: float
    iyz: float
    izz: float

    def tensor(self) -> np.ndarray:
        """3×3 inertia tensor about the CoM, in the CoM frame (``<inertial><origin rpy>``)."""
        return np.array(
            [
                [self.ixx, self.ixy, self.ixz],
                [self.ixy, self.iyy, self.iyz],
                [self.ixz, self.iyz, self.izz],
            ]
        )

    def tensor_in_link_frame(self) -> np.ndarray:
        """Inertia tensor about the CoM with the link frame's axes: R I Rᵀ."""
        rotation = self.origin.rotation()
        return rotation @ self.tensor() @ rotation.T


@dataclass(frozen=True)
class UrdfGeometry:
    """A ``<collision>`` or ``<visual>`` geometry. ``kind`` is box, cylinder, sphere or mesh.

    ``size`` (box, full edge lengths [m]), ``radius`` / ``length`` [m], ``filename`` and
    ``scale`` (mesh) are set according to ``kind``; ``origin`` is its pose in the link frame.
    """

    kind: str
    origin: Pose
    size: Optional[tuple] = None
    radius: Optional[float] = None
    length: Optional[float] = None
    filename: Optional[str] = None
    scale: tuple = (1.0, 1.0, 1.0)


@dataclass(frozen=True)
class UrdfLink:
    """A ``<link>``: its ``inertial`` (None without ``<inertial>``) and its ``<collision>`` and
    ``<visual>`` geometries, in file order."""

    name: str
    inertial: Optional[UrdfInertial]
    collisions: tuple = ()
    visuals: tuple = ()


@dataclass(frozen=True)
class JointLimit:
    """URDF ``<limit>``: position [rad or m], effort [N·m or N], velocity [rad/s or m/s]."""

    lower: float = -math.inf
    upper: float = math.inf
    effort: float = math.inf
    velocity: float = math.inf


@dataclass(frozen=True)
class Mimic:
    """URDF ``<mimic>``: q_follower = multiplier · q_leader + offset."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class UrdfJoint:
    """A ``<joint>`` of a supported ``type``: ``origin`` is the joint frame's pose in the
    ``parent`` link's frame (at zero joint position the ``child`` link's frame is the joint
    frame); ``axis`` is a unit-less direction in the joint frame; ``limit`` and ``mimic`` as
    given (None when absent)."""

    name: str
    type: str
    parent: str
    child: str
    origin: Pose
    axis: tuple = (1.0, 0.0, 0.0)
    limit: Optional[JointLimit] = None
    mimic: Optional[Mimic] = None


@dataclass
class UrdfDescription:
    """A checked URDF tree. ``joints`` keeps file order; ``root`` is the root link name."""

    name: str
    links: dict
    joints: dict
    root: str
    text: str
    warnings: list = field(default_factory=list)

    def parent_joint_of(self, link_name: str) -> Optional[UrdfJoint]:
        for joint in self.joints.values():
            if joint.child == link_name:
                return joint
        return None

    def total_mass(self) -> float:
        return sum(link.inertial.mass for link in self.links.values() if link.inertial)

    def __repr__(self) -> str:
        return (
            f'UrdfDescription(name={self.name!r}, links={len(self.links)}, '
            f'joints={len(self.joints)}, root={self.root!r})'
        )


def read_description_file(path, max_bytes: int = MAX_DESCRIPTION_BYTES) -> str:
    """Read a URDF file as UTF-8 text, refusing files larger than ``max_bytes``.

    Every failure is a :class:`DescriptionError` naming the path and the reason: missing,
    a directory, unreadable (permissions, I/O error), over the size limit, or not UTF-8
    (URDF is XML without an encoding declaration, i.e. UTF-8; ROS carries it as a UTF-8
    std_msgs/String).
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise DescriptionError(
                f'robot description file {path} is {size} bytes, over the {max_bytes}-byte limit'
            )
        with path.open('rb') as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:
        reason = error.strerror or str(error)
        raise DescriptionError(f'cannot read robot description file {path}: {reason}') from None
    if len(data) > max_bytes:  # grew since stat()
        raise DescriptionError(f'robot description file {path} is over the {max_bytes}-byte limit')
    try:
        return data.decode('utf-8-sig')  # a byte-order mark is dropped
    except UnicodeDecodeError as error:
        raise DescriptionError(
            f'robot description file {path} is not UTF-8 text (byte 0x{data[error.start]:02x} at '
            f'offset {error.start}); save it as UTF-8'
        ) from None


def parse_urdf(
    text: str,
    max_bytes: int = MAX_DESCRIPTION_BYTES,
    max_links: int = MAX_LINKS,
    max_moving_joints: int = MAX_MOVING_JOINTS,
    strict_mimics: bool = True,
) -> UrdfDescription:
    """Parse and check a URDF string. Raises :class:`DescriptionError` naming the problem.

    Physically impossible inertias and inverted joint limits are accepted with a warning in
    ``warnings`` (``robot_dynamics validate`` explains them and proposes fixes).
    ``strict_mimics=False`` accepts ``<mimic>`` couplings that cannot be modelled (unknown,
    fixed or chained leaders) with a warning, for a checker that reads only the inertias;
    :func:`mimic_problems` lists them.
    """
    _check_text(text, max_bytes)
    root = _parse_robot_element(text)
    links = _read_links(root, max_links)
    joints = _read_joints(root)
    _check_moving_joint_count(joints, max_moving_joints)
    root_link = _check_tree(links, joints)
    warnings = _mimic_warnings(joints, strict_mimics)
    warnings.extend(_physical_warnings(links, joints))
    warnings.extend(_massless_link_warnings(links, joints, root_link))
    return UrdfDescription(
        name=root.get('name', ''),
        links=links,
        joints=joints,
        root=root_link,
        text=text,
        warnings=warnings,
    )


def _check_text(text: str, max_bytes: int) -> None:
    """Refuse, before any XML parsing, text that is empty, over ``max_bytes`` characters or
    declares a DOCTYPE / entities."""
    if not isinstance(text, str) or not text.strip():
        raise DescriptionError('robot description is empty')
    if len(text) > max_bytes:
        raise DescriptionError(
            f'robot description is {len(text)} characters, over the {max_bytes} limit'
        )
    if _UNSAFE_MARKUP.search(text):
        raise DescriptionError(
            'robot description contains a DOCTYPE or ENTITY declaration; these are refused '
            '(entity-expansion attacks). Expand xacro/entities first.'
        )


def _parse_robot_element(text: str) -> ElementTree.Element:
    """The ``<robot>`` root element of ``text``, refused if not XML, not ``<robot>``, or if an
    element has more than :data:`MAX_ATTRIBUTES_PER_ELEMENT` attributes."""
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise DescriptionError(f'robot description is not valid XML: {error}') from None
    if root.tag != 'robot':
        raise DescriptionError(
            f"robot description's root element is <{root.tag}>, expected <robot>"
        )
    most_attributes = max(len(element.attrib) for element in root.iter())
    if most_attributes > MAX_ATTRIBUTES_PER_ELEMENT:
        raise DescriptionError(
            f'robot description has an element with {most_attributes} attributes, over the limit '
            f'of {MAX_ATTRIBUTES_PER_ELEMENT}'
        )
    _refuse_xacro(root)
    return root


def _refuse_xacro(root: ElementTree.Element) -> None:
    """Refuse a xacro file given as URDF: its macros, properties and includes would be ignored
    (a robot with fewer links) and its ``${...}`` expressions read as numbers."""
    for element in root.iter():
        if 'xacro' in element.tag.partition('}')[0]:
            found = f'<xacro:{element.tag.partition("}")[2]}>'
        else:
            found = next((v for v in element.attrib.values() if '${' in v or '$(' in v), None)
        if found is not None:
            raise DescriptionError(
                f'robot description is xacro, not URDF ({found[:60]!r}): '
                'expand it first (`xacro robot.urdf.xacro > robot.urdf`, or a launch file that '
                'runs xacro into robot_description); `robot_dynamics validate` expands it itself'
            )


def _read_links(root: ElementTree.Element, max_links: int) -> dict:
    """Links by name, in file order: at least one, at most ``max_links``, no name twice."""
    link_elements = root.findall('link')
    if not link_elements:
        raise DescriptionError('robot description has no <link>')
    if len(link_elements) > max_links:
        raise DescriptionError(
            f'robot description has {len(link_elements)} links, over the {max_links} limit'
        )
    links = {}
    for element in link_elements:
        link = _parse_link(element)
        if link.name in links:
            raise DescriptionError(f'link "{link.name}" is defined twice')
        links[link.name] = link
    return links


def _read_joints(root: ElementTree.Element) -> dict:
    """Joints by name, in file order, no name twice."""
    joints = {}
    for element in root.findall('joint'):
        joint = _parse_joint(element)
        if joint.name in joints:
            raise DescriptionError(f'joint "{joint.name}" is defined twice')
        joints[joint.name] = joint
    return joints


def _check_moving_joint_count(joints: dict, max_moving_joints: int) -> None:
    moving = sum(joint.type in MOVING_JOINT_TYPES for joint in joints.values())
    if moving > max_moving_joints:
        raise TooManyJoints(
            f'robot description has {moving} moving joints, over the limit of {max_moving_joints}'
        )


def _mimic_warnings(joints: dict, strict_mimics: bool) -> list:
    """The :func:`mimic_problems` messages as warnings; with ``strict_mimics`` the first one is
    raised instead."""
    problems = mimic_problems(joints)
    if problems and strict_mimics:
        raise DescriptionError(problems[0][1])
    return [message for _, message in problems]


def _massless_link_warnings(links: dict, joints: dict, root_link: str) -> list:
    """A warning for each link other than the root that has no ``<inertial>`` but has
    collision geometry or is moved by a joint (it is treated as massless)."""
    warnings = []
    moved_by = {joint.child: joint for joint in joints.values() if joint.type in MOVING_JOINT_TYPES}
    for link in links.values():
        if link.inertial is not None or link.name == root_link:
            continue
        if link.collisions:
            warnings.append(
                f'link "{link.name}" has collision geometry but no <inertial>: treated as massless'
            )
        elif link.name in moved_by:
            warnings.append(
                f'link "{link.name}" is moved by joint "{moved_by[link.name].name}" but has no '
                '<inertial>: treated as massless'
            )
    return warnings


def _floats(element, attribute: str, count: int, default: tuple, where: str) -> tuple:
    raw = element.get(attribute) if element is not None else None
    if raw is None:
        return default
    try:
        values = tuple(float(token) for token in raw.split())
    except ValueError:
        raise DescriptionError(f'{where}: {attribute}="{raw}" is not a list of numbers') from None
    if len(values) != count:
        raise DescriptionError(f'{where}: {attribute}="{raw}" needs {count} numbers')
    if not all(math.isfinite(v) for v in values):
        raise DescriptionError(f'{where}: {attribute}="{raw}" is not finite')
    return values


def _number(element, attribute: str, where: str, default: Optional[float] = None) -> float:
    raw = element.get(attribute)
    if raw is None:
        if default is None:
            raise DescriptionError(f'{where}: missing attribute {attribute}')
        return default
    try:
        value = float(raw)
    except ValueError:
        raise DescriptionError(f'{where}: {attribute}="{raw}" is not a number') from None
    if math.isnan(value):
        raise DescriptionError(f'{where}: {attribute} is NaN')
    return value


def _pose(element, where: str) -> Pose:
    return Pose(
        _floats(element, 'xyz', 3, (0.0, 0.0, 0.0), where),
        _floats(element, 'rpy', 3, (0.0, 0.0, 0.0), where),
    )


def _parse_link(element) -> UrdfLink:
    name = element.get('name')
    if not name:
        raise DescriptionError('a <link> has no name')
    where = f'link "{name}"'
    inertial = None
    inertial_element = element.find('inertial')
    if inertial_element is not None:
        mass_element = inertial_element.find('mass')
        if mass_element is None:
            raise DescriptionError(f'{where}: <inertial> without <mass>')
        mass = _number(mass_element, 'value', where + ' <mass>')
        if not math.isfinite(mass) or mass < 0.0:
            raise DescriptionError(f'{where}: mass {mass} kg is not a finite non-negative number')
        inertia_element = inertial_element.find('inertia')
        values = {}
        for key in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'):
            value = (
                0.0
                if inertia_element is None
                else _number(inertia_element, key, where + ' <inertia>', 0.0)
            )
            if not math.isfinite(value):
                raise DescriptionError(f'{where}: inertia {key}={value} is not finite')
            values[key] = value
        inertial = UrdfInertial(
            mass=mass,
            origin=_pose(inertial_element.find('origin'), where + ' <inertial>'),
            **values,
        )
    collisions = tuple(
        g for g in (_parse_geometry(e, where) for e in element.findall('collision')) if g
    )
    visuals = tuple(g for g in (_parse_geometry(e, where) for e in element.findall('visual')) if g)
    return UrdfLink(name=name, inertial=inertial, collisions=collisions, visuals=visuals)


def _parse_geometry(element, where: str) -> Optional[UrdfGeometry]:
    origin = _pose(element.find('origin'), where + ' geometry')
    geometry = element.find('geometry')
    if geometry is None or len(geometry) == 0:
        return None
    shape = geometry[0]
    if shape.tag == 'box':
        return UrdfGeometry(
            'box', origin, size=_floats(shape, 'size', 3, (0.0, 0.0, 0.0), where + ' <box>')
        )
    if shape.tag == 'cylinder':
        return UrdfGeometry(
            'cylinder',
            origin,
            radius=_number(shape, 'radius', where + ' <cylinder>'),
            length=_number(shape, 'length', where + ' <cylinder>'),
        )
    if shape.tag == 'sphere':
        return UrdfGeometry('sphere', origin, radius=_number(shape, 'radius', where + ' <sphere>'))
    if shape.tag == 'mesh':
        return UrdfGeometry(
            'mesh',
            origin,
            filename=shape.get('filename', ''),
            scale=_floats(shape, 'scale', 3, (1.0, 1.0, 1.0), where + ' <mesh>'),
        )
    return None


def _parse_joint(element) -> UrdfJoint:
    name = element.get('name')
    if not name:
        raise DescriptionError('a <joint> has no name')
    where = f'joint "{name}"'
    joint_type = _joint_type(element, where)
    parent, child = _joint_links(element, where)
    axis = _joint_axis(element, joint_type, where)
    limit = _joint_limit(element.find('limit'), joint_type, where)
    mimic = _joint_mimic(element.find('mimic'), joint_type, where)
    return UrdfJoint(
        name=name,
        type=joint_type,
        parent=parent,
        child=child,
        origin=_pose(element.find('origin'), where),
        axis=axis,
        limit=limit,
        mimic=mimic,
    )


def _joint_type(element, where: str) -> str:
    """The joint's ``type``, refused if unknown to URDF or not one of
    :data:`SUPPORTED_JOINT_TYPES`."""
    joint_type = element.get('type', '')
    if joint_type not in _KNOWN_JOINT_TYPES:
        raise DescriptionError(f'{where}: unknown joint type "{joint_type}"')
    if joint_type not in SUPPORTED_JOINT_TYPES:
        raise DescriptionError(
            f'{where}: joint type "{joint_type}" is not supported inside the tree (supported: '
            f'{", ".join(SUPPORTED_JOINT_TYPES)}); for a free-flying base use '
            'root_joint="floating" instead of a floating joint'
        )
    return joint_type


def _joint_links(element, where: str) -> tuple:
    """(parent link name, child link name) from ``<parent link>`` and ``<child link>``."""
    parent, child = element.find('parent'), element.find('child')
    if parent is None or not parent.get('link') or child is None or not child.get('link'):
        raise DescriptionError(f'{where}: needs <parent link=...> and <child link=...>')
    return parent.get('link'), child.get('link')


def _joint_axis(element, joint_type: str, where: str) -> tuple:
    """``<axis xyz>`` in the joint frame (default x), refused if zero on a moving joint."""
    axis = _floats(element.find('axis'), 'xyz', 3, (1.0, 0.0, 0.0), where + ' <axis>')
    if joint_type in MOVING_JOINT_TYPES and math.hypot(*axis) < 1e-9:
        raise DescriptionError(f'{where}: axis has zero length')
    return axis


def _joint_limit(limit_element, joint_type: str, where: str) -> Optional[JointLimit]:
    """The ``<limit>`` (required with effort and velocity on revolute and prismatic joints);
    effort and velocity are taken as magnitudes."""
    if joint_type in ('revolute', 'prismatic') and (
        limit_element is None
        or limit_element.get('effort') is None
        or limit_element.get('velocity') is None
    ):
        raise DescriptionError(
            f'{where}: a {joint_type} joint needs <limit effort=... velocity=...> (URDF spec)'
        )
    if limit_element is None:
        return None
    # URDF spec: lower/upper default to 0 for revolute and prismatic joints; continuous joints
    # have none.
    unbounded = joint_type == 'continuous'
    return JointLimit(
        lower=-math.inf if unbounded else _number(limit_element, 'lower', where + ' <limit>', 0.0),
        upper=math.inf if unbounded else _number(limit_element, 'upper', where + ' <limit>', 0.0),
        effort=abs(_number(limit_element, 'effort', where + ' <limit>', math.inf)),
        velocity=abs(_number(limit_element, 'velocity', where + ' <limit>', math.inf)),
    )


def _joint_mimic(mimic_element, joint_type: str, where: str) -> Optional[Mimic]:
    """The ``<mimic>`` of a moving joint (ignored on a fixed one), with a finite offset and a
    multiplier within ±:data:`MAX_MIMIC_MULTIPLIER`."""
    if mimic_element is None or joint_type not in MOVING_JOINT_TYPES:
        return None
    leader = mimic_element.get('joint')
    if not leader:
        raise DescriptionError(f'{where}: <mimic> without joint=')
    multiplier = _number(mimic_element, 'multiplier', where + ' <mimic>', 1.0)
    offset = _number(mimic_element, 'offset', where + ' <mimic>', 0.0)
    if not (math.isfinite(multiplier) and math.isfinite(offset)):
        raise DescriptionError(
            f'{where}: <mimic> multiplier={multiplier} offset={offset} is not finite'
        )
    if abs(multiplier) > MAX_MIMIC_MULTIPLIER:
        raise DescriptionError(
            f'{where}: <mimic> multiplier={multiplier:g} is beyond the plausible '
            f'±{MAX_MIMIC_MULTIPLIER:g} (a typo?)'
        )
    return Mimic(leader, multiplier, offset)


def _check_tree(links: dict, joints: dict) -> str:
    parent_of = {}
    children = {name: [] for name in links}
    for joint in joints.values():
        for role, link in (('parent', joint.parent), ('child', joint.child)):
            if link not in links:
                raise DescriptionError(f'joint "{joint.name}": {role} link "{link}" is not defined')
        if joint.child in parent_of:
            raise DescriptionError(
                f'link "{joint.child}" is the child of two joints ("{parent_of[joint.child]}" and '
                f'"{joint.name}")'
            )
        if joint.parent == joint.child:
            raise DescriptionError(f'joint "{joint.name}" connects link "{joint.child}" to itself')
        parent_of[joint.child] = joint.name
        children[joint.parent].append(joint.child)
    roots = [name for name in links if name not in parent_of]
    if not roots:
        raise DescriptionError('robot description has no root link (the joints form a cycle)')
    if len(roots) > 1:
        raise DescriptionError(
            f'robot description has {len(roots)} root links ({", ".join(roots[:5])}); every link '
            'but one must be the child of a joint'
        )
    reached, stack = set(), [roots[0]]
    while stack:
        link = stack.pop()
        reached.add(link)
        stack.extend(children[link])
    unreached = [name for name in links if name not in reached]
    if unreached:
        raise DescriptionError(
            f'links {", ".join(unreached[:5])} are not connected to the root "{roots[0]}" (a cycle '
            'in the joint graph)'
        )
    return roots[0]


def _physical_warnings(links: dict, joints: dict) -> list:
    """Inertias no rigid body can have, and joint ranges that are empty."""
    warnings = []
    with np.errstate(all='ignore'):  # absurd (1e308) values must give a warning, not an overflow
        for link in links.values():
            warnings.extend(_inertia_warnings(link))
    for joint in joints.values():
        if joint.limit is not None and joint.limit.lower > joint.limit.upper:
            warnings.append(
                f'joint "{joint.name}": lower limit {joint.limit.lower:g} is above upper limit '
                f'{joint.limit.upper:g}'
            )
    return warnings


def _inertia_warnings(link: UrdfLink) -> list:
    """A warning when ``link``'s inertia is not that of any rigid body (empty list if fine)."""
    inertial = link.inertial
    if inertial is None:
        return []
    tensor = inertial.tensor()
    scale = np.abs(tensor).max()
    where = f'link "{link.name}"'
    if inertial.mass == 0.0:
        return [f'{where}: mass 0 but a non-zero inertia'] if scale > 0.0 else []
    if scale == 0.0:
        return []
    # Scaled so absurd (1e308) entries cannot overflow; the checks are scale-free.
    moments = np.linalg.eigvalsh(tensor / scale)
    tolerance = PHYSICAL_TOLERANCE * np.abs(moments).max()
    if moments[0] < -tolerance:
        return [
            f'{where}: inertia has a negative principal moment {moments[0] * scale:.6g} kg·m² (not '
            'physically possible; see robot_dynamics validate)'
        ]
    if moments[0] + moments[1] < moments[2] - tolerance:
        return [
            f'{where}: principal moments {[float(f"{m * scale:.6g}") for m in moments]} kg·m² '
            'violate the triangle inequality (no rigid body has them; see robot_dynamics validate)'
        ]
    return []


def mimic_problems(joints: dict) -> list:
    """(joint name, reason) for every ``<mimic>`` that cannot be modelled: an unknown or
    non-moving leader, or a leader that is itself a mimic joint (file order)."""
    problems = []
    for joint in joints.values():
        if joint.mimic is None:
            continue
        leader = joints.get(joint.mimic.joint)
        if leader is None:
            problems.append(
                (joint.name, f'joint "{joint.name}" mimics unknown joint "{joint.mimic.joint}"')
            )
        elif leader.type not in MOVING_JOINT_TYPES:
            problems.append(
                (joint.name, f'joint "{joint.name}" mimics "{leader.name}", which is {leader.type}')
            )
        elif leader.mimic is not None:
            problems.append(
                (
                    joint.name,
                    f'joint "{joint.name}" mimics "{leader.name}", which is itself a mimic joint '
                    '(chained mimics are not supported)',
                )
            )
    return problems
