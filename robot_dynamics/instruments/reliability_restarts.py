"""Reliability runs: restart (`robot_dynamics bench restart`) and hot swap of the robot
description (`robot_dynamics bench hot-swap`).

A node killed mid-stream and started again (how soon it answers, how soon it catches up), and a
node given a new description every ``interval`` seconds while streaming (no output computed
with the wrong model). Times in s; efforts in N·m.
"""

from __future__ import annotations

import re
import statistics
import time
from dataclasses import asdict, dataclass

from robot_dynamics.instruments.reliability_common import (
    NODE_MODULES,
    NodeUnderTest,
    ReliabilityRunError,
    fraction_answered,
    gravity_reference,
    joint_names_of,
    joint_names_of_text,
    model_value,
    tail_answered_fraction,
    wait_for,
    wrong_gravity_outputs,
)
from robot_dynamics.instruments.stream_feeder import kill_node, start_node, stop_node


@dataclass
class RestartReport:
    """Node killed mid-stream and started again; per restart, times in s:
    ``first_answer_s``: from publishing the first message the new node answered to that answer
    (how soon it answers what it receives); ``caught_up_s``: from that answer until every later
    answer is under 20 ms late (the start-up backlog worked off); ``downtime_s``: from the kill to
    the first answer (process start and DDS discovery included). ``answered_after_first``:
    fraction answered of the messages sent after the first answered one (worst restart);
    ``tail_answered_fraction``: of those sent in the stream's last second.
    ``dds_files_removed``: shared-memory files the killed processes left, removed by this run."""

    first_answer_s: list
    caught_up_s: list
    downtime_s: list
    answered_after_first: float
    tail_answered_fraction: float = 0.0
    dds_files_removed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


def restart_recovery(
    urdf: str, restarts: int = 1, rate: float = 1000.0, settle: float = 4.0
) -> RestartReport:
    """Kill (SIGKILL, a crash) and restart a dynamics_node process ``restarts`` times while it
    is fed at ``rate`` [Hz]; measure how soon each new process answers."""
    arguments = ['-p', f'urdf_file:={urdf}']
    first_answers, caught_up, downtimes, after = [], [], [], []
    removed = 0
    with NodeUnderTest('dynamics', arguments, 'inverse_dynamics_torques', urdf) as run:
        stream = run.stream_in_background(rate)
        time.sleep(2.0)
        for _ in range(restarts):
            removed += len(kill_node(run.process))  # a crash leaves its DDS files
            killed_ns = time.time_ns()
            run.process = start_node([NODE_MODULES['dynamics'], *arguments], run.node_name)
            if not wait_for(
                lambda: any(stamp > killed_ns for stamp, _ in run.feeder.received[-50:]),
                30.0,
                period=0.001,
            ):
                raise ReliabilityRunError('the restarted node never answered')
            time.sleep(settle)
            answers = sorted(
                (stamp, arrival)
                for stamp, arrival in list(run.feeder.received)
                if stamp > killed_ns
            )
            first_stamp, first_arrival = answers[0]
            first_answers.append((first_arrival - first_stamp) * 1e-9)
            downtimes.append((first_arrival - killed_ns) * 1e-9)
            late = [arrival for stamp, arrival in answers if arrival - stamp > 20_000_000]
            caught_up.append((max(late, default=first_arrival) - first_arrival) * 1e-9)
            horizon = time.time_ns() - 500_000_000
            window = [stamp for stamp in list(stream.sent) if first_stamp <= stamp <= horizon]
            answered = {stamp for stamp, _ in answers}
            after.append(sum(stamp in answered for stamp in window) / max(1, len(window)))
        stream.stop(run.feeder)
        tail = tail_answered_fraction(stream.sent, run.feeder.received)
    return RestartReport(
        first_answers, caught_up, downtimes, min(after, default=0.0), tail, removed
    )


@dataclass
class HotSwapReport:
    """Descriptions swapped mid-stream: how many swaps the outputs showed, how many outputs
    were not the g(q) of the model whose joint names they carry, whether the last outputs are
    of the last description sent, and the answered fractions of the stream (all of it, and its
    last second)."""

    swaps: int
    observed_model_changes: int
    outputs: int
    wrong_outputs: int
    node_alive: bool
    stream_answered_fraction: float
    last_model_in_force: bool = False
    tail_answered_fraction: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def renamed_variant(text: str, prefix: str = 'swap_', mass_scale: float = 1.5) -> str:
    """The URDF ``text`` with every ``fr3_`` name prefixed differently and every mass scaled:
    a second model whose outputs are told apart by joint names and by g(q)."""
    scaled = re.sub(
        r'<mass value="([^"]+)"',
        lambda m: f'<mass value="{float(m.group(1)) * mass_scale!r}"',
        text,
    )
    return scaled.replace('fr3_', prefix)


def hot_swap(
    urdf: str, swaps: int = 100, interval: float = 0.05, rate: float = 1000.0
) -> HotSwapReport:
    """Alternate robot_description between the arm ``urdf`` and :func:`renamed_variant` of it
    ``swaps`` times while feeding joint states naming both models' joints; every output on
    ~/gravity_torques must equal g(q) of the model named by its joint names."""
    from std_msgs.msg import String

    from robot_dynamics.ros.topics import DESCRIPTION_QOS

    texts = [open(urdf, encoding='utf-8').read()]
    texts.append(renamed_variant(texts[0]))
    names = [joint_names_of(urdf), joint_names_of_text(texts[1])]
    references = {names[0]: gravity_reference(urdf), names[1]: gravity_reference(urdf, texts[1])}
    with NodeUnderTest(
        'dynamics',
        ['-p', 'diagnostics_period:=0.05'],
        'gravity_torques',
        urdf,
        keep_messages=True,
        connect=False,
        names=list(names[0] + names[1]),
    ) as run:
        diagnostics = run.watch_diagnostics()
        description_pub = run.feeder.node.create_publisher(
            String, '/bench/robot_description', DESCRIPTION_QOS
        )
        description_pub.publish(String(data=texts[0]))
        run.feeder.wait_connected()
        if not wait_for(lambda: model_value(diagnostics, 'models_loaded') >= 1, 10.0):
            raise ReliabilityRunError('the node never loaded the first description')
        stream = run.stream_in_background(rate)
        wait_for(lambda: bool(run.feeder.received), 10.0)
        for k in range(1, swaps + 1):
            time.sleep(interval)
            description_pub.publish(String(data=texts[k % 2]))
        time.sleep(max(interval, 0.5))
        stream.stop(run.feeder)
        alive = run.process.poll() is None
        messages = sorted(run.feeder.messages, key=lambda m: m[0])
        changes = sum(1 for a, b in zip(messages, messages[1:]) if a[1] != b[1])
        wrong = wrong_gravity_outputs(run.feeder, references)
        answered = fraction_answered(stream.sent, run.feeder.received)
        last_in_force = bool(messages) and messages[-1][1] == names[swaps % 2]
        tail = tail_answered_fraction(stream.sent, run.feeder.received)
    return HotSwapReport(swaps, changes, len(messages), wrong, alive, answered, last_in_force, tail)


@dataclass
class StartupReport:
    """Start-up of a dynamics_node process with robot_description already published (transient
    local): with no joint_states, and with a ``rate_hz`` joint_states stream running before the
    node starts; one value per start [s]. ``*_s``: from the process's start to its first model in
    use, by the node's own clock (diagnostics ``first_model_after_s``); ``*_seen_s``: until this
    process saw that in the node's diagnostics (DDS discovery of the new node included)."""

    rate_hz: float
    quiet_s: list
    streaming_s: list
    quiet_seen_s: list
    streaming_seen_s: list

    @property
    def stream_cost_s(self) -> float:
        """Median start-up with the stream minus median start-up without it (node's clock)."""
        return statistics.median(self.streaming_s) - statistics.median(self.quiet_s)

    def to_dict(self) -> dict:
        rounded = {
            key: [round(v, 2) for v in value]
            for key, value in asdict(self).items()
            if isinstance(value, list)
        }
        return {'rate_hz': self.rate_hz, **rounded, 'stream_cost_s': round(self.stream_cost_s, 3)}


def startup_with_stream(urdf: str, starts: int = 3, rate: float = 1000.0) -> StartupReport:
    """Start a dynamics_node ``starts`` times without and ``starts`` times with a ``rate`` [Hz]
    joint_states stream already running, alternately; time each start until its model is in
    use (the description published once, before, as robot_state_publisher does)."""
    from std_msgs.msg import String

    from robot_dynamics.ros.topics import DESCRIPTION_QOS

    arguments = ['-p', 'diagnostics_period:=0.05']
    figures: dict = {'quiet': ([], []), 'streaming': ([], [])}
    with NodeUnderTest('dynamics', arguments, 'gravity_torques', urdf, connect=False) as run:
        diagnostics = run.watch_diagnostics()
        description_pub = run.feeder.node.create_publisher(
            String, '/bench/robot_description', DESCRIPTION_QOS
        )
        description_pub.publish(String(data=open(urdf, encoding='utf-8').read()))
        for label in ['quiet', 'streaming'] * starts:
            stream = run.stream_in_background(rate) if label == 'streaming' else None
            stop_node(run.process)
            diagnostics.clear()
            started = time.monotonic()
            run.process = start_node([NODE_MODULES['dynamics'], *arguments], run.node_name)
            if not wait_for(lambda: _first_model_after(diagnostics) is not None, 60.0):
                raise ReliabilityRunError('the started node never loaded the description')
            own, seen = figures[label]
            seen.append(time.monotonic() - started)
            own.append(_first_model_after(diagnostics))
            if stream is not None:
                stream.stop()
    (quiet, quiet_seen), (streaming, streaming_seen) = figures['quiet'], figures['streaming']
    return StartupReport(rate, quiet, streaming, quiet_seen, streaming_seen)


def _first_model_after(diagnostics: dict):
    value = diagnostics.get('model', {}).get('first_model_after_s', 'None')
    return None if value == 'None' else float(value)
