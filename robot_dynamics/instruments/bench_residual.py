"""`robot_dynamics bench residual`: how much of the realistic robot's phantom external torque each
thing a user can give dynamics_node takes away, on the proving ground, in one run.

The `realistic` arm (profile seed ``--seed``, no payload, 250 Hz joint states) is estimated by
four pipelines (dynamics_node's :class:`~robot_dynamics.core.live.live_dynamics.LiveDynamics`
with the node's defaults) fed the very same samples:

1. ``URDF``: the bundled URDF as given;
2. ``+ offsets zeroed``: the same, offsets zeroed (``~/zero_effort_offsets``) at three rest poses;
3. ``+ friction, rotor inertia``: also the viscous and Coulomb friction and the rotor inertia
   that `robot_dynamics identify --rotor-inertia` found (its offsets left out: zeroed as in 2);
4. ``identified model``: the identified URDF and its whole friction file, offsets zeroed.

The identification uses 60 s of another excitation of the same robot (trajectory seed 7); the
benched motion is the scripted excitation (seed 1). The run: three rest poses held 2.5 s each
(offsets zeroed at the end of each), the excitation, thresholds calibrated on its first 10 s,
``--free-seconds`` of free excitation (false detections; phantom RMS in motion), 3 s held still
at the start pose (phantom RMS at rest), 10 pushes of 10–20 N at tool0 (force error RMS once
settled), then pushes of 2, 3, 5 and 8 N in 6 directions each: the smallest force whose every
push is detected.

The phantom is the external torque the observer reports while nothing touches the robot: its
truth is zero. Targets: the identified model with zeroed offsets ≥ 5× below the URDF alone on
every joint in motion, and 5 N pushes detected with 0 false detections.

Then the real Panda recording (:func:`panda_replay`): the URDF and the model `identify` finds on
its training part, replayed live with pushes added on the held-out part. Targets: force error
≤ 2 N RMS under 20 N pushes, every 8 N push detected, 0 false detections.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np
import yaml

from robot_dynamics.instruments.contact_proving_ground import (
    PUSH_LINK,
    SETTLE_TIME_CONSTANTS,
    Estimation,
    identified_estimation,
    identify_model,
    pipeline_settings,
)

COLUMNS = ('URDF', '+ offsets zeroed', '+ friction, rotor inertia', 'identified model')
REST_TIMES = (1.25, 2.5, 3.75)
"""Rest poses: where the benched excitation passes at these times [s] of its period (poses in
the workspace the robot works in, shoulder and wrist turned differently)."""
HOLD_SECONDS = 2.5
SMALL_FORCES = (2.0, 3.0, 5.0, 8.0)  # [N]
SMALL_DIRECTIONS = 6
PHANTOM_RATIO_TARGET = 5.0
SMALL_PUSH_TARGET = 5.0  # [N]


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # --free-seconds, --seed (bench contact's), --rate and --format are used


@dataclass
class Column:
    """One pipeline and what it measured."""

    name: str
    live: object
    phantom_motion: list = field(default_factory=list)
    phantom_rest: list = field(default_factory=list)
    false_detections: int = 0
    force_errors: list = field(default_factory=list)
    detected_small: dict = field(default_factory=dict)
    zeroing: str = ''
    filtered_motion: list = field(default_factory=list)

    def summary(self) -> dict:
        motion = np.sqrt(np.mean(np.square(self.phantom_motion), axis=0))
        rest = np.sqrt(np.mean(np.square(self.phantom_rest), axis=0))
        forces = np.asarray(self.force_errors)
        tried = sorted(self.detected_small)
        all_detected = [f for f in tried if self.detected_small[f] == SMALL_DIRECTIONS]
        return {
            'column': self.name,
            'phantom_motion_rms_nm': motion.round(4).tolist(),
            'phantom_rest_rms_nm': rest.round(4).tolist(),
            'filtered_residual_motion_rms_nm': _rms(self.filtered_motion),
            'thresholds_nm': self.live.thresholds.values.round(4).tolist(),
            'false_detections': self.false_detections,
            'force_rms_n': float(np.sqrt(np.mean(np.sum(forces**2, axis=1)))),
            'detected_of_6': {f'{force:g}': self.detected_small[force] for force in tried},
            'smallest_push_detected_n': min(all_detected) if all_detected else None,
            'offsets_nm': self.live.effort_offsets.round(4).tolist(),
            'zeroing': self.zeroing,
        }


def _columns(folder: Path, args, identified: Optional[Estimation]) -> list:
    from robot_dynamics.models import ARM_URDF

    identified = identified or identified_estimation(args, folder)
    friction = yaml.safe_load(Path(identified.friction_file).read_text())
    for values in friction['joints'].values():
        values['offset'] = 0.0
    without_offsets = folder / 'friction_rotor_inertia.yaml'
    without_offsets.write_text(yaml.safe_dump(friction))
    estimations = (
        Estimation(str(ARM_URDF)),
        Estimation(str(ARM_URDF)),
        Estimation(str(ARM_URDF), str(without_offsets)),
        identified,
    )
    settings = pipeline_settings(args)
    return [
        Column(name, estimation.live(**settings)) for name, estimation in zip(COLUMNS, estimations)
    ]


class _Stream:
    """The realistic scene's published samples, fed to every column."""

    def __init__(self, args, columns: list):
        from robot_dynamics.core.streams.joint_states import JointSample
        from robot_dynamics.instruments.contact_proving_ground import arm_scene

        self.scene = arm_scene('realistic', args, saturate=False)
        self.columns, self._sample = columns, JointSample
        self.substeps = max(1, round(1.0 / (args.rate * self.scene.step_size)))
        self.period = self.substeps * self.scene.step_size

    def run(self, seconds: float, each=None, wrench: bool = False) -> None:
        """Advance ``seconds``; ``each(column, result, sample)`` for every column's result."""
        names = self.scene.nominal.joint_names
        for _ in range(int(round(seconds / self.period))):
            sample = self.scene.step()
            for _ in range(self.substeps - 1):
                self.scene.step()
            joints = sample.joints
            message = self._sample(
                names, joints.positions, joints.velocities, joints.efforts, sample.time
            )
            for column in self.columns:
                result = column.live.update(message, wrench=wrench)
                if each is not None and result is not None:
                    each(column, result, sample)


def measure(args, identified: Optional[Estimation] = None) -> dict:
    """The run of the module docstring; every column's summary and the verdicts.
    ``identified``: :func:`identified_estimation` of the same ``args`` when already made
    (None: made here)."""
    with tempfile.TemporaryDirectory(prefix='robot_dynamics_bench_') as folder:
        columns = _columns(Path(folder), args, identified)
        stream = _Stream(args, columns)
        _zero_offsets(stream)
        _join_excitation(stream)
        stream.run(10.5)
        for column in columns:
            column.live.calibrate_thresholds()
        free_start = stream.scene.time
        _free_motion(stream, args.free_seconds)
        free_end = stream.scene.time
        stream.scene.hold(stream.scene.reference(stream.scene.time)[0])
        stream.run(1.0)
        stream.run(3.0, lambda c, r, s: c.phantom_rest.append(r.external_torques))
        _filtered_free_motion(stream, free_start, free_end)
        _join_excitation(stream)
        _pushes(
            stream, np.random.default_rng(args.seed), getattr(args, 'small_forces', SMALL_FORCES)
        )
    summaries = [column.summary() for column in columns]
    urdf, identified = summaries[0], summaries[-1]
    ratios = np.array(urdf['phantom_motion_rms_nm']) / np.array(identified['phantom_motion_rms_nm'])
    small = identified['smallest_push_detected_n']
    return {
        'profile': 'realistic',
        'seed': args.seed,
        'publish_rate_hz': args.rate,
        'free_seconds': args.free_seconds,
        'observer_gain_per_s': float(columns[0].live.observer.gain[0]),
        'observer_filter_gain_per_s': columns[0].live.settings.observer_filter_gain,
        'wrench_reference': columns[0].live.settings.wrench_reference,
        'columns': summaries,
        'phantom_ratio_urdf_over_identified': ratios.round(2).tolist(),
        'filtered_ratio_urdf_over_identified': _ratios(
            urdf['filtered_residual_motion_rms_nm'], identified['filtered_residual_motion_rms_nm']
        ),
        'phantom_ratio_met': bool(np.all(ratios >= PHANTOM_RATIO_TARGET)),
        'small_push_met': bool(
            small is not None and small <= SMALL_PUSH_TARGET and identified['false_detections'] == 0
        ),
    }


def _zero_offsets(stream: _Stream) -> None:
    scene = stream.scene
    for moment in REST_TIMES:
        scene.hold(scene.reference(moment)[0])
        stream.run(HOLD_SECONDS)
        for column in stream.columns[1:]:
            column.zeroing = column.live.zero_effort_offsets(PUSH_LINK).message


def _join_excitation(stream: _Stream) -> None:
    """Hold the excitation's start pose until a period begins (at least 2 s), then follow it:
    the excitation starts each period at rest there, so the reference does not jump."""
    scene = stream.scene
    period = scene.trajectory.duration
    start = np.ceil((scene.time + 2.0) / period) * period
    scene.hold(scene.reference(0.0)[0])
    stream.run(start - scene.time)
    scene.hold(None)


def _free_motion(stream: _Stream, seconds: float) -> None:
    def each(column, result, sample):
        if result.external_torques is not None:
            column.phantom_motion.append(result.external_torques)
        if result.contact is not None and result.contact.changed and result.contact.in_contact:
            column.false_detections += 1

    stream.run(seconds, each)


def _filtered_free_motion(stream: _Stream, start: float, end: float) -> None:
    """Each column's model residual of the free motion, filtered as `identify` scores it (the
    node's diagnostics; every block evaluated by now that lies in [start, end) [s])."""
    for column in stream.columns:
        rows = column.live.filtered_residual.update()
        inside = (rows.stamps >= start) & (rows.stamps < end)
        column.filtered_motion = rows.residuals[inside].tolist()


def _pushes(stream: _Stream, rng: np.random.Generator, small_forces: tuple) -> None:
    """Ten pushes of 10–20 N (force error once settled), then :data:`SMALL_DIRECTIONS` of each
    of ``small_forces`` [N] (detection)."""
    settle = SETTLE_TIME_CONSTANTS * stream.columns[0].live.settings.observer_lag
    for _ in range(10):
        force = rng.uniform(10.0, 20.0) * _direction(rng)
        _push(stream, force, 0.6, settle, record_error=True)
    for magnitude in small_forces:
        for _ in range(SMALL_DIRECTIONS):
            _push(stream, magnitude * _direction(rng), 0.6, settle, record_error=False)


def _direction(rng: np.random.Generator) -> np.ndarray:
    direction = rng.normal(size=3)
    return direction / np.linalg.norm(direction)


def _push(stream: _Stream, force, duration: float, settle: float, record_error: bool) -> None:
    stream.run(1.5)  # contact-free: any earlier contact ends
    stream.scene.set_push(PUSH_LINK, force, np.zeros(3))
    started = stream.scene.time
    detected = set()

    def each(column, result, sample):
        if result.contact is not None and result.contact.in_contact:
            detected.add(column.name)
        if record_error and sample.time - started >= settle and result.wrench is not None:
            column.force_errors.append(result.wrench.force - force)

    stream.run(duration, each, wrench=record_error)
    stream.scene.set_push(PUSH_LINK, np.zeros(3), np.zeros(3))
    if not record_error:
        key = round(float(np.linalg.norm(force)), 9)
        for column in stream.columns:
            column.detected_small[key] = column.detected_small.get(key, 0) + (
                column.name in detected
            )


def run(args: argparse.Namespace) -> int:
    """Print both tables; exit 0 when the proving ground's targets and the Panda's are met."""
    args.rate = args.rate or 250.0
    result = measure(args)
    panda = panda_replay(panda_data_folder(), args.seed, pipeline_settings(args))
    result['panda'] = panda
    identified = panda['identified model']
    result['panda_met'] = bool(
        identified['force_rms_n'] <= PANDA_FORCE_TARGET
        and identified['detected']['8'] == PANDA_PUSHES
        and identified['false_detections'] == 0
        and all(
            abs(ratio - 1.0) <= PANDA_RESIDUAL_TOLERANCE
            for ratio in _ratios(
                identified['filtered_residual_rms_nm'], identified['offline_consistent_rms_nm']
            )
        )
    )
    if args.format == 'json':
        print(json.dumps(result, indent=2))
    else:
        print(_text(result))
        print(_panda_text(panda, result['panda_met']))
    met = result['phantom_ratio_met'] and result['small_push_met'] and result['panda_met']
    return 0 if met else 1


class _Table:
    """A text table: a label column, then one right-aligned cell per named column."""

    def __init__(self, title: str, names: list, label_width: int, width: int):
        self.label_width, self.width = label_width, width
        self.lines = [title, f'{"":{label_width}}' + ''.join(f'{name:>{width}}' for name in names)]

    def row(self, label: str, cells) -> None:
        self.lines.append(
            f'{label:{self.label_width}}' + ''.join(f'{cell:>{self.width}}' for cell in cells)
        )


def _text(result: dict) -> str:
    columns = result['columns']
    table = _Table(
        f"bench residual: the realistic arm (seed {result['seed']}), "
        f"{result['publish_rate_hz']:.0f} Hz, {result['free_seconds']:g} s of free excitation, "
        f"observer gain {result['observer_gain_per_s']:g} /s (filter "
        f"{result['observer_filter_gain_per_s']:g} /s), wrench_reference "
        f"{result['wrench_reference']}",
        [c['column'] for c in columns],
        34,
        28,
    )

    def row(label, cell):
        table.row(label, [cell(c) for c in columns])

    joints = len(columns[0]['phantom_motion_rms_nm'])
    for j in range(joints):
        row(
            f'phantom in motion, joint {j + 1} [N m]',
            lambda c: f'{c["phantom_motion_rms_nm"][j]:.4f}',
        )
    for j in range(joints):
        row(f'phantom at rest, joint {j + 1} [N m]', lambda c: f'{c["phantom_rest_rms_nm"][j]:.4f}')
    for j in range(joints):
        row(
            f'model residual in motion, joint {j + 1} [N m]',
            lambda c: f'{c["filtered_residual_motion_rms_nm"][j]:.4f}',
        )
    row(
        'thresholds, min-max [N m]',
        lambda c: f'{min(c["thresholds_nm"]):.3f}-{max(c["thresholds_nm"]):.3f}',
    )
    row('false detections (free)', lambda c: str(c['false_detections']))
    row('force error RMS, 10-20 N [N]', lambda c: f'{c["force_rms_n"]:.3f}')
    for force in result['columns'][0]['detected_of_6']:
        row(f'{force} N pushes detected (of 6)', lambda c: str(c['detected_of_6'][force]))
    row(
        'smallest push always detected',
        lambda c: (
            'none'
            if c['smallest_push_detected_n'] is None
            else f'{c["smallest_push_detected_n"]:g} N'
        ),
    )
    table.lines.append(
        'model residual in motion (filtered as identify scores it), URDF / identified model: '
        + ', '.join(f'{r:.1f}' for r in result['filtered_ratio_urdf_over_identified'])
    )
    table.lines.append(
        'phantom in motion, URDF / identified model, per joint: '
        + ', '.join(f'{r:.1f}' for r in result['phantom_ratio_urdf_over_identified'])
        + f' (target >= {PHANTOM_RATIO_TARGET:g} on every joint: '
        + ('met' if result['phantom_ratio_met'] else 'NOT met')
        + f'); {SMALL_PUSH_TARGET:g} N pushes detected with 0 false: '
        + ('met' if result['small_push_met'] else 'NOT met')
    )
    return '\n'.join(table.lines)


# ---------------------------------------------------------------------- the real Panda
PANDA_SPLIT = 10.39
"""[s] The Panda recording's training part ends here (as docs/identification.md splits it)."""
PANDA_PUSHES = 12
PANDA_PUSH_SECONDS = 0.4
PANDA_PUSH_FORCES = (8.0, 20.0)  # [N] the detection push and the wrench push
PANDA_FRAME = 'panda_link8'
PANDA_FORCE_TARGET = 2.0  # [N] RMS under 20 N pushes, identified model
PANDA_RESIDUAL_TOLERANCE = 0.02  # the live filtered residual against identify's held-out RMS
PANDA_RELEASE = 0.3  # [s] after a push: the observer decays, the detector releases
PANDA_PUSH_PERIOD = 0.75  # [s] from one push's start to the next: 0.35 s free between pushes


def panda_data_folder() -> Path:
    """``../shared/data/panda_gaz2019`` beside the repository (or the working directory)."""
    here = Path(__file__).resolve().parents[2]
    for root in (here.parent, Path.cwd().parent, Path.cwd()):
        folder = root / 'shared' / 'data' / 'panda_gaz2019'
        if folder.is_dir():
            return folder
    raise FileNotFoundError('../shared/data/panda_gaz2019 not found beside the repository')


def panda_replay(folder: Path, seed: int = 0, settings: Optional[dict] = None) -> dict:
    """The real Panda recording replayed through the live pipeline: identified by `robot_dynamics
    identify` on t < :data:`PANDA_SPLIT` only, thresholds calibrated on the last 10 s of that
    training motion, scored on the held-out rest. Each model is replayed three times, each time
    by a fresh pipeline: as recorded (phantom, false detections), with :data:`PANDA_PUSHES` pushes
    of 8 N (detection) and with as many of 20 N (detection and force error). Pushes are added to
    the measured link-side torques as a robot's sensors would show them (τ_m − J(q)ᵀ F, F at
    ``panda_link8``, world directions drawn from ``seed``), 0.4 s each with the rest of
    :data:`PANDA_PUSH_PERIOD` free, so that the detector can release between them.
    ``settings``: LiveSettings overrides (None: the node's defaults)."""
    from robot_dynamics.core.identification.recording import clean_recording
    from robot_dynamics.core.identification.recording_files import read_panda_gaz2019

    recording, _ = clean_recording(read_panda_gaz2019(folder))
    rng = np.random.default_rng(seed)
    pushes = {force: _panda_pushes(recording, force, rng) for force in PANDA_PUSH_FORCES}
    with tempfile.TemporaryDirectory(prefix='robot_dynamics_bench_') as scratch:
        identified, offline = _identify_panda(folder, Path(scratch))
        models = {
            'URDF': Estimation(str(folder / 'panda_arm.urdf')),
            'identified model': identified,
        }
        result = {
            name: _panda_column(model, recording, pushes, settings or {})
            for name, model in models.items()
        }
    result['identified model']['offline_held_out_rms_nm'] = offline['rms_held_out']
    result['identified model']['offline_consistent_rms_nm'] = offline['rms_consistent_held_out']
    return result


def _identify_panda(folder: Path, scratch: Path) -> tuple:
    """(the model identified on t < :data:`PANDA_SPLIT`, identify's own held-out RMS per joint
    [N·m] of its base-parameter fit and of the consistent model it writes)."""
    estimation, report = identify_model(
        str(folder / 'panda_arm.urdf'),
        ['--panda-dir', str(folder), '--split-time', str(PANDA_SPLIT)],
        scratch / 'panda_identified.urdf',
    )
    return estimation, {
        key: [round(report[key][name], 4) for name in sorted(report[key])]
        for key in ('rms_held_out', 'rms_consistent_held_out')
    }


def _panda_pushes(recording, magnitude: float, rng: np.random.Generator) -> list:
    """[(start [s], force [N, world])]: :data:`PANDA_PUSHES` pushes of ``magnitude`` one
    :data:`PANDA_PUSH_PERIOD` apart over the held-out part."""
    first = PANDA_SPLIT + 1.0
    assert first + PANDA_PUSHES * PANDA_PUSH_PERIOD <= float(recording.time[-1])
    return [
        (first + index * PANDA_PUSH_PERIOD, magnitude * _direction(rng))
        for index in range(PANDA_PUSHES)
    ]


def _panda_column(model: Estimation, recording, pushes: dict, settings: dict) -> dict:
    """The held-out figures of one model: phantom, residual and false detections as recorded;
    detections and the force error under each force's pushes."""
    quiet = _replay(model.live(**settings), recording, [])
    small, large = (
        _replay(model.live(**settings), recording, pushes[force]) for force in PANDA_PUSH_FORCES
    )
    return {
        'residual_rms_nm': _rms(quiet['residuals']),
        'filtered_residual_rms_nm': quiet['filtered_residual_rms_nm'],
        'phantom_rms_nm': _rms(quiet['phantom']),
        'phantom_seconds': round(quiet['free_seconds'], 2),
        'thresholds_nm': quiet['thresholds_nm'],
        'half_gain_thresholds_ratio': quiet['half_gain_thresholds_ratio'],
        'false_detections': quiet['false_detections'],
        'detected': {
            f'{force:g}': run['detected'] for force, run in zip(PANDA_PUSH_FORCES, (small, large))
        },
        'not_released': small['not_released'] + large['not_released'],
        'pushes_each': PANDA_PUSHES,
        'observer_gain_per_s': quiet['observer_gain_per_s'],
        'observer_filter_gain_per_s': quiet['observer_filter_gain_per_s'],
        'wrench_reference': quiet['wrench_reference'],
        'force_rms_n': float(np.sqrt(np.mean(np.sum(np.square(large['force_errors']), axis=1)))),
    }


def _rms(rows: list) -> list:
    return np.sqrt(np.mean(np.square(rows), axis=0)).round(4).tolist()


def _replay(live, recording, pushes: list) -> dict:
    """Feed ``recording`` (with ``pushes`` added) to ``live``; what it showed on the held-out part.
    A push is detected when the contact rises while it acts; one whose start finds the contact
    still raised counts as not released. The :data:`PANDA_RELEASE` s after each push (the
    observer's decay, the detector's release) count neither as phantom nor as false
    detections."""
    from robot_dynamics.core.streams.joint_states import JointSample

    frame = live.robot.frame_id(PANDA_FRAME)
    names = recording.joint_names
    settle = SETTLE_TIME_CONSTANTS * live.settings.observer_lag
    calibrated, half_gain = False, None
    filtered, next_diagnostics = [], float(recording.time[0]) + 1.0
    held_out = []
    for time, q, v, tau in zip(
        recording.time, recording.positions, recording.velocities, recording.efforts
    ):
        index = _acting_push(pushes, time)
        efforts, rotation = tau, None
        if index is not None:
            efforts, rotation = _pushed_efforts(live.robot, frame, q, tau, pushes[index][1])
        if not calibrated and time >= PANDA_SPLIT:
            half_gain = live.calibrate_thresholds().half_gain
            calibrated = True
        result = live.update(
            JointSample(names, q, v, efforts, float(time)), wrench=index is not None
        )
        if time >= next_diagnostics:  # the node evaluates it at each diagnostics (1 s)
            filtered.append(live.filtered_residual.update())
            next_diagnostics += 1.0
        if result is None or time < PANDA_SPLIT + 0.5:
            continue
        held_out.append(_held_out_sample(live, result, time, index, rotation, pushes, settle))
    filtered.append(live.filtered_residual.update(final=True))
    period = float(np.median(np.diff(recording.time)))
    return _replay_figures(live, held_out, pushes, period, filtered, half_gain)


def _acting_push(pushes: list, time: float) -> Optional[int]:
    """Index into ``pushes`` of the push acting at ``time`` [s] (None: none)."""
    return next(
        (k for k, (start, _) in enumerate(pushes) if 0.0 <= time - start < PANDA_PUSH_SECONDS),
        None,
    )


def _pushed_efforts(robot, frame: int, q, tau, force) -> tuple:
    """(``tau`` − J(q)ᵀ ``force`` [N·m]: the link-side torques ``tau`` as the sensors would show
    the push ``force`` [N, world] at ``frame``; the rotation world ← ``frame`` at ``q``)."""
    import pinocchio as pin

    jacobian = pin.computeFrameJacobian(
        robot.model, robot.data, robot.configuration(q), frame, pin.LOCAL_WORLD_ALIGNED
    )
    rotation = robot.data.oMf[frame].rotation.copy()
    return tau - jacobian[:3].T @ force, rotation


@dataclass(frozen=True)
class _HeldOutSample:
    """What the pipeline showed at one held-out sample."""

    time: float  # [s]
    push: Optional[int]  # index of the push acting (None: none)
    rising: bool  # the contact rose at this sample
    in_contact: bool
    free: bool = False  # no push acting nor releasing: counted as phantom and false detection
    residual: Optional[np.ndarray] = None  # free: the model residual [N·m]
    phantom: Optional[np.ndarray] = None  # free: the observer's external torques [N·m]
    force_error: Optional[np.ndarray] = None  # push settled: wrench − push force [N, world]


def _held_out_sample(
    live, result, time: float, push: Optional[int], rotation, pushes: list, settle: float
) -> _HeldOutSample:
    """``result``, the pipeline's output for the sample at ``time`` [s], as a
    :class:`_HeldOutSample`; ``rotation``: world ← :data:`PANDA_FRAME` while a push acts;
    ``settle`` [s]: from a push's start to its first force error."""
    rising = result.contact.changed and result.contact.in_contact
    in_contact = result.contact.in_contact
    if push is None:
        if not _released(pushes, time):
            return _HeldOutSample(time, None, rising, in_contact)
        residual = _model_residual(live)
        return _HeldOutSample(
            time,
            None,
            rising,
            in_contact,
            free=True,
            residual=residual,
            phantom=result.external_torques,
        )
    start, force = pushes[push]
    error = rotation @ result.wrench.force - force if time - start >= settle else None
    return _HeldOutSample(time, push, rising, in_contact, force_error=error)


def _released(pushes: list, time: float) -> bool:
    """No push ended less than :data:`PANDA_RELEASE` s before ``time`` [s]."""
    return all(not 0.0 <= time - start - PANDA_PUSH_SECONDS < PANDA_RELEASE for start, _ in pushes)


def _replay_figures(
    live, held_out: list, pushes: list, period: float, filtered: list, half_gain
) -> dict:
    """:func:`_replay`'s result from its ``held_out`` samples, in order; ``period`` [s]: the
    recording's sample period; ``filtered``: every evaluation of the filtered residual."""
    free = [sample for sample in held_out if sample.free]
    stamps = np.concatenate([rows.stamps for rows in filtered])
    filtered_rows = np.concatenate([rows.residuals for rows in filtered])[stamps >= PANDA_SPLIT]
    return {
        'filtered_residual_rms_nm': _rms(filtered_rows),
        'residuals': [sample.residual for sample in free],
        'phantom': [sample.phantom for sample in free],
        'free_seconds': len(free) * period,
        'thresholds_nm': live.thresholds.values.round(4).tolist(),
        'half_gain_thresholds_ratio': None if half_gain is None else round(half_gain.ratio, 4),
        'false_detections': int(sum(sample.rising for sample in free)),
        'detected': len({s.push for s in held_out if s.push is not None and s.rising}),
        'not_released': _not_released(held_out, pushes, period),
        'force_errors': [s.force_error for s in held_out if s.force_error is not None],
        'observer_gain_per_s': float(live.observer.gain[0]),
        'observer_filter_gain_per_s': live.settings.observer_filter_gain,
        'wrench_reference': live.settings.wrench_reference,
    }


def _not_released(held_out: list, pushes: list, period: float) -> int:
    """How many ``held_out`` samples within half a sample ``period`` [s] of their push's start
    find the contact of the sample before them still raised."""
    count, in_contact = 0, False
    for sample in held_out:
        if sample.push is not None:
            if sample.time - pushes[sample.push][0] < period / 2 and in_contact:
                count += 1
        in_contact = sample.in_contact
    return count


def _model_residual(live) -> np.ndarray:
    """τ_measured − the whole model the outputs use (inverse dynamics and the friction file's
    torques) of the newest sample [N·m]."""
    torques = live.latest_torques
    friction = live.observer.friction if live.observer is not None else None
    if friction is None:
        return torques.residual
    return torques.residual - friction.torques(torques.velocities)


def _panda_text(panda: dict, met: bool) -> str:
    names = list(panda)
    table = _Table(
        f'\nreal Panda (Gaz et al. 2019), identified on t < {PANDA_SPLIT:g} s, scored on the rest; '
        f'replayed as recorded, with {PANDA_PUSHES} pushes of 8 N and with as many of 20 N at '
        f"{PANDA_FRAME}; observer gain {panda['URDF']['observer_gain_per_s']:g} /s (filter "
        f"{panda['URDF']['observer_filter_gain_per_s']:g} /s), "
        f"wrench_reference {panda['URDF']['wrench_reference']}",
        names,
        36,
        38,
    )

    def row(label, cell):
        table.row(label, [cell(panda[name]) for name in names])

    def joints(values):
        return ' '.join(f'{value:.2f}' for value in values)

    row('live residual, causal [N m]', lambda c: joints(c['residual_rms_nm']))
    row('live residual, filtered [N m]', lambda c: joints(c['filtered_residual_rms_nm']))
    row(
        'offline held-out, written model [N m]',
        lambda c: joints(c.get('offline_consistent_rms_nm') or []) or '-',
    )
    row(
        'filtered / offline',
        lambda c: (
            joints(_ratios(c['filtered_residual_rms_nm'], c['offline_consistent_rms_nm']))
            if 'offline_consistent_rms_nm' in c
            else '-'
        ),
    )
    row(
        'offline held-out, base fit [N m]',
        lambda c: joints(c.get('offline_held_out_rms_nm') or []) or '-',
    )
    row('observer phantom, joints 1-7 [N m]', lambda c: joints(c['phantom_rms_nm']))
    row('thresholds at half the gain (said)', lambda c: f"{c['half_gain_thresholds_ratio']} x")
    row(
        'false detections, no push',
        lambda c: f"{c['false_detections']} in {c['phantom_seconds']:g} s",
    )
    row('8 N pushes detected', lambda c: f"{c['detected']['8']} of {c['pushes_each']}")
    row('20 N pushes detected', lambda c: f"{c['detected']['20']} of {c['pushes_each']}")
    row('pushes finding the contact raised', lambda c: str(c['not_released']))
    row('force error RMS, 20 N [N]', lambda c: f"{c['force_rms_n']:.2f}")
    table.lines.append(
        f'targets (identified model): force <= {PANDA_FORCE_TARGET:g} N, every 8 N push, 0 false, '
        f'filtered residual within {100 * PANDA_RESIDUAL_TOLERANCE:g} % of offline: '
        + ('met' if met else 'NOT met')
    )
    return '\n'.join(table.lines)


def _ratios(live: list, offline: list) -> list:
    return (np.asarray(live) / np.asarray(offline)).round(3).tolist()
