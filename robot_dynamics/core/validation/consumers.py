"""What each consumer of a URDF does with each defect the checks find.

The consumers are MuJoCo, Drake, PyBullet and pinocchio-based controllers. Every sentence is
a measured behaviour: MuJoCo 4.0 (the corpus bench compiles each file), Drake 1.51 (pydrake:
parser, MultibodyPlant, M(q) and a short simulation, link by link on the corpus and the defect
cases) and PyBullet 3.2.7 (``loadURDF`` with and without ``URDF_USE_INERTIA_FROM_FILE``).

:data:`CONSUMERS` maps a reaction (a check name, or one of its variants when the consumers
treat the variants differently) to one sentence per consumer; :func:`link_finding` attaches
them to a new :class:`Finding`. A Drake sentence starts with Drake's verdict on the link
(:data:`DRAKE_VERDICTS`: ``refuses``, ``warns`` or ``accepts``) when the finding decides it;
any other first word means the verdict depends on something else (see the sentence).
"""

from __future__ import annotations

from typing import Optional

from robot_dynamics.core.model.urdf import UrdfLink
from robot_dynamics.core.validation.formatting import plain
from robot_dynamics.core.validation.report import Finding

DRAKE_VERDICTS = ('refuses', 'warns', 'accepts')

_MUJOCO_TRIANGLE = (
    "refuses to compile the model: \"inertia must satisfy A + B >= C; use 'balanceinertia' to "
    "fix\" (no tolerance: even a rounding-level violation is refused)"
)
_MUJOCO_MOVING_MASS = (
    'refuses to compile: "mass and inertia of moving bodies must be larger than mjMINVAL"'
)

_DRAKE_INVALID = (
    'warns ("The rotational inertia … did not pass the test CouldBePhysicallyValid()") and '
    'replaces the tensor by that of a solid sphere of the URDF mass at the URDF CoM with the '
    'density of water (1000 kg/m³): it simulates a different body'
)
_DRAKE_VALID_MOMENTS = (
    'accepts it without a warning: the principal moments pass Drake\'s CouldBePhysicallyValid() '
    '(tolerance about 2e-15 of the largest moment)'
)
_DRAKE_MASSLESS_SUBTREE = (
    'refuses to simulate (loading and M(q) succeed): "An internal mass matrix associated with the '
    'joint that connects body … to body … is not positive-definite"'
)
DRAKE_AXIS_REFUSAL = (
    'refuses to simulate (loading and M(q) succeed): its inertia about the axis of its joint is '
    'zero and nothing with mass moves below it: "An internal mass matrix associated with the joint '
    'that connects body … to body … is not positive-definite"'
)
"""Drake's sentence for a zero inertia or moment on a link its articulated-body algorithm
refuses."""
_DRAKE_WRONG_BODY = (
    'accepts it without a warning (unless a consistency finding on this link says otherwise) and '
    'simulates the wrong body'
)

_PYBULLET_INVALID = (
    'ignores the tensor by default (it computes an inertia from the collision shapes and the URDF '
    'mass); with URDF_USE_INERTIA_FROM_FILE it warns "Bad inertia tensor properties, setting '
    'inertia to zero" and simulates the link without rotational inertia (the root of a fixed base '
    'is not checked)'
)
_PYBULLET_TENSOR_IGNORED = (
    'ignores the tensor by default (it computes an inertia from the collision shapes and the URDF '
    'mass); with URDF_USE_INERTIA_FROM_FILE it uses the principal moments as written, without a '
    'warning'
)
_PYBULLET_MASSLESS = 'loads it without a warning, with zero mass and inertia'

_PINOCCHIO_MASS_MATRIX = (
    'no check: gravity compensation uses only mass and CoM and stays right, but the mass matrix '
    'M(q) can be indefinite, so inverse dynamics, feed-forward and operational-space controllers '
    'get wrong torques and forward dynamics / M⁻¹ may fail or diverge'
)

_ACCEPTED_WRONG = {
    'mujoco': 'accepts it (if no consistency error on this link) and simulates the wrong body',
    'drake': _DRAKE_WRONG_BODY,
    'pybullet': _PYBULLET_TENSOR_IGNORED,
    'pinocchio': 'no check: inverse dynamics, mass matrix and feed-forward torques carry the '
    'error; gravity torques are unaffected (they use mass and CoM only)',
}

_INVALID_TENSOR = {
    'mujoco': "refuses to compile: \"error 'inertia must have positive eigenvalues' in "
    "fullinertia\"",
    'drake': _DRAKE_INVALID,
    'pybullet': _PYBULLET_INVALID,
    'pinocchio': _PINOCCHIO_MASS_MATRIX,
}

_MIMIC_REFUSED = {
    'mujoco': 'warns and ignores the coupling: the follower moves freely',
    'drake': 'refuses the file ("Joint … mimic element specifies joint … which does not exist", '
    '"Joint … which has 0 DOF cannot mimic joint …")',
    'pybullet': 'loads it without a warning',
    'pinocchio': 'pinocchio\'s URDF parser builds the follower as an independent joint; '
    'robot_dynamics refuses the file',
}

CONSUMERS = {
    'parse': {
        'mujoco': 'cannot load the file',
        'drake': 'depends on the defect: refuses a file that is not well-formed XML ("Failed to '
        'parse XML") or whose <robot> has no name; loads a file without <link> as an '
        'empty model and a DOCTYPE without expanding its entities',
        'pybullet': 'cannot load a file that is not well-formed XML or has no <link> ("Cannot load '
        'URDF file")',
        'pinocchio': 'cannot build a model',
    },
    'robot_name': {
        'mujoco': 'compiles it',
        'drake': 'refuses the file ("Your robot must have a name attribute or a model name must be '
        'specified")',
        'pybullet': 'cannot load it ("Cannot load URDF file")',
        'pinocchio': 'pinocchio\'s URDF parser (urdfdom) refuses it ("The XML stream does not '
        'contain a valid URDF model"); robot_dynamics builds the model',
    },
    'mass': {
        'mujoco': _MUJOCO_MOVING_MASS,
        'drake': _DRAKE_MASSLESS_SUBTREE,
        'pybullet': _PYBULLET_MASSLESS,
        'pinocchio': 'the mass matrix is singular when nothing below the joint has mass: ABA / M⁻¹ '
        'divide by zero; RNEA returns zero torque for this joint',
    },
    'mass_above_joints': {
        'mujoco': _MUJOCO_MOVING_MASS,
        'drake': 'accepts it without a warning and simulates it (the mass hanging on the joints '
        'below keeps its articulated inertia positive)',
        'pybullet': _PYBULLET_MASSLESS,
        'pinocchio': 'copes: with mass below the next joints M(q) stays positive definite '
        '(human.urdf, 19 such links: λmin(M) = 1.1e-3 at q = 0)',
    },
    'mass_with_tensor': {
        'mujoco': _MUJOCO_MOVING_MASS,
        'drake': 'see the massless_inertia finding: Drake turns the massless link into a 1 kg '
        'sphere',
        'pybullet': _PYBULLET_MASSLESS,
        'pinocchio': 'the mass matrix is singular when nothing below the joint has mass or inertia',
    },
    'massless_inertia': {
        'mujoco': 'compiles it on a link welded by a fixed joint (a moving one is refused: see the '
        'mass finding)',
        'drake': 'warns ("While re-expressing as central inertia: … condition \'mass > 0\' '
        'failed") and replaces the link by a 1 kg solid sphere of water density (1000 '
        'kg/m³, radius 6.2 cm) at the URDF CoM: weight and inertia the file does not have',
        'pybullet': _PYBULLET_MASSLESS,
        'pinocchio': 'keeps the rotational inertia of a massless body: M(q) carries it, gravity '
        'does not',
    },
    'zero_mass_geometry': {
        'mujoco': 'fuses it into its parent when the joint is fixed; if it moves, refuses to '
        'compile (mass and inertia of moving bodies must be larger than mjMINVAL)',
        'drake': 'accepts it without a warning (a massless body with collision geometry)',
        'pybullet': 'loads it without a warning, with zero mass',
        'pinocchio': 'the link contributes no gravity or inertia: gravity compensation is short by '
        'its weight',
    },
    'zero_inertia': {
        'mujoco': 'refuses to compile a moving body: "mass and inertia of moving bodies must be '
        'larger than mjMINVAL"',
        'drake': 'accepts it without a warning and simulates a point mass (M(q) can be singular: '
        'iCub\'s point masses give λmin(M) = 2e-17 at q = 0)',
        'pybullet': 'ignores the tensor by default (it computes an inertia from the collision '
        'shapes and the URDF mass); with URDF_USE_INERTIA_FROM_FILE it simulates a '
        'point mass (rounding noise can also get the "Bad inertia tensor properties, '
        'setting inertia to zero" warning)',
        'pinocchio': 'point mass: M(q) is singular if a joint axis passes through the CoM',
    },
    'positive_definite': _INVALID_TENSOR,
    'zero_moment': {
        **_INVALID_TENSOR,
        'drake': _DRAKE_VALID_MOMENTS + ' and simulates the ideal rod',
    },
    'triangle_inequality': {
        'mujoco': _MUJOCO_TRIANGLE,
        'drake': _DRAKE_INVALID,
        'pybullet': _PYBULLET_INVALID,
        'pinocchio': _PINOCCHIO_MASS_MATRIX,
    },
    'triangle_rounding': {
        'mujoco': _MUJOCO_TRIANGLE,
        'drake': _DRAKE_VALID_MOMENTS,
        'pybullet': _PYBULLET_INVALID,
        'pinocchio': _PINOCCHIO_MASS_MATRIX,
    },
    'pseudo_inertia': {
        'mujoco': _MUJOCO_TRIANGLE,
        'drake': _DRAKE_VALID_MOMENTS,
        'pybullet': _PYBULLET_TENSOR_IGNORED,
        'pinocchio': _PINOCCHIO_MASS_MATRIX,
    },
    'row_major_slip': {
        'mujoco': 'loads it only if the slipped tensor is still consistent (see the consistency '
        'finding), and then simulates the wrong body',
        'drake': 'see the consistency finding on this link: Drake judges only the tensor as '
        'written',
        'pybullet': _PYBULLET_TENSOR_IGNORED,
        'pinocchio': _ACCEPTED_WRONG['pinocchio'],
    },
    'mirror_twin': _ACCEPTED_WRONG,
    'mimic': _MIMIC_REFUSED,
    'mimic_chain': {
        **_MIMIC_REFUSED,
        'drake': 'accepts it: loads and simulates the chained mimic without a warning',
    },
    'transmission': {
        'mujoco': 'ignores transmissions',
        'drake': 'refuses the file ("Transmission specifies joint … which does not exist")',
        'pybullet': 'ignores transmissions',
        'pinocchio': 'ignores transmissions',
    },
    'joint_range': {
        'mujoco': 'loads it: the range is kept as written and the URDF import leaves the joint '
        'unlimited',
        'drake': 'refuses the file (a failed condition: "pos_lower_limits <= pos_upper_limits")',
        'pybullet': 'loads the limits as written',
        'pinocchio': 'loads the limits as written: every check against them (capacity, excitation, '
        'limit diagnostics) sees an empty range',
    },
    'placeholder': _ACCEPTED_WRONG,
    'geometry_bound': _ACCEPTED_WRONG,
    'com_in_geometry': {
        **_ACCEPTED_WRONG,
        'pinocchio': 'no check: gravity torques are wrong by m·g·Δc (0.196 N·m per cm at 2 kg)',
    },
    'product_sign': _ACCEPTED_WRONG,
    'com_frame_rotation': _ACCEPTED_WRONG,
    'inertia_about_origin': _ACCEPTED_WRONG,
    'mesh_inertia': _ACCEPTED_WRONG,
    'mesh_orientation': {
        'mujoco': 'with <mesh inertia="exact"> refuses to compile: "mesh volume is negative '
        '(misoriented triangles)"; the default convex-hull inertia hides it',
        'drake': 'reads only .obj, .vtk and .gltf collision meshes (an .stl or .dae one makes it '
        'refuse the file: "MakeConvexHull only applies to .obj, .vtk, and .gltf meshes"); '
        'the winding of those was not measured',
        'pybullet': 'not measured (by default PyBullet computes the inertia from the collision '
        'shapes)',
        'pinocchio': 'unaffected (meshes are only used for collision/visuals)',
    },
    'magnitude': {
        'mujoco': 'loads it and simulates nonsense (or overflows)',
        'drake': 'accepts it without a warning (1e9 kg and 1e8 kg·m² were measured) and simulates '
        'nonsense',
        'pybullet': 'loads it without a warning',
        'pinocchio': 'no check: every torque involving this link is wrong',
    },
    'mesh': {
        'mujoco': 'needs the mesh file to compile the model',
        'drake': 'reads the collision meshes (with a SceneGraph): refuses the file if one is '
        'missing, in an unknown package ("refers to unknown package") or not .obj, .vtk '
        'or .gltf',
        'pybullet': 'needs the mesh file for the collision shape',
        'pinocchio': 'unaffected (rigid-body dynamics do not use meshes)',
    },
}


def link_finding(
    link: UrdfLink,
    check: str,
    severity: str,
    message: str,
    values: dict,
    suggestion: Optional[str],
    reaction: str = '',
    drake: str = '',
) -> Finding:
    """A finding on ``link`` with JSON-ready ``values`` and what each consumer does with it:
    the sentences of ``reaction`` (a variant of ``check``), or of ``check`` by default; ``drake``
    replaces Drake's sentence when the link's situation decides it (see DRAKE_AXIS_REFUSAL)."""
    consumers = CONSUMERS[reaction or check]
    return Finding(
        link.name,
        check,
        severity,
        message,
        plain(values),
        suggestion,
        {**consumers, 'drake': drake} if drake else consumers,
    )


def drake_verdict(sentence: str) -> str:
    """The verdict a Drake sentence states on the link ('refuses', 'warns', 'accepts'), or ''."""
    first = sentence.split(' ', 1)[0]
    return first if first in DRAKE_VERDICTS else ''
