"""Drake as a second judge of a URDF: what pydrake's parser and MultibodyPlant do with it.

:func:`judge_file` loads a file twice with Drake's URDF parser:

* as a Drake user loads it (:func:`geometry_refusal`): a MultibodyPlant registered with a
  SceneGraph and a package map for ``package://`` URIs, finalized; this load reads the meshes;
* for its inertial parameters (:func:`judge_inertials`): a MultibodyPlant with no SceneGraph
  (no mesh is read), every root link welded to the world (a fixed base, as the validator and
  MuJoCo's URDF importer assume), finalized; a default context; the mass matrix M(q) at the
  default positions; then :data:`SIMULATED_SECONDS` of simulation with Drake's default
  discrete time step.

Drake logs through spdlog, which pydrake forwards to the Python logger ``drake``; the
judge captures those records (they are not printed) and maps each one by its line number to
the ``<link>`` or ``<joint>`` element it is about (a joint's messages go to its child link).
Drake stops at the first refusal. Like the MuJoCo judge, each refused element is neutralised
and the load repeated, which lists every refused link: a ``<mimic>`` the parser refuses is
removed, and the joint of a body the simulation refuses is made fixed (so a massless chain is
refused link by link, from its tip).
"""

from __future__ import annotations

import contextlib
import logging
import re
import xml.parsers.expat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

SIMULATED_SECONDS = 0.05
"""Simulated time [s] per file: 50 steps of Drake's default 1 ms discrete step."""

SINGULAR_MASS_MATRIX = 1e-12
"""λmin(M)/λmax(M) at or below this: M(q) is singular to double precision."""

_LOCATED = re.compile(r':(\d+): (warning|error): ', re.MULTILINE)
_REFUSED_BODY = re.compile(r'ensure body (\S+) ')
_NAMED_JOINT = re.compile(r"Joint '([^']+)'")
_MIMICKED_JOINT = re.compile(r"mimic joint '([^']+)'")
_JOINT_TYPE = re.compile(r'''(<joint\b[^>]*?\btype\s*=\s*["'])[^"']*(["'])''')
_MIMIC = re.compile(r'<mimic\b[^>]*?(/>|>.*?</mimic\s*>)', re.DOTALL)


@dataclass(frozen=True)
class DrakeVerdict:
    """What Drake did with one URDF.

    ``refused``: link → Drake's message for every link Drake refuses (the key ``''`` when it
    refuses the whole file without naming a link); ``warned``: link → Drake's warnings about
    the link's inertial parameters; ``other_warnings``: how many other warnings Drake gave
    (unsupported tags, joint friction, transmissions); ``geometry_refusal``: why Drake refuses
    the file when it also reads its meshes ('' if it loads); ``mass_matrix_eigenvalues``:
    smallest and largest eigenvalue of M(q) at the default positions [kg, kg·m²] (None without
    degrees of freedom or when the plant was not built)."""

    refused: dict = field(default_factory=dict)
    warned: dict = field(default_factory=dict)
    other_warnings: int = 0
    geometry_refusal: str = ''
    mass_matrix_eigenvalues: Optional[tuple] = None

    @property
    def mass_matrix_singular(self) -> bool:
        if self.mass_matrix_eigenvalues is None:
            return False
        smallest, largest = self.mass_matrix_eigenvalues
        return largest <= 0.0 or smallest <= SINGULAR_MASS_MATRIX * largest

    def summary(self) -> str:
        parts = []
        if '' in self.refused:
            parts.append(f'refuses the file: {self.refused[""]}')
        links = sorted(set(self.refused) - {''})
        if links:
            parts.append(f'refuses {len(links)} link{"s" * (len(links) != 1)}')
        if self.warned:
            parts.append(f'warns on {len(self.warned)} link{"s" * (len(self.warned) != 1)}')
        if self.mass_matrix_singular:
            parts.append('M(q) singular')
        return ', '.join(parts) or 'simulates'


@dataclass(frozen=True)
class _Element:
    kind: str
    name: str
    first_line: int
    last_line: int
    child: str = ''

    @property
    def link(self) -> str:
        """The link a message about this element is reported on."""
        return self.name if self.kind == 'link' else self.child


def judge_file(path, package_paths: dict) -> DrakeVerdict:
    """Drake's verdict on the URDF at ``path`` (``package_paths``: ROS package name → directory)."""
    text = Path(path).read_text(encoding='utf-8')
    verdict = judge_inertials(text)
    return DrakeVerdict(
        verdict.refused,
        verdict.warned,
        verdict.other_warnings,
        geometry_refusal(path, package_paths),
        verdict.mass_matrix_eigenvalues,
    )


def geometry_refusal(path, package_paths: dict) -> str:
    """Why Drake refuses to load the file with its geometry ('' if it loads and finalizes)."""
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import AddMultibodyPlant, MultibodyPlantConfig
    from pydrake.systems.framework import DiagramBuilder

    builder = DiagramBuilder()
    plant, _ = AddMultibodyPlant(MultibodyPlantConfig(), builder)
    parser = Parser(plant)
    for name, directory in package_paths.items():
        if not parser.package_map().Contains(name):
            parser.package_map().Add(name, str(directory))
    with captured_drake_log():
        try:
            parser.AddModels(str(path))
            plant.Finalize()
        except RuntimeError as error:
            return _short(str(error))
    return ''


def judge_inertials(text: str) -> DrakeVerdict:
    """Drake's verdict on the inertial parameters of a URDF text (geometry not read), every
    refused link listed (see the module docstring)."""
    elements = _elements(text)
    joints = {element.name: element for element in elements if element.kind == 'joint'}
    moved_by = {element.child: element for element in joints.values()}
    refused: dict = {}
    welded: set = set()  # joints made fixed here: a follower's refusal to mimic them is ours
    eigenvalues = None
    while True:
        with captured_drake_log() as records:
            try:
                plant = _welded_plant(text)
            except (RuntimeError, SystemExit) as error:  # a failed internal condition: SystemExit
                message = str(error)
                joint = joints.get(next(iter(_NAMED_JOINT.findall(message)), ''))
                edited = (
                    _without_mimic(text, joint) if joint and joint.link not in refused else None
                )
                if edited is None:
                    refused[''] = _short(message)
                    return DrakeVerdict(refused, *_warnings(records, elements))
                if not welded.intersection(_MIMICKED_JOINT.findall(message)):
                    refused[joint.link] = _short(message)
                text = edited
                continue
            context = plant.CreateDefaultContext()
            if eigenvalues is None and plant.num_velocities() > 0:
                moments = np.linalg.eigvalsh(plant.CalcMassMatrix(context))
                eigenvalues = (float(moments[0]), float(moments[-1]))
            refusal = _simulation_refusal(plant, context)
        warned, others = _warnings(records, elements)
        body = next(iter(_REFUSED_BODY.findall(refusal)), '')
        edited = _welded(text, moved_by[body]) if body in moved_by and body not in refused else None
        if refusal:
            refused[body if edited else ''] = _short(refusal)
        if edited is None:
            return DrakeVerdict(refused, warned, others, mass_matrix_eigenvalues=eigenvalues)
        welded.add(moved_by[body].name)
        text = edited


def _welded_plant(text: str):
    """A finalized plant of ``text`` with its root links welded to the world."""
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant, MultibodyPlantConfig

    plant = MultibodyPlant(MultibodyPlantConfig().time_step)
    models = Parser(plant).AddModelsFromString(text, 'urdf')
    children = {
        plant.get_joint(index).child_body().index()
        for model in models
        for index in plant.GetJointIndices(model)
    }
    for model in models:
        for index in plant.GetBodyIndices(model):
            if index not in children:
                plant.WeldFrames(plant.world_frame(), plant.get_body(index).body_frame())
    plant.Finalize()
    return plant


def _simulation_refusal(plant, context) -> str:
    """Drake's message if it refuses to simulate :data:`SIMULATED_SECONDS`, else ''."""
    from pydrake.systems.analysis import Simulator

    try:
        Simulator(plant, context).AdvanceTo(SIMULATED_SECONDS)
    except RuntimeError as error:
        return str(error)
    return ''


def _warnings(records: list, elements: list) -> tuple:
    """({link: [Drake's warnings about its inertia]}, number of other warnings)."""
    warned: dict = {}
    others = 0
    for level, message in records:
        element = _element_at(elements, _error_line(message))
        if level >= logging.WARNING and 'inertia' in message and element is not None:
            warned.setdefault(element.link, []).append(_short(message))
        elif level >= logging.WARNING:
            others += 1
    return warned, others


@contextlib.contextmanager
def captured_drake_log():
    """Collect Drake's log records as (level, message) pairs instead of printing them.

    pydrake sends Drake's spdlog output to the Python logger ``drake``; while this context is
    open a handler on that logger keeps the records and they do not propagate to the root."""
    logger = logging.getLogger('drake')
    records: list = []
    handler = _ListHandler(records)
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield records
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


class _ListHandler(logging.Handler):
    def __init__(self, records: list):
        super().__init__(logging.DEBUG)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.levelno, record.getMessage()))


def _elements(text: str) -> list:
    """The ``<link>`` and ``<joint>`` elements directly under ``<robot>``, with their lines."""
    elements, stack = [], []
    parser = xml.parsers.expat.ParserCreate()

    def start(tag, attributes):
        stack.append([tag, attributes.get('name', ''), parser.CurrentLineNumber, ''])
        if tag == 'child' and len(stack) >= 2 and stack[-2][0] == 'joint':
            stack[-2][3] = attributes.get('link', '')

    def end(tag):
        tag, name, first, child = stack.pop()
        if tag in ('link', 'joint') and len(stack) == 1:
            elements.append(_Element(tag, name, first, parser.CurrentLineNumber, child))

    parser.StartElementHandler, parser.EndElementHandler = start, end
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError:
        return elements
    return elements


def _element_at(elements: list, line: Optional[int]) -> Optional[_Element]:
    if line is None:
        return None
    return next(
        (element for element in elements if element.first_line <= line <= element.last_line), None
    )


def _error_line(message: str) -> Optional[int]:
    match = _LOCATED.search(message)
    return int(match.group(1)) if match else None


def _without_mimic(text: str, joint: _Element) -> Optional[str]:
    """``text`` with the ``<mimic>`` of a joint element blanked (line numbers kept), or None."""

    def blank(span: str) -> tuple:
        return _MIMIC.subn(lambda match: re.sub(r'[^\n]', ' ', match.group(0)), span)

    return _edited(text, joint, blank)


def _welded(text: str, joint: _Element) -> Optional[str]:
    """``text`` with a joint element made fixed (and its ``<mimic>`` blanked), or None."""

    def fixed(span: str) -> tuple:
        span, count = _JOINT_TYPE.subn(r'\g<1>fixed\g<2>', span, count=1)
        return _MIMIC.subn(lambda match: re.sub(r'[^\n]', ' ', match.group(0)), span)[0], count

    return _edited(text, joint, fixed)


def _edited(text: str, element: _Element, edit) -> Optional[str]:
    """``text`` with ``edit`` (span → (new span, count)) applied to an element's lines, or None
    if it changed nothing. Line numbers are kept."""
    lines = text.split('\n')
    span, count = edit('\n'.join(lines[element.first_line - 1 : element.last_line]))
    if count == 0:
        return None
    return '\n'.join(lines[: element.first_line - 1] + [span] + lines[element.last_line :])


def _short(message: str) -> str:
    """Drake's message on one line, without source locations and with file names for paths."""
    message = re.sub(r'^\S*:\d+: (warning|error): ', '', message.strip())
    message = re.sub(r'Failure at \S+ in ', '', message)
    message = re.sub(r"(?<![:/\w])(?:/[^/\s']+)+/([^/\s']+)", r'\1', message)
    return ' '.join(message.split())


@dataclass(frozen=True)
class DrakeAgreement:
    """A validation report against Drake's verdict, link by link (sorted link names; ``''``
    stands for the whole file). A refusal or warning is *predicted* when a finding (not
    ``info``) on the link has a Drake sentence starting with 'refuses' or 'warns'; a refusal of
    the whole file is matched by any error on ``''`` (a parse, name or transmission error). A
    predicted refusal covers the warnings Drake gives on the way."""

    missed_refusals: list
    wrong_refusals: list
    missed_warnings: list
    wrong_warnings: list

    @property
    def agrees(self) -> bool:
        return not (
            self.missed_refusals
            or self.wrong_refusals
            or self.missed_warnings
            or self.wrong_warnings
        )

    def text(self) -> str:
        parts = [
            f'{label} {", ".join(name or "(file)" for name in names)}'
            for label, names in (
                ('MISSED refusal of', self.missed_refusals),
                ('refusal predicted but not made:', self.wrong_refusals),
                ('MISSED warning on', self.missed_warnings),
                ('warning predicted but not given:', self.wrong_warnings),
            )
            if names
        ]
        return '; '.join(parts) or 'agrees'


def agreement(report, verdict: DrakeVerdict) -> DrakeAgreement:
    """Compare a :class:`~robot_dynamics.core.validation.report.ValidationReport` with Drake."""
    from robot_dynamics.core.validation.consumers import drake_verdict

    predicted: dict = {'refuses': set(), 'warns': set()}
    for finding in report.findings:
        verdict_word = drake_verdict(finding.consumers.get('drake', ''))
        if finding.severity != 'info' and verdict_word in predicted:
            predicted[verdict_word].add(finding.link)
    file_errors = any(
        finding.link == '' and finding.severity == 'error' for finding in report.findings
    )
    refused = set(verdict.refused)
    missed_refusals = refused - predicted['refuses'] - ({''} if file_errors else set())
    wrong_refusals = predicted['refuses'] - refused
    if '' in refused:  # Drake stopped at a file it refuses: its warnings cannot be compared
        return DrakeAgreement(sorted(missed_refusals), sorted(wrong_refusals), [], [])
    return DrakeAgreement(
        sorted(missed_refusals),
        sorted(wrong_refusals),
        sorted(set(verdict.warned) - predicted['warns'] - predicted['refuses']),
        sorted(predicted['warns'] - set(verdict.warned) - refused),
    )
