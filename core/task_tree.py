"""Every path of a task folder checked once, before anything reads it (issue 44).

The loader hashes every file and the file rules read many (`tests/*.py`, `test.sh`, `requirements*.txt`, ...):
a FIFO among them would hang the read, a dangling or looping symlink or an unreadable file would raise an
OSError, and a folder named like a file (`tests/test_x.py/`) would raise IsADirectoryError deep in a rule. Each
becomes an InputFileError naming the path (exit 2), before the first read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from envqa.core.defaults import TASK_SCRIPT_MAX, TASK_SOURCE_MAX
from envqa.core.input_files import InputFileError, check_file

FILE_SUFFIXES = frozenset({".py", ".sh", ".toml", ".md", ".json", ".yaml", ".yml", ".txt", ".cfg", ".ini"})
"""A folder with one of these suffixes sits where the rules expect a file (they glob by suffix)."""
FILE_NAMES = frozenset({"Dockerfile"})
PARSED_LIMITS = {".sh": TASK_SCRIPT_MAX, ".py": TASK_SOURCE_MAX, ".md": TASK_SOURCE_MAX, ".toml": TASK_SOURCE_MAX}
PARSED_LIMITS |= {".yaml": TASK_SOURCE_MAX, ".yml": TASK_SOURCE_MAX}
"""The files the rules parse, with the size each may have: a larger one is refused, not parsed for minutes."""


def _limit(name: str) -> int | None:
    if name == "Dockerfile":
        return TASK_SCRIPT_MAX
    if name.startswith("requirements") and name.endswith(".txt"):  # pip's requirement files: the pin rules read them
        return TASK_SOURCE_MAX
    return PARSED_LIMITS.get(Path(name).suffix.lower())


def _file_like(name: str) -> bool:
    return name in FILE_NAMES or Path(name).suffix.lower() in FILE_SUFFIXES


def _check_entry(path: Path) -> None:
    """A symlink must lead somewhere readable; a folder must not be named like a file; a file must be a
    readable regular file."""
    try:
        st = path.stat()  # follows a symlink
    except OSError:
        check_file(path)  # names it: dangling, a loop, unreadable
        raise InputFileError(path, "unreadable") from None  # not reached: check_file raised
    if stat.S_ISDIR(st.st_mode):
        if _file_like(path.name):
            raise InputFileError(path, "a folder where a regular file should be")
        return
    check_file(path)
    if not os.access(path, os.R_OK):
        raise InputFileError(path, "unreadable: permission denied")
    limit = _limit(path.name)
    if limit is not None and st.st_size > limit:
        raise InputFileError(
            path, f"too large for a task file qa parses ({st.st_size:,} bytes; the limit is {limit:,})"
        )


def check_task_tree(root: Path, ignored: set[str]) -> None:
    """Raise InputFileError for the first path under `root` (folders named in `ignored` skipped) that a reader
    would trip over; symlinked folders are checked, not walked (the loader does not follow them)."""
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in ignored)
        for name in dirnames:
            _check_entry(here / name)
        for name in sorted(filenames):
            _check_entry(here / name)
