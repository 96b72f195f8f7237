"""The robot model: URDF parsing and checks, the pinocchio model wrapper, inertial parameters."""
