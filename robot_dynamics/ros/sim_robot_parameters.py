"""sim_robot's parameters: the one table the node declares them from.

config/sim_robot.yaml (section ``/**/sim_robot``) is checked against it
(test/test_parameter_schema.py). Every parameter is read once at start-up, then read-only.
"""

from __future__ import annotations

import math

from robot_dynamics.ros.parameter_schema import (
    FRAME_NAME,
    GRAVITY,
    NON_NEGATIVE,
    POSITIVE,
    three_angles,
)
from robot_dynamics.ros.parameter_schema import ParameterSpec as P
from robot_dynamics.simulation.reference import FEEDBACK_MODES
from robot_dynamics.simulation.scenes import BASE_MOTIONS, SCENES

ENGINES = ('mujoco', 'pinocchio')
LEGGED_ROBOTS = ('quadruped', 'solo12')
MIN_SIMULATION_RATE = 1000.0
"""Lowest integration rate [Hz] of an arm simulation (semi-implicit Euler)."""
MIN_LEGGED_RATE = 500.0
"""Lowest integration rate [Hz] of the MuJoCo legged scene."""


def _finite(value, _node=None) -> bool:
    return math.isfinite(value)


SIM_ROBOT_PARAMETERS = (
    # engine and proving ground
    P(
        'engine',
        'mujoco',
        "'mujoco': the proving ground (profiles, scenes, contacts, truth); 'pinocchio': the "
        'exact reference (the URDF integrated with pinocchio)',
        choices=ENGINES,
    ),
    P(
        'robot_profile',
        'ideal',
        "mujoco: 'ideal', 'realistic' or a profile YAML path (the true robot's deviations from "
        'its URDF and its sensors)',
    ),
    P('profile_seed', 0, 'mujoco: seed of every draw of the robot profile', low=0),
    P('scene', 'arm', 'mujoco: the scene', choices=SCENES),
    P(
        'base_tilt',
        [0.0, 0.0, 0.0],
        'mujoco, scene tilted_base: roll, pitch, yaw of the arm base',
        'rad',
        check=three_angles,
        requirement='is not 3 finite angles within ±2π [rad] (degrees?)',
    ),
    P('base_motion', 'mobile', 'mujoco, scene moving_base: the base motion', choices=BASE_MOTIONS),
    P(
        'obstacles',
        [],
        "mujoco, arm scenes: boxes 'x y z sx sy sz' (centre in the world, edge lengths, m)",
    ),
    P(
        'legged_robot',
        'quadruped',
        "mujoco, scene legged: 'quadruped' (bundled) or 'solo12' (example-robot-data)",
        choices=LEGGED_ROBOTS,
    ),
    # robot
    P('robot_description', '', 'URDF text of the simulated robot; overrides urdf_file'),
    P('urdf_file', '', 'URDF file; empty: the bundled arm (fixed) or quadruped (floating)'),
    P('root_joint', 'fixed', "'fixed': dynamic arm simulation; 'floating': kinematic base sway"),
    GRAVITY,
    # timing
    P(
        'publish_rate',
        250.0,
        'joint_states (and odom) rate',
        'Hz',
        low=0.0,
        low_open=True,
        high=10000.0,
    ),
    P(
        'simulation_rate',
        0.0,
        f'integration rate: a whole multiple of publish_rate of at least '
        f'{MIN_SIMULATION_RATE:g} Hz ({MIN_LEGGED_RATE:g} Hz on the legged scene); 0: the '
        'smallest such one',
        'Hz',
        check=lambda rate, node: rate == 0.0 or is_whole_multiple(rate, node),
        requirement='is not 0 (the smallest rate that fits) or a whole multiple of publish_rate '
        'of at least the minimum rate',
    ),
    P('max_catch_up', 0.05, 'most simulated time integrated per timer tick', 's', **POSITIVE),
    # hidden payload
    P('payload_link', 'tool0', 'link the hidden payload is fixed to'),
    P('payload_mass', 0.0, 'hidden payload mass; 0: no payload', 'kg', **NON_NEGATIVE),
    P('payload_com', [0.0, 0.0, 0.0], 'hidden payload CoM in payload_link', 'm'),
    P(
        'payload_inertia',
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        'hidden payload inertia about its CoM, payload_link axes: ixx, ixy, ixz, iyy, iyz, izz',
        'kg m^2',
    ),
    P('start_with_payload', True, 'attach the hidden payload at start (else on ~/attach_payload)'),
    # sensor noise (pinocchio engine)
    P('position_noise', 0.0, '1-sigma noise on published positions', 'rad', **NON_NEGATIVE),
    P('velocity_noise', 0.001, '1-sigma noise on published velocities', 'rad/s', **NON_NEGATIVE),
    P('effort_noise', 0.02, '1-sigma noise on published efforts', 'N m', **NON_NEGATIVE),
    P('seed', 0, 'seed of the noise generator', low=0),
    # excitation tracked by the arm
    P(
        'excitation_frequency',
        0.2,
        'base frequency of the Fourier excitation (1/period)',
        'Hz',
        **POSITIVE,
    ),
    P('excitation_harmonics', 4, 'harmonics of the Fourier excitation', low=1),
    P('trajectory_seed', 1, 'seed of the excitation coefficients', low=0),
    P(
        'max_acceleration',
        3.0,
        'largest joint acceleration of the excitation',
        'rad/s^2',
        **POSITIVE,
    ),
    P(
        'velocity_fraction',
        0.5,
        'largest joint speed as a fraction of the URDF limit',
        low=0.0,
        low_open=True,
        high=1.0,
    ),
    P('tracking_bandwidth', 10.0, 'computed-torque tracking bandwidth', 'Hz', **POSITIVE),
    P(
        'controller_feedback',
        'exact',
        "pinocchio engine: what the computed-torque controller feeds back: 'exact' (the true "
        "state) or 'measured' (the published noisy positions and velocities, as a real robot's "
        'controller)',
        choices=FEEDBACK_MODES,
    ),
    # floating base, pinocchio engine
    P(
        'world_frame',
        'odom',
        'floating base: frame_id of odom (the world)',
        **FRAME_NAME,
    ),
    P(
        'base_frame',
        'base',
        'floating base: child_frame_id of odom (the base link)',
        **FRAME_NAME,
    ),
    P(
        'contact_frames',
        ['lf_foot', 'rf_foot', 'lh_foot', 'rh_foot'],
        'floating base: frames that stay fixed on the ground (3 joints per frame)',
    ),
    P(
        'stance_positions',
        [0.0, 0.8, -1.6] * 4,
        'floating base: stance joint positions in model joint order (default: the bundled '
        'quadruped, every leg haa 0, hfe 0.8, kfe -1.6)',
        'rad',
    ),
    P('sway_amplitude', 0.04, 'floating base: base sway amplitude', 'm', **NON_NEGATIVE),
    P('sway_tilt', 0.05, 'floating base: roll/pitch amplitude', 'rad', **NON_NEGATIVE),
    P('sway_frequency', 0.5, 'floating base: sway frequency', 'Hz', **POSITIVE),
    P(
        'ground_height',
        0.0,
        'floating base: height of the ground plane in world_frame',
        'm',
        check=_finite,
        requirement='is not a finite height [m]',
    ),
)


def minimum_simulation_rate(engine: str, scene: str) -> float:
    """The lowest integration rate [Hz] of the ``engine`` simulating ``scene``."""
    return MIN_LEGGED_RATE if (engine, scene) == ('mujoco', 'legged') else MIN_SIMULATION_RATE


def is_whole_multiple(rate: float, node) -> bool:
    """True when ``rate`` [Hz] is at least the node's minimum rate and its ``publish_rate``
    (declared before ``simulation_rate``) times a whole number (to 1e-9 relative)."""
    value = node.get_parameter
    publish_rate = value('publish_rate').value
    minimum = minimum_simulation_rate(value('engine').value, value('scene').value)
    if not minimum * (1.0 - 1e-9) <= rate < math.inf:  # false for NaN
        return False
    ratio = rate / publish_rate
    return abs(ratio - round(ratio)) <= 1e-9 * ratio


def smallest_whole_multiple(publish_rate: float, minimum: float) -> float:
    """The smallest whole multiple of ``publish_rate`` [Hz] that is ≥ ``minimum`` [Hz]."""
    return max(1, math.ceil(minimum / publish_rate * (1.0 - 1e-12))) * publish_rate
