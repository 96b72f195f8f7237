"""Checks of where a command will write, made before its (possibly long) work starts, so that
a bad path costs a one-line error instead of the result."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from robot_dynamics.core.text_files import file_in_the_way


def check_writable_folder(folder, option: str) -> None:
    """Raise OSError with a one-line reason naming ``option`` unless ``folder`` is an existing,
    writable directory."""
    folder = Path(folder)
    a_file = file_in_the_way(folder)
    if a_file is not None:
        raise NotADirectoryError(
            f'{option}: cannot write there, {a_file} is a file, not a directory'
        )
    if not folder.is_dir():
        raise FileNotFoundError(
            f'{option}: cannot write there, the directory {folder} does not exist'
        )
    if not os.access(folder, os.W_OK):
        raise PermissionError(
            f'{option}: cannot write there, the directory {folder} is not writable'
        )


def check_writable_file(path, option: str, reads: Sequence = ()) -> None:
    """Raise OSError with a one-line reason naming ``option`` unless ``path`` can be written as a
    file (new in a writable directory, or an existing writable file) and is none of the files
    the command ``reads`` (paths; None for an option not given): writing would destroy one."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f'{option} {path}: cannot write there, it is a directory')
    check_writable_folder(path.parent, f'{option} {path}')
    if not path.exists():
        return
    if not os.access(path, os.W_OK):
        raise PermissionError(f'{option} {path}: cannot write there, the file is not writable')
    for source in reads:
        if source is not None and Path(source).exists() and os.path.samefile(path, source):
            named = '' if str(source) == str(path) else f' (as {source})'
            raise FileExistsError(
                f'{option} {path}: cannot write there, the command reads it{named}'
            )
