"""Instruction fixer: instruction.md is made to state what the tests check (issue 34).

Covers instruction-contradicts-tests, instruction-omits-tested-requirement and
instruction-spelling-differs-from-tests. It reads the task the way the rules do (core/consistency), then:
  - a contradiction where the tests are right (the reference solution uses the tests' literal): the
    instruction's literal is corrected on its line (`/app/out/result.txt` -> `/app/output/result.txt`,
    `https://` -> `http://`, branch `release` -> `main`);
  - an unstated requirement: a sentence is added that states it ("Write the result to `/app/out.txt`.",
    "Do not modify `/app/db.sqlite`.", "The account must be named `deploy`.");
  - a spelling variant: a sentence is added with the exact form the tests compare, and a decimals count
    is corrected on its line.
It declines a contradiction where the reference solution uses neither literal (a person must say which is
right) and a task whose instruction lives in task.yaml (Terminal-Bench 1). Gated like every fixer: the gate
re-reads the rules on the candidate and runs the oracle.
"""

from __future__ import annotations

import re

from envqa.agents.fixers.base import FixContext, register_fixer
from envqa.core.consistency.compare import CONTRADICTS, SPELLING, UNSTATED, Mismatch
from envqa.core.environment import Environment
from envqa.core.models import Finding
from envqa.core.registry import rules_fixed_by
from envqa.core.task_model.facts import instruction_mismatches, task_facts

RULES = rules_fixed_by("instruction")
SENTENCES = {
    "output": "Write the result to `{want}`.",
    "exec": "Provide `{want}` as an executable program (the tests run it at that path).",
    "preserve": "Do not modify `{want}`.",
    "state": "Do not modify the database `{want}`: the tests check what it holds.",
    "user": "The account must be named `{want}`.",
    "branch": "Use the branch `{want}`.",
    "flag": "The program must accept the option `{want}` (the tests run it with it).",
    "key": "The output must hold the key `{want}` (the tests read it).",
    "spelling": "Spell `{stated}` as `{want}` in the output: the tests compare `{compared}` exactly.",
}
HEADER = "Checked by the tests:"


def _views(env: Environment) -> list[Environment]:
    return [env.for_step(s) for s in env.steps] if env.steps else [env]


def _todo(ctx: FixContext, findings: list[Finding]) -> list[tuple[str, Mismatch]]:
    """(instruction file, mismatch) for every mismatch of a rule among the findings."""
    rules = {f.rule for f in findings}
    out = []
    for view in _views(ctx.env):
        facts, found = instruction_mismatches(view)
        out += [(facts.instruction.file, m) for m in found if m.rule in rules]
    return out


def _tests_right(ctx: FixContext, m: Mismatch) -> bool:
    facts = task_facts(ctx.env if not ctx.env.steps else _views(ctx.env)[0])
    return facts.oracle_uses(m.want) or (m.what == "path" and m.want in facts.oracle_writes)


def precondition(ctx: FixContext, findings: list[Finding]) -> str | None:
    env = ctx.env
    if env.format == "tb1":
        return "the instruction lives in task.yaml (Terminal-Bench 1): edit it by hand or with the LLM reviser"
    todo = _todo(ctx, findings)
    if not todo:
        return "the rules no longer find these mismatches in the task's files"
    undecided = [m for _f, m in todo if m.rule == CONTRADICTS and not _tests_right(ctx, m)]
    if undecided:
        m = undecided[0]
        return (
            f"the reference solution uses neither {m.want} (tests) nor {m.stated} (instruction): which one is "
            "right is for a person or the LLM reviser to decide"
        )
    return None


def _replace_on_line(text: str, line: int, old: str, new: str) -> str:
    """`old` -> `new` on the claim's line: its quoted forms (`old`, "old") when there are any, else its first
    occurrence as a word there (prose may use the same word in another sense: "the 1.4.2 release")."""
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return text
    quoted = re.compile("([`\"'])" + re.escape(old) + r"\1")
    target = lines[line - 1]
    if quoted.search(target):
        lines[line - 1] = quoted.sub(lambda m: m.group(1) + new + m.group(1), target)
    else:
        lines[line - 1] = re.sub(r"(?<![\w.-])" + re.escape(old) + r"(?![\w-])", new, target, count=1)
    return "\n".join(lines)


def _correct(text: str, m: Mismatch) -> str:
    assert m.claim is not None and m.stated is not None
    if m.what == "decimals" and m.claim.kind == "decimals":
        return _replace_decimals(text, m, str(len(m.want.split(".")[-1])))
    return _replace_on_line(text, m.claim.line, m.stated, m.want)


def _replace_decimals(text: str, m: Mismatch, places: str) -> str:
    assert m.claim is not None
    lines = text.split("\n")
    lines[m.claim.line - 1] = re.sub(
        r"\b(\d|one|two|three|four|five|six)(\s+(?:decimal|digits))",
        places + r"\2",
        lines[m.claim.line - 1],
        count=1,
        flags=re.I,
    )
    return "\n".join(lines)


def _sentence(m: Mismatch) -> str:
    key = "spelling" if m.rule == SPELLING else m.what
    compared = m.test.value if len(m.test.value) <= 80 and "\n" not in m.test.value else m.want
    return SENTENCES[key].format(want=m.want, stated=m.stated, compared=compared)


def _append(text: str, sentences: list[str]) -> str:
    body = text.rstrip("\n")
    if HEADER not in body:
        body += f"\n\n{HEADER}\n"
    else:
        body += "\n"
    return body + "".join(f"- {s}\n" for s in sentences)


@register_fixer(
    "instruction",
    RULES,
    precondition=precondition,
    expected=lambda fs: ["oracle still passes"] + [f"{f.rule} stays silent" for f in fs],
)
def fix_instruction(ctx: FixContext, findings: list[Finding]) -> str:
    by_file: dict[str, list[Mismatch]] = {}
    for file, m in _todo(ctx, findings):
        by_file.setdefault(file, []).append(m)
    done = []
    for file, items in by_file.items():
        path = ctx.file(file)
        text = path.read_text()
        added = []
        for m in items:
            corrects = m.rule == CONTRADICTS or (m.what == "decimals" and m.claim is not None)
            if corrects:
                text = _correct(text, m)
                done.append(f"{file}: {m.stated} -> {m.want}")
            elif m.rule in (UNSTATED, SPELLING) and (s := _sentence(m)) not in added:
                added.append(s)
                done.append(f"{file}: + {s}")
        path.write_text(_append(text, added) if added else text)
    return "instruction.md now states what the tests check: " + "; ".join(done)
