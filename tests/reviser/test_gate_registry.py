"""The gate re-checks each rule the way the rule registry says, on real Docker: a rule it does not know no
longer passes on "none of X fired" (it used to fall back to the static probe, which cannot produce it)."""

from __future__ import annotations

from envqa.core.environment import load_environment
from envqa.core.models import STORED, Finding, Label, Severity
from envqa.graphs.gate import GateInputs, run_gate
from tests.reviser.conftest import write_task
from tests.reviser.kit import fast_config, run_deps


def _gate(deps, env, findings):
    inputs = GateInputs(
        run_id="gate-registry",
        candidate=env,
        parent_findings=findings,
        parent_trials=[],
        addresses=[],
        parent_labels={},
    )
    result = run_gate(deps.config, deps.backend, deps.executor, deps.store, inputs)
    return result, {c.name: c for c in result.checks}


def test_the_gate_fails_for_an_unregistered_rule_and_rechecks_verifier_error_with_oracle_and_nop(
    tmp_path, docker_backend
):
    config = fast_config(tmp_path / "home")
    env = load_environment(write_task(tmp_path / "task"))  # a clean task: oracle passes, nop fails
    # A finding read back from an older store (any id survives there); no probe can show it gone.
    unknown = Finding.model_validate(
        {"rule": "verifier-eror", "label": "brittleness", "severity": "error", "message": "a typo in a rule id"},
        context=STORED,
    )
    known = Finding(
        rule="verifier-error",
        label=Label.BRITTLENESS,
        severity=Severity.ERROR,
        message="the verifier ended without a usable reward",
    )
    with run_deps(config) as deps:
        failed, checks = _gate(deps, env, [unknown])
        assert checks["oracle"].passed and checks["nop"].passed, checks
        assert not checks["rules"].passed and "verifier-eror" in checks["rules"].detail, checks["rules"]
        assert "not registered" in checks["rules"].detail and failed.passed is False
        passed, checks = _gate(deps, env, [known])
    # verifier-error is validation's rule: the gate's oracle/nop checks re-check it (they passed), and no
    # probe is re-run for it (before, the static probe ran and "none of verifier-error fired").
    assert checks["rules"].passed, checks["rules"]
    assert checks["rules"].detail == "no probe rule fired on the parent; the gate's own checks re-check verifier-error"
    assert passed.passed is True, passed.checks
