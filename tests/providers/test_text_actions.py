"""The `text` action protocol and real-reply robustness (issue 26): the solver loop driven through the real
openai SDK by the fake provider server, acting in the fake sandbox (no Docker: the fast tier).

A text-mode model writes one fenced bash block per reply; the fake sandbox plays the two commands the
scripted model runs (write /app/wordfreq by heredoc, run it) and the example's verifier, so a trial ends
with a real verdict. The rough edges of real servers (empty content, a reply cut at max_tokens, no
`usage`, HTTP 500, the context overflow) must each end as a clear trial outcome.
"""

from __future__ import annotations

import json
import re

import pytest

from envqa.agents.actions import bash_blocks, parse_text_action
from envqa.agents.solver import SolverAgent
from envqa.agents.trial import run_trial
from envqa.core.config import load_config
from envqa.core.environment import load_environment
from envqa.core.errors import InputError
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialSpec
from envqa.providers import create_client
from envqa.providers.spec import ModelSpec
from envqa.sandbox.fake_commands import ExecCall, FakeOutput
from qa_testkit import EXAMPLES
from tests.fake_tasks import HEREDOC, run_program, wordfreq_backend

from . import scripts

pytestmark = pytest.mark.fast

SUBMIT = "Done.\n```bash\necho COMPLETE_TASK_AND_SUBMIT\n```"
WRITE = f"cat > /app/wordfreq <<'PY'\n{scripts.WORDFREQ}PY\nchmod +x /app/wordfreq"


def block(command: str, say: str = "Next step.") -> str:
    return f"{say}\n```bash\n{command}\n```\n"


def text_backend():
    """clean-wordfreq on the fake, plus the two shell commands the scripted model sends."""
    backend = wordfreq_backend()

    @backend.on(lambda argv: argv[:2] == ["bash", "-c"] and argv[2].startswith("cat > /app/wordfreq"))
    def write(call: ExecCall) -> FakeOutput:
        for path, _, body in HEREDOC.findall(call.cmd[2] + "\n"):
            executable = f"chmod +x {path}" in call.cmd[2]
            call.sandbox.fs.write(path, (body + "\n").encode(), 0o755 if executable else 0o644)
        return FakeOutput()

    @backend.on(lambda argv: argv[:2] == ["bash", "-c"] and argv[2].startswith("printf 'b a b a c' | "))
    def check(call: ExecCall) -> FakeOutput:
        code, out = run_program(call, "/app/wordfreq", "b a b a c")
        return FakeOutput(exit_code=code, stdout=out)

    return backend


def trial(tmp_path, model: str, solver: dict | None = None, backend=None):
    cfg = load_config(None, {"home": str(tmp_path / "home"), **{f"solver.{k}": v for k, v in (solver or {}).items()}})
    env = load_environment(EXAMPLES / "clean-wordfreq")
    spec = TrialSpec(run_id="r1", env_version=env.version, agent="solver", model=model, index=0, purpose="sweep")
    result = run_trial(
        spec,
        env,
        backend or text_backend(),
        cfg,
        RunLayout(cfg.runs_dir, "r1"),
        agent=SolverAgent(model=model, config=cfg),
    )
    traj = json.loads((tmp_path / "home" / "runs" / "r1" / spec.trial_id / "agent" / "trajectory.json").read_text())
    return result, traj


def local(srv, name: str = "policy") -> str:
    return f"openai-compatible/{name}@{srv.url}/v1"


def agent_steps(traj: dict) -> list[dict]:
    return [s for s in traj["steps"] if s["source"] == "agent"]


# -- parsing ----------------------------------------------------------------------------------------------


def test_exactly_one_bash_block_is_an_action():
    assert bash_blocks("```bash\nls -la\n```") == ["ls -la"]
    assert bash_blocks("```sh\nls\n```\n```\npwd\n```") == ["ls", "pwd"]  # sh and unlabelled count
    assert bash_blocks("```python\nprint(1)\n```\n```bash\nls\n```") == ["ls"]  # other languages do not
    assert bash_blocks("```bash\nls -la") == []  # left open: cut at max_tokens
    assert bash_blocks("```bash\nls -la```") == ["ls -la"]  # closing fence glued to the command
    assert not parse_text_action("no block at all").ok and parse_text_action("").blocks == 0
    assert parse_text_action(block("ls") + block("pwd")).blocks == 2
    action = parse_text_action(SUBMIT)
    assert action.ok and action.submit
    assert not parse_text_action(block("echo hi; echo COMPLETE_TASK_AND_SUBMIT")).submit  # first line only
    assert parse_text_action(block("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")).submit  # mini-swe-agent's
    thinking = "<think>maybe\n```bash\nrm -rf /app\n```\nno.</think>\n" + block("ls /app")
    assert parse_text_action(thinking).command == "ls /app"
    assert parse_text_action("<think>```bash\nls\n```").blocks == 0  # cut inside the thinking


def test_openai_compatible_spec_needs_no_config_and_no_key(monkeypatch, fake_provider):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = ModelSpec.parse("openai-compatible/Qwen/Qwen3-8B@http://127.0.0.1:8000/v1")
    assert (spec.provider, spec.model, spec.base_url) == (
        "openai-compatible",
        "Qwen/Qwen3-8B",
        "http://127.0.0.1:8000/v1",
    )
    assert spec.spec == "openai-compatible/Qwen/Qwen3-8B@http://127.0.0.1:8000/v1"
    srv = fake_provider({"models": {"m": {"turns": [{"text": "hi"}]}}})
    client = create_client(local(srv, "m"), load_config(None, {}))
    reply = client.complete("", [], max_tokens=32)
    assert reply.text == "hi" and reply.cost_usd == 0.0 and srv.requests[0]["model"] == "m"
    with pytest.raises(InputError) as info:
        create_client("openai-compatible/m", load_config(None, {}))
    assert "openai-compatible/NAME@URL" in str(info.value)


def test_actions_setting_per_run_and_per_model():
    cfg = load_config(None, {"solver.actions": "text", "solver.model_actions": {"openai/gpt-5": "tools"}})
    assert cfg.solver.actions_for("openai/gpt-5") == "tools" and cfg.solver.actions_for("vllm/x") == "text"
    assert load_config(None, {}).solver.actions_for("openai/gpt-5") == "tools"  # today's default
    with pytest.raises(InputError) as info:
        load_config(None, {"solver.actions": "json"})
    assert info.value.field == "solver.actions"


# -- trials -----------------------------------------------------------------------------------------------


def test_text_actions_run_a_command_submit_and_pass(tmp_path, fake_provider):
    srv = fake_provider(
        {
            "models": {
                "policy": {
                    "turns": [
                        {"text": block("pwd", "I'll look around."), "usage": {"input": 900, "output": 30}},
                        {"text": block(WRITE), "usage": {"input": 1200, "output": 150}},
                        {"text": block("printf 'b a b a c' | /app/wordfreq"), "omit_usage": True},
                        {"text": SUBMIT, "usage": {"input": 1500, "output": 10}},
                    ]
                }
            }
        }
    )
    result, traj = trial(tmp_path, local(srv), {"actions": "text"})
    assert result.outcome == Outcome.PASS and result.reward == 1.0
    assert traj["notes"] == "finished" and traj["agent"]["model_name"] == local(srv)
    assert traj["extra"]["actions"] == "text"
    steps = agent_steps(traj)
    assert [s["tool_calls"][0]["function_name"] for s in steps] == ["bash", "bash", "bash", "finish"]
    assert "2 a\n2 b\n1 c" in steps[2]["observation"]["results"][0]["content"]  # the command really ran
    assert steps[2]["observation"]["results"][0]["source_call_id"] == steps[2]["tool_calls"][0]["tool_call_id"]
    # No tools on the wire; the missing usage counts 0 tokens; a local model costs 0 and says it is unpriced.
    assert all(r["tools"] == [] for r in srv.requests) and len(srv.requests) == 4
    fm = traj["final_metrics"]
    assert (fm["total_prompt_tokens"], fm["total_completion_tokens"]) == (3600, 190)
    assert fm["total_cost_usd"] == 0.0 and fm["extra"] == {"calls": 4, "priced": False}


def test_no_block_and_two_blocks_get_the_format_error(tmp_path, fake_provider):
    srv = fake_provider(
        {
            "models": {
                "policy": {
                    "turns": [
                        {"text": "I think the answer is to write a script."},
                        {"text": block("ls") + block("pwd")},
                        {"text": SUBMIT},
                    ]
                }
            }
        }
    )
    result, traj = trial(tmp_path, local(srv), {"actions": "text"})
    assert "no fenced bash code block" in srv.requests[1]["last"]
    assert "2 fenced bash code blocks" in srv.requests[2]["last"]
    steps = agent_steps(traj)
    assert "tool_calls" not in steps[0] and "nothing ran" in steps[0]["observation"]["results"][0]["content"]
    assert traj["notes"] == "finished" and result.outcome == Outcome.FAIL  # submitted without doing the task


def test_empty_truncated_and_usage_less_replies_end_at_the_step_limit(tmp_path, fake_provider):
    srv = fake_provider(
        {
            "models": {
                "policy": {
                    "turns": [
                        {"text": "", "omit_usage": True},
                        {
                            "text": "Let me think step by step about this\n```bash\ncat > /app/wordfr",
                            "finish_reason": "length",
                            "usage": {"input": 100, "output": 64},
                        },
                        {"text": "Still thinking.", "omit_usage": True},
                    ]
                }
            }
        }
    )
    result, traj = trial(tmp_path, local(srv), {"actions": "text", "max_steps": 3, "max_output_tokens": 64})
    assert traj["notes"] == "max_steps" and result.outcome == Outcome.FAIL and result.agent_exit_code == 1
    assert "cut off at the output limit (64 tokens)" in srv.requests[2]["last"]
    steps = agent_steps(traj)
    assert steps[1]["extra"] == {"stop_reason": "length"} and "extra" not in steps[0]
    assert traj["final_metrics"]["total_prompt_tokens"] == 100  # the two replies without usage count 0


@pytest.mark.parametrize("actions", ["text", "tools"])
def test_a_model_that_never_acts_ends_at_the_step_limit(tmp_path, fake_provider, actions):
    srv = fake_provider({"models": {"policy": {"turns": [{"text": "Hmm."}] * 4}}})
    result, traj = trial(tmp_path, local(srv), {"actions": actions, "max_steps": 4})
    assert traj["notes"] == "max_steps" and len(srv.requests) == 4 and traj["extra"]["actions"] == actions
    assert result.outcome == Outcome.FAIL and result.error_class is None  # a capability verdict, not infra


@pytest.mark.parametrize("actions", ["text", "tools"])
@pytest.mark.parametrize(
    "fault,error_class",
    [
        ({"status": 500, "message": "failed to parse grammar", "times": -1}, "provider_5xx"),  # llama.cpp
        (
            {
                "status": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "times": -1,
            },
            "context_too_long",
        ),  # llama.cpp
        (
            {
                "status": 400,
                "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens",
                "times": -1,
            },
            "context_too_long",
        ),  # vLLM
    ],
)
def test_server_errors_are_infra_with_their_class(tmp_path, fake_provider, fault, error_class, actions):
    srv = fake_provider(
        {"models": {"policy": {"turns": [{"text": block("pwd")}] * 3, "faults": [{**fault, "after": 1}]}}}
    )
    result, traj = trial(tmp_path, local(srv), {"actions": actions})
    assert result.outcome == Outcome.INFRA and result.error_class == error_class
    assert traj["notes"] == f"provider_error:{error_class}"
    assert len(agent_steps(traj)) == 1  # the step before the failure is kept


def test_hunter_in_text_mode_keeps_its_role_prompt(tmp_path, fake_provider):
    from envqa.agents.hunter import HunterAgent

    srv = fake_provider({"models": {"policy": {"turns": [{"text": SUBMIT}]}}})
    cfg = load_config(None, {"home": str(tmp_path / "home"), "solver.actions": "text"})
    env = load_environment(EXAMPLES / "clean-wordfreq")
    spec = TrialSpec(run_id="r1", env_version=env.version, agent="hunter", model=local(srv), index=0, purpose="sweep")
    run_trial(
        spec, env, text_backend(), cfg, RunLayout(cfg.runs_dir, "r1"), agent=HunterAgent(model=local(srv), config=cfg)
    )
    traj = json.loads((tmp_path / "home" / "runs" / "r1" / spec.trial_id / "agent" / "trajectory.json").read_text())
    system = traj["steps"][0]["message"]
    assert "red-team" in system and "COMPLETE_TASK_AND_SUBMIT" in system
    assert re.search(r"tools described above are not available", system)
