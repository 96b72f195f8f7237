"""Checks that compare links with each other.

Mirror twins (left/right name pairs of equal mass) with different principal moments; mirror
images (CoM mirrored through a coordinate plane of the link frame) whose products of inertia
were not flipped; identical placeholder inertias on links that differ in mass or geometry;
``<mimic>`` couplings that cannot be modelled; transmissions naming joints the file lacks.
Mirroring follows REP 103 (y points left, so a left/right mirror flips y). SI units (kg, m,
kg·m²).
"""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ElementTree
from typing import Optional

import numpy as np

from robot_dynamics.core.model.urdf import (
    MOVING_JOINT_TYPES,
    UrdfDescription,
    UrdfLink,
    mimic_problems,
)
from robot_dynamics.core.validation.consumers import CONSUMERS, link_finding
from robot_dynamics.core.validation.context import DescriptionContext
from robot_dynamics.core.validation.formatting import floats, geometry_alternative, inertial_snippet
from robot_dynamics.core.validation.inertial_checks import is_consistent
from robot_dynamics.core.validation.report import Finding
from robot_dynamics.core.validation.thresholds import (
    MIRROR_MIN_OFFSET,
    MIRROR_RELATIVE_OFFSET,
    MIRROR_SIGN_MIN_PRODUCT,
    MIRROR_TOLERANCE,
    NEGLIGIBLE_GYRATION_RADIUS,
    PLACEHOLDER_EXTENT_TOLERANCE,
    PLACEHOLDER_MASS_TOLERANCE,
    SUBSTANTIAL_MASS,
)

_MIRROR_TOKENS = {
    'left': 'right',
    'l': 'r',
    'lf': 'rf',
    'lh': 'rh',
    'fl': 'fr',
    'hl': 'hr',
    'rl': 'rr',
    'lb': 'rb',
    'bl': 'br',
}
_MIRROR_TOKENS.update({right: left for left, right in list(_MIRROR_TOKENS.items())})
_MIRROR_TOKENS.update({right: left for left, right in list(_MIRROR_TOKENS.items())})

_SAGITTAL_MIRROR = np.diag([1.0, -1.0, 1.0])  # REP 103: y points left, so mirroring flips y


def mirror_twin_name(name: str) -> Optional[str]:
    """The left/right counterpart of a link name (``left_x``↔``right_x``, ``l_x``↔``r_x``,
    ``lf_x``↔``rf_x``, ``x_l``↔``x_r``...), or None if the name has no side token."""
    tokens = name.split('_')
    for index, token in enumerate(tokens):
        twin = _MIRROR_TOKENS.get(token.lower())
        if twin is not None:
            twin = (
                twin.upper()
                if token.isupper()
                else twin.capitalize()
                if token[0].isupper()
                else twin
            )
            return '_'.join(tokens[:index] + [twin] + tokens[index + 1 :])
    return None


def mirror_twin_findings(context: DescriptionContext) -> list:
    """Findings on left/right twin links (names that differ only by side) of equal mass whose
    principal moments differ beyond :data:`MIRROR_TOLERANCE`: which of the two is wrong."""
    links = context.description.links
    findings, seen = [], set()
    for name, link in links.items():
        twin_name = mirror_twin_name(name)
        if twin_name not in links or frozenset((name, twin_name)) in seen:
            continue
        seen.add(frozenset((name, twin_name)))
        twin = links[twin_name]
        if (
            {name, twin_name} & set(context.implausible)
            or not (link.inertial and twin.inertial)
            or link.inertial.mass <= 0.0
            or not math.isclose(link.inertial.mass, twin.inertial.mass, rel_tol=1e-9)
        ):
            continue
        moments = np.sort(np.linalg.eigvalsh(link.inertial.tensor()))
        twin_moments = np.sort(np.linalg.eigvalsh(twin.inertial.tensor()))
        scale = max(np.abs(moments).max(), np.abs(twin_moments).max())
        difference = float(np.abs(moments - twin_moments).max())
        if difference <= MIRROR_TOLERANCE * scale:
            continue
        findings.extend(_twin_pair_findings(link, twin, moments, twin_moments, difference / scale))
    return findings


def _twin_pair_findings(
    link: UrdfLink, twin: UrdfLink, moments, twin_moments, relative: float
) -> list:
    broken = {
        candidate.name: not is_consistent(candidate.inertial.tensor()) for candidate in (link, twin)
    }
    values = {
        'twin': twin.name,
        'mass': link.inertial.mass,
        'principal_moments': floats(moments),
        'twin_principal_moments': floats(twin_moments),
        'relative_difference': relative,
    }
    if broken[link.name] != broken[twin.name]:
        bad, good = (link, twin) if broken[link.name] else (twin, link)
        mirrored = _SAGITTAL_MIRROR @ good.inertial.tensor_in_link_frame() @ _SAGITTAL_MIRROR
        if bad is twin:
            values.update(
                twin=link.name,
                principal_moments=floats(twin_moments),
                twin_principal_moments=floats(moments),
            )
        values['recovered_tensor_link_axes'] = floats(mirrored)
        return [
            link_finding(
                bad,
                'mirror_twin',
                'warning',
                f'mirror twin "{good.name}" has the same mass ({bad.inertial.mass:.6g} kg) and a '
                'consistent inertia, this link does not (principal moments differ by '
                f'{100 * relative:.3g} %)',
                values,
                'the twin\'s inertia mirrored through the x-z plane (y lateral, REP 103; ixy and '
                'iyz change sign), link axes:\n'
                + inertial_snippet(
                    bad.inertial.mass, bad.inertial.origin.xyz, (0.0, 0.0, 0.0), mirrored
                ),
            )
        ]
    findings = []
    for this, other in ((link, twin), (twin, link)):
        own = dict(values, twin=other.name)
        if this is twin:
            own.update(
                principal_moments=floats(twin_moments), twin_principal_moments=floats(moments)
            )
        findings.append(
            link_finding(
                this,
                'mirror_twin',
                'warning',
                f'mirror twin "{other.name}" has the same mass but principal moments that differ '
                f'by {100 * relative:.3g} %',
                own,
                'the file does not say which side is right: compare both with CAD',
            )
        )
    return findings


def mirror_sign_findings(context: DescriptionContext) -> list:
    """Pairs of links of equal mass and equal moments whose CoMs are mirror images through a
    coordinate plane of the link frame (one coordinate negated), yet whose products of inertia
    are identical: mirroring through the plane normal to axis k flips the two products that
    involve k, so one of the two tensors kept the other's signs."""
    by_key: dict = {}  # a mirror partner has the same key once one CoM coordinate is negated
    for link in context.description.links.values():
        if (
            _is_substantial(link)
            and link.name not in context.implausible
            and not any(link.inertial.origin.rpy)
        ):
            by_key.setdefault(
                _mirror_key(link.inertial, np.array(link.inertial.origin.xyz)), []
            ).append(link)
    findings, seen = [], set()
    for members in list(by_key.values()):
        for first in members:
            com = np.array(first.inertial.origin.xyz)
            for axis in range(3):
                if abs(com[axis]) <= MIRROR_MIN_OFFSET:
                    continue
                mirrored = com.copy()
                mirrored[axis] = -mirrored[axis]
                for second in by_key.get(_mirror_key(first.inertial, mirrored), []):
                    pair = frozenset((first.name, second.name))
                    if (
                        pair in seen
                        or second is first
                        or _mirror_axis(first.inertial, second.inertial) != axis
                    ):
                        continue
                    seen.add(pair)
                    if not _products_kept_by_a_consistent_copy(first.inertial, axis):
                        findings.extend(_mirror_sign_pair(first, second, axis))
    return findings


def _products_kept_by_a_consistent_copy(inertial, axis: int) -> bool:
    """Some sign change D (D_axis = −1: a mirror through that plane, or with another sign free,
    a half-turn or a point inversion) maps one CoM onto the other and keeps every significant
    product of inertia: then identical products are right. A CoM coordinate under
    :data:`MIRROR_MIN_OFFSET` and under :data:`MIRROR_RELATIVE_OFFSET` of |c| is CAD-to-URDF
    noise, so its sign is free; a larger one keeps its sign."""
    com = np.array(inertial.origin.xyz)
    tensor = inertial.tensor()
    free = [
        k
        for k in range(3)
        if k != axis
        and abs(com[k])
        <= max(MIRROR_MIN_OFFSET, MIRROR_RELATIVE_OFFSET * float(np.linalg.norm(com)))
    ]
    significant = [
        (i, j)
        for i, j in ((0, 1), (0, 2), (1, 2))
        if abs(tensor[i, j]) > MIRROR_SIGN_MIN_PRODUCT * np.trace(tensor)
    ]
    for signs in itertools.product((1.0, -1.0), repeat=len(free)):
        change = np.ones(3)
        change[axis] = -1.0
        change[free] = signs
        if all(change[i] * change[j] > 0.0 for i, j in significant):
            return True
    return False


def _mirror_key(inertial, com: np.ndarray) -> tuple:
    return tuple(
        float(f'{value:.6g}')
        for value in (inertial.mass, inertial.ixx, inertial.iyy, inertial.izz, *com)
    )


def _mirror_axis(first, second) -> Optional[int]:
    """The axis k whose CoM coordinate the mirror negates (the others equal, the tensors'
    diagonals equal, the products identical and non-zero where they involve k), else None."""
    a, b = np.array(first.origin.xyz), np.array(second.origin.xyz)
    tolerance = 1e-6 + 1e-6 * float(np.abs(a).max())
    first_tensor, second_tensor = first.tensor(), second.tensor()
    if not np.allclose(
        np.diag(first_tensor), np.diag(second_tensor), rtol=1e-6, atol=0.0
    ) or not np.allclose(first_tensor, second_tensor, rtol=1e-9, atol=1e-15):
        return None
    for axis in range(3):
        others = [other for other in range(3) if other != axis]
        involved = [first_tensor[axis, other] for other in others]
        if (
            abs(a[axis]) > MIRROR_MIN_OFFSET
            and abs(a[axis] + b[axis]) <= tolerance
            and np.all(np.abs(a[others] - b[others]) <= tolerance)
            and max(abs(value) for value in involved)
            > MIRROR_SIGN_MIN_PRODUCT * np.trace(first_tensor)
        ):
            return axis
    return None


def _mirror_sign_pair(first: UrdfLink, second: UrdfLink, axis: int) -> list:
    names = 'xyz'
    tensor = first.inertial.tensor()
    involved = [
        f'i{"".join(sorted(names[axis] + names[other]))}'
        for other in range(3)
        if other != axis and tensor[axis, other] != 0.0
    ]
    mirror = np.ones(3)
    mirror[axis] = -1.0
    flipped = np.diag(mirror) @ first.inertial.tensor() @ np.diag(mirror)
    findings = []
    for this, other in ((first, second), (second, first)):
        findings.append(
            link_finding(
                this,
                'product_sign',
                'warning',
                f'its CoM mirrors the CoM of "{other.name}" through the plane {names[axis]} = 0 '
                f'(same mass and moments), but {" and ".join(involved)} '
                f'{"has" if len(involved) == 1 else "have"} the same sign on both: a mirror image '
                'flips them, so one of the two tensors is wrong',
                {
                    'twin': other.name,
                    'mirror_axis': names[axis],
                    'com': list(this.inertial.origin.xyz),
                    'twin_com': list(other.inertial.origin.xyz),
                    'mirrored_tensor_of_twin': floats(flipped),
                },
                'check which side CAD agrees with; the mirror image of the other link\'s tensor '
                f'(signs of {", ".join(involved)} flipped) is:\n'
                + inertial_snippet(
                    this.inertial.mass, this.inertial.origin.xyz, (0.0, 0.0, 0.0), flipped
                ),
            )
        )
    return findings


def mimic_findings(description: UrdfDescription, root: Optional[ElementTree.Element]) -> list:
    """A ``<mimic>`` that cannot be modelled, reported on the follower's child link: an
    unknown or non-moving leader or a non-moving follower (errors: Drake refuses the file), a
    chain of mimics (a warning: Drake loads it). ``root``: the parsed ``<robot>`` element (the
    parsed description drops the ``<mimic>`` of a fixed joint), or None."""
    problems = list(mimic_problems(description.joints))
    for element in root.findall('joint') if root is not None else ():
        name, joint = element.get('name'), description.joints.get(element.get('name'))
        if (
            joint is not None
            and joint.type not in MOVING_JOINT_TYPES
            and element.find('mimic') is not None
        ):
            problems.append(
                (
                    name,
                    f'{joint.type} joint "{name}" has a <mimic> (only a moving joint can follow '
                    'another)',
                )
            )
    findings = []
    for joint_name, reason in problems:
        joint = description.joints[joint_name]
        leader = description.joints.get(joint.mimic.joint) if joint.mimic else None
        chain = (
            leader is not None and leader.type in MOVING_JOINT_TYPES and leader.mimic is not None
        )
        findings.append(
            Finding(
                joint.child,
                'mimic',
                'warning' if chain else 'error',
                f'{reason}: the coupling is ignored by MuJoCo and pinocchio\'s parser, '
                + ('' if chain else 'Drake refuses the file, ')
                + 'and robot_dynamics refuses to build a dynamics model from this file',
                {'joint': joint_name, 'leader': joint.mimic.joint if joint.mimic else None},
                'name an existing, moving, non-mimic joint in <mimic joint=...>, or remove the '
                '<mimic>',
                CONSUMERS['mimic_chain' if chain else 'mimic'],
            )
        )
    return findings


def joint_range_findings(description: UrdfDescription) -> list:
    """A joint whose lower limit is above its upper one (no position is within its range; Drake
    refuses the whole file, naming no link: the finding is on ``''``)."""
    return [
        Finding(
            '',
            'joint_range',
            'error',
            f'joint "{joint.name}": lower limit {joint.limit.lower:g} is above upper limit '
            f'{joint.limit.upper:g}: no position is within its range, and Drake refuses the file',
            {'joint': joint.name, 'lower': joint.limit.lower, 'upper': joint.limit.upper},
            'swap the two values, or set the range the joint really has',
            CONSUMERS['joint_range'],
        )
        for joint in description.joints.values()
        if joint.limit is not None and joint.limit.lower > joint.limit.upper
    ]


def transmission_findings(
    description: UrdfDescription, root: Optional[ElementTree.Element]
) -> list:
    """A ``<transmission>`` naming a joint the file does not have (Drake refuses the file);
    ``root``: the parsed ``<robot>`` element, or None."""
    findings = []
    for element in root.findall('transmission') if root is not None else ():
        unknown = [
            joint.get('name')
            for joint in element.findall('joint')
            if joint.get('name') not in description.joints
        ]
        if unknown:
            findings.append(
                Finding(
                    '',
                    'transmission',
                    'error',
                    f'transmission "{element.get("name")}" names joint "{unknown[0]}", which the '
                    'file does not define: Drake refuses the file',
                    {'transmission': element.get('name'), 'unknown_joints': unknown},
                    'remove the transmission or name a joint of this file',
                    CONSUMERS['transmission'],
                )
            )
    return findings


def placeholder_findings(context: DescriptionContext) -> list:
    """A finding on each link of a group that shares one inertia tensor while their masses or
    geometries differ: a tensor copied as a placeholder."""
    groups: dict = {}
    for link in context.description.links.values():
        if _is_substantial(link) and link.name not in context.implausible:
            key = tuple(
                float(f'{value:.12g}') for value in link.inertial.tensor()[np.triu_indices(3)]
            )
            groups.setdefault(key, []).append(link)
    findings = []
    for members in groups.values():
        masses = {member.inertial.mass for member in members}
        if len(members) < 2 or _legitimately_equal(context, members):
            continue
        names = [member.name for member in members]
        for member in members:
            geometry = context.geometry(member)
            findings.append(
                link_finding(
                    member,
                    'placeholder',
                    'warning',
                    f'identical inertia tensor on {len(members)} links ({", ".join(names)}) with '
                    f'{"different masses" if len(masses) > 1 else "different geometry"}: a copied '
                    'placeholder',
                    {
                        'links': names,
                        'masses': sorted(masses),
                        'tensor': floats(member.inertial.tensor()),
                    },
                    'replace with each link\'s own inertia from CAD'
                    + (geometry_alternative(member.inertial.mass, geometry) if geometry else ''),
                )
            )
    return findings


def _is_substantial(link: UrdfLink) -> bool:
    """A link whose inertia matters for a cross-link comparison: over 1 g, non-zero tensor
    (dummy frames of 0.1 g with a token inertia are immaterial)."""
    inertial = link.inertial
    return bool(
        inertial is not None
        and inertial.mass > SUBSTANTIAL_MASS
        and float(np.abs(inertial.tensor()).max()) > NEGLIGIBLE_GYRATION_RADIUS**2 * inertial.mass
    )


def _is_isotropic(tensor: np.ndarray) -> bool:
    return bool(np.allclose(tensor, tensor[0, 0] * np.eye(3), rtol=1e-9, atol=0.0))


def _legitimately_equal(context: DescriptionContext, members: list) -> bool:
    """Identical or mirrored parts: equal masses (within 1 %) and either an anisotropic tensor
    (a made-up value is a multiple of the identity) or, where the links have readable
    geometry, the same sorted bounding-box extents (within 25 %; a mirror image keeps them,
    and mirroring leaves a tensor without products unchanged). Equal tensors on different
    masses are a copy: an inertia scales with its mass."""
    masses = [member.inertial.mass for member in members]
    if max(masses) > (1.0 + PLACEHOLDER_MASS_TOLERANCE) * min(masses):
        return False
    tensor = members[0].inertial.tensor()
    if not _is_isotropic(tensor):
        # the same mass and the same anisotropic tensor: the same part, not a made-up value
        return True
    extents = []
    for member in members:
        geometry = context.geometry(member)
        if geometry is not None and geometry.lower is not None:
            extents.append(np.sort(geometry.upper - geometry.lower))
    return all(
        np.all(
            np.abs(extent - extents[0])
            <= PLACEHOLDER_EXTENT_TOLERANCE * np.maximum(extents[0], 1e-3)
        )
        for extent in extents
    )
