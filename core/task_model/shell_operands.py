"""What one operand of a shell check stands for: a literal, the content of a file, a command's output or status,
a file's digest, a JSON field. Shared by the shell reader's conditions (core/task_model/assertion_shell.py).

A word is resolved through the script's simple assignments (`OUT=/app/out.txt`, `got=$(cat "$OUT")`), each one a
"constant" hop; a `$(…)` is read as a script of its own (core/parsers/shell.py) and named by what its commands
read: `cat`/`head`/`<` give the file, `sha256sum` the digest, `jq` the file and keys, anything else the command's
stdout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from envqa.core.defaults import TEST_MODEL_CODE_CHARS
from envqa.core.parsers.shell import Command, parse_script
from envqa.core.task_model.assertions import Expected, Hop, Observed

VAR = re.compile(r"^\$\{?([A-Za-z_]\w*)\}?$")
SUBST = re.compile(r"^\$\((.*)\)$", re.S)
READERS = {"cat", "head", "tail", "sort", "uniq", "tr", "cut", "sed", "awk", "wc", "od", "xxd", "base64", "strings"}
HASHERS = {"sha256sum", "sha1sum", "sha512sum", "md5sum", "b2sum", "cksum", "shasum"}
FILTERS = READERS | {"grep", "jq", "xargs", "echo", "printf"}
JSON_KEY = re.compile(r"\.([A-Za-z_]\w*)|\[\s*\"([^\"]+)\"\s*\]")
REFERENCE_HINT = re.compile(r"(^/tests/|^/solution/|expect|golden|reference|\bref\b|answer|want)", re.I)
NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


@dataclass
class Side:
    """One operand: either something observed (of the agent's work) or a value to compare with."""

    observed: Observed | None = None
    literal: str | None = None
    reference: str | None = None  # a file the tests hold, read as the expectation
    hops: list[Hop] = field(default_factory=list)

    def expected(self) -> Expected:
        if self.literal is not None:
            return Expected(kind="literal", value=self.literal)
        if self.reference is not None:
            return Expected(kind="file", path=self.reference)
        if self.observed is not None:
            return Expected(kind="agent_output", inputs=[self.observed.path or " ".join(self.observed.command)])
        return Expected(kind="unknown")


def hop(kind: str, file: str, cmd: Command, name: str = "") -> Hop:
    return Hop(kind=kind, file=file, line=cmd.line, name=name, code=cmd.text[:TEST_MODEL_CODE_CHARS])


class Scope:
    """The script's simple assignments, in order: a name's value at a line is its last assignment before it."""

    def __init__(self, file: str, commands: list[Command]):
        self.file = file
        self.values: dict[str, list[tuple[int, str, Command]]] = {}
        for cmd in commands:
            for a in cmd.assignments if not cmd.words else []:
                name, _, value = a.partition("=")
                self.values.setdefault(name, []).append((cmd.line, value, cmd))

    def lookup(self, name: str, line: int) -> tuple[str, Command] | None:
        before = [(v, c) for n, v, c in self.values.get(name, []) if n <= line]
        return before[-1] if before else None

    def expand(self, word: str, line: int, hops: list[Hop], depth: int = 0) -> str:
        """`word` with every `$NAME`/`${NAME}` that has a simple assignment replaced by its value."""

        def one(m: re.Match) -> str:
            name = m.group(1) or m.group(2)
            got = self.lookup(name, line) if depth < 4 else None
            if got is None:
                return m.group(0)
            hops.append(hop("constant", self.file, got[1], name))
            return self.expand(got[0], got[1].line, hops, depth + 1)

        return re.sub(r"\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)", one, word)


def _plain_args(words: list[str]) -> list[str]:
    return [w for w in words[1:] if not w.startswith("-") or w == "-"]


def jq_keys(program: str) -> list[str]:
    """The object keys a jq filter indexes (`.a.b`, `.["c d"]`), in order."""
    return [
        a or b
        for a, b in JSON_KEY.findall(re.sub(r"\"[^\"]*\"", lambda m: m.group(0) if "[" in m.group(0) else "", program))
    ]


def jq_literal(program: str) -> tuple[str, str] | None:
    """(op, literal) of a jq filter's final comparison with a constant (`.k == "v"`, `.n >= 3`)."""
    m = re.search(r"(==|!=|>=|<=|>|<)\s*(\"(?:[^\"\\]|\\.)*\"|-?\d+(?:\.\d+)?|true|false|null)\s*$", program.strip())
    return (m.group(1), m.group(2).strip('"')) if m else None


def file_of(cmd: Command) -> str | None:
    """The file a reading command reads: its last plain argument, else what `<` feeds it."""
    args = [a for a in _plain_args(cmd.words) if a != "-"]
    if cmd.name in ("jq",) and args:
        args = args[1:]
    if cmd.name in ("grep", "egrep", "fgrep") and args:
        args = args[1:]
    if cmd.name in ("head", "tail", "cut") and args and NUMBER.match(args[0]):
        args = args[1:]
    for op, target in cmd.redirects:
        if op == "<":
            return target
    return args[-1] if args and cmd.name not in ("echo", "printf", "tr") else None


def observe_commands(cmds: list[Command]) -> Observed:
    """What a pipeline or `$(…)` reads, by its first stage that reads something."""
    cmds = [c for c in cmds if c.words]
    if not cmds:
        return Observed(kind="unknown")
    first = cmds[0]
    names = {c.name for c in cmds}
    if first.name in HASHERS:
        return Observed(kind="digest", path=file_of(first), command=list(first.words))
    if first.name == "jq":
        program = next((a for a in _plain_args(first.words)), "")
        return Observed(kind="output_file", path=file_of(first), keys=jq_keys(program), detail=f"jq {program}")
    if first.name in READERS or first.name in ("grep", "egrep", "fgrep"):
        path = file_of(first)
        detail = " ".join(first.words) if first.name != "cat" or len(cmds) > 1 else ""
        if path is not None and path.startswith("/proc"):
            return Observed(kind="value", path=path, detail=detail)
        if names & HASHERS:
            return Observed(kind="digest", path=path, command=[w for c in cmds for w in c.words])
        return Observed(kind="output_file", path=path, detail=detail)
    if not first.words and any(op == "<" for op, _ in first.redirects):
        return Observed(kind="output_file", path=next(t for op, t in first.redirects if op == "<"))
    flags = [w for w in first.words[1:] if w.startswith("-")]
    return Observed(kind="stdout", command=list(first.words), flags=flags)


def reference_path(path: str | None) -> bool:
    """Whether a file compared with reads as the expectation (under /tests or /solution, or named so)."""
    return bool(path) and REFERENCE_HINT.search(path or "") is not None


def side(word: str, scope: Scope, line: int, before: Command | None = None) -> Side:
    """What one operand stands for (see the module docstring)."""
    hops: list[Hop] = []
    var = VAR.match(word)
    if var is not None and scope.lookup(var.group(1), line) is not None:
        value, at = scope.lookup(var.group(1), line)  # type: ignore[misc]
        hops.append(hop("constant", scope.file, at, var.group(1)))
        inner = side(value, scope, at.line, before)
        return Side(inner.observed, inner.literal, inner.reference, hops + inner.hops)
    if word in ("$?",):
        command = list(before.words) if before is not None else []
        return Side(Observed(kind="exit_code", command=command), hops=hops)
    m = SUBST.match(word.strip())
    if m is not None:
        text = scope.expand(m.group(1), line, hops)
        cmds = [c for c in parse_script(text) if not c.substituted]
        if (
            cmds
            and cmds[0].name in READERS
            and reference_path(file_of(cmds[0]))
            and len(cmds) == 1
            and cmds[0].name == "cat"
        ):
            return Side(reference=file_of(cmds[0]), hops=hops)
        if cmds and cmds[0].name in ("echo", "printf") and len(cmds) == 1:
            return Side(literal=" ".join(cmds[0].words[1:]), hops=hops)
        return Side(observed=observe_commands(cmds), hops=hops)
    if "$" in word:
        expanded = scope.expand(word, line, hops)
        if "$" not in expanded:
            return Side(literal=expanded, hops=hops)
        return Side(observed=Observed(kind="unknown", detail=word), hops=hops)
    return Side(literal=word, hops=hops)
