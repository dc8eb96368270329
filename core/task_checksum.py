"""Harbor's task checksum, computed the way each Harbor version computes it, so an imported trial's recorded
checksum can be held against the task on disk (issue 33: trials of another version are kept, not counted).

The algorithm changed between versions (read from the published wheels, issue 41):
  - Harbor 0.6.x (`harbor/models/task/task.py` 0.6.6): `dirhash(task_dir, "sha256")`, every file, no filter
    (`.harborignore` files are hashed like any other, nothing is left out): `ALGORITHM_ALL_FILES`.
  - Harbor 0.26 (`task.py` + `task/file_filter.py` TaskFileFilter): `dirhash_impl` with a filter that drops
    every `.harborignore` file and what they ignore inside tests/ and solution/: `ALGORITHM_FILTERED`.
A trial whose checksum matches the task under any known algorithm ran this task (the versions between were not
all read: matching any is the comparison of the files themselves, not a guess about the version).

Harbor's `Task.checksum` (harbor/models/task/task.py) is `dirhash_impl(task_dir, "sha256", filter)` from the
`dirhash` package with its default protocol: a file's hash is the sha256 of its bytes; a directory's is the
sha256 of its entries' descriptors, sorted and joined by two NULs, each descriptor being its sorted properties
(`data:<file hash>` or `dirhash:<dir hash>`, and `name:<name>`) joined by one NUL. Empty directories are left
out. Symlinks are followed. `.harborignore` files (Harbor's TaskFileFilter, inside tests/ and solution/) are
honoured for their plain name and glob lines; negations are not (a task using them is reported as not
comparable rather than wrongly different).
"""

from __future__ import annotations

import fnmatch
import hashlib
from pathlib import Path

IGNORE_FILE = ".harborignore"
ALGORITHM_ALL_FILES = "harbor-0.6"
ALGORITHM_FILTERED = "harbor-0.26"
SCOPES = ("tests", "solution")


def _file_hash(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _ignored(rel: str, patterns: list[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(name, p.strip("/")) or fnmatch.fnmatch(rel, p.lstrip("/")) for p in patterns)


def _patterns(root: Path) -> dict[str, list[str]]:
    out = {}
    for scope in SCOPES:
        f = root / scope / IGNORE_FILE
        if f.is_file():
            lines = [ln.strip() for ln in f.read_text(errors="replace").splitlines()]
            if any(ln.startswith("!") for ln in lines):
                raise ValueError(f"{f}: negated .harborignore patterns are not supported")
            out[scope] = [ln for ln in lines if ln and not ln.startswith("#")]
    return out


def _dir_hash(path: Path, root: Path, patterns: dict[str, list[str]] | None) -> str | None:
    """dirhash's default protocol; `patterns` None: no filter at all (Harbor 0.6)."""
    descriptors = []
    for entry in sorted(path.iterdir()):
        rel = entry.relative_to(root).as_posix()
        scope = rel.split("/", 1)[0]
        if patterns is not None and entry.name == IGNORE_FILE:
            continue  # TaskFileFilter._matches: an ignore file is never part of the checksum
        if patterns and scope in patterns and "/" in rel and _ignored(rel.split("/", 1)[1], patterns[scope]):
            continue
        if entry.is_dir():
            sub = _dir_hash(entry, root, patterns)
            if sub is not None:  # empty directories are left out
                descriptors.append("\000".join(sorted([f"dirhash:{sub}", f"name:{entry.name}"])))
        elif entry.is_file():
            descriptors.append("\000".join(sorted([f"data:{_file_hash(entry)}", f"name:{entry.name}"])))
    if not descriptors:
        return None
    return hashlib.sha256("\000\000".join(sorted(descriptors)).encode("utf-8")).hexdigest()


def harbor_task_checksum(task_dir: str | Path, algorithm: str = ALGORITHM_FILTERED) -> str | None:
    """The checksum Harbor records as `task_checksum` for this directory; None when it cannot say (an empty
    directory, negated ignore patterns)."""
    root = Path(task_dir).resolve()
    try:
        return _dir_hash(root, root, None if algorithm == ALGORITHM_ALL_FILES else _patterns(root))
    except (OSError, ValueError):
        return None


def harbor_task_checksums(task_dir: str | Path) -> set[str]:
    """The task's checksum under every known Harbor algorithm (a recorded checksum matching any ran this task)."""
    found = {harbor_task_checksum(task_dir, a) for a in (ALGORITHM_FILTERED, ALGORITHM_ALL_FILES)}
    return {c for c in found if c}
