"""Efforts that are motor currents or motor-side torques (robot_dynamics.core.streams.effort_model):
the conversion against its written-out formula, bad files refused with the reason, and
recordings of currents giving the same payload, robot identification and external torques as
the joint-torque recording they were made from (by the inverse conversion)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_payload import LINK, PAYLOAD, arm, fourier_motion, measured, true_robot

from robot_dynamics.cli import main
from robot_dynamics.core.dynamics import joint_space as dynamics
from robot_dynamics.core.identification import recording_files as recordings
from robot_dynamics.core.identification.payload import identify_payload
from robot_dynamics.core.identification.recording import Recording
from robot_dynamics.core.streams.effort_model import (
    EffortModel,
    EffortModelError,
    JointEffort,
    effort_model_problem,
)
from robot_dynamics.core.streams.live_torques import LiveTorqueEstimator
from robot_dynamics.models import ARM_URDF

ARM_JOINTS = tuple(f'fr3_joint{i}' for i in range(1, 8))
# Every kind and convention on the arm; fr3_joint7 left out of the file publishes torque.
MIXED_YAML = """
fr3_joint1: {effort: current, torque_constant: 0.12, gear_ratio: 100}
fr3_joint2: {effort: current, torque_constant: 0.08, gear_ratio: 160, efficiency: 0.8}
fr3_joint3: {effort: current, torque_constant: 0.05, gear_ratio: 120, efficiency: 0.7,
efficiency_mode: power_flow}
fr3_joint4: {effort: motor_torque, gear_ratio: 80, efficiency: 0.9}
fr3_joint5: {effort: motor_torque, gear_ratio: 50, efficiency: 0.75, efficiency_mode: power_flow}
fr3_joint6: torque
"""
IDEAL_YAML = '\n'.join(
    f'{name}: {{effort: current, torque_constant: {0.05 + 0.01 * k}, gear_ratio: {50 + 10 * k}}}'
    for k, name in enumerate(ARM_JOINTS)
)


def write(tmp_path, text: str, name: str = 'effort.yaml'):
    path = tmp_path / name
    path.write_text(text, encoding='utf-8')
    return path


def as_driver_output(recording: Recording, model: EffortModel) -> Recording:
    """What a driver described by ``model`` publishes for ``recording``'s joint torques."""
    model = model.for_joints(recording.joint_names)
    return Recording(
        recording.time,
        recording.positions,
        recording.velocities,
        model.efforts(recording.efforts, recording.velocities),
        recording.joint_names,
    )


# ------------------------------------------------------------------------------ the conversion
def written_out(
    effort: float,
    velocity: float,
    kind: str,
    k_t: float = 1.0,
    ratio: float = 1.0,
    efficiency: float = 1.0,
    mode: str = 'constant',
) -> float:
    """τ = η N k_t i (current), η N τ_m (motor torque); with power_flow the efficiency divides
    instead when the motor-side torque and the velocity have opposite signs."""
    if kind == 'torque':
        return effort
    before_losses = ratio * (k_t * effort if kind == 'current' else effort)
    if mode == 'power_flow' and before_losses * velocity < 0:
        return before_losses / efficiency
    return efficiency * before_losses


def test_joint_torques_follow_the_written_out_formula_for_every_kind_and_convention(tmp_path):
    model = EffortModel.from_yaml(write(tmp_path, MIXED_YAML)).for_joints(ARM_JOINTS)
    constants = [
        ('current', 0.12, 100, 1.0, 'constant'),
        ('current', 0.08, 160, 0.8, 'constant'),
        ('current', 0.05, 120, 0.7, 'power_flow'),
        ('motor_torque', 1.0, 80, 0.9, 'constant'),
        ('motor_torque', 1.0, 50, 0.75, 'power_flow'),
        ('torque',),
        ('torque',),
    ]
    generator = np.random.default_rng(4)
    efforts, velocities = generator.normal(0, 2, (50, 7)), generator.normal(0, 1, (50, 7))
    velocities[:5] = 0.0  # at rest the motor counts as driving
    torques = model.joint_torques(efforts, velocities)
    assert torques.shape == (50, 7)
    for j, joint in enumerate(constants):
        expected = [written_out(e, v, *joint) for e, v in zip(efforts[:, j], velocities[:, j])]
        np.testing.assert_allclose(torques[:, j], expected, rtol=1e-14)
    # one sample at a time (the live stream) gives the same numbers
    np.testing.assert_allclose(
        model.joint_torques(efforts[7], velocities[7]), torques[7], rtol=1e-14
    )
    # a back-driven power_flow joint: 2 A on joint 3 while it turns backwards -> 2·0.05·120/0.7
    assert model.joint_torques([0, 0, 2.0, 0, 0, 0, 0], [0, 0, -0.1, 0, 0, 0, 0])[
        2
    ] == pytest.approx(12 / 0.7)
    assert model.joint_torques([0, 0, 2.0, 0, 0, 0, 0], [0, 0, 0.1, 0, 0, 0, 0])[
        2
    ] == pytest.approx(12 * 0.7)


def test_a_reversed_sign_negates_the_joint_torque_and_keeps_the_power_flow_right(tmp_path):
    model = EffortModel.from_yaml(
        write(
            tmp_path,
            'fr3_joint1: {effort: torque, sign: -1}\n'
            'fr3_joint2: {effort: current, torque_constant: 0.1, gear_ratio: 50, efficiency: 0.8,'
            ' efficiency_mode: power_flow, sign: -1}\n',
        )
    ).for_joints(ARM_JOINTS[:3])
    assert not model.is_identity
    # joint 1: τ = −effort; joint 2: τ = −η N k_t i while the link turns with τ (the motor
    # drives), −N k_t i / η while it turns against it; joint 3 is not named: torque.
    np.testing.assert_allclose(
        model.joint_torques([3.0, 2.0, 1.5], [0.0, -0.5, 0.0]), [-3.0, -2.0 * 5.0 * 0.8, 1.5]
    )
    np.testing.assert_allclose(model.joint_torques([0.0, 2.0, 0.0], [0, 0.5, 0])[1], -10.0 / 0.8)
    torques, velocities = (
        np.array([[4.0, -7.0, 1.0], [-2.0, 3.0, 0.5]]),
        np.array([[1.0, 0.3, 0.0], [0.2, 0.4, -1.0]]),
    )
    np.testing.assert_allclose(
        model.joint_torques(model.efforts(torques, velocities), velocities), torques, rtol=1e-14
    )
    assert 'fr3_joint1: torque (sign -1)' in repr(model) and 'η=0.8, sign -1, power_flow' in repr(
        model
    )


def test_efforts_invert_joint_torques(tmp_path):
    model = EffortModel.from_yaml(write(tmp_path, MIXED_YAML)).for_joints(ARM_JOINTS)
    generator = np.random.default_rng(5)
    torques, velocities = generator.normal(0, 20, (200, 7)), generator.normal(0, 1, (200, 7))
    np.testing.assert_allclose(
        model.joint_torques(model.efforts(torques, velocities), velocities), torques, rtol=1e-13
    )


def test_a_joint_the_file_does_not_name_publishes_torque_and_the_order_follows_the_robot(tmp_path):
    model = EffortModel.from_yaml(
        write(tmp_path, 'fr3_joint2: {effort: current, torque_constant: 0.1, gear_ratio: 10}\n')
    )
    ordered = model.for_joints(('fr3_joint3', 'fr3_joint2', 'fr3_joint1'))
    np.testing.assert_allclose(
        ordered.joint_torques([1.0, 1.0, 1.0], [0.0, 0.0, 0.0]), [1.0, 1.0, 1.0 * 0.1 * 10]
    )
    assert not ordered.is_identity and EffortModel.identity(ARM_JOINTS).is_identity
    assert (
        EffortModel.from_yaml(write(tmp_path, '', 'empty.yaml')).for_joints(ARM_JOINTS).is_identity
    )


# ------------------------------------------------------------------------------ bad files
@pytest.mark.parametrize(
    'text, reason',
    [
        (
            'fr3_joint1: {effort: current, torque_constant: 0.0, gear_ratio: 100}',
            'torque_constant must be a positive',
        ),
        (
            'fr3_joint1: {effort: current, torque_constant: -0.1, gear_ratio: 100}',
            'torque_constant must be a positive',
        ),
        ('fr3_joint1: {effort: motor_torque, gear_ratio: 0}', 'gear_ratio must be a positive'),
        ('fr3_joint1: {effort: motor_torque, gear_ratio: .nan}', 'gear_ratio must be a positive'),
        ('fr3_joint1: {effort: motor_torque, gear_ratio: "100"}', 'gear_ratio must be a positive'),
        (
            'fr3_joint1: {effort: motor_torque, gear_ratio: 100, efficiency: 0}',
            'efficiency must be a positive',
        ),
        (
            'fr3_joint1: {effort: motor_torque, gear_ratio: 100, efficiency: 1.2}',
            'efficiency must be in (0, 1]',
        ),
        (
            'fr3_joint1: {effort: amps}',
            "effort must be one of ('torque', 'current', 'motor_torque')",
        ),
        ('fr3_joint1: {torque_constant: 0.1}', 'effort must be one of'),
        ('fr3_joint1: {effort: current, gear_ratio: 100}', "needs ['torque_constant']"),
        ('fr3_joint1: {effort: current, torque_constant: 0.1}', "needs ['gear_ratio']"),
        (
            'fr3_joint1: {effort: torque, gear_ratio: 100}',
            "['gear_ratio'] do not apply to effort \"torque\"",
        ),
        (
            'fr3_joint1: {effort: motor_torque, gear_ratio: 100, torque_constant: 0.1}',
            'do not apply',
        ),
        (
            'fr3_joint1: {effort: current, torque_constant: 0.1, gear_ratio: 100, gear: 2}',
            "unknown keys ['gear']",
        ),
        (
            'fr3_joint1: '
            '{effort: current, torque_constant: 0.1, gear_ratio: 9, efficiency_mode: both}',
            'efficiency_mode must be one of',
        ),
        ('fr3_joint1: {effort: torque, sign: 2}', 'sign must be 1 or -1, got 2'),
        ('fr3_joint1: {effort: torque, sign: true}', 'sign must be 1 or -1, got True'),
        ("fr3_joint1: {effort: torque, sign: '-1'}", "sign must be 1 or -1, got '-1'"),
        ('fr3_joint1: [current, 0.1]', 'expected a mapping'),
        ('- fr3_joint1', 'expected a mapping of joint name'),
        ('fr3_joint1: {effort: current', 'is not valid YAML'),
    ],
)
def test_a_bad_file_is_refused_naming_the_joint_and_the_reason(tmp_path, text, reason):
    path = write(tmp_path, text)
    with pytest.raises(EffortModelError) as raised:
        EffortModel.from_yaml(path)
    assert reason in str(raised.value) and str(path) in str(raised.value)
    if 'mapping of joint name' not in reason and 'YAML' not in reason:
        assert 'joint "fr3_joint1"' in str(raised.value)
    assert reason in effort_model_problem(str(path))


def test_a_missing_file_and_a_joint_the_robot_lacks_are_refused(tmp_path):
    with pytest.raises(EffortModelError, match='effort model .*missing.yaml cannot be read'):
        EffortModel.from_yaml(tmp_path / 'missing.yaml')
    with pytest.raises(EffortModelError, match='effort model /dev/zero is not a regular file'):
        EffortModel.from_yaml('/dev/zero')  # never read to its end
    model = EffortModel.from_yaml(
        write(tmp_path, 'elbow: {effort: motor_torque, gear_ratio: 10}\n')
    )
    with pytest.raises(EffortModelError, match=r"names joints \['elbow'\] that are not among"):
        model.for_joints(ARM_JOINTS)
    with pytest.raises(EffortModelError, match='gear_ratio must be a positive'):
        JointEffort('motor_torque', gear_ratio=-3.0)
    assert effort_model_problem('') == ''


# ------------------------------------------------------------------------------ payload
# identification
@pytest.fixture(scope='module')
def payload_recording() -> Recording:
    return measured(fourier_motion(arm(), duration=8.0, rate=250.0, seed=31), true_robot())


def assert_same_payload(answer: dict, reference: dict, rtol: float) -> None:
    assert answer['success'] and reference['success'], (answer['reason'], reference['reason'])
    for key in ('mass', 'mass_std', 'condition_number', 'residual_rms_after'):
        assert answer[key] == pytest.approx(reference[key], rel=rtol), key
    np.testing.assert_allclose(answer['com'], reference['com'], rtol=rtol, atol=1e-12)
    for key, value in (reference['inertia'] or {}).items():
        assert answer['inertia'][key] == pytest.approx(value, rel=rtol, abs=1e-12), key


@pytest.mark.parametrize(
    'file_text', [IDEAL_YAML, MIXED_YAML], ids=['currents_efficiency_1', 'mixed_efficiency']
)
def test_a_recording_of_currents_gives_the_payload_of_the_torque_recording(
    tmp_path, payload_recording, file_text
):
    robot = arm()
    model = EffortModel.from_yaml(write(tmp_path, file_text))
    currents = as_driver_output(payload_recording, model)
    recordings.write_csv(tmp_path / 'currents.csv', currents)
    read_back = recordings.read_recording(
        tmp_path / 'currents.csv', model, joint_names=robot.joint_names
    )
    np.testing.assert_allclose(read_back.efforts, payload_recording.efforts, rtol=1e-12, atol=1e-12)
    reference = identify_payload(robot, payload_recording, LINK, 'auto').to_dict()
    assert abs(reference['mass'] - PAYLOAD.mass) < 0.02
    assert_same_payload(identify_payload(robot, read_back, LINK, 'auto').to_dict(), reference, 1e-8)
    # the control: the currents taken as torques do not give that payload
    unconverted = identify_payload(robot, currents, LINK, 'auto').to_dict()
    assert not unconverted['success'] or abs(unconverted['mass'] - reference['mass']) > 0.1


def test_identify_payload_cli_converts_a_bag_and_a_baseline_of_currents(tmp_path, capsys):
    motion = fourier_motion(arm(), duration=8.0, rate=250.0, seed=32)
    loaded = measured(motion, true_robot(perturbed=True), effort_noise=0.1, friction=True)
    empty = measured(
        motion, true_robot(payload=None, perturbed=True), effort_noise=0.1, friction=True, seed=8
    )
    model_path = write(tmp_path, MIXED_YAML)
    model = EffortModel.from_yaml(model_path)
    recordings.write_rosbag(
        tmp_path / 'loaded_bag', as_driver_output(loaded, model), storage='mcap'
    )
    recordings.write_csv(tmp_path / 'empty.csv', as_driver_output(empty, model))
    code = main(
        [
            'identify-payload',
            '--urdf',
            str(ARM_URDF),
            '--bag',
            str(tmp_path / 'loaded_bag'),
            '--baseline',
            str(tmp_path / 'empty.csv'),
            '--effort-model',
            str(model_path),
            '--format',
            'json',
        ]
    )
    answer = json.loads(capsys.readouterr().out)
    reference = identify_payload(arm(), loaded, LINK, 'auto', empty).to_dict()
    assert code == 0
    assert_same_payload(answer, reference, 1e-6)
    assert abs(answer['mass'] - PAYLOAD.mass) < 0.05


def test_identify_payload_cli_refuses_a_bad_effort_model_with_the_reason(
    tmp_path, capsys, payload_recording
):
    recordings.write_csv(tmp_path / 'motion.csv', payload_recording)
    bad = write(tmp_path, 'fr3_joint1: {effort: current, torque_constant: 0, gear_ratio: 100}\n')
    unknown = write(
        tmp_path, 'wrist_roll: {effort: motor_torque, gear_ratio: 10}\n', 'unknown.yaml'
    )
    for path, reason in ((bad, 'torque_constant must be a positive'), (unknown, "['wrist_roll']")):
        code = main(
            [
                'identify-payload',
                '--urdf',
                str(ARM_URDF),
                '--csv',
                str(tmp_path / 'motion.csv'),
                '--effort-model',
                str(path),
            ]
        )
        error = capsys.readouterr().err
        assert code == 1 and reason in error and error.startswith('identify-payload: '), error


# ------------------------------------------------------------------------------ whole-robot
# identification
def test_identify_cli_on_currents_gives_the_torque_recording_report(tmp_path, capsys):
    recording = measured(
        fourier_motion(arm(), duration=8.0, rate=200.0, seed=33),
        true_robot(payload=None),
        friction=True,
    )
    model_path = write(tmp_path, MIXED_YAML)
    recordings.write_csv(tmp_path / 'torques.csv', recording)
    recordings.write_csv(
        tmp_path / 'currents.csv', as_driver_output(recording, EffortModel.from_yaml(model_path))
    )
    options = [
        '--friction',
        'viscous,coulomb,offset',
        '--period',
        '0.005',
        '--cutoff',
        '20',
        '--format',
        'json',
    ]
    reports = []
    for extra in (
        ['--csv', str(tmp_path / 'torques.csv')],
        ['--csv', str(tmp_path / 'currents.csv'), '--effort-model', str(model_path)],
    ):
        assert main(['identify', '--urdf', str(ARM_URDF), *extra, *options]) == 0
        reports.append(json.loads(capsys.readouterr().out))
    torques, currents = reports
    assert (
        max(torques['rms_held_out'].values()) < 0.2
    )  # the torque recording identifies the robot ...
    for joint, rms in torques['rms_held_out'].items():  # ... and the currents give the same fit
        assert currents['rms_held_out'][joint] == pytest.approx(rms, rel=1e-5), joint
    assert currents['condition_number'] == pytest.approx(torques['condition_number'], rel=1e-9)
    bad = write(
        tmp_path, 'fr3_joint1: {effort: motor_torque, gear_ratio: 10, efficiency: 2}\n', 'bad.yaml'
    )
    assert (
        main(
            [
                'identify',
                '--urdf',
                str(ARM_URDF),
                '--csv',
                str(tmp_path / 'torques.csv'),
                '--effort-model',
                str(bad),
            ]
        )
        == 2
    )
    assert 'efficiency must be in (0, 1]' in capsys.readouterr().err


# ------------------------------------------------------------------------------ live stream
def test_the_live_estimator_converts_currents_before_external_torques(tmp_path):
    robot = arm()
    model = EffortModel.from_yaml(write(tmp_path, MIXED_YAML))
    motion = fourier_motion(robot, duration=0.2, rate=1000.0, seed=34)
    torques = measured(motion, true_robot(), effort_noise=0.0, velocity_noise=0.0)
    currents = as_driver_output(torques, model)
    on_torques = LiveTorqueEstimator(robot, acceleration_mode='zero')
    on_currents = LiveTorqueEstimator(robot, acceleration_mode='zero', effort_model=model)
    names = list(robot.joint_names)
    compared = 0
    for k in range(torques.num_samples):
        reference = on_torques.update(
            names, torques.positions[k], torques.velocities[k], torques.efforts[k], torques.time[k]
        )
        sample = on_currents.update(
            names,
            currents.positions[k],
            currents.velocities[k],
            currents.efforts[k],
            currents.time[k],
        )
        np.testing.assert_allclose(sample.efforts, torques.efforts[k], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(sample.residual, reference.residual, rtol=1e-9, atol=1e-9)
        compared += 1
    assert compared == torques.num_samples
    assert (
        np.abs(reference.residual).max() > 1.0
    )  # the payload's torque: not a trivially zero comparison
    with pytest.raises(EffortModelError, match='elbow'):
        LiveTorqueEstimator(robot, effort_model=EffortModel.from_dict({'elbow': 'torque'}))


# ------------------------------------------------------------------------------ dynamics_node
def test_dynamics_node_turns_published_currents_into_joint_torques(ros, tmp_path):
    pytest.importorskip('rclpy')
    from rclpy.parameter import Parameter
    from ros_harness import wait_for
    from sensor_msgs.msg import JointState

    from robot_dynamics.ros.dynamics_node import DynamicsNode
    from robot_dynamics.ros.topics import SENSOR_QOS

    robot = arm()
    model_path = write(tmp_path, MIXED_YAML)
    model = EffortModel.from_yaml(model_path).for_joints(robot.joint_names)
    positions = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])
    velocities = np.array([0.2, -0.1, -0.3, 0.1, -0.2, 0.1, 0.5])
    model_torque = dynamics.inverse_dynamics(
        robot, robot.configuration(positions), velocities, np.zeros(7)
    )
    measured_torque = model_torque + 0.5  # 0.5 N·m of external torque on every joint
    overrides = [
        Parameter(name, value=value)
        for name, value in (
            ('robot_description', ARM_URDF.read_text()),
            ('acceleration_mode', 'zero'),
            ('external_torque_method', 'inverse_dynamics'),
            ('effort_model_file', str(model_path)),
        )
    ]
    node = DynamicsNode(node_name='dynamics_effort_model', parameter_overrides=overrides)
    with ros(node) as harness:
        external_out = harness.collect(
            JointState, f'/{node.get_name()}/external_torques', SENSOR_QOS
        )
        publisher = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(
            lambda: (
                node.count_publishers('joint_states') >= 1
                and all(
                    subscription.get_publisher_count() >= 1
                    for subscription in harness.probe.subscriptions
                )
            ),
            5,
        )
        message = JointState(
            name=list(robot.joint_names),
            position=positions.tolist(),
            velocity=velocities.tolist(),
            effort=model.efforts(measured_torque, velocities).tolist(),
        )
        for step in range(200):
            message.header.stamp.sec, message.header.stamp.nanosec = 1, 1000000 * step
            publisher.publish(message)
            if wait_for(lambda: bool(external_out), 0.05):
                break
        assert wait_for(lambda: bool(external_out), 5)
        np.testing.assert_allclose(np.abs(external_out[-1].effort), np.full(7, 0.5), atol=1e-9)
        _, _, _, recorded = (
            node._live.recording.arrays()
        )  # the payload recording holds joint torques too
        np.testing.assert_allclose(recorded[-1], measured_torque, rtol=1e-12)


def test_dynamics_node_refuses_a_bad_effort_model_file_with_the_reason_in_the_log(
    ros, tmp_path, capfd
):
    from rclpy.parameter import Parameter

    from robot_dynamics.ros.dynamics_node import DynamicsNode

    bad = write(tmp_path, 'fr3_joint1: {effort: current, gear_ratio: 100}\n')
    node = DynamicsNode(
        node_name='dynamics_bad_effort_model',
        parameter_overrides=[
            Parameter('urdf_file', value=str(ARM_URDF)),
            Parameter('effort_model_file', value=str(bad)),
        ],
    )
    try:
        assert node.settings.effort_model is None
        assert node.get_parameter('effort_model_file').value == ''
        log = capfd.readouterr().err
        assert "needs ['torque_constant']" in log and 'effort_model_file' in log, log
    finally:
        node.destroy_node()


def test_dynamics_node_with_an_effort_model_of_other_joints_runs_on_torques_and_says_why(
    ros, tmp_path, capfd
):
    from rclpy.parameter import Parameter

    from robot_dynamics.ros.dynamics_node import DynamicsNode

    other = write(tmp_path, 'elbow: {effort: motor_torque, gear_ratio: 10}\n')
    node = DynamicsNode(
        node_name='dynamics_other_effort_model',
        parameter_overrides=[
            Parameter('urdf_file', value=str(ARM_URDF)),
            Parameter('effort_model_file', value=str(other)),
        ],
    )
    try:
        assert (
            node.settings.effort_model is not None and node._live is not None
        )  # the model is served
        assert node._live.estimator._effort_model is None
        log = capfd.readouterr().err
        assert "names joints ['elbow']" in log and 'efforts are taken as joint torques' in log, log
    finally:
        node.destroy_node()
