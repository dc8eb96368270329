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
from envqa.core.parsers.dockerfile import instruction_spans, parse_dockerfile
from envqa.core.parsers.pip import pip_args, unpinned_packages
from envqa.core.parsers.shell import logical_line_end, parse_script
from envqa.core.registry import rules_fixed_by

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


def _pip_commands(ctx: FixContext, path: Path) -> list[tuple[int, int, list[str]]]:
    """(first line, end line, unpinned names) of every pip install in a Dockerfile or script, 0-based lines.

    The same reading as the rule (core/parsers): `|| true`, redirections, heredoc bodies and `\\`
    continuations are understood, so a package on a continuation line is found and pinned where it is."""
    text = path.read_text(errors="replace")
    lines = text.splitlines()
    out = []
    if path.resolve() == ctx.env.dockerfile.resolve():
        spans = [s for s in instruction_spans(text) if s.keyword == "RUN"]
        for _stage, cmd in parse_dockerfile(path).run_commands():
            names = unpinned_packages(pip_args(cmd) or [])
            span = next((s for s in spans if s.heredoc is None and s.start == cmd.line - 1), None)
            start = cmd.line - 1
            out.append((start, span.end if span else logical_line_end(lines, start), names))
    else:
        for cmd in parse_script(text):
            names = unpinned_packages(pip_args(cmd) or [])
            out.append((cmd.line - 1, logical_line_end(lines, cmd.line - 1), names))
    return [(s, e, names) for s, e, names in out if names]


def _targets(ctx: FixContext, findings: list[Finding]) -> list[tuple[Path, int, int, list[str]]]:
    """(file, first line, end line, unpinned names) for each finding's location (0-based lines)."""
    out = []
    for f in findings:
        m = LOC.match(f.location or "")
        if not m or not ctx.file(m["file"]).is_file():
            continue
        path = ctx.file(m["file"])
        for start, end, names in _pip_commands(ctx, path):
            if start == int(m["line"]) - 1 and (path, start, end, names) not in out:
                out.append((path, start, end, names))
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
