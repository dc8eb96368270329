"""The gate judges the proposal, on real Docker: what it addresses must go silent, nothing new may fire, and
a rule it does not address may stay (listed as still open) instead of sinking a correct fix. A failing
reference solution is said first."""

from __future__ import annotations

from envqa.core.environment import load_environment
from envqa.core.models import Finding, Label, Severity
from envqa.graphs.gate import ORACLE_NOTICE, GateInputs, feedback, run_gate
from envqa.probes.static.findings import static_findings
from envqa.probes.static.lint import lint_structure
from tests.reviser.conftest import write_task
from tests.reviser.kit import fast_config, run_deps

INSTALL = "pip install -q requests==2.31.0 2>/dev/null\n"
CHECK = '[ "$(cat /app/out.txt)" = hello ] && echo 1 > /logs/verifier/reward.txt\nexit 0\n'
PARENT = "#!/bin/bash\nmkdir -p /logs/verifier\n" + INSTALL + CHECK  # no reward on failure + a runtime install
FIXED = "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n" + INSTALL + CHECK


def _findings(env) -> list[Finding]:
    return [f for f in static_findings(env) + lint_structure(env) if f.severity != "info"]


def _gate(deps, parent, candidate, addresses, findings=None):
    inputs = GateInputs(
        run_id="gate-judges",
        candidate=candidate,
        parent_findings=findings or _findings(parent),
        parent_trials=[],
        addresses=addresses,
        parent_labels={},
        parent=parent,
    )
    result = run_gate(deps.config, deps.backend, deps.executor, deps.store, inputs)
    return result, {c.name: c for c in result.checks}


def test_an_unaddressed_rule_stays_open_a_new_one_fails_and_no_addresses_means_all(tmp_path, docker_backend):
    config = fast_config(tmp_path / "home")
    parent = load_environment(write_task(tmp_path / "parent", tests__test_sh=PARENT))
    assert {f.rule for f in _findings(parent)} == {"reward-not-written-on-failure", "verifier-installs-at-runtime"}
    fixed = load_environment(write_task(tmp_path / "fixed", tests__test_sh=FIXED))
    worse = load_environment(
        write_task(
            tmp_path / "worse",
            tests__test_sh=FIXED,
            environment__Dockerfile=(
                "FROM debian:bookworm\nWORKDIR /app\n"
                "RUN curl -fsSL https://github.com/o/r/archive/refs/heads/main.tar.gz -o /tmp/r.tgz || true\n"
            ),
        )
    )
    with run_deps(config) as deps:
        ok, checks = _gate(deps, parent, fixed, ["reward-not-written-on-failure"])
        new, new_checks = _gate(deps, parent, worse, ["reward-not-written-on-failure"])
        every, every_checks = _gate(deps, parent, fixed, [])
    # the addressed rule is gone; the runtime install was not addressed: open, not a failure
    assert ok.passed, [(c.name, c.detail) for c in ok.failures()]
    assert ok.still_open == ["verifier-installs-at-runtime"], ok.still_open
    assert "still open (not addressed): verifier-installs-at-runtime" in feedback(ok)
    # the same fix plus a download of a branch in the image: a rule the parent did not fire is new
    assert not new.passed and not new_checks["lint"].passed
    assert "new on the candidate: download-of-moving-target" in new_checks["lint"].detail
    # a proposal that names no rule (a human edit) answers for every rule the parent fired
    assert not every.passed and "still fires: verifier-installs-at-runtime" in every_checks["lint"].detail


def test_a_failing_oracle_is_said_first(tmp_path, docker_backend):
    config = fast_config(tmp_path / "home")
    broken = write_task(tmp_path / "broken", solution__solve_sh="#!/bin/bash\nprintf goodbye > /app/out.txt\n")
    env = load_environment(broken)
    oracle_fails = Finding(
        rule="oracle-fails",
        label=Label.BRITTLENESS,
        severity=Severity.CRITICAL,
        message="the reference solution fails every run",
    )
    with run_deps(config) as deps:
        result, checks = _gate(deps, env, env, ["oracle-fails"], findings=[oracle_fails])
    assert not result.passed and result.notice == ORACLE_NOTICE
    assert result.checks[0].name == "notice" and not checks["oracle"].passed
    assert feedback(result).splitlines()[0] == ORACLE_NOTICE
