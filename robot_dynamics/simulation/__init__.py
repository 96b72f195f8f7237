"""The proving ground: simulated robots whose truth is known, to measure the core against.

Engines (``reference``: pinocchio, exact; ``mujoco_engine``: MuJoCo, independent), robot
profiles (how the true robot differs from its URDF), scenes, controllers and truth. Uses the
core, never used by it; no rclpy (``robot_dynamics.ros.sim_robot`` publishes it).
"""
