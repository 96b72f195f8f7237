"""The messages centroidal_node publishes, built from a balance report: points, momentum vectors,
the support polygon, the stability margins and the rviz markers. World frame, SI units.
"""

from __future__ import annotations

import math

import numpy as np
from geometry_msgs.msg import Point, Point32, PolygonStamped, Vector3Stamped
from sensor_msgs.msg import JointState
from visualization_msgs.msg import Marker, MarkerArray

from robot_dynamics.core.floating_base.centroidal import BalanceReport, CentroidalState

MARGIN_NAMES = ('zmp', 'capture_point', 'com_projection')
"""``name`` of every ~/stability_margins message, in the order of its ``position`` entries [m]."""


def to_point(xyz) -> Point:
    return Point(x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2]))


def vector_stamped(header, xyz) -> Vector3Stamped:
    message = Vector3Stamped(header=header)
    message.vector.x, message.vector.y, message.vector.z = (float(x) for x in xyz)
    return message


def polygon_stamped(header, polygon) -> PolygonStamped:
    """The support polygon's vertices at its ground height [m, world frame]."""
    message = PolygonStamped(header=header)
    message.polygon.points = [
        Point32(x=float(x), y=float(y), z=float(polygon.ground_height)) for x, y in polygon.vertices
    ]
    return message


def make_marker(header, namespace: str, kind: int, rgb: tuple, scale: tuple, position) -> Marker:
    """Marker 0 of ``namespace``, of ``kind`` (Marker.SPHERE, CYLINDER...), colour ``rgb``
    (opaque), ``scale`` [m] along its axes, at ``position`` [m] in ``header``'s frame, axes
    aligned with it."""
    marker = Marker(header=header, ns=namespace, id=0, type=kind, action=Marker.ADD)
    marker.pose.position = to_point(position)
    marker.pose.orientation.w = 1.0
    marker.scale.x, marker.scale.y, marker.scale.z = scale
    marker.color.r, marker.color.g, marker.color.b = rgb
    marker.color.a = 1.0
    return marker


def arrow(header, namespace: str, rgb: tuple, start, end) -> Marker:
    marker = make_marker(header, namespace, Marker.ARROW, rgb, (0.015, 0.03, 0.04), np.zeros(3))
    marker.points = [to_point(start), to_point(end)]
    return marker


def margins_state(header, report: BalanceReport) -> JointState:
    """~/stability_margins: MARGIN_NAMES with their signed distances [m], NaN when undefined."""
    margins = (report.zmp_margin, report.capture_point_margin, report.com_margin)
    return JointState(
        header=header,
        name=list(MARGIN_NAMES),
        position=[math.nan if margin is None else float(margin) for margin in margins],
    )


def balance_markers(
    header, report: BalanceReport, ground: float, arrow_scale: float, lipm_marker: Marker
) -> MarkerArray:
    """centroidal_node's ~/markers: CoM, its ground projection, the momentum arrows
    (``arrow_scale`` [m per kg·m/s and per kg·m²/s]), ZMP, LIPM ZMP (``lipm_marker``), capture
    point and support polygon outline at ``ground`` [m], all in the world frame of ``header``."""
    return MarkerArray(
        markers=[
            *_com_and_momentum_markers(header, report.state, ground, arrow_scale),
            _point_marker(header, 'zmp', (1.0, 0.2, 0.2), report.zmp),
            lipm_marker,
            _point_marker(header, 'capture_point', (0.1, 0.8, 0.9), report.capture_point),
            _support_polygon_marker(header, report.polygon.vertices, ground),
        ]
    )


def marker_deletion(header, namespace: str) -> Marker:
    """The deletion of marker 0 of ``namespace``, for a figure that is undefined."""
    return Marker(header=header, ns=namespace, id=0, action=Marker.DELETE)


def _com_and_momentum_markers(
    header, state: CentroidalState, ground: float, arrow_scale: float
) -> list:
    """A sphere at the CoM, a flat disc at its projection on the ground z = ``ground`` [m] and the
    linear and angular momentum arrows from the CoM (``arrow_scale`` [m per kg·m/s and per
    kg·m²/s]); world frame."""
    com = state.com
    projection = np.array([com[0], com[1], ground])
    return [
        make_marker(header, 'com', Marker.SPHERE, (0.9, 0.9, 0.1), (0.06, 0.06, 0.06), com),
        make_marker(
            header,
            'com_projection',
            Marker.CYLINDER,
            (0.9, 0.9, 0.1),
            (0.04, 0.04, 0.004),
            projection,
        ),
        arrow(
            header,
            'linear_momentum',
            (0.1, 0.5, 1.0),
            com,
            com + arrow_scale * state.linear_momentum,
        ),
        arrow(
            header,
            'angular_momentum',
            (0.8, 0.2, 0.9),
            com,
            com + arrow_scale * state.angular_momentum,
        ),
    ]


def _point_marker(header, namespace: str, rgb: tuple, position) -> Marker:
    """A 4 cm sphere at ``position`` [m, world frame], or its deletion when ``position`` is
    None."""
    if position is None:
        return marker_deletion(header, namespace)
    return make_marker(header, namespace, Marker.SPHERE, rgb, (0.04, 0.04, 0.04), position)


def _support_polygon_marker(header, vertices, ground: float) -> Marker:
    """The outline through the support polygon's (x, y) ``vertices`` [m, world frame] at height
    ``ground`` [m], closed when it has more than two; its deletion below two vertices."""
    if len(vertices) < 2:
        return marker_deletion(header, 'support_polygon')
    outline = make_marker(
        header,
        'support_polygon',
        Marker.LINE_STRIP,
        (0.2, 0.9, 0.3),
        (0.01, 0.0, 0.0),
        np.zeros(3),
    )
    closed = np.vstack([vertices, vertices[:1]]) if len(vertices) > 2 else vertices
    outline.points = [Point(x=float(x), y=float(y), z=float(ground)) for x, y in closed]
    return outline
