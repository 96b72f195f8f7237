"""The hostile-descriptions run (`robot_dynamics bench descriptions`): 200-odd broken, hostile and
huge robot_description texts, screened by the node's own intake and then published into a
running node while a 1 kHz joint_states stream flows, plus a description every 0.5 s (each such
run against its own quiet p99, measured on the same stream before its first description).

Each description is labelled with what the node must do with it (:data:`REJECTED`,
:data:`ACCEPTED`, :data:`WARNED`); the run checks the node against that label, that the last
good model is kept, that no output mixes two models, and the stream's answered fraction, the
node's part of the longest gap between two outputs and (every 0.5 s) its p99 over the quiet p99
against :data:`STREAM_ANSWERED_TARGET`, :data:`STREAM_GAP_TARGET_MS` and
:data:`STORM_P99_RATIO_TARGET`. Stamps are ROS times (s + ns); latencies and gaps in ms.
"""

from __future__ import annotations

import bisect
import math
import os
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Optional, Sequence

from robot_dynamics.instruments import processes
from robot_dynamics.instruments.reliability_common import (
    NodeUnderTest,
    ReliabilityRunError,
    fraction_answered,
    gravity_reference,
    joint_names_of,
    joint_names_of_text,
    model_value,
    sleep_until,
    wait_for,
    wrong_gravity_outputs,
)
from robot_dynamics.instruments.reliability_restarts import renamed_variant
from robot_dynamics.instruments.reliability_soak import resident_kib
from robot_dynamics.instruments.stream_feeder import StreamFeeder, stream_figures

# ---------------------------------------------------------------------------- hostile descriptions
REJECTED, ACCEPTED, WARNED = 'rejected', 'accepted', 'warned'
"""What a node must do with a description: refuse it, take it (warnings allowed), or
(``warned``) refuse it or take it with at least one warning. Also the outcomes, where
``accepted`` means taken without a warning."""


@dataclass(frozen=True)
class HostileDescription:
    """One malformed or hostile robot_description string and what the node must do with it."""

    category: str
    text: str
    expected: str

    def __repr__(self) -> str:
        return (
            f'HostileDescription({self.category}, {len(self.text)} chars, expect {self.expected})'
        )


def _link(
    name: str,
    mass: str = '1',
    inertia: str = 'ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"',
    com: str = '0 0 0.05',
) -> str:
    return (
        f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/><inertia '
        f'{inertia}/></inertial></link>'
    )


def _joint(
    name: str,
    parent: str,
    child: str,
    kind: str = 'revolute',
    axis: str = '0 0 1',
    xyz: str = '0 0 0.1',
    limit: str = 'lower="-1" upper="1" effort="10" velocity="1"',
) -> str:
    return (
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child '
        f'link="{child}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/><limit {limit}/></joint>'
    )


def _robot(*parts: str, name: str = 'hostile') -> str:
    return f'<robot name="{name}"><link name="base"/>' + ''.join(parts) + '</robot>'


def _chain(count: int, kind: str = 'revolute') -> str:
    parts = [_link('l1'), _joint('j1', 'base', 'l1', kind)]
    for i in range(2, count + 1):
        parts += [_link(f'l{i}'), _joint(f'j{i}', f'l{i - 1}', f'l{i}', kind)]
    return _robot(*parts)


def _inertia(ixx, iyy, izz, ixy=0.0, ixz=0.0, iyz=0.0) -> str:
    return f'ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"'


def _one_link(**link) -> str:
    return _robot(_link('l1', **link), _joint('j1', 'base', 'l1'))


def _structural_cases() -> list:
    cases = []
    for length in range(2, 12):
        names = [f'c{i}' for i in range(length)]
        joints = [
            _joint(f'cj{i}', names[i], names[(i + 1) % length], 'fixed') for i in range(length)
        ]
        cases.append(
            (
                'cycle',
                '<robot name="cycle">'
                + ''.join(_link(n) for n in names)
                + ''.join(joints)
                + '</robot>',
                REJECTED,
            )
        )
    cases.append(('self_loop', _robot(_link('l1'), _joint('j1', 'l1', 'l1')), REJECTED))
    cases += [
        (
            'self_loop',
            _robot(_link('l1'), _joint('j1', 'base', 'l1'), _joint('j2', 'l1', 'l1', 'fixed')),
            REJECTED,
        )
    ]
    for k in range(10):
        cases.append(
            ('missing_parent', _robot(_link('l1'), _joint('j1', f'ghost_{k}', 'l1')), REJECTED)
        )
    for k in range(5):
        cases.append(
            (
                'missing_child',
                _robot(_link('l1'), _joint('j1', 'base', 'l1'), _joint('j2', 'l1', f'ghost_{k}')),
                REJECTED,
            )
        )
    for k in range(5):
        cases.append(
            (
                'two_roots',
                _robot(_link('l1'), _joint('j1', 'base', 'l1'), _link(f'island_{k}')),
                REJECTED,
            )
        )
    for k in range(5):
        cases.append(
            (
                'duplicate_link',
                _robot(_link('l1'), _joint('j1', 'base', 'l1'), _link('l1', mass=str(k + 2))),
                REJECTED,
            )
        )
        cases.append(
            (
                'duplicate_joint',
                _robot(
                    _link('l1'), _link('l2'), _joint('j1', 'base', 'l1'), _joint('j1', 'l1', 'l2')
                ),
                REJECTED,
            )
        )
    for kind in ('warp', 'REVOLUTE', '', 'ball', 'spherical'):
        cases.append(
            ('bad_joint_type', _robot(_link('l1'), _joint('j1', 'base', 'l1', kind)), REJECTED)
        )
    for axis in ('0 0 0', 'nan 0 1', '1 inf 0', '0 0', 'a b c'):
        cases.append(
            ('bad_axis', _robot(_link('l1'), _joint('j1', 'base', 'l1', axis=axis)), REJECTED)
        )
    for xyz in ('nan 0 0', '0 inf 0', '0 0 -inf', '1 2', 'x y z'):
        cases.append(
            ('bad_origin', _robot(_link('l1'), _joint('j1', 'base', 'l1', xyz=xyz)), REJECTED)
        )
    cases.append(
        (
            'mimic_cycle',
            _robot(
                _link('l1'),
                _link('l2'),
                _joint('j1', 'base', 'l1').replace('</joint>', '<mimic joint="j2"/></joint>'),
                _joint('j2', 'l1', 'l2').replace('</joint>', '<mimic joint="j1"/></joint>'),
            ),
            REJECTED,
        )
    )
    cases.append(
        (
            'mimic_unknown',
            _robot(
                _link('l1'),
                _joint('j1', 'base', 'l1').replace('</joint>', '<mimic joint="nowhere"/></joint>'),
            ),
            REJECTED,
        )
    )
    for root in (
        '<robt name="x"><link name="a"/></robt>',
        '<r:robot xmlns:r="urn:x"><link name="a"/></r:robot>',
        '<html><body>robot</body></html>',
        '<robot name="empty"/>',
        '<robot name="x"><joint/></robot>',
    ):
        cases.append(('wrong_structure', root, REJECTED))
    return cases


def _inertial_cases() -> list:
    cases = []
    for mass in (
        '-1',
        '-1e-9',
        'nan',
        'NaN',
        'inf',
        '-inf',
        '1e400',
        'abc',
        '',
        '1,5',
        '0x10',
        '1 2',
    ):
        cases.append(('bad_mass', _one_link(mass=mass), REJECTED))
    for inertia in (
        _inertia('nan', 1, 1),
        _inertia(1, 'inf', 1),
        _inertia(1, 1, 1, ixy='nan'),
        _inertia(1, 1, 'x'),
        _inertia(1, 1, ''),
    ):
        cases.append(('bad_inertia_number', _one_link(inertia=inertia), REJECTED))
    for com in ('nan 0 0', '0 0 inf'):
        cases.append(('bad_com', _one_link(com=com), REJECTED))
    cases += [
        ('zero_mass', _one_link(mass='0', inertia=_inertia(0, 0, 0)), ACCEPTED),
        (
            'zero_mass',
            _robot(
                _link('l1'),
                _joint('j1', 'base', 'l1'),
                _link('tip', mass='0', inertia=_inertia(0, 0, 0)),
                _joint('jt', 'l1', 'tip', 'fixed'),
            ),
            ACCEPTED,
        ),
    ]
    # Physically impossible but finite inertias: a node must at least warn.
    for inertia in (
        _inertia(-0.01, 0.01, 0.01),
        _inertia(0.01, -0.01, 0.01),
        _inertia(0.1, 0.01, 0.01),
        _inertia(0.01, 0.01, 0.05),
        _inertia(0.01, 0.01, 0.01, ixy=0.5),
        _inertia(0, 0, 0, ixz=0.1),
        _inertia(-1, -1, -1),
        _inertia(0.01, 0.02, 0.04),
    ):
        cases.append(('non_physical_inertia', _one_link(inertia=inertia), WARNED))
    cases.append(('non_physical_inertia', _one_link(mass='0', inertia=_inertia(1, 1, 1)), WARNED))
    cases.append(
        (
            'inverted_limits',
            _robot(
                _link('l1'),
                _joint('j1', 'base', 'l1', limit='lower="1" upper="-1" effort="1" velocity="1"'),
            ),
            WARNED,
        )
    )
    return cases


def _hostile_markup_cases() -> list:
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        + ''.join(
            f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";" if i > 1 else "&lol;") * 10}">'
            for i in range(1, 10)
        )
        + ']><robot name="&lol9;"><link name="a"/></robot>'
    )
    quadratic = (
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "'
        + 'x' * 50_000
        + '">]><robot name="q">'
        + '&a;' * 1000
        + '<link name="a"/></robot>'
    )
    cases = [
        ('entity_bomb', laughs, REJECTED),
        ('entity_bomb', quadratic, REJECTED),
        (
            'external_entity',
            '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><robot '
            'name="&x;"><link name="a"/></robot>',
            REJECTED,
        ),
        (
            'external_entity',
            '<!DOCTYPE r [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]><robot '
            'name="x"><link name="a"/></robot>',
            REJECTED,
        ),
        (
            'external_entity',
            '<!DOCTYPE robot SYSTEM "http://127.0.0.1:9/robot.dtd"><robot name="x"><link '
            'name="a"/></robot>',
            REJECTED,
        ),
        (
            'xinclude',
            '<robot name="x" xmlns:xi="http://www.w3.org/2001/XInclude"><link '
            'name="a"/><xi:include href="file:///etc/passwd" parse="text"/></robot>',
            ACCEPTED,
        ),
        (
            'deep_nesting',
            '<robot name="d">' + '<a>' * 100_000 + '</a>' * 100_000 + '<link name="x"/></robot>',
            REJECTED,
        ),
        (
            'many_attributes',
            '<robot name="a"><link name="x" '
            + ' '.join(f'a{i}="{i}"' for i in range(100_000))
            + '/></robot>',
            REJECTED,
        ),
    ]
    return cases


def _size_cases() -> list:
    return [
        (
            'oversize_50MB',
            '<robot name="big"><link name="a"/>' + '<!--' + 'x' * 50_000_000 + '--></robot>',
            REJECTED,
        ),
        (
            'oversize_11MB',
            '<robot name="big"><link name="a"/>' + ' ' * 11_000_000 + '</robot>',
            REJECTED,
        ),
        ('thousands_of_links', _chain(2500, 'fixed'), REJECTED),
        ('thousands_of_links', _chain(1500, 'fixed'), ACCEPTED),
        ('thousands_of_joints', _chain(1500), REJECTED),
        ('hundreds_of_joints', _chain(400, 'continuous'), REJECTED),
    ]


def _text_cases(good_text: str, rng: random.Random, truncations: int) -> list:
    cases = []
    end = good_text.rindex('</robot>')
    for cut in sorted(rng.sample(range(1, end), truncations)):
        cases.append(('truncated', good_text[:cut], REJECTED))
    alphabet = ''.join(chr(c) for c in range(32, 127)) + 'ĀāǰѬ€𝔘😀\t\n'
    for k in range(15):
        junk = ''.join(rng.choice(alphabet) for _ in range(rng.randint(1, 2000)))
        cases.append(('garbage', 'x' + junk, REJECTED))
    cases += [
        ('garbage', text, REJECTED)
        for text in ('', '   \n\t', '\x00' * 100, '<', '<robot', '<?xml?>')
    ]
    cases += [
        ('unicode_names', good_text.replace('fr3_', prefix), ACCEPTED)
        for prefix in ('관절_', 'сустав_', 'ジョイント_', '😀_', 'ǰ_')
    ]
    cases += [
        ('xml_oddities', good_text.replace('<robot ', '<!-- <robot> --><robot ', 1), ACCEPTED),
        (
            'xml_oddities',
            good_text.replace('</robot>', '<![CDATA[ <junk> ]]><unknown_tag a="1"/></robot>'),
            ACCEPTED,
        ),
    ]
    return cases


def hostile_descriptions(good_text: str, seed: int = 0, truncations: int = 70) -> list:
    """The adversarial robot_description corpus (≥ 200 strings): truncated XML, garbage,
    cycles, missing parents, bad/zero/negative/NaN masses, non-physical inertias, entity
    bombs and external entities, a 50 MB string, thousands of links and joints, deep
    nesting, unicode names. ``good_text`` (a valid URDF) seeds the truncations and variants."""
    rng = random.Random(seed)
    cases = (
        _text_cases(good_text, rng, truncations)
        + _structural_cases()
        + _inertial_cases()
        + _hostile_markup_cases()
        + _size_cases()
    )
    return [HostileDescription(category, text, expected) for category, text, expected in cases]


@dataclass
class DescriptionOutcome:
    """What the node's model intake did with one description, and how long it took [s]."""

    category: str
    expected: str
    outcome: str
    seconds: float
    message: str
    longest_gap_ms: float = 0.0
    """Longest time between two stream outputs [ms] whose second output came between this
    description's publication and the next one's (node runs only)."""

    @property
    def as_expected(self) -> bool:
        if self.expected == WARNED:
            return self.outcome in (REJECTED, WARNED)
        if self.expected == ACCEPTED:  # taken, with or without warnings
            return self.outcome in (ACCEPTED, WARNED)
        return self.outcome == self.expected


@dataclass
class DescriptionReport:
    """Outcome of a hostile-description run (intake in this process, or a node over ROS)."""

    outcomes: list
    rss_start_kib: int
    rss_end_kib: int
    node_alive: bool = True
    model_kept: bool = True
    wrong_outputs: int = 0
    stream_answered_fraction: float = 1.0
    stream: Optional['DescriptionStreamFigures'] = None

    @property
    def max_seconds(self) -> float:
        return max((o.seconds for o in self.outcomes), default=0.0)

    def unexpected(self) -> list:
        return [o for o in self.outcomes if not o.as_expected]

    def summary(self) -> dict:
        by_outcome = Counter(o.outcome for o in self.outcomes)
        stream = {'stream': asdict(self.stream)} if self.stream else {}
        return {
            'descriptions': len(self.outcomes),
            'outcomes': dict(by_outcome),
            'unexpected': [
                (o.category, o.expected, o.outcome, o.message[:120]) for o in self.unexpected()
            ],
            'max_seconds': self.max_seconds,
            'rss_start_kib': self.rss_start_kib,
            'rss_end_kib': self.rss_end_kib,
            'node_alive': self.node_alive,
            'model_kept': self.model_kept,
            'wrong_outputs': self.wrong_outputs,
            'stream_answered_fraction': self.stream_answered_fraction,
            'longest_gaps_by_description': self.longest_gaps(),
            **stream,
        }

    def longest_gaps(self, count: int = 5) -> list:
        """The ``count`` descriptions with the longest stream gap [ms] after their publication."""
        ranked = sorted(self.outcomes, key=lambda o: o.longest_gap_ms, reverse=True)[:count]
        return [(o.category, round(o.longest_gap_ms, 1)) for o in ranked if o.longest_gap_ms > 0.0]


def screen_descriptions(corpus: Sequence[HostileDescription]) -> DescriptionReport:
    """Run each description through the nodes' model intake (:meth:`RobotModel.from_urdf_string`)
    in this process, timing each and measuring this process's resident memory before and after."""
    from robot_dynamics.core.errors import DescriptionError
    from robot_dynamics.core.model.model import RobotModel

    rss_start = resident_kib(os.getpid())
    outcomes = []
    for case in corpus:
        started = time.perf_counter()
        try:
            robot = RobotModel.from_urdf_string(case.text)
        except (DescriptionError, ValueError) as error:
            outcome, message = REJECTED, str(error)
        else:
            outcome, message = (
                (WARNED, '; '.join(robot.warnings)) if robot.warnings else (ACCEPTED, '')
            )
            del robot
        outcomes.append(
            DescriptionOutcome(
                case.category, case.expected, outcome, time.perf_counter() - started, message
            )
        )
    return DescriptionReport(outcomes, rss_start, resident_kib(os.getpid()))


STREAM_ANSWERED_TARGET = 0.999
"""Share of the joint states a node must answer while descriptions arrive (``bench
descriptions``)."""
STREAM_GAP_TARGET_MS = 50.0
"""Longest time [ms] between two outputs of the stream while descriptions arrive, less the
time between their inputs (the node's part of a gap)."""
STORM_P99_RATIO_TARGET = 2.0
"""Largest accepted p99 latency of the stream while descriptions arrive, over its quiet p99
in the same run."""


@dataclass
class DescriptionStreamFigures:
    """The 1 kHz torque stream while descriptions arrive: share of inputs answered, longest
    time between two outputs [ms], latency percentiles [ms], outputs that are not one model's
    (``mixed``: joint names of no single model, or as many efforts as another model's joints)
    or not its g(q) (``wrong``)."""

    sent: int
    answered_fraction: float
    longest_gap_ms: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    mixed_outputs: int
    wrong_outputs: int
    longest_input_gap_ms: float = 0.0
    """Longest time [ms] between two joint states this process sent: a gap the feeder made
    (this process stalled), not the node."""
    longest_node_gap_ms: float = 0.0
    """Longest gap between two outputs less the time between their inputs [ms]: the node's
    part of a gap (the target's figure)."""

    @property
    def meets_targets(self) -> bool:
        return (
            self.answered_fraction >= STREAM_ANSWERED_TARGET
            and self.longest_node_gap_ms <= STREAM_GAP_TARGET_MS
            and not self.mixed_outputs
            and not self.wrong_outputs
        )

    def headline(self) -> dict:
        """The figures the targets are about: percentage answered, longest gap [ms], outputs
        not one model's g(q), and whether the targets are met."""
        return {
            'answered_percent': round(100.0 * self.answered_fraction, 3),
            'longest_gap_ms': round(self.longest_gap_ms, 1),
            'longest_input_gap_ms': round(self.longest_input_gap_ms, 1),
            'longest_node_gap_ms': round(self.longest_node_gap_ms, 1),
            'p99_ms': round(self.p99_ms, 2),
            'mixed_or_wrong_outputs': self.mixed_outputs + self.wrong_outputs,
            'meets_targets': self.meets_targets,
        }


def _wait_for_answers(
    feeder: StreamFeeder, sent: list, quiet: float = 1.0, timeout: float = 10.0
) -> None:
    """Wait until ``feeder`` has an answer to every stamp ``sent``, or none came for ``quiet``
    seconds (a backlog the node is still working through is answered, not lost)."""
    deadline, last_count, last_change = time.monotonic() + timeout, -1, time.monotonic()
    while time.monotonic() < deadline:
        count = len(feeder.received)
        if count != last_count:
            last_count, last_change = count, time.monotonic()
        elif time.monotonic() - last_change > quiet or count >= len(sent):
            return
        time.sleep(0.05)


def _output_gaps(sent: list, feeder: StreamFeeder) -> list:
    """(arrival [ns], gap since the previous output [ms], the node's part of that gap [ms]) of
    each answer ``feeder`` received to the stamps ``sent``, in arrival order (the first answer has
    no gap). The node's part is the gap less the time between the two inputs' stamps: a gap in
    what this process sent (it stalled) is not the node's."""
    sent_set = set(sent)
    answers = sorted((arrival, stamp) for stamp, arrival in feeder.received if stamp in sent_set)
    return [
        (b, (b - a) * 1e-6, ((b - a) - (stamp_b - stamp_a)) * 1e-6)
        for (a, stamp_a), (b, stamp_b) in zip(answers, answers[1:])
    ]


def _description_stream_figures(
    sent: list, feeder: StreamFeeder, references: dict, output_gaps: list
) -> DescriptionStreamFigures:
    """:class:`DescriptionStreamFigures` of the answers ``feeder`` received to the stamps ``sent``
    (``output_gaps``: their :func:`_output_gaps`); ``references`` maps each model's joint-name
    tuple to its q ↦ g(q)."""
    figures = stream_figures(sent, feeder.received)
    input_gaps = [(b - a) * 1e-6 for a, b in zip(sent, sent[1:])]
    mixed = sum(
        1
        for _, names, efforts in feeder.messages
        if names not in references or len(efforts) != len(names)
    )
    return DescriptionStreamFigures(
        len(sent),
        fraction_answered(sent, feeder.received),
        max((gap for _, gap, _ in output_gaps), default=math.inf),
        figures.p50_ms,
        figures.p99_ms,
        figures.max_ms,
        mixed,
        wrong_gravity_outputs(feeder, references),
        max(input_gaps, default=0.0),
        max((node_gap for _, _, node_gap in output_gaps), default=math.inf),
    )


def _attribute_gaps(outcomes: list, published_ns: list, output_gaps: list) -> None:
    """Set each outcome's ``longest_gap_ms``: the longest of ``output_gaps`` (:func:`_output_gaps`)
    whose second output arrived between that description's publication and the next one's."""
    arrivals = [arrival for arrival, _, _ in output_gaps]
    windows = published_ns[1 : len(outcomes)] + [math.inf]
    for outcome, start, end in zip(outcomes, published_ns, windows):
        inside = output_gaps[
            bisect.bisect_left(arrivals, start) : bisect.bisect_left(arrivals, end)
        ]
        outcome.longest_gap_ms = max((gap for _, gap, _ in inside), default=0.0)


class _DescriptionPublisher:
    """Publishes robot_description strings from a process of its own (:func:`publish_descriptions`),
    so that serialising a 50 MB string never stalls the bench's own joint-state feed. The texts
    of a run are handed over at the start (``staged``, str or UTF-8 bytes) and published later by
    index: handing over a 20 MB text through the pipe while the stream runs would hold this
    process, whose feeder sends the stream and timestamps the answers."""

    def __init__(self, topic: str, staged: Sequence = ()):
        self.process = processes.start_node_process(
            [
                sys.executable,
                '-c',
                'from robot_dynamics.instruments.reliability_descriptions import '
                f'publish_descriptions; publish_descriptions({topic!r})',
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        if self.process.stdout.readline().strip() != b'ready':
            self.close()
            raise ReliabilityRunError('the description publisher did not start')
        for text in staged:
            self._send(b'+', text, b'staged')

    def publish(self, text) -> None:
        """Publish ``text`` (str, or its UTF-8 bytes), or with an int the text staged at that
        index; returns once it is handed to the middleware."""
        if isinstance(text, int):
            self.process.stdin.write(f'#{text}\n'.encode())
            self._answer(b'sent')
        else:
            self._send(b'', text, b'sent')

    def _send(self, prefix: bytes, text, answer: bytes) -> None:
        data = text if isinstance(text, bytes) else text.encode('utf-8', 'surrogatepass')
        self.process.stdin.write(prefix + f'{len(data)}\n'.encode())
        self.process.stdin.write(
            data
        )  # not joined to the header: copying 50 MB would hold this process's GIL
        self._answer(answer)

    def _answer(self, expected: bytes) -> None:
        self.process.stdin.flush()
        if self.process.stdout.readline().strip() != expected:
            raise ReliabilityRunError('the description publisher stopped')

    def close(self) -> None:
        try:
            self.process.stdin.close()  # it publishes what it has, then ends
            self.process.wait(timeout=10.0)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()


def publish_descriptions(topic: str) -> None:
    """The description publisher's process: per request on stdin one line, then its text: a
    length in bytes then that many bytes of UTF-8 text, published as one std_msgs/String on
    ``topic`` (transient local) and answered 'sent'; ``+`` and a length: the text kept for later,
    answered 'staged'; ``#`` and an index: the text kept at that index published, answered
    'sent'. Ends when stdin closes."""
    import signal

    import rclpy
    from std_msgs.msg import String

    from robot_dynamics.ros.topics import DESCRIPTION_QOS

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the bench ends it by closing stdin
    rclpy.init()
    node = rclpy.create_node(f'bench_descriptions_{os.getpid()}')
    publisher = node.create_publisher(String, topic, DESCRIPTION_QOS)
    staged: list = []
    out = sys.stdout.buffer
    out.write(b'ready\n')
    out.flush()
    while True:
        line = sys.stdin.buffer.readline().strip()
        if not line:
            break
        if line.startswith(b'#'):
            publisher.publish(String(data=staged[int(line[1:])]))
            out.write(b'sent\n')
        else:
            text = sys.stdin.buffer.read(int(line.lstrip(b'+'))).decode('utf-8', 'surrogatepass')
            if line.startswith(b'+'):
                staged.append(text)
                out.write(b'staged\n')
            else:
                publisher.publish(String(data=text))
                out.write(b'sent\n')
        out.flush()
    time.sleep(0.5)  # the last message's reliable delivery
    node.destroy_node()
    rclpy.try_shutdown()


def _stream_on_a_loaded_model(
    run: NodeUnderTest,
    diagnostics: dict,
    descriptions: '_DescriptionPublisher',
    text: str,
    rate: float,
):
    """Publish ``text``, wait until the node has loaded it, then start the ``rate`` [Hz]
    joint_states stream and wait for its first output; returns the background stream."""
    descriptions.publish(text)
    run.feeder.wait_connected()
    if not wait_for(lambda: model_value(diagnostics, 'models_loaded') >= 1, 10.0):
        raise ReliabilityRunError('the node never loaded the first description')
    stream = run.stream_in_background(rate)
    wait_for(lambda: bool(run.feeder.received), 10.0)
    return stream


def descriptions_node(
    urdf: str,
    corpus: Sequence[HostileDescription],
    rate: float = 200.0,
    timeout_per_description: float = 10.0,
) -> DescriptionReport:
    """Publish every must-be-refused description of ``corpus`` on robot_description to a
    dynamics_node process that streams torques for the good model ``urdf`` at ``rate`` [Hz];
    each must be counted as rejected, and every output (~/gravity_torques) must be the good
    model's g(q). The stream's figures meanwhile: :class:`DescriptionStreamFigures`."""
    good_text = open(urdf, encoding='utf-8').read()
    refused = [case for case in corpus if case.expected == REJECTED]
    references = {joint_names_of(urdf): gravity_reference(urdf)}
    outcomes, published_ns = [], []
    with NodeUnderTest(
        'dynamics',
        ['-p', 'diagnostics_period:=0.05'],
        'gravity_torques',
        urdf,
        keep_messages=True,
        connect=False,
        deep_history=True,
    ) as run:
        diagnostics = run.watch_diagnostics()
        descriptions = _DescriptionPublisher(
            '/bench/robot_description', [case.text for case in refused]
        )
        try:
            stream = _stream_on_a_loaded_model(run, diagnostics, descriptions, good_text, rate)
            rss_start = resident_kib(run.process.pid)
            for index, case in enumerate(refused):
                before = model_value(diagnostics, 'descriptions_rejected')
                started = time.perf_counter()
                published_ns.append(time.time_ns())
                descriptions.publish(index)
                counted = wait_for(
                    lambda: model_value(diagnostics, 'descriptions_rejected') > before,
                    timeout_per_description,
                )
                outcomes.append(
                    DescriptionOutcome(
                        case.category,
                        case.expected,
                        REJECTED if counted else 'not_counted',
                        time.perf_counter() - started,
                        '',
                    )
                )
                if run.process.poll() is not None:
                    break
            stream.stop()
            _wait_for_answers(run.feeder, stream.sent)
        finally:
            descriptions.close()
        rss_end = resident_kib(run.process.pid)
        alive = run.process.poll() is None
        kept = model_value(diagnostics, 'models_loaded') == 1
        output_gaps = _output_gaps(stream.sent, run.feeder)
        figures = _description_stream_figures(stream.sent, run.feeder, references, output_gaps)
        _attribute_gaps(outcomes, published_ns, output_gaps)
    return DescriptionReport(
        outcomes,
        rss_start,
        rss_end,
        alive,
        kept,
        figures.wrong_outputs,
        figures.answered_fraction,
        figures,
    )


@dataclass
class DescriptionScenarioReport:
    """A description every ``interval_s`` while the stream runs: what the node made of them
    (from its diagnostics) and the stream's figures."""

    interval_s: float
    descriptions: int
    models_loaded: int
    descriptions_rejected: int
    node_alive: bool
    stream: DescriptionStreamFigures
    models_expected: int = 0
    """Models the node would load if it handled every description (the first one included)."""
    rejections_expected: int = 0
    quiet_p99_ms: float = math.nan
    """p99 latency [ms] of the same stream, same node, before the first description of the
    run (the baseline of :attr:`p99_ratio`)."""

    @property
    def p99_ratio(self) -> float:
        """The stream's p99 while descriptions arrive over its quiet p99."""
        return self.stream.p99_ms / self.quiet_p99_ms

    @property
    def meets_targets(self) -> bool:
        """≥ 99.9 % answered, longest gap, every output one model's g(q), and p99 at most
        :data:`STORM_P99_RATIO_TARGET` × the quiet p99; the node alive."""
        return (
            self.node_alive
            and self.stream.meets_targets
            and self.p99_ratio <= STORM_P99_RATIO_TARGET
        )

    def to_dict(self) -> dict:
        return {
            **asdict(self),
            'p99_ratio': round(self.p99_ratio, 3),
            'meets_targets': self.meets_targets,
        }


def description_scenario_texts(good_text: str) -> list:
    """One cycle of a tool-changing robot's descriptions, each with what the node must do:
    the model again (nothing), one 20 MB too large (refused), a truncated one (refused), another
    model (:func:`renamed_variant`: loaded), that again, garbage (refused), the first model
    (loaded)."""
    variant = renamed_variant(good_text)
    oversize = good_text.replace('</robot>', '<!--' + 'x' * 20_000_000 + '--></robot>')
    return [
        (good_text, 'same'),
        (oversize, REJECTED),
        (good_text[: len(good_text) // 2], REJECTED),
        (variant, ACCEPTED),
        (variant, 'same'),
        ('<robot name="broken"><link', REJECTED),
        (good_text, ACCEPTED),
    ]


def description_scenario(
    urdf: str,
    interval: float = 0.5,
    duration: float = 10.0,
    rate: float = 1000.0,
    quiet: float = 10.0,
) -> DescriptionScenarioReport:
    """A description every ``interval`` seconds for ``duration`` seconds
    (:func:`description_scenario_texts`, cycled) to a dynamics_node streaming at ``rate`` [Hz],
    fed the joints of both models; every output must be one model's g(q). The same stream runs
    ``quiet`` seconds before the first description: its p99 is the run's baseline."""
    good_text = open(urdf, encoding='utf-8').read()
    cycle = description_scenario_texts(good_text)
    variant = cycle[3][0]
    names = [joint_names_of(urdf), joint_names_of_text(variant)]
    references = {names[0]: gravity_reference(urdf), names[1]: gravity_reference(urdf, variant)}
    with NodeUnderTest(
        'dynamics',
        ['-p', 'diagnostics_period:=0.05'],
        'gravity_torques',
        urdf,
        keep_messages=True,
        connect=False,
        names=list(names[0] + names[1]),
        deep_history=True,
    ) as run:
        diagnostics = run.watch_diagnostics()
        descriptions = _DescriptionPublisher('/bench/robot_description', [t for t, _ in cycle])
        try:
            stream = _stream_on_a_loaded_model(run, diagnostics, descriptions, good_text, rate)
            time.sleep(1.0)  # the stream's own start-up is not its quiet baseline
            quiet_start = len(stream.sent)
            time.sleep(quiet)
            quiet_end = len(stream.sent)
            count = max(1, int(duration / interval))
            start = time.perf_counter()
            for k in range(count):
                sleep_until(start + (k + 1) * interval)
                descriptions.publish(k % len(cycle))
            time.sleep(interval)
            stream.stop()
            _wait_for_answers(run.feeder, stream.sent)
        finally:
            descriptions.close()
        alive = run.process.poll() is None
        kinds = [cycle[k % len(cycle)][1] for k in range(count)]
        expected = 1 + kinds.count(ACCEPTED)
        # the last diagnostics: a busy machine may still be loading the last model
        wait_for(lambda: model_value(diagnostics, 'models_loaded') >= expected, 10.0)
        time.sleep(0.2)
        quiet_sent, storm_sent = stream.sent[quiet_start:quiet_end], stream.sent[quiet_end:]
        output_gaps = _output_gaps(storm_sent, run.feeder)
        figures = _description_stream_figures(storm_sent, run.feeder, references, output_gaps)
        return DescriptionScenarioReport(
            interval,
            count,
            model_value(diagnostics, 'models_loaded'),
            model_value(diagnostics, 'descriptions_rejected'),
            alive,
            figures,
            expected,
            kinds.count(REJECTED),
            stream_figures(quiet_sent, run.feeder.received).p99_ms,
        )
