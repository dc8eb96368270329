"""Issue 13: a revision that contradicts the spec of a generated task is flagged for the human.

Two independent checks: the reviser's required `spec_consistency` verdict (structured output, through the
local fake provider) and a deterministic comparison of parent and candidate against the spec's words
(probes/static/spec_consistency.py). A flagged proposal waits for a human even under `--approval auto` (exit 4).
"""

from __future__ import annotations

import json

import pytest

from envqa.app.approval_prompt import spec_conflict_lines
from envqa.app.slack.blocks import approval_message
from envqa.core.models import Finding, Label, Proposal, Severity, SpecCheck, SpecConsistency
from envqa.probes.static.spec_consistency import check_revision, spec_literals
from envqa.store.db import Store
from envqa.store.versions import VersionStore
from qa_testkit import open_report, run_qa, write_files
from tests.generator.conftest import GOOD, GOOD_KEY, MODEL, SPEC, answer
from tests.reviser.kit import fast_config, run_deps

REVISER = "anthropic/claude-reviser-spec"
# Version 1 of a generated task: GOOD with the spec embedded, as the generate node leaves it.
SPEC_TOML = GOOD["task.toml"].replace("[metadata]\n", "[metadata]\nspec = " + json.dumps(SPEC) + "\n")
TEST_FOR = (
    "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
    "{check} && echo 1 > /logs/verifier/reward.txt\nexit 0\n"
)
# Against the spec: the expected word the spec names is gone from the instruction, the tests and the solution.
CONTRADICTING = {
    "instruction.md": "Write /app/out.txt containing HELLO WORLD.\n",
    "tests/test.sh": TEST_FOR.format(check='[ "$(cat /app/out.txt 2>/dev/null)" = "HELLO WORLD" ]'),
    "solution/solve.sh": "#!/bin/bash\nprintf 'HELLO WORLD' > /app/out.txt\n",
}
# Harder but within the spec: still hello, now exactly (no trailing newline).
CONSISTENT = {
    "instruction.md": "Write /app/out.txt containing hello, with no trailing newline.\n",
    "tests/test.sh": TEST_FOR.format(check="printf hello | cmp -s - /app/out.txt"),
}


def revision(edits: dict, verdict: dict | None, why: str = "harder hidden checks") -> dict:
    args = {
        "edits": [{"path": p, "content": c} for p, c in edits.items()],
        "addresses": [],
        "rationale": why,
        "expected_effect": ["oracle still passes", "nop still fails"],
    }
    if verdict is not None:
        args["spec_consistency"] = verdict
    return {"tool_calls": [{"name": "submit_answer", "arguments": args}], "usage": {"input": 2000, "output": 400}}


@pytest.mark.fast
def test_the_deterministic_check_flags_what_drops_the_specs_words(tmp_path):
    parent = write_files(tmp_path / "v1", {**GOOD, "task.toml": SPEC_TOML})
    assert set(spec_literals(SPEC)) == {"/app/out.txt", "hello"}

    def check(name: str, edits: dict) -> SpecCheck:
        cand = write_files(tmp_path / name, {**GOOD, "task.toml": SPEC_TOML, **edits})
        return check_revision(parent, cand)

    bad = check("bad", CONTRADICTING)
    assert bad.flagged and bad.model is None
    assert any("instruction.md no longer states `hello`" in c for c in bad.conflicts), bad.conflicts
    assert any("the tests no longer check `hello`" in c for c in bad.conflicts), bad.conflicts
    assert not check("ok", CONSISTENT).flagged
    moved = check("moved", {"instruction.md": "Write /srv/result.txt containing hello.\n"})
    assert moved.flagged and "`/app/out.txt`" in moved.conflicts[0]
    gone = check("no-spec", {"task.toml": GOOD["task.toml"]})
    assert gone.flagged and "spec is removed" in gone.conflicts[0]
    # The spec's sentence repeated in the instruction may not be reworded away.
    said = write_files(tmp_path / "said", {**GOOD, "task.toml": SPEC_TOML, "instruction.md": SPEC})
    reworded = write_files(
        tmp_path / "reworded", {**GOOD, "task.toml": SPEC_TOML, "instruction.md": "Write hello into /app/out.txt.\n"}
    )
    assert any("drops or rewords the spec's requirement" in c for c in check_revision(said, reworded).conflicts)
    # No spec (not a generated task): nothing to check against.
    assert check_revision(write_files(tmp_path / "plain", GOOD), parent) is None


@pytest.mark.fast
def test_the_reviser_must_give_its_spec_verdict_and_a_contradiction_is_flagged(fake_provider, provider_env, tmp_path):
    """The verdict is required for a spec'd task (an answer without it is sent back), and the model's
    'contradicts' flags a proposal the deterministic check finds nothing wrong with."""
    from envqa.graphs.revise import revise_node

    said = {
        "verdict": "contradicts",
        "spec_sentence": "containing the word hello",
        "explanation": "the clarification allows a trailing newline the spec does not mention",
    }
    srv = fake_provider(
        {
            "models": {
                "claude-reviser-spec": {
                    "turns": [
                        revision(
                            {"instruction.md": "Write /app/out.txt containing hello (a trailing newline is fine).\n"},
                            None,
                        ),
                        revision(
                            {"instruction.md": "Write /app/out.txt containing hello (a trailing newline is fine).\n"},
                            said,
                        ),
                    ]
                }
            }
        }
    )
    provider_env(srv)
    config = fast_config(tmp_path / "home", **{"reviser.model": REVISER})
    task = write_files(tmp_path / "task", {**GOOD, "task.toml": SPEC_TOML})
    version = VersionStore(config, Store(config.db_path)).snapshot(task, run_id="spec-1").version
    finding = Finding(
        rule="verifier-timing-dependent",
        label=Label.AMBIGUITY,
        severity=Severity.WARNING,
        message="trailing newline unclear",
        location="instruction.md",
    )
    with run_deps(config) as deps:
        out = revise_node(deps, {"run_id": "spec-1", "version": version, "findings": [finding.model_dump(mode="json")]})
    asks = [r for r in srv.requests if r["model"] == "claude-reviser-spec"]
    assert len(asks) == 2 and "spec_consistency" in asks[1]["last"], asks  # the first answer was sent back
    proposal = Store(config.db_path).get_proposal(out["proposal_id"])
    check = proposal.spec_check
    assert check.flagged and check.conflicts == [] and check.model.verdict == "contradicts", check
    assert "CONTRADICTS THE SPEC" in out["revise_note"]
    assert (
        'the reviser says it contradicts the spec: "containing the word hello"'
        in spec_conflict_lines(proposal.model_dump(mode="json"))[1]
    )


@pytest.mark.fast
def test_the_slack_message_carries_the_warning():
    flagged = Proposal(
        proposal_id="p-1",
        run_id="r",
        parent_version="v1",
        diff="",
        author="model:m",
        spec_check=SpecCheck(
            flagged=True,
            model=SpecConsistency(verdict="consistent"),
            conflicts=["the tests no longer check `hello`, which the spec names"],
        ),
    )
    msg = approval_message({"run_id": "r", "version": "v1", "proposal": flagged.model_dump(mode="json")}, None)
    assert "contradicts its spec" in msg["blocks"][0]["text"]["text"]
    assert "no longer check `hello`" in msg["blocks"][1]["text"]["text"]
    plain = flagged.model_copy(update={"spec_check": SpecCheck(flagged=False)})
    msg = approval_message({"run_id": "r", "version": "v1", "proposal": plain.model_dump(mode="json")}, None)
    assert not any("spec" in json.dumps(b) for b in msg["blocks"][:2])


def _spec_run_setup(fake_provider, qa_env, tmp_path, reviser_turn: dict):
    solver = {
        "turns": [
            {
                "tool_calls": [{"name": "bash", "arguments": {"command": "printf hello > /app/out.txt"}}],
                "usage": {"input": 500, "output": 40},
            },
            {
                "tool_calls": [{"name": "finish", "arguments": {"summary": "wrote it"}}],
                "usage": {"input": 600, "output": 10},
            },
        ]
    }
    srv = fake_provider(
        {
            "models": {
                "claude-generator-test": {"turns": [answer(GOOD)]},
                "solver": solver,
                "claude-reviser-spec": {"turns": [reviser_turn]},
            }
        }
    )
    (tmp_path / "qa.toml").write_text(
        "[validate]\noracle_runs = 1\n[probes]\nenabled = []\n"  # the band is under test here, not the hunt
        '[scheduler]\nmode = "local"\n[loop]\nmax_iterations = 1\n'
        f'[generator]\nmodel = "{MODEL}"\noracle_runs = 1\n[reviser]\nmodel = "{REVISER}"\ngate_oracle_runs = 1\n'
    )
    spec = tmp_path / "hello-spec"
    spec.mkdir()
    (spec / "spec.md").write_text(SPEC)
    env = dict(qa_env, ANTHROPIC_API_KEY=GOOD_KEY, ANTHROPIC_BASE_URL=srv.url)
    return srv, env, ["run", "hello-spec", "-m", "anthropic/solver", "-n", "1", "--approval", "auto", "--json"]


def test_a_contradicting_revision_waits_for_a_human_under_auto_and_approve_does_not_regenerate(
    fake_provider, qa_env, tmp_path, docker_backend, page
):
    srv, env, args = _spec_run_setup(
        fake_provider, qa_env, tmp_path, revision(CONTRADICTING, {"verdict": "consistent"})
    )
    proc = run_qa([*args, "--run-id", "spec-bad"], env, cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr[-3000:]  # awaiting approval although --approval auto
    report = json.loads(proc.stdout)
    pending = report["awaiting_approval"]
    assert report["verdict"] == "awaiting_approval" and pending["request"]["kind"] == "too_easy"
    check = pending["spec_check"]
    # The model claimed "consistent"; the deterministic check caught the dropped `hello` anyway.
    assert check["flagged"] and check["model"]["verdict"] == "consistent", check
    assert any("no longer states `hello`" in c for c in check["conflicts"]), check
    assert len(report["versions"]) == 1  # not adopted
    stored = json.loads((tmp_path / qa_env["QA_HOME"] / "runs" / "spec-bad" / "report.json").read_text())
    assert stored["awaiting_approval"]["proposal"]["spec_check"]["flagged"] is True
    open_report(page, tmp_path / qa_env["QA_HOME"] / "runs" / "spec-bad" / "report.html")
    box = page.locator("#revisions .spec-conflict")
    assert box.count() == 1 and "no longer states `hello`" in box.inner_text(), page.content()[-2000:]
    assert not page.errors, page.errors
    # Every place a human looks before deciding says so.
    runs = json.loads(run_qa(["runs", "--json"], env, cwd=tmp_path).stdout)["runs"]
    assert [r["pending_spec_conflicts"] for r in runs if r["run_id"] == "spec-bad"][0] == check["conflicts"]
    status = run_qa(["status", "spec-bad"], env, cwd=tmp_path)
    assert "CONTRADICTS THE SPEC" in status.stdout and "`hello`" in status.stdout, status.stdout
    show = run_qa(["show", "spec-bad"], env, cwd=tmp_path)
    assert "CONTRADICTS THE SPEC this task was generated from" in show.stdout, show.stdout[-3000:]
    assert not json.loads(run_qa(["show", "spec-bad", "--json"], env, cwd=tmp_path).stdout)["versions"][0]["approval"]

    # The human approves: the run resumes after generation, without asking the generator again.
    approved = run_qa(["approve", "spec-bad", "--json"], env, cwd=tmp_path)
    assert approved.returncode == 1, approved.stderr[-3000:]  # v2 below the band (the solver wrote hello)
    assert "contradicts the task's spec" in approved.stderr
    final = json.loads(approved.stdout)
    assert (final["verdict"], final["stop_reason"]) == ("out_of_band", "max_iterations: 1 revision(s) adopted")
    assert final["decision"]["action"] == "approve" and final["decision"]["spec_conflicts"] == check["conflicts"]
    v1, v2 = final["versions"]
    assert v1["author"] == f"model:{MODEL}" and v2["approval"]["approver"].startswith("cli:"), v2
    assert len([r for r in srv.requests if r["model"] == "claude-generator-test"]) == 1


def test_a_consistent_revision_is_auto_adopted_unflagged(fake_provider, qa_env, tmp_path, docker_backend):
    srv, env, args = _spec_run_setup(fake_provider, qa_env, tmp_path, revision(CONSISTENT, {"verdict": "consistent"}))
    proc = run_qa([*args, "--run-id", "spec-ok"], env, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-3000:]  # the loop ended (max_iterations, still above), not at approval
    report = json.loads(proc.stdout)
    assert (report["verdict"], report["stop_reason"]) == ("out_of_band", "max_iterations: 1 revision(s) adopted")
    v1, v2 = report["versions"]
    assert v2["approval"]["approver"] == "auto", v2
    [adopted] = [p for p in report["proposals"] if p["status"] == "adopted"]
    assert adopted["spec_check"] == {
        "flagged": False,
        "model": {"verdict": "consistent", "spec_sentence": "", "explanation": ""},
        "conflicts": [],
    }
    assert not report.get("awaiting_approval")
