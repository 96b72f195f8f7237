"""`robot_dynamics bench balance`: centroidal_node's ZMP and capture point against the proving
ground's true centre of pressure on the legged scene, `ideal` and `realistic` in the same run.

The bundled quadruped and solo12 (example-robot-data) stand on MuJoCo's floor through the
legged scene's whole script (stand, weight shifts, a three-leg stance, steps in place, base
pushes). Each published sample (every engine step, 500 Hz) goes to what centroidal_node runs
for it: :class:`~robot_dynamics.core.floating_base.centroidal.CentroidalMonitor` with the
node's defaults, fed the measured joint states and the scene's odometry (base pose in the
world, twist in the base frame), contacts by height (2 foot radii, the demo's setting), on
both routes: ``height`` (ZMP from the rate of centroidal momentum; the node's default fit
window follows the noise on h_G, 9 to 51 samples; beside it, for comparison and not in the
verdict, the fixed 9-sample window) and ``force`` (the feet's forces estimated from the joint
torques by dynamics_node's pipeline, base state from the IMU).

Scored: the horizontal distance of the ZMP and of the capture point to MuJoCo's centre of
pressure of the floor contacts, on the samples where every foot is on the floor and nothing
else pushes the robot (the scripted base pushes add a force that is not at the ground: there
the ZMP is not the CoP), after the first second. Targets (median): ≤ 2 mm on `ideal`, ≤ 1 cm
on `realistic`. The capture point equals the CoP only when the CoM's horizontal motion is at
rest (ξ − p = ξ̇/ω for the linear inverted pendulum): it is shown beside the ZMP against the
same targets, and against the true capture point, c + ċ/ω of MuJoCo's CoM (ċ by central
differences of the true CoM between steps, ω from its height), which is the estimate's own
error.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

import numpy as np

PROFILES = ('ideal', 'realistic')
ROBOTS = ('quadruped', 'solo12')
TARGETS = {'ideal': 0.002, 'realistic': 0.01}
"""Median horizontal distance [m] to the true centre of pressure, per profile."""
SETTLE = 1.0  # [s] left out at the start (the rate estimator's and the observer's start)
POINTS = ('zmp_height', 'zmp_force', 'capture_point')
"""Scored and in the verdict (the node's defaults)."""
FIXED_WINDOW = 'zmp_height_fixed_window'
"""The ZMP with the fit's window held at 9 samples: scored, not in the verdict."""
LABELS = ('ZMP height', 'ZMP force', 'capture point', 'ZMP, 9 fixed', 'capture pt vs true')
TRUE_CAPTURE_POINT = 'capture_point_vs_true'
"""The capture point against the true capture point (not the CoP): scored, not in the verdict."""
WINDOW = 'rate_window'
"""The default fit's window [samples] on the scored samples (not a distance)."""


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # --duration and --format of bench are used


def point_errors(robot_name: str, profile: str, duration: float, seed: int = 5) -> dict:
    """{point: array of horizontal distances [m] to the true CoP} over one legged run, and
    :data:`TRUE_CAPTURE_POINT`: the capture point's distance to the true capture point."""
    from robot_dynamics.core.floating_base.centroidal import (
        BalanceSettings,
        CentroidalMonitor,
        base_pose_from_odometry,
        base_velocity_from_odometry,
    )
    from robot_dynamics.core.live.live_dynamics import LiveDynamics
    from robot_dynamics.core.live.settings import LiveSettings
    from robot_dynamics.core.streams.joint_states import JointSample
    from robot_dynamics.simulation.profiles import load_profile
    from robot_dynamics.simulation.scenes import LeggedScene

    scene = LeggedScene(robot_name, load_profile(profile), seed)
    robot, feet = scene.nominal, scene.robot.feet
    settings = BalanceSettings(
        contact_frames=feet, contact_height_threshold=2.0 * scene.robot.foot_radius
    )
    by_height, by_force = CentroidalMonitor(robot, settings), CentroidalMonitor(robot, settings)
    by_height_fixed = CentroidalMonitor(robot, replace(settings, rate_window_max=9))
    live = LiveDynamics(
        robot,
        LiveSettings(
            base_state='imu', contact_frames=feet, external_torque_method='inverse_dynamics'
        ),
    )
    root, names = scene.description.root, robot.joint_names
    errors = {point: [] for point in POINTS + (FIXED_WINDOW, WINDOW)}
    true_coms, capture_points = [], []  # every sample's; None where not scored
    for _ in range(int(duration / scene.step_size)):
        sample = scene.step()
        truth, joints, stamp = sample.truth, sample.joints, sample.time
        imu = sample.imu
        live.take_base_imu(stamp, root, imu.angular_velocity, imu.specific_force, imu.orientation)
        result = live.update(
            JointSample(names, joints.positions, joints.velocities, joints.efforts, stamp)
        )
        pose = base_pose_from_odometry(sample.odom_pose[:3], sample.odom_pose[3:])
        twist = base_velocity_from_odometry(sample.odom_twist[:3], sample.odom_twist[3:])
        q = robot.configuration(joints.positions, pose)
        v = robot.tangent(joints.velocities, twist)
        height_report = by_height.update(stamp, q, v)
        fixed_report = by_height_fixed.update(stamp, q, v)
        forces = None if result is None or result.feet is None else result.feet.forces
        force_report = (
            by_force.update(stamp, q, v, foot_forces=forces) if forces is not None else None
        )
        cop = truth.center_of_pressure
        true_coms.append(truth.center_of_mass)
        capture_points.append(None)
        if (
            stamp < SETTLE
            or cop is None
            or truth.push is not None
            or not _all_feet_down(truth, feet)
        ):
            continue
        capture_points[-1] = height_report.capture_point
        points = {
            'zmp_height': height_report.zmp,
            FIXED_WINDOW: fixed_report.zmp,
            'zmp_force': None if force_report is None else force_report.zmp,
            'capture_point': height_report.capture_point,
        }
        for point, value in points.items():
            if value is not None:
                errors[point].append(float(np.linalg.norm(value[:2] - cop[:2])))
        errors[WINDOW].append(by_height.estimator.window)
    errors[TRUE_CAPTURE_POINT] = _capture_point_errors(
        capture_points, np.array(true_coms), scene.step_size, robot.model.gravity.linear
    )
    return {point: np.array(values) for point, values in errors.items()}


def _capture_point_errors(estimates: list, true_coms: np.ndarray, step: float, gravity) -> list:
    """Horizontal distances [m] of the capture point ``estimates`` (one per sample, None where
    not scored) to c + ċ/ω of the true CoMs (world, one per sample ``step`` [s] apart; ċ by
    central differences, ω = √(g / c_z) above the floor at z = 0)."""
    from robot_dynamics.core.floating_base.capture_point import capture_point_xy

    velocities = np.gradient(true_coms, step, axis=0)
    g = float(np.linalg.norm(gravity))
    errors = []
    for estimate, com, velocity in zip(estimates, true_coms, velocities):
        truth = None if estimate is None else capture_point_xy(com, velocity, 0.0, g)
        if truth is not None:
            errors.append(float(np.hypot(estimate[0] - truth[0], estimate[1] - truth[1])))
    return errors


def _all_feet_down(truth, feet) -> bool:
    wrenches = truth.contact_wrenches
    return all(foot in wrenches and wrenches[foot].force[2] > 0.0 for foot in feet)


def measure(duration: float) -> list:
    """One row per robot and profile: samples scored and the median / p95 distance per point."""
    rows = []
    for robot in ROBOTS:
        for profile in PROFILES:
            errors = point_errors(robot, profile, duration)
            windows = errors.pop(WINDOW)
            row = {
                'robot': robot,
                'profile': profile,
                'target_m': TARGETS[profile],
                'rate_window_median': float(np.median(windows)) if windows.size else None,
            }
            for point, values in errors.items():
                median = float(np.median(values)) if values.size else None
                row[point] = {
                    'samples': int(values.size),
                    'median_m': median,
                    'p95_m': float(np.percentile(values, 95)) if values.size else None,
                    'met': median is not None and median <= TARGETS[profile],
                }
            row['met'] = all(row[point]['met'] for point in POINTS)
            rows.append(row)
    return rows


def run(args: argparse.Namespace) -> int:
    """Print the table; exit 0 when every row meets its target."""
    from robot_dynamics.instruments.bench_moving_base import LEGGED_PERIOD

    duration = args.duration or LEGGED_PERIOD
    rows = measure(duration)
    met = all(row['met'] for row in rows)
    if args.format == 'json':
        print(json.dumps({'duration_s': duration, 'rows': rows, 'met': met}, indent=2))
    else:
        print(_text(rows, duration))
    return 0 if met else 1


def _text(rows: list, duration: float) -> str:
    lines = [
        f'bench balance: legged scene, {duration:g} s, distance to the true centre of pressure '
        '(all feet down, no base push), median / p95 [mm]',
        f'{"robot":<11}{"profile":<11}'
        + ''.join(f'{name:>22}' for name in LABELS)
        + f'{"target":>9}{"window":>8}',
    ]
    for row in rows:
        cells = ''
        for point in POINTS + (FIXED_WINDOW, TRUE_CAPTURE_POINT):
            figures = row[point]
            cells += (
                f'{"n/a":>22}'
                if figures['median_m'] is None
                else f'{1e3 * figures["median_m"]:>13.2f}{"*" if figures["met"] else " "}/ '
                f'{1e3 * figures["p95_m"]:<5.1f}'
            )
        window = row['rate_window_median']
        lines.append(
            f'{row["robot"]:<11}{row["profile"]:<11}{cells}{1e3 * row["target_m"]:>7.0f}mm'
            + (f'{window:>8.0f}' if window is not None else f'{"n/a":>8}')
        )
    lines.append(
        '* median within the target. Verdict: the first three columns (the node\'s defaults) '
        'of every row within the target: '
        + ('met' if all(row['met'] for row in rows) else 'NOT met')
        + '. "ZMP, 9 fixed": the fit held at 9 samples; "capture pt vs true": against the true '
        'capture point (the estimate\'s own error); window: median samples of the default fit'
    )
    return '\n'.join(lines)
