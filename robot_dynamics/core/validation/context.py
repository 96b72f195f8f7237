"""What the checks know about a description: which links move, the mass below each link,
links with implausible magnitudes, and each link's geometry as a uniform-density solid.

Geometry is the union of a link's collision and visual shapes (boxes, cylinders, spheres,
meshes incl. COLLADA) in the link frame [m]; solids carry volume [m³], centroid [m] and
inertia per unit mass about the centroid [m²]. Meshes are read once per file and cached.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from robot_dynamics.core.model.inertia import (
    InertialParameters,
    box_inertia,
    cylinder_inertia,
    sphere_inertia,
)
from robot_dynamics.core.model.urdf import (
    MOVING_JOINT_TYPES,
    UrdfDescription,
    UrdfGeometry,
    UrdfLink,
)
from robot_dynamics.core.validation.mesh_inertia import (
    MeshLoadError,
    MeshResolutionError,
    SolidMassProperties,
    load_mesh,
    mesh_mass_properties,
    resolve_mesh_path,
)
from robot_dynamics.core.validation.thresholds import PLAUSIBLE_LIMITS


def implausible_values(link: UrdfLink) -> list:
    """Descriptions of the link's values beyond :data:`PLAUSIBLE_LIMITS`."""
    checks = []
    if link.inertial:
        inertial = link.inertial
        checks += [('mass', inertial.mass, 'mass', 'kg')]
        checks += [
            (key, getattr(inertial, key), 'inertia', 'kg·m²')
            for key in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')
        ]
        checks += [('CoM', value, 'length', 'm') for value in inertial.origin.xyz]
    for shape in link.collisions + link.visuals:
        sizes = (
            list(shape.size or ())
            + [shape.radius or 0.0, shape.length or 0.0]
            + list(shape.origin.xyz)
        )
        checks += [
            (f'{shape.kind} geometry', value, 'length', 'm') for value in sizes + list(shape.scale)
        ]
    return [
        f'{name} {value:.3g} {unit}'
        for name, value, kind, unit in checks
        if abs(value) > PLAUSIBLE_LIMITS[kind]
    ]


@dataclass
class LinkGeometry:
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


class DescriptionContext:
    """One description's tree facts for the checks: parent joints, moving links, links welded
    to the world, masses [kg] below each link, implausible links, and each link's geometry
    (built on first use, meshes read once)."""

    def __init__(
        self,
        description: UrdfDescription,
        package_paths: dict,
        allowed_roots: tuple,
        floating_base: bool,
    ):
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
        self.implausible = {
            name: reasons
            for name, reasons in (
                (link.name, implausible_values(link)) for link in description.links.values()
            )
            if reasons
        }
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
        """Mass [kg] of the link plus its descendants (only through fixed joints if
        ``fixed_only``)."""
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
                masses[joint.child]
                for joint in self.children[name]
                if joint.type == 'fixed' or not fixed_only
            )
        return masses

    def geometry(self, link: UrdfLink) -> Optional[LinkGeometry]:
        """The union of the link's collision and visual geometry (a collision proxy is often
        far smaller than the body the visual mesh shows); the uniform solid is the collision
        set's if every collision shape is a closed solid, else the visual set's."""
        if link.name not in self._geometry:
            self._geometry[link.name] = (
                self._build_geometry(link) if (link.collisions or link.visuals) else None
            )
        return self._geometry[link.name]

    def _build_geometry(self, link: UrdfLink) -> LinkGeometry:
        collision, visual = self._shape_set(link.collisions), self._shape_set(link.visuals)
        parts = [part for part in (collision, visual) if part['shapes']]
        # a reason shared by the collision and the visual meshes (an unknown package) said once
        skipped = list(dict.fromkeys(reason for part in parts for reason in part['skipped']))
        source = ' and '.join(
            name for name, part in (('collision', collision), ('visual', visual)) if part['shapes']
        )
        lower = upper = None
        points = [block for part in parts for block in part['points']]
        if points and not skipped:
            stacked = np.vstack(points)
            lower, upper = stacked.min(axis=0), stacked.max(axis=0)
        solid, solid_source = None, source
        for name, part in (('collision', collision), ('visual', visual)):
            if (
                part['shapes']
                and part['solids']
                and all(item is not None for item in part['solids'])
                and not part['skipped']
            ):
                solid, solid_source = _union(part['solids']), name
                break
        open_meshes = [name for part in parts for name in part['open']]
        skipped.extend(
            f'{name} is not a closed (watertight) mesh: no mesh-derived inertia from it'
            for name in dict.fromkeys(open_meshes)
        )
        return LinkGeometry(
            lower,
            upper,
            solid,
            source,
            [f for part in parts for f in part['mesh_files']],
            skipped,
            [item for part in parts for item in part['inverted']],
            solid_source,
        )

    def _shape_set(self, shapes: tuple) -> dict:
        """Points (link frame), uniform solids (None for an open mesh) and notes of some shapes."""
        part = {
            'shapes': shapes,
            'points': [],
            'solids': [],
            'mesh_files': [],
            'skipped': [],
            'inverted': [],
            'open': [],
        }
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
            part['solids'].append(
                None if solid is None else _transformed(solid, rotation, translation)
            )
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
            solid = mesh_mass_properties(
                vertices * scale,
                faces if np.prod(scale) > 0 else faces[:, ::-1],
                solid.is_watertight,
            )
        return vertices * scale, solid, path


def _primitive_corners(shape: UrdfGeometry) -> np.ndarray:
    if shape.kind == 'box':
        half = np.array(shape.size) / 2.0
    elif shape.kind == 'cylinder':
        half = np.array([shape.radius, shape.radius, shape.length / 2.0])
    else:
        half = np.full(3, shape.radius)
    signs = np.array(
        [[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float
    )
    return signs * half


def _primitive_solid(shape: UrdfGeometry) -> SolidMassProperties:
    if shape.kind == 'box':
        volume, per_mass = float(np.prod(shape.size)), box_inertia(1.0, shape.size)
    elif shape.kind == 'cylinder':
        volume = math.pi * shape.radius**2 * shape.length
        per_mass = cylinder_inertia(1.0, shape.radius, shape.length)
    else:
        volume, per_mass = 4.0 / 3.0 * math.pi * shape.radius**3, sphere_inertia(1.0, shape.radius)
    return SolidMassProperties(volume, np.zeros(3), per_mass)


def _transformed(
    solid: SolidMassProperties, rotation: np.ndarray, translation: np.ndarray
) -> SolidMassProperties:
    return SolidMassProperties(
        solid.volume,
        rotation @ solid.centroid + translation,
        rotation @ solid.inertia_per_mass @ rotation.T,
        solid.is_watertight,
    )


def _union(solids: list) -> Optional[SolidMassProperties]:
    """Uniform-density union of disjoint solids (overlaps count twice), link frame."""
    volumes = np.array([abs(solid.volume) for solid in solids])
    if volumes.sum() <= 0.0:
        return None
    weights = volumes / volumes.sum()
    centroid = sum(w * solid.centroid for w, solid in zip(weights, solids))
    parts = [
        InertialParameters(w, solid.centroid, w * solid.inertia_per_mass)
        for w, solid in zip(weights, solids)
    ]
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return SolidMassProperties(float(volumes.sum()), centroid, total.inertia_com)
