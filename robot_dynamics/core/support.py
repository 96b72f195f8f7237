"""Contacts and the support polygon: which feet touch the ground, the convex hull of their
contact points, and the signed distance of a point to that hull (the stability margin).

The ground is the horizontal plane z = ``ground_height`` of the world frame. Contact points
are the origins of the ``contact_frames`` (e.g. ``lf_foot``: the sole point of a foot).
Polygons live in the ground plane: 2-D vertices (x, y) [m] in the world frame,
counter-clockwise. Signed distance [m]: positive inside (distance to the nearest edge),
zero on the boundary, negative outside (minus the distance to the polygon). Units: SI.

Every coordinate must be finite: a NaN or Inf contact point, vertex, query point or ground
height raises :class:`NonFiniteSupportError` naming it, rather than a
hull or a margin of NaN.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.model import RobotModel


class EmptySupportPolygonError(RobotDynamicsError):
    """A stability margin was asked of a support polygon with no contact point (flight)."""


class NonFiniteSupportError(RobotDynamicsError):
    """A contact point, polygon vertex, query point or ground height is NaN or Inf."""


def _finite(values: np.ndarray, label: str) -> np.ndarray:
    """``values``, or NonFiniteSupportError naming ``label`` when one of them is NaN or Inf."""
    if not np.all(np.isfinite(values)):
        text = ' '.join(np.array2string(values, threshold=24, separator=', ').split())
        raise NonFiniteSupportError(f'{label} must be finite, got {text}')
    return values


@dataclass(frozen=True)
class ContactFrames:
    """World placements of the contact frames at one configuration.

    ``names`` in the order given; ``positions`` (k × 3) [m] and ``rotations`` (k × 3 × 3,
    frame → world) in the world frame.
    """

    names: tuple
    positions: np.ndarray
    rotations: np.ndarray

    def wrenches_in_world(self, forces_local: np.ndarray, torques_local: np.ndarray) -> tuple:
        """Rotate per-frame wrenches (k × 3 forces [N], k × 3 torques [N·m], each expressed in its
        own contact frame, as a foot force/torque sensor reports them) into world axes.
        Returns (forces, torques), both k × 3, still applied at ``positions``."""
        forces = np.einsum('kij,kj->ki', self.rotations, np.asarray(forces_local, dtype=float))
        torques = np.einsum('kij,kj->ki', self.rotations, np.asarray(torques_local, dtype=float))
        return forces, torques


def contact_frames(robot: RobotModel, q: np.ndarray, frame_names: Sequence[str]) -> ContactFrames:
    """Placements of ``frame_names`` (links or other frames of ``robot``) at configuration ``q``.

    Raises DescriptionError naming an unknown frame.
    """
    ids = [robot.frame_id(name) for name in frame_names]
    pin.framesForwardKinematics(robot.model, robot.data, np.asarray(q, dtype=float))
    placements = [robot.data.oMf[i] for i in ids]
    positions = np.array([m.translation for m in placements]).reshape(-1, 3)
    rotations = np.array([m.rotation for m in placements]).reshape(-1, 3, 3)
    return ContactFrames(names=tuple(frame_names), positions=positions, rotations=rotations)


def contacts_by_height(positions: np.ndarray, ground_height: float, threshold: float) -> np.ndarray:
    """Boolean mask: contact point i touches the ground when its height above the ground
    plane, z_i − ``ground_height``, is below ``threshold`` [m] (points below the plane count)."""
    positions = np.asarray(positions, dtype=float).reshape(-1, 3)
    return positions[:, 2] - ground_height < threshold


def contacts_by_force(forces_world: np.ndarray, threshold: float) -> np.ndarray:
    """Boolean mask: contact i is loaded when the vertical (world z) force the ground applies
    exceeds ``threshold`` [N]."""
    return np.asarray(forces_world, dtype=float).reshape(-1, 3)[:, 2] > threshold


@dataclass(frozen=True)
class SupportPolygon:
    """Convex hull of the contact points in the ground plane z = ``ground_height``.

    ``vertices`` (n × 2) [m], world x-y, counter-clockwise, no repeated or collinear vertex.
    n = 0 (no contact), 1 (a point), 2 (a segment) or ≥ 3 (a polygon).
    """

    vertices: np.ndarray
    ground_height: float = 0.0

    def __post_init__(self):
        """Raises NonFiniteSupportError when a vertex or the ground height is NaN or Inf."""
        _finite(np.asarray(self.vertices, dtype=float), 'support polygon vertices')
        _finite(np.asarray(self.ground_height, dtype=float), 'ground_height')

    @property
    def is_empty(self) -> bool:
        return len(self.vertices) == 0

    def signed_distance(self, point) -> float:
        """Stability margin of ``point`` (x, y[, z]) [m]: positive inside (distance to the nearest
        edge), negative outside (−distance to the polygon). A point or a segment has no inside,
        so the result is ≤ 0 there. Raises EmptySupportPolygonError without contacts,
        NonFiniteSupportError when x or y is NaN or Inf (z is not used)."""
        if self.is_empty:
            raise EmptySupportPolygonError('no contact point: the support polygon is empty (robot airborne)')
        xy = _finite(np.asarray(point, dtype=float).reshape(-1)[:2], 'point')
        vertices = self.vertices
        if len(vertices) == 1:
            return -float(np.hypot(*(xy - vertices[0])))
        starts = vertices[:1] if len(vertices) == 2 else vertices
        edges = (vertices[1:] if len(vertices) == 2 else np.roll(vertices, -1, axis=0)) - starts
        offsets = xy - starts
        fraction = np.clip((offsets * edges).sum(axis=1) / np.maximum((edges * edges).sum(axis=1), 1e-300), 0.0, 1.0)
        gaps = offsets - fraction[:, None] * edges
        distance = float(np.sqrt((gaps * gaps).sum(axis=1).min()))
        inside = len(vertices) >= 3 and bool(np.all(edges[:, 0] * offsets[:, 1] - edges[:, 1] * offsets[:, 0] >= 0.0))
        return distance if inside else -distance

    def __repr__(self) -> str:
        corners = ', '.join(f'({x:.3f}, {y:.3f})' for x, y in self.vertices)
        return f'SupportPolygon(z={self.ground_height:.3f}, vertices=[{corners}])'


def support_polygon(points: np.ndarray, ground_height: float = 0.0, tolerance: float = 1e-9) -> SupportPolygon:
    """Convex hull (Andrew's monotone chain) of contact points projected on the ground plane.

    ``points`` (k × 2 or k × 3) [m] in the world frame; only x and y are used. Points closer
    than ``tolerance`` [m] merge; collinear points reduce to a segment. Raises
    NonFiniteSupportError when an x or y of a point, or ``ground_height``, is NaN or Inf.
    """
    points = np.atleast_2d(np.asarray(points, dtype=float))
    if points.size == 0:
        return SupportPolygon(np.zeros((0, 2)), ground_height)
    planar = _finite(points.reshape(len(points), -1)[:, :2], 'contact points (x, y)')
    distinct: dict = {}
    for x, y in planar:
        distinct.setdefault((round(x / tolerance), round(y / tolerance)), (x, y))
    xy = np.array(list(distinct.values()))
    if len(xy) <= 2:
        return SupportPolygon(xy, ground_height)
    ordered = xy[np.lexsort((xy[:, 1], xy[:, 0]))]
    lower = _half_hull(ordered, tolerance)
    upper = _half_hull(ordered[::-1], tolerance)
    hull = np.array(lower[:-1] + upper[:-1])
    return SupportPolygon(hull, ground_height)


def _half_hull(points: np.ndarray, tolerance: float) -> list:
    chain: list = []
    for point in points:
        while len(chain) >= 2 and _cross(chain[-2], chain[-1], point) <= tolerance * tolerance:
            chain.pop()
        chain.append(point)
    return chain


def _cross(origin: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - origin[0]) * (b[1] - origin[1]) - (a[1] - origin[1]) * (b[0] - origin[0]))
