"""The variation probe on real Docker (probes/variation/probe.py): right answers the verifier must accept.

One module-scoped pass runs the oracle end state probe (reruns, mutation and strace off, so only variations
cost verifier runs) on four tasks, and the gate on two candidates; the tests only read what it recorded:
  - variation-build-product-listing (Terminal-Bench 2's polyglot-c-py shape): an extra file beside
    main.py.c and the instruction's own `gcc ... -o /app/polyglot/cmain` are both rejected;
  - its clean look-alike: both accepted, nothing reported;
  - the same flawed task with "leave only main.py.c in /app/polyglot" added: both variations skipped, with
    the sentence as the reason (the test's listing is then what the instruction says);
  - variation-json-text with max_variants = 1: the budget is held, the combination is reported.
The gate, given the parent's finding, re-runs the probe: the clean look-alike silences it, the flawed task not.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from envqa.core.environment import load_environment
from envqa.core.layout import RunLayout
from envqa.core.models import Finding
from envqa.graphs.gate import GateInputs, run_gate
from envqa.probes.base import ProbeContext
from envqa.probes.oracle_state import oracle_state_probe
from envqa.store.db import Store
from tests.reviser.kit import fast_config, run_deps

from .conftest import EXAMPLES

RULE = "verifier-rejects-allowed-variation"
CHEAP = {"verifier_reruns": 0, "max_mutated_files": 0, "strace": False}


def _probe(config, backend, store, env_dir: Path, run_id: str, **probes) -> dict:
    cfg = config.model_copy(update={"probes": config.probes.model_copy(update={**CHEAP, **probes})})
    env = load_environment(env_dir)
    store.create_run(run_id, str(env.root))
    ctx = ProbeContext(
        env=env,
        config=cfg,
        backend=backend,
        run_id=run_id,
        layout=RunLayout(cfg.runs_dir, run_id),
        record=store.record_trial,
    )
    findings = oracle_state_probe(ctx)
    [oracle] = [t for t in ctx.new_trials if t.purpose == "hunt-oracle-state"]
    variants = sorted((Path(oracle.artifacts_dir) / "probes").glob("variant-*/variant.json"))
    return {
        "findings": [f for f in findings if f.rule == RULE],
        "coverage": ctx.coverage,
        "oracle": oracle,
        "variants": {p.parent.name: json.loads(p.read_text()) for p in variants},
    }


@pytest.fixture(scope="module")
def observed(tmp_path_factory, docker_backend):
    root = tmp_path_factory.mktemp("variation")
    config = fast_config(root / "home", **{"probes.strace": False, "probes.max_mutated_files": 0})  # the gate's too
    config.home.mkdir(parents=True, exist_ok=True)
    store = Store(config.db_path)
    forbidding = root / "forbidding"
    shutil.copytree(EXAMPLES / "variation-build-product-listing", forbidding)
    with open(forbidding / "instruction.md", "a") as fh:
        fh.write("\nWhen you are done, leave only main.py.c in /app/polyglot.\n")
    out = {
        "flawed": _probe(config, docker_backend, store, EXAMPLES / "variation-build-product-listing", "var-flawed"),
        "clean": _probe(config, docker_backend, store, EXAMPLES / "clean-build-product-named-file", "var-clean"),
        "forbidding": _probe(config, docker_backend, store, forbidding, "var-forbidding"),
        "budget": _probe(config, docker_backend, store, EXAMPLES / "variation-json-text", "var-budget", max_variants=1),
    }
    parent = out["flawed"]["findings"]
    with run_deps(config) as deps:
        for name, example in (
            ("gate_clean", "clean-build-product-named-file"),
            ("gate_flawed", "variation-build-product-listing"),
        ):
            inputs = GateInputs(
                run_id=f"var-{name}",
                candidate=load_environment(EXAMPLES / example),
                parent_findings=parent,
                parent_trials=[],
                addresses=[RULE],
                parent_labels={},
            )
            out[name] = run_gate(deps.config, deps.backend, deps.executor, deps.store, inputs)
    return out


def _skips(run: dict) -> dict[str, str]:
    return {c["probe"]: c["reason"] for c in run["coverage"] if c["status"] == "skipped"}


def test_the_listing_test_rejects_an_extra_file_and_the_instructions_own_build(observed):
    [finding] = observed["flawed"]["findings"]
    assert (finding.label, finding.severity) == ("brittleness", "error")
    evidence = "\n".join(finding.evidence)
    assert "/app/polyglot/envqa-unrelated-note: an unrelated file beside the output(s) in /app/polyglot" in evidence
    assert "`gcc /app/polyglot/main.py.c -o /app/polyglot/cmain`: /app/polyglot/cmain -> verifier fails" in evidence
    assert "Expected only main.py.c" in evidence  # the failing test line, from the verifier's own output
    assert "test_polyglot.py:10: AssertionError" in evidence
    assert finding.trial_ids == [observed["flawed"]["oracle"].trial_id]


def test_each_variant_is_a_recorded_verifier_run_with_a_control(observed):
    variants = observed["flawed"]["variants"]
    assert (
        variants["variant-1"]["verdict"] == "fail" and variants["variant-1"]["label"] == "all file variations at once"
    )
    assert variants["variant-2"]["label"] == "build-products" and variants["variant-2"]["failing_lines"]
    assert variants["variant-control"]["verdict"] == "pass"  # the unchanged end state still passes
    assert (
        Path(observed["flawed"]["oracle"].artifacts_dir) / "probes" / "variant-2" / "verifier" / "test-stdout.txt"
    ).is_file()


def test_the_look_alike_that_checks_only_the_named_file_stays_clean(observed):
    clean = observed["clean"]
    assert clean["findings"] == []
    assert {n: v["verdict"] for n, v in clean["variants"].items()} == {"variant-1": "pass", "variant-2": "pass"}
    [ran] = [c for c in clean["coverage"] if c["probe"] == "oracle_state/variation"]
    assert ran["status"] == "ran" and ran["reason"].startswith("2 variant trial(s)")


def test_what_the_instruction_forbids_is_skipped_with_its_sentence(observed):
    run = observed["forbidding"]
    assert run["findings"] == [] and run["variants"] == {}
    skips = _skips(run)
    sentence = "When you are done, leave only main.py.c in /app/polyglot."
    assert sentence in skips["oracle_state/variation/extra-file"]
    assert "/app/polyglot/cmain" in skips["oracle_state/variation/build-products"]
    assert sentence in skips["oracle_state/variation/build-products"]


def test_the_budget_caps_the_variant_trials(observed):
    run = observed["budget"]
    assert list(run["variants"]) == ["variant-1", "variant-control"]  # one variant trial, then the control
    [finding] = run["findings"]
    assert any(e.startswith("together: ") and "JSON keys reordered" in e for e in finding.evidence), finding.evidence
    assert any("max_variants=1 reached" in reason for reason in _skips(run).values())


def test_the_gate_reruns_the_probe_on_a_revision(observed):
    clean = {c.name: c for c in observed["gate_clean"].checks}
    assert clean["oracle"].passed and clean["rules"].passed, clean
    assert f"none of {RULE} fired" in clean["rules"].detail
    flawed = {c.name: c for c in observed["gate_flawed"].checks}
    assert not flawed["rules"].passed and f"still fire on the candidate: {RULE}" in flawed["rules"].detail
    assert isinstance(observed["flawed"]["findings"][0], Finding)
