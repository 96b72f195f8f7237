"""Position steps faster than the joints can move (core/streams/position_jumps.py): none in
motion at the velocity limit, with stamp jitter or across a continuous joint's wrap; two sources
of the same joints alternating, and one glitch, are counted."""

import math
from pathlib import Path

import numpy as np

from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.position_jumps import PositionJumps
from robot_dynamics.models import ARM_URDF

ARM = RobotModel.from_urdf_file(ARM_URDF)
GRIPPER_URDF = Path(__file__).resolve().parent / 'data' / 'fixtures' / 'turret_gripper.urdf'
POSE = np.array([0.3, -0.5, 0.2, -2.0, 0.3, 1.5, 0.4])


def _fed(jumps: PositionJumps, stamps, positions) -> PositionJumps:
    for stamp, q in zip(stamps, positions):
        jumps.check(stamp, np.array(q, dtype=float))
    return jumps


def test_motion_at_the_velocity_limit_with_jittered_stamps_is_no_jump():
    stamps = 1.0 + 0.001 * np.arange(2000)
    stamps[1::50] -= 0.00099  # some samples stamped 10 µs after the one before
    speed = ARM.limits.velocity  # every joint at its limit, sign alternating per joint
    positions = [POSE + speed * (t - 1.0) * (-1) ** np.arange(7) for t in stamps]
    jumps = _fed(PositionJumps(ARM), stamps, positions)
    assert jumps.count == 0 and jumps.last is None


def test_two_sources_of_the_same_joints_alternating_are_jumps():
    # the driver at 1 kHz, a joint_state_publisher sending zeros every 100th sample
    stamps = 1.0 + 0.001 * np.arange(1000)
    positions = [np.zeros(7) if k % 100 == 99 else POSE for k in range(1000)]
    jumps = _fed(PositionJumps(ARM), stamps, positions)
    assert jumps.count == 19  # to zeros ten times, back nine (the last sample is a zero)
    assert ARM.joint_names[jumps.last.joint] == 'fr3_joint4'  # the largest step: −2.0 → 0
    assert jumps.last.step == 2.0
    assert math.isclose(jumps.last.interval, 0.001, rel_tol=1e-6)


def test_one_glitch_is_one_jump_and_a_continuous_joint_wraps_freely():
    gripper = RobotModel.from_urdf_file(GRIPPER_URDF)  # turret: continuous, 3 rad/s
    stamps = 1.0 + 0.001 * np.arange(400)
    turret = np.unwrap(np.pi - 0.2 + 2.5 * (stamps - 1.0))  # crosses π at 2.5 rad/s
    wrapped = (turret + np.pi) % (2 * np.pi) - np.pi
    positions = [[angle, 0.0, 0.1] for angle in wrapped]
    positions[200][2] += 0.3  # the finger (2 rad/s) steps 0.3 rad for one sample
    jumps = _fed(PositionJumps(gripper), stamps, positions)
    assert jumps.count == 2  # there and back
    assert jumps.last.joint == 2 and math.isclose(jumps.last.step, -0.3)
