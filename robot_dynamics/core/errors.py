"""The package's exception scheme: one base class, one small class per failure kind.

* Every exception raised on purpose derives from :class:`RobotDynamicsError`, so a caller (a
  node, a command) can catch everything the package refuses in one clause and tell it apart
  from a bug.
* A class lives next to the code that raises it (``RecordingError`` in
  ``identification.recording``, ``MeshLoadError`` in ``validation.mesh_inertia``, ...). This
  module holds the base and the kinds that modules of several folders raise or catch.
* Names say the kind: ``...Error`` for input that cannot be used (the message names the
  offending element and the accepted range); ``...Refused`` for valid data that cannot give a
  trustworthy answer (the message says, in operator words, what to record instead).
"""


class RobotDynamicsError(Exception):
    """Base class of every error raised on purpose by robot_dynamics."""


class SettingError(RobotDynamicsError, ValueError):
    """A setting is outside what the computation accepts (gravity, root joint, window, timeout,
    capacity...); the message names the setting and the values it takes.

    Also a ValueError, as these settings raised before this class existed: callers that catch
    ValueError (the nodes' model building, users' scripts) keep working.
    """


class ModelInputError(RobotDynamicsError, ValueError):
    """A state given to the model does not fit it: a joint array of the wrong length or shape, a
    base orientation with no direction; the message says what is expected.

    Also a ValueError (a wrong shape is one in numpy's terms), as these raised before this class
    existed.
    """


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


class PayloadIdentificationRefused(IdentificationRefused):
    """The payload cannot be identified from this data; the message says why, in operator words."""


class NoPayloadDetected(PayloadIdentificationRefused):
    """The fitted ``mass`` [kg] is within ``payload_estimate.DETECTION_SIGMAS`` standard
    deviations ``mass_std`` [kg] of zero, or below ``payload_estimate.LIGHTEST_PAYLOAD``:
    nothing distinguishable from no payload (empty gripper)."""

    def __init__(self, mass: float, mass_std: float, message: str):
        super().__init__(message)
        self.mass, self.mass_std = mass, mass_std


class SingularMassMatrix(RobotDynamicsError):
    """Forward dynamics is undefined: some joint moves no mass or inertia."""
