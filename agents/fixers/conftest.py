"""Conftest fixer: pytest's rootdir and conftest discovery are pinned to /tests.

Covers exploit-workspace-conftest and plantable-test-runner (the same flaw, read from the files). Every pytest
invocation in test.sh gets `--rootdir=/tests --confcutdir=/tests -c <the tests' own ini or /dev/null>`, runs
from /tests (`cd /tests`), and reads the test files in /tests rather than copies placed in the agent's workspace
(a copy's directory is where a planted conftest.py is picked up). The copies go.

Which commands run pytest or copy the tests is decided by the shell parser (core/parsers/shell.py,
bashlex), as the probes decide it: a pytest word in a heredoc, a comment or an echoed string is not a
command and is left alone. The rewrite is per *command*, not per line: bashlex gives each simple command's
character span (its words and redirections), so `cp /tests/x.py /app/ 2>/dev/null || true`,
`mkdir -p /app/t && cp -r /tests/* /app/t/`, a `\\`-continued pytest call and `pytest ... > /logs/out 2>&1`
are all rewritten in place; the commands around them stay as written. (The old reading was a regex that
had to match to the end of the line, so any redirection or `|| true` after a copy left it in place.)
"""

from __future__ import annotations

import bisect
import shlex
from dataclasses import dataclass

from envqa.agents.fixers.base import FixContext, register_fixer
from envqa.core.models import Finding
from envqa.core.parsers.shell import blank_heredocs, parse_script
from envqa.core.registry import rules_fixed_by

RULES = rules_fixed_by("conftest")  # the rule registry's rows with fixer="conftest"
PINNED = "--rootdir=/tests --confcutdir=/tests"
NOOPS = {":", "true"}
INIS = ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg", "conftest.py")


@dataclass
class _Span:
    """One simple command as bashlex saw it: [start, end) in the original text, its words, and the source
    text of its assignments and redirections (kept as written when the command is rebuilt)."""

    start: int
    end: int
    line: int
    words: list[str]
    assignments: list[str]
    redirects: list[str]

    @property
    def name(self) -> str:
        return self.words[0].rsplit("/", 1)[-1] if self.words else ""


def _line_starts(lines: list[str]) -> list[int]:
    starts = [0]
    for ln in lines[:-1]:
        starts.append(starts[-1] + len(ln) + 1)
    return starts


def _runs_pytest(words: list[str]) -> int:
    """How many leading words are the pytest command itself (0: not pytest)."""
    name = words[0].rsplit("/", 1)[-1] if words else ""
    if name in ("pytest", "py.test"):
        return 1
    if name.startswith("python") and words[1:3] == ["-m", "pytest"]:
        return 3
    return 0


def _is_test_copy(words: list[str]) -> bool:
    """`cp` of test code out of /tests: the directory, a glob, a `.py` module or a pytest ini. A data file
    copied out (`cp /tests/expected.json /tmp/`) is the tests' business and stays."""
    args = [w for w in words[1:] if not w.startswith("-")]

    def code(a: str) -> bool:
        return a.rstrip("/") == "/tests" or "*" in a or a.endswith(".py") or a.rsplit("/", 1)[-1] in INIS

    return (
        bool(words)
        and words[0].rsplit("/", 1)[-1] == "cp"
        and len(args) >= 2
        and all(a == "/tests" or a.startswith("/tests/") for a in args[:-1])
        and any(code(a) for a in args[:-1])
    )


def _spans(text: str) -> list[_Span]:
    """Every simple command's span. Heredoc bodies are blanked first (core/parsers/shell.py), which keeps
    every other line byte for byte, so spans on those lines index the original text; a command on a heredoc
    opener line is left out (its columns moved). A script bashlex refuses whole is parsed per logical line."""
    import bashlex  # here: its import builds the LALR tables (core/parsers/shell.py says why that matters)

    blanked, _ = blank_heredocs(text)
    src_lines, bl_lines = text.split("\n"), blanked.split("\n")
    starts, bl_starts = _line_starts(src_lines), _line_starts(bl_lines)
    same = {i + 1 for i, (a, b) in enumerate(zip(src_lines, bl_lines)) if a == b}
    out: list[_Span] = []

    def collect(chunk: str, offset: int) -> bool:
        try:
            trees = bashlex.parse(chunk)
        except Exception:  # noqa: BLE001 - bashlex raises many types on input it does not cover
            return False
        nodes: list = []

        class Visitor(bashlex.ast.nodevisitor):
            def visitcommand(self, node, parts):
                nodes.append(node)

        for tree in trees:
            Visitor().visit(tree)
        for node in nodes:
            a, b = node.pos[0] + offset, node.pos[1] + offset  # offsets in the blanked text
            first, last = bisect.bisect_right(bl_starts, a), bisect.bisect_right(bl_starts, max(a, b - 1))
            if not all(n in same for n in range(first, last + 1)):
                continue
            start = starts[first - 1] + a - bl_starts[first - 1]  # the same lines: the same columns
            words = [p.word for p in node.parts if p.kind == "word"]
            piece = lambda p: chunk[p.pos[0] : p.pos[1]]
            out.append(
                _Span(
                    start,
                    start + b - a,
                    first,
                    words,
                    [piece(p) for p in node.parts if p.kind == "assignment"],
                    [piece(p) for p in node.parts if p.kind == "redirect"],
                )
            )
        return True

    if not collect(blanked, 0):
        i = 0
        while i < len(bl_lines):
            j = i + 1
            while j < len(bl_lines) and bl_lines[j - 1].rstrip().endswith("\\"):
                j += 1
            chunk = "\n".join(bl_lines[i:j])
            if chunk.strip() and not chunk.strip().startswith("#"):
                collect(chunk, bl_starts[i])
            i = j
    return sorted(out, key=lambda s: s.start)


def _targets(text: str) -> list[_Span]:
    """The reachable pytest calls and /tests copies, as the shell parser (and so the probes) reads them."""
    live: set[tuple[int, tuple[str, ...]]] = {(c.line, tuple(c.words)) for c in parse_script(text) if c.reachable}
    return [
        s
        for s in _spans(text)
        if (s.line, tuple(s.words)) in live and (_runs_pytest(s.words) or _is_test_copy(s.words) or s.name == "cd")
    ]


def precondition(ctx: FixContext, findings: list[Finding]) -> str | None:
    script = ctx.file("tests/test.sh")
    if not script.is_file():
        return "no tests/test.sh to rewrite"
    text = script.read_text(errors="replace")
    if PINNED in text:
        return "pytest is already pinned to /tests"
    if not any(_runs_pytest(s.words) for s in _targets(text)):
        return "test.sh runs no pytest command this fixer can pin"
    return None


def _ini(ctx: FixContext) -> str:
    for name in INIS[:-1]:
        if ctx.file(f"tests/{name}").is_file():
            return f"/tests/{name}"
    return "/dev/null"


def _map_arg(arg: str, cwd: str | None, copies: dict[str, str]) -> str:
    if arg.startswith("-"):
        return arg
    full = arg if arg.startswith("/") or cwd is None else f"{cwd.rstrip('/')}/{arg}"
    full = full.rstrip("/")
    for dst, src in copies.items():
        d = dst.rstrip("/")
        if full == d or full.startswith(d + "/"):
            return "/tests" + full[len(d) :] if src.endswith("/") or src == "/tests" else src
    return arg


# pytest options whose value is the next word (`-p no:cacheprovider`, `-k expr`): never a test path
VALUED = {
    "-p",
    "-k",
    "-m",
    "-c",
    "-o",
    "-W",
    "--tb",
    "--ctrf",
    "--junitxml",
    "--junit-xml",
    "--maxfail",
    "--durations",
    "--timeout",
    "--log-level",
    "--basetemp",
    "--color",
    "--import-mode",
    "--override-ini",
    "--confcutdir",
    "--rootdir",
    "--capture",
    "--cov",
    "--cov-report",
    "--json-report-file",
    "-n",
}


def _map_args(args: list[str], cwd: str | None, copies: dict[str, str]) -> tuple[list[str], bool]:
    """(the arguments with workspace copies of the tests mapped back to /tests, whether any names tests)."""
    out, positional, value_next = [], False, False
    for a in args:
        if value_next:
            out.append(a)
            value_next = False
        elif a.startswith("-"):
            out.append(a)
            value_next = a in VALUED
        else:
            out.append(_map_arg(a, cwd, copies))
            positional = True
    return out, positional


def _copy_map(words: list[str]) -> tuple[str, str]:
    """(destination, what it now stands for): a directory of copies stands for /tests itself."""
    args = [w for w in words[1:] if not w.startswith("-")]
    srcs, dst = args[:-1], args[-1]
    whole_dir = dst.endswith("/") or len(srcs) > 1 or any("*" in s or s.rstrip("/") == "/tests" for s in srcs)
    return dst, "/tests/" if whole_dir else srcs[0]


def _is_dir_like(copies: dict[str, str], arg: str) -> bool:
    return any(arg.rstrip("/") == d.rstrip("/") for d in copies)


@register_fixer(
    "conftest",
    RULES,
    precondition=precondition,
    expected=lambda fs: ["exploit-workspace-conftest fails", "oracle still passes"],
)
def fix_conftest(ctx: FixContext, findings: list[Finding]) -> str:
    script = ctx.file("tests/test.sh")
    text = script.read_text()
    ini = _ini(ctx)
    copies: dict[str, str] = {}
    cwd: str | None = None
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) in the original text
    everything = _spans(text)
    for s in _targets(text):
        if s.name == "cd":
            cwd = next((w for w in s.words[1:] if not w.startswith("-")), cwd)
            continue
        if _is_test_copy(s.words):
            dst, src = _copy_map(s.words)
            copies[dst] = src
            edits.append(_drop_copy(text, s, everything))
            continue
        n = _runs_pytest(s.words)
        mapped, positional = _map_args(s.words[n:], cwd, copies)
        if not positional:
            mapped.append("/tests")
        head = " ".join(s.assignments + s.words[:n])
        new = " ".join([head, PINNED, "-c", ini] + [shlex.quote(a) for a in mapped] + s.redirects)
        edits.append((s.start, s.end, "cd /tests && " + new))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    script.write_text(_tidy(text))
    return (
        "test.sh runs pytest from /tests on the files in /tests, with rootdir, confcutdir and the ini file "
        "pinned there: a conftest.py or ini planted in the agent's workspace is never loaded"
    )


def _drop_copy(text: str, copy: _Span, spans: list[_Span]) -> tuple[int, int, str]:
    """The edit that removes a copy: its whole line becomes a note when nothing but no-ops (`|| true`, `:`)
    shares the line, else the command alone becomes `:` (`mkdir -p /app/t && cp ...` keeps its mkdir)."""
    ls = text.rfind("\n", 0, copy.start) + 1
    le = text.find("\n", copy.end)
    le = len(text) if le < 0 else le
    others = [s for s in spans if ls <= s.start < le and s.start != copy.start]
    if all(s.name in NOOPS for s in others) and all(s.end <= le for s in others):
        was = " ".join(text[ls:le].replace("\\\n", " ").split())
        indent = text[ls : copy.start] if not text[ls : copy.start].strip() else ""
        return ls, le, f"{indent}# envqa: tests run in place from /tests (was: {was})"
    return copy.start, copy.end, ":"


def _tidy(text: str) -> str:
    """`cd X && cd /tests && pytest` loses the first cd (the pytest call no longer depends on it)."""
    out = []
    for line in text.split("\n"):
        parts = line.split(" && cd /tests && ", 1)
        if len(parts) == 2 and parts[0].strip().startswith("cd ") and len(parts[0].split()) == 2:
            line = line[: len(line) - len(line.lstrip())] + "cd /tests && " + parts[1]
        out.append(line)
    return "\n".join(out)
