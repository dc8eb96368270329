"""Reward fixer: the verifier clears /logs/verifier first and writes the reward itself, on every path.

Covers reward-not-written-on-failure, reward-written-unconditionally, exploit-reward-tamper (and the
nop-passes / verifier-error (no reward on a failing run) those cause). The original checks stay as they are, inside a
subshell; each reward write in them becomes an assignment (`echo 1 > reward.txt` -> `__envqa_reward=1`), so "last
write wins" keeps its meaning, and the wrapper writes 1 exactly when the checks ended with reward 1. For an
unconditional success write, checks whose status was swallowed (`cmd && echo ok || echo bad`) now count as failures;
with no such check to tie the reward to, the fixer declines (a model has to decide what "pass" means).
"""

from __future__ import annotations

import re

from envqa.agents.fixers.base import FixContext, register_fixer, render_template
from envqa.core.models import Finding
from envqa.core.registry import rules_fixed_by

RULES = rules_fixed_by("reward")  # the reward-writing flaws, and the nop-passes / verifier-error they cause
CONSEQUENCES = {"nop-passes", "verifier-error"}  # fixed here only when a reward-writing flaw explains them
WRITE = re.compile(
    r"""(?:echo|printf)\s+(?:-n\s+)?(["']?)(?P<value>[^\s"'>|;&]+)\1\s*>>?\s*["']?/logs/verifier/"""
    r"""reward\.txt["']?"""
)
ANY_WRITE = re.compile(r"(>>?|\btee\b)\s*[\"']?\S*reward\.(txt|json)")
SWALLOWED = re.compile(
    r"^(?P<indent>\s*)(?P<check>[^#].*?)\s*&&\s*(?P<ok>(?:echo|printf)\b[^|&;]*?)\s*\|\|\s*"
    r"(?P<bad>(?:echo|printf)\b[^|&;]*?)\s*$"
)
SUCCESS = {"1", "1.0", "1.00"}
FAILURE = {"0", "0.0", "0.00"}


def _script(ctx: FixContext):
    path = ctx.file("tests/test.sh")
    return path if path.is_file() else None


def _line_of(finding: Finding) -> int | None:
    m = re.search(r":(\d+)$", finding.location or "")
    return int(m.group(1)) if m else None


def precondition(ctx: FixContext, findings: list[Finding]) -> str | None:
    script = _script(ctx)
    if script is None:
        return "no tests/test.sh (Harbor) to rewrite"
    text = script.read_text(errors="replace")
    if "__envqa_checks" in text:
        return "test.sh already has the reward wrapper"
    lines = text.splitlines()
    for n, line in enumerate(lines, start=1):
        if line.lstrip().startswith("#") or not ANY_WRITE.search(line):
            continue
        w = WRITE.search(line)  # (the first write on the line decides; the loop that was here never varied it)
        if w is None or w.group("value") not in SUCCESS | FAILURE:
            return f"test.sh:{n} writes a computed or JSON reward; only literal 0/1 writes can be rewritten"
    rules = {f.rule for f in findings}
    if rules & CONSEQUENCES and not rules & (set(RULES) - CONSEQUENCES):
        return f"{', '.join(sorted(rules & CONSEQUENCES))} without a reward-writing flaw that explains it"
    if "reward-written-unconditionally" in rules:
        uncond = next((f for f in findings if f.rule == "reward-written-unconditionally"), None)
        n = _line_of(uncond) if uncond else None
        if n is None or not any(SWALLOWED.match(ln) for ln in lines[: n - 1]):
            return "no check before the unconditional reward whose status could decide it"
    return None


def _rewrite_body(lines: list[str], uncond_line: int | None) -> list[str]:
    out = []
    for n, line in enumerate(lines, start=1):
        if n == 1 and line.startswith("#!"):
            continue
        if uncond_line is not None and n < uncond_line and not line.lstrip().startswith("#"):
            m = SWALLOWED.match(line)
            if m and not ANY_WRITE.search(line):
                line = f"{m['indent']}if {m['check']}; then {m['ok']}; else {m['bad']}; __envqa_failed=1; fi"

        def assign(m: re.Match) -> str:
            return "__envqa_reward=1" if m.group("value") in SUCCESS else "__envqa_reward=0"

        if not line.lstrip().startswith("#"):
            line = WRITE.sub(assign, line)
        out.append(line)
    return out


@register_fixer(
    "reward",
    RULES,
    precondition=precondition,
    expected=lambda fs: (
        ["nop still fails", "oracle still passes"]
        + [f"{f.rule} stays silent" for f in fs if f.rule not in CONSEQUENCES]
    ),
)
def fix_reward(ctx: FixContext, findings: list[Finding]) -> str:
    script = _script(ctx)
    lines = script.read_text(errors="replace").splitlines()
    uncond = next((f for f in findings if f.rule == "reward-written-unconditionally"), None)
    body = _rewrite_body(lines, _line_of(uncond) if uncond else None)
    script.write_text(render_template("reward_test.sh.j2", body="\n".join(body)))
    script.chmod(0o755)
    why = (
        "tests/test.sh now clears /logs/verifier first and writes the reward itself: 1 exactly when the original "
        "checks pass, 0 on every other path"
    )
    if uncond:
        why += "; the check whose status was swallowed now decides the reward"
    return why
