"""Inertia validation: what is wrong with a URDF's inertial parameters, and how to fix it.

:func:`validate_description` runs every check on every link of a parsed description and
returns a :class:`ValidationReport` of :class:`Finding` objects. Each finding names the
link and the check, proves the defect with numbers (``values``), proposes a fix (often a
ready URDF ``<inertial>`` snippet) and says what each consumer (MuJoCo, Drake/Gazebo,
PyBullet, pinocchio-based controllers) does with such a link.

Checks (the physical-consistency conditions, triangle inequality and pseudo-inertia LMI, of
Wensing, Kim & Slotine 2017):

* per link: implausible magnitudes (unit slips); mass of moving links; ``mass="0"`` with
  collision geometry; I_C positive
  semi-definite (principal moments and axes); triangle inequality of the principal
  moments; pseudo-inertia J ⪰ 0; a row-major transcription slip (``iyy`` repeating ``ixy``);
* against the link's geometry (the union of its collision and visual shapes: boxes,
  cylinders, spheres, meshes incl. COLLADA): CoM inside the bounding box; principal moments
  under the largest value a body of that mass inside that box can have (over 10× an error);
  the uniform-density inertia of the geometry against the URDF one (products with flipped
  signs, a rotated CoM frame, inertia about the link origin);
* across links: mirror twins (left/right name pairs of equal mass) with different principal
  moments; mirror images (CoM mirrored through a coordinate plane) with unflipped products;
  identical placeholder inertias on links that differ in mass; ``<mimic>`` couplings that
  cannot be modelled (a finding, not a refusal of the file).

Severities follow the consumers: an error wherever MuJoCo refuses the link (checked link by
link on the example-robot-data corpus) or no body of that mass fits the geometry; warnings
only where the file is wrong but loads.

Conventions: URDF ``<inertial>`` (origin = CoM frame in the link frame, tensor entries about
the CoM in the CoM frame, ixy = −∫ρxy dV). All values in SI units: kg, m, kg·m². "Link
axes" means the inertia about the CoM expressed along the link frame's axes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional, Sequence

import numpy as np

from robot_dynamics.core.errors import DescriptionError, RobotDynamicsError
from robot_dynamics.core.model.inertia import (InertialParameters, InertiaProjectionError, box_inertia, cylinder_inertia,
                                         nearest_consistent_inertia, parallel_axis, principal_inertia,
                                         pseudo_inertia_from_vector, sphere_inertia, triangle_margins)
from robot_dynamics.core.validation.mesh_inertia import (MeshLoadError, MeshResolutionError, SolidMassProperties, load_mesh,
                                              mesh_mass_properties, resolve_mesh_path)
from robot_dynamics.core.model.urdf import (MAX_DESCRIPTION_BYTES, MAX_LINKS, MOVING_JOINT_TYPES, UrdfDescription,
                                     UrdfGeometry, UrdfLink, mimic_problems, parse_urdf, read_description_file)

SEVERITIES = ('info', 'warning', 'error')

TRIANGLE_TOLERANCE = 1e-6
"""Triangle-inequality violations up to this fraction of the largest principal moment are
rounding-level (a warning: physically fine, but MuJoCo's compiler has no tolerance)."""

NEGATIVE_MOMENT_TOLERANCE = 1e-9
"""A principal moment below −(this × the largest |moment|) is negative (not rounding)."""

GEOMETRY_BOUND_TOLERANCE = 0.10
"""A principal moment may exceed the bounding-box admissible value by 10 % (coarse geometry)."""

COM_MARGIN_FRACTION = 0.10
"""The CoM may lie outside the geometry's bounding box by 10 % of its largest extent (+1 mm)."""

PATTERN_AGREEMENT = 0.15
"""Relative Frobenius distance under which a corrected tensor 'matches' the geometry's."""

MIRROR_TOLERANCE = 0.10
"""Mirror twins' principal moments may differ by 10 % of the largest moment (two CAD exports
of mirrored parts differ by a few %; a copy slip or a unit slip by far more)."""

ROTATION_DEGENERACY = 0.20
"""Principal moments closer than 20 % of the largest leave their axes undetermined (a CAD
export and a uniform-density mesh differ by that much)."""

ROTATION_MIN_ANGLE = math.radians(15.0)
"""A CoM-frame rotation is reported only if a determined principal axis is off by 15° or more."""

MAX_MATERIAL_DENSITY = 2.3e4
"""Densest engineering material [kg/m³] (osmium 22 600, tungsten 19 300): a geometry whose
bounding box would need more to hold the link's mass is a marker, not the body."""

MIRROR_MIN_OFFSET = 1e-3
"""A CoM coordinate [m] under 1 mm does not tell a mirror image from the same placement."""

MIRROR_SIGN_MIN_PRODUCT = 0.01
"""Products under 1 % of the tensor's trace are too small for their sign to matter."""

SUBSTANTIAL_MASS = 1e-3
"""Links up to 1 g (sensor and marker frames) are left out of the cross-link checks."""

PLACEHOLDER_MASS_TOLERANCE = 0.01
PLACEHOLDER_EXTENT_TOLERANCE = 0.25

MUJOCO_MIN_VALUE = 1e-15
"""MuJoCo's mjMINVAL [kg, kg·m²]: it refuses a principal moment at or below it (any body)
and a moving body whose mass or inertia is below it."""

NEGLIGIBLE_GYRATION_RADIUS = 1e-6
"""An inertia whose entries are all below m·(1 µm)² is a point mass written with rounding
noise (no robot part of that mass is that small)."""

GEOMETRY_BOUND_ERROR_RATIO = 10.0
"""A principal moment over 10× the largest one any body of that mass inside the link's whole
geometry can have is an error: neither a coarse proxy nor a non-uniform density explains it."""

PLAUSIBLE_LIMITS = {'mass': 1e5, 'inertia': 1e6, 'length': 1e3}
"""Largest magnitudes [kg, kg·m², m] any robot link can have; beyond them a value is a unit
or typing error, and the link's other checks are skipped (they would only overflow)."""

_MIRROR_TOKENS = {'left': 'right', 'l': 'r', 'lf': 'rf', 'lh': 'rh', 'fl': 'fr', 'hl': 'hr', 'rl': 'rr',
                  'lb': 'rb', 'bl': 'br'}
_MIRROR_TOKENS.update({right: left for left, right in list(_MIRROR_TOKENS.items())})
_RECOVERING_CHECKS = ('row_major_slip', 'product_sign', 'inertia_about_origin', 'com_frame_rotation')
_SAGITTAL_MIRROR = np.diag([1.0, -1.0, 1.0])  # REP 103: y points left, so mirroring flips y


@dataclass
class Finding:
    """One defect (or note) about one link. ``link`` is '' for whole-description findings.

    ``values``: the numbers that prove it (JSON-ready, SI units); ``suggestion``: the fix,
    possibly with a URDF ``<inertial>`` snippet; ``consumers``: what MuJoCo, Drake/Gazebo,
    PyBullet and pinocchio-based controllers do with it.
    """

    link: str
    check: str
    severity: str
    message: str
    values: dict = field(default_factory=dict)
    suggestion: Optional[str] = None
    consumers: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {'link': self.link, 'check': self.check, 'severity': self.severity, 'message': self.message,
                'values': self.values, 'suggestion': self.suggestion, 'consumers': dict(self.consumers)}

    def __repr__(self) -> str:
        return f'Finding({self.severity} {self.check} on {self.link!r}: {self.message})'


@dataclass
class ValidationReport:
    """All findings for one description. ``total_mass`` [kg] sums every ``<inertial>``."""

    robot_name: str
    total_mass: float
    findings: list
    link_count: int = 0
    link_properties: dict = field(default_factory=dict)
    """Per link (file order): mass [kg], CoM [m] and principal moments [kg·m²] / axes (link
    frame), smallest relative triangle margin, smallest pseudo-inertia eigenvalue, whether it
    moves. Present for every link, also the ones without findings (for diagnostics)."""

    def count(self, severity: str) -> int:
        return sum(1 for finding in self.findings if finding.severity == severity)

    def worst_severity(self) -> str:
        """'clean', 'info', 'warning' or 'error'."""
        present = [SEVERITIES.index(finding.severity) for finding in self.findings]
        return SEVERITIES[max(present)] if present else 'clean'

    def exit_code(self) -> int:
        """0 clean or info only, 1 warnings, 2 errors (for CI)."""
        return {'clean': 0, 'info': 0, 'warning': 1, 'error': 2}[self.worst_severity()]

    def summary(self) -> str:
        """One line: robot, links, total mass, error and warning counts (or why it was refused)."""
        refused = [finding for finding in self.findings if finding.check == 'parse']
        if refused:
            return f'{self.robot_name or "robot description"}: refused, {refused[0].message}'
        errors, warnings = self.count('error'), self.count('warning')
        return (f'{self.robot_name or "robot"}: {self.link_count} links, {self.total_mass:.4g} kg, '
                f'{errors} error{"s" * (errors != 1)}, {warnings} warning{"s" * (warnings != 1)}')

    def findings_for(self, link: str) -> list:
        return [finding for finding in self.findings if finding.link == link]

    def links_with_findings(self) -> list:
        return list(dict.fromkeys(finding.link for finding in self.findings))

    def link_statuses(self) -> list:
        """One :class:`LinkStatus` per link (file order), plus one for link '' if a
        description-level finding exists: what a diagnostics publisher needs, per link."""
        names = list(self.link_properties)
        if any(finding.link not in self.link_properties for finding in self.findings):
            names.insert(0, '')
        return [self._link_status(name) for name in names]

    def _link_status(self, link: str) -> 'LinkStatus':
        findings = sorted(self.findings_for(link), key=lambda finding: -SEVERITIES.index(finding.severity))
        values = {key: _value_text(value) for key, value in self.link_properties.get(link, {}).items()}
        values.update({f'finding {index + 1}': f'{finding.severity} {finding.check}: {finding.message}'
                       for index, finding in enumerate(findings)})
        if not findings:
            mass = self.link_properties.get(link, {}).get('mass', 0.0)
            return LinkStatus(link, 'clean', f'ok ({mass:.4g} kg)' if mass else 'ok (massless frame)', values)
        more = f' (+{len(findings) - 1} more)' if len(findings) > 1 else ''
        return LinkStatus(link, findings[0].severity, f'{findings[0].check}: {findings[0].message}{more}', values)

    def to_dict(self) -> dict:
        return {'robot': self.robot_name, 'link_count': self.link_count, 'total_mass': self.total_mass,
                'worst_severity': self.worst_severity(), 'summary': self.summary(),
                'findings': [finding.to_dict() for finding in self.findings],
                'links': {name: dict(properties) for name, properties in self.link_properties.items()}}

    def to_text(self) -> str:
        """The human-readable report: summary line, then the findings grouped by link, each
        with its numbers, its fix and (for warnings and errors) what each consumer does."""
        lines = [self.summary()]
        for link in self.links_with_findings():
            lines.append('')
            lines.append(f'link "{link}"' if link else 'description')
            for finding in self.findings_for(link):
                lines.extend(_finding_text(finding))
        clean = [name for name in self.link_properties if not self.findings_for(name)]
        if clean:
            lines.append('')
            lines.append(f'no findings on {len(clean)} link{"s" * (len(clean) != 1)}: {", ".join(clean)}')
        return '\n'.join(lines)

    def __repr__(self) -> str:
        return f'ValidationReport({self.summary()})'


@dataclass(frozen=True)
class LinkStatus:
    """One link's validation status, shaped for a ``diagnostic_msgs/DiagnosticStatus``:
    ``level`` is 'clean', 'info', 'warning' or 'error' (worst finding), ``message`` one
    line, ``values`` string key/values (link properties in SI units, then each finding)."""

    link: str
    level: str
    message: str
    values: dict


_CONSUMER_NAMES = {'mujoco': 'MuJoCo', 'drake_gazebo': 'Drake/Gazebo', 'pybullet': 'PyBullet',
                   'pinocchio': 'pinocchio-based controllers'}


def _finding_text(finding: Finding) -> list:
    lines = [f'  {finding.severity.upper():<8}{finding.check}: {finding.message}']
    indent = ' ' * 10
    for key, value in finding.values.items():
        lines.append(f'{indent}{key}: {_value_text(value)}')
    if finding.suggestion:
        first, *rest = finding.suggestion.splitlines()
        lines.append(f'{indent}fix: {first}')
        lines.extend(f'{indent}  {line}' for line in rest)
    if finding.severity != 'info':
        lines.extend(f'{indent}{_CONSUMER_NAMES[key]}: {text}' for key, text in finding.consumers.items())
    return lines


def _value_text(value) -> str:
    if isinstance(value, float):
        return f'{value:.6g}'
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(_value_text(item) for item in value) + ']'
    if isinstance(value, dict):
        return '{' + ', '.join(f'{key}: {_value_text(item)}' for key, item in value.items()) + '}'
    return str(value)


# ---------------------------------------------------------------------------------------
# What each consumer does with each defect (MuJoCo messages checked with MuJoCo 4.0).

_MUJOCO_TRIANGLE = ("refuses to compile the model: \"inertia must satisfy A + B >= C; use 'balanceinertia' "
                    "to fix\" (no tolerance: even a rounding-level violation is refused)")
_DRAKE_INVALID = ('Drake refuses the model (SpatialInertia fails IsPhysicallyValid); Gazebo/sdformat '
                  'reports the link inertia as invalid')
_PYBULLET_SILENT = ('loads it without a warning; the link is simulated with a non-physical inertia '
                    '(it spins up, jitters or explodes)')
_PINOCCHIO_MASS_MATRIX = ('no check: gravity compensation uses only mass and CoM and stays right, but the mass '
                          'matrix M(q) can be indefinite, so inverse dynamics, feed-forward and operational-space '
                          'controllers get wrong torques and forward dynamics / M⁻¹ may fail or diverge')
_ACCEPTED_WRONG = {
    'mujoco': 'accepts it (if no consistency error on this link) and simulates the wrong body',
    'drake_gazebo': 'accept it (if no consistency error on this link) and simulate the wrong body',
    'pybullet': 'accepts it without a warning and simulates the wrong body',
    'pinocchio': 'no check: inverse dynamics, mass matrix and feed-forward torques carry the error; '
                 'gravity torques are unaffected (they use mass and CoM only)',
}
CONSUMERS = {
    'parse': {'mujoco': 'cannot load the file', 'drake_gazebo': 'cannot load the file',
              'pybullet': 'cannot load the file', 'pinocchio': 'cannot build a model'},
    'mass': {
        'mujoco': 'refuses to compile: "mass and inertia of moving bodies must be larger than mjMINVAL"',
        'drake_gazebo': 'Drake refuses to simulate a massless terminal body on a moving joint (singular mass '
                        'matrix); Gazebo/sdformat reports a non-positive mass as an invalid inertia',
        'pybullet': 'does not check: a massless moving link makes its articulated-body solve ill-conditioned',
        'pinocchio': 'the mass matrix is singular when nothing below the joint has mass: ABA / M⁻¹ divide '
                     'by zero; RNEA returns zero torque for this joint',
    },
    'zero_mass_geometry': {
        'mujoco': 'fuses it into its parent when the joint is fixed; if it moves, refuses to compile '
                  '(mass and inertia of moving bodies must be larger than mjMINVAL)',
        'drake_gazebo': 'load it; contacts on the link push a body that adds no mass or inertia',
        'pybullet': 'does not check: the link collides but adds no mass or inertia',
        'pinocchio': 'the link contributes no gravity or inertia: gravity compensation is short by its weight',
    },
    'zero_inertia': {
        'mujoco': 'refuses to compile a moving body: "mass and inertia of moving bodies must be larger than mjMINVAL"',
        'drake_gazebo': 'accept a point mass (it is physically valid) and simulate it as one',
        'pybullet': 'simulates a point mass: rotation about an axis through the CoM is unresisted',
        'pinocchio': 'point mass: M(q) is singular if a joint axis passes through the CoM',
    },
    'positive_definite': {
        'mujoco': "refuses to compile: \"error 'inertia must have positive eigenvalues' in fullinertia\"",
        'drake_gazebo': _DRAKE_INVALID, 'pybullet': _PYBULLET_SILENT, 'pinocchio': _PINOCCHIO_MASS_MATRIX,
    },
    'triangle_inequality': {'mujoco': _MUJOCO_TRIANGLE, 'drake_gazebo': _DRAKE_INVALID,
                            'pybullet': _PYBULLET_SILENT, 'pinocchio': _PINOCCHIO_MASS_MATRIX},
    'pseudo_inertia': {'mujoco': _MUJOCO_TRIANGLE, 'drake_gazebo': _DRAKE_INVALID,
                       'pybullet': _PYBULLET_SILENT, 'pinocchio': _PINOCCHIO_MASS_MATRIX},
    'row_major_slip': {'mujoco': 'loads it only if the slipped tensor is still consistent (see the consistency '
                                 'finding), and then simulates the wrong body',
                       'drake_gazebo': 'load it only if the slipped tensor is still consistent, and then simulate '
                                       'the wrong body',
                       'pybullet': _PYBULLET_SILENT, 'pinocchio': _ACCEPTED_WRONG['pinocchio']},
    'mirror_twin': _ACCEPTED_WRONG,
    'mimic': {'mujoco': 'warns and ignores the coupling: the follower moves freely',
              'drake_gazebo': 'Drake and sdformat refuse or ignore the coupling, depending on the version',
              'pybullet': 'ignores mimic joints: the follower moves freely',
              'pinocchio': 'pinocchio\'s URDF parser builds the follower as an independent joint; robot_dynamics '
                           'refuses the file'},
    'placeholder': _ACCEPTED_WRONG,
    'geometry_bound': _ACCEPTED_WRONG,
    'com_in_geometry': {**_ACCEPTED_WRONG,
                        'pinocchio': 'no check: gravity torques are wrong by m·g·Δc (0.196 N·m per cm at 2 kg)'},
    'product_sign': _ACCEPTED_WRONG,
    'com_frame_rotation': _ACCEPTED_WRONG,
    'inertia_about_origin': _ACCEPTED_WRONG,
    'mesh_inertia': _ACCEPTED_WRONG,
    'mesh_orientation': {
        'mujoco': 'with <mesh inertia="exact"> refuses to compile: "mesh volume is negative (misoriented '
                  'triangles)"; the default convex-hull inertia hides it',
        'drake_gazebo': 'contact normals of an inside-out collision mesh point inwards',
        'pybullet': 'contact normals of an inside-out collision mesh point inwards',
        'pinocchio': 'unaffected (meshes are only used for collision/visuals)',
    },
    'magnitude': {'mujoco': 'loads it and simulates nonsense (or overflows)',
                  'drake_gazebo': 'load it or refuse it, depending on the value; either way the link is wrong',
                  'pybullet': 'loads it and simulates nonsense', 'pinocchio': 'no check: every torque involving '
                  'this link is wrong'},
    'mesh': {'mujoco': 'needs the mesh file to compile the model', 'drake_gazebo': 'need the mesh file for '
             'collision and visuals', 'pybullet': 'needs the mesh file for the collision shape',
             'pinocchio': 'unaffected (rigid-body dynamics do not use meshes)'},
}


# ---------------------------------------------------------------------------------------
# Public entry points

def validate_urdf_text(text: str, package_paths: Optional[Mapping[str, str]] = None,
                       allowed_roots: Sequence[str] = (), floating_base: bool = False) -> ValidationReport:
    """Parse ``text`` safely and validate it. Never raises for a bad description: an
    unparseable, unsafe or oversize text gives a report with one error finding (check 'parse')."""
    try:
        # No pinocchio model is built here, so the joint-count limit that protects its memory
        # does not apply: any tree within the link limit is validated.
        description = parse_urdf(text, max_moving_joints=MAX_LINKS, strict_mimics=False)
    except RobotDynamicsError as error:
        return parse_failure_report(str(error))
    return validate_description(description, package_paths, allowed_roots, floating_base)


def validate_file(path, package_paths: Optional[Mapping[str, str]] = None, allowed_roots: Sequence[str] = (),
                  floating_base: bool = False) -> ValidationReport:
    """Validate a URDF or xacro file (``.xacro`` is expanded with the ``xacro`` package, then
    parsed by the same safe parser). Never raises for a bad file: a 'parse' error finding."""
    path = Path(path)
    try:
        if path.suffix == '.xacro':
            text = _expand_xacro(path)
        else:
            text = read_description_file(path)
    except RobotDynamicsError as error:
        return parse_failure_report(str(error))
    return validate_urdf_text(text, package_paths, allowed_roots, floating_base)


def _expand_xacro(path: Path) -> str:
    if not path.is_file() or path.stat().st_size > MAX_DESCRIPTION_BYTES:
        raise DescriptionError(f'xacro file {path} is missing or over the {MAX_DESCRIPTION_BYTES}-byte limit')
    import xacro  # only the CLI needs it; a node never expands xacro from the ROS graph

    try:
        return xacro.process_file(str(path)).toxml()
    except BaseException as error:  # xacro raises XacroException, XML errors, and even SystemExit
        if isinstance(error, KeyboardInterrupt):
            raise
        raise DescriptionError(f'xacro cannot expand {path}: {error}') from None


def parse_failure_report(reason: str, robot_name: str = '') -> ValidationReport:
    """A report holding the single 'parse' error ``reason``."""
    return ValidationReport(robot_name, 0.0, [Finding('', 'parse', 'error', f'the description cannot be used: {reason}',
                                                      suggestion='fix the file so that it parses as a URDF tree',
                                                      consumers=CONSUMERS['parse'])])


def validate_description(description: UrdfDescription, package_paths: Optional[Mapping[str, str]] = None,
                         allowed_roots: Sequence[str] = (), floating_base: bool = False) -> ValidationReport:
    """Run every check on every link of ``description`` (see the module docstring).

    ``package_paths`` maps ROS package names to directories for ``package://`` meshes (the
    ament index is tried after it); ``file://`` and plain mesh paths are read only under
    ``allowed_roots``. ``floating_base``: the root link moves too (free-flyer).
    """
    context = _Context(description, dict(package_paths or {}), tuple(str(root) for root in allowed_roots),
                       floating_base)
    findings = []
    for link in description.links.values():
        findings.extend(_link_findings(context, link))
    findings.extend(_mirror_twin_findings(context))
    findings.extend(_placeholder_findings(context))
    findings.extend(_mirror_sign_findings(context))
    findings.extend(_mimic_findings(description))
    order = {name: index for index, name in enumerate(description.links)}
    findings.sort(key=lambda finding: (order.get(finding.link, -1), -SEVERITIES.index(finding.severity)))
    properties = {name: _link_properties(context, link) for name, link in description.links.items()}
    return ValidationReport(description.name, description.total_mass(), findings, len(description.links), properties)


def _link_properties(context: '_Context', link: UrdfLink) -> dict:
    properties = {'mass': link.inertial.mass if link.inertial else 0.0, 'moves': context.moves(link.name)}
    if link.inertial is None or link.inertial.mass <= 0.0 or not np.any(link.inertial.tensor()) \
            or link.name in context.implausible:
        return properties
    moments, axes = principal_inertia(link.inertial.tensor_in_link_frame())
    properties.update(com=list(link.inertial.origin.xyz), principal_moments=moments, principal_axes=axes.T,
                      triangle_margin_relative=float(triangle_margins(moments).min() / np.abs(moments).max()),
                      pseudo_inertia_min_eigenvalue=float(np.linalg.eigvalsh(_pseudo_inertia(link.inertial))[0]))
    return _plain(properties)


# ---------------------------------------------------------------------------------------
# Per-link context: which links move, the geometry's uniform-density mass properties.

@dataclass
class _Geometry:
    """A link's geometry in the link frame: bounding box [m] of all its collision and visual
    shapes (None if a part could not be read), the uniform solid of one shape set
    (``solid_source``), the meshes used, and why parts were skipped."""

    lower: Optional[np.ndarray]
    upper: Optional[np.ndarray]
    solid: Optional[SolidMassProperties]
    source: str
    mesh_files: list
    skipped: list
    inverted: list
    solid_source: str = ''


class _Context:
    def __init__(self, description: UrdfDescription, package_paths: dict, allowed_roots: tuple,
                 floating_base: bool):
        self.description = description
        self.package_paths = package_paths
        self.allowed_roots = allowed_roots
        self.floating_base = floating_base
        self._meshes: dict = {}
        self._geometry: dict = {}
        self.parent_joint = {joint.child: joint for joint in description.joints.values()}
        self.children = {name: [] for name in description.links}
        for joint in description.joints.values():
            self.children[joint.parent].append(joint)
        self.implausible = {name: reasons for name, reasons in
                            ((link.name, _implausible_values(link)) for link in description.links.values()) if reasons}
        self.welded_to_world = set() if floating_base else self._welded_to_root()
        self._fixed_mass = self._masses_below(fixed_only=True)
        self._subtree_mass = self._masses_below(fixed_only=False)

    def moves(self, link_name: str) -> bool:
        """True if the link is the child of a moving joint, or the root of a floating base."""
        joint = self.parent_joint.get(link_name)
        if joint is None:
            return self.floating_base
        return joint.type in MOVING_JOINT_TYPES

    def welded_to_massive_body(self, link_name: str) -> str:
        """The link that fixed joints weld this one to, if that welded body has mass (a
        simulator fuses the link into it: a sensor frame or a collision-only part), else ''."""
        name = link_name
        while name in self.parent_joint and self.parent_joint[name].type == 'fixed':
            name = self.parent_joint[name].parent
        return name if name != link_name and self.mass_below(name, fixed_only=True) > 0.0 else ''

    def mass_below(self, link_name: str, fixed_only: bool) -> float:
        """Mass [kg] of the link plus its descendants (only through fixed joints if ``fixed_only``)."""
        return (self._fixed_mass if fixed_only else self._subtree_mass)[link_name]

    def _welded_to_root(self) -> set:
        """Links joined to a fixed base's root by fixed joints only: they never move."""
        welded, stack = set(), [self.description.root]
        while stack:
            name = stack.pop()
            welded.add(name)
            stack.extend(joint.child for joint in self.children[name] if joint.type == 'fixed')
        return welded

    def _masses_below(self, fixed_only: bool) -> dict:
        order, stack = [], [self.description.root]  # iterative: a 2000-link chain must not recurse
        while stack:
            name = stack.pop()
            order.append(name)
            stack.extend(joint.child for joint in self.children[name])
        masses = {}
        for name in reversed(order):
            link = self.description.links[name]
            masses[name] = (link.inertial.mass if link.inertial else 0.0) + sum(
                masses[joint.child] for joint in self.children[name] if joint.type == 'fixed' or not fixed_only)
        return masses

    def geometry(self, link: UrdfLink) -> Optional[_Geometry]:
        """The union of the link's collision and visual geometry (a collision proxy is often
        far smaller than the body the visual mesh shows); the uniform solid is the collision
        set's if every collision shape is a closed solid, else the visual set's."""
        if link.name not in self._geometry:
            self._geometry[link.name] = self._build_geometry(link) if (link.collisions or link.visuals) else None
        return self._geometry[link.name]

    def _build_geometry(self, link: UrdfLink) -> _Geometry:
        collision, visual = self._shape_set(link.collisions), self._shape_set(link.visuals)
        parts = [part for part in (collision, visual) if part['shapes']]
        skipped = [reason for part in parts for reason in part['skipped']]
        source = ' and '.join(name for name, part in (('collision', collision), ('visual', visual)) if part['shapes'])
        lower = upper = None
        points = [block for part in parts for block in part['points']]
        if points and not skipped:
            stacked = np.vstack(points)
            lower, upper = stacked.min(axis=0), stacked.max(axis=0)
        solid, solid_source = None, source
        for name, part in (('collision', collision), ('visual', visual)):
            if part['shapes'] and part['solids'] and all(item is not None for item in part['solids']) \
                    and not part['skipped']:
                solid, solid_source = _union(part['solids']), name
                break
        open_meshes = [name for part in parts for name in part['open']]
        skipped.extend(f'{name} is not a closed (watertight) mesh: no mesh-derived inertia from it'
                       for name in dict.fromkeys(open_meshes))
        return _Geometry(lower, upper, solid, source, [f for part in parts for f in part['mesh_files']], skipped,
                         [item for part in parts for item in part['inverted']], solid_source)

    def _shape_set(self, shapes: tuple) -> dict:
        """Points (link frame), uniform solids (None for an open mesh) and notes of some shapes."""
        part = {'shapes': shapes, 'points': [], 'solids': [], 'mesh_files': [], 'skipped': [], 'inverted': [],
                'open': []}
        for shape in shapes:
            rotation, translation = shape.origin.rotation(), np.array(shape.origin.xyz)
            if shape.kind == 'mesh':
                try:
                    vertices, solid, path = self._mesh(shape)
                except (MeshResolutionError, MeshLoadError) as error:
                    part['skipped'].append(str(error))
                    continue
                part['mesh_files'].append(str(path))
                if solid is not None and solid.volume < 0.0:
                    part['inverted'].append((shape.filename, solid.volume))
                if solid is None or not solid.is_watertight:
                    part['open'].append(shape.filename)
                    solid = None
            else:
                vertices, solid = _primitive_corners(shape), _primitive_solid(shape)
            part['points'].append(vertices @ rotation.T + translation)
            part['solids'].append(None if solid is None else _transformed(solid, rotation, translation))
        return part

    def _mesh(self, shape: UrdfGeometry) -> tuple:
        path = resolve_mesh_path(shape.filename, self.package_paths, self.allowed_roots)
        if path not in self._meshes:
            vertices, faces, watertight = load_mesh(path)
            solid = None
            if watertight:
                try:
                    solid = mesh_mass_properties(vertices, faces, watertight)
                except MeshLoadError:  # zero volume: bounding box only
                    solid = None
            self._meshes[path] = (vertices, faces, solid)
        vertices, faces, solid = self._meshes[path]
        scale = np.array(shape.scale)
        if solid is not None and not np.allclose(scale, 1.0):
            solid = mesh_mass_properties(vertices * scale, faces if np.prod(scale) > 0 else faces[:, ::-1],
                                         solid.is_watertight)
        return vertices * scale, solid, path


def _primitive_corners(shape: UrdfGeometry) -> np.ndarray:
    if shape.kind == 'box':
        half = np.array(shape.size) / 2.0
    elif shape.kind == 'cylinder':
        half = np.array([shape.radius, shape.radius, shape.length / 2.0])
    else:
        half = np.full(3, shape.radius)
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    return signs * half


def _primitive_solid(shape: UrdfGeometry) -> SolidMassProperties:
    if shape.kind == 'box':
        volume, per_mass = float(np.prod(shape.size)), box_inertia(1.0, shape.size)
    elif shape.kind == 'cylinder':
        volume = math.pi * shape.radius ** 2 * shape.length
        per_mass = cylinder_inertia(1.0, shape.radius, shape.length)
    else:
        volume, per_mass = 4.0 / 3.0 * math.pi * shape.radius ** 3, sphere_inertia(1.0, shape.radius)
    return SolidMassProperties(volume, np.zeros(3), per_mass)


def _transformed(solid: SolidMassProperties, rotation: np.ndarray, translation: np.ndarray) -> SolidMassProperties:
    return SolidMassProperties(solid.volume, rotation @ solid.centroid + translation,
                               rotation @ solid.inertia_per_mass @ rotation.T, solid.is_watertight)


def _union(solids: list) -> Optional[SolidMassProperties]:
    """Uniform-density union of disjoint solids (overlaps count twice), link frame."""
    volumes = np.array([abs(solid.volume) for solid in solids])
    if volumes.sum() <= 0.0:
        return None
    weights = volumes / volumes.sum()
    centroid = sum(w * solid.centroid for w, solid in zip(weights, solids))
    parts = [InertialParameters(w, solid.centroid, w * solid.inertia_per_mass) for w, solid in zip(weights, solids)]
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return SolidMassProperties(float(volumes.sum()), centroid, total.inertia_com)


# ---------------------------------------------------------------------------------------
# Per-link checks

def _implausible_values(link: UrdfLink) -> list:
    """Descriptions of the link's values beyond :data:`PLAUSIBLE_LIMITS`."""
    checks = []
    if link.inertial:
        inertial = link.inertial
        checks += [('mass', inertial.mass, 'mass', 'kg')]
        checks += [(key, getattr(inertial, key), 'inertia', 'kg·m²') for key in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')]
        checks += [('CoM', value, 'length', 'm') for value in inertial.origin.xyz]
    for shape in link.collisions + link.visuals:
        sizes = list(shape.size or ()) + [shape.radius or 0.0, shape.length or 0.0] + list(shape.origin.xyz)
        checks += [(f'{shape.kind} geometry', value, 'length', 'm') for value in sizes + list(shape.scale)]
    return [f'{name} {value:.3g} {unit}' for name, value, kind, unit in checks if abs(value) > PLAUSIBLE_LIMITS[kind]]


def _link_findings(context: _Context, link: UrdfLink) -> list:
    if link.name in context.implausible:
        return [_finding(link, 'magnitude', 'error',
                         'values no robot link can have: ' + ', '.join(context.implausible[link.name])
                         + '; the other checks of this link are skipped',
                         {'limits': PLAUSIBLE_LIMITS}, 'check the units (SI: kg, m, kg·m²) and the exponents')]
    geometry = context.geometry(link)
    findings = _mass_findings(context, link)
    massive = link.inertial is not None and link.inertial.mass > 0.0
    if geometry is not None:
        findings.extend(_mesh_notes(link, geometry, massive))
    if not massive:
        return findings
    inertia = link.inertial.tensor()
    largest_entry = float(np.abs(inertia).max())
    if largest_entry <= NEGLIGIBLE_GYRATION_RADIUS ** 2 * link.inertial.mass or largest_entry < MUJOCO_MIN_VALUE:
        return findings + [_zero_inertia_finding(context, link, largest_entry)]
    recovered = _row_major_slip(link, geometry)
    if geometry is not None and geometry.lower is not None:
        recovered.extend(_geometry_findings(link, geometry))
    recovering = [finding.check for finding in recovered if finding.check in _RECOVERING_CHECKS]
    return findings + _consistency_findings(link, geometry, recovering) + recovered


def _zero_inertia_finding(context: _Context, link: UrdfLink, largest_entry: float) -> Finding:
    """All entries 0, or so small that no body of this mass has them: the relative checks
    would only judge rounding noise (1e-20 entries 'violating' a triangle), so say what it is."""
    mass = link.inertial.mass
    moving = context.moves(link.name)
    refused = largest_entry > 0.0 and float(np.linalg.eigvalsh(link.inertial.tensor())[0]) <= MUJOCO_MIN_VALUE
    severity = 'error' if moving or refused else 'info' if largest_entry == 0.0 else 'warning'
    what = ('all inertia entries are 0 (a point mass)' if largest_entry == 0.0 else
            f'its inertia entries are at most {largest_entry:.3g} kg·m², zero for a body of this mass '
            f'(radius of gyration {math.sqrt(largest_entry / mass):.2g} m): a point mass written with rounding noise')
    where = ' on a moving link' if moving else (' (MuJoCo refuses the noise: its principal moments are not positive)'
                                                if refused else '')
    return _finding(link, 'zero_inertia', severity, f'mass {mass:.6g} kg but {what}{where}',
                    {'mass': mass, 'largest_inertia_entry': largest_entry},
                    'give the inertia about the CoM (from CAD, from a mirror twin, or from the '
                    'geometry: see the other findings on this link)' + _geometry_alternative(mass, context.geometry(link)))


def _mass_findings(context: _Context, link: UrdfLink) -> list:
    mass = link.inertial.mass if link.inertial else 0.0
    findings = []
    massless_moving = context.moves(link.name) and context.mass_below(link.name, fixed_only=True) == 0.0
    if mass == 0.0 and link.collisions and link.name not in context.welded_to_world:
        count = len(link.collisions)
        carrier = context.welded_to_massive_body(link.name)
        findings.append(_finding(link, 'zero_mass_geometry', 'info' if carrier else 'warning',
                                 f'{"mass=0" if link.inertial else "no <inertial>"} on a link with '
                                 f'{count} collision geometr{"y" if count == 1 else "ies"}'
                                 + (f', welded by fixed joints to "{carrier}" that has mass (fine if its inertial '
                                    'includes this part)' if carrier else ''),
                                 {'mass': mass, 'collision_geometries': len(link.collisions)},
                                 'give the link its real mass and inertia (CAD or weighing); if it is only a '
                                 'frame, remove the collision geometry'))
    if massless_moving:
        below = context.mass_below(link.name, fixed_only=False)
        joint = context.parent_joint.get(link.name)
        moved_by = f'joint "{joint.name}"' if joint else 'the floating base'
        if below == 0.0:
            findings.append(_finding(link, 'mass', 'error',
                                     f'{moved_by} moves this link, but it and everything below it are massless',
                                     {'mass': mass, 'mass_below': below},
                                     'give the link its mass and inertia, or make the joint fixed'))
        else:
            findings.append(_finding(link, 'mass', 'error',
                                     f'{moved_by} moves this massless link (the {below:.4g} kg below it hang on '
                                     f'further joints): MuJoCo refuses it',
                                     {'mass': mass, 'mass_below': below},
                                     'pinocchio copes; for MuJoCo (and a well-conditioned mass matrix) give it a small '
                                     'mass and inertia (e.g. 1e-3 kg, a few 1e-6 kg·m²), or merge the joints'))
    return findings


def _mesh_notes(link: UrdfLink, geometry: _Geometry, massive: bool) -> list:
    """Skipped geometry checks (only worth saying for a link that has mass) and inside-out meshes."""
    findings = []
    if geometry.skipped and massive:
        findings.append(_finding(link, 'mesh', 'info',
                                 'geometry checks skipped: ' + '; '.join(geometry.skipped),
                                 {'geometry': geometry.source}, None))
    for filename, volume in geometry.inverted:
        findings.append(_finding(link, 'mesh_orientation', 'warning',
                                 f'{filename} has a negative volume ({volume:.6g} m³): its triangles are wound '
                                 'inside-out (normals point inwards)',
                                 {'mesh': filename, 'signed_volume': volume},
                                 're-export the mesh with outward normals (e.g. trimesh.repair.fix_inversion)'))
    return findings


def _consistency_findings(link: UrdfLink, geometry: Optional[_Geometry], recovering: list) -> list:
    """PSD, triangle inequality and pseudo-inertia. The fix refers to ``recovering`` findings
    (checks that recovered the intended tensor from the file) when there are any."""
    inertial = link.inertial
    tensor = inertial.tensor()
    moments, axes = principal_inertia(tensor)
    largest = float(np.max(np.abs(moments)))
    pseudo_eigenvalues = np.linalg.eigvalsh(_pseudo_inertia(inertial))
    pseudo_min = float(pseudo_eigenvalues[0])
    values = {'principal_moments': _floats(moments), 'principal_axes': _floats(axes.T),
              'pseudo_inertia_min_eigenvalue': pseudo_min}
    margins = triangle_margins(moments)
    placeholder = _all_entries_equal(inertial)
    if placeholder:
        return [_finding(link, 'positive_definite', 'error',
                         f'all six inertia entries are {inertial.ixx:.6g}: a placeholder, not a tensor (principal '
                         f'moments {_fmt(moments)} kg·m², two of them zero); no rigid body has it', values,
                         _consistent_fix(link, geometry, []))]
    if moments[0] < -NEGATIVE_MOMENT_TOLERANCE * largest:
        negative = [f'{key}={getattr(inertial, key):.6g}' for key in ('ixx', 'iyy', 'izz')
                    if getattr(inertial, key) < 0]
        message = (f'not positive semi-definite: principal moments {_fmt(moments)} kg·m² '
                   f'(smallest {moments[0]:.4g} < 0)'
                   + (f'; negative diagonal {", ".join(negative)}' if negative else '')
                   + f'; pseudo-inertia smallest eigenvalue {pseudo_min:.4g}')
        return [_finding(link, 'positive_definite', 'error', message, values,
                         _consistent_fix(link, geometry, recovering))]
    if moments[0] <= MUJOCO_MIN_VALUE:
        return [_finding(link, 'positive_definite', 'error',
                         f'a principal moment is zero: principal moments {_fmt(moments)} kg·m² (a body with no '
                         f'extent across one axis: an ideal rod or a point, not a part)', values,
                         _consistent_fix(link, geometry, recovering))]
    violation = float(-margins.min()) / largest
    if violation > 0.0:
        k = int(np.argmin(margins))
        i, j = [index for index in range(3) if index != k]
        values.update(triangle_margins=_floats(margins), violation_percent=100.0 * violation)
        severity = 'error' if violation > TRIANGLE_TOLERANCE else 'warning'
        message = (f'principal moments {_fmt(moments)} kg·m² violate the triangle inequality: '
                   f'λ{i + 1} + λ{j + 1} = {moments[i] + moments[j]:.6g} < λ{k + 1} = {moments[k]:.6g} '
                   f'(by {100.0 * violation:.3g} % of λmax); no rigid body has them'
                   + (' (rounding-level)' if severity == 'warning' else '')
                   + f'; pseudo-inertia smallest eigenvalue {pseudo_min:.4g}')
        return [_finding(link, 'triangle_inequality', severity, message, values,
                         _consistent_fix(link, geometry, recovering))]
    if pseudo_min < -NEGATIVE_MOMENT_TOLERANCE * float(np.abs(pseudo_eigenvalues).max()):
        return [_finding(link, 'pseudo_inertia', 'error',
                         f'pseudo-inertia J is not positive semi-definite (smallest eigenvalue {pseudo_min:.4g})',
                         values, _consistent_fix(link, geometry, recovering))]
    return []


def _consistent_fix(link: UrdfLink, geometry: Optional[_Geometry], recovering: list) -> str:
    if recovering:
        return f'use the tensor recovered by the {" / ".join(recovering)} finding on this link'
    inertial = link.inertial
    lines = []
    try:
        nearest = nearest_consistent_inertia(inertial.tensor())
        lines.append('nearest physically consistent inertia (same mass, CoM and frame; SDP):\n'
                     + _inertial_snippet(inertial.mass, inertial.origin.xyz, inertial.origin.rpy, nearest))
    except InertiaProjectionError as error:
        lines.append(f'no nearest consistent inertia: {error}')
    if geometry is not None and geometry.solid is not None:
        lines.append(f'or the uniform-density inertia of the {geometry.solid_source} geometry for this mass:\n'
                     + _geometry_snippet(inertial.mass, geometry.solid))
    return '\n'.join(lines)


def _row_major_slip(link: UrdfLink, geometry: Optional[_Geometry]) -> list:
    """``ixx ixy ixz iyy iyz izz`` filled from a full 3×3 matrix read row by row gives
    a b c b d e: ``iyy`` repeats ``ixy``, the true iyy sits in ``iyz``, the true iyz in ``izz``
    and the true izz is lost."""
    inertial = link.inertial
    scale = max(abs(inertial.ixx), abs(inertial.iyy), abs(inertial.izz), abs(inertial.iyz))
    if scale == 0.0 or abs(inertial.iyy - inertial.ixy) > 1e-9 * scale or inertial.iyz <= 0.0 \
            or _all_entries_equal(inertial):  # iyy == ixy holds trivially for a placeholder
        return []
    if inertial.ixy == 0.0 and not inertial.ixx > 0.0:
        return []
    recovered = np.array([[inertial.ixx, inertial.ixy, inertial.ixz],
                          [inertial.ixy, inertial.iyz, inertial.izz],
                          [inertial.ixz, inertial.izz, 0.0]])
    estimate, interval = _izz_estimate(recovered, inertial, geometry)
    values = {'iyy_equals_ixy': inertial.iyy, 'recovered_known_entries': {
        'ixx': inertial.ixx, 'ixy': inertial.ixy, 'ixz': inertial.ixz, 'iyy': inertial.iyz, 'iyz': inertial.izz}}
    message = (f'iyy = ixy = {inertial.iyy:.6g}: the six values look like the first six entries of the full 3×3 '
               f'matrix read row by row (ixx ixy ixz | iyx iyy iyz), so iyy={inertial.iyz:.6g} and '
               f'iyz={inertial.izz:.6g}; izz was cut off')
    if estimate is None:
        suggestion = ('no izz makes the recovered entries physically consistent: re-export the inertia tensor '
                      '(upper triangle: ixx ixy ixz iyy iyz izz)')
    else:
        recovered[2, 2] = estimate
        values.update(recovered_tensor=_floats(recovered), izz_admissible_interval=_floats(interval))
        suggestion = (f'recovered tensor; izz is not in the file: {estimate:.6g} is an estimate '
                      f'(admissible {interval[0]:.6g} … {interval[1]:.6g} kg·m²), take the real one from CAD:\n'
                      + _inertial_snippet(inertial.mass, inertial.origin.xyz, inertial.origin.rpy, recovered))
    return [_finding(link, 'row_major_slip', 'error', message, values, suggestion)]


def _izz_estimate(recovered: np.ndarray, inertial, geometry: Optional[_Geometry]) -> tuple:
    """The izz interval keeping ½tr(I)·1 − I ⪰ 0, and a value in it: the geometry's izz
    (clipped into the interval) if the link has readable geometry, else the midpoint."""
    upper = recovered[0, 0] + recovered[1, 1]
    candidates = np.linspace(0.0, upper, 2001)
    trials = np.repeat(recovered[None], len(candidates), axis=0)
    trials[:, 2, 2] = candidates
    second_moments = 0.5 * np.trace(trials, axis1=1, axis2=2)[:, None, None] * np.eye(3) - trials
    feasible = np.flatnonzero(np.linalg.eigvalsh(second_moments)[:, 0] >= 0.0)
    if len(feasible) == 0:
        return None, None
    step = candidates[1] - candidates[0]
    interval = (_feasibility_edge(recovered, candidates[feasible[0]], candidates[feasible[0]] - step),
                _feasibility_edge(recovered, candidates[feasible[-1]], candidates[feasible[-1]] + step))
    if geometry is not None and geometry.solid is not None and not any(inertial.origin.rpy):
        return float(np.clip(geometry.solid.inertia_com(inertial.mass)[2, 2], *interval)), interval
    return 0.5 * (interval[0] + interval[1]), interval


def _feasibility_edge(recovered: np.ndarray, inside: float, outside: float) -> float:
    """Bisect izz between a feasible and an infeasible value to the edge of ½tr(I)·1 − I ⪰ 0."""
    trial = recovered.copy()
    for _ in range(60):
        middle = 0.5 * (inside + outside)
        trial[2, 2] = middle
        if np.linalg.eigvalsh(0.5 * np.trace(trial) * np.eye(3) - trial)[0] >= 0.0:
            inside = middle
        else:
            outside = middle
    return float(inside)


# ---------------------------------------------------------------------------------------
# Geometry checks

def _geometry_findings(link: UrdfLink, geometry: _Geometry) -> list:
    inertial = link.inertial
    com = np.array(inertial.origin.xyz)
    extent = geometry.upper - geometry.lower
    if _is_marker(geometry, inertial.mass):
        return _bound_findings(link, geometry, com, marker=True)
    margin = COM_MARGIN_FRACTION * float(extent.max()) + 1e-3
    outside = np.maximum(geometry.lower - margin - com, com - geometry.upper - margin)
    findings = []
    if outside.max() > 0.0:
        findings.append(_finding(link, 'com_in_geometry', 'warning',
                                 f'CoM {_fmt(com)} m lies {outside.max() + margin:.4g} m outside the bounding box '
                                 f'{_fmt(geometry.lower)} … {_fmt(geometry.upper)} m of its {geometry.source} geometry',
                                 {'com': _floats(com), 'box_lower': _floats(geometry.lower),
                                  'box_upper': _floats(geometry.upper), 'margin': margin},
                                 'check <inertial><origin xyz>: it is the CoM in the link frame '
                                 '(not in the parent joint or CAD frame)'
                                 + _geometry_alternative(inertial.mass, geometry)))
        return findings
    findings.extend(_bound_findings(link, geometry, com))
    if geometry.solid is not None:
        findings.extend(_pattern_findings(link, geometry))
    return findings


def _is_marker(geometry: _Geometry, mass: float) -> bool:
    """The geometry cannot hold the link's mass (its bounding box would need a density over
    :data:`MAX_MATERIAL_DENSITY`): a marker such as a 1 mm sphere, not the body."""
    volume = float(np.prod(np.maximum(geometry.upper - geometry.lower, 0.0)))
    return mass > MAX_MATERIAL_DENSITY * volume


def _bound_findings(link: UrdfLink, geometry: _Geometry, com: np.ndarray, marker: bool = False) -> list:
    """A body of mass m inside a box has, about any axis n through its CoM c, at most
    m · max over the box corners p of |(p−c) × n|² (the squared distance is convex).
    Against a ``marker`` geometry (one that cannot hold the mass) only a warning."""
    inertial = link.inertial
    if inertial.mass < SUBSTANTIAL_MASS:
        return []  # a token inertia on a sub-gram marker frame does not matter
    moments, axes = principal_inertia(inertial.tensor_in_link_frame())
    corners = np.array([[x, y, z] for x in (geometry.lower[0], geometry.upper[0])
                        for y in (geometry.lower[1], geometry.upper[1])
                        for z in (geometry.lower[2], geometry.upper[2])]) - com
    bounds = np.array([inertial.mass * np.max(np.sum(np.cross(corners, axis) ** 2, axis=1)) for axis in axes.T])
    if np.any(bounds <= 0.0):
        return []  # flat or point-like geometry: no meaningful bound
    ratios = moments / bounds
    worst = int(np.argmax(ratios))
    if ratios[worst] <= 1.0 + GEOMETRY_BOUND_TOLERANCE:
        return []
    severity = 'error' if ratios[worst] > GEOMETRY_BOUND_ERROR_RATIO and not marker else 'warning'
    gyration = math.sqrt(max(float(moments[worst]), 0.0) / inertial.mass)
    return [_finding(link, 'geometry_bound', severity,
                     f'principal moment λ{worst + 1} = {moments[worst]:.6g} kg·m² is {ratios[worst]:.3g}× the '
                     f'largest value ({bounds[worst]:.4g} kg·m²) a {inertial.mass:.4g} kg body inside its '
                     f'{geometry.source} bounding box can have'
                     + (f' (the geometry is only a marker: it cannot hold the mass; the inertia needs a radius of '
                        f'gyration of {gyration:.3g} m)' if marker else ''),
                     {'principal_moments': _floats(moments), 'admissible_bounds': _floats(bounds),
                      'ratios': _floats(ratios), 'box_lower': _floats(geometry.lower),
                      'box_upper': _floats(geometry.upper)},
                     'check the units (g·mm² or kg·mm² instead of kg·m²?) and the reference point (about the CoM, '
                     'not the joint)' + _geometry_alternative(inertial.mass, geometry))]


def _pattern_findings(link: UrdfLink, geometry: _Geometry) -> list:
    """Compare the URDF tensor (link axes) with the geometry's uniform-density tensor for
    the same mass, and test three transcription hypotheses that would explain a mismatch."""
    inertial = link.inertial
    reference = geometry.solid.inertia_com(inertial.mass)
    if np.linalg.norm(np.array(inertial.origin.xyz) - geometry.solid.centroid) > 0.25 * float(
            np.max(geometry.upper - geometry.lower)):
        return []
    rotation = inertial.origin.rotation()
    file_tensor = inertial.tensor()
    link_tensor = rotation @ file_tensor @ rotation.T
    distance = _relative_distance(link_tensor, reference)
    if distance <= PATTERN_AGREEMENT:
        return []
    hypotheses = [_sign_hypothesis(link, file_tensor, rotation, reference),
                  _origin_hypothesis(link, link_tensor, reference),
                  _rotation_hypothesis(link, link_tensor, reference)]
    explained = [h for h in hypotheses if h is not None and h[0] <= PATTERN_AGREEMENT and h[0] < 0.5 * distance]
    if explained:
        best = min(explained, key=lambda h: h[0])
        best[1].values.update(distance_to_geometry_as_written=distance, distance_to_geometry_corrected=best[0])
        return [best[1]]
    if geometry.mesh_files:
        return [_finding(link, 'mesh_inertia', 'info',
                         f'the URDF inertia differs by {100 * distance:.3g} % (Frobenius) from the uniform-density '
                         f'inertia of its mesh for the same mass; fine if the density is not uniform',
                         {'urdf_inertia_link_axes': _floats(link_tensor), 'mesh_inertia_link_axes': _floats(reference),
                          'relative_difference': distance},
                         'mesh-derived inertial for comparison:\n' + _geometry_snippet(inertial.mass, geometry.solid))]
    return []


def _sign_hypothesis(link: UrdfLink, file_tensor: np.ndarray, rotation: np.ndarray, reference: np.ndarray):
    products = np.array([file_tensor[0, 1], file_tensor[0, 2], file_tensor[1, 2]])
    if np.abs(products).max() < 0.05 * np.trace(reference):
        return None
    best = None
    for flips in ((-1, -1, -1), (-1, 1, 1), (1, -1, 1), (1, 1, -1), (-1, -1, 1), (-1, 1, -1), (1, -1, -1)):
        signs = np.ones((3, 3))
        signs[0, 1] = signs[1, 0] = flips[0]
        signs[0, 2] = signs[2, 0] = flips[1]
        signs[1, 2] = signs[2, 1] = flips[2]
        corrected = file_tensor * signs
        distance = _relative_distance(rotation @ corrected @ rotation.T, reference)
        if best is None or distance < best[0]:
            best = (distance, corrected, flips)
    distance, corrected, flips = best
    names = [name for name, flip in zip(('ixy', 'ixz', 'iyz'), flips) if flip < 0]
    inertial = link.inertial
    finding = _finding(link, 'product_sign', 'warning',
                       f'products of inertia {", ".join(names)} have the wrong sign: flipping them matches the '
                       f'geometry (URDF uses tensor entries, ixy = −∫ρxy dV; CAD tools often print +∫ρxy dV)',
                       {'flipped': names, 'recovered_tensor': _floats(corrected)},
                       'recovered tensor (signs of ' + ', '.join(names) + ' flipped):\n'
                       + _inertial_snippet(inertial.mass, inertial.origin.xyz, inertial.origin.rpy, corrected))
    return distance, finding


def _origin_hypothesis(link: UrdfLink, link_tensor: np.ndarray, reference: np.ndarray):
    inertial = link.inertial
    com = np.array(inertial.origin.xyz)
    shift = inertial.mass * (com @ com * np.eye(3) - np.outer(com, com))
    if np.trace(shift) < 0.1 * np.trace(reference):
        return None
    corrected = link_tensor - shift
    finding = _finding(link, 'inertia_about_origin', 'warning',
                       f'the inertia looks taken about the link origin, not the CoM: removing the parallel-axis '
                       f'term m(|c|²·1 − c cᵀ) (trace {np.trace(shift):.4g} kg·m²) matches the geometry',
                       {'parallel_axis_term': _floats(shift), 'recovered_tensor_link_axes': _floats(corrected)},
                       'recovered inertia about the CoM (link axes):\n'
                       + _inertial_snippet(inertial.mass, inertial.origin.xyz, (0.0, 0.0, 0.0), corrected))
    return _relative_distance(corrected, reference), finding


def _rotation_hypothesis(link: UrdfLink, link_tensor: np.ndarray, reference: np.ndarray):
    moments, axes = principal_inertia(link_tensor)
    reference_moments, reference_axes = principal_inertia(reference)
    if _largest_determined_misalignment(moments, axes, reference_moments, reference_axes) < ROTATION_MIN_ANGLE:
        return None  # only axes of (nearly) equal moments differ: those axes are arbitrary
    corrected = reference_axes @ np.diag(moments) @ reference_axes.T
    inertial = link.inertial
    finding = _finding(link, 'com_frame_rotation', 'warning',
                       'the principal moments match the geometry but the principal axes do not: the CoM frame '
                       '(<inertial><origin rpy>) or the tensor is rotated',
                       {'principal_moments': _floats(moments), 'geometry_principal_moments': _floats(reference_moments),
                        'recovered_tensor_link_axes': _floats(corrected)},
                       'the file\'s principal moments on the geometry\'s principal axes (link axes):\n'
                       + _inertial_snippet(inertial.mass, inertial.origin.xyz, (0.0, 0.0, 0.0), corrected))
    return _relative_distance(corrected, reference), finding


def _largest_determined_misalignment(moments, axes, reference_moments, reference_axes) -> float:
    """Largest angle [rad] between matching principal axes of two tensors, over the axes
    both determine: an axis whose moment is within :data:`ROTATION_DEGENERACY` (of the
    largest moment) of another one can turn freely in their common plane."""
    largest = max(float(np.max(np.abs(moments))), float(np.max(np.abs(reference_moments))))
    worst = 0.0
    for index in range(3):
        others = [other for other in range(3) if other != index]
        if min(abs(moments[index] - moments[other]) for other in others) < ROTATION_DEGENERACY * largest or \
                min(abs(reference_moments[index] - reference_moments[other]) for other in others) < \
                ROTATION_DEGENERACY * largest:
            continue
        cosine = min(1.0, abs(float(axes[:, index] @ reference_axes[:, index])))
        worst = max(worst, math.acos(cosine))
    return worst


def _geometry_alternative(mass: float, geometry: Optional[_Geometry]) -> str:
    if geometry is None or geometry.solid is None:
        return ''
    return (f'; the uniform-density inertia of the {geometry.solid_source} geometry for this mass is:\n'
            + _geometry_snippet(mass, geometry.solid))


# ---------------------------------------------------------------------------------------
# Cross-link patterns

def mirror_twin_name(name: str) -> Optional[str]:
    """The left/right counterpart of a link name (``left_x``↔``right_x``, ``l_x``↔``r_x``,
    ``lf_x``↔``rf_x``, ``x_l``↔``x_r``...), or None if the name has no side token."""
    tokens = name.split('_')
    for index, token in enumerate(tokens):
        twin = _MIRROR_TOKENS.get(token.lower())
        if twin is not None:
            twin = twin.upper() if token.isupper() else twin.capitalize() if token[0].isupper() else twin
            return '_'.join(tokens[:index] + [twin] + tokens[index + 1:])
    return None


def _mirror_twin_findings(context: _Context) -> list:
    links = context.description.links
    findings, seen = [], set()
    for name, link in links.items():
        twin_name = mirror_twin_name(name)
        if twin_name not in links or frozenset((name, twin_name)) in seen:
            continue
        seen.add(frozenset((name, twin_name)))
        twin = links[twin_name]
        if {name, twin_name} & set(context.implausible) or not (link.inertial and twin.inertial) or \
                link.inertial.mass <= 0.0 or \
                not math.isclose(link.inertial.mass, twin.inertial.mass, rel_tol=1e-9):
            continue
        moments = np.sort(np.linalg.eigvalsh(link.inertial.tensor()))
        twin_moments = np.sort(np.linalg.eigvalsh(twin.inertial.tensor()))
        scale = max(np.abs(moments).max(), np.abs(twin_moments).max())
        difference = float(np.abs(moments - twin_moments).max())
        if difference <= MIRROR_TOLERANCE * scale:
            continue
        findings.extend(_twin_pair_findings(link, twin, moments, twin_moments, difference / scale))
    return findings


def _twin_pair_findings(link: UrdfLink, twin: UrdfLink, moments, twin_moments, relative: float) -> list:
    broken = {candidate.name: not _is_consistent(candidate.inertial.tensor()) for candidate in (link, twin)}
    values = {'twin': twin.name, 'mass': link.inertial.mass, 'principal_moments': _floats(moments),
              'twin_principal_moments': _floats(twin_moments), 'relative_difference': relative}
    if broken[link.name] != broken[twin.name]:
        bad, good = (link, twin) if broken[link.name] else (twin, link)
        mirrored = _SAGITTAL_MIRROR @ good.inertial.tensor_in_link_frame() @ _SAGITTAL_MIRROR
        if bad is twin:
            values.update(twin=link.name, principal_moments=_floats(twin_moments),
                          twin_principal_moments=_floats(moments))
        values['recovered_tensor_link_axes'] = _floats(mirrored)
        return [_finding(bad, 'mirror_twin', 'warning',
                         f'mirror twin "{good.name}" has the same mass ({bad.inertial.mass:.6g} kg) and a consistent '
                         f'inertia, this link does not (principal moments differ by {100 * relative:.3g} %)',
                         values,
                         'the twin\'s inertia mirrored through the x-z plane (y lateral, REP 103; ixy and iyz '
                         'change sign), link axes:\n'
                         + _inertial_snippet(bad.inertial.mass, bad.inertial.origin.xyz, (0.0, 0.0, 0.0), mirrored))]
    findings = []
    for this, other in ((link, twin), (twin, link)):
        own = dict(values, twin=other.name)
        if this is twin:
            own.update(principal_moments=_floats(twin_moments), twin_principal_moments=_floats(moments))
        findings.append(_finding(this, 'mirror_twin', 'warning',
                                 f'mirror twin "{other.name}" has the same mass but principal moments that differ by '
                                 f'{100 * relative:.3g} %', own,
                                 'the file does not say which side is right: compare both with CAD'))
    return findings


def _mirror_sign_findings(context: _Context) -> list:
    """Pairs of links of equal mass and equal moments whose CoMs are mirror images through a
    coordinate plane of the link frame (one coordinate negated), yet whose products of inertia
    are identical: mirroring through the plane normal to axis k flips the two products that
    involve k, so one of the two tensors kept the other's signs."""
    by_key: dict = {}  # a mirror partner has the same key once one CoM coordinate is negated
    for link in context.description.links.values():
        if _is_substantial(link) and link.name not in context.implausible and not any(link.inertial.origin.rpy):
            by_key.setdefault(_mirror_key(link.inertial, np.array(link.inertial.origin.xyz)), []).append(link)
    findings, seen = [], set()
    for members in list(by_key.values()):
        for first in members:
            com = np.array(first.inertial.origin.xyz)
            for axis in range(3):
                if abs(com[axis]) <= MIRROR_MIN_OFFSET:
                    continue
                mirrored = com.copy()
                mirrored[axis] = -mirrored[axis]
                for second in by_key.get(_mirror_key(first.inertial, mirrored), []):
                    pair = frozenset((first.name, second.name))
                    if pair in seen or second is first or _mirror_axis(first.inertial, second.inertial) != axis:
                        continue
                    seen.add(pair)
                    findings.extend(_mirror_sign_pair(first, second, axis))
    return findings


def _mirror_key(inertial, com: np.ndarray) -> tuple:
    return tuple(float(f'{value:.6g}') for value in (inertial.mass, inertial.ixx, inertial.iyy, inertial.izz, *com))


def _mirror_axis(first, second) -> Optional[int]:
    """The axis k whose CoM coordinate the mirror negates (the others equal, the tensors'
    diagonals equal, the products identical and non-zero where they involve k), else None."""
    a, b = np.array(first.origin.xyz), np.array(second.origin.xyz)
    tolerance = 1e-6 + 1e-6 * float(np.abs(a).max())
    first_tensor, second_tensor = first.tensor(), second.tensor()
    if not np.allclose(np.diag(first_tensor), np.diag(second_tensor), rtol=1e-6, atol=0.0) or \
            not np.allclose(first_tensor, second_tensor, rtol=1e-9, atol=1e-15):
        return None
    for axis in range(3):
        others = [other for other in range(3) if other != axis]
        involved = [first_tensor[axis, other] for other in others]
        if abs(a[axis]) > MIRROR_MIN_OFFSET and abs(a[axis] + b[axis]) <= tolerance and \
                np.all(np.abs(a[others] - b[others]) <= tolerance) and \
                max(abs(value) for value in involved) > MIRROR_SIGN_MIN_PRODUCT * np.trace(first_tensor):
            return axis
    return None


def _mirror_sign_pair(first: UrdfLink, second: UrdfLink, axis: int) -> list:
    names = 'xyz'
    tensor = first.inertial.tensor()
    involved = [f'i{"".join(sorted(names[axis] + names[other]))}' for other in range(3)
                if other != axis and tensor[axis, other] != 0.0]
    mirror = np.ones(3)
    mirror[axis] = -1.0
    flipped = np.diag(mirror) @ first.inertial.tensor() @ np.diag(mirror)
    findings = []
    for this, other in ((first, second), (second, first)):
        findings.append(_finding(this, 'product_sign', 'warning',
                                 f'its CoM mirrors the CoM of "{other.name}" through the plane {names[axis]} = 0 '
                                 f'(same mass and moments), but {" and ".join(involved)} '
                                 f'{"has" if len(involved) == 1 else "have"} the same sign on both: '
                                 f'a mirror image flips them, so one of the two tensors is wrong',
                                 {'twin': other.name, 'mirror_axis': names[axis], 'com': list(this.inertial.origin.xyz),
                                  'twin_com': list(other.inertial.origin.xyz),
                                  'mirrored_tensor_of_twin': _floats(flipped)},
                                 f'check which side CAD agrees with; the mirror image of the other link\'s tensor '
                                 f'(signs of {", ".join(involved)} flipped) is:\n'
                                 + _inertial_snippet(this.inertial.mass, this.inertial.origin.xyz, (0.0, 0.0, 0.0),
                                                     flipped)))
    return findings


def _mimic_findings(description: UrdfDescription) -> list:
    """A ``<mimic>`` that cannot be modelled, reported on the follower's child link."""
    findings = []
    for joint_name, reason in mimic_problems(description.joints):
        joint = description.joints[joint_name]
        findings.append(Finding(joint.child, 'mimic', 'warning',
                                f'{reason}: the coupling is ignored by MuJoCo and pinocchio\'s parser, and '
                                'robot_dynamics refuses to build a dynamics model from this file',
                                {'joint': joint_name, 'leader': joint.mimic.joint},
                                'name an existing, moving, non-mimic joint in <mimic joint=...>, or remove the <mimic>',
                                CONSUMERS['mimic']))
    return findings


def _placeholder_findings(context: _Context) -> list:
    groups: dict = {}
    for link in context.description.links.values():
        if _is_substantial(link) and link.name not in context.implausible:
            key = tuple(float(f'{value:.12g}') for value in link.inertial.tensor()[np.triu_indices(3)])
            groups.setdefault(key, []).append(link)
    findings = []
    for members in groups.values():
        masses = {member.inertial.mass for member in members}
        if len(members) < 2 or _legitimately_equal(context, members):
            continue
        names = [member.name for member in members]
        for member in members:
            geometry = context.geometry(member)
            findings.append(_finding(member, 'placeholder', 'warning',
                                     f'identical inertia tensor on {len(members)} links ({", ".join(names)}) with '
                                     f'{"different masses" if len(masses) > 1 else "different geometry"}: a copied '
                                     'placeholder',
                                     {'links': names, 'masses': sorted(masses),
                                      'tensor': _floats(member.inertial.tensor())},
                                     'replace with each link\'s own inertia from CAD'
                                     + (_geometry_alternative(member.inertial.mass, geometry) if geometry else '')))
    return findings


def _is_substantial(link: UrdfLink) -> bool:
    """A link whose inertia matters for a cross-link comparison: over 1 g, non-zero tensor
    (dummy frames of 0.1 g with a token inertia are immaterial)."""
    inertial = link.inertial
    return bool(inertial is not None and inertial.mass > SUBSTANTIAL_MASS
                and float(np.abs(inertial.tensor()).max()) > NEGLIGIBLE_GYRATION_RADIUS ** 2 * inertial.mass)


def _is_isotropic(tensor: np.ndarray) -> bool:
    return bool(np.allclose(tensor, tensor[0, 0] * np.eye(3), rtol=1e-9, atol=0.0))


def _legitimately_equal(context: _Context, members: list) -> bool:
    """Identical or mirrored parts: equal masses (within 1 %) and either an anisotropic tensor
    (a made-up value is a multiple of the identity) or, where the links have readable
    geometry, the same sorted bounding-box extents (within 25 %; a mirror image keeps them,
    and mirroring leaves a tensor without products unchanged). Equal tensors on different
    masses are a copy: an inertia scales with its mass."""
    masses = [member.inertial.mass for member in members]
    if max(masses) > (1.0 + PLACEHOLDER_MASS_TOLERANCE) * min(masses):
        return False
    tensor = members[0].inertial.tensor()
    if not _is_isotropic(tensor):
        return True  # the same mass and the same anisotropic tensor: the same part, not a made-up value
    extents = []
    for member in members:
        geometry = context.geometry(member)
        if geometry is not None and geometry.lower is not None:
            extents.append(np.sort(geometry.upper - geometry.lower))
    return all(np.all(np.abs(extent - extents[0]) <= PLACEHOLDER_EXTENT_TOLERANCE * np.maximum(extents[0], 1e-3))
               for extent in extents)


# ---------------------------------------------------------------------------------------
# Helpers

def _all_entries_equal(inertial) -> bool:
    """ixx = ixy = ixz = iyy = iyz = izz ≠ 0: a placeholder (often 1e-6 or 1e-3)."""
    entries = np.array([inertial.ixx, inertial.ixy, inertial.ixz, inertial.iyy, inertial.iyz, inertial.izz])
    return bool(entries[0] != 0.0 and np.all(np.abs(entries - entries[0]) <= 1e-12 * abs(entries[0])))


def _is_consistent(tensor: np.ndarray) -> bool:
    moments = np.linalg.eigvalsh(tensor)
    largest = float(np.abs(moments).max())
    return largest > 0.0 and float(triangle_margins(moments).min()) >= -TRIANGLE_TOLERANCE * largest \
        and moments[0] >= -NEGATIVE_MOMENT_TOLERANCE * largest


def _pseudo_inertia(inertial) -> np.ndarray:
    """4×4 pseudo-inertia about the link origin (pinocchio refuses to build a non-physical
    ``Inertia``, so the pinocchio-order 10-vector is assembled here)."""
    com = np.array(inertial.origin.xyz)
    about_origin = parallel_axis(inertial.tensor_in_link_frame(), inertial.mass, com)
    return pseudo_inertia_from_vector(np.concatenate((
        [inertial.mass], inertial.mass * com, about_origin[[0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]])))


def _relative_distance(tensor: np.ndarray, reference: np.ndarray) -> float:
    return float(np.linalg.norm(tensor - reference) / np.linalg.norm(reference))


def _finding(link: UrdfLink, check: str, severity: str, message: str, values: dict,
             suggestion: Optional[str]) -> Finding:
    return Finding(link.name, check, severity, message, _plain(values), suggestion, CONSUMERS[check])


def _plain(value):
    """``value`` with numpy scalars and arrays turned into Python floats and lists (YAML/JSON-ready)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(item) for item in value]
    if isinstance(value, (np.floating, np.integer)):
        return float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _inertial_snippet(mass: float, xyz, rpy, tensor: np.ndarray) -> str:
    """A URDF ``<inertial>`` block: CoM ``xyz`` [m] and ``rpy`` [rad] in the link frame, the
    tensor about the CoM in that (rpy) frame [kg·m²]."""
    xyz = _without_round_off(np.asarray(xyz, dtype=float), 1.0)
    tensor = _without_round_off(np.asarray(tensor, dtype=float), float(np.max(np.abs(tensor))))
    number = '{:.9g}'.format
    return (f'<inertial>\n'
            f'  <origin xyz="{" ".join(number(v) for v in xyz)}" rpy="{" ".join(number(v) for v in rpy)}"/>\n'
            f'  <mass value="{number(mass)}"/>\n'
            f'  <inertia ixx="{number(tensor[0, 0])}" ixy="{number(tensor[0, 1])}" ixz="{number(tensor[0, 2])}" '
            f'iyy="{number(tensor[1, 1])}" iyz="{number(tensor[1, 2])}" izz="{number(tensor[2, 2])}"/>\n'
            f'</inertial>')


def _without_round_off(values: np.ndarray, scale: float) -> np.ndarray:
    """Entries below 1e-12 × ``scale`` set to exactly 0 (floating-point noise in a snippet)."""
    return np.where(np.abs(values) < 1e-12 * scale, 0.0, values)


def _geometry_snippet(mass: float, solid: SolidMassProperties) -> str:
    return _inertial_snippet(mass, solid.centroid, (0.0, 0.0, 0.0), solid.inertia_com(mass))


def _floats(array) -> list:
    """A JSON/YAML-ready nested list of Python floats."""
    return np.asarray(array, dtype=float).tolist()


def _fmt(vector) -> str:
    return '(' + ', '.join(f'{v:.4g}' for v in np.asarray(vector, dtype=float)) + ')'

