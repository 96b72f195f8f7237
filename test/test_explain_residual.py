"""The explained residual: recordings with one known term injected each (the term is named and
its size found), the proving ground's realistic arm driven by motor currents read one sample
late, with a payload the model lacks (every term's truth known), the command line and the real
node's service."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import yaml
from conftest import SHARED_DATA
from ros_harness import wait_for

from robot_dynamics.core.dynamics import joint_space
from robot_dynamics.core.errors import IdentificationRefused
from robot_dynamics.core.identification.recording import Recording
from robot_dynamics.core.identification.recording_files import write_csv
from robot_dynamics.core.identification.residual_terms import explain_residual
from robot_dynamics.core.model.inertia import InertialParameters, box_inertia
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.models import ARM_URDF

PAYLOAD = InertialParameters(1.0, [0.0, 0.02, 0.05], box_inertia(1.0, [0.06, 0.06, 0.1]))


def _rms(values) -> np.ndarray:
    return np.sqrt(np.mean(np.square(values), axis=0))


def _excitation(robot: RobotModel, seconds: float = 20.0, rate: float = 200.0) -> tuple:
    from robot_dynamics.simulation.reference import scripted_excitation

    trajectory = scripted_excitation(robot)
    time = np.arange(0.0, seconds, 1.0 / rate)
    q, v, a = trajectory.evaluate(time % trajectory.duration)
    torques = np.array([joint_space.inverse_dynamics(robot, *sample) for sample in zip(q, v, a)])
    return time, q, v, a, torques


def _injected(robot: RobotModel, term: str) -> tuple:
    """(recording, the injected torques): the URDF's torques plus one term."""
    time, q, v, a, torques = _excitation(robot)
    added = np.zeros_like(torques)
    if term == 'offset':
        added[:, 1] = 0.4
    elif term == 'friction':
        added[:, 0] = 0.5 * v[:, 0] + 0.6 * np.tanh(v[:, 0] / 0.005)
    elif term == 'rotor_inertia':
        added[:, 3] = 0.3 * a[:, 3]
    elif term == 'effort_scale':
        added[:, 1] = 0.05 * torques[:, 1]
    elif term == 'effort_delay':  # each effort measured two samples (10 ms) before its state
        added[2:] = torques[:-2] - torques[2:]
    else:
        loaded = RobotModel.from_urdf_string(ARM_URDF.read_text())
        loaded.attach_payload('tool0', PAYLOAD)
        added = np.array([joint_space.inverse_dynamics(loaded, *s) for s in zip(q, v, a)]) - torques
    return Recording(time, q, v, torques + added, robot.joint_names), added


TERMS = ['offset', 'friction', 'rotor_inertia', 'effort_scale', 'effort_delay', 'payload']


@pytest.mark.parametrize('term', TERMS)
def test_one_injected_term_is_named_and_sized(term):
    robot = RobotModel.from_urdf_string(ARM_URDF.read_text())
    recording, added = _injected(robot, term)
    explanation = explain_residual(robot, recording, 'tool0')
    assert explanation.dominant() == term
    truth = _rms(added)
    np.testing.assert_allclose(explanation.contributions[term], truth, rtol=0.1, atol=0.01)
    assert np.all(explanation.unexplained_rms < 0.1 * truth.max() + 0.01)
    shares = explanation.own_share
    assert all(0.0 <= share <= 1.0 for share in shares.values()), shares
    if term in ('friction', 'rotor_inertia'):  # velocity and acceleration shapes: their own
        assert shares[term] > 0.6, shares
    if term == 'payload':  # ≈ a scale error per joint along this motion: said so
        assert shares[term] < 0.5 and 'hard to tell apart' in explanation.report(), shares
    if term == 'effort_delay':
        assert explanation.effort_delay == pytest.approx(0.010, rel=0.05)
        assert 'set effort_delay 0.010' in explanation.report(), explanation.report()
    else:
        assert abs(explanation.effort_delay) < 0.5 * explanation.period
        assert 'no delay to set' in explanation.report()


def test_a_robot_at_rest_is_refused_with_what_to_do():
    """Still, with 1e-5 rad of position noise and an offset: at rest the offsets, a payload and
    the effort scale are one another (the fit gave 17 000 % shares), so no explanation."""
    robot = RobotModel.from_urdf_string(ARM_URDF.read_text())
    rng = np.random.default_rng(4)
    time = np.arange(0.0, 10.0, 0.005)
    q = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8]) + rng.normal(0.0, 1e-5, (len(time), 7))
    v = np.gradient(q, time, axis=0) * 0.01  # a driver's filtered velocity: near zero
    efforts = np.array([joint_space.gravity_torques(robot, row) for row in q]) + 0.3
    recording = Recording(time, q, v, efforts, robot.joint_names)
    with pytest.raises(IdentificationRefused, match='the robot hardly moved .*excitation'):
        explain_residual(robot, recording, 'tool0')


def test_each_term_of_the_realistic_arm_is_found_against_its_truth():
    """The proving ground's realistic arm, efforts from motor currents (so friction and rotor
    inertia are in them), carrying a 1 kg payload the model lacks; 30 s of its excitation.
    Link inertials drawn ±8 % mass, ±8 mm CoM, ±15 % inertia are not a term: they bleed into
    the small offset and scale terms, so those are checked only where they stand out."""
    from robot_dynamics.simulation.profiles import profile_from_dict
    from robot_dynamics.simulation.scenes import ArmScene

    with open('config/robot_profiles/realistic.yaml', encoding='utf-8') as stream:
        profile = yaml.safe_load(stream)
    profile.update(name='realistic, motor currents', effort_source='motor_current')
    text = ARM_URDF.read_text()
    scene = ArmScene(
        text, profile_from_dict(profile), 5, payload=PAYLOAD, carrying=True, table=False
    )
    robot = RobotModel.from_urdf_string(text)
    newton_metres_per_ampere = 100 * 0.1  # the profile's gear ratio × torque constant
    samples = [scene.step() for _ in range(30000)]
    recording = Recording(
        np.array([s.time for s in samples]),
        np.array([s.joints.positions for s in samples]),
        np.array([s.joints.velocities for s in samples]),
        np.array([s.joints.efforts for s in samples]) * newton_metres_per_ampere,
        robot.joint_names,
    )
    explanation = explain_residual(robot, recording, 'tool0')
    assert explanation.dominant() == 'payload'
    loaded = RobotModel.from_urdf_string(text)
    loaded.attach_payload('tool0', PAYLOAD)
    payload_torques = [
        joint_space.inverse_dynamics(loaded, s.joints.positions, s.joints.velocities, a)
        - joint_space.inverse_dynamics(robot, s.joints.positions, s.joints.velocities, a)
        for s in samples[::10]
        for a in [s.truth.joint_accelerations]
    ]
    truth = {
        'friction': _rms([s.truth.friction_torques for s in samples]),
        'rotor_inertia': _rms([s.truth.rotor_torques for s in samples]),
        'payload': _rms(payload_torques),
    }
    found = explanation.contributions
    np.testing.assert_allclose(found['friction'], truth['friction'], rtol=0.2)
    carrying = truth['payload'] > 1.0  # the joints the payload loads most
    np.testing.assert_allclose(found['payload'][carrying], truth['payload'][carrying], rtol=0.2)
    assert found['payload'].sum() == pytest.approx(truth['payload'].sum(), rel=0.2)
    assert found['rotor_inertia'].sum() == pytest.approx(truth['rotor_inertia'].sum(), rel=0.2)
    # the profile's currents are read one sample (1 ms) after they were measured
    assert explanation.effort_delay == pytest.approx(1e-3, rel=0.2)
    offsets = scene.joint_sensors.offset
    large = np.abs(offsets) > 0.15
    np.testing.assert_allclose(explanation.offsets[large], offsets[large], rtol=0.5)


def test_the_command_line_explains_a_csv(tmp_path):
    robot = RobotModel.from_urdf_string(ARM_URDF.read_text())
    recording, _ = _injected(robot, 'offset')
    csv = tmp_path / 'recording.csv'
    write_csv(csv, recording)
    command = [sys.executable, '-m', 'robot_dynamics', 'explain-residual', '--urdf', str(ARM_URDF)]
    run = subprocess.run(command + ['--csv', str(csv)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert 'largest: offset: zero the effort offsets' in run.stdout
    assert 'fr3_joint2' in run.stdout
    missing = subprocess.run(
        command + ['--csv', str(tmp_path / 'none.csv')], capture_output=True, text=True, timeout=120
    )
    assert missing.returncode == 2 and 'explain-residual:' in missing.stderr


def test_the_command_line_explains_the_real_panda_recording():
    """The Gaz et al. 2019 Panda folder given as --bag: the URDF's link inertias are what is most
    wrong (the residual `identify` takes away), and friction carries most of the wrist's."""
    panda = SHARED_DATA / 'panda_gaz2019'
    command = [sys.executable, '-m', 'robot_dynamics', 'explain-residual']
    command += ['--urdf', str(panda / 'panda_arm.urdf'), '--bag', str(panda)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert 'largest: unexplained' in run.stdout and 'robot_dynamics identify' in run.stdout
    assert "of each term's torque, what no other term fits: offset" in run.stdout
    rows = {line.split()[0]: line for line in run.stdout.splitlines() if line.startswith('panda_')}
    assert len(rows) == 7
    for joint in ('panda_joint5', 'panda_joint7'):  # friction column: "<N·m> (<share> %)"
        share = float(rows[joint].split('(')[2].split('%')[0])
        assert share > 50.0, rows[joint]
    # the URDF's link errors bend the delay's fit (0.8 ms here; 0.0 against the identified
    # model, whose held-out error grows when the efforts are shifted): not advised from it
    delay = [line for line in run.stdout.splitlines() if line.startswith('effort delay:')]
    assert len(delay) == 1 and 'not to be set from this model' in delay[0], run.stdout


def test_the_node_explains_what_it_recorded(ros):
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger
    from test_dynamics_node import joint_state

    from robot_dynamics.ros.dynamics_node import DynamicsNode
    from robot_dynamics.ros.topics import JOINT_STATE_QOS, SENSOR_QOS

    robot = RobotModel.from_urdf_string(ARM_URDF.read_text())
    recording, _ = _injected(robot, 'offset')
    node = DynamicsNode(
        node_name='explain_node', parameter_overrides=[Parameter('urdf_file', value=str(ARM_URDF))]
    )
    with ros(node) as harness:
        gravity = harness.collect(JointState, '/explain_node/gravity_torques', SENSOR_QOS)
        feed = harness.probe.create_publisher(JointState, 'joint_states', JOINT_STATE_QOS)
        assert wait_for(lambda: node.robot is not None and feed.get_subscription_count(), 30)
        refused = harness.call(Trigger, '/explain_node/explain_residual', Trigger.Request())
        assert not refused.success and 'nothing recorded' in refused.message
        samples = zip(recording.time, recording.positions, recording.velocities, recording.efforts)
        for k, (t, q, v, e) in enumerate(samples):
            feed.publish(joint_state(robot.joint_names, q, v, e, stamp=1.0 + t))
            if k % 100 == 99:  # paced: the input queue holds 1000
                wait_for(lambda: len(gravity) > k - 200, 5)
        assert wait_for(lambda: len(gravity) >= 0.9 * len(recording.time), 60)
        wait_for(lambda: len(gravity) >= len(recording.time), 2)
        answer = harness.call(Trigger, '/explain_node/explain_residual', Trigger.Request())
    assert answer.success, answer.message
    assert 'largest: offset' in answer.message
