"""/diagnostics helpers shared by the nodes: status messages, the input rate meter, the
inputs a best-effort publisher cannot reach and joint positions that jump."""

from __future__ import annotations

import time
from typing import Optional, Sequence

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from rclpy.node import Node
from rclpy.qos import ReliabilityPolicy

from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.position_jumps import PositionJumps


class RateMeter:
    """Input rate [Hz] over a sliding count of wall-clock arrivals."""

    def __init__(self, window: int = 200):
        self._times = np.zeros(window)
        self._count = 0

    def tick(self) -> None:
        self._times[self._count % len(self._times)] = time.monotonic()
        self._count += 1

    def rate(self) -> float:
        filled = min(self._count, len(self._times))
        if filled < 2:
            return 0.0
        times = self._times[:filled]
        span = times.max() - times.min()
        return (filled - 1) / span if span > 0 else 0.0


def diagnostic_status(
    name: str, level: bytes, message: str, values: dict, hardware_id: str = ''
) -> DiagnosticStatus:
    """A diagnostic_msgs/DiagnosticStatus with ``values`` rendered as strings."""
    status = DiagnosticStatus(name=name, level=level, message=message, hardware_id=hardware_id)
    status.values = [
        KeyValue(key=str(key), value=_format_value(value)) for key, value in values.items()
    ]
    return status


_LEVELS = {
    'ok': DiagnosticStatus.OK,
    'warn': DiagnosticStatus.WARN,
    'error': DiagnosticStatus.ERROR,
}


def core_status(name: str, status, values: Optional[dict] = None) -> DiagnosticStatus:
    """The DiagnosticStatus ``name`` of a core status value (level, message and values: e.g.
    :class:`~robot_dynamics.core.live.status.LiveStatus`), with ``values`` added first."""
    return diagnostic_status(
        name, _LEVELS[status.level], status.message, {**(values or {}), **status.values}
    )


def _format_value(value) -> str:
    if isinstance(value, float):
        return f'{value:.6g}'
    return str(value)


DIAGNOSTICS_PERIOD = 1.0
"""Default period of /diagnostics [s]."""


def model_status(
    node_name: str,
    robot,
    source,
    values: dict,
    model_error: str = '',
    refused: Optional[dict] = None,
) -> DiagnosticStatus:
    """The ``<node>: model`` status both nodes publish: the model in use (``robot``, a
    RobotModel or None), where it came from and how many descriptions were loaded or refused
    (``source``, the node's ModelSource), plus the node's own ``values``. ERROR without a model
    or when the latest one could not be used (``model_error``), WARN after a refused description
    or with parameters ``refused`` at start (name → words, :class:`NodeParameters`)."""
    status = _model_status(node_name, robot, source, values, model_error)
    if refused:
        listed = '; '.join(f'{name} {words}' for name, words in refused.items())
        status.level = max(status.level, DiagnosticStatus.WARN)
        status.message += f'; parameters refused at start: {listed}'
        status.values.append(KeyValue(key='parameters_refused', value=listed))
    return status


def _model_status(node_name: str, robot, source, values: dict, model_error: str):
    name = f'{node_name}: model'
    if robot is None:
        return diagnostic_status(
            name,
            DiagnosticStatus.ERROR,
            'no robot model loaded',
            {'source': source.source, 'last_error': model_error or source.last_error},
        )
    if model_error:
        return diagnostic_status(
            name,
            DiagnosticStatus.ERROR,
            f'latest model not used: {model_error}',
            {'source': source.source, 'model_in_use': robot.name},
        )
    level = DiagnosticStatus.WARN if source.rejected else DiagnosticStatus.OK
    return diagnostic_status(
        name,
        level,
        f'{robot.name}: {robot.num_joints} joints, {robot.total_mass():.3f} kg',
        {
            'source': source.source,
            'total_mass_kg': robot.total_mass(),
            'models_loaded': source.swaps,
            'first_model_after_s': source.first_model_after_s,
            'descriptions_rejected': source.rejected,
            'last_error': source.last_error,
            **values,
        },
    )


def best_effort_note(node: Node, topics: Sequence[str], values: dict, warned: set) -> str:
    """The input ``topics`` (relative names) with a best-effort publisher, which a reliable
    subscription cannot match: into ``values`` (``best_effort_publishers``), logged once per topic
    (``warned`` keeps which), and as a clause for a status message ('' when none)."""
    resolved = [node.resolve_topic_name(topic) for topic in topics]
    best_effort = [
        topic
        for topic in resolved
        if any(
            info.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT
            for info in node.get_publishers_info_by_topic(topic)
        )
    ]
    values['best_effort_publishers'] = ' '.join(best_effort) or 'none'
    for topic in set(best_effort) - warned:
        warned.add(topic)
        node.get_logger().warning(
            f'{topic} has a best-effort publisher: this node reads it reliable, so it receives '
            'nothing from it (publish it reliable)'
        )
    return (
        f'; best-effort publisher on {", ".join(best_effort)}: not received' if best_effort else ''
    )


class PositionJumpNotes:
    """Says the joint position jumps a node's :class:`PositionJumps` counted since its last
    status, with the publishers of ``joint_states`` (two of them is the usual cause)."""

    def __init__(self):
        self._seen: tuple = (None, 0)  # (PositionJumps, its count) at the last status

    def new_jumps(self, node: Node, robot: RobotModel, jumps: PositionJumps, values: dict) -> str:
        """The jumps since the last call, in words (into ``values``: ``position_jumps``), or
        ''."""
        values['position_jumps'] = jumps.count
        seen, self._seen = self._seen, (jumps, jumps.count)
        if jumps.last is None or seen == (jumps, jumps.count):
            return ''
        last = jumps.last
        limit = robot.limits.velocity[last.joint]
        publishers = sorted(
            {
                f'{info.node_namespace.rstrip("/")}/{info.node_name}'
                for info in node.get_publishers_info_by_topic(
                    node.resolve_topic_name('joint_states')
                )
            }
        )
        return (
            f'joint positions jump faster than the joints can move ({jumps.count} so far; last '
            f'{robot.joint_names[last.joint]} by {last.step:.3f} in '
            f'{last.interval * 1e3:.1f} ms, velocity limit {limit:g}): two publishers of the '
            f'same joints, or a driver glitch (joint_states publishers: '
            f'{", ".join(publishers) or "none now"})'
        )
