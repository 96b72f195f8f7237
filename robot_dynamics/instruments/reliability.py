"""Reliability runs of the nodes over ROS: soak, fuzzed joint_states, hostile descriptions,
service storm, restart and hot swap (`robot_dynamics bench soak|fuzz|descriptions|storm|restart|hot-swap`).

Every run drives real node processes over loopback ROS from this process (the feeder and
figures of :mod:`robot_dynamics.instruments.bench`) and is bounded in count and time. The
generators (:func:`fuzzed_joint_states`, :func:`hostile_descriptions`) label each input with
what the node must do with it, so a run checks the node against the generator's intent:
every valid joint state answered, every invalid one counted under its reason, every hostile
description refused (or accepted with warnings) within a time bound with the last good model kept.

Stamps are ROS times (s + ns); latencies in ms; resident memory (VmRSS) in KiB.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Iterator, Optional, Sequence

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.instruments import bench
from robot_dynamics.instruments import processes

NODE_MODULES = {'dynamics': 'robot_dynamics.ros.dynamics_node', 'centroidal': 'robot_dynamics.ros.centroidal_node'}
VALID = 'valid'
"""Label of a joint state the node must answer (any other label is a rejection reason)."""


class ReliabilityRunError(RobotDynamicsError):
    """A reliability run could not be carried out (node never connected, died before the run...)."""


# ---------------------------------------------------------------------------- fuzzed joint states
@dataclass(frozen=True)
class FuzzedJointState:
    """One generated sensor_msgs/JointState: values in rad, rad/s, N·m; stamp as ROS (sec, nanosec).

    ``expected`` is :data:`VALID` or the rejection reason the node must count it under
    (:data:`robot_dynamics.core.streams.joint_states.REJECTION_REASONS`).
    """

    names: tuple
    positions: tuple
    velocities: tuple
    efforts: tuple
    sec: int
    nanosec: int
    expected: str

    @property
    def stamp(self) -> float:
        """Stamp [s] as the nodes read it."""
        return self.sec + self.nanosec * 1e-9

    @property
    def stamp_ns(self) -> int:
        return self.sec * 1_000_000_000 + self.nanosec


_UNICODE_NAMES = ('관절_1', 'сустав', 'ジョイント', '\u202eevil', 'ǰoint1', '😀', ' ', '')


class _JointStateFuzzer:
    """Seeded generator of one-fault-each joint states around a monotonic valid clock."""

    def __init__(self, joint_names: Sequence[str], seed: int, start_ns: int):
        self.names = list(joint_names)
        self.rng = random.Random(seed)
        self.clock_ns = start_ns
        self._faults = (self._bad_stamp, self._out_of_order, self._empty, self._length_mismatch,
                        self._duplicate_names, self._no_known_joints, self._non_finite, self._out_of_range)

    def valid(self) -> FuzzedJointState:
        rng, count = self.rng, len(self.names)
        self.clock_ns += 1_000_000
        order = list(range(count))
        rng.shuffle(order)
        names = [self.names[i] for i in order]
        positions = [rng.uniform(-1.0, 1.0) for _ in order]
        velocities = [rng.uniform(-2.0, 2.0) for _ in order] if rng.random() < 0.8 else []
        efforts = [rng.uniform(-20.0, 20.0) for _ in order] if rng.random() < 0.5 else []
        if rng.random() < 0.3:  # joints the model lacks are ignored, whatever their values
            extra = [f'{rng.choice(_UNICODE_NAMES)}#{k}' for k in range(rng.randint(1, 3))]
            names += extra
            positions += [rng.choice((math.nan, math.inf, 1e300, 0.0)) for _ in extra]
            velocities += [0.0] * len(extra) if velocities else []
            efforts += [math.nan] * len(extra) if efforts else []
        return self._message(names, positions, velocities, efforts, self.clock_ns, VALID)

    def invalid(self) -> FuzzedJointState:
        return self.rng.choice(self._faults)()

    def _message(self, names, positions, velocities, efforts, stamp_ns: int, expected: str) -> FuzzedJointState:
        sec, nanosec = divmod(stamp_ns, 1_000_000_000)
        return FuzzedJointState(tuple(names), tuple(positions), tuple(velocities), tuple(efforts), sec, nanosec,
                                expected)

    def _arrays(self) -> tuple:
        count, rng = len(self.names), self.rng
        return ([rng.uniform(-1.0, 1.0) for _ in range(count)], [rng.uniform(-2.0, 2.0) for _ in range(count)],
                [rng.uniform(-20.0, 20.0) for _ in range(count)])

    def _newer(self) -> int:
        return self.clock_ns + self.rng.randint(1, 999_999)

    def _bad_stamp(self) -> FuzzedJointState:
        positions, velocities, efforts = self._arrays()
        stamp_ns = -self.rng.randint(1, 2**31 - 1) * 1_000_000_000 + self.rng.randint(0, 999_999_999)
        return self._message(self.names, positions, velocities, efforts, stamp_ns, 'bad_stamp')

    def _out_of_order(self) -> FuzzedJointState:
        positions, velocities, efforts = self._arrays()
        stamp_ns = 0 if self.rng.random() < 0.3 else self.clock_ns - self.rng.randint(1_000, 2_000_000_000)
        return self._message(self.names, positions, velocities, efforts, max(stamp_ns, 0), 'out_of_order')

    def _empty(self) -> FuzzedJointState:
        if self.rng.random() < 0.5:
            return self._message([], [], [], [], self._newer(), 'empty')
        return self._message(self.names, [], [], [], self._newer(), 'empty')

    def _length_mismatch(self) -> FuzzedJointState:
        positions, velocities, efforts = self._arrays()
        count, rng = len(self.names), self.rng
        wrong = rng.choice([k for k in range(1, count + 5) if k != count])
        which = rng.randrange(3)
        arrays = [positions, velocities, efforts]
        arrays[which] = [rng.uniform(-1.0, 1.0) for _ in range(wrong)]
        return self._message(self.names, *arrays, self._newer(), 'length_mismatch')

    def _duplicate_names(self) -> FuzzedJointState:
        positions, velocities, efforts = self._arrays()
        names = list(self.names)
        source, target = self.rng.sample(range(len(names)), 2)
        names[target] = names[source]
        return self._message(names, positions, velocities, efforts, self._newer(), 'duplicate_names')

    def _no_known_joints(self) -> FuzzedJointState:
        rng = self.rng
        count = rng.randint(1, 12)
        names = [f'{rng.choice(_UNICODE_NAMES)}{"x" * rng.choice((0, 1, 300))}#{k}' for k in range(count)]
        values = [rng.uniform(-1.0, 1.0) for _ in range(count)]
        return self._message(names, values, values, [], self._newer(), 'no_known_joints')

    def _non_finite(self) -> FuzzedJointState:
        arrays = list(self._arrays())
        which, index = self.rng.randrange(3), self.rng.randrange(len(self.names))
        arrays[which][index] = self.rng.choice((math.nan, math.inf, -math.inf))
        return self._message(self.names, *arrays, self._newer(), 'non_finite')

    def _out_of_range(self) -> FuzzedJointState:
        arrays = list(self._arrays())
        which, index = self.rng.randrange(3), self.rng.randrange(len(self.names))
        arrays[which][index] = self.rng.choice((-1.0, 1.0)) * 10.0 ** self.rng.uniform(6.01, 308.0)
        return self._message(self.names, *arrays, self._newer(), 'out_of_range')


def fuzzed_joint_states(joint_names: Sequence[str], count: int, seed: int = 0, valid_fraction: float = 0.5,
                        start: float = 1000.0) -> Iterator[FuzzedJointState]:
    """``count`` joint states for a model with ``joint_names``: valid ones (all joints, shuffled,
    optional velocity/effort, sometimes extra unknown names with garbage values) interleaved
    with ones carrying exactly one fault each (NaN/Inf, huge values, wrong and mismatched array
    lengths, empty arrays, unknown/duplicate/unicode names, zero, negative and non-monotonic
    stamps). Valid stamps advance 1 ms from ``start`` [s]; the first message is valid."""
    fuzzer = _JointStateFuzzer(joint_names, seed, int(start * 1e9))
    for index in range(count):
        yield fuzzer.valid() if index == 0 or fuzzer.rng.random() < valid_fraction else fuzzer.invalid()


@dataclass
class FuzzReport:
    """Outcome of feeding fuzzed joint states: counts per expected and per counted reason."""

    messages: int
    valid: int
    answered_valid: int
    answered_invalid: int
    expected_rejections: dict
    counted_rejections: dict
    seconds: float
    node_alive: bool = True
    misclassified: int = 0

    @property
    def passed(self) -> bool:
        return (self.node_alive and self.answered_valid == self.valid and self.answered_invalid == 0
                and self.expected_rejections == self.counted_rejections and self.misclassified == 0)

    def __repr__(self) -> str:
        return (f'FuzzReport({self.messages} messages, {self.answered_valid}/{self.valid} valid answered, '
                f'rejections expected {self.expected_rejections} counted {self.counted_rejections}, '
                f'{self.seconds:.1f} s)')


def fuzz_core(urdf: str, count: int = 100_000, seed: int = 0) -> FuzzReport:
    """Feed ``count`` fuzzed joint states straight into the node's core call
    (:class:`~robot_dynamics.core.streams.live_torques.LiveTorqueEstimator`) and tally the outcomes."""
    from robot_dynamics.core.errors import JointStateError
    from robot_dynamics.core.streams.live_torques import LiveTorqueEstimator
    from robot_dynamics.core.model.model import RobotModel

    robot = RobotModel.from_urdf_file(urdf)
    estimator = LiveTorqueEstimator(robot)
    expected, counted = Counter(), Counter()
    valid = answered_valid = answered_invalid = misclassified = 0
    started = time.perf_counter()
    for message in fuzzed_joint_states(robot.joint_names, count, seed):
        if message.expected == VALID:
            valid += 1
        else:
            expected[message.expected] += 1
        try:
            sample = estimator.update(message.names, message.positions, message.velocities, message.efforts,
                                      message.stamp)
        except JointStateError as error:
            counted[error.reason] += 1
            misclassified += error.reason != message.expected
            continue
        if sample is not None and tuple(estimator.robot.joint_names) == robot.joint_names:
            answered_valid += message.expected == VALID
            answered_invalid += message.expected != VALID
    return FuzzReport(count, valid, answered_valid, answered_invalid, dict(sorted(expected.items())),
                      dict(sorted(counted.items())), time.perf_counter() - started, misclassified=misclassified)


def fuzz_node(urdf: str, count: int = 5000, seed: int = 1, rate: float = 1000.0) -> FuzzReport:
    """Publish ``count`` fuzzed joint states at ``rate`` [Hz] to a dynamics_node process; valid
    ones must come back on ~/inverse_dynamics_torques (matched by stamp), invalid ones must
    show in the node's /diagnostics ``rejected_<reason>`` counts. Valid primer messages
    (stamped before the fuzz) go first until the node answers, so discovery loses nothing."""
    from sensor_msgs.msg import JointState

    names = _joint_names(urdf)
    messages = list(fuzzed_joint_states(names, count, seed))
    expected = Counter(m.expected for m in messages if m.expected != VALID)
    valid_stamps = {m.stamp_ns for m in messages if m.expected == VALID}
    # As deep as the node's input queue: on a busy machine the node falls behind and catches up
    # instead of the publisher's history dropping inputs uncounted.
    with _NodeUnderTest('dynamics', ['-p', f'urdf_file:={urdf}', '-p', 'diagnostics_period:=0.2'],
                        'inverse_dynamics_torques', urdf, deep_history=True) as run:
        diagnostics = run.watch_diagnostics()

        def publish(m: FuzzedJointState) -> None:
            run.feeder.joint_pub.publish(JointState(header=_header(m.sec, m.nanosec), name=list(m.names),
                                                    position=list(m.positions), velocity=list(m.velocities),
                                                    effort=list(m.efforts)))

        def handled() -> int:
            return _input_value(diagnostics, 'processed') + _input_value(diagnostics, 'rejected_total')

        primers = _prime(run.feeder, publish, names, messages[0].stamp_ns)
        started = time.perf_counter()
        period = 1.0 / rate
        for index, fuzzed in enumerate(messages):
            _sleep_until(started + index * period)
            publish(fuzzed)
        wait_for(lambda: handled() >= count + len(primers), 120.0)
        bench._wait_for_stragglers(run.feeder, math.inf, quiet=1.0, limit=30.0)  # answers still on their way
        seconds = time.perf_counter() - started
        answered = {stamp for stamp, _ in run.feeder.received}
        counted = {key[len('rejected_'):]: int(value) for key, value in _input_values(diagnostics).items()
                   if key.startswith('rejected_') and key != 'rejected_total'}
        alive = run.process.poll() is None
    return FuzzReport(count, len(valid_stamps), len(answered & valid_stamps),
                      len(answered - valid_stamps - primers), dict(sorted(expected.items())),
                      dict(sorted(counted.items())), seconds, alive)


def _prime(feeder: 'bench.StreamFeeder', publish, names: Sequence[str], before_ns: int,
           timeout: float = 10.0) -> set:
    """Publish valid joint states stamped 1 s before ``before_ns``, 1 ms apart, every 10 ms until
    the node answers one; returns their stamps [ns]."""
    stamps: set = set()
    deadline = time.monotonic() + timeout
    while not feeder.received and time.monotonic() < deadline:
        stamp_ns = before_ns - 1_000_000_000 + len(stamps) * 1_000_000
        sec, nanosec = divmod(stamp_ns, 1_000_000_000)
        publish(FuzzedJointState(tuple(names), (0.0,) * len(names), (), (), sec, nanosec, VALID))
        stamps.add(stamp_ns)
        time.sleep(0.01)
    if not feeder.received:
        raise ReliabilityRunError('the node under test never answered a valid joint state')
    return stamps


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
        return f'HostileDescription({self.category}, {len(self.text)} chars, expect {self.expected})'


def _link(name: str, mass: str = '1', inertia: str = 'ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"',
          com: str = '0 0 0.05') -> str:
    return (f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/>'
            f'<inertia {inertia}/></inertial></link>')


def _joint(name: str, parent: str, child: str, kind: str = 'revolute', axis: str = '0 0 1',
           xyz: str = '0 0 0.1', limit: str = 'lower="-1" upper="1" effort="10" velocity="1"') -> str:
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="{axis}"/><limit {limit}/></joint>')


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
        joints = [_joint(f'cj{i}', names[i], names[(i + 1) % length], 'fixed') for i in range(length)]
        cases.append(('cycle', '<robot name="cycle">' + ''.join(_link(n) for n in names) + ''.join(joints)
                      + '</robot>', REJECTED))
    cases.append(('self_loop', _robot(_link('l1'), _joint('j1', 'l1', 'l1')), REJECTED))
    cases += [('self_loop', _robot(_link('l1'), _joint('j1', 'base', 'l1'), _joint('j2', 'l1', 'l1', 'fixed')),
               REJECTED)]
    for k in range(10):
        cases.append(('missing_parent', _robot(_link('l1'), _joint('j1', f'ghost_{k}', 'l1')), REJECTED))
    for k in range(5):
        cases.append(('missing_child', _robot(_link('l1'), _joint('j1', 'base', 'l1'),
                                              _joint('j2', 'l1', f'ghost_{k}')), REJECTED))
    for k in range(5):
        cases.append(('two_roots', _robot(_link('l1'), _joint('j1', 'base', 'l1'), _link(f'island_{k}')), REJECTED))
    for k in range(5):
        cases.append(('duplicate_link', _robot(_link('l1'), _joint('j1', 'base', 'l1'), _link('l1', mass=str(k + 2))),
                      REJECTED))
        cases.append(('duplicate_joint', _robot(_link('l1'), _link('l2'), _joint('j1', 'base', 'l1'),
                                                _joint('j1', 'l1', 'l2')), REJECTED))
    for kind in ('warp', 'REVOLUTE', '', 'ball', 'spherical'):
        cases.append(('bad_joint_type', _robot(_link('l1'), _joint('j1', 'base', 'l1', kind)), REJECTED))
    for axis in ('0 0 0', 'nan 0 1', '1 inf 0', '0 0', 'a b c'):
        cases.append(('bad_axis', _robot(_link('l1'), _joint('j1', 'base', 'l1', axis=axis)), REJECTED))
    for xyz in ('nan 0 0', '0 inf 0', '0 0 -inf', '1 2', 'x y z'):
        cases.append(('bad_origin', _robot(_link('l1'), _joint('j1', 'base', 'l1', xyz=xyz)), REJECTED))
    cases.append(('mimic_cycle', _robot(_link('l1'), _link('l2'),
                                        _joint('j1', 'base', 'l1').replace('</joint>', '<mimic joint="j2"/></joint>'),
                                        _joint('j2', 'l1', 'l2').replace('</joint>', '<mimic joint="j1"/></joint>')),
                  REJECTED))
    cases.append(('mimic_unknown', _robot(_link('l1'), _joint('j1', 'base', 'l1').replace(
        '</joint>', '<mimic joint="nowhere"/></joint>')), REJECTED))
    for root in ('<robt name="x"><link name="a"/></robt>', '<r:robot xmlns:r="urn:x"><link name="a"/></r:robot>',
                 '<html><body>robot</body></html>', '<robot name="empty"/>', '<robot name="x"><joint/></robot>'):
        cases.append(('wrong_structure', root, REJECTED))
    return cases


def _inertial_cases() -> list:
    cases = []
    for mass in ('-1', '-1e-9', 'nan', 'NaN', 'inf', '-inf', '1e400', 'abc', '', '1,5', '0x10', '1 2'):
        cases.append(('bad_mass', _one_link(mass=mass), REJECTED))
    for inertia in (_inertia('nan', 1, 1), _inertia(1, 'inf', 1), _inertia(1, 1, 1, ixy='nan'),
                    _inertia(1, 1, 'x'), _inertia(1, 1, '')):
        cases.append(('bad_inertia_number', _one_link(inertia=inertia), REJECTED))
    for com in ('nan 0 0', '0 0 inf'):
        cases.append(('bad_com', _one_link(com=com), REJECTED))
    cases += [('zero_mass', _one_link(mass='0', inertia=_inertia(0, 0, 0)), ACCEPTED),
              ('zero_mass', _robot(_link('l1'), _joint('j1', 'base', 'l1'), _link('tip', mass='0',
                                   inertia=_inertia(0, 0, 0)), _joint('jt', 'l1', 'tip', 'fixed')), ACCEPTED)]
    # Physically impossible but finite inertias: a node must at least warn.
    for inertia in (_inertia(-0.01, 0.01, 0.01), _inertia(0.01, -0.01, 0.01), _inertia(0.1, 0.01, 0.01),
                    _inertia(0.01, 0.01, 0.05), _inertia(0.01, 0.01, 0.01, ixy=0.5), _inertia(0, 0, 0, ixz=0.1),
                    _inertia(-1, -1, -1), _inertia(0.01, 0.02, 0.04)):
        cases.append(('non_physical_inertia', _one_link(inertia=inertia), WARNED))
    cases.append(('non_physical_inertia', _one_link(mass='0', inertia=_inertia(1, 1, 1)), WARNED))
    cases.append(('inverted_limits', _robot(_link('l1'), _joint('j1', 'base', 'l1',
                                                               limit='lower="1" upper="-1" effort="1" velocity="1"')),
                  WARNED))
    return cases


def _hostile_markup_cases() -> list:
    laughs = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
              + ''.join(f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";" if i > 1 else "&lol;") * 10}">'
                        for i in range(1, 10)) + ']><robot name="&lol9;"><link name="a"/></robot>')
    quadratic = ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "' + 'x' * 50_000 + '">]><robot name="q">'
                 + '&a;' * 1000 + '<link name="a"/></robot>')
    cases = [('entity_bomb', laughs, REJECTED), ('entity_bomb', quadratic, REJECTED),
             ('external_entity', '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                                 '<robot name="&x;"><link name="a"/></robot>', REJECTED),
             ('external_entity', '<!DOCTYPE r [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]>'
                                 '<robot name="x"><link name="a"/></robot>', REJECTED),
             ('external_entity', '<!DOCTYPE robot SYSTEM "http://127.0.0.1:9/robot.dtd"><robot name="x">'
                                 '<link name="a"/></robot>', REJECTED),
             ('xinclude', '<robot name="x" xmlns:xi="http://www.w3.org/2001/XInclude"><link name="a"/>'
                          '<xi:include href="file:///etc/passwd" parse="text"/></robot>', ACCEPTED),
             ('deep_nesting', '<robot name="d">' + '<a>' * 100_000 + '</a>' * 100_000 + '<link name="x"/></robot>',
              REJECTED),
             ('many_attributes', '<robot name="a"><link name="x" ' + ' '.join(f'a{i}="{i}"' for i in range(100_000))
              + '/></robot>', REJECTED)]
    return cases


def _size_cases() -> list:
    return [('oversize_50MB', '<robot name="big"><link name="a"/>' + '<!--' + 'x' * 50_000_000 + '--></robot>',
             REJECTED),
            ('oversize_11MB', '<robot name="big"><link name="a"/>' + ' ' * 11_000_000 + '</robot>', REJECTED),
            ('thousands_of_links', _chain(2500, 'fixed'), REJECTED),
            ('thousands_of_links', _chain(1500, 'fixed'), ACCEPTED),
            ('thousands_of_joints', _chain(1500), REJECTED),
            ('hundreds_of_joints', _chain(400, 'continuous'), REJECTED)]


def _text_cases(good_text: str, rng: random.Random, truncations: int) -> list:
    cases = []
    end = good_text.rindex('</robot>')
    for cut in sorted(rng.sample(range(1, end), truncations)):
        cases.append(('truncated', good_text[:cut], REJECTED))
    alphabet = ''.join(chr(c) for c in range(32, 127)) + 'ĀāǰѬ€𝔘😀\t\n'
    for k in range(15):
        junk = ''.join(rng.choice(alphabet) for _ in range(rng.randint(1, 2000)))
        cases.append(('garbage', 'x' + junk, REJECTED))
    cases += [('garbage', text, REJECTED) for text in ('', '   \n\t', '\x00' * 100, '<', '<robot', '<?xml?>')]
    cases += [('unicode_names', good_text.replace('fr3_', prefix), ACCEPTED)
              for prefix in ('관절_', 'сустав_', 'ジョイント_', '😀_', 'ǰ_')]
    cases += [('xml_oddities', good_text.replace('<robot ', '<!-- <robot> --><robot ', 1), ACCEPTED),
              ('xml_oddities', good_text.replace('</robot>', '<![CDATA[ <junk> ]]><unknown_tag a="1"/></robot>'),
               ACCEPTED)]
    return cases


def hostile_descriptions(good_text: str, seed: int = 0, truncations: int = 70) -> list:
    """The adversarial robot_description corpus (≥ 200 strings): truncated XML, garbage,
    cycles, missing parents, bad/zero/negative/NaN masses, non-physical inertias, entity
    bombs and external entities, a 50 MB string, thousands of links and joints, deep
    nesting, unicode names. ``good_text`` (a valid URDF) seeds the truncations and variants."""
    rng = random.Random(seed)
    cases = (_text_cases(good_text, rng, truncations) + _structural_cases() + _inertial_cases()
             + _hostile_markup_cases() + _size_cases())
    return [HostileDescription(category, text, expected) for category, text, expected in cases]


@dataclass
class DescriptionOutcome:
    """What the node's model intake did with one description, and how long it took [s]."""

    category: str
    expected: str
    outcome: str
    seconds: float
    message: str

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
        return {'descriptions': len(self.outcomes), 'outcomes': dict(by_outcome),
                'unexpected': [(o.category, o.expected, o.outcome, o.message[:120]) for o in self.unexpected()],
                'max_seconds': self.max_seconds, 'rss_start_kib': self.rss_start_kib,
                'rss_end_kib': self.rss_end_kib, 'node_alive': self.node_alive, 'model_kept': self.model_kept,
                'wrong_outputs': self.wrong_outputs, 'stream_answered_fraction': self.stream_answered_fraction,
                **stream}


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
            outcome, message = (WARNED, '; '.join(robot.warnings)) if robot.warnings else (ACCEPTED, '')
            del robot
        outcomes.append(DescriptionOutcome(case.category, case.expected, outcome, time.perf_counter() - started,
                                           message))
    return DescriptionReport(outcomes, rss_start, resident_kib(os.getpid()))


STREAM_ANSWERED_TARGET = 0.999
"""Share of the joint states a node must answer while descriptions arrive (``bench descriptions``)."""
STREAM_GAP_TARGET_MS = 50.0
"""Longest time [ms] between two outputs of the stream while descriptions arrive."""


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

    @property
    def meets_targets(self) -> bool:
        return (self.answered_fraction >= STREAM_ANSWERED_TARGET and self.longest_gap_ms <= STREAM_GAP_TARGET_MS
                and not self.mixed_outputs and not self.wrong_outputs)


def _wait_for_answers(feeder: 'bench.StreamFeeder', sent: list, quiet: float = 1.0, timeout: float = 10.0) -> None:
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


def _description_stream_figures(sent: list, feeder: 'bench.StreamFeeder', references: dict) -> DescriptionStreamFigures:
    """:class:`DescriptionStreamFigures` of the answers ``feeder`` received to the stamps ``sent``;
    ``references`` maps each model's joint-name tuple to its q ↦ g(q)."""
    figures = bench._figures(sent, feeder.received)
    sent_set = set(sent)
    arrivals = sorted(arrival for stamp, arrival in feeder.received if stamp in sent_set)
    gaps = [(b - a) * 1e-6 for a, b in zip(arrivals, arrivals[1:])]
    mixed = sum(1 for _, names, efforts in feeder.messages if names not in references or len(efforts) != len(names))
    return DescriptionStreamFigures(len(sent), _answered_fraction(sent, feeder.received), max(gaps, default=math.inf),
                                    figures.p50_ms, figures.p99_ms, figures.max_ms, mixed,
                                    _wrong_gravity_outputs(feeder, references))


class _DescriptionPublisher:
    """Publishes robot_description strings from a process of its own (:func:`publish_descriptions`),
    so that serialising a 50 MB string never stalls the bench's own joint-state feed."""

    def __init__(self, topic: str):
        self.process = processes.start_node_process(
            [sys.executable, '-c', 'from robot_dynamics.instruments.reliability import publish_descriptions; '
                                   f'publish_descriptions({topic!r})'], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        if self.process.stdout.readline().strip() != b'ready':
            self.close()
            raise ReliabilityRunError('the description publisher did not start')

    def publish(self, text: str) -> None:
        """Publish ``text``; returns once it is handed to the middleware."""
        data = text.encode('utf-8', 'surrogatepass')
        self.process.stdin.write(f'{len(data)}\n'.encode() + data)
        self.process.stdin.flush()
        if self.process.stdout.readline().strip() != b'sent':
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
    """The description publisher's process: per request on stdin (a line with the length in
    bytes, then the UTF-8 text) one std_msgs/String on ``topic`` (transient local), answered
    'sent' on stdout; ends when stdin closes."""
    import signal

    import rclpy
    from std_msgs.msg import String

    from robot_dynamics.ros.common import DESCRIPTION_QOS

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the bench ends it by closing stdin
    rclpy.init()
    node = rclpy.create_node(f'bench_descriptions_{os.getpid()}')
    publisher = node.create_publisher(String, topic, DESCRIPTION_QOS)
    out = sys.stdout.buffer
    out.write(b'ready\n')
    out.flush()
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            break
        text = sys.stdin.buffer.read(int(line)).decode('utf-8', 'surrogatepass')
        publisher.publish(String(data=text))
        out.write(b'sent\n')
        out.flush()
    time.sleep(0.5)  # the last message's reliable delivery
    node.destroy_node()
    rclpy.try_shutdown()


def descriptions_node(urdf: str, corpus: Sequence[HostileDescription], rate: float = 200.0,
                      timeout_per_description: float = 10.0) -> DescriptionReport:
    """Publish every must-be-refused description of ``corpus`` on robot_description to a
    dynamics_node process that streams torques for the good model ``urdf`` at ``rate`` [Hz];
    each must be counted as rejected, and every output (~/gravity_torques) must be the good
    model's g(q). The stream's figures meanwhile: :class:`DescriptionStreamFigures`."""
    good_text = open(urdf, encoding='utf-8').read()
    refused = [case for case in corpus if case.expected == REJECTED]
    references = {_joint_names(urdf): _gravity_reference(urdf)}
    outcomes = []
    with _NodeUnderTest('dynamics', ['-p', 'diagnostics_period:=0.05'], 'gravity_torques', urdf,
                        keep_messages=True, connect=False, deep_history=True) as run:
        diagnostics = run.watch_diagnostics()
        descriptions = _DescriptionPublisher('/bench/robot_description')
        try:
            descriptions.publish(good_text)
            run.feeder.wait_connected()
            if not wait_for(lambda: _model_value(diagnostics, 'models_loaded') >= 1, 10.0):
                raise ReliabilityRunError('the node never loaded the good description')
            stream = run.stream_in_background(rate)
            wait_for(lambda: bool(run.feeder.received), 10.0)
            rss_start = resident_kib(run.process.pid)
            for case in refused:
                before = _model_value(diagnostics, 'descriptions_rejected')
                started = time.perf_counter()
                descriptions.publish(case.text)
                counted = wait_for(lambda: _model_value(diagnostics, 'descriptions_rejected') > before,
                                   timeout_per_description)
                outcomes.append(DescriptionOutcome(case.category, case.expected,
                                                   REJECTED if counted else 'not_counted',
                                                   time.perf_counter() - started, ''))
                if run.process.poll() is not None:
                    break
            stream.stop()
            _wait_for_answers(run.feeder, stream.sent)
        finally:
            descriptions.close()
        rss_end = resident_kib(run.process.pid)
        alive = run.process.poll() is None
        kept = _model_value(diagnostics, 'models_loaded') == 1
        figures = _description_stream_figures(stream.sent, run.feeder, references)
    return DescriptionReport(outcomes, rss_start, rss_end, alive, kept, figures.wrong_outputs,
                             figures.answered_fraction, figures)


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

    def to_dict(self) -> dict:
        return asdict(self)


def description_scenario_texts(good_text: str) -> list:
    """One cycle of a tool-changing robot's descriptions, each with what the node must do:
    the model again (nothing), one 20 MB too large (refused), a truncated one (refused), another
    model (:func:`renamed_variant`: loaded), that again, garbage (refused), the first model (loaded)."""
    variant = renamed_variant(good_text)
    oversize = good_text.replace('</robot>', '<!--' + 'x' * 20_000_000 + '--></robot>')
    return [(good_text, 'same'), (oversize, REJECTED), (good_text[:len(good_text) // 2], REJECTED),
            (variant, ACCEPTED), (variant, 'same'), ('<robot name="broken"><link', REJECTED), (good_text, ACCEPTED)]


def description_scenario(urdf: str, interval: float = 0.5, duration: float = 10.0,
                         rate: float = 1000.0) -> DescriptionScenarioReport:
    """A description every ``interval`` seconds for ``duration`` seconds
    (:func:`description_scenario_texts`, cycled) to a dynamics_node streaming at ``rate`` [Hz],
    fed the joints of both models; every output must be one model's g(q)."""
    good_text = open(urdf, encoding='utf-8').read()
    cycle = description_scenario_texts(good_text)
    variant = cycle[3][0]
    names = [_joint_names(urdf), _joint_names_of_text(variant)]
    references = {names[0]: _gravity_reference(urdf), names[1]: _gravity_reference(urdf, variant)}
    with _NodeUnderTest('dynamics', ['-p', 'diagnostics_period:=0.05'], 'gravity_torques', urdf,
                        keep_messages=True, connect=False, names=list(names[0] + names[1]),
                        deep_history=True) as run:
        diagnostics = run.watch_diagnostics()
        descriptions = _DescriptionPublisher('/bench/robot_description')
        try:
            descriptions.publish(good_text)
            run.feeder.wait_connected()
            if not wait_for(lambda: _model_value(diagnostics, 'models_loaded') >= 1, 10.0):
                raise ReliabilityRunError('the node never loaded the first description')
            stream = run.stream_in_background(rate)
            wait_for(lambda: bool(run.feeder.received), 10.0)
            count = max(1, int(duration / interval))
            start = time.perf_counter()
            for k in range(count):
                _sleep_until(start + (k + 1) * interval)
                descriptions.publish(cycle[k % len(cycle)][0])
            time.sleep(interval)
            stream.stop()
            _wait_for_answers(run.feeder, stream.sent)
        finally:
            descriptions.close()
        alive = run.process.poll() is None
        time.sleep(0.2)  # the last diagnostics
        figures = _description_stream_figures(stream.sent, run.feeder, references)
        kinds = [cycle[k % len(cycle)][1] for k in range(count)]
        return DescriptionScenarioReport(interval, count, _model_value(diagnostics, 'models_loaded'),
                                         _model_value(diagnostics, 'descriptions_rejected'), alive, figures,
                                         1 + kinds.count(ACCEPTED), kinds.count(REJECTED))


# ---------------------------------------------------------------------------- soak
@dataclass
class SoakReport:
    """One node fed for ``duration_s`` at ``rate_hz``: stream figures against the bare relay of
    the same run, and the node's private resident memory [KiB] (:func:`private_resident_kib`:
    its fixed-size shared-memory blocks, the recording ring buffer and the DDS segments, excluded)
    sampled every second."""

    target: str
    rate_hz: float
    duration_s: float
    node: bench.StreamFigures
    relay: bench.StreamFigures
    rss_samples_kib: list = field(default_factory=list)
    load_average: tuple = ()
    node_alive: bool = True

    @property
    def rss_start_kib(self) -> int:
        return self.rss_samples_kib[0] if self.rss_samples_kib else 0

    @property
    def rss_end_kib(self) -> int:
        return self.rss_samples_kib[-1] if self.rss_samples_kib else 0

    @property
    def rss_growth_kib(self) -> int:
        return self.rss_end_kib - self.rss_start_kib

    def to_dict(self) -> dict:
        relay, node = self.relay, self.node
        return {'target': self.target, 'rate_hz': self.rate_hz, 'duration_s': self.duration_s,
                'answered_fraction': node.answered_fraction, 'relay_answered_fraction': relay.answered_fraction,
                'node_latency_ms': bench._latencies(node), 'relay_latency_ms': bench._latencies(relay),
                'p50_ratio': _ratio(node.p50_ms, relay.p50_ms), 'p99_ratio': _ratio(node.p99_ms, relay.p99_ms),
                'rss_start_kib': self.rss_start_kib, 'rss_end_kib': self.rss_end_kib,
                'rss_max_kib': max(self.rss_samples_kib, default=0), 'rss_growth_kib': self.rss_growth_kib,
                'load_average_1_5_15': list(self.load_average), 'node_alive': self.node_alive}


def soak(target: str, duration: float, rate: Optional[float] = None, warmup: float = 2.0,
         baseline_duration: Optional[float] = None) -> SoakReport:
    """Feed ``target`` ('dynamics': arm at 1 kHz, 'centroidal': quadruped at 500 Hz) for
    ``duration`` seconds after ``warmup``; the bare relay baseline runs for ``baseline_duration``
    (default: ``min(duration, 60)``) under the same feed just before."""
    module, output, default_rate, model, root_joint = bench.TARGETS[target]
    from robot_dynamics.models import model_path
    urdf = str(model_path(model))
    rate = rate or default_rate
    baseline = argparse.Namespace(duration=baseline_duration or min(duration, 60.0), warmup=warmup)
    relay = bench._measure_process([bench.BARE_RELAY], 'relayed_joint_states', urdf, root_joint, rate, baseline)
    node_name = bench._bench_node_name(module)
    process = bench._start_node([module, *_node_arguments(urdf, root_joint)], node_name)
    try:
        with bench.StreamFeeder(bench._output_topic(node_name, output), output, urdf, root_joint,
                                efforts=True) as feeder:
            feeder.wait_connected(process=process)
            feeder.feed(rate, warmup)
            # Sampled from the end of the warm-up: start-up (imports, first messages) is not growth.
            sampler = _MemorySampler(process.pid, measure=private_resident_kib)
            try:
                sent = feeder.feed(rate, duration)
                bench._wait_for_stragglers(feeder, len(sent))
            finally:
                sampler.stop()
            figures = bench._figures(sent, feeder.received)
        alive = process.poll() is None
    finally:
        bench._stop_node(process)
    return SoakReport(target, rate, duration, figures, relay, sampler.samples, os.getloadavg(), alive)


def _node_arguments(urdf: str, root_joint: str) -> list:
    return ['-p', f'urdf_file:={urdf}', '-p', f'root_joint:={root_joint}']


class _MemorySampler:
    """Samples ``measure(pid)`` [KiB] (default VmRSS) once per ``period`` seconds in a background thread."""

    def __init__(self, pid: int, period: float = 1.0, start_after: float = 0.0, measure=None):
        self.samples: list = []
        self._measure = measure or resident_kib
        self._pid, self._period, self._start_after = pid, period, start_after
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if self._stopped.wait(self._start_after):
            return
        while not self._stopped.is_set():
            value = self._measure(self._pid)
            if value:
                self.samples.append(value)
            self._stopped.wait(self._period)

    def stop(self) -> None:
        # One last sample, so the end value is taken after the whole run.
        value = self._measure(self._pid)
        self._stopped.set()
        self._thread.join(timeout=5.0)
        if value:
            self.samples.append(value)


def resident_kib(pid: int) -> int:
    """VmRSS of process ``pid`` [KiB] from /proc (0 when it is gone)."""
    return _status_kib(pid).get('VmRSS', 0)


def private_resident_kib(pid: int) -> int:
    """Resident memory of process ``pid`` [KiB] outside shared memory (VmRSS − RssShmem: the
    heap, stacks and mapped files). Shared-memory blocks (the recording ring buffer, DDS segments)
    have a size fixed when they are created and become resident as they are first written, so
    they would show as growth while a buffer fills; 0 when the process is gone."""
    values = _status_kib(pid)
    return values.get('VmRSS', 0) - values.get('RssShmem', 0)


def _status_kib(pid: int) -> dict:
    values = {}
    try:
        with open(f'/proc/{pid}/status', encoding='ascii') as status:
            for line in status:
                key, _, rest = line.partition(':')
                if rest.strip().endswith('kB'):
                    values[key] = int(rest.split()[0])
    except OSError:
        return {}
    return values


# ---------------------------------------------------------------------------- service storm
@dataclass
class StormReport:
    """The 1 kHz stream quiet and during a storm of service calls; every call's outcome."""

    quiet: bench.StreamFigures
    storm: bench.StreamFigures
    calls: list
    requested: int
    storm_seconds: float
    node_alive: bool = True

    @property
    def answered_calls(self) -> int:
        return sum(1 for call in self.calls if call['answered'])

    @property
    def p99_ratio(self) -> float:
        return _ratio(self.storm.p99_ms, self.quiet.p99_ms)

    def to_dict(self) -> dict:
        per_service = Counter((c['service'], c['answered'], c['success']) for c in self.calls)
        return {'requested_calls': self.requested, 'answered_calls': self.answered_calls,
                'calls_by_service_answered_success': {f'{s} answered={a} success={ok}': n
                                                      for (s, a, ok), n in sorted(per_service.items())},
                'max_call_s': max((c['seconds'] for c in self.calls), default=0.0),
                'storm_seconds': self.storm_seconds, 'quiet_latency_ms': bench._latencies(self.quiet),
                'storm_latency_ms': bench._latencies(self.storm),
                'storm_answered_fraction': self.storm.answered_fraction, 'p99_ratio': self.p99_ratio,
                'node_alive': self.node_alive}


STORM_SERVICES = ('identify_payload', 'validate_inertia')


def service_storm(urdf: str, calls: int = 100, clients: int = 4, rate: float = 1000.0, quiet: float = 10.0,
                  warmup: float = 2.0, buffer_duration: float = 5.0, timeout: float = 300.0,
                  service_cpu_share: Optional[float] = None) -> StormReport:
    """Feed a dynamics_node process at ``rate`` [Hz] (with efforts, so its payload buffer fills):
    ``quiet`` seconds measured alone, then measured while ``clients`` processes make ``calls``
    calls in all, alternating ~/identify_payload and ~/validate_inertia. ``service_cpu_share``:
    the node's parameter (None: its default)."""
    with tempfile.TemporaryDirectory(prefix='storm_reports_') as reports:
        arguments = ['-p', f'urdf_file:={urdf}', '-p', f'buffer_duration:={buffer_duration}',
                     '-p', f'report_directory:={reports}']
        if service_cpu_share is not None:
            arguments += ['-p', f'service_cpu_share:={float(service_cpu_share)}']
        with _NodeUnderTest('dynamics', arguments, 'inverse_dynamics_torques', urdf, efforts=True) as run:
            quiet_sent = run.feeder.feed(rate, quiet, warmup)
            per_client = [calls // clients + (k < calls % clients) for k in range(clients)]
            workers = [_start_service_client(run.node_name, count, offset=k) for k, count in enumerate(per_client)]
            # The clients' own start-up (interpreter, rclpy, discovery) is not part of the storm:
            # keep the stream fed while they connect, then release them all at once.
            ready = threading.Thread(target=lambda: [_wait_for_line(worker, 'ready') for worker in workers],
                                     daemon=True)
            ready.start()
            run.feeder.feed(rate, timeout, 0.0, until=lambda: not ready.is_alive())
            for worker in workers:
                _send_line(worker, 'go')
            # The storm lasts until the last call is answered; the clients' shutdown (rclpy, interpreter)
            # comes after it, once released, like their start-up before "go".
            done = threading.Thread(target=lambda: [_wait_for_line(worker, 'done') for worker in workers],
                                    daemon=True)
            done.start()
            started = time.monotonic()
            storm_sent = run.feeder.feed(rate, timeout, 0.0, until=lambda: not done.is_alive())
            storm_seconds = time.monotonic() - started
            for worker in workers:
                _send_line(worker, 'exit')
            time.sleep(1.0)
            results = [call for worker in workers for call in _client_results(worker)]
            alive = run.process.poll() is None
            received = list(run.feeder.received)
    return StormReport(bench._figures(quiet_sent, received), bench._figures(storm_sent, received), results, calls,
                       storm_seconds, alive)


def _start_service_client(node_name: str, count: int, offset: int) -> subprocess.Popen:
    command = [sys.executable, '-m', 'robot_dynamics.instruments.reliability', f'/{node_name}', str(count), str(offset)]
    return processes.start_node_process(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)


def _wait_for_line(worker: subprocess.Popen, expected: str) -> None:
    """Block until a client process prints ``expected`` (or has ended)."""
    for line in worker.stdout:
        if line.strip() == expected:
            return


def _send_line(worker: subprocess.Popen, line: str) -> None:
    try:
        worker.stdin.write(line + '\n')
        worker.stdin.flush()
    except OSError:  # the client has ended already
        pass


def _client_results(worker: subprocess.Popen, timeout: float = 120.0) -> list:
    """The client's JSON result lines, once it has ended (stopped after ``timeout`` seconds)."""
    try:
        output, _ = worker.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        processes.stop_node_process(worker)
        output, _ = worker.communicate()
    return [json.loads(line) for line in output.splitlines() if line.startswith('{')]


def call_services(node_path: str, count: int, offset: int = 0, timeout: float = 120.0,
                  storm_client: bool = False) -> list:
    """Make ``count`` std_srvs/Trigger calls on ``node_path``'s services in turn (starting at
    :data:`STORM_SERVICES` [offset]); returns one dict per call (service, answered, success,
    message, seconds). A ``storm_client`` talks to the bench on stdin/stdout: "ready" → "go"
    before the calls, "done" → "exit" after them."""
    import rclpy
    from std_srvs.srv import Trigger

    rclpy.init()
    node = rclpy.create_node(f'storm_client_{os.getpid()}')
    clients = {name: node.create_client(Trigger, f'{node_path}/{name}') for name in STORM_SERVICES}
    results = []
    try:
        for name, client in clients.items():
            if not client.wait_for_service(timeout_sec=30.0):
                raise ReliabilityRunError(f'service {node_path}/{name} never appeared')
        if storm_client:  # say "ready", then start on the bench's "go"
            print('ready', flush=True)
            sys.stdin.readline()
        for k in range(count):
            name = STORM_SERVICES[(k + offset) % len(STORM_SERVICES)]
            started = time.monotonic()
            future = clients[name].call_async(Trigger.Request())
            rclpy.spin_until_future_complete(node, future, timeout_sec=timeout)
            response = future.result() if future.done() else None
            results.append({'service': name, 'answered': response is not None,
                            'success': bool(response and response.success),
                            'message': response.message[:200] if response else '',
                            'seconds': time.monotonic() - started})
        if storm_client:  # say "done", then shut down only on the bench's "exit" (after its measurement)
            print('done', flush=True)
            sys.stdin.readline()
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return results


# ---------------------------------------------------------------------------- restart and hot swap
@dataclass
class RestartReport:
    """Node killed mid-stream and started again; per restart, times in s:
    ``first_answer_s``: from publishing the first message the new node answered to that answer
    (how soon it answers what it receives); ``caught_up_s``: from that answer until every later
    answer is under 20 ms late (the start-up backlog worked off); ``downtime_s``: from the kill to
    the first answer (process start and DDS discovery included). ``answered_after_first``:
    fraction answered of the messages sent after the first answered one (worst restart);
    ``tail_answered_fraction``: of those sent in the stream's last second.
    ``dds_files_removed``: shared-memory files the killed processes left, removed by this run."""

    first_answer_s: list
    caught_up_s: list
    downtime_s: list
    answered_after_first: float
    tail_answered_fraction: float = 0.0
    dds_files_removed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


def restart_recovery(urdf: str, restarts: int = 1, rate: float = 1000.0, settle: float = 4.0) -> RestartReport:
    """Kill (SIGKILL, a crash) and restart a dynamics_node process ``restarts`` times while it
    is fed at ``rate`` [Hz]; measure how soon each new process answers."""
    arguments = ['-p', f'urdf_file:={urdf}']
    first_answers, caught_up, downtimes, after = [], [], [], []
    removed = 0
    with _NodeUnderTest('dynamics', arguments, 'inverse_dynamics_torques', urdf) as run:
        stream = run.stream_in_background(rate)
        time.sleep(2.0)
        for _ in range(restarts):
            removed += len(processes.kill_node_process(run.process))  # a crash leaves its DDS files
            killed_ns = time.time_ns()
            run.process = bench._start_node([NODE_MODULES['dynamics'], *arguments], run.node_name)
            if not wait_for(lambda: any(stamp > killed_ns for stamp, _ in run.feeder.received[-50:]), 30.0,
                         period=0.001):
                raise ReliabilityRunError('the restarted node never answered')
            time.sleep(settle)
            answers = sorted((stamp, arrival) for stamp, arrival in list(run.feeder.received) if stamp > killed_ns)
            first_stamp, first_arrival = answers[0]
            first_answers.append((first_arrival - first_stamp) * 1e-9)
            downtimes.append((first_arrival - killed_ns) * 1e-9)
            late = [arrival for stamp, arrival in answers if arrival - stamp > 20_000_000]
            caught_up.append((max(late, default=first_arrival) - first_arrival) * 1e-9)
            horizon = time.time_ns() - 500_000_000
            window = [stamp for stamp in list(stream.sent) if first_stamp <= stamp <= horizon]
            answered = {stamp for stamp, _ in answers}
            after.append(sum(stamp in answered for stamp in window) / max(1, len(window)))
        stream.stop(run.feeder)
        tail = tail_answered_fraction(stream.sent, run.feeder.received)
    return RestartReport(first_answers, caught_up, downtimes, min(after, default=0.0), tail, removed)


@dataclass
class HotSwapReport:
    """Descriptions swapped mid-stream: how many swaps the outputs showed, how many outputs
    were not the g(q) of the model whose joint names they carry, whether the last outputs are
    of the last description sent, and the answered fractions of the stream (all of it, and its
    last second)."""

    swaps: int
    observed_model_changes: int
    outputs: int
    wrong_outputs: int
    node_alive: bool
    stream_answered_fraction: float
    last_model_in_force: bool = False
    tail_answered_fraction: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


def renamed_variant(text: str, prefix: str = 'swap_', mass_scale: float = 1.5) -> str:
    """The URDF ``text`` with every ``fr3_`` name prefixed differently and every mass scaled:
    a second model whose outputs are told apart by joint names and by g(q)."""
    scaled = re.sub(r'<mass value="([^"]+)"', lambda m: f'<mass value="{float(m.group(1)) * mass_scale!r}"', text)
    return scaled.replace('fr3_', prefix)


def hot_swap(urdf: str, swaps: int = 100, interval: float = 0.05, rate: float = 1000.0) -> HotSwapReport:
    """Alternate robot_description between the arm ``urdf`` and :func:`renamed_variant` of it
    ``swaps`` times while feeding joint states naming both models' joints; every output on
    ~/gravity_torques must equal g(q) of the model named by its joint names."""
    from std_msgs.msg import String

    from robot_dynamics.ros.common import DESCRIPTION_QOS

    texts = [open(urdf, encoding='utf-8').read()]
    texts.append(renamed_variant(texts[0]))
    names = [_joint_names(urdf), _joint_names_of_text(texts[1])]
    references = {names[0]: _gravity_reference(urdf), names[1]: _gravity_reference(urdf, texts[1])}
    with _NodeUnderTest('dynamics', ['-p', 'diagnostics_period:=0.05'], 'gravity_torques', urdf,
                        keep_messages=True, connect=False, names=list(names[0] + names[1])) as run:
        diagnostics = run.watch_diagnostics()
        description_pub = run.feeder.node.create_publisher(String, '/bench/robot_description', DESCRIPTION_QOS)
        description_pub.publish(String(data=texts[0]))
        run.feeder.wait_connected()
        if not wait_for(lambda: _model_value(diagnostics, 'models_loaded') >= 1, 10.0):
            raise ReliabilityRunError('the node never loaded the first description')
        stream = run.stream_in_background(rate)
        wait_for(lambda: bool(run.feeder.received), 10.0)
        for k in range(1, swaps + 1):
            time.sleep(interval)
            description_pub.publish(String(data=texts[k % 2]))
        time.sleep(max(interval, 0.5))
        stream.stop(run.feeder)
        alive = run.process.poll() is None
        messages = sorted(run.feeder.messages, key=lambda m: m[0])
        changes = sum(1 for a, b in zip(messages, messages[1:]) if a[1] != b[1])
        wrong = _wrong_gravity_outputs(run.feeder, references)
        answered = _answered_fraction(stream.sent, run.feeder.received)
        last_in_force = bool(messages) and messages[-1][1] == names[swaps % 2]
        tail = tail_answered_fraction(stream.sent, run.feeder.received)
    return HotSwapReport(swaps, changes, len(messages), wrong, alive, answered, last_in_force, tail)


# ---------------------------------------------------------------------------- shared plumbing
class _NodeUnderTest:
    """A node process (``target`` in :data:`NODE_MODULES`) and a :class:`bench.StreamFeeder`
    listening on its ``output`` topic; both torn down on exit."""

    def __init__(self, target: str, arguments: list, output: str, urdf: str, keep_messages: bool = False,
                 connect: bool = True, efforts: bool = False, names=None, deep_history: bool = False):
        module = NODE_MODULES[target]
        self.node_name = f'{bench._bench_node_name(module)}_{int(time.monotonic() * 1000) % 100000}'
        self.process = bench._start_node([module, *arguments], self.node_name)
        self._streams: list = []
        try:
            self.feeder = bench.StreamFeeder(bench._output_topic(self.node_name, output), output, urdf, 'fixed',
                                             names=names, efforts=efforts, keep_messages=keep_messages,
                                             deep_history=deep_history)
            if connect:
                self.feeder.wait_connected()
        except Exception:
            bench._stop_node(self.process)
            raise

    def watch_diagnostics(self) -> dict:
        """Latest /diagnostics status of this node, by status-name suffix ('model', 'joint_states')."""
        from diagnostic_msgs.msg import DiagnosticArray
        latest: dict = {}
        prefix = f'{self.node_name}: '

        def on_array(array) -> None:
            for status in array.status:
                if status.name.startswith(prefix):
                    latest[status.name[len(prefix):]] = {kv.key: kv.value for kv in status.values}
        self.feeder.node.create_subscription(DiagnosticArray, '/diagnostics', on_array, 50)
        return latest

    def stream_in_background(self, rate: float) -> '_BackgroundStream':
        self._streams.append(_BackgroundStream(self.feeder, rate))
        return self._streams[-1]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for stream in self._streams:
            stream.stop()
        self.feeder.close()
        bench._stop_node(self.process)


class _BackgroundStream:
    """Feeds at ``rate`` [Hz] in a thread until :meth:`stop`; ``sent`` lists the stamps [ns]."""

    def __init__(self, feeder: 'bench.StreamFeeder', rate: float):
        self._stopped = threading.Event()
        self.sent: list = []
        self._thread = threading.Thread(target=feeder.feed, args=(rate, 3600.0, 0.0),
                                        kwargs={'until': self._stopped.is_set, 'sent': self.sent}, daemon=True)
        self._thread.start()

    def stop(self, feeder: Optional['bench.StreamFeeder'] = None, quiet: float = 1.0, limit: float = 30.0) -> None:
        """Stop feeding; with ``feeder``, wait until its answers stop coming (``quiet`` seconds
        without one, at most ``limit``): a node behind on a busy machine works off its queue."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._thread.join(timeout=10.0)
        time.sleep(0.3)  # answers still in flight
        if feeder is not None:
            bench._wait_for_stragglers(feeder, math.inf, quiet, limit)


def _wrong_gravity_outputs(feeder: 'bench.StreamFeeder', references: dict) -> int:
    """Outputs whose efforts are not g(q) [N·m] of the model their joint names belong to."""
    import numpy as np
    wrong = 0
    offsets = {}
    for names in references:
        offsets[names] = feeder.names.index(names[0]) if names[0] in feeder.names else None
    for stamp, names, efforts in feeder.messages:
        reference = references.get(names)
        phase = feeder.phase_of.get(stamp)
        if reference is None or phase is None or offsets[names] is None:
            wrong += 1
            continue
        start = offsets[names]
        q = feeder.positions(phase)[start:start + len(names)]
        wrong += not np.allclose(efforts, reference(q), rtol=1e-9, atol=1e-9)
    return wrong


def tail_answered_fraction(sent: list, received: list, seconds: float = 1.0) -> float:
    """Answered fraction of the stamps [ns] in ``sent`` within ``seconds`` of the last one."""
    if not sent:
        return 0.0
    last = max(sent)
    return _answered_fraction([stamp for stamp in sent if stamp >= last - seconds * 1e9], received)


def _answered_fraction(sent: list, received: list) -> float:
    answered = {stamp for stamp, _ in received}
    return sum(stamp in answered for stamp in sent) / len(sent) if sent else 0.0


def _gravity_reference(urdf: str, text: Optional[str] = None):
    """q ↦ g(q) [N·m] of the fixed-base model in ``text`` (default: the file ``urdf``)."""
    from robot_dynamics.core.dynamics import joint_space as dynamics
    from robot_dynamics.core.model.model import RobotModel
    robot = RobotModel.from_urdf_string(text) if text else RobotModel.from_urdf_file(urdf)
    return lambda q: dynamics.gravity_torques(robot, robot.configuration(q))


def _joint_names(urdf: str) -> tuple:
    from robot_dynamics.core.model.model import RobotModel
    return RobotModel.from_urdf_file(urdf).joint_names


def _joint_names_of_text(text: str) -> tuple:
    from robot_dynamics.core.model.model import RobotModel
    return RobotModel.from_urdf_string(text).joint_names


def _input_values(diagnostics: dict) -> dict:
    return diagnostics.get('joint_states', {})


def _input_value(diagnostics: dict, key: str) -> int:
    return int(float(_input_values(diagnostics).get(key, 0)))


def _model_value(diagnostics: dict, key: str) -> int:
    return int(float(diagnostics.get('model', {}).get(key, 0)))


def _header(sec: int, nanosec: int):
    from std_msgs.msg import Header
    header = Header()
    header.stamp.sec, header.stamp.nanosec = sec, nanosec
    return header


def _sleep_until(target: float) -> None:
    remaining = target - time.perf_counter()
    if remaining > 0:
        time.sleep(remaining)


def wait_for(condition, timeout: float = 5.0, period: float = 0.01) -> bool:
    """Poll ``condition`` until true or ``timeout`` seconds pass; returns the last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(period)
    return bool(condition())


def _ratio(value: float, reference: float) -> float:
    return value / reference if reference else float('inf')


# ---------------------------------------------------------------------------- command line
def run(args: argparse.Namespace) -> int:
    """Run ``args.target`` (one of :data:`bench.RELIABILITY_TARGETS`); print, and return 0 when it passes."""
    from robot_dynamics.models import ARM_URDF
    urdf = str(ARM_URDF)
    target = args.target
    if target == 'soak':
        reports = [soak(node, args.duration or 20.0, args.rate, args.warmup) for node in args.nodes]
        result = {'soak': [report.to_dict() for report in reports], 'rss_bound_kib': args.rss_bound_mib * 1024}
        passed = all(r.node_alive and r.node.answered_fraction >= 0.999
                     and r.rss_growth_kib <= args.rss_bound_mib * 1024 for r in reports)
    elif target == 'fuzz':
        count = args.count or 100_000
        core, node = fuzz_core(urdf, count), fuzz_node(urdf, max(1000, count // 20))
        result = {'core': asdict(core), 'node': asdict(node)}
        passed = core.passed and node.passed
    elif target == 'descriptions':
        corpus = hostile_descriptions(ARM_URDF.read_text())
        core, node = screen_descriptions(corpus), descriptions_node(urdf, corpus, rate=args.rate or 1000.0)
        scenario = description_scenario(urdf, rate=args.rate or 1000.0)
        result = {'intake': core.summary(), 'node': node.summary(), 'every_half_second': scenario.to_dict(),
                  'targets': {'answered_fraction': STREAM_ANSWERED_TARGET, 'longest_gap_ms': STREAM_GAP_TARGET_MS,
                              'mixed_outputs': 0}}
        passed = (not node.unexpected() and node.node_alive and node.model_kept and not node.wrong_outputs
                  and not core.unexpected() and node.stream.meets_targets
                  and scenario.node_alive and scenario.stream.meets_targets)
    elif target == 'storm':
        report = service_storm(urdf, args.count or 100, rate=args.rate or 1000.0,
                               service_cpu_share=args.service_cpu_share)
        result = report.to_dict()
        passed = (report.answered_calls == report.requested and report.storm.answered_fraction >= 0.999
                  and report.p99_ratio <= 2.0 and report.node_alive)
    elif target == 'restart':
        report = restart_recovery(urdf, args.count or 3, rate=args.rate or 1000.0)
        result = report.to_dict()
        passed = max(report.first_answer_s) <= 1.0 and report.answered_after_first >= 0.999
    else:
        report = hot_swap(urdf, args.count or 100, rate=args.rate or 1000.0)
        result = report.to_dict()
        passed = (report.wrong_outputs == 0 and report.node_alive and report.last_model_in_force
                  and report.observed_model_changes >= 0.9 * report.swaps)
    result.update(target=target, passed=passed, load_average_1_5_15=list(os.getloadavg()))
    print(json.dumps(result, indent=2, default=_jsonable) if args.format == 'json' else _text(result))
    return 0 if passed else 1


def _jsonable(value):
    return asdict(value) if hasattr(value, '__dataclass_fields__') else str(value)


def _text(result: dict, indent: str = '') -> str:
    lines = []
    for key, value in result.items():
        if isinstance(value, dict):
            lines += [f'{indent}{key}:', _text(value, indent + '  ')]
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for item in value:
                lines += [f'{indent}{key}:', _text(item, indent + '  ')]
        else:
            lines.append(f'{indent}{key}: {value:.4g}' if isinstance(value, float) else f'{indent}{key}: {value}')
    return '\n'.join(lines)


if __name__ == '__main__':  # one storm client process: NODE_PATH COUNT OFFSET → JSON lines
    for result in call_services(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), storm_client=True):
        print(json.dumps(result), flush=True)
