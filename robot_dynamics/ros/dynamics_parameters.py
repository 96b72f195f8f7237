"""dynamics_node's parameters: the one table the node declares them from.

README's dynamics_node table and config/robot_dynamics.yaml (section ``/**/dynamics``) are
checked against it (test/test_parameter_schema.py); :func:`live_settings` turns the values into
the core's :class:`~robot_dynamics.core.live.live_dynamics.LiveSettings`.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Mapping

from rclpy.node import Node

from robot_dynamics.core.contact.contact_detection import (
    DEFAULT_MIN_DURATION,
    DEFAULT_RELEASE_DURATION,
    DEFAULT_RELEASE_RATIO,
    DEFAULT_SIGMA,
)
from robot_dynamics.core.contact.external_wrench import (
    DEFAULT_DAMPING,
    DEFAULT_SINGULAR_THRESHOLD,
    WRENCH_REFERENCES,
)
from robot_dynamics.core.contact.momentum_observer import DEFAULT_GAIN
from robot_dynamics.core.identification.payload import MODES as PAYLOAD_MODES
from robot_dynamics.core.live.known_wrench import KNOWN_WRENCH_TIMEOUT
from robot_dynamics.core.live.settings import (
    ACCELERATION_WINDOW,
    CALIBRATION_DURATION,
    MAX_ACCELERATION_WINDOW,
    MOMENTUM_CHOICES,
    ROUTES,
    TORQUE_WARN_RATIO,
    LiveSettings,
)
from robot_dynamics.core.streams.base_state import (
    BASE_STATES,
    MAX_BASE_STATE_AGE,
    SMOOTHING_TIME,
)
from robot_dynamics.core.streams.effort_model import effort_model_problem, load_effort_model
from robot_dynamics.core.streams.joint_states import STALE_TIMEOUT
from robot_dynamics.core.streams.live_torques import ACCELERATION_MODES, MAX_EFFORT_DELAY
from robot_dynamics.ros.base_state_input import BASE_STATE_INPUT_PARAMETERS
from robot_dynamics.ros.diagnostics import DIAGNOSTICS_PERIOD
from robot_dynamics.ros.joint_state_wire import JOINT_STATE_STAMPS
from robot_dynamics.ros.lifecycle import MANAGED
from robot_dynamics.ros.model_source import MODEL_SOURCE_PARAMETERS
from robot_dynamics.ros.parameter_schema import (
    DIAGNOSTICS_PERIODS,
    FRAME_NAME,
    NON_NEGATIVE,
    POSITIVE,
    topic_name_or_empty,
)
from robot_dynamics.ros.parameter_schema import ParameterSpec as P
from robot_dynamics.ros.service_worker import DEFAULT_CPU_SHARE

BUFFER_DURATION = 30.0
"""Default seconds of (q, q̇, effort) the payload recording keeps [s]."""

BUFFER_MAX_RATE = 1000.0
"""Default highest joint_states rate the recording is sized for [Hz]."""

CONTACT_RATE = 10.0
"""Default rate of ~/contact besides every change [Hz]."""

EFFECTIVE_MASS_RATE = 10.0
"""Default rate of ~/effective_mass [Hz]."""

MAX_EFFECTIVE_MASS_RATE = 100.0
"""Highest rate of ~/effective_mass [Hz]: a low-rate output, off the per-message path."""


def _is_model_link(link: str, node: Node) -> bool:
    """Empty, or a link of the node's live model (any link before one is loaded)."""
    robot = node.robot
    return not link or robot is None or link in robot.description.links


def _is_effort_model_file(path: str, node: Node) -> bool:
    """Empty or a usable effort model file (the reason is logged when not)."""
    problem = effort_model_problem(path)
    if problem:
        node.get_logger().error(problem)
    return not problem


def _is_list_of_numbers(values, _node: Node) -> bool:
    return len(values) >= 1


DYNAMICS_PARAMETERS = MODEL_SOURCE_PARAMETERS + (
    # torque stream
    P(
        'acceleration_mode',
        'estimated',
        "'estimated' (causal differentiation of velocity) or 'zero' (q̈ = 0 in the inverse "
        'dynamics)',
        choices=ACCELERATION_MODES,
    ),
    P(
        'acceleration_window',
        ACCELERATION_WINDOW,
        'samples in the least-squares velocity slope giving q̈ (delay ≈ half)',
        'samples',
        low=2,
        high=MAX_ACCELERATION_WINDOW,
    ),
    P(
        'stale_timeout',
        STALE_TIMEOUT,
        'a joint value older than this than the newest is stale; joint states going on from more '
        'than this before the newest restart the stream (a bag loop, a simulation reset)',
        's',
        **POSITIVE,
    ),
    JOINT_STATE_STAMPS,
    P(
        'effort_delay',
        0.0,
        'how long before its positions a joint state\'s efforts were measured (a drive\'s torque '
        'filter, a bus cycle); every output then describes that instant and carries its stamp',
        's',
        low=0.0,
        high=MAX_EFFORT_DELAY,
    ),
    P(
        'effort_model_file',
        '',
        'YAML file: per joint what effort is (torque, current, motor_torque) with k_t, gear '
        'ratio, efficiency and sign; empty: efforts are joint torques',
        check=_is_effort_model_file,
        requirement='is not a usable effort model file (reason above)',
    ),
    P(
        'torque_warn_ratio',
        TORQUE_WARN_RATIO,
        '|tau|/effort limit above which diagnostics warn (error above 1)',
        low=0.0,
        low_open=True,
        high=1.0,
    ),
    P(
        'diagnostics_period',
        DIAGNOSTICS_PERIOD,
        'period of /diagnostics on the steady clock (also with use_sim_time)',
        's',
        **DIAGNOSTICS_PERIODS,
    ),
    # payload identification
    P(
        'payload_link',
        '',
        'link whose frame carries the payload; empty: the last link of the chain (following '
        'fixed joints); read at each use',
        runtime=True,
        check=_is_model_link,
        requirement='is not a link of the robot model',
    ),
    P(
        'payload_mode',
        'auto',
        "'auto', 'mass_com' (4 parameters) or 'full' (10 parameters)",
        choices=PAYLOAD_MODES,
        runtime=True,
    ),
    P(
        'effort_scale_uncertainty',
        0.02,
        'assumed 1σ relative scale error of each joint\'s efforts (torque constants, gear ratios, '
        'sensor gains), carried into the 1σ of identify_payload; 0 for calibrated efforts',
        low=0.0,
        high=1.0,
    ),
    P(
        'tools_file',
        '',
        'YAML of named tool presets (link, mass, com, inertia, optional ft_bias) for active_tool',
    ),
    P(
        'active_tool',
        '',
        'the tool of tools_file in use as the payload; empty: none (or what ~/set_payload set)',
        runtime=True,
    ),
    P(
        'save_identified_payload_as',
        '',
        'when set, a successful identify_payload is saved to tools_file under this name',
        runtime=True,
    ),
    P(
        'apply_identified_payload',
        False,
        'attach an identified payload to the live model',
        runtime=True,
    ),
    P(
        'buffer_duration',
        BUFFER_DURATION,
        'seconds of (q, qd, effort) kept for payload identification',
        's',
        **POSITIVE,
    ),
    P(
        'buffer_max_rate',
        BUFFER_MAX_RATE,
        'highest joint_states rate the buffer is sized for',
        'Hz',
        **POSITIVE,
    ),
    P(
        'baseline_file',
        '',
        'CSV file the no-payload baseline is saved to (record_baseline, read at each call) / '
        'loaded from (at start)',
        runtime=True,
    ),
    P(
        'report_directory',
        '',
        'where YAML reports go; empty: ~/.ros/robot_dynamics',
        runtime=True,
    ),
    P(
        'service_cpu_share',
        DEFAULT_CPU_SHARE,
        'average share of one CPU core identify_payload and validate_inertia may use when '
        'called back to back (an isolated call runs at full speed): the torque stream goes first',
        low=0.0,
        low_open=True,
        high=1.0,
    ),
    # contact handling
    P(
        'external_torque_method',
        'observer',
        "'observer' (generalized-momentum observer, no joint accelerations) or "
        "'inverse_dynamics' (measured effort minus inverse dynamics)",
        choices=ROUTES,
    ),
    P(
        'observer_gain',
        DEFAULT_GAIN,
        'momentum observer gain K_O: r is a first-order low-pass of the external torque with '
        'time constant 1/K_O',
        '1/s',
        **POSITIVE,
    ),
    P(
        'observer_filter_gain',
        0.0,
        "K_F of a second low-pass stage on the observer's output (0: none): the observer is "
        'then second order and passes far less velocity noise, for 1/K_F more lag',
        '1/s',
        **NON_NEGATIVE,
    ),
    P(
        'observer_momentum',
        'auto',
        "where the observer's momentum comes from: 'positions' (joint-position increments), "
        "'velocities' (p = M q_dot) or 'auto' (positions; the calibration keeps the quieter of "
        'the two)',
        choices=MOMENTUM_CHOICES,
    ),
    P(
        'friction_file',
        '',
        'friction YAML of robot_dynamics identify, subtracted from the measured efforts; empty: '
        'no friction model',
    ),
    P(
        'effort_offsets_file',
        '',
        'effort offsets subtracted from the measured efforts: loaded at start, written by '
        '~/zero_effort_offsets; empty: offsets only in memory',
    ),
    P(
        'rotor_inertia',
        [0.0],
        'reflected rotor inertia per joint (rotor inertia x gear ratio squared), model joint '
        'order, added to M(q); [0.0]: the rotor_inertia of friction_file, else none',
        'kg·m²',
        check=_is_list_of_numbers,
        requirement='is not a list of numbers',
    ),
    P(
        'contact_thresholds',
        [0.0],
        'contact threshold per joint, model joint order; [0.0]: none given (call '
        '~/calibrate_contact_thresholds)',
        'N·m',
        check=_is_list_of_numbers,
        requirement='is not a list of numbers',
    ),
    P(
        'contact_threshold_sigma',
        DEFAULT_SIGMA,
        'calibrated threshold = |mean| + k sigma of the contact-free residual; this is k',
        **POSITIVE,
    ),
    P(
        'contact_calibration_duration',
        CALIBRATION_DURATION,
        'seconds of contact-free motion the calibration uses (the last ones)',
        's',
        **POSITIVE,
    ),
    P(
        'contact_min_duration',
        DEFAULT_MIN_DURATION,
        'a contact starts once a ratio has exceeded 1 this long',
        's',
        low=0.0,
        high=1.0,
        high_open=True,
    ),
    P(
        'contact_release_ratio',
        DEFAULT_RELEASE_RATIO,
        'a contact ends once every ratio is below this (hysteresis) ...',
        low=0.0,
        low_open=True,
        high=1.0,
    ),
    P(
        'contact_release_duration',
        DEFAULT_RELEASE_DURATION,
        '... for this long',
        's',
        low=0.0,
        high=10.0,
        high_open=True,
    ),
    P(
        'contact_rate',
        CONTACT_RATE,
        'rate of ~/contact besides every change',
        'Hz',
        **POSITIVE,
    ),
    P(
        'contact_profiles_file',
        '',
        'YAML of contact sensitivity profiles added to the shipped default, sensitive, '
        'hand_guiding and off',
    ),
    P(
        'contact_profile',
        'default',
        'the contact sensitivity profile in use (threshold scale, durations, whether ~/contact '
        'is raised); runtime',
        runtime=True,
    ),
    P(
        'wrench_frame',
        '',
        'frame of ~/external_wrench (force and torque at its origin, in its axes); empty: the '
        'payload link',
    ),
    P(
        'wrench_damping',
        DEFAULT_DAMPING,
        'largest damping of the wrench least squares, reached at a singular direction',
        'm',
        **POSITIVE,
    ),
    P(
        'wrench_singular_threshold',
        DEFAULT_SINGULAR_THRESHOLD,
        'Jacobian singular value below which a wrench direction is not identifiable (and damped)',
        **POSITIVE,
    ),
    P(
        'wrench_reference',
        'contact_onset',
        "what ~/external_wrench explains during a raised contact: 'contact_onset' (the change "
        "of the external torques since just before the contact began) or 'zero' (all of them)",
        choices=WRENCH_REFERENCES,
    ),
    # tool outputs
    P(
        'effective_mass_rate',
        EFFECTIVE_MASS_RATE,
        'rate of ~/effective_mass (0: off)',
        'Hz',
        low=0.0,
        high=MAX_EFFECTIVE_MASS_RATE,
    ),
    P(
        'effective_mass_frame',
        '',
        'frame whose origin ~/effective_mass is for (the tool point); empty: the payload link',
    ),
    P(
        'known_wrench_timeout',
        KNOWN_WRENCH_TIMEOUT,
        'a known external wrench not received again within this time is removed',
        's',
        **POSITIVE,
    ),
    # base state
    P(
        'base_state',
        'none',
        "where the base's tilt and motion come from: 'none' (upright, at rest), 'mounting' "
        "(base_orientation), 'imu' (topic imu), 'odom' (topic odom) or 'odom+imu'",
        choices=BASE_STATES,
    ),
    *BASE_STATE_INPUT_PARAMETERS,
    P(
        'max_base_state_age',
        MAX_BASE_STATE_AGE,
        'largest stamp difference between a joint state and the base state it uses; beyond: '
        'no outputs',
        's',
        **POSITIVE,
    ),
    P(
        'base_state_smoothing',
        SMOOTHING_TIME,
        'time constant of the low-pass on the IMU and odometry before they are differentiated; '
        '0: none',
        's',
        low=0.0,
    ),
    MANAGED,
    # wrist force/torque sensor
    P(
        'ft_sensor_topic',
        '',
        'geometry_msgs/WrenchStamped of a wrist F/T sensor (frame_id: a frame of the URDF), '
        'compensated for its bias and the payload in use on ~/compensated_wrench; empty: none',
        check=topic_name_or_empty,
        requirement='is not a ROS topic name',
    ),
    # feet (floating base)
    P(
        'world_frame',
        'odom',
        'frame_id of ~/feet/<frame>/force: world-aligned axes (gravity along -z); as '
        'centroidal_node\'s world_frame',
        **FRAME_NAME,
    ),
    P(
        'contact_frames',
        [],
        'contact points (frames of the URDF, e.g. the feet) whose ground forces are estimated '
        'from the joint torques (floating-base models)',
        distinct='contact frame',
    ),
    P(
        'foot_contact_force',
        0.0,
        'a foot is in contact above this vertical force, until it falls below half of it; 0: '
        '3 % and 1.5 % of the robot\'s weight',
        'N',
        low=0.0,
    ),
    # ros2_control command
    P(
        'command_joints',
        [],
        'joint order of ~/gravity_command (a controller\'s joint list); empty: model joint order',
    ),
    P(
        'command_friction',
        False,
        'add the friction of friction_file at the measured velocities to ~/gravity_command',
    ),
    # inertia validation
    P(
        'mesh_package_paths',
        [],
        'NAME=DIR entries to resolve package:// meshes for validate_inertia',
        runtime=True,
    ),
    P(
        'mesh_allowed_roots',
        [],
        'directories file:// meshes may be read from (validate_inertia)',
        runtime=True,
    ),
)
"""Every parameter of dynamics_node, in the order of config/robot_dynamics.yaml."""


def live_settings(parameters: Mapping) -> LiveSettings:
    """The core's settings of the live pipeline from the node's parameter values (each field of
    :class:`LiveSettings` is the parameter of its name; ``effort_model`` is read from
    ``effort_model_file``)."""
    names = [field.name for field in fields(LiveSettings) if field.name != 'effort_model']
    return LiveSettings(
        effort_model=load_effort_model(parameters['effort_model_file']),
        **{name: parameters[name] for name in names},
    )
