"""The live-stream building blocks: joint-state merging, causal differentiation, torque
estimator."""

import array
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics.core.errors import JointStateError
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.streams.differentiation import CausalDifferentiator
from robot_dynamics.core.streams.joint_states import (
    MAX_ABS_VALUE,
    JointStateMerger,
    TimeWentBack,
)
from robot_dynamics.core.streams.live_torques import LiveTorqueEstimator
from robot_dynamics.models import ARM_URDF

GRIPPER_URDF = Path(__file__).parent / 'data/fixtures/turret_gripper.urdf'


def test_least_squares_slope_is_exact_on_lines_with_jittered_stamps():
    rng = np.random.default_rng(0)
    differentiator = CausalDifferentiator(width=2, window=10)
    for k in range(30):
        t = k * 1e-3 + rng.uniform(-3e-4, 3e-4)
        slope = differentiator.update(t, [3.0 * t - 1.0, -0.5 * t])
    np.testing.assert_allclose(slope, [3.0, -0.5], rtol=1e-9)


def test_slope_of_a_parabola_equals_its_derivative_half_a_window_ago():
    differentiator = CausalDifferentiator(width=1, window=15)
    times = np.arange(40) * 1e-3
    for t in times:
        slope = differentiator.update(t, [t**2])
    delay = differentiator.delay()
    assert delay == pytest.approx(7e-3)
    # d/dt t² = 2t; the least-squares line through a parabola has the slope at the window's mean
    # time.
    np.testing.assert_allclose(slope, [2 * (times[-1] - delay)], rtol=1e-9)


def test_slope_is_exact_with_stamps_since_the_epoch():
    # Stamps near 1.7e9 s carry only ~2.4e-7 s of resolution; with the time column inside the
    # product they would bias the slope (~3e-7 relative, measured with the origin left at 0).
    # Times relative to a moving origin keep it at rounding level.
    rng = np.random.default_rng(3)
    differentiator = CausalDifferentiator(width=2, window=15)
    start = 1.7e9 + 0.123
    for k in range(100):
        t = start + k * 1e-3 + rng.uniform(-2e-4, 2e-4)
        elapsed = t - start  # exact: the value is a line in the stamps as they are represented
        slope = differentiator.update(t, [3.0 * elapsed + 5.0, -0.5 * elapsed])
    np.testing.assert_allclose(slope, [3.0, -0.5], rtol=1e-9)


def test_slope_equals_a_polyfit_over_the_last_window_at_every_sample():
    # Irregular stamps (bursts and gaps) and a non-linear signal, over many windows: the running
    # sums and the origin moves must give the least-squares slope of exactly the last samples.
    rng = np.random.default_rng(7)
    window = 6
    differentiator = CausalDifferentiator(width=2, window=window)
    times = 1000.0 + np.cumsum(rng.choice([1e-6, 1e-3, 0.05], size=80, p=[0.2, 0.7, 0.1]))
    values = np.column_stack((np.sin(40 * times), np.exp(times - 1000.0)))
    for k, (t, x) in enumerate(zip(times, values)):
        slope = differentiator.update(t, x)
        first = max(0, k + 1 - window)
        if k >= 1:
            expected = np.polyfit(times[first : k + 1] - times[first], values[first : k + 1], 1)[0]
            np.testing.assert_allclose(slope, expected, rtol=1e-7, atol=1e-9)


def test_slope_restarts_cleanly_and_needs_two_distinct_times():
    differentiator = CausalDifferentiator(width=1, window=5)
    for k in range(7):
        differentiator.update(k * 1e-3, [100.0 * k])
    differentiator.reset()
    np.testing.assert_array_equal(differentiator.update(1.0, [4.0]), [0.0])
    np.testing.assert_array_equal(
        differentiator.update(1.0, [9.0]), [0.0]
    )  # same instant twice: no slope
    # After the reset only the new samples count (old rows would pull the slope towards 100/ms).
    expected = np.polyfit([1.0, 1.0, 1.002], [4.0, 9.0, 1.0], 1)[0]
    np.testing.assert_allclose(differentiator.update(1.002, [1.0]), [expected], rtol=1e-9)


def test_merger_never_writes_an_array_it_has_handed_out():
    merger = JointStateMerger(['a', 'b'])
    merger.update(['a', 'b'], [1.0, 2.0], [3.0, 4.0], [5.0, 6.0], stamp=1.0)
    positions, velocities = merger.positions, merger.velocities
    merger.update(['b'], [-2.0], [-4.0], stamp=1.1)  # partial: copy, then write
    merger.update(
        ['a', 'b'], [7.0, 8.0], [9.0, 10.0], [11.0, 12.0], stamp=1.2
    )  # full: replaces the array
    np.testing.assert_array_equal(positions, [1.0, 2.0])
    np.testing.assert_array_equal(velocities, [3.0, 4.0])
    np.testing.assert_array_equal(merger.positions, [7.0, 8.0])


def test_merger_value_bounds_hold_element_by_element():
    merger = JointStateMerger(['a', 'b', 'c'])
    near_limit = [
        0.9 * MAX_ABS_VALUE
    ] * 3  # Σx² > limit² although every value is in range: accepted
    merger.update(['a', 'b', 'c'], near_limit, near_limit, near_limit, stamp=1.0)
    np.testing.assert_array_equal(merger.efforts, near_limit)
    for bad, reason in (
        ([0.0, 1.1 * MAX_ABS_VALUE, 0.0], 'out_of_range'),
        ([0.0, np.nan, np.inf], 'non_finite'),  # a NaN is 'not reported', an Inf is never
        ([-np.inf, 0.0, 0.0], 'non_finite'),
        ([1e200, 1e200, 0.0], 'out_of_range'),
    ):
        with pytest.raises(JointStateError) as error:
            merger.update(['a', 'b', 'c'], [0.0] * 3, [0.0] * 3, bad, stamp=2.0)
        assert error.value.reason == reason
    np.testing.assert_array_equal(merger.efforts, near_limit)  # a rejected sample changes nothing


def test_an_overflowing_sample_is_rejected_without_a_numpy_warning():
    # In a fresh interpreter: pytest restores the warning filters a module installs while imported.
    script = """
import array
from robot_dynamics.core.errors import JointStateError
from robot_dynamics.core.streams.joint_states import JointStateMerger
merger = JointStateMerger(['a', 'b'])
for rows in (([1e200, 0.0], [0.0, 0.0], [0.0, 0.0]), ([1e200, 0.0], [0.0, 0.0], [])):  # both paths
    try:
        merger.update(['a', 'b'], *(array.array('d', row) for row in rows), stamp=1.0)
    except JointStateError as error:
        print(error.reason)
"""
    run = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=60)
    assert run.stdout.split() == ['out_of_range', 'out_of_range'], run.stderr
    assert 'Warning' not in run.stderr, run.stderr


def _reasons(merger, stamps, names=('a', 'b')) -> list:
    """The fate of one sample per stamp: 'ok', or the reason it was refused."""
    fates = []
    for stamp in stamps:
        try:
            merger.update(names, [stamp, -stamp][: len(names)], stamp=stamp)
            fates.append('ok')
        except JointStateError as error:
            fates.append(error.reason)
    return fates


def test_time_that_goes_on_from_an_earlier_stamp_is_told_from_late_samples():
    merger = JointStateMerger(['a', 'b'], stale_timeout=0.1)
    late, ok = 'out_of_order', 'ok'
    assert _reasons(merger, [10.0, 10.001]) == [ok, ok]
    # late samples, stray stamps 0 between good ones, a run cut by a good one: refused only
    assert _reasons(merger, [9.95, 9.96, 9.97, 10.002]) == [late, late, late, ok]
    assert _reasons(merger, [0.0, 10.003, 0.0, 0.0, 10.004]) == [late, ok, late, late, ok]
    assert _reasons(merger, [5.0, 5.001, 10.005, 5.002]) == [late, late, ok, late]
    np.testing.assert_array_equal(merger.positions, [10.005, -10.005])
    # a bag played again from 1 s: the third sample going on from there says so, changing nothing
    assert _reasons(merger, [1.0, 1.001]) == [late, late]
    with pytest.raises(TimeWentBack) as error:
        merger.update(['a', 'b'], [1.002, -1.002], stamp=1.002)
    assert error.value.reason == 'time_went_back'
    assert (error.value.stamp, error.value.jump) == (1.002, pytest.approx(9.005))  # from 1.0
    assert 'went back 9.005 s' in str(error.value) and 'played in a loop' in str(error.value)
    np.testing.assert_array_equal(merger.positions, [10.005, -10.005])
    # a driver restarted with its stamps left at 0: three in a row restart the stream too
    assert _reasons(merger, [0.0, 0.0]) == [late, late]
    with pytest.raises(TimeWentBack, match='went back 10.005 s .*joint_state_stamps: arrival'):
        merger.update(['a', 'b'], [0.0, 0.0], stamp=0.0)
    # a sample of one joint checks that joint's stamps; offline (no stale_timeout) never restarts
    assert _reasons(merger, [1.1, 1.2, 1.3], names=('b',)) == [late, late, 'time_went_back']
    offline = JointStateMerger(['a', 'b'])
    assert _reasons(offline, [10.0, 1.0, 1.1, 1.2, 1.3]) == [ok, late, late, late, late]


def _fresh_positions(merger, arm, slow, slow_stamps, until=3.0) -> dict:
    """Feed ``arm`` at 1 kHz from 1 s to ``until`` and ``slow`` at ``slow_stamps``; per arm
    stamp [ms], whether every position was fresh (stale_timeout 0.1 s)."""
    fresh, slow_stamps = {}, list(slow_stamps)
    for millisecond in range(1000, int(until * 1000)):
        stamp = millisecond / 1000
        while slow_stamps and slow_stamps[0] <= stamp:
            merger.update(slow, [0.0] * len(slow), stamp=slow_stamps.pop(0))
        merger.update(arm, [0.0] * len(arm), stamp=stamp)
        fresh[millisecond] = merger.freshness(stamp, 0.1)[0]
    return fresh


def test_a_gripper_driver_at_a_few_hertz_keeps_the_state_complete_while_it_publishes():
    merger = JointStateMerger(['j1', 'j2', 'finger'], optional=['finger'], stale_timeout=0.1)
    gripper = [1.0 + 0.25 * k for k in range(5)]  # 4 Hz until 2 s, then silent
    fresh = _fresh_positions(merger, ('j1', 'j2'), ('finger',), gripper)
    # once its period is known (second sample), held 2.5 periods: 0.625 s after the last
    assert all(fresh[ms] for ms in range(1250, 2624))
    assert not any(fresh[ms] for ms in range(2626, 3000))
    assert not fresh[1150]  # the first sample alone: no period yet, stale after 0.1 s
    assert merger.stale_joints(2.7, 0.1) == ['finger']
    # a joint of the chain's middle is never held: stale 0.1 s after each slow sample
    strict = JointStateMerger(['j1', 'j2', 'finger'], optional=['finger'], stale_timeout=0.1)
    fresh = _fresh_positions(strict, ('j1', 'finger'), ('j2',), gripper)
    assert fresh[1500] and fresh[1600] and not fresh[1601] and not fresh[1700]


def test_merger_takes_rclpy_arrays_like_lists_and_keeps_read_only_values():
    # rclpy hands float64[] fields over as array.array('d'); other sequences take numpy's
    # conversion.
    names, rows = ['a', 'b'], ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0])
    as_lists, as_arrays = JointStateMerger(names), JointStateMerger(names)
    as_lists.update(names, *rows, stamp=1.0)
    as_arrays.update(names, *(array.array('d', row) for row in rows), stamp=1.0)
    np.testing.assert_array_equal(as_arrays.values, as_lists.values)
    mixed = (
        array.array('d', rows[0]),
        rows[1],
        array.array('f', rows[2]),
    )  # not all array('d'): converted
    as_arrays.update(names, *mixed, stamp=2.0)
    np.testing.assert_array_equal(as_arrays.values, as_lists.values)
    for merger in (as_lists, as_arrays):
        assert not merger.values.flags.writeable
        with pytest.raises(ValueError):
            merger.positions[0] = 9.0
    with pytest.raises(JointStateError) as error:  # a bad array sample changes nothing
        as_arrays.update(
            names,
            array.array('d', [np.nan, 0.0]),
            *(array.array('d', row) for row in rows[1:]),
            stamp=3.0,
        )
    assert error.value.reason == 'non_finite'
    np.testing.assert_array_equal(as_arrays.values, as_lists.values)


def test_merger_ignores_the_values_of_joints_it_does_not_know():
    # Drivers publish NaN for joints without a sensor (a gripper's effort): the model's joints still
    # count.
    merger = JointStateMerger(['a', 'b'])
    merger.update(
        ['gripper', 'b', 'a'], [0.01, 2.0, 1.0], [np.nan, 4.0, 3.0], [np.inf, 6.0, 5.0], stamp=1.0
    )
    np.testing.assert_array_equal(merger.values, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


def test_merger_takes_a_nan_velocity_or_effort_as_not_reported():
    # ros2_control's joint_state_broadcaster fills NaN for a joint without that state interface.
    merger = JointStateMerger(['a', 'b', 'finger'], optional=['finger'])
    names, nan = ['a', 'b', 'finger'], np.nan
    merger.update(names, [1.0, 2.0, 0.01], [0.1, 0.2, nan], [5.0, 6.0, nan], stamp=1.0)
    np.testing.assert_array_equal(merger.values, [[1.0, 2.0, 0.01], [0.1, 0.2, 0], [5.0, 6.0, 0]])
    assert [list(u) for u in merger.unreported] == [[], [2], [2]]
    assert merger.freshness(1.0, 0.1) == (True, True, True)  # the finger need not report them
    # the same NaNs again (the broadcaster's every message): still not reported
    assert merger.update(names, [1.0, 2.0, 0.02], [0.3, 0.4, nan], [7.0, 8.0, nan], stamp=1.01)
    np.testing.assert_array_equal(merger.values, [[1.0, 2.0, 0.02], [0.3, 0.4, 0], [7.0, 8.0, 0]])
    assert [list(u) for u in merger.unreported] == [[], [2], [2]]
    assert merger.freshness(1.11, 0.1) == (True, True, True)
    # b's effort is NaN from now on: its last one ages, the others' stay fresh
    merger.update(names, [1.1, 2.1, 0.02], [0.1, 0.2, nan], [5.5, nan, nan], stamp=1.05)
    np.testing.assert_array_equal(merger.efforts, [5.5, 8.0, 0.0])
    assert merger.freshness(1.05, 0.1) == (True, True, True)
    merger.update(names, [1.2, 2.2, 0.03], [0.1, 0.2, nan], [5.6, nan, nan], stamp=1.2)
    assert merger.freshness(1.2, 0.1) == (True, True, False)
    # once the finger reports an effort it is needed like any other joint's
    merger.update(names, [1.3, 2.3, 0.04], [0.1, 0.2, nan], [5.7, 6.7, 0.5], stamp=1.3)
    assert [list(u) for u in merger.unreported] == [[], [2], []]
    assert merger.freshness(1.3, 0.1) == (True, True, True)
    merger.update(names, [1.4, 2.4, 0.05], [0.1, 0.2, nan], [5.8, 6.8, nan], stamp=1.45)
    assert merger.freshness(1.45, 0.1) == (True, True, False)
    # a joint that is not optional must report: b's velocity NaN from the start of another merger
    strict = JointStateMerger(['a', 'b'])
    strict.update(['a', 'b'], [1.0, 2.0], [0.1, nan], [5.0, 6.0], stamp=1.0)
    assert strict.freshness(1.0, 0.1) == (True, False, True)
    with pytest.raises(JointStateError) as error:  # a position is never optional
        merger.update(names, [nan, 2.5, 0.06], [0.1, 0.2, 0.3], [5.9, 6.9, 0.6], stamp=1.5)
    assert error.value.reason == 'non_finite'
    assert merger.positions[0] == 1.4


def test_merger_freshness_follows_the_oldest_stamp_of_each_field():
    merger = JointStateMerger(['a', 'b'])
    assert merger.freshness(0.0, np.inf) == (False, False, False)  # never received is never fresh
    assert merger.update(
        ['a', 'b'], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], stamp=1.0
    )  # replaced every value
    assert merger.freshness(1.05, 0.1) == (True, True, True)
    assert not merger.update(
        ['b', 'a'], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], stamp=1.05
    )  # another order
    assert not merger.update(['a'], [0.0], stamp=1.2)  # positions only, one joint
    assert merger.freshness(1.2, 0.1) == (False, False, False)
    np.testing.assert_array_equal(merger.stamps, [[1.2, 1.05], [1.05, 1.05], [1.05, 1.05]])
    assert merger.stale_joints(1.2, 0.1) == ['b']
    merger.update(['b'], [0.0], [0.0], stamp=1.25)
    assert merger.freshness(1.25, 0.1) == (True, False, False)
    assert merger.stale_joints(1.25, 0.1) == []


def _drawn_joints_and_fields(rng, some_joints: float, each_field: float) -> tuple:
    """(model indices, fields) of a random sample of four joints: some of them in a shuffled
    order with probability ``some_joints`` (else all in order), the position always and the
    velocity and effort each with probability ``each_field``."""
    chosen = (
        list(rng.permutation(4)[: rng.integers(1, 5)])
        if rng.random() < some_joints
        else [0, 1, 2, 3]
    )
    return chosen, [0] + [field for field in (1, 2) if rng.random() < each_field]


def test_merger_values_stamps_and_freshness_equal_per_joint_tables_for_any_mix_of_samples():
    # Reference: plain tables of every joint's every field and its stamp, written sample by sample.
    joints, rng = ['a', 'b', 'c', 'd'], np.random.default_rng(7)
    merger, values, table = JointStateMerger(joints), np.zeros((3, 4)), np.full((3, 4), -np.inf)
    stamp = 1.0
    for _ in range(400):
        stamp += rng.uniform(0.0, 0.02)
        chosen, fields = _drawn_joints_and_fields(rng, 0.6, 0.7)
        rows = [
            rng.uniform(-1, 1, len(chosen)).tolist() if field in fields else []
            for field in range(3)
        ]
        for field in fields:
            values[field, chosen] = rows[field]
        names = [joints[i] for i in chosen]
        if (
            rng.random() < 0.2
        ):  # a joint the model does not know, with a value that must not land anywhere
            names, rows = names + ['gripper'], [row + [9.0] if row else row for row in rows]
        if rng.random() < 0.5:
            rows = [array.array('d', row) for row in rows]
        merger.update(names, *rows, stamp=stamp)
        table[np.ix_(fields, chosen)] = stamp
        np.testing.assert_array_equal(merger.values, values)
        np.testing.assert_array_equal(merger.stamps, table)
        for max_age in (0.01, 0.05, np.inf):
            expected = tuple(
                bool(np.all((table[field] >= stamp - max_age) & (table[field] > -np.inf)))
                for field in range(3)
            )  # never received is missing, whatever the age limit
            assert merger.freshness(stamp, max_age) == expected
        assert merger.stale_joints(stamp, 0.03) == [
            joints[i] for i in range(4) if table[0, i] < stamp - 0.03
        ]


def test_merger_with_nans_and_an_optional_joint_equals_per_joint_tables():
    # Reference: every joint's every field, its stamp and whether it was ever reported, written
    # entry by entry; a NaN velocity or effort writes nothing. The optional joint 'd' sends only
    # NaN velocities and efforts for the first half, then real ones.
    joints, rng = ['a', 'b', 'c', 'd'], np.random.default_rng(11)
    merger = JointStateMerger(joints, optional=['d'])
    values, table = np.zeros((3, 4)), np.full((3, 4), -np.inf)
    reported = np.zeros((3, 4), dtype=bool)
    stamp = 1.0
    for step in range(600):
        stamp += rng.uniform(0.0, 0.02)
        chosen, fields = _drawn_joints_and_fields(rng, 0.5, 0.8)
        rows = [rng.uniform(-1, 1, len(chosen)) if field in fields else [] for field in range(3)]
        for field in fields[1:]:
            rows[field][rng.random(len(chosen)) < 0.15] = np.nan
            if step < 300 and 3 in chosen:
                rows[field][chosen.index(3)] = np.nan
        merger.update([joints[i] for i in chosen], *[list(row) for row in rows], stamp=stamp)
        for field in fields:
            for joint, value in zip(chosen, rows[field]):
                if not np.isnan(value):
                    values[field, joint], table[field, joint] = value, stamp
                    reported[field, joint] = True
        np.testing.assert_array_equal(merger.values, values)
        for max_age in (0.01, 0.05, np.inf):
            expected = []
            for field in range(3):
                counted = [j for j in range(4) if field == 0 or j != 3 or reported[field, 3]]
                complete = field == 0 or reported[field].any()
                fresh = table[field, counted] >= max(stamp - max_age, -1e300)
                expected.append(bool(complete and fresh.all()))
            assert merger.freshness(stamp, max_age) == tuple(expected), (step, max_age)


@pytest.fixture(scope='module')
def arm():
    return RobotModel.from_urdf_file(ARM_URDF)


def test_estimator_waits_for_every_joint_then_gives_zero_external_torque_for_model_effort(arm):
    import pinocchio as pin

    estimator = LiveTorqueEstimator(arm, acceleration_mode='zero')
    names = list(arm.joint_names)
    q = np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6])
    qd = np.linspace(-0.5, 0.5, 7)
    model_torque = pin.rnea(arm.model, arm.model.createData(), q, qd, np.zeros(7))
    assert estimator.update(names[:4], q[:4], qd[:4], model_torque[:4], 1.0) is None
    sample = estimator.update(names[4:], q[4:], qd[4:], model_torque[4:], 1.001)
    np.testing.assert_allclose(sample.inverse_dynamics, model_torque, atol=1e-12)
    np.testing.assert_allclose(sample.residual, 0.0, atol=1e-12)
    # Joints 1-4 go stale 0.1 s later: no output until they are refreshed.
    assert estimator.update(names[4:], q[4:], qd[4:], model_torque[4:], 1.2) is None
    with pytest.raises(JointStateError) as error:
        estimator.update(names, q, qd, model_torque, 1.1)
    assert error.value.reason == 'out_of_order'
    # A complete sample makes every joint fresh at once; 0.15 s later only joints 5-7 are.
    assert estimator.update(names, q, qd, model_torque, 1.3) is not None
    assert estimator.update(names[4:], q[4:], qd[4:], model_torque[4:], 1.45) is None
    assert estimator.update(names[:4], q[:4], qd[:4], model_torque[:4], 1.46) is not None


@pytest.mark.parametrize('timeout', [0.0, -0.1, float('nan'), float('inf')])
def test_estimator_refuses_a_stale_timeout_that_is_not_a_positive_time(arm, timeout):
    with pytest.raises(ValueError, match='stale_timeout'):
        LiveTorqueEstimator(arm, stale_timeout=timeout)


def test_estimator_outputs_are_not_overwritten_by_later_samples(arm):
    import pinocchio as pin

    estimator = LiveTorqueEstimator(arm)
    names, data, rng = list(arm.joint_names), arm.model.createData(), np.random.default_rng(2)
    kept = [
        estimator.update(
            names,
            rng.uniform(-1, 1, 7),
            rng.uniform(-1, 1, 7),
            rng.uniform(-5, 5, 7),
            1.0 + k * 1e-3,
        )
        for k in range(3)
    ]
    for sample in kept:  # each array still holds the torques of its own sample
        np.testing.assert_allclose(
            sample.gravity,
            pin.computeGeneralizedGravity(arm.model, data, sample.positions),
            atol=1e-12,
        )
        assert not np.shares_memory(sample.gravity, kept[-1].gravity) or sample is kept[-1]
        assert (
            not np.shares_memory(sample.inverse_dynamics, kept[-1].inverse_dynamics)
            or sample is kept[-1]
        )


def test_estimated_acceleration_tracks_a_smooth_motion(arm):
    import pinocchio as pin

    estimator = LiveTorqueEstimator(arm, acceleration_window=15)
    names, data = list(arm.joint_names), arm.model.createData()
    base = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.0])
    for k in range(200):
        t = k * 1e-3
        q, qd = base + 0.3 * np.sin(2 * t), 0.6 * np.cos(2 * t) * np.ones(7)
        sample = estimator.update(names, q, qd, (), t)
    delayed = t - estimator.differentiator.delay()
    expected = pin.rnea(arm.model, data, q, qd, -1.2 * np.sin(2 * delayed) * np.ones(7))
    # A line through 15 ms of a 2 rad/s sine has the mid-window slope up to O((ωW)²) ≈ 1e-4
    # relative.
    np.testing.assert_allclose(sample.inverse_dynamics, expected, atol=1e-4)
    assert sample.residual is None


def test_merger_flags_a_sample_whose_joints_already_had_its_stamp():
    merger = JointStateMerger(['a', 'b', 'c'])
    merger.update(['a', 'b', 'c'], [0.0, 0.0, 0.0], stamp=1.0)
    assert not merger.repeated_stamp
    merger.update(['a', 'b', 'c'], [0.1, 0.0, 0.0], stamp=1.0)  # an unset or repeated stamp
    assert merger.repeated_stamp and not merger.resent
    merger.update(['a', 'b', 'c'], [0.1, 0.0, 0.0], stamp=1.0)  # the same sample resent
    assert merger.repeated_stamp and merger.resent
    merger.update(['a', 'b', 'c'], [0.1, 0.0, 0.0], [0.0, np.nan, 0.0], [1, 1, 1], stamp=1.0)
    assert merger.repeated_stamp and not merger.resent  # new velocities and efforts
    merger.update(['c', 'a'], [0.0, 0.1], [0.0, 0.0], stamp=1.0)
    assert merger.resent
    merger.update(['a', 'b'], [0.2, 0.0], stamp=1.01)
    assert not merger.repeated_stamp
    merger.update(['c'], [0.3], stamp=1.01)  # more joints of the same instant
    assert not merger.repeated_stamp
    merger.update(['c'], [0.4], stamp=1.01)  # joint c again at that instant
    assert merger.repeated_stamp
    with pytest.raises(JointStateError):  # refused: the flag stays as the last accepted set it
        merger.update(['a', 'b', 'c'], [0.0, 0.0, np.nan], stamp=1.02)
    assert merger.repeated_stamp


def test_a_repeated_stamp_gives_gravity_only_and_leaves_the_acceleration_estimate_alone(arm):
    import pinocchio as pin

    names, data = list(arm.joint_names), arm.model.createData()
    q = np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6])
    acceleration = np.linspace(-2.0, 2.0, 7)
    estimator = LiveTorqueEstimator(arm, acceleration_window=5)
    for k in range(10):
        t = 2.0 + k * 1e-3
        velocities = acceleration * t
        sample = estimator.update(names, q, velocities, velocities, t)
        assert sample.inverse_dynamics is not None
        # the driver sends the next values with the same stamp: they must not bend the slope
        repeated = estimator.update(names, q + 0.1, 10.0 * velocities + 1.0, velocities, t)
        np.testing.assert_allclose(
            repeated.gravity, pin.computeGeneralizedGravity(arm.model, data, q + 0.1), atol=1e-12
        )
        assert repeated.inverse_dynamics is None and repeated.residual is None
    np.testing.assert_allclose(sample.accelerations, acceleration, rtol=1e-8)


def test_a_positions_only_stream_gets_its_velocities_from_the_positions(arm):
    import pinocchio as pin

    # q = q0 + v0 t + a t²/2: the least-squares slope of evenly spaced samples of a parabola is
    # its derivative at the window's centre, and the slope of those (a line) is a, exactly
    estimator = LiveTorqueEstimator(arm, acceleration_window=15)
    names, data = list(arm.joint_names), arm.model.createData()
    q0 = np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6])
    v0, a = np.linspace(-0.5, 0.5, 7), np.linspace(1.0, -1.0, 7)
    for k in range(100):
        t = 5.0 + k * 1e-3
        q = q0 + v0 * (t - 5.0) + 0.5 * a * (t - 5.0) ** 2
        sample = estimator.update(names, q, (), (), t)
    assert estimator.velocities_from_positions
    lagged = t - 5.0 - 7e-3  # half the window of 15 samples
    np.testing.assert_allclose(sample.velocities, v0 + a * lagged, atol=1e-9)
    np.testing.assert_allclose(sample.accelerations, a, atol=1e-6)
    expected = pin.rnea(arm.model, data, q, v0 + a * lagged, a)
    np.testing.assert_allclose(sample.inverse_dynamics, expected, atol=1e-5)


def test_velocities_that_are_all_exactly_zero_are_taken_as_not_measured(arm):
    import pinocchio as pin

    # ros2_control's mock hardware moves the positions and reports every velocity as 0.0: q̇
    # then comes from the positions. Constant velocity: the slope is exact, q̈ = 0.
    estimator = LiveTorqueEstimator(arm, acceleration_window=10)
    names, data, zeros = list(arm.joint_names), arm.model.createData(), np.zeros(7)
    q0, v0 = np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6]), np.linspace(-0.5, 0.5, 7)
    for k in range(40):
        t = 5.0 + k * 1e-3
        q = q0 + v0 * (t - 5.0)
        sample = estimator.update(names, q, zeros, zeros, t)
    assert estimator.velocities_from_positions
    np.testing.assert_allclose(sample.velocities, v0, atol=1e-9)
    np.testing.assert_allclose(sample.accelerations, 0.0, atol=1e-6)
    expected = pin.rnea(arm.model, data, q, v0, zeros)
    np.testing.assert_allclose(sample.inverse_dynamics, expected, atol=1e-6)
    assert np.abs(expected - pin.computeGeneralizedGravity(arm.model, data, q)).max() > 1e-3
    # measured velocities again, then a rest with exact zeros: q̇ is 0 exactly, the positions
    # from before the rest do not enter the slope
    for k in range(20):
        t += 1e-3
        q = q + v0 * 1e-3
        sample = estimator.update(names, q, v0, zeros, t)
    assert not estimator.velocities_from_positions
    np.testing.assert_array_equal(sample.velocities, v0)
    for k in range(3):
        t += 1e-3
        sample = estimator.update(names, q, zeros, zeros, t)
        assert estimator.velocities_from_positions
        np.testing.assert_array_equal(sample.velocities, zeros)


def test_a_continuous_joint_wrapping_at_pi_keeps_its_velocity():
    gripper = RobotModel.from_urdf_file(GRIPPER_URDF)  # turret: continuous
    estimator = LiveTorqueEstimator(gripper, acceleration_window=5)
    for k in range(1050):  # the turret wraps at 3 t = π, two samples before the last
        t = k * 1e-3
        turret = math.remainder(3.0 * t, 2.0 * math.pi)  # a driver that wraps to (−π, π]
        sample = estimator.update(gripper.joint_names, [turret, 0.01, 0.02], (), (), t)
    np.testing.assert_allclose(sample.velocities, [3.0, 0.0, 0.0], atol=1e-9)


def test_effort_delay_pairs_each_effort_with_the_state_it_was_measured_at(arm):
    import pinocchio as pin

    # The efforts arrive 2 samples (4 ms at 500 Hz, stamps jittered) after the state they belong
    # to: with effort_delay the residual is zero and the sample carries the efforts' instant.
    rng = np.random.default_rng(5)
    names, data = list(arm.joint_names), arm.model.createData()
    times = 10.0 + np.arange(60) * 2e-3 + rng.uniform(-1e-4, 1e-4, 60)
    states = [np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6]) + 0.4 * np.sin(3 * t) for t in times]
    gravity = [pin.computeGeneralizedGravity(arm.model, data, q) for q in states]
    delayed = LiveTorqueEstimator(arm, acceleration_mode='zero', effort_delay=0.004)
    plain = LiveTorqueEstimator(arm, acceleration_mode='zero')
    zeros = np.zeros(7)
    for k, t in enumerate(times):
        efforts = gravity[max(k - 2, 0)]
        sample = delayed.update(names, states[k], zeros, efforts, t)
        unaligned = plain.update(names, states[k], zeros, efforts, t)
        if k < 2:
            assert sample is None  # no state 4 ms back yet
            continue
        assert sample.stamp == times[k - 2]
        np.testing.assert_array_equal(sample.positions, states[k - 2])
        np.testing.assert_allclose(sample.gravity, gravity[k - 2], atol=1e-12)
        np.testing.assert_allclose(sample.residual, 0.0, atol=1e-12)
    assert np.abs(unaligned.residual).max() > 0.05  # the same stream without the delay


@pytest.mark.parametrize('delay', [-1e-3, 0.2, float('nan')])
def test_estimator_refuses_an_effort_delay_outside_its_range(arm, delay):
    with pytest.raises(ValueError, match='effort_delay'):
        LiveTorqueEstimator(arm, effort_delay=delay)


def test_the_node_stamps_its_outputs_with_the_instant_the_efforts_describe(ros, arm):
    import pinocchio as pin
    from ros_harness import wait_for
    from sensor_msgs.msg import JointState
    from test_dynamics_node import ARM_TEXT, joint_state, make_node

    from robot_dynamics.ros.topics import SENSOR_QOS

    # efforts arrive two samples after the state they hold still: g(q) of 4 ms earlier
    data, names = arm.model.createData(), list(arm.joint_names)
    stamps = [(30, 1_000_000 + 2_000_000 * k) for k in range(40)]
    states = [np.array([0.3, -0.4, 0.1, -1.9, 0.2, 1.7, -0.6]) + 0.02 * k for k in range(40)]
    gravity = [pin.computeGeneralizedGravity(arm.model, data, q) for q in states]
    node = make_node(
        robot_description=ARM_TEXT,
        effort_delay=0.004,
        external_torque_method='inverse_dynamics',
        acceleration_mode='zero',
    )
    name = node.get_name()
    with ros(node) as harness:
        external = harness.collect(JointState, f'/{name}/external_torques', SENSOR_QOS)
        torques = harness.collect(JointState, f'/{name}/gravity_torques', SENSOR_QOS)
        feed = harness.probe.create_publisher(JointState, 'joint_states', SENSOR_QOS)
        assert wait_for(lambda: node.robot is not None and feed.get_subscription_count(), 30)
        for k, (sec, nanosec) in enumerate(stamps):
            message = joint_state(names, states[k], np.zeros(7), gravity[max(k - 2, 0)])
            message.header.stamp.sec, message.header.stamp.nanosec = sec, nanosec
            feed.publish(message)
            wait_for(lambda: False, 0.002)
        assert wait_for(lambda: len(external) >= 38 and len(torques) >= 38, 20)
    sent = {stamp: k for k, stamp in enumerate(stamps)}
    for message in torques:
        k = sent[(message.header.stamp.sec, message.header.stamp.nanosec)]
        np.testing.assert_allclose(message.effort, gravity[k], atol=1e-12)
    assert min(sent[(m.header.stamp.sec, m.header.stamp.nanosec)] for m in torques) == 0
    for message in external:
        np.testing.assert_allclose(message.effort, 0.0, atol=1e-9)
