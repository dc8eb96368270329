"""Separate-verifier fixer: the structural alternative to the in-place fixers for in-container tampering.

A reward written before the verifier runs, a conftest.py planted where pytest looks, a grader script in the
image rewritten: each works because the verifier runs in the container the agent just had. This fixer moves
the verifier out of it, the way Harbor 0.26 runs schema 1.4 tasks (`harbor/models/task/verifier_mode.py`,
`harbor/trial/trial.py` `_run_separate_verifier`, `harbor/trial/artifact_handler.py`): task.toml gets
`[verifier] environment_mode = "separate"`, tests/Dockerfile builds the verifier's own image, and
top-level `artifacts` declare the agent's outputs the tests read; Harbor re-materialises each at its source
path in the fresh verifier container, and nothing else of the agent's container (no /logs/verifier, no
planted conftest.py, no rewritten helper) gets there. test.sh is left as it is.

What we derive, and how (Harbor leaves both to the task's author):
- tests/Dockerfile repeats environment/Dockerfile (same FROM, so the image map applies; same setup, so
  pytest, helpers and inputs the verifier used from the agent's image are there, pristine); a file the
  environment's build context supplies is copied to tests/_env/ and the COPY points there; `COPY . /tests/`
  bakes the tests in (Harbor's template-task: a tests/Dockerfile bundles its tests, they are not uploaded).
- artifacts: the absolute paths the instruction and the reference solution name, kept when the tests read
  them (the path, or a directory above it, appears in tests/). The workdir itself, or a directory above it,
  is never one (a planted conftest.py would travel with it); a file the image already has is one only when
  the solution touches it (a task that asks to edit it).

It is not a rule family of the registry (each rule has one in-place fixer: registry.rules_fixed_by): the
reviser proposes it per `[reviser] separate_verifier` ("fallback": when the in-place fixers decline these
rules or their proposal fails the gate; "prefer": first; "off"). The other findings of the version go to
the in-place families on top of the conversion (a reward not written on failure is still a flaw there).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from envqa.agents.fixers import MechanicalFix, actionable, mechanical_fix
from envqa.agents.fixers.base import FixContext, render_template
from envqa.agents.fixers.dockerfile import copy_target, instructions, workdir_before
from envqa.core.environment import EnvFormat
from envqa.core.models import Finding
from envqa.core.registry import is_registered

# The tampering a fresh verifier container closes: the agent's writes reach it only as declared artifacts.
# (exploit-trusted-file / verifier-trusts-agent-file: the image files the verifier was traced reading or running
# are its own image's copies there.)
RULES = tuple(
    r
    for r in (
        "exploit-reward-tamper",
        "exploit-workspace-conftest",
        "exploit-verifier-helper",
        "exploit-harness-plant",
        "exploit-trusted-file",
        "verifier-trusts-agent-file",
    )
    if is_registered(r)
)
MODES = ("off", "fallback", "prefer")
AUTHOR = "fixer:separate-verifier:"  # + the rules it addresses
ABS_PATH = re.compile(r"(?<![\w.~$/-])(/(?:[\w.+-]+/?)+)")
NOT_OUTPUTS = (
    "/tests",
    "/logs",
    "/solution",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/etc",
    "/dev",
    "/proc",
    "/sys",
    "/opt/envqa",
    "/installed-agent",
)


def _paths_in(text: str) -> set[str]:
    return {m.group(1).rstrip("/.") or "/" for m in ABS_PATH.finditer(text)}


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except (OSError, UnicodeError):
        return ""


def _writes(script: str, path: str) -> bool:
    """The script writes `path` (a redirect, tee, sed -i, cp/mv/install to it, or open(path, "w"/"a"))."""
    p = re.escape(path)
    return bool(
        re.search(rf"(>>?|\btee\s+(-a\s+)?)\s*[\"']?{p}(?![\w./-])", script)
        or re.search(rf"^\s*(sed\s+-i|cp|mv|install|patch|touch)\b[^\n]*[\s\"']{p}[\"']?\s*$", script, re.M)
        or re.search(rf"open\(\s*[\"']{p}[\"']\s*,\s*[\"'][wa]", script)
    )


def _image_files(ctx: FixContext) -> set[str]:
    """Paths the agent's image gets from its build context (COPY/ADD without --from)."""
    env = ctx.env
    instrs = instructions(env.dockerfile.read_text(errors="replace"))
    out: set[str] = set()
    for i, ins in enumerate(instrs):
        parts = ins.copy_parts()
        if not parts:
            continue
        for src in parts[0]:
            target = copy_target(parts[1], src, workdir_before(instrs, i), env.build_context)
            if target.endswith("/") and (env.build_context / src).is_dir():
                out |= {
                    target + p.relative_to(env.build_context / src).as_posix()
                    for p in (env.build_context / src).rglob("*")
                }
            out.add(target.rstrip("/"))
    return out


def _workdir(ctx: FixContext) -> str:
    instrs = instructions(ctx.env.dockerfile.read_text(errors="replace"))
    return workdir_before(instrs, len(instrs))


def artifacts(ctx: FixContext) -> list[str]:
    """The agent's outputs the tests read (see the module docstring), sorted."""
    env = ctx.env
    solution = "\n".join(_text(p) for p in ctx.file("solution").rglob("*") if p.is_file())
    tests = "\n".join(_text(p) for p in ctx.file("tests").rglob("*") if p.is_file())
    read = _paths_in(tests)
    image, workdir = _image_files(ctx), _workdir(ctx).rstrip("/") or "/"
    out = []
    for path in sorted(_paths_in(env.instruction) | _paths_in(solution)):
        p = PurePosixPath(path)
        if path == "/" or any(path == x or path.startswith(x + "/") for x in NOT_OUTPUTS):
            continue
        if path == workdir or p in PurePosixPath(workdir).parents:
            continue  # the whole workspace: anything planted in it would reach the verifier
        if path in image and not _writes(solution, path):
            continue  # an input of the image the solution does not change: the verifier's image has it
        if path in read or any(str(a) in read for a in p.parents if str(a) != "/"):
            out.append(path)
    return [a for a in out if not any(a.startswith(b + "/") for b in out)]  # a directory covers its files


def precondition(ctx: FixContext, findings: list[Finding]) -> str | None:
    env = ctx.env
    if env.format != EnvFormat.HARBOR:
        return "not a Harbor task (separate verifier mode is Harbor schema 1.4)"
    if env.config.has_separate_verifier():
        return "the verifier already runs in a separate container"
    if env.config.steps:
        return "a multi-step task (each step's verifier would need its own conversion)"
    if [s for s in env.compose_services if s != "main"]:
        return "compose sidecars: the separate verifier would need them too"
    if not ctx.file("tests/test.sh").is_file():
        return "no tests/test.sh"
    if ctx.file("tests/Dockerfile").exists() or ctx.file("tests/_env").exists():
        return "tests/ already has a Dockerfile or _env/"
    if not artifacts(ctx):
        return (
            "cannot tell which of the agent's files the tests read (no path the instruction or the "
            "solution names, below the workdir, appears in tests/)"
        )
    return None


def _sources(context: Path, src: str) -> list[Path]:
    """What one COPY source names in the build context (`.` is the context itself; globs expanded)."""
    rel = src.strip("/")
    if rel in ("", "."):
        return [context]
    return sorted(context.glob(rel)) if any(c in rel for c in "*?[") else [context / rel]


def _copy_line(ctx: FixContext, ins, copied: list[str]) -> str:
    """A COPY/ADD from the environment's build context, re-pointed at tests/_env/ (its files copied there)."""
    env = ctx.env
    flags, words = ins.span.flags_and_args()
    sources = []
    for src in words[:-1]:
        if re.match(r"^[a-z]+://", src):
            sources.append(src)
            continue
        for hit in _sources(env.build_context, src):
            rel = hit.relative_to(env.build_context).as_posix()
            dest = ctx.file("tests/_env") / rel
            if hit.is_dir():
                shutil.copytree(hit, dest, symlinks=True, dirs_exist_ok=True)
            elif hit.is_file():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(hit, dest)
            copied.append(rel)
        rel = src.strip("/")
        sources.append("_env/" if rel in ("", ".") else "_env/" + rel + ("/" if src.endswith("/") else ""))
    opts = " ".join(f"--{k}={v}" if v else f"--{k}" for k, v in flags.items())
    return " ".join(x for x in (ins.keyword, opts, json.dumps(sources + [words[-1]])) if x)


def tests_dockerfile(ctx: FixContext) -> tuple[str, list[str]]:
    """tests/Dockerfile's text, and the build-context files copied to tests/_env/."""
    lines = ctx.env.dockerfile.read_text(errors="replace").splitlines()
    instrs = instructions("\n".join(lines))
    out, copied, pos = [], [], 0
    for ins in instrs:
        out += lines[pos : ins.start]
        pos = ins.end
        parts = ins.copy_parts()
        if parts is not None and not any(w.startswith("<<") for w in parts[0]):  # a heredoc COPY needs no context
            out.append(_copy_line(ctx, ins, copied))
        else:
            out += lines[ins.start : ins.end]
    out += lines[pos:]
    return render_template("separate_tests.Dockerfile.j2", body="\n".join(out).rstrip()), copied


def _edit_toml(text: str, declared: list[str]) -> str:
    """Add `artifacts` (top level: before the first table) and `environment_mode` under [verifier]."""
    lines = text.splitlines()
    first_table = next((i for i, ln in enumerate(lines) if re.match(r"^\s*\[", ln)), len(lines))
    block = [
        "# envqa separate fixer: the agent's outputs the tests read, handed to the separate verifier",
        f"artifacts = {json.dumps(declared)}",
        "",
    ]
    lines[first_table:first_table] = block
    header = next((i for i, ln in enumerate(lines) if re.match(r"^\s*\[verifier\]\s*(#.*)?$", ln)), None)
    if header is None:
        lines += ["", "[verifier]", 'environment_mode = "separate"']
    else:
        lines.insert(header + 1, 'environment_mode = "separate"')
    return "\n".join(lines) + "\n"


def convert(ctx: FixContext, findings: list[Finding], test_sh_kept: bool = True) -> str:
    """Edit ctx.root into a separate-mode task; returns the rationale."""
    declared = artifacts(ctx)
    dockerfile, copied = tests_dockerfile(ctx)
    ctx.file("tests/Dockerfile").write_text(dockerfile)
    toml = ctx.file("task.toml")
    toml.write_text(_edit_toml(toml.read_text(), declared))
    why = (
        f'the verifier runs in its own container (environment_mode = "separate"), built from tests/Dockerfile '
        f"(environment/Dockerfile's base and setup, tests baked in); it receives only the declared artifacts "
        f"{', '.join(declared)}, so {', '.join(sorted({f.rule for f in findings}))} cannot reach it"
        + ("; test.sh is unchanged" if test_sh_kept else "")
    )
    if copied:
        why += f"; build-context files copied to tests/_env/: {', '.join(sorted(set(copied)))}"
    return why


def separate_fix(
    version_dir: Path,
    findings: list[Finding],
    workdir: Path | None = None,
    image_packages: Callable[[], dict[str, str]] | None = None,
) -> MechanicalFix | None:
    """The conversion on a scratch copy, plus the in-place families for the version's other findings.
    None when no finding is one it addresses; `fixed_dir` None (and `declined` filled) when it declines."""
    todo = actionable(findings)
    mine = [f for f in todo if f.rule in RULES]
    if not mine:
        return None
    scratch = Path(tempfile.mkdtemp(prefix="envqa-separate-", dir=workdir))
    shutil.copytree(version_dir, scratch / "task", symlinks=True)
    ctx = FixContext(root=scratch / "task", findings=mine, image_packages=image_packages)
    out = MechanicalFix(fixed_dir=ctx.root)
    test_sh = _text(ctx.file("tests/test.sh"))
    rest = [f for f in todo if f.rule not in RULES]
    why_not = precondition(ctx, mine)
    if rest and not why_not:  # the in-place families first, on the shared-mode task they were written for
        inner = mechanical_fix(ctx.root, rest, workdir=workdir, image_packages=image_packages)
        try:
            if inner.addressed:
                shutil.rmtree(ctx.root)
                shutil.copytree(inner.fixed_dir, ctx.root, symlinks=True)
            out.addressed, out.rationale = list(inner.addressed), list(inner.rationale)
            out.expected = list(inner.expected)
            out.declined.update(inner.declined)
        finally:
            shutil.rmtree(inner.fixed_dir.parent, ignore_errors=True)
        why_not = precondition(ctx, mine)
    if why_not:
        shutil.rmtree(scratch, ignore_errors=True)
        return MechanicalFix(
            fixed_dir=None, declined={f.rule: why_not for f in mine}, needs_model=sorted({f.rule for f in todo})
        )
    out.rationale.insert(0, convert(ctx, mine, test_sh_kept=_text(ctx.file("tests/test.sh")) == test_sh))
    out.addressed = sorted({f.rule for f in mine}) + out.addressed
    expected = ["oracle still passes", "nop still fails"] + [f"{r} fails" for r in sorted({f.rule for f in mine})]
    out.expected = expected + [e for e in out.expected if e not in expected]
    out.needs_model = sorted({f.rule for f in todo} - set(out.addressed))
    return out


def discard(fix: MechanicalFix | None) -> None:
    if fix is not None and fix.fixed_dir is not None:
        shutil.rmtree(fix.fixed_dir.parent, ignore_errors=True)


def choose_fix(
    mode: str,
    version_dir: Path,
    findings: list[Finding],
    workdir: Path | None = None,
    image_packages: Callable[[], dict[str, str]] | None = None,
) -> tuple[MechanicalFix, str]:
    """The first mechanical proposal for a version: (the fix, its author). "prefer": the separate conversion
    when it applies; "fallback": it when the in-place fixers leave one of its rules unaddressed."""
    if mode == "prefer":
        alt = separate_fix(version_dir, findings, workdir, image_packages)
        if alt is not None and alt.addressed:
            return alt, AUTHOR
        discard(alt)
    fix = mechanical_fix(version_dir, findings, workdir=workdir, image_packages=image_packages)
    left = {f.rule for f in actionable(findings) if f.rule in RULES} - set(fix.addressed)
    if mode == "fallback" and left:
        alt = separate_fix(version_dir, findings, workdir, image_packages)
        if alt is not None and alt.addressed and set(alt.addressed) >= set(fix.addressed):
            discard(fix)
            return alt, AUTHOR
        discard(alt)
    return fix, "fixer:"


def separate_after_gate(
    mode: str, previous, version_dir: Path, findings: list[Finding], workdir: Path | None = None
) -> MechanicalFix | None:
    """After an in-place fixers' proposal failed the gate: the conversion, when it applies (else None)."""
    if mode == "off" or not previous.author.startswith("fixer:") or previous.author.startswith(AUTHOR):
        return None
    alt = separate_fix(version_dir, findings, workdir)
    if alt is not None and alt.addressed:
        return alt
    discard(alt)
    return None
