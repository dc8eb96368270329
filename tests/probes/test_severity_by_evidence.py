"""Severity by evidence (issue 45 item 7): a suspicion from the files is a warning; a run's proof of it (the rule's
`proven_by` in core/registry/rules.toml) raises it to the proof's severity and names the proof and its trials."""

from __future__ import annotations

import pytest

from envqa.core.models import Finding
from envqa.core.registry.rules import PROVEN_BY, RULE_INFO, Severity
from envqa.graphs.loop_state import PROVEN, per_version_findings


def _finding(rule: str, severity: Severity | None = None, trial_ids: list[str] | None = None) -> dict:
    return Finding.of(rule, "m", severity=severity, trial_ids=trial_ids or []).model_dump(mode="json")


@pytest.mark.fast
def test_every_proof_is_a_registered_rule_of_a_run():
    assert PROVEN_BY["plantable-test-runner"] == ("exploit-workspace-conftest",)
    assert all(RULE_INFO[p].probe != "static" for proofs in PROVEN_BY.values() for p in proofs)


@pytest.mark.fast
def test_a_proof_raises_the_suspicion_whatever_the_order_and_once():
    suspicion = _finding("plantable-test-runner")
    proof = _finding("exploit-workspace-conftest", trial_ids=["t-exploit-1"])
    assert suspicion["severity"] == "warning"
    for merged in (per_version_findings([suspicion], [proof]), per_version_findings([proof], [suspicion])):
        [raised] = [f for f in merged if f["rule"] == "plantable-test-runner"]
        assert raised["severity"] == proof["severity"] == "critical"
        assert raised["evidence"][-1] == f"{PROVEN} exploit-workspace-conftest (trial t-exploit-1)"
        assert raised["trial_ids"] == ["t-exploit-1"]
    again = per_version_findings(per_version_findings([suspicion], [proof]), [])
    assert sum(str(e).startswith(PROVEN) for f in again for e in f["evidence"]) == 1  # the reducer runs often


@pytest.mark.fast
def test_an_unproven_or_unrelated_finding_leaves_the_suspicion_a_warning():
    suspicion = _finding("verifier-reads-image-answer")
    info_trace = _finding("verifier-trusts-agent-file", severity=Severity.INFO)  # traced, not proven
    other = _finding("exploit-workspace-conftest", trial_ids=["t-1"])  # proves another rule
    merged = per_version_findings([suspicion], [info_trace, other])
    [kept] = [f for f in merged if f["rule"] == "verifier-reads-image-answer"]
    assert kept == suspicion


def test_a_run_reports_the_planted_conftest_once_proven(example_reports):
    """`qa run examples/conftest-plant`: the files' warning comes out critical, naming the exploit's trial."""
    report = example_reports("conftest-plant")["report"]
    found = {f["rule"]: f for f in report["findings"]}
    proof, raised = found["exploit-workspace-conftest"], found["plantable-test-runner"]
    assert raised["severity"] == proof["severity"] == "critical"
    assert raised["evidence"][-1].startswith(f"{PROVEN} exploit-workspace-conftest (trial ")
    assert set(proof["trial_ids"]) <= set(raised["trial_ids"]) and raised["trial_ids"]
