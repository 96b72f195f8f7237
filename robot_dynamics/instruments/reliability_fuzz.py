"""Reliability run: fuzzed joint_states (`robot_dynamics bench fuzz`).

:func:`fuzzed_joint_states` labels each generated message with what the node must do with it
(:data:`VALID`, or the rejection reason it must be counted under); :func:`fuzz_core` checks the
core stream intake against the labels, :func:`fuzz_node` a node process over ROS (its answers
and its /diagnostics counters). Values in rad, rad/s, N·m; stamps as ROS (sec, nanosec).
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from dataclasses import dataclass
from typing import Iterator, Sequence

from robot_dynamics.instruments.reliability_common import (
    NodeUnderTest,
    ReliabilityRunError,
    input_value,
    input_values,
    joint_names_of,
    sleep_until,
    stamped_header,
    wait_for,
)
from robot_dynamics.instruments.stream_feeder import StreamFeeder, wait_for_stragglers

VALID = 'valid'
"""Label of a joint state the node must answer (any other label is a rejection reason)."""


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
        self._faults = (
            self._bad_stamp,
            self._out_of_order,
            self._empty,
            self._length_mismatch,
            self._duplicate_names,
            self._no_known_joints,
            self._non_finite,
            self._out_of_range,
        )

    def valid(self) -> FuzzedJointState:
        rng, count = self.rng, len(self.names)
        self.clock_ns += 1_000_000
        order = list(range(count))
        rng.shuffle(order)
        names = [self.names[i] for i in order]
        positions = [rng.uniform(-1.0, 1.0) for _ in order]
        velocities = [rng.uniform(-2.0, 2.0) for _ in order] if rng.random() < 0.8 else []
        efforts = [rng.uniform(-20.0, 20.0) for _ in order] if rng.random() < 0.5 else []
        for field in (velocities, efforts):  # a joint without that sensor (ros2_control: NaN)
            if field and rng.random() < 0.2:
                field[rng.randrange(len(field))] = math.nan
        if rng.random() < 0.3:  # joints the model lacks are ignored, whatever their values
            extra = [f'{rng.choice(_UNICODE_NAMES)}#{k}' for k in range(rng.randint(1, 3))]
            names += extra
            positions += [rng.choice((math.nan, math.inf, 1e300, 0.0)) for _ in extra]
            velocities += [0.0] * len(extra) if velocities else []
            efforts += [math.nan] * len(extra) if efforts else []
        return self._message(names, positions, velocities, efforts, self.clock_ns, VALID)

    def invalid(self) -> FuzzedJointState:
        return self.rng.choice(self._faults)()

    def _message(
        self, names, positions, velocities, efforts, stamp_ns: int, expected: str
    ) -> FuzzedJointState:
        sec, nanosec = divmod(stamp_ns, 1_000_000_000)
        return FuzzedJointState(
            tuple(names),
            tuple(positions),
            tuple(velocities),
            tuple(efforts),
            sec,
            nanosec,
            expected,
        )

    def _arrays(self) -> tuple:
        count, rng = len(self.names), self.rng
        return (
            [rng.uniform(-1.0, 1.0) for _ in range(count)],
            [rng.uniform(-2.0, 2.0) for _ in range(count)],
            [rng.uniform(-20.0, 20.0) for _ in range(count)],
        )

    def _newer(self) -> int:
        return self.clock_ns + self.rng.randint(1, 999_999)

    def _bad_stamp(self) -> FuzzedJointState:
        positions, velocities, efforts = self._arrays()
        stamp_ns = -self.rng.randint(1, 2**31 - 1) * 1_000_000_000 + self.rng.randint(
            0, 999_999_999
        )
        return self._message(self.names, positions, velocities, efforts, stamp_ns, 'bad_stamp')

    def _out_of_order(self) -> FuzzedJointState:
        """A stamp of zero or a late one: up to 99 ms before the last valid (within the nodes'
        default stale_timeout, so no run of them reads as time going back)."""
        positions, velocities, efforts = self._arrays()
        stamp_ns = (
            0 if self.rng.random() < 0.3 else self.clock_ns - self.rng.randint(1_000, 99_000_000)
        )
        return self._message(
            self.names, positions, velocities, efforts, max(stamp_ns, 0), 'out_of_order'
        )

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
        return self._message(
            names, positions, velocities, efforts, self._newer(), 'duplicate_names'
        )

    def _no_known_joints(self) -> FuzzedJointState:
        rng = self.rng
        count = rng.randint(1, 12)
        names = [
            f'{rng.choice(_UNICODE_NAMES)}{"x" * rng.choice((0, 1, 300))}#{k}' for k in range(count)
        ]
        values = [rng.uniform(-1.0, 1.0) for _ in range(count)]
        return self._message(names, values, values, [], self._newer(), 'no_known_joints')

    def _non_finite(self) -> FuzzedJointState:
        arrays = list(self._arrays())
        which, index = self.rng.randrange(3), self.rng.randrange(len(self.names))
        # a NaN velocity or effort is 'not reported' (valid): only a position may not be NaN
        arrays[which][index] = self.rng.choice((math.inf, -math.inf) + ((math.nan,) * (which == 0)))
        return self._message(self.names, *arrays, self._newer(), 'non_finite')

    def _out_of_range(self) -> FuzzedJointState:
        arrays = list(self._arrays())
        which, index = self.rng.randrange(3), self.rng.randrange(len(self.names))
        arrays[which][index] = self.rng.choice((-1.0, 1.0)) * 10.0 ** self.rng.uniform(6.01, 308.0)
        return self._message(self.names, *arrays, self._newer(), 'out_of_range')


def fuzzed_joint_states(
    joint_names: Sequence[str],
    count: int,
    seed: int = 0,
    valid_fraction: float = 0.5,
    start: float = 1000.0,
) -> Iterator[FuzzedJointState]:
    """``count`` joint states for a model with ``joint_names``: valid ones (all joints, shuffled,
    optional velocity/effort, a velocity or effort sometimes NaN (not reported), sometimes extra
    unknown names with garbage values) interleaved with ones carrying exactly one fault each (a
    NaN position, ±Inf, huge values, wrong and mismatched array lengths, empty arrays,
    unknown/duplicate/unicode names, zero, negative and non-monotonic stamps). Valid stamps
    advance 1 ms from ``start`` [s]; the first message is valid."""
    fuzzer = _JointStateFuzzer(joint_names, seed, int(start * 1e9))
    for index in range(count):
        yield (
            fuzzer.valid()
            if index == 0 or fuzzer.rng.random() < valid_fraction
            else fuzzer.invalid()
        )


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
        return (
            self.node_alive
            and self.answered_valid == self.valid
            and self.answered_invalid == 0
            and self.expected_rejections == self.counted_rejections
            and self.misclassified == 0
        )

    def __repr__(self) -> str:
        return (
            f'FuzzReport({self.messages} messages, {self.answered_valid}/{self.valid} valid '
            f'answered, rejections expected {self.expected_rejections} counted '
            f'{self.counted_rejections}, {self.seconds:.1f} s)'
        )


def fuzz_core(urdf: str, count: int = 100_000, seed: int = 0) -> FuzzReport:
    """Feed ``count`` fuzzed joint states straight into the node's core call
    (:meth:`~robot_dynamics.core.live.live_dynamics.LiveDynamics.update`) and tally the
    outcomes."""
    from robot_dynamics.core.errors import JointStateError
    from robot_dynamics.core.live.live_dynamics import LiveDynamics
    from robot_dynamics.core.model.model import RobotModel
    from robot_dynamics.core.streams.joint_states import JointSample

    robot = RobotModel.from_urdf_file(urdf)
    live = LiveDynamics(robot)
    expected, counted = Counter(), Counter()
    valid = answered_valid = answered_invalid = misclassified = 0
    started = time.perf_counter()
    for message in fuzzed_joint_states(robot.joint_names, count, seed):
        if message.expected == VALID:
            valid += 1
        else:
            expected[message.expected] += 1
        try:
            result = live.update(
                JointSample(
                    message.names,
                    message.positions,
                    message.velocities,
                    message.efforts,
                    message.stamp,
                )
            )
        except JointStateError as error:
            counted[error.reason] += 1
            misclassified += error.reason != message.expected
            continue
        if result is not None and result.joint_names == robot.joint_names:
            answered_valid += message.expected == VALID
            answered_invalid += message.expected != VALID
    return FuzzReport(
        count,
        valid,
        answered_valid,
        answered_invalid,
        dict(sorted(expected.items())),
        dict(sorted(counted.items())),
        time.perf_counter() - started,
        misclassified=misclassified,
    )


def fuzz_node(urdf: str, count: int = 5000, seed: int = 1, rate: float = 1000.0) -> FuzzReport:
    """Publish ``count`` fuzzed joint states at ``rate`` [Hz] to a dynamics_node process; valid
    ones must come back on ~/inverse_dynamics_torques (matched by stamp), invalid ones must
    show in the node's /diagnostics ``rejected_<reason>`` counts. Valid primer messages
    (stamped before the fuzz) go first until the node answers, so discovery loses nothing."""
    from sensor_msgs.msg import JointState

    names = joint_names_of(urdf)
    messages = list(fuzzed_joint_states(names, count, seed))
    expected = Counter(m.expected for m in messages if m.expected != VALID)
    valid_stamps = {m.stamp_ns for m in messages if m.expected == VALID}
    # As deep as the node's input queue: on a busy machine the node falls behind and catches up
    # instead of the publisher's history dropping inputs uncounted.
    with NodeUnderTest(
        'dynamics',
        ['-p', f'urdf_file:={urdf}', '-p', 'diagnostics_period:=0.2'],
        'inverse_dynamics_torques',
        urdf,
        deep_history=True,
    ) as run:
        diagnostics = run.watch_diagnostics()

        def publish(m: FuzzedJointState) -> None:
            run.feeder.joint_pub.publish(
                JointState(
                    header=stamped_header(m.sec, m.nanosec),
                    name=list(m.names),
                    position=list(m.positions),
                    velocity=list(m.velocities),
                    effort=list(m.efforts),
                )
            )

        def handled() -> int:
            return input_value(diagnostics, 'processed') + input_value(
                diagnostics, 'rejected_total'
            )

        primers = _prime(run.feeder, publish, names, messages[0].stamp_ns)
        started = time.perf_counter()
        period = 1.0 / rate
        for index, fuzzed in enumerate(messages):
            sleep_until(started + index * period)
            publish(fuzzed)
        wait_for(lambda: handled() >= count + len(primers), 120.0)
        wait_for_stragglers(
            run.feeder, math.inf, quiet=1.0, limit=30.0
        )  # answers still on their way
        seconds = time.perf_counter() - started
        answered = {stamp for stamp, _ in run.feeder.received}
        counted = {
            key[len('rejected_') :]: int(value)
            for key, value in input_values(diagnostics).items()
            if key.startswith('rejected_') and key != 'rejected_total'
        }
        alive = run.process.poll() is None
    return FuzzReport(
        count,
        len(valid_stamps),
        len(answered & valid_stamps),
        len(answered - valid_stamps - primers),
        dict(sorted(expected.items())),
        dict(sorted(counted.items())),
        seconds,
        alive,
    )


def _prime(
    feeder: 'StreamFeeder', publish, names: Sequence[str], before_ns: int, timeout: float = 10.0
) -> set:
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
