"""Child processes that leave nothing behind: node processes that end with their parent, and
the Fast DDS shared-memory files of a process removed once no live process uses them.

A process that ends normally removes its Fast DDS files; a killed one cannot, so the instrument
that killed it removes those it owned once no live process uses them
(:mod:`robot_dynamics.ros.dds_files`).

The same holds for the ``psm_*`` blocks of :mod:`multiprocessing.shared_memory` (the nodes'
recording ring buffers): a killed node cannot unlink them, so the instrument that killed it
removes those it mapped once no live process maps or holds them.

Linux only (``prctl``, ``/proc``); elsewhere the processes start plainly and nothing is removed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from typing import Optional, Sequence

from robot_dynamics.ros.child_process import die_with_parent as _die_with_parent
from robot_dynamics.ros.dds_files import (  # noqa: F401  the tests and benches find them here
    SHARED_MEMORY,
    dds_files_in_use,
    dds_files_of,
    existing_dds_files,
    held_open,
    is_dds_file,
    is_segment,
    remove_unused_dds_files,
    unlinked,
)


def start_node_process(command: Sequence[str], **popen_arguments) -> subprocess.Popen:
    """Start ``command`` (any keyword of :class:`subprocess.Popen`) as a child that receives
    SIGTERM when this process ends, however it ends (SIGKILL included).

    The kernel ties the signal to the *thread* that forks: start long-lived children from a
    thread that outlives them (the main thread)."""
    return subprocess.Popen(
        list(command), preexec_fn=_die_with_parent(os.getpid()), **popen_arguments
    )


_STDERR_FILES: dict = {}
"""The stderr file of each process :func:`start_keeping_stderr` started, by pid: anonymous (gone
once closed)."""


def start_keeping_stderr(command: Sequence[str], **popen_arguments) -> subprocess.Popen:
    """:func:`start_node_process` with stderr to an anonymous file (a pipe nobody reads while the
    child runs could fill): read it with :func:`stderr_tail`, close it with
    :func:`forget_stderr` once done."""
    errors = tempfile.TemporaryFile(mode='w+')
    process = start_node_process(command, stderr=errors, **popen_arguments)
    _STDERR_FILES[process.pid] = errors
    return process


def stderr_tail(process: subprocess.Popen, limit: int = 2000) -> str:
    """The last ``limit`` characters ``process`` (of :func:`start_keeping_stderr`) wrote to
    stderr so far; '' for another process or once forgotten."""
    errors = _STDERR_FILES.get(process.pid)
    if errors is None:
        return ''
    errors.seek(0)
    return errors.read().strip()[-limit:]


def forget_stderr(process: subprocess.Popen) -> None:
    """Close the stderr file of ``process`` (of :func:`start_keeping_stderr`)."""
    errors = _STDERR_FILES.pop(process.pid, None)
    if errors is not None:
        errors.close()


@contextlib.contextmanager
def busy_cores(count: int):
    """``count`` plain ``while True: pass`` processes (normal priority) competing for the CPU
    while the block runs; stopped on exit."""
    competitors = [
        start_node_process([sys.executable, '-c', 'while True: pass']) for _ in range(count)
    ]
    try:
        yield competitors
    finally:
        for process in competitors:
            stop_node_process(process)


def stop_node_process(process: subprocess.Popen, timeout: float = 15.0) -> list:
    """SIGTERM ``process`` (SIGKILL after ``timeout`` seconds: an orderly end takes seconds on a
    busy machine), wait for it, and remove the shared-memory files it left; returns their names."""
    owned = _shared_memory_of(process.pid) if process.poll() is None else (set(), set())
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)
    return _remove_left_behind(*owned)


def kill_node_process(process: subprocess.Popen, timeout: float = 5.0) -> list:
    """SIGKILL ``process`` (a crash), wait for it, and remove the shared-memory files it left (a
    killed process cannot; its DDS port files are left to the end of the run, see
    :func:`remove_unused_dds_files`); returns their names."""
    owned = _shared_memory_of(process.pid) if process.poll() is None else (set(), set())
    children = descendants(process.pid)
    process.kill()
    process.wait(timeout=timeout)
    _wait_ended(children, timeout)  # its workers, which map its blocks, end with it
    return _remove_left_behind(*owned)


def _wait_ended(pids: list, timeout: float) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(
        _parent_pid(pid) is not None and not _is_zombie(pid) for pid in pids
    ):
        time.sleep(0.05)


def python_shared_memory_of(pid: int) -> set:
    """Names of the :mod:`multiprocessing.shared_memory` blocks (``psm_*``) process ``pid`` maps
    or holds open."""
    return {name for name in _mapped(pid) | held_open(pid) if name.startswith('psm_')}


def _shared_memory_of(pid: int) -> tuple:
    return dds_files_of(pid), python_shared_memory_of(pid)


def _remove_left_behind(dds_files: set, python_blocks: set) -> list:
    removed = remove_unused_dds_files(dds_files, ports=False)
    return removed + unlinked(unheld_python_blocks(python_blocks))


def unheld_python_blocks(names, ignore_pid: Optional[int] = None) -> set:
    """The :mod:`multiprocessing.shared_memory` blocks among ``names`` that exist and that no
    process (other than ``ignore_pid``) maps or holds open."""
    blocks = {name for name in names if name.startswith('psm_')}
    blocks = {name for name in blocks if (SHARED_MEMORY / name).exists()}
    if blocks:
        for entry in os.scandir('/proc'):
            if entry.name.isdigit() and int(entry.name) != ignore_pid:
                blocks -= python_shared_memory_of(int(entry.name))
    return blocks


def descendants(pid: int) -> list:
    """Process ids of all live descendants of ``pid`` (from the parent ids in /proc)."""
    children: dict = {}
    for entry in os.scandir('/proc'):
        if entry.name.isdigit():
            parent = _parent_pid(int(entry.name))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry.name))
    found, pending = [], [pid]
    while pending:
        for child in children.get(pending.pop(), ()):
            found.append(child)
            pending.append(child)
    return found


def _parent_pid(pid: int) -> Optional[int]:
    try:
        with open(f'/proc/{pid}/stat', encoding='ascii', errors='replace') as stat:
            # The command name (2nd field) may contain spaces and parentheses: split after its ')'.
            return int(stat.read().rsplit(')', 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _mapped(pid: int) -> set:
    """Names of the files in :data:`SHARED_MEMORY` process ``pid`` maps."""
    names = set()
    prefix = f'{SHARED_MEMORY}/'
    try:
        with open(f'/proc/{pid}/maps', encoding='utf-8', errors='replace') as maps:
            for line in maps:
                fields = line.rstrip('\n').split(maxsplit=5)
                if len(fields) == 6 and fields[5].startswith(prefix):
                    names.add(fields[5][len(prefix) :].removesuffix(' (deleted)'))
    except OSError:
        pass
    return names


class DdsFileTracker:
    """Records, every ``period`` seconds in a background thread, the Fast DDS files used by process
    ``root`` (default: this one) and its descendants, so that those left behind when they have
    ended can be listed (:meth:`leftovers`) and removed (:meth:`remove_leftovers`) without
    touching any other run's files."""

    def __init__(self, root: Optional[int] = None, period: float = 0.5):
        import threading

        self.root = os.getpid() if root is None else root
        self.seen: set = set()
        self._period = period
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name='dds-file-tracker', daemon=True)
        self._thread.start()

    def sample(self) -> None:
        for pid in (self.root, *descendants(self.root)):
            self.seen |= dds_files_of(pid)

    def _run(self) -> None:
        while not self._stopped.is_set():
            self.sample()
            self._stopped.wait(self._period)

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5.0)

    def leftovers(self) -> set:
        """Files seen in use by the tracked processes that exist but no live process uses."""
        present = self.seen & existing_dds_files()
        return present - dds_files_in_use() if present else set()

    def remove_leftovers(self) -> list:
        return remove_unused_dds_files(self.leftovers())


def stop_stray_node_processes(root: int, timeout: float = 5.0) -> list:
    """Stop (SIGTERM, then SIGKILL) every live ROS process (``--ros-args`` or ``robot_dynamics``
    on its command line) descending from ``root``, removing the DDS files it leaves; returns
    their command lines."""
    stray = []
    for pid in descendants(root):
        command = _command_line(pid)
        if '--ros-args' in command or 'robot_dynamics' in command:
            owned = _shared_memory_of(pid)
            _end(pid, timeout)
            _remove_left_behind(*owned)
            stray.append(command)
    return stray


def _command_line(pid: int) -> str:
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as cmdline:
            return cmdline.read().replace(b'\0', b' ').decode('utf-8', 'replace').strip()
    except OSError:
        return ''


def _end(pid: int, timeout: float) -> None:
    import time

    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if _parent_pid(pid) is None or _is_zombie(pid):
                return
            time.sleep(0.05)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f'/proc/{pid}/stat', encoding='ascii', errors='replace') as stat:
            return stat.read().rsplit(')', 1)[1].split()[0] == 'Z'
    except (OSError, IndexError):
        return True
