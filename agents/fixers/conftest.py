"""Conftest fixer: pytest's rootdir and conftest discovery are pinned to /tests.

Covers exploit-workspace-conftest. Every pytest invocation in test.sh gets `--rootdir=/tests
--confcutdir=/tests -c <the tests' own ini or /dev/null>`, runs from /tests (`cd /tests`), and reads the
test files in /tests rather than copies placed in the agent's workspace (a copy's directory is where a
planted conftest.py is picked up). The copy lines go.

Which lines run pytest or copy the tests is decided by the shell parser (core/parsers/shell.py, bashlex),
as the probes decide it: a pytest word in a heredoc, a comment or an echoed string is not a command and is
left alone. The rewrite itself is per line (the parser gives each command's line).
"""

from __future__ import annotations

import re
import shlex

from envqa.agents.fixers.base import FixContext, register_fixer
from envqa.core.models import Finding
from envqa.core.parsers.shell import Command, parse_script
from envqa.core.registry import rules_fixed_by

RULES = rules_fixed_by("conftest")  # the rule registry's rows with fixer="conftest"
PYTEST = re.compile(r"(?P<cmd>(?:python3?\s+-m\s+)?py\.?test\b)(?P<args>[^&|;]*)")
COPY = re.compile(r"^\s*cp\s+(?:-\S+\s+)*(?P<src>/tests/\S*)\s+(?P<dst>\S+)\s*$")
CD = re.compile(r"\bcd\s+(?P<dir>[^\s;&|]+)\s*(&&|;)\s*")
PINNED = "--rootdir=/tests --confcutdir=/tests"


def _runs_pytest(c: Command) -> bool:
    return c.name in ("pytest", "py.test") or (c.name.startswith("python") and c.words[1:3] == ["-m", "pytest"])


def _lines_of(text: str) -> tuple[set[int], set[int]]:
    """(lines with a pytest command, lines with a `cp /tests/... DST` command), 1-based, per the parser."""
    cmds = [c for c in parse_script(text) if c.reachable]
    copies = {c.line for c in cmds if c.name == "cp"
              and next((w for w in c.words[1:] if not w.startswith("-")), "").startswith("/tests")}
    return {c.line for c in cmds if _runs_pytest(c)}, copies


def precondition(ctx: FixContext, findings: list[Finding]) -> str | None:
    script = ctx.file("tests/test.sh")
    if not script.is_file():
        return "no tests/test.sh to rewrite"
    text = script.read_text(errors="replace")
    if PINNED in text:
        return "pytest is already pinned to /tests"
    if not _lines_of(text)[0]:
        return "test.sh runs no pytest command this fixer can pin"
    return None


def _ini(ctx: FixContext) -> str:
    for name in ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
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
            return "/tests" + full[len(d):] if src.endswith("/") or src == "/tests" else src
    return arg


@register_fixer("conftest", RULES, precondition=precondition,
                expected=lambda fs: ["exploit-workspace-conftest fails", "oracle still passes"])
def fix_conftest(ctx: FixContext, findings: list[Finding]) -> str:
    script = ctx.file("tests/test.sh")
    text = script.read_text()
    pytest_lines, copy_lines = _lines_of(text)
    copies: dict[str, str] = {}
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = COPY.match(line) if n in copy_lines else None
        if m:
            dst = m["dst"]
            copies[dst if dst.endswith("/") else dst] = m["src"] if not dst.endswith("/") else "/tests/"
            out.append(f"# envqa: tests run in place from /tests (was: {line.strip()})")
            continue
        pm = PYTEST.search(line) if n in pytest_lines else None
        if pm:
            cd = CD.search(line[:pm.start()])
            cwd = cd["dir"] if cd else None
            try:
                args = shlex.split(pm["args"])
            except ValueError:
                args = pm["args"].split()
            mapped = [_map_arg(a, cwd, copies) for a in args]
            if not any(not a.startswith("-") for a in mapped):
                mapped.append("/tests")
            new = f"{pm['cmd']} {PINNED} -c {_ini(ctx)} {' '.join(shlex.quote(a) for a in mapped)} "
            head = line[:pm.start()]
            head = head.replace(cd.group(0), "cd /tests && ") if cd else head + "cd /tests && "
            line = head + new + line[pm.end():].lstrip()
        out.append(line)
    script.write_text("\n".join(out) + "\n")
    return "test.sh runs pytest from /tests on the files in /tests, with rootdir, confcutdir and the ini file " \
           "pinned there: a conftest.py or ini planted in the agent's workspace is never loaded"
