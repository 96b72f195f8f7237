"""A wrist force/torque sensor and the tool it carries: the wrench the tool alone puts on the
sensor, and the tool's mass, CoM and the sensor's bias identified from the sensor's readings.

Convention: the sensor reads the wrench w = (force [N], moment [N·m] about its origin) that the
tool side applies to it, in its own frame (at rest, the tool's weight). Newton–Euler for a tool of
spatial inertia I in the sensor frame moving with the frame's twist v and spatial acceleration a
(gravity g in that frame), pushed by the environment with w_ext:

    w = b − (I (a − g) + v ×* I v) + w_ext = b − Y(v, a − g) φ + w_ext,

b the sensor's bias, φ the tool's 10 inertial parameters about the sensor origin (pinocchio's
order) and Y pinocchio's body regressor (Atkeson, An and Hollerbach, "Estimation of inertial
parameters of manipulator loads and links", 1986). The compensated wrench is w_ext = w − b +
I (a − g) + v ×* I v.

Identification solves the same equation with w_ext = 0 for φ and b by least squares. At rest
(a = v = 0) only the mass, the first moment (hence the CoM) and the bias are identifiable, and only
from at least three distinct orientations of gravity in the sensor frame; a fit from too few or too
alike ones is refused with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel

MIN_ORIENTATIONS = 3
DISTINCT_ANGLE = np.radians(10.0)
"""Two static poses count as distinct orientations when gravity in the sensor frame differs by
more than this angle."""
MIN_SPREAD = 0.2
"""The weakest direction of the static poses' gravity directions (smallest singular value of
their centred unit vectors, over √n) below which the orientations are too alike."""


class FtToolError(RobotDynamicsError):
    """An F/T identification the data cannot support (the reason in words)."""


@dataclass(frozen=True)
class SensorKinematics:
    """The sensor frame's motion, its own axes: twist v (linear [m/s], angular [rad/s]), spatial
    acceleration a [m/s², rad/s²] and gravity g [m/s²]."""

    velocity: np.ndarray
    acceleration: np.ndarray
    gravity: np.ndarray


def sensor_kinematics(
    robot: RobotModel,
    frame_id: int,
    positions: np.ndarray,
    velocities: Optional[np.ndarray] = None,
    accelerations: Optional[np.ndarray] = None,
    data: Optional[pin.Data] = None,
) -> SensorKinematics:
    """The motion of frame ``frame_id`` of ``robot`` (base at rest, upright) at joint positions
    [rad], velocities and accelerations (None: zero; ``joint_names`` order); ``data``: the
    pinocchio Data to use (None: the robot's own); its frame placements are left updated."""
    zeros = np.zeros(robot.num_joints)
    q = robot.configuration(positions)
    v = robot.tangent(zeros if velocities is None else velocities)
    a = robot.tangent(zeros if accelerations is None else accelerations)
    model, data = robot.model, robot.data if data is None else data
    pin.forwardKinematics(model, data, q, v, a)
    pin.updateFramePlacements(model, data)
    placement = data.oMf[frame_id]
    twist = pin.getFrameVelocity(model, data, frame_id, pin.LOCAL).vector
    acceleration = pin.getFrameAcceleration(model, data, frame_id, pin.LOCAL).vector
    gravity = placement.rotation.T @ model.gravity.linear
    return SensorKinematics(twist, acceleration, gravity)


def tool_wrench(tool: InertialParameters, motion: SensorKinematics) -> np.ndarray:
    """The wrench [N, N·m] the tool (inertial parameters in the sensor frame) applies to the
    sensor at ``motion`` with nothing else touching it: −(I (a − g) + v ×* I v)."""
    return -_regressor(motion) @ tool.pinocchio_vector()


def _regressor(motion: SensorKinematics) -> np.ndarray:
    """Y (6 × 10): I (a − g) + v ×* I v = Y φ."""
    shifted = motion.acceleration - np.concatenate([motion.gravity, np.zeros(3)])
    return pin.bodyRegressor(pin.Motion(motion.velocity), pin.Motion(shifted))


@dataclass(frozen=True)
class FtToolFit:
    """A tool identified from F/T readings: ``tool`` (sensor frame), ``bias`` [N, N·m],
    ``mass_sigma`` [kg] and ``com_sigma`` [m] (1σ, from the residuals), ``residual_rms``
    (force [N], moment [N·m]), ``poses`` (static poses or samples used), ``with_inertia``
    (whether the motion identified the rotational inertia too)."""

    tool: InertialParameters
    bias: np.ndarray
    mass_sigma: float
    com_sigma: np.ndarray
    residual_rms: tuple
    poses: int
    with_inertia: bool

    def summary(self) -> str:
        com = ', '.join(f'{1000 * c:.1f}' for c in self.tool.com)
        sigma = ', '.join(f'{1000 * s:.1f}' for s in self.com_sigma)
        return (
            f'tool from F/T over {self.poses} poses: mass {self.tool.mass:.4f} ± '
            f'{self.mass_sigma:.4f} kg, CoM [{com}] ± [{sigma}] mm (sensor frame); bias force '
            f'{np.round(self.bias[:3], 3).tolist()} N, moment {np.round(self.bias[3:], 4).tolist()}'
            ' N·m'
        )


def identify_tool(
    readings: Sequence[np.ndarray], motions: Sequence[SensorKinematics], static: bool
) -> FtToolFit:
    """The tool and bias that best explain ``readings`` (each [force, moment] in the sensor
    frame) at ``motions``. ``static``: the readings are at rest (averaged static poses): mass,
    CoM and bias only, from at least :data:`MIN_ORIENTATIONS` distinct orientations; otherwise
    the rotational inertia is fitted too when the motion excites it. Raises
    :class:`FtToolError` with the reason when the data cannot tell the tool apart."""
    readings = np.asarray(readings, dtype=float).reshape(-1, 6)
    if len(readings) != len(motions) or not len(readings):
        raise FtToolError('no F/T readings to fit')
    if not np.all(np.isfinite(readings)):
        raise FtToolError('an F/T reading is not finite')
    if static:
        _check_orientations([m.gravity for m in motions])
    regressors = np.array([_regressor(m) for m in motions])
    columns = 4 if static else 10
    design = np.concatenate(
        [-regressors[:, :, :columns], np.broadcast_to(np.eye(6), (len(motions), 6, 6))], axis=2
    ).reshape(-1, columns + 6)
    scale = np.linalg.norm(design, axis=0)
    scale[scale == 0.0] = 1.0
    singular = np.linalg.svd(design / scale, compute_uv=False)
    with_inertia = not static and singular[-1] > 1e-6 * singular[0]
    if not static and not with_inertia:
        columns = 4
        design = np.delete(design, np.s_[4:10], axis=1)
        scale = np.delete(scale, np.s_[4:10])
        singular = np.linalg.svd(design / scale, compute_uv=False)
    if singular[-1] <= 1e-6 * singular[0]:
        raise FtToolError(
            'the orientations and motion do not separate the tool from the sensor bias: add poses '
            'with the tool turned differently'
        )
    solution, *_ = np.linalg.lstsq(design / scale, readings.reshape(-1), rcond=None)
    solution = solution / scale
    residual = readings.reshape(-1) - design @ solution
    dof = max(len(residual) - len(solution), 1)
    covariance = (residual @ residual / dof) * np.linalg.inv(design.T @ design)
    parameters = np.zeros(10)
    parameters[:columns] = solution[:columns]
    mass = parameters[0]
    if not mass > 0.0:
        raise FtToolError(f'the fit gives a mass of {mass:.4g} kg: no tool, or a wrong sign')
    first_moment = parameters[1:4]
    tool = (
        InertialParameters.from_pinocchio_vector(parameters)
        if with_inertia
        else InertialParameters.point_mass(mass, first_moment / mass)
    )
    sigma = np.sqrt(np.diag(covariance))
    com_sigma = np.hypot(sigma[1:4], np.abs(first_moment) * sigma[0] / mass) / mass
    errors = residual.reshape(-1, 6)
    return FtToolFit(
        tool,
        solution[columns:],
        float(sigma[0]),
        com_sigma,
        (
            float(np.sqrt(np.mean(np.square(errors[:, :3])))),
            float(np.sqrt(np.mean(np.square(errors[:, 3:])))),
        ),
        len(readings),
        bool(with_inertia),
    )


def _check_orientations(gravities: Sequence[np.ndarray]) -> None:
    """Refuse static poses with fewer than :data:`MIN_ORIENTATIONS` distinct gravity directions
    in the sensor frame, or directions too alike (:data:`MIN_SPREAD`)."""
    directions = np.array([g / np.linalg.norm(g) for g in gravities])
    distinct: list = []
    for direction in directions:
        if all(np.arccos(np.clip(direction @ d, -1.0, 1.0)) > DISTINCT_ANGLE for d in distinct):
            distinct.append(direction)
    if len(distinct) < MIN_ORIENTATIONS:
        raise FtToolError(
            f'{len(distinct)} distinct tool orientation(s) among {len(directions)} static poses; '
            f'at least {MIN_ORIENTATIONS} more than {np.degrees(DISTINCT_ANGLE):.0f}° apart are '
            'needed to tell the tool from the sensor bias'
        )
    spread = np.linalg.svd(directions - directions.mean(axis=0), compute_uv=False)
    weakest = spread[min(1, len(spread) - 1)] / np.sqrt(len(directions))
    if weakest < MIN_SPREAD:
        raise FtToolError(
            f'the static poses turn the tool about one axis only (spread {weakest:.2f} < '
            f'{MIN_SPREAD}): tilt it about a second axis too'
        )


def mass_disagreement(
    ft_mass: float, ft_sigma: float, joint_mass: float, joint_sigma: float, sigmas: float = 3.0
) -> str:
    """Words when the tool's mass from the F/T sensor and the payload's from the joint torques
    [kg] differ by more than ``sigmas`` of their combined 1σ, else ''."""
    combined = float(np.hypot(ft_sigma, joint_sigma))
    difference = ft_mass - joint_mass
    if abs(difference) <= sigmas * combined:
        return ''
    return (
        f'the F/T sensor\'s tool ({ft_mass:.4f} ± {ft_sigma:.4f} kg) and the joint torques\' '
        f'payload ({joint_mass:.4f} ± {joint_sigma:.4f} kg) differ by {1000 * difference:+.1f} g, '
        f'more than {sigmas:g}σ: check the sensor frame and bias, the effort scale, or whether '
        'both saw the same tool'
    )
