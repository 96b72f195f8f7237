"""The proving ground: simulated robots whose truth is known, to measure the core against.

Engines (``reference``: pinocchio, exact; ``mujoco_engine``: MuJoCo, independent), robot
profiles (how the true robot differs from its URDF), scenes, controllers and truth. Uses the
core, never used by it; no rclpy (``robot_dynamics.ros.sim_robot`` publishes it).
"""

import os

# Nothing here renders: with MUJOCO_GL=disable MuJoCo's import skips its OpenGL back-ends, whose
# glfw probe starts a Python subprocess on every import (and prints a BrokenPipeError traceback
# when the process that imports it is stopped meanwhile).
os.environ.setdefault('MUJOCO_GL', 'disable')
