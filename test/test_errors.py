"""Every exception the core and the simulation raise on purpose is a RobotDynamicsError, so a
node or a command catches all of them in one clause and tells them apart from a bug."""

import ast
import builtins
import importlib
import pathlib
import typing

import pytest

from robot_dynamics.core.errors import RobotDynamicsError

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / 'robot_dynamics'


def raised_names(path: pathlib.Path) -> list:
    """(line, name) of every ``raise Name(...)`` / ``raise Name`` / ``raise module.Name(...)``;
    bare re-raises are left out."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(target, (ast.Name, ast.Attribute)):
                found.append((node.lineno, ast.unparse(target)))
    return found


def module_of(path: pathlib.Path):
    parts = path.relative_to(PACKAGE.parent).with_suffix('').parts
    return importlib.import_module('.'.join(parts))


def resolve(module, dotted: str):
    """The class ``dotted`` names in ``module``; for a function that builds the error, the class
    its return annotation names; None for a local name."""
    first, *rest = dotted.split('.')
    value = getattr(module, first, getattr(builtins, first, None))
    for part in rest:
        value = getattr(value, part, None)
    if callable(value) and not isinstance(value, type):
        value = typing.get_type_hints(value).get('return')
    return value


FILES = sorted(
    path for folder in ('core', 'simulation') for path in (PACKAGE / folder).rglob('*.py')
)


@pytest.mark.parametrize('path', FILES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_every_raised_error_is_a_robot_dynamics_error(path):
    module = module_of(path)
    for line, name in raised_names(path):
        cls = resolve(module, name)
        if cls is None:  # a local name: an error class passed in, or a caught error re-raised
            continue
        assert isinstance(cls, type) and issubclass(cls, RobotDynamicsError), (
            f'{path.relative_to(PACKAGE)}:{line} raises {name}'
        )


def test_the_scan_resolves_builtin_and_imported_errors_and_error_builders():
    path = PACKAGE / 'core' / 'identification' / 'recording_files.py'
    names = {resolve(module_of(path), name) for _, name in raised_names(path)}
    assert {'RecordingError'} <= {cls.__name__ for cls in names if cls is not None}
    assert resolve(module_of(path), '_not_utf8').__name__ == 'RecordingError'
    assert resolve(module_of(path), 'ValueError') is ValueError
