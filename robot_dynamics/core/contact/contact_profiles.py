"""Named collision-sensitivity profiles: how contact detection turns external torques into a
contact flag, switched at runtime.

A profile sets, over the detector's thresholds (given or calibrated, N·m per joint):

* ``threshold_scale``: one factor, or one per joint, on those thresholds; or
  ``thresholds``: absolute ones [N·m per joint, model order] that replace them;
* ``min_duration`` [s], ``release_ratio``, ``release_duration`` [s]: the hysteresis (absent: the
  node's ``contact_min_duration``, ``contact_release_ratio``, ``contact_release_duration``);
* ``raise_contact``: false keeps the ratios and the wrench but never raises ``~/contact`` (hand
  guiding: the operator's push is wanted, not a collision);
* ``detection``: false turns contact detection off (no ratios, no flag; the wrench stays).

Shipped (:data:`SHIPPED_PROFILES`, also in ``config/contact_profiles.yaml`` to copy and tune):
``default`` (the thresholds as they are), ``sensitive`` (60 % of them, 2 ms), ``hand_guiding``
(no flag) and ``off``. A ``contact_profiles_file`` adds profiles or replaces shipped ones by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
import yaml

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.text_files import load_yaml, read_small_text

MAX_PROFILES_FILE_BYTES = 1_000_000
_DURATIONS = ('min_duration', 'release_duration')


class ContactProfileError(RobotDynamicsError):
    """A profile cannot be read or does not fit the model (file, profile and field named)."""


@dataclass(frozen=True)
class ContactProfile:
    """One profile (module docstring); None fields: the node's own contact settings."""

    name: str
    threshold_scale: tuple = (1.0,)
    thresholds: tuple = ()
    min_duration: Optional[float] = None
    release_ratio: Optional[float] = None
    release_duration: Optional[float] = None
    raise_contact: bool = True
    detection: bool = True

    def thresholds_for(self, base: Optional[np.ndarray], num_joints: int) -> Optional[np.ndarray]:
        """The detector's thresholds [N·m] for a model of ``num_joints`` joints whose given or
        calibrated thresholds are ``base`` (None: none yet); None when there are none."""
        if not self.detection:
            return None
        if self.thresholds:
            if len(self.thresholds) != num_joints:
                raise ContactProfileError(
                    f'contact profile {self.name}: {len(self.thresholds)} thresholds for a model '
                    f'of {num_joints} joints'
                )
            return np.array(self.thresholds, dtype=float)
        if base is None:
            return None
        scale = np.array(self.threshold_scale, dtype=float)
        if scale.size not in (1, num_joints):
            raise ContactProfileError(
                f'contact profile {self.name}: {scale.size} threshold scales for a model of '
                f'{num_joints} joints'
            )
        return np.asarray(base, dtype=float) * scale


SHIPPED_PROFILES = {
    'default': ContactProfile('default'),
    'sensitive': ContactProfile('sensitive', threshold_scale=(0.6,), min_duration=0.002),
    'hand_guiding': ContactProfile('hand_guiding', raise_contact=False),
    'off': ContactProfile('off', raise_contact=False, detection=False),
}


def profiles_from_yaml(text: str, source: str) -> dict:
    """name → :class:`ContactProfile` of a profiles YAML (``profiles: {name: {...}}``);
    ``source`` names the file in errors."""
    try:
        document = load_yaml(text)
    except yaml.YAMLError as error:
        raise ContactProfileError(f'{source} is not valid YAML: {error}') from None
    profiles = document.get('profiles') if isinstance(document, dict) else None
    if not isinstance(profiles, dict):
        raise ContactProfileError(f"{source} has no 'profiles' mapping")
    names = [_name(name) for name in profiles]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ContactProfileError(f'{source} names the profiles {twice} twice')
    named = {_name(name): entry for name, entry in profiles.items()}
    return {
        name: _profile(source, name, {} if entry is None else entry)
        for name, entry in named.items()
    }


def _name(key) -> str:
    """A profile's name; YAML 1.1 reads an unquoted ``off`` (``on``) as a boolean."""
    if isinstance(key, bool):
        return 'on' if key else 'off'
    return str(key)


def _profile(source: str, name: str, entry) -> ContactProfile:
    where = f'{source}, profile {name}'
    if not isinstance(entry, dict):
        raise ContactProfileError(f'{where}: not a mapping')
    known = {'threshold_scale', 'thresholds', 'raise_contact', 'detection', 'release_ratio'}
    unknown = sorted(set(entry) - known - set(_DURATIONS))
    if unknown:
        raise ContactProfileError(f'{where}: unknown fields {unknown}')
    values = {}
    for key in ('threshold_scale', 'thresholds'):
        if key in entry:
            values[key] = _positive_numbers(where, key, entry[key])
    for key in _DURATIONS + ('release_ratio',):
        if key in entry:
            values[key] = _positive_numbers(where, key, entry[key], allow_zero=True)[0]
    if values.get('release_ratio') is not None and not 0.0 < values['release_ratio'] <= 1.0:
        raise ContactProfileError(f'{where}: release_ratio must be in (0, 1]')
    for key in ('raise_contact', 'detection'):
        if key in entry:
            if not isinstance(entry[key], bool):
                raise ContactProfileError(f'{where}: {key} must be true or false')
            values[key] = entry[key]
    return ContactProfile(name, **values)


def _positive_numbers(where: str, key: str, value, allow_zero: bool = False) -> tuple:
    items = value if isinstance(value, list) else [value]
    numbers = []
    for item in items:
        ok = isinstance(item, (int, float)) and not isinstance(item, bool) and math.isfinite(item)
        if not ok or item < 0.0 or (item == 0.0 and not allow_zero):
            raise ContactProfileError(
                f'{where}: {key} must be positive finite numbers, got {value!r}'
            )
        numbers.append(float(item))
    if not numbers:
        raise ContactProfileError(f'{where}: {key} is empty')
    return tuple(numbers)


def check_profile_name(name: str, path: str) -> None:
    """Raise :class:`ContactProfileError` (naming the profiles there are) unless ``name`` is a
    profile of file ``path`` or a shipped one (only those when the file cannot be used)."""
    try:
        profiles = load_profiles(path)
    except ContactProfileError:
        profiles = SHIPPED_PROFILES
    if name not in profiles:
        raise ContactProfileError(f'no contact profile {name!r}; profiles: {sorted(profiles)}')


def load_profiles(path: str) -> dict:
    """The shipped profiles plus those of file ``path`` ('' : shipped only)."""
    profiles = dict(SHIPPED_PROFILES)
    if not path:
        return profiles
    text = read_small_text(
        path, MAX_PROFILES_FILE_BYTES, 'contact profiles file', ContactProfileError
    )
    profiles.update(profiles_from_yaml(text, f'contact profiles file {path}'))
    return profiles
