"""Capture point ξ = c + ċ/ω, ω = √(g/(c_z − z_g)): closed forms (standing still, constant base
velocity), the linear inverted pendulum it is defined by (integrated independently), the
undefined cases, and the capture-point margin against a hand-computed distance."""

import math

import numpy as np
import pinocchio as pin
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from robot_dynamics.core.floating_base.capture_point import (
    CapturePointInputError,
    capture_point,
    capture_point_xy,
    pendulum_frequency,
)
from robot_dynamics.core.floating_base.centroidal import (
    BalanceSettings,
    CentroidalMonitor,
    centroidal_state,
)
from robot_dynamics.core.floating_base.support_polygon import support_polygon
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import QUADRUPED_URDF

G = 9.81
FEET = ('lf_foot', 'rf_foot', 'lh_foot', 'rh_foot')
STANCE = np.tile([0.0, 0.8, -1.6], 4)


@pytest.fixture(scope='module')
def quadruped():
    return RobotModel.from_urdf_file(QUADRUPED_URDF, root_joint='floating')


def standing_configuration(robot, ground_height=0.0, yaw=0.0):
    """Stance with the lowest foot on the ground plane, base at (0.3, −0.1) rotated by ``yaw``."""
    orientation = Rotation.from_euler('z', yaw).as_quat()
    q = robot.configuration(STANCE, [0.0, 0.0, 0.0, *orientation])
    pin.framesForwardKinematics(robot.model, robot.data, q)
    lowest = min(robot.data.oMf[robot.model.getFrameId(f)].translation[2] for f in FEET)
    return robot.configuration(STANCE, [0.3, -0.1, ground_height - lowest, *orientation])


def run_monitor(robot, settings, states, period=0.002):
    """The report of the last of ``states`` (q, v) fed at ``period`` [s]."""
    monitor = CentroidalMonitor(robot, settings)
    for k, (q, v) in enumerate(states):
        report = monitor.update(k * period, q, v)
    return report


def test_pendulum_lands_at_rest_over_the_capture_point():
    """LIPM ẍ = ω² (x − p) with the ZMP p held at ξ(0) comes to rest above p (Pratt et al. 2006);
    a ZMP 1 cm beside it does not. Integrated numerically, independently of the formula."""
    com, velocity, ground = np.array([0.05, -0.02, 0.85]), np.array([0.4, -0.25, 0.0]), 0.05
    omega = math.sqrt(G / (com[2] - ground))
    xi = capture_point(com, velocity, ground, G)

    def final_state(zmp_xy):
        def lipm(_, state):
            return np.concatenate([state[2:], omega**2 * (state[:2] - zmp_xy)])

        end = solve_ivp(
            lipm, (0.0, 14.0 / omega), [*com[:2], *velocity[:2]], rtol=1e-11, atol=1e-13
        ).y[:, -1]
        return end[:2], end[2:]

    position, speed = final_state(xi[:2])
    np.testing.assert_allclose(position, xi[:2], atol=1e-5)
    np.testing.assert_allclose(speed, 0.0, atol=1e-4)
    position, speed = final_state(xi[:2] + [0.01, 0.0])
    assert abs(position[0] - xi[0]) > 0.1 and abs(speed[0]) > 0.5
    assert xi[2] == ground


def test_capture_point_formula_and_its_frequency():
    com, velocity, ground = [0.1, 0.2, 0.9], [0.3, -0.6, 0.7], 0.1
    omega = pendulum_frequency(0.8, G)
    assert omega == pytest.approx(math.sqrt(G / 0.8), rel=1e-15)
    np.testing.assert_allclose(
        capture_point(com, velocity, ground, G),
        [0.1 + 0.3 / omega, 0.2 - 0.6 / omega, 0.1],
        rtol=1e-15,
    )
    assert capture_point_xy(com, velocity, ground, G) == pytest.approx(
        (0.1 + 0.3 / omega, 0.2 - 0.6 / omega)
    )


@pytest.mark.parametrize('height', [0.0, -0.3])
def test_capture_point_is_undefined_when_the_com_is_not_above_the_ground(height):
    assert pendulum_frequency(height, G) is None
    assert capture_point([0.0, 0.0, 0.2 + height], [1.0, 0.0, 0.0], ground_height=0.2) is None


@pytest.mark.parametrize(
    'com, velocity, gravity',
    [
        ([0.0, math.nan, 1.0], [0.0, 0.0, 0.0], G),
        ([0.0, 0.0, 1.0], [math.inf, 0.0, 0.0], G),
        ([0.0, 0.0], [0.0, 0.0, 0.0], G),
        ([0.0, 0.0, 1.0], [0.0, 0.0, 0.0], 0.0),
        ('here', [0.0, 0.0, 0.0], G),
    ],
)
def test_unusable_inputs_are_refused_by_name(com, velocity, gravity):
    with pytest.raises(CapturePointInputError):
        capture_point(com, velocity, 0.0, gravity)


@pytest.mark.parametrize('ground_height', [0.0, 0.25])
def test_standing_still_puts_the_capture_point_at_the_com_projection(quadruped, ground_height):
    q = standing_configuration(quadruped, ground_height)
    settings = BalanceSettings(contact_frames=FEET, ground_height=ground_height)
    report = run_monitor(quadruped, settings, [(q, np.zeros(18))] * 12)
    com = centroidal_state(quadruped, q, np.zeros(18)).com
    np.testing.assert_allclose(report.capture_point, [com[0], com[1], ground_height], atol=1e-12)
    assert report.in_contact.all() and report.capture_point_margin > 0.05
    assert report.capture_point_margin == pytest.approx(report.com_margin, abs=1e-12)
    assert report.capture_point_margin == pytest.approx(report.zmp_margin, abs=1e-9)


def test_constant_base_velocity_moves_the_capture_point_by_velocity_over_omega(quadruped):
    """A rigid stance translating at a constant world velocity v (odometry twist in the yawed
    base frame): ċ = v, so ξ = c + v/ω at every instant."""
    yaw, ground = 0.7, 0.1
    world_velocity = np.array([0.3, -0.2, 0.05])
    start = standing_configuration(quadruped, ground, yaw)
    twist = np.concatenate([Rotation.from_euler('z', yaw).inv().apply(world_velocity), np.zeros(3)])
    v = quadruped.tangent(np.zeros(12), twist)
    states = []
    for k in range(12):
        q = start.copy()
        q[:3] += world_velocity * 0.002 * k
        states.append((q, v))
    report = run_monitor(
        quadruped, BalanceSettings(contact_frames=FEET, ground_height=ground), states
    )
    com = centroidal_state(quadruped, states[-1][0], v).com
    omega = math.sqrt(G / (com[2] - ground))
    np.testing.assert_allclose(
        report.capture_point, [*(com[:2] + world_velocity[:2] / omega), ground], atol=1e-12
    )
    np.testing.assert_allclose(report.state.com_velocity, world_velocity, atol=1e-12)


def test_capture_point_margin_is_minus_its_distance_outside_the_stance(quadruped):
    """Pushed sideways fast enough, ξ leaves the stance rectangle: its margin is minus the
    distance to the rectangle's side (the feet form an axis-aligned rectangle at yaw 0)."""
    q = standing_configuration(quadruped)
    v = quadruped.tangent(np.zeros(12), [0.0, 1.5, 0.0, 0.0, 0.0, 0.0])
    report = run_monitor(quadruped, BalanceSettings(contact_frames=FEET), [(q, v)])
    feet = report.contacts.positions
    np.testing.assert_allclose(support_polygon(feet).vertices.shape, (4, 2))
    outside = report.capture_point[1] - feet[:, 1].max()
    assert outside > 0.0
    assert report.capture_point_margin == pytest.approx(-outside, abs=1e-9)
    assert report.com_margin > 0.0


def test_capture_point_and_its_margin_are_none_below_the_ground_and_margins_none_in_flight(
    quadruped,
):
    sunk = standing_configuration(quadruped)
    sunk[2] -= 2.0  # the whole robot under the ground plane: no pendulum
    report = run_monitor(quadruped, BalanceSettings(contact_frames=FEET), [(sunk, np.zeros(18))])
    assert report.capture_point is None and report.capture_point_margin is None
    assert report.com_margin is not None  # the feet still "touch" (below the plane)
    flying = standing_configuration(quadruped)
    flying[2] += 1.0
    report = run_monitor(quadruped, BalanceSettings(contact_frames=FEET), [(flying, np.zeros(18))])
    assert report.capture_point is not None and report.polygon.is_empty
    assert (
        report.capture_point_margin is None
        and report.com_margin is None
        and report.zmp_margin is None
    )
