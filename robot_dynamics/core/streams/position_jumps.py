"""Joint positions that step faster than the joints can move.

Two publishers of the same joints on ``joint_states`` (a ``joint_state_publisher`` left running
beside the robot's driver, a simulator and the real robot) make each joint's position alternate
between two sources; a driver's glitch makes one step. Either way, consecutive samples of a
joint lie further apart than its URDF velocity limit allows in the time between them.
:class:`PositionJumps` counts such steps and keeps the last one for diagnostics.

A step is a jump when it exceeds :data:`JUMP_SPEED_RATIO` times the joint's velocity limit over
the time between the samples, that time taken as :data:`MIN_JUMP_INTERVAL` at least (stamps
jitter: two samples stamped 10 µs apart are not 100 times faster than their motion). Joints
without a velocity limit are never checked; continuous joints are unwrapped.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional

import numpy as np

from robot_dynamics.core.model.model import RobotModel

JUMP_SPEED_RATIO = 2.0
"""A step faster than this times the velocity limit is a jump."""

MIN_JUMP_INTERVAL = 0.01
"""[s] Shortest time a step is spread over (stamp jitter between samples)."""


class Jump(NamedTuple):
    """One step: ``stamp`` [s] of the sample that made it, ``joint`` (index in joint_names),
    ``step`` [rad, m] and ``interval`` [s] since the previous sample."""

    stamp: float
    joint: int
    step: float
    interval: float


class PositionJumps:
    """Counts the position steps of ``robot``'s joints (joint_names order) faster than they can
    move (module docstring): ``count`` so far and the ``last`` one (None before any)."""

    def __init__(self, robot: RobotModel):
        limit = robot.limits.velocity
        known = np.isfinite(limit) & (limit > 0.0)
        self._top_speed = np.where(known, JUMP_SPEED_RATIO * limit, np.inf)
        self._continuous = robot.continuous_joints()
        self._previous: Optional[tuple] = None
        self.count = 0
        self.last: Optional[Jump] = None

    def check(self, stamp: float, positions: np.ndarray) -> None:
        """Take the sample's ``positions`` at ``stamp`` [s] (a later one than the last)."""
        previous, self._previous = self._previous, (stamp, positions)
        if previous is None or stamp <= previous[0]:
            return
        interval = stamp - previous[0]
        step = positions - previous[1]
        if self._continuous:
            turn = 2.0 * math.pi
            step[self._continuous] -= turn * np.round(step[self._continuous] / turn)
        over = np.abs(step) - self._top_speed * max(interval, MIN_JUMP_INTERVAL)
        joint = int(np.argmax(over))
        if over[joint] > 0.0:
            self.count += 1
            self.last = Jump(stamp, joint, float(step[joint]), interval)
