"""Variations the verifier must accept: the dual of mutation testing, on the same kept oracle end state.

Mutants are wrong answers a verifier must reject (probes/mutation/probe.py); variations are right answers it must
accept. On the passing oracle's kept container (probes/oracle_state.py) the end state is changed in ways the
instruction does not forbid (probes/variation/kinds.py: an unrelated file beside each output the oracle
created, a trailing newline toggled on a text output, JSON keys reordered, the build products of the
instruction's own commands) and the verifier is run again. A verifier that now fails rejects good work:
`verifier-rejects-allowed-variation` (brittleness), with the variation and the failing test line.

Cost: the file variations are first tried all at once (one verifier run, the common case on a sound task);
only when that fails is each tried alone to name the culprit. Before anything is reported, the verifier runs
once more on the unchanged state (the control): when that fails too, the verifier is nondeterministic
(verifier-nondeterministic's business), not brittle. The build products come last, since a build may rewrite
files; what it added is removed before the control. Every verifier run counts against `[probes] max_variants`
(0: off) and is recorded like a mutant: `probes/variant-N/` in the oracle trial's directory, with a
`variant.json` saying what was changed and the verdict.

Which files are the oracle's outputs comes from the container's diff against its image (`docker diff`), as for
mutation testing: added regular files outside our own and system directories (a file the instruction names
counts even under one), plus changed files the instruction names.
"""

from __future__ import annotations

import json
import posixpath
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from envqa.agents.trial import TrialVerifier
from envqa.core.defaults import (
    PROBE_EXEC_SEC,
    PROBE_QUICK_EXEC_SEC,
)
from envqa.core.defaults import (
    VARIATION_BUILD_SEC as BUILD_TIMEOUT,
)
from envqa.core.defaults import (
    VARIATION_MAX_EXTRA_DIRS as MAX_EXTRA_DIRS,
)
from envqa.core.defaults import (
    VARIATION_MAX_FILES as MAX_FILES,
)
from envqa.core.models import Finding, TrialResult
from envqa.core.sandbox import Sandbox, SandboxError
from envqa.probes.flakiness import verdict_on_state
from envqa.probes.mutation.kinds import PACKAGE_PARTS, SYSTEM_PREFIXES, code_kind, stated_in, traced_code
from envqa.probes.mutation.probe import IGNORED_PREFIXES, MAX_BYTES
from envqa.probes.variation.kinds import (
    EXTRA_NAME,
    EXTRA_TEXT,
    BuildCommand,
    Forbidden,
    build_commands,
    failing_lines,
    forbidden,
    json_variant,
    line_sentence,
    newline_variant,
)
from envqa.probes.verifier_writes import verifier_text

log = structlog.get_logger(__name__)

RULE = "verifier-rejects-allowed-variation"
PROBE = "oracle_state/variation"


@dataclass
class Variation:
    """One change to the end state: write `data` at `path` (None: delete it); `restore` puts the original back
    (None: delete `path`)."""

    kind: str
    path: str
    what: str
    data: bytes | None
    restore: bytes | None
    mode: int = 0o644


@dataclass
class _Run:
    """The probe's bookkeeping on one end state: its trials, what it skipped, what it found."""

    sandbox: Sandbox
    env: object
    result: TrialResult
    threshold: float
    budget: int
    verifier: TrialVerifier  # this end state's verifier (a separate one starts its own container)
    tried: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # evidence lines, one per rejected variation
    control: str | None = None  # the unchanged state's verdict, once asked

    @property
    def base(self) -> Path:
        return Path(self.result.artifacts_dir or ".") / "probes"

    def judge(self, label: str, variations: list[str]) -> tuple[str, list[str]]:
        """Run the verifier on the current state as variant trial N; (verdict, failing lines)."""
        self.tried += 1
        out = self.base / f"variant-{self.tried}"
        verdict = verdict_on_state(self.sandbox, self.env, out, self.threshold, self.verifier)
        stdout = out / "verifier" / "test-stdout.txt"
        lines = failing_lines(stdout.read_text(errors="replace")) if verdict != "pass" and stdout.is_file() else []
        (out / "variant.json").write_text(
            json.dumps(
                {
                    "variant": self.tried,
                    "label": label,
                    "variations": variations,
                    "verdict": verdict,
                    "failing_lines": lines,
                },
                indent=1,
            )
        )
        log.info("variation.trial", variant=self.tried, label=label, verdict=verdict)
        return verdict, lines

    def unchanged_passes(self) -> bool:
        if self.control is None:
            out = self.base / "variant-control"
            self.control = verdict_on_state(self.sandbox, self.env, out, self.threshold, self.verifier)
            (out / "variant.json").write_text(
                json.dumps({"variant": "control", "variations": [], "verdict": self.control}, indent=1)
            )
        return self.control == "pass"


def created_outputs(sandbox: Sandbox, instruction: str, limit: int = MAX_FILES) -> list[tuple[str, bool]]:
    """(path, created) for the oracle's output files: regular files the container added (created=True), outside
    our own, hidden, cache and system directories unless the instruction names them, and changed files the
    instruction names (created=False); the named ones first, at most `limit`."""
    try:
        changes = sandbox.changed_paths()
    except NotImplementedError:
        return []
    except (SandboxError, OSError) as e:
        log.warning("variation.diff_failed", error=str(e))
        return []
    picked: dict[str, bool] = {}
    for c in changes:
        named = stated_in(c.path, instruction)
        hidden = "/." in c.path or "__pycache__" in c.path or c.path.endswith(".pyc")
        system = c.path.startswith(SYSTEM_PREFIXES) or any(part in c.path for part in PACKAGE_PARTS)
        if c.path.startswith(IGNORED_PREFIXES) or hidden or (system and not named):
            continue
        if c.kind == "added" or (c.kind == "changed" and named):
            picked[c.path] = c.kind == "added"
    paths = sorted(picked, key=lambda p: (not stated_in(p, instruction), p))[: limit * 4]
    if not paths:
        return []
    res = sandbox.exec(
        [
            "bash",
            "-c",
            'for p in "$@"; do [ -f "$p" ] && [ ! -L "$p" ] && [ $(stat -c %s "$p") -le '
            + str(MAX_BYTES)
            + ' ] && echo "$p"; done; true',
            "_",
            *paths,
        ],
        timeout=PROBE_EXEC_SEC,
    )
    files = set(res.stdout.splitlines())
    return [(p, picked[p]) for p in paths if p in files][:limit]


def _file_variations(run: _Run, outputs: list[tuple[str, bool]], forbid: Forbidden) -> list[Variation]:
    """The newline and JSON variations of each text output, and an extra file in each created output's directory."""
    tests, traced = verifier_text(run.env), traced_code(run.result.artifacts_dir)
    found: list[Variation] = []
    dirs: list[str] = []
    for path, created in outputs:
        try:
            data = run.sandbox.read_file(path, MAX_BYTES)
        except (FileNotFoundError, IsADirectoryError, SandboxError):
            continue
        mode = int(
            run.sandbox.exec(["stat", "-c", "%a", path], timeout=PROBE_QUICK_EXEC_SEC).stdout.strip() or "644", 8
        )
        if created and posixpath.dirname(path) not in dirs:
            dirs.append(posixpath.dirname(path))
        if code_kind(path, data, bool(mode & 0o111), tests, traced) is not None:
            continue  # code: its behaviour is what the tests check; only the extra file applies
        line = line_sentence(path, run.env.instruction)
        for kind, varied, rule in (
            ("trailing-newline", newline_variant(data, line), forbid.newline),
            ("json-key-order", json_variant(data), forbid.key_order),
        ):
            if isinstance(varied, str) and varied.startswith("the instruction"):
                run.skipped.append((kind, f"{path}: {varied}"))
            elif isinstance(varied, tuple) and rule:
                run.skipped.append((kind, f'{path}: the instruction fixes it: "{rule[:200]}"'))
            elif isinstance(varied, tuple):
                found.append(Variation(kind, path, f"{path}: {varied[1]}", varied[0], data, mode))
    for d in dirs[:MAX_EXTRA_DIRS]:
        extra = posixpath.join(d, EXTRA_NAME)
        why = forbid.extra_in(d)
        if why:
            run.skipped.append(("extra-file", f'{d}: the instruction forbids other files there: "{why[:200]}"'))
        else:
            found.append(
                Variation(
                    "extra-file", extra, f"{extra}: an unrelated file beside the output(s) in {d}", EXTRA_TEXT, None
                )
            )
    return found


def _apply(sandbox: Sandbox, variations: list[Variation], undo: bool = False) -> None:
    for v in variations:
        data = v.restore if undo else v.data
        if data is None:
            sandbox.exec(["rm", "-f", v.path], timeout=PROBE_QUICK_EXEC_SEC)
        else:
            sandbox.write_file(v.path, data, v.mode)


def _try_files(run: _Run, variations: list[Variation]) -> None:
    """All at once; when the verifier rejects that, each alone (within the budget) to name the culprit."""
    if not variations or run.tried >= run.budget:
        return
    _apply(run.sandbox, variations)
    try:
        verdict, lines = run.judge("all file variations at once", [v.what for v in variations])
    finally:
        _apply(run.sandbox, variations, undo=True)
    if verdict == "pass" or not run.unchanged_passes():
        return
    culprits = []
    if len(variations) == 1:
        culprits = [(variations[0], lines)]
    for v in variations if len(variations) > 1 else []:
        if run.tried >= run.budget:
            run.skipped.append((v.kind, f"{v.what}: not tried alone: max_variants={run.budget} reached"))
            continue
        _apply(run.sandbox, [v])
        try:
            alone, why = run.judge(v.kind, [v.what])
        finally:
            _apply(run.sandbox, [v], undo=True)
        if alone != "pass":
            culprits.append((v, why))
    if not culprits:  # only together (or not isolated within the budget): report the combination
        run.rejected.append(
            f"together: {'; '.join(v.what for v in variations)} -> verifier {verdict}"
            + (f"; {' | '.join(lines)}" if lines else "")
        )
    for v, why in culprits:
        run.rejected.append(f"{v.what} -> verifier fails" + (f"; {' | '.join(why)}" if why else ""))


def _offline_run(sandbox: Sandbox, script: str) -> tuple[bool, str]:
    """Run a build with no network (cut for the build when the sandbox has one); (ran ok, why not)."""
    try:
        online = not sandbox.offline()
    except NotImplementedError:
        return False, "the sandbox cannot tell whether it is offline"
    if online:
        try:
            sandbox.cut_network()
        except (NotImplementedError, SandboxError) as e:
            return False, f"the network could not be cut for the build: {e}"
    try:
        res = sandbox.exec(["bash", "-c", script], timeout=BUILD_TIMEOUT)
    finally:
        if online:
            sandbox.restore_network()
    if res.ok:
        return True, ""
    tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or [""]
    return False, f"failed offline (exit {res.exit_code}{', timed out' if res.timed_out else ''}): {tail[0][:200]}"


def _added(sandbox: Sandbox) -> set[str]:
    try:
        return {c.path for c in sandbox.changed_paths() if c.kind == "added"}
    except (NotImplementedError, SandboxError):
        return set()


def _try_build(run: _Run, commands: list[BuildCommand], forbid: Forbidden) -> None:
    """Run the instruction's build commands on the end state, then the verifier (last: a build may rewrite files)."""
    if not commands:
        return
    shown = "; ".join(f"`{c.command}`" + (f" in {c.cwd}" if c.cwd else "") for c in commands)
    if run.tried >= run.budget:
        run.skipped.append(("build-products", f"{shown}: max_variants={run.budget} reached"))
        return
    before = _added(run.sandbox)
    script = " && ".join((f"cd {shlex.quote(c.cwd)} && " if c.cwd else "") + f"( {c.command} )" for c in commands)
    ok, why = _offline_run(run.sandbox, script)
    products = sorted(p for p in _added(run.sandbox) - before if "/." not in p and not p.startswith(IGNORED_PREFIXES))
    blocked = [(p, forbid.extra_in(posixpath.dirname(p))) for p in products if forbid.extra_in(posixpath.dirname(p))]
    reason = (
        f"{shown}: {why}"
        if not ok
        else f"{shown}: wrote no file"
        if not products
        else f'{shown} wrote {blocked[0][0]}, where the instruction forbids other files: "{blocked[0][1][:200]}"'
        if blocked
        else ""
    )
    if reason:
        run.skipped.append(("build-products", reason))
        _remove(run.sandbox, products)
        return
    what = f"after the instruction's own build {shown}: {', '.join(products[:6])}"
    verdict, lines = run.judge("build-products", [what])
    _remove(run.sandbox, products)
    if verdict != "pass" and run.unchanged_passes():
        run.rejected.append(f"{what} -> verifier fails" + (f"; {' | '.join(lines)}" if lines else ""))


def _remove(sandbox: Sandbox, paths: list[str]) -> None:
    if paths:
        sandbox.exec(["rm", "-rf", "--", *paths], timeout=PROBE_EXEC_SEC)


def variation_findings(ctx, sandbox: Sandbox, result: TrialResult, threshold: float) -> list[Finding]:
    """Run the variations on the kept oracle end state; record coverage on `ctx`; the finding, if any."""
    budget = ctx.settings.max_variants
    if budget <= 0:
        ctx.skip(PROBE, "[probes] max_variants = 0: the variation probe is off")
        return []
    started = time.monotonic()
    instruction = ctx.env.instruction
    run = _Run(sandbox, ctx.env, result, threshold, budget, ctx.verifier)
    outputs = created_outputs(sandbox, instruction)
    forbid = forbidden(instruction)
    _try_files(run, _file_variations(run, outputs, forbid))
    _try_build(run, build_commands(instruction, [p for p, _created in outputs]), forbid)
    for kind, reason in run.skipped:
        ctx.skip(f"{PROBE}/{kind}", reason)
    control = "" if run.control is None else f"; the unchanged state: {run.control}"
    control += f"; {time.monotonic() - started:.1f} s"  # what the probe adds to a run (docs/reference/variations.md)
    if run.control is not None and run.control != "pass":
        ctx.skip(
            PROBE,
            f"the verifier also fails the unchanged end state (control run): a variation proves nothing "
            f"(verifier-nondeterministic says why); {run.tried} variant trial(s)",
        )
        return []
    ctx.ran(
        PROBE,
        f"{run.tried} variant trial(s) over {len(outputs)} output file(s){control}"
        if run.tried
        else f"nothing to vary: {len(outputs)} output file(s), no runnable build command{control}",
    )
    if not run.rejected:
        return []
    return [
        Finding.of(
            rule=RULE,
            message=f"the verifier rejects {len(run.rejected)} variation(s) of the reference solution's end state that "
            "the instruction allows: it fails good work for incidental details",
            evidence=[
                f"trial {result.trial_id} (oracle end state): {run.tried} variant trial(s) under "
                f"{run.base}/variant-*; the unchanged state passes (variant-control)"
            ]
            + run.rejected[:10],
            location="tests/",
            trial_ids=[result.trial_id],
        )
    ]
