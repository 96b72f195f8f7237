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

Then the legged scene (the bundled quadruped and solo12, ``ideal``, ``realistic`` and
``realistic, offsets zeroed``, the whole 24 s script) with base state from the scene's IMU and
the profile's effort delay set: the feet's ground forces estimated from the joint torques against
MuJoCo's contact forces at the instant the efforts describe (RMS error as a share of the weight),
the contact states against the truth's (a foot is in contact while MuJoCo's floor pushes on it;
samples within 20 ms of a true touch-down or lift-off left out) and the centre of pressure against
the true one (median horizontal distance). In the zeroed column the effort offsets are first
zeroed on the feet by the scene's calibration script (standing, then each foot lifted and held in
turn) and loaded from their file, as a user does once per robot. Targets on both robots in that
column: ≤ 5 % of the weight, ≥ 99 %, ≤ 1.5 cm.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from collections import deque
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from robot_dynamics.core.live.effort_offsets import OffsetsRefused, save_effort_offsets
from robot_dynamics.core.live.settings import LiveSettings
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.joint_states import JointSample
from robot_dynamics.models import ARM_URDF

if TYPE_CHECKING:  # the live pipeline (scipy.signal) is imported by the runs, not by --help
    from robot_dynamics.core.live.live_dynamics import LiveDynamics

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
    from robot_dynamics.core.live.live_dynamics import LiveDynamics
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
    """Print the phantom torques and the legged feet; exit 0 when every target is met (the
    phantom on the ideal robot with the IMU noise; the feet of both legged robots with their
    offsets zeroed)."""
    duration = args.duration or 6.0
    rows = []
    for scene_name, (_, sources) in SCENES.items():
        for source in sources:
            figures = {
                profile: phantom_torque(scene_name, profile, source, duration)
                for profile in PROFILES
            }
            rows.append({'scene': scene_name, 'base_state': source, **figures})
    feet = {
        (robot, profile): legged_feet(
            robot, profile.split(',')[0], LEGGED_PERIOD, zero_offsets=profile == ZEROED
        )
        for robot in LEGGED_ROBOTS
        for profile in ('ideal', 'realistic', ZEROED)
    }
    phantom_met = all(
        row['ideal+IMU noise'] <= TARGET for row in rows if row['base_state'] != 'none'
    )
    feet_met = all(feet[robot, ZEROED].met for robot in LEGGED_ROBOTS)
    if args.format == 'json':
        feet_rows = [
            {'robot': robot, 'profile': profile, **asdict(figures), 'met': figures.met}
            for (robot, profile), figures in feet.items()
        ]
        report = {'rows': rows, 'target_nm': TARGET, 'feet': feet_rows}
        print(json.dumps({**report, 'met': phantom_met and feet_met}, indent=2))
    else:
        _print_phantom(rows, duration, phantom_met)
        _print_feet(feet)
    return 0 if phantom_met and feet_met else 1


def _print_phantom(rows: list, duration: float, met: bool) -> None:
    print(f'phantom external torque, RMS over joints [N·m], {duration:g} s per cell')
    print(f'{"scene":<14}{"base_state":<12}' + ''.join(f'{p:>18}' for p in PROFILES))
    for row in rows:
        cells = ''.join(f'{row[p]:>18.4f}' for p in PROFILES)
        print(f'{row["scene"]:<14}{row["base_state"]:<12}{cells}')
    verdict = 'met' if met else 'NOT met'
    print(f'target: ideal+IMU noise with base state <= {TARGET} N·m: {verdict}')


def _print_feet(feet: dict) -> None:
    print(
        f'\nlegged scene, {LEGGED_PERIOD:g} s script, base state imu: foot forces from joint '
        'torques against MuJoCo\'s contacts'
    )
    print(
        f'{"robot":<11}{"profile":<27}{"force RMS / weight":>20}{"contact agree":>15}'
        f'{"CoP med":>10}'
    )
    for (robot, profile), figures in feet.items():
        print(
            f'{robot:<11}{profile:<27}{100 * figures.force_error:>19.2f}%'
            f'{100 * figures.contact_agreement:>14.2f}%{1000 * figures.cop_error:>8.1f}mm'
            f'  {"met" if figures.met else "NOT met"}'
        )
    print(
        f'targets: force <= {100 * FOOT_FORCE_TARGET:g} % of weight, contact >= '
        f'{100 * CONTACT_TARGET:g} %, CoP <= {1000 * COP_TARGET:g} mm'
    )
    print(
        '\ninverse dynamics against the torques the joints apply (MuJoCo), RMS [N·m]: '
        'rigid-body terms alone → less the feet\'s share Σ J_cᵀ f_c'
    )
    for (robot, profile), figures in feet.items():
        print(
            f'{robot:<11}{profile:<27}{figures.inverse_dynamics_error_without_feet:>9.3f} →'
            f'{figures.inverse_dynamics_error:>7.3f}   (applied torques RMS '
            f'{figures.motor_torque_rms:.3f})'
        )


# ---------------------------------------------------------------------- legged
TRANSITION_MARGIN = 0.02
"""Samples within this time [s] of a true touch-down or lift-off are left out of the contact
agreement."""
FOOT_FORCE_TARGET = 0.05
CONTACT_TARGET = 0.99
COP_TARGET = 0.015
LEGGED_ROBOTS = ('quadruped', 'solo12')
ZEROED = 'realistic, offsets zeroed'
"""The realistic profile with the effort offsets zeroed on the feet first (the judged column)."""
LEGGED_PERIOD = 24.0
"""Simulated seconds of a legged run: the whole script (stand, shifts, three legs, steps,
pushes)."""


@dataclass(frozen=True)
class FeetFigures:
    """How the estimated feet compare with the truth over one legged run: ``force_error`` RMS of
    |f − f_true| per foot and sample, as a share of the weight; ``contact_agreement`` share of
    samples (transitions ± :data:`TRANSITION_MARGIN` left out) where every foot's contact state
    agrees; ``cop_error`` median horizontal distance [m] from the true centre of pressure.
    ``inverse_dynamics_error`` RMS over joints and samples [N·m] of ~/inverse_dynamics_torques
    against the torques the joints truly apply (MuJoCo's, link side), and
    ``inverse_dynamics_error_without_feet`` the same without the feet's share Σ J_cᵀ f_c
    (the rigid-body terms alone); ``motor_torque_rms`` the true torques' RMS, for scale."""

    force_error: float
    contact_agreement: float
    cop_error: float
    motor_torque_rms: float = math.nan
    inverse_dynamics_error_without_feet: float = math.nan
    inverse_dynamics_error: float = math.nan

    @property
    def met(self) -> bool:
        return (
            self.force_error <= FOOT_FORCE_TARGET
            and self.contact_agreement >= CONTACT_TARGET
            and self.cop_error <= COP_TARGET
        )


def legged_feet(
    robot_name: str, profile: str, duration: float, seed: int = 5, zero_offsets: bool = False
) -> FeetFigures:
    """Run the proving ground's legged scene (``robot_name``, ``profile``) for ``duration``
    simulated seconds; the live pipeline (core, base state from the scene's IMU with its
    orientation, the profile's effort delay) estimates the feet from the measured joint states.
    ``zero_offsets``: the effort offsets are zeroed first on the feet, by the scene's calibration
    script (standing, then each foot lifted in turn), and loaded from their file."""
    from robot_dynamics.core.live.live_dynamics import LiveDynamics
    from robot_dynamics.simulation.scenes import LeggedScene

    scene = LeggedScene(robot_name, _profile(profile), seed)
    robot, feet = scene.nominal, scene.robot.feet
    settings = LiveSettings(
        base_state='imu',
        contact_frames=feet,
        external_torque_method='inverse_dynamics',
        effort_delay=scene.true_robot.profile.sensors.effort_delay * scene.step_size,
    )
    with tempfile.TemporaryDirectory() as folder:
        if zero_offsets:
            path = str(Path(folder) / 'effort_offsets.yaml')
            _zero_offsets_on_feet(
                LeggedScene(robot_name, _profile(profile), seed, script='calibration'),
                settings,
                path,
            )
            settings = replace(settings, effort_offsets_file=path)
        live = LiveDynamics(robot, settings)
    errors, estimated, true_contact, cop_errors, times = [], [], [], [], []
    applied, with_feet, without_feet = [], [], []
    recent = deque(maxlen=64)  # the last samples: a result describes the one its stamp names
    for _ in range(int(duration / scene.step_size)):
        sample = scene.step()
        recent.append(sample)
        result = _fed(scene, live, sample)
        if result is None or result.stamp < SETTLE or result.feet is None:
            continue
        described = next(each for each in reversed(recent) if each.time == result.stamp)
        truth = described.truth
        true_forces = np.array(
            [
                truth.contact_wrenches[f].force if f in truth.contact_wrenches else np.zeros(3)
                for f in feet
            ]
        )
        errors.append(np.linalg.norm(result.feet.forces - true_forces, axis=1))
        applied.append(truth.link_torques)
        with_feet.append(result.inverse_dynamics - truth.link_torques)
        without_feet.append(with_feet[-1] + result.feet.contact_torques)
        estimated.append(result.feet.contact)
        true_contact.append(true_forces[:, 2] > 0.0)
        times.append(result.stamp)
        cop = result.feet.cop
        if cop is not None and truth.center_of_pressure is not None:
            pose = described.odom_pose
            world = pose[:3] + _rotation(pose[3:]) @ cop
            cop_errors.append(float(np.linalg.norm(world[:2] - truth.center_of_pressure[:2])))
    return FeetFigures(
        float(np.sqrt(np.mean(np.square(errors)))) / scene.weight,
        _agreement(np.array(times), np.array(estimated), np.array(true_contact)),
        float(np.median(cop_errors)) if cop_errors else math.inf,
        _rms(applied),
        _rms(without_feet),
        _rms(with_feet),
    )


def _fed(scene, live: LiveDynamics, sample):
    """``sample``'s IMU and joint state into ``live``; its result (None while incomplete)."""
    imu, joints = sample.imu, sample.joints
    live.take_base_imu(
        sample.time,
        scene.description.root,
        imu.angular_velocity,
        imu.specific_force,
        imu.orientation,
    )
    return live.update(
        JointSample(
            scene.nominal.joint_names,
            joints.positions,
            joints.velocities,
            joints.efforts,
            sample.time,
        )
    )


def _zero_offsets_on_feet(scene, settings: LiveSettings, path: str) -> None:
    """Run ``scene``'s calibration script through the live pipeline, zero the effort offsets
    at the end of each rest and save the offsets in use to ``path`` (raises
    :class:`OffsetsRefused` when no rest gave any)."""
    from robot_dynamics.core.live.live_dynamics import LiveDynamics

    live = LiveDynamics(scene.nominal, settings)
    rests = list(scene.calibration_rests())
    estimate = None
    while rests:
        sample = scene.step()
        _fed(scene, live, sample)
        if sample.time >= rests[0]:
            rests.pop(0)
            try:
                estimate = live.zero_effort_offsets('')
            except OffsetsRefused:
                pass  # too few rests yet, or still moving: the last answer stays in use
    if estimate is None:
        raise OffsetsRefused('the calibration script\'s rests did not separate the offsets')
    save_effort_offsets(path, scene.nominal.joint_names, live.effort_offsets)


def _rms(values: list) -> float:
    return float(np.sqrt(np.mean(np.square(values))))


def _agreement(times: np.ndarray, estimated: np.ndarray, truth: np.ndarray) -> float:
    """Share of samples whose contact states all agree, samples near a true transition left
    out."""
    changed = np.any(truth[1:] != truth[:-1], axis=1)
    transitions = times[1:][changed]
    keep = np.ones(len(times), dtype=bool)
    for moment in transitions:
        keep &= np.abs(times - moment) > TRANSITION_MARGIN
    return float(np.mean(np.all(estimated[keep] == truth[keep], axis=1)))


def _rotation(quaternion_xyzw) -> np.ndarray:
    from robot_dynamics.core.streams.base_state import quaternion_matrix

    return quaternion_matrix(quaternion_xyzw)
