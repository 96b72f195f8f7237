"""Centroidal dynamics: CoM, h_G = A_G v, ḣ_G and the ZMP, checked against MuJoCo (second
library), closed forms (LIPM, Kajita et al. 2003), finite differences, link sums and the
RNEA base wrench (an independent route to the contact wrench)."""

import re

import mujoco
import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.floating_base.centroidal import (
    BalanceSettings,
    BaseStateBuffer,
    CentroidalInputError,
    CentroidalMonitor,
    OdometryError,
    base_pose_from_odometry,
    base_velocity_from_odometry,
    centroidal_momentum_matrix,
    centroidal_momentum_rate,
    centroidal_state,
    floating_base_model,
    zero_moment_point,
    zero_moment_point_from_wrenches,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.differentiation import (
    PolynomialDifferentiator,
    SampleOrderError,
    WhiteNoiseLevel,
)
from robot_dynamics.models import ARM_URDF, QUADRUPED_URDF

G = 9.81
FEET = ('lf_foot', 'rf_foot', 'lh_foot', 'rh_foot')
MUJOCO_COMPILER = (
    '<mujoco><compiler discardvisual="false" fusestatic="false" balanceinertia="false"/></mujoco>'
)


@pytest.fixture(scope='module')
def arm():
    return RobotModel.from_urdf_file(ARM_URDF)


@pytest.fixture(scope='module')
def quadruped():
    return RobotModel.from_urdf_file(QUADRUPED_URDF, root_joint='floating')


def random_state(robot, rng):
    """Random q (joints inside their limits, random base pose) and v."""
    lower = np.where(np.isfinite(robot.limits.lower), robot.limits.lower, -np.pi)
    upper = np.where(np.isfinite(robot.limits.upper), robot.limits.upper, np.pi)
    joints = rng.uniform(lower, upper)
    base_pose = np.concatenate([rng.normal(size=3), Rotation.random(random_state=rng).as_quat()])
    q = robot.configuration(joints, base_pose if robot.floating_base else None)
    v = robot.tangent(
        rng.normal(size=robot.num_joints), rng.normal(size=6) if robot.floating_base else None
    )
    return q, v


def mujoco_model(path, floating):
    text = re.sub(r'(<robot[^>]*>)', r'\1' + MUJOCO_COMPILER, path.read_text(), count=1)
    spec = mujoco.MjSpec.from_string(text)
    if floating:
        spec.worldbody.first_body().add_freejoint()
    return spec.compile()


def mujoco_centroidal(model, robot, q, v, root):
    """(com, l, k, mass) from MuJoCo for pinocchio's (q, v), converting the conventions:
    MuJoCo free joint qpos quaternion (w, x, y, z), qvel linear in WORLD, angular in BODY."""
    data = mujoco.MjData(model)
    for joint_id in range(model.njnt):
        joint = model.joint(joint_id)
        qadr, vadr = model.jnt_qposadr[joint_id], model.jnt_dofadr[joint_id]
        if model.jnt_type[joint_id] == mujoco.mjtJoint.mjJNT_FREE:
            x, y, z, w = q[3:7]
            data.qpos[qadr : qadr + 7] = [*q[:3], w, x, y, z]
            rotation = Rotation.from_quat(q[3:7]).as_matrix()
            data.qvel[vadr : vadr + 6] = [*(rotation @ v[:3]), *v[3:6]]
        else:
            pin_joint = robot.model.joints[robot.model.getJointId(joint.name)]
            data.qpos[qadr] = q[pin_joint.idx_q]
            data.qvel[vadr] = v[pin_joint.idx_v]
    mujoco.mj_forward(model, data)
    mujoco.mj_subtreeVel(model, data)
    mass = model.body_subtreemass[root]
    return (
        data.subtree_com[root].copy(),
        mass * data.subtree_linvel[root],
        data.subtree_angmom[root].copy(),
        mass,
    )


@pytest.mark.parametrize(
    'path, floating',
    [(ARM_URDF, False), (ARM_URDF, True), (QUADRUPED_URDF, True)],
    ids=['arm_fixed', 'arm_mounted', 'quadruped'],
)
def test_com_and_centroidal_momentum_match_mujoco_on_random_states(path, floating):
    """Fixed arm: the moving links (pinocchio leaves the world-welded root link out; MuJoCo
    subtree of fr3_link1). Mounted arm (floating_base_model, random mounting pose and base
    twist) and quadruped: the whole robot (MuJoCo subtree of the root link)."""
    fixed = RobotModel.from_urdf_file(path)
    robot = floating_base_model(fixed) if floating else fixed
    model = mujoco_model(path, floating)
    root = 1 if floating else 2
    rng = np.random.default_rng(4)
    for _ in range(20):
        q, v = random_state(robot, rng)
        state = centroidal_state(robot, q, v)
        com, linear, angular, mass = mujoco_centroidal(model, robot, q, v, root)
        assert state.mass == pytest.approx(mass, abs=1e-12)
        np.testing.assert_allclose(state.com, com, atol=1e-9)
        np.testing.assert_allclose(state.linear_momentum, linear, atol=1e-9)
        np.testing.assert_allclose(state.angular_momentum, angular, atol=1e-9)
        np.testing.assert_allclose(state.com_velocity * state.mass, linear, atol=1e-9)


def test_momentum_equals_direct_sum_over_links(quadruped):
    """l = Σ mᵢ ċᵢ and k = Σ [Iᵢ ωᵢ + mᵢ (cᵢ − c) × ċᵢ] about the CoM (Orin, Goswami & Lee 2013)."""
    rng = np.random.default_rng(5)
    model, data = quadruped.model, quadruped.model.createData()
    for _ in range(10):
        q, v = random_state(quadruped, rng)
        state = centroidal_state(quadruped, q, v)
        pin.forwardKinematics(model, data, q, v)
        linear, angular = np.zeros(3), np.zeros(3)
        for joint_id in range(1, model.njoints):
            inertia, placement = model.inertias[joint_id], data.oMi[joint_id]
            rotation = placement.rotation
            world_com = placement.act(inertia.lever)
            velocity = data.v[joint_id]  # body twist of the link, in its own frame
            com_velocity = rotation @ (velocity.linear + np.cross(velocity.angular, inertia.lever))
            linear += inertia.mass * com_velocity
            angular += rotation @ inertia.inertia @ velocity.angular
            angular += inertia.mass * np.cross(world_com - state.com, com_velocity)
        np.testing.assert_allclose(state.linear_momentum, linear, atol=1e-10)
        np.testing.assert_allclose(state.angular_momentum, angular, atol=1e-10)


@pytest.mark.parametrize('robot_name', ['arm', 'quadruped'])
def test_linear_rows_of_momentum_matrix_equal_mass_times_com_jacobian(robot_name, request):
    robot = request.getfixturevalue(robot_name)
    rng = np.random.default_rng(6)
    q, _ = random_state(robot, rng)
    matrix = centroidal_momentum_matrix(robot, q)
    assert matrix.shape == (6, robot.nv_reduced)
    mass = robot.total_mass()
    step = 1e-6
    jacobian = np.empty((3, robot.model.nv))
    for i in range(robot.model.nv):
        direction = np.zeros(robot.model.nv)
        direction[i] = step
        forward = pin.centerOfMass(
            robot.model, robot.data, pin.integrate(robot.model, q, direction)
        )
        backward = pin.centerOfMass(
            robot.model, robot.data, pin.integrate(robot.model, q, -direction)
        )
        jacobian[:, i] = (forward - backward) / (2 * step)
    np.testing.assert_allclose(matrix[:3], mass * jacobian, atol=1e-7)


def test_base_block_of_momentum_matrix_is_composite_rigid_body_inertia(quadruped):
    """A_G[:, :6] maps a rigid base twist to momentum: the composite inertia of all links about
    the CoM (world axes), times the base twist carried to the CoM."""
    rng = np.random.default_rng(7)
    data = quadruped.model.createData()
    for _ in range(5):
        q, _ = random_state(quadruped, rng)
        matrix = centroidal_momentum_matrix(quadruped, q)
        pin.forwardKinematics(quadruped.model, data, q)
        composite = pin.Inertia.Zero()
        for joint_id in range(1, quadruped.model.njoints):
            composite += data.oMi[joint_id].act(quadruped.model.inertias[joint_id])
        com = composite.lever
        centroidal_inertia = (
            pin.SE3(np.eye(3), com).actInv(composite).matrix()
        )  # about c, world axes
        base = pin.XYZQUATToSE3(q[:7])
        base_to_g = (pin.SE3(np.eye(3), com).inverse() * base).toActionMatrix()
        np.testing.assert_allclose(matrix[:, :6], centroidal_inertia @ base_to_g, atol=1e-10)
        np.testing.assert_allclose(
            matrix[:3, :3], quadruped.total_mass() * base.rotation, atol=1e-10
        )


def test_rotating_the_whole_motion_rotates_the_world_momentum(quadruped):
    """Odometry conventions: rotate the world by Q (pose → Q·pose, body twist unchanged, as
    nav_msgs/Odometry gives it). c, l and k must rotate by Q. Reading the twist as a world
    twist, or the quaternion as (w, x, y, z), breaks this."""
    rng = np.random.default_rng(8)
    q, v = random_state(quadruped, rng)
    joints, joint_velocities = quadruped.joint_positions(q), v[6:]
    position, orientation = q[:3], Rotation.from_quat(q[3:7])
    twist = base_velocity_from_odometry(v[:3], v[3:6])
    reference = centroidal_state(quadruped, q, v)
    for _ in range(5):
        world_rotation = Rotation.random(random_state=rng)
        pose = base_pose_from_odometry(
            world_rotation.apply(position), (world_rotation * orientation).as_quat()
        )
        state = centroidal_state(
            quadruped,
            quadruped.configuration(joints, pose),
            quadruped.tangent(joint_velocities, twist),
        )
        matrix = world_rotation.as_matrix()
        np.testing.assert_allclose(state.com, matrix @ reference.com, atol=1e-12)
        np.testing.assert_allclose(
            state.linear_momentum, matrix @ reference.linear_momentum, atol=1e-11
        )
        np.testing.assert_allclose(
            state.angular_momentum, matrix @ reference.angular_momentum, atol=1e-11
        )


def test_translating_base_has_momentum_mass_times_world_velocity_for_any_orientation(quadruped):
    """Same world velocity, different base orientations: l = m v_world, k = 0 (rigid
    translation)."""
    rng = np.random.default_rng(9)
    world_velocity = np.array([0.7, -0.3, 0.2])
    joints = quadruped.neutral_positions()
    for _ in range(5):
        orientation = Rotation.random(random_state=rng)
        pose = base_pose_from_odometry([1.0, 2.0, 0.5], orientation.as_quat())
        twist = base_velocity_from_odometry(orientation.inv().apply(world_velocity), np.zeros(3))
        state = centroidal_state(
            quadruped,
            quadruped.configuration(joints, pose),
            quadruped.tangent(np.zeros(quadruped.num_joints), twist),
        )
        np.testing.assert_allclose(
            state.linear_momentum, quadruped.total_mass() * world_velocity, atol=1e-12
        )
        np.testing.assert_allclose(state.angular_momentum, 0.0, atol=1e-12)


@pytest.mark.parametrize('quaternion', [[0, 0, 0, 0], [0, 0, 0, 2.0], [np.nan, 0, 0, 1]])
def test_unusable_odometry_quaternion_is_rejected(quaternion):
    with pytest.raises(OdometryError, match='quaternion'):
        base_pose_from_odometry([0, 0, 0], quaternion)


def test_odometry_is_paired_with_the_joint_state_of_the_nearest_stamp():
    buffer = BaseStateBuffer(capacity=4)
    for stamp in (1.000, 1.002, 1.004):
        buffer.add(stamp, [stamp, 0, 0], [0, 0, 0, 1], [0, 0, 0], [0, 0, 0])
    assert buffer.nearest(1.0025, max_age=0.01).pose[0] == 1.002
    assert buffer.nearest(1.0038, max_age=0.01).pose[0] == 1.004
    assert buffer.nearest(1.1, max_age=0.01) is None
    with pytest.raises(OdometryError, match='norm 0'):
        buffer.add(1.006, [0, 0, 0], [0, 0, 0, 0], [0, 0, 0], [0, 0, 0])


def test_wrong_state_size_names_the_quantity(quadruped):
    with pytest.raises(CentroidalInputError, match='velocity v must have 18 entries'):
        centroidal_state(quadruped, pin.neutral(quadruped.model), np.zeros(17))


# ---------------------------------------------------------------------------- ZMP
def test_zmp_equals_lipm_when_no_vertical_acceleration_and_no_angular_momentum_rate():
    rng = np.random.default_rng(11)
    for _ in range(20):
        com = rng.uniform([-1, -1, 0.3], [1, 1, 1.2])
        acceleration = np.array([*rng.normal(size=2), 0.0])
        ground = rng.uniform(-0.1, 0.1)
        zmp = zero_moment_point(com, acceleration, np.zeros(3), mass=46.2, ground_height=ground)
        lipm = com[:2] - (com[2] - ground) / G * acceleration[:2]
        np.testing.assert_allclose(zmp, [*lipm, ground], atol=1e-14)


def test_zmp_shifts_from_the_lipm_by_the_angular_momentum_rate():
    """m = 46.2 kg, k̇_y = 20.69 N·m moves the ZMP from the LIPM
    value 0.0413 m to −0.0044 m (shift −k̇_y/(m g) = −4.6 cm)."""
    com, acceleration, mass = np.array([0.0413, 0.0, 0.9]), np.zeros(3), 46.2
    lipm = zero_moment_point(com, acceleration, np.zeros(3), mass)
    shifted = zero_moment_point(com, acceleration, [0.0, 20.69, 0.0], mass)
    assert lipm[0] == pytest.approx(0.0413)
    assert shifted[0] == pytest.approx(-0.0044, abs=5e-5)
    assert lipm[0] - shifted[0] == pytest.approx(20.69 / (mass * G), rel=1e-12)
    sideways = zero_moment_point(com, [0.0, 0.0, 2.0], [3.0, 0.0, 0.0], mass)
    assert sideways[1] == pytest.approx(3.0 / (mass * (2.0 + G)), rel=1e-12)


def test_zmp_is_undefined_in_flight():
    assert zero_moment_point([0, 0, 1], [0.3, 0.0, -G], np.zeros(3), 10.0) is None
    assert (
        zero_moment_point([0, 0, 1], [0.0, 0.0, -G + 0.5], np.zeros(3), 10.0, epsilon=1.0) is None
    )
    assert (
        zero_moment_point([0, 0, 1], [0.0, 0.0, -G + 1.5], np.zeros(3), 10.0, epsilon=1.0)
        is not None
    )
    no_force = np.zeros((2, 3))
    assert zero_moment_point_from_wrenches([[0, 0, 0], [1, 0, 0]], no_force, no_force) is None


def rnea_ground_wrench(robot, q, v, a):
    """The external wrench the ground must apply (first 6 RNEA rows: force, moment at the base
    origin in the base frame), rotated to world axes."""
    base_wrench = dynamics.inverse_dynamics(robot, q, v, a)[:6]
    rotation = Rotation.from_quat(q[3:7]).as_matrix()
    return q[:3], rotation @ base_wrench[:3], rotation @ base_wrench[3:]


def test_kinematic_and_contact_wrench_routes_agree_on_random_states(quadruped):
    rng = np.random.default_rng(12)
    for _ in range(30):
        q, v = random_state(quadruped, rng)
        a = quadruped.tangent(rng.normal(size=12), rng.normal(scale=0.5, size=6))
        state = centroidal_state(quadruped, q, v)
        rate = centroidal_momentum_rate(quadruped, q, v, a)
        point, force, moment = rnea_ground_wrench(quadruped, q, v, a)
        np.testing.assert_allclose(
            rate.linear, force + state.mass * np.array([0, 0, -G]), atol=1e-9
        )
        ground = rng.uniform(-0.2, 0.2)
        kinematic = zero_moment_point(
            state.com, rate.com_acceleration, rate.angular, state.mass, ground
        )
        measured = zero_moment_point_from_wrenches([point], [force], [moment], ground)
        assert kinematic is not None and measured is not None
        np.testing.assert_allclose(kinematic, measured, atol=1e-9)


def test_wrench_route_sums_several_feet(quadruped):
    """The base wrench split over four feet (least-squares forces, no couples) gives the same
    ZMP."""
    rng = np.random.default_rng(13)
    q, v = random_state(quadruped, rng)
    a = quadruped.tangent(rng.normal(size=12), np.zeros(6))
    point, force, moment = rnea_ground_wrench(quadruped, q, v, a)
    pin.framesForwardKinematics(quadruped.model, quadruped.data, q)
    feet = np.array([quadruped.data.oMf[quadruped.model.getFrameId(f)].translation for f in FEET])
    grasp = np.vstack([np.hstack([np.eye(3)] * 4), np.hstack([pin.skew(p - point) for p in feet])])
    forces = np.linalg.lstsq(grasp, np.concatenate([force, moment]), rcond=None)[0].reshape(4, 3)
    single = zero_moment_point_from_wrenches([point], [force], [moment])
    split = zero_moment_point_from_wrenches(feet, forces, np.zeros((4, 3)))
    np.testing.assert_allclose(split, single, atol=1e-9)


# ---------------------------------------------------------------------------- ḣ_G estimation
def test_rate_estimator_is_exact_for_quadratic_signals_with_uneven_stamps():
    rng = np.random.default_rng(14)
    estimator = PolynomialDifferentiator(window=9, degree=2)
    stamps = np.cumsum(rng.uniform(0.001, 0.003, size=12))
    coefficients = rng.normal(size=(3, 6))
    for t in stamps:
        estimator.add(t, coefficients[0] + coefficients[1] * t + coefficients[2] * t**2)
    np.testing.assert_allclose(
        estimator.rate(), coefficients[1] + 2 * coefficients[2] * stamps[-1], atol=1e-8
    )


@pytest.mark.parametrize('spacing', ['even', 'uneven'])
def test_rate_estimator_equals_the_least_squares_polynomial_fit_for_any_window_and_degree(spacing):
    """Reference: an SVD least-squares polynomial through the window (numpy lstsq on the
    Vandermonde matrix of the stamps), differentiated at the newest stamp."""
    rng = np.random.default_rng(21)
    for _ in range(40):
        window = int(rng.integers(4, 40))
        degree = int(rng.integers(1, min(window - 2, 10) + 1))
        count = window + int(rng.integers(0, 15))
        intervals = np.full(count, 0.002) if spacing == 'even' else rng.uniform(0.001, 0.003, count)
        stamps, values = 1.0 + np.cumsum(intervals), rng.normal(size=(count, 6))
        estimator = PolynomialDifferentiator(window, degree, max_gap=1.0)
        for t, x in zip(stamps, values):
            estimator.add(t, x)
        span = stamps[-1] - stamps[-window]  # times scaled to [−1, 0]: a well-conditioned basis
        local = (stamps[-window:] - stamps[-1]) / span
        fit = np.linalg.lstsq(
            np.vander(local, degree + 1, increasing=True), values[-window:], rcond=None
        )[0]
        rate = fit[1] / span
        np.testing.assert_allclose(
            estimator.rate(), rate, rtol=1e-7, atol=1e-9 * np.abs(rate).max()
        )


def test_rate_estimator_is_exact_for_a_quadratic_sampled_every_millisecond_with_epoch_stamps():
    """Stamps since the epoch as float seconds carry ~1e-7 s of rounding (≈ 2e-4 of a 1 ms
    interval): read as real timing jitter it would bias every rate by about as much; the evenly
    spaced weights with the run's mean period give the derivative to the rounding over 3 s."""
    estimator = PolynomialDifferentiator(window=9, degree=2)
    start_ns = 1_796_000_000_123_000_000
    coefficients = np.array([[0.3, -1.0], [2.0, 0.5], [-40.0, 7.0]])  # x(τ) = c0 + c1 τ + c2 τ²
    for k in range(3000):
        tau = (
            k % 100
        ) * 1e-3  # exact time since a recent sample [s]: the quadratic restarts each 0.1 s
        stamp_ns = start_ns + k * 1_000_000
        estimator.add(
            stamp_ns // 10**9 + (stamp_ns % 10**9) * 1e-9,
            coefficients[0] + coefficients[1] * tau + coefficients[2] * tau**2,
        )
    np.testing.assert_allclose(
        estimator.rate(), coefficients[1] + 2 * coefficients[2] * 99e-3, rtol=1e-6
    )


def test_rate_estimator_rejects_old_stamps_and_restarts_after_a_gap():
    estimator = PolynomialDifferentiator(window=4, degree=2, max_gap=0.1)
    for t in (0.0, 0.01, 0.02, 0.03):
        estimator.add(t, np.array([t]))
    assert estimator.ready
    with pytest.raises(SampleOrderError):
        estimator.add(0.03, np.array([0.0]))
    estimator.add(1.0, np.array([1.0]))
    assert not estimator.ready and estimator.rate() is None


def test_a_window_switched_while_running_fits_the_newest_samples_it_names():
    """Reference: the SVD least-squares polynomial through the newest ``window`` samples; the
    estimator keeps ``longest_window`` samples and changes its window mid-stream."""
    rng = np.random.default_rng(33)
    estimator = PolynomialDifferentiator(5, 2, max_gap=1.0, longest_window=30)
    stamps = 1.0 + np.cumsum(np.full(80, 0.002))
    stamps[60:] += np.cumsum(rng.uniform(0.0, 0.001, 20))  # uneven at the end
    values = rng.normal(size=(80, 6))
    for k, (t, x) in enumerate(zip(stamps, values)):
        estimator.add(t, x)
        estimator.use_window(int(rng.integers(3, 40)))  # clipped to 4 .. 30
        assert 4 <= estimator.window <= 30
        if k + 1 < estimator.window:
            assert estimator.rate() is None
            continue
        span = stamps[k] - stamps[k + 1 - estimator.window]
        local = (stamps[k + 1 - estimator.window : k + 1] - stamps[k]) / span
        fit = np.linalg.lstsq(
            np.vander(local, 3, increasing=True),
            values[k + 1 - estimator.window : k + 1],
            rcond=None,
        )[0]
        np.testing.assert_allclose(estimator.rate(), fit[1] / span, rtol=1e-7, atol=1e-9)
    assert estimator.period == pytest.approx((stamps[-1] - stamps[-30]) / 29)


def test_rate_noise_gain_is_the_spread_of_rates_from_white_noise():
    """Monte Carlo: white noise of σ = 1 sampled every 2 ms through a 15-sample fit gives rates
    whose standard deviation is noise_gain / period."""
    rng = np.random.default_rng(4)
    estimator = PolynomialDifferentiator(15, 2)
    rates = []
    for k in range(20000):
        estimator.add(0.002 * k, rng.normal(size=1))
        if estimator.ready:
            rates.append(estimator.rate()[0])
    assert np.std(rates) == pytest.approx(estimator.noise_gain(15) / 0.002, rel=0.03)


def test_white_noise_level_measures_sigma_on_a_moving_signal_and_shrugs_off_an_impact():
    rng = np.random.default_rng(8)
    level = WhiteNoiseLevel(samples=250)
    sigma = np.array([0.01, 0.5, 2.0])
    times = np.arange(5000) * 0.002
    smooth = np.outer(np.sin(2 * np.pi * 1.5 * times), [1.0, 20.0, 50.0])
    for k, t in enumerate(times):
        jump = 40.0 * sigma if t >= 9.0 else 0.0  # an impact: one step of 40 σ, 1 s before the end
        level.add(smooth[k] + sigma * rng.normal(size=3) + jump)
    np.testing.assert_allclose(level.sigma(), sigma, rtol=0.15)
    clean = WhiteNoiseLevel()
    for k in range(100):
        clean.add(smooth[k])
    assert np.all(clean.sigma() < 1e-4 * np.array([1.0, 20.0, 50.0]))


def noisy_standing_zmps(robot, settings, velocity_noise, seconds=6.0):
    """The monitor's ZMPs (after the first second) for the quadruped standing still at 500 Hz,
    white noise of ``velocity_noise`` [m/s, rad/s] on the base twist as odometry carries it."""
    rng = np.random.default_rng(12)
    monitor = CentroidalMonitor(robot, settings)
    q = standing_configuration(robot)
    zmps = []
    for t in np.arange(0.0, seconds, 0.002):
        twist = rng.normal(scale=velocity_noise, size=6)
        report = monitor.update(t, q, robot.tangent(np.zeros(12), twist))
        if t >= 1.0 and report.zmp is not None:
            zmps.append(report.zmp[:2])
    return monitor, np.array(zmps)


def test_a_fixed_nine_sample_fit_spreads_the_zmp_of_noisy_odometry_by_centimetres(quadruped):
    settings = BalanceSettings(contact_frames=FEET, rate_window_max=9)
    monitor, zmps = noisy_standing_zmps(quadruped, settings, 0.005)
    assert monitor.estimator.window == 9 and zmps.std(axis=0).max() > 0.02


@pytest.mark.parametrize('velocity_noise', [0.001, 0.005, 0.02])
def test_the_fit_window_grows_with_the_noise_until_the_zmp_noise_meets_its_limit(
    quadruped, velocity_noise
):
    """Standing still with odometry noise [m/s, rad/s]: the window grows until the ZMP's
    spread meets ``zmp_noise_limit``, or stops at ``rate_window_max`` (0.02: above the limit,
    and said so by ``zmp_noise``). The spread is measured; ``zmp_noise`` is predicted from the
    noise level on h_G and the fit's gain."""
    settings = BalanceSettings(contact_frames=FEET)
    monitor, zmps = noisy_standing_zmps(quadruped, settings, velocity_noise)
    spread = zmps.std(axis=0).max()
    assert monitor.zmp_noise == pytest.approx(spread, rel=0.15)
    if velocity_noise < 0.02:
        assert 9 < monitor.estimator.window < settings.rate_window_max
        assert spread < settings.zmp_noise_limit * 1.1
    else:
        assert monitor.estimator.window == settings.rate_window_max
        assert spread > settings.zmp_noise_limit
    com = centroidal_state(quadruped, standing_configuration(quadruped), np.zeros(18)).com
    np.testing.assert_allclose(zmps.mean(axis=0), com[:2], atol=spread / 5)  # unbiased


def test_a_clean_motion_keeps_the_shortest_window(quadruped):
    monitor = CentroidalMonitor(quadruped, BalanceSettings(contact_frames=FEET))
    for t in np.arange(0.0, 2.0, 0.002):
        monitor.update(t, *sinusoidal_motion(quadruped, t)[:2])
    assert monitor.estimator.window == 9 and monitor.zmp_noise < 1e-4


def sinusoidal_motion(robot, t):
    """Quadruped in stance, base heaving/swaying with fixed yaw, legs swinging: (q, v, a)."""
    omega = 2 * np.pi * 1.5
    stance = np.tile([0.1, 0.8, -1.6], 4)
    amplitude = np.tile([0.1, 0.2, 0.25], 4)
    phase = np.arange(12) * 0.4
    joints = stance + amplitude * np.sin(omega * t + phase)
    joint_velocities = amplitude * omega * np.cos(omega * t + phase)
    joint_accelerations = -amplitude * omega**2 * np.sin(omega * t + phase)
    yaw = Rotation.from_euler('z', 0.6)
    offset = np.array([0.03, 0.02, 0.02])
    position = np.array([0.0, 0.0, 0.45]) + offset * np.sin(omega * t)
    velocity_world = offset * omega * np.cos(omega * t)
    acceleration_world = -offset * omega**2 * np.sin(omega * t)
    q = robot.configuration(joints, np.concatenate([position, yaw.as_quat()]))
    v = robot.tangent(
        joint_velocities, np.concatenate([yaw.inv().apply(velocity_world), np.zeros(3)])
    )
    a = robot.tangent(
        joint_accelerations, np.concatenate([yaw.inv().apply(acceleration_world), np.zeros(3)])
    )
    return q, v, a


def test_estimated_zmp_tracks_the_contact_wrench_zmp_on_a_simulated_motion(quadruped):
    """A 1.5 Hz whole-body motion sampled at 500 Hz: the monitor's kinematic ZMP (ḣ_G from the
    causal estimator) stays within 1 mm of the ZMP of the exact ground wrench (RNEA)."""
    monitor = CentroidalMonitor(quadruped, BalanceSettings(contact_frames=FEET))
    errors = []
    for t in np.arange(0.0, 0.7, 0.002):
        q, v, a = sinusoidal_motion(quadruped, t)
        report = monitor.update(t, q, v)
        if report.zmp is None:
            continue
        point, force, moment = rnea_ground_wrench(quadruped, q, v, a)
        errors.append(
            np.linalg.norm(report.zmp - zero_moment_point_from_wrenches([point], [force], [moment]))
        )
    assert len(errors) > 300
    assert max(errors) < 1e-3


def test_repeated_stamp_still_gives_the_state_but_no_rate(quadruped):
    monitor = CentroidalMonitor(quadruped, BalanceSettings(contact_frames=FEET, rate_window=4))
    q, v = standing_configuration(quadruped), np.zeros(18)
    for t in (0.0, 0.002, 0.004, 0.006):
        assert not monitor.update(t, q, v).stamp_not_newer
    repeated = monitor.update(0.006, q, v)
    assert repeated.stamp_not_newer and repeated.rate is None and repeated.zmp is None
    np.testing.assert_allclose(repeated.state.com, centroidal_state(quadruped, q, v).com)
    assert monitor.update(0.008, q, v).zmp is not None


@pytest.mark.parametrize('stamp', [float('nan'), float('inf'), 'soon'])
def test_a_stamp_that_is_not_a_finite_number_is_an_input_error(quadruped, stamp):
    monitor = CentroidalMonitor(quadruped, BalanceSettings(contact_frames=FEET))
    q, v = standing_configuration(quadruped), np.zeros(18)
    with pytest.raises(
        CentroidalInputError, match='stamp'
    ):  # before: ValueError from the estimator
        monitor.update(stamp, q, v)
    assert monitor.update(0.0, q, v).state.mass > 0  # the monitor goes on


def test_free_fall_is_reported_airborne(quadruped):
    monitor = CentroidalMonitor(quadruped, BalanceSettings(contact_frames=FEET))
    joints = np.tile([0.0, 0.8, -1.6], 4)
    for t in np.arange(0.0, 0.05, 0.002):
        height = 2.0 - 0.5 * G * t**2
        q = quadruped.configuration(joints, [0.0, 0.0, height, 0.0, 0.0, 0.0, 1.0])
        v = quadruped.tangent(np.zeros(12), [0.0, 0.0, -G * t, 0.0, 0.0, 0.0])
        report = monitor.update(t, q, v)
    assert report.airborne and report.zmp is None
    assert not report.in_contact.any() and report.polygon.is_empty and report.zmp_margin is None
    no_push = (np.zeros((4, 3)), np.zeros((4, 3)))
    assert monitor.update(0.06, q, v, foot_wrenches=no_push).airborne


def standing_configuration(robot):
    joints = np.tile([0.0, 0.8, -1.6], 4)
    q = robot.configuration(joints)
    pin.framesForwardKinematics(robot.model, robot.data, q)
    lowest = min(robot.data.oMf[robot.model.getFrameId(f)].translation[2] for f in FEET)
    return robot.configuration(joints, [0.3, -0.1, -lowest, 0.0, 0.0, 0.0, 1.0])


def test_robot_standing_still_has_zmp_at_com_projection_inside_the_polygon(quadruped):
    monitor = CentroidalMonitor(quadruped, BalanceSettings(contact_frames=FEET))
    q, v = standing_configuration(quadruped), np.zeros(18)
    for t in np.arange(0.0, 0.03, 0.002):
        report = monitor.update(t, q, v)
    assert not report.airborne and report.in_contact.all()
    np.testing.assert_allclose(report.zmp, [*report.state.com[:2], 0.0], atol=1e-12)
    assert len(report.polygon.vertices) == 4
    assert report.zmp_margin > 0.05 and report.zmp_margin == pytest.approx(report.com_margin)


def test_standing_still_with_measured_foot_wrenches_gives_the_same_zmp(quadruped):
    """Wrench route: forces that hold the robot still (each in its foot frame) → ZMP = CoM
    projection."""
    monitor = CentroidalMonitor(quadruped, BalanceSettings(contact_frames=FEET))
    q = standing_configuration(quadruped)
    state = centroidal_state(quadruped, q, np.zeros(18))
    pin.framesForwardKinematics(quadruped.model, quadruped.data, q)
    feet = np.array([quadruped.data.oMf[quadruped.model.getFrameId(f)].translation for f in FEET])
    # Vertical forces f_i with Σf = m g and Σ (p_i − c) × f_i = 0: minimum-norm solution.
    equations = np.vstack([np.ones(4), feet[:, 0] - state.com[0], feet[:, 1] - state.com[1]])
    vertical = np.linalg.lstsq(equations, [state.mass * G, 0.0, 0.0], rcond=None)[0]
    forces = np.column_stack([np.zeros(4), np.zeros(4), vertical])
    report = monitor.update(0.0, q, np.zeros(18), foot_wrenches=(forces, np.zeros((4, 3))))
    assert report.zmp_source == 'wrenches' and report.in_contact.all()
    np.testing.assert_allclose(report.zmp, [*state.com[:2], 0.0], atol=1e-9)


# ---------------------------------------------------------------------------- non-default
# thresholds
# Each BalanceSettings threshold is set above and below a value known in closed form; a monitor
# that ignored the setting (used its default instead) gets one of the two cases wrong.
FOOT_ROTATION = Rotation.from_euler(
    'y', 0.8 - 1.6
)  # stance: hip pitch 0.8 + knee −1.6 about y, every foot


def lifted(robot, height):
    """Standing configuration with the base raised by ``height``: every foot exactly that high."""
    q = standing_configuration(robot).copy()
    q[2] += height
    return q


def foot_wrenches(vertical_forces):
    """Per-foot (forces, torques) in the foot frames whose world force is (0, 0, f_i)."""
    world = np.column_stack([np.zeros((len(vertical_forces), 2)), vertical_forces])
    return FOOT_ROTATION.inv().apply(world), np.zeros((len(vertical_forces), 3))


def test_foot_rotation_of_the_stance_is_what_the_threshold_tests_assume(quadruped):
    contacts = (
        CentroidalMonitor(quadruped, BalanceSettings(contact_frames=FEET))
        .update(0.0, lifted(quadruped, 0.03), np.zeros(18))
        .contacts
    )
    np.testing.assert_allclose(
        contacts.rotations, np.tile(FOOT_ROTATION.as_matrix(), (4, 1, 1)), atol=1e-12
    )
    np.testing.assert_allclose(contacts.positions[:, 2], 0.03, atol=1e-12)


@pytest.mark.parametrize('threshold, touching', [(0.05, True), (0.02, False)])
def test_contact_height_threshold_decides_a_foot_3_cm_above_the_ground(
    quadruped, threshold, touching
):
    settings = BalanceSettings(contact_frames=FEET, contact_height_threshold=threshold)
    report = CentroidalMonitor(quadruped, settings).update(
        0.0, lifted(quadruped, 0.03), np.zeros(18)
    )
    assert report.in_contact.tolist() == [touching] * 4
    assert len(report.polygon.vertices) == (4 if touching else 0)


@pytest.mark.parametrize('threshold, first_touching', [(20.0, False), (10.0, True)])
def test_contact_force_threshold_decides_a_foot_pushing_15_n(quadruped, threshold, first_touching):
    settings = BalanceSettings(contact_frames=FEET, contact_force_threshold=threshold)
    report = CentroidalMonitor(quadruped, settings).update(
        0.0,
        standing_configuration(quadruped),
        np.zeros(18),
        foot_wrenches([15.0, 100.0, 100.0, 100.0]),
    )
    assert report.zmp_source == 'wrenches'
    assert report.in_contact.tolist() == [first_touching, True, True, True]
    assert len(report.polygon.vertices) == (4 if first_touching else 3)


@pytest.mark.parametrize('min_normal_force, airborne', [(5.0, False), (10.0, True)])
def test_min_normal_force_decides_a_total_vertical_force_of_8_n(
    quadruped, min_normal_force, airborne
):
    settings = BalanceSettings(contact_frames=FEET, min_normal_force=min_normal_force)
    q = standing_configuration(quadruped)
    report = CentroidalMonitor(quadruped, settings).update(
        0.0, q, np.zeros(18), foot_wrenches([2.0] * 4)
    )
    assert report.airborne is airborne
    if airborne:
        assert report.zmp is None
    else:  # equal vertical forces, no couples: the centre of pressure is the mean of the feet
        feet = report.contacts.positions
        np.testing.assert_allclose(report.zmp, [*feet[:, :2].mean(axis=0), 0.0], atol=1e-12)


@pytest.mark.parametrize('epsilon, airborne', [(1.0, True), (0.2, False)])
def test_flight_epsilon_decides_a_fall_with_vertical_acceleration_g_minus_half(
    quadruped, epsilon, airborne
):
    """Rigid base falling at c̈_z = −(g − 0.5), so c̈_z + g = 0.5 m/s² (quadratic in t: the
    degree-2 rate estimate is exact); no horizontal acceleration, no k̇."""
    settings = BalanceSettings(contact_frames=FEET, flight_epsilon=epsilon)
    monitor = CentroidalMonitor(quadruped, settings)
    joints, fall = np.tile([0.0, 0.8, -1.6], 4), G - 0.5
    for t in np.arange(0.0, 0.03, 0.002):
        q = quadruped.configuration(
            joints, [0.2, -0.1, 2.0 - 0.5 * fall * t**2, 0.0, 0.0, 0.0, 1.0]
        )
        v = quadruped.tangent(np.zeros(12), [0.0, 0.0, -fall * t, 0.0, 0.0, 0.0])
        report = monitor.update(t, q, v)
    assert report.rate.com_acceleration[2] + G == pytest.approx(0.5, abs=1e-6)
    assert report.airborne is airborne
    if airborne:
        assert report.zmp is None
    else:  # p = c − (c_z − 0) c̈_xy / 0.5 with c̈_xy = 0: the CoM projection
        np.testing.assert_allclose(report.zmp, [*report.state.com[:2], 0.0], atol=1e-6)
