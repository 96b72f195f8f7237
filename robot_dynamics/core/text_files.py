"""The small configuration files the nodes load (friction, effort offsets, tools, contact
profiles): read with a size bound and as UTF-8, every failure one error that names the file;
their YAML read with numbers as a user writes them."""

from __future__ import annotations

import re

import yaml

from robot_dynamics.core.errors import RobotDynamicsError


class DuplicateKeyError(yaml.constructor.ConstructorError, RobotDynamicsError):
    """A key given twice in one YAML mapping (a yaml.YAMLError, as the loaders catch)."""


class _NumberLoader(yaml.SafeLoader):
    """PyYAML's safe loader, which follows YAML 1.1: there ``1e-5`` and ``2E3`` are strings
    (a float needs a point: ``1.0e-5``). Here they are numbers, as in YAML 1.2 and ROS 2's
    parameter files. A key given twice in one mapping is refused (PyYAML keeps the last)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == 'tag:yaml.org,2002:merge' or not isinstance(
                key_node, yaml.ScalarNode
            ):
                continue  # '<<' merges (an explicit key then overrides), complex keys
            key = self.construct_object(key_node)
            if key in seen:
                raise DuplicateKeyError(
                    'while reading a mapping',
                    node.start_mark,
                    f'found the key {key!r} twice',
                    key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_NumberLoader.add_implicit_resolver(
    'tag:yaml.org,2002:float',
    re.compile(r'^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$'),
    list('-+0123456789'),
)


def load_yaml(text: str):
    """``text`` parsed as YAML (safe: plain data only), ``1e-5`` read as a number, a key given
    twice refused; raises yaml.YAMLError."""
    return yaml.load(text, Loader=_NumberLoader)


def read_small_text(path: str, max_bytes: int, what: str, error: type) -> str:
    """The text of file ``path``; raises ``error`` naming ``what`` (e.g. 'friction file') and
    ``path`` when it cannot be read (the system's reason), is over ``max_bytes`` bytes (never
    read further than that) or is not UTF-8."""
    try:
        with open(path, 'rb') as stream:
            raw = stream.read(max_bytes + 1)
    except OSError as failure:
        raise error(f'{what} {path} cannot be read: {failure.strerror or failure}') from None
    if len(raw) > max_bytes:
        raise error(f'{what} {path} is larger than {max_bytes} bytes')
    try:
        return raw.decode('utf-8')
    except UnicodeDecodeError:
        raise error(f'{what} {path} is not UTF-8 text') from None
