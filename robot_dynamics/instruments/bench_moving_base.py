"""`robot_dynamics bench moving-base`: the phantom external torque of an arm on a tilted or moving
base, with and without base state, against the proving ground (MuJoCo).

For each scene (the bundled arm mounted at 20° pitch; on a mobile base accelerating and turning;
on a deck rolling ±10° at 0.2 Hz), each base-state source the scene offers and each profile
(``ideal``, ``realistic``) in the same run, the scene's own excitation runs ``--duration``
simulated seconds with nothing touching the arm; the live pipeline (core, no ROS) is fed the
measured joint states and the scene's IMU (at the root link) and odometry, and the RMS of its
external torques (observer route) after the first second is the phantom: with no contact the
truth is zero. Target: ≤ 0.1 N·m RMS with the base state on the ideal robot with the IMU and
odometry noise of the realistic profile, against several N·m without. The `realistic` column
adds the robot's own differences from its URDF (friction, link inertias, offsets).
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np

from robot_dynamics.core.live.live_dynamics import LiveDynamics
from robot_dynamics.core.live.settings import LiveSettings
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.joint_states import JointSample
from robot_dynamics.models import ARM_URDF

PITCH = math.radians(20.0)
SCENES = {
    'tilted 20°': ({'base_tilt': (0.0, PITCH, 0.0)}, ('none', 'mounting')),
    'mobile base': ({'base_motion': 'mobile'}, ('none', 'imu', 'odom', 'odom+imu')),
    'rolling deck': ({'base_motion': 'deck'}, ('none', 'imu', 'odom', 'odom+imu')),
}
PROFILES = ('ideal', 'ideal+IMU noise', 'realistic')
IMU_NOISE = {'gyro_noise': 0.005, 'accelerometer_noise': 0.05, 'odom_velocity_noise': 0.005}
"""The realistic profile's IMU and odometry noise (1σ: rad/s, m/s², m/s), alone on the ideal
robot in the middle column."""
SETTLE = 1.0
"""Simulated seconds left out at the start (the observer's and the fits' start) [s]."""
TARGET = 0.1


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # --duration and --format of bench are used


def phantom_torque(scene_name: str, profile: str, source: str, duration: float) -> float:
    """RMS [N·m] over joints and samples of the external torques the live pipeline reports for
    the contact-free excitation of ``scene_name`` with ``profile``, base state from ``source``."""
    from robot_dynamics.simulation.scenes import ArmScene

    options, _ = SCENES[scene_name]
    text = ARM_URDF.read_text()
    scene = ArmScene(text, _profile(profile), profile_seed=5, table=False, **options)
    robot = RobotModel.from_urdf_string(text)
    root = robot.description.root
    live = LiveDynamics(
        robot,
        LiveSettings(base_state=source, base_orientation=options.get('base_tilt', (0.0, 0.0, 0.0))),
    )
    names, external = robot.joint_names, []
    for _ in range(int(duration * 1000)):
        sample = scene.step()
        imu, stamp = sample.imu, sample.time
        if live.base_state.uses_imu:
            live.take_base_imu(stamp, root, imu.angular_velocity, imu.specific_force)
        if live.base_state.uses_odom:
            twist = sample.odom_twist
            live.take_base_odom(stamp, root, sample.odom_pose[3:], twist[:3], twist[3:])
        joints = sample.joints
        result = live.update(
            JointSample(names, joints.positions, joints.velocities, joints.efforts, stamp)
        )
        if stamp >= SETTLE and result is not None and result.external_torques is not None:
            external.append(result.external_torques)
    return float(np.sqrt(np.mean(np.square(external))))


def _profile(name: str):
    from robot_dynamics.simulation.profiles import load_profile, profile_from_dict

    if name != 'ideal+IMU noise':
        return load_profile(name)
    return profile_from_dict(
        {
            'name': name,
            'description': 'the ideal robot with the realistic IMU and odometry noise',
            'effort_source': 'joint_torque_sensor',
            'links': {'spread': {'mass': 0.0, 'com': 0.0, 'inertia': 0.0}},
            'joints': {'default': {}},
            'sensors': IMU_NOISE,
        }
    )


def run(args: argparse.Namespace) -> int:
    """Print the phantom torques; exit 0 when every `ideal` figure with base state meets
    :data:`TARGET`."""
    duration = args.duration or 6.0
    rows = []
    for scene_name, (_, sources) in SCENES.items():
        for source in sources:
            figures = {
                profile: phantom_torque(scene_name, profile, source, duration)
                for profile in PROFILES
            }
            rows.append({'scene': scene_name, 'base_state': source, **figures})
    met = all(row['ideal+IMU noise'] <= TARGET for row in rows if row['base_state'] != 'none')
    if args.format == 'json':
        print(json.dumps({'rows': rows, 'target_nm': TARGET, 'met': met}, indent=2))
    else:
        print(f'phantom external torque, RMS over joints [N·m], {duration:g} s per cell')
        print(f'{"scene":<14}{"base_state":<12}' + ''.join(f'{p:>18}' for p in PROFILES))
        for row in rows:
            cells = ''.join(f'{row[p]:>18.4f}' for p in PROFILES)
            print(f'{row["scene"]:<14}{row["base_state"]:<12}{cells}')
        verdict = 'met' if met else 'NOT met'
        print(f'target: ideal+IMU noise with base state <= {TARGET} N·m: {verdict}')
    return 0 if met else 1
