"""The structured-output roles with a model that never answers in valid JSON (issue 26).

Each role is driven through the fake provider server with the real anthropic and openai SDKs over HTTP,
in-process (the local executor, the fake sandbox backend, SQLite): plain text instead of the tool call,
tool arguments that are not a JSON object, and JSON the schema rejects. Every bad reply gets the repair
prompt saying what was wrong; after the bounded retries each role ends clearly and stores nothing half:
the analyst leaves the trial `unlabeled`/`analyst-failed` (never a guessed label), the reviser makes no
proposal, the generator's attempt fails with its reason and writes nothing, the hunter's invalid trials are
named in the coverage.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from envqa.agents.structured import ANSWER_TOOL, structured_call
from envqa.agents.trajectory import AgentInfo, AtifToolCall, Observation, ObservationResult, Redactor, TrajectoryWriter
from envqa.core.config import load_config
from envqa.core.environment import load_environment
from envqa.core.errors import MalformedOutput
from envqa.core.models import Finding, Label, Outcome, Severity, TrialResult
from envqa.probes.analyst.model import AnalystAnswer
from envqa.providers import create_client
from qa_testkit import EXAMPLES

pytestmark = pytest.mark.fast  # the fast tier: the fake provider is a local HTTP server; no Docker, Redis, Postgres

PROVIDERS = ["anthropic", "openai"]
USAGE = {"input": 100, "output": 20}
PLAIN = {"text": "Sure! The label is capability because the agent gave up.", "usage": USAGE}
NOT_JSON = {"tool_calls": [{"name": ANSWER_TOOL, "raw_arguments": '{"label": "capability", "subt'}], "usage": USAGE}
WRONG_SCHEMA = {"tool_calls": [{"name": ANSWER_TOOL, "arguments": {"label": 7, "confidence": "high"}}], "usage": USAGE}
BAD_REPLIES = [PLAIN, NOT_JSON, WRONG_SCHEMA]


def _config(tmp_path, **extra):
    return load_config(
        None,
        {
            "home": str(tmp_path / "qa-home"),
            "sandbox.backend": "fake",
            "scheduler.mode": "local",
            "loop.max_iterations": 0,
            **extra,
        },
    )


def _model_requests(srv, model: str) -> list[dict]:
    return [r for r in srv.requests if r.get("model") == model]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_each_bad_reply_gets_a_repair_prompt_that_says_what_was_wrong(provider, fake_provider, provider_env, tmp_path):
    good = {
        "tool_calls": [
            {
                "name": ANSWER_TOOL,
                "arguments": {
                    "label": "capability",
                    "subtype": "gave-up",
                    "confidence": 0.5,
                    "explanation": "the agent stopped early",
                    "evidence": [{"step_id": 3, "quote": "I give up"}],
                },
            }
        ],
        "usage": USAGE,
    }
    srv = fake_provider({"models": {"m": {"turns": [PLAIN, NOT_JSON, WRONG_SCHEMA, good]}}})
    provider_env(srv)
    value, meta = structured_call(
        create_client(f"{provider}/m", _config(tmp_path)), "label it", "trace", AnalystAnswer, retries=3
    )
    assert value.subtype == "gave-up" and meta.attempts == 4 and meta.spend.calls == 4
    repairs = [r["last"] for r in srv.requests[1:]]
    assert "attempt 1 of 4" in repairs[0] and "plain text" in repairs[0] and "The label is capability" in repairs[0]
    assert "attempt 2 of 4" in repairs[1] and "could not be read as one JSON object" in repairs[1]
    assert "attempt 3 of 4" in repairs[2] and "does not match the AnalystAnswer schema" in repairs[2]
    assert "label" in repairs[2] and "confidence" in repairs[2]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_never_valid_is_malformed_output_after_the_bounded_retries(provider, fake_provider, provider_env, tmp_path):
    srv = fake_provider({"models": {"m": {"turns": [NOT_JSON] * 5}}})
    provider_env(srv)
    with pytest.raises(MalformedOutput) as info:
        structured_call(
            create_client(f"{provider}/m", _config(tmp_path)), "label it", "trace", AnalystAnswer, retries=2
        )
    assert info.value.error_class == "malformed_output" and "after 3 attempts" in str(info.value)
    assert len(srv.requests) == 3  # bounded: 1 + retries, then stop


# ---- the analyst ---------------------------------------------------------------------------------------------

ENV = EXAMPLES / "clean-wordfreq"


def _analyst_setup(tmp_path, provider: str, **extra):
    from envqa.app.local_executor import LocalExecutor
    from envqa.sandbox.fake import FakeBackend
    from envqa.store.db import Store

    config = _config(tmp_path, **{"analyst.model": f"{provider}/analyst", **extra})
    store = Store(config.db_path)
    env = load_environment(ENV)
    tid = "solver-0-fake00000001"
    trial_dir = config.runs_dir / "r1" / tid
    writer = TrajectoryWriter(
        trial_dir / "agent" / "trajectory.json", tid, AgentInfo(name="solver", version="0"), Redactor([])
    )
    writer.add("system", "you are a solver")
    writer.add("user", "write /app/wordfreq")
    writer.add(
        "agent",
        "writing it now",
        tool_calls=[
            AtifToolCall(tool_call_id="c1", function_name="bash", arguments={"command": "echo hi > /app/wordfreq"})
        ],
        observation=Observation(results=[ObservationResult(source_call_id="c1", content="")]),
    )
    trial = TrialResult(
        trial_id=tid,
        run_id="r1",
        env_version=env.version,
        agent="solver",
        model="openai/solver",
        purpose="sweep",
        outcome=Outcome.FAIL,
        reward=0.0,
        artifacts_dir=str(trial_dir),
    )
    store.record_trial(trial)
    deps = SimpleNamespace(config=config, store=store, executor=LocalExecutor(FakeBackend(), config, store))
    return deps, env, trial


def _run_analyst(deps, env, trial):
    from envqa.graphs.analyst_dispatch import run_analyst_jobs
    from envqa.probes.analyst.rules import context_for

    return run_analyst_jobs(deps, "r1", env, [trial], context_for(env, [trial], []))[trial.trial_id]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_analyst_that_never_answers_in_json_leaves_the_trial_unlabeled(provider, fake_provider, provider_env, tmp_path):
    srv = fake_provider({"models": {"analyst": {"turns": BAD_REPLIES * 2}}})
    provider_env(srv)
    deps, env, trial = _analyst_setup(tmp_path, provider, **{"solver.structured_retries": 1})
    label = _run_analyst(deps, env, trial)
    assert (label.label, label.subtype, label.source) == ("unlabeled", "analyst-failed", "none")
    assert "malformed_output" in label.explanation and "after 2 attempts" in label.explanation
    assert len(_model_requests(srv, "analyst")) == 2  # the first call and its one repair ([solver] structured_retries)
    stored = deps.store.label_for_trial(trial.trial_id)
    assert stored is not None and stored.label == "unlabeled" and stored.subtype == "analyst-failed"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_analyst_whose_repair_is_invalid_keeps_its_first_answer_unverified(
    provider, fake_provider, provider_env, tmp_path
):
    miscited = {
        "tool_calls": [
            {
                "name": ANSWER_TOOL,
                "arguments": {
                    "label": "capability",
                    "subtype": "wrong-approach",
                    "confidence": 0.7,
                    "explanation": "the agent wrote a placeholder",
                    "evidence": [{"step_id": 99, "quote": "no such step"}],
                },
            }
        ],
        "usage": USAGE,
    }
    srv = fake_provider({"models": {"analyst": {"turns": [miscited, NOT_JSON, PLAIN, NOT_JSON]}}})
    provider_env(srv)
    deps, env, trial = _analyst_setup(tmp_path, provider)
    label = _run_analyst(deps, env, trial)
    assert label.verified is False and label.source == f"model:{provider}/analyst"
    assert "step 99 does not exist" in label.explanation and "repaired answer was invalid" in label.explanation
    assert len(_model_requests(srv, "analyst")) == 4


# ---- the reviser ---------------------------------------------------------------------------------------------

AMBIGUOUS = Finding(
    rule="verifier-timing-dependent",
    label=Label.AMBIGUITY,
    severity=Severity.WARNING,
    message="the instruction does not say whether a trailing newline is allowed",
    evidence=["solver trials failed on the newline"],
    location="instruction.md",
)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_reviser_with_no_valid_answer_makes_no_proposal(provider, fake_provider, provider_env, tmp_path):
    from envqa.graphs.revise import revise_node
    from tests.reviser.conftest import write_task
    from tests.reviser.kit import run_deps

    srv = fake_provider({"models": {"reviser": {"turns": BAD_REPLIES * 2}}})
    provider_env(srv)
    config = _config(tmp_path, **{"reviser.model": f"{provider}/reviser"})
    with run_deps(config) as deps:
        version = deps.versions.snapshot(write_task(tmp_path / "task"), run_id="rv-1").version
        state = {"run_id": "rv-1", "version": version, "findings": [AMBIGUOUS.model_dump(mode="json")], "trials": []}
        out = revise_node(deps, state)
        assert out["proposal_id"] is None, out
        assert f"model:{provider}/reviser gave no valid answer (attempt 1)" in out["revise_note"]
        assert "RevisionAnswer" in out["revise_note"]
        assert deps.store.proposals_for_run("rv-1") == []  # nothing stored from a partial answer
    assert len(_model_requests(srv, "reviser")) == 1 + config.solver.structured_retries


# ---- the generator -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_generator_with_no_valid_answer_fails_the_attempt_and_writes_nothing(
    provider, fake_provider, provider_env, tmp_path
):
    from envqa.graphs.generate import generate_task
    from tests.generator.conftest import write_spec
    from tests.reviser.kit import run_deps

    srv = fake_provider({"models": {"generator": {"turns": BAD_REPLIES * 2}}})
    provider_env(srv)
    config = _config(tmp_path, **{"generator.model": f"{provider}/generator"})
    dest = tmp_path / "out" / "task"
    with run_deps(config) as deps:
        gen = generate_task(deps, write_spec(tmp_path / "spec"), dest, key="gen-invalid")
    assert gen.passed is False and gen.task_dir is None
    assert [(a.attempt, a.stage, a.reached) for a in gen.attempts] == [(1, "invalid-answer", "refused")]
    assert "no valid GeneratedTask" in gen.attempts[0].detail and gen.attempts[0].files == []
    assert not dest.exists() and not (tmp_path / "out").exists()
    assert not any((config.home / "generate").glob("*/*"))  # the staging area is empty too
    assert len(_model_requests(srv, "generator")) == 1 + config.solver.structured_retries


# ---- the LLM hunter ------------------------------------------------------------------------------------------


def _hunter_trial(tmp_path, name: str, steps: list[tuple[str, list[AtifToolCall], list[str]]]) -> TrialResult:
    trial_dir = tmp_path / name
    writer = TrajectoryWriter(
        trial_dir / "agent" / "trajectory.json", name, AgentInfo(name="hunter", version="0"), Redactor([])
    )
    writer.add("user", "find a shortcut")
    for text, calls, outs in steps:
        writer.add(
            "agent",
            text,
            tool_calls=calls or None,
            observation=Observation(
                results=[ObservationResult(source_call_id=c.tool_call_id, content=o) for c, o in zip(calls, outs)]
            )
            if calls
            else None,
        )
    return TrialResult(
        trial_id=name,
        run_id="r1",
        env_version="v",
        agent="hunter",
        model="openai/h",
        purpose="hunt-llm",
        outcome=Outcome.FAIL,
        reward=0.0,
        artifacts_dir=str(trial_dir),
    )


def test_hunter_trials_whose_model_never_acted_are_told_apart(tmp_path):
    from envqa.graphs.hunt_llm import _never_acted

    bad = AtifToolCall(tool_call_id="c1", function_name="bash", arguments={})
    good = AtifToolCall(tool_call_id="c2", function_name="bash", arguments={"command": "ls"})
    not_json = "error: arguments are not valid JSON: Expecting value; send the arguments as a JSON object"
    invalid = _hunter_trial(tmp_path, "h-0", [("I would run ls", [], []), ("", [bad], [not_json])])
    acted = _hunter_trial(tmp_path, "h-1", [("I would run ls", [], []), ("", [good], ["exit 0\nfile"])])
    assert _never_acted(invalid) is True and _never_acted(acted) is False


@pytest.mark.parametrize("provider,actions", [("anthropic", "tools"), ("openai", "tools"), ("openai", "text")])
def test_a_hunter_that_never_acts_is_named_in_coverage_and_the_run_goes_on(
    provider, actions, fake_provider, provider_env, tmp_path
):
    """A whole `qa run` on the fake sandbox: the hunter's model answers in plain text and non-JSON arguments
    (in text mode: replies without a bash block)."""
    import shutil

    from envqa.app.runner import execute_run
    from tests.fake_tasks import use_backend, wordfreq_backend

    steps = 4
    srv = fake_provider(
        {
            "models": {
                "hunter": {
                    "turns": [PLAIN, {**NOT_JSON, "tool_calls": [{"name": "bash", "raw_arguments": '{"command": "ls'}]}]
                    * steps
                }
            }
        }
    )
    provider_env(srv)
    config = load_config(
        None,
        {
            "home": str(tmp_path / "qa-home"),
            "sandbox.backend": use_backend(wordfreq_backend()),
            "scheduler.mode": "local",
            "loop.max_iterations": 0,
            "hunter.model": f"{provider}/hunter",
            "hunter.trials": 1,
            "solver.max_steps": steps,
            "solver.actions": actions,
        },
    )
    report = execute_run(
        shutil.copytree(ENV, tmp_path / "clean-wordfreq"), config, "hunt-invalid", quiet=True, approval_mode="auto"
    )
    coverage = {c["probe"]: c for c in report["coverage"]}
    assert coverage["llm_hunter"]["status"] == "ran", coverage.get("llm_hunter")
    assert "1 of them got no valid action from the model at any step" in coverage["llm_hunter"]["reason"]
    assert "the hunter's answer was invalid" in coverage["llm_hunter"]["reason"]
    hunters = [t for t in report["trials"] if t["agent"] == "hunter"]
    assert len(hunters) == 1 and hunters[0]["outcome"] != "pass"
    assert report["verdict"] in ("clean", "findings")
    assert not any(f["rule"] == "llm-exploit" for f in report["findings"])
    assert len(_model_requests(srv, "hunter")) == steps  # bounded by the step limit
