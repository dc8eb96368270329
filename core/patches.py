"""What a revision may touch and how a diff is made: the pure half of environment versions.

A revision is a unified diff confined to the task's own files (instruction.md, task.toml, environment/,
tests/, solution/; for Terminal-Bench 1 its own layout). The reviser, the generator and the version store
(envqa.store.versions) share these rules, so a path outside the task is refused the same way everywhere.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from envqa.core.environment import iter_files

HARBOR_FILES = ("instruction.md", "task.toml")
HARBOR_DIRS = ("environment/", "tests/", "solution/")
TB1_FILES = ("task.yaml", "Dockerfile", "docker-compose.yaml", "docker-compose.yml", "solution.sh", "run-tests.sh")
TB1_DIRS = ("tests/",)

_HEADER_PATHS = re.compile(
    r"^(?:diff --git a/(\S+) b/(\S+)|--- (?:a/)?(\S+)|\+\+\+ (?:b/)?(\S+)|"
    r"rename (?:from|to) (\S+)|copy (?:from|to) (\S+))"
)


def task_path_allowed(rel: str, tb1: bool = False) -> bool:
    """Whether a relative path is one of the task's own files (what a revision may touch)."""
    if rel.startswith(("/", ".git/")) or ".." in Path(rel).parts or "/.git/" in rel:
        return False
    files, dirs = (TB1_FILES, TB1_DIRS) if tb1 else (HARBOR_FILES, HARBOR_DIRS)
    return rel in files or any(rel.startswith(d) for d in dirs)


def confined_task_path(path: str, tb1: bool = False) -> str | None:
    """A model-written path as a path relative to the task (one leading `./` dropped), or None when it
    points outside the task's own files. Callers write to the returned path, never to the raw one."""
    rel = path[2:] if path.startswith("./") else path
    return rel if rel and "\\" not in rel and task_path_allowed(rel, tb1) else None


def patch_paths(diff: str) -> list[str]:
    """Every path a unified/git diff names, in order (without the a/ b/ prefixes)."""
    out: list[str] = []
    for line in diff.splitlines():
        m = _HEADER_PATHS.match(line)
        if m:
            path = next(g for g in m.groups() if g)
            path = path.split("\t")[0]
            if path != "/dev/null" and path not in out:
                out.append(path)
    return out


def make_diff(old_dir: Path, new_dir: Path) -> str:
    """A git-style unified diff from one task directory to another (`git apply` takes it back)."""
    with tempfile.TemporaryDirectory(prefix="envqa-diff-") as tmp:
        for side, src in (("a", old_dir), ("b", new_dir)):
            copy_task_files(Path(src), Path(tmp) / side)
        proc = subprocess.run(
            [
                "git",
                "-c",
                "core.quotepath=false",
                "diff",
                "--no-index",
                "--no-color",
                "--no-ext-diff",
                "--binary",
                "--no-renames",
                "--src-prefix=",
                "--dst-prefix=",
                "a",
                "b",
            ],
            cwd=tmp,
            capture_output=True,
            text=True,
            env=git_env(Path(tmp)),
        )
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"git diff failed: {proc.stderr.strip()}")
    # A file only one side has is named from that side ("a/x a/x", "b/x b/x"): normalise to "a/x b/x".
    return re.sub(r"^diff --git [ab]/(\S+) [ab]/(\S+)$", r"diff --git a/\1 b/\2", proc.stdout, flags=re.M)


def copy_task_files(src: Path, dest: Path) -> None:
    """Copy the files that make a version (not qa-expected.json, .git, caches), keeping exec bits.

    A symlinked file is copied as the file it points to (what the content hash already reads): a version
    holds regular files only.
    """
    dest.mkdir(parents=True, exist_ok=True)
    for path in iter_files(src):
        target = dest / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


def git_env(cwd: Path) -> dict[str, str]:
    # No repository discovery above the temp dir: `git apply` inside a work tree would patch relative to its root.
    # Git ignores relative ceiling entries, and QA_HOME defaults to the relative `.qa`: resolve first.
    cwd = cwd.resolve()
    return {**os.environ, "GIT_CEILING_DIRECTORIES": str(cwd.parent), "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)}
