"""Child processes that end with their parent, however the parent ends (SIGKILL included).

Linux asks the kernel for a signal when the parent ends (``prctl(PR_SET_PDEATHSIG)``); the
kernel ties that signal to the *thread* that forks, so a long-lived child must be started
from a thread that outlives it. Elsewhere the child starts plainly.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
from typing import Sequence

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int, niceness: int = 0):
    """A ``preexec_fn``: ask the kernel for SIGTERM when the parent ends (nodes end cleanly on
    SIGTERM), and end at once if the parent is already gone; then add ``niceness`` to the
    child's CPU niceness (before it runs, so that every thread it starts inherits it: on Linux
    a nice value is per thread)."""
    try:
        # Looked up before the fork: the child of a multi-threaded parent must not take the loader's
        # locks.
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux: a plain child
        prctl = None

    def preexec() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
            if os.getppid() != parent_pid:
                os._exit(1)
        if niceness:
            try:
                os.nice(niceness)
            except OSError:
                pass

    return preexec


def start_child_process(
    command: Sequence[str], niceness: int = 0, **popen_arguments
) -> subprocess.Popen:
    """Start ``command`` (any keyword of :class:`subprocess.Popen`) as a child that receives
    SIGTERM when this process (more exactly: the calling thread) ends, ``niceness`` above this
    thread's CPU niceness."""
    return subprocess.Popen(
        list(command), preexec_fn=die_with_parent(os.getpid(), niceness), **popen_arguments
    )
