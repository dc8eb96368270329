"""Flakiness: the verifier re-run on one unchanged end state must say the same thing every time.

The oracle x k runs of validation already catch a flaky reference (`oracle-flaky`); this catches tests
that give different verdicts on the very same files (time, randomness, leftover state).
"""

from __future__ import annotations

from pathlib import Path

from envqa.agents.trial import run_verifier
from envqa.environment import Environment
from envqa.models import Finding, Label, Severity, TrialResult
from envqa.sandbox.base import Sandbox


def verdict_on_state(sandbox: Sandbox, env: Environment, out_dir: Path, threshold: float) -> str:
    """Clear the verifier's logs, run it again, and say pass / fail / error."""
    (out_dir / "verifier").mkdir(parents=True, exist_ok=True)
    sandbox.exec(["bash", "-c", "mkdir -p /logs/verifier && find /logs/verifier -mindepth 1 -delete"], timeout=60)
    v = run_verifier(sandbox, env, out_dir)
    if v.error_class:
        return f"error ({v.error_class})"
    return "pass" if (v.reward or 0.0) >= threshold else "fail"


def rerun_findings(sandbox: Sandbox, env: Environment, result: TrialResult, reruns: int, threshold: float) -> list[Finding]:
    if reruns <= 0 or result.reward is None:
        return []
    first = "pass" if result.reward >= threshold else "fail"
    base = Path(result.artifacts_dir or ".") / "probes"
    verdicts = [first] + [verdict_on_state(sandbox, env, base / f"rerun-{i}", threshold) for i in range(reruns)]
    if len(set(verdicts)) == 1:
        return []
    return [Finding(
        rule="verifier-nondeterministic", label=Label.BRITTLENESS, severity=Severity.ERROR,
        message=f"the verifier gave different verdicts on one unchanged end state: {', '.join(verdicts)}",
        evidence=[f"trial {result.trial_id}: verdicts of {len(verdicts)} verifier runs on the oracle's end state: "
                  f"{verdicts}", f"outputs under {base}/rerun-*/verifier/"],
        location="tests/", trial_ids=[result.trial_id],
        fix="remove time, randomness and leftover state (files in /tmp, counters) from the tests",
    )]
