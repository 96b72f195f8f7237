"""centroidal_node's parameters: the one table the node declares them from.

README's centroidal_node table and config/robot_dynamics.yaml (section ``/**/centroidal``) are
checked against it (test/test_parameter_schema.py).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

from robot_dynamics.core.errors import DescriptionError
from robot_dynamics.core.floating_base.centroidal import (
    FLIGHT_VERTICAL_ACCELERATION,
    OdometryError,
    base_pose_from_odometry,
)
from robot_dynamics.core.floating_base.contact_frame_choice import (
    ContactFrameChoice,
    chosen_contact_frames,
)
from robot_dynamics.core.model.model import RobotModel, listed_names
from robot_dynamics.core.streams.base_state import BASE_STATES
from robot_dynamics.core.streams.joint_states import STALE_TIMEOUT
from robot_dynamics.ros.base_state_input import BASE_STATE_INPUT_PARAMETERS
from robot_dynamics.ros.centroidal_diagnostics import FRICTION_COEFFICIENT
from robot_dynamics.ros.diagnostics import DIAGNOSTICS_PERIOD
from robot_dynamics.ros.joint_state_wire import JOINT_STATE_STAMPS
from robot_dynamics.ros.lifecycle import MANAGED
from robot_dynamics.ros.model_source import MODEL_SOURCE_PARAMETERS
from robot_dynamics.ros.parameter_schema import (
    DIAGNOSTICS_PERIODS,
    FRAME_NAME,
    NON_NEGATIVE,
    POSITIVE,
    plausible_gravity,
)
from robot_dynamics.ros.parameter_schema import ParameterSpec as P

MAX_RATE_WINDOW = 1000
"""Largest window [samples] of the momentum-rate fit."""


def _downward(gravity, _node=None) -> bool:
    """A plausible gravity (:func:`plausible_gravity`) along −z of the world (the ZMP formula's
    assumption), within 1e-6 of its norm."""
    if not plausible_gravity(gravity):
        return False
    norm = math.sqrt(sum(g * g for g in gravity))
    return gravity[2] < 0.0 and math.hypot(gravity[0], gravity[1]) <= 1e-6 * norm


def _usable_pose(pose, _node=None) -> bool:
    if len(pose) != 7:
        return False
    try:
        base_pose_from_odometry(pose[:3], pose[3:])
    except OdometryError:
        return False
    return True


def _finite(value, _node=None) -> bool:
    return math.isfinite(value)


def _model_source_parameters() -> tuple:
    """The model source's rows, gravity along −z (the ZMP formula uses its norm as g)."""
    rows = []
    for row in MODEL_SOURCE_PARAMETERS:
        if row.name == 'gravity':
            row = replace(
                row,
                description='gravity vector in the world frame, along -z (its norm is the ZMP g)',
                check=_downward,
                requirement='is not 3 finite numbers [m/s²] of norm at most 100, pointing along '
                '-z of world_frame (the ZMP formula assumes it)',
            )
        rows.append(row)
    return tuple(rows)


CENTROIDAL_PARAMETERS = _model_source_parameters() + (
    MANAGED,
    # frames and ground
    P(
        'world_frame',
        'odom',
        'frame of every output; odom messages must have it as frame_id',
        **FRAME_NAME,
    ),
    P(
        'base_pose',
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
        'fixed-base robot: base pose in world_frame [x, y, z, qx, qy, qz, qw] until odom arrives '
        '(base_state odom), or always (none, mounting: its position; imu: its position)',
        check=_usable_pose,
        requirement='is not a pose [x, y, z, qx, qy, qz, qw] with a unit quaternion',
    ),
    P(
        'base_state',
        'odom',
        "where the base's pose and twist come from: 'odom' (topic odom; a fixed base stands at "
        "base_pose until odom arrives), 'none' (at rest at base_pose), 'mounting' (at rest at "
        "base_pose's position, attitude base_orientation), 'imu' (attitude and angular velocity "
        "from topic imu, position base_pose) or 'odom+imu'",
        choices=BASE_STATES,
    ),
    *BASE_STATE_INPUT_PARAMETERS,
    P(
        'ground_height',
        0.0,
        'height of the ground plane in world_frame',
        'm',
        check=_finite,
        requirement='is not a finite height [m]',
    ),
    # contacts and ZMP
    P(
        'contact_frames',
        [],
        'frames whose origins are the contact points (feet soles); one name or a list',
        distinct='contact frame',
    ),
    P(
        'contact_wrench_topics',
        [],
        'WrenchStamped topics, one per contact frame in the same order (ground force on the foot, '
        'in the contact frame); empty: ZMP from the estimated rate of momentum',
    ),
    P(
        'contact_height_threshold',
        0.02,
        'a contact point closer than this to the ground is in contact (kinematic route)',
        'm',
        **NON_NEGATIVE,
    ),
    P(
        'contact_source',
        'height',
        "which feet touch the ground: 'height' (contact points within contact_height_threshold "
        "of the ground) or 'force' (the feet's ground forces estimated from the joint torques; "
        'needs efforts and odom)',
        choices=('height', 'force'),
    ),
    P(
        'contact_force_threshold',
        10.0,
        'a foot pushing harder than this is in contact (wrench route, contact_source force)',
        'N',
        **NON_NEGATIVE,
    ),
    P(
        'min_normal_force',
        10.0,
        'total vertical contact force below which the robot is airborne (wrench route)',
        'N',
        **NON_NEGATIVE,
    ),
    P(
        'flight_epsilon',
        FLIGHT_VERTICAL_ACCELERATION,
        'airborne when c̈_z + g is below this (kinematic route)',
        'm/s²',
        **NON_NEGATIVE,
    ),
    P(
        'friction_coefficient',
        FRICTION_COEFFICIENT,
        'Coulomb coefficient μ of the contacts; each contact wrench is checked for f_n >= 0 and '
        '|f_t| <= μ f_n',
        **POSITIVE,
    ),
    P(
        'rate_window',
        9,
        'samples of h_G in the causal polynomial fit giving its rate: the shortest window, used '
        'while h_G is clean (a window smaller than rate_degree + 2 is raised to it)',
        'samples',
        low=3,
        high=MAX_RATE_WINDOW,
    ),
    P(
        'rate_window_max',
        51,
        'the longest window the fit grows to while h_G is noisy (at most rate_window: a fixed '
        'window)',
        'samples',
        low=3,
        high=MAX_RATE_WINDOW,
    ),
    P(
        'zmp_noise_limit',
        0.004,
        'the fit takes the shortest window whose kinematic ZMP noise, predicted from the noise '
        'measured on h_G, is at most this (standard deviation per horizontal axis)',
        'm',
        **POSITIVE,
    ),
    P(
        'rate_degree',
        2,
        'degree of that polynomial (the estimate has no lag up to it)',
        low=1,
        high=10,
    ),
    P(
        'max_gap',
        0.1,
        'a joint-state gap longer than this restarts the rate estimate',
        's',
        **POSITIVE,
    ),
    P(
        'stale_timeout',
        STALE_TIMEOUT,
        'a joint value, odometry or wrench older than this than the joint state being processed '
        'is stale; joint states going on from more than this before the newest restart the '
        'stream (a bag loop, a simulation reset)',
        's',
        **POSITIVE,
    ),
    JOINT_STATE_STAMPS,
    # outputs
    P('marker_rate', 30.0, 'highest rate of ~/markers', 'Hz', **POSITIVE),
    P(
        'momentum_arrow_scale',
        0.05,
        'length of the momentum arrows per unit momentum',
        'm/(N·s)',
        check=_finite,
        requirement='is not a finite number',
    ),
    P(
        'diagnostics_period',
        DIAGNOSTICS_PERIOD,
        'period of /diagnostics on the steady clock (also with use_sim_time)',
        's',
        **DIAGNOSTICS_PERIODS,
    ),
)
"""Every parameter of centroidal_node, in the order of config/robot_dynamics.yaml."""


def contact_frames_on(
    robot: RobotModel, requested: Sequence[str], need_joint: bool = False
) -> ContactFrameChoice:
    """``requested`` (the ``contact_frames`` parameter) split into the frames ``robot`` can take
    and those it cannot (:func:`chosen_contact_frames`; ``need_joint``: the root link and frames
    fixed to it refused, as where forces come from the joint torques). Raises DescriptionError,
    naming the parameter, when frames are requested and none is taken: no contact point could be
    placed."""
    choice = chosen_contact_frames(robot, requested, need_joint)
    if choice.left_out and not choice.names:
        words = '; '.join(
            ([missing_contact_frames_words(robot, choice.missing)] if choice.missing else [])
            + [f'parameter contact_frames: {reason}' for reason in choice.refused]
        )
        raise DescriptionError(f'{words}: no contact frame left')
    return choice


def missing_contact_frames_words(robot: RobotModel, missing: Sequence[str]) -> str:
    """'parameter contact_frames: "x" is not a frame of model "m" (its links: ...)'."""
    quoted = ', '.join(f'"{name}"' for name in missing)
    verb = 'is not a frame' if len(missing) == 1 else 'are not frames'
    return (
        f'parameter contact_frames: {quoted} {verb} of model "{robot.name}" (its links: '
        f'{listed_names(robot.description.links)})'
    )
