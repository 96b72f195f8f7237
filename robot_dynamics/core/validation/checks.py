"""Inertia validation: what is wrong with a URDF's inertial parameters, and how to fix it.

:func:`validate_description` runs every check on every link of a parsed description and
returns a :class:`ValidationReport` of :class:`Finding` objects. Each finding names the
link and the check, proves the defect with numbers (``values``), proposes a fix (often a
ready URDF ``<inertial>`` snippet) and says what each consumer (MuJoCo, Drake, PyBullet,
pinocchio-based controllers) does with such a link.

Checks (the physical-consistency conditions, triangle inequality and pseudo-inertia LMI, of
Wensing, Kim & Slotine 2017):

* per link: implausible magnitudes (unit slips); mass of moving links; ``mass="0"`` with
  collision geometry or with inertia; I_C positive
  semi-definite (principal moments and axes); triangle inequality of the principal
  moments; pseudo-inertia J ⪰ 0; a row-major transcription slip (``iyy`` repeating ``ixy``);
* against the link's geometry (the union of its collision and visual shapes: boxes,
  cylinders, spheres, meshes incl. COLLADA): CoM inside the bounding box; principal moments
  under the largest value a body of that mass inside that box can have (over 10× an error);
  the uniform-density inertia of the geometry against the URDF one (products with flipped
  signs, a rotated CoM frame, inertia about the link origin);
* across links: mirror twins (left/right name pairs of equal mass) with different principal
  moments; mirror images (CoM mirrored through a coordinate plane) with unflipped products;
  identical placeholder inertias on links that differ in mass; ``<mimic>`` couplings that
  cannot be modelled (a finding, not a refusal of the file); transmissions of unknown joints;
  joint ranges whose lower limit is above the upper;
  a ``<robot>`` without a name.

Severities follow the consumers: an error wherever MuJoCo or Drake refuses the link or the
file (checked link by link on the example-robot-data corpus) or no body of that mass fits the
geometry; warnings only where the file is wrong but loads.

Conventions: URDF ``<inertial>`` (origin = CoM frame in the link frame, tensor entries about
the CoM in the CoM frame, ixy = −∫ρxy dV). All values in SI units: kg, m, kg·m². "Link
axes" means the inertia about the CoM expressed along the link frame's axes.

This module holds the entry points; the checks live in ``inertial_checks`` (one link on its
own), ``geometry_checks`` (a link against its geometry) and ``cross_link_checks``, their
tolerances in ``thresholds``, the consumers' reactions in ``consumers`` and the result types
in ``report``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Mapping, Optional, Sequence

import numpy as np

from robot_dynamics.core.errors import DescriptionError, RobotDynamicsError
from robot_dynamics.core.model.inertia import principal_inertia, triangle_margins
from robot_dynamics.core.model.urdf import (
    MAX_DESCRIPTION_BYTES,
    MAX_LINKS,
    UrdfDescription,
    UrdfLink,
    parse_urdf,
    read_description_file,
)
from robot_dynamics.core.validation.consumers import CONSUMERS, link_finding
from robot_dynamics.core.validation.context import DescriptionContext
from robot_dynamics.core.validation.cross_link_checks import (
    joint_range_findings,
    mimic_findings,
    mirror_sign_findings,
    mirror_twin_findings,
    placeholder_findings,
    transmission_findings,
)
from robot_dynamics.core.validation.formatting import plain
from robot_dynamics.core.validation.geometry_checks import geometry_findings
from robot_dynamics.core.validation.inertial_checks import (
    consistency_findings,
    mass_findings,
    mesh_notes,
    pseudo_inertia_about_origin,
    row_major_slip_findings,
    zero_inertia_finding,
)
from robot_dynamics.core.validation.report import SEVERITIES, Finding, ValidationReport
from robot_dynamics.core.validation.thresholds import (
    MUJOCO_MIN_VALUE,
    NEGLIGIBLE_GYRATION_RADIUS,
    PLAUSIBLE_LIMITS,
)

_RECOVERING_CHECKS = (
    'row_major_slip',
    'product_sign',
    'inertia_about_origin',
    'com_frame_rotation',
)


def validate_urdf_text(
    text: str,
    package_paths: Optional[Mapping[str, str]] = None,
    allowed_roots: Sequence[str] = (),
    floating_base: bool = False,
) -> ValidationReport:
    """Parse ``text`` safely and validate it. Never raises for a bad description: an
    unparseable, unsafe or oversize text gives a report with one error finding (check 'parse')."""
    try:
        # No pinocchio model is built here, so the joint-count limit that protects its memory
        # does not apply: any tree within the link limit is validated.
        description = parse_urdf(text, max_moving_joints=MAX_LINKS, strict_mimics=False)
    except RobotDynamicsError as error:
        return parse_failure_report(str(error))
    return validate_description(description, package_paths, allowed_roots, floating_base)


def validate_file(
    path,
    package_paths: Optional[Mapping[str, str]] = None,
    allowed_roots: Sequence[str] = (),
    floating_base: bool = False,
) -> ValidationReport:
    """Validate a URDF or xacro file (``.xacro`` is expanded with the ``xacro`` package, its
    ``$(find NAME)`` resolved from ``package_paths`` first, then parsed by the same safe parser).
    Never raises for a bad file: a 'parse' error finding."""
    path = Path(path)
    try:
        if path.suffix == '.xacro':
            text = _expand_xacro(path, package_paths or {})
        else:
            text = read_description_file(path)
    except RobotDynamicsError as error:
        return parse_failure_report(str(error))
    return validate_urdf_text(text, package_paths, allowed_roots, floating_base)


def _expand_xacro(path: Path, package_paths: Mapping[str, str]) -> str:
    if not path.is_file() or path.stat().st_size > MAX_DESCRIPTION_BYTES:
        raise DescriptionError(
            f'xacro file {path} is missing or over the {MAX_DESCRIPTION_BYTES}-byte limit'
        )
    import xacro  # only the CLI needs it; a node never expands xacro from the ROS graph

    try:
        with _ament_index_with(package_paths):
            return xacro.process_file(str(path)).toxml()
    except BaseException as error:  # xacro raises XacroException, XML errors, and even SystemExit
        if isinstance(error, KeyboardInterrupt):
            raise
        reason = str(error).replace("<class 'OSError'>: ", '')
        if 'ament_index_python' in reason:
            reason += (
                " (xacro resolves $(find NAME) with ament_index_python, part of ROS 2: expand "
                'the file where ROS 2 is installed)'
            )
        elif 'AMENT_PREFIX_PATH' in reason or 'not found' in reason.lower():
            reason = (
                f'{reason.split(" Environment variable")[0]} (a $(find NAME) of a package this '
                'machine does not know: give --package-path NAME=DIR)'
            )
        raise DescriptionError(f'xacro cannot expand {path}: {reason}') from None


@contextlib.contextmanager
def _ament_index_with(package_paths: Mapping[str, str]):
    """The ament index (``AMENT_PREFIX_PATH``) extended, while inside, by a temporary prefix that
    holds each of ``package_paths`` (name → directory), so that xacro's ``$(find NAME)`` finds
    it there first."""
    if not package_paths:
        yield
        return
    before = os.environ.get('AMENT_PREFIX_PATH')
    with tempfile.TemporaryDirectory(prefix='robot_dynamics_ament_') as prefix:
        index = Path(prefix, 'share', 'ament_index', 'resource_index', 'packages')
        index.mkdir(parents=True)
        for name, directory in package_paths.items():
            (index / name).touch()
            Path(prefix, 'share', name).symlink_to(Path(directory).resolve())
        os.environ['AMENT_PREFIX_PATH'] = os.pathsep.join(filter(None, [prefix, before]))
        try:
            yield
        finally:
            if before is None:
                os.environ.pop('AMENT_PREFIX_PATH', None)
            else:
                os.environ['AMENT_PREFIX_PATH'] = before


def parse_failure_report(reason: str, robot_name: str = '') -> ValidationReport:
    """A report holding the single 'parse' error ``reason``."""
    return ValidationReport(
        robot_name,
        0.0,
        [
            Finding(
                '',
                'parse',
                'error',
                f'the description cannot be used: {reason}',
                suggestion='fix the file so that it parses as a URDF tree',
                consumers=CONSUMERS['parse'],
            )
        ],
    )


def validate_description(
    description: UrdfDescription,
    package_paths: Optional[Mapping[str, str]] = None,
    allowed_roots: Sequence[str] = (),
    floating_base: bool = False,
) -> ValidationReport:
    """Run every check on every link of ``description`` (see the module docstring).

    ``package_paths`` maps ROS package names to directories for ``package://`` meshes (the
    ament index is tried after it); ``file://`` and plain mesh paths are read only under
    ``allowed_roots``. ``floating_base``: the root link moves too (free-flyer).
    """
    context = DescriptionContext(
        description,
        dict(package_paths or {}),
        tuple(str(root) for root in allowed_roots),
        floating_base,
    )
    findings = _robot_name_findings(description)
    for link in description.links.values():
        findings.extend(_link_findings(context, link))
    findings.extend(mirror_twin_findings(context))
    findings.extend(placeholder_findings(context))
    findings.extend(mirror_sign_findings(context))
    root = _robot_element(description.text)
    findings.extend(mimic_findings(description, root))
    findings.extend(transmission_findings(description, root))
    findings.extend(joint_range_findings(description))
    order = {name: index for index, name in enumerate(description.links)}
    findings.sort(
        key=lambda finding: (order.get(finding.link, -1), -SEVERITIES.index(finding.severity))
    )
    properties = {name: _link_properties(context, link) for name, link in description.links.items()}
    return ValidationReport(
        description.name, description.total_mass(), findings, len(description.links), properties
    )


def _robot_name_findings(description: UrdfDescription) -> list:
    if description.name:
        return []
    message = '<robot> has no name attribute (the URDF format requires one)'
    return [
        Finding(
            '',
            'robot_name',
            'error',
            message,
            {},
            'add name="..." to <robot>',
            CONSUMERS['robot_name'],
        )
    ]


def _robot_element(text: str) -> Optional[ElementTree.Element]:
    """The ``<robot>`` element of a description the safe parser accepted (None if absent)."""
    try:
        return ElementTree.fromstring(text) if text else None
    except ElementTree.ParseError:
        return None


def _link_findings(context: DescriptionContext, link: UrdfLink) -> list:
    if link.name in context.implausible:
        return [
            link_finding(
                link,
                'magnitude',
                'error',
                'values no robot link can have: '
                + ', '.join(context.implausible[link.name])
                + '; the other checks of this link are skipped',
                {'limits': PLAUSIBLE_LIMITS},
                'check the units (SI: kg, m, kg·m²) and the exponents',
            )
        ]
    geometry = context.geometry(link)
    findings = mass_findings(context, link)
    massive = link.inertial is not None and link.inertial.mass > 0.0
    if geometry is not None:
        findings.extend(mesh_notes(link, geometry, massive))
    if not massive:
        return findings
    inertia = link.inertial.tensor()
    largest_entry = float(np.abs(inertia).max())
    if (
        largest_entry <= NEGLIGIBLE_GYRATION_RADIUS**2 * link.inertial.mass
        or largest_entry < MUJOCO_MIN_VALUE
    ):
        return findings + [zero_inertia_finding(context, link, largest_entry)]
    recovered = row_major_slip_findings(link, geometry)
    if geometry is not None and geometry.lower is not None:
        recovered.extend(geometry_findings(link, geometry))
    recovering = [finding.check for finding in recovered if finding.check in _RECOVERING_CHECKS]
    return findings + consistency_findings(context, link, geometry, recovering) + recovered


def _link_properties(context: DescriptionContext, link: UrdfLink) -> dict:
    properties = {
        'mass': link.inertial.mass if link.inertial else 0.0,
        'moves': context.moves(link.name),
    }
    if (
        link.inertial is None
        or link.inertial.mass <= 0.0
        or not np.any(link.inertial.tensor())
        or link.name in context.implausible
    ):
        return properties
    moments, axes = principal_inertia(link.inertial.tensor_in_link_frame())
    properties.update(
        com=list(link.inertial.origin.xyz),
        principal_moments=moments,
        principal_axes=axes.T,
        triangle_margin_relative=float(triangle_margins(moments).min() / np.abs(moments).max()),
        pseudo_inertia_min_eigenvalue=_smallest_eigenvalue(
            pseudo_inertia_about_origin(link.inertial)
        ),
    )
    return plain(properties)


def _smallest_eigenvalue(symmetric: np.ndarray) -> float:
    return float(np.linalg.eigvalsh(symmetric)[0])
