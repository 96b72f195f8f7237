"""The small configuration files the nodes load (friction, effort offsets, tools, contact
profiles): read with a size bound and as UTF-8, every failure one error that names the file."""

from __future__ import annotations


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
