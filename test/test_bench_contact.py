"""`bench contact` on a short run: every push detected and its force recovered, none invented;
the measured delay and noise agree with their closed forms."""

import argparse

import numpy as np
import pytest

from robot_dynamics.instruments import bench_contact


@pytest.mark.parametrize('feedback', ['exact', 'measured'])
def test_short_contact_bench_detects_every_push_and_recovers_the_force(feedback):
    pytest.importorskip('rclpy', reason='the bench reads the nodes\' shipped parameters with ROS 2')
    args = argparse.Namespace(
        steps=3,
        free_seconds=10.0,
        calibration=10.0,
        observer_gain=None,
        seed=3,
        rate=None,
        format='text',
        force_range=(10.0, 20.0),
        controller_feedback=feedback,
        position_noise=None,
    )
    result = bench_contact.measure(args)
    observer, inverse, by_velocities = result['methods']
    assert [observer['method'], inverse['method'], by_velocities['method']] == list(
        bench_contact.METHODS
    )
    for figures in (observer, by_velocities):
        assert (
            figures['missed'] == 0
            and figures['false_free'] == 0
            and figures['false_between_pushes'] == 0
        )
        assert (
            figures['force_rms_n'] < 1.0 and figures['moment_rms_nm'] < 0.15
        )  # a pure force is pushed
    # positions (noise-free in the sim) keep the velocity noise out of the momentum
    assert np.mean(observer['free_residual_rms_nm']) < 0.8 * np.mean(
        by_velocities['free_residual_rms_nm']
    )
    assert 'identified and applied' in result['payload']
    text = bench_contact._text(result)
    assert 'observer' in text and 'closed form' in text
    assert result['controller_feedback'] == feedback
    if (
        feedback == 'exact'
    ):  # noise formula K·σ_v·‖M_i‖ (+ effort term) against the free-motion residual
        np.testing.assert_allclose(
            by_velocities['free_residual_std_predicted_nm'][:6],
            by_velocities['free_residual_rms_nm'][:6],
            rtol=0.1,
        )
    # the controller's 2ω·M·σ_v torque noise: the observers account for it, the ID route cannot
    else:
        for figures in (observer, by_velocities):
            assert np.all(
                np.array(inverse['free_residual_rms_nm'])
                > 2.0 * np.array(figures['free_residual_rms_nm'])
            )
    period_ms = 1e3 / result['publish_rate_hz']
    assert result['delay_floor_ms'] == pytest.approx(
        3 * period_ms
    )  # 250 Hz: the next sample, then a 5 ms hold
    assert all(
        figures['delay_max_ms'] >= figures['delay_median_ms'] >= result['delay_floor_ms'] - 1e-9
        for figures in result['methods']
    )
    for figures in result['methods']:  # closed-form delay within one sample of the measured one
        assert (
            abs(figures['delay_predicted_median_ms'] - figures['delay_median_ms'])
            <= period_ms + 1e-9
        )
