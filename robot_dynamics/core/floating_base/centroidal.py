"""Centroidal dynamics: centre of mass, centroidal momentum h_G = A_G v, its rate, and the ZMP.

Centroidal momentum after Orin, Goswami & Lee 2013, the ZMP after Vukobratović & Borovac
2004. Conventions (pinocchio's, written once here):

* The robot is a :class:`~robot_dynamics.core.model.model.RobotModel`. For a floating base
  ``q[0:7] = [x, y, z, qx, qy, qz, qw]`` is the base pose in the world frame and
  ``v[0:6] = [v_lin, ω]`` the base twist in the *base (body) frame*, linear first.
  ``nav_msgs/Odometry`` carries exactly that: pose in ``header.frame_id`` (the world), twist
  in ``child_frame_id`` (the body); see :func:`base_pose_from_odometry` and
  :func:`base_velocity_from_odometry`.
* Frame G: origin at the centre of mass c, axes parallel to the world frame. h_G is stored
  **linear first**: h_G = (l, k), l = m ċ [N·s], k = angular momentum about c [N·m·s]
  (Orin, Goswami & Lee 2013 write (k, l); only the order differs).
* Gravity in the ZMP formula is the *magnitude* g = +9.81 m/s², acting along −z of the world.

Every function takes pinocchio vectors (``q`` from ``robot.configuration``, ``v``/``a`` from
``robot.tangent``). Units: SI (m, kg, s, N, N·m). :class:`CentroidalMonitor` chains it all
for a live stream (what centroidal_node calls): h_G → causal ḣ_G estimate → ZMP, capture
point (:mod:`robot_dynamics.core.floating_base.capture_point`), contacts, support polygon
(:mod:`robot_dynamics.core.floating_base.support_polygon`) and stability margins.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple, Optional, Sequence

import numpy as np
import pinocchio as pin

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.floating_base.capture_point import STANDARD_GRAVITY, capture_point_xy
from robot_dynamics.core.floating_base.support_polygon import (
    ContactFrames,
    SupportPolygon,
    contact_frames_after_kinematics,
    contacts_by_force,
    contacts_by_height,
    support_polygon,
)
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.base_state import RigidMount
from robot_dynamics.core.streams.differentiation import (
    NonFiniteSampleError,
    PolynomialDifferentiator,
    SampleOrderError,
    WhiteNoiseLevel,
)

FLIGHT_VERTICAL_ACCELERATION = 1.0
"""Default ε [m/s²]: with c̈_z + g ≤ ε the contact force cannot hold a ZMP (flight)."""

WINDOW_REVIEW_SAMPLES = 25
"""The ḣ_G fit's window is chosen again every this many samples (:class:`CentroidalMonitor`)."""

QUATERNION_NORM_TOLERANCE = 0.01
"""An odometry quaternion whose norm is further than this from 1 is rejected, not fixed."""

_FLOAT64 = np.dtype(np.float64)


class CentroidalInputError(RobotDynamicsError):
    """A state given to the centroidal functions has the wrong shape or is not finite."""


class OdometryError(CentroidalInputError):
    """An odometry pose or twist cannot be used (NaN/Inf, non-unit or zero quaternion)."""


# ---------------------------------------------------------------------------- odometry
def base_pose_from_odometry(
    position_xyz: Sequence[float], quaternion_xyzw: Sequence[float]
) -> np.ndarray:
    """pinocchio ``q[0:7]`` from an odometry pose: base position [m] in the world frame and
    base→world orientation as a quaternion (x, y, z, w) — the order of geometry_msgs/Quaternion.

    The quaternion must have a norm within :data:`QUATERNION_NORM_TOLERANCE` of 1 (an
    all-zero quaternion, the default of an unset message, is rejected); it is normalised.
    """
    position = _finite_floats(position_xyz, 3, 'odometry position', OdometryError)
    quaternion = _finite_floats(
        quaternion_xyzw, 4, 'odometry orientation quaternion', OdometryError
    )
    norm = math.sqrt(sum(c * c for c in quaternion))
    if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        raise OdometryError(
            f'odometry orientation quaternion (x, y, z, w) = {quaternion} has norm {norm:.4g}, not '
            '1'
        )
    return np.array(position + [c / norm for c in quaternion])


def base_velocity_from_odometry(
    linear_body: Sequence[float], angular_body: Sequence[float]
) -> np.ndarray:
    """pinocchio ``v[0:6]`` from an odometry twist: linear [m/s] then angular [rad/s]
    velocity, both expressed in the base (body) frame — ``child_frame_id`` of nav_msgs/Odometry."""
    linear = _finite_floats(linear_body, 3, 'odometry linear velocity', OdometryError)
    angular = _finite_floats(angular_body, 3, 'odometry angular velocity', OdometryError)
    return np.array(linear + angular)


def base_odometry(
    mount: RigidMount,
    position_xyz: Sequence[float],
    quaternion_xyzw: Sequence[float],
    linear_body: Sequence[float],
    angular_body: Sequence[float],
) -> tuple:
    """The base link's odometry from that of a frame fixed on it (``mount``: the frame's
    rotation R and position p on the base): (position [m], quaternion x, y, z, w) in the world,
    then the twist in base axes at the base origin, ω_b = R ω_c and v_b = R v_c + p × ω_b
    (linear [m/s], angular [rad/s]). Raises :class:`OdometryError` for a non-finite or non-unit
    pose or a non-finite twist."""
    if mount.is_base:
        return position_xyz, quaternion_xyzw, linear_body, angular_body
    world_child = pin.XYZQUATToSE3(base_pose_from_odometry(position_xyz, quaternion_xyzw))
    base_child = pin.SE3(mount.rotation, mount.position)
    world_base = pin.SE3ToXYZQUAT(world_child * base_child.inverse())
    twist = base_child.act(pin.Motion(base_velocity_from_odometry(linear_body, angular_body)))
    return world_base[:3], world_base[3:], twist.linear, twist.angular


def floating_base_model(robot: RobotModel) -> RobotModel:
    """The same robot on a free-flyer root (``robot`` itself if it already has one).

    Centroidal quantities of a fixed-base robot (an arm on a table or on a mobile base) are
    those of this model with the base pose of the mounting and the base twist of the
    mobile base (zero on a table), so one code path serves both kinds of robot.
    """
    if robot.floating_base:
        return robot
    return RobotModel(robot.description, floating_base=True, gravity=robot.model.gravity.linear)


@dataclass(frozen=True)
class BaseState:
    """Base pose ``q[0:7]`` and twist ``v[0:6]`` (pinocchio conventions) at ``stamp`` [s]."""

    stamp: float
    pose: np.ndarray
    twist: np.ndarray


class BaseStateBuffer:
    """The last ``capacity`` odometry samples, to pair each joint state with the odometry
    sample of the nearest stamp (both usually come from the same control tick, on two
    topics whose messages may arrive in either order)."""

    def __init__(self, capacity: int = 32):
        self._states: deque = deque(maxlen=int(capacity))

    def add(
        self,
        stamp: float,
        position_xyz: Sequence[float],
        quaternion_xyzw: Sequence[float],
        linear_body: Sequence[float],
        angular_body: Sequence[float],
    ) -> BaseState:
        """Convert and keep one nav_msgs/Odometry sample; raises OdometryError if unusable."""
        if not math.isfinite(stamp):
            raise OdometryError(f'odometry stamp {stamp} is not finite')
        state = BaseState(
            float(stamp),
            base_pose_from_odometry(position_xyz, quaternion_xyzw),
            base_velocity_from_odometry(linear_body, angular_body),
        )
        self._states.append(state)
        return state

    def nearest(self, stamp: float, max_age: float) -> Optional[BaseState]:
        """The kept sample whose stamp is closest to ``stamp``, if within ``max_age`` [s]."""
        states = self._states
        if (
            states and states[-1].stamp == stamp
        ):  # the usual case: joint state and odometry of one tick
            return states[-1]
        best = min(states, key=lambda state: abs(state.stamp - stamp), default=None)
        if best is None or abs(best.stamp - stamp) > max_age:
            return None
        return best

    def largest_twist_change(self) -> tuple:
        """(linear [m/s²], angular [rad/s²]): the largest change per second of the body twist
        between two consecutive kept samples, (0, 0) with fewer than two. A base state carried
        along a constant twist between samples misses these accelerations."""
        linear = angular = 0.0
        states = list(self._states)
        for before, after in zip(states, states[1:]):
            interval = after.stamp - before.stamp
            if interval <= 0.0:  # a repeated or out-of-order stamp tells no rate
                continue
            step = (after.twist - before.twist) / interval
            linear = max(linear, float(np.linalg.norm(step[:3])))
            angular = max(angular, float(np.linalg.norm(step[3:])))
        return linear, angular

    @property
    def newest_stamp(self) -> float:
        """Stamp of the newest kept sample [s] (−inf when empty)."""
        return self._states[-1].stamp if self._states else -math.inf


# ---------------------------------------------------------------------------- momentum
@dataclass(frozen=True)
class CentroidalState:
    """Centre of mass and centroidal momentum at one instant, all in world-aligned axes.

    com [m] (world frame), momentum h_G = (l, k) [N·s, N·m·s] as one 6-vector, linear
    first, about the CoM; mass [kg].
    """

    com: np.ndarray
    momentum: np.ndarray
    mass: float

    @property
    def linear_momentum(self) -> np.ndarray:
        """l = m ċ [N·s], world axes."""
        return self.momentum[:3]

    @property
    def angular_momentum(self) -> np.ndarray:
        """k about the CoM [N·m·s], world-aligned axes."""
        return self.momentum[3:]

    @property
    def com_velocity(self) -> np.ndarray:
        """ċ = l / m [m/s], world axes."""
        return self.momentum[:3] / self.mass

    def __repr__(self) -> str:
        return (
            f'CentroidalState(com={_fmt(self.com)} m, l={_fmt(self.linear_momentum)} N·s, '
            f'k={_fmt(self.angular_momentum)} N·m·s, mass={self.mass:.3f} kg)'
        )


@dataclass(frozen=True)
class MomentumRate:
    """ḣ_G = (l̇, k̇) as one 6-vector ``rate`` [N, N·m], linear first, about the CoM with
    world-aligned axes, of a robot of ``mass`` [kg]."""

    rate: np.ndarray
    mass: float

    @property
    def linear(self) -> np.ndarray:
        """l̇ [N]."""
        return self.rate[:3]

    @property
    def angular(self) -> np.ndarray:
        """k̇ about the CoM [N·m]."""
        return self.rate[3:]

    @property
    def com_acceleration(self) -> np.ndarray:
        """c̈ = l̇ / m [m/s²]."""
        return self.rate[:3] / self.mass

    def __repr__(self) -> str:
        return f'MomentumRate(l_dot={_fmt(self.linear)} N, k_dot={_fmt(self.angular)} N·m)'


def centroidal_state(robot: RobotModel, q: np.ndarray, v: np.ndarray) -> CentroidalState:
    """CoM, its velocity and h_G = A_G(q) v (pinocchio ``computeCentroidalMomentum``).

    Sums over the links the joints move: for a fixed-base model pinocchio leaves out the
    root link welded to the world; :func:`floating_base_model` gives the whole robot.
    """
    q, v = _check_state(robot, q, v)
    # .vector views the returned Force's memory without keeping it alive: copy it.
    momentum = pin.computeCentroidalMomentum(robot.model, robot.data, q, v).vector.copy()
    return CentroidalState(
        com=robot.data.com[0].copy(), momentum=momentum, mass=float(robot.data.mass[0])
    )


def centroidal_momentum_matrix(robot: RobotModel, q: np.ndarray) -> np.ndarray:
    """A_G(q), 6 × ``robot.nv_reduced``, with h_G = A_G v_reduced.

    Rows are pinocchio's order: linear momentum (3 rows, N·s per unit velocity) then
    angular momentum about the CoM (3 rows), world-aligned axes. Columns: base twist
    (linear, angular, base frame) for a floating base, then the independent joints in
    ``robot.joint_names`` order (mimic followers folded into their leaders).
    """
    q = _check_configuration(robot, q)
    matrix = pin.computeCentroidalMap(robot.model, robot.data, q)
    return matrix @ robot.coupling


def centroidal_momentum_rate(
    robot: RobotModel, q: np.ndarray, v: np.ndarray, a: np.ndarray
) -> MomentumRate:
    """ḣ_G = A_G a + Ȧ_G v (pinocchio ``computeCentroidalMomentumTimeVariation``).

    ``a`` is the pinocchio acceleration (base part: spatial acceleration of the base in the
    base frame, i.e. the time derivative of ``v[0:6]``).
    """
    q, v = _check_state(robot, q, v)
    a = _finite_vector(a, robot.model.nv, 'acceleration a', CentroidalInputError)
    rate = pin.computeCentroidalMomentumTimeVariation(robot.model, robot.data, q, v, a)
    return MomentumRate(rate=rate.vector.copy(), mass=float(robot.data.mass[0]))


# ---------------------------------------------------------------------------- ZMP
def zero_moment_point(
    com: np.ndarray,
    com_acceleration: np.ndarray,
    angular_momentum_rate: np.ndarray,
    mass: float,
    ground_height: float = 0.0,
    gravity: float = STANDARD_GRAVITY,
    epsilon: float = FLIGHT_VERTICAL_ACCELERATION,
) -> Optional[np.ndarray]:
    """ZMP on the ground plane z = ``ground_height`` from centroidal quantities
    (Vukobratović & Borovac 2004).

    p_x = c_x − (c_z − z_g) c̈_x / (c̈_z + g) − k̇_y / (m (c̈_z + g))
    p_y = c_y − (c_z − z_g) c̈_y / (c̈_z + g) + k̇_x / (m (c̈_z + g))

    ``com`` [m] world frame, ``com_acceleration`` [m/s²], ``angular_momentum_rate`` k̇ about
    the CoM, world-aligned [N·m], ``mass`` [kg], ``gravity`` magnitude [m/s²] along −z.
    Returns (p_x, p_y, z_g) [m], or None in flight: c̈_z + g ≤ ``epsilon`` [m/s²].
    """
    com = _finite_vector(com, 3, 'centre of mass', CentroidalInputError).tolist()
    acceleration = _finite_vector(
        com_acceleration, 3, 'CoM acceleration', CentroidalInputError
    ).tolist()
    k_dot = _finite_vector(
        angular_momentum_rate, 3, 'angular momentum rate', CentroidalInputError
    ).tolist()
    if not (math.isfinite(mass) and mass > 0.0):
        raise CentroidalInputError(f'mass must be positive and finite, got {mass}')
    return _zmp_on_ground(com, acceleration, k_dot, mass, ground_height, gravity, epsilon)


def _zmp_on_ground(
    com: list,
    acceleration: list,
    k_dot: list,
    mass: float,
    ground_height: float,
    gravity: float,
    epsilon: float,
) -> Optional[np.ndarray]:
    """The formula of :func:`zero_moment_point` on unchecked floats."""
    support = acceleration[2] + gravity
    if support <= epsilon:
        return None
    height = com[2] - ground_height
    x = com[0] - height * acceleration[0] / support - k_dot[1] / (mass * support)
    y = com[1] - height * acceleration[1] / support + k_dot[0] / (mass * support)
    return np.array([x, y, ground_height])


def zero_moment_point_from_wrenches(
    contact_points: np.ndarray,
    forces: np.ndarray,
    torques: np.ndarray,
    ground_height: float = 0.0,
    min_normal_force: float = 1.0,
) -> Optional[np.ndarray]:
    """ZMP (centre of pressure) of measured contact wrenches on the plane z = ``ground_height``.

    ``contact_points`` (k × 3) [m], ``forces`` (k × 3) [N] and ``torques`` (k × 3) [N·m, the
    couple about the contact point], all in the world frame: the wrench the ground applies
    to the robot. The ZMP P is where the horizontal moment of the summed wrench vanishes:
    with f = Σ fᵢ and n = Σ (pᵢ × fᵢ + τᵢ) about the world origin,
    P_x = (z_g f_x − n_y) / f_z, P_y = (z_g f_y + n_x) / f_z.
    Returns (P_x, P_y, z_g) [m], or None when the vertical force f_z ≤ ``min_normal_force`` [N].
    """
    points = _finite_matrix(contact_points, 'contact points')
    forces = _finite_matrix(forces, 'contact forces')
    torques = _finite_matrix(torques, 'contact torques')
    if not points.shape == forces.shape == torques.shape:
        raise CentroidalInputError(
            f'contact points {points.shape}, forces {forces.shape} and torques {torques.shape} '
            'must have the same k × 3 shape'
        )
    force = forces.sum(axis=0)
    if force[2] <= min_normal_force:
        return None
    moment = np.cross(points, forces).sum(axis=0) + torques.sum(axis=0)
    return np.array(
        [
            (ground_height * force[0] - moment[1]) / force[2],
            (ground_height * force[1] + moment[0]) / force[2],
            ground_height,
        ]
    )


# ---------------------------------------------------------------------------- monitor
@dataclass(frozen=True)
class BalanceSettings:
    """What :class:`CentroidalMonitor` needs besides the model.

    ``contact_frames``: frames whose origins are the contact points (feet soles).
    ``ground_height`` [m] (world z of the ground plane); ``contact_height_threshold`` [m]:
    a contact point lower than this above the ground touches it; ``contact_force_threshold``
    [N]: with measured wrenches, a foot pushing up harder than this touches the ground;
    ``gravity`` magnitude [m/s²]; ``flight_epsilon`` [m/s²] (ε of :func:`zero_moment_point`);
    ``min_normal_force`` [N]: total vertical contact force below which the robot is airborne
    (wrench route); ``rate_window``/``rate_degree``/``max_gap`` [s]: the
    :class:`PolynomialDifferentiator`; ``rate_window_max``: the longest window it grows to
    while h_G is noisy, until the ZMP's predicted noise (standard deviation per horizontal
    axis) is at most ``zmp_noise_limit`` [m] (a ``rate_window_max`` not above ``rate_window``:
    a fixed window).
    """

    contact_frames: tuple = ()
    ground_height: float = 0.0
    contact_height_threshold: float = 0.02
    contact_force_threshold: float = 10.0
    gravity: float = STANDARD_GRAVITY
    flight_epsilon: float = FLIGHT_VERTICAL_ACCELERATION
    min_normal_force: float = 10.0
    rate_window: int = 9
    rate_window_max: int = 51
    zmp_noise_limit: float = 0.004
    rate_degree: int = 2
    max_gap: float = 0.1


class SupportFigures(NamedTuple):
    """The support polygon of a :class:`BalanceReport` and the signed distances [m] of its ZMP,
    CoM ground projection and capture point to that polygon's edge (positive inside; None
    when the polygon is empty or the point missing)."""

    polygon: SupportPolygon
    zmp_margin: Optional[float]
    com_margin: Optional[float]
    capture_point_margin: Optional[float]


class StampedState(NamedTuple):
    """The first stage of :meth:`CentroidalMonitor.update`: ``stamp`` [s], the CoM and momentum
    ``state`` and whether the stamp is ``newer`` than the previous one (False: no ḣ_G)."""

    stamp: float
    state: CentroidalState
    newer: bool


@dataclass(slots=True)
class BalanceReport:
    """Everything the centroidal node publishes for one state, world frame, SI units.

    ``rate`` is None while the ḣ_G estimator warms up and for a sample whose stamp is not
    newer than the previous one (``stamp_not_newer``: h_G cannot be differentiated); on the
    kinematic route ``zmp`` is None then and in flight. ``zmp_source`` is ``'kinematic'`` (ḣ_G
    from the estimator) or ``'wrenches'`` (measured contact wrenches). ``capture_point`` ξ on
    the ground plane z = ``ground_height`` [m]
    (:func:`~robot_dynamics.core.floating_base.capture_point.capture_point`), None when the CoM
    is not above the ground. ``in_contact`` is a mask over ``contacts.names``.
    ``polygon`` and the margins [m] (signed distances to the support polygon edge, positive
    inside, of the ZMP, the capture point and the CoM ground projection; None when the polygon
    (flight) or the point is missing) follow from those fields alone: they are computed when
    first read (a stream that publishes only the CoM never pays for the hull). A value object:
    read it, do not change it.
    """

    stamp: float
    state: CentroidalState
    rate: Optional[MomentumRate]
    zmp: Optional[np.ndarray]
    zmp_source: str
    airborne: bool
    contacts: ContactFrames
    in_contact: np.ndarray
    ground_height: float = 0.0
    capture_point: Optional[np.ndarray] = None
    stamp_not_newer: bool = False
    _support: Optional[SupportFigures] = field(default=None, repr=False, compare=False)

    @property
    def support(self) -> SupportFigures:
        """Support polygon and margins (computed on the first read, then kept)."""
        figures = self._support
        if figures is None:
            points = self.contacts.positions.tolist()
            polygon = support_polygon(
                [point for point, touching in zip(points, self.in_contact.tolist()) if touching],
                self.ground_height,
            )
            figures = SupportFigures(
                polygon,
                _margin(polygon, self.zmp),
                _margin(polygon, self.state.com),
                _margin(polygon, self.capture_point),
            )
            self._support = figures
        return figures

    @property
    def polygon(self) -> SupportPolygon:
        """Convex hull of the contact points touching the ground (empty in flight)."""
        return self.support.polygon

    @property
    def zmp_margin(self) -> Optional[float]:
        """Signed distance of the ZMP to the support polygon edge [m], positive inside."""
        return self.support.zmp_margin

    @property
    def com_margin(self) -> Optional[float]:
        """Signed distance of the CoM ground projection to the support polygon edge [m]."""
        return self.support.com_margin

    @property
    def capture_point_margin(self) -> Optional[float]:
        """Signed distance of the capture point to the support polygon edge [m]."""
        return self.support.capture_point_margin


class CentroidalMonitor:
    """Turns a stream of states (and optional foot wrenches) into :class:`BalanceReport` s.

    Kinematic route: ḣ_G is estimated from successive h_G by :class:`PolynomialDifferentiator`
    and the ZMP follows from :func:`zero_moment_point`; contacts by height. The fit's window
    follows the noise on h_G (:class:`WhiteNoiseLevel`): the shortest from ``rate_window`` to
    ``rate_window_max`` whose ZMP noise, predicted from that level through the fit's noise gain,
    is at most ``zmp_noise_limit`` (:attr:`zmp_noise` [m], the prediction for the window in
    use); chosen again every :data:`WINDOW_REVIEW_SAMPLES` samples. Wrench route (when
    ``update`` gets foot wrenches): ZMP from :func:`zero_moment_point_from_wrenches`,
    contacts by force. Frames are checked when the monitor is built (DescriptionError).
    The monitor owns ``robot.data`` while it runs (one forward kinematics per state serves
    the momentum and the contact frames).
    """

    def __init__(self, robot: RobotModel, settings: BalanceSettings = BalanceSettings()):
        self.robot = robot
        self.settings = settings
        self._frame_names = tuple(settings.contact_frames)
        self._frame_ids = tuple(robot.frame_id(name) for name in self._frame_names)
        self._mass = robot.total_mass()
        self.estimator = estimator = PolynomialDifferentiator(
            settings.rate_window, settings.rate_degree, settings.max_gap, settings.rate_window_max
        )
        windows = np.arange(estimator.window, estimator.capacity + 1)
        self._window_gains = (windows, np.array([estimator.noise_gain(n) for n in windows]))
        self._momentum_noise = WhiteNoiseLevel()
        self._unreviewed = 0
        self.zmp_noise: Optional[float] = None
        """The predicted standard deviation [m] of the kinematic ZMP per horizontal axis from
        the noise on h_G, with the window in use (None until measured)."""

    def update(
        self,
        stamp: float,
        q: np.ndarray,
        v: np.ndarray,
        foot_wrenches: Optional[tuple] = None,
        foot_forces: Optional[np.ndarray] = None,
    ) -> BalanceReport:
        """One state: ``stamp`` [s], pinocchio ``q``/``v``; ``foot_wrenches`` = (forces, torques),
        each (len(contact_frames) × 3) in their contact frames [N, N·m], or None; or
        ``foot_forces`` (len(contact_frames) × 3) [N] in world axes at the contact points (point
        feet, estimated from the joint torques), or None. Either takes the wrench route.

        Raises CentroidalInputError (bad state, or a stamp that is not a finite number). A stamp
        not newer than the previous one still gives CoM, momentum and contacts, without a rate
        (``stamp_not_newer``). The same as :meth:`state` then :meth:`report`.
        """
        return self.report(self.state(stamp, q, v), foot_wrenches, foot_forces)

    def state(self, stamp: float, q: np.ndarray, v: np.ndarray) -> StampedState:
        """First stage of :meth:`update`: the CoM and momentum of one state, its h_G handed to
        the ḣ_G estimator. Raises CentroidalInputError."""
        stamp = _finite_stamp(stamp)
        state = centroidal_state(self.robot, q, v)
        try:
            self.estimator.add(stamp, state.momentum)
            newer = True
            self._follow_noise(state)
        except SampleOrderError:
            newer = False
        except NonFiniteSampleError as error:  # momentum overflowed to Inf (absurd velocities)
            raise CentroidalInputError(f'centroidal momentum not finite: {error}') from None
        return StampedState(stamp, state, newer)

    def report(
        self,
        stamped: StampedState,
        foot_wrenches: Optional[tuple] = None,
        foot_forces: Optional[np.ndarray] = None,
    ) -> BalanceReport:
        """Second stage of :meth:`update`, for the last :meth:`state`: ḣ_G, ZMP, contacts and
        capture point (``robot.data`` still holds that state's kinematics)."""
        settings, state = self.settings, stamped.state
        rate = self._rate() if stamped.newer else None
        contacts = contact_frames_after_kinematics(self.robot, self._frame_names, self._frame_ids)
        com, mass, ground = state.com.tolist(), state.mass, settings.ground_height
        if foot_forces is not None:
            forces = np.asarray(foot_forces, dtype=float)
            foot_wrenches_world: Optional[tuple] = (forces, np.zeros_like(forces))
        elif foot_wrenches is not None:
            foot_wrenches_world = contacts.wrenches_in_world(*foot_wrenches)
        else:
            foot_wrenches_world = None
        if foot_wrenches_world is None:
            in_contact = contacts_by_height(
                contacts.positions.tolist(), ground, settings.contact_height_threshold
            )
            zmp = None if rate is None else self._kinematic_zmp(com, rate)
            airborne = rate is not None and zmp is None
            source = 'kinematic'
        else:
            forces, torques = foot_wrenches_world
            in_contact = contacts_by_force(forces, settings.contact_force_threshold)
            zmp = zero_moment_point_from_wrenches(
                contacts.positions, forces, torques, ground, settings.min_normal_force
            )
            airborne = zmp is None
            source = 'wrenches'
        lx, ly, lz, _, _, _ = state.momentum.tolist()
        capture_xy = capture_point_xy(
            com, [lx / mass, ly / mass, lz / mass], ground, settings.gravity
        )
        return BalanceReport(
            stamp=stamped.stamp,
            state=state,
            rate=rate,
            zmp=zmp,
            zmp_source=source,
            airborne=airborne,
            contacts=contacts,
            in_contact=in_contact,
            ground_height=ground,
            capture_point=None if capture_xy is None else np.array([*capture_xy, ground]),
            stamp_not_newer=not stamped.newer,
        )

    def _follow_noise(self, state: CentroidalState) -> None:
        """Measure the noise on h_G and, every :data:`WINDOW_REVIEW_SAMPLES` samples, choose the
        fit's window from it (class docstring)."""
        noise, estimator = self._momentum_noise, self.estimator
        if estimator.samples == 1:  # a restart (first sample or after a gap)
            noise.reset()
        noise.add(state.momentum)
        self._unreviewed += 1
        if self._unreviewed < WINDOW_REVIEW_SAMPLES:
            return
        self._unreviewed = 0
        sigma, period = noise.sigma(), estimator.period
        height = float(state.com[2]) - self.settings.ground_height
        if sigma is None or not period > 0.0 or height <= 0.0:
            return
        # ZMP_x = c_x − (h ṗ_x + k̇_y) / (m g) near rest: the horizontal rates' noise, mapped
        linear_x, linear_y, _, angular_x, angular_y, _ = sigma.tolist()
        per_gain = max(
            math.hypot(height * linear_x, angular_y), math.hypot(height * linear_y, angular_x)
        ) / (state.mass * self.settings.gravity * period)
        windows, gains = self._window_gains
        quiet = gains * per_gain <= self.settings.zmp_noise_limit
        choice = int(np.argmax(quiet)) if quiet.any() else len(windows) - 1
        estimator.use_window(int(windows[choice]))
        self.zmp_noise = float(gains[choice] * per_gain)

    def _kinematic_zmp(self, com: list, rate: MomentumRate) -> Optional[np.ndarray]:
        settings, mass = self.settings, rate.mass
        h_dot = rate.rate.tolist()
        acceleration = [h_dot[0] / mass, h_dot[1] / mass, h_dot[2] / mass]
        return _zmp_on_ground(
            com,
            acceleration,
            h_dot[3:],
            mass,
            settings.ground_height,
            settings.gravity,
            settings.flight_epsilon,
        )

    def _rate(self) -> Optional[MomentumRate]:
        h_dot = self.estimator.rate()
        return None if h_dot is None else MomentumRate(rate=h_dot, mass=self._mass)


def _finite_stamp(stamp) -> float:
    try:
        stamp = float(stamp)
    except (TypeError, ValueError):
        raise CentroidalInputError(f'stamp {stamp!r} is not a number of seconds') from None
    if not math.isfinite(stamp):
        raise CentroidalInputError(f'stamp {stamp} s is not finite')
    return stamp


def _margin(polygon: SupportPolygon, point) -> Optional[float]:
    if point is None or polygon.is_empty:
        return None
    return polygon.signed_distance(point)


# ---------------------------------------------------------------------------- helpers
def _check_state(robot: RobotModel, q: np.ndarray, v: np.ndarray) -> tuple:
    return (
        _check_configuration(robot, q),
        _finite_vector(v, robot.model.nv, 'velocity v', CentroidalInputError),
    )


def _check_configuration(robot: RobotModel, q: np.ndarray) -> np.ndarray:
    return _finite_vector(q, robot.model.nq, 'configuration q', CentroidalInputError)


def _finite_vector(values, size: int, label: str, error: type) -> np.ndarray:
    if type(values) is np.ndarray and values.dtype is _FLOAT64 and values.shape == (size,):
        array = values  # what the stream passes: no conversion
    else:
        try:
            array = np.asarray(values, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise error(f'{label} is not a list of numbers') from None
        if array.shape != (size,):
            raise error(f'{label} must have {size} entries, got {array.size}')
    # One sum proves finiteness unless it overflows; only then look at each entry.
    if not math.isfinite(sum(array.tolist())) and not np.all(np.isfinite(array)):
        raise error(f'{label} contains NaN or Inf: {array.tolist()}')
    return array


def _finite_floats(values, size: int, label: str, error: type) -> list:
    """``values`` as a list of ``size`` finite floats (a tuple of message fields is the fast
    case)."""
    if type(values) is tuple and len(values) == size:
        try:
            floats = [float(x) for x in values]
        except (TypeError, ValueError):
            floats = [math.nan]
        if math.isfinite(sum(floats)):
            return floats
    return _finite_vector(values, size, label, error).tolist()


def _finite_matrix(values, label: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise CentroidalInputError(f'{label} is not an array of numbers') from None
    if array.ndim != 2 or array.shape[1] != 3:
        raise CentroidalInputError(f'{label} must be k × 3, got shape {array.shape}')
    if not np.all(np.isfinite(array)):
        raise CentroidalInputError(f'{label} contains NaN or Inf')
    return array


def _fmt(vector: np.ndarray) -> str:
    return '[' + ', '.join(f'{x:.4g}' for x in vector) + ']'
