"""What the variation probe may change in the oracle's end state, decided from files and the instruction alone.

Variations are right answers the verifier must accept (the dual of mutants, probes/mutation/kinds.py):
  - an unrelated file beside each output file the oracle created (`EXTRA_NAME`);
  - a trailing newline added to a text output that has none, or removed from a one-line text output;
  - a JSON output (or JSON Lines) with the keys of every object in reverse order, formatted as before;
  - the build products of the commands the instruction itself shows (`gcc -o ...`, `go build`, `make`).

Each kind is skipped, with the sentence that says so, when the instruction forbids it ("leave only main.go in
/app/src", "no other files", "end the file with a newline", "keys in this order"). Line endings are never
touched (a CRLF file gets no newline variant): an instruction could reasonably require them. A multi-line file
that ends with a newline keeps it: removing it leaves the last line unterminated, which `wc -l` and line
readers count differently, so rejecting that is not clearly brittle. Nor does a one-line output that a sentence
naming it calls a line ("containing the line `hello, world`"): a line ends with a newline.

Pure functions: no sandbox, no Docker (tests/probes/test_variation_kinds.py).
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from dataclasses import dataclass, field

from envqa.core.defaults import VARIATION_MAX_BUILD_COMMANDS as MAX_BUILD_COMMANDS
from envqa.probes.mutation.kinds import stated_in

EXTRA_NAME = "envqa-unrelated-note"
EXTRA_TEXT = b"An unrelated file placed by envqa's variation probe; a verifier should not care about it.\n"

# Sentences that forbid a kind of variation. Each is searched case-insensitively in one sentence of the instruction.
FORBID_EXTRA = re.compile(
    r"\bno (?:other|extra|additional|further|stray) (?:files?|entries)\b|\bleave only\b|\bthe only (?:file|entry)\b"
    r"|\bexactly (?:one|\d+) (?:files?|entries)\b|\bremove (?:all|any|every) (?:other|extra|temporary|intermediate|build)\b"
    r"|\bdelete (?:all|any) (?:other|extra|temporary)\b|\b(?:no|not leave(?: any)?|leave no|without(?: any)?) "
    r"(?:build |extra |stray |temporary |compiled )?(?:artifacts|artefacts|byproducts|by-products|leftovers|binaries)\b",
    re.I,
)
# Said of a directory only ("the directory must contain only main.c"): "a file containing only the number" is not.
FORBID_EXTRA_IN_DIR = re.compile(
    r"\bcontains? only\b|\bonly contains?\b|\bnothing else\b|\bcontain nothing but\b", re.I
)
DIR_WORD = re.compile(r"\b(?:director(?:y|ies)|folders?|dir)\b", re.I)
FORBID_NEWLINE = re.compile(
    r"\b(?:trailing|final|terminating|ending) (?:newline|new line|line break|\\n)|\bnewline[- ]terminated\b"
    r"|\b(?:end|ends|ending|terminated?) (?:it |the file |each line |every line )?with (?:a |one |exactly one )?"
    r"(?:newline|new line|line break|\\n)|\b(?:no|without (?:a|any)) (?:trailing )?(?:newline|new line|line break)\b"
    r"|\bbyte[- ]for[- ]byte\b|\bbyte[- ]identical\b|\bexact bytes\b|\bidentical bytes\b",
    re.I,
)
FORBID_KEY_ORDER = re.compile(
    r"\bkey order\b|\border of (?:the )?(?:keys|fields|properties|members)\b|\b(?:keys|fields|properties) "
    r"(?:must |should |will )?(?:appear |be )?(?:in|sorted)\b|\bsort(?:ed)?[_ ]keys\b|\b(?:fields|keys) in order\b"
    r"|\bfield order\b|\bbyte[- ]for[- ]byte\b|\bbyte[- ]identical\b|\bcanonical json\b",
    re.I,
)
WRAPPED = re.compile(r"\n(?!\s*(?:[-*+]\s|\d+[.)]\s|```|\n))")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
ABS_PATH = re.compile(r"(?<![\w.~-])(/[\w.+-]+(?:/[\w.+-]+)*)/?")
CODE_SPAN = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", re.S)
INDENTED = re.compile(r"(?:^|\n)(?: {4}|\t)([^\n]+)")
# Programs whose run is a build: their products are what an agent that followed the instruction leaves behind.
BUILD_TOOLS = {
    "gcc",
    "g++",
    "cc",
    "c++",
    "clang",
    "clang++",
    "rustc",
    "javac",
    "kotlinc",
    "tsc",
    "nasm",
    "ghc",
    "gfortran",
    "swiftc",
    "ocamlopt",
    "make",
    "cmake",
    "ninja",
}
BUILD_SUBCOMMANDS = {"go": {"build"}, "cargo": {"build"}, "zig": {"build", "build-exe"}, "dotnet": {"build"}}
PY_COMPILE = {"py_compile", "compileall"}
PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|\{[^}]*\}|\$\{?\w")
SPLIT_SEQUENCE = re.compile(r"\s*(?:&&|\|\||;)\s*")
LINE_WORD = re.compile(r"\blines?\b", re.I)


@dataclass
class BuildCommand:
    """One build command the instruction shows: `command` run from `cwd` (None: the image's working directory)."""

    command: str
    cwd: str | None = None


@dataclass
class Forbidden:
    """What the instruction forbids, with the sentence that says so (the coverage's reason)."""

    extra_dirs: dict[str, str] = field(default_factory=dict)  # directory ("*": every one) -> sentence
    newline: str = ""
    key_order: str = ""

    def extra_in(self, directory: str) -> str:
        """The sentence that forbids an extra file in `directory`, or ""."""
        for scope, sentence in self.extra_dirs.items():
            if scope == "*" or directory == scope or directory.startswith(scope.rstrip("/") + "/"):
                return sentence
        return ""


def sentences(text: str) -> list[str]:
    """The instruction's sentences, wrapped lines joined (a path's dots do not end one)."""
    return [s.strip() for s in SENTENCE_END.split(WRAPPED.sub(" ", text)) if s.strip()]


def paths_in(text: str) -> list[str]:
    """Absolute paths named in a text, without the sentence's own punctuation."""
    return [p.rstrip(".,:;") for p in ABS_PATH.findall(text) if p.rstrip(".,:;")]


def _scopes(sentence: str) -> list[str]:
    """The directories a forbidding sentence is about: each absolute path it names, and a file's directory."""
    out = []
    for path in paths_in(sentence):
        out.append(path)
        if posixpath.splitext(posixpath.basename(path))[1]:
            out.append(posixpath.dirname(path) or "/")
    return out


def _about_a_directory(sentence: str) -> bool:
    return bool(DIR_WORD.search(sentence)) or any(not posixpath.splitext(p)[1] for p in paths_in(sentence))


def forbidden(instruction: str) -> Forbidden:
    """Read the instruction once for what it forbids; a forbidding sentence that names no path forbids everywhere."""
    found = Forbidden()
    for sentence in sentences(instruction):
        if FORBID_EXTRA.search(sentence) or (FORBID_EXTRA_IN_DIR.search(sentence) and _about_a_directory(sentence)):
            for scope in _scopes(sentence) or ["*"]:
                found.extra_dirs.setdefault(scope, sentence)
        if not found.newline and FORBID_NEWLINE.search(sentence):
            found.newline = sentence
        if not found.key_order and FORBID_KEY_ORDER.search(sentence):
            found.key_order = sentence
    return found


def is_text(data: bytes) -> bool:
    if b"\0" in data[:4096]:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def line_sentence(path: str, instruction: str) -> str:
    """The instruction's sentence that names `path` and calls what it holds a line or lines ("containing the line
    `hello, world`", "one per line"), or "". A line ends with a newline, so such an output keeps its own."""
    for sentence in sentences(instruction):
        if LINE_WORD.search(sentence) and stated_in(path, sentence):
            return sentence
    return ""


def newline_variant(data: bytes, line: str = "") -> tuple[bytes, str] | str:
    """(the varied bytes, what changed) or why this file gets no newline variant. `line`: the instruction's
    sentence that calls the content a line (line_sentence), which rules out removing its terminating newline."""
    if not data.strip():
        return "empty or blank: a newline would change what it holds"
    if not is_text(data):
        return "not text"
    if b"\r" in data:
        return "has carriage returns: line endings are left alone"
    if not data.endswith(b"\n"):
        return data + b"\n", "trailing newline added"
    if data.endswith(b"\n\n"):
        return "ends with a blank line: which newline is trailing is not clear"
    if data.count(b"\n") == 1 and line:
        return f'the instruction calls it a line, and a line ends with a newline: "{line[:200]}"'
    if data.count(b"\n") == 1:
        return data[:-1], "trailing newline removed"
    return "several lines ending with a newline: removing it leaves the last line unterminated"


def _reversed_keys(value):
    if isinstance(value, dict):
        return {k: _reversed_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed_keys(v) for v in value]
    return value


def _has_reorderable(value) -> bool:
    if isinstance(value, dict):
        return len(value) >= 2 or any(_has_reorderable(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_reorderable(v) for v in value)
    return False


def _style(text: str) -> dict:
    """json.dumps arguments that write like the original: indentation, separators, raw non-ASCII."""
    indent = None
    m = re.search(r"[\[{]\s*\n([ \t]+)\S", text)
    if m:
        indent = "\t" if m.group(1).startswith("\t") else len(m.group(1))
    item = ", " if re.search(r",\s", text) else ","
    key = ": " if re.search(r"\"\s*:\s", text) else ":"
    return {
        "indent": indent,
        "separators": ("," if indent is not None else item, key),
        "ensure_ascii": not any(ord(c) > 127 for c in text),
    }


def json_variant(data: bytes) -> tuple[bytes, str] | str:
    """(the bytes with every object's keys in reverse order, what changed) or why this file gets none."""
    if not is_text(data):
        return "not text"
    text = data.decode("utf-8")
    body = text.strip()
    if not body or body[0] not in "{[":
        return "not JSON"
    try:
        value = json.loads(body)
    except ValueError:
        return _json_lines_variant(text)
    if not _has_reorderable(value):
        return "no JSON object with two or more keys"
    style = _style(body)
    again = json.dumps(value, **style)
    varied = json.dumps(_reversed_keys(value), **style)
    lead, tail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    what = "JSON keys reordered (every object's keys reversed)"
    if again != body:
        what += "; whitespace re-serialized"
    return (lead + varied + tail).encode("utf-8"), what


def _json_lines_variant(text: str) -> tuple[bytes, str] | str:
    lines = text.split("\n")
    out, changed = [], False
    for line in lines:
        if not line.strip():
            out.append(line)
            continue
        try:
            value = json.loads(line)
        except ValueError:
            return "not JSON"
        changed = changed or _has_reorderable(value)
        out.append(json.dumps(_reversed_keys(value), **_style(line)))
    if not changed:
        return "no JSON object with two or more keys"
    return "\n".join(out).encode("utf-8"), "JSON Lines keys reordered (every object's keys reversed)"


def _candidates(instruction: str) -> list[str]:
    spans = [a or b for a, b in CODE_SPAN.findall(instruction)] + INDENTED.findall(instruction)
    out = []
    for span in spans:
        for line in span.splitlines():
            line = line.strip().lstrip("$ ").strip()
            if line:
                out.append(line)
    return out


def is_build(argv: list[str]) -> bool:
    """Whether argv runs a compiler or build tool (so running it only builds; it does not run the program)."""
    while argv and re.match(r"^[A-Za-z_]\w*=", argv[0]):  # CC=gcc make: environment assignments first
        argv = argv[1:]
    if not argv:
        return False
    prog = posixpath.basename(argv[0])
    if prog in BUILD_TOOLS:
        return True
    if prog in BUILD_SUBCOMMANDS:
        return len(argv) > 1 and argv[1] in BUILD_SUBCOMMANDS[prog]
    if re.match(r"^python[\d.]*$", prog):
        return len(argv) > 2 and argv[1] == "-m" and argv[2] in PY_COMPILE
    return False


def build_commands(instruction: str, outputs: list[str]) -> list[BuildCommand]:
    """The build commands the instruction shows (in code spans or blocks), in order, at most MAX_BUILD_COMMANDS.

    A `cd DIR` before a command sets its directory; otherwise a relative file argument that names an oracle output
    (`gcc main.py.c -o cmain`) runs it from that output's directory. Commands with placeholders (`<file>`, `...`,
    `$VAR`) are left out: running them means guessing."""
    by_name = {posixpath.basename(p): posixpath.dirname(p) for p in outputs}
    found: list[BuildCommand] = []
    for line in _candidates(instruction):
        cwd = None
        for part in SPLIT_SEQUENCE.split(line):
            try:
                argv = shlex.split(part)
            except ValueError:
                break
            if argv[:1] == ["cd"] and len(argv) == 2 and argv[1].startswith("/"):
                cwd = argv[1]
                continue
            if not is_build(argv) or PLACEHOLDER.search(part):
                continue
            if cwd is None:
                cwd = next((by_name[a] for a in argv[1:] if not a.startswith(("/", "-")) and a in by_name), None)
            cmd = BuildCommand(part, cwd)
            if all(c.command != cmd.command or c.cwd != cmd.cwd for c in found):
                found.append(cmd)
    return found[:MAX_BUILD_COMMANDS]


FAILED_LINE = re.compile(r"^(?:FAILED |ERROR )\S")
ASSERT_DETAIL = re.compile(r"^E\s+\S")
WHERE = re.compile(r"^\S+\.py:\d+: \w+")


def failing_lines(output: str, limit: int = 4) -> list[str]:
    """The lines of a verifier's output that say which test failed and where: pytest's `FAILED ...` summary, its
    `file.py:12: AssertionError` location and first `E ...` detail; else the output's last lines."""
    lines = [ln.rstrip() for ln in output.splitlines()]
    picked = [ln for ln in lines if FAILED_LINE.match(ln)][:2]
    picked += [ln for ln in lines if WHERE.match(ln)][:1]
    picked += [ln for ln in lines if ASSERT_DETAIL.match(ln)][:1]
    if not picked:
        picked = [ln for ln in lines if ln.strip()][-3:]
    return [ln[:300] for ln in picked][:limit]
