"""The payload in use: set directly, chosen from named tool presets, or identified.

A payload is rigid on a link of the model: mass [kg], CoM [m] and inertia about the CoM
[kg·m²], both in that link's frame. :func:`checked_payload` refuses what no rigid body can be
(negative or non-finite mass, non-finite CoM, an inertia that is not symmetric positive
semi-definite or breaks the triangle inequality λ_i ≤ λ_j + λ_k). Tool presets live in a YAML
file (``tools_file``)::

    tools:
      gripper:
        link: tool0                     # a link of the model
        mass: 1.2                       # kg
        com: [0.0, 0.0, 0.06]           # m, link frame
        inertia: {ixx: 0.002, ixy: 0, ixz: 0, iyy: 0.002, iyz: 0, izz: 0.001}  # kg·m², CoM
        ft_bias: [0, 0, 0, 0, 0, 0]     # optional: an F/T sensor's bias with this tool [N, N·m]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import yaml

from robot_dynamics.core.errors import PayloadError, RobotDynamicsError
from robot_dynamics.core.model.inertia import (
    InertialParameters,
    principal_inertia,
    triangle_margins,
)
from robot_dynamics.core.text_files import load_yaml, read_small_text, write_text_atomic

PAYLOAD_SOURCES = ('none', 'set', 'tool', 'identified')
INERTIA_KEYS = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')
MAX_TOOLS_FILE_BYTES = 1_000_000


class ToolsFileError(RobotDynamicsError):
    """A tools file cannot be read or a preset in it is not a payload (file, tool and field
    named)."""


@dataclass(frozen=True)
class PayloadInUse:
    """The payload every output uses: on ``link``, ``parameters`` in that link's frame, and
    where it came from (``source``: one of :data:`PAYLOAD_SOURCES`; ``tool``: the preset's
    name)."""

    link: str
    parameters: InertialParameters
    source: str
    tool: str = ''

    def describe(self) -> str:
        """One line for an operator: source, mass and link."""
        origin = f'tool {self.tool}' if self.source == 'tool' else self.source
        return f'{origin}: {self.parameters.mass:.4g} kg on {self.link}'


def inertia_matrix(ixx, ixy, ixz, iyy, iyz, izz) -> np.ndarray:
    """The symmetric 3×3 inertia tensor of its six entries [kg·m²]."""
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)


MAX_PAYLOAD_MASS = 1.0e4
"""[kg] Heaviest payload accepted (the largest industrial arms carry about 2.3 t)."""
MAX_PAYLOAD_COM_DISTANCE = 10.0
"""[m] Farthest payload CoM accepted from its link's origin."""


def checked_payload(mass: float, com: Sequence[float], inertia: np.ndarray) -> InertialParameters:
    """The payload's :class:`InertialParameters`; raises :class:`PayloadError` saying why no
    rigid body has them, or why no robot carries them (a mass over :data:`MAX_PAYLOAD_MASS`, a
    CoM over :data:`MAX_PAYLOAD_COM_DISTANCE` from the link). ``mass`` [kg], ``com`` [m],
    ``inertia`` about the CoM [kg·m²]."""
    com, inertia = np.asarray(com, dtype=float), np.asarray(inertia, dtype=float)
    if not (math.isfinite(mass) and 0.0 <= mass <= MAX_PAYLOAD_MASS):
        raise PayloadError(
            f'payload mass must be a number in [0, {MAX_PAYLOAD_MASS:g}] kg, got {mass!r}'
        )
    if com.shape != (3,) or not np.all(np.isfinite(com)):
        raise PayloadError(f'payload CoM must be 3 finite numbers [m], got {com.tolist()}')
    if np.linalg.norm(com) > MAX_PAYLOAD_COM_DISTANCE:
        raise PayloadError(
            f'payload CoM {com.tolist()} m is over {MAX_PAYLOAD_COM_DISTANCE:g} m from its link'
        )
    if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
        raise PayloadError('payload inertia must be 6 finite numbers [kg·m²]')
    moments, _ = principal_inertia(inertia)
    scale = max(float(np.max(np.abs(moments))), 1e-12)
    if moments[0] < -1e-9 * scale:
        raise PayloadError(
            f'payload inertia is not positive semi-definite (principal moments '
            f'{np.round(moments, 9).tolist()} kg·m²)'
        )
    if np.min(triangle_margins(moments)) < -1e-9 * scale:
        raise PayloadError(
            f'payload inertia violates the triangle inequality (principal moments '
            f'{np.round(moments, 9).tolist()} kg·m²: one exceeds the sum of the other two), '
            'which no rigid body can'
        )
    return InertialParameters(mass, com, inertia)


@dataclass(frozen=True)
class ToolPreset:
    """A named tool: its payload on ``link`` and, optionally, the F/T bias with it
    (force [N], torque [N·m])."""

    name: str
    link: str
    parameters: InertialParameters
    ft_bias: Optional[np.ndarray] = None


def load_tools(path: str) -> dict:
    """name → :class:`ToolPreset` of tools file ``path`` ('' : no tools); raises
    :class:`ToolsFileError` naming the file, the tool and the field."""
    if not path:
        return {}
    text = read_small_text(path, MAX_TOOLS_FILE_BYTES, 'tools file', ToolsFileError)
    try:
        document = load_yaml(text)
    except yaml.YAMLError as error:
        raise ToolsFileError(f'tools file {path} is not YAML text: {error}') from None
    tools = document.get('tools') if isinstance(document, dict) else None
    if not isinstance(tools, dict):
        raise ToolsFileError(f"tools file {path} has no 'tools' mapping")
    return {str(name): _preset(path, str(name), entry) for name, entry in tools.items()}


TOOL_KEYS = ('link', 'mass', 'com', 'inertia', 'ft_bias')


def _preset(path: str, name: str, entry) -> ToolPreset:
    where = f'tools file {path}, tool {name}'
    if not isinstance(entry, dict) or not isinstance(entry.get('link'), str):
        raise ToolsFileError(f'{where}: needs a mapping with a link name')
    unknown = sorted(str(key) for key in set(entry) - set(TOOL_KEYS))
    if unknown:
        raise ToolsFileError(f'{where}: unknown field(s) {unknown}; known: {list(TOOL_KEYS)}')
    if 'mass' not in entry:
        raise ToolsFileError(f'{where}: mass [kg] is missing')
    inertia = entry.get('inertia')
    inertia = {} if inertia is None else inertia
    if not isinstance(inertia, dict) or set(inertia) - set(INERTIA_KEYS):
        raise ToolsFileError(
            f'{where}: inertia must be a mapping of {list(INERTIA_KEYS)} [kg·m²], got {inertia!r}'
        )
    mass = _tool_numbers(where, 'mass', [entry['mass']])[0]
    com = _tool_numbers(where, 'com', entry.get('com', (0.0, 0.0, 0.0)), 3)
    inertia = inertia_matrix(
        *_tool_numbers(where, 'inertia', [inertia.get(key, 0.0) for key in INERTIA_KEYS])
    )
    bias = entry.get('ft_bias')
    bias = None if bias is None else np.array(_tool_numbers(where, 'ft_bias', bias, 6))
    try:
        parameters = checked_payload(mass, com, inertia)
    except PayloadError as error:
        raise ToolsFileError(f'{where}: {error}') from None
    return ToolPreset(name, entry['link'], parameters, bias)


def _tool_numbers(where: str, field: str, values, count: Optional[int] = None) -> list:
    """``values`` as finite floats (numbers only: no text, no true/false), ``count`` of them."""
    if (
        not isinstance(values, (list, tuple))
        or (count is not None and len(values) != count)
        or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x)
            for x in values
        )
    ):
        shape = f'{count} finite numbers' if count else 'a finite number'
        shown = values[0] if count is None and isinstance(values, list) else values
        raise ToolsFileError(f'{where}: {field} must be {shape}, got {shown!r}')
    return [float(x) for x in values]


def save_tool(path: str, name: str, link: str, parameters: InertialParameters) -> None:
    """Write (or replace) tool ``name`` in tools file ``path``, keeping its other tools."""
    file = Path(path)
    document = {'tools': {}}
    if file.exists():
        load_tools(path)  # refuses to overwrite a file it cannot read back
        document = load_yaml(file.read_text(encoding='utf-8'))
    inertia = parameters.inertia_com
    document['tools'][name] = {
        'link': link,
        'mass': float(parameters.mass),
        'com': [float(x) for x in parameters.com],
        'inertia': dict(
            zip(
                INERTIA_KEYS,
                (float(inertia[i, j]) for i, j in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))),
            )
        ),
    }
    file.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(file, yaml.safe_dump(document, sort_keys=False))
