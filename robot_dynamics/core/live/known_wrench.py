"""The known external wrench of a live stream: received, checked, expired, as joint torques.

A known wrench F = (f, m) is one the user knows the environment applies to the robot (a tool
pressing on a surface): force [N] and moment [N·m] on a frame's link at the frame origin, in the
frame's axes (:class:`~robot_dynamics.core.dynamics.joint_reactions.KnownWrench`). While it is in
use the live outputs take it into account: inverse dynamics ID − Jᵀ(q) F and external torques
τ_ext − Jᵀ F (both routes), so they report only what F does not explain. The sender streams it:
an all-zero wrench removes it, and so does receiving none for ``timeout`` seconds, or a new model
that lacks its frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from robot_dynamics.core.dynamics.joint_reactions import (
    KnownWrench,
    KnownWrenchError,
    KnownWrenchTorques,
)
from robot_dynamics.core.live.status import OK, WARN, LiveStatus
from robot_dynamics.core.model.model import RobotModel

KNOWN_WRENCH_TIMEOUT = 0.5
"""Default time [s] after which a known wrench not received again is removed."""


@dataclass(frozen=True)
class ReceivedWrench:
    """A known wrench and when it was received (monotonic clock [s])."""

    wrench: KnownWrench
    received: float


class KnownWrenchInput:
    """The known wrench in use and what became of the ones received.

    One per stream, handed from a :class:`~robot_dynamics.core.live.live_dynamics.LiveDynamics`
    to its successors, so a model swap keeps the wrench in use. Written and read on the stream
    thread; :meth:`status` reads references only (any thread).
    """

    def __init__(self, timeout: float = KNOWN_WRENCH_TIMEOUT):
        self.timeout = float(timeout)
        self.current: Optional[ReceivedWrench] = None
        self.counts = {'accepted': 0, 'rejected': 0, 'removed_stale': 0}
        self.last_event = 'none received yet'
        self.last_problem = ''  # the last refusal, cleared by the next accepted wrench
        self._torques: Optional[KnownWrenchTorques] = None  # Jᵀ F of ``current`` for one model

    def take(self, robot: RobotModel, wrench: KnownWrench, now: float) -> None:
        """Use ``wrench``, received at ``now`` (monotonic [s]), from the next sample on; an
        all-zero one removes the wrench in use. Raises
        :class:`~robot_dynamics.core.dynamics.joint_reactions.KnownWrenchError` when ``robot``
        has no moving frame of that name (the wrench in use stays)."""
        if not (np.any(wrench.force) or np.any(wrench.moment)):
            self.last_problem = ''
            self.remove('removed: zero wrench received')
            return
        torques = KnownWrenchTorques(robot, wrench)
        self.current, self._torques = ReceivedWrench(wrench, now), torques
        self.counts['accepted'] += 1
        self.last_problem = ''
        self.last_event = f'set at {wrench.frame}'

    def refuse(self, reason: str) -> int:
        """Count a refused wrench (``reason`` in words, for diagnostics); returns the count."""
        self.counts['rejected'] += 1
        self.last_problem = reason
        return self.counts['rejected']

    def remove(self, event: str) -> None:
        """Stop using the wrench in use (``event`` says why, for diagnostics)."""
        if self.current is None:
            return
        self.current = self._torques = None
        self.last_event = event

    def torques(self, robot: RobotModel, now: float) -> Optional[KnownWrenchTorques]:
        """What turns the wrench in use into Jᵀ(q) F for ``robot`` at ``now`` (monotonic [s]);
        None without one, and None (removing it) once it expired or ``robot`` lacks its frame."""
        current = self.current
        if current is None:
            return None
        if now - current.received > self.timeout:
            self.counts['removed_stale'] += 1
            self.remove(f'removed: none received for {self.timeout:g} s')
            return None
        torques = self._torques
        if (
            torques is not None
            and torques.robot is robot
            and torques.known_wrench is current.wrench
        ):
            return torques
        try:
            torques = self._torques = KnownWrenchTorques(robot, current.wrench)
        except KnownWrenchError as error:
            self.last_problem = str(error)
            self.remove(f'removed with the new model: {error}')
            return None
        return torques

    def status(self, now: float) -> LiveStatus:
        """The wrench in use (frame, force [N], moment [N·m], age [s] at ``now``), the counts
        and the last refusal (WARN until a wrench is accepted again)."""
        values = dict(
            self.counts,
            timeout_s=self.timeout,
            last_event=self.last_event,
            last_refusal=self.last_problem or 'none',
        )
        level = WARN if self.last_problem else OK
        refusal = f'; last message refused: {self.last_problem}' if self.last_problem else ''
        current = self.current
        if current is None:
            return LiveStatus(level, f'none in use ({self.last_event}){refusal}', values)
        wrench, age = current.wrench, now - current.received
        values.update(
            frame=wrench.frame,
            force_n=' '.join(f'{x:.4g}' for x in wrench.force),
            moment_nm=' '.join(f'{x:.4g}' for x in wrench.moment),
            age_s=age,
        )
        state = 'expired (removed at the next joint state)' if age > self.timeout else 'in use'
        return LiveStatus(
            level,
            f'{state} at {wrench.frame}: force {np.round(wrench.force, 3).tolist()} N, moment '
            f'{np.round(wrench.moment, 3).tolist()} N·m{refusal}',
            values,
        )
