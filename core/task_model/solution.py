"""The reference solution's shell script, read and parsed once: the rules that ask what solve.sh runs read it here.

Three static rules read solve.sh (solution-empty, verifier-reads-image-answer's copies, parallel-build-over-cpu-limit);
each opened and parsed it itself before. A task's solution is `solve.sh` in each solution folder, or the copied
file itself (Terminal-Bench 1's solution.sh), when it is a `.sh` file. The text comes through the guarded reader
(a FIFO, a dangling link or a file far too large is a refusal the rules see as `error`, never a hang or a crash).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from envqa.core.environment import Environment
from envqa.core.input_files import InputFileError, read_text
from envqa.core.parsers.shell import Command, parse_script


@dataclass(eq=False)
class SolutionScript:
    """One shell script of the reference solution: where it is, its text and its commands (each read once)."""

    path: Path
    rel: str  # relative to the task's root, as findings name it ("solution/solve.sh")
    error: InputFileError | None = field(default=None)

    @cached_property
    def text(self) -> str:
        """The script's text, undecodable bytes replaced ("" when the guarded reader refuses it: see `error`)."""
        try:
            return read_text(self.path, strict=False)
        except InputFileError as e:
            self.error = e
            return ""

    @cached_property
    def commands(self) -> list[Command]:
        """Every command of the script, reachable or not (core/parsers/shell.py)."""
        text = self.text
        return parse_script(text) if self.error is None else []


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()


def solution_scripts(env: Environment) -> list[SolutionScript]:
    """The solution's shell scripts, in the order env.solution lists its copies (nothing is read yet)."""
    out = []
    for copy in env.solution:
        path = copy.source / "solve.sh" if copy.source.is_dir() else copy.source
        if path.is_file() and path.suffix == ".sh":
            out.append(SolutionScript(path=path, rel=_rel(env.root, path)))
    return out
