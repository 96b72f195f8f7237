"""The package's import directions (docs/architecture.md): core never imports ROS or the shells,
the core folders depend on each other in one order, nothing imports the instruments."""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / 'robot_dynamics'
CORE_ORDER = [
    'errors',
    'model',
    'dynamics',
    'streams',
    'floating_base',
    'identification',
    'contact',
]
CORE_ALLOWED = {folder: set(CORE_ORDER[:index]) for index, folder in enumerate(CORE_ORDER)}
CORE_ALLOWED['validation'] = {'errors', 'model'}


def imported_modules(path: pathlib.Path) -> set:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def core_folder(module: str) -> str:
    return module.split('.')[2]


def package_files(folder: str):
    return sorted((PACKAGE / folder).rglob('*.py'))


@pytest.mark.parametrize(
    'path', package_files('core'), ids=lambda path: str(path.relative_to(PACKAGE))
)
def test_core_imports_no_ros_and_only_lower_core_folders(path):
    own = path.relative_to(PACKAGE / 'core').parts[0].removesuffix('.py')
    for module in imported_modules(path):
        assert not module.startswith(
            (
                'rclpy',
                'robot_dynamics.ros',
                'robot_dynamics.commands',
                'robot_dynamics.instruments',
                'robot_dynamics.simulation',
            )
        ), f'{path.name} imports {module}'
        if module.startswith('robot_dynamics.core.'):
            target = core_folder(module)
            assert target == own or target in CORE_ALLOWED[own], (
                f'{own}/{path.name} imports {module}'
            )


@pytest.mark.parametrize('folder', ['core', 'ros', 'commands'])
def test_only_the_cli_and_tests_import_the_instruments(folder):
    for path in package_files(folder):
        assert not any(
            module.startswith('robot_dynamics.instruments') for module in imported_modules(path)
        ), path


def test_ros_never_imports_the_commands():
    for path in package_files('ros'):
        assert not any(
            module.startswith('robot_dynamics.commands') for module in imported_modules(path)
        ), path


def test_every_core_folder_is_placed_in_the_order():
    folders = {
        path.name
        for path in (PACKAGE / 'core').iterdir()
        if path.is_dir() and path.name != '__pycache__'
    }
    modules = {path.stem for path in (PACKAGE / 'core').glob('*.py') if path.stem != '__init__'}
    assert folders | modules <= set(CORE_ALLOWED)


@pytest.mark.parametrize(
    'path', package_files('simulation'), ids=lambda path: str(path.relative_to(PACKAGE))
)
def test_simulation_uses_the_core_and_no_ros_nor_shells(path):
    for module in imported_modules(path):
        assert not module.startswith(
            ('rclpy', 'robot_dynamics.ros', 'robot_dynamics.commands', 'robot_dynamics.instruments')
        ), f'{path.name} imports {module}'
