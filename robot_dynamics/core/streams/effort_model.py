"""What a driver's ``effort`` means, per joint, and its conversion to joint torque.

Many drivers publish ``sensor_msgs/JointState.effort`` as the motor current [A], or as the
motor-side torque before the gearbox, instead of the link-side joint torque that dynamics
and identification need. Per joint (Lynch & Park, *Modern Robotics*, 2017, §8.9.1):

* ``torque``: the effort is the joint torque τ [N·m] (N for a prismatic joint); unchanged.
* ``current``: the effort is the motor current i [A]; motor torque τ_m = k_t i with the
  torque constant k_t [N·m/A], joint torque τ = η N k_t i.
* ``motor_torque``: the effort is the motor torque τ_m [N·m] before the gearbox; τ = η N τ_m.

N is the gear ratio (motor turns per joint turn, > 0; rad/m for a prismatic joint, so that τ
comes out in N), η the gearbox efficiency in (0, 1]. ``sign: -1`` (any kind; default 1) is for
a driver whose effort is positive the other way round from the URDF joint's axis (the torque on
the motor rather than on the link, or a motor mounted the other way): τ = −η N k_t i. The
efficiency convention, per joint:

* ``constant`` (the default, as in Lynch & Park): τ = η N k_t i whatever the direction of power
flow;
* ``power_flow``: losses always oppose the motion, so τ = η N k_t i when the motor drives the
  load (N k_t i · q̇ ≥ 0, also at q̇ = 0) and τ = N k_t i / η when the load back-drives the
  motor (N k_t i · q̇ < 0).

A YAML file describes it, keyed by joint name; joints it does not name publish torques::

    joint1: {effort: current, torque_constant: 0.11, gear_ratio: 100, efficiency: 0.9}
    joint2: {effort: motor_torque, gear_ratio: 50, efficiency: 0.85, efficiency_mode: power_flow}
    joint3: {effort: torque}
    joint4: {effort: torque, sign: -1}
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence

import numpy as np

from robot_dynamics.core.errors import RobotDynamicsError

EFFORT_KINDS = ('torque', 'current', 'motor_torque')
EFFICIENCY_MODES = ('constant', 'power_flow')
_KEYS = ('effort', 'torque_constant', 'gear_ratio', 'efficiency', 'efficiency_mode', 'sign')
_REQUIRED = {
    'torque': (),
    'current': ('torque_constant', 'gear_ratio'),
    'motor_torque': ('gear_ratio',),
}
_NOT_APPLICABLE = {
    'torque': ('torque_constant', 'gear_ratio', 'efficiency', 'efficiency_mode'),
    'current': (),
    'motor_torque': ('torque_constant',),
}


MAX_FILE_BYTES = 1_000_000
"""Largest effort model file read [bytes] (one joint's entry takes about a hundred)."""


class EffortModelError(RobotDynamicsError):
    """An effort model cannot be used: unreadable file, unknown joint, bad kind or constant."""


@dataclass(frozen=True)
class JointEffort:
    """What one joint's ``effort`` means and the constants that turn it into joint torque.

    ``kind``: one of :data:`EFFORT_KINDS`; ``torque_constant`` k_t [N·m/A] (``current`` only);
    ``gear_ratio`` N (motor per joint motion, > 0); ``efficiency`` η in (0, 1];
    ``efficiency_mode``: one of :data:`EFFICIENCY_MODES` (see the module docstring); ``sign``
    1 or −1: −1 when the effort is positive against the URDF joint's axis.
    """

    kind: str = 'torque'
    torque_constant: float = 1.0
    gear_ratio: float = 1.0
    efficiency: float = 1.0
    efficiency_mode: str = 'constant'
    sign: int = 1

    def __post_init__(self):
        if self.kind not in EFFORT_KINDS:
            raise EffortModelError(f'effort must be one of {EFFORT_KINDS}, got {self.kind!r}')
        if self.efficiency_mode not in EFFICIENCY_MODES:
            raise EffortModelError(
                f'efficiency_mode must be one of {EFFICIENCY_MODES}, got {self.efficiency_mode!r}'
            )
        for name in ('torque_constant', 'gear_ratio', 'efficiency'):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value <= 0.0
            ):
                raise EffortModelError(f'{name} must be a positive finite number, got {value!r}')
            object.__setattr__(self, name, float(value))
        if self.efficiency > 1.0:
            raise EffortModelError(f'efficiency must be in (0, 1], got {self.efficiency}')
        if isinstance(self.sign, bool) or self.sign not in (1, -1):
            raise EffortModelError(f'sign must be 1 or -1, got {self.sign!r}')
        object.__setattr__(self, 'sign', int(self.sign))

    @property
    def scale(self) -> float:
        """Joint torque per unit effort before losses: ±N k_t, ±N or ±1 [N·m per A, per N·m,
        per N·m]."""
        if self.kind == 'current':
            return self.sign * self.gear_ratio * self.torque_constant
        return self.sign * (self.gear_ratio if self.kind == 'motor_torque' else 1.0)


@dataclass(frozen=True)
class EffortModel:
    """Per-joint effort meanings, in ``joint_names`` order (:class:`JointEffort` each)."""

    joint_names: tuple
    joints: tuple

    def __post_init__(self):
        object.__setattr__(self, 'joint_names', tuple(self.joint_names))
        object.__setattr__(self, 'joints', tuple(self.joints))
        if len(self.joint_names) != len(self.joints):
            raise EffortModelError(
                f'{len(self.joint_names)} joint names for {len(self.joints)} joint efforts'
            )
        if len(set(self.joint_names)) != len(self.joint_names):
            raise EffortModelError(f'joint names repeat: {list(self.joint_names)}')
        object.__setattr__(self, '_scale', np.array([j.scale for j in self.joints], dtype=float))
        object.__setattr__(
            self,
            '_efficiency',
            np.array(
                [1.0 if j.kind == 'torque' else j.efficiency for j in self.joints], dtype=float
            ),
        )
        object.__setattr__(
            self,
            '_power_flow',
            np.array(
                [j.kind != 'torque' and j.efficiency_mode == 'power_flow' for j in self.joints],
                dtype=bool,
            ),
        )

    @classmethod
    def identity(cls, joint_names: Sequence[str]) -> 'EffortModel':
        """Every joint publishes its joint torque."""
        return cls(tuple(joint_names), tuple(JointEffort() for _ in joint_names))

    @classmethod
    def from_dict(cls, entries: Mapping, source: str = 'effort model') -> 'EffortModel':
        """From ``{joint: {effort: ..., torque_constant: ..., ...}}`` (the YAML layout above)."""
        if not isinstance(entries, Mapping):
            raise EffortModelError(
                f'{source}: expected a mapping of joint name to its effort meaning, got '
                f'{type(entries).__name__}'
            )
        names, joints = [], []
        for name, entry in entries.items():
            names.append(str(name))
            joints.append(_joint_effort(entry, f'{source}: joint "{name}"'))
        return cls(tuple(names), tuple(joints))

    @classmethod
    def from_yaml(cls, path) -> 'EffortModel':
        """Read the YAML file at ``path`` (layout in the module docstring); an empty file is
        an empty model (every joint publishes torque)."""
        import yaml

        from robot_dynamics.core.text_files import load_yaml, read_small_text

        path = Path(path)
        text = read_small_text(path, MAX_FILE_BYTES, 'effort model', EffortModelError)
        try:
            entries = load_yaml(text)
        except yaml.YAMLError as error:
            raise EffortModelError(f'effort model {path} is not valid YAML: {error}') from None
        return cls.from_dict({} if entries is None else entries, f'effort model {path}')

    @property
    def is_identity(self) -> bool:
        """True when every joint's effort already is its joint torque."""
        return all(j.kind == 'torque' and j.sign == 1 for j in self.joints)

    def for_joints(self, joint_names: Sequence[str]) -> 'EffortModel':
        """The same model in ``joint_names`` order; joints it does not name publish torque.

        Raises :class:`EffortModelError` when it names a joint not in ``joint_names``.
        """
        wanted = tuple(joint_names)
        unknown = [name for name in self.joint_names if name not in wanted]
        if unknown:
            raise EffortModelError(
                f'effort model names joints {unknown} that are not among the joints {list(wanted)}'
            )
        given = dict(zip(self.joint_names, self.joints))
        return EffortModel(wanted, tuple(given.get(name, JointEffort()) for name in wanted))

    def joint_torques(self, efforts, velocities) -> np.ndarray:
        """Joint torques [N·m or N] from measured ``efforts`` (A, N·m or N·m per joint kind).

        ``efforts`` and ``velocities`` [rad/s or m/s]: (n,) or (samples, n) in ``joint_names``
        order; velocities only matter for ``power_flow`` joints (a NaN velocity counts as the
        motor driving).
        """
        driving_torque = self._scale * np.asarray(efforts, dtype=float)
        efficiency = self._efficiency
        if not self._power_flow.any():
            return efficiency * driving_torque
        back_driven = self._power_flow & (
            driving_torque * np.asarray(velocities, dtype=float) < 0.0
        )
        return np.where(back_driven, driving_torque / efficiency, driving_torque * efficiency)

    def efforts(self, torques, velocities) -> np.ndarray:
        """The inverse of :meth:`joint_torques`: the efforts a driver publishes for joint
        ``torques`` [N·m or N] at ``velocities`` [rad/s or m/s] (same shapes)."""
        torques = np.asarray(torques, dtype=float)
        efficiency = self._efficiency
        if self._power_flow.any():
            # η > 0, so τ·q̇ has the sign of ±N k_t i·q̇: the direction of power flow is the same.
            back_driven = self._power_flow & (torques * np.asarray(velocities, dtype=float) < 0.0)
            efficiency = np.where(back_driven, 1.0 / efficiency, efficiency)
        return torques / (efficiency * self._scale)

    def converted(self, recording):
        """``recording`` (a :class:`~robot_dynamics.core.identification.recording.Recording`) with
        its efforts
        replaced by joint torques; joints are matched by name (see :meth:`for_joints`)."""
        model = self.for_joints(recording.joint_names)
        if model.is_identity:
            return recording
        torques = model.joint_torques(recording.efforts, recording.velocities)
        return dataclasses.replace(recording, efforts=torques)

    def __repr__(self) -> str:
        described = ', '.join(
            f'{name}: {_describe(joint)}' for name, joint in zip(self.joint_names, self.joints)
        )
        return f'EffortModel({described})'


def _joint_effort(entry, where: str) -> JointEffort:
    """One joint's entry of the YAML file, checked; errors name the joint and the key."""
    if isinstance(entry, str):
        entry = {'effort': entry}
    if not isinstance(entry, Mapping):
        raise EffortModelError(
            f'{where}: expected a mapping with keys {list(_KEYS)}, got {entry!r}'
        )
    unknown = [key for key in entry if key not in _KEYS]
    if unknown:
        raise EffortModelError(f'{where}: unknown keys {unknown} (known: {list(_KEYS)})')
    kind = entry.get('effort')
    if kind not in EFFORT_KINDS:
        raise EffortModelError(f'{where}: effort must be one of {EFFORT_KINDS}, got {kind!r}')
    missing = [key for key in _REQUIRED[kind] if key not in entry]
    if missing:
        raise EffortModelError(f'{where}: effort "{kind}" needs {missing}')
    misplaced = [key for key in _NOT_APPLICABLE[kind] if key in entry]
    if misplaced:
        raise EffortModelError(f'{where}: {misplaced} do not apply to effort "{kind}"')
    try:
        return JointEffort(kind=kind, **{key: entry[key] for key in _KEYS[1:] if key in entry})
    except EffortModelError as error:
        raise EffortModelError(f'{where}: {error}') from None


def _describe(joint: JointEffort) -> str:
    sign = ', sign -1' if joint.sign == -1 else ''
    if joint.kind == 'torque':
        return f'torque ({sign[2:]})' if sign else 'torque'
    constant = f'k_t={joint.torque_constant:g} N·m/A, ' if joint.kind == 'current' else ''
    return f'{joint.kind} ({constant}N={joint.gear_ratio:g}, η={joint.efficiency:g}{sign}' + (
        ', power_flow)' if joint.efficiency_mode == 'power_flow' else ')'
    )


def load_effort_model(path: Optional[str]) -> Optional[EffortModel]:
    """The model in the YAML file ``path``, or None for an empty / None path (efforts are
    torques)."""
    return EffortModel.from_yaml(path) if path else None


def effort_model_problem(path: Optional[str]) -> str:
    """'' when ``path`` is empty or a usable effort model file, else why it is not."""
    try:
        load_effort_model(path)
    except EffortModelError as error:
        return str(error)
    return ''
