"""Trajectories are ATIF-shaped and never hold a secret, even one the model itself writes out."""

from __future__ import annotations

import json

import pytest

from envqa.agents.trajectory import (
    AgentInfo,
    AtifToolCall,
    FinalMetrics,
    Observation,
    ObservationResult,
    Redactor,
    StepMetrics,
    TrajectoryWriter,
    read_final_metrics,
)

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

SECRET = "my-custom-secret-value-42"


def test_redactor_replaces_known_values_and_key_shapes():
    r = Redactor([SECRET])
    text = f"a {SECRET} b sk-ant-api03-abcdefghijklmnopqrstuvwx c xoxb-1234567890-abcdef"
    out = r.text(text)
    assert SECRET not in out and "sk-ant-api03" not in out and "xoxb-" not in out
    assert out.count("[REDACTED]") == 3 and out.startswith("a ") and out.endswith(" c [REDACTED]")
    assert r.value({"k": [SECRET, 3]}) == {"k": ["[REDACTED]", 3]}


def test_writer_produces_atif_and_redacts(tmp_path):
    path = tmp_path / "agent" / "trajectory.json"
    w = TrajectoryWriter(
        path, "trial-1", AgentInfo(name="solver", version="0.1", model_name="openai/m"), Redactor([SECRET])
    )
    w.add("user", "do the task")
    w.add(
        "agent",
        f"the key is {SECRET}",
        tool_calls=[AtifToolCall(tool_call_id="c1", function_name="bash", arguments={"command": f"echo {SECRET}"})],
        observation=Observation(results=[ObservationResult(source_call_id="c1", content=SECRET)]),
        metrics=StepMetrics(prompt_tokens=10, completion_tokens=2, cost_usd=0.01),
    )
    w.finish(FinalMetrics(total_prompt_tokens=10, total_completion_tokens=2, total_cost_usd=0.01), notes="finished")
    raw = path.read_text()
    assert SECRET not in raw
    data = json.loads(raw)
    assert data["schema_version"] == "ATIF-v1.4" and data["agent"]["model_name"] == "openai/m"
    assert [s["step_id"] for s in data["steps"]] == [1, 2]
    step = data["steps"][1]
    assert step["tool_calls"][0]["function_name"] == "bash"
    assert step["observation"]["results"][0]["source_call_id"] == "c1"
    assert step["metrics"]["prompt_tokens"] == 10
    assert read_final_metrics(tmp_path).total_steps == 2
