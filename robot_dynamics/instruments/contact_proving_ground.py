"""`bench contact` on the proving ground: contact detection and external wrench of dynamics_node's
pipeline on the MuJoCo arm, with the `ideal` and the `realistic` robot profile in the same run.

For each profile the bundled arm (no payload) tracks the scripted excitation on the MuJoCo
engine under its controller (nominal URDF, measured state), published at ``--rate`` (default
250 Hz, config/sim_robot.yaml). The estimation side is
:class:`~robot_dynamics.core.live.live_dynamics.LiveDynamics` with the node's defaults (momentum
observer, ``observer_momentum: auto``, thresholds |mean| + 5σ calibrated on ``--calibration`` s of
contact-free motion), fed the published samples, as dynamics_node is:

1. ``--free-seconds`` of contact-free excitation: false detections (a contact that starts);
2. ``--steps`` pushes of 10–20 N (``--force-range``) at tool0 in random directions (0.3–1 s each,
   1–2 s apart): detection delay (first sample flagged − first pushed sample), missed pushes,
   pushes met by a contact that never ended after the previous one (not timed, must be 0),
   false detections between pushes, and the wrench error RMS once settled (from 5/K_O after the
   onset to the end of the push; force and moment in tool0 axes at its origin);
3. real collisions: for each of ``--collisions`` places spread along the tool's planned path
   over the excitation period, a scene with a 6 cm box centred there (a place whose box would
   overlap the start pose is skipped), run from the start until 1 s after the robot first
   touches the box; the pipeline restarts with the thresholds of step 1 (calibrated with the
   workspace clear). The controller saturates at the URDF effort limits, as drives do; no
   reaction stops the robot. A strike whose MuJoCo contact force reaches the force range's lower
   bound within that second must be detected; delay = first flagged sample − first touching
   sample; a contact flagged before the touch is false.

A third column, ``realistic, identified``, runs the realistic robot again with the model a user
makes before trusting the wrench: 60 s of another excitation (trajectory seed 7) recorded at the
same rate and identified by `robot_dynamics identify` (link parameters with the URDF as prior,
viscous, Coulomb, offset, rotor inertia); the pipeline loads the identified URDF and its
friction file. It is shown beside the verdict, which is the shipped profiles'.

Everything runs in-process on simulated time, so the figures do not depend on this machine's load.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

PROFILES = ('ideal', 'realistic')
IDENTIFIED = 'realistic, identified'
"""The third column: the realistic robot estimated with the model `robot_dynamics identify` gives
from a recording of another excitation."""
IDENTIFICATION_SECONDS = 60.0
IDENTIFICATION_TRAJECTORY_SEED = 7  # the benched excitation is seed 1
TARGETS = {
    'delay_median_ms': 20.0,
    'delay_p99_ms': 50.0,
    'false': 0,
    'missed': 0,
    'force_rms_n': 1.5,
}
"""The proving ground's targets on real collisions and pushes of at least 10 N."""
PUSH_LINK = 'tool0'
BANDWIDTH = 10.0  # [Hz] the arm's tracking bandwidth: sim_robot's default
SETTLE_TIME_CONSTANTS = 5.0
OBSTACLE_EDGE = 0.06  # [m]
STRIKE_WINDOW = 1.0  # [s] after the first touch: the strike's peak force and its detection


@dataclass(frozen=True)
class Estimation:
    """What the pipeline estimates with: a URDF and a friction YAML ('' none)."""

    urdf: str
    friction_file: str = ''

    def live(self, **settings):
        """A LiveDynamics of this model with the node's defaults but ``settings``."""
        from robot_dynamics.core.live.live_dynamics import LiveDynamics
        from robot_dynamics.core.live.settings import LiveSettings
        from robot_dynamics.core.model.model import RobotModel

        live = LiveDynamics(
            RobotModel.from_urdf_file(self.urdf),
            LiveSettings(friction_file=self.friction_file, **settings),
        )
        if live.problems:  # a bench on a half-loaded model would measure the wrong thing
            raise RuntimeError(f'the estimation model of the bench has problems: {live.problems}')
        return live


@dataclass
class ProfileFigures:
    """What one profile's run measured (module docstring)."""

    profile: str
    thresholds_nm: list = field(default_factory=list)
    kept_momentum: str = ''
    free_seconds: float = 0.0
    false_free: int = 0
    push_delays_ms: list = field(default_factory=list)
    pushes_missed: int = 0
    not_released: int = 0
    false_between_pushes: int = 0
    force_errors: list = field(default_factory=list)
    moment_errors: list = field(default_factory=list)
    collision_peaks_n: list = field(default_factory=list)
    collision_delays_ms: list = field(default_factory=list)
    collisions_missed: int = 0
    false_in_collision_runs: int = 0
    free_residual_rms_nm: list = field(default_factory=list)

    def summary(self) -> dict:
        delays = np.asarray(self.push_delays_ms + self.collision_delays_ms)
        force, moment = np.asarray(self.force_errors), np.asarray(self.moment_errors)

        def percentile(values, q):
            values = np.asarray(values)
            return float(np.percentile(values, q)) if values.size else None

        return {
            'profile': self.profile,
            'kept_momentum': self.kept_momentum,
            'thresholds_nm': [round(x, 4) for x in self.thresholds_nm],
            'free_residual_rms_nm': [round(x, 4) for x in self.free_residual_rms_nm],
            'free_seconds': self.free_seconds,
            'false_free': self.false_free,
            'false_between_pushes': self.false_between_pushes,
            'false_in_collision_runs': self.false_in_collision_runs,
            'false': self.false_free + self.false_between_pushes + self.false_in_collision_runs,
            'pushes': len(self.push_delays_ms) + self.pushes_missed + self.not_released,
            'pushes_missed': self.pushes_missed,
            'not_released': self.not_released,
            'push_delay_median_ms': percentile(self.push_delays_ms, 50),
            'push_delay_p99_ms': percentile(self.push_delays_ms, 99),
            'collisions': len(self.collision_peaks_n),
            'collision_peak_median_n': percentile(self.collision_peaks_n, 50),
            'collisions_missed': self.collisions_missed,
            'collision_delay_median_ms': percentile(self.collision_delays_ms, 50),
            'collision_delay_p99_ms': percentile(self.collision_delays_ms, 99),
            'missed': self.pushes_missed + self.collisions_missed,
            'delay_median_ms': percentile(delays, 50),
            'delay_p99_ms': percentile(delays, 99),
            'force_rms_n': float(np.sqrt(np.mean(np.sum(force**2, axis=1))))
            if force.size
            else None,
            'moment_rms_nm': float(np.sqrt(np.mean(np.sum(moment**2, axis=1))))
            if moment.size
            else None,
        }


def meets(summary: dict) -> bool:
    """Every proving-ground target met by one profile's :meth:`ProfileFigures.summary`."""
    return (
        summary['delay_median_ms'] is not None
        and summary['delay_median_ms'] <= TARGETS['delay_median_ms']
        and summary['delay_p99_ms'] <= TARGETS['delay_p99_ms']
        and summary['false'] <= TARGETS['false']
        and summary['missed'] <= TARGETS['missed']
        and summary['not_released'] == 0
        and summary['force_rms_n'] is not None
        and summary['force_rms_n'] <= TARGETS['force_rms_n']
    )


class _Run:
    """One scene and the live pipeline fed its published samples."""

    def __init__(self, scene, live, publish_period: float):
        from robot_dynamics.core.streams.joint_states import JointSample

        self.scene, self.live = scene, live
        self._sample_type = JointSample
        self.substeps = max(1, round(publish_period / scene.step_size))
        self.period = self.substeps * scene.step_size

    def next(self, wrench: bool = False) -> tuple:
        """(published scene sample, the pipeline's LiveResult or None)."""
        sample = self.scene.step()
        for _ in range(self.substeps - 1):
            self.scene.step()
        joints = sample.joints
        result = self.live.update(
            self._sample_type(
                self.scene.nominal.joint_names,
                joints.positions,
                joints.velocities,
                joints.efforts,
                sample.time,
            ),
            wrench=wrench,
        )
        return sample, result


def measure_profile(
    profile_name: str, args, estimation: Optional[Estimation] = None, label: str = ''
) -> ProfileFigures:
    """The whole run (module docstring) for one shipped profile, estimated with ``estimation``
    (default: the bundled URDF as given)."""
    from robot_dynamics.models import ARM_URDF

    estimation = estimation or Estimation(str(ARM_URDF))
    figures = ProfileFigures(label or profile_name)
    live = estimation.live(**pipeline_settings(args))
    run = _Run(arm_scene(profile_name, args), live, 1.0 / args.rate)
    _advance(run, args.calibration + 0.5)
    calibration = run.live.calibrate_thresholds()
    figures.thresholds_nm = calibration.thresholds.tolist()
    figures.kept_momentum = run.live.observer.momentum  # by the calibration or before it
    _free_motion(run, figures, args.free_seconds)
    _pushes(run, figures, args)
    _collisions(figures, profile_name, args, run.period, estimation)
    return figures


def _nominal():
    from robot_dynamics.core.model.model import RobotModel
    from robot_dynamics.models import ARM_URDF

    return RobotModel.from_urdf_file(ARM_URDF)


def arm_scene(profile_name: str, args, obstacle=None, saturate: bool = True):
    """The arm scene of ``profile_name`` (seed ``args.seed``), with a box centred at
    ``obstacle`` [m, world] when given; ``saturate``: the drives clip at the effort limits."""
    from robot_dynamics.models import ARM_URDF
    from robot_dynamics.simulation.mujoco_model import Box
    from robot_dynamics.simulation.profiles import load_profile
    from robot_dynamics.simulation.scenes import ArmScene

    boxes = [] if obstacle is None else [Box('obstacle', tuple(obstacle), (OBSTACLE_EDGE,) * 3)]
    return ArmScene(
        ARM_URDF.read_text(),
        load_profile(profile_name),
        profile_seed=args.seed,
        bandwidth_hz=BANDWIDTH,
        obstacles=boxes,
        saturate=saturate,
    )


def _advance(run: _Run, seconds: float) -> None:
    for _ in range(int(seconds / run.period)):
        run.next()


def _free_motion(run: _Run, figures: ProfileFigures, seconds: float) -> None:
    residuals = []
    for _ in range(int(seconds / run.period)):
        _, result = run.next()
        if result is None or result.contact is None:
            continue
        residuals.append(result.external_torques)
        figures.false_free += result.contact.changed and result.contact.in_contact
    figures.free_seconds = seconds
    figures.free_residual_rms_nm = np.sqrt(np.mean(np.square(residuals), axis=0)).tolist()


def _pushes(run: _Run, figures: ProfileFigures, args) -> None:
    rng = np.random.default_rng(args.seed)
    settle = SETTLE_TIME_CONSTANTS * run.live.settings.observer_lag
    for _ in range(args.steps):
        still_in_contact = _between_pushes(run, figures, rng.uniform(1.0, 2.0))
        direction = rng.normal(size=3)
        force = rng.uniform(*args.force_range) * direction / np.linalg.norm(direction)
        duration = rng.uniform(0.3, 1.0)
        run.scene.set_push(PUSH_LINK, force, np.zeros(3))
        onset = detected = None
        while True:
            sample, result = run.next(wrench=True)
            if onset is None and sample.truth.push is not None:
                onset = sample.time
            if onset is None or result is None or result.contact is None:
                continue
            if sample.time - onset >= duration:
                break
            if detected is None and result.contact.in_contact:
                detected = sample.time
            if sample.time - onset >= settle and result.wrench is not None:
                figures.force_errors.append(result.wrench.force - force)
                figures.moment_errors.append(result.wrench.moment)
        run.scene.set_push(PUSH_LINK, np.zeros(3), np.zeros(3))
        if still_in_contact:  # the previous contact never ended: this push is not timed
            figures.not_released += 1
        elif detected is None:
            figures.pushes_missed += 1
        else:
            figures.push_delays_ms.append(1e3 * (detected - onset))
    _between_pushes(run, figures, 1.0)


def _between_pushes(run: _Run, figures: ProfileFigures, seconds: float) -> bool:
    """Motion without a push: the contact must end; one that starts again here is false.
    Returns whether the detector is in contact at the end."""
    released = in_contact = False
    for _ in range(int(seconds / run.period)):
        _, result = run.next()
        if result is None or result.contact is None:
            continue
        update = result.contact
        in_contact = update.in_contact
        if not in_contact:
            released = True
        elif update.changed and released:
            figures.false_between_pushes += 1
    return in_contact


def _collisions(
    figures: ProfileFigures, profile_name: str, args, period: float, estimation: Estimation
) -> None:
    """One scene per obstacle placement, each run until its first strike; scored against the
    thresholds calibrated with the workspace clear (module docstring)."""
    from robot_dynamics.simulation.errors import SceneError

    for centre in _obstacle_centres(args.collisions):
        try:
            scene = arm_scene(profile_name, args, obstacle=centre)
        except SceneError:  # overlaps the start pose: no collision to time there
            continue
        live = estimation.live(
            contact_thresholds=tuple(figures.thresholds_nm),
            observer_momentum=figures.kept_momentum,
            **pipeline_settings(args),
        )
        _strike(_Run(scene, live, period), figures, args)


def pipeline_settings(args) -> dict:
    """LiveSettings overrides: the observer gains of ``--observer-gain`` and
    ``--observer-filter-gain`` and the wrench reference of ``--wrench-reference``, each the node's
    default when not given."""
    given = {
        'observer_gain': getattr(args, 'observer_gain', None),
        'observer_filter_gain': getattr(args, 'observer_filter_gain', None),
        'wrench_reference': getattr(args, 'wrench_reference', None),
    }
    return {name: value for name, value in given.items() if value is not None}


def _strike(run: _Run, figures: ProfileFigures, args) -> None:
    """Run one obstacle scene for an excitation period or until :data:`STRIKE_WINDOW` after the
    first touch: a contact flagged before it is false, the first flagged sample after it gives
    the delay, the largest force within the window the strike's peak."""
    touched = detected = None
    peak = 0.0
    flagged_before = False
    while run.scene.time < run.scene.trajectory.duration:
        sample, result = run.next()
        force = sum(float(np.linalg.norm(w.force)) for w in sample.truth.contact_wrenches.values())
        flagged = result is not None and result.contact is not None and result.contact.in_contact
        if touched is None and force > 0.0:
            touched = sample.time
        if touched is None:
            flagged_before |= flagged
            continue
        if sample.time - touched > STRIKE_WINDOW:
            break
        peak = max(peak, force)
        if flagged and detected is None:
            detected = sample.time
    figures.false_in_collision_runs += int(flagged_before)
    if touched is None or peak < args.force_range[0]:
        return
    figures.collision_peaks_n.append(peak)
    if detected is None:
        figures.collisions_missed += 1
    else:
        figures.collision_delays_ms.append(1e3 * (detected - touched))


def _obstacle_centres(count: int) -> list:
    """``count`` box centres [m, world] on the tool's planned path, spread over the excitation
    period (its first and last 0.5 s, near the start pose, left out)."""
    import pinocchio as pin

    from robot_dynamics.simulation.reference import scripted_excitation

    robot = _nominal()
    trajectory = scripted_excitation(robot)
    times = np.linspace(0.5, trajectory.duration - 0.5, count)
    frame = robot.frame_id(PUSH_LINK)
    centres = []
    for q in trajectory.evaluate(times)[0]:
        pin.framesForwardKinematics(robot.model, robot.data, robot.configuration(q))
        centres.append(robot.data.oMf[frame].translation.copy())
    return centres


def identify_model(urdf: str, source: list, output: Path) -> tuple:
    """Run `robot_dynamics identify --rotor-inertia` (link parameters with ``urdf`` as prior,
    viscous, Coulomb, offset, rotor inertia) on ``source`` (its options, e.g. ``['--csv',
    path]``), writing ``output`` and its friction file beside it; returns (the
    :class:`Estimation`, identify's JSON report)."""
    from robot_dynamics.commands import identify

    parser = argparse.ArgumentParser()
    identify.add_arguments(parser)
    options = parser.parse_args(
        ['--urdf', str(urdf), *source, '--rotor-inertia', '--output', str(output)]
        + ['--format', 'json']
    )
    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        status = identify.run(options)
    if status != 0:
        raise RuntimeError(f'robot_dynamics identify failed on {source} (exit {status})')
    friction = output.with_name(output.stem + '_friction.yaml')
    return Estimation(str(output), str(friction)), json.loads(report.getvalue())


def identified_estimation(
    args, folder: Path, seconds: float = IDENTIFICATION_SECONDS
) -> Estimation:
    """Record ``seconds`` [s] of another excitation of the realistic robot (same seed) and
    identify it (:func:`identify_model`) into ``folder``, as a user would before relying on the
    wrench."""
    from robot_dynamics.core.identification.recording_files import write_csv
    from robot_dynamics.models import ARM_URDF
    from robot_dynamics.simulation.reference import scripted_excitation

    scene = arm_scene('realistic', args)
    scene.trajectory = scripted_excitation(scene.nominal, seed=IDENTIFICATION_TRAJECTORY_SEED)
    scene.reset()
    recording = folder / 'recording.csv'
    write_csv(recording, scene.record(seconds, args.rate))
    estimation, _ = identify_model(
        str(ARM_URDF), ['--csv', str(recording)], folder / 'identified.urdf'
    )
    return estimation


def measure(args, identified: Optional[Estimation] = None) -> dict:
    """Each column's summary and the verdict (met when every target holds on the shipped
    profiles' columns; the identified column shows what identifying the robot changes).
    ``identified``: :func:`identified_estimation` of the same ``args`` when already made
    (None: made here)."""
    summaries = [measure_profile(name, args).summary() for name in PROFILES]
    if getattr(args, 'identified', True):
        with tempfile.TemporaryDirectory(prefix='robot_dynamics_bench_') as folder:
            estimation = identified or identified_estimation(args, Path(folder))
            figures = measure_profile('realistic', args, estimation, IDENTIFIED)
        summaries.append(figures.summary())
    return {
        'engine': 'mujoco',
        'model': 'fr3_arm (bundled), no payload',
        'publish_rate_hz': args.rate,
        'observer_gain_per_s': pipeline_settings(args).get('observer_gain'),
        'observer_filter_gain_per_s': pipeline_settings(args).get('observer_filter_gain'),
        'wrench_reference': pipeline_settings(args).get('wrench_reference'),
        'seed': args.seed,
        'steps': args.steps,
        'force_range_n': list(args.force_range),
        'obstacle_placements': args.collisions,
        'profiles': summaries,
        'met': {s['profile']: meets(s) for s in summaries},
        'targets': TARGETS,
        'meets_targets': all(meets(s) for s in summaries if s['profile'] in PROFILES),
    }


def _setting_words(result: dict) -> str:
    """Where the pipeline differs from the node's defaults ('' nowhere)."""
    words = []
    if result.get('observer_gain_per_s') is not None:
        words.append(f"an observer gain of {result['observer_gain_per_s']:g} /s")
    if result.get('observer_filter_gain_per_s') is not None:
        words.append(f"an observer filter gain of {result['observer_filter_gain_per_s']:g} /s")
    if result.get('wrench_reference') is not None:
        words.append(f"wrench_reference {result['wrench_reference']}")
    return ' but ' + ' and '.join(words) if words else ''


def text(result: dict) -> str:
    """The table a person reads: one column per profile."""
    profiles = result['profiles']
    lines = [
        f"bench contact (proving ground, MuJoCo): {result['model']}, "
        f"{result['publish_rate_hz']:.0f} Hz joint states, dynamics_node's default pipeline"
        + _setting_words(result)
        + '; '
        f"{result['steps']} pushes of {result['force_range_n'][0]:g}-"
        f"{result['force_range_n'][1]:g} N at {PUSH_LINK}, a box struck "
        f"at {result['obstacle_placements']} places",
        f"{'':44}" + ''.join(f"{s['profile']:>23}" for s in profiles) + f"{'target':>9}",
    ]

    def row(label, key, digits=1, target=None):
        cells = ''.join(
            f"{'n/a' if s[key] is None else f'{s[key]:.{digits}f}':>23}" for s in profiles
        )
        lines.append(f'{label:44}{cells}{"" if target is None else f"{target:g}":>9}')

    row('free excitation [s]', 'free_seconds', 0)
    row('false detections, free excitation', 'false_free', 0)
    row('false detections, between pushes', 'false_between_pushes', 0)
    row('false detections, before a strike', 'false_in_collision_runs', 0)
    row('false detections, all', 'false', 0, TARGETS['false'])
    row('pushes', 'pushes', 0)
    row('  missed', 'pushes_missed', 0)
    row('  contact not ended before the push', 'not_released', 0, 0)
    row('  delay median [ms]', 'push_delay_median_ms')
    row('  delay p99 [ms]', 'push_delay_p99_ms')
    row(f"strikes (peak >= {result['force_range_n'][0]:g} N)", 'collisions', 0)
    row('  peak contact force median [N]', 'collision_peak_median_n')
    row('  missed', 'collisions_missed', 0)
    row('  delay median [ms]', 'collision_delay_median_ms')
    row('  delay p99 [ms]', 'collision_delay_p99_ms')
    row('missed, all', 'missed', 0, TARGETS['missed'])
    row('delay median, all [ms]', 'delay_median_ms', 1, TARGETS['delay_median_ms'])
    row('delay p99, all [ms]', 'delay_p99_ms', 1, TARGETS['delay_p99_ms'])
    row('push force error RMS, settled [N]', 'force_rms_n', 3, TARGETS['force_rms_n'])
    row('push moment error RMS, settled [N m]', 'moment_rms_nm', 3)
    for s in profiles:
        lines.append(
            f"{s['profile']}: observer momentum {s['kept_momentum']}, thresholds "
            f"{s['thresholds_nm']} N m; free-motion residual RMS {s['free_residual_rms_nm']} N m"
        )
    lines.append(
        'targets met: '
        + ', '.join(f"{name} {'yes' if ok else 'NO'}" for name, ok in result['met'].items())
    )
    return '\n'.join(lines)
