"""Test-wide setup: loopback-only ROS discovery and a private ROS domain for this run.

Both are set before anything imports rclpy (rclpy reads them at init)."""
import os
import sys
from pathlib import Path

os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
# Multi-threaded BLAS on small matrices is much slower on a shared 2-core machine.
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest  # noqa: E402

SHARED_DATA = Path(__file__).resolve().parents[1].parent / 'shared' / 'data'


@pytest.fixture(scope='session')
def ros():
    """rclpy initialised once for the session; yields a :class:`ros_harness.RosHarness` factory."""
    import rclpy
    from ros_harness import RosHarness
    rclpy.init()
    yield RosHarness
    rclpy.try_shutdown()
