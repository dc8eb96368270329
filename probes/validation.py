"""Rules over the validation trials (oracle x k, nop): what their outcomes say about the environment."""

from __future__ import annotations

from envqa.core.models import Finding, Outcome, TrialResult
from envqa.core.registry import BUILD_ERRORS, VERIFIER_ERRORS


def _tail(result: TrialResult, lines: int = 12) -> str:
    if not result.artifacts_dir:
        return ""
    from pathlib import Path

    path = Path(result.artifacts_dir) / "verifier" / "test-stdout.txt"
    if not path.is_file():
        return ""
    text = path.read_text(errors="replace").strip().splitlines()
    return "\n".join(text[-lines:])


def trial_evidence(results: list[TrialResult]) -> list[str]:
    out = []
    for r in results:
        line = f"trial {r.trial_id}: outcome={r.outcome} reward={r.reward}"
        if r.error_class:
            line += f" error={r.error_class}: {r.error_message}"
        if r.agent_timed_out:
            line += " (agent timed out)"
        out.append(line)
        tail = _tail(r)
        if tail:
            out.append(f"verifier output of {r.trial_id} (last lines):\n{tail}")
    return out


def build_failed_finding(
    detail: str, evidence: list[str], location: str, trial_ids: list[str] | None = None
) -> Finding:
    """The image does not build: every later stage is moot (the graph and the trial rules both report it)."""
    return Finding.of(
        rule="image-build-failed",
        message=f"the environment's image does not build: {detail}",
        evidence=evidence,
        location=location,
        trial_ids=trial_ids or [],
    )


def validation_findings(trials: list[TrialResult]) -> list[Finding]:
    """Oracle must pass every time; nop must fail; the verifier must always say something."""
    findings: list[Finding] = []
    oracle = [t for t in trials if t.agent == "oracle"]
    nop = [t for t in trials if t.agent == "nop"]
    env_errors = [t for t in trials if t.error_class in VERIFIER_ERRORS]
    builds = [t for t in trials if t.error_class in BUILD_ERRORS]
    if builds:
        findings.append(
            build_failed_finding(
                "no agent can attempt the task",
                [builds[0].error_message or ""],
                "environment/Dockerfile",
                [t.trial_id for t in builds],
            )
        )
        return findings
    oracle_fail = [t for t in oracle if t.outcome == Outcome.FAIL]
    oracle_pass = [t for t in oracle if t.outcome == Outcome.PASS]
    if oracle_fail:
        flaky = bool(oracle_pass)
        findings.append(
            Finding.of(
                rule="oracle-flaky" if flaky else "oracle-fails",
                message=(
                    f"the reference solution failed {len(oracle_fail)} of {len(oracle)} runs: "
                    + (
                        "the tests or the environment are non-deterministic"
                        if flaky
                        else "the environment is broken or the tests do not match the solution"
                    )
                ),
                evidence=trial_evidence(oracle_fail),
                location="solution/solve.sh",
                trial_ids=[t.trial_id for t in oracle_fail],
            )
        )
    if any(t.agent_timed_out for t in oracle):
        slow = [t for t in oracle if t.agent_timed_out]
        findings.append(
            Finding.of(
                rule="oracle-timeout",
                message="the reference solution ran past [agent].timeout_sec",
                evidence=trial_evidence(slow),
                location="task.toml",
                trial_ids=[t.trial_id for t in slow],
            )
        )
    nop_pass = [t for t in nop if t.outcome == Outcome.PASS]
    if nop_pass:
        reward = nop_pass[0].reward
        findings.append(
            Finding.of(
                rule="nop-passes",
                message=f"nop earned reward {reward:g}: the verifier does not check the work",
                evidence=trial_evidence(nop_pass),
                location="tests/test.sh",
                trial_ids=[t.trial_id for t in nop_pass],
            )
        )
    if env_errors:
        findings.append(
            Finding.of(
                rule="verifier-error",
                message=(
                    "the verifier ended without a usable reward in "
                    f"{len(env_errors)} trial(s): a missing reward is not a fail, it is a broken verifier"
                ),
                evidence=trial_evidence(env_errors),
                location="tests/test.sh",
                trial_ids=[t.trial_id for t in env_errors],
            )
        )
    return findings
