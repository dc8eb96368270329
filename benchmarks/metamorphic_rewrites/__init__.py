"""Semantics-preserving rewrites of a task's verifier, for the metamorphic tests of `qa lint` (issue 51, part 5).

A rule that names a flaw written one way must name it written any other way that checks the same thing. Each
rewrite here takes a task folder, rewrites its test files in one style, and says where every statement went (a
line map), so benchmarks/metamorphic.py and tests/metamorphic/ compare the findings of the original and of the
rewrite at the corresponding lines. A test/benchmark tool, not product code: nothing under envqa/ imports it.

    plan(name, task_dir)  -> {relative path: FileRewrite} (empty: the rewrite does not apply, "n/a")
    apply(name, task_dir) -> the same, written over the files of task_dir (a copy: never an example itself)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .c_rewrites import rewrite_c, rewrite_c_helper, rewrite_c_hoist
from .cst_tools import FileRewrite, LineMap
from .scoped import RewriteBroke, Scoped, run_python
from .shape_rewrites import ExtractHelper, Parametrize, ToFixture, ToUnittest
from .shell import rewrite_shell
from .value_rewrites import HoistConstant, LoopOverCase, ToPathlib

__all__ = ["REWRITES", "FileRewrite", "LineMap", "RewriteBroke", "apply", "plan", "test_dirs"]


@dataclass(frozen=True)
class Rewrite:
    name: str
    suffix: str  # the files it reads: ".py", ".sh" or ".c"
    tests_only: bool  # only the files pytest collects (test_*.py, *_test.py)
    run: Callable[[str], FileRewrite | None]


def _python(name: str, cls: type[Scoped]) -> Rewrite:
    return Rewrite(name, ".py", cls.tests_only, lambda text: run_python(cls, text))


REWRITES: dict[str, Rewrite] = {
    r.name: r
    for r in (
        _python("extract-helper", ExtractHelper),
        _python("hoist-constant", HoistConstant),
        _python("fixture", ToFixture),
        _python("parametrize", Parametrize),
        _python("loop", LoopOverCase),
        _python("pathlib", ToPathlib),
        _python("unittest", ToUnittest),
        Rewrite("shell", ".sh", False, rewrite_shell),
        Rewrite("c-assert", ".c", False, rewrite_c),
        Rewrite("c-hoist-constant", ".c", False, rewrite_c_hoist),
        Rewrite("c-extract-helper", ".c", False, rewrite_c_helper),
    )
}


def test_dirs(task_dir: Path) -> list[Path]:
    """The task's verifier folders: tests/, and each step's or milestone's tests/."""
    found = [task_dir / "tests"] + sorted(task_dir.glob("steps/*/tests")) + sorted(task_dir.glob("milestones/*/tests"))
    return [d for d in found if d.is_dir()]


def _is_test_file(path: Path) -> bool:
    return path.name.startswith("test_") or path.name.endswith("_test.py")


def _wanted(rewrite: Rewrite, path: Path) -> bool:
    plain = path.is_file() and not path.is_symlink() and path.name != "conftest.py" and "__pycache__" not in path.parts
    return plain and (not rewrite.tests_only or _is_test_file(path))


def _files(rewrite: Rewrite, task_dir: Path) -> list[Path]:
    return [p for d in test_dirs(task_dir) for p in sorted(d.rglob(f"*{rewrite.suffix}")) if _wanted(rewrite, p)]


def plan(name: str, task_dir: Path) -> dict[str, FileRewrite]:
    """What rewrite `name` would write in `task_dir`: {path relative to the task: the new text and line map}."""
    rewrite = REWRITES[name]
    out = {}
    for path in _files(rewrite, task_dir):
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        done = rewrite.run(text)
        if done is not None:
            out[path.relative_to(task_dir).as_posix()] = done
    return out


def apply(name: str, task_dir: Path, planned: dict[str, FileRewrite] | None = None) -> dict[str, FileRewrite]:
    """Write rewrite `name` (or its `planned` result, from the same files elsewhere) over `task_dir`'s files."""
    planned = plan(name, task_dir) if planned is None else planned
    for rel, done in planned.items():
        (task_dir / rel).write_text(done.text)
    return planned
