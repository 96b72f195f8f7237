"""Robot profiles: how the simulated (true) robot differs from the URDF its controller and the
nodes load, and how its sensors report.

A profile (YAML, see ``config/robot_profiles/``) states, for every link and joint or per name:

* link inertial perturbations, drawn uniformly in ± the given half-widths: mass (relative),
  CoM (per axis, m) and rotational inertia (relative). They stay physically consistent by
  construction: the second moments of the mass distribution about the CoM, Σ = ½ tr(I)·1 − I
  (positive semi-definite exactly when I satisfies the triangle inequalities), are scaled along
  their principal axes by factors in [1 − s, 1 + s], and I' = tr(Σ')·1 − Σ' (Wensing, Kim and
  Slotine, "Linear matrix inequalities for physically consistent inertial parameter
  identification", IEEE RA-L 2017). Each principal moment then changes by at most ± s.
  Explicit per-link values (``mass``, ``com``, ``inertia``) replace the URDF's instead.
* per joint: reflected rotor inertia ``armature`` [kg·m²] (MuJoCo armature), friction applied by
  the simulation: τ_f = viscous·q̇ + (coulomb + (static − coulomb)·exp(−(q̇/v_s)²))·tanh(q̇/v_ε)
  [N·m] (Stribeck level ``stribeck_static`` decaying to ``coulomb`` with ``stribeck_velocity``
  v_s; smooth sign with ``sign_velocity`` v_ε), ``gear_ratio`` and ``torque_constant`` [N·m/A,
  motor side] for ``effort_source: motor_current``, an effort offset [N·m] (fixed ``offset``
  plus a draw in ± ``offset_spread``) and a scale error drawn in ± ``scale_error``.
* sensors: ``effort_source`` (``joint_torque_sensor``: link-side torque; ``motor_current``:
  motor-side current in A), white noise, quantisation steps and an effort delay in samples;
  IMU, odometry and force/torque sensor noise.

``profile_seed`` seeds every draw; :meth:`TrueRobot.drawn_values` lists every drawn value so a
run can be reproduced and its truth known. Units: SI (kg, m, kg·m², N·m, rad, s, A).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Optional

import numpy as np
import yaml

from robot_dynamics.core.model.urdf import UrdfDescription
from robot_dynamics.core.text_files import load_yaml, read_small_text
from robot_dynamics.simulation.errors import ProfileError

MAX_PROFILE_FILE_BYTES = 1_000_000
MAX_EFFORT_DELAY = 10_000
"""[samples] The longest effort delay a profile may set (10 s at 1 kHz)."""

SHIPPED_PROFILES = ('ideal', 'realistic')
EFFORT_SOURCES = ('joint_torque_sensor', 'motor_current')
_PACKAGE = 'robot_dynamics'


@dataclass(frozen=True)
class JointDrive:
    """One joint's drive and sensor: rotor inertia [kg·m²], friction (viscous [N·m·s/rad],
    Coulomb and Stribeck static levels [N·m], Stribeck and sign velocities [rad/s]), gear ratio,
    torque constant [N·m/A], effort offset [N·m] and relative scale error."""

    armature: float = 0.0
    viscous: float = 0.0
    coulomb: float = 0.0
    stribeck_static: float = 0.0
    stribeck_velocity: float = 0.1
    sign_velocity: float = 0.01
    gear_ratio: float = 1.0
    torque_constant: float = 1.0
    offset: float = 0.0
    offset_spread: float = 0.0
    scale_error: float = 0.0

    def friction(self, velocity: np.ndarray) -> np.ndarray:
        """τ_f(q̇) [N·m] opposing the motion (module docstring); zero for a frictionless drive."""
        static = max(self.stribeck_static, self.coulomb)
        level = self.coulomb + (static - self.coulomb) * np.exp(
            -((velocity / self.stribeck_velocity) ** 2)
        )
        return self.viscous * velocity + level * np.tanh(velocity / self.sign_velocity)


@dataclass(frozen=True)
class LinkSpread:
    """Half-widths of the uniform link perturbations: relative mass, CoM per axis [m], relative
    second moments (each principal moment of inertia moves by at most that fraction)."""

    mass: float = 0.0
    com: float = 0.0
    inertia: float = 0.0


@dataclass(frozen=True)
class LinkValues:
    """Explicit true values of one link (None keeps the URDF's): mass [kg], CoM in the link
    frame [m], inertia about the CoM in link axes [ixx, ixy, ixz, iyy, iyz, izz] [kg·m²]."""

    mass: Optional[float] = None
    com: Optional[tuple] = None
    inertia: Optional[tuple] = None


@dataclass(frozen=True)
class SensorSettings:
    """White-noise 1σ and quantisation steps of the published joint state (0: none), effort
    delay in samples; IMU (gyro [rad/s], accelerometer [m/s²]), odometry (position [m],
    velocity [m/s], drift [m/s]) and force/torque sensor (noise [N], [N·m], bias half-widths)."""

    position_noise: float = 0.0
    velocity_noise: float = 0.0
    effort_noise: float = 0.0
    position_step: float = 0.0
    effort_step: float = 0.0
    effort_delay: int = 0
    gyro_noise: float = 0.0
    accelerometer_noise: float = 0.0
    odom_position_noise: float = 0.0
    odom_velocity_noise: float = 0.0
    odom_drift: float = 0.0
    ft_force_noise: float = 0.0
    ft_torque_noise: float = 0.0
    ft_force_bias: float = 0.0
    ft_torque_bias: float = 0.0


@dataclass(frozen=True)
class RobotProfile:
    """A profile as read from YAML (module docstring); :meth:`draw` makes a :class:`TrueRobot`."""

    name: str
    effort_source: str = 'joint_torque_sensor'
    link_spread: LinkSpread = LinkSpread()
    links: Mapping[str, LinkValues] = field(default_factory=dict)
    joint_default: JointDrive = JointDrive()
    joints: Mapping[str, dict] = field(default_factory=dict)
    sensors: SensorSettings = SensorSettings()
    source: str = ''

    def check_against(self, description: UrdfDescription) -> None:
        """Refuse (:class:`ProfileError`) joints or links the robot lacks, before anything
        starts."""
        moving = {name for name, joint in description.joints.items() if joint.type != 'fixed'}
        for name in self.joints:
            if name not in moving:
                raise ProfileError(
                    f'profile "{self.name}" ({self.source}): joint "{name}" is not a moving joint '
                    f'of robot "{description.name}" (its joints: {sorted(moving)})'
                )
        for name, values in self.links.items():
            link = description.links.get(name)
            if link is None:
                raise ProfileError(
                    f'profile "{self.name}" ({self.source}): link "{name}" is not a link of robot '
                    f'"{description.name}"'
                )
            if values.mass is None and link.inertial is None and (values.com or values.inertia):
                raise ProfileError(
                    f'profile "{self.name}": link "{name}" has no <inertial> in the URDF: give '
                    'its mass'
                )

    def draw(self, description: UrdfDescription, seed: int) -> 'TrueRobot':
        """The true robot for ``description``: every spread drawn with ``seed`` (NumPy PCG64)."""
        self.check_against(description)
        rng = np.random.default_rng(seed)
        links = {}
        for name in sorted(description.links):
            links[name] = self._true_link(name, description, rng)
        drives = {}
        moving = [name for name, joint in description.joints.items() if joint.type != 'fixed']
        for name in sorted(moving):
            drive = replace(self.joint_default, **self.joints.get(name, {}))
            offset = drive.offset + rng.uniform(-1.0, 1.0) * drive.offset_spread
            scale = rng.uniform(-1.0, 1.0) * drive.scale_error
            drives[name] = replace(drive, offset=offset, offset_spread=0.0, scale_error=scale)
        sensors = self.sensors
        ft_bias = np.concatenate(
            [
                sensors.ft_force_bias * rng.uniform(-1.0, 1.0, 3),
                sensors.ft_torque_bias * rng.uniform(-1.0, 1.0, 3),
            ]
        )
        return TrueRobot(self, int(seed), links, drives, tuple(float(x) for x in ft_bias))

    def _true_link(self, name: str, description: UrdfDescription, rng: np.random.Generator):
        """(mass, com, inertia about the CoM in link axes) of ``name``; None for a massless link."""
        link, values = description.links[name], self.links.get(name, LinkValues())
        spread = self.link_spread
        draws = rng.uniform(
            -1.0, 1.0, 7
        )  # drawn for every link so that the sequence does not depend on overrides
        if link.inertial is None and values.mass is None:
            return None
        inertial = link.inertial
        mass = (
            values.mass
            if values.mass is not None
            else inertial.mass * (1.0 + spread.mass * draws[0])
        )
        nominal_com = np.zeros(3) if inertial is None else np.array(inertial.origin.xyz, float)
        com = (
            np.array(values.com, float)
            if values.com is not None
            else nominal_com + spread.com * draws[1:4]
        )
        if values.inertia is not None:
            inertia = _tensor(values.inertia)
        else:
            nominal = inertial.tensor_in_link_frame() if inertial is not None else np.zeros((3, 3))
            inertia = (
                scaled_second_moments(nominal, 1.0 + spread.inertia * draws[4:7])
                if spread.inertia > 0.0
                else nominal
            )
        if (
            values != LinkValues() or spread != LinkSpread()
        ):  # the URDF's own values are MuJoCo's to judge
            _check_link(self.name, name, mass, com, inertia)
        return float(mass), com, inertia


@dataclass(frozen=True)
class TrueRobot:
    """A profile drawn for one robot: true link inertials (link name → (mass [kg], CoM [m],
    inertia about the CoM [kg·m²], link frame) or None when massless) and joint drives (with the
    drawn offset and scale error in place) and the force/torque sensor bias [N, N·m] (force,
    moment in the sensor frame)."""

    profile: RobotProfile
    seed: int
    links: Mapping[str, Optional[tuple]]
    drives: Mapping[str, JointDrive]
    ft_bias: tuple = (0.0,) * 6

    @property
    def perturbs_links(self) -> bool:
        """True when some link differs from the URDF (a spread or an explicit value)."""
        return self.profile.link_spread != LinkSpread() or bool(self.profile.links)

    @property
    def is_ideal(self) -> bool:
        """True when the links are the URDF's, the drives frictionless and the sensors perfect."""
        profile = self.profile
        return (
            profile.link_spread == LinkSpread()
            and not profile.links
            and profile.sensors == SensorSettings()
            and profile.effort_source == 'joint_torque_sensor'
            and all(drive == JointDrive() for drive in self.drives.values())
        )

    def drawn_values(self) -> dict:
        """Every value of the true robot, plain Python (for a log line or a YAML file)."""
        links = {
            name: None
            if value is None
            else {'mass': value[0], 'com': [float(x) for x in value[1]], 'inertia': _six(value[2])}
            for name, value in self.links.items()
        }
        drives = {
            name: {key: float(getattr(drive, key)) for key in JointDrive.__dataclass_fields__}
            for name, drive in self.drives.items()
        }
        return {
            'profile': self.profile.name,
            'source': self.profile.source,
            'profile_seed': self.seed,
            'effort_source': self.profile.effort_source,
            'links': links,
            'joints': drives,
            'ft_bias': list(self.ft_bias),
        }


def scaled_second_moments(inertia: np.ndarray, factors: np.ndarray) -> np.ndarray:
    """The inertia about the CoM [kg·m²] whose second moments Σ = ½ tr(I)·1 − I are scaled by
    ``factors`` (≥ 0) along their principal axes: physically consistent whenever I is."""
    second = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    values, axes = np.linalg.eigh(0.5 * (second + second.T))
    scaled = axes @ np.diag(np.maximum(values, 0.0) * np.maximum(factors, 0.0)) @ axes.T
    return np.trace(scaled) * np.eye(3) - scaled


def load_profile(name_or_path: str) -> RobotProfile:
    """A shipped profile by name (:data:`SHIPPED_PROFILES`) or a YAML file path."""
    path = (
        Path(name_or_path) if name_or_path not in SHIPPED_PROFILES else profile_path(name_or_path)
    )
    if not path.is_file():
        raise ProfileError(
            f'robot profile "{name_or_path}" is neither a shipped profile '
            f'{list(SHIPPED_PROFILES)} nor a YAML file'
        )
    text = read_small_text(str(path), MAX_PROFILE_FILE_BYTES, 'robot profile', ProfileError)
    try:
        document = load_yaml(text)
    except yaml.YAMLError as error:
        raise ProfileError(f'robot profile {path} is not valid YAML: {error}') from None
    return profile_from_dict(document, str(path))


def profile_path(name: str) -> Path:
    """Path of a shipped profile: the source tree's ``config/robot_profiles``, else the installed
    share of the prefix this module is installed in (a colcon install:
    ``<prefix>/lib/pythonX.Y/site-packages/robot_dynamics/simulation``), else sys.prefix's."""
    here = Path(__file__).resolve()
    shipped = Path('share') / _PACKAGE / 'config' / 'robot_profiles' / f'{name}.yaml'
    candidates = [here.parents[2] / 'config' / 'robot_profiles' / f'{name}.yaml']
    if len(here.parents) > 5:
        candidates.append(here.parents[5] / shipped)
    candidates.append(Path(sys.prefix) / shipped)
    return next((path for path in candidates if path.is_file()), candidates[0])


def profile_from_dict(document, source: str = '') -> RobotProfile:
    """A :class:`RobotProfile` from a parsed YAML mapping; every field checked and named on
    refusal."""
    if not isinstance(document, dict):
        raise ProfileError(
            f'robot profile {source} must be a mapping, got {type(document).__name__}'
        )
    name = str(document.get('name', Path(source).stem or 'profile'))
    where = f'profile "{name}" ({source})' if source else f'profile "{name}"'
    _known(document, ('name', 'effort_source', 'links', 'joints', 'sensors', 'description'), where)
    effort_source = document.get('effort_source', 'joint_torque_sensor')
    if effort_source not in EFFORT_SOURCES:
        raise ProfileError(
            f'{where}: effort_source must be one of {list(EFFORT_SOURCES)}, got {effort_source!r}'
        )
    links = _section(document, 'links')
    joints = _section(document, 'joints')
    _mapping(links, f'{where}: links')
    _mapping(joints, f'{where}: joints')
    spread = _numbers(
        _section(links, 'spread'), LinkSpread, f'{where}: links.spread', non_negative=True
    )
    for key in ('mass', 'inertia'):
        if spread.get(key, 0.0) >= 1.0:
            raise ProfileError(
                f'{where}: links.spread.{key} is a fraction below 1 (±{spread[key]:g} can draw a '
                f'link with no {key}, or a negative one), got {spread[key]:g}'
            )
    per_link = _section(links, 'per_link')
    _mapping(per_link, f'{where}: links.per_link')
    _distinct_names(per_link, f'{where}: links.per_link')
    link_values = {}
    for link, values in per_link.items():
        link_values[str(link)] = _link_values(_empty_if_none(values), f'{where}: link "{link}"')
    _known(links, ('spread', 'per_link'), f'{where}: links')
    _known(joints, ('default', 'per_joint'), f'{where}: joints')
    default = JointDrive(
        **_numbers(_section(joints, 'default'), JointDrive, f'{where}: joints.default')
    )
    _check_drive(default, f'{where}: joints.default')
    per_joint_values = _section(joints, 'per_joint')
    _mapping(per_joint_values, f'{where}: joints.per_joint')
    _distinct_names(per_joint_values, f'{where}: joints.per_joint')
    per_joint = {}
    for joint, values in per_joint_values.items():
        fields = _numbers(_empty_if_none(values), JointDrive, f'{where}: joint "{joint}"')
        _check_drive(replace(default, **fields), f'{where}: joint "{joint}"')
        per_joint[str(joint)] = fields
    sensors = _numbers(
        _section(document, 'sensors'), SensorSettings, f'{where}: sensors', non_negative=True
    )
    if sensors.get('effort_delay', 0) != int(sensors.get('effort_delay', 0)):
        raise ProfileError(
            f'{where}: sensors.effort_delay is a whole number of samples, got '
            f'{sensors["effort_delay"]}'
        )
    if sensors.get('effort_delay', 0) > MAX_EFFORT_DELAY:
        raise ProfileError(
            f'{where}: sensors.effort_delay is at most {MAX_EFFORT_DELAY} samples, got '
            f'{sensors["effort_delay"]:g}'
        )
    sensors['effort_delay'] = int(sensors.get('effort_delay', 0))
    return RobotProfile(
        name,
        effort_source,
        LinkSpread(**spread),
        link_values,
        default,
        per_joint,
        SensorSettings(**sensors),
        source,
    )


def _known(mapping: dict, keys: tuple, where: str) -> None:
    unknown = sorted(set(mapping) - set(keys))
    if unknown:
        raise ProfileError(f'{where}: unknown field(s) {unknown}; known: {list(keys)}')


def _mapping(value, where: str) -> None:
    if not isinstance(value, dict):
        raise ProfileError(f'{where} must be a mapping, got {type(value).__name__}')


def _distinct_names(mapping: dict, where: str) -> None:
    """Refuse keys that name one link or joint twice once read as text (``1`` and ``"1"``)."""
    names = [str(key) for key in mapping]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ProfileError(f'{where} names {twice} twice (once quoted, once not)')


def _section(mapping: dict, key: str):
    """``mapping[key]``; {} when absent or given with nothing after it (``key:``). Any other
    value is returned as it is, for the caller's check (``links: 0`` is no mapping)."""
    return _empty_if_none(mapping.get(key))


def _empty_if_none(value):
    return {} if value is None else value


def _numbers(values, kind, where: str, non_negative: bool = False) -> dict:
    """``values`` checked against the fields of dataclass ``kind``: known, finite numbers."""
    _mapping(values, where)
    _known(values, tuple(kind.__dataclass_fields__), where)
    checked = {}
    for key, value in values.items():
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise ProfileError(f'{where}: {key} must be a finite number, got {value!r}')
        if non_negative and value < 0.0:
            raise ProfileError(f'{where}: {key} must not be negative, got {value}')
        checked[key] = float(value)
    return checked


def _check_drive(drive: JointDrive, where: str) -> None:
    for key in (
        'armature',
        'viscous',
        'coulomb',
        'stribeck_static',
        'offset_spread',
        'scale_error',
    ):
        if getattr(drive, key) < 0.0:
            raise ProfileError(f'{where}: {key} must not be negative, got {getattr(drive, key)}')
    for key in ('stribeck_velocity', 'sign_velocity', 'gear_ratio', 'torque_constant'):
        if getattr(drive, key) <= 0.0:
            raise ProfileError(f'{where}: {key} must be positive, got {getattr(drive, key)}')
    if drive.scale_error >= 1.0:
        raise ProfileError(f'{where}: scale_error is a fraction below 1, got {drive.scale_error}')


def _link_values(values, where: str) -> LinkValues:
    _mapping(values, where)
    _known(values, ('mass', 'com', 'inertia'), where)
    mass, com, inertia = values.get('mass'), values.get('com'), values.get('inertia')
    if mass is not None and (
        isinstance(mass, bool)
        or not isinstance(mass, (int, float))
        or not math.isfinite(mass)
        or mass < 0.0
    ):
        raise ProfileError(
            f'{where}: mass must be a finite, non-negative number [kg], got {mass!r}'
        )
    for key, value, size in (('com', com, 3), ('inertia', inertia, 6)):
        if value is not None and (
            not isinstance(value, list)
            or len(value) != size
            or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                for x in value
            )
        ):
            raise ProfileError(f'{where}: {key} must be {size} finite numbers, got {value!r}')
    return LinkValues(
        None if mass is None else float(mass),
        None if com is None else tuple(com),
        None if inertia is None else tuple(inertia),
    )


def _check_link(profile: str, link: str, mass: float, com: np.ndarray, inertia: np.ndarray) -> None:
    """A true link must be a body: mass ≥ 0, finite CoM, inertia symmetric with principal
    moments ≥ 0 satisfying the triangle inequalities."""
    if not (math.isfinite(mass) and mass >= 0.0):
        raise ProfileError(
            f'profile "{profile}": link "{link}" field mass would be {mass} kg: a mass is ≥ 0'
        )
    moments = np.linalg.eigvalsh(inertia)
    tolerance = 1e-12 + 1e-9 * max(float(np.max(np.abs(moments))), 0.0)
    if np.min(moments) < -tolerance:
        raise ProfileError(
            f'profile "{profile}": link "{link}" field inertia has a negative principal moment '
            f'{np.min(moments):.3g} kg m^2'
        )
    a, b, c = np.sort(moments)
    if a + b < c - tolerance:
        raise ProfileError(
            f'profile "{profile}": link "{link}" field inertia violates the triangle inequality '
            f'({a:.3g} + {b:.3g} < {c:.3g} kg m^2): no body has these principal moments'
        )


def _tensor(six) -> np.ndarray:
    ixx, ixy, ixz, iyy, iyz, izz = (float(x) for x in six)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def _six(tensor: np.ndarray) -> list:
    return [
        float(tensor[0, 0]),
        float(tensor[0, 1]),
        float(tensor[0, 2]),
        float(tensor[1, 1]),
        float(tensor[1, 2]),
        float(tensor[2, 2]),
    ]
