"""robot_dynamics: live rigid-body dynamics for ROS 2 robots.

The math lives in :mod:`robot_dynamics.core` (no ROS imports); the nodes in
:mod:`robot_dynamics.ros` and the command line in :mod:`robot_dynamics.cli` are thin shells.
"""

__version__ = '0.1.0'
