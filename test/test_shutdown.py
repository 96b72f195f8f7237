"""Ctrl-C ends every node quietly: each node runs as its own process (as `ros2 run` starts it),
is interrupted with SIGINT once it is up, and must exit with status 0 and no traceback; so must
a node hit by a burst of signals (a terminal's Ctrl-C reaches the whole process group and
`ros2 launch` forwards one more SIGINT to each node), and a node whose every timer runs on a
ROS clock that stands still (``use_sim_time`` with no ``/clock``).

Before the fix rclpy's signal handler shut the context down under both executors: the service
thread of spin_nodes left with ExternalShutdownException or an RCLError and printed a
traceback (dynamics_node even exited with status 1), or crashed with a segfault (sim_robot,
publishing at 250 Hz: about 3 in 20 runs)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from ros_harness import answer, wait_for
from sensor_msgs.msg import JointState

from robot_dynamics.instruments import processes
from robot_dynamics.models import ARM_URDF

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = '/shutdown_check'
START_TIMEOUT = 60.0
"""Seconds for a node process to come up (imports and model loading on a shared, loaded machine)."""


def start_node(
    module: str, name: str, *parameters: str, namespace: str = NAMESPACE
) -> subprocess.Popen:
    """``python -m robot_dynamics.ros.MODULE`` (``robot_dynamics.MODULE`` for a dotted one) named
    ``name`` in ``namespace``, on the bundled arm, with the extra ``-p NAME:=VALUE``
    ``parameters``, in the test's private domain with loopback-only discovery."""
    environment = dict(
        os.environ,
        ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
        ROS_DOMAIN_ID=os.environ['ROS_DOMAIN_ID'],
        PYTHONFAULTHANDLER='1',
    )  # a crash in C prints where it happened
    target = f'robot_dynamics.{module}' if '.' in module else f'robot_dynamics.ros.{module}'
    return start_python(
        [
            '-m',
            target,
            '--ros-args',
            '-r',
            f'__ns:={namespace}',
            '-r',
            f'__node:={name}',
            '-p',
            f'urdf_file:={ARM_URDF}',
            *(argument for parameter in parameters for argument in ('-p', parameter)),
        ],
        environment,
    )


def start_python(arguments: list, environment: dict) -> subprocess.Popen:
    """``python ARGUMENTS`` from the repository root, its output captured as text."""
    return processes.start_node_process(
        [sys.executable, *arguments],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@contextlib.contextmanager
def killed_on_failure(process: subprocess.Popen):
    """Kill ``process`` if it is still running when the block ends (a failed wait or assertion)."""
    try:
        yield
    finally:
        if process.poll() is None:
            processes.kill_node_process(process)  # and the Fast DDS files a killed process leaves
            process.communicate()


@pytest.mark.parametrize('module', ['centroidal_node', 'dynamics_node', 'sim_robot'])
def test_ros_arguments_rcl_cannot_parse_end_the_node_with_its_reason_and_no_traceback(module):
    # '-p urdf_file' without ':=value': rcl refuses the whole command line at rclpy.init
    process = start_node(module, f'{module}_bad_arguments', 'urdf_file')
    with killed_on_failure(process):
        stdout, stderr = process.communicate(timeout=START_TIMEOUT)
    assert process.returncode == 1, stderr
    assert f'{module}: cannot start ROS 2 with these arguments' in stderr, stderr
    assert "parameter override rule: '-p urdf_file'" in stderr, stderr
    assert 'Traceback' not in stderr + stdout, stderr


@pytest.mark.parametrize('module', ['centroidal_node', 'dynamics_node', 'sim_robot'])
def test_sigint_ends_the_node_with_status_0_and_no_traceback(ros, module):
    name = f'{module}_shutdown_{os.getpid()}'
    with ros() as harness:
        if module == 'sim_robot':  # publishes joint_states from its first timer tick
            received = harness.collect(JointState, f'{NAMESPACE}/joint_states')

            def up():
                return bool(received)

        else:  # its first /diagnostics comes one diagnostics_period (1 s) after it spins
            received = harness.collect(DiagnosticArray, '/diagnostics')

            def up():
                return any(
                    status.name.startswith(f'{name}:')
                    for message in list(received)
                    for status in message.status
                )

        process = start_node(module, name)
        with killed_on_failure(process):
            assert wait_for(up, START_TIMEOUT), f'{module} did not come up in {START_TIMEOUT:.0f} s'
            process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=5.0)
    assert process.returncode == 0, stderr
    assert 'Traceback' not in stderr + stdout, stderr


@pytest.mark.parametrize('module', ['centroidal_node', 'dynamics_node', 'sim_robot'])
@pytest.mark.parametrize('number', [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_console_script_imports_ends_it_quietly(module, number):
    """The console script (what `ros2 run` starts) imports for about a second before the node
    exists; a signal 0.3 s in lands there (on a slower machine: later, where the node's own
    handling answers): status 0, no traceback."""
    environment = dict(
        os.environ,
        ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
        ROS_DOMAIN_ID=os.environ['ROS_DOMAIN_ID'],
    )
    script = (
        f'import sys; from robot_dynamics.ros.entry_points import {module}; sys.exit({module}())'
    )
    process = start_python(
        ['-c', script, '--ros-args', '-p', f'urdf_file:={ARM_URDF}'], environment
    )
    with killed_on_failure(process):
        time.sleep(0.3)
        process.send_signal(number)
        stdout, stderr = process.communicate(timeout=START_TIMEOUT)
    assert process.returncode == 0, stderr
    assert 'Traceback' not in stderr + stdout, stderr


def test_sigterm_ends_an_idle_relay_promptly(ros):
    # The relay has no output of its own to wait for: once it is in the graph it is given time
    # to spin, then stopped while idle (no input, no timer): the signal itself must wake it.
    name = f'relay_shutdown_{os.getpid()}'
    with ros() as harness:
        process = start_node('instruments.relay', name)
        with killed_on_failure(process):
            reason = came_up(harness, process, name)
            assert not reason, reason
            process.send_signal(signal.SIGTERM)
            stdout, stderr = process.communicate(timeout=5.0)
    assert process.returncode == 0, (
        stderr
    )  # without a wake-up of its own it never ends: the timeout above
    assert 'Traceback' not in stderr + stdout, stderr


def spinning(harness, name: str, namespace: str = NAMESPACE) -> bool:
    """Whether the node ``namespace``/``name`` spins: its list_parameters service answers (it
    is in the graph already while its constructor runs, before spin_nodes takes the signals).

    The request is sent again every few seconds: a reply sent before the node has discovered
    the probe's reply reader is lost (DDS discovery completes per endpoint; under load the
    service can be found a while before its replies can reach the probe)."""
    from rcl_interfaces.srv import ListParameters

    # The client stays with the probe (destroyed with it): destroying it under the harness's
    # spinning executor is an InvalidHandle error in that thread.
    client = harness.probe.create_client(ListParameters, f'{namespace}/{name}/list_parameters')
    if not client.wait_for_service(timeout_sec=START_TIMEOUT):
        return False
    return answer(client, ListParameters.Request(), START_TIMEOUT, resend=3.0) is not None


def came_up(harness, process: subprocess.Popen, name: str) -> str:
    """An empty string when the node ``name`` of ``process`` spins, else why not: its exit
    status and its last lines of stderr when it ended, or that it never answered."""
    if spinning(harness, name):
        return ''
    if process.poll() is None:
        return f'{name} is running but did not answer list_parameters in {START_TIMEOUT:.0f} s'
    return f'{name} ended with status {process.returncode}: {process.communicate()[1][-2000:]}'


@pytest.mark.parametrize('module', ['dynamics_node', 'sim_robot'])
def test_a_burst_of_sigints_during_shutdown_still_ends_in_a_clean_exit(ros, module):
    """Once shutdown has started, further signals must not interrupt it (they raised
    KeyboardInterrupt inside the teardown: a traceback from destroy_node, exit status -2)."""
    name = f'{module}_burst_{os.getpid()}'
    with ros() as harness:
        process = start_node(module, name)
        with killed_on_failure(process):
            reason = came_up(harness, process, name)
            assert not reason, reason  # past start-up: spinning, timers running
            deadline = time.monotonic() + 10.0
            while process.poll() is None and time.monotonic() < deadline:
                process.send_signal(signal.SIGINT)
                time.sleep(0.005)
            stdout, stderr = process.communicate(timeout=5.0)
    assert process.returncode == 0, stderr
    assert 'Traceback' not in stderr + stdout, stderr


@pytest.mark.parametrize(
    'module, number',
    [
        ('dynamics_node', signal.SIGINT),
        ('centroidal_node', signal.SIGTERM),
    ],
)
def test_a_node_on_a_stopped_sim_clock_still_stops_on_a_signal(ros, module, number):
    """use_sim_time with no /clock: the ROS clock stands still, the signal still ends the node;
    its diagnostics go on, on the steady clock (a paused bag must not silence them). sim_robot,
    the clock of its own simulation, refuses use_sim_time (test_sim_robot_mujoco.py)."""
    name = f'{module}_sim_time_{os.getpid()}'
    with ros() as harness:
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics')
        process = start_node(module, name, 'use_sim_time:=true')
        with killed_on_failure(process):
            reason = came_up(harness, process, name)
            assert not reason, reason

            def arrays_from_the_node():
                return sum(
                    any(status.name.startswith(f'{name}:') for status in message.status)
                    for message in list(diagnostics)
                )

            assert wait_for(lambda: arrays_from_the_node() >= 2, 30.0), list(diagnostics)
            assert process.poll() is None, process.communicate()[1]
            process.send_signal(number)
            stdout, stderr = process.communicate(timeout=5.0)
    assert process.returncode == 0, stderr
    assert 'Traceback' not in stderr + stdout, stderr


def test_the_low_latency_spinner_delivers_messages_and_stops_on_a_stopped_sim_clock(ros):
    """The stream executor of every node process (rclpy's EventsExecutor where it exists, which
    has no guard conditions): a message published to a spun node reaches its callback, and
    stop() from another thread ends the spin although the node's only timer is on a ROS clock
    that stands still."""
    import threading

    import rclpy
    from rclpy.parameter import Parameter
    from std_msgs.msg import String

    from robot_dynamics.ros.spinning import EventsExecutor, NodeSpinner

    node = rclpy.create_node(
        f'low_latency_spin_{os.getpid()}',
        namespace=NAMESPACE,
        parameter_overrides=[Parameter('use_sim_time', value=True)],
    )
    ticks, received = [], []
    node.create_timer(0.01, lambda: ticks.append(1))
    node.create_subscription(
        String, 'low_latency_probe', lambda message: received.append(message.data), 10
    )
    publisher = node.create_publisher(String, 'low_latency_probe', 10)
    spinner = NodeSpinner([node], low_latency=True)
    expected = 'EventsExecutor' if EventsExecutor is not None else 'SingleThreadedExecutor'
    thread = threading.Thread(target=spinner.spin, daemon=True)
    try:
        assert type(spinner.executor).__name__ == expected
        thread.start()
        assert wait_for(lambda: (publisher.publish(String(data='hello')), bool(received))[1], 30.0)
        assert received[0] == 'hello'
        spinner.stop()
        thread.join(timeout=30.0)
        assert not thread.is_alive(), 'stop() did not end the spin'
        assert ticks == []  # the sim clock never moved: nothing but stop() woke the executor
        assert len(list(node.timers)) == 1  # the wake-up timer is gone with the spin
    finally:
        spinner.stop()
        thread.join(timeout=30.0)
        spinner.close()
        node.destroy_node()


STUCK_NODE = """
import threading
from rclpy.node import Node
from robot_dynamics.ros.spinning import run_nodes


class StuckOnDestroy(Node):
    def destroy_node(self):
        threading.Event().wait()  # a teardown that never ends


run_nodes(lambda: [StuckOnDestroy('{name}', namespace='{namespace}')])
"""


def test_a_teardown_that_hangs_reports_its_stacks_and_ends_with_status_1(ros, tmp_path):
    """A node whose teardown never ends (here its destroy_node waits forever) must not wait for
    ``ros2 launch``'s SIGKILL: TEARDOWN_LIMIT seconds after the signal it writes every thread's
    stack to stderr, naming where it hangs, and exits with status 1. The stacks are also in its
    ROS log file (stderr may be a pipe nobody reads any more)."""
    from robot_dynamics.ros.spinning import TEARDOWN_LIMIT

    name = f'stuck_teardown_{os.getpid()}'
    environment = dict(
        os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', ROS_LOG_DIR=str(tmp_path)
    )
    with ros() as harness:
        process = start_python(
            ['-c', STUCK_NODE.format(name=name, namespace=NAMESPACE)], environment
        )
        with killed_on_failure(process):
            reason = came_up(harness, process, name)
            assert not reason, reason
            owned = processes.dds_files_of(process.pid)
            signalled = time.monotonic()
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=TEARDOWN_LIMIT + 30.0)
            ended = time.monotonic() - signalled
    processes.remove_unused_dds_files(owned, ports=False)  # it never destroyed its participant
    assert process.returncode == 1, stderr
    assert ended >= TEARDOWN_LIMIT, ended
    assert 'in destroy_node' in stderr, stderr
    assert 'in spin_nodes' in stderr, stderr
    logged = ''.join(path.read_text() for path in tmp_path.glob('*.log'))
    assert 'teardown not ended' in logged and 'in destroy_node' in logged, logged
