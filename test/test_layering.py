"""The package's import directions (docs/architecture.md), with no exception list.

The core's folders stand in layers, written once in ``CORE_LAYERS``: a module imports its own
folder and the layers below it, never a sibling of its own layer nor a layer above. Above the
core: ``simulation`` (uses the core, never used by it), then the shells ``ros``, ``commands``
and ``instruments``. No module imports a private name of another module, and no import cycle
joins two modules of the package.
"""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / 'robot_dynamics'
CORE_LAYERS = (
    ('errors',),
    ('model',),
    ('dynamics',),
    ('streams',),
    ('contact', 'floating_base', 'identification', 'validation'),
    ('live',),
)
SHELLS = ('ros', 'commands', 'instruments')


def core_allowed() -> dict:
    """{core folder: the folders it may import}: its own and every folder of a lower layer."""
    allowed = {}
    for index, layer in enumerate(CORE_LAYERS):
        below = {folder for lower in CORE_LAYERS[:index] for folder in lower}
        allowed.update({folder: below | {folder} for folder in layer})
    return allowed


CORE_ALLOWED = core_allowed()


def package_files(folder: str = '') -> list:
    return sorted((PACKAGE / folder).rglob('*.py'))


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def imports(path: pathlib.Path) -> list:
    """(module, names) of every import statement in ``path``, at any depth (function bodies and
    ``TYPE_CHECKING`` blocks included); relative imports resolved."""
    found = []
    package = module_name(path).split('.')
    if path.name != '__init__.py':
        package = package[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.extend((alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = '.'.join(base + ([node.module] if node.module else []))
            found.append((module, tuple(alias.name for alias in node.names)))
    return found


def imported_modules(path: pathlib.Path) -> set:
    return {module for module, _ in imports(path)}


def core_folder(module: str) -> str:
    return module.split('.')[2]


def file_id(path: pathlib.Path) -> str:
    return str(path.relative_to(PACKAGE))


@pytest.mark.parametrize('path', package_files('core'), ids=file_id)
def test_core_imports_no_ros_nor_shells_and_only_its_layer_and_below(path):
    own = path.relative_to(PACKAGE / 'core').parts[0].removesuffix('.py')
    assert own == '__init__' or own in CORE_ALLOWED, f'core/{own} is not placed in CORE_LAYERS'
    for module in imported_modules(path):
        assert not module.startswith(
            ('rclpy', 'robot_dynamics.simulation')
            + tuple(f'robot_dynamics.{shell}' for shell in SHELLS)
        ), f'{file_id(path)} imports {module}'
        if module.startswith('robot_dynamics.core.'):
            assert core_folder(module) in CORE_ALLOWED[own], f'{file_id(path)} imports {module}'


@pytest.mark.parametrize('path', package_files('simulation'), ids=file_id)
def test_simulation_uses_the_core_and_no_ros_nor_shells(path):
    for module in imported_modules(path):
        assert not module.startswith(
            ('rclpy',) + tuple(f'robot_dynamics.{shell}' for shell in SHELLS)
        ), f'{file_id(path)} imports {module}'


@pytest.mark.parametrize('folder', ['core', 'simulation', 'ros', 'commands', 'models'])
def test_only_the_cli_and_tests_import_the_instruments(folder):
    for path in package_files(folder):
        assert not any(
            module.startswith('robot_dynamics.instruments') for module in imported_modules(path)
        ), file_id(path)


def test_ros_never_imports_the_commands():
    for path in package_files('ros'):
        assert not any(
            module.startswith('robot_dynamics.commands') for module in imported_modules(path)
        ), file_id(path)


def test_every_core_folder_and_module_is_placed_in_the_layers():
    core = PACKAGE / 'core'
    entries = {path.name for path in core.iterdir() if path.is_dir() and path.name != '__pycache__'}
    entries |= {path.stem for path in core.glob('*.py') if path.stem != '__init__'}
    assert entries <= set(CORE_ALLOWED)


def test_no_module_imports_a_private_name_of_another():
    for path in package_files():
        for module, names in imports(path):
            private = [name for name in names if name.startswith('_')]
            assert not (module.startswith('robot_dynamics') and private), (
                f'{file_id(path)} imports {private} from {module}'
            )


def test_no_import_cycle_between_modules_of_the_package():
    modules = {module_name(path): path for path in package_files()}
    graph = {
        name: {
            target
            for module, names in imports(path)
            for target in [module, *(f'{module}.{name}' for name in names)]
            if target in modules and target != name and not name.startswith(target + '.')
        }
        for name, path in modules.items()
    }
    cycle = _find_cycle(graph)
    assert cycle is None, 'import cycle: ' + ' → '.join(cycle or [])


def _find_cycle(graph: dict):
    """One cycle of ``graph`` ({node: successors}) as a list of nodes, or None (depth-first)."""
    state, stack = {}, []

    def visit(node):
        state[node] = 'open'
        stack.append(node)
        for successor in sorted(graph[node]):
            if state.get(successor) == 'open':
                return stack[stack.index(successor) :] + [successor]
            if successor not in state:
                found = visit(successor)
                if found:
                    return found
        state[node] = 'done'
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None
