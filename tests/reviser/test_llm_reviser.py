"""The LLM reviser through the local fake provider (real Anthropic SDK over HTTP), and the gate behind it."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from contextlib import ExitStack
from pathlib import Path

import pytest

from envqa.core.models import Finding, Label, Outcome, Severity, TrialResult
from envqa.scheduler.embedded import WorkerPool
from envqa.scheduler.queues import Keys
from envqa.store.db import Store
from envqa.store.versions import VersionStore
from qa_testkit import store_rows, wait_for
from tests.reviser.conftest import TASK, write_task
from tests.reviser.kit import fast_config, run_deps

MODEL = "anthropic/claude-reviser-test"
AMBIGUOUS = Finding(
    rule="verifier-timing-dependent",  # any registered rule the candidate does not fire
    label=Label.AMBIGUITY,
    severity=Severity.WARNING,
    message="the instruction does not say whether a trailing newline is allowed",
    evidence=["solver trials failed on the newline"],
    location="instruction.md",
)
CLEAR = "Write /app/out.txt containing hello (a trailing newline is fine).\n"
STRICT_TEST = (
    "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
    "grep -qx HELLO /app/out.txt && echo 1 > /logs/verifier/reward.txt\nexit 0\n"
)


def answer(edits: dict, why: str = "clarify") -> dict:
    return {
        "tool_calls": [
            {
                "name": "submit_answer",
                "arguments": {
                    "edits": [{"path": p, "content": c} for p, c in edits.items()],
                    "addresses": ["verifier-timing-dependent"],
                    "rationale": why,
                    "expected_effect": ["oracle still passes"],
                },
            }
        ],
        "usage": {"input": 900, "output": 300},
    }


def state_for(config, task, run_id: str, findings=(AMBIGUOUS,), trials=()) -> dict:
    store = Store(config.db_path)
    version = VersionStore(config, store).snapshot(task, run_id=run_id).version
    return {
        "run_id": run_id,
        "version": version,
        "findings": [f.model_dump(mode="json") for f in findings],
        "trials": [t.model_dump(mode="json") for t in trials],
    }


def test_a_proposal_that_breaks_the_oracle_is_rejected_then_repaired(
    fake_provider, provider_env, tmp_path, docker_backend
):
    from envqa.graphs.revise import gate_node, revise_node

    srv = fake_provider(
        {
            "models": {
                "claude-reviser-test": {
                    "turns": [
                        answer(
                            {"tests/test.sh": STRICT_TEST}, "make the test strict"
                        ),  # breaks the oracle (it writes hello)
                        answer({"instruction.md": CLEAR}, "only clarify the instruction"),
                    ]
                }
            }
        }
    )
    provider_env(srv)
    config = fast_config(tmp_path / "home", **{"reviser.model": MODEL})
    state = state_for(config, write_task(tmp_path / "task"), "llm-1")
    with run_deps(config) as deps:
        first = revise_node(deps, state)
        assert first["proposal_id"], first
        gated = gate_node(deps, {**state, **first})
        assert gated["gate_passed"] is False and "oracle" in gated["gate_feedback"], gated
        assert gated["repairs"] == 0
        second = revise_node(deps, {**state, **first, **gated})
        again = gate_node(deps, {**state, **second, "repairs": gated["repairs"]})
    assert again["gate_passed"] is True, again
    store = Store(config.db_path)
    p1, p2 = store.get_proposal(first["proposal_id"]), store.get_proposal(second["proposal_id"])
    assert (p1.status, p2.status) == ("gate_failed", "gate_passed") and (p1.attempt, p2.attempt) == (1, 2)
    assert p2.author == f"model:{MODEL}" and "+Write /app/out.txt containing hello (a trailing" in p2.diff
    oracle = next(c for c in p1.gate.checks if c.name == "oracle")
    assert not oracle.passed and oracle.trial_ids
    # The repair saw the rejection: the second request carried the first answer and the gate's reason.
    second_request = [r for r in srv.requests if r.get("model") == "claude-reviser-test"][-1]
    assert second_request["messages"] == 3 and "oracle" in second_request["last"], second_request


@pytest.mark.fast
@pytest.mark.parametrize("escape", ["../../{name}", "./../../tests/{name}", "./tests/../../{name}"])
def test_an_edit_outside_the_task_is_refused(fake_provider, provider_env, tmp_path, escape):
    """`./../../tests/x` once passed the check as `tests/x` (a careless strip of `./`) and was written two
    levels above the reviser's scratch copy of the task: into the temp dir itself."""
    from envqa.graphs.revise import revise_node

    name = f"escape-{tmp_path.name}.txt"
    srv = fake_provider(
        {"models": {"*": {"turns": [answer({escape.format(name=name): "owned\n", "instruction.md": CLEAR})]}}}
    )
    provider_env(srv)
    config = fast_config(tmp_path / "home", **{"reviser.model": MODEL})
    state = state_for(config, write_task(tmp_path / "task"), "llm-2")
    with run_deps(config) as deps:
        out = revise_node(deps, state)
    assert out["revise_note"].startswith("refused:") and "outside the task's files" in out["revise_note"], out
    proposal = Store(config.db_path).get_proposal(out["proposal_id"])
    assert proposal.candidate_version is None and proposal.status == "gate_failed"
    tmp = Path(tempfile.gettempdir())
    assert not list(tmp_path.rglob(name)) and not (tmp / name).exists() and not (tmp / "tests" / name).exists()


@pytest.mark.parametrize("mode", ["local", "redis"])
def test_the_regrade_catches_a_patch_that_breaks_a_legitimate_solver_pass(tmp_path, docker_backend, mode, redis_server):
    """The solver wrote `hello\\n` (correct by the instruction); a patch demanding exact bytes breaks it.
    The replay is a job through the executor: in this process in local mode, on a worker process from the
    sandbox queue in Redis mode, with the same verdict."""
    with ExitStack() as stack:
        extra = {}
        if mode == "redis":
            server = redis_server(tmp_path / "redis")
            stack.callback(server.cleanup)
            pool = WorkerPool(server.url, 1, "sandbox", log_dir=tmp_path / "worker-logs").start()
            stack.callback(pool.stop)
            extra = {"scheduler.mode": "redis", "scheduler.redis_url": server.url}
        config = fast_config(tmp_path / "home", **extra)
        _regrade_breaks_a_solver_pass(tmp_path, config)
        [replay] = [
            json.loads(r["result_json"])
            for r in store_rows(config.home, "SELECT result_json FROM calls WHERE call_id LIKE 'probe-solver-replay-%'")
        ]
        pid = int(replay["executed_by"].rsplit(":", 1)[1])
        assert pid == os.getpid() if mode == "local" else pid in {p.pid for p in pool.procs}, (mode, replay)


def _regrade_breaks_a_solver_pass(tmp_path, config) -> None:
    from envqa.agents.trajectory import AgentInfo, AtifToolCall, Step, Trajectory
    from envqa.core.models import Proposal
    from envqa.graphs.revise import gate_node

    task = write_task(tmp_path / "task")
    art = tmp_path / "solver-trial"
    (art / "agent").mkdir(parents=True)
    (art / "agent" / "trajectory.json").write_text(
        Trajectory(
            session_id="s",
            agent=AgentInfo(name="solver", version="1"),
            steps=[
                Step(
                    step_id=1,
                    source="agent",
                    tool_calls=[
                        AtifToolCall(
                            tool_call_id="c1", function_name="bash", arguments={"command": "echo hello > /app/out.txt"}
                        )
                    ],
                )
            ],
        ).model_dump_json()
    )
    solver_pass = TrialResult(
        trial_id="solver-0-legit",
        run_id="llm-3",
        env_version="x",
        agent="solver",
        model="anthropic/m",
        purpose="sweep",
        outcome=Outcome.PASS,
        reward=1.0,
        artifacts_dir=str(art),
    )
    state = state_for(config, task, "llm-3", trials=[solver_pass])
    exact = TASK["tests/test.sh"].replace('[ "$(cat /app/out.txt)" = hello ]', "printf hello | cmp -s - /app/out.txt")
    edited = write_task(tmp_path / "edited", tests__test_sh=exact)
    store = Store(config.db_path)
    vs = VersionStore(config, store)
    from envqa.store.versions import make_diff

    info = vs.apply_patch(
        state["version"],
        make_diff(vs.path(state["version"]), edited),
        author="model:x/y",
        reason="exact bytes",
        run_id="llm-3",
    )
    store.save_proposal(
        Proposal(
            proposal_id="p-regrade",
            run_id="llm-3",
            parent_version=state["version"],
            candidate_version=info.version,
            diff="d",
            author="model:x/y",
        )
    )
    with run_deps(config) as deps:
        out = gate_node(deps, {**state, "proposal_id": "p-regrade"})
    gate = store.get_proposal("p-regrade").gate
    checks = {c.name: c for c in gate.checks}
    assert checks["oracle"].passed and checks["nop"].passed  # the oracle alone would not have caught it
    assert not checks["regrade"].passed and "solver-0-legit" in checks["regrade"].detail, checks["regrade"]
    assert out["gate_passed"] is False and "regrade" in out["gate_feedback"]


def test_a_429_on_the_reviser_model_parks_only_its_queue(fake_provider, provider_env, tmp_path, monkeypatch):
    from envqa.agents.reviser import ask_reviser
    from envqa.app.executors import open_executor

    srv = fake_provider(
        {
            "models": {
                "claude-reviser-test": {
                    "turns": [answer({"instruction.md": CLEAR})],
                    "faults": [{"status": 429, "retry_after": 8, "times": 1}],
                },
                "*": {"turns": [answer({"instruction.md": CLEAR})]},
            }
        }
    )
    provider_env(srv)
    config = fast_config(tmp_path / "home", **{"scheduler.mode": "embedded", "scheduler.workers": 1})
    store = Store(config.db_path)
    with open_executor(config, None, store) as executor:
        box: dict = {}
        t = threading.Thread(
            target=lambda: box.update(
                r=ask_reviser(config, executor, run_id="llm-4", model=MODEL, prompt="clarify please")
            )
        )
        t.start()
        wait_for(
            lambda: executor.conn.get(Keys.parked("anthropic/claude-reviser-test")), 20, "the reviser queue parked"
        )
        other, _ = ask_reviser(config, executor, run_id="llm-4", model="anthropic/other-model", prompt="x")
        # The other model's call finished while the reviser's queue was still parked: it did not wait for it.
        assert executor.conn.get(Keys.parked("anthropic/claude-reviser-test")), "the other model waited out the park"
        assert executor.conn.get(Keys.parked("anthropic/other-model")) is None
        t.join(timeout=60)
    assert not t.is_alive() and box["r"][0].edits[0].path == "instruction.md"
    assert box["r"][1]["input_tokens"] == 900 and other.edits


@pytest.mark.fast
def test_the_reviser_spend_counts_against_the_budget(fake_provider, provider_env, tmp_path):
    """One budget for the run: the reviser's own spend stops its next call, and decide's cap counts it too
    (graphs/spend.py), so a run whose sweep was cheap still stops when its revisions were not."""
    from envqa.graphs.decide import cap_reached
    from envqa.graphs.revise import revise_node
    from envqa.graphs.spend import role_spend, spend_section

    srv = fake_provider(
        {"models": {"*": {"turns": [answer({"instruction.md": CLEAR}), answer({"instruction.md": CLEAR})]}}}
    )
    provider_env(srv)
    config = fast_config(
        tmp_path / "home", **{"reviser.model": MODEL, "budget.max_tokens": 1200, "loop.max_iterations": 3}
    )
    state = state_for(config, write_task(tmp_path / "task"), "llm-5")
    with run_deps(config) as deps:
        assert cap_reached(deps, state) is None
        first = revise_node(deps, state)
        assert first["proposal_id"], first
        assert role_spend(deps, state)["reviser"][MODEL].tokens == 1200  # the scripted usage: 900 in + 300 out
        again = revise_node(deps, {**state, **first, "gate_feedback": "oracle: 0/1 passed"})
        assert cap_reached(deps, state) == "budget: used 1200 tokens of max_tokens=1200"
        assert spend_section(deps, state) == {}  # the reviser's spend is shown with its proposals
    assert again["proposal_id"] is None and again["revise_note"].startswith("budget reached"), again
    assert len([r for r in srv.requests if r["status"] == 200]) == 1  # no second model call


def test_a_proposal_that_never_passes_the_gate_is_dropped_after_max_repairs(fake_provider, qa_env, tmp_path):
    """Through `qa run` (the graph's routing, real SDK over HTTP): every answer breaks the oracle, so the gate
    fails, the reviser gets its evidence back `max_repairs` times, and then the proposal is dropped with its
    reasons kept; nobody is asked to approve a patch that never passed."""
    import json

    from qa_testkit import EXAMPLES, run_qa
    from tests.providers.conftest import GOOD_KEY

    breaks = answer(
        {"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"}, "check harder"
    )
    srv = fake_provider({"models": {"claude-reviser-test": {"turns": [breaks, breaks, breaks]}}})
    env = dict(qa_env, ANTHROPIC_API_KEY=GOOD_KEY, ANTHROPIC_BASE_URL=srv.url)
    (tmp_path / "qa.toml").write_text("[probes]\noracle_runs = 1\n[reviser]\nmax_repairs = 1\ngate_oracle_runs = 1\n")
    proc = run_qa(
        [
            "run",
            str(EXAMPLES / "weak-verifier"),
            "--oracle-runs",
            "1",
            "--reviser-model",
            MODEL,
            "--approval",
            "auto",
            "--json",
        ],
        env,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report["stop_reason"].startswith("gate_failed: the proposal was dropped after 1 repair(s)"), report
    assert "oracle" in report["stop_reason"]
    assert [(p["attempt"], p["status"]) for p in report["proposals"]] == [(1, "gate_failed"), (2, "dropped")]
    assert len(report["versions"]) == 1 and report["iterations"] == 0
    assert report["awaiting_approval"] is None
    assert [f["rule"] for f in report["findings"] if f["severity"] != "info"] == ["verifier-accepts-mutant"]
    assert len([r for r in srv.requests if r.get("model") == "claude-reviser-test"]) == 2
