"""A new robot_description never stalls the torque stream: a real dynamics_node process keeps
answering every joint state while huge and hostile descriptions arrive, every output is one
model's g(q), the descriptions are received and checked by the node's listener process
(never by the node's own process), which refuses exactly what the node would, is replaced when
it crashes and ends with the node.

Behaviour only (every input answered, no output mixing two models, the right models loaded
and refused, the node alive); the latency targets are ``robot_dynamics bench descriptions``'s.
"""

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip('rclpy')

from rclpy.serialization import serialize_message  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from robot_dynamics.core.model.urdf import MAX_DESCRIPTION_BYTES  # noqa: E402
from robot_dynamics.instruments import (
    processes,
    reliability_common,
    reliability_descriptions,
    reliability_restarts,
)  # noqa: E402
from robot_dynamics.instruments.reliability_descriptions import ACCEPTED, REJECTED  # noqa: E402
from robot_dynamics.models import ARM_URDF  # noqa: E402
from robot_dynamics.ros.description_listener import (
    LISTENER_NICENESS,
    DescriptionForwarder,
    DescriptionListener,  # noqa: E402
    ListenerSettings,
    description_problem,  # noqa: E402
    listener_node_name,
)
from robot_dynamics.ros.node_log import LOG_TEXT_LIMIT  # noqa: E402

URDF = str(ARM_URDF)
GOOD = ARM_URDF.read_text()
GRAVITY = [0.0, 0.0, -9.81]
HUGE = GOOD.replace('</robot>', '<!--' + 'x' * 30_000_000 + '--></robot>')
"""A 30 MB description: three times the size limit."""


def hostile(category: str) -> str:
    return next(
        case.text
        for case in reliability_descriptions.hostile_descriptions(GOOD)
        if case.category == category
    )


def test_the_stream_answers_every_input_while_large_and_hostile_descriptions_arrive():
    variant = reliability_restarts.renamed_variant(GOOD)
    names = (
        reliability_common.joint_names_of(URDF),
        reliability_common.joint_names_of_text(variant),
    )
    references = {
        names[0]: reliability_common.gravity_reference(URDF),
        names[1]: reliability_common.gravity_reference(URDF, variant),
    }
    # What the node must do with each, in order: the large ones go through the checker process.
    sequence = [
        (hostile('many_attributes'), REJECTED),
        (hostile('deep_nesting'), REJECTED),
        (hostile('oversize_50MB'), REJECTED),
        (reliability_descriptions._chain(2500, 'fixed'), REJECTED),
        (reliability_descriptions.description_scenario_texts(GOOD)[1][0], REJECTED),
        (GOOD[: len(GOOD) // 2], REJECTED),
        (variant, ACCEPTED),
        (variant, 'same'),
        ('<robot name="broken"><link', REJECTED),
        (GOOD, ACCEPTED),
    ]
    sequence.insert(3, (HUGE, REJECTED))
    assert sum(len(text) > MAX_DESCRIPTION_BYTES for text, _ in sequence) >= 3
    with reliability_common.NodeUnderTest(
        'dynamics',
        ['-p', 'diagnostics_period:=0.05'],
        'gravity_torques',
        URDF,
        keep_messages=True,
        connect=False,
        names=list(names[0] + names[1]),
        deep_history=True,
    ) as run:
        diagnostics = run.watch_diagnostics()
        model = lambda key: reliability_common.model_value(diagnostics, key)  # noqa: E731
        descriptions = reliability_descriptions._DescriptionPublisher('/bench/robot_description')
        try:
            descriptions.publish(GOOD)
            run.feeder.wait_connected()
            assert reliability_common.wait_for(lambda: model('models_loaded') == 1, 30.0)
            listener = listener_node_name(run.node_name)
            assert reliability_common.wait_for(
                lambda: subscribers(run.feeder.node, '/bench/robot_description') == [listener], 30.0
            ), subscribers(run.feeder.node, '/bench/robot_description')
            # 200 Hz: the node's 1000-deep input queue holds 5 s, room for any stall of a busy
            # machine.
            stream = run.stream_in_background(200.0)
            assert reliability_common.wait_for(lambda: bool(run.feeder.received), 30.0)
            loaded, rejected = 1, 0
            for text, expected in sequence:
                descriptions.publish(text)
                loaded += expected == ACCEPTED
                rejected += expected == REJECTED

                def settled(loaded=loaded, rejected=rejected) -> bool:
                    return (
                        model('models_loaded') == loaded
                        and model('descriptions_rejected') == rejected
                    )

                assert reliability_common.wait_for(settled, 60.0), (
                    expected,
                    len(text),
                    diagnostics.get('model'),
                )
                if (
                    expected == ACCEPTED
                ):  # the stream may lag the swap on a busy machine: see it before going on
                    model_names = names[1] if text is variant else names[0]
                    count = len(run.feeder.messages)
                    assert reliability_common.wait_for(
                        lambda: any(
                            message[1] == model_names for message in run.feeder.messages[count:]
                        ),
                        60.0,
                    )
                assert run.process.poll() is None, 'the node died'
            stream.stop()
        finally:
            descriptions.close()
        assert run.process.poll() is None
        figures = reliability_descriptions._description_stream_figures(
            stream.sent,
            run.feeder,
            references,
            reliability_descriptions._output_gaps(stream.sent, run.feeder),
        )
        assert figures.sent > 0 and figures.answered_fraction == 1.0, figures
        assert figures.mixed_outputs == 0 and figures.wrong_outputs == 0, figures
        seen = {message_names for _, message_names, _ in run.feeder.messages}
        assert seen == set(names), 'the swap to the variant and back did not show in the outputs'


def subscribers(node, topic: str) -> list:
    """Names of the nodes subscribed to ``topic`` (from the ROS graph)."""
    return sorted(info.node_name for info in node.get_subscriptions_info_by_topic(topic))


def forwarded(texts, settings: ListenerSettings) -> list:
    """What the listener sends the node for each text of ``texts`` in turn: ('accepted', text),
    ('refused', reason) or nothing (a repeat of the text last accepted)."""
    output = io.BytesIO()
    forwarder = DescriptionForwarder(settings, output)
    for text in texts:
        forwarder.on_message(serialize_message(String(data=text)))
    stream, items = io.BytesIO(output.getvalue()), []
    for line in iter(stream.readline, b''):
        header = json.loads(line)
        if 'accepted' in header:
            items.append(('accepted', stream.read(header['accepted']).decode('utf-8')))
        else:
            items.append(('refused', header['refused']))
    return items


def settings(max_joints: int = 100, root_joint: str = 'fixed') -> ListenerSettings:
    return ListenerSettings(
        '/robot_description',
        'test_description_listener',
        '/',
        root_joint,
        tuple(GRAVITY),
        max_joints,
    )


def test_the_listener_refuses_exactly_what_the_node_refuses_and_sends_only_usable_descriptions():
    cases = [
        GOOD,
        hostile('many_attributes'),
        hostile('deep_nesting'),
        reliability_descriptions._chain(2500, 'fixed'),
        reliability_descriptions._chain(1500, 'fixed'),
        reliability_descriptions._chain(30),
        GOOD.replace('fr3_', 'ジョイント_'),
        GOOD[:5000],
    ]
    for text in cases:
        problem = description_problem(text, 'fixed', GRAVITY, 100)
        assert forwarded([text], settings()) == [
            ('refused', problem) if problem else ('accepted', text)
        ]
    problem = description_problem(GOOD, 'fixed', GRAVITY, 6)
    assert problem and forwarded([GOOD], settings(max_joints=6)) == [('refused', problem)]
    assert problem.endswith('raise max_joints to load it (~70 MB at 100 joints, 0.5 GB at 200)')
    assert len(problem) <= LOG_TEXT_LIMIT  # logged whole


def test_the_listener_refuses_an_oversized_message_by_length_and_never_resends_the_model():
    variant = reliability_restarts.renamed_variant(GOOD)
    items = forwarded([GOOD, GOOD, HUGE, GOOD, '<robot', GOOD, variant, GOOD], settings())
    assert [kind for kind, _ in items] == ['accepted', 'refused', 'refused', 'accepted', 'accepted']
    assert items[0][1] == GOOD and items[3][1] == variant and items[4][1] == GOOD
    assert f'over the {MAX_DESCRIPTION_BYTES}-byte limit' in items[1][1]
    assert 'not valid XML' in items[2][1]


def test_a_crashed_listener_is_reported_and_replaced_and_the_new_one_takes_descriptions():
    accepted, refused = [], []
    topic = f'/swap_crash_{os.getpid()}/robot_description'
    listener = DescriptionListener(
        ListenerSettings(
            topic,
            f'swap_crash_{os.getpid()}_description_listener',
            '/',
            'fixed',
            tuple(GRAVITY),
            100,
        ),
        accepted.append,
        refused.append,
    )
    descriptions = reliability_descriptions._DescriptionPublisher(topic)
    try:
        assert listener.ready.wait(60.0), 'the listener never subscribed'
        descriptions.publish(GOOD)
        assert reliability_common.wait_for(lambda: accepted == [GOOD], 60.0)
        first = listener.pid
        owned = processes.dds_files_of(first)
        os.kill(first, signal.SIGKILL)  # as a crash in the parser would end it
        assert reliability_common.wait_for(
            lambda: any('listener process ended' in reason for reason in refused), 30.0
        )
        # what a crashed process cannot remove, the node removed: its participant's segment
        segments = {name for name in owned if processes.is_segment(name)}
        assert segments and not segments & processes.existing_dds_files()
        assert reliability_common.wait_for(
            lambda: listener.pid not in (None, first) and listener.ready.is_set(), 60.0
        )
        # The new listener gets the last description again (transient local), then the next ones.
        assert reliability_common.wait_for(lambda: len(accepted) == 2, 60.0) and accepted[1] == GOOD
        descriptions.publish('<robot name="broken"><link')
        assert reliability_common.wait_for(
            lambda: any('not valid XML' in reason for reason in refused), 60.0
        )
    finally:
        descriptions.close()
        last = listener.pid
        listener.close()
    assert listener.pid is None and not (
        last and Path(f'/proc/{last}').exists() and not _is_zombie(last)
    )


def _thread_niceness(pid: int) -> dict:
    """Nice value of each thread of process ``pid`` (thread id → niceness), from /proc."""
    values = {}
    for task in Path(f'/proc/{pid}/task').iterdir():
        try:
            values[int(task.name)] = int((task / 'stat').read_text().rsplit(')', 1)[1].split()[16])
        except (OSError, IndexError, ValueError):  # the thread ended meanwhile
            pass
    return values


def test_every_thread_of_the_listener_runs_below_the_node_priority():
    """The middleware's receive threads take a 50 MB message: they must not compete with the
    node's stream at the node's priority (on Linux a nice value is per thread)."""
    topic = f'/swap_nice_{os.getpid()}/robot_description'
    listener = DescriptionListener(
        ListenerSettings(
            topic,
            f'swap_nice_{os.getpid()}_description_listener',
            '/',
            'fixed',
            tuple(GRAVITY),
            100,
        ),
        lambda text: None,
        lambda reason: None,
    )
    try:
        assert listener.ready.wait(60.0), 'the listener never subscribed'
        threads = _thread_niceness(listener.pid)
    finally:
        listener.close()
    own = os.getpriority(os.PRIO_PROCESS, 0)
    assert len(threads) > 1  # the middleware's threads are there
    assert all(value >= min(own + LISTENER_NICENESS, 19) for value in threads.values()), threads


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0] == 'Z'
    except (OSError, IndexError):
        return True


def listener_processes_of(pid: int) -> list:
    """Process ids of the live description listener processes whose parent is ``pid``."""
    found = []
    for entry in Path('/proc').iterdir():
        try:
            parent = int((entry / 'stat').read_text().rsplit(')', 1)[1].split()[1])
            command = (entry / 'cmdline').read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid and b'description_listener' in command and not _is_zombie(int(entry.name)):
            found.append(int(entry.name))
    return found


def start_dynamics_node(name: str) -> subprocess.Popen:
    return processes.start_node_process(
        [
            sys.executable,
            '-m',
            'robot_dynamics.ros.dynamics_node',
            '--ros-args',
            '-r',
            f'__node:={name}',
            '-r',
            'robot_description:=/bench/robot_description',
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def test_ctrl_c_ends_a_node_and_its_listener_cleanly():
    process = start_dynamics_node(f'swap_shutdown_{os.getpid()}')
    descriptions = reliability_descriptions._DescriptionPublisher('/bench/robot_description')
    try:
        descriptions.publish(GOOD)
        assert reliability_common.wait_for(
            lambda: bool(listener_processes_of(process.pid)), 120.0
        ), 'no listener started'
        listeners = listener_processes_of(process.pid)
        time.sleep(1.0)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30.0)
    finally:
        descriptions.close()
        if process.poll() is None:
            processes.kill_node_process(process)
            process.communicate()
    assert process.returncode == 0, stderr
    assert b'Traceback' not in stderr, stderr
    assert reliability_common.wait_for(
        lambda: not any(Path(f'/proc/{pid}').exists() for pid in listeners), 10.0
    )


def test_the_listener_ends_when_its_node_is_killed():
    process = start_dynamics_node(f'swap_killed_{os.getpid()}')
    try:
        assert reliability_common.wait_for(
            lambda: bool(listener_processes_of(process.pid)), 120.0
        ), 'no listener started'
        listeners = listener_processes_of(process.pid)
    finally:
        processes.kill_node_process(process)  # SIGKILL: no clean-up of its own
        process.communicate()
    assert reliability_common.wait_for(
        lambda: not any(Path(f'/proc/{pid}').exists() and not _is_zombie(pid) for pid in listeners),
        30.0,
    ), 'the listener outlived its node'
