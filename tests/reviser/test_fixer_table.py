"""Must-show: with no API key, every flawed example whose rules all have a mechanical fixer gets a
proposal that passes the gate, and `qa run` on the exported revision is clean; the rest need a model.

Prints the table (example, rules, proposed, gate, clean after) for the closing note.
"""

from __future__ import annotations

import json

import pytest

from envqa.agents.fixers import fixable_rules
from envqa.agents.fixers.separate import RULES as SEPARATE_RULES  # the separate-verifier alternative's rules
from envqa.store.db import Store
from envqa.store.versions import VersionStore
from qa_testkit import EXAMPLES
from tests.reviser.kit import fast_config, loop_state, revise_and_gate, run_deps

FIXABLE = [
    "always-pass",
    "reward-tamper",
    "conftest-plant",
    "leaked-answers",
    "leaky-solution",
    "writable-verifier-helper",
]
NEEDS_MODEL = ["weak-verifier"]
ORACLE_FIRST = ["broken-oracle", "broken-oracle-conftest-plant"]  # no fix can pass until the oracle does


def _row(tmp_path, name: str, monkeypatch) -> dict:
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    config = fast_config(tmp_path / name)
    state = loop_state(config, EXAMPLES / name, f"table-{name}")
    rules = sorted({f["rule"] for f in state["findings"] if f["severity"] != "info"})
    with run_deps(config) as deps:
        revised, gated = revise_and_gate(deps, state)
    row = {
        "example": name,
        "rules": rules,
        "proposed": revised["proposal_id"] is not None,
        "note": revised["revise_note"],
        "gate": None,
        "clean_after": None,
        "notices": state["report"].get("notices"),
    }
    if gated is None:
        return row
    row["gate"] = "passed" if gated["gate_passed"] else f"failed: {gated['gate_feedback']}"
    row["still_open"] = Store(config.db_path).get_proposal(revised["proposal_id"]).gate.still_open
    if gated["gate_passed"]:
        store = Store(config.db_path)
        proposal = store.get_proposal(revised["proposal_id"])
        out = tmp_path / f"{name}-revised"
        VersionStore(config, store).export(proposal.candidate_version, out)
        after = fast_config(tmp_path / f"{name}-after")
        from envqa.app.runner import execute_run

        report = execute_run(out, after, f"after-{name}", quiet=True)
        row["clean_after"] = report["verdict"]
        row["findings_after"] = [f["rule"] for f in report["findings"]]
    return row


@pytest.mark.parametrize("name", FIXABLE)
def test_mechanical_fixers_pass_the_gate_and_clean_the_example(name, tmp_path, monkeypatch, docker_backend):
    row = _row(tmp_path, name, monkeypatch)
    print("TABLE-ROW", json.dumps(row))
    assert row["rules"] and set(row["rules"]) <= set(fixable_rules()) | set(SEPARATE_RULES) | {"nop-passes"}, row
    assert row["proposed"], row
    assert row["gate"] == "passed", row
    assert row["clean_after"] == "clean", row


@pytest.mark.parametrize("name", NEEDS_MODEL)
def test_examples_without_a_fixer_are_reported_as_needing_a_model(name, tmp_path, monkeypatch, docker_backend):
    row = _row(tmp_path, name, monkeypatch)
    print("TABLE-ROW", json.dumps(row))
    assert not row["proposed"], row
    assert row["note"].startswith("needs a model: "), row
    assert all(r in row["note"] for r in row["rules"]), row


@pytest.mark.parametrize("name", ORACLE_FIRST)
def test_a_failing_oracle_is_said_first_and_no_mechanical_fix_is_proposed(name, tmp_path, monkeypatch, docker_backend):
    """The gate needs a passing oracle, so a mechanical fix (e.g. the conftest one) cannot pass: none is
    proposed, and the revise note and the run report say first that the reference solution must work."""
    from envqa.graphs.gate import ORACLE_NOTICE

    row = _row(tmp_path, name, monkeypatch)
    print("TABLE-ROW", json.dumps(row))
    assert not row["proposed"], row
    assert row["note"].startswith(ORACLE_NOTICE) and "needs a model: oracle-fails" in row["note"], row
    held = sorted(set(row["rules"]) & set(fixable_rules()))
    assert ("held back until then: " + ", ".join(held) in row["note"]) if held else "held back" not in row["note"]
    assert row["notices"] == [ORACLE_NOTICE], row


def test_an_unpinned_pip_install_is_pinned_to_the_image_version_and_passes_the_gate(tmp_path, docker_backend):
    from envqa.core.environment import load_environment
    from envqa.probes.static.findings import static_findings
    from tests.reviser.conftest import write_task

    task = write_task(
        tmp_path / "task",
        environment__Dockerfile="FROM debian:bookworm\nWORKDIR /app\nRUN pip install --break-system-packages pytest\n",
    )
    findings = [f for f in static_findings(load_environment(task)) if f.rule == "unpinned-python-dependency"]
    assert findings
    config = fast_config(tmp_path / "home")
    version = VersionStore(config, Store(config.db_path)).snapshot(task, run_id="pin").version
    state = {
        "run_id": "pin",
        "version": version,
        # at image build the rule is an info note; the fixer is asked for it as a warning (a test.sh install is one)
        "findings": [f.model_copy(update={"severity": "warning"}).model_dump(mode="json") for f in findings],
        "trials": [],
    }
    with run_deps(config) as deps:
        revised, gated = revise_and_gate(deps, state)
    proposal = Store(config.db_path).get_proposal(revised["proposal_id"])
    assert "+RUN pip install --break-system-packages pytest==7.2.1" in proposal.diff, proposal.diff
    assert gated["gate_passed"], gated


def test_the_loop_adopts_the_fixer_revision_and_qa_export_writes_it(qa_env, tmp_path, docker_backend):
    """Through `qa run --approval auto`: the loop adopts the gated fix; `qa export` (default: last adopted)
    writes it, and `qa diff` shows the patch from the loaded version."""
    import subprocess

    from envqa.core.environment import load_environment

    qa = [str(EXAMPLES.parent / ".venv" / "bin" / "qa")]
    out = subprocess.run(
        qa
        + [
            "run",
            str(EXAMPLES / "always-pass"),
            "--oracle-runs",
            "1",
            "--approval",
            "auto",
            "--run-id",
            "loop-export",
            "--json",
        ],
        env=qa_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    versions = json.loads(out.stdout)["versions"]
    assert len(versions) == 2 and versions[1]["author"].startswith("fixer:"), versions
    dest = tmp_path / "adopted"
    out = subprocess.run(
        qa + ["export", "loop-export", str(dest), "--json"], env=qa_env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["version"] == versions[1]["version"] == load_environment(dest).version
    out = subprocess.run(qa + ["diff", "loop-export"], env=qa_env, capture_output=True, text=True)
    assert out.returncode == 0 and "+find /logs/verifier -mindepth 1 -delete" in out.stdout, out.stdout[-1000:]
