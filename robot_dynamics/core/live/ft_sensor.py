"""A wrist force/torque sensor in the live pipeline: its readings compensated for the bias and the
tool in use, the bias tared at rest, the tool identified from the readings.

Each reading (force [N], moment [N·m] at the sensor frame's origin, its axes; the wrench the tool
side applies to the sensor) is paired with the newest joint state. The compensated wrench is the
wrench the environment applies to the tool, w_ext = w − b − w_tool(q, q̇, q̈)
(:mod:`~robot_dynamics.core.identification.ft_tool`), in the sensor frame; the tool is the
payload in use (:meth:`~robot_dynamics.core.model.model.RobotModel.attach_payload`), carried from
its link into the sensor frame. The base is taken at rest and upright.

The readings of the last :data:`HISTORY_SECONDS` are kept (at most :data:`HISTORY_RATE` per
second) for :meth:`FtSensor.tare` (the last :data:`TARE_SECONDS`, at rest) and
:meth:`FtSensor.identify_tool` (each stretch at rest of at least :data:`MIN_POSE_SECONDS` is one
static pose; with fewer than three poses, the motion itself).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.identification.ft_tool import (
    MIN_ORIENTATIONS,
    FtToolError,
    FtToolFit,
    SensorKinematics,
    identify_tool,
    sensor_kinematics,
    tool_wrench,
)
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel

HISTORY_SECONDS = 120.0
HISTORY_RATE = 100.0
TARE_SECONDS = 0.5
MIN_POSE_SECONDS = 0.3
REST_SPEED = 0.02
"""Largest joint speed [rad/s] that counts as at rest."""
UNSTEADY_RATIO = 5.0
MIN_MOVING_SAMPLES = 100
"""Samples in motion a fit from the motion needs (without enough static poses)."""
MAX_JOINT_STATE_AGE = 0.05
"""Largest stamp difference [s] between a reading and the joint state it is paired with."""


class FtSensorError(RobotDynamicsError):
    """An F/T reading or request refused; ``reason`` is a short key for counting."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class JointMotion:
    """The joint state a reading is paired with: ``stamp`` [s], positions, velocities and
    accelerations (``joint_names`` order; None: unknown)."""

    stamp: float
    positions: np.ndarray
    velocities: Optional[np.ndarray]
    accelerations: Optional[np.ndarray]


@dataclass(frozen=True)
class _Sample:
    stamp: float
    frame: str
    reading: np.ndarray
    joints: JointMotion


class FtSensor:
    """One F/T sensor on ``robot`` (module docstring); ``bias`` [N, N·m] to start from. One
    stream thread calls :meth:`take` (with the robot in use: a new model or payload is followed);
    :meth:`tare` and :meth:`identify_tool` copy the history and use their own pinocchio Data."""

    def __init__(self, robot: RobotModel, bias: Sequence[float] = (0.0,) * 6):
        self.bias = np.array(bias, dtype=float).reshape(6)
        self._history: deque = deque(maxlen=int(HISTORY_SECONDS * HISTORY_RATE))
        self._latest: Optional[_Sample] = None
        self.use_robot(robot)

    def use_robot(self, robot: RobotModel) -> None:
        """Follow ``robot`` (a new model or payload) from the next reading; the bias is kept, the
        history is cleared when the joints change."""
        previous = getattr(self, 'robot', None)
        if previous is not None and previous.joint_names != robot.joint_names:
            self._history.clear()
        self.robot, self._frames, self._data = robot, {}, robot.model.createData()

    def _frame_id(self, frame: str) -> int:
        frame_id = self._frames.get(frame)
        if frame_id is None:
            try:
                frame_id = self.robot.frame_id(frame, RobotDynamicsError, 'F/T sensor frame', True)
            except RobotDynamicsError as error:
                raise FtSensorError('unknown_frame', str(error)) from None
            self._frames[frame] = frame_id
        return frame_id

    def _tool_in(self, frame_id: int, data: pin.Data) -> Optional[InertialParameters]:
        """The payload in use expressed in frame ``frame_id`` (None without one) at the pose
        whose frame placements ``data`` holds."""
        payload = self.robot.payload
        if payload is None or payload[1].mass <= 0.0:
            return None
        link, parameters = payload
        sensor = data.oMf[frame_id]
        carrier = data.oMf[self.robot.frame_id(link)]
        relative = sensor.actInv(carrier)
        return parameters.transformed(relative.rotation, relative.translation)

    def take(
        self, stamp: float, frame: str, reading: Sequence[float], joints: Optional[JointMotion]
    ) -> np.ndarray:
        """The compensated wrench [N, N·m] of one reading (sensor frame ``frame``, a frame of the
        model) paired with ``joints``; raises :class:`FtSensorError` ('unknown_frame',
        'non_finite', 'no_joint_state') for a reading that cannot be used."""
        frame_id = self._frame_id(frame)
        values = np.asarray(reading, dtype=float).reshape(6)
        if not np.all(np.isfinite(values)):
            raise FtSensorError('non_finite', f'F/T reading {values.tolist()} is not finite')
        if joints is None or not abs(stamp - joints.stamp) <= MAX_JOINT_STATE_AGE:
            raise FtSensorError(
                'no_joint_state',
                f'no joint state within {MAX_JOINT_STATE_AGE:g} s of the F/T reading: its tool '
                'wrench cannot be computed',
            )
        motion = self._motion(frame_id, joints, self._data)
        tool = self._tool_in(frame_id, self._data)
        expected = np.zeros(6) if tool is None else tool_wrench(tool, motion)
        sample = _Sample(stamp, frame, values, joints)
        latest = self._latest
        if latest is None or stamp - latest.stamp >= 1.0 / HISTORY_RATE or stamp < latest.stamp:
            self._history.append(sample)
            self._latest = sample
        return values - self.bias - expected

    def expressed_in(self, frame: str, sensor_frame: str, wrench: np.ndarray) -> np.ndarray:
        """``wrench`` [N, N·m] at ``sensor_frame``'s origin in its axes, as the same wrench at
        ``frame``'s origin in its axes, at the pose of the newest reading (call on the stream
        thread, after :meth:`take`)."""
        data = self._data
        sensor = data.oMf[self._frame_id(sensor_frame)]
        target = data.oMf[self._frame_id(frame)]
        return target.actInv(sensor.act(pin.Force(np.asarray(wrench, dtype=float)))).vector

    def _motion(self, frame_id: int, joints: JointMotion, data: pin.Data) -> SensorKinematics:
        return sensor_kinematics(
            self.robot, frame_id, joints.positions, joints.velocities, joints.accelerations, data
        )

    def tare(self) -> np.ndarray:
        """Set the bias from the last :data:`TARE_SECONDS` at rest: the mean reading minus the
        tool's wrench at that pose. Raises :class:`FtSensorError` ('moving', 'no_readings')."""
        samples = list(self._history)
        if not samples:
            raise FtSensorError('no_readings', 'no F/T reading yet')
        recent = [s for s in samples if s.stamp >= samples[-1].stamp - TARE_SECONDS]
        if not all(_at_rest(s.joints) for s in recent):
            raise FtSensorError(
                'moving', f'the robot moved during the last {TARE_SECONDS:g} s: tare at rest'
            )
        last, data = recent[-1], self.robot.model.createData()
        frame_id = self._frame_id(last.frame)
        motion = self._motion(frame_id, last.joints, data)
        tool = self._tool_in(frame_id, data)
        expected = np.zeros(6) if tool is None else tool_wrench(tool, motion)
        self.bias = np.mean([s.reading for s in recent], axis=0) - expected
        return self.bias.copy()

    def identify_tool(self) -> FtToolFit:
        """The tool (sensor frame) and bias from the kept readings: one static pose per stretch
        at rest, or the motion when there are fewer than three. Raises
        :class:`~robot_dynamics.core.identification.ft_tool.FtToolError` with the reason."""
        samples = list(self._history)
        if not samples:
            raise FtToolError('no F/T reading yet')
        frame_id, data = self._frame_id(samples[-1].frame), self.robot.model.createData()
        poses = static_poses(samples)
        if len(poses) >= MIN_ORIENTATIONS:
            readings = [np.mean([s.reading for s in pose], axis=0) for pose in poses]
            middles = [pose[len(pose) // 2].joints for pose in poses]
            motions = [self._motion(frame_id, joints, data) for joints in middles]
            return identify_tool(readings, motions, static=True)
        moving = [
            s for s in samples if s.joints.accelerations is not None and not _at_rest(s.joints)
        ]
        if len(moving) < MIN_MOVING_SAMPLES:
            raise FtToolError(
                f'{len(poses)} static pose(s) of at least {MIN_POSE_SECONDS:g} s and too little '
                f'motion: hold the tool still in at least {MIN_ORIENTATIONS} different '
                'orientations, or move it'
            )
        motions = [self._motion(frame_id, s.joints, data) for s in moving]
        return identify_tool([s.reading for s in moving], motions, static=False)


def static_poses(samples: Sequence[_Sample]) -> list:
    """Stretches of consecutive samples at rest lasting at least :data:`MIN_POSE_SECONDS`
    whose readings are steady: a stretch whose force spread exceeds :data:`UNSTEADY_RATIO` times
    the median stretch's (a knock, a contact, a collision while still) is left out."""
    poses = _still_stretches(samples)
    if not poses:
        return poses
    spreads = [float(np.std([s.reading[:3] for s in pose], axis=0).max()) for pose in poses]
    limit = UNSTEADY_RATIO * float(np.median(spreads))
    return [pose for pose, spread in zip(poses, spreads) if spread <= limit]


def _still_stretches(samples: Sequence[_Sample]) -> list:
    poses, current = [], []
    for sample in samples:
        if _at_rest(sample.joints):
            current.append(sample)
            continue
        if current and current[-1].stamp - current[0].stamp >= MIN_POSE_SECONDS:
            poses.append(current)
        current = []
    if current and current[-1].stamp - current[0].stamp >= MIN_POSE_SECONDS:
        poses.append(current)
    return poses


def _at_rest(joints: JointMotion) -> bool:
    velocities = joints.velocities
    return velocities is not None and float(np.max(np.abs(velocities), initial=0.0)) < REST_SPEED
