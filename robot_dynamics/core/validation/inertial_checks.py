"""Checks of one link's inertial parameters on their own: mass, an inertia without mass, a zero
inertia, physical consistency and a row-major transcription slip.

Physical consistency follows Wensing, Kim & Slotine 2017: the inertia about the CoM is
positive semi-definite, its principal moments satisfy the triangle inequality, and the 4×4
pseudo-inertia J is positive semi-definite. Conventions: URDF ``<inertial>`` (tensor entries
about the CoM in the CoM frame, ixy = −∫ρxy dV); SI units (kg, m, kg·m²).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from robot_dynamics.core.model.inertia import (
    InertiaProjectionError,
    nearest_consistent_inertia,
    parallel_axis,
    principal_inertia,
    pseudo_inertia_from_vector,
    triangle_margins,
)
from robot_dynamics.core.model.urdf import UrdfLink
from robot_dynamics.core.validation.consumers import DRAKE_AXIS_REFUSAL, link_finding
from robot_dynamics.core.validation.context import DescriptionContext, LinkGeometry
from robot_dynamics.core.validation.formatting import (
    floats,
    geometry_alternative,
    geometry_snippet,
    inertial_snippet,
    vector_text,
)
from robot_dynamics.core.validation.report import Finding
from robot_dynamics.core.validation.thresholds import (
    DRAKE_INERTIA_TOLERANCE,
    MUJOCO_MIN_VALUE,
    NEGATIVE_MOMENT_TOLERANCE,
    TRIANGLE_TOLERANCE,
)


def zero_inertia_finding(
    context: DescriptionContext, link: UrdfLink, largest_entry: float
) -> Finding:
    """All entries 0, or so small that no body of this mass has them: the relative checks
    would only judge rounding noise (1e-20 entries 'violating' a triangle), so say what it is."""
    mass = link.inertial.mass
    moving = context.moves(link.name)
    refused = (
        largest_entry > 0.0
        and float(np.linalg.eigvalsh(link.inertial.tensor())[0]) <= MUJOCO_MIN_VALUE
    )
    severity = 'error' if moving or refused else 'info' if largest_entry == 0.0 else 'warning'
    what = (
        'all inertia entries are 0 (a point mass)'
        if largest_entry == 0.0
        else f'its inertia entries are at most {largest_entry:.3g} kg·m², zero for a body of this '
        f'mass (radius of gyration {math.sqrt(largest_entry / mass):.2g} m): a point mass written '
        'with rounding noise'
    )
    where = (
        ' on a moving link'
        if moving
        else (
            ' (MuJoCo refuses the noise: its principal moments are not positive)' if refused else ''
        )
    )
    return link_finding(
        link,
        'zero_inertia',
        severity,
        f'mass {mass:.6g} kg but {what}{where}',
        {'mass': mass, 'largest_inertia_entry': largest_entry},
        'give the inertia about the CoM (from CAD, from a mirror twin, or from the geometry: see '
        'the other findings on this link)' + geometry_alternative(mass, context.geometry(link)),
        drake=_drake_axis_refusal(context, link),
    )


def _drake_axis_refusal(context: DescriptionContext, link: UrdfLink) -> str:
    """Drake's sentence when its articulated-body algorithm refuses a link whose tensor it keeps
    (a valid one: Drake replaces an invalid one): a revolute joint turns it, nothing else with
    mass is below, and its inertia about the joint axis, nᵀ I_C n + m |n × c|², is zero."""
    joint = context.parent_joint.get(link.name)
    if (
        joint is None
        or joint.type not in ('revolute', 'continuous')
        or context.mass_below(link.name, fixed_only=False) > link.inertial.mass
    ):
        return ''
    axis = np.array(joint.axis) / np.linalg.norm(joint.axis)  # joint frame = child link frame
    com = np.array(link.inertial.origin.xyz)
    lever = np.cross(axis, com)
    about_axis = (
        axis @ link.inertial.tensor_in_link_frame() @ axis + link.inertial.mass * lever @ lever
    )
    return DRAKE_AXIS_REFUSAL if about_axis <= 0.0 else ''


def mass_findings(context: DescriptionContext, link: UrdfLink) -> list:
    """Findings on the link's mass (kg), in this order: collision geometry on a massless link
    ('zero_mass_geometry'), a massless link that a joint moves ('mass'), an inertia without mass
    ('massless_inertia'). Empty when none applies."""
    mass = link.inertial.mass if link.inertial else 0.0
    findings = []
    if mass == 0.0 and link.collisions and link.name not in context.welded_to_world:
        findings.append(_zero_mass_geometry_finding(context, link, mass))
    if context.moves(link.name) and context.mass_below(link.name, fixed_only=True) == 0.0:
        findings.append(_massless_moving_finding(context, link, mass))
    if link.inertial and mass == 0.0 and np.any(link.inertial.tensor()):
        findings.append(_massless_inertia_finding(link))
    return findings


def _zero_mass_geometry_finding(
    context: DescriptionContext, link: UrdfLink, mass: float
) -> Finding:
    """Collision geometry on a link of ``mass`` 0 kg: a warning, or a note when fixed joints weld
    the link to a body with mass."""
    count = len(link.collisions)
    carrier = context.welded_to_massive_body(link.name)
    return link_finding(
        link,
        'zero_mass_geometry',
        'info' if carrier else 'warning',
        f'{"mass=0" if link.inertial else "no <inertial>"} on a link with {count} '
        f'collision geometr{"y" if count == 1 else "ies"}'
        + (
            f', welded by fixed joints to "{carrier}" that has mass (fine if its inertial '
            'includes this part)'
            if carrier
            else ''
        ),
        {'mass': mass, 'collision_geometries': len(link.collisions)},
        'give the link its real mass and inertia (CAD or weighing); if it is only a '
        'frame, remove the collision geometry',
    )


def _massless_moving_finding(context: DescriptionContext, link: UrdfLink, mass: float) -> Finding:
    """The 'mass' error for a moving link with no mass (kg) on it or welded to it, worded by
    whether the links that further joints hang below it have mass."""
    below = context.mass_below(link.name, fixed_only=False)
    joint = context.parent_joint.get(link.name)
    moved_by = f'joint "{joint.name}"' if joint else 'the floating base'
    if below == 0.0:
        return link_finding(
            link,
            'mass',
            'error',
            f'{moved_by} moves this link, but it and everything below it are massless',
            {'mass': mass, 'mass_below': below},
            'give the link its mass and inertia, or make the joint fixed',
            'mass_with_tensor' if _tensor_below(context, link.name) else '',
        )
    return link_finding(
        link,
        'mass',
        'error',
        f'{moved_by} moves this massless link (the {below:.4g} kg below it hang on '
        'further joints): MuJoCo refuses it',
        {'mass': mass, 'mass_below': below},
        'pinocchio copes; for MuJoCo (and a well-conditioned mass matrix) give it a '
        'small mass and inertia (e.g. 1e-3 kg, a few 1e-6 kg·m²), or merge the joints',
        'mass_above_joints',
    )


def _massless_inertia_finding(link: UrdfLink) -> Finding:
    """A warning for non-zero inertia entries (kg·m², CoM frame) on a link of mass 0 kg."""
    largest = float(np.abs(link.inertial.tensor()).max())
    return link_finding(
        link,
        'massless_inertia',
        'warning',
        f'mass 0 but inertia entries up to {largest:.3g} kg·m²: a body without mass has no '
        'rotational inertia',
        {'mass': link.inertial.mass, 'largest_inertia_entry': largest},
        'give the link its mass, or set its inertia entries to 0 if it is only a frame',
    )


def _tensor_below(context: DescriptionContext, link_name: str) -> bool:
    """A link at or below ``link_name`` has a non-zero inertia tensor."""
    stack = [link_name]
    while stack:
        link = context.description.links[stack.pop()]
        if link.inertial and np.any(link.inertial.tensor()):
            return True
        stack.extend(joint.child for joint in context.children[link.name])
    return False


def mesh_notes(link: UrdfLink, geometry: LinkGeometry, massive: bool) -> list:
    """Skipped geometry checks (only worth saying for a link that has mass) and inside-out
    meshes."""
    findings = []
    if geometry.skipped and massive:
        findings.append(
            link_finding(
                link,
                'mesh',
                'info',
                'geometry checks skipped: ' + '; '.join(geometry.skipped),
                {'geometry': geometry.source},
                None,
            )
        )
    for filename, volume in geometry.inverted:
        findings.append(
            link_finding(
                link,
                'mesh_orientation',
                'warning',
                f'{filename} has a negative volume ({volume:.6g} m³): its triangles are wound '
                'inside-out (normals point inwards)',
                {'mesh': filename, 'signed_volume': volume},
                're-export the mesh with outward normals (e.g. trimesh.repair.fix_inversion)',
            )
        )
    return findings


def consistency_findings(
    context: DescriptionContext, link: UrdfLink, geometry: Optional[LinkGeometry], recovering: list
) -> list:
    """At most one finding on the physical consistency of the link's inertia (kg·m², about the
    CoM in the CoM frame), the first that applies of: a placeholder tensor, a negative principal
    moment, a zero principal moment, a triangle-inequality violation, a pseudo-inertia (about the
    link origin, link frame) that is not positive semi-definite. Empty when the inertia is
    consistent. The fix refers to ``recovering`` findings (checks that recovered the intended
    tensor from the file) when there are any."""
    inertial = link.inertial
    moments, axes = principal_inertia(inertial.tensor())
    largest = float(np.max(np.abs(moments)))
    pseudo_eigenvalues = np.linalg.eigvalsh(pseudo_inertia_about_origin(inertial))
    pseudo_min = float(pseudo_eigenvalues[0])
    values = {
        'principal_moments': floats(moments),
        'principal_axes': floats(axes.T),
        'pseudo_inertia_min_eigenvalue': pseudo_min,
    }
    if all_entries_equal(inertial):
        return [_placeholder_finding(link, geometry, moments, values)]
    if moments[0] < -NEGATIVE_MOMENT_TOLERANCE * largest:
        return [_negative_moment_finding(link, geometry, recovering, moments, pseudo_min, values)]
    if moments[0] <= MUJOCO_MIN_VALUE:
        return [_zero_moment_finding(context, link, geometry, recovering, moments, values)]
    violation = float(-triangle_margins(moments).min()) / largest
    if violation > 0.0:
        return [
            _triangle_finding(link, geometry, recovering, moments, violation, pseudo_min, values)
        ]
    if pseudo_min < -NEGATIVE_MOMENT_TOLERANCE * float(np.abs(pseudo_eigenvalues).max()):
        return [_pseudo_inertia_finding(link, geometry, recovering, pseudo_min, values)]
    return []


def _placeholder_finding(
    link: UrdfLink, geometry: Optional[LinkGeometry], moments: np.ndarray, values: dict
) -> Finding:
    """The 'positive_definite' error for six equal inertia entries, with the principal
    ``moments`` (kg·m²) they give."""
    return link_finding(
        link,
        'positive_definite',
        'error',
        f'all six inertia entries are {link.inertial.ixx:.6g}: a placeholder, not a tensor '
        f'(principal moments {vector_text(moments)} kg·m², two of them zero); no rigid '
        'body has it',
        values,
        _consistent_fix(link, geometry, []),
    )


def _negative_moment_finding(
    link: UrdfLink,
    geometry: Optional[LinkGeometry],
    recovering: list,
    moments: np.ndarray,
    pseudo_min: float,
    values: dict,
) -> Finding:
    """The 'positive_definite' error for a negative principal moment (kg·m²), naming the
    negative diagonal entries of the tensor (CoM frame) if any."""
    inertial = link.inertial
    negative = [
        f'{key}={getattr(inertial, key):.6g}'
        for key in ('ixx', 'iyy', 'izz')
        if getattr(inertial, key) < 0
    ]
    message = (
        f'not positive semi-definite: principal moments {vector_text(moments)} kg·m² (smallest '
        f'{moments[0]:.4g} < 0)'
        + (f'; negative diagonal {", ".join(negative)}' if negative else '')
        + f'; pseudo-inertia smallest eigenvalue {pseudo_min:.4g}'
    )
    return link_finding(
        link,
        'positive_definite',
        'error',
        message,
        values,
        _consistent_fix(link, geometry, recovering),
    )


def _zero_moment_finding(
    context: DescriptionContext,
    link: UrdfLink,
    geometry: Optional[LinkGeometry],
    recovering: list,
    moments: np.ndarray,
    values: dict,
) -> Finding:
    """The 'positive_definite' error for a smallest principal moment (kg·m²) at or below
    MuJoCo's minimum."""
    # Drake keeps a zero moment, warns about a negative one
    negative = moments[0] < -DRAKE_INERTIA_TOLERANCE * float(np.max(np.abs(moments)))
    return link_finding(
        link,
        'positive_definite',
        'error',
        f'a principal moment is zero: principal moments {vector_text(moments)} kg·m² (a '
        'body with no extent across one axis: an ideal rod or a point, not a part)',
        values,
        _consistent_fix(link, geometry, recovering),
        *(('', '') if negative else ('zero_moment', _drake_axis_refusal(context, link))),
    )


def _triangle_finding(
    link: UrdfLink,
    geometry: Optional[LinkGeometry],
    recovering: list,
    moments: np.ndarray,
    violation: float,
    pseudo_min: float,
    values: dict,
) -> Finding:
    """The 'triangle_inequality' finding for principal ``moments`` (kg·m²) of which one exceeds
    the sum of the other two by ``violation`` (a fraction of the largest): an error above
    TRIANGLE_TOLERANCE, a rounding-level warning up to it."""
    margins = triangle_margins(moments)
    k = int(np.argmin(margins))
    i, j = [index for index in range(3) if index != k]
    severity = 'error' if violation > TRIANGLE_TOLERANCE else 'warning'
    message = (
        f'principal moments {vector_text(moments)} kg·m² violate the triangle inequality: '
        f'λ{i + 1} + λ{j + 1} = {moments[i] + moments[j]:.6g} < λ{k + 1} = {moments[k]:.6g} '
        f'(by {100.0 * violation:.3g} % of λmax); no rigid body has them'
        + (' (rounding-level)' if severity == 'warning' else '')
        + f'; pseudo-inertia smallest eigenvalue {pseudo_min:.4g}'
    )
    return link_finding(
        link,
        'triangle_inequality',
        severity,
        message,
        {**values, 'triangle_margins': floats(margins), 'violation_percent': 100.0 * violation},
        _consistent_fix(link, geometry, recovering),
        '' if violation > DRAKE_INERTIA_TOLERANCE else 'triangle_rounding',
    )


def _pseudo_inertia_finding(
    link: UrdfLink,
    geometry: Optional[LinkGeometry],
    recovering: list,
    pseudo_min: float,
    values: dict,
) -> Finding:
    """The 'pseudo_inertia' error for a 4×4 pseudo-inertia (about the link origin, link frame)
    with the negative smallest eigenvalue ``pseudo_min``."""
    return link_finding(
        link,
        'pseudo_inertia',
        'error',
        f'pseudo-inertia J is not positive semi-definite (smallest eigenvalue {pseudo_min:.4g})',
        values,
        _consistent_fix(link, geometry, recovering),
    )


def _consistent_fix(link: UrdfLink, geometry: Optional[LinkGeometry], recovering: list) -> str:
    if recovering:
        return f'use the tensor recovered by the {" / ".join(recovering)} finding on this link'
    inertial = link.inertial
    lines = []
    try:
        nearest = nearest_consistent_inertia(inertial.tensor())
        lines.append(
            'nearest physically consistent inertia (same mass, CoM and frame; SDP):\n'
            + inertial_snippet(inertial.mass, inertial.origin.xyz, inertial.origin.rpy, nearest)
        )
    except InertiaProjectionError as error:
        lines.append(f'no nearest consistent inertia: {error}')
    if geometry is not None and geometry.solid is not None:
        lines.append(
            f'or the uniform-density inertia of the {geometry.solid_source} geometry for this '
            'mass:\n' + geometry_snippet(inertial.mass, geometry.solid)
        )
    return '\n'.join(lines)


def row_major_slip_findings(link: UrdfLink, geometry: Optional[LinkGeometry]) -> list:
    """``ixx ixy ixz iyy iyz izz`` filled from a full 3×3 matrix read row by row gives
    a b c b d e: ``iyy`` repeats ``ixy``, the true iyy sits in ``iyz``, the true iyz in ``izz``
    and the true izz is lost."""
    inertial = link.inertial
    scale = max(abs(inertial.ixx), abs(inertial.iyy), abs(inertial.izz), abs(inertial.iyz))
    if (
        scale == 0.0
        or abs(inertial.iyy - inertial.ixy) > 1e-9 * scale
        or inertial.iyz <= 0.0
        or all_entries_equal(inertial)
    ):  # iyy == ixy holds trivially for a placeholder
        return []
    if inertial.ixy == 0.0 and not inertial.ixx > 0.0:
        return []
    recovered = np.array(
        [
            [inertial.ixx, inertial.ixy, inertial.ixz],
            [inertial.ixy, inertial.iyz, inertial.izz],
            [inertial.ixz, inertial.izz, 0.0],
        ]
    )
    estimate, interval = _izz_estimate(recovered, inertial, geometry)
    values = {
        'iyy_equals_ixy': inertial.iyy,
        'recovered_known_entries': {
            'ixx': inertial.ixx,
            'ixy': inertial.ixy,
            'ixz': inertial.ixz,
            'iyy': inertial.iyz,
            'iyz': inertial.izz,
        },
    }
    message = (
        f'iyy = ixy = {inertial.iyy:.6g}: the six values look like the first six entries of the '
        f'full 3×3 matrix read row by row (ixx ixy ixz | iyx iyy iyz), so iyy={inertial.iyz:.6g} '
        f'and iyz={inertial.izz:.6g}; izz was cut off'
    )
    if estimate is None:
        suggestion = (
            'no izz makes the recovered entries physically consistent: re-export the inertia '
            'tensor (upper triangle: ixx ixy ixz iyy iyz izz)'
        )
    else:
        recovered[2, 2] = estimate
        values.update(recovered_tensor=floats(recovered), izz_admissible_interval=floats(interval))
        suggestion = (
            f'recovered tensor; izz is not in the file: {estimate:.6g} is an estimate (admissible '
            f'{interval[0]:.6g} … {interval[1]:.6g} kg·m²), take the real one from CAD:\n'
            + inertial_snippet(inertial.mass, inertial.origin.xyz, inertial.origin.rpy, recovered)
        )
    return [link_finding(link, 'row_major_slip', 'error', message, values, suggestion)]


def _izz_estimate(recovered: np.ndarray, inertial, geometry: Optional[LinkGeometry]) -> tuple:
    """The izz interval keeping ½tr(I)·1 − I ⪰ 0, and a value in it: the geometry's izz
    (clipped into the interval) if the link has readable geometry, else the midpoint."""
    upper = recovered[0, 0] + recovered[1, 1]
    candidates = np.linspace(0.0, upper, 2001)
    trials = np.repeat(recovered[None], len(candidates), axis=0)
    trials[:, 2, 2] = candidates
    second_moments = 0.5 * np.trace(trials, axis1=1, axis2=2)[:, None, None] * np.eye(3) - trials
    feasible = np.flatnonzero(np.linalg.eigvalsh(second_moments)[:, 0] >= 0.0)
    if len(feasible) == 0:
        return None, None
    step = candidates[1] - candidates[0]
    interval = (
        _feasibility_edge(recovered, candidates[feasible[0]], candidates[feasible[0]] - step),
        _feasibility_edge(recovered, candidates[feasible[-1]], candidates[feasible[-1]] + step),
    )
    if geometry is not None and geometry.solid is not None and not any(inertial.origin.rpy):
        return float(np.clip(geometry.solid.inertia_com(inertial.mass)[2, 2], *interval)), interval
    return 0.5 * (interval[0] + interval[1]), interval


def _feasibility_edge(recovered: np.ndarray, inside: float, outside: float) -> float:
    """Bisect izz between a feasible and an infeasible value to the edge of ½tr(I)·1 − I ⪰ 0."""
    trial = recovered.copy()
    for _ in range(60):
        middle = 0.5 * (inside + outside)
        trial[2, 2] = middle
        if np.linalg.eigvalsh(0.5 * np.trace(trial) * np.eye(3) - trial)[0] >= 0.0:
            inside = middle
        else:
            outside = middle
    return float(inside)


def all_entries_equal(inertial) -> bool:
    """ixx = ixy = ixz = iyy = iyz = izz ≠ 0: a placeholder (often 1e-6 or 1e-3)."""
    entries = np.array(
        [inertial.ixx, inertial.ixy, inertial.ixz, inertial.iyy, inertial.iyz, inertial.izz]
    )
    return bool(
        entries[0] != 0.0 and np.all(np.abs(entries - entries[0]) <= 1e-12 * abs(entries[0]))
    )


def is_consistent(tensor: np.ndarray) -> bool:
    """Whether a 3×3 inertia ``tensor`` [kg·m²] is physically possible: not zero, principal
    moments non-negative and satisfying the triangle inequality, each within its tolerance
    relative to the largest moment."""
    moments = np.linalg.eigvalsh(tensor)
    largest = float(np.abs(moments).max())
    return (
        largest > 0.0
        and float(triangle_margins(moments).min()) >= -TRIANGLE_TOLERANCE * largest
        and moments[0] >= -NEGATIVE_MOMENT_TOLERANCE * largest
    )


def pseudo_inertia_about_origin(inertial) -> np.ndarray:
    """4×4 pseudo-inertia about the link origin (pinocchio refuses to build a non-physical
    ``Inertia``, so the pinocchio-order 10-vector is assembled here)."""
    com = np.array(inertial.origin.xyz)
    about_origin = parallel_axis(inertial.tensor_in_link_frame(), inertial.mass, com)
    return pseudo_inertia_from_vector(
        np.concatenate(
            (
                [inertial.mass],
                inertial.mass * com,
                about_origin[[0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]],
            )
        )
    )
