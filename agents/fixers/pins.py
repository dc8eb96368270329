"""Pin fixer: each unpinned pip package gets the version the current image actually has.

Covers unpinned-python-dependency. Pinning to what the image built with today changes nothing that works
now and stops the next release from changing the environment. The versions come from `pip freeze` in one
short-lived container of the parent's image (network none); a package the image does not have (it is
installed later, or the install failed) makes the fixer decline.
"""

from __future__ import annotations

import re
from pathlib import Path

from envqa.agents.fixers.base import FixContext, register_fixer
from envqa.core.defaults import PIP_FREEZE_SEC
from envqa.core.models import Finding
from envqa.core.parsers.dockerfile import instruction_spans
from envqa.core.parsers.shell import logical_line_end
from envqa.core.registry import rules_fixed_by
from envqa.core.task_model import model_of

RULES = rules_fixed_by("pins")  # unpinned-python-dependency
LOC = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def image_packages(backend, env, config) -> dict[str, str]:
    """canonical name -> version installed in the environment's image (empty when it has no pip)."""
    from envqa.core.sandbox import SandboxSpec

    tag, _built = backend.ensure_image(env)
    spec = SandboxSpec(
        image=tag,
        network="none",
        memory_mb=512,
        pids_limit=256,
        labels={"envqa.probe": "pin-fixer"},
        output_limit_bytes=config.sandbox.output_limit_bytes,
    )
    with backend.start(spec) as sandbox:
        res = sandbox.exec(
            ["sh", "-c", "python3 -m pip freeze 2>/dev/null || pip freeze 2>/dev/null"], timeout=PIP_FREEZE_SEC
        )
    out = {}
    for line in res.stdout.splitlines():
        name, sep, version = line.partition("==")
        if sep:
            out[canonical(name.strip())] = version.strip().split("+")[0]
    return out


def _named_lines(findings: list[Finding]) -> list[tuple[str, int]]:
    """(file, line) of every place a finding names: its location and each `file:line:` of its evidence (one
    finding lists every unpinned install of a file)."""
    out = []
    for f in findings:
        for where in [f.location or "", *f.evidence]:
            m = LOC.match(where)
            if m and (m["file"], int(m["line"])) not in out:
                out.append((m["file"], int(m["line"])))
    return out


def _end(ctx: FixContext, path: Path, start: int) -> int:
    """Where the instruction or logical line that starts at `start` (0-based) ends: a RUN's whole span in the
    Dockerfile, the `\\` continuations in a script, the line itself in a requirement file."""
    text = path.read_text(errors="replace")
    if path.resolve() == ctx.env.dockerfile.resolve():
        span = next((s for s in instruction_spans(text) if s.keyword == "RUN" and s.start == start), None)
        if span is not None and span.heredoc is None:
            return span.end
    if path.suffix == ".txt":
        return start + 1
    return logical_line_end(text.splitlines(), start)


def _targets(ctx: FixContext, findings: list[Finding]) -> list[tuple[Path, int, int, list[str]]]:
    """(file, first line, end line, unpinned specs as written) for each place the findings name (0-based lines),
    from the task model's fetches: the same reading as the rule, so the fixer pins exactly what it reported."""
    wanted = _named_lines(findings)
    loose: dict[tuple[str, int], list[str]] = {}
    for f in model_of(ctx.env).fetches:
        python = f.manager in ("pip", "uv") and f.kind == "package"
        if python and f.pin in ("none", "range") and not f.offline and (f.file, f.line) in wanted:
            loose.setdefault((f.file, f.line), []).append(f.spec)
    out = []
    for (file, line), names in loose.items():
        path = ctx.file(file)
        if path.is_file():
            out.append((path, line - 1, _end(ctx, path, line - 1), list(dict.fromkeys(names))))
    return out


def _pin_in(lines: list[str], start: int, end: int, name: str, pin: str) -> bool:
    """Replace the first written `name` between lines start..end by `pin`; False when it is not written there."""
    pattern = re.compile(rf"(?<![\w.$-]){re.escape(name)}(?![\w.=-])")
    for i in range(start, end):
        if pattern.search(lines[i]):
            lines[i] = pattern.sub(pin, lines[i], count=1)
            return True
    return False


def precondition(ctx: FixContext, findings: list[Finding]) -> str | None:
    if ctx.image_packages is None:
        return "no image to read the installed versions from"
    targets = _targets(ctx, findings)
    if not targets:
        return "the findings name no file:line with a pip install to pin"
    for path, start, end, names in targets:
        lines = path.read_text(errors="replace").splitlines()
        hidden = [n for n in names if not _pin_in(list(lines), start, end, n, n)]
        if hidden:
            return (
                f"{', '.join(hidden)} is not written at {path.name}:{start + 1} (a variable?): nothing to pin in place"
            )
    have = ctx.image_packages()
    missing = sorted(
        {n for *_span, names in targets for n in names if canonical(re.split(r"[<>=!~\[]", n)[0]) not in have}
    )
    return f"the image has no installed version of {', '.join(missing)}" if missing else None


@register_fixer(
    "pins",
    RULES,
    precondition=precondition,
    expected=lambda fs: ["unpinned-python-dependency stays silent", "oracle still passes"],
)
def fix_pins(ctx: FixContext, findings: list[Finding]) -> str:
    have = ctx.image_packages()
    pinned = []
    for path, start, end, names in _targets(ctx, findings):
        lines = path.read_text().splitlines()
        for name in names:
            base = re.split(r"[<>=!~\[]", name)[0]
            pin = f"{base}=={have[canonical(base)]}"
            if _pin_in(lines, start, end, name, pin):
                pinned.append(pin)
        path.write_text("\n".join(lines) + "\n")
    return f"pinned {', '.join(pinned)} to the versions the current image has"
