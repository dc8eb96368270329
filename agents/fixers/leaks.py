"""Leak fixer: what leaks the solution, the tests or the expected answers into the agent's image goes.

Covers dockerfile-copies-solution / -tests (the COPY/ADD goes), and exploit-leaked-answers,
solution-output-in-image, test-literals-in-image: the Dockerfile instruction that puts a leaked path in
the image goes. When the verifier itself reads that path, the file moves to tests/ (uploaded only for
the verifier) and the verifier reads it from /tests instead. The fixer declines when it cannot find the
instruction that creates a leaked path (the leak may come from the base image or a package).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from envqa.agents.fixers.base import FixContext, register_fixer
from envqa.agents.fixers.dockerfile import Instruction, copy_target, instructions, remove, workdir_before
from envqa.core.models import Finding
from envqa.core.registry import rules_fixed_by

COPY_RULES = {"dockerfile-copies-solution": "solution", "dockerfile-copies-tests": "tests"}
RULES = rules_fixed_by("leaks")  # the rule registry's rows with fixer="leaks"
LEAK_RULES = tuple(r for r in RULES if r not in COPY_RULES)  # leaked answers, solution outputs, test literals
LEAKED_PATH = re.compile(r"(?:image file|copied|replaying leaked script|decrypted|found in)\s+(/[\w./+-]+)")


def leaked_paths(findings: list[Finding]) -> list[str]:
    paths: list[str] = []
    for f in findings:
        for ev in f.evidence:
            found = [m.group(1) for m in LEAKED_PATH.finditer(ev)]
            found += [p for lst in re.findall(r"found in ((?:/[\w./+-]+, )+/[\w./+-]+)", ev) for p in lst.split(", ")]
            for p in found:
                p = p.rstrip(".,:;")
                if p not in paths:
                    paths.append(p)
    return paths


def _dockerfile(ctx: FixContext) -> Path:
    env = ctx.env
    return env.dockerfile


def _copies_task_dir(ins: Instruction, which: str) -> bool:
    parts = ins.copy_parts()
    if parts is None:
        return False
    names = {which, f"{which}/", f"./{which}", f"./{which}/"}
    return any(s.rstrip("/") in {n.rstrip("/") for n in names} or s.startswith(f"{which}/") for s in parts[0])


def _creators(instrs: list[Instruction], path: str, context: Path) -> list[Instruction]:
    """Instructions that put `path` in the image: a COPY onto it (or its directory), a RUN that names it."""
    hits = []
    for i, ins in enumerate(instrs):
        parts = ins.copy_parts()
        if parts:
            wd = workdir_before(instrs, i)
            for src in parts[0]:
                target = copy_target(parts[1], src, wd, context)
                if path == target or path.startswith(target.rstrip("/") + "/"):
                    hits.append(ins)
                    break
        elif ins.keyword == "RUN" and (path in ins.args or str(Path(path).parent) in ins.args.split()):
            hits.append(ins)
    return hits


def _plan(ctx: FixContext, findings: list[Finding]) -> tuple[list[Instruction], list[str]]:
    df = _dockerfile(ctx)
    instrs = instructions(df.read_text())
    drop: list[Instruction] = []
    missing: list[str] = []
    rules = {f.rule for f in findings}
    for rule, which in COPY_RULES.items():
        if rule in rules:
            drop += [ins for ins in instrs if _copies_task_dir(ins, which) and ins not in drop]
    for path in leaked_paths([f for f in findings if f.rule in LEAK_RULES]):
        found = _creators(instrs, path, ctx.env.build_context)
        if not found and not any(_is_copy_of(ins, path, instrs, ctx.env.build_context) for ins in drop):
            missing.append(path)
        drop += [ins for ins in found if ins not in drop]
    return drop, missing


def _is_copy_of(ins: Instruction, path: str, instrs: list[Instruction], context: Path) -> bool:
    parts = ins.copy_parts()
    if not parts:
        return False
    wd = workdir_before(instrs, instrs.index(ins))
    return any(path.startswith(copy_target(parts[1], s, wd, context).rstrip("/")) for s in parts[0])


def precondition(ctx: FixContext, findings: list[Finding]) -> str | None:
    drop, missing = _plan(ctx, findings)
    if missing:
        return f"no Dockerfile instruction creates {', '.join(missing)}"
    if not drop:
        return "no COPY/ADD/RUN in the Dockerfile puts the leaked files in the image"
    if any(ins.keyword == "RUN" and _verifier_reads(ctx, ins) for ins in drop):
        return "the verifier reads what a removed RUN generates; moving it into the verifier phase needs a model"
    return None


def _verifier_reads(ctx: FixContext, ins: Instruction) -> bool:
    tests = ctx.file("tests")
    text = "\n".join(p.read_text(errors="replace") for p in tests.rglob("*") if p.is_file()) if tests.is_dir() else ""
    return any(tok in text for tok in re.findall(r"/[\w./-]{4,}", ins.args))


@register_fixer(
    "leaks",
    RULES,
    precondition=precondition,
    expected=lambda fs: ["oracle still passes", "nop still fails"] + [f"{f.rule} stays silent" for f in fs],
)
def fix_leaks(ctx: FixContext, findings: list[Finding]) -> str:
    df = _dockerfile(ctx)
    drop, _missing = _plan(ctx, findings)
    instrs = instructions(df.read_text())
    moved = []
    tests_text = {p: p.read_text(errors="replace") for p in ctx.file("tests").rglob("*") if p.is_file()}
    for ins in drop:
        parts = ins.copy_parts()
        if not parts:
            continue
        wd = workdir_before(instrs, instrs.index(ins))
        for src in parts[0]:
            target = copy_target(parts[1], src, wd, ctx.env.build_context)
            source = ctx.env.build_context / src
            users = [p for p, t in tests_text.items() if target in t]
            if users and source.is_file() and not src.startswith(("solution", "tests")):
                dest = ctx.file("tests") / source.name
                shutil.copy2(source, dest)
                for p in users:
                    p.write_text(p.read_text().replace(target, f"/tests/{source.name}"))
                moved.append(f"{src} -> tests/{source.name}")
            if source.exists() and not any(src in o.args for o in instrs if o not in drop):
                shutil.rmtree(source) if source.is_dir() else source.unlink()
    remove(df, drop, "removed what leaked answers or the solution into the agent's image")
    why = f"removed {len(drop)} Dockerfile instruction(s) that put the solution or expected answers in the image"
    return why + (f"; the verifier's own copy moved: {', '.join(moved)}" if moved else "")
