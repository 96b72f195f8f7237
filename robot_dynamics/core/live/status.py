"""Typed status values of the live pipeline: what /diagnostics reports, without ROS types.

Each part of :class:`~robot_dynamics.core.live.live_dynamics.LiveDynamics` (contact, known
wrench, effective mass, torque margins) reports one :class:`LiveStatus`: a level, one sentence
for an operator, and the values behind it; dynamics_node turns each into a
diagnostic_msgs/DiagnosticStatus.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

OK, WARN, ERROR = 'ok', 'warn', 'error'
LEVELS = (OK, WARN, ERROR)
"""Status levels, least severe first."""


def worst(*levels: str) -> str:
    """The most severe of ``levels``."""
    return max(levels, key=LEVELS.index)


@dataclass(frozen=True)
class LiveStatus:
    """``level`` (one of :data:`LEVELS`), ``message`` (one sentence for an operator) and the
    ``values`` behind it (name → number, flag or text; units in the names: ``_s``, ``_nm``...)."""

    level: str
    message: str
    values: Mapping[str, object] = field(default_factory=dict)
