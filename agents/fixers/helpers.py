"""Helper fixer: a verifier helper installed in the agent's image moves into tests/ and runs from /tests.

Covers exploit-verifier-helper and verifier-runs-image-file. The image path comes from the finding's
evidence ("/usr/local/bin/x is in the image", "overwrote /usr/local/bin/x"); the fixer needs the COPY that
installs it from the build context, moves that file to tests/, drops the COPY (and a RUN that only
touches that path, e.g. its chmod), and points test.sh at /tests/<name>.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from envqa.agents.fixers.base import FixContext, register_fixer
from envqa.agents.fixers.dockerfile import copy_target, instructions, remove, workdir_before
from envqa.core.models import Finding
from envqa.core.parsers.shell import parse_script
from envqa.core.registry import rules_fixed_by

RULES = rules_fixed_by("helpers")  # exploit-verifier-helper, verifier-runs-image-file
IMAGE_PATH = re.compile(r"(?:^|\s)(/[\w./+-]+) is in the image|overwrote (/[\w./+-]+)")


def _paths(findings: list[Finding]) -> list[str]:
    out: list[str] = []
    for f in findings:
        for ev in f.evidence:
            for m in IMAGE_PATH.finditer(ev):
                p = m.group(1) or m.group(2)
                if p not in out:
                    out.append(p)
    return out


def _plan(ctx: FixContext, findings: list[Finding]):
    """[(image path, instruction index, build-context source)] and the paths with no COPY behind them."""
    env = ctx.env
    instrs = instructions(env.dockerfile.read_text())
    test_sh = ctx.file("tests/test.sh").read_text(errors="replace") if ctx.file("tests/test.sh").is_file() else ""
    plan, missing = [], []
    for path in _paths(findings):
        if path not in test_sh and not re.search(rf"(^|[\s;&|(]){re.escape(Path(path).name)}\b", test_sh):
            continue  # the exploit overwrote something the verifier does not run: not this fixer's business
        hit = None
        for i, ins in enumerate(instrs):
            parts = ins.copy_parts()
            if not parts:
                continue
            for src in parts[0]:
                if (
                    copy_target(parts[1], src, workdir_before(instrs, i), env.build_context) == path
                    and (env.build_context / src).is_file()
                ):
                    hit = (path, i, env.build_context / src)
        if hit:
            plan.append(hit)
        else:
            missing.append(path)
    return plan, missing


def _only_touches(script: str, path: str) -> bool:
    """A RUN whose every command is a chmod/chown of `path` (its flags and mode aside): it goes with the COPY."""
    cmds = parse_script(script)
    return bool(cmds) and all(
        c.name in ("chmod", "chown") and [w for w in c.words[1:] if not w.startswith("-")][-1:] == [path] for c in cmds
    )


def precondition(ctx: FixContext, findings: list[Finding]) -> str | None:
    if not ctx.file("tests/test.sh").is_file():
        return "no tests/test.sh (Harbor) to point at the moved helper"
    plan, missing = _plan(ctx, findings)
    if missing:
        return f"no COPY of a build-context file installs {', '.join(missing)}"
    if not plan:
        return "the helper the exploit rewrote is not one test.sh runs"
    return None


@register_fixer(
    "helpers",
    RULES,
    precondition=precondition,
    expected=lambda fs: [
        "oracle still passes",
        "exploit-verifier-helper fails",
        "verifier-runs-image-file stays silent",
    ],
)
def fix_helpers(ctx: FixContext, findings: list[Finding]) -> str:
    env = ctx.env
    plan, _ = _plan(ctx, findings)
    instrs = instructions(env.dockerfile.read_text())
    drop = []
    script = ctx.file("tests/test.sh")
    text = script.read_text()
    moved = []
    for path, index, source in plan:
        drop.append(instrs[index])
        drop += [ins for ins in instrs if ins.keyword == "RUN" and _only_touches(ins.args, path)]
        name = source.name
        dest = ctx.file("tests") / name
        shutil.move(str(source), dest)
        dest.chmod(0o755)
        text = text.replace(path, f"/tests/{name}")
        text = re.sub(
            rf"(^|[\s;&|(]){re.escape(name)}\b(?!/)",
            lambda m, name=name: f"{m.group(1)}/tests/{name}",
            text,
            flags=re.M,
        )
        text = text.replace(f"/tests//tests/{name}", f"/tests/{name}")
        moved.append(f"{path} -> tests/{name}")
    script.write_text(text)
    unique = [d for i, d in enumerate(drop) if d not in drop[:i]]
    remove(env.dockerfile, unique, "verifier helper moved to tests/ (uploaded only for the verifier)")
    return f"moved verifier helper(s) out of the agent's image into tests/: {', '.join(moved)}; test.sh runs them from /tests"
