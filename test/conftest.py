"""Test-wide setup: loopback-only ROS discovery and a private ROS domain for this run.

Both are set before anything imports rclpy (rclpy reads them at init)."""

import importlib.util
import os
import sys
from pathlib import Path
from typing import Optional

os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
# Multi-threaded BLAS on small matrices is much slower on a shared 2-core machine.
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
if 'PYTEST_XDIST_WORKER' in os.environ:
    # Each pytest-xdist worker (`make test` runs two) on a domain of its own: the tests' nodes
    # use the same topic names, so two workers on one domain would hear each other's.
    _worker = int(os.environ['PYTEST_XDIST_WORKER'].removeprefix('gw'))
    os.environ['ROS_DOMAIN_ID'] = str(
        (int(os.environ['ROS_DOMAIN_ID']) - 1 + 37 * _worker) % 100 + 1
    )
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest  # noqa: E402

SHARED_DATA = Path(__file__).resolve().parents[1].parent / 'shared' / 'data'
HAS_ROS = importlib.util.find_spec('rclpy') is not None
"""False where no ROS 2 is installed (`make test-core-py310`: Python 3.10, no ROS wheels)."""
ROS_MARKERS = ('rclpy', 'ros_harness', 'launch')


def pytest_ignore_collect(collection_path: Path, config) -> Optional[bool]:
    """Without ROS 2, the test modules that name rclpy, the ROS test harness or launch (they start
    nodes or talk over ROS) are not collected."""
    if HAS_ROS or collection_path.suffix != '.py' or not collection_path.name.startswith('test_'):
        return None
    text = collection_path.read_text(encoding='utf-8')
    return any(marker in text for marker in ROS_MARKERS) or None


@pytest.fixture(scope='session', autouse=True)
def nothing_left_behind():
    """After the session: no node process this run started still runs, and no Fast DDS
    shared-memory file used by this run's processes is left in /dev/shm (files only other runs
    used are never counted or touched; see :mod:`robot_dynamics.instruments.processes`).

    Everything left is removed. A participant's segment is removed by Fast DDS itself when the
    participant ends in order, so a segment left means a process died without its instrument
    cleaning up: that fails the session. A port file outlives even an orderly end when its other
    users ended first; those are only removed."""
    from robot_dynamics.instruments import processes

    tracker = processes.DdsFileTracker()
    yield tracker
    tracker.stop()
    stray = processes.stop_stray_node_processes(os.getpid())
    removed = tracker.remove_leftovers()
    assert not stray, f'node processes still running after the session (stopped now): {stray}'
    segments = [name for name in removed if processes.is_segment(name)]
    assert not segments, f'Fast DDS segments left by this run (removed now): {segments}'


@pytest.fixture(scope='session')
def ros():
    """rclpy initialised once for the session; yields a :class:`ros_harness.RosHarness` factory."""
    import rclpy
    from ros_harness import RosHarness

    from robot_dynamics.instruments import processes

    rclpy.init()
    yield RosHarness
    owned = processes.dds_files_of(os.getpid())
    rclpy.try_shutdown()
    processes.remove_unused_dds_files(owned, ports=False)
