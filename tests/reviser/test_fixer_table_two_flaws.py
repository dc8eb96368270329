"""Must-show (issue 24): the fixer table on three examples with two flaws each, one a mechanical fixer can
fix and one it cannot. Through the app's runner with `--approval auto` (no model): the fixable flaw is
fixed, the gate (which judges the proposal: what it addresses must go, nothing new may fire) passes with the
other flaw listed as still open, the revision is adopted, and the adopted version still reports the other
flaw. Before, the gate required every parent rule to go quiet, so the correct fix was dropped.

Prints one FIXER-TABLE row per (example, fixer): proposed / gate / adopted / still open.
"""

from __future__ import annotations

import json

import pytest

from envqa.agents.fixers import fixable_rules
from envqa.app.runner import execute_run
from envqa.store.db import Store
from qa_testkit import EXAMPLES
from tests.reviser.kit import fast_config

# example -> (the fixer family that must act, the rules it fixes, the rule no fixer can fix)
TWO_FLAWS = {
    "two-flaws-reward-timing": (
        "reward",
        {"reward-not-written-on-failure", "exploit-reward-tamper"},
        "verifier-timing-dependent",
    ),
    "two-flaws-conftest-encrypted": ("conftest", {"exploit-workspace-conftest"}, "encrypted-solution-in-image"),
    "two-flaws-helper-weak": (
        "helpers",
        {"exploit-verifier-helper", "verifier-runs-image-file"},
        "verifier-accepts-mutant",
    ),
}


def fixer_table_rows(report: dict) -> list[dict]:
    """One row per proposal of the run: its fixer, whether the gate passed, adopted, and what stayed open."""
    rows = []
    for p in report.get("proposals") or []:
        gate = p.get("gate") or {}
        rows.append(
            {
                "fixer": p["author"],
                "addresses": p["addresses"],
                "proposed": True,
                "gate": "passed" if gate.get("passed") else "failed",
                "adopted": p.get("status") == "adopted",
                "still_open": gate.get("still_open", []),
            }
        )
    return rows


@pytest.mark.parametrize("name", sorted(TWO_FLAWS))
def test_the_fixable_flaw_is_fixed_gated_adopted_and_the_other_stays_reported(
    name, tmp_path, monkeypatch, docker_backend
):
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    family, fixed, other = TWO_FLAWS[name]
    assert other not in fixable_rules() and fixed <= set(fixable_rules())
    config = fast_config(tmp_path / "home", **{"loop.max_iterations": 1})
    report = execute_run(EXAMPLES / name, config, f"two-{name}", quiet=True, approval_mode="auto")
    first = report["versions"][0]
    found = {f["rule"] for f in first["findings"] if f["severity"] != "info"}
    rows = fixer_table_rows(report)
    for row in rows:
        print("FIXER-TABLE", json.dumps({"example": name, "found": sorted(found), **row}))
    assert fixed | {other} <= found, (sorted(found), report.get("stop_reason"))
    assert len(report["versions"]) == 2, (rows, report.get("stop_reason"))
    adopted = report["versions"][1]
    assert adopted["author"].startswith("fixer:"), adopted["author"]
    mine = next(r for r in rows if r["adopted"])
    assert set(mine["addresses"]) >= fixed and other not in mine["addresses"], mine
    assert mine["gate"] == "passed" and other in mine["still_open"], mine
    after = {f["rule"] for f in report["findings"] if f["severity"] != "info"}
    assert other in after and not (fixed & after), sorted(after)
    proposal = Store(config.db_path).get_proposal(
        next(p["proposal_id"] for p in report["proposals"] if p.get("status") == "adopted")
    )
    assert proposal.gate and proposal.gate.passed and other in proposal.gate.still_open
