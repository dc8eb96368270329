"""A Dockerfile as stages of instructions, through dockerfile-parse, with RUN bodies as shell commands.

Why dockerfile-parse: it is the maintained parser behind OpenShift's build tooling, pure Python, and
gives each instruction with its start/end line after joining `\\` continuations and dropping
comments. On top of it this module adds what the rules need and the library does not do:

- stages: each `FROM` starts one; `AS name` is recorded so `FROM name` / `COPY --from=name` are not
  mistaken for images, and the last stage is the agent's image;
- `ARG`/`ENV` substitution (`$X`, `${X}`, `${X:-default}`) in FROM and RUN, per stage, with global
  ARGs (before the first FROM) visible in FROM lines;
- `RUN --mount=… --network=… --security=…` flags stripped, exec-form `RUN ["pip", "install", …]` read as
  JSON;
- `RUN <<EOF … EOF` heredocs (dockerfile-parse 2 reads their body lines as instructions of their own):
  the body is taken from the raw text and parsed as the RUN's script.
Each RUN's script goes through `envqa.core.parsers.shell.parse_script`, line numbers mapped back to
the Dockerfile. `instruction_spans(text)` is the same reading for editors (agents/fixers): every
instruction with its first and last line (a heredoc RUN ends at its terminator; a comment inside a
continuation stays inside the instruction), its flags (`--chown`, `--from`, `--mount`) apart from its
arguments, and exec-form `["a", "b"]` arguments read as JSON.
"""

from __future__ import annotations

import io
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from dockerfile_parse import DockerfileParser

from envqa.core.parsers.shell import Command, parse_script

VAR = re.compile(r"\$(?:\{(\w+)(?::?[-+]([^}]*))?\}|(\w+))")
HEREDOC_RUN = re.compile(r"^<<-?\s*(['\"]?)([A-Za-z_]\w*)\1")


@dataclass
class Span:
    """One instruction as written: 0-based first line, exclusive end, keyword, value (continuations joined)."""

    start: int
    end: int
    keyword: str  # upper case
    value: str  # as written, flags included (RUN heredoc: the `<<EOF` line)
    heredoc: str | None = None  # RUN <<EOF: the body
    resolved: str = ""  # value after this stage's ARG/ENV substitution (FROM: global ARGs only)
    stage: int = -1  # -1: before the first FROM

    def flags_and_args(self) -> tuple[dict[str, str], list[str]]:
        """`--chown=a --from=b x y` -> ({"chown": "a", "from": "b"}, ["x", "y"]); exec form read as JSON."""
        value = (self.resolved or self.value).strip()
        flags: dict[str, str] = {}
        while value.startswith("--"):
            flag, _, value = value.partition(" ")
            name, _, arg = flag[2:].partition("=")
            flags[name.lower()] = arg
            value = value.strip()
        if value.startswith("["):
            try:
                argv = json.loads(value)
                if isinstance(argv, list):
                    return flags, [str(a) for a in argv]
            except (json.JSONDecodeError, RecursionError):  # not an exec form, or nested too deep
                pass
        try:
            return flags, shlex.split(value)
        except ValueError:
            return flags, value.split()


def instruction_spans(text: str) -> list[Span]:
    """Every instruction of a Dockerfile (FROM and global ARGs too), in order, with its line span."""
    lines = text.split("\n")
    parser = DockerfileParser(fileobj=io.BytesIO(text.encode()))
    out: list[Span] = []
    skip_until = -1
    global_args: dict[str, str] = {}
    scope: dict[str, str] = {}
    stage = -1
    for item in parser.structure:
        start, keyword = item["startline"], item["instruction"].upper()
        if start <= skip_until or keyword == "COMMENT":
            continue  # a heredoc body line dockerfile-parse read as an instruction, or a comment
        span = Span(start, item["endline"] + 1, keyword, item["value"])
        m = HEREDOC_RUN.match(run_script(span.value)) if keyword == "RUN" else None
        if m:
            body, i = [], start + 1
            while i < len(lines) and lines[i].strip() != m.group(2):
                body.append(lines[i])
                i += 1
            skip_until, span.end, span.heredoc = i, min(i + 1, len(lines)), "\n".join(body)
        if keyword == "FROM":
            stage, scope = stage + 1, {}
            span.resolved = substitute(span.value, global_args)
        elif keyword == "ARG":
            for k, v in assignments(span.value).items():
                (global_args if stage < 0 else scope)[k] = v or global_args.get(k, "")
        elif keyword == "ENV":
            scope.update({k: substitute(v, scope) for k, v in assignments(span.value).items()})
        span.stage = stage
        if keyword in ("RUN", "COPY", "ADD", "WORKDIR", "USER"):
            span.resolved = substitute(span.heredoc if span.heredoc is not None else span.value, scope)
        out.append(span)
    return out


@dataclass
class Instruction:
    instruction: str  # upper case
    value: str  # after ARG/ENV substitution (RUN: the script, flags removed)
    line: int  # 1-based first line
    stage: int
    raw: str = ""
    end: int = 0  # 1-based last line


@dataclass
class Stage:
    index: int
    base: str  # the FROM reference after substitution
    name: str | None
    line: int
    instructions: list[Instruction] = field(default_factory=list)


@dataclass
class DockerfileModel:
    path: Path
    stages: list[Stage]
    lines: list[str]

    @property
    def final(self) -> Stage | None:
        return self.stages[-1] if self.stages else None

    @property
    def stage_names(self) -> set[str]:
        return {s.name.lower() for s in self.stages if s.name}

    def run_commands(self) -> list[tuple[Stage, Command]]:
        """Every simple command every RUN executes, with Dockerfile line numbers."""
        out = []
        for stage in self.stages:
            for ins in stage.instructions:
                if ins.instruction != "RUN":
                    continue
                for cmd in parse_script(ins.value):
                    cmd.line += ins.line - 1 if not ins.raw.startswith("<<") else ins.line
                    cmd.text = self.lines[cmd.line - 1].strip() if 0 < cmd.line <= len(self.lines) else cmd.text
                    out.append((stage, cmd))
        return out


def substitute(text: str, values: dict[str, str]) -> str:
    def repl(m: re.Match) -> str:
        name = m.group(1) or m.group(3)
        if name in values and values[name] != "":
            return values[name]
        return m.group(2) if m.group(2) is not None else ("" if name in values else m.group(0))

    return VAR.sub(repl, text)


def assignments(value: str) -> dict[str, str]:
    try:
        words = shlex.split(value)
    except ValueError:
        words = value.split()
    if len(words) == 2 and "=" not in words[0]:  # legacy `ENV KEY value`
        return {words[0]: words[1]}
    out = {}
    for w in words:
        k, sep, v = w.partition("=")
        out[k] = v if sep else ""
    return out


def run_script(value: str) -> str:
    """A RUN value as the shell script it runs: flags (`--mount=…`) dropped, an exec form joined as words."""
    value = value.strip()
    while value.startswith("--"):  # --mount=…, --network=…, --security=…
        value = value.split(None, 1)[1] if " " in value else ""
    if value.startswith("["):
        try:
            argv = json.loads(value)
            if isinstance(argv, list):
                return " ".join(shlex.quote(str(a)) for a in argv)
        except (json.JSONDecodeError, RecursionError):  # not an exec form, or nested too deep
            pass
    return value


def parse_dockerfile(path: Path) -> DockerfileModel:
    text = path.read_text(errors="replace")
    stages: list[Stage] = []
    for span in instruction_spans(text):
        if span.keyword == "FROM":
            ref, *rest = span.resolved.split() or [""]
            name = rest[1] if len(rest) >= 2 and rest[0].lower() == "as" else None
            stages.append(Stage(len(stages), ref, name, span.start + 1))
            continue
        if span.keyword == "ARG" or not stages:
            continue
        value, raw = span.value, span.value
        if span.keyword == "RUN":
            raw = run_script(span.value)
            value = span.resolved if span.heredoc is not None else run_script(span.resolved)
        elif span.keyword in ("COPY", "ADD"):
            value = span.resolved
        stages[-1].instructions.append(
            Instruction(span.keyword, value, span.start + 1, stages[-1].index, raw, span.end)
        )
    return DockerfileModel(path, stages, text.split("\n"))
