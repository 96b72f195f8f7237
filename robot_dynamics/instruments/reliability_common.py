"""Plumbing shared by the reliability runs: a node process under test with its feeder, a
background stream, the readers of the node's /diagnostics values and of a model's g(q), and
polling helpers.

Stamps are ROS times in ns; efforts and g(q) in N·m; waits and timeouts in s.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Optional

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.instruments.stream_feeder import (
    StreamFeeder,
    bench_node_name,
    output_topic,
    start_node,
    stop_node,
    wait_for_stragglers,
)

NODE_MODULES = {
    'dynamics': 'robot_dynamics.ros.dynamics_node',
    'centroidal': 'robot_dynamics.ros.centroidal_node',
}


class ReliabilityRunError(RobotDynamicsError):
    """A reliability run could not be carried out (node never connected, died before the run...)."""


class NodeUnderTest:
    """A node process (``target`` in :data:`NODE_MODULES`) and a :class:`StreamFeeder`
    listening on its ``output`` topic; both torn down on exit."""

    def __init__(
        self,
        target: str,
        arguments: list,
        output: str,
        urdf: str,
        keep_messages: bool = False,
        connect: bool = True,
        efforts: bool = False,
        names=None,
        deep_history: bool = False,
    ):
        module = NODE_MODULES[target]
        self.node_name = f'{bench_node_name(module)}_{int(time.monotonic() * 1000) % 100000}'
        self.process = start_node([module, *arguments], self.node_name)
        self._streams: list = []
        try:
            self.feeder = StreamFeeder(
                output_topic(self.node_name, output),
                output,
                urdf,
                'fixed',
                names=names,
                efforts=efforts,
                keep_messages=keep_messages,
                deep_history=deep_history,
            )
        except Exception:
            stop_node(self.process)
            raise
        if connect:
            try:
                self.feeder.wait_connected(process=self.process)
            except Exception:
                self.__exit__()
                raise

    def watch_diagnostics(self) -> dict:
        """Latest /diagnostics status of this node, by status-name suffix ('model',
        'joint_states')."""
        from diagnostic_msgs.msg import DiagnosticArray

        latest: dict = {}
        prefix = f'{self.node_name}: '

        def on_array(array) -> None:
            for status in array.status:
                if status.name.startswith(prefix):
                    latest[status.name[len(prefix) :]] = {kv.key: kv.value for kv in status.values}

        self.feeder.node.create_subscription(DiagnosticArray, '/diagnostics', on_array, 50)
        return latest

    def stream_in_background(self, rate: float) -> 'BackgroundStream':
        self._streams.append(BackgroundStream(self.feeder, rate))
        return self._streams[-1]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for stream in self._streams:
            stream.stop()
        self.feeder.close()
        stop_node(self.process)


class BackgroundStream:
    """Feeds at ``rate`` [Hz] in a thread until :meth:`stop`; ``sent`` lists the stamps [ns]."""

    def __init__(self, feeder: 'StreamFeeder', rate: float):
        self._stopped = threading.Event()
        self.sent: list = []
        self._thread = threading.Thread(
            target=feeder.feed,
            args=(rate, 3600.0, 0.0),
            kwargs={'until': self._stopped.is_set, 'sent': self.sent},
            daemon=True,
        )
        self._thread.start()

    def stop(
        self, feeder: Optional['StreamFeeder'] = None, quiet: float = 1.0, limit: float = 30.0
    ) -> None:
        """Stop feeding; with ``feeder``, wait until its answers stop coming (``quiet`` seconds
        without one, at most ``limit``): a node behind on a busy machine works off its queue."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._thread.join(timeout=10.0)
        time.sleep(0.3)  # answers still in flight
        if feeder is not None:
            wait_for_stragglers(feeder, math.inf, quiet, limit)


def wrong_gravity_outputs(feeder: 'StreamFeeder', references: dict) -> int:
    """Outputs whose efforts are not g(q) [N·m] of the model their joint names belong to."""
    import numpy as np

    wrong = 0
    offsets = {}
    for names in references:
        offsets[names] = feeder.names.index(names[0]) if names[0] in feeder.names else None
    for stamp, names, efforts in feeder.messages:
        reference = references.get(names)
        phase = feeder.phase_of.get(stamp)
        if reference is None or phase is None or offsets[names] is None:
            wrong += 1
            continue
        start = offsets[names]
        q = feeder.positions(phase)[start : start + len(names)]
        wrong += not np.allclose(efforts, reference(q), rtol=1e-9, atol=1e-9)
    return wrong


def tail_answered_fraction(sent: list, received: list, seconds: float = 1.0) -> float:
    """Answered fraction of the stamps [ns] in ``sent`` within ``seconds`` of the last one."""
    if not sent:
        return 0.0
    last = max(sent)
    return fraction_answered([stamp for stamp in sent if stamp >= last - seconds * 1e9], received)


def fraction_answered(sent: list, received: list) -> float:
    answered = {stamp for stamp, _ in received}
    return sum(stamp in answered for stamp in sent) / len(sent) if sent else 0.0


def gravity_reference(urdf: str, text: Optional[str] = None):
    """q ↦ g(q) [N·m] of the fixed-base model in ``text`` (default: the file ``urdf``)."""
    from robot_dynamics.core.dynamics import joint_space as dynamics
    from robot_dynamics.core.model.model import RobotModel

    robot = RobotModel.from_urdf_string(text) if text else RobotModel.from_urdf_file(urdf)
    return lambda q: dynamics.gravity_torques(robot, robot.configuration(q))


def joint_names_of(urdf: str) -> tuple:
    from robot_dynamics.core.model.model import RobotModel

    return RobotModel.from_urdf_file(urdf).joint_names


def joint_names_of_text(text: str) -> tuple:
    from robot_dynamics.core.model.model import RobotModel

    return RobotModel.from_urdf_string(text).joint_names


def input_values(diagnostics: dict) -> dict:
    return diagnostics.get('joint_states', {})


def input_value(diagnostics: dict, key: str) -> int:
    return int(float(input_values(diagnostics).get(key, 0)))


def model_value(diagnostics: dict, key: str) -> int:
    return int(float(diagnostics.get('model', {}).get(key, 0)))


def stamped_header(sec: int, nanosec: int):
    from std_msgs.msg import Header

    header = Header()
    header.stamp.sec, header.stamp.nanosec = sec, nanosec
    return header


def sleep_until(target: float) -> None:
    remaining = target - time.perf_counter()
    if remaining > 0:
        time.sleep(remaining)


def wait_for(condition, timeout: float = 5.0, period: float = 0.01) -> bool:
    """Poll ``condition`` until true or ``timeout`` seconds pass; returns the last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(period)
    return bool(condition())


def safe_ratio(value: float, reference: float) -> float:
    return value / reference if reference else float('inf')
