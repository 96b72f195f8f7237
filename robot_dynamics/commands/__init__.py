"""The user commands of the ``robot_dynamics`` command line (validate, identify, demo, ...)."""
