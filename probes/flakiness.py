"""Flakiness: the oracle must pass k times out of k, and the verifier must say the same on one end state.

`oracle_runs_probe` tops validation's oracle runs up to k (`QAConfig.oracle_runs_for("hunt")`, default 5), reusing
validation's trials, so a reference that fails one run in five is caught (`oracle-flaky`) without repeating
work. `rerun_findings` catches tests that give different verdicts on the very same files (time,
randomness, leftover state); when the verifier's own writes into what it checks explain it, it says that
instead (`verifier-mutates-checked-state`, probes/verifier_writes.py).
"""

from __future__ import annotations

from pathlib import Path

from envqa.agents.trial import TrialVerifier
from envqa.core.defaults import PROBE_EXEC_SEC
from envqa.core.environment import Environment
from envqa.core.models import Finding, Outcome, TrialResult
from envqa.core.sandbox import Sandbox
from envqa.probes.base import ProbeContext, register_probe
from envqa.probes.validation import trial_evidence
from envqa.probes.verifier_writes import mutates_checked_state


@register_probe("oracle_runs")
def oracle_runs_probe(ctx: ProbeContext) -> list[Finding]:
    """Run the oracle until k runs exist; any failure among passes is a flaky reference."""
    done = [t for t in ctx.validation if t.agent == "oracle"]
    if done and not all(t.outcome == Outcome.PASS for t in done):
        ctx.skip("oracle_runs", "the oracle already failed in validation (oracle-fails / oracle-flaky)")
        return []  # validation already reported it (oracle-fails / oracle-flaky); more runs add nothing
    extra = [
        ctx.trial("oracle", purpose="hunt-oracle-runs", index=len(done) + i).result
        for i in range(max(0, ctx.config.oracle_runs_for("hunt") - len(done)))
    ]
    runs = done + extra
    failed = [t for t in runs if t.outcome == Outcome.FAIL]
    if not failed or len(failed) == len(runs):
        return []  # all pass: fine; all fail (no validation): validation's rules say it, not flakiness
    return [
        Finding.of(
            rule="oracle-flaky",
            message=(
                f"the reference solution failed {len(failed)} of {len(runs)} runs: "
                "the tests or the environment are non-deterministic"
            ),
            evidence=trial_evidence(failed)
            + [f"passing runs: {', '.join(t.trial_id for t in runs if t.outcome == Outcome.PASS)}"],
            location="solution/solve.sh",
            trial_ids=[t.trial_id for t in failed],
        )
    ]


def verdict_on_state(
    sandbox: Sandbox, env: Environment, out_dir: Path, threshold: float, verifier: TrialVerifier
) -> str:
    """Clear the verifier's logs, run it again, and say pass / fail / error."""
    (out_dir / "verifier").mkdir(parents=True, exist_ok=True)
    sandbox.exec(
        ["bash", "-c", "mkdir -p /logs/verifier && find /logs/verifier -mindepth 1 -delete"], timeout=PROBE_EXEC_SEC
    )
    v = verifier.run(sandbox, env, out_dir)
    if v.error_class:
        return f"error ({v.error_class})"
    return "pass" if (v.reward or 0.0) >= threshold else "fail"


def rerun_findings(
    sandbox: Sandbox, env: Environment, result: TrialResult, reruns: int, threshold: float, verifier: TrialVerifier
) -> list[Finding]:
    if reruns <= 0 or result.reward is None:
        return []
    first = "pass" if result.reward >= threshold else "fail"
    base = Path(result.artifacts_dir or ".") / "probes"
    verdicts = [first] + [
        verdict_on_state(sandbox, env, base / f"rerun-{i}", threshold, verifier) for i in range(reruns)
    ]
    if len(set(verdicts)) == 1:
        return []
    mutated = mutates_checked_state(sandbox, env, result, verdicts, base / "rerun-writes", verifier)
    if mutated is not None:  # the verifier's own writes explain the disagreement (probes/verifier_writes.py)
        return [mutated]
    return [
        Finding.of(
            rule="verifier-nondeterministic",
            message=f"the verifier gave different verdicts on one unchanged end state: {', '.join(verdicts)}",
            evidence=[
                f"trial {result.trial_id}: verdicts of {len(verdicts)} verifier runs on the oracle's end state: "
                f"{verdicts}",
                f"outputs under {base}/rerun-*/verifier/",
            ],
            location="tests/",
            trial_ids=[result.trial_id],
        )
    ]
