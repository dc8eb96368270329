"""Runtime-install fixer: the verifier's installs move from test.sh into the image.

verifier-installs-at-runtime: the install/download lines of test.sh move into the Dockerfile as RUN
(the build has the network the verifier must not need); the fixer declines for lines that use
variables or paths only the verifier phase has (/tests, /logs, $VARS).
"""

from __future__ import annotations

import re

from envqa.agents.fixers.base import FixContext, register_fixer
from envqa.core.models import Finding
from envqa.core.parsers.pip import pip_args
from envqa.core.parsers.shell import Command, logical_line_end, parse_script
from envqa.core.registry import rules_fixed_by

INSTALL_RULES = rules_fixed_by("runtime-installs")  # verifier-installs-at-runtime
APT = {"apt", "apt-get"}


def _is_install(cmd: Command) -> bool:
    words = cmd.words[1:] if cmd.name == "sudo" else cmd.words
    if not words:
        return False
    inner = Command(words=words, line=cmd.line, text=cmd.text)
    if inner.name in APT:
        return any(w in ("update", "install") for w in words[1:])
    return pip_args(inner) is not None


def _install_lines(ctx: FixContext) -> list[tuple[int, int, str, int]]:
    """(first line, end line, text, commands on it) of each install in test.sh, 0-based lines.

    Read with the bash parser: a `pip install` inside a heredoc body is text, not a command; one that
    continues over `\\` lines is moved whole; commands after an `exit` (unreachable) stay."""
    script = ctx.file("tests/test.sh")
    if not script.is_file():
        return []
    text = script.read_text()
    lines = text.splitlines()
    cmds = parse_script(text)
    out = []
    for cmd in cmds:
        if not cmd.reachable or not _is_install(cmd):
            continue
        start = cmd.line - 1
        end = logical_line_end(lines, start)
        if any(o[0] == start for o in out):
            continue
        on_it = sum(1 for c in cmds if start <= c.line - 1 < end)
        out.append((start, end, "\n".join(lines[start:end]), on_it))
    return out


def install_precondition(ctx: FixContext, findings: list[Finding]) -> str | None:
    lines = _install_lines(ctx)
    if not lines:
        return "no pip/apt install command in test.sh to move (downloads and inline installs need a model)"
    bad = [text for _s, _e, text, n in lines if n > 1 or re.search(r"\$|/tests|/logs", text)]
    if bad:
        return f"install line depends on the verifier phase or chains commands: {bad[0].strip()}"
    return None


@register_fixer(
    "runtime-installs",
    INSTALL_RULES,
    precondition=install_precondition,
    expected=lambda fs: ["verifier-installs-at-runtime stays silent", "oracle still passes"],
)
def fix_installs(ctx: FixContext, findings: list[Finding]) -> str:
    script = ctx.file("tests/test.sh")
    lines = script.read_text().splitlines()
    moved = _install_lines(ctx)
    idx = {n for start, end, _t, _c in moved for n in range(start, end)}
    script.write_text("\n".join(ln for n, ln in enumerate(lines) if n not in idx) + "\n")
    df = ctx.env.dockerfile
    text = df.read_text().rstrip("\n")
    runs = "\n".join(f"RUN {ln.strip().removeprefix('sudo ')}" for _s, _e, ln, _c in moved)
    df.write_text(f"{text}\n# envqa: the verifier's installs, moved from tests/test.sh into the image\n{runs}\n")
    return f"moved {len(moved)} install line(s) from tests/test.sh into the image (Dockerfile RUN)"
