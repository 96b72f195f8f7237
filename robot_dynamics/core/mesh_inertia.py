"""Mass properties of closed triangle meshes, and safe resolution of URDF mesh filenames.

Mass properties use the signed-tetrahedron decomposition of chapter 000 §1.4: every
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
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence

import numpy as np

from robot_dynamics.core.errors import RobotDynamicsError

MAX_MESH_BYTES = 50 * 1024 * 1024
"""Largest mesh file read (bytes); a collision mesh is rarely over a few MB."""

MESH_FORMATS = ('stl', 'obj', 'ply', 'off', 'glb')
"""Self-contained formats read with trimesh. COLLADA (.dae) is not read: its XML parser
would resolve external references, and it is usually a visual mesh anyway."""

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
        return (f'SolidMassProperties(volume={self.volume:.6g} m³, centroid={np.round(self.centroid, 6).tolist()} m, '
                f'watertight={self.is_watertight})')


def mesh_mass_properties(vertices: np.ndarray, faces: np.ndarray, is_watertight: bool = True) -> SolidMassProperties:
    """Signed-tetrahedron mass properties of a triangle mesh (chapter 000 §1.4).

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
    second_moment = np.einsum('i,ij,ik->jk', signed_volumes / 20.0, a, a) + \
        np.einsum('i,ij,ik->jk', signed_volumes / 20.0, b, b) + \
        np.einsum('i,ij,ik->jk', signed_volumes / 20.0, c, c) + \
        np.einsum('i,ij,ik->jk', signed_volumes / 20.0, s, s)
    centroid = first_moment / volume
    second_moment_centroid = second_moment / volume - np.outer(centroid, centroid)
    inertia_per_mass = np.trace(second_moment_centroid) * np.eye(3) - second_moment_centroid
    return SolidMassProperties(volume, centroid, 0.5 * (inertia_per_mass + inertia_per_mass.T), is_watertight)


def resolve_mesh_path(filename: str, package_paths: Optional[Mapping[str, str]] = None,
                      allowed_roots: Sequence[str] = ()) -> Path:
    """The file a URDF mesh ``filename`` names, only if it lies where it may be read.

    ``package://NAME/REST``: under ``package_paths[NAME]``, else under the ament index share
    directory of NAME. ``file://PATH`` or a plain PATH (relative ones are tried against each
    root): only if the real path is inside one of ``allowed_roots``. Raises
    :class:`MeshResolutionError` with the reason otherwise (including a missing file).
    """
    if not filename:
        raise MeshResolutionError('the <mesh> has no filename')
    if filename.startswith('package://'):
        package, _, rest = filename[len('package://'):].partition('/')
        return _inside(_package_directory(package, package_paths or {}), rest, filename)
    if '://' in filename and not filename.startswith('file://'):
        raise MeshResolutionError(f'{filename}: only package:// and file:// mesh URIs are read')
    path = filename[len('file://'):] if filename.startswith('file://') else filename
    if not allowed_roots:
        raise MeshResolutionError(f'{filename}: file paths are only read under allowed roots, and none are set')
    reasons = []
    for root in allowed_roots:
        try:
            return _inside(root, path, filename)
        except MeshResolutionError as error:
            reasons.append(str(error))
    raise MeshResolutionError(reasons[0] if len(reasons) == 1 else f'{filename}: not a file under any allowed root')


def _package_directory(package: str, package_paths: Mapping[str, str]) -> str:
    if not _PACKAGE_NAME.match(package):
        raise MeshResolutionError(f'package name "{package}" is not a valid ROS package name')
    if package in package_paths:
        return package_paths[package]
    try:
        from ament_index_python.packages import get_package_share_directory
        return get_package_share_directory(package)
    except Exception as error:  # ImportError, PackageNotFoundError, a broken index: all mean "not found"
        raise MeshResolutionError(f'package "{package}" is not known (give --package-path {package}=DIR): '
                                  f'{type(error).__name__}') from None


def _inside(root: str, relative: str, filename: str) -> Path:
    real_root = os.path.realpath(root)
    candidate = os.path.realpath(os.path.join(real_root, relative))
    if os.path.commonpath([real_root, candidate]) != real_root:
        raise MeshResolutionError(f'{filename} resolves outside {real_root}; refused')
    if not os.path.isfile(candidate):
        raise MeshResolutionError(f'{filename}: no such file ({candidate})')
    return Path(candidate)


def load_mesh(path: Path, max_bytes: int = MAX_MESH_BYTES) -> tuple:
    """Vertices (N×3, file units) and triangle faces (F×3) of a mesh file, and whether it
    is watertight. Refuses files over ``max_bytes`` and formats not in :data:`MESH_FORMATS`.

    The bytes are read here and handed to trimesh without a resolver, so a mesh file cannot
    make trimesh open other files (OBJ material libraries, glTF buffers).
    """
    import trimesh

    path = Path(path)
    file_type = path.suffix.lower().lstrip('.')
    if file_type not in MESH_FORMATS:
        raise MeshLoadError(f'{path.name}: mesh format ".{file_type}" is not read '
                            f'(readable: {", ".join(MESH_FORMATS)})')
    size = path.stat().st_size
    if size > max_bytes:
        raise MeshLoadError(f'{path.name} is {size} bytes, over the {max_bytes}-byte mesh limit')
    with open(path, 'rb') as stream:
        data = stream.read(max_bytes + 1)
    try:
        mesh = trimesh.load(io.BytesIO(data), file_type=file_type, force='mesh', process=True)
    except Exception as error:  # trimesh raises many kinds for a malformed file
        raise MeshLoadError(f'{path.name} cannot be read as a {file_type} mesh: {error}') from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise MeshLoadError(f'{path.name} contains no triangles')
    return np.asarray(mesh.vertices, dtype=float), np.asarray(mesh.faces), bool(mesh.is_watertight)
