"""The package's import directions (docs/architecture.md), with no exception list.

Layers are written once, lowest first: ``PACKAGE_LAYERS`` for the package's parts (the core,
the simulation above it, then ros, commands, instruments and the command line) and
``CORE_LAYERS`` for the core's folders. A module imports its own part (folder) and the layers
below it, never a sibling of its own layer nor a layer above; the core and the simulation never
import rclpy. No module imports a private name of another module, and no import cycle joins
two modules of the package.
"""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / 'robot_dynamics'
CORE_LAYERS = (
    ('errors', 'small_algebra'),
    ('text_files',),
    ('model',),
    ('dynamics',),
    ('streams',),
    ('contact', 'floating_base', 'identification', 'validation'),
    ('live',),
)
PACKAGE_LAYERS = (
    ('core', 'models'),
    ('simulation',),
    ('ros',),
    ('commands',),
    ('instruments',),
    ('cli',),
    ('__main__',),
)
"""The package's top-level parts, lowest first (``models``: the bundled URDFs' paths)."""
NO_ROS = ('core', 'models', 'simulation')


def allowed(layers: tuple) -> dict:
    """{part: the parts it may import}: itself and every part of a lower layer."""
    allowed = {}
    for index, layer in enumerate(layers):
        below = {part for lower in layers[:index] for part in lower}
        allowed.update({part: below | {part} for part in layer})
    return allowed


CORE_ALLOWED = allowed(CORE_LAYERS)
PACKAGE_ALLOWED = allowed(PACKAGE_LAYERS)


def package_files(folder: str = '') -> list:
    return sorted((PACKAGE / folder).rglob('*.py'))


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def imports(path: pathlib.Path, type_checking: bool = True) -> list:
    """(module, names) of every import statement in ``path``, at any depth (function bodies
    included, ``if TYPE_CHECKING:`` blocks unless ``type_checking`` is False); relative imports
    resolved."""
    found = []
    package = module_name(path).split('.')
    if path.name != '__init__.py':
        package = package[:-1]
    tree = ast.parse(path.read_text())
    if not type_checking:
        tree.body = [node for node in tree.body if not _is_type_checking_block(node)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = '.'.join(base + ([node.module] if node.module else []))
            found.append((module, tuple(alias.name for alias in node.names)))
    return found


def _is_type_checking_block(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) in (
        'TYPE_CHECKING',
        'typing.TYPE_CHECKING',
    )


def imported_modules(path: pathlib.Path) -> set:
    return {module for module, _ in imports(path)}


def file_id(path: pathlib.Path) -> str:
    return str(path.relative_to(PACKAGE))


def owner(path: pathlib.Path, root: pathlib.Path) -> str:
    """The part (folder or top-level module) of ``root`` that holds ``path``."""
    return path.relative_to(root).parts[0].removesuffix('.py')


def part(module: str, position: int) -> str:
    """The name at ``position`` of a dotted module path (1: package part, 2: core folder)."""
    return module.split('.')[position]


@pytest.mark.parametrize('path', package_files(), ids=file_id)
def test_each_part_imports_only_itself_and_lower_layers(path):
    own = owner(path, PACKAGE)
    if own == '__init__':
        return
    assert own in PACKAGE_ALLOWED, f'{own} is not placed in PACKAGE_LAYERS'
    for module in imported_modules(path):
        if own in NO_ROS:
            assert not module.startswith('rclpy'), f'{file_id(path)} imports {module}'
        if module.startswith('robot_dynamics.'):
            assert part(module, 1) in PACKAGE_ALLOWED[own], f'{file_id(path)} imports {module}'


@pytest.mark.parametrize('path', package_files('core'), ids=file_id)
def test_each_core_folder_imports_only_itself_and_lower_layers(path):
    own = owner(path, PACKAGE / 'core')
    assert own == '__init__' or own in CORE_ALLOWED, f'core/{own} is not placed in CORE_LAYERS'
    for module in imported_modules(path):
        if module.startswith('robot_dynamics.core.'):
            assert part(module, 2) in CORE_ALLOWED[own], f'{file_id(path)} imports {module}'


def test_no_module_imports_a_private_name_of_another():
    for path in package_files():
        for module, names in imports(path):
            private = [name for name in names if name.startswith('_')]
            assert not (module.startswith('robot_dynamics') and private), (
                f'{file_id(path)} imports {private} from {module}'
            )


def test_no_import_cycle_between_modules_of_the_package():
    """Type-only imports (``if TYPE_CHECKING:``) never run, so they close no cycle; they still
    count for the layers above."""
    modules = {module_name(path): path for path in package_files()}
    graph = {
        name: {
            target
            for module, names in imports(path, type_checking=False)
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
