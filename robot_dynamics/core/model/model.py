"""URDF → pinocchio model, joint order, joint-space conventions and payload attachment.

Coordinates
-----------
* ``joint_names``: the *independent* 1-DoF joints (revolute, continuous, prismatic, not
  mimic followers), in pinocchio's depth-first order. Every joint-space array the package
  exchanges (positions, velocities, torques, limits) is in this order.
* pinocchio configuration ``q`` (size ``nq``): continuous joints are stored as (cos θ, sin θ);
  mimic followers are ordinary joints whose value is set from their leader,
  θ_f = multiplier·θ_l + offset. A floating base adds
  ``q[0:7] = [x, y, z, qx, qy, qz, qw]`` (position in the world frame, orientation as a unit
  quaternion base→world).
* pinocchio tangent vectors ``v``, ``a`` (size ``nv``): base part ``[v_lin, ω]`` in the
  *base (body) frame* — linear first — then one entry per 1-DoF joint.
* *reduced* generalized forces (size ``nv_reduced = base_dofs + len(joint_names)``): base
  wrench (force, moment) in the base frame, then one torque per independent joint. A
  mimic leader's torque includes what it transmits to its followers: τ_reduced = Gᵀ τ
  with G = ∂v/∂v_reduced.

Units: SI (m, rad, kg, N·m; N and m for prismatic joints).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.errors import (
    DescriptionError,
    ModelInputError,
    PayloadError,
    RobotDynamicsError,
    SettingError,
)
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.urdf import (
    MAX_DESCRIPTION_BYTES,
    MAX_MOVING_JOINTS,
    JointLimit,
    UrdfDescription,
    parse_urdf,
    read_description_file,
)

STANDARD_GRAVITY = (0.0, 0.0, -9.81)

LIMIT_TOLERANCE = {'revolute': 0.05, 'prismatic': 0.005}
"""[rad, m] How far beyond its URDF limit a joint position reads before it is called outside
(a hard stop's overtravel and encoder noise stay within it)."""

VELOCITY_LIMIT_MARGIN = 1.2
"""A joint velocity above this times its URDF limit is beyond it (a drive overshoots its limit
by less)."""


@dataclass(frozen=True)
class JointInfo:
    """One 1-DoF joint of the pinocchio model (mimic followers included).

    ``q_index``/``nq``: its slice of the configuration (nq = 2 for continuous joints);
    ``v_index``: its entry of tangent vectors; ``leader_index``/``multiplier``/``offset``:
    θ = multiplier·θ_reduced[leader_index] + offset (identity for independent joints).
    """

    name: str
    type: str
    q_index: int
    nq: int
    v_index: int
    leader_index: int
    multiplier: float
    offset: float
    limit: JointLimit
    mimics: Optional[str] = None

    @property
    def is_mimic(self) -> bool:
        """True for a mimic follower (its value comes from joint ``mimics``)."""
        return self.mimics is not None


@dataclass(frozen=True)
class JointLimits:
    """URDF limits of the independent joints, in ``joint_names`` order (inf when absent)."""

    lower: np.ndarray
    upper: np.ndarray
    effort: np.ndarray
    velocity: np.ndarray


class RobotModel:
    """A pinocchio model built from a checked URDF, with the joint-order bookkeeping.

    ``model`` is the pinocchio Model (constant apart from an attached payload) and ``data``
    its preallocated Data. Build with :meth:`from_urdf_string` or :meth:`from_urdf_file`.
    """

    def __init__(
        self,
        description: UrdfDescription,
        floating_base: bool = False,
        gravity: Sequence[float] = STANDARD_GRAVITY,
    ):
        gravity = np.asarray(gravity, dtype=float)
        if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
            raise SettingError(
                f'gravity must be 3 finite numbers in m/s², world frame (e.g. [0, 0, -9.81]), '
                f'got {gravity!r}'
            )
        self.description = description
        self.floating_base = bool(floating_base)
        self.model = _build_pinocchio_model(description, self.floating_base)
        self.model.gravity = pin.Motion(np.concatenate([gravity, np.zeros(3)]))
        self.data = self.model.createData()
        self.base_dofs = 6 if self.floating_base else 0
        self._nominal_inertias = [pin.Inertia(inertia) for inertia in self.model.inertias]
        self.payload: Optional[tuple] = None
        self.joints = self._joint_table()
        self.joint_names = tuple(j.name for j in self.joints if not j.is_mimic)
        self.mimic_joint_names = tuple(j.name for j in self.joints if j.is_mimic)
        self.nv_reduced = self.base_dofs + len(self.joint_names)
        self._has_mimic = bool(self.mimic_joint_names)
        self._coupling = self._coupling_matrix()
        self._prepare_index_arrays()
        self.limits = self._limits()
        self.warnings = list(description.warnings)
        self._fixed_base_twin: Optional[RobotModel] = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_urdf_string(
        cls,
        text: str,
        root_joint: str = 'fixed',
        gravity: Sequence[float] = STANDARD_GRAVITY,
        max_moving_joints: int = MAX_MOVING_JOINTS,
    ) -> 'RobotModel':
        """Build from URDF text. ``root_joint`` is ``'fixed'`` or ``'floating'`` (free flyer)."""
        if root_joint not in ('fixed', 'floating'):
            raise SettingError(
                f"root_joint must be 'fixed' (a base bolted to the world) or 'floating' (a free "
                f'base: legged or mobile robots), got {root_joint!r}'
            )
        return cls(
            parse_urdf(text, max_moving_joints=max_moving_joints),
            floating_base=(root_joint == 'floating'),
            gravity=gravity,
        )

    @classmethod
    def from_urdf_file(
        cls,
        path,
        root_joint: str = 'fixed',
        gravity: Sequence[float] = STANDARD_GRAVITY,
        max_bytes: int = MAX_DESCRIPTION_BYTES,
    ) -> 'RobotModel':
        return cls.from_urdf_string(read_description_file(path, max_bytes), root_joint, gravity)

    def _joint_table(self) -> tuple:
        urdf_joints = self.description.joints
        first = 2 if self.floating_base else 1
        entries = []
        for joint_id in range(first, self.model.njoints):
            name = self.model.names[joint_id]
            joint_model = self.model.joints[joint_id]
            urdf_joint = urdf_joints[name]
            entries.append((name, urdf_joint, joint_model))
        independent = [name for name, urdf_joint, _ in entries if urdf_joint.mimic is None]
        table = []
        for name, urdf_joint, joint_model in entries:
            if urdf_joint.mimic is None:
                leader, multiplier, offset = independent.index(name), 1.0, 0.0
            else:
                leader = independent.index(urdf_joint.mimic.joint)
                multiplier, offset = urdf_joint.mimic.multiplier, urdf_joint.mimic.offset
            table.append(
                JointInfo(
                    name=name,
                    type=urdf_joint.type,
                    q_index=joint_model.idx_q,
                    nq=joint_model.nq,
                    v_index=joint_model.idx_v,
                    leader_index=leader,
                    multiplier=multiplier,
                    offset=offset,
                    limit=urdf_joint.limit or JointLimit(),
                    mimics=urdf_joint.mimic.joint if urdf_joint.mimic else None,
                )
            )
        return tuple(table)

    def _coupling_matrix(self) -> np.ndarray:
        """G = ∂v/∂v_reduced (nv × nv_reduced)."""
        coupling = np.zeros((self.model.nv, self.nv_reduced))
        coupling[: self.base_dofs, : self.base_dofs] = np.eye(self.base_dofs)
        for joint in self.joints:
            coupling[joint.v_index, self.base_dofs + joint.leader_index] = joint.multiplier
        return coupling

    def _prepare_index_arrays(self) -> None:
        simple = [j for j in self.joints if j.nq == 1]
        continuous = [j for j in self.joints if j.nq == 2]
        self._simple_q = np.array([j.q_index for j in simple], dtype=int)
        self._simple_source = np.array([j.leader_index for j in simple], dtype=int)
        self._continuous_q = np.array([j.q_index for j in continuous], dtype=int)
        self._continuous_source = np.array([j.leader_index for j in continuous], dtype=int)
        self._all_v = np.array([j.v_index for j in self.joints], dtype=int)
        self._all_source = np.array([j.leader_index for j in self.joints], dtype=int)
        self._multiplier = np.array([j.multiplier for j in self.joints])
        self._offset = np.array([j.offset for j in self.joints])
        self._simple_multiplier = np.array([j.multiplier for j in simple])
        self._simple_offset = np.array([j.offset for j in simple])
        self._continuous_multiplier = np.array([j.multiplier for j in continuous])
        self._continuous_offset = np.array([j.offset for j in continuous])
        # Fast path: independent, non-continuous joints whose q and v slots coincide in order.
        self._identity_layout = (
            not self._has_mimic
            and not continuous
            and np.array_equal(
                self._simple_q, np.arange(self.model.nq - len(simple), self.model.nq)
            )
        )

    def _limits(self) -> JointLimits:
        by_name = {j.name: j.limit for j in self.joints}
        limits = [by_name[name] for name in self.joint_names]
        return JointLimits(
            lower=np.array([lim.lower for lim in limits]),
            upper=np.array([lim.upper for lim in limits]),
            effort=np.array([lim.effort for lim in limits]),
            velocity=np.array([lim.velocity for lim in limits]),
        )

    # ------------------------------------------------------------------ properties
    @property
    def name(self) -> str:
        return self.description.name

    @property
    def num_joints(self) -> int:
        """Number of independent joints (length of ``joint_names``)."""
        return len(self.joint_names)

    def continuous_joints(self) -> list:
        """Indices (``joint_names`` order) of the continuous joints."""
        independent = [joint for joint in self.joints if not joint.is_mimic]  # joint_names
        return [index for index, joint in enumerate(independent) if joint.nq == 2]

    def leaf_joints(self) -> tuple:
        """Names of the independent joints that no other moving joint follows in the tree
        (their own mimic followers aside): a gripper's fingers, the last joint of a chain."""
        model = self.model
        leader = {model.getJointId(j.name): j.mimics or j.name for j in self.joints}
        # per joint id, up to two of the leaders below it: two tell whether one is not its own
        below = [set() for _ in range(model.njoints)]
        for joint_id in range(model.njoints - 1, 0, -1):  # children have larger ids
            if joint_id in leader:
                parent = model.parents[joint_id]
                merged = below[parent] | below[joint_id] | {leader[joint_id]}
                below[parent] = set(sorted(merged)[:2])
        return tuple(
            joint.name
            for joint in self.joints
            if not joint.is_mimic and not below[model.getJointId(joint.name)] - {joint.name}
        )

    def total_mass(self) -> float:
        """Total mass of the moving model, payload included [kg]."""
        return float(pin.computeTotalMass(self.model))

    def check_moving_joints(self) -> None:
        """Raise :class:`DescriptionError` when no joint of the model moves: there is nothing a
        joint state, a torque or a recording could describe."""
        if self.num_joints == 0:
            raise DescriptionError(
                f'model "{self.name}" has no moving joint: nothing to compute from joint states'
            )

    def frame_id(
        self,
        name: str,
        error: type[RobotDynamicsError] = DescriptionError,
        role: str = 'frame',
        moving: bool = False,
    ) -> int:
        """pinocchio frame id of the link (or any frame) called ``name``; the link's frame when
        a joint has the same name.

        Raises ``error`` (its message calls the frame ``role``, e.g. 'payload link') when the
        model has no such frame, naming the links to choose from, and with ``moving`` also when
        the frame is fixed to the world, where no joint moves it and nothing applied there
        reaches a joint.
        """
        if not self.model.existFrame(name):
            raise error(
                f'{role} "{name}" is not a frame of model "{self.name}"; name one of its links: '
                f'{listed_names(self.description.links)}'
            )
        if self.model.existFrame(name, pin.BODY):
            frame_id = self.model.getFrameId(name, pin.BODY)
        else:
            frame_id = self.model.getFrameId(name)
        if moving and self.model.frames[frame_id].parentJoint == 0:
            raise error(
                f'{role} "{name}" is fixed to the world: no joint moves it, so nothing there '
                'reaches a joint; name a link that a joint moves'
            )
        return frame_id

    def outside_limits(self, positions: np.ndarray) -> list:
        """Indices (``joint_names`` order) of the joints whose ``positions`` [rad, m] lie more
        than :data:`LIMIT_TOLERANCE` beyond their URDF limits (joints without limits, or with
        lower ≥ upper, never are)."""
        by_name = {j.name: j.type for j in self.joints}
        tolerance = np.array([LIMIT_TOLERANCE.get(by_name[n], np.inf) for n in self.joint_names])
        lower, upper = self.limits.lower, self.limits.upper
        with np.errstate(invalid='ignore'):  # inf − inf where a joint has no limits
            outside = (positions < lower - tolerance) | (positions > upper + tolerance)
        return [int(i) for i in np.flatnonzero(outside & (lower < upper))]

    def beyond_velocity_limits(self, velocities: np.ndarray) -> list:
        """Indices (``joint_names`` order) of the joints whose ``velocities`` [rad/s, m/s]
        exceed :data:`VELOCITY_LIMIT_MARGIN` times their URDF velocity limit (joints without a
        positive limit never do)."""
        limit = self.limits.velocity
        known = np.isfinite(limit) & (limit > 0.0)
        return [
            int(i)
            for i in np.flatnonzero(known & (np.abs(velocities) > VELOCITY_LIMIT_MARGIN * limit))
        ]

    def neutral_positions(self) -> np.ndarray:
        """Joint positions (``joint_names`` order) clipped into the limits around zero."""
        return np.clip(np.zeros(self.num_joints), self.limits.lower, self.limits.upper)

    # ------------------------------------------------------------------ joint space ↔ pinocchio
    def configuration(
        self, joint_positions: np.ndarray, base_pose: Optional[np.ndarray] = None
    ) -> np.ndarray:
        """pinocchio ``q`` from joint positions (``joint_names`` order, rad or m).

        ``base_pose`` (floating base only): ``[x, y, z, qx, qy, qz, qw]``, base frame pose in
        the world frame; identity when omitted. The quaternion is normalised.
        """
        positions = np.asarray(joint_positions, dtype=float)
        if positions.shape != (self.num_joints,):
            raise ModelInputError(
                f'expected {self.num_joints} joint positions (one per joint of joint_names, in '
                f'that order), got shape {positions.shape}'
            )
        if self._identity_layout:  # the joints fill q (after the base pose) as they are
            if not self.floating_base:
                return positions.copy()
            return np.concatenate((_normalised_pose(base_pose), positions))
        q = np.empty(self.model.nq)
        if self.floating_base:
            q[:7] = _normalised_pose(base_pose)
        q[self._simple_q] = (
            self._simple_multiplier * positions[self._simple_source] + self._simple_offset
        )
        if len(self._continuous_q):
            angles = (
                self._continuous_multiplier * positions[self._continuous_source]
                + self._continuous_offset
            )
            q[self._continuous_q] = np.cos(angles)
            q[self._continuous_q + 1] = np.sin(angles)
        return q

    def joint_positions(self, q: np.ndarray) -> np.ndarray:
        """Independent joint positions from a pinocchio configuration (inverse of
        :meth:`configuration`; continuous joints come back in (−π, π])."""
        q = np.asarray(q, dtype=float)
        positions = np.empty(self.num_joints)
        for joint in self.joints:
            if joint.is_mimic:
                continue
            if joint.nq == 2:
                positions[joint.leader_index] = math.atan2(q[joint.q_index + 1], q[joint.q_index])
            else:
                positions[joint.leader_index] = q[joint.q_index]
        return positions

    def tangent(
        self, joint_values: np.ndarray, base_values: Optional[np.ndarray] = None
    ) -> np.ndarray:
        """pinocchio ``v`` (or ``a``) from joint velocities (accelerations) in ``joint_names``
        order; ``base_values`` (floating base): ``[v_lin, ω]`` in the base frame, zero if
        omitted."""
        values = np.asarray(joint_values, dtype=float)
        if values.shape != (self.num_joints,):
            raise ModelInputError(
                f'expected {self.num_joints} joint values (one per joint of joint_names, in that '
                f'order), got shape {values.shape}'
            )
        if self._identity_layout:  # the joints fill v (after the base twist) as they are
            if not self.floating_base:
                return values.copy()
            base = _ZERO_TWIST if base_values is None else np.asarray(base_values, dtype=float)
            return np.concatenate((base.reshape(6), values))
        v = np.zeros(self.model.nv)
        if self.floating_base and base_values is not None:
            v[:6] = np.asarray(base_values, dtype=float).reshape(6)
        v[self._all_v] = self._multiplier * values[self._all_source]
        return v

    def reduce(self, generalized_forces: np.ndarray) -> np.ndarray:
        """Generalized forces (size nv) → reduced (base wrench then independent joints): Gᵀτ."""
        if not self._has_mimic:
            return np.asarray(generalized_forces, dtype=float).copy()
        return self._coupling.T @ generalized_forces

    def reduce_matrix(self, matrix: np.ndarray) -> np.ndarray:
        """An nv×nv matrix (mass, Coriolis) → reduced coordinates: Gᵀ A G."""
        if not self._has_mimic:
            return matrix.copy()
        return self._coupling.T @ matrix @ self._coupling

    def joint_part(self, reduced: np.ndarray) -> np.ndarray:
        """The independent-joint entries of a reduced vector (drops the 6 base entries)."""
        return reduced[self.base_dofs :]

    @property
    def coupling(self) -> np.ndarray:
        """G = ∂v/∂v_reduced (nv × nv_reduced); identity without mimic joints."""
        return self._coupling.copy()

    # ------------------------------------------------------------------ rotor inertia
    def set_rotor_inertia(self, rotor_inertia: Sequence[float]) -> None:
        """Reflected rotor inertia I_a per joint, ``joint_names`` order [kg·m² for revolute,
        kg for prismatic joints; the motor's rotor inertia times the gear ratio squared].

        It becomes pinocchio's ``model.armature`` at the joint's velocity index, so M(q) gains
        diag(I_a) and inverse dynamics I_a q̈, in every computation on this model. All zeros
        removes it. Raises :class:`SettingError` naming the joint for a negative or non-finite
        value, and for a wrong count."""
        values = np.asarray(rotor_inertia, dtype=float).reshape(-1)
        if values.size != self.num_joints:
            raise SettingError(
                f'rotor_inertia needs {self.num_joints} values (model joint order '
                f'{listed_names(self.joint_names)}), got {values.size}'
            )
        for name, value in zip(self.joint_names, values):
            if not (math.isfinite(value) and value >= 0.0):
                raise SettingError(
                    f'rotor_inertia of joint {name} must be a finite number >= 0 kg·m², '
                    f'got {value!r}'
                )
        leaders = [joint for joint in self.joints if not joint.is_mimic]
        self.model.armature[:] = 0.0
        for joint, value in zip(leaders, values):
            self.model.armature[joint.v_index] = value
        self._fixed_base_twin = None

    @property
    def rotor_inertia(self) -> np.ndarray:
        """The reflected rotor inertia in use per joint, ``joint_names`` order (a copy)."""
        leaders = [joint for joint in self.joints if not joint.is_mimic]
        return np.array([self.model.armature[joint.v_index] for joint in leaders])

    # ------------------------------------------------------------------ payload
    def attach_payload(self, link_name: str, payload: InertialParameters) -> None:
        """Rigidly attach ``payload`` (inertial parameters in ``link_name``'s frame) so every
        dynamic quantity includes it. Replaces a previously attached payload."""
        if not (
            math.isfinite(payload.mass)
            and payload.mass >= 0.0
            and np.all(np.isfinite(payload.com))
            and np.all(np.isfinite(payload.inertia_com))
        ):
            raise PayloadError(f'payload parameters are not finite and non-negative: {payload!r}')
        if self.model.existFrame(link_name) and link_name not in self.description.links:
            raise PayloadError(
                f'payload link "{link_name}" is a joint of model "{self.name}", not a link; name '
                f'one of its links: {listed_names(self.description.links)}'
            )
        frame = self.model.frames[
            self.frame_id(link_name, PayloadError, 'payload link', moving=True)
        ]
        joint_id = frame.parentJoint
        self.detach_payload()
        self.model.inertias[joint_id] = self._nominal_inertias[joint_id] + frame.placement.act(
            payload.to_pinocchio()
        )
        self.payload = (link_name, payload)

    def detach_payload(self) -> None:
        """Remove an attached payload (no-op without one)."""
        for joint_id, inertia in enumerate(self._nominal_inertias):
            self.model.inertias[joint_id] = pin.Inertia(inertia)
        self.payload = None
        self._fixed_base_twin = None

    def fixed_base_twin(self) -> RobotModel:
        """This floating-base robot with its base fixed (same description, gravity, rotor
        inertia, and payload unless it sits on the base body): M(q), C(q, q̇), g(q) and inverse
        dynamics of the joints with the base at rest at the identity pose are the joint block of
        the floating-base ones, on a model six velocities smaller. Built once, rebuilt after a
        payload or rotor-inertia change. Raises :class:`SettingError` for a fixed-base robot."""
        if not self.floating_base:
            raise SettingError('a fixed-base robot is its own fixed-base twin')
        if self._fixed_base_twin is None:
            twin = RobotModel(self.description, False, self.model.gravity.linear)
            twin.set_rotor_inertia(self.rotor_inertia)
            if self.payload is not None and self._moves_with_a_joint(self.payload[0]):
                twin.attach_payload(*self.payload)
            self._fixed_base_twin = twin
        return self._fixed_base_twin

    def joint_space_model(self) -> Optional[RobotModel]:
        """The model whose pinocchio q and v are this robot's joint vectors as they are, for M,
        C, g and inverse dynamics of the joints: the robot itself (fixed base) or its
        :meth:`fixed_base_twin` (a floating base at rest at the identity pose); None when the
        joints need mapping (mimic or continuous joints)."""
        evaluated = self.fixed_base_twin() if self.floating_base else self
        model = evaluated.model
        if model.nq == model.nv == self.num_joints and not self.mimic_joint_names:
            return evaluated
        return None

    def _moves_with_a_joint(self, link_name: str) -> bool:
        """True when ``link_name``'s body is moved by a joint, not the base alone."""
        frame = self.model.frames[int(self.model.getFrameId(link_name))]
        return frame.parentJoint > (1 if self.floating_base else 0)

    def link_inertial_parameters(self, link_name: str) -> InertialParameters:
        """The URDF inertial of one link expressed in that link's frame (zero if massless)."""
        link = self.description.links.get(link_name)
        if link is None:
            raise DescriptionError(f'link "{link_name}" is not in model "{self.name}"')
        if link.inertial is None:
            return InertialParameters.point_mass(0.0, np.zeros(3))
        return InertialParameters(
            link.inertial.mass, link.inertial.origin.xyz, link.inertial.tensor_in_link_frame()
        )

    def __repr__(self) -> str:
        base = 'floating' if self.floating_base else 'fixed'
        return (
            f'RobotModel(name={self.name!r}, base={base}, joints={self.num_joints}, '
            f'mimic={len(self.mimic_joint_names)}, mass={self.total_mass():.3f} kg)'
        )


_ZERO_TWIST = np.zeros(6)
_ZERO_TWIST.setflags(write=False)


def _normalised_pose(base_pose: Optional[np.ndarray]) -> np.ndarray:
    if base_pose is None:
        return np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    pose = np.array(base_pose, dtype=float).reshape(7)  # a copy
    x, y, z, w = pose[3:].tolist()
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    if not math.isfinite(norm) or norm < 1e-9:
        raise ModelInputError(
            f'base orientation quaternion {pose[3:]} has no direction (zero or not finite): give '
            'a unit quaternion [qx, qy, qz, qw]'
        )
    if norm != 1.0:
        pose[3:] /= norm
    return pose


def _build_pinocchio_model(description: UrdfDescription, floating_base: bool) -> pin.Model:
    try:
        if floating_base:
            return pin.buildModelFromXML(description.text, pin.JointModelFreeFlyer())
        return pin.buildModelFromXML(description.text)
    except (RuntimeError, ValueError) as error:
        raise DescriptionError(
            f'pinocchio could not build model "{description.name}": {error}'
        ) from None


def listed_names(names, shown: int = 12) -> str:
    """The first ``shown`` of ``names``, comma-separated, with how many more there are."""
    names = list(names)
    more = f' and {len(names) - shown} more' if len(names) > shown else ''
    return ', '.join(names[:shown]) + more
