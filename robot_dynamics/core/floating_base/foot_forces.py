"""Foot contact forces of a legged robot from its measured joint torques.

With the feet the only contacts, the joint rows of the floating-base dynamics read

    M(q) v̇ + h(q, v) − τ = Σ_c J_cᵀ f_c,

f_c [N] the force the ground applies at contact point c (the origin of a ``contact_frames``
frame: a point foot) and J_c its linear Jacobian (Featherstone, *Rigid Body Dynamics
Algorithms*, 2008; Fahmi et al., "On state estimation for legged locomotion over soft terrain",
2019). The left side is the inverse-dynamics residual the live pipeline already computes (the
external torques by the inverse-dynamics route, with the base's tilt and motion in it). A foot's
force reaches only the joints between it and the base, so the rows split into legs: each leg's
rows are solved for its feet's forces alone, by least squares when the leg has more joints than
its feet have force components. A leg with fewer rows than unknowns (several contact points on
one short leg) gets the minimum-norm forces, and is named as not observable.

The base rows are not used to solve: they are the consistency check. Their linear part is the
total force the feet must apply, m (c̈ − g) in base axes, against Σ f_c: a wrong total mass, a
missed contact or a contact the frames do not name shows up as their difference.

For inverse dynamics the feet's forces must also balance the base. The forces of the feet in
contact closest to the estimate (least squares) that give the base rows exactly what the motion
needs, f* = f + A⁺ (w − A f) with A the base columns of the feet's Jacobians and w the base
rows, are the ground's share of the joint rows: the motors apply M v̇ + h − Σ J_cᵀ f*_c
(Featherstone 2008; the projection is the least-change correction of Mistry, Buchli and Schaal,
"Inverse dynamics control of floating base systems using orthogonal decomposition", 2010). Where
the measured torques agree with the base's motion, that equals them; a force on the body that no
foot takes shows up as the difference.

Forces come out in base axes and are turned into world-aligned axes with the base's attitude
(identity when it is unknown). A foot is in contact while its force's vertical (world z)
component is above ``on_force`` [N], until it falls below ``off_force`` (hysteresis). The centre
of pressure is Σ p_c f_z,c / Σ f_z,c over the feet in contact, p_c the contact point in the base
frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.dynamics.base_motion import BaseMotion, MovingBaseTorques
from robot_dynamics.core.errors import SettingError
from robot_dynamics.core.floating_base.contact_frame_choice import (
    choice_words,
    chosen_contact_frames,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.small_algebra import (
    add,
    cross,
    difference,
    dot,
    scaled,
    solve_symmetric_3x3,
)

CONTACT_ON_SHARE = 0.03
"""Default: a foot is in contact above this share of the robot's weight (world-vertical force)."""
CONTACT_OFF_SHARE = 0.015
"""Default: and stays in contact until its force falls below this share of the weight."""
MISMATCH_WARN_SHARE = 0.1
"""The consistency check warns when the base rows' disagreement, averaged over
:data:`MISMATCH_SAMPLES` samples, exceeds this share of the weight."""
MISMATCH_SAMPLES = 100

REGULAR_RATIO = 1e-8
"""A three-joint leg's system is solved directly while |det| exceeds this share of its bound
(a condition number below ~1e8); closer to a singularity it goes through least squares."""
GRAM_RATIO = 1e-4
"""A leg of more than three joints (J_lᵀ f = τ_l) and the feet's balancing correction (A x = w)
are solved through J_l J_lᵀ and A Aᵀ while their |det| exceeds this share of their diagonal's
product (a condition number below ~1e4, so ~1e-12 relative error); otherwise, as for two feet
(base columns of rank 5), by least squares."""


@dataclass(frozen=True)
class FootForces:
    """The feet at one joint state: ``frames`` (``contact_frames`` order); ``forces`` (k × 3)
    [N], the ground's force on each foot, world-aligned axes; ``contact`` (k,) bool; ``cop`` the
    centre of pressure [m] in the base frame (None with no foot in contact); ``force_mismatch``
    [N]: |Σ f_c − m (c̈ − g)|, the base rows' disagreement (consistency check);
    ``contact_torques``: the feet's share of inverse dynamics."""

    frames: tuple
    forces: np.ndarray
    contact: tuple
    cop: Optional[np.ndarray]
    force_mismatch: float
    contact_torques: np.ndarray
    """Σ J_cᵀ f*_c [N·m, N] (``joint_names`` order): the joint torques the ground's forces take
    off inverse dynamics, with the forces of the feet in contact balanced against the base rows
    (module docstring); zero with no foot in contact."""

    def placed(self, frames: tuple, places: Sequence[int]) -> 'FootForces':
        """These feet at ``places`` of the longer list ``frames``; the others (entries left
        out) with NaN forces, out of contact."""
        forces = np.full((len(frames), 3), np.nan)
        forces[list(places)] = self.forces
        contact = [False] * len(frames)
        for place, touching in zip(places, self.contact):
            contact[place] = touching
        return FootForces(
            tuple(frames),
            forces,
            tuple(contact),
            self.cop,
            self.force_mismatch,
            self.contact_torques,
        )


@dataclass(frozen=True)
class _Leg:
    """Feet (indices into the frames) that share joints, and those joints (model order)."""

    feet: tuple
    joints: np.ndarray


@dataclass(frozen=True)
class _LegBatch:
    """Legs of one foot and the same number n of joints, solved together: ``feet`` (L,),
    ``joints`` (L × n, model order), ``systems`` the index of each leg's J_lᵀ (L × n × 3) into
    the feet's k × 3 × nv Jacobians."""

    legs: tuple
    feet: np.ndarray
    joints: np.ndarray
    systems: tuple

    @classmethod
    def of(cls, legs: list, base_dofs: int) -> '_LegBatch':
        feet = np.array([leg.feet[0] for leg in legs])
        joints = np.array([leg.joints for leg in legs])
        # systems[l, j, i] = J[feet[l], i, base + joints[l, j]]
        columns = joints[:, :, None] + base_dofs
        return cls(tuple(legs), feet, joints, (feet[:, None, None], np.arange(3), columns))


class FootForceEstimator:
    """Foot forces of floating-base ``robot`` at the points ``frames`` (module docstring);
    ``on_force`` / ``off_force`` [N]: the contact hysteresis (None: the shares of the weight
    :data:`CONTACT_ON_SHARE` / :data:`CONTACT_OFF_SHARE`). One stream (holds contact states)."""

    def __init__(
        self,
        robot: RobotModel,
        frames: Sequence[str],
        on_force: Optional[float] = None,
        off_force: Optional[float] = None,
    ):
        if not robot.floating_base:
            raise SettingError(
                'foot forces need a floating-base model (root_joint floating): a fixed base '
                'takes the ground force itself'
            )
        if not frames:
            raise SettingError('foot forces need at least one contact frame')
        choice = chosen_contact_frames(robot, tuple(frames))
        if choice.left_out:
            raise SettingError(
                f'{choice_words(robot, choice)}; name each contact frame once, a link that a '
                'joint moves'
            )
        self.weight = weight = robot.total_mass() * float(
            np.linalg.norm(robot.model.gravity.linear)
        )
        self.on_force = CONTACT_ON_SHARE * weight if on_force is None else float(on_force)
        self.off_force = CONTACT_OFF_SHARE * weight if off_force is None else float(off_force)
        if not 0.0 <= self.off_force <= self.on_force:
            raise SettingError(
                f'foot contact needs 0 <= off force <= on force, got {self.off_force:g} N and '
                f'{self.on_force:g} N'
            )
        self.robot = robot
        self.frames = tuple(frames)
        self._dynamics = MovingBaseTorques(robot)
        twin = self._dynamics.twin
        coupling = twin.coupling
        # joint-space columns of the Jacobians: pinocchio's v as it is without mimic joints
        self._coupling = None if np.array_equal(coupling, np.eye(*coupling.shape)) else coupling
        self._frame_ids = [
            twin.frame_id(name, SettingError, 'contact frame', moving=True) for name in self.frames
        ]
        self.legs = self._legs()
        self.unobservable = tuple(
            ' '.join(self.frames[k] for k in leg.feet)
            for leg in self.legs
            if len(leg.joints) < 3 * len(leg.feet)
        )
        batches: dict = {}
        for leg in self.legs:
            if len(leg.feet) == 1 and len(leg.joints) >= 3:
                batches.setdefault(len(leg.joints), []).append(leg)
        self._batches = tuple(_LegBatch.of(legs, twin.base_dofs) for legs in batches.values())
        batched = [leg for batch in self._batches for leg in batch.legs]
        self._other_legs = tuple(leg for leg in self.legs if leg not in batched)
        self._contact = np.zeros(len(self.frames), dtype=bool)
        self.mean_mismatch = 0.0
        """The base rows' disagreement [N], a moving average over :data:`MISMATCH_SAMPLES`."""

    def mismatch_warning(self) -> str:
        """Words when the consistency check fails (:data:`MISMATCH_WARN_SHARE`), else ''."""
        share = self.mean_mismatch / self.weight
        if share <= MISMATCH_WARN_SHARE:
            return ''
        return (
            f'the foot forces sum to {self.mean_mismatch:.1f} N ({100 * share:.0f} % of the '
            'weight) away from what the base needs, m (c̈ − g): a wrong total mass in the URDF, '
            'a contact away from contact_frames, or a missing contact frame'
        )

    def _legs(self) -> tuple:
        """Feet grouped by shared joints, each group with the joints that move its feet."""
        model, twin = self._dynamics.twin.model, self._dynamics.twin
        leaders = {joint.name: joint.leader_index for joint in twin.joints}
        chains = []
        for frame_id in self._frame_ids:
            support = model.supports[model.frames[frame_id].parentJoint]
            chains.append({leaders[model.names[j]] for j in support if model.names[j] in leaders})
        groups: list = []
        for foot, chain in enumerate(chains):
            joined = [group for group in groups if group[1] & chain]
            feet, joints = [foot], set(chain)
            for group in joined:
                groups.remove(group)
                feet += group[0]
                joints |= group[1]
            groups.append((feet, joints))
        return tuple(_Leg(tuple(sorted(f)), np.array(sorted(j), dtype=int)) for f, j in groups)

    def estimate(
        self,
        positions: np.ndarray,
        velocities: Optional[np.ndarray],
        accelerations: Optional[np.ndarray],
        external_torques: np.ndarray,
        motion: BaseMotion,
        attitude: Optional[np.ndarray] = None,
        full_torques: Optional[np.ndarray] = None,
    ) -> FootForces:
        """The feet at joint positions [rad], velocities and accelerations (None: zero) with the
        inverse-dynamics ``external_torques`` τ_ext = M v̇ + h − τ [N·m] (``joint_names`` order),
        the base moving as ``motion`` and at ``attitude`` (world ← base rotation; None:
        identity). ``full_torques``: this state's
        :meth:`~robot_dynamics.core.dynamics.base_motion.MovingBaseTorques.full_torques` when
        already computed (None: computed here)."""
        twin = self._dynamics.twin
        jacobians = self.jacobians(positions)
        forces = self._leg_forces(jacobians, np.asarray(external_torques, dtype=float))
        full = full_torques
        if full is None:
            full = self._dynamics.full_torques(positions, velocities, accelerations, motion)
        disagreement = full[:3] - forces.sum(axis=0)
        mismatch = math.sqrt(disagreement @ disagreement)
        self.mean_mismatch += (mismatch - self.mean_mismatch) / MISMATCH_SAMPLES
        world_forces = forces if attitude is None else forces @ np.asarray(attitude).T
        vertical = world_forces[:, 2]
        self._contact = np.where(self._contact, vertical > self.off_force, vertical > self.on_force)
        points = np.array([twin.data.oMf[f].translation for f in self._frame_ids])
        base = twin.base_dofs
        balanced = self._balanced(forces, full[:base], points)
        contact_torques = balanced.reshape(-1) @ jacobians[:, :, base:].reshape(
            -1, len(full) - base
        )
        return FootForces(
            self.frames,
            world_forces,
            tuple(self._contact.tolist()),
            _centre_of_pressure(points, vertical, self._contact),
            mismatch,
            contact_torques,
        )

    def jacobians(self, positions: np.ndarray) -> np.ndarray:
        """k × 3 × nv: each foot's linear Jacobian at joint positions [rad] (base at the origin,
        upright), axes of the base at the foot; columns base first, then the joints (model
        order). Leaves the twin's frame placements at ``positions``."""
        twin = self._dynamics.twin
        model, data = twin.model, twin.data
        pin.computeJointJacobians(model, data, twin.configuration(positions))
        pin.updateFramePlacements(model, data)
        jacobians = np.array(
            [
                pin.getFrameJacobian(model, data, f, pin.LOCAL_WORLD_ALIGNED)[:3]
                for f in self._frame_ids
            ]
        )
        return jacobians if self._coupling is None else jacobians @ self._coupling

    def base_wrench_at_rest(self, positions: np.ndarray, gravity_in_base) -> np.ndarray:
        """The wrench [N, N·m] at the base origin, base axes, that the feet must give a robot
        standing still at joint positions [rad] with gravity ``gravity_in_base`` [m/s²]: the base
        rows of the dynamics at rest."""
        motion = BaseMotion.at_rest(gravity_in_base)
        full = self._dynamics.full_torques(positions, None, None, motion)
        return full[: self._dynamics.twin.base_dofs]

    def _leg_forces(self, jacobians: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Each leg's foot forces (k × 3, base axes) from its joints' rows of τ_ext = Σ J_cᵀ f_c:
        the legs of one foot and the same number of joints (at least three) in one batched
        solve while none is near a singularity, every other leg (and those then) by numpy's
        least squares."""
        forces = np.zeros((len(self.frames), 3))
        base, legs = self._dynamics.twin.base_dofs, list(self._other_legs)
        for batch in self._batches:
            solved = _solved_if_regular(jacobians[batch.systems], tau[batch.joints])
            if solved is None:
                legs += batch.legs
            else:
                forces[batch.feet] = solved
        for leg in legs:
            columns = leg.joints + base
            stacked = np.vstack([jacobians[k][:, columns] for k in leg.feet])
            solution = np.linalg.lstsq(stacked.T, tau[leg.joints], rcond=None)[0]
            forces[list(leg.feet)] = solution.reshape(-1, 3)
        return forces

    def _balanced(
        self, forces: np.ndarray, base_wrench: np.ndarray, points: np.ndarray
    ) -> np.ndarray:
        """The forces (k × 3, base axes) of the feet in contact closest to ``forces`` whose
        base rows give ``base_wrench`` (least squares when they cannot); zero for the others.
        ``points``: the feet's contact points in the base frame [m]."""
        balanced = np.zeros_like(forces)
        touching = np.flatnonzero(self._contact)
        if not touching.size:
            return balanced
        estimate = forces[touching]
        at = points[touching].tolist()
        force, moment = base_wrench[:3].tolist(), base_wrench[3:].tolist()
        for point, given in zip(at, estimate.tolist()):  # less what the estimate gives
            force, moment = difference(force, given), difference(moment, cross(point, given))
        balanced[touching] = estimate + _least_change(at, force, moment)
        return balanced


def _least_change(points: list, force: list, moment: list) -> np.ndarray:
    """The smallest forces Δ (k × 3) [N] at contact points ``points`` (k lists of 3, base frame
    [m]) whose base wrench (Σ Δ_i, Σ p_i × Δ_i) is (``force`` F [N], ``moment`` N [N·m] at the
    base origin), least squares first when none gives it: A⁺ b for the feet's base columns
    A = [I …; [p_i]× …], the pseudo-inverse of a point-contact grasp matrix (Murray, Li and
    Sastry, *A Mathematical Introduction to Robotic Manipulation*, 1994), in closed form.

    One foot: A has full column rank, Δ = (AᵀA)⁻¹ Aᵀ b = (g + p (p·g)) / (1 + |p|²) with
    g = F + N × p. More feet, about their centroid c (q_i = p_i − c): Δ_i = F / k + y × q_i with
    S y = N − c × F, S = Σ (|q_i|² I − q_i q_iᵀ): exact, and in A's row space. Two feet cannot
    take a moment about the line through both (A is rank 5, its left null vector
    û ∝ (p₁ × d, d), d = p₂ − p₁): b loses its component along û first, then y = N_c / Σ |q_i|².
    Numpy's least squares on A when the feet coincide or three or more are nearly collinear
    (S's det below :data:`GRAM_RATIO` times its diagonal's product). Plain floats: numpy's
    cross and small products cost more than this arithmetic."""
    count = len(points)
    if count == 1:
        p = points[0]
        g = add(force, cross(moment, p))
        return np.array([add(g, scaled(p, dot(p, g)))]) / (1.0 + dot(p, p))
    if count == 2:
        first, second = points
        line = difference(second, first)
        squared = dot(line, line)
        if squared > 1e-12:
            at_first = cross(first, line)  # the force part of û; its moment part is the line
            along = (dot(at_first, force) + dot(line, moment)) / (dot(at_first, at_first) + squared)
            force = difference(force, scaled(at_first, along))
            moment = difference(moment, scaled(line, along))
            centre = scaled(add(first, second), 0.5)
            turn = scaled(add(moment, cross(force, centre)), 2.0 / squared)
            half = scaled(cross(turn, line), 0.5)
            share = scaled(force, 0.5)
            return np.array([difference(share, half), add(share, half)])
    else:
        centre = scaled([sum(p[axis] for p in points) for axis in range(3)], 1.0 / count)
        offsets = [difference(p, centre) for p in points]
        (xx, xy, xz), (yy, yz), (zz,) = (
            [sum(q[row] * q[column] for q in offsets) for column in range(row, 3)]
            for row in range(3)
        )
        spread = xx + yy + zz  # Σ |q_i|² [m²]
        turn = solve_symmetric_3x3(
            [[spread - xx, -xy, -xz], [-xy, spread - yy, -yz], [-xz, -yz, spread - zz]],
            add(moment, cross(force, centre)),
            GRAM_RATIO,
        )
        if turn is not None:
            share = scaled(force, 1.0 / count)
            return np.array([add(share, cross(turn, q)) for q in offsets])
    columns = np.vstack((np.tile(np.eye(3), count), np.hstack([_cross_matrix(p) for p in points])))
    return np.linalg.lstsq(columns, force + moment, rcond=None)[0].reshape(-1, 3)


def _cross_matrix(vector) -> np.ndarray:
    """[v]×, with [v]× w = v × w."""
    x, y, z = vector
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def _solved_if_regular(systems: np.ndarray, tau: np.ndarray):
    """f (L × 3) with J_lᵀ f_l = τ_l for L legs of one foot and n joints each, by least squares
    when n > 3: ``systems`` (L × n × 3) each leg's J_lᵀ (its joints' rows), ``tau`` (L × n).
    Three joints: solved directly while |det J_lᵀ| exceeds :data:`REGULAR_RATIO` times the
    product of its column norms, which bounds it (Hadamard's inequality). More joints: the
    normal equations J_l J_lᵀ f_l = J_l τ_l while |det J_l J_lᵀ| exceeds :data:`GRAM_RATIO`
    times the product of its diagonal. None when some leg is closer to a singularity than that,
    where numpy's least squares is the safe answer."""
    if systems.shape[1] == 3:
        bound = np.sqrt(np.einsum('lji,lji->li', systems, systems)).prod(axis=1)
        if not np.all(np.abs(np.linalg.det(systems)) > REGULAR_RATIO * bound):
            return None
        return np.linalg.solve(systems, tau[..., None])[..., 0]
    transposed = systems.transpose(0, 2, 1)
    grams = (transposed @ systems).tolist()
    normal_rhs = (transposed @ tau[..., None])[..., 0].tolist()
    solutions = [solve_symmetric_3x3(g, r, GRAM_RATIO) for g, r in zip(grams, normal_rhs)]
    return None if None in solutions else np.array(solutions)


def _centre_of_pressure(
    points: np.ndarray, vertical: np.ndarray, contact: np.ndarray
) -> Optional[np.ndarray]:
    """Σ p f_z / Σ f_z over the feet in contact pushing up; None when none does."""
    weights = np.where(contact & (vertical > 0.0), vertical, 0.0)
    total = weights.sum()
    if total <= 0.0:
        return None
    return weights @ points / total
