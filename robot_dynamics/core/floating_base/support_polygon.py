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

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.model.model import RobotModel

_FLOAT64 = np.dtype(np.float64)


class EmptySupportPolygonError(RobotDynamicsError):
    """A stability margin was asked of a support polygon with no contact point (flight)."""


class NonFiniteSupportError(RobotDynamicsError):
    """A contact point, polygon vertex, query point or ground height is NaN or Inf."""


def _finite(values: np.ndarray, label: str) -> np.ndarray:
    """``values``, or NonFiniteSupportError naming ``label`` when one of them is NaN or Inf."""
    if not _all_finite(values.ravel().tolist()):
        text = ' '.join(np.array2string(values, threshold=24, separator=', ').split())
        raise NonFiniteSupportError(f'{label} must be finite, got {text}')
    return values


def _all_finite(numbers: list) -> bool:
    """True when every float is finite: one sum proves it unless it overflows."""
    return math.isfinite(sum(numbers)) or all(map(math.isfinite, numbers))


@dataclass(frozen=True)
class ContactFrames:
    """World placements of the contact frames at one configuration.

    ``names`` in the order given; ``positions`` (k × 3) [m] and ``rotations`` (k × 3 × 3,
    frame → world) in the world frame; ``placements`` the pinocchio SE3 (frame → world) they
    come from.
    """

    names: tuple
    positions: np.ndarray
    placements: tuple = field(default=(), repr=False)

    @cached_property
    def rotations(self) -> np.ndarray:
        """k × 3 × 3 rotations frame → world (read from ``placements`` when first asked)."""
        return np.array([placement.rotation for placement in self.placements]).reshape(-1, 3, 3)

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
    pin.forwardKinematics(robot.model, robot.data, np.asarray(q, dtype=float))
    return contact_frames_after_kinematics(robot, tuple(frame_names), ids)


def contact_frames_after_kinematics(
    robot: RobotModel, frame_names: tuple, frame_ids: Sequence[int]
) -> ContactFrames:
    """Placements of the frames ``frame_ids`` (named ``frame_names``) from the joint placements
    that a forward kinematics (any pinocchio algorithm that runs one, e.g.
    ``computeCentroidalMomentum``) left in ``robot.data``: no second kinematics pass."""
    model, data = robot.model, robot.data
    placements = tuple([pin.updateFramePlacement(model, data, i) for i in frame_ids])
    positions = (
        np.array([placement.translation for placement in placements])
        if placements
        else np.zeros((0, 3))
    )
    return ContactFrames(names=frame_names, positions=positions, placements=placements)


def contacts_by_height(positions, ground_height: float, threshold: float) -> np.ndarray:
    """Boolean mask: contact point i touches the ground when its height above the ground
    plane, z_i − ``ground_height``, is below ``threshold`` [m] (points below the plane count).
    ``positions``: k × 3 array, or a list of [x, y, z] rows."""
    if type(positions) is list and all(type(row) is list and len(row) == 3 for row in positions):
        return np.array([row[2] - ground_height < threshold for row in positions], dtype=bool)
    if not (type(positions) is np.ndarray and positions.ndim == 2 and positions.shape[1] == 3):
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
    _edges: list = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        """Raises NonFiniteSupportError when a vertex or the ground height is NaN or Inf."""
        corners = np.asarray(self.vertices, dtype=float).tolist()
        if not _all_finite([x + y for x, y in corners]):
            _finite(np.asarray(self.vertices, dtype=float), 'support polygon vertices')
        if not math.isfinite(self.ground_height):
            raise NonFiniteSupportError(f'ground_height must be finite, got {self.ground_height}')
        object.__setattr__(self, '_edges', _polygon_edges(corners))

    @classmethod
    def _from_corners(cls, corners: list, ground_height: float) -> 'SupportPolygon':
        """The polygon of hull ``corners`` [(x, y), ...] already checked finite (no second
        check)."""
        polygon = object.__new__(cls)
        object.__setattr__(polygon, 'vertices', np.array(corners, dtype=float).reshape(-1, 2))
        object.__setattr__(polygon, 'ground_height', ground_height)
        object.__setattr__(polygon, '_edges', _polygon_edges(corners))
        return polygon

    @property
    def is_empty(self) -> bool:
        return len(self.vertices) == 0

    def signed_distance(self, point) -> float:
        """Stability margin of ``point`` (x, y[, z]) [m]: positive inside (distance to the nearest
        edge), negative outside (−distance to the polygon). A point or a segment has no inside,
        so the result is ≤ 0 there. Raises EmptySupportPolygonError without contacts,
        NonFiniteSupportError when x or y is NaN or Inf (z is not used)."""
        if self.is_empty:
            raise EmptySupportPolygonError(
                'no contact point: the support polygon is empty (robot airborne)'
            )
        try:
            x, y = float(point[0]), float(point[1])
        except (TypeError, ValueError, IndexError):  # nested or odd shapes: flatten
            x, y = (float(c) for c in np.asarray(point, dtype=float).reshape(-1)[:2])
        if not (math.isfinite(x) and math.isfinite(y)):
            _finite(np.array([x, y]), 'point')
        edges = self._edges
        if len(edges) >= 3:
            # Inside a convex polygon the nearest boundary point lies on the nearest edge line.
            inside = min([nx * (x - ax) + ny * (y - ay) for ax, ay, _, _, nx, ny in edges])
            if inside >= 0.0:
                return inside
        if not edges:
            ax, ay = self.vertices[0]
            return -math.hypot(x - ax, y - ay)
        return -math.sqrt(_squared_distance_to_edges(x, y, edges))

    def __repr__(self) -> str:
        corners = ', '.join(f'({x:.3f}, {y:.3f})' for x, y in self.vertices)
        return f'SupportPolygon(z={self.ground_height:.3f}, vertices=[{corners}])'


def support_polygon(
    points: np.ndarray, ground_height: float = 0.0, tolerance: float = 1e-9
) -> SupportPolygon:
    """Convex hull (Andrew's monotone chain) of contact points projected on the ground plane.

    ``points`` (k × 2 or k × 3) [m] in the world frame, an array or a list of float rows; only
    x and y are used. Points closer than ``tolerance`` [m] merge; collinear points reduce to a
    segment. Raises NonFiniteSupportError when an x or y of a point, or ``ground_height``, is
    NaN or Inf.
    """
    if type(points) is list and all(type(row) is list and len(row) >= 2 for row in points):
        rows = points  # float rows, as ndarray.tolist() gives them
    else:
        if not (type(points) is np.ndarray and points.ndim == 2 and points.dtype is _FLOAT64):
            points = np.atleast_2d(np.asarray(points, dtype=float))
            points = points.reshape(len(points), -1)
        rows = points.tolist() if points.size else []
    if not rows:
        return SupportPolygon(np.zeros((0, 2)), ground_height)
    distinct: dict = {}
    try:
        for row in rows:
            x, y = float(row[0]), float(row[1])
            distinct.setdefault((round(x / tolerance), round(y / tolerance)), (x, y))
    except (ValueError, OverflowError):  # round() of NaN or Inf, or of a coordinate beyond 1e290 m
        _finite(np.array([row[:2] for row in rows], dtype=float), 'contact points (x, y)')
        distinct = {(float(row[0]), float(row[1])): (float(row[0]), float(row[1])) for row in rows}
    xy = list(distinct.values())
    if len(xy) > 2:
        xy.sort()
        xy = _half_hull(xy, tolerance)[:-1] + _half_hull(xy[::-1], tolerance)[:-1]
    if not math.isfinite(ground_height):
        raise NonFiniteSupportError(f'ground_height must be finite, got {ground_height}')
    return SupportPolygon._from_corners(xy, float(ground_height))


def _polygon_edges(corners: list) -> list:
    """(a_x, a_y, e_x, e_y, n_x, n_y) per edge a → a + e of the polygon ``corners`` [[x, y], ...],
    n the unit inward normal (left of e, the corners being counter-clockwise); the one edge
    of a segment, none for a point."""
    if len(corners) < 2:
        return []
    ends = corners[1:] if len(corners) == 2 else corners[1:] + corners[:1]
    edges = []
    for (ax, ay), (bx, by) in zip(corners, ends):
        ex, ey = bx - ax, by - ay
        length = max(math.hypot(ex, ey), 1e-300)  # repeated vertices of a hand-made polygon
        edges.append((ax, ay, ex, ey, -ey / length, ex / length))
    return edges


def _squared_distance_to_edges(x: float, y: float, edges: list) -> float:
    """Smallest squared distance [m²] from (x, y) to the segments of ``edges``."""
    nearest = math.inf
    for ax, ay, ex, ey, _, _ in edges:
        dx, dy = x - ax, y - ay
        fraction = (dx * ex + dy * ey) / (ex * ex + ey * ey or 1e-300)
        fraction = 0.0 if fraction < 0.0 else 1.0 if fraction > 1.0 else fraction
        gap_x, gap_y = dx - fraction * ex, dy - fraction * ey
        squared = gap_x * gap_x + gap_y * gap_y
        if squared < nearest:
            nearest = squared
    return nearest


def _half_hull(points: list, tolerance: float) -> list:
    """One chain of Andrew's monotone chain over (x, y) tuples sorted by x then y: a point
    that does not turn left of the last two (cross product ≤ tolerance²) removes the last."""
    chain: list = []
    squared = tolerance * tolerance
    for point in points:
        x, y = point
        while len(chain) >= 2:
            (ox, oy), (ax, ay) = chain[-2], chain[-1]
            if (ax - ox) * (y - oy) - (ay - oy) * (x - ox) > squared:
                break
            chain.pop()
        chain.append(point)
    return chain
