"""The verifier's blind side: collateral damage on the oracle's passing end state (issue 42, item 5).

Runs inside the oracle-state probe's sandbox (probes/oracle_state.py `on_state`, the same end state the mutation
and variation probes use; no runner of its own), last, since a stopped service is not restarted. Each damage
chosen by candidates.py (a file the image holds that neither the instruction nor the tests name deleted, a log
emptied, a service the image starts stopped) is applied with its shipped script, the verifier is run again
(probes/flakiness.py `verdict_on_state`, recorded under `probes/collateral-N/`) and the damaged file is put back
before the next one. A verifier that still passes does not check what an agent may break beside its work:
`verifier-blind-to-collateral`, a note (brittleness, info; about half of published tasks are blind this way, and
a reviewer would not block a task for it), naming each damage it did not notice.

Not damaged: what the oracle itself changed or removed (its outputs are mutation testing's business), a service
that is not running on the end state (stopping it would prove nothing), a file over COLLATERAL_MAX_RESTORE_BYTES.
Cost: at most COLLATERAL_MAX_DAMAGES verifier runs, and no new one once COLLATERAL_TIME_LIMIT_SEC went to them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from envqa.core.defaults import COLLATERAL_MAX_RESTORE_BYTES, COLLATERAL_TIME_LIMIT_SEC, PROBE_EXEC_SEC
from envqa.core.models import Finding, TrialResult
from envqa.core.package_scripts import read_script
from envqa.core.sandbox import Sandbox, SandboxError
from envqa.core.task_model import model_of
from envqa.probes.collateral.candidates import SCRIPTS, SCRIPTS_PACKAGE, Damage, choose_damages
from envqa.probes.flakiness import verdict_on_state
from envqa.probes.verifier_writes import verifier_text

RULE = "verifier-blind-to-collateral"
PROBE = "oracle_state/collateral"
# The damage scripts, read once when the module loads (core/package_scripts.py: a script that did not ship fails
# at import, not in the middle of a run).
DAMAGE_SCRIPTS = {kind: read_script(SCRIPTS_PACKAGE, name) for kind, name in SCRIPTS.items()}
RUNNING = 'for c in /proc/[0-9]*/comm; do [ "$(cat "$c" 2>/dev/null)" = "$1" ] && exit 0; done; exit 1'
Verdict = Callable[[str, Damage], str]  # the verifier on the damaged state, recorded under a label (collateral-N)


@dataclass(frozen=True)
class Judged:
    """One damage and the verifier's verdict on the damaged end state ("pass", "fail" or "error (...)")."""

    damage: Damage
    verdict: str

    @property
    def unnoticed(self) -> bool:
        return self.verdict == "pass"


def _saved(sandbox: Sandbox, damage: Damage) -> tuple[bytes, int] | None:
    """The file's bytes and mode before the damage (None: absent, a folder, or too large to restore)."""
    try:
        data = sandbox.read_file(damage.target, COLLATERAL_MAX_RESTORE_BYTES + 1)
    except (FileNotFoundError, IsADirectoryError, SandboxError):
        return None
    if len(data) > COLLATERAL_MAX_RESTORE_BYTES:
        return None
    mode = sandbox.exec(["stat", "-c", "%a", damage.target], timeout=PROBE_EXEC_SEC).stdout.strip() or "644"
    return data, int(mode, 8)


def _running(sandbox: Sandbox, service: str) -> bool:
    return sandbox.exec(["sh", "-c", RUNNING, "running", service], timeout=PROBE_EXEC_SEC).ok


def judge_damages(
    sandbox: Sandbox,
    damages: list[Damage],
    verdict: Verdict,
    time_limit: float = COLLATERAL_TIME_LIMIT_SEC,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[list[Judged], list[str]]:
    """Apply each damage, ask `verdict`, put the file back; (the judged damages, why others were not judged).

    Files first, in the order given, then the service stops (not undone: nothing runs after them). No new damage
    starts once `time_limit` seconds (by `clock`) went to them."""
    judged: list[Judged] = []
    notes: list[str] = []
    started = clock()
    ordered = sorted(damages, key=lambda d: d.kind == "stop")
    for damage in ordered:
        if clock() - started > time_limit:
            notes.append(f"{damage.describe()}: not tried, the {time_limit:g} s budget was spent")
            continue
        saved = None if damage.kind == "stop" else _saved(sandbox, damage)
        if damage.kind == "stop" and not _running(sandbox, damage.target):
            notes.append(f"service {damage.target}: not running on the end state")
            continue
        if damage.kind != "stop" and saved is None:
            notes.append(f"{damage.target}: absent on the end state, a folder, or too large to restore")
            continue
        sandbox.exec(["sh", "-c", DAMAGE_SCRIPTS[damage.kind], "collateral", damage.target], timeout=PROBE_EXEC_SEC)
        try:
            judged.append(Judged(damage, verdict(f"collateral-{len(judged) + 1}", damage)))
        finally:
            if saved is not None:
                sandbox.write_file(damage.target, *saved)
    return judged, notes


def _touched_by_oracle(sandbox: Sandbox) -> frozenset[str]:
    """Paths the oracle's run changed, added or removed: its work, not collateral."""
    try:
        return frozenset(c.path for c in sandbox.changed_paths())
    except (NotImplementedError, SandboxError):
        return frozenset()


def collateral_findings(ctx, sandbox: Sandbox, result: TrialResult, threshold: float) -> list[Finding]:
    """Damage the kept oracle end state, rerun the verifier, restore; record coverage on `ctx`; the note, if any."""
    env, started = ctx.env, time.monotonic()
    damages, why = choose_damages(
        model_of(env).dockerfile_spans, env.instruction, [verifier_text(env)], exclude=_touched_by_oracle(sandbox)
    )
    if not damages:
        ctx.skip(PROBE, why)
        return []
    base = Path(result.artifacts_dir or ".") / "probes"

    def verdict(label: str, damage: Damage) -> str:
        out = base / label
        seen = verdict_on_state(sandbox, env, out, threshold, ctx.verifier)
        record = {"damage": damage.describe(), "dockerfile_line": damage.line, "verdict": seen}
        (out / "collateral.json").write_text(json.dumps(record, indent=1))
        return seen

    judged, notes = judge_damages(sandbox, damages, verdict)
    for note in notes:
        ctx.skip(f"{PROBE}/damage", note)
    if not judged:
        ctx.skip(PROBE, f"no damage applied: {'; '.join(notes)}")
        return []
    ctx.ran(PROBE, f"{len(judged)} damage(s) judged; {time.monotonic() - started:.1f} s")
    blind = [j for j in judged if j.unnoticed]
    if not blind:
        return []
    named = ", ".join(j.damage.describe() for j in blind)
    return [
        Finding.of(
            rule=RULE,
            message=f"the verifier still passes the reference solution's end state with {named}: "
            "it does not check state the task never asked to touch",
            evidence=[
                f"trial {result.trial_id} (oracle end state): {j.damage.describe()} (environment/Dockerfile line "
                f"{j.damage.line}) -> verifier {j.verdict}; under {base}/collateral-{n}/"
                for n, j in enumerate(judged, 1)
                if j.unnoticed
            ],
            location="tests/",
            trial_ids=[result.trial_id],
            remedy_fields={"targets": ", ".join(j.damage.target for j in blind)},
        )
    ]
