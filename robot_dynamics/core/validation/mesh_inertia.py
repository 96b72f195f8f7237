"""Mass properties of closed triangle meshes, and safe resolution of URDF mesh filenames.

Mass properties use the signed-tetrahedron decomposition (the exact polyhedral integrals of
Mirtich 1996, per tetrahedron as in Tonon 2005): every
triangle (a, b, c) forms a tetrahedron with the mesh frame origin, with signed volume
v = a·(b×c)/6, first moment v·(a+b+c)/4 and second moment (v/20)(aaᵀ+bbᵀ+ccᵀ+ssᵀ),
s = a+b+c. The signs make the sums exact for any origin position; a mesh whose normals
point inwards has a *negative* total volume, which is how inverted meshes are detected.
Requirements: a closed (watertight) mesh and uniform density.

Mesh files named by a robot description are untrusted paths. :func:`resolve_mesh_path`
only ever returns a file inside a directory the caller vouched for: a ``package://NAME/``
share directory (from an explicit ``package_paths`` map first, then the ament index), or
a ``file://`` / plain path that resolves (after following symlinks) under one of the
``allowed_roots``. Files over :data:`MAX_MESH_BYTES` are refused before being read.
Lengths in the mesh file's unit times the URDF ``scale`` (URDF meshes are in metres).
"""

from __future__ import annotations

import io
import math
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence

import numpy as np

from robot_dynamics.core.errors import RobotDynamicsError

MAX_MESH_BYTES = 50 * 1024 * 1024
"""Largest mesh file read (bytes); a collision mesh is rarely over a few MB."""

MESH_FORMATS = ('stl', 'obj', 'ply', 'off', 'glb', 'dae')
"""Formats read: STL, OBJ, PLY, OFF, GLB with trimesh; COLLADA (.dae) with the reader below
(triangles, polylists and polygons of the visual scene, node transforms, ``<unit meter>``;
a DOCTYPE or ENTITY declaration is refused, external references are never followed)."""

MAX_MESH_FACES = 200_000
"""Largest triangle count read (a collision mesh rarely has over 50 000; a 350 000-triangle
visual mesh costs seconds to parse). Larger meshes are skipped with the reason, counted
from the file's header (binary STL, PLY), its ``count`` attributes (COLLADA) or its lines
(ASCII STL, OBJ, OFF) before parsing."""

MESH_CACHE_ENTRIES = 256
"""Meshes kept in memory by :func:`load_mesh` (keyed by real path, size and modification
time), so robots and variants that share meshes read each file once."""

_UNSAFE_XML = re.compile(rb'<!\s*(DOCTYPE|ENTITY)', re.IGNORECASE)
_COLLADA_NODE_DEPTH = 64
_COLLADA_COUNT = re.compile(rb'<(?:triangles|polylist|polygons)\b[^>]*?\bcount="(\d{1,12})"')

_PACKAGE_NAME = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.-]*$')


class MeshResolutionError(RobotDynamicsError):
    """A mesh filename cannot be turned into a file that may be read (the message says why)."""


class MeshLoadError(RobotDynamicsError):
    """A resolved mesh file cannot be read as a triangle mesh (format, size, empty)."""


@dataclass(frozen=True)
class SolidMassProperties:
    """A uniform-density solid (a mesh or a primitive): signed volume [m³], centroid [m] and
    inertia about the centroid per unit mass [m²].

    ``volume`` is negative for an inward-facing mesh; ``centroid`` and ``inertia_per_mass``
    are still correct then (numerator and denominator flip together). Frame: the one the
    vertices were given in (the mesh file's, scaled; or the link frame once placed).
    """

    volume: float
    centroid: np.ndarray
    inertia_per_mass: np.ndarray
    is_watertight: bool = True

    def inertia_com(self, mass: float) -> np.ndarray:
        """Inertia tensor about the centroid [kg·m²] of a uniform body of ``mass`` [kg]."""
        return mass * self.inertia_per_mass

    def __repr__(self) -> str:
        return (
            f'SolidMassProperties(volume={self.volume:.6g} m³, '
            f'centroid={np.round(self.centroid, 6).tolist()} m, watertight={self.is_watertight})'
        )


def mesh_mass_properties(
    vertices: np.ndarray, faces: np.ndarray, is_watertight: bool = True
) -> SolidMassProperties:
    """Signed-tetrahedron mass properties of a triangle mesh (Mirtich 1996; Tonon 2005).

    ``vertices`` (N×3) [m] in the mesh frame, ``faces`` (F×3) vertex indices, counter-
    clockwise seen from outside. Raises :class:`MeshLoadError` for an empty or flat mesh.
    """
    vertices = np.asarray(vertices, dtype=float)
    faces = np.asarray(faces, dtype=np.int64)
    if faces.ndim != 2 or faces.shape[1] != 3 or len(faces) == 0:
        raise MeshLoadError('mesh has no triangles')
    a, b, c = vertices[faces[:, 0]], vertices[faces[:, 1]], vertices[faces[:, 2]]
    signed_volumes = np.einsum('ij,ij->i', a, np.cross(b, c)) / 6.0
    volume = float(signed_volumes.sum())
    scale = float(np.abs(signed_volumes).sum())
    if scale == 0.0 or abs(volume) < 1e-12 * scale:
        raise MeshLoadError('mesh encloses no volume (open or flat surface)')
    s = a + b + c
    first_moment = (signed_volumes[:, None] * s).sum(axis=0) / 4.0
    second_moment = (
        np.einsum('i,ij,ik->jk', signed_volumes / 20.0, a, a)
        + np.einsum('i,ij,ik->jk', signed_volumes / 20.0, b, b)
        + np.einsum('i,ij,ik->jk', signed_volumes / 20.0, c, c)
        + np.einsum('i,ij,ik->jk', signed_volumes / 20.0, s, s)
    )
    centroid = first_moment / volume
    second_moment_centroid = second_moment / volume - np.outer(centroid, centroid)
    inertia_per_mass = np.trace(second_moment_centroid) * np.eye(3) - second_moment_centroid
    return SolidMassProperties(
        volume, centroid, 0.5 * (inertia_per_mass + inertia_per_mass.T), is_watertight
    )


def resolve_mesh_path(
    filename: str,
    package_paths: Optional[Mapping[str, str]] = None,
    allowed_roots: Sequence[str] = (),
) -> Path:
    """The file a URDF mesh ``filename`` names, only if it lies where it may be read.

    ``package://NAME/REST`` (or ``package:///NAME/REST``): under ``package_paths[NAME]``, else
    under the ament index share directory of NAME. ``file://PATH`` or a plain PATH (relative ones
    are tried against each
    root): only if the real path is inside one of ``allowed_roots``. Raises
    :class:`MeshResolutionError` with the reason otherwise (including a missing file).
    """
    if not filename:
        raise MeshResolutionError('the <mesh> has no filename')
    if filename.startswith('package://'):
        # package:///NAME/REST (an empty authority, as some exporters write) names package NAME too
        package, _, rest = filename[len('package://') :].lstrip('/').partition('/')
        return _inside(_package_directory(package, package_paths or {}), rest, filename)
    if '://' in filename and not filename.startswith('file://'):
        raise MeshResolutionError(f'{filename}: only package:// and file:// mesh URIs are read')
    path = filename[len('file://') :] if filename.startswith('file://') else filename
    if not allowed_roots:
        raise MeshResolutionError(
            f'{filename}: file paths are only read under allowed roots, and none are set'
        )
    reasons = []
    for root in allowed_roots:
        try:
            return _inside(root, path, filename)
        except MeshResolutionError as error:
            reasons.append(str(error))
    raise MeshResolutionError(
        reasons[0] if len(reasons) == 1 else f'{filename}: not a file under any allowed root'
    )


def _package_directory(package: str, package_paths: Mapping[str, str]) -> str:
    if not _PACKAGE_NAME.match(package):
        raise MeshResolutionError(f'package name "{package}" is not a valid ROS package name')
    if package in package_paths:
        return package_paths[package]
    try:
        from ament_index_python.packages import get_package_share_directory

        return get_package_share_directory(package)
    except Exception:  # ImportError, PackageNotFoundError, a broken index: all mean "not found"
        raise MeshResolutionError(
            f'package "{package}" is not known (not in the ament index of AMENT_PREFIX_PATH; '
            f'give --package-path {package}=DIR)'
        ) from None


def _inside(root: str, relative: str, filename: str) -> Path:
    real_root = os.path.realpath(root)
    candidate = os.path.realpath(os.path.join(real_root, relative))
    if os.path.commonpath([real_root, candidate]) != real_root:
        raise MeshResolutionError(f'{filename} resolves outside {real_root}; refused')
    if not os.path.isfile(candidate):
        raise MeshResolutionError(f'{filename}: no such file ({candidate})')
    return Path(candidate)


def load_mesh(path: Path, max_bytes: int = MAX_MESH_BYTES) -> tuple:
    """Vertices (N×3, file units; COLLADA: metres) and triangle faces (F×3) of a mesh file,
    and whether it is watertight. Refuses files over ``max_bytes`` and formats not in
    :data:`MESH_FORMATS`. Over :data:`MAX_MESH_FACES` triangles, faces is empty (F = 0):
    only the bounding box of the vertices is usable.

    The bytes are read here and handed to the parser without a resolver, so a mesh file cannot
    make it open other files (OBJ material libraries, glTF buffers, COLLADA references).
    Results are cached per real path, size and modification time.
    """
    path = Path(path)
    file_type = path.suffix.lower().lstrip('.')
    if file_type not in MESH_FORMATS:
        raise MeshLoadError(
            f'{path.name}: mesh format ".{file_type}" is not read (readable: '
            f'{", ".join(MESH_FORMATS)})'
        )
    status = path.stat()
    if status.st_size > max_bytes:
        raise MeshLoadError(
            f'{path.name} is {status.st_size} bytes, over the {max_bytes}-byte mesh limit'
        )
    key = (os.path.realpath(path), status.st_size, status.st_mtime_ns)
    if key not in _MESH_CACHE:
        with open(path, 'rb') as stream:
            data = stream.read(max_bytes + 1)
        try:
            _MESH_CACHE[key] = _parsed_mesh(path.name, data, file_type)
        except MeshLoadError as error:
            _MESH_CACHE[key] = error
        while len(_MESH_CACHE) > MESH_CACHE_ENTRIES:
            _MESH_CACHE.pop(next(iter(_MESH_CACHE)))
    result = _MESH_CACHE[key]
    if isinstance(result, MeshLoadError):
        raise result
    return result


_MESH_CACHE: dict = {}


def _parsed_mesh(name: str, data: bytes, file_type: str) -> tuple:
    estimate = _face_count_estimate(data, file_type)
    if estimate > MAX_MESH_FACES:
        raise MeshLoadError(
            f'{name} has about {estimate} triangles, over the {MAX_MESH_FACES} limit: not read '
            '(decimate it, or give the link a simpler collision mesh)'
        )
    if file_type == 'dae':
        vertices, faces = collada_triangles(data, name)
    else:
        vertices, faces = _trimesh_triangles(data, file_type, name)
    if len(faces) == 0:
        raise MeshLoadError(f'{name} contains no triangles')
    if len(faces) > MAX_MESH_FACES:
        raise MeshLoadError(
            f'{name} has {len(faces)} triangles, over the {MAX_MESH_FACES} limit: not used'
        )
    vertices, faces = _merged(vertices, faces)
    return vertices, faces, _is_closed(faces)


def _face_count_estimate(data: bytes, file_type: str) -> int:
    """Triangles the file declares, without parsing it (0 when the format does not say)."""
    if file_type == 'stl':
        if data[:5].lower() == b'solid' and b'facet' in data[:1024]:
            return data.count(b'facet normal')
        return int.from_bytes(data[80:84], 'little') if len(data) >= 84 else 0
    if file_type == 'dae':
        return sum(int(count) for count in _COLLADA_COUNT.findall(data))
    if file_type == 'obj':
        return data.count(b'\nf ')
    if file_type == 'ply':
        match = re.search(rb'element face (\d+)', data[:4096])
        return int(match.group(1)) if match else 0
    return 0


def _trimesh_triangles(data: bytes, file_type: str, name: str) -> tuple:
    import trimesh

    try:
        mesh = trimesh.load(io.BytesIO(data), file_type=file_type, force='mesh', process=False)
    except Exception as error:  # trimesh raises many kinds for a malformed file
        raise MeshLoadError(f'{name} cannot be read as a {file_type} mesh: {error}') from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise MeshLoadError(f'{name} contains no triangles')
    vertices = np.asarray(mesh.vertices, dtype=float)
    if not np.all(np.isfinite(vertices)):
        raise MeshLoadError(f'{name} has non-finite vertex coordinates')
    return vertices, np.asarray(mesh.faces, dtype=np.int64)


def _merged(vertices: np.ndarray, faces: np.ndarray) -> tuple:
    """Vertices at identical positions merged (STL and COLLADA repeat them per triangle),
    and triangles that collapsed to a line or point dropped."""
    order = np.lexsort(vertices.T[::-1])
    ordered = vertices[order]
    starts = np.ones(len(ordered), dtype=bool)
    starts[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    inverse = np.empty(len(vertices), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    faces = inverse[faces]
    keep = (
        (faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2]) & (faces[:, 0] != faces[:, 2])
    )
    return ordered[starts], faces[keep]


def _is_closed(faces: np.ndarray) -> bool:
    """Every directed edge appears once and its reverse once: a closed, consistently wound
    (orientable, edge-manifold) surface."""
    if len(faces) < 4:
        return False
    edges = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    count = int(faces.max()) + 1
    codes = np.sort(edges[:, 0] * count + edges[:, 1])
    if np.any(codes[1:] == codes[:-1]):
        return False
    return bool(np.array_equal(codes, np.sort(edges[:, 1] * count + edges[:, 0])))


# ---------------------------------------------------------------------------------------
# COLLADA: only what a mass-properties or bounding-box check needs, read with numpy.


def collada_triangles(data: bytes, name: str = 'mesh.dae') -> tuple:
    """Vertices [m] (N×3) and triangles (F×3) of the geometry a COLLADA file's visual scene
    places (node ``matrix``/``translate``/``rotate``/``scale`` applied, ``<unit meter>``
    scaling); without a scene, every geometry as stored. Raises :class:`MeshLoadError`."""
    from xml.etree import ElementTree

    if _UNSAFE_XML.search(data):
        raise MeshLoadError(f'{name} contains a DOCTYPE or ENTITY declaration; refused')
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as error:
        raise MeshLoadError(f'{name} is not COLLADA XML: {error}') from None
    namespace = root.tag[: root.tag.index('}') + 1] if root.tag.startswith('{') else ''
    if root.tag != namespace + 'COLLADA':
        raise MeshLoadError(f'{name} is not a COLLADA document (root <{root.tag}>)')
    reader = _ColladaReader(root, namespace, name)
    parts = reader.placed_geometry()
    if not parts:
        raise MeshLoadError(f'{name} contains no triangles')
    vertices, faces, offset = [], [], 0
    for points, triangles in parts:
        vertices.append(points)
        faces.append(triangles + offset)
        offset += len(points)
    unit = root.find(f'{namespace}asset/{namespace}unit')
    meter = _float_attribute(unit, 'meter', 1.0, name)
    return np.vstack(vertices) * meter, np.vstack(faces)


class _ColladaReader:
    def __init__(self, root, namespace: str, name: str):
        self.root, self.ns, self.name = root, namespace, name
        self.geometries = {
            element.get('id'): element for element in root.iter(namespace + 'geometry')
        }
        self.nodes = {
            element.get('id'): element
            for element in root.iter(namespace + 'node')
            if element.get('id')
        }
        self._meshes: dict = {}

    def placed_geometry(self) -> list:
        scene = self.root.find(f'{self.ns}scene/{self.ns}instance_visual_scene')
        visual_scenes = {
            element.get('id'): element for element in self.root.iter(self.ns + 'visual_scene')
        }
        target = (
            visual_scenes.get((scene.get('url') or '').lstrip('#')) if scene is not None else None
        )
        if target is None:
            return [
                mesh for key in self.geometries for mesh in [self._mesh(key)] if mesh is not None
            ]
        parts: list = []
        for node in target.findall(self.ns + 'node'):
            self._walk(node, np.eye(4), parts, 0)
        return parts

    def _walk(self, node, transform: np.ndarray, parts: list, depth: int) -> None:
        if depth > _COLLADA_NODE_DEPTH:
            raise MeshLoadError(
                f'{self.name}: node hierarchy deeper than {_COLLADA_NODE_DEPTH} (a cycle?)'
            )
        transform = transform @ self._node_transform(node)
        for instance in node.findall(self.ns + 'instance_geometry'):
            mesh = self._mesh((instance.get('url') or '').lstrip('#'))
            if mesh is not None:
                points, triangles = mesh
                parts.append((points @ transform[:3, :3].T + transform[:3, 3], triangles))
        for instance in node.findall(self.ns + 'instance_node'):
            referenced = self.nodes.get((instance.get('url') or '').lstrip('#'))
            if referenced is not None:
                self._walk(referenced, transform, parts, depth + 1)
        for child in node.findall(self.ns + 'node'):
            self._walk(child, transform, parts, depth + 1)

    def _node_transform(self, node) -> np.ndarray:
        transform = np.eye(4)
        for element in node:
            tag = element.tag[len(self.ns) :]
            if tag not in ('matrix', 'translate', 'rotate', 'scale'):
                continue
            values = _numbers(element.text, float, self.name)
            step = np.eye(4)
            if tag == 'matrix' and len(values) == 16:
                step = values.reshape(4, 4)
            elif tag == 'translate' and len(values) == 3:
                step[:3, 3] = values
            elif tag == 'scale' and len(values) == 3:
                step[:3, :3] = np.diag(values)
            elif tag == 'rotate' and len(values) == 4:
                step[:3, :3] = _axis_angle(values[:3], np.radians(values[3]))
            transform = transform @ step
        if not np.all(np.isfinite(transform)):
            raise MeshLoadError(f'{self.name}: a node transform is not finite')
        return transform

    def _mesh(self, geometry_id: str):
        if geometry_id not in self._meshes:
            geometry = self.geometries.get(geometry_id)
            mesh = geometry.find(self.ns + 'mesh') if geometry is not None else None
            self._meshes[geometry_id] = self._triangles(mesh) if mesh is not None else None
        return self._meshes[geometry_id]

    def _triangles(self, mesh):
        ns = self.ns
        sources = {}
        for source in mesh.findall(ns + 'source'):
            array = source.find(ns + 'float_array')
            accessor = source.find(f'{ns}technique_common/{ns}accessor')
            if array is None:
                continue
            stride = int(_float_attribute(accessor, 'stride', 3.0, self.name))
            values = _numbers(array.text, float, self.name)
            if stride < 3 or len(values) % stride:
                continue
            sources[source.get('id')] = values.reshape(-1, stride)[:, :3]
        positions = {}
        for vertices in mesh.findall(ns + 'vertices'):
            for semantic in vertices.findall(ns + 'input'):
                if semantic.get('semantic') == 'POSITION':
                    positions[vertices.get('id')] = sources.get(
                        (semantic.get('source') or '').lstrip('#')
                    )
        points, faces = None, []
        for primitive in mesh:
            kind = primitive.tag[len(ns) :]
            if kind not in ('triangles', 'polylist', 'polygons'):
                continue
            inputs = primitive.findall(ns + 'input')
            vertex_inputs = [i for i in inputs if i.get('semantic') == 'VERTEX']
            if not vertex_inputs:
                continue
            source = positions.get((vertex_inputs[0].get('source') or '').lstrip('#'))
            if source is None or (points is not None and source is not points):
                continue
            points = source
            stride = 1 + max(int(_float_attribute(i, 'offset', 0.0, self.name)) for i in inputs)
            offset = int(_float_attribute(vertex_inputs[0], 'offset', 0.0, self.name))
            faces.extend(self._primitive_faces(primitive, kind, stride, offset, len(points)))
        if points is None or not faces:
            return None
        faces = np.vstack(faces)
        used = np.unique(
            faces
        )  # a source may hold points no triangle uses (shared by several meshes)
        return points[used], np.searchsorted(used, faces)

    def _primitive_faces(
        self, primitive, kind: str, stride: int, offset: int, vertex_count: int
    ) -> list:
        ns = self.ns
        if kind == 'polygons':
            polygons = [_numbers(p.text, np.int64, self.name) for p in primitive.findall(ns + 'p')]
            counts = np.array([len(p) // stride for p in polygons], dtype=np.int64)
            indices = np.concatenate(polygons) if polygons else np.zeros(0, dtype=np.int64)
        else:
            element = primitive.find(ns + 'p')
            indices = _numbers(element.text if element is not None else '', np.int64, self.name)
            if kind == 'triangles':
                counts = np.full(len(indices) // (3 * stride), 3, dtype=np.int64)
            else:
                counts = _numbers(primitive.findtext(ns + 'vcount', ''), np.int64, self.name)
        if len(indices) != int(counts.sum()) * stride:
            raise MeshLoadError(
                f'{self.name}: a <{kind}> has {len(indices)} indices for {int(counts.sum())} '
                f'corners of stride {stride}'
            )
        corners = indices.reshape(-1, stride)[:, offset]
        if len(corners) and (corners.min() < 0 or corners.max() >= vertex_count):
            raise MeshLoadError(f'{self.name}: a <{kind}> indexes a vertex that does not exist')
        return [_fan_triangles(corners, counts)]


def _fan_triangles(corners: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Triangles (first, k, k+1) of each polygon of ``counts`` corners stored in a row."""
    starts = np.cumsum(counts) - counts
    polygons = counts >= 3
    starts, counts = starts[polygons], counts[polygons]
    triangle_counts = counts - 2
    first = np.repeat(starts, triangle_counts)
    step = np.arange(int(triangle_counts.sum())) - np.repeat(
        np.cumsum(triangle_counts) - triangle_counts, triangle_counts
    )
    return np.stack([corners[first], corners[first + step + 1], corners[first + step + 2]], axis=1)


def _axis_angle(axis: np.ndarray, angle: float) -> np.ndarray:
    norm = float(np.linalg.norm(axis))
    if norm == 0.0:
        return np.eye(3)
    x, y, z = axis / norm
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * k @ k


def _numbers(text: Optional[str], dtype, name: str) -> np.ndarray:
    """Whitespace-separated numbers; a token that is not one, or a non-finite float, is refused."""
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # older numpy warns (instead of raising) on a bad token
        try:
            values = np.fromstring(text or '', dtype=dtype, sep=' ')
        except (ValueError, OverflowError, DeprecationWarning):
            raise MeshLoadError(
                f'{name}: a COLLADA array holds something that is not a number'
            ) from None
    if values.dtype.kind == 'f' and not np.all(np.isfinite(values)):
        raise MeshLoadError(f'{name}: a COLLADA array holds a non-finite number')
    return values


def _float_attribute(element, attribute: str, default: float, name: str) -> float:
    if element is None or element.get(attribute) is None:
        return default
    try:
        value = float(element.get(attribute))
    except ValueError:
        raise MeshLoadError(
            f'{name}: {attribute}="{element.get(attribute)}" is not a number'
        ) from None
    if not math.isfinite(value) or value <= 0.0 and attribute != 'offset':
        raise MeshLoadError(
            f'{name}: {attribute}="{element.get(attribute)}" is not a positive number'
        )
    return value
