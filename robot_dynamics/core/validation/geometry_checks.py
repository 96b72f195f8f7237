"""Checks of a link's inertial parameters against its geometry.

The geometry (``context.LinkGeometry``, link frame) gives a bounding box and, where every
shape of a set is a closed solid, a uniform-density inertia. Checks: the CoM inside the box;
each principal moment under the largest value any body of that mass inside the box can have;
the URDF tensor against the uniform-density one, with three transcription hypotheses that
explain a mismatch (flipped product signs, a rotated CoM frame, the inertia taken about the
link origin). Tensors are compared in link axes about the CoM [kg·m²], by relative Frobenius
distance.
"""

from __future__ import annotations

import math

import numpy as np

from robot_dynamics.core.model.inertia import principal_inertia
from robot_dynamics.core.model.urdf import UrdfLink
from robot_dynamics.core.validation.consumers import link_finding
from robot_dynamics.core.validation.context import LinkGeometry
from robot_dynamics.core.validation.formatting import (
    floats,
    geometry_alternative,
    geometry_snippet,
    inertial_snippet,
    vector_text,
)
from robot_dynamics.core.validation.thresholds import (
    COM_MARGIN_FRACTION,
    GEOMETRY_BOUND_ERROR_RATIO,
    GEOMETRY_BOUND_TOLERANCE,
    MAX_MATERIAL_DENSITY,
    PATTERN_AGREEMENT,
    ROTATION_DEGENERACY,
    ROTATION_MIN_ANGLE,
    SUBSTANTIAL_MASS,
)


def geometry_findings(link: UrdfLink, geometry: LinkGeometry) -> list:
    """Findings of ``link``'s inertial against its geometry (``geometry``, in the link frame
    [m]): a CoM outside the geometry's bounding box (then nothing else), moments beyond what the
    geometry can carry, and the patterns a solid mesh reveals."""
    inertial = link.inertial
    com = np.array(inertial.origin.xyz)
    extent = geometry.upper - geometry.lower
    if _is_marker(geometry, inertial.mass):
        return _bound_findings(link, geometry, com, marker=True)
    margin = COM_MARGIN_FRACTION * float(extent.max()) + 1e-3
    outside = np.maximum(geometry.lower - margin - com, com - geometry.upper - margin)
    findings = []
    if outside.max() > 0.0:
        findings.append(
            link_finding(
                link,
                'com_in_geometry',
                'warning',
                f'CoM {vector_text(com)} m lies {outside.max() + margin:.4g} m outside the '
                f'bounding box {vector_text(geometry.lower)} … {vector_text(geometry.upper)} m of '
                f'its {geometry.source} geometry',
                {
                    'com': floats(com),
                    'box_lower': floats(geometry.lower),
                    'box_upper': floats(geometry.upper),
                    'margin': margin,
                },
                'check <inertial><origin xyz>: it is the CoM in the link frame (not in the parent '
                'joint or CAD frame)' + geometry_alternative(inertial.mass, geometry),
            )
        )
        return findings
    findings.extend(_bound_findings(link, geometry, com))
    if geometry.solid is not None:
        findings.extend(_pattern_findings(link, geometry))
    return findings


def _is_marker(geometry: LinkGeometry, mass: float) -> bool:
    """The geometry cannot hold the link's mass (its bounding box would need a density over
    :data:`MAX_MATERIAL_DENSITY`): a marker such as a 1 mm sphere, not the body."""
    volume = float(np.prod(np.maximum(geometry.upper - geometry.lower, 0.0)))
    return mass > MAX_MATERIAL_DENSITY * volume


def _bound_findings(
    link: UrdfLink, geometry: LinkGeometry, com: np.ndarray, marker: bool = False
) -> list:
    """A body of mass m inside a box has, about any axis n through its CoM c, at most
    m · max over the box corners p of |(p−c) × n|² (the squared distance is convex).
    Against a ``marker`` geometry (one that cannot hold the mass) only a warning."""
    inertial = link.inertial
    if inertial.mass < SUBSTANTIAL_MASS:
        return []  # a token inertia on a sub-gram marker frame does not matter
    moments, axes = principal_inertia(inertial.tensor_in_link_frame())
    corners = (
        np.array(
            [
                [x, y, z]
                for x in (geometry.lower[0], geometry.upper[0])
                for y in (geometry.lower[1], geometry.upper[1])
                for z in (geometry.lower[2], geometry.upper[2])
            ]
        )
        - com
    )
    bounds = np.array(
        [inertial.mass * np.max(np.sum(np.cross(corners, axis) ** 2, axis=1)) for axis in axes.T]
    )
    if np.any(bounds <= 0.0):
        return []  # flat or point-like geometry: no meaningful bound
    ratios = moments / bounds
    worst = int(np.argmax(ratios))
    if ratios[worst] <= 1.0 + GEOMETRY_BOUND_TOLERANCE:
        return []
    severity = 'error' if ratios[worst] > GEOMETRY_BOUND_ERROR_RATIO and not marker else 'warning'
    gyration = math.sqrt(max(float(moments[worst]), 0.0) / inertial.mass)
    return [
        link_finding(
            link,
            'geometry_bound',
            severity,
            f'principal moment λ{worst + 1} = {moments[worst]:.6g} kg·m² is {ratios[worst]:.3g}× '
            f'the largest value ({bounds[worst]:.4g} kg·m²) a {inertial.mass:.4g} kg body inside '
            f'its {geometry.source} bounding box can have'
            + (
                ' (the geometry is only a marker: it cannot hold the mass; the inertia needs a '
                f'radius of gyration of {gyration:.3g} m)'
                if marker
                else ''
            ),
            {
                'principal_moments': floats(moments),
                'admissible_bounds': floats(bounds),
                'ratios': floats(ratios),
                'box_lower': floats(geometry.lower),
                'box_upper': floats(geometry.upper),
            },
            'check the units (g·mm² or kg·mm² instead of kg·m²?) and the reference point (about '
            'the CoM, not the joint)' + geometry_alternative(inertial.mass, geometry),
        )
    ]


def _pattern_findings(link: UrdfLink, geometry: LinkGeometry) -> list:
    """Compare the URDF tensor (link axes) with the geometry's uniform-density tensor for
    the same mass, and test three transcription hypotheses that would explain a mismatch."""
    inertial = link.inertial
    reference = geometry.solid.inertia_com(inertial.mass)
    if np.linalg.norm(np.array(inertial.origin.xyz) - geometry.solid.centroid) > 0.25 * float(
        np.max(geometry.upper - geometry.lower)
    ):
        return []
    rotation = inertial.origin.rotation()
    file_tensor = inertial.tensor()
    link_tensor = rotation @ file_tensor @ rotation.T
    distance = _relative_distance(link_tensor, reference)
    if distance <= PATTERN_AGREEMENT:
        return []
    hypotheses = [
        _sign_hypothesis(link, file_tensor, rotation, reference),
        _origin_hypothesis(link, link_tensor, reference),
        _rotation_hypothesis(link, link_tensor, reference),
    ]
    explained = [
        h
        for h in hypotheses
        if h is not None and h[0] <= PATTERN_AGREEMENT and h[0] < 0.5 * distance
    ]
    if explained:
        best = min(explained, key=lambda h: h[0])
        best[1].values.update(
            distance_to_geometry_as_written=distance, distance_to_geometry_corrected=best[0]
        )
        return [best[1]]
    if geometry.mesh_files:
        return [
            link_finding(
                link,
                'mesh_inertia',
                'info',
                f'the URDF inertia differs by {100 * distance:.3g} % (Frobenius) from the '
                'uniform-density inertia of its mesh for the same mass; fine if the density is '
                'not uniform',
                {
                    'urdf_inertia_link_axes': floats(link_tensor),
                    'mesh_inertia_link_axes': floats(reference),
                    'relative_difference': distance,
                },
                'mesh-derived inertial for comparison:\n'
                + geometry_snippet(inertial.mass, geometry.solid),
            )
        ]
    return []


def _sign_hypothesis(
    link: UrdfLink, file_tensor: np.ndarray, rotation: np.ndarray, reference: np.ndarray
):
    """Flipped product signs, considered only when the products matter (the largest over 5 % of
    the trace) and turn a determined principal axis :data:`ROTATION_MIN_ANGLE` or more away from
    the geometry's: with the axes in place, a sign that differs from the uniform-density
    solid's belongs to a small product a non-uniform density explains."""
    products = np.array([file_tensor[0, 1], file_tensor[0, 2], file_tensor[1, 2]])
    file_axes = principal_inertia(rotation @ file_tensor @ rotation.T)
    if (
        np.abs(products).max() < 0.05 * np.trace(reference)
        or _largest_determined_misalignment(*file_axes, *principal_inertia(reference))
        < ROTATION_MIN_ANGLE
    ):
        return None
    best = None
    for flips in (
        (-1, -1, -1),
        (-1, 1, 1),
        (1, -1, 1),
        (1, 1, -1),
        (-1, -1, 1),
        (-1, 1, -1),
        (1, -1, -1),
    ):
        signs = np.ones((3, 3))
        signs[0, 1] = signs[1, 0] = flips[0]
        signs[0, 2] = signs[2, 0] = flips[1]
        signs[1, 2] = signs[2, 1] = flips[2]
        corrected = file_tensor * signs
        distance = _relative_distance(rotation @ corrected @ rotation.T, reference)
        if best is None or distance < best[0]:
            best = (distance, corrected, flips)
    distance, corrected, flips = best
    names = [name for name, flip in zip(('ixy', 'ixz', 'iyz'), flips) if flip < 0]
    inertial = link.inertial
    finding = link_finding(
        link,
        'product_sign',
        'warning',
        f'products of inertia {", ".join(names)} have the wrong sign: flipping them matches the '
        'geometry (URDF uses tensor entries, ixy = −∫ρxy dV; CAD tools often print +∫ρxy dV)',
        {'flipped': names, 'recovered_tensor': floats(corrected)},
        'recovered tensor (signs of '
        + ', '.join(names)
        + ' flipped):\n'
        + inertial_snippet(inertial.mass, inertial.origin.xyz, inertial.origin.rpy, corrected),
    )
    return distance, finding


def _origin_hypothesis(link: UrdfLink, link_tensor: np.ndarray, reference: np.ndarray):
    inertial = link.inertial
    com = np.array(inertial.origin.xyz)
    shift = inertial.mass * (com @ com * np.eye(3) - np.outer(com, com))
    if np.trace(shift) < 0.1 * np.trace(reference):
        return None
    corrected = link_tensor - shift
    finding = link_finding(
        link,
        'inertia_about_origin',
        'warning',
        'the inertia looks taken about the link origin, not the CoM: removing the parallel-axis '
        f'term m(|c|²·1 − c cᵀ) (trace {np.trace(shift):.4g} kg·m²) matches the geometry',
        {'parallel_axis_term': floats(shift), 'recovered_tensor_link_axes': floats(corrected)},
        'recovered inertia about the CoM (link axes):\n'
        + inertial_snippet(inertial.mass, inertial.origin.xyz, (0.0, 0.0, 0.0), corrected),
    )
    return _relative_distance(corrected, reference), finding


def _rotation_hypothesis(link: UrdfLink, link_tensor: np.ndarray, reference: np.ndarray):
    moments, axes = principal_inertia(link_tensor)
    reference_moments, reference_axes = principal_inertia(reference)
    if (
        _largest_determined_misalignment(moments, axes, reference_moments, reference_axes)
        < ROTATION_MIN_ANGLE
    ):
        return None  # only axes of (nearly) equal moments differ: those axes are arbitrary
    corrected = reference_axes @ np.diag(moments) @ reference_axes.T
    inertial = link.inertial
    finding = link_finding(
        link,
        'com_frame_rotation',
        'warning',
        'the principal moments match the geometry but the principal axes do not: the CoM frame '
        '(<inertial><origin rpy>) or the tensor is rotated',
        {
            'principal_moments': floats(moments),
            'geometry_principal_moments': floats(reference_moments),
            'recovered_tensor_link_axes': floats(corrected),
        },
        'the file\'s principal moments on the geometry\'s principal axes (link axes):\n'
        + inertial_snippet(inertial.mass, inertial.origin.xyz, (0.0, 0.0, 0.0), corrected),
    )
    return _relative_distance(corrected, reference), finding


def _largest_determined_misalignment(moments, axes, reference_moments, reference_axes) -> float:
    """Largest angle [rad] between matching principal axes of two tensors, over the axes
    both determine: an axis whose moment is within :data:`ROTATION_DEGENERACY` (of the
    largest moment) of another one can turn freely in their common plane."""
    largest = max(float(np.max(np.abs(moments))), float(np.max(np.abs(reference_moments))))
    worst = 0.0
    for index in range(3):
        others = [other for other in range(3) if other != index]
        if (
            min(abs(moments[index] - moments[other]) for other in others)
            < ROTATION_DEGENERACY * largest
            or min(abs(reference_moments[index] - reference_moments[other]) for other in others)
            < ROTATION_DEGENERACY * largest
        ):
            continue
        cosine = min(1.0, abs(float(axes[:, index] @ reference_axes[:, index])))
        worst = max(worst, math.acos(cosine))
    return worst


def _relative_distance(tensor: np.ndarray, reference: np.ndarray) -> float:
    return float(np.linalg.norm(tensor - reference) / np.linalg.norm(reference))
