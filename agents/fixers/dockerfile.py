"""Small Dockerfile editing helpers the fixers share: instructions with their line spans, removal, sources.

Instructions come from the kept parser (core/parsers/dockerfile.py, dockerfile-parse underneath), the
same reading the rules use: a comment inside a `\\` continuation stays inside its instruction, a
`RUN <<EOF` heredoc ends at its terminator (its body lines are never instructions of their own), `COPY
--chown=… src dst` and exec-form `COPY ["src", "dst"]` give their real sources, and `${ARG}` in a COPY is
substituted, so a fixer removes whole instructions and finds the COPY that really installs a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from envqa.core.parsers.dockerfile import Span, instruction_spans


@dataclass
class Instruction:
    start: int  # 0-based index of the first line
    end: int  # exclusive
    keyword: str
    args: str  # after ARG/ENV substitution (a heredoc RUN: its body)
    span: Span | None = None

    def copy_parts(self) -> tuple[list[str], str] | None:
        """(sources, destination) of a COPY/ADD without --from (a build stage's files are not the task's)."""
        if self.keyword not in ("COPY", "ADD") or self.span is None:
            return None
        flags, words = self.span.flags_and_args()
        if "from" in flags or len(words) < 2:
            return None
        return words[:-1], words[-1]


def instructions(text: str) -> list[Instruction]:
    return [
        Instruction(start=s.start, end=s.end, keyword=s.keyword, args=s.resolved or s.value, span=s)
        for s in instruction_spans(text)
    ]


def remove(path: Path, drop: list[Instruction], note: str) -> None:
    """Delete the given instructions, leaving one comment that says why."""
    lines = path.read_text().splitlines()
    gone = {n for ins in drop for n in range(ins.start, ins.end)}
    out = []
    for n, line in enumerate(lines):
        if n in gone:
            if n == min(gone):
                out.append(f"# envqa: {note}")
            continue
        out.append(line)
    path.write_text("\n".join(out) + "\n")


def copy_target(dest: str, source: str, workdir: str, context: Path | None = None) -> str:
    """Where a COPY puts one source in the image (a directory's contents land in dest itself)."""
    base = dest if dest.startswith("/") else f"{workdir.rstrip('/')}/{dest}"
    if source.endswith("/") or (context is not None and (context / source).is_dir()):
        return base.rstrip("/") + "/"
    if dest.endswith("/"):
        return base + Path(source.rstrip("/")).name
    return base


def workdir_before(instrs: list[Instruction], index: int) -> str:
    wd = "/"
    for ins in instrs[:index]:
        if ins.keyword == "WORKDIR":
            wd = ins.args if ins.args.startswith("/") else f"{wd.rstrip('/')}/{ins.args}"
    return wd
