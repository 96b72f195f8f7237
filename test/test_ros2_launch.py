"""The launch files run with the real `ros2 launch`, against the package as colcon installs it
(executables in lib/robot_dynamics, launch/config/models in share/robot_dynamics), exactly as
a user on a robot starts them: every node comes up once under its name, parameters arrive
from the shipped YAML and from a user's config_file in a namespace, torques flow,
identify_payload answers, and the launch stops cleanly for SIGINT to the launch process,
SIGINT to its whole process group (a terminal's Ctrl-C) and SIGTERM.

Needs launch, launch_ros, ros2cli and colcon (`../shared/ros2-tools/install.sh .venv`, which
`make test` runs when that folder exists; on a robot: the apt install). Skipped without them.
One launch per stop mode, shared by its checks."""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import math
import os
import re
import shutil
import signal
import subprocess
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from ros_harness import wait_for

from robot_dynamics.instruments import processes

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = 'robot_dynamics'
MISSING = [
    name
    for name in ('launch', 'launch_ros', 'ros2cli', 'colcon')
    if importlib.util.find_spec(name) is None
]
if shutil.which('ros2') is None:
    MISSING.append('the ros2 command')
WHY_MISSING = (
    f'the ROS 2 launch tools are not installed (missing: {", ".join(MISSING)}); run '
    '../shared/ros2-tools/install.sh .venv (`make test` does), or install them with apt'
)
if MISSING and os.environ.get(
    'ROBOT_DYNAMICS_REQUIRE_LAUNCH_TOOLS'
):  # CI with ../shared: never skip
    raise RuntimeError(WHY_MISSING)
pytestmark = pytest.mark.skipif(bool(MISSING), reason=WHY_MISSING)
START_TIMEOUT = 90.0
"""Seconds for a launch's nodes to appear (imports and model loading on a shared, loaded
machine)."""
STOP_TIMEOUT = 30.0
"""Seconds for a launch to end after the signal (launch itself escalates to SIGTERM after 5 s)."""


# ---------------------------------------------------------------------- the colcon install
@pytest.fixture(scope='module')
def installed(tmp_path_factory) -> dict:
    """The environment of a fresh colcon workspace with this package built and installed
    (`source install/local_setup.bash`), in the test's private domain on loopback."""
    workspace = tmp_path_factory.mktemp('colcon_ws')
    build = subprocess.run(
        [
            'colcon',
            '--log-base',
            str(workspace / 'log'),
            'build',
            '--paths',
            str(ROOT),
            '--build-base',
            str(workspace / 'build'),
            '--install-base',
            str(workspace / 'install'),
        ],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    prefix = workspace / 'install' / PACKAGE
    for installed_file in (
        'lib/robot_dynamics/dynamics_node',
        'lib/robot_dynamics/centroidal_node',
        'lib/robot_dynamics/sim_robot',
        'share/robot_dynamics/launch/robot_dynamics.launch.py',
        'share/robot_dynamics/launch/demo.launch.py',
        'share/robot_dynamics/config/sim_robot.yaml',
        'share/robot_dynamics/models/fr3_arm.urdf',
    ):
        assert (prefix / installed_file).is_file(), f'colcon did not install {installed_file}'
    sourced = subprocess.run(
        ['bash', '-c', f'source {workspace}/install/local_setup.bash && env -0'],
        capture_output=True,
        text=True,
        check=True,
    )
    environment = dict(entry.split('=', 1) for entry in sourced.stdout.split('\0') if '=' in entry)
    environment.update(
        ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', ROS_DOMAIN_ID=os.environ['ROS_DOMAIN_ID']
    )
    assert str(prefix) in environment['AMENT_PREFIX_PATH'].split(os.pathsep)
    return environment


def share(environment: dict) -> Path:
    prefix = next(
        Path(entry)
        for entry in environment['AMENT_PREFIX_PATH'].split(os.pathsep)
        if (Path(entry) / 'share' / PACKAGE).is_dir()
    )
    return prefix / 'share' / PACKAGE


# ---------------------------------------------------------------------- a launch as a user starts
# it
class Launch:
    """``ros2 launch robot_dynamics FILE ARGUMENTS`` in its own session (its own process group,
    as a terminal gives it), with SIGINT's default handler (a background job of a
    non-interactive shell starts with SIGINT ignored, and launch would then ignore Ctrl-C)."""

    def __init__(self, environment: dict, log: Path, launch_file: str, *arguments: str):
        self.log = log
        self._not_theirs = mapped_shared_memory(os.getpid())  # the test's own DDS participant
        with open(log, 'w') as output:
            self.process = subprocess.Popen(
                ['ros2', 'launch', PACKAGE, launch_file, *arguments],
                env=environment,
                stdout=output,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
            )
        self.shared_memory: set = set()

    def text(self) -> str:
        return self.log.read_text(errors='replace')

    def node_pids(self) -> list:
        """Process ids launch reports for the processes it started."""
        return [int(pid) for pid in re.findall(r'process started with pid \[(\d+)\]', self.text())]

    def note_shared_memory(self) -> None:
        """Remember the /dev/shm files the nodes have mapped (the recording's ring buffer, their
        DDS segments), except the test's own ones."""
        for pid in self.node_pids():
            self.shared_memory.update(mapped_shared_memory(pid) - self._not_theirs)

    def stop(self, how: str) -> str:
        """Send the signal (``sigint``: to the launch process, ``group``: SIGINT to its process
        group, ``sigterm``: SIGTERM to its process group) and wait for the end; returns launch's
        output."""
        self.note_shared_memory()
        if how == 'sigint':
            self.process.send_signal(signal.SIGINT)
        else:
            os.killpg(self.process.pid, signal.SIGTERM if how == 'sigterm' else signal.SIGINT)
        self.process.wait(timeout=STOP_TIMEOUT)
        return self.text()

    def kill(self) -> None:
        """Last resort after a failure: nothing of the launch may outlive the test."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for pid in self.node_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait(timeout=10.0)


@contextlib.contextmanager
def launched(environment: dict, log: Path, launch_file: str, *arguments: str):
    launch = Launch(environment, log, launch_file, *arguments)
    try:
        yield launch
    finally:
        if launch.process.poll() is None or any(alive(pid) for pid in launch.node_pids()):
            launch.kill()


def mapped_shared_memory(pid: int) -> set:
    """/dev/shm files process ``pid`` has mapped, without LTTng's per-user wait files (they
    live as long as the machine, by design) and Fast DDS's port files (shared by every
    participant of the domain on this machine; the last one to leave a port removes it;
    ``fastdds_port<N>``, ``fastrtps_port<N>`` before Fast DDS 3, e.g. on Jazzy)."""
    try:
        maps = Path(f'/proc/{pid}/maps').read_text()
    except OSError:
        return set()
    return {
        path
        for path in re.findall(r'(/dev/shm/\S+)', maps)
        if not path.startswith('/dev/shm/lttng-ust-') and not is_dds_port_file(Path(path).name)
    }


def is_dds_port_file(name: str) -> bool:
    return processes.is_dds_file(name) and not processes.is_segment(name)


def alive(pid: int) -> bool:
    try:
        return Path(f'/proc/{pid}/stat').read_text().split(')')[-1].split()[0] != 'Z'
    except OSError:
        return False


@contextlib.contextmanager
def adopting_orphans():
    """Make this process the reaper of its orphaned descendants (Linux PR_SET_CHILD_SUBREAPER)
    while the block runs, so the exit status of a node whose launch process died can be read."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    assert prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0, os.strerror(ctypes.get_errno())
    try:
        yield
    finally:
        prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


PR_SET_CHILD_SUBREAPER = 36


def exit_statuses(pids: list, timeout: float) -> dict:
    """pid → exit code of each adopted process (None: still running after ``timeout`` s)."""
    statuses, deadline = {}, time.monotonic() + timeout
    while len(statuses) < len(pids) and time.monotonic() < deadline:
        for pid in set(pids) - set(statuses):
            with contextlib.suppress(ChildProcessError):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    statuses[pid] = os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    return {pid: statuses.get(pid) for pid in pids}


def assert_clean_stop(launch: Launch, output: str, started: int) -> None:
    """Exit 0, no traceback, every process "finished cleanly", none left, no /dev/shm file left."""
    assert launch.process.returncode == 0, output
    assert 'Traceback' not in output, output
    assert len(launch.node_pids()) == started, output
    finished = re.findall(r'process has finished cleanly \[pid (\d+)\]', output)
    assert sorted(map(int, finished)) == sorted(launch.node_pids()), output
    assert wait_for(lambda: not any(alive(pid) for pid in launch.node_pids()), 5.0), (
        'a node process is left'
    )
    assert launch.shared_memory, 'no /dev/shm file of the nodes was seen'
    left = sorted(path for path in launch.shared_memory if os.path.exists(path))
    assert wait_for(lambda: not [path for path in left if os.path.exists(path)], 5.0), (
        f'left in /dev/shm: {left}'
    )


# ---------------------------------------------------------------------- the graph, seen from the
# test
def nodes_in(harness, namespace: str) -> list:
    """Names of the nodes in ``namespace`` (with repetitions: a name taken twice shows twice)."""
    return sorted(
        name
        for name, node_namespace in harness.probe.get_node_names_and_namespaces()
        if node_namespace == namespace
    )


def wait_for_nodes(harness, launch: Launch, namespace: str, expected: list) -> None:
    """Wait until the ``expected`` nodes (and dynamics' service companion) are up in
    ``namespace``; then each name must be there once, and nothing else but the nodes' service
    companions and description listeners."""
    wanted = set(expected) | {'dynamics_services'}
    assert wait_for(
        lambda: wanted <= set(nodes_in(harness, namespace)) or launch.process.poll() is not None,
        START_TIMEOUT,
    ), f'{nodes_in(harness, namespace)} lacks some of {sorted(wanted)}\n{launch.text()}'
    assert launch.process.poll() is None, launch.text()
    time.sleep(2.0)  # a duplicate name would be discovered by now
    names = nodes_in(harness, namespace)
    assert len(names) == len(set(names)), f'a node name is taken twice: {names}'
    companions = {
        f'{name}{suffix}' for name in expected for suffix in ('_services', '_description_listener')
    }
    assert wanted <= set(names) <= set(expected) | companions, names


def wait_for_service(harness, service_type, name: str) -> None:
    """Wait up to START_TIMEOUT for the service to be discovered (harness.call waits 10 s only)."""
    client = harness.probe.create_client(
        service_type, name
    )  # destroyed with the probe, after the spin stops
    assert client.wait_for_service(timeout_sec=START_TIMEOUT), f'service {name} not available'


def parameters(harness, node: str, names: list) -> dict:
    """Values of ``names`` of the running ``node`` (its get_parameters service, which also
    shows that the node spins: only then is a signal taken by spin_nodes)."""
    from rcl_interfaces.srv import GetParameters
    from rclpy.parameter import parameter_value_to_python

    wait_for_service(harness, GetParameters, f'{node}/get_parameters')
    response = harness.call(
        GetParameters, f'{node}/get_parameters', GetParameters.Request(names=names), 30.0, 3.0
    )
    return {name: parameter_value_to_python(value) for name, value in zip(names, response.values)}


def feed_joint_states(harness, topic: str, urdf: Path) -> None:
    """Publish a slow sine on every moving joint of ``urdf`` at 100 Hz (as a robot driver does)."""
    from sensor_msgs.msg import JointState

    joints = [
        joint.get('name')
        for joint in ElementTree.parse(urdf).getroot().iter('joint')
        if joint.get('type') in ('revolute', 'continuous', 'prismatic')
        and joint.find('mimic') is None
    ]
    publisher = harness.probe.create_publisher(JointState, topic, 10)
    started = time.monotonic()

    def publish() -> None:
        t = time.monotonic() - started
        message = JointState(
            name=joints,
            position=[0.3 * math.sin(0.5 * t + index) for index in range(len(joints))],
            velocity=[0.15 * math.cos(0.5 * t + index) for index in range(len(joints))],
            effort=[0.0] * len(joints),
        )
        message.header.stamp = harness.probe.get_clock().now().to_msg()
        publisher.publish(message)

    harness.probe.create_timer(0.01, publish)


def torques_flow(harness, topic: str) -> None:
    from sensor_msgs.msg import JointState

    received = harness.collect(JointState, topic)
    assert wait_for(lambda: len(received) >= 20, 30.0), (
        f'{len(received)} messages on {topic} in 30 s'
    )
    assert (
        all(math.isfinite(value) for value in received[-1].effort) and len(received[-1].effort) == 7
    )


def identify_payload_answers(harness, node: str) -> str:
    """The service answers: success with the payload, or a refusal that says why."""
    from std_srvs.srv import Trigger

    wait_for_service(harness, Trigger, f'{node}/identify_payload')
    response = harness.call(Trigger, f'{node}/identify_payload', timeout=120.0)
    assert response.message.strip(), 'identify_payload answered with an empty message'
    return response.message


# ---------------------------------------------------------------------- the launches
SHOWN = {
    'robot_dynamics.launch.py': {
        'namespace',
        'config_file',
        'use_sim_time',
        'urdf_file',
        'root_joint',
    },
    'demo.launch.py': {'rviz', 'namespace', 'config_file', 'sim_config_file'},
}
"""The arguments each launch file may offer in --show-args: each one is used by a launch below
or by the static parameter tests (use_sim_time:=true is not offered by the demo: sim_robot
publishes no /clock, so with it nothing would move)."""


@pytest.mark.parametrize('launch_file', sorted(SHOWN))
def test_show_args_offers_only_arguments_that_work(installed, launch_file):
    shown = subprocess.run(
        ['ros2', 'launch', PACKAGE, launch_file, '--show-args'],
        env=installed,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert set(re.findall(r"^    '(\w+)':", shown.stdout, re.MULTILINE)) == SHOWN[launch_file], (
        shown.stdout
    )


@pytest.mark.parametrize(
    'launch_file, argument',
    [('robot_dynamics.launch.py', 'use_sim_time:=maybe'), ('demo.launch.py', 'rviz:=yes')],
)
def test_a_yes_or_no_argument_that_is_neither_stops_the_launch_by_name(
    installed, launch_file, argument
):
    ran = subprocess.run(
        ['ros2', 'launch', PACKAGE, launch_file, argument],
        env=installed,
        capture_output=True,
        text=True,
        timeout=120,
    )
    name, value = argument.split(':=')
    assert ran.returncode != 0, ran.stdout + ran.stderr
    assert f'Argument "{name}" provided value "{value}" is not valid' in ran.stdout + ran.stderr


def test_robot_launch_with_a_user_config_in_a_namespace_then_sigint_to_launch(
    ros, installed, tmp_path
):
    namespace = f'/robot_{os.getpid()}'
    urdf = share(installed) / 'models' / 'fr3_arm.urdf'
    shipped = (share(installed) / 'config' / 'robot_dynamics.yaml').read_text()
    assert shipped.count('torque_warn_ratio: 0.8 ') == 1
    user_config = tmp_path / 'my_robot_dynamics.yaml'
    user_config.write_text(shipped.replace('torque_warn_ratio: 0.8 ', 'torque_warn_ratio: 0.5 '))
    with (
        ros() as harness,
        launched(
            installed,
            tmp_path / 'launch.log',
            'robot_dynamics.launch.py',
            f'namespace:={namespace}',
            f'config_file:={user_config}',
            f'urdf_file:={urdf}',
        ) as launch,
    ):
        feed_joint_states(harness, f'{namespace}/joint_states', urdf)
        wait_for_nodes(harness, launch, namespace, ['centroidal', 'dynamics'])
        given = parameters(
            harness, f'{namespace}/dynamics', ['torque_warn_ratio', 'urdf_file', 'use_sim_time']
        )
        assert given == {'torque_warn_ratio': 0.5, 'urdf_file': str(urdf), 'use_sim_time': False}
        assert parameters(harness, f'{namespace}/centroidal', ['urdf_file'])['urdf_file'] == str(
            urdf
        )
        torques_flow(harness, f'{namespace}/dynamics/gravity_torques')
        identify_payload_answers(harness, f'{namespace}/dynamics')
        output = launch.stop('sigint')
    assert_clean_stop(launch, output, started=2)


def test_demo_without_rviz_in_a_namespace_then_ctrl_c_to_the_process_group(
    ros, installed, tmp_path
):
    """No robot_state_publisher is installed here (AMENT_PREFIX_PATH has none): without rviz
    the demo does not need it. namespace moves sim_robot too, so torques flow."""
    namespace = f'/demo_{os.getpid()}'
    with (
        ros() as harness,
        launched(
            installed,
            tmp_path / 'launch.log',
            'demo.launch.py',
            'rviz:=false',
            f'namespace:={namespace}',
        ) as launch,
    ):
        wait_for_nodes(harness, launch, namespace, ['centroidal', 'dynamics', 'sim_robot'])
        shipped = parameters(harness, f'{namespace}/sim_robot', ['payload_mass', 'publish_rate'])
        assert shipped == {
            'payload_mass': 1.5,
            'publish_rate': 250.0,
        }  # config/sim_robot.yaml; default mass 0
        assert parameters(harness, f'{namespace}/centroidal', ['root_joint']) == {
            'root_joint': 'fixed'
        }
        torques_flow(harness, f'{namespace}/dynamics/inverse_dynamics_torques')
        identify_payload_answers(harness, f'{namespace}/dynamics')
        output = launch.stop('group')
    assert 'robot_state_publisher' not in output, output
    assert_clean_stop(launch, output, started=3)


def test_robot_launch_on_sim_time_without_a_clock_then_sigterm_to_the_process_group(
    ros, installed, tmp_path
):
    """use_sim_time:=true and nothing publishes /clock: every timer of the nodes stands still,
    yet the torques follow joint_states, and SIGTERM to the process group (how systemd or a
    container runtime stops a service) ends every node in order. `ros2 launch` itself has no
    SIGTERM handler (it dies of it at once, upstream behaviour), so the nodes' own exit
    statuses are read here, as their adoptive parent."""
    namespace = f'/sim_time_{os.getpid()}'
    urdf = share(installed) / 'models' / 'fr3_arm.urdf'
    with (
        adopting_orphans(),
        ros() as harness,
        launched(
            installed,
            tmp_path / 'launch.log',
            'robot_dynamics.launch.py',
            f'namespace:={namespace}',
            f'urdf_file:={urdf}',
            'use_sim_time:=true',
        ) as launch,
    ):
        feed_joint_states(harness, f'{namespace}/joint_states', urdf)
        wait_for_nodes(harness, launch, namespace, ['centroidal', 'dynamics'])
        for node in ('dynamics', 'centroidal'):
            assert parameters(harness, f'{namespace}/{node}', ['use_sim_time']) == {
                'use_sim_time': True
            }, node
        torques_flow(harness, f'{namespace}/dynamics/gravity_torques')
        output = launch.stop('sigterm')
        statuses = exit_statuses(launch.node_pids(), STOP_TIMEOUT)
    assert len(statuses) == 2 and all(status == 0 for status in statuses.values()), (
        statuses,
        output,
    )
    left = sorted(path for path in launch.shared_memory if os.path.exists(path))
    assert launch.shared_memory and not left, f'left in /dev/shm: {left}'
