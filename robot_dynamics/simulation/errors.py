"""What the proving ground refuses: every error names the element at fault and what to do."""

from robot_dynamics.core.errors import RobotDynamicsError


class SimulationError(RobotDynamicsError):
    """A simulation cannot be set up as requested (wrong model kind, step, trajectory, frames)."""


class ProfileError(SimulationError):
    """A robot profile names joints or links the robot lacks, or a value no body can have."""


class SceneError(SimulationError):
    """A scene cannot be built: MuJoCo cannot compile the model, or an object overlaps the robot."""
