"""A new robot_description never stalls the torque stream: a real dynamics_node process keeps
answering every joint state while large and hostile descriptions arrive, every output is one
model's g(q), and the description checker process refuses exactly what the node would.

Behaviour only (every input answered, no output mixing two models, the right models loaded
and refused, the node alive); the latency targets are ``robot_dynamics bench descriptions``'s.
"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip('rclpy')

from robot_dynamics.models import ARM_URDF  # noqa: E402
from robot_dynamics.ros.model_source import IN_PROCESS_LIMIT, DescriptionChecker, description_problem  # noqa: E402
from robot_dynamics.instruments import reliability  # noqa: E402
from robot_dynamics.instruments.reliability import ACCEPTED, REJECTED  # noqa: E402

URDF = str(ARM_URDF)
GOOD = ARM_URDF.read_text()
GRAVITY = [0.0, 0.0, -9.81]


def hostile(category: str) -> str:
    return next(case.text for case in reliability.hostile_descriptions(GOOD) if case.category == category)


def test_the_stream_answers_every_input_while_large_and_hostile_descriptions_arrive():
    variant = reliability.renamed_variant(GOOD)
    names = (reliability._joint_names(URDF), reliability._joint_names_of_text(variant))
    references = {names[0]: reliability._gravity_reference(URDF),
                  names[1]: reliability._gravity_reference(URDF, variant)}
    # What the node must do with each, in order: the large ones go through the checker process.
    sequence = [(hostile('many_attributes'), REJECTED), (hostile('deep_nesting'), REJECTED),
                (hostile('oversize_50MB'), REJECTED), (reliability._chain(2500, 'fixed'), REJECTED),
                (reliability.description_scenario_texts(GOOD)[1][0], REJECTED), (GOOD[:len(GOOD) // 2], REJECTED),
                (variant, ACCEPTED), (variant, 'same'), ('<robot name="broken"><link', REJECTED), (GOOD, ACCEPTED)]
    assert sum(len(text) > IN_PROCESS_LIMIT for text, _ in sequence) >= 4
    with reliability._NodeUnderTest('dynamics', ['-p', 'diagnostics_period:=0.05'], 'gravity_torques', URDF,
                                    keep_messages=True, connect=False, names=list(names[0] + names[1]),
                                    deep_history=True) as run:
        diagnostics = run.watch_diagnostics()
        model = lambda key: reliability._model_value(diagnostics, key)  # noqa: E731
        descriptions = reliability._DescriptionPublisher('/bench/robot_description')
        try:
            descriptions.publish(GOOD)
            run.feeder.wait_connected()
            assert reliability.wait_for(lambda: model('models_loaded') == 1, 30.0)
            # 200 Hz: the node's 1000-deep input queue holds 5 s, room for any stall of a busy machine.
            stream = run.stream_in_background(200.0)
            assert reliability.wait_for(lambda: bool(run.feeder.received), 30.0)
            loaded, rejected = 1, 0
            for text, expected in sequence:
                descriptions.publish(text)
                loaded += expected == ACCEPTED
                rejected += expected == REJECTED
                def settled(loaded=loaded, rejected=rejected) -> bool:
                    return model('models_loaded') == loaded and model('descriptions_rejected') == rejected
                assert reliability.wait_for(settled, 60.0), (expected, len(text), diagnostics.get('model'))
                if expected == ACCEPTED:  # the stream may lag the swap on a busy machine: see it before going on
                    model_names = names[1] if text is variant else names[0]
                    count = len(run.feeder.messages)
                    assert reliability.wait_for(lambda: any(
                        message[1] == model_names for message in run.feeder.messages[count:]), 60.0)
                assert run.process.poll() is None, 'the node died'
            stream.stop()
        finally:
            descriptions.close()
        assert run.process.poll() is None
        figures = reliability._description_stream_figures(stream.sent, run.feeder, references)
        assert figures.sent > 0 and figures.answered_fraction == 1.0, figures
        assert figures.mixed_outputs == 0 and figures.wrong_outputs == 0, figures
        seen = {message_names for _, message_names, _ in run.feeder.messages}
        assert seen == set(names), 'the swap to the variant and back did not show in the outputs'


def test_the_checker_process_refuses_exactly_what_the_node_refuses():
    cases = [GOOD, hostile('many_attributes'), hostile('deep_nesting'), reliability._chain(2500, 'fixed'),
             reliability._chain(1500, 'fixed'), GOOD.replace('fr3_', 'ジョイント_'), GOOD[:5000]]
    checker = DescriptionChecker()
    try:
        for text in cases:
            assert checker.problem(text, 'fixed', GRAVITY, 100) == description_problem(text, 'fixed', GRAVITY, 100)
        assert checker.problem(GOOD, 'fixed', GRAVITY, 6) == description_problem(GOOD, 'fixed', GRAVITY, 6) != ''
    finally:
        checker.close()


def test_a_crashed_checker_refuses_that_description_and_is_replaced_for_the_next():
    checker = DescriptionChecker()
    try:
        assert checker.problem(GOOD, 'fixed', GRAVITY, 100) == ''
        os.kill(checker._process.pid, signal.SIGKILL)  # as a crash in the parser would end it
        assert 'could not be checked' in checker.problem(GOOD, 'fixed', GRAVITY, 100)
        assert checker.problem(GOOD, 'floating', GRAVITY, 100) == ''
        assert 'not valid XML' in checker.problem(GOOD[:100], 'fixed', GRAVITY, 100)
    finally:
        checker.close()
    assert checker._process is None


def checker_processes_of(pid: int) -> list:
    """Process ids of the description checkers whose parent is ``pid``."""
    found = []
    for entry in Path('/proc').iterdir():
        try:
            parent = int((entry / 'stat').read_text().rsplit(')', 1)[1].split()[1])
            command = (entry / 'cmdline').read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid and b'serve_checks' in command:
            found.append(int(entry.name))
    return found


def test_ctrl_c_ends_a_node_and_its_checker_cleanly():
    name = f'swap_shutdown_{os.getpid()}'
    process = subprocess.Popen([sys.executable, '-m', 'robot_dynamics.ros.dynamics_node', '--ros-args', '-r',
                                f'__node:={name}', '-r', 'robot_description:=/bench/robot_description'],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    descriptions = reliability._DescriptionPublisher('/bench/robot_description')
    try:
        descriptions.publish(GOOD)  # the first model starts the checker
        assert reliability.wait_for(lambda: bool(checker_processes_of(process.pid)), 60.0), 'no checker started'
        checkers = checker_processes_of(process.pid)
        time.sleep(1.0)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=15.0)
    finally:
        descriptions.close()
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert b'Traceback' not in stderr, stderr
    assert reliability.wait_for(lambda: not any(Path(f'/proc/{pid}').exists() for pid in checkers), 5.0)
