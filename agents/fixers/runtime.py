"""Runtime-install fixer: the verifier's installs move from test.sh into the image.

verifier-installs-at-runtime: the install/download lines of test.sh move into the Dockerfile as RUN
(the build has the network the verifier must not need); the fixer declines for lines that use
variables or paths only the verifier phase has (/tests, /logs, $VARS).
"""

from __future__ import annotations

import re

from envqa.agents.fixers.base import FixContext, register_fixer
from envqa.core.models import Finding
from envqa.core.parsers.shell import logical_line_end
from envqa.core.registry import rules_fixed_by
from envqa.core.task_model import model_of
from envqa.core.task_model.fetches import APT

INSTALL_RULES = rules_fixed_by("runtime-installs")  # verifier-installs-at-runtime


def _install_lines(ctx: FixContext) -> list[tuple[int, int, str, int]]:
    """(first line, end line, text, commands on it) of each apt / pip install test.sh makes from outside, 0-based.

    The task model's fetches say which lines those are (a `pip install` in a heredoc body is text, an offline
    `--no-index` install needs nothing moved); a line continued over `\\` is moved whole; commands after an
    `exit` (unreachable) stay."""
    script = ctx.file("tests/test.sh")
    if not script.is_file():
        return []
    model = model_of(ctx.env)
    starts = sorted(
        {
            int((f.via if f.via else f.location).rsplit(":", 1)[1]) - 1  # a requirement file's entry: its -r line
            for f in model.fetches
            if f.phase == "verifier"
            and (f.via or f.location).startswith("tests/test.sh:")
            and not f.offline
            and (f.manager in APT or (f.manager in ("pip", "uv") and f.kind == "package"))
        }
    )
    lines = script.read_text().splitlines()
    out = []
    for start in starts:
        end = logical_line_end(lines, start)
        on_it = sum(1 for c in model.test_sh if start <= c.line - 1 < end)
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
