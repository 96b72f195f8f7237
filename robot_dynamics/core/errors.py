"""Exception classes, one per failure kind, all derived from :class:`RobotDynamicsError`."""


class RobotDynamicsError(Exception):
    """Base class of every error raised on purpose by robot_dynamics."""


class DescriptionError(RobotDynamicsError):
    """A robot description (URDF) cannot be used: unparseable, unsafe, or not a valid tree.

    The message names the offending element (link or joint) where there is one.
    """


class JointStateError(RobotDynamicsError):
    """A joint-state sample cannot be used (unknown layout, NaN/Inf, wrong lengths...).

    ``reason`` is a short machine-friendly key (e.g. ``'non_finite'``) used to count rejections.
    """

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


class PayloadError(RobotDynamicsError):
    """A payload cannot be attached (unknown link, non-physical parameters)."""


class IdentificationRefused(RobotDynamicsError):
    """The data cannot give a trustworthy estimate; the message says why in operator words."""


class SingularMassMatrix(RobotDynamicsError):
    """Forward dynamics is undefined: some joint moves no mass or inertia."""
