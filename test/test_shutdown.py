"""Ctrl-C ends every node quietly: each node runs as its own process (as `ros2 run` starts it),
is interrupted with SIGINT once it is up, and must exit with status 0 and no traceback.

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
from sensor_msgs.msg import JointState

from robot_dynamics.models import ARM_URDF
from ros_harness import wait_for

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = '/shutdown_check'


def start_node(module: str, name: str) -> subprocess.Popen:
    """``python -m robot_dynamics.ros.MODULE`` named ``name`` in NAMESPACE, on the bundled arm,
    in the test's private domain with loopback-only discovery."""
    environment = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
                       ROS_DOMAIN_ID=os.environ['ROS_DOMAIN_ID'],
                       PYTHONFAULTHANDLER='1')  # a crash in C prints where it happened
    return subprocess.Popen([sys.executable, '-m', f'robot_dynamics.ros.{module}', '--ros-args',
                             '-r', f'__ns:={NAMESPACE}', '-r', f'__node:={name}', '-p', f'urdf_file:={ARM_URDF}'],
                            cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@contextlib.contextmanager
def killed_on_failure(process: subprocess.Popen):
    """Kill ``process`` if it is still running when the block ends (a failed wait or assertion)."""
    try:
        yield
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


@pytest.mark.parametrize('module', ['centroidal_node', 'dynamics_node', 'sim_robot'])
def test_sigint_ends_the_node_with_status_0_and_no_traceback(ros, module):
    name = f'{module}_shutdown_{os.getpid()}'
    with ros() as harness:
        if module == 'sim_robot':  # publishes joint_states from its first timer tick
            received = harness.collect(JointState, f'{NAMESPACE}/joint_states')
            up = lambda: bool(received)  # noqa: E731
        else:  # its first /diagnostics comes one diagnostics_period (1 s) after it spins
            received = harness.collect(DiagnosticArray, '/diagnostics')
            up = lambda: any(status.name.startswith(f'{name}:')  # noqa: E731
                             for message in list(received) for status in message.status)
        started = time.monotonic()
        process = start_node(module, name)
        with killed_on_failure(process):
            assert wait_for(up, 10.0), f'{module} did not come up in 10 s'
            process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=5.0)
    assert process.returncode == 0, stderr
    assert 'Traceback' not in stderr + stdout, stderr
    assert time.monotonic() - started < 15.0


def test_sigterm_ends_an_idle_relay_within_its_wake_up_period(ros):
    # The relay has no output of its own to wait for: it is given time to start, then stopped
    # while idle (no input), which only its once-a-second timer can notice.
    process = start_node('relay', f'relay_shutdown_{os.getpid()}')
    with killed_on_failure(process):
        time.sleep(3.0)
        assert process.poll() is None, process.communicate()[1]
        stopped = time.monotonic()
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=5.0)
    assert process.returncode == 0 and time.monotonic() - stopped < 2.5, stderr
    assert 'Traceback' not in stderr + stdout, stderr
