"""Support polygon: convex hull against scipy (qhull), signed distances against closed forms,
qhull's facet equations and a dense sampling of the boundary; contact detection; foot
frames against the URDF's numbers."""

import math

import numpy as np
import pytest
from scipy.spatial import ConvexHull, Delaunay
from scipy.spatial.transform import Rotation

from robot_dynamics.core.errors import DescriptionError
from robot_dynamics.core.floating_base.support_polygon import (
    EmptySupportPolygonError,
    NonFiniteSupportError,
    SupportPolygon,
    contact_frames,
    contacts_by_force,
    contacts_by_height,
    support_polygon,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import QUADRUPED_URDF

UNIT_SQUARE = support_polygon(np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5], [0.2, 0.9]]))


def shoelace_area(vertices):
    x, y = vertices[:, 0], vertices[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def test_hull_has_the_vertices_and_area_of_qhull_counter_clockwise():
    rng = np.random.default_rng(20)
    for _ in range(20):
        points = rng.uniform(-1, 1, size=(rng.integers(3, 12), 3))
        polygon = support_polygon(points, ground_height=0.1)
        reference = ConvexHull(points[:, :2])
        assert {tuple(v) for v in np.round(polygon.vertices, 12)} == {
            tuple(v) for v in np.round(points[reference.vertices, :2], 12)
        }
        assert shoelace_area(polygon.vertices) == pytest.approx(reference.volume, rel=1e-12)
        assert polygon.ground_height == 0.1


def test_signed_distance_inside_equals_distance_to_the_nearest_qhull_facet():
    rng = np.random.default_rng(21)
    points = rng.uniform(-1, 1, size=(10, 2))
    polygon, reference = support_polygon(points), ConvexHull(points)
    inside = Delaunay(points[reference.vertices])
    samples = rng.uniform(-1, 1, size=(400, 2))
    samples = samples[inside.find_simplex(samples) >= 0]
    assert len(samples) > 50
    for sample in samples:
        expected = -np.max(reference.equations[:, :2] @ sample + reference.equations[:, 2])
        assert polygon.signed_distance(sample) == pytest.approx(expected, abs=1e-12)


def test_signed_distance_outside_is_minus_the_distance_to_the_boundary():
    rng = np.random.default_rng(22)
    polygon = support_polygon(rng.uniform(-0.5, 0.5, size=(8, 2)))
    vertices = polygon.vertices
    fractions = np.linspace(0.0, 1.0, 20001)[:, None]
    boundary = np.concatenate(
        [a + fractions * (b - a) for a, b in zip(vertices, np.roll(vertices, -1, axis=0))]
    )
    samples = rng.uniform(-1.5, 1.5, size=(200, 2))
    outside = samples[Delaunay(vertices).find_simplex(samples) < 0]
    assert len(outside) > 50
    for sample in outside:
        expected = np.min(np.linalg.norm(boundary - sample, axis=1))
        assert polygon.signed_distance(sample) == pytest.approx(-expected, abs=1e-6)


@pytest.mark.parametrize(
    'point, expected',
    [
        ((0.5, 0.5), 0.5),
        ((0.9, 0.5, 3.0), 0.1),
        ((1.0, 0.3), 0.0),
        ((2.0, 0.5), -1.0),
        ((2.0, 2.0), -math.sqrt(2.0)),
        ((-0.3, -0.4), -0.5),
    ],
)
def test_signed_distance_to_the_unit_square(point, expected):
    assert len(UNIT_SQUARE.vertices) == 4
    assert UNIT_SQUARE.signed_distance(point) == pytest.approx(expected, abs=1e-15)


def test_degenerate_supports_have_no_inside():
    point = support_polygon(np.array([[1.0, 2.0, 0.0]]))
    assert point.signed_distance([1.0, 2.0]) == 0.0
    assert point.signed_distance([4.0, 6.0]) == pytest.approx(-5.0)
    segment = support_polygon(np.array([[0.0, 0.0], [1.0, 0.0], [0.5, 0.0], [0.25, 0.0]]))
    assert len(segment.vertices) == 2
    assert segment.signed_distance([0.5, 0.0]) == 0.0
    assert segment.signed_distance([0.5, 0.3]) == pytest.approx(-0.3)
    assert segment.signed_distance([-0.3, 0.4]) == pytest.approx(-0.5)
    empty = support_polygon(np.zeros((0, 3)))
    assert empty.is_empty
    with pytest.raises(EmptySupportPolygonError, match='airborne'):
        empty.signed_distance([0.0, 0.0])


def test_contact_detection_by_height_and_by_force():
    positions = np.array([[0, 0, 0.005], [1, 0, 0.05], [0, 1, -0.01], [1, 1, 0.1 + 0.019]])
    np.testing.assert_array_equal(
        contacts_by_height(positions, ground_height=0.1, threshold=0.02), [True, True, True, True]
    )
    np.testing.assert_array_equal(
        contacts_by_height(positions, ground_height=0.0, threshold=0.02), [True, False, True, False]
    )
    forces = np.array([[5.0, 0.0, 30.0], [0.0, 0.0, 9.0], [0.0, 0.0, -50.0]])
    np.testing.assert_array_equal(contacts_by_force(forces, threshold=10.0), [True, False, False])


def test_foot_frames_are_where_the_urdf_puts_them():
    """Zero pose: HAA at (±0.22, ±0.12, 0), HFE 0.11 m outboard, thigh 0.25 m, foot 0.27 m below
    the knee (quadruped.urdf header)."""
    robot = RobotModel.from_urdf_file(QUADRUPED_URDF, root_joint='floating')
    yaw = Rotation.from_euler('z', 0.3)
    pose = np.concatenate([[1.0, 2.0, 0.6], yaw.as_quat()])
    frames = contact_frames(robot, robot.configuration(np.zeros(12), pose), ['lf_foot', 'rh_foot'])
    expected_local = np.array([[0.22, 0.23, -0.52], [-0.22, -0.23, -0.52]])
    np.testing.assert_allclose(
        frames.positions, yaw.apply(expected_local) + [1.0, 2.0, 0.6], atol=1e-12
    )
    forces, torques = frames.wrenches_in_world([[1.0, 0, 0], [0, 0, 2.0]], [[0, 1.0, 0], [0, 0, 0]])
    np.testing.assert_allclose(forces, [yaw.apply([1.0, 0, 0]), [0, 0, 2.0]], atol=1e-12)
    np.testing.assert_allclose(torques[0], yaw.apply([0, 1.0, 0]), atol=1e-12)
    with pytest.raises(DescriptionError, match='nose'):
        contact_frames(robot, robot.configuration(np.zeros(12), pose), ['nose'])


def test_polygon_repr_lists_the_vertices():
    assert (
        repr(SupportPolygon(np.array([[0.0, 1.0]]), 0.5))
        == 'SupportPolygon(z=0.500, vertices=[(0.000, 1.000)])'
    )


@pytest.mark.parametrize(
    'points',
    [
        [[math.nan, 0.0, 0.0]],
        [[math.inf, 0.0, 0.0], [0, 0, 0], [1, 1, 0]],
        [[0, 0, 0], [1, 0, 0], [0, -math.inf, 0]],
    ],
)
def test_a_non_finite_contact_point_is_refused_by_name(points):
    """A NaN or infinite contact point is refused as NonFiniteSupportError, by name."""
    with pytest.raises(NonFiniteSupportError, match=r'contact points \(x, y\) must be finite'):
        support_polygon(np.array(points))


def test_a_non_finite_query_point_vertex_or_ground_height_is_refused():
    """A NaN margin would compare False with everything: a non-finite query point, vertex or
    ground height is refused."""
    for point in ([math.nan, 0.0], [0.5, math.inf, 0.0]):
        with pytest.raises(NonFiniteSupportError, match='point must be finite'):
            UNIT_SQUARE.signed_distance(point)
    assert UNIT_SQUARE.signed_distance([0.5, 0.25, math.nan]) == pytest.approx(
        0.25
    )  # z is not used
    with pytest.raises(NonFiniteSupportError, match='vertices must be finite'):
        SupportPolygon(np.array([[0.0, 0.0], [1.0, math.nan], [0.0, 1.0]]))
    with pytest.raises(NonFiniteSupportError, match='ground_height must be finite'):
        support_polygon(np.zeros((3, 3)), ground_height=math.nan)
    assert support_polygon([[0.0, 0.0, math.nan]]).vertices.tolist() == [
        [0.0, 0.0]
    ]  # z is not used either
