"""Per-message compute of a node's core call against the raw pinocchio calls it needs [µs].

Measured in the bench process, beside the stream figures of :mod:`robot_dynamics.instruments.bench`:
dynamics (LiveTorqueEstimator and its contact observer) and centroidal (CentroidalMonitor).
"""

from __future__ import annotations

import time


def compute_figures(
    target: str, urdf: str, root_joint: str, repeats: int = 15, count: int = 2000
) -> dict:
    """Per-message compute of the node's core call vs the raw pinocchio calls it needs [µs].

    dynamics: LiveTorqueEstimator.update (name merge, checks, q̈ estimate, g and RNEA) vs
    computeGeneralizedGravity + rnea. centroidal: CentroidalMonitor.update (CoM, h_G, ḣ_G
    estimate, ZMP, capture point, contacts) vs centerOfMass + ccrba, measured by
    :func:`_centroidal_compute_figures`. dynamics also gives ``observer``: the same figures for its
    contact observer (:func:`_observer_calls`).
    Batches of ``count`` calls alternate between the two, ``repeats`` times: the ratio is the
    median of the per-pair ratios, so a burst of load from a neighbour hits both sides of a pair.
    """
    import numpy as np

    from robot_dynamics.core.model.model import RobotModel

    robot = RobotModel.from_urdf_file(urdf, root_joint=root_joint)
    if target == 'centroidal':
        return _centroidal_compute_figures(robot)
    raw, ours = _dynamics_calls(robot, np.random.default_rng(1))
    figures = _paired_batches(raw, ours, repeats, count)
    if target == 'dynamics':  # the node's other per-message core call: the contact observer
        figures['observer'] = _paired_batches(
            *_observer_calls(robot, np.random.default_rng(2)), repeats, count
        )
    return figures


def _paired_batches(raw, ours, repeats: int, count: int) -> dict:
    """Median batch times [µs] of ``raw(k)`` and ``ours(k)`` and the median of their pair ratios."""
    import statistics

    raw_us, ours_us = [], []
    for repeat in range(repeats):
        raw_us.append(_batch_time_us(raw, repeat * count, count))
        ours_us.append(_batch_time_us(ours, repeat * count, count))
    return {
        'raw_pinocchio': statistics.median(raw_us),
        'node_core': statistics.median(ours_us),
        'ratio': statistics.median(o / r for o, r in zip(ours_us, raw_us)),
    }


def _observer_calls(robot, rng) -> tuple:
    """MomentumObserver.update (dynamics_node's default external torques) vs the pinocchio
    calls it needs: crba + computeCoriolisMatrix + computeGeneralizedGravity."""
    import pinocchio as pin

    from robot_dynamics.core.contact.momentum_observer import MomentumObserver

    n = robot.num_joints
    samples = [tuple(rng.uniform(-scale, scale, n) for scale in (1, 1, 5)) for _ in range(64)]
    states = [(robot.configuration(p), robot.tangent(v)) for p, v, _ in samples]
    model, data = robot.model, robot.model.createData()
    observer = MomentumObserver(robot)

    def raw(k):
        q, v = states[k % 64]
        pin.crba(model, data, q)
        pin.computeCoriolisMatrix(model, data, q, v)
        pin.computeGeneralizedGravity(model, data, q)

    def ours(k):
        observer.update(1.0 + k * 1e-3, *samples[k % 64])

    return raw, ours


def _dynamics_calls(robot, rng) -> tuple:
    import array

    import numpy as np
    import pinocchio as pin

    from robot_dynamics.core.streams.live_torques import LiveTorqueEstimator

    n, names = robot.num_joints, list(robot.joint_names)
    # As rclpy hands them over: names a list of str, float64[] fields array.array('d').
    samples = [
        tuple(array.array('d', rng.uniform(-scale, scale, n)) for scale in (1, 1, 5))
        for _ in range(64)
    ]
    model, data, zeros = robot.model, robot.model.createData(), np.zeros(robot.model.nv)
    estimator = LiveTorqueEstimator(robot)
    raw_samples = samples
    if (
        model.nq != n or model.nv != n
    ):  # floating base, continuous joints: pinocchio's q, v built once, untimed
        raw_samples = [
            (
                array.array('d', robot.configuration(np.asarray(p))),
                array.array('d', robot.tangent(np.asarray(v))),
                e,
            )
            for p, v, e in samples
        ]

    def raw(k):
        position, velocity, _ = raw_samples[k % 64]
        q = np.asarray(position)
        pin.computeGeneralizedGravity(model, data, q)
        pin.rnea(model, data, q, np.asarray(velocity), zeros)

    def ours(k):
        position, velocity, effort = samples[k % 64]
        estimator.update(names, position, velocity, effort, 1.0 + k * 1e-3)

    return raw, ours


CONTACT_FRAME_SUFFIXES = ('_foot', '_sole_link')
"""Links taken as the contact frames of a measured model: the quadruped's ``lf_foot``..., the
soles of example-robot-data's humanoids (Talos ``left_sole_link``...)."""


CORE_RATIO_TARGET = 10.0
"""centroidal core per message ≤ this × its raw pinocchio calls."""


def bench_contact_frames(urdf: str, root_joint: str) -> tuple:
    """The links of ``urdf`` named like feet (:data:`CONTACT_FRAME_SUFFIXES`), given to
    centroidal_node as ``contact_frames`` and to the core measured beside it."""
    from robot_dynamics.core.model.model import RobotModel

    return _contact_links(RobotModel.from_urdf_file(urdf, root_joint=root_joint))


def _contact_links(robot) -> tuple:
    return tuple(name for name in robot.description.links if name.endswith(CONTACT_FRAME_SUFFIXES))


def _centroidal_compute_figures(robot, pairs: int = 41, count: int = 200) -> dict:
    """CentroidalMonitor.update vs centerOfMass + ccrba, as a ratio measured in one run.

    ``pairs`` pairs of blocks of ``count`` calls, the two sides of a pair run back to back in
    alternating order (raw first, then core first), each block timed in CPU time of this
    thread (``time.thread_time``: time the scheduler gives to another process is not counted):
    the ratio is the median of the pair ratios, the times [µs per call] the medians of the
    blocks. ``with_support_us``: the core call when the support polygon and the margins are
    read too (centroidal_node computes them only for their topics, markers and diagnostics)."""
    import statistics

    import numpy as np

    raw, ours, ours_with_support = _centroidal_calls(robot, np.random.default_rng(1))
    raw_us, ours_us, support_us = [], [], []
    for pair in range(pairs):
        start = pair * count
        if pair % 2:
            ours_us.append(_batch_cpu_us(ours, start, count))
            raw_us.append(_batch_cpu_us(raw, start, count))
        else:
            raw_us.append(_batch_cpu_us(raw, start, count))
            ours_us.append(_batch_cpu_us(ours, start, count))
    for block in range(max(3, pairs // 4)):
        support_us.append(_batch_cpu_us(ours_with_support, (pairs + block) * count, count))
    return {
        'raw_pinocchio': statistics.median(raw_us),
        'node_core': statistics.median(ours_us),
        'ratio': statistics.median(o / r for o, r in zip(ours_us, raw_us)),
        'with_support_us': statistics.median(support_us),
        'contact_frames': list(_contact_links(robot)),
        'note': f'median of {pairs} interleaved block pairs, thread CPU time',
    }


def _centroidal_calls(robot, rng) -> tuple:
    import numpy as np
    import pinocchio as pin

    from robot_dynamics.core.floating_base.centroidal import BalanceSettings, CentroidalMonitor

    monitor = CentroidalMonitor(robot, BalanceSettings(contact_frames=_contact_links(robot)))
    states = []
    for _ in range(64):
        joints = np.clip(
            rng.uniform(-0.5, 0.5, robot.num_joints), robot.limits.lower, robot.limits.upper
        )
        q = robot.configuration(joints, [0, 0, 0.45, 0, 0, 0, 1] if robot.floating_base else None)
        states.append((q, rng.uniform(-0.5, 0.5, robot.model.nv)))
    model, data = robot.model, robot.model.createData()

    def raw(k):
        q, v = states[k % 64]
        pin.centerOfMass(model, data, q)
        pin.ccrba(model, data, q, v)

    def ours(k):
        q, v = states[k % 64]
        monitor.update(1.0 + k * 1e-3, q, v)

    def ours_with_support(k):
        q, v = states[k % 64]
        monitor.update(1.0 + k * 1e-3, q, v).support

    return raw, ours, ours_with_support


def _batch_cpu_us(function, start: int, count: int) -> float:
    """Mean CPU time of this thread per call of ``function(k)``, k in [start, start + count)
    [µs]."""
    started = time.thread_time()
    for k in range(start, start + count):
        function(k)
    return (time.thread_time() - started) / count * 1e6


def _batch_time_us(function, start: int, count: int) -> float:
    """Mean time of ``function(k)`` for k in [start, start + count) [µs]."""
    started = time.perf_counter()
    for k in range(start, start + count):
        function(k)
    return (time.perf_counter() - started) / count * 1e6
