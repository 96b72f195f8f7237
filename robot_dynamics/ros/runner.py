"""In-process runner: sim_robot, dynamics_node and centroidal_node in one Python process,
configured from the same parameter files the launch files use (config/robot_dynamics.yaml
for ``dynamics`` and ``centroidal``, config/sim_robot.yaml for ``sim_robot``).

The YAML file has the usual ROS 2 parameter-file shape (``<node name>: ros__parameters:
{...}``, the shipped files keyed ``/**/<node name>``: any namespace); each node is given it as
``--params-file`` (:func:`params_file_arguments`), so rcl itself reads it and picks the sections
that apply to the node, as for a node started by ``ros2 run`` or a launch file.
:class:`InProcessRunner` spins the nodes the way :func:`robot_dynamics.ros.spinning.spin_nodes`
does — topic callbacks on one low-latency executor, the nodes' service companions on a second —
but in background threads, so the caller's thread stays free (the demo calls the services from
it) and the runner can be stopped without shutting rclpy down.

Run the three nodes until Ctrl-C: ``python -m robot_dynamics.ros.runner [CONFIG_YAML]``.
"""

from __future__ import annotations

import math
import sys
import threading
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import yaml
from geometry_msgs.msg import PointStamped, PolygonStamped
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from std_srvs.srv import SetBool, Trigger

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.ros.spinning import NodeSpinner, run_nodes
from robot_dynamics.ros.topics import DESCRIPTION_QOS, SENSOR_QOS, stamp_seconds

RECORDER_QOS = QoSProfile(
    depth=2000,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
    history=HistoryPolicy.KEEP_LAST,
)
"""Room for 8 s of 250 Hz samples: the recorder may fall behind, it must not lose samples."""

PACKAGE = 'robot_dynamics'


class ConfigError(RobotDynamicsError):
    """A parameter file is missing, unreadable or not a ROS 2 parameter file."""


def config_path(name: str) -> Path:
    """Path of a file of the package's ``config/`` directory: the source tree's (a checkout or
    an editable install), else the installed ``share/robot_dynamics/config``."""
    candidates = [
        Path(__file__).resolve().parents[2] / 'config' / name,
        Path(sys.prefix) / 'share' / PACKAGE / 'config' / name,
    ]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f'config file {name!r} not found (looked in {", ".join(str(c.parent) for c in candidates)})'
    )


def params_file_arguments(path: Path) -> list:
    """Node command-line arguments (``Node(cli_args=...)``) giving the node the parameters of
    the parameter file ``path`` as rcl gives them to any node started with ``--params-file``:
    rcl's own parser and section matching (``dynamics``, ``/**/dynamics``, ``/**``...). Raises
    :class:`ConfigError` when the file cannot be read."""
    path = Path(path)
    try:
        content = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise ConfigError(f'cannot read parameter file {path}: {error}') from None
    if not isinstance(content, dict):
        raise ConfigError(f'parameter file {path} is not a mapping of node names')
    return ['--ros-args', '--params-file', str(path)]


def shipped_parameters(name: str, node_name: str) -> dict:
    """The ``ros__parameters`` of node ``node_name`` in the package's parameter file ``name``
    (its ``/**/<node_name>`` section), for a caller without a node (a benchmark)."""
    content = yaml.safe_load(config_path(name).read_text())
    return dict(content[f'/**/{node_name}']['ros__parameters'])


def parameter_overrides(values: dict) -> list:
    """rclpy ``Parameter`` objects for ``Node(parameter_overrides=...)``."""
    return [Parameter(name, value=value) for name, value in values.items()]


def build_nodes(
    config_file: Optional[Path] = None,
    sim_overrides: Optional[dict] = None,
    dynamics_overrides: Optional[dict] = None,
    centroidal_overrides: Optional[dict] = None,
    sim_config_file: Optional[Path] = None,
    with_dynamics: bool = True,
) -> list:
    """sim_robot (``sim_robot``), dynamics_node (``dynamics``, unless ``with_dynamics`` is
    false) and centroidal_node (``centroidal``) with the parameters of ``config_file``
    (default ``config/robot_dynamics.yaml``) and ``sim_config_file`` (default
    ``config/sim_robot.yaml``), then the given overrides."""
    from robot_dynamics.ros.centroidal_node import CentroidalNode
    from robot_dynamics.ros.dynamics_node import DynamicsNode
    from robot_dynamics.ros.sim_robot import SimRobot

    config_file = Path(config_file or config_path('robot_dynamics.yaml'))
    sim_config_file = Path(sim_config_file or config_path('sim_robot.yaml'))

    def options(path: Path, overrides: Optional[dict]) -> dict:
        # The overrides win over the file (rclpy applies them after rcl's file parameters).
        return dict(
            cli_args=params_file_arguments(path),
            parameter_overrides=parameter_overrides(overrides or {}),
        )

    nodes = [SimRobot('sim_robot', **options(sim_config_file, sim_overrides))]
    if with_dynamics:
        nodes.append(DynamicsNode('dynamics', **options(config_file, dynamics_overrides)))
    nodes.append(CentroidalNode('centroidal', **options(config_file, centroidal_overrides)))
    return nodes


class InProcessRunner:
    """Spins ``nodes`` in background threads: their topic callbacks on one low-latency
    executor, their ``service_host`` companion nodes on a single-threaded one (both
    :class:`~robot_dynamics.ros.spinning.NodeSpinner`, as in a node process), so a long
    service never delays the torque stream and the caller's thread stays free. Use as a
    context manager; :meth:`stop` destroys the nodes but leaves rclpy initialised.

    Two threads on purpose: under CPU contention each extra Python thread competing for the
    GIL slows the stream down; one executor thread per node can starve sim_robot on a loaded
    two-core machine."""

    def __init__(self, nodes: Sequence[Node]):
        self.nodes = list(nodes)
        self._hosts = [
            node.service_host.node
            for node in self.nodes
            if getattr(node, 'service_host', None) is not None
        ]
        self._spinners = [NodeSpinner(self.nodes, low_latency=True), NodeSpinner(self._hosts)]
        self._threads = [
            threading.Thread(target=spinner.spin, daemon=True) for spinner in self._spinners
        ]

    def start(self) -> 'InProcessRunner':
        # Let the stream thread take the GIL back quickly while a service computes in Python.
        sys.setswitchinterval(0.0005)
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        """Stop both spinners, wait for their threads, then destroy the nodes (in that order:
        a node destroyed under a spinning executor is an error in that thread)."""
        for spinner in self._spinners:
            spinner.stop()
        for thread in self._threads:
            thread.join()
        for spinner in self._spinners:
            spinner.close()
        for node in (*self._hosts, *self.nodes):
            node.destroy_node()

    def __enter__(self) -> 'InProcessRunner':
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class OutputRecorder(Node):
    """A client node recording what dynamics_node and centroidal_node publish, each sample
    tagged with the current phase when its stamp lies in that phase's window of simulated time
    (:meth:`start_phase`; other samples are dropped), and calling the nodes' services. Tagging
    by stamp, not by arrival, keeps a burst of delayed outputs in the phase they belong to. Lists
    of (phase, stamp [s], values):

    * ``model``: ``/dynamics/inverse_dynamics_torques``, ``external``:
      ``/dynamics/external_torques`` (the torques the environment applies to the robot, JᵀF)
      [N·m], joint order of ``joint_names``; ``efforts``: the measured efforts of
      ``/joint_states`` [N·m] (see :meth:`measured`);
    * ``com``, ``zmp``: ``/centroidal/com``, ``/centroidal/zmp`` [m] in the centroidal world frame;
    * ``polygons``: phase → last ``/centroidal/support_polygon`` vertices (k × 2) [m];
      these three once :meth:`watch_centroidal` was called;
    * ``torque_messages``: external-torque messages received in any phase (or none);
      ``centroidal_messages``: the same for the CoM and ZMP;
    * ``clock``: the newest stamp [s] of any output received, in any phase: the simulated
      robot's time up to which the nodes have processed its samples;
    * ``motion_start``, ``motion_starts``: the stamp [s] of the latest start of sim_robot's
      motion (``/sim_robot/motion_start``) and how many starts were received.
    """

    def __init__(self, node_name: str = 'demo_client', **kwargs):
        super().__init__(node_name, **kwargs)
        self.phase: Optional[str] = None
        self._window = (math.inf, -math.inf)
        self.joint_names: tuple = ()
        self.model: list = []
        self.external: list = []
        self.efforts: list = []
        self.com: list = []
        self.zmp: list = []
        self.polygons: dict = {}
        self.torque_messages = 0
        self.centroidal_messages = 0
        self.clock = -math.inf
        self.motion_start, self.motion_starts = math.nan, 0
        self._service_clients: dict = {}
        self.create_subscription(
            Header, '/sim_robot/motion_start', self._on_motion_start, DESCRIPTION_QOS
        )
        for topic, store in (
            ('/dynamics/inverse_dynamics_torques', self.model),
            ('/dynamics/external_torques', self.external),
        ):
            self.create_subscription(
                JointState, topic, lambda m, s=store: self._on_torques(s, m), RECORDER_QOS
            )
        self.create_subscription(JointState, '/joint_states', self._on_joint_state, RECORDER_QOS)

    def start_phase(self, name: str, start: float, end: float) -> None:
        """Tag from now on the samples stamped in [``start``, ``end``] [s, simulated time] with
        phase ``name`` (until the next phase starts)."""
        self.phase, self._window = name, (start, end)

    def _phase_of(self, stamp: float) -> Optional[str]:
        return self.phase if self._window[0] <= stamp <= self._window[1] else None

    def watch_centroidal(self) -> None:
        """Start recording centroidal_node's CoM, ZMP and support polygon. Separate because each
        is another 250 messages/s for this process: take them only when they matter."""
        for topic, store in (('/centroidal/com', self.com), ('/centroidal/zmp', self.zmp)):
            self.create_subscription(
                PointStamped, topic, lambda m, s=store: self._on_point(s, m), RECORDER_QOS
            )
        self.create_subscription(
            PolygonStamped, '/centroidal/support_polygon', self._on_polygon, SENSOR_QOS
        )

    def _on_motion_start(self, message: Header) -> None:
        self.motion_start = stamp_seconds(message.stamp)
        self.motion_starts += 1

    def _on_torques(self, store: list, message: JointState) -> None:
        self.torque_messages += store is self.external
        stamp = stamp_seconds(message.header.stamp)
        self.clock, phase = max(self.clock, stamp), self._phase_of(stamp)
        if phase is None or not message.effort:
            return
        if store is self.external:
            self.joint_names = tuple(message.name)
        store.append((phase, stamp, np.array(message.effort)))

    def _on_joint_state(self, message: JointState) -> None:
        stamp = stamp_seconds(message.header.stamp)
        phase = self._phase_of(stamp)
        if phase is not None and message.effort and self.joint_names:
            efforts = dict(zip(message.name, message.effort))
            if all(name in efforts for name in self.joint_names):
                self.efforts.append(
                    (phase, stamp, np.array([efforts[name] for name in self.joint_names]))
                )

    def _on_point(self, store: list, message: PointStamped) -> None:
        self.centroidal_messages += 1
        stamp = stamp_seconds(message.header.stamp)
        self.clock, phase = max(self.clock, stamp), self._phase_of(stamp)
        if phase is not None:
            point = message.point
            store.append((phase, stamp, np.array([point.x, point.y, point.z])))

    def _on_polygon(self, message: PolygonStamped) -> None:
        phase = self._phase_of(stamp_seconds(message.header.stamp))
        if phase is not None:
            self.polygons[phase] = np.array([[p.x, p.y] for p in message.polygon.points]).reshape(
                -1, 2
            )

    def values(self, store: list, phase: str) -> tuple:
        """(stamps [s], values (N × k)) of ``store`` recorded during ``phase``."""
        rows = [(stamp, values) for tag, stamp, values in store if tag == phase]
        if not rows:
            return np.zeros(0), np.zeros((0, 0))
        return np.array([r[0] for r in rows]), np.vstack([r[1] for r in rows])

    def measured(self, phase: str) -> tuple:
        """(stamps [s], measured efforts (N × n) [N·m]) of ``phase`` from ``/joint_states``, in
        the joint order of ``joint_names``."""
        return self.values(self.efforts, phase)

    def progress(self, phase: str) -> str:
        """One line about ``phase`` so far: sample counts, external-torque RMS, CoM."""
        _, external = self.values(self.external, phase)
        _, com = self.values(self.com, phase)
        text = f'{len(external)} torque samples' if len(external) else f'{len(com)} CoM samples'
        if len(external):
            rms = np.sqrt(np.mean(external**2, axis=0))
            text += (
                f', external torque RMS {rms.max():.3f} N·m (worst '
                f'{self.joint_names[int(np.argmax(rms))]})'
            )
        if len(com):
            text += f', CoM ({com[-1][0]:+.3f}, {com[-1][1]:+.3f}, {com[-1][2]:+.3f}) m'
        return text

    def call(self, name: str, kind: str = 'trigger', value: bool = False, wait: float = 5.0):
        """Start a call of the std_srvs Trigger (``kind`` 'trigger') or SetBool service ``name``;
        returns its future, or None when the service does not appear within ``wait`` s."""
        service_type = Trigger if kind == 'trigger' else SetBool
        client = self._service_clients.get(name)
        if client is None:
            client = self._service_clients[name] = self.create_client(service_type, name)
        if not client.wait_for_service(timeout_sec=wait):
            return None
        request = service_type.Request()
        if kind != 'trigger':
            request.data = bool(value)
        return client.call_async(request)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    run_nodes(lambda: build_nodes(Path(argv[0]) if argv else None), program='runner')
    return 0


if __name__ == '__main__':
    sys.exit(main())
