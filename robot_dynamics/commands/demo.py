"""Run the main job on a simulated robot: live torques, payload identification, CoM/ZMP.

Starts sim_robot (the proving ground: the bundled 7-DoF arm in MuJoCo with the `realistic` robot
profile, carrying a hidden payload), dynamics_node and
centroidal_node in this process with config/robot_dynamics.yaml and config/sim_robot.yaml,
then, through the nodes' real topics and services:

1. runs the excitation without the payload and keeps it as the baseline (~/record_baseline);
2. attaches the hidden payload, repeats the same motion, calls ~/identify_payload and
   ~/validate_inertia; the identified payload is applied to the live model;
3. keeps moving to measure the external torques with the identified payload;
4. runs the bundled quadruped standing and shifting its weight on the MuJoCo floor (the
   proving ground's legged scene) through centroidal_node.

Prints a summary (true vs identified payload with 1σ, external-torque RMS per joint, CoM/ZMP
ranges, validation) and writes torques.png and centroidal.png. Exit code 0 only when the
identified mass and CoM are within 3σ (plus 10 g / 2 mm) of the truth; 1 otherwise, also
for a --duration out of range or an --output-dir that cannot be a writable directory (checked
before anything starts).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from robot_dynamics.commands.output_paths import check_writable_folder
from robot_dynamics.core.errors import RobotDynamicsError

MASS_FLOOR = 0.010
"""Absolute mass tolerance [kg] added to 3σ in the pass/fail check."""
COM_FLOOR = 0.002
"""Absolute CoM tolerance per axis [m] added to 3σ in the pass/fail check."""
SETTLE = 0.4
"""Simulated time after a motion restart left out of the statistics and the recording [s]
(dynamics_node's acceleration window must not straddle the restart)."""
BASELINE_EXTRA = 0.5
"""Simulated time [s] the baseline records beyond the payload phase's whole periods, so that
it covers the payload recording even when the recording of the latter starts late."""
FEET = ['lf_foot', 'rf_foot', 'lh_foot', 'rh_foot']
MIN_DURATION, MAX_DURATION = 6.0, 600.0
"""Allowed --duration [s]. The baseline and payload phases are each a whole number of
excitation periods (at least one: 5 s of the default sim_robot excitation)."""
PROGRESS_PERIOD = 2.0
"""Wall-clock period of the progress lines [s]."""
DOMAIN_LISTEN_S = 2.0
"""How long [s] a ROS domain is listened to for other nodes before the demo takes it (without
ROS_DOMAIN_ID); discovery on loopback answers well within it."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--duration',
        type=float,
        default=24.0,
        help='simulated motion time of all phases together [s], from %g to %g (default 24; CI '
        'uses 8); the baseline and payload phases are each rounded to whole periods of the '
        'excitation, at least one' % (MIN_DURATION, MAX_DURATION),
    )
    parser.add_argument(
        '--output-dir',
        default='robot_dynamics_demo',
        help='where the plots and the YAML reports go (default ./robot_dynamics_demo)',
    )
    parser.add_argument('--no-plots', action='store_true', help='skip the PNG plots')


def run(args: argparse.Namespace) -> int:
    if not MIN_DURATION <= args.duration <= MAX_DURATION:
        print(
            f'demo: --duration must be between {MIN_DURATION:g} and {MAX_DURATION:g} s of '
            f'simulated motion, got {args.duration:g}',
            file=sys.stderr,
        )
        return 1
    output = Path(args.output_dir).resolve()
    try:
        output.mkdir(parents=True, exist_ok=True)  # FileExistsError for an existing file
    except OSError as error:
        print(
            f'demo: --output-dir {args.output_dir}: cannot create the directory '
            f'({error.strerror or error})',
            file=sys.stderr,
        )
        return 1
    try:
        check_writable_folder(output, '--output-dir')
    except OSError as error:
        print(f'demo: {error}', file=sys.stderr)
        return 1
    # rclpy reads both at init: keep the demo on this machine and off other ROS graphs (a
    # robot's own among them: without ROS_DOMAIN_ID, one with no other node on it).
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    if not os.environ.get('ROS_DOMAIN_ID'):
        from robot_dynamics.ros.ros_domain import DomainUnavailable, claim_ros_domain

        try:
            claim_ros_domain(listen=DOMAIN_LISTEN_S)
        except DomainUnavailable as error:
            print(f'demo: {error} (set ROS_DOMAIN_ID)', file=sys.stderr)
            return 1
    import rclpy

    rclpy.init()
    try:
        return _Demo(args.duration, output, not args.no_plots).run()
    finally:
        rclpy.try_shutdown()


class _Demo:
    """The demo's phases, driven from this thread through a client node (the recorder) spun
    by its own executor in this thread, apart from the runner's threads.

    Every phase is measured on the simulated robot's clock (the stamps of the outputs the
    nodes have processed, and sim_robot's ``~/motion_start``), never on the wall clock: on a
    busy machine the simulation runs slower than the wall clock, and the baseline must still
    cover the same whole periods of the motion as the payload recording."""

    def __init__(self, duration: float, output: Path, plots: bool):
        from rclpy.executors import SingleThreadedExecutor

        from robot_dynamics.ros.runner import OutputRecorder

        self.output, self.plots, self.duration = output, plots, duration
        self.recorder = OutputRecorder()
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.recorder)
        self.answers: dict = {}
        self.failure = ''
        self.started = time.monotonic()

    # ------------------------------------------------------------------ phases
    def run(self) -> int:
        from rclpy.parameter import Parameter

        from robot_dynamics.ros.runner import InProcessRunner, build_nodes
        from robot_dynamics.simulation.scenes import legged_robot

        print(
            f'robot_dynamics demo: output in {self.output}; '
            f'ROS_DOMAIN_ID={os.environ["ROS_DOMAIN_ID"]}, discovery '
            f'{os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"]}'
        )
        nodes = build_nodes(
            sim_overrides={'start_with_payload': False},
            dynamics_overrides={
                'report_directory': str(self.output),
                'apply_identified_payload': True,
            },
        )
        sim, dynamics = nodes[0], nodes[1]
        if sim.payload is None:
            print('config/sim_robot.yaml hides no payload (payload_mass is 0): nothing to identify')
            return 1
        self.truth = (sim.payload_link, sim.payload)
        self.periods = arm_phase_periods(self.duration, 1.0 / sim.value('excitation_frequency'))
        # The operator's knowledge: which link carries the payload.
        dynamics.set_parameters([Parameter('payload_link', value=sim.payload_link)])
        (self.output / 'payload_latest.yaml').unlink(
            missing_ok=True
        )  # judge this run's report only
        try:
            with InProcessRunner(nodes):
                self._wait_for_torques()
                self._arm_phases()
            floating = build_nodes(
                sim_overrides={'root_joint': 'floating', 'scene': 'legged'},
                with_dynamics=False,
                # the feet frames are the centres of the foot spheres standing on the floor
                centroidal_overrides={
                    'root_joint': 'floating',
                    'contact_frames': FEET,
                    'contact_height_threshold': 2 * legged_robot('quadruped').foot_radius,
                },
            )
            self.recorder.watch_centroidal()
            starts = self.recorder.motion_starts
            with InProcessRunner(floating):
                self._new_motion(starts)
                # The node may load its model seconds after the motion starts (a busy machine):
                # once it publishes, the script restarts, so the phase shows its standing and
                # weight shifts, never a lifted foot.
                self._wait_for(
                    lambda: self.recorder.centroidal_messages, 'the first centroidal outputs'
                )
                starts = self.recorder.motion_starts
                if not self._call('/sim_robot/restart_motion')[0]:
                    raise DemoStalled('sim_robot could not restart the legged script')
                self._phase('quadruped', self._quadruped_time(), origin=self._new_motion(starts))
        except DemoStalled as error:
            self.failure = str(error)
            print(f'demo: {error}')
        finally:
            self.executor.shutdown()
            self.recorder.destroy_node()
        return self._report()

    def _quadruped_time(self) -> float:
        """Simulated seconds of the quadruped phase: 20 % of the demo, at least 1.5 s, at most
        the legged script's standing and weight shifts after :data:`SETTLE`."""
        from robot_dynamics.simulation.scenes import LEGGED_PHASES

        weight_shifts_end = next(end for name, _, end in LEGGED_PHASES if name == 'weight_shifts')
        return min(max(1.5, 0.2 * self.duration), weight_shifts_end - SETTLE)

    def _arm_phases(self) -> None:
        link = self.truth[0]
        count, period = self.periods
        print(
            f'sim_robot: bundled arm, hidden payload {self.truth[1].mass:g} kg on {link} (not in '
            f'the published robot_description); baseline and payload phases: {count} excitation '
            f'period{"s" if count > 1 else ""} of {period:g} s each'
        )
        self._phase('baseline', count * period + BASELINE_EXTRA, payload=False)
        self.answers['record_baseline'] = self._call('/dynamics/record_baseline')
        self._phase('payload', count * period, payload=True)
        self.answers['identify_payload'] = self._call(
            '/dynamics/identify_payload', timeout=SERVICE_TIMEOUT
        )
        self.answers['validate_inertia'] = self._call(
            '/dynamics/validate_inertia', timeout=SERVICE_TIMEOUT
        )
        self._phase('applied', max(1.0, 0.1 * self.duration))

    def _phase(
        self,
        name: str,
        duration: float,
        payload: Optional[bool] = None,
        origin: Optional[float] = None,
    ) -> None:
        """Run phase ``name`` for ``duration`` s of simulated motion after :data:`SETTLE`,
        timed from ``origin`` (the stamp of the motion's start [s]).

        ``payload`` True/False first restarts the arm's motion with/without the hidden
        payload, then dynamics_node's recording; with neither, the phase goes on from the
        latest processed sample."""
        if payload is not None:
            starts = self.recorder.motion_starts
            answer = self._call('/sim_robot/attach_payload', payload, kind='set_bool')
            print(f'  sim_robot: {answer[1]}')
            if not answer[0]:
                raise DemoStalled(f'sim_robot could not restart the motion: {answer[1]}')
            origin = self._new_motion(starts)
        elif origin is None:
            origin = self.recorder.clock - SETTLE
        end = origin + SETTLE + duration
        self.recorder.start_phase(name, origin + SETTLE, end)
        self._wait_for_clock(origin + SETTLE)
        if payload is not None:
            self._call('/dynamics/clear_payload_buffer')
        print(f'phase "{name}": {duration:.1f} s of simulated motion')
        self._wait_for_clock(end, progress=name)

    # ------------------------------------------------------------------ ROS plumbing
    def _spin(self, duration: float) -> None:
        """Take the recorder's messages for ``duration`` s (wall clock) while the runner's threads
        work."""
        deadline = time.monotonic() + duration
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=max(0.0, min(0.05, deadline - time.monotonic())))

    def _wait_for(self, condition, what: str, timeout: float = 60.0) -> None:
        """Spin until ``condition()``; :class:`DemoStalled` after ``timeout`` s of wall clock."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise DemoStalled(f'waited {timeout:g} s for {what}')
            self._spin(0.05)

    def _wait_for_clock(self, stamp: float, progress: Optional[str] = None) -> None:
        """Spin until the nodes have processed the sample stamped ``stamp`` [s, sim clock].

        Stalled only when the simulated clock stops advancing for :data:`STALL_TIMEOUT` s of
        wall clock: a slow simulation on a busy machine just takes longer."""
        next_report, last_clock, last_advance = (
            time.monotonic() + PROGRESS_PERIOD,
            self.recorder.clock,
            time.monotonic(),
        )
        while self.recorder.clock < stamp:
            self._spin(0.05)
            now = time.monotonic()
            if self.recorder.clock > last_clock:
                last_clock, last_advance = self.recorder.clock, now
            elif now - last_advance > STALL_TIMEOUT:
                raise DemoStalled(
                    f'the simulated clock stopped for {STALL_TIMEOUT:g} s '
                    f'({stamp - self.recorder.clock:.1f} s of motion short of the phase end)'
                )
            if progress and now >= next_report:
                next_report += PROGRESS_PERIOD
                print(f'  {self.recorder.progress(progress)}', flush=True)

    def _new_motion(self, starts: int) -> float:
        """The start stamp [s] of the motion after the ``starts``-th (sim_robot's
        ~/motion_start)."""
        self._wait_for(
            lambda: self.recorder.motion_starts > starts, 'sim_robot to start its motion'
        )
        return self.recorder.motion_start

    def _wait_for_torques(self, timeout: float = 30.0) -> None:
        try:
            self._wait_for(lambda: self.recorder.torque_messages, 'the first torques', timeout)
        except DemoStalled:
            raise DemoStalled(
                'dynamics_node published no torques: is the model loaded? (see the log above)'
            )
        print(
            f'nodes up after {time.monotonic() - self.started:.1f} s: sim_robot, dynamics, '
            'centroidal'
        )

    def _call(
        self, name: str, value: bool = False, kind: str = 'trigger', timeout: float = 30.0
    ) -> tuple:
        """Call a std_srvs Trigger (or SetBool with ``value``) service; returns (success,
        message). A Trigger's answer is printed, and any call's failure to answer."""
        future = self.recorder.call(name, kind, value)
        if future is None:
            print(f'  {name}: FAILED: not available')
            return False, f'service {name} is not available'
        deadline = time.monotonic() + timeout
        while not future.done() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.05)
        if not future.done():
            print(f'  {name}: FAILED: no answer within {timeout:g} s')
            return False, f'service {name} did not answer within {timeout:g} s'
        result = future.result()
        if kind == 'trigger':
            print(f'  {name}: {"ok" if result.success else "FAILED"}: {result.message}')
        return result.success, result.message

    # ------------------------------------------------------------------ results
    def _report(self) -> int:
        check = payload_check(
            self.output / 'payload_latest.yaml', *self.truth, MASS_FLOOR, COM_FLOOR
        )
        print(summary_text(self.recorder, self.answers, check))
        if self.plots:
            for path in write_plots(self.recorder, self.output):
                print(f'plot: {path}')
        answer = self.answers.get('identify_payload', (False, 'not called'))
        passed, reason = verdict(check, answer, self.failure)
        write_result(self.output / 'demo_result.yaml', passed, check, reason)
        words = 'PASS' if passed else f'FAIL: {reason}'
        print(f'result: {words} ({time.monotonic() - self.started:.1f} s)')
        return 0 if passed else 1


STALL_TIMEOUT = 30.0
"""Wall-clock time [s] without a new processed sample after which the demo gives up."""
SERVICE_TIMEOUT = 300.0
"""Wall-clock time [s] the demo waits for ~/identify_payload and ~/validate_inertia: the node
runs them at the lowest priority and a share of the CPU (``service_cpu_share``), so a machine
whose cores are all taken makes them minutes long."""


class DemoStalled(RobotDynamicsError):
    """The simulation or a node stopped making progress: the demo cannot finish a phase."""


def arm_phase_periods(duration: float, period: float) -> tuple:
    """(count, period [s]): whole excitation periods of the baseline and payload phases for a
    demo of ``duration`` s of simulated motion (35 % of it each, rounded, at least one)."""
    return max(1, round(0.35 * duration / period)), period


@dataclass(frozen=True)
class PayloadCheck:
    """Identified payload (the dynamics node's YAML report) against the simulation's truth.

    ``rows``: (label, true, identified, 1σ, tolerance) in kg or m; ``passed`` when every
    |identified − true| ≤ tolerance = 3σ + floor."""

    passed: bool
    reason: str
    rows: tuple
    report: dict


def payload_check(
    report_path: Path, link: str, truth, mass_floor: float, com_floor: float
) -> PayloadCheck:
    """Compare the report at ``report_path`` with the true payload ``truth`` (InertialParameters
    in ``link``'s frame); the floors [kg, m] are added to 3σ."""
    import yaml

    if not report_path.is_file():
        return PayloadCheck(False, f'no payload report at {report_path}', (), {})
    report = yaml.safe_load(report_path.read_text()) or {}
    if not report.get('success'):
        return PayloadCheck(False, f'identification refused: {report.get("reason")}', (), report)
    if report.get('payload_link') != link:
        return PayloadCheck(
            False,
            f'payload identified in {report.get("payload_link")}, truth is in {link}',
            (),
            report,
        )
    rows = [
        (
            'mass [kg]',
            truth.mass,
            report['mass'],
            report['mass_std'],
            3 * report['mass_std'] + mass_floor,
        )
    ]
    for axis, true, value, sigma in zip('xyz', truth.com, report['com'], report['com_std']):
        rows.append((f'CoM {axis} [m]', float(true), value, sigma, 3 * sigma + com_floor))
    failed = [
        label for label, true, value, _, tolerance in rows if not abs(value - true) <= tolerance
    ]
    reason = f'outside 3σ + floor: {", ".join(failed)}' if failed else 'within 3σ + floor'
    return PayloadCheck(not failed, reason, tuple(rows), report)


def verdict(check: PayloadCheck, identify_answer: tuple, failure: str) -> tuple:
    """(passed, reason) of a run: a phase's ``failure`` first, then ~/identify_payload's
    (success, message) answer, then the report's ``check``. A report within its accuracy does
    not pass when the service's own answer failed or never came."""
    if failure:
        return False, failure
    if not identify_answer[0]:
        return False, f'/dynamics/identify_payload: {identify_answer[1]}'
    return check.passed, check.reason


def write_result(path: Path, passed: bool, check: PayloadCheck, reason: str) -> None:
    """The demo's verdict as YAML: ``passed``, the reason, and the identified payload's errors
    (identified − true: ``mass`` [kg], ``com`` [m] per axis, in the payload link's frame)."""
    import yaml

    errors = {}
    if check.rows:
        differences = [float(value - true) for _, true, value, _, _ in check.rows]
        errors = {'mass': differences[0], 'com': differences[1:]}
    result = {'passed': bool(passed), 'reason': reason, 'payload_errors': errors}
    path.write_text(yaml.safe_dump(result, sort_keys=False))


def summary_text(recorder, answers: dict, check: PayloadCheck) -> str:
    """The demo's readable summary (payload, torque errors, validation, CoM/ZMP)."""
    lines = ['', '=' * 78, 'robot_dynamics demo: summary', '=' * 78]
    lines += _payload_lines(check)
    lines += _torque_lines(recorder)
    validation = answers.get('validate_inertia', (False, 'not run'))
    lines += [
        '',
        f'inertia validation (dynamics/validate_inertia): {"ok" if validation[0] else "FAILED"}: '
        f'{validation[1]}',
    ]
    lines += _centroidal_lines(recorder)
    return '\n'.join(lines)


def _payload_lines(check: PayloadCheck) -> list:
    report = check.report
    lines = [
        '',
        'payload: hidden in sim_robot vs identified by dynamics/identify_payload'
        + (
            f' ({report.get("mode")}{", with baseline" if report.get("used_baseline") else ""})'
            if report.get('success')
            else ''
        ),
    ]
    if not check.rows:
        return lines + [f'  {check.reason}']
    lines.append(f'  {"":<12}{"true":>10}{"identified":>12}{"1σ":>10}{"error":>10}{"allowed":>10}')
    for label, true, value, sigma, tolerance in check.rows:
        scale, unit = (1e3, 'g') if label.startswith('mass') else (1e3, 'mm')
        lines.append(
            f'  {label:<12}{true:>10.4f}{value:>12.4f}{sigma:>10.4f}'
            f'{scale * (value - true):>8.2f}{unit:<2}{scale * tolerance:>8.2f}{unit}'
        )
    lines.append(
        f'  -> {check.reason}; residual {report.get("residual_rms_before", math.nan):.3f} → '
        f'{report.get("residual_rms_after", math.nan):.4f} N·m RMS over {report.get("samples")} '
        'samples'
    )
    return lines


def _torque_lines(recorder) -> list:
    phases = (
        ('baseline', 'no payload'),
        ('payload', 'payload, model without'),
        ('applied', 'identified applied'),
    )
    columns = {phase: recorder.values(recorder.external, phase)[1] for phase, _ in phases}
    lines = [
        '',
        'external torque RMS per joint [N·m] (dynamics/external_torques: what the model does not '
        'explain):',
        f'  {"joint":<14}' + ''.join(f'{label:>24}' for _, label in phases),
    ]
    for index, name in enumerate(recorder.joint_names):
        cells = [_rms(columns[phase], index) for phase, _ in phases]
        lines.append(f'  {name:<14}' + ''.join(f'{cell:>24.4f}' for cell in cells))
    lines.append(
        f'  {"samples":<14}' + ''.join(f'{_coverage(recorder, phase):>24}' for phase, _ in phases)
    )
    return lines


def _coverage(recorder, phase: str) -> str:
    """'received/published' external-torque samples of ``phase`` (published: from the stamps
    at the sim's publish period); fewer received means the stream fell behind and dropped."""
    stamps, _ = recorder.values(recorder.external, phase)
    if len(stamps) < 2:
        return f'{len(stamps)}/?'
    period = float(min(stamps[1:] - stamps[:-1]))
    return f'{len(stamps)}/{int(round((stamps[-1] - stamps[0]) / period)) + 1}'


def _rms(values, column: int) -> float:
    import numpy as np

    return float(np.sqrt(np.mean(values[:, column] ** 2))) if len(values) else math.nan


def _centroidal_lines(recorder) -> list:
    import numpy as np

    from robot_dynamics.core.floating_base.support_polygon import SupportPolygon

    _, com = recorder.values(recorder.com, 'quadruped')
    _, zmp = recorder.values(recorder.zmp, 'quadruped')
    lines = [
        '',
        'centroidal_node, quadruped on the MuJoCo floor (world frame odom) [m]:',
        f'  CoM {_ranges(com)}',
        f'  ZMP {_ranges(zmp[:, :2]) if len(zmp) else "none"}',
    ]
    vertices = recorder.polygons.get('quadruped')
    if vertices is not None and len(vertices) >= 3 and len(zmp):
        polygon = SupportPolygon(vertices)
        margins = np.array([polygon.signed_distance(point) for point in zmp])
        lines.append(
            f'  support polygon {len(vertices)} vertices, x {_span(vertices[:, 0])}, y '
            f'{_span(vertices[:, 1])}; ZMP margin min {margins.min():.3f} m, '
            f'{100 * np.mean(margins > 0):.0f} % of ZMP samples inside'
        )
    return lines


def _ranges(values) -> str:
    if not len(values):
        return 'none'
    return ', '.join(
        f'{axis} {_span(values[:, index])}' for index, axis in enumerate('xyz'[: values.shape[1]])
    )


def _span(values) -> str:
    return f'[{values.min():+.3f}, {values.max():+.3f}]'


def write_plots(recorder, output: Path) -> list:
    """torques.png (measured vs model torque per joint over the arm phases) and
    centroidal.png (quadruped CoM/ZMP traces with the support polygon); returns the paths."""
    import matplotlib

    matplotlib.use('Agg')
    from matplotlib import pyplot

    paths = [
        _torque_plot(recorder, output / 'torques.png', pyplot),
        _centroidal_plot(recorder, output / 'centroidal.png', pyplot),
    ]
    return [path for path in paths if path is not None]


def _torque_plot(recorder, path: Path, pyplot) -> Optional[Path]:
    names = recorder.joint_names
    if not names:
        return None
    figure, axes = pyplot.subplots(len(names), 1, figsize=(11, 1.7 * len(names)), sharex=True)
    start = min(stamp for _, stamp, _ in recorder.external)
    colors = {'baseline': '#e8f0ff', 'payload': '#ffeede', 'applied': '#e6f7e6'}
    for phase in ('baseline', 'payload', 'applied'):
        measured_t, measured = recorder.measured(phase)
        model_t, model = recorder.values(recorder.model, phase)
        if not len(measured_t):
            continue
        for index, axis in enumerate(axes):
            axis.axvspan(measured_t[0] - start, measured_t[-1] - start, color=colors[phase], lw=0)
            axis.plot(
                measured_t - start,
                measured[:, index],
                color='k',
                lw=0.7,
                label='measured (joint_states effort)' if phase == 'baseline' else None,
            )
            if len(model_t):
                axis.plot(
                    model_t - start,
                    model[:, index],
                    color='tab:red',
                    lw=0.9,
                    ls='--',
                    label='model (dynamics/inverse_dynamics_torques)'
                    if phase == 'baseline'
                    else None,
                )
        axes[0].text(
            measured_t[0] - start, 1.02, phase, transform=axes[0].get_xaxis_transform(), fontsize=8
        )
    for axis, name in zip(axes, names):
        axis.set_ylabel(f'{name}\n[N·m]', fontsize=8)
    axes[0].legend(loc='upper right', fontsize=7)
    axes[-1].set_xlabel('time [s]')
    figure.suptitle(
        'measured vs model joint torques (baseline: no payload; payload: hidden payload, model '
        'without it; applied: identified payload in the model)',
        fontsize=9,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    pyplot.close(figure)
    return path


def _centroidal_plot(recorder, path: Path, pyplot) -> Optional[Path]:
    import numpy as np

    com_t, com = recorder.values(recorder.com, 'quadruped')
    zmp_t, zmp = recorder.values(recorder.zmp, 'quadruped')
    if not len(com):
        return None
    figure, (plane, traces) = pyplot.subplots(1, 2, figsize=(11, 4.5))
    vertices = recorder.polygons.get('quadruped')
    if vertices is not None and len(vertices):
        closed = np.vstack([vertices, vertices[:1]])
        plane.plot(closed[:, 0], closed[:, 1], color='tab:green', lw=1.5, label='support polygon')
    plane.plot(com[:, 0], com[:, 1], color='tab:orange', lw=1.0, label='CoM ground projection')
    if len(zmp):
        plane.plot(zmp[:, 0], zmp[:, 1], color='tab:red', lw=0.8, label='ZMP')
    plane.set_aspect('equal')
    plane.set_xlabel('x [m] (odom)')
    plane.set_ylabel('y [m] (odom)')
    plane.legend(fontsize=7)
    start = com_t[0]
    for index, axis in enumerate('xy'):
        traces.plot(com_t - start, com[:, index], label=f'CoM {axis}')
        if len(zmp):
            traces.plot(zmp_t - start, zmp[:, index], ls='--', label=f'ZMP {axis}')
    traces.set_xlabel('time [s]')
    traces.set_ylabel('[m]')
    traces.legend(fontsize=7)
    figure.suptitle('quadruped on the MuJoCo floor: CoM and ZMP from centroidal_node', fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    pyplot.close(figure)
    return path
