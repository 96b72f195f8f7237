"""Every tolerance and limit the inertia checks use, with the reason for its value.

Units: SI (kg, m, kg·m², kg/m³, rad); a fraction is relative to the quantity its docstring
names. The checks that use them live in ``inertial_checks``, ``geometry_checks`` and
``cross_link_checks``.
"""

from __future__ import annotations

import math

TRIANGLE_TOLERANCE = 1e-6
"""Triangle-inequality violations up to this fraction of the largest principal moment are
rounding-level (a warning: physically fine, but MuJoCo's compiler has no tolerance)."""

NEGATIVE_MOMENT_TOLERANCE = 1e-9
"""A principal moment below −(this × the largest |moment|) is negative (not rounding)."""

GEOMETRY_BOUND_TOLERANCE = 0.10
"""A principal moment may exceed the bounding-box admissible value by 10 % (coarse geometry)."""

COM_MARGIN_FRACTION = 0.10
"""The CoM may lie outside the geometry's bounding box by 10 % of its largest extent (+1 mm)."""

PATTERN_AGREEMENT = 0.15
"""Relative Frobenius distance under which a corrected tensor 'matches' the geometry's."""

MIRROR_TOLERANCE = 0.10
"""Mirror twins' principal moments may differ by 10 % of the largest moment (two CAD exports
of mirrored parts differ by a few %; a copy slip or a unit slip by far more)."""

ROTATION_DEGENERACY = 0.20
"""Principal moments closer than 20 % of the largest leave their axes undetermined (a CAD
export and a uniform-density mesh differ by that much)."""

ROTATION_MIN_ANGLE = math.radians(15.0)
"""A CoM-frame rotation is reported only if a determined principal axis is off by 15° or more."""

MAX_MATERIAL_DENSITY = 2.3e4
"""Densest engineering material [kg/m³] (osmium 22 600, tungsten 19 300): a geometry whose
bounding box would need more to hold the link's mass is a marker, not the body."""

MIRROR_MIN_OFFSET = 1e-3
"""A CoM coordinate [m] under 1 mm does not tell a mirror image from the same placement."""

MIRROR_RELATIVE_OFFSET = 0.05
"""A CoM coordinate under 5 % of the CoM's distance from the link origin (and under
:data:`MIRROR_MIN_OFFSET`) does not tell which way a mirrored or rotated copy faces: it is
within what a CAD export and a URDF differ by."""

MIRROR_SIGN_MIN_PRODUCT = 0.01
"""Products under 1 % of the tensor's trace are too small for their sign to matter."""

SUBSTANTIAL_MASS = 1e-3
"""Links up to 1 g (sensor and marker frames) are left out of the cross-link checks."""

PLACEHOLDER_MASS_TOLERANCE = 0.01
"""Links whose masses agree within 1 % count as the same part for the placeholder check."""

PLACEHOLDER_EXTENT_TOLERANCE = 0.25
"""Sorted bounding-box extents within 25 % (of the first link's, at least 1 mm) count as the
same part for the placeholder check (a mirror image keeps them)."""

MUJOCO_MIN_VALUE = 1e-15
"""MuJoCo's mjMINVAL [kg, kg·m²]: it refuses a principal moment at or below it (any body)
and a moving body whose mass or inertia is below it."""

DRAKE_INERTIA_TOLERANCE = 2e-15
"""Negative principal moments and triangle-inequality violations up to this fraction of the
largest moment pass Drake's ``CouldBePhysicallyValid()`` (measured with Drake 1.51: 1e-15
passes, 4e-15 is warned about)."""

NEGLIGIBLE_GYRATION_RADIUS = 1e-6
"""An inertia whose entries are all below m·(1 µm)² is a point mass written with rounding
noise (no robot part of that mass is that small)."""

GEOMETRY_BOUND_ERROR_RATIO = 10.0
"""A principal moment over 10× the largest one any body of that mass inside the link's whole
geometry can have is an error: neither a coarse proxy nor a non-uniform density explains it."""

PLAUSIBLE_LIMITS = {'mass': 1e5, 'inertia': 1e6, 'length': 1e3}
"""Largest magnitudes [kg, kg·m², m] any robot link can have; beyond them a value is a unit
or typing error, and the link's other checks are skipped (they would only overflow)."""
