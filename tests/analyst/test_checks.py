"""What code checks in an analyst answer, what the store keeps, and what compression keeps (no Docker).

The end-to-end versions (real SDK, fake provider, `qa run`) are in test_labels_e2e.py; these pin the rules
themselves: a citation must name an existing step and quote it, the label must fit the outcome, a model
label never replaces a deterministic one, and a compressed trajectory keeps every step id within budget.
"""

from __future__ import annotations

import pytest

from envqa.agents.trajectory import AgentInfo, AtifToolCall, Observation, ObservationResult, Step, Trajectory
from envqa.core.models import Citation, TrialLabel
from envqa.probes.analyst.model import AnalystAnswer, AnalystCitation, check_answer
from envqa.probes.analyst.trace_view import CHARS_PER_TOKEN, compress
from envqa.store.db import Store

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def _trajectory(n: int = 3, out: str = "ok") -> Trajectory:
    steps = [Step(step_id=1, source="system", message="sys"), Step(step_id=2, source="user", message="do it")]
    for i in range(3, 3 + n):
        steps.append(
            Step(
                step_id=i,
                source="agent",
                message=f"step {i} thinking",
                tool_calls=[
                    AtifToolCall(tool_call_id=f"c{i}", function_name="bash", arguments={"command": f"echo run-{i}"})
                ],
                observation=Observation(results=[ObservationResult(source_call_id=f"c{i}", content=out)]),
            )
        )
    return Trajectory(session_id="s", agent=AgentInfo(name="solver", version="0"), steps=steps)


def _answer(label="capability", subtype="near-miss", cites=((3, "echo run-3"),)) -> AnalystAnswer:
    return AnalystAnswer(
        label=label,
        subtype=subtype,
        confidence=0.7,
        explanation="because of what it ran",
        evidence=[AnalystCitation(step_id=s, quote=q) for s, q in cites],
    )


def test_citations_are_checked_against_the_steps():
    t = _trajectory()
    assert check_answer(_answer(cites=((3, "ECHO   run-3"), (5, "step 5 thinking"))), t, "fail") == []
    problems = check_answer(_answer(cites=((9, "echo run-9"), (4, "echo run-3"))), t, "fail")
    assert problems == [
        "step 9 does not exist (the steps are 1..5)",
        "the quote 'echo run-3' does not appear in step 4",
    ]


def test_label_must_fit_the_outcome_and_the_taxonomy():
    t = _trajectory()
    assert "cannot describe a trial whose outcome is pass" in check_answer(_answer(), t, "pass")[0]
    assert "not a subtype of capability" in check_answer(_answer(subtype="vibes"), t, "fail")[0]
    assert check_answer(_answer("legitimate", "earned-pass"), t, "pass") == []


def test_a_deterministic_label_is_never_replaced_by_a_model(tmp_path):
    store = Store(tmp_path / "s.db")
    proven = TrialLabel(
        trial_id="t1",
        label="shortcut",
        subtype="verifier-tampering",
        source="deterministic",
        evidence=[Citation(quote="strace ... open /logs/verifier/reward.txt (write)")],
    )
    store.save_label("r", proven)
    kept = store.save_label(
        "r", TrialLabel(trial_id="t1", label="legitimate", subtype="earned-pass", source="model:anthropic/x")
    )
    assert kept == proven and store.label_for_trial("t1") == proven
    # The other way round, a rule's proof replaces the model's opinion.
    store.save_label("r", TrialLabel(trial_id="t2", label="legitimate", subtype="earned-pass", source="model:a/b"))
    store.save_label("r", proven.model_copy(update={"trial_id": "t2"}))
    assert store.label_for_trial("t2").label == "shortcut"
    assert set(store.labels_for_run("r")) == {"t1", "t2"}


def test_compression_keeps_every_step_id_within_the_budget():
    t = _trajectory(n=200, out="x" * 5000)
    text = compress(t, token_budget=3000)
    assert all(f"[step {i}]" in text for i in range(2, 203))
    assert "[step 1]" not in text  # the system prompt is ours, not the agent's
    assert len(text) <= 3000 * CHARS_PER_TOKEN + 2000
    small = compress(_trajectory(n=3), token_budget=3000)
    assert "echo run-3" in small and "ok" in small  # nothing cut when it fits
