"""The hint for joint_states names that miss the model's (core/streams/joint_names.py), and its
words in the merger's refusal."""

import pytest

from robot_dynamics.core.errors import JointStateError
from robot_dynamics.core.streams.joint_names import renamed_prefix_hint
from robot_dynamics.core.streams.joint_states import JointStateMerger

UR = ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint')
FR3 = tuple(f'fr3_joint{k}' for k in range(1, 8))
PANDA = tuple(f'panda_joint{k}' for k in range(1, 8)) + ('panda_finger_joint1',)


@pytest.mark.parametrize(
    'sent, expected, words',
    [
        (
            ['ur_' + name for name in UR],
            UR,
            "carry the prefix 'ur_' where the model's have none "
            "('ur_shoulder_pan_joint' for 'shoulder_pan_joint')",
        ),
        (UR, ['ur_' + name for name in UR], "lack the model's prefix 'ur_' ('shoulder_pan_joint'"),
        (
            PANDA,
            FR3,
            "have 'panda_' where the model's have 'fr3_' ('panda_joint1' for 'fr3_joint1')",
        ),
        (PANDA[3:], FR3, "have 'panda_' where the model's have 'fr3_' ('panda_joint4'"),  # 4 of 7
    ],
)
def test_a_prefix_that_turns_the_names_sent_into_the_models_is_named(sent, expected, words):
    hint = renamed_prefix_hint(sent, expected)
    assert hint.startswith('; the names ') and words in hint, hint


@pytest.mark.parametrize(
    'sent',
    [
        PANDA[4:],  # 3 of 7: not the most of the model's joints
        ('joint_a', 'joint_b', 'gripper'),
        ('', ' ', '😀', '\u202eevil', 'x' * 300),
        (),
    ],
)
def test_names_that_no_prefix_explains_get_no_hint(sent):
    assert renamed_prefix_hint(sent, FR3) == ''


def test_the_refusal_of_names_the_model_lacks_gives_the_hint_or_the_names():
    merger = JointStateMerger(FR3)
    with pytest.raises(JointStateError) as renamed:
        merger.update(PANDA[:7], [0.0] * 7)
    assert renamed.value.reason == 'no_known_joints'
    assert "have 'panda_' where the model's have 'fr3_'" in str(renamed.value)
    with pytest.raises(JointStateError) as unrelated:
        merger.update(('gripper', 'wheel'), [0.0, 0.0])
    assert str(unrelated.value) == "none of the joints ['gripper', 'wheel'] is in the model"
    # a driver that sends the first joint under the model's name and the others renamed
    merger.update(('fr3_joint1',) + PANDA[1:7], [0.0] * 7, stamp=1.0)
    assert "'panda_joint2' for 'fr3_joint2'" in merger.missing_names_hint(FR3[1:])
