"""Per-joint friction torques from the friction YAML written by ``robot_dynamics identify``.

τ_friction = viscous·q̇ + coulomb·sgn(q̇) + offset, per joint [N·m for revolute, N for
prismatic joints], q̇ in rad/s (m/s): the model
:func:`robot_dynamics.core.identification.identified_model.friction_yaml`
writes. The same file's ``rotor_inertia`` [kg·m²] per joint is read into
:attr:`FrictionModel.rotor_inertia`: it is not friction, the live pipeline puts it into the
model's mass matrix (:meth:`~robot_dynamics.core.model.model.RobotModel.set_rotor_inertia`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import yaml

from robot_dynamics.core.errors import RobotDynamicsError

FRICTION_KEYS = ('viscous', 'coulomb', 'offset')
FILE_KEYS = FRICTION_KEYS + ('rotor_inertia',)
"""Per-joint fields of the file; ``rotor_inertia`` must be >= 0."""
MAX_FRICTION_FILE_BYTES = 1_000_000


class FrictionFileError(RobotDynamicsError):
    """A friction file cannot be read or does not fit the model (unreadable, malformed, wrong
    joints)."""


@dataclass(frozen=True)
class FrictionModel:
    """Per-joint viscous [N·m·s/rad], Coulomb [N·m] and constant offset [N·m] coefficients, and
    the reflected rotor inertia [kg·m²] of the same file, in ``joint_names`` order; joints absent
    from the file have zero friction and rotor inertia."""

    joint_names: tuple
    viscous: np.ndarray
    coulomb: np.ndarray
    offset: np.ndarray
    rotor_inertia: Optional[np.ndarray] = None

    def __post_init__(self):
        if self.rotor_inertia is None:
            object.__setattr__(self, 'rotor_inertia', np.zeros(len(self.joint_names)))

    @classmethod
    def none(cls, joint_names: Sequence[str]) -> 'FrictionModel':
        zeros = np.zeros(len(joint_names))
        return cls(tuple(joint_names), zeros, zeros.copy(), zeros.copy())

    def torques(self, velocities: np.ndarray) -> np.ndarray:
        """Friction torques [N·m] at joint velocities ``velocities`` [rad/s]."""
        return self.viscous * velocities + self.coulomb * np.sign(velocities) + self.offset

    def __repr__(self) -> str:
        largest = float(np.max(np.abs(self.coulomb), initial=0.0))
        return f'FrictionModel({len(self.joint_names)} joints, max |coulomb| {largest:.3g} N·m)'


def friction_from_yaml(text: str, joint_names: Sequence[str]) -> FrictionModel:
    """Parse friction YAML text (``joints: {name: {viscous, coulomb, offset}}``) for
    ``joint_names``."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise FrictionFileError(f'friction file is not valid YAML: {error}') from None
    joints = document.get('joints') if isinstance(document, dict) else None
    if not isinstance(joints, dict):
        raise FrictionFileError(
            "friction file has no 'joints' mapping (expected the output of robot_dynamics identify)"
        )
    unknown = sorted(str(name) for name in joints if name not in joint_names)
    if unknown:
        raise FrictionFileError(f'friction file names joints that are not in the model: {unknown}')
    coefficients = {key: np.zeros(len(joint_names)) for key in FILE_KEYS}
    for index, name in enumerate(joint_names):
        entry = joints.get(name) or {}
        if not isinstance(entry, dict):
            raise FrictionFileError(f'friction entry of joint {name} is not a mapping')
        for key in FILE_KEYS:
            coefficients[key][index] = _coefficient(entry.get(key, 0.0), name, key)
    return FrictionModel(
        tuple(joint_names),
        coefficients['viscous'],
        coefficients['coulomb'],
        coefficients['offset'],
        coefficients['rotor_inertia'],
    )


def _coefficient(value, joint: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise FrictionFileError(f'{key} of joint {joint} is not a finite number: {value!r}')
    if key == 'rotor_inertia' and value < 0.0:
        raise FrictionFileError(f'rotor_inertia of joint {joint} is negative: {value!r} kg·m²')
    return float(value)


def load_friction_file(path: str, joint_names: Sequence[str]) -> FrictionModel:
    """Read a friction YAML file for ``joint_names`` (:class:`FrictionFileError` when unusable)."""
    try:
        with open(path, 'rb') as stream:
            raw = stream.read(MAX_FRICTION_FILE_BYTES + 1)
    except OSError as error:
        raise FrictionFileError(
            f'friction file {path} cannot be read: {error.strerror or error}'
        ) from None
    if len(raw) > MAX_FRICTION_FILE_BYTES:
        raise FrictionFileError(
            f'friction file {path} is larger than {MAX_FRICTION_FILE_BYTES} bytes'
        )
    try:
        text = raw.decode('utf-8')
    except UnicodeDecodeError:
        raise FrictionFileError(f'friction file {path} is not UTF-8 text') from None
    try:
        return friction_from_yaml(text, joint_names)
    except FrictionFileError as error:
        raise FrictionFileError(f'friction file {path}: {error}') from None
