"""The Fast DDS shared-memory files of a process, and their removal once no live process uses
them (a process that does not end in order cannot remove its own).

Fast DDS (the default rmw here) keeps each participant's shared-memory transport in
``/dev/shm``: a segment ``fastdds_<random id>`` (mapped) with its lock file ``…_el`` (held open),
and per port ``fastdds_port<N>`` (mapped), ``…_el`` and ``sem.fastdds_port<N>_mutex``. The
names carry no process id; readers map the segments of the writers they hear from, and a
port file may be shared by several listeners. The owner of a segment and each listener on a
port hold its ``…_el`` file open (Fast DDS's own liveness lock). So what a process owns is read
from ``/proc/<pid>/fd`` while it lives, and after it ended only those of its files that no live
process holds open are removed (a mapping alone, a reader's, keeps nothing alive): another
run's files are never touched. Linux only (``/proc``); elsewhere nothing is found.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

SHARED_MEMORY = Path('/dev/shm')
DDS_PREFIXES = ('fastdds_', 'fastrtps_', 'fast_datasharing_', 'sem.fastdds_', 'sem.fastrtps_')
"""Name prefixes of the Fast DDS (and older Fast RTPS) files in :data:`SHARED_MEMORY`."""


def is_dds_file(name: str) -> bool:
    return name.startswith(DDS_PREFIXES)


def is_segment(name: str) -> bool:
    """A participant's own segment or its lock file (not a port file, which may be shared)."""
    return is_dds_file(name) and '_port' not in name and not name.startswith('sem.')


def dds_files_of(pid: int) -> set:
    """Names (in :data:`SHARED_MEMORY`) of the Fast DDS files process ``pid`` owns: those it holds
    open (the lock files of its segments and of the ports it listens on) with the segment or port
    file, lock file and port mutex of each (empty when the process is gone)."""
    names = set()
    for name in held_open(pid):
        if is_dds_file(name):
            names.update(_with_companions(name))
    return names


def dds_files_in_use() -> set:
    """Names of the Fast DDS files some live process owns (:func:`dds_files_of`)."""
    names = set()
    for entry in os.scandir('/proc'):
        if entry.name.isdigit():
            names |= dds_files_of(int(entry.name))
    return names


def existing_dds_files() -> set:
    try:
        return {name for name in os.listdir(SHARED_MEMORY) if is_dds_file(name)}
    except OSError:
        return set()


def remove_unused_dds_files(names: Iterable[str], ports: bool = True) -> list:
    """Remove those of ``names`` that still exist and that no live process uses; returns them.

    ``ports=False`` keeps the port files: a port may be shared with other runs, and one of them
    may be opening it right now (the gap between creating a port file and locking it), so port
    files are best removed once, when a run ends, rather than after each process."""
    candidates = {name for name in names if ports or is_segment(name)} & existing_dds_files()
    if not candidates:
        return []
    return unlinked(candidates - dds_files_in_use())


def unlinked(names: Iterable[str]) -> list:
    """Remove ``names`` from :data:`SHARED_MEMORY`; returns those removed (a name another
    process removed meanwhile is skipped)."""
    removed = []
    for name in sorted(names):
        try:
            (SHARED_MEMORY / name).unlink()
            removed.append(name)
        except OSError:
            pass
    return removed


def _with_companions(name: str) -> tuple:
    base = name[len('sem.') :] if name.startswith('sem.') else name
    base = base[: -len('_el')] if base.endswith('_el') else base
    base = base[: -len('_mutex')] if base.endswith('_mutex') else base
    companions = (base, f'{base}_el')
    return companions + (f'sem.{base}_mutex',) if '_port' in base else companions


def held_open(pid: int) -> set:
    """Names of the files in :data:`SHARED_MEMORY` process ``pid`` has open file descriptors on."""
    names = set()
    prefix = f'{SHARED_MEMORY}/'
    try:
        for fd in os.scandir(f'/proc/{pid}/fd'):
            try:
                target = os.readlink(fd.path)
            except OSError:
                continue
            if target.startswith(prefix):
                names.add(target[len(prefix) :].removesuffix(' (deleted)'))
    except OSError:
        pass
    return names
