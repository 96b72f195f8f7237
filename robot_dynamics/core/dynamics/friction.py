"""Per-joint friction torques from the friction YAML written by ``robot_dynamics identify`` or
``robot_dynamics identify-friction``.

Per joint, with q̇ in rad/s (m/s) and torques in N·m (N for prismatic joints):

    τ_f(q̇) = viscous·q̇ + (coulomb + (stribeck_static − coulomb)·exp(−(q̇/stribeck_velocity)²))
             ·sgn_σ(q̇) + offset

where sgn_σ(q̇) = tanh(q̇/sign_velocity), the exact sign when ``sign_velocity`` is 0 (the
default). Without ``stribeck_static`` (or with it equal to ``coulomb``) this is viscous + Coulomb
+ offset; with it, the breakaway level ``stribeck_static`` decays to ``coulomb`` over
``stribeck_velocity`` (the Stribeck effect; Armstrong-Hélouvry, Dupont & Canudas de Wit, 1994).
The same file's ``rotor_inertia`` [kg·m²] per joint is read into
:attr:`FrictionModel.rotor_inertia`: it is not friction, the live pipeline puts it into the
model's mass matrix (:meth:`~robot_dynamics.core.model.model.RobotModel.set_rotor_inertia`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np
import yaml

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.text_files import load_yaml, read_small_text

FRICTION_KEYS = ('viscous', 'coulomb', 'offset')
STRIBECK_VELOCITY = 0.05
"""Default characteristic velocity of the Stribeck decay [rad/s]."""
FILE_KEYS = FRICTION_KEYS + (
    'stribeck_static',
    'stribeck_velocity',
    'sign_velocity',
    'rotor_inertia',
)
"""Per-joint fields of the file; all but ``offset`` must be >= 0 and ``stribeck_velocity`` > 0."""
MAX_FRICTION_FILE_BYTES = 1_000_000


class FrictionFileError(RobotDynamicsError):
    """A friction file cannot be read or does not fit the model (unreadable, malformed, wrong
    joints)."""


def smooth_sign(velocities: np.ndarray, sign_velocity) -> np.ndarray:
    """tanh(q̇/σ) per joint, the exact sign where σ is 0."""
    velocities = np.asarray(velocities, dtype=float)
    scale = np.broadcast_to(np.asarray(sign_velocity, dtype=float), velocities.shape)
    exact = scale <= 0.0
    return np.where(exact, np.sign(velocities), np.tanh(velocities / np.where(exact, 1.0, scale)))


def stribeck_shape(velocities: np.ndarray, stribeck_velocity, sign_velocity) -> np.ndarray:
    """exp(−(q̇/v_s)²)·sgn_σ(q̇): the torque shape of a unit excess breakaway level."""
    velocities = np.asarray(velocities, dtype=float)
    return np.exp(-np.square(velocities / stribeck_velocity)) * smooth_sign(
        velocities, sign_velocity
    )


def _zeros(model) -> np.ndarray:
    return np.zeros(len(model.joint_names))


@dataclass(frozen=True)
class FrictionModel:
    """Per-joint coefficients in ``joint_names`` order (module docstring): ``viscous``
    [N·m·s/rad], ``coulomb`` [N·m], ``offset`` [N·m], ``stribeck_static`` [N·m; None: equal to
    ``coulomb``], ``stribeck_velocity`` [rad/s], ``sign_velocity`` [rad/s, 0: exact sign], and
    the reflected ``rotor_inertia`` [kg·m²] of the same file; joints absent from the file have
    none of them."""

    joint_names: tuple
    viscous: np.ndarray
    coulomb: np.ndarray
    offset: np.ndarray
    rotor_inertia: Optional[np.ndarray] = None
    stribeck_static: Optional[np.ndarray] = None
    stribeck_velocity: Optional[np.ndarray] = None
    sign_velocity: Optional[np.ndarray] = field(default=None)
    effort_delay: Optional[float] = None
    """[s] The effort delay the file's model was identified with (``robot_dynamics identify
    --effort-delay``; dynamics_node's ``effort_delay``); None when the file does not say."""

    def __post_init__(self):
        defaults = {
            'rotor_inertia': _zeros(self),
            'stribeck_static': np.array(self.coulomb, dtype=float),
            'stribeck_velocity': np.full(len(self.joint_names), STRIBECK_VELOCITY),
            'sign_velocity': _zeros(self),
        }
        for name, value in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)
        # per-sample constants of :meth:`torques` (called at the stream's rate)
        smooth = bool(np.all(np.asarray(self.sign_velocity) > 0.0))
        object.__setattr__(
            self, '_inverse_sign_velocity', 1.0 / np.asarray(self.sign_velocity) if smooth else None
        )
        object.__setattr__(self, '_excess', self.stribeck_static - self.coulomb)
        object.__setattr__(self, '_inverse_stribeck', 1.0 / np.asarray(self.stribeck_velocity))

    @classmethod
    def none(cls, joint_names: Sequence[str]) -> 'FrictionModel':
        zeros = np.zeros(len(joint_names))
        return cls(tuple(joint_names), zeros, zeros.copy(), zeros.copy())

    def torques(self, velocities: np.ndarray) -> np.ndarray:
        """Friction torques [N·m] at joint velocities ``velocities`` [rad/s]."""
        inverse = self._inverse_sign_velocity
        if inverse is None:
            sign = smooth_sign(velocities, self.sign_velocity)
        else:
            sign = np.tanh(velocities * inverse)
        scaled = velocities * self._inverse_stribeck
        decay = np.exp(-scaled * scaled)
        return (
            self.viscous * velocities + (self.coulomb + self._excess * decay) * sign + self.offset
        )

    def coefficients(self) -> dict:
        """{joint: {viscous, coulomb, offset, stribeck_static, stribeck_velocity, sign_velocity,
        rotor_inertia}} (floats, the units above) for the joints with any friction or rotor
        inertia: the file's content, for a report."""
        fields = ('viscous', 'coulomb', 'offset', 'stribeck_static')
        fields += ('stribeck_velocity', 'sign_velocity', 'rotor_inertia')
        table = {name: [float(value) for value in getattr(self, name)] for name in fields}
        return {
            joint: {name: table[name][j] for name in fields}
            for j, joint in enumerate(self.joint_names)
            if any(table[name][j] for name in fields if name not in ('stribeck_velocity',))
        }

    def __repr__(self) -> str:
        largest = float(np.max(np.abs(self.coulomb), initial=0.0))
        stribeck = bool(np.any(self.stribeck_static != self.coulomb))
        return (
            f'FrictionModel({len(self.joint_names)} joints, max |coulomb| {largest:.3g} N·m'
            f'{", Stribeck" if stribeck else ""})'
        )


def friction_from_yaml(text: str, joint_names: Sequence[str]) -> FrictionModel:
    """Parse friction YAML text (``joints: {name: {viscous, coulomb, offset, ...}}``) for
    ``joint_names``."""
    try:
        document = load_yaml(text)
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
    values = {key: [] for key in FILE_KEYS}
    for name in joint_names:
        entry = joints.get(name)
        if entry is None:  # not in the file, or `name:` with nothing after it
            entry = {}
        if not isinstance(entry, dict):
            raise FrictionFileError(
                f'friction entry of joint {name} is not a mapping of coefficients: {entry!r}'
            )
        unknown_fields = sorted(set(entry) - set(FILE_KEYS))
        if unknown_fields:
            raise FrictionFileError(f'joint {name} has unknown fields {unknown_fields}')
        coulomb = _coefficient(entry.get('coulomb', 0.0), 'coulomb', f'of joint {name}')
        fallback = {
            'stribeck_static': coulomb,
            'stribeck_velocity': STRIBECK_VELOCITY,
        }
        for key in FILE_KEYS:
            values[key].append(
                _coefficient(entry.get(key, fallback.get(key, 0.0)), key, f'of joint {name}')
            )
    arrays = {key: np.array(items) for key, items in values.items()}
    delay = document.get('effort_delay')
    if delay is not None:
        delay = _coefficient(delay, 'effort_delay', 'of the file')
    return FrictionModel(tuple(joint_names), **arrays, effort_delay=delay)


def _coefficient(value, key: str, where: str) -> float:
    """``value`` of ``key`` checked; ``where`` ('of joint <name>') for the error."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise FrictionFileError(f'{key} {where} is not a finite number: {value!r}')
    if key != 'offset' and value < 0.0:
        raise FrictionFileError(f'{key} {where} is negative: {value!r}')
    if key == 'stribeck_velocity' and value <= 0.0:
        raise FrictionFileError(f'stribeck_velocity {where} must be > 0 rad/s')
    return float(value)


def load_friction_file(path: str, joint_names: Sequence[str]) -> FrictionModel:
    """Read a friction YAML file for ``joint_names`` (:class:`FrictionFileError` when unusable)."""
    text = read_small_text(path, MAX_FRICTION_FILE_BYTES, 'friction file', FrictionFileError)
    try:
        return friction_from_yaml(text, joint_names)
    except FrictionFileError as error:
        raise FrictionFileError(f'friction file {path}: {error}') from None
