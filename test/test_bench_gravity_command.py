"""`bench gravity-command` on a short run through a real dynamics_node process: every
~/gravity_command is a ~/gravity_torques message reordered into command_joints, bit for bit,
and both latencies are measured from the joint-state stamps, at the middleware and at the
callback, with both outputs subscribed and each on its own (the commands then matched to g(q)
of the joint states sent, bit for bit)."""

import pytest

pytest.importorskip('rclpy')

from robot_dynamics.instruments import bench_gravity_command  # noqa: E402


def test_every_gravity_command_is_the_gravity_torques_reordered():
    result = bench_gravity_command.measure(rate=200.0, duration=1.5, pairs=2, warmup=0.5)
    for phase in result['phases']:
        assert phase['unmatched_commands'] <= phase['sent'] - phase['torques']
        assert phase['commands'] >= 0.5 * phase['sent'] and phase['torques'] >= 0.5 * phase['sent']
        assert phase['command_p50_ms'] > 0.0 and phase['torques_p50_ms'] > 0.0
        # the middleware receives a message before this process's callback can run for it
        assert phase['command_p50_ms'] <= phase['command_p50_at_callback_ms']
        assert phase['torques_p50_ms'] <= phase['torques_p50_at_callback_ms']
    assert result['exact']
    for pair in result['alone_phases']:
        assert pair['commands_matched'] >= 0.5 * pair['command_sent']
        assert pair['command_p50_ms'] > 0.0 and pair['torques_p50_ms'] > 0.0
    text = bench_gravity_command._text(result)
    assert 'both subscribed: command p50 / torques p50' in text
    assert 'each on its own: command p50 / torques p50' in text
