"""Validate every robot of a URDF corpus and compare with MuJoCo, the independent judge.

`robot_dynamics bench validation-corpus [--robots DIR]` runs ``robot_dynamics validate`` on
every ``*.urdf`` under DIR (default: the ``robots`` directory the ``example-robot-data``
PyPI package installs) and loads each file in MuJoCo with its visual and collision geometry
removed and ``balanceinertia="false"``, so MuJoCo judges only the inertial parameters. MuJoCo
stops at the first body it refuses; that body's inertial is replaced by a valid one and the
file compiled again, until it compiles, which lists every refused link.

The table: robot, exit code, errors, warnings, MuJoCo's verdict, and the agreement link by
link (links MuJoCo refuses that carry no error: *missed*; links with an error that MuJoCo
accepts: *beyond MuJoCo*, real defects MuJoCo does not check, such as an inertia larger than
any body inside the link's geometry can have). Targets: every refused link is an error on
that link, the whole corpus within 60 s and no file over 2 s. Both wall-clock and CPU times
are printed; the exit code judges the CPU times, which another job on a shared machine does not
inflate: 0 when the targets are met, 1 otherwise, 2 when there is no corpus.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import re
import sys
import time
import xml.etree.ElementTree as ElementTree
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from robot_dynamics.instruments import drake_judge, pybullet_judge
from robot_dynamics.instruments.drake_judge import DrakeAgreement, DrakeVerdict

CORPUS_SECONDS_TARGET = 60.0
FILE_SECONDS_TARGET = 2.0
_PACKAGE_SHARE = ('cmeel.prefix', 'share', 'example-robot-data')
_VALID_STAND_IN = (1e-3, (1e-4, 1e-4, 1e-4, 0.0, 0.0, 0.0))
"""Mass [kg] and full inertia [kg·m²] put on a refused body so that MuJoCo goes on compiling."""
_ELEMENT_NAME = re.compile(r"Element name '([^']*)'")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--robots',
        metavar='DIR',
        help='validation-corpus: directory searched for *.urdf (default: the example-robot-data '
        'package\'s robots)',
    )


add_bench_arguments = add_arguments
"""The hook :mod:`robot_dynamics.instruments.bench` calls to add this target's options."""


@dataclass
class CorpusRow:
    """One robot file: validator verdict, MuJoCo verdict and their agreement (link names)."""

    robot: str
    exit_code: int
    errors: int
    warnings: int
    seconds: float
    cpu_seconds: float
    error_links: set
    refused: dict = field(default_factory=dict)
    """Link → MuJoCo's message, for every link MuJoCo refuses."""
    judge_failure: str = ''
    """Why MuJoCo refused the file without naming a link ('' if it named links or compiled)."""
    summary: str = ''
    drake: Optional[DrakeVerdict] = None
    """Drake's verdict (None when pydrake is not installed)."""
    drake_agreement: Optional[DrakeAgreement] = None
    pybullet_zeroed: Optional[dict] = None
    """Link → PyBullet's warning, for every link whose inertia PyBullet sets to zero with
    URDF_USE_INERTIA_FROM_FILE (None when pybullet is not installed)."""
    judge_seconds: float = 0.0
    """Wall-clock time [s] of the Drake and PyBullet judges."""

    @property
    def pybullet_unflagged(self) -> list:
        """Links PyBullet zeroes that carry no error."""
        return sorted(set(self.pybullet_zeroed or {}) - self.error_links)

    @property
    def missed(self) -> list:
        return sorted(set(self.refused) - self.error_links)

    @property
    def beyond_mujoco(self) -> list:
        return sorted(self.error_links - set(self.refused) - {''})

    @property
    def mujoco_verdict(self) -> str:
        if self.judge_failure:
            return f'refuses the file: {self.judge_failure}'
        return (
            f'refuses {len(self.refused)} link{"s" * (len(self.refused) != 1)}'
            if self.refused
            else 'compiles'
        )


def default_robots_directory() -> Optional[Path]:
    """The ``robots`` directory of an installed ``example-robot-data`` package, or None."""
    for entry in sys.path:
        candidate = Path(entry, *_PACKAGE_SHARE, 'robots')
        if candidate.is_dir():
            return candidate
    return None


def corpus_files(directory: Path) -> list:
    return sorted(Path(directory).rglob('*.urdf'))


def package_paths_for(directory: Path) -> dict:
    """package:// roots for a corpus: ``example-robot-data`` (its share directory) and each
    ``*_description`` directory under ``directory`` by its own name."""
    directory = Path(directory)
    paths = {path.name: str(path) for path in directory.iterdir() if path.is_dir()}
    paths['example-robot-data'] = str(directory.parent)
    return paths


def evaluate(path: Path, robots_directory: Path) -> CorpusRow:
    """Validate one file (timed) and judge it with MuJoCo, and with Drake and PyBullet when
    they are installed."""
    from robot_dynamics.core.validation.checks import validate_file

    packages = package_paths_for(robots_directory)
    start, cpu_start = time.perf_counter(), time.process_time()
    report = validate_file(path, packages, [str(Path(path).parent), str(robots_directory)])
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    error_links = {finding.link for finding in report.findings if finding.severity == 'error'}
    text = Path(path).read_text(encoding='utf-8')
    refused, failure = mujoco_refusals(text)
    row = CorpusRow(
        str(Path(path).relative_to(robots_directory)),
        report.exit_code(),
        report.count('error'),
        report.count('warning'),
        seconds,
        cpu_seconds,
        error_links,
        refused,
        failure,
        report.summary(),
    )
    start = time.perf_counter()
    if importlib.util.find_spec('pydrake') is not None:
        row.drake = drake_judge.judge_file(path, packages)
        row.drake_agreement = drake_judge.agreement(report, row.drake)
    if importlib.util.find_spec('pybullet') is not None:
        row.pybullet_zeroed = pybullet_judge.judge_inertials(text).zeroed
    row.judge_seconds = time.perf_counter() - start
    return row


def inertial_only_urdf(text: str) -> str:
    """The URDF with every <visual>, <collision> and <mujoco> element removed and a MuJoCo
    compiler element that keeps the inertias as written (``balanceinertia="false"``)."""
    root = ElementTree.fromstring(pybullet_judge.geometry_free_urdf(text))
    for element in root.findall('mujoco'):
        root.remove(element)
    compiler = ElementTree.SubElement(ElementTree.SubElement(root, 'mujoco'), 'compiler')
    compiler.attrib.update(balanceinertia='false', discardvisual='true')
    return ElementTree.tostring(root, encoding='unicode')


def mujoco_refusals(text: str) -> tuple:
    """({link: MuJoCo's message} for every link MuJoCo refuses, a file-level failure or '').

    Each refused body gets a valid stand-in inertial and the file is compiled again."""
    import mujoco

    try:
        inertial_text = inertial_only_urdf(text)
    except ElementTree.ParseError as error:
        return {}, f'not XML ({error})'
    refused: dict = {}
    while True:
        try:
            with _quiet_stdout():
                spec = mujoco.MjSpec.from_string(inertial_text)
        except Exception as error:  # MuJoCo raises ValueError for any file it cannot parse
            return refused, _first_line(error)
        bodies = {body.name: body for body in spec.bodies}
        for name in refused:
            _stand_in(bodies[name])
        try:
            with _quiet_stdout():
                spec.compile()
            return refused, ''
        except Exception as error:
            match = _ELEMENT_NAME.search(str(error))
            if match is None or match.group(1) not in bodies or match.group(1) in refused:
                return refused, _first_line(error)
            refused[match.group(1)] = _first_line(error)


def _stand_in(body) -> None:
    mass, inertia = _VALID_STAND_IN
    body.mass = max(body.mass, mass)
    body.fullinertia = list(inertia)
    body.explicitinertial = True


def _first_line(error: Exception) -> str:
    return (
        str(error).strip().splitlines()[0].removeprefix('Error: ')
        if str(error).strip()
        else type(error).__name__
    )


@contextlib.contextmanager
def _quiet_stdout():
    """MuJoCo prints its parser and compiler warnings (equal joint limits, ignored mimics...)
    to the C standard streams and appends them to MUJOCO_LOG.TXT in the working directory; here
    they go nowhere (the table is what this run prints, and a bench leaves no file behind)."""
    import mujoco

    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    previous_handler = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(_ignore_warning)
    try:
        with open(os.devnull, 'w') as devnull:
            os.dup2(devnull.fileno(), 1)
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        mujoco.set_mju_user_warning(previous_handler)
        for descriptor, copy in zip((1, 2), saved):
            os.dup2(copy, descriptor)
            os.close(copy)


def _ignore_warning(message: str) -> None:
    """MuJoCo's warning handler while a model is judged (see :func:`_quiet_stdout`)."""


def run(args: argparse.Namespace) -> int:
    directory = Path(args.robots) if getattr(args, 'robots', None) else default_robots_directory()
    if directory is None or not directory.is_dir():
        print(
            'bench validation-corpus: no corpus: pip install example-robot-data, or give --robots '
            'DIR',
            file=sys.stderr,
        )
        return 2
    files = corpus_files(directory)
    if not files:
        print(f'bench validation-corpus: no *.urdf under {directory}', file=sys.stderr)
        return 2
    start = time.perf_counter()
    rows = []
    print(
        f'validating {len(files)} files under {directory} (wall-clock targets: read them on an '
        f'idle machine; load average now {os.getloadavg()[0]:.1f})',
        flush=True,
    )
    for path in files:
        rows.append(evaluate(path, directory))
        print(_row_text(rows[-1]), flush=True)
    return _print_totals(rows, time.perf_counter() - start)


def _row_text(row: CorpusRow) -> str:
    agreement = 'agrees' if not row.missed else 'MISSED ' + ', '.join(row.missed)
    if row.beyond_mujoco:
        agreement += '; errors beyond MuJoCo on ' + ', '.join(row.beyond_mujoco)
    if '' in row.error_links:
        agreement += f'; {row.summary}'
    text = (
        f'{row.robot:<58} exit {row.exit_code}  {row.errors:3d} E {row.warnings:3d} W  '
        f'{row.seconds:5.2f} s ({row.cpu_seconds:4.2f} s CPU)  MuJoCo {row.mujoco_verdict}: '
        f'{agreement}'
    )
    if row.drake is not None:
        text += f' | Drake {row.drake.summary()}: {row.drake_agreement.text()}'
        if row.drake.geometry_refusal:
            text += f'; with its meshes Drake refuses the file: {row.drake.geometry_refusal}'
    if row.pybullet_zeroed:
        unflagged = row.pybullet_unflagged
        text += f' | PyBullet zeroes the inertia of {len(row.pybullet_zeroed)} links: ' + (
            'UNFLAGGED ' + ', '.join(unflagged) if unflagged else 'all errors'
        )
    return text


def _print_totals(rows: list, seconds: float) -> int:
    refusing = [row for row in rows if row.refused]
    agreeing = [row for row in refusing if not row.missed]
    refused_links = sum(len(row.refused) for row in rows)
    missed_links = sum(len(row.missed) for row in rows)
    slowest = max(rows, key=lambda row: row.seconds)
    print()
    print(
        f'{len(rows)} files, {sum(row.errors for row in rows)} errors, '
        f'{sum(row.warnings for row in rows)} warnings'
    )
    print(
        f'MuJoCo refuses {refused_links} links in {len(refusing)} files; every one an error on '
        f'that link in {len(agreeing)} of {len(refusing)} files ({missed_links} links missed; '
        'target 0)'
    )
    print(
        f'errors on links MuJoCo accepts: {sum(len(row.beyond_mujoco) for row in rows)} (defects '
        'MuJoCo does not check, such as an inertia no body inside the geometry can have; per file '
        'above)'
    )
    drake_agrees, pybullet_agrees = _print_drake_totals(rows), _print_pybullet_totals(rows)
    cpu_total, cpu_slowest = (
        sum(row.cpu_seconds for row in rows),
        max(row.cpu_seconds for row in rows),
    )
    print(
        f'time {seconds:.1f} s for the corpus (target <= {CORPUS_SECONDS_TARGET:.0f} s; of which '
        f'{sum(row.judge_seconds for row in rows):.1f} s in the Drake and PyBullet judges), '
        f'slowest file {slowest.seconds:.2f} s: {slowest.robot} '
        f'(target <= {FILE_SECONDS_TARGET:.0f} s); validation CPU time {cpu_total:.1f} s, '
        f'slowest file {cpu_slowest:.2f} s'
    )
    wall_met = seconds <= CORPUS_SECONDS_TARGET and slowest.seconds <= FILE_SECONDS_TARGET
    cpu_met = cpu_total <= CORPUS_SECONDS_TARGET and cpu_slowest <= FILE_SECONDS_TARGET
    if not wall_met and cpu_met:
        print(
            'wall-clock times over target with CPU times within it: the machine is shared (load '
            f'average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)'
        )
    met = missed_links == 0 and cpu_met and drake_agrees and pybullet_agrees
    print('targets met' if met else 'targets NOT met')
    return 0 if met else 1


def _print_drake_totals(rows: list) -> bool:
    """Print Drake's totals; True if Drake agrees with the validator on every file."""
    judged = [row for row in rows if row.drake is not None]
    if not judged:
        print('Drake: not installed (pip install drake), not judged')
        return True
    refused = [(row.robot, link) for row in judged for link in row.drake.refused]
    warned = [(row.robot, link) for row in judged for link in row.drake.warned]
    gaps = {
        key: sum(len(getattr(row.drake_agreement, key)) for row in judged)
        for key in ('missed_refusals', 'wrong_refusals', 'missed_warnings', 'wrong_warnings')
    }
    links = [(robot, link) for robot, link in refused if link]
    print(
        f'Drake refuses {len(links)} links in {len({robot for robot, _ in links})} files and '
        f'{len(refused) - len(links)} whole files; missed {gaps["missed_refusals"]}, predicted '
        f'but not made {gaps["wrong_refusals"]} (target 0, 0)'
    )
    print(
        f'Drake warns about the inertia of {len(warned)} links in '
        f'{len({robot for robot, _ in warned})} files; missed {gaps["missed_warnings"]}, '
        f'predicted but not given {gaps["wrong_warnings"]} (target 0, 0)'
    )
    singular = [row.robot for row in judged if row.drake.mass_matrix_singular]
    print(
        f"Drake's M(q) at the default positions is singular in {len(singular)} files"
        + (f': {", ".join(singular)}' if singular else '')
    )
    reasons = Counter(
        _refusal_kind(row.drake.geometry_refusal) for row in judged if row.drake.geometry_refusal
    )
    print(
        f'with their meshes, Drake loads {len(judged) - sum(reasons.values())} of {len(judged)} '
        'files; '
        + '; '.join(f'{count} refused: {reason}' for reason, count in reasons.most_common())
    )
    return all(row.drake_agreement.agrees for row in judged)


def _print_pybullet_totals(rows: list) -> bool:
    """Print PyBullet's totals; True if every link whose inertia it zeroes carries an error."""
    judged = [row for row in rows if row.pybullet_zeroed is not None]
    if not judged:
        print('PyBullet: not installed (pip install pybullet), not judged')
        return True
    unflagged = sum(len(row.pybullet_unflagged) for row in judged)
    print(
        'PyBullet (URDF_USE_INERTIA_FROM_FILE) zeroes the inertia of '
        f'{sum(len(row.pybullet_zeroed) for row in judged)} links in '
        f'{sum(1 for row in judged if row.pybullet_zeroed)} files; without an error on the link: '
        f'{unflagged} (target 0)'
    )
    return unflagged == 0


def _refusal_kind(reason: str) -> str:
    """Drake's refusal without the names in it (a mesh extension is kept, in lower case)."""
    reason = re.sub(r' for geometry data: .*', '', reason)
    return re.sub(
        r"'([^']*)'",
        lambda match: match.group(0).lower() if match.group(1).startswith('.') else "'…'",
        reason,
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog='robot_dynamics bench validation-corpus',
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == '__main__':
    sys.exit(main())
