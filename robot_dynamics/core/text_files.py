"""The small configuration files the nodes load (friction, effort offsets, tools, contact
profiles): read with a size bound and as UTF-8, every failure one error that names the file;
their YAML read with numbers as a user writes them; and the files the project writes, each
replaced whole or not at all."""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Optional

import yaml

from robot_dynamics.core.errors import RobotDynamicsError


class FileWriteError(RobotDynamicsError):
    """A file that could not be written (the file named, the system's reason)."""


class YamlTextError(yaml.YAMLError, RobotDynamicsError):
    """Text that is not YAML, or a key given twice in one mapping, in one line: what is wrong
    and where (a yaml.YAMLError, as the loaders catch)."""


class _DuplicateKeyError(yaml.constructor.ConstructorError, RobotDynamicsError):
    """A key given twice in one mapping, while loading (then a :class:`YamlTextError`)."""


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
                raise _DuplicateKeyError(
                    None, None, f'found the key {key!r} twice', key_node.start_mark
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
    twice refused; raises :class:`YamlTextError` (a yaml.YAMLError) naming the line and column."""
    try:
        return yaml.load(text, Loader=_NumberLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f' (line {mark.line + 1}, column {mark.column + 1})' if mark else ''
        words = ', '.join(part for part in (error.context, error.problem) if part)
        raise YamlTextError(f'{words}{where}') from None
    except (yaml.YAMLError, ValueError) as error:  # a character YAML does not allow, a bad !!tag
        raise YamlTextError(' '.join(str(error).split())) from None


def read_small_text(path: str, max_bytes: int, what: str, error: type) -> str:
    """The text of file ``path``; raises ``error`` naming ``what`` (e.g. 'friction file') and
    ``path`` when it cannot be read (the system's reason), is over ``max_bytes`` bytes (never
    read further than that) or is not UTF-8."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block, /dev/zero never end
            raise error(f'{what} {path} is not a regular file')
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


def file_in_the_way(folder) -> Optional[Path]:
    """The file (not a folder) that ``folder`` or one of its parents is, which keeps anything
    from being written under it; None when there is none."""
    folder = Path(folder)
    return next((part for part in (folder, *folder.parents) if part.is_file()), None)


def yaml_scalar(text: str) -> str:
    """``text`` as a one-line YAML scalar that :func:`load_yaml` reads back as the same string:
    as it is when that holds for a plain name, else double-quoted (``on``, ``1.5``, ``null``,
    ``a: b`` and ``j #2`` are not names to YAML)."""
    if re.fullmatch(r'[A-Za-z_][A-Za-z0-9_./-]*', text) and load_yaml(text) == text:
        return text
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def write_text_atomic(path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all: into a new file beside it, then
    renamed over it, so a full disk or a crash never leaves a cut-off file where the old one
    was. Raises :class:`FileWriteError` naming ``path``."""
    target = Path(path)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f'.{target.name}.', dir=target.parent)
    except OSError as failure:
        raise FileWriteError(f'{target} cannot be written: {failure.strerror or failure}') from None
    try:
        with os.fdopen(handle, 'w', encoding='utf-8') as stream:
            stream.write(text)
        mode = stat.S_IMODE(os.stat(target).st_mode) if target.exists() else 0o644
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except OSError as failure:
        Path(temporary).unlink(missing_ok=True)
        raise FileWriteError(f'{target} cannot be written: {failure.strerror or failure}') from None
