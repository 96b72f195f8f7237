"""The proving ground (robot_dynamics.simulation) against independent references: the pinocchio
engine and pinocchio's inverse dynamics for the `ideal` profile, closed forms of a 1-DoF
pendulum for every profile effect, the physics of contacts (weight, moments) and payloads,
and its refusals of bad input."""

import math

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.identification.excitation import FourierTrajectory
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.model.urdf import parse_urdf
from robot_dynamics.models import ARM_URDF
from robot_dynamics.simulation.errors import ProfileError, SceneError, SimulationError
from robot_dynamics.simulation.measurement import JointSensors
from robot_dynamics.simulation.mujoco_engine import MujocoEngine, Push
from robot_dynamics.simulation.mujoco_model import Box, SceneLayout, build_scene_model
from robot_dynamics.simulation.profiles import (
    LinkValues,
    SensorSettings,
    load_profile,
    profile_from_dict,
)
from robot_dynamics.simulation.reference import ArmSimulation, scripted_excitation
from robot_dynamics.simulation.scenes import ArmScene, LeggedScene

G = 9.81
PAYLOAD = InertialParameters(
    1.5,
    [0.03, -0.02, 0.06],
    [[0.004, 0.0003, -0.0002], [0.0003, 0.0035, 0.0001], [-0.0002, 0.0001, 0.002]],
)
# A pendulum about the y axis: CoM at l = 0.5 m along x at q = 0, m = 2 kg, I_yy(CoM) = 0.02 kg m^2.
# CoM height z = −l sin q, so the gravity torque is g(q) = −m g l cos q and I_hinge = I_yy + m l².
MASS, LENGTH, INERTIA = 2.0, 0.5, 0.02
PENDULUM = f"""<robot name="pendulum">
  <link name="base"/>
  <joint name="hinge" type="revolute">
    <parent link="base"/><child link="arm"/><origin xyz="0 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-100" upper="100" effort="100" velocity="100"/>
  </joint>
  <link name="arm">
    <inertial><origin xyz="{LENGTH} 0 0"/><mass value="{MASS}"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="{INERTIA}" iyz="0" izz="0.02"/></inertial>
  </link>
</robot>"""
HINGE_INERTIA = INERTIA + MASS * LENGTH**2


def arm() -> RobotModel:
    return RobotModel.from_urdf_file(ARM_URDF)


def pendulum_run(
    joint: dict,
    sensors: dict = None,
    effort_source: str = 'joint_torque_sensor',
    motor: float = 3.0,
    steps: int = 400,
    seed: int = 5,
):
    """Run the pendulum under a constant motor torque; (engine steps, published efforts,
    published positions, the drawn profile)."""
    profile = profile_from_dict(
        {
            'name': 'pendulum',
            'effort_source': effort_source,
            'joints': {'default': joint},
            'sensors': sensors or {},
        }
    )
    description = parse_urdf(PENDULUM)
    true_robot = profile.draw(description, seed)
    scene = build_scene_model(description, ('hinge',), true_robot, SceneLayout())
    engine = MujocoEngine(scene, true_robot)
    engine.reset([0.3], [0.5])
    joint_sensors = JointSensors(true_robot, ('hinge',))
    records, efforts, positions = [], [], []
    for _ in range(steps):
        measured = joint_sensors.state(engine.positions(), engine.velocities())
        step = engine.step(np.array([motor]))
        records.append(step)
        efforts.append(joint_sensors.effort(step.link, step.motor)[0])
        positions.append(measured[0][0])
    return (
        records,
        np.array(efforts),
        np.array(positions),
        true_robot.drawn_values()['joints']['hinge'],
    )


# ---------------------------------------------------------------------- ideal equals pinocchio
def test_ideal_mujoco_efforts_equal_pinocchio_inverse_dynamics_at_the_same_state():
    robot = arm()
    scene = ArmScene(ARM_URDF.read_text(), load_profile('ideal'))
    scene.payload = PAYLOAD
    scene.set_carrying(False)
    worst = 0.0
    for index in range(1500):
        sample = scene.step()
        if index % 50 == 0:
            truth = sample.truth
            q = robot.configuration(sample.joints.positions)
            torques = dynamics.inverse_dynamics(
                robot,
                q,
                robot.tangent(sample.joints.velocities),
                robot.tangent(sample.truth.joint_accelerations),
            )
            worst = max(worst, float(np.max(np.abs(torques - sample.joints.efforts))))
            np.testing.assert_array_equal(truth.friction_torques, 0.0)
            np.testing.assert_array_equal(sample.joints.efforts, truth.link_torques)
    assert worst < 1e-9


def test_ideal_mujoco_trajectory_equals_the_pinocchio_engine():
    robot = arm()
    trajectory = scripted_excitation(robot)
    reference = ArmSimulation(robot, trajectory)
    scene = ArmScene(ARM_URDF.read_text(), load_profile('ideal'), trajectory=trajectory)
    for _ in range(4000):
        expected, sample = reference.advance(), scene.step()
    np.testing.assert_allclose(sample.joints.positions, expected.positions, atol=1e-9)
    np.testing.assert_allclose(sample.joints.velocities, expected.velocities, atol=1e-8)
    np.testing.assert_allclose(sample.joints.efforts, expected.efforts, atol=1e-7)
    assert np.ptp([s for s in trajectory.evaluate(np.linspace(0, 4, 50))[0][:, 0]]) > 0.1


# ---------------------------------------------------------------------- pendulum closed forms
def test_friction_and_armature_follow_their_closed_forms_on_a_pendulum():
    joint = {
        'armature': 0.3,
        'viscous': 0.4,
        'coulomb': 0.7,
        'stribeck_static': 1.1,
        'stribeck_velocity': 0.2,
        'sign_velocity': 0.01,
    }
    records, efforts, _, _ = pendulum_run(
        joint, motor=1.0, steps=2500
    )  # swings through zero velocity
    velocities = np.array([r.velocities[0] for r in records])
    assert (
        velocities.min() < -0.5 and velocities.max() > 0.5
    )  # Stribeck level and smooth sign exercised
    for record in records:
        q, v, a = record.positions[0], record.velocities[0], record.accelerations[0]
        friction = 0.4 * v + (0.7 + 0.4 * math.exp(-((v / 0.2) ** 2))) * math.tanh(v / 0.01)
        assert record.friction[0] == pytest.approx(friction, abs=1e-12)
        gravity = -MASS * G * LENGTH * math.cos(q)
        assert a == pytest.approx(
            (1.0 - friction - gravity) / (HINGE_INERTIA + 0.3), rel=1e-9, abs=1e-9
        )
        assert record.rotor[0] == pytest.approx(0.3 * a, rel=1e-12, abs=1e-12)
        assert record.link[0] == pytest.approx(HINGE_INERTIA * a + gravity, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(
        efforts, [r.link[0] for r in records], atol=1e-12
    )  # perfect sensor: link side


def test_offset_and_scale_error_appear_in_the_joint_torque_sensor_effort():
    records, efforts, _, drawn = pendulum_run(
        {'offset': 0.3, 'offset_spread': 0.1, 'scale_error': 0.05}
    )
    assert drawn['offset'] != 0.3 and abs(drawn['offset'] - 0.3) <= 0.1
    assert 0.0 < abs(drawn['scale_error']) <= 0.05
    link = np.array([r.link[0] for r in records])
    np.testing.assert_allclose(
        efforts, (1.0 + drawn['scale_error']) * link + drawn['offset'], atol=1e-12
    )
    gravity = np.array([-MASS * G * LENGTH * math.cos(r.positions[0]) for r in records])
    accelerations = np.array([r.accelerations[0] for r in records])
    np.testing.assert_allclose(link, HINGE_INERTIA * accelerations + gravity, atol=1e-9)


def test_motor_current_is_the_motor_torque_through_gear_and_torque_constant():
    joint = {
        'armature': 0.2,
        'viscous': 0.5,
        'coulomb': 0.3,
        'gear_ratio': 50.0,
        'torque_constant': 0.08,
        'offset': 0.2,
        'scale_error': 0.0,
    }
    records, efforts, _, _ = pendulum_run(joint, effort_source='motor_current', motor=2.5)
    for record, effort in zip(records, efforts):
        motor = (
            record.link[0] + record.friction[0] + record.rotor[0]
        )  # motor side: friction and rotor included
        assert motor == pytest.approx(2.5, abs=1e-9)
        assert effort == pytest.approx((2.5 + 0.2) / (50.0 * 0.08), abs=1e-12)


def test_effort_delay_and_quantisation():
    sensors = {'effort_delay': 3, 'effort_step': 0.01, 'position_step': 0.001}
    records, efforts, positions, _ = pendulum_run({}, sensors)
    undelayed = np.round(np.array([r.link[0] for r in records]) / 0.01) * 0.01
    np.testing.assert_allclose(efforts[3:], undelayed[:-3], atol=1e-12)
    np.testing.assert_allclose(efforts[:3], undelayed[0], atol=1e-12)
    np.testing.assert_allclose(positions / 0.001, np.round(positions / 0.001), atol=1e-9)
    assert np.max(np.abs(positions - [r.positions[0] for r in records])) <= 0.0005 + 1e-12


def test_noise_has_the_profile_sigma_and_the_seed_reproduces_it():
    sensors = {'effort_noise': 0.05}
    _, first, _, _ = pendulum_run({}, sensors, steps=2000)
    records, again, _, _ = pendulum_run({}, sensors, steps=2000)
    np.testing.assert_array_equal(first, again)
    residual = first - np.array([r.link[0] for r in records])
    assert 0.045 < np.std(residual) < 0.055


# ---------------------------------------------------------------------- payload
def test_attaching_the_payload_changes_the_efforts_by_its_closed_form_gravity():
    """Holding a pose, the controller (nominal model, no payload) settles where the motors carry
    the payload: efforts − g_nominal(q) = −J_com(q)ᵀ m g, with q the settled pose."""
    robot = arm()
    pose = np.array([0.3, -0.5, 0.2, -2.0, 0.4, 1.8, 0.5])
    still = FourierTrajectory(robot.joint_names, pose, np.zeros((7, 2)), np.zeros((7, 2)), 0.2, 5.0)
    scene = ArmScene(ARM_URDF.read_text(), load_profile('ideal'), trajectory=still, payload=PAYLOAD)
    without = [scene.step() for _ in range(1500)][-1]
    scene.set_carrying(True)
    carried = [scene.step() for _ in range(4000)][-1]
    assert carried.truth.payload is PAYLOAD and without.truth.payload is None
    np.testing.assert_allclose(
        without.joints.efforts,
        dynamics.gravity_torques(robot, robot.configuration(pose)),
        atol=1e-8,
    )
    q = robot.configuration(carried.joints.positions)
    frame = robot.frame_id('tool0')
    jacobian = pin.computeFrameJacobian(robot.model, robot.data, q, frame, pin.LOCAL_WORLD_ALIGNED)
    rotation, origin = (
        robot.data.oMf[frame].rotation.copy(),
        robot.data.oMf[frame].translation.copy(),
    )
    lever = rotation @ PAYLOAD.com
    point_jacobian = jacobian[:3] - _skew(lever) @ jacobian[3:]
    expected = -point_jacobian.T @ (PAYLOAD.mass * np.array([0.0, 0.0, -G]))
    assert np.linalg.norm(expected) > 1.0
    np.testing.assert_allclose(
        carried.joints.efforts - dynamics.gravity_torques(robot, q), expected, atol=1e-8
    )
    np.testing.assert_allclose(
        rotation @ carried.truth.ft_wrench[:3], [0.0, 0.0, -PAYLOAD.mass * G], atol=1e-8
    )
    np.testing.assert_allclose(
        rotation @ carried.truth.ft_wrench[3:],
        np.cross(lever, [0.0, 0.0, -PAYLOAD.mass * G]),
        atol=1e-8,
    )
    assert np.linalg.norm(without.truth.ft_wrench) < 1e-12
    weighted, total = (
        PAYLOAD.mass * (origin + lever),
        PAYLOAD.mass,
    )  # Σ m_i c_i over the URDF's links
    pin.framesForwardKinematics(robot.model, robot.data, q)
    for name, link in robot.description.links.items():
        if link.inertial is not None:
            placement = robot.data.oMf[robot.frame_id(name)]
            weighted = weighted + link.inertial.mass * placement.act(
                np.array(link.inertial.origin.xyz)
            )
            total += link.inertial.mass
    np.testing.assert_allclose(carried.truth.center_of_mass, weighted / total, atol=1e-9)


def _skew(vector):
    x, y, z = vector
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


# ---------------------------------------------------------------------- bases
def test_tilted_base_efforts_equal_pinocchio_with_gravity_in_the_base_frame():
    tilt = (0.3, -0.2, 0.5)
    scene = ArmScene(ARM_URDF.read_text(), load_profile('ideal'), base_tilt=tilt)
    rotation = pin.rpy.rpyToMatrix(np.array(tilt))
    robot = RobotModel.from_urdf_file(ARM_URDF, gravity=list(rotation.T @ np.array([0.0, 0.0, -G])))
    for _ in range(300):
        sample = scene.step()
    q = robot.configuration(sample.joints.positions)
    torques = dynamics.inverse_dynamics(
        robot,
        q,
        robot.tangent(sample.joints.velocities),
        robot.tangent(sample.truth.joint_accelerations),
    )
    np.testing.assert_allclose(sample.joints.efforts, torques, atol=1e-9)
    np.testing.assert_allclose(
        sample.truth.base_pose[3:], pin.Quaternion(rotation).coeffs(), atol=1e-12
    )
    np.testing.assert_allclose(sample.imu.specific_force, rotation.T @ [0.0, 0.0, G], atol=1e-9)


@pytest.mark.parametrize('motion', ['mobile', 'deck'])
def test_imu_and_base_acceleration_equal_mujocos_own_on_a_moving_base(motion):
    """The truth computes them from cvel and cacc (MuJoCo before 4.0 reads 0 on a tilted, welded
    base: the test above): on a moving base they are MuJoCo's accelerometer and
    mj_objectAcceleration."""
    import mujoco

    scene = ArmScene(ARM_URDF.read_text(), load_profile('ideal'), base_motion=motion)
    model, data, root = scene.engine.model, scene.engine.data, scene.engine.scene.root_body
    peak = 0.0
    for index in range(1000):
        sample = scene.step()
        if index % 100 != 99:
            continue
        spatial = np.zeros(6)
        mujoco.mj_objectAcceleration(model, data, mujoco.mjtObj.mjOBJ_XBODY, root, spatial, 1)
        rotation = data.xmat[root].reshape(3, 3)
        linear = spatial[3:] + rotation.T @ model.opt.gravity
        np.testing.assert_allclose(sample.truth.base_acceleration[:3], linear, atol=1e-12)
        np.testing.assert_allclose(sample.truth.base_acceleration[3:], spatial[:3], atol=1e-12)
        accelerometer = data.sensor('imu_accelerometer').data
        np.testing.assert_allclose(sample.truth.imu.specific_force, accelerometer, atol=1e-12)
        peak = max(peak, np.linalg.norm(sample.truth.base_acceleration))
    assert peak > 0.1  # the base does accelerate


@pytest.mark.parametrize('motion', ['mobile', 'deck'])
def test_moving_base_truth_is_exact_floating_base_inverse_dynamics(motion):
    scene = ArmScene(ARM_URDF.read_text(), load_profile('ideal'), base_motion=motion)
    floating = RobotModel.from_urdf_file(ARM_URDF, root_joint='floating')
    peak = 0.0
    for index in range(3000):
        sample = scene.step()
        truth = sample.truth
        peak = max(peak, np.linalg.norm(truth.base_acceleration[:3]))
        if index % 300 != 299:
            continue
        twist, acceleration = truth.base_twist, truth.base_acceleration
        spatial = np.concatenate(
            [acceleration[:3] - np.cross(twist[3:], twist[:3]), acceleration[3:]]
        )
        q = floating.configuration(sample.joints.positions, truth.base_pose)
        v = floating.tangent(sample.joints.velocities, twist)
        a = floating.tangent(sample.truth.joint_accelerations, spatial)
        torques = dynamics.inverse_dynamics(floating, q, v, a)
        np.testing.assert_allclose(torques[6:], sample.joints.efforts, atol=1e-8)
    if motion == 'mobile':
        assert 1.0 < peak <= 2.0
    else:
        roll = 2.0 * math.atan2(truth.base_pose[3], truth.base_pose[6])
        assert abs(roll) <= math.radians(10.0) + 1e-3


# ---------------------------------------------------------------------- legged
@pytest.fixture(scope='module')
def legged_run():
    scene = LeggedScene('quadruped', load_profile('ideal'))
    samples = [scene.step() for _ in range(int(9.5 / scene.step_size))]
    return scene, samples


def test_standing_feet_carry_the_weight_and_a_lifted_foot_has_zero_contact_wrench(legged_run):
    scene, samples = legged_run
    standing = [s for s in samples if 1.0 <= s.time < 2.0]
    for sample in standing:
        total = sum(w.force for w in sample.truth.contact_wrenches.values())
        assert set(sample.truth.contact_wrenches) == set(scene.robot.feet)
        assert total[2] == pytest.approx(scene.weight, rel=0.02)
    lifted = [s for s in samples if 8.3 <= s.time < 9.5]
    assert lifted and all('lf_foot' not in s.truth.contact_wrenches for s in lifted)
    for sample in lifted:
        assert len(sample.truth.contact_wrenches) == 3


def test_true_cop_equals_the_contact_moments_over_the_normal_force(legged_run):
    _, samples = legged_run
    checked = 0
    for sample in samples[::97]:
        truth = sample.truth
        if truth.center_of_pressure is None:
            continue
        force, moment = np.zeros(3), np.zeros(3)  # about the world origin
        for link, wrench in truth.contact_wrenches.items():
            origin = _link_origin(sample, link)
            force += wrench.force
            moment += wrench.moment + np.cross(origin, wrench.force)
        height = truth.center_of_pressure[2]
        expected = np.array(
            [(height * force[0] - moment[1]) / force[2], (moment[0] + height * force[1]) / force[2]]
        )
        np.testing.assert_allclose(truth.center_of_pressure[:2], expected, atol=2e-4)
        checked += 1
    assert checked > 20


def _link_origin(sample, link):
    """The foot link's origin from the nominal model at the sample's true state (pinocchio)."""
    robot = _quadruped()
    q = robot.configuration(sample.joints.positions, sample.truth.base_pose)
    pin.framesForwardKinematics(robot.model, robot.data, q)
    return robot.data.oMf[robot.frame_id(link)].translation


_MODELS = {}


def _quadruped():
    from robot_dynamics.models import QUADRUPED_URDF

    if 'quadruped' not in _MODELS:
        _MODELS['quadruped'] = RobotModel.from_urdf_file(QUADRUPED_URDF, root_joint='floating')
    return _MODELS['quadruped']


# ---------------------------------------------------------------------- obstacles
def _tool_path(robot, trajectory, times):
    frame = robot.frame_id('tool0')
    points = []
    for positions in trajectory.evaluate(times)[0]:
        pin.framesForwardKinematics(robot.model, robot.data, robot.configuration(positions))
        points.append(robot.data.oMf[frame].translation.copy())
    return np.array(points)


def test_an_obstacle_on_the_path_is_hit_with_mujoco_contact_forces():
    robot = arm()
    trajectory = scripted_excitation(robot)
    times = np.linspace(0.0, trajectory.duration, 101)
    path = _tool_path(robot, trajectory, times)
    far = int(np.argmax(np.linalg.norm(path - path[0], axis=1)))
    box = Box('obstacle', tuple(path[far]), (0.06, 0.06, 0.06))
    scene = ArmScene(
        ARM_URDF.read_text(), load_profile('ideal'), trajectory=trajectory, obstacles=[box]
    )
    hits = []
    while scene.time < times[far] + 0.5:
        sample = scene.step()
        if sample.truth.contact_wrenches:
            hits.append(sample)
    assert hits, 'the excitation never touched the obstacle'
    assert (
        max(np.linalg.norm(w.force) for s in hits for w in s.truth.contact_wrenches.values()) > 1.0
    )


def test_an_obstacle_overlapping_the_start_pose_is_refused():
    robot = arm()
    start = _tool_path(robot, scripted_excitation(robot), np.zeros(1))[0]
    with pytest.raises(SceneError, match='obstacle "crate" overlaps link'):
        ArmScene(
            ARM_URDF.read_text(),
            load_profile('ideal'),
            obstacles=[Box('crate', tuple(start), (0.1,) * 3)],
        )


# ---------------------------------------------------------------------- bad input
def test_a_urdf_mujoco_cannot_compile_names_the_element_and_quotes_mujoco():
    text = ARM_URDF.read_text()
    start = text.index('<inertia ', text.index('name="fr3_link3"'))
    end = text.index('/>', start)
    bad = (
        text[:start]
        + '<inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.5"'
        + text[end:]
    )
    with pytest.raises(SceneError, match=r'element "fr3_link3".*MuJoCo says ".*A \+ B >= C'):
        ArmScene(bad, load_profile('ideal'))


@pytest.mark.parametrize(
    'force, moment', [([math.nan, 0.0, 0.0], [0.0] * 3), ([1.0, 0.0], [0.0] * 3), ([1.0] * 3, [])]
)
def test_a_push_that_is_not_three_finite_forces_and_moments_is_refused(force, moment):
    scene = ArmScene(ARM_URDF.read_text(), load_profile('ideal'))
    with pytest.raises(SceneError, match='finite force'):
        scene.set_push('tool0', force, moment)
    scene.step()  # and the scene steps on


@pytest.mark.parametrize(
    'document, message',
    [
        (
            {'joints': {'per_joint': {'fr3_joint9': {'armature': 0.1}}}},
            'joint "fr3_joint9" is not a moving joint',
        ),
        ({'links': {'per_link': {'fr3_link99': {'mass': 1.0}}}}, 'link "fr3_link99" is not a link'),
        (
            {'links': {'per_link': {'fr3_link3': {'mass': -1.0}}}},
            'link "fr3_link3".*mass must be a finite, non-negative',
        ),
        (
            {'links': {'per_link': {'fr3_link3': {'inertia': [0.001, 0, 0, 0.001, 0, 0.5]}}}},
            'link "fr3_link3" field inertia violates the triangle inequality',
        ),
        (
            {'joints': {'default': {'armature': -0.1}}},
            'joints.default: armature must not be negative',
        ),
        ({'joints': {'default': {'gear_ratio': 0.0}}}, 'gear_ratio must be positive'),
        ({'effort_source': 'strain_gauge'}, 'effort_source must be one of'),
        ({'sensors': {'effort_delay': 1.5}}, 'effort_delay is a whole number'),
        ({'joints': {'default': {'friction': 1.0}}}, r"unknown field\(s\) \['friction'\]"),
        ({'joints': {'per_joint': ['fr3_joint1']}}, 'joints.per_joint must be a mapping'),
        ({'links': {'per_link': ['fr3_link1']}}, 'links.per_link must be a mapping'),
        ({'sensors': {'effort_delay': 10**20}}, 'effort_delay is at most 10000 samples'),
        (
            {'links': {'per_link': {'fr3_link3': {'com': [0, 0, True]}}}},
            'link "fr3_link3": com must be 3 finite numbers',
        ),
        ({'links': {'spread': {'mass': 1.2}}}, 'links.spread.mass is a fraction below 1'),
        ({'links': {'spread': {'inertia': 1.0}}}, 'links.spread.inertia is a fraction below 1'),
        ({'joints': 0}, 'joints must be a mapping, got int'),
        ({'links': {'spread': False}}, 'links.spread must be a mapping, got bool'),
        ({'joints': {'per_joint': {'fr3_joint1': []}}}, 'joint "fr3_joint1" must be a mapping'),
        ({'links': {'per_link': {'fr3_link1': 0}}}, 'link "fr3_link1" must be a mapping'),
        ({'joints': {'per_joint': {1: {}, '1': {}}}}, r"joints.per_joint names \['1'\] twice"),
    ],
)
def test_bad_profiles_are_refused_before_the_simulation_starts(document, message):
    with pytest.raises(ProfileError, match=message):
        profile = profile_from_dict({'name': 'bad', **document})
        profile.draw(parse_urdf(ARM_URDF.read_text()), 0)


def test_a_profile_key_with_nothing_after_it_is_empty():
    """`joints:`, `links: {per_link: {fr3_link1: }}`, `per_joint: {fr3_joint1: }` (YAML null):
    nothing changed there, as if the key were not written."""
    document = {
        'joints': {'per_joint': {'fr3_joint1': None}},
        'links': {'per_link': {'fr3_link1': None}},
    }
    profile = profile_from_dict({'name': 'sparse', 'sensors': None, **document})
    assert profile.joints == {'fr3_joint1': {}} and profile.sensors == SensorSettings()
    assert profile.links['fr3_link1'] == LinkValues()
    profile.draw(parse_urdf(ARM_URDF.read_text()), 0)


def test_a_diverged_step_names_the_push_it_diverged_under():
    scene = ArmScene(ARM_URDF.read_text(), load_profile('ideal'))
    scene.engine.set_push(Push('tool0', np.array([1e9, 0.0, 0.0]), np.zeros(3)))
    with pytest.raises(SimulationError, match='diverged .* under a push of 1e\\+09 N .* "tool0"'):
        for _ in range(10):
            scene.step()


def test_a_link_without_an_inertial_takes_the_mass_a_profile_gives_it_at_its_origin():
    """fr3_flange has no <inertial> in the URDF: the profile's mass is a point mass at the
    link's origin (CoM and inertia as given, else zero)."""
    profile = profile_from_dict({'links': {'per_link': {'fr3_flange': {'mass': 0.2}}}})
    mass, com, inertia = profile.draw(parse_urdf(ARM_URDF.read_text()), 0).links['fr3_flange']
    assert mass == 0.2
    np.testing.assert_array_equal(com, np.zeros(3))
    np.testing.assert_array_equal(inertia, np.zeros((3, 3)))


def test_numbers_written_with_an_exponent_and_no_point_are_numbers(tmp_path):
    """PyYAML reads 1e-5 as text (YAML 1.1); a profile says what a user means."""
    path = tmp_path / 'mine.yaml'
    path.write_text('name: mine\nsensors: {position_step: 1e-5, effort_step: 2E-3}\n')
    sensors = load_profile(str(path)).sensors
    assert (sensors.position_step, sensors.effort_step) == (1e-5, 2e-3)


def test_a_profile_whose_links_mujoco_refuses_is_named_as_the_cause():
    """A zero mass the profile sets on a moving link: MuJoCo refuses the model, and the
    message names the profile, not only the URDF."""
    profile = profile_from_dict(
        {'name': 'mine', 'links': {'per_link': {'fr3_link3': {'mass': 0.0}}}}
    )
    with pytest.raises(SceneError, match='Fix the URDF or the link values of profile "mine"'):
        ArmScene(ARM_URDF.read_text(), profile)


def test_a_urdf_link_named_like_the_payload_body_is_refused_by_name():
    text = ARM_URDF.read_text().replace('"fr3_flange"', '"payload"')
    with pytest.raises(SceneError, match='the URDF has a link named "payload"'):
        ArmScene(text, load_profile('ideal'))


def test_a_profile_file_that_is_not_utf8_yaml_is_refused_naming_it(tmp_path):
    latin1 = tmp_path / 'my_robot.yaml'
    latin1.write_bytes('name: réglé\n'.encode('latin-1'))
    with pytest.raises(ProfileError, match=f'robot profile {latin1} is not UTF-8 text'):
        load_profile(str(latin1))
    broken = tmp_path / 'broken.yaml'
    broken.write_text('joints: [\n')
    with pytest.raises(ProfileError, match=f'robot profile {broken} is not valid YAML'):
        load_profile(str(broken))


def test_realistic_profile_draws_are_reproducible_and_consistent():
    description = parse_urdf(ARM_URDF.read_text())
    profile = load_profile('realistic')
    first, again, other = (
        profile.draw(description, 7),
        profile.draw(description, 7),
        profile.draw(description, 8),
    )
    assert first.drawn_values() == again.drawn_values() != other.drawn_values()
    for name, values in first.links.items():
        link = description.links[name]
        if values is None or link.inertial is None or link.inertial.mass == 0.0:
            continue
        mass, com, inertia = values
        assert abs(mass / link.inertial.mass - 1.0) <= 0.08 + 1e-12
        assert np.max(np.abs(com - np.array(link.inertial.origin.xyz))) <= 0.008 + 1e-12
        nominal = np.linalg.eigvalsh(link.inertial.tensor_in_link_frame())
        moments = np.sort(np.linalg.eigvalsh(inertia))
        a, b, c = moments
        assert a + b >= c - 1e-12
        assert np.all(
            np.abs(np.sort(np.linalg.eigvalsh(inertia)).sum() / nominal.sum() - 1.0) <= 0.15 + 1e-9
        )
    assert all(abs(drive.scale_error) <= 0.02 for drive in first.drives.values())


def test_solo12_from_example_robot_data_stands_on_its_feet():
    try:
        scene = LeggedScene('solo12', load_profile('realistic'), 4)
    except SceneError as error:
        pytest.skip(str(error))  # example-robot-data not installed
    samples = [scene.step() for _ in range(int(2.0 / scene.step_size))]
    true_weight = float(np.sum(scene.engine.model.body_mass)) * G  # the profile's perturbed masses
    totals = []
    for sample in samples[-100:]:
        wrenches = sample.truth.contact_wrenches
        assert set(wrenches) == set(scene.robot.feet)
        totals.append(sum(wrench.force for wrench in wrenches.values())[2])
    assert np.mean(totals) == pytest.approx(true_weight, rel=0.01)
    assert abs(samples[-1].truth.base_pose[2] - scene.start_position[2]) < 0.01


# ---------------------------------------------------------------------- controller
def test_tracking_controller_saturates_at_the_urdf_effort_limits():
    from robot_dynamics.simulation.controllers import TrackingController

    robot = arm()
    controller = TrackingController(robot, bandwidth_hz=30.0, saturate=True)
    q = np.zeros(robot.num_joints)
    zeros = np.zeros(robot.num_joints)
    near = (q + 1e-4, zeros, zeros)  # a small error: the RNEA torques, unclipped
    expected = dynamics.inverse_dynamics(
        robot,
        robot.configuration(q),
        zeros,
        robot.tangent(controller.stiffness * 1e-4 * np.ones(robot.num_joints)),
    )
    np.testing.assert_allclose(controller.torques(q, zeros, near), expected, atol=1e-12)
    far = (q + np.array([2.0, -2.0, 2.0, -2.0, 2.0, -2.0, 2.0]), zeros, zeros)
    unclipped = pin.rnea(
        robot.model, robot.data, q, zeros, controller.stiffness * (far[0] - q)
    )  # every joint asks for more than its drive gives
    limits = robot.limits.effort
    assert np.all(np.abs(unclipped) > limits)
    np.testing.assert_allclose(
        controller.torques(q, zeros, far), limits * np.sign(unclipped), rtol=0, atol=1e-12
    )
    unlimited = TrackingController(robot, bandwidth_hz=30.0)  # sim_robot's: never clipped
    np.testing.assert_allclose(unlimited.torques(q, zeros, far), unclipped, rtol=1e-12)
