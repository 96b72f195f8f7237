"""The live residual filtered as `identify` scores it (core/live/filtered_residual.py).

References: a stream whose efforts are the rigid-body model's (pinocchio RNEA at the exact,
analytic q, q̇, q̈ of a slow multi-sine) plus known terms the model lacks and white noise; the
filtered residual must be those terms, the noise's RMS what is left. The real Panda
recording's figure against `identify`'s own held-out score is in `bench residual`
(docs/motors.md).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from robot_dynamics.core.dynamics.friction import FrictionModel
from robot_dynamics.core.dynamics.joint_space import inverse_dynamics
from robot_dynamics.core.live.filtered_residual import FilteredResidual
from robot_dynamics.core.live.live_dynamics import LiveDynamics
from robot_dynamics.core.live.settings import LiveSettings
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.joint_states import JointSample
from robot_dynamics.models import ARM_URDF, QUADRUPED_URDF

NOISE = 0.05
OFFSET = 0.3  # N·m on the first joint
VISCOUS = 0.5  # N·m·s/rad on the second joint


def _motion(t: float, pose: np.ndarray) -> tuple:
    """q, q̇, q̈ of a slow multi-sine (0.4 and 1.1 Hz, well below the filter's 10 Hz), at rest
    before t = 2 s."""
    s = max(t - 2.0, 0.0)
    w1, w2 = 2 * np.pi * 0.4, 2 * np.pi * 1.1
    ramp = np.arange(1, len(pose) + 1) / len(pose)
    q = pose + ramp * (0.3 * (1 - np.cos(w1 * s)) + 0.05 * (1 - np.cos(w2 * s)))
    v = ramp * (0.3 * w1 * np.sin(w1 * s) + 0.05 * w2 * np.sin(w2 * s))
    a = ramp * (0.3 * w1**2 * np.cos(w1 * s) + 0.05 * w2**2 * np.cos(w2 * s))
    if t < 2.0:
        v, a = np.zeros_like(pose), np.zeros_like(pose)
    return q, v, a


def _stream(robot: RobotModel, seconds: float, seed: int = 0):
    """(stamp, q, q̇, τ measured, τ measured − the model at the true state: the terms the
    model lacks and the noise) at ~1 kHz with 0.2 ms jitter."""
    rng = np.random.default_rng(seed)
    pose = robot.neutral_positions() + 0.2
    for k in range(int(seconds * 1000)):
        t = 0.001 * k + rng.uniform(-2e-4, 2e-4)
        q, v, a = _motion(t, pose)
        lacking = rng.normal(0.0, NOISE, robot.num_joints)
        lacking[0] += OFFSET
        lacking[1] += VISCOUS * v[1]
        yield t, q, v, inverse_dynamics(robot, q, v, a) + lacking, lacking


def test_the_filtered_residual_is_what_the_model_lacks_plus_the_noise():
    robot = RobotModel.from_urdf_file(ARM_URDF)
    residual = FilteredResidual(robot, None)
    truth = {}
    parts = []
    for k, (t, q, v, tau, lacking) in enumerate(_stream(robot, 12.0)):
        residual.add(t, q, v, tau)
        truth[t] = lacking
        if k % 700 == 0:  # now and then, as the diagnostics timer does
            parts.append(residual.update())
    parts.append(residual.update(final=True))
    stamps = np.concatenate([p.stamps for p in parts])
    rows = np.concatenate([p.residuals for p in parts])
    at_rest = np.concatenate([p.at_rest for p in parts])
    assert np.all(np.diff(stamps) > 0) and stamps[0] < 1.0 and stamps[-1] > 11.5  # no block twice
    # the measured torques are read on a 1 ms grid by linear interpolation, as identify does
    times = np.array(sorted(truth))
    lacking = np.array([truth[t] for t in times])
    expected = np.column_stack([np.interp(stamps, times, lacking[:, j]) for j in range(7)])
    # the model's torques at the filtered state are those at the true state: nothing else left
    # (but where q̈ jumps, at the start of the motion: a step no 10 Hz filter passes)
    smooth = np.abs(stamps - 2.0) > 0.3
    left = (rows - expected)[smooth]
    assert np.sqrt(np.mean(left**2, axis=0)).max() < 0.05 * NOISE
    # rest until 2 s (the filter's edge smears it by a few samples), motion after (but for the
    # instants where every joint's velocity passes near zero at once)
    assert np.all(at_rest[stamps < 1.8]) and np.mean(at_rest[stamps > 2.2]) < 0.02
    rest, moving = residual.rms('rest'), residual.rms('moving')
    assert rest[0] == pytest.approx(OFFSET, rel=0.05)
    assert rest[1] < NOISE
    # the viscous term the model lacks shows in motion
    moving_truth = np.sqrt(np.mean(expected[~at_rest] ** 2, axis=0))
    np.testing.assert_allclose(moving, moving_truth, rtol=0.05)
    assert moving[1] > 1.5 * NOISE


def test_the_friction_model_in_use_is_part_of_the_model():
    robot = RobotModel.from_urdf_file(ARM_URDF)
    friction = FrictionModel(
        robot.joint_names,
        viscous=np.eye(7)[1] * VISCOUS,
        coulomb=np.zeros(7),
        offset=np.eye(7)[0] * OFFSET,
    )
    residual = FilteredResidual(robot, friction)
    for t, q, v, tau, _ in _stream(robot, 6.0, seed=1):
        residual.add(t, q, v, tau)
    residual.update(final=True)
    assert residual.rms('all').max() < NOISE  # the noise, smoothed by the interpolation


def test_diagnostics_carry_the_filtered_residual_and_a_gap_starts_afresh():
    robot = RobotModel.from_urdf_file(ARM_URDF)
    live = LiveDynamics(robot, LiveSettings(contact_profile='off'))
    names = robot.joint_names
    for t, q, v, tau, _ in _stream(robot, 7.0, seed=2):
        live.update(JointSample(names, q, v, tau, 1.0 + t))
    live.filtered_residual.update()  # the node's services thread does, every diagnostics period
    values = live.contact_status().values
    rest = np.array([float(x) for x in values['model_residual_rms_rest_nm'].split(',')])
    assert rest[0] == pytest.approx(OFFSET, rel=0.05)
    assert 'model_residual_rms_moving_nm' in values
    # a minute without joint states: the blocks go on at the new samples, none spans the gap
    for t, q, v, tau, _ in _stream(robot, 4.0, seed=3):
        live.update(JointSample(names, q, v, tau, 65.0 + t))
    rows = live.filtered_residual.update(final=True)
    assert np.any(rows.stamps >= 65.0)
    assert not np.any((rows.stamps > 8.0) & (rows.stamps < 65.0))


def test_a_floating_or_moving_base_has_no_filtered_residual():
    quadruped = RobotModel.from_urdf_file(QUADRUPED_URDF, root_joint='floating')
    assert LiveDynamics(quadruped).filtered_residual is None
    arm = RobotModel.from_urdf_file(ARM_URDF)
    mounted = LiveSettings(base_state='mounting', base_orientation=(0.0, 0.3, 0.0))
    assert LiveDynamics(arm, mounted).filtered_residual is None


def test_its_filter_library_is_loaded_with_the_model_not_by_every_node_at_start():
    """scipy.signal takes about a second to import: centroidal_node and sim_robot never filter
    and start without it; dynamics_node imports it at start, and a LiveDynamics that will filter
    (a fixed base) has it, so the first block on the services thread does not import it."""
    pytest.importorskip('rclpy', reason='the node modules import rclpy')
    script = (
        'import sys\n'
        'import robot_dynamics.ros.centroidal_node, robot_dynamics.ros.sim_robot\n'
        'before = "scipy.signal" in sys.modules\n'
        'from robot_dynamics.core.live.live_dynamics import LiveDynamics\n'
        'from robot_dynamics.core.model.model import RobotModel\n'
        'from robot_dynamics.models import ARM_URDF\n'
        'LiveDynamics(RobotModel.from_urdf_file(ARM_URDF))\n'
        'print(before, "scipy.signal" in sys.modules)\n'
    )
    done = subprocess.run(
        [sys.executable, '-c', script], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.split() == ['False', 'True'], done.stderr
