"""Collision sensitivity profiles: the shipped file equals the built-in profiles; each profile's
effect on the contact flag (the 2R arm at rest with a known external torque, inverse-dynamics
route: τ_ext is exactly the torque added to the efforts); runtime switching through the real
node's parameter service; bad profiles refused by name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import vertical_2r
from ros_harness import wait_for
from test_dynamics_node import ARM_TEXT, joint_state, make_node, set_parameters

from robot_dynamics.core.contact.contact_profiles import (
    SHIPPED_PROFILES,
    ContactProfileError,
    load_profiles,
    profiles_from_yaml,
)
from robot_dynamics.core.dynamics import joint_space
from robot_dynamics.core.live.live_dynamics import LiveDynamics
from robot_dynamics.core.live.settings import LiveSettings
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.joint_states import JointSample
from robot_dynamics.models import ARM_URDF

SHIPPED_FILE = Path(__file__).resolve().parents[1] / 'config' / 'contact_profiles.yaml'
POSE = np.array([0.7, -1.1])
THRESHOLDS = (2.0, 1.0)


def test_the_shipped_file_is_the_built_in_profiles():
    assert profiles_from_yaml(SHIPPED_FILE.read_text(), 'shipped') == SHIPPED_PROFILES


def _flags(profile: str, push: np.ndarray, samples: int = 40) -> tuple:
    """(contact flag, ratios) of the 2R arm at rest with ``push`` [N·m] applied, 1 kHz."""
    live = LiveDynamics(
        vertical_2r.model(),
        LiveSettings(
            external_torque_method='inverse_dynamics',
            acceleration_mode='zero',
            contact_thresholds=THRESHOLDS,
            contact_profile=profile,
        ),
    )
    gravity = vertical_2r.torques(POSE, np.zeros(2), np.zeros(2))
    # The environment pushes with τ_ext: the motors hold with g − τ_ext.
    efforts = gravity - push
    for k in range(samples):
        result = live.update(JointSample(('shoulder', 'elbow'), POSE, (0, 0), efforts, 1 + k / 1e3))
    contact = result.contact
    return (None, None) if contact is None else (contact.in_contact, contact.ratios)


def test_each_shipped_profile_does_what_it_says():
    light = np.array([0.0, 0.75])  # 75 % of the elbow's threshold
    heavy = np.array([0.0, 1.5])
    assert _flags('default', light)[0] is False
    assert _flags('sensitive', light)[0] is True  # 60 % of the thresholds
    assert _flags('default', heavy)[0] is True
    flag, ratios = _flags('hand_guiding', heavy)
    assert flag is False and ratios[1] == pytest.approx(1.5, abs=1e-9)  # ratios kept, no flag
    assert _flags('off', heavy) == (None, None)


def test_switching_takes_effect_at_the_next_sample_and_unknown_names_list_the_choices():
    live = LiveDynamics(
        vertical_2r.model(),
        LiveSettings(
            external_torque_method='inverse_dynamics',
            acceleration_mode='zero',
            contact_thresholds=THRESHOLDS,
        ),
    )
    gravity = vertical_2r.torques(POSE, np.zeros(2), np.zeros(2))
    names = ('shoulder', 'elbow')
    for k in range(20):
        result = live.update(JointSample(names, POSE, (0, 0), gravity - (0, 0.75), 1 + k / 1e3))
    assert result.contact.in_contact is False
    live.use_contact_profile('sensitive')
    for k in range(20, 24):
        result = live.update(JointSample(names, POSE, (0, 0), gravity - (0, 0.75), 1 + k / 1e3))
    assert result.contact.in_contact is True  # after its 2 ms minimum duration
    with pytest.raises(ContactProfileError, match='hand_guiding'):
        live.use_contact_profile('gentle')
    assert live.contact_profile.name == 'sensitive'


def test_a_file_adds_profiles_and_bad_fields_are_named(tmp_path):
    good = tmp_path / 'profiles.yaml'
    good.write_text('profiles:\n  cobot_slow: {thresholds: [3.0, 1.2], min_duration: 0.01}\n')
    profiles = load_profiles(str(good))
    assert set(profiles) == set(SHIPPED_PROFILES) | {'cobot_slow'}
    np.testing.assert_array_equal(profiles['cobot_slow'].thresholds_for(None, 2), [3.0, 1.2])
    with pytest.raises(ContactProfileError, match='2 thresholds for a model of 7 joints'):
        profiles['cobot_slow'].thresholds_for(None, 7)
    for text, words in (
        ('profiles:\n  x: {threshold_scale: -1}\n', 'profile x: threshold_scale'),
        ('profiles:\n  x: {raise_contact: maybe}\n', 'profile x: raise_contact'),
        ('profiles:\n  x: {min_durration: 0.1}\n', "unknown fields \\['min_durration'\\]"),
        ('profiles:\n  x: 0\n', 'profile x: not a mapping'),
        ('profiles:\n  off: {}\n  "off": {}\n', "names the profiles \\['off'\\] twice"),
    ):
        bad = tmp_path / 'bad.yaml'
        bad.write_text(text)
        with pytest.raises(ContactProfileError, match=f'bad.yaml.*{words}'):
            load_profiles(str(bad))
    # a refused file whose profile is asked for: both said, the file's reason first
    bad.write_text('profiles:\n  gentle: {threshold_scale: 2.0}\n  broken: {threshold_scale: -1}\n')
    live = LiveDynamics(
        vertical_2r.model(), LiveSettings(contact_profiles_file=str(bad), contact_profile='gentle')
    )
    problem = next(p for p in live.problems if 'profile broken' in p)
    assert problem.index('profile broken') < problem.index("contact_profile 'gentle' unknown")


def test_ros2_param_set_switches_the_real_nodes_profile(ros):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Bool

    from robot_dynamics.ros.dynamics_outputs import CONTACT_QOS
    from robot_dynamics.ros.topics import SENSOR_QOS

    robot = RobotModel.from_urdf_file(ARM_URDF)
    pose = np.array([0.1, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])
    gravity = joint_space.gravity_torques(robot, pose)
    push = np.zeros(7)
    push[3] = 3.0
    node = make_node(
        robot_description=ARM_TEXT,
        external_torque_method='inverse_dynamics',
        acceleration_mode='zero',
        contact_thresholds=[2.0] * 7,
        contact_rate=100.0,
    )
    name = node.get_name()
    with ros(node) as harness:
        contact = harness.collect(Bool, f'/{name}/contact', CONTACT_QOS)
        feed = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: node.robot is not None and feed.get_subscription_count(), 30)

        def pushed(count: int, start: float) -> None:
            for k in range(count):
                message = joint_state(robot.joint_names, pose, np.zeros(7), gravity - push)
                message.header.stamp.sec, message.header.stamp.nanosec = int(start), 2_000_000 * k
                feed.publish(message)
                wait_for(lambda: False, 0.003)

        pushed(30, 10)
        assert wait_for(lambda: bool(contact) and contact[-1].data is True, 20)
        (refused,) = set_parameters(harness, node, contact_profile='gentle')
        assert not refused.successful and 'hand_guiding' in refused.reason
        (accepted,) = set_parameters(harness, node, contact_profile='hand_guiding')
        assert accepted.successful, accepted.reason
        count = len(contact)
        pushed(30, 11)
        assert wait_for(lambda: len(contact) > count and contact[-1].data is False, 20)
        assert node._live.contact_profile.name == 'hand_guiding'
        # `ros2 param set /dynamics contact_profile off` sends YAML false
        (off,) = set_parameters(harness, node, contact_profile=False)
        assert off.successful, off.reason
        assert node._live.contact_profile.name == 'off'
        assert node.get_parameter('contact_profile').value == 'off'  # its name, not false
        (wrong,) = set_parameters(harness, node, contact_profile=float('nan'))
        assert not wrong.successful and wrong.reason == 'contact_profile nan is not a string'
        assert node._live.contact_profile.name == 'off'
