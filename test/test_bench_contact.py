"""`bench contact` on a short run: every push detected and its force recovered, none invented."""
import argparse

from robot_dynamics.instruments import bench_contact


def test_short_contact_bench_detects_every_push_and_recovers_the_force():
    args = argparse.Namespace(steps=3, free_seconds=10.0, calibration=10.0, observer_gain=None, seed=3, rate=None,
                              format='text')
    result = bench_contact.measure(args)
    observer, inverse = result['methods']
    assert observer['method'] == 'observer' and inverse['method'] == 'inverse_dynamics'
    assert observer['missed'] == 0 and observer['false_free'] == 0 and observer['false_between_pushes'] == 0
    assert observer['force_rms_n'] < 1.0 and observer['moment_rms_nm'] < 0.15  # a pure force is pushed
    assert 'identified and applied' in result['payload']
    assert 'observer' in bench_contact._text(result)
