"""What a joint state says about the set-up, in words for the torque-margin and contact
statuses: positions or velocities beyond the URDF limits (degrees sent for radians), velocities
that are not the rate of the positions (a sign, a unit, zeros), and efforts one factor from the
model's gravity torques at rest (a sign or a unit) or that stopped changing."""

from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np

from robot_dynamics.core.dynamics.base_motion import BaseMotion, MovingBaseTorques
from robot_dynamics.core.identification.payload_regressor import payload_regressor
from robot_dynamics.core.model.model import RobotModel, listed_names
from robot_dynamics.core.streams.live_torques import TorqueSample

REST_SPEED_FOR_SCALE = 0.02
"""[rad/s, m/s] Fastest joint of a robot at rest, for the efforts' scale check."""

MIN_LOADED_TORQUE = 1.0
"""[N·m, N] Gravity torque below which a joint is not loaded enough for the scale check."""

RATE_TOLERANCE = 0.25
"""Velocities more than this (relative) from the positions' rate are said."""

REST_POSES = 4
"""Distinct rest poses the mounting check fits at once."""

DISTINCT_POSE = 0.3
"""[rad, m] Largest joint difference above which two rest poses are distinct."""

REST_SETTLE = 0.1
"""[s] How long into a rest its sample for the rest-pose fits is taken."""

MIN_TILT = math.radians(5.0)
"""[rad] Angle between the gravity the efforts at rest fit and the model's that is said."""

MIN_LOAD = 0.5
"""[kg] Smallest load at the payload link the efforts at rest are said to fit."""

MAX_LOAD_REACH = 0.5
"""[m] Farthest CoM from the payload link of a load that is said."""

MAX_TILT = math.radians(150.0)
"""[rad] Beyond it a fitted gravity is left to the effort-scale check (−1: a sign, or a robot
upside down)."""

FROZEN_LOOK_PERIOD = 0.01
"""[s] Time between the samples the frozen-efforts check looks at."""

FROZEN_SECONDS = 2.0
"""[s] Shortest time over which an effort that keeps one value is taken as not measured
(:class:`FrozenEfforts`)."""

FROZEN_QUANTA = 5.0
"""Steps of an effort (its smallest change seen) by which its joint's gravity torque moves
while the effort keeps one value, for it to be taken as not measured (:class:`FrozenEfforts`)."""

MIN_FROZEN_SPAN = 0.1
"""[N·m, N] Smallest gravity-torque span judged by the effort's step (:class:`FrozenEfforts`)."""

UNIT_FACTOR = 3.0
"""Efforts this many times the gravity torques at rest (or a third of them, or less) are said
to be in another unit; a factor closer to 1 can be a load or a tilt (:class:`RestPoseFindings`)."""

SIGN_CAUSE = (
    'the opposite sign: the driver reports the torque on the motor, not on the link '
    '(effort_model_file: sign: -1 for those joints)'
)
"""Why efforts come out as −1 × the gravity torques at rest, and the setting that fixes it."""


def beyond_limits_words(
    robot: RobotModel, kind: str, values: np.ndarray, joints: list, beyond: Callable
) -> str:
    """The ``joints`` (indices) whose ``kind`` ('positions' or 'velocities') ``values`` are
    beyond their URDF limits (``beyond``: the model's test), in words, with the likely cause:
    degrees when some are far beyond (more than a turn; ten times the velocity limit) and in
    radians they would all be within."""
    limits = robot.limits
    if kind == 'positions':
        shown = [
            f'{values[i]:.3f} (limits {limits.lower[i]:.3f} to {limits.upper[i]:.3f})'
            for i in joints
        ]
        far = np.full(len(values), 2 * np.pi)  # [rad] more than a turn
    else:
        shown = [f'{values[i]:.3f} (limit {limits.velocity[i]:.3f})' for i in joints]
        far = 10 * limits.velocity  # far beyond what a drive overshoots
    listed = listed_names(
        [f'{robot.joint_names[i]} {text}' for i, text in zip(joints, shown)], shown=3
    )
    far_beyond = bool(np.any(np.abs(values[joints]) > far[joints]))
    if far_beyond and not beyond(np.radians(values)):
        cause = 'the driver sends degrees (in radians they are all within)'
    else:
        cause = (
            "a zero or calibration offset, a driver's other convention or units, or another "
            "robot's description"
        )
    return f'{kind} beyond their URDF limits: {listed}: {cause}'


def unmeasured_velocities_words(reported: bool) -> str:
    """Why q̇ comes from the positions: ``reported`` velocities were all exactly 0, else none."""
    if reported:
        return (
            'every velocity in joint_states is exactly 0 (at rest, or not measured: ros2_control '
            'mock hardware)'
        )
    return 'no joint reports a velocity'


def velocity_rate_words(robot: RobotModel, factors: np.ndarray, unreported) -> str:
    """The joints whose reported velocities are ``factors`` × the rate of their positions
    (:class:`~robot_dynamics.core.streams.velocity_rate.VelocityRate`; NaN: not judged) further
    than :data:`RATE_TOLERANCE` from 1, with the likely causes; ``unreported``: indices of
    joints that send no velocity (given 0 by the merger), left out. '' when none."""
    judged = np.isfinite(factors)
    judged[list(unreported)] = False
    joints = np.flatnonzero(judged & (np.abs(factors - 1.0) > RATE_TOLERANCE))
    if not joints.size:
        return ''
    listed = listed_names([f'{robot.joint_names[i]} {factors[i]:.3g} ×' for i in joints], shown=3)
    causes = '; '.join(dict.fromkeys(_rate_cause(float(factors[i])) for i in joints))
    return f"velocities are not the rate of the positions: {listed}: {causes}"


def _rate_cause(factor: float) -> str:
    if factor == 0.0:
        return 'zeros the driver sends without measuring (mock hardware)'
    if abs(factor + 1.0) <= 0.1:
        return "the opposite sign (the driver's velocities and positions follow two conventions)"
    if abs(factor / math.degrees(1.0) - 1.0) <= 0.1:
        return 'degrees per second beside positions in radians'
    return (
        "another unit, the motor side of the gearbox (the gear ratio times the joint's), or "
        'joint-state stamps that are not the sampling instants (joint_state_stamps)'
    )


def effort_scale_words(robot: RobotModel, torques: Optional[TorqueSample]) -> str:
    """When ``torques`` is a sample at rest whose efforts are one same factor, far from 1,
    times the model's gravity torques on every loaded joint (a sign or a unit, not a model
    error, which differs joint by joint), or −1 times them on some loaded joints and 1 times
    them on the others (those joints' signs): that, in words; else ''."""
    if not _at_rest_with_efforts(torques):
        return ''
    gravity = torques.gravity
    loaded = np.abs(gravity) > max(MIN_LOADED_TORQUE, 0.2 * np.max(np.abs(gravity), initial=0.0))
    if not loaded.any():
        return ''
    ratios = torques.efforts[loaded] / gravity[loaded]
    loaded_names = [name for name, on in zip(robot.joint_names, loaded) if on]
    reversed_joints = np.abs(ratios + 1.0) <= 0.1
    as_modelled = np.abs(ratios - 1.0) <= 0.1
    if reversed_joints.any() and as_modelled.any() and np.all(reversed_joints | as_modelled):
        joints = listed_names([n for n, r in zip(loaded_names, reversed_joints) if r], shown=4)
        return (
            f"at rest the efforts of {joints} are -1 × the model's gravity torques and the "
            f"other loaded joints' 1 ×: {SIGN_CAUSE}"
        )
    factor = float(np.median(ratios))
    if abs(factor - 1.0) <= 0.5 or np.any(np.abs(ratios - factor) > 0.1 * abs(factor)):
        return ''
    if abs(factor + 1.0) < 0.25:
        cause = (
            f'{SIGN_CAUSE}, or a robot mounted upside down and taken upright (base_state '
            'mounting, base_orientation [3.142, 0.0, 0.0])'
        )
    elif 1.0 / UNIT_FACTOR < abs(factor) < UNIT_FACTOR:  # a load or a tilt can do as much
        return ''
    else:
        cause = (
            'another unit: motor currents [A] or motor-side torques (effort_model_file converts '
            'them), or a model far from this robot'
        )
    joints = listed_names(loaded_names, shown=4)
    return (
        f"at rest the efforts are {factor:.3g} × the model's gravity torques on every loaded "
        f'joint ({joints}): {cause}'
    )


class FrozenEfforts:
    """Joints whose effort stays bit for bit the same while the torque the model needs there
    changes: a driver that never updates it (a ros2_control effort state interface never
    written, a sensor that stopped). A sample every :data:`FROZEN_LOOK_PERIOD` is looked at (a
    comparison per joint state otherwise); a joint is frozen once its effort has kept one value
    for :data:`FROZEN_SECONDS` or more, until it changes, while in the samples looked at

    * the model's torque (inverse dynamics, or gravity on a sample without it) spanned more than
      :data:`MIN_LOADED_TORQUE`: no sensor holds one value while the torque it measures moves
      that much, nor does a quantum smaller than that; or
    * (``judge_gravity``: a fixed base, upright or mounted, where g(q) depends on the positions
      alone) its gravity torque spanned more than :data:`FROZEN_QUANTA` of the effort's step (the
      smallest change seen on that joint, else the largest of the other joints' smallest changes)
      and :data:`MIN_FROZEN_SPAN`: the sensor resolves far less than that change. The gravity
      torque carries no acceleration noise, which the inverse dynamics does.

    Its effort is not a measurement (the live pipeline takes the model's torque there
    instead)."""

    def __init__(self, unreported: Callable, judge_gravity: bool):
        self._unreported = unreported  # () -> indices of the joints that send no effort
        self._judge_gravity = judge_gravity
        self._last_look = -math.inf  # [s]
        # per joint, since its effort took its value: the value, that stamp [s], and the lowest
        # and highest model torques (rows: inverse dynamics, gravity) [N·m, N]; replaced whole
        # (words() may run on another thread)
        self._since: Optional[tuple] = None
        self._smallest_step = np.zeros(0)  # per joint [N·m, N]; inf until its effort changed
        self.joints = np.zeros(0, dtype=int)
        """Indices of the frozen joints at the last look (the joints that send no effort left
        out: they are not measured anyway)."""

    def note(self, torques: TorqueSample) -> None:
        """Take one sample of the stream (its thread), its efforts as measured; a stamp before
        the last look starts afresh."""
        stamp = torques.stamp
        if stamp < self._last_look:
            self._since = None
        elif stamp - self._last_look < FROZEN_LOOK_PERIOD:
            return
        self._last_look = stamp
        efforts = torques.efforts
        if efforts is None:
            self._since, self.joints = None, np.zeros(0, dtype=int)
            return
        model = torques.gravity if torques.inverse_dynamics is None else torques.inverse_dynamics
        needed = np.stack((model, torques.gravity))
        since = self._since
        if since is None or len(since[0]) != len(efforts):
            self._since = (efforts, np.full(len(efforts), stamp), needed, needed)
            if len(self._smallest_step) != len(efforts):
                self._smallest_step = np.full(len(efforts), math.inf)
            self.joints = np.zeros(0, dtype=int)
            return
        value, start, lowest, highest = since
        changed = efforts != value
        steps = np.where(changed, np.abs(efforts - value), math.inf)
        self._smallest_step = np.fmin(self._smallest_step, steps)  # a NaN step: not a step
        self._since = since = (
            np.where(changed, efforts, value),
            np.where(changed, stamp, start),
            np.where(changed, needed, np.minimum(lowest, needed)),
            np.where(changed, needed, np.maximum(highest, needed)),
        )
        spans = since[3] - since[2]
        moved = (spans[0] > MIN_LOADED_TORQUE) | (spans[1] > self._resolved_gravity_span())
        frozen = (stamp - since[1] >= FROZEN_SECONDS) & moved
        frozen[self._unreported()] = False
        self.joints = np.flatnonzero(frozen)

    def _resolved_gravity_span(self) -> np.ndarray:
        """Per joint, the gravity-torque span [N·m, N] its effort cannot miss (class docstring);
        inf where it is not judged."""
        steps = self._smallest_step
        seen = np.isfinite(steps)
        if not self._judge_gravity or not seen.any():
            return np.full(len(steps), math.inf)
        steps = np.where(seen, steps, steps[seen].max())
        return np.maximum(FROZEN_QUANTA * steps, MIN_FROZEN_SPAN)

    def words(self, robot: RobotModel) -> str:
        """The frozen joints (class docstring) in words, or ''."""
        since, joints = self._since, self.joints
        if since is None or not joints.size:
            return ''
        value, start, lowest, highest = since
        listed = listed_names(
            [
                f'{robot.joint_names[i]} ({value[i]:.3g} for {self._last_look - start[i]:.0f} s '
                f'while the model needed {lowest[0, i]:.3g} to {highest[0, i]:.3g})'
                for i in joints
            ],
            shown=3,
        )
        return (
            f'efforts that do not change while the torques they measure do: {listed}: the driver '
            'does not update them (an effort state interface never written, or a sensor that '
            'stopped); taken as not measured until they change: the model torque is used there '
            '(no external torque)'
        )


class RestPoseFindings:
    """What a fixed-base robot's efforts at rest say that the model does not: that the robot is
    mounted tilted while the node takes it upright (``base_state: none``) or otherwise than its
    ``base_orientation`` says, or that it carries a load the model lacks.

    Both are linear in a few unknowns at every pose. Gravity torques are linear in the gravity
    vector g (base axes): τ_g = A(q) g, the columns of A the gravity torques for unit gravity
    along the base's x, y and z. A load at the payload link adds Y(q) (m, m c), the static
    columns of the payload regressor (mass m [kg], CoM c [m] in the link's frame). The efforts
    at the last :data:`REST_POSES` distinct rest poses (joints :data:`DISTINCT_POSE` apart; a
    sample :data:`REST_SETTLE` into each rest: :meth:`note` sees every sample) fit them by least
    squares. A tilt or a load is the same at every pose while a link's error or an offset is
    not, so a fit is said only from two poses on (also while the robot moves on), when its
    unknowns are well conditioned and it leaves under
    30 % of the mismatch the model leaves (itself above 1 N·m). A tilt also needs the fitted |g|
    within 10 % of the model's (a tilt, not a scale) and an angle between :data:`MIN_TILT` and
    :data:`MAX_TILT`; the suggested ``base_orientation`` is roll and pitch (yaw about gravity
    changes no torque: 0). A load needs :data:`MIN_LOAD` or more (less than the model only down
    to the payload in use, more only up to the robot's own mass), a CoM within
    :data:`MAX_LOAD_REACH` of the link, and ``base_state: none`` (the payload regressor takes
    the base upright); the tilt is tried first."""

    def __init__(self, robot: RobotModel, payload_link: str):
        self._robot, self._payload_link = robot, payload_link
        # built at the first check, each with its own pinocchio Data: a status may be asked for
        # on another thread than the stream's, which uses robot.data
        self._twin: Optional[MovingBaseTorques] = None
        self._kinematics: Optional[RobotModel] = None
        self._poses: list = []  # (positions, efforts, A, Y) per distinct rest pose, oldest first
        self._rests: list = []  # a sample of each rest since the last check
        # the current rest's first stamp [s] and positions, and whether its sample is taken
        self._rest_start: Optional[tuple] = None

    def note(self, torques: TorqueSample) -> None:
        """Take one sample of the stream (its thread): of each rest, the sample
        :data:`REST_SETTLE` after it began is kept for the next :meth:`words` (settled, and
        before the next motion's first acceleration, while the velocities are still small)."""
        if not _at_rest_with_efforts(torques):
            self._rest_start = None
            return
        start = self._rest_start
        if start is None or not _same_pose(start[1], torques.positions):
            # a new rest; also a pose jump at rest: samples too sparse to show the motion between
            start = self._rest_start = (torques.stamp, torques.positions, False)
        stamp, positions, taken = start
        if taken or torques.stamp - stamp < REST_SETTLE:
            return
        self._rest_start = (stamp, positions, True)
        rests = self._rests
        if rests and _same_pose(rests[-1].positions, torques.positions):
            rests[-1] = torques
        else:
            rests.append(torques)
            del rests[:-REST_POSES]

    def words(self, latest: Optional[TorqueSample], gravity_in_base, mounted: bool) -> str:
        """The finding of the rest poses kept and of the ``latest`` sample (when at rest) against
        the model's ``gravity_in_base`` [m/s²] (``mounted``: from a ``base_orientation``), or
        ''."""
        if self._robot.floating_base:
            return ''
        rests, self._rests = self._rests, []
        if _at_rest_with_efforts(latest):
            rests.append(latest)
        for torques in rests:
            self._keep_pose(torques)
        if len(self._poses) < 2:
            return ''
        efforts = np.concatenate([pose[1] for pose in self._poses])
        unit_gravity = np.vstack([pose[2] for pose in self._poses])
        model = np.asarray(gravity_in_base, dtype=float)
        mismatch = efforts - unit_gravity @ model
        if np.linalg.norm(mismatch) < MIN_LOADED_TORQUE:
            return ''
        tilt = self._tilt_words(efforts, unit_gravity, model, mismatch, mounted)
        if tilt or mounted:
            return tilt
        return self._load_words(mismatch)

    def _tilt_words(self, efforts, unit_gravity, model, mismatch, mounted: bool) -> str:
        fitted, left = _fit(unit_gravity, efforts, 0.05)
        if fitted is None or left > 0.3 * np.linalg.norm(mismatch):
            return ''
        size, model_size = np.linalg.norm(fitted), np.linalg.norm(model)
        angle = math.acos(np.clip(fitted @ model / (size * model_size), -1.0, 1.0))
        if not MIN_TILT < angle < MAX_TILT or abs(size / model_size - 1.0) > 0.1:
            return ''
        roll = round(math.atan2(-fitted[1], -fitted[2]), 3) + 0.0  # + 0.0: no '-0.000'
        pitch = round(math.asin(fitted[0] / size), 3) + 0.0
        setting = (
            'the mounting is not the one base_orientation says'
            if mounted
            else 'the robot is mounted tilted and taken upright'
        )
        return (
            f'at rest at {len(self._poses)} poses the efforts fit gravity '
            f"{math.degrees(angle):.1f}° from the model's ({_vector(fitted)} m/s² in base "
            f'axes, the model {_vector(model)}): {setting}; base_state mounting with '
            f'base_orientation [{roll:.3f}, {pitch:.3f}, 0.0] fits them'
        )

    def _load_words(self, mismatch: np.ndarray) -> str:
        load_rows = np.vstack([pose[3] for pose in self._poses])
        fitted, left = _fit(load_rows, mismatch, 0.02)
        if fitted is None or left > 0.3 * np.linalg.norm(mismatch):
            return ''
        mass = float(fitted[0])
        carried = self._robot.payload[1].mass if self._robot.payload is not None else 0.0
        # no more than the robot weighs, and no less than nothing at all
        plausible = -1.2 * carried <= mass <= self._robot.total_mass()
        if abs(mass) < MIN_LOAD or not plausible:
            return ''
        centre = fitted[1:] / mass
        if np.linalg.norm(centre) > MAX_LOAD_REACH:
            return ''
        which = (
            'a load the model lacks: ~/set_payload, active_tool or ~/identify_payload puts it in'
            if mass > 0
            else 'less than the model: a payload in use that the robot does not carry'
        )
        return (
            f'at rest at {len(self._poses)} poses the efforts fit {mass:+.2f} kg at '
            f'{self._payload_link} (CoM {_vector(centre)} m in its frame): {which}'
        )

    def _keep_pose(self, torques: TorqueSample) -> None:
        """Keep the sample's rest pose, replacing a kept one within :data:`DISTINCT_POSE` (the
        model's columns reused while the robot rests where it did at the last check)."""
        positions = torques.positions
        last = self._poses[-1] if self._poses else None
        if last is not None and np.array_equal(last[0], positions):
            self._poses[-1] = (positions, torques.efforts, last[2], last[3])
            return
        self._poses = [pose for pose in self._poses if not _same_pose(pose[0], positions)][
            -(REST_POSES - 1) :
        ]
        if self._twin is None:
            robot = self._robot
            self._twin = MovingBaseTorques(robot)
            self._kinematics = RobotModel(robot.description, gravity=robot.model.gravity.linear)
        unit_gravity = np.column_stack(
            [self._twin.gravity(positions, BaseMotion.at_rest(axis)) for axis in np.eye(3)]
        )
        zeros = np.zeros((1, len(positions)))
        load_rows = payload_regressor(  # the link's columns: kinematics only
            self._kinematics, self._payload_link, positions[None, :], zeros, zeros
        )[:, :4]
        self._poses.append((positions, torques.efforts, unit_gravity, load_rows))


def _fit(rows: np.ndarray, values: np.ndarray, min_singular_ratio: float) -> tuple:
    """(least-squares solution, norm of what it leaves) of rows · x ≈ values; (None, inf) when
    the smallest singular value of ``rows`` is below ``min_singular_ratio`` of the largest."""
    singular = np.linalg.svd(rows, compute_uv=False)
    if singular[-1] < min_singular_ratio * singular[0]:
        return None, math.inf
    solution = np.linalg.lstsq(rows, values, rcond=None)[0]
    return solution, float(np.linalg.norm(values - rows @ solution))


def _same_pose(positions: np.ndarray, others: np.ndarray) -> bool:
    """Whether no joint is more than :data:`DISTINCT_POSE` apart."""
    return _largest_magnitude(positions - others) <= DISTINCT_POSE


def _at_rest_with_efforts(torques: Optional[TorqueSample]) -> bool:
    return (
        torques is not None
        and torques.efforts is not None
        and torques.velocities is not None
        and _largest_magnitude(torques.velocities) <= REST_SPEED_FOR_SCALE
    )


def _largest_magnitude(values: np.ndarray) -> float:
    """max |x| (0 for none), in plain floats: a few joints' worth, on every joint state."""
    return max(map(abs, values.tolist()), default=0.0)


def _vector(values: np.ndarray) -> str:
    return '[' + ', '.join(f'{round(value, 2) + 0.0:.2f}' for value in values) + ']'  # no -0.00
