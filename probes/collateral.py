"""The verifier's blind side: collateral damage on the oracle's passing end state (issue 42, item 5).

Runs inside the oracle-state probe's sandbox (probes/oracle_state.py `on_state`, the same end state the mutation
and variation probes use; no runner of its own): each damage chosen by probes/collateral_candidates.py is
applied with its shipped script, the verifier is run again (probes/flakiness.py `verdict_on_state`) and the
damaged file is restored before the next one. A stopped service cannot be restored exactly, so stops run last.

Not wired yet: `judge_damages` returns the verdicts; the rule (brittleness, warning, "the verifier does not
notice <damage>") and the hook in `on_state` are left for the merge with the rules.toml / catalog work.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from envqa.core.defaults import COLLATERAL_MAX_RESTORE_BYTES, COLLATERAL_TIME_LIMIT_SEC, PROBE_EXEC_SEC
from envqa.core.environment import Environment
from envqa.core.package_scripts import read_script
from envqa.core.sandbox import Sandbox
from envqa.probes.collateral_candidates import SCRIPTS, Damage


@dataclass(frozen=True)
class Judged:
    """One damage and the verifier's verdict on the damaged end state ("pass", "fail" or "error (...)")."""

    damage: Damage
    verdict: str

    @property
    def unnoticed(self) -> bool:
        return self.verdict == "pass"


def _saved(sandbox: Sandbox, damage: Damage) -> tuple[bytes, int] | None:
    """The file's bytes and mode before the damage (None: a service, or a file absent or too large)."""
    if damage.kind == "stop":
        return None
    try:
        data = sandbox.read_file(damage.target, COLLATERAL_MAX_RESTORE_BYTES)
    except (FileNotFoundError, IsADirectoryError):
        return None
    mode = sandbox.exec(["stat", "-c", "%a", damage.target], timeout=PROBE_EXEC_SEC).stdout.strip() or "644"
    return data, int(mode, 8)


def judge_damages(
    sandbox: Sandbox,
    env: Environment,
    damages: list[Damage],
    verdict: Callable[[Sandbox, Environment, str], str],
    time_limit: float = COLLATERAL_TIME_LIMIT_SEC,
) -> tuple[list[Judged], str]:
    """Apply each damage, ask `verdict` (the verifier on the damaged state), restore; and the coverage note.

    `verdict(sandbox, env, label)` is the caller's `verdict_on_state` with its output folder and threshold bound.
    A file the oracle's end state no longer holds is skipped (nothing to damage)."""
    judged: list[Judged] = []
    started = time.monotonic()
    ordered = sorted(damages, key=lambda d: d.kind == "stop")  # stops last: they are not undone
    for damage in ordered:
        if time.monotonic() - started > time_limit:
            return judged, f"budget spent: {len(judged)} of {len(ordered)} damage(s) judged in {time_limit:g}s"
        saved = _saved(sandbox, damage)
        if damage.kind != "stop" and saved is None:
            continue
        script = read_script(__package__ or "envqa.probes", SCRIPTS[damage.kind])
        sandbox.exec(["sh", "-c", script, "collateral", damage.target], timeout=PROBE_EXEC_SEC)
        judged.append(Judged(damage, verdict(sandbox, env, f"collateral-{len(judged)}")))
        if saved is not None:
            sandbox.write_file(damage.target, *saved)
    return judged, ""
