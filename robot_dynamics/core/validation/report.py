"""Validation findings and the report that holds them.

A :class:`Finding` is one defect (or note) about one link; a :class:`ValidationReport` holds
every finding for one description plus per-link properties, and renders them as text, as a
JSON-ready dict, as an exit code for CI and as one :class:`LinkStatus` per link (the shape
of a ``diagnostic_msgs/DiagnosticStatus``). Values are in SI units: kg, m, kg·m².
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

SEVERITIES = ('info', 'warning', 'error')


@dataclass
class Finding:
    """One defect (or note) about one link. ``link`` is '' for whole-description findings.

    ``values``: the numbers that prove it (JSON-ready, SI units); ``suggestion``: the fix,
    possibly with a URDF ``<inertial>`` snippet; ``consumers``: what MuJoCo, Drake,
    PyBullet and pinocchio-based controllers do with it.
    """

    link: str
    check: str
    severity: str
    message: str
    values: dict = field(default_factory=dict)
    suggestion: Optional[str] = None
    consumers: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            'link': self.link,
            'check': self.check,
            'severity': self.severity,
            'message': self.message,
            'values': self.values,
            'suggestion': self.suggestion,
            'consumers': dict(self.consumers),
        }

    def __repr__(self) -> str:
        return f'Finding({self.severity} {self.check} on {self.link!r}: {self.message})'


@dataclass
class ValidationReport:
    """All findings for one description. ``total_mass`` [kg] sums every ``<inertial>``."""

    robot_name: str
    total_mass: float
    findings: list
    link_count: int = 0
    link_properties: dict = field(default_factory=dict)
    """Per link (file order): mass [kg], CoM [m] and principal moments [kg·m²] / axes (link
    frame), smallest relative triangle margin, smallest pseudo-inertia eigenvalue, whether it
    moves. Present for every link, also the ones without findings (for diagnostics)."""

    def count(self, severity: str) -> int:
        return sum(1 for finding in self.findings if finding.severity == severity)

    def worst_severity(self) -> str:
        """'clean', 'info', 'warning' or 'error'."""
        present = [SEVERITIES.index(finding.severity) for finding in self.findings]
        return SEVERITIES[max(present)] if present else 'clean'

    def exit_code(self) -> int:
        """0 clean or info only, 1 warnings, 2 errors (for CI)."""
        return {'clean': 0, 'info': 0, 'warning': 1, 'error': 2}[self.worst_severity()]

    def summary(self) -> str:
        """One line: robot, links, total mass, error and warning counts (or why it was refused)."""
        refused = [finding for finding in self.findings if finding.check == 'parse']
        if refused:
            return f'{self.robot_name or "robot description"}: refused, {refused[0].message}'
        errors, warnings = self.count('error'), self.count('warning')
        return (
            f'{self.robot_name or "robot"}: {self.link_count} links, {self.total_mass:.4g} kg, '
            f'{errors} error{"s" * (errors != 1)}, {warnings} warning{"s" * (warnings != 1)}'
        )

    def findings_for(self, link: str) -> list:
        return [finding for finding in self.findings if finding.link == link]

    def links_with_findings(self) -> list:
        return list(dict.fromkeys(finding.link for finding in self.findings))

    def link_statuses(self) -> list:
        """One :class:`LinkStatus` per link (file order), plus one for link '' if a
        description-level finding exists: what a diagnostics publisher needs, per link."""
        names = list(self.link_properties)
        if any(finding.link not in self.link_properties for finding in self.findings):
            names.insert(0, '')
        return [self._link_status(name) for name in names]

    def _link_status(self, link: str) -> 'LinkStatus':
        findings = sorted(
            self.findings_for(link), key=lambda finding: -SEVERITIES.index(finding.severity)
        )
        values = {
            key: _value_text(value) for key, value in self.link_properties.get(link, {}).items()
        }
        values.update(
            {
                f'finding {index + 1}': f'{finding.severity} {finding.check}: {finding.message}'
                for index, finding in enumerate(findings)
            }
        )
        if not findings:
            mass = self.link_properties.get(link, {}).get('mass', 0.0)
            return LinkStatus(
                link, 'clean', f'ok ({mass:.4g} kg)' if mass else 'ok (massless frame)', values
            )
        more = f' (+{len(findings) - 1} more)' if len(findings) > 1 else ''
        return LinkStatus(
            link, findings[0].severity, f'{findings[0].check}: {findings[0].message}{more}', values
        )

    def to_dict(self) -> dict:
        return {
            'robot': self.robot_name,
            'link_count': self.link_count,
            'total_mass': self.total_mass,
            'worst_severity': self.worst_severity(),
            'summary': self.summary(),
            'findings': [finding.to_dict() for finding in self.findings],
            'links': {name: dict(properties) for name, properties in self.link_properties.items()},
        }

    def to_text(self) -> str:
        """The human-readable report: summary line, then the findings grouped by link, each
        with its numbers, its fix and (for warnings and errors) what each consumer does."""
        lines = [self.summary()]
        for link in self.links_with_findings():
            lines.append('')
            lines.append(f'link "{link}"' if link else 'description')
            for finding in self.findings_for(link):
                lines.extend(_finding_text(finding))
        clean = [name for name in self.link_properties if not self.findings_for(name)]
        if clean:
            lines.append('')
            lines.append(
                f'no findings on {len(clean)} link{"s" * (len(clean) != 1)}: {", ".join(clean)}'
            )
        return '\n'.join(lines)

    def __repr__(self) -> str:
        return f'ValidationReport({self.summary()})'


@dataclass(frozen=True)
class LinkStatus:
    """One link's validation status, shaped for a ``diagnostic_msgs/DiagnosticStatus``:
    ``level`` is 'clean', 'info', 'warning' or 'error' (worst finding), ``message`` one
    line, ``values`` string key/values (link properties in SI units, then each finding)."""

    link: str
    level: str
    message: str
    values: dict


_CONSUMER_NAMES = {
    'mujoco': 'MuJoCo',
    'drake': 'Drake',
    'pybullet': 'PyBullet',
    'pinocchio': 'pinocchio-based controllers',
}


def _finding_text(finding: Finding) -> list:
    lines = [f'  {finding.severity.upper():<8}{finding.check}: {finding.message}']
    indent = ' ' * 10
    for key, value in finding.values.items():
        lines.append(f'{indent}{key}: {_value_text(value)}')
    if finding.suggestion:
        first, *rest = finding.suggestion.splitlines()
        lines.append(f'{indent}fix: {first}')
        lines.extend(f'{indent}  {line}' for line in rest)
    if finding.severity != 'info':
        lines.extend(
            f'{indent}{_CONSUMER_NAMES[key]}: {text}' for key, text in finding.consumers.items()
        )
    return lines


def _value_text(value) -> str:
    if isinstance(value, float):
        return f'{value:.6g}'
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(_value_text(item) for item in value) + ']'
    if isinstance(value, dict):
        return '{' + ', '.join(f'{key}: {_value_text(item)}' for key, item in value.items()) + '}'
    return str(value)
