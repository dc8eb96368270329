"""Renders planned trials into the files Harbor 0.26 writes (see imported_runs.py); imported_runs_tb.py does
Terminal-Bench 0.2.18.

Kept apart from the scenarios so that the bulk benchmark and the fixture share one writer per format.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

T0 = datetime(2025, 9, 14, 10, 22, 31, tzinfo=UTC)
CTRF_TASKS = {"csv-report", "port-config", "release-pipeline", "infra-task"}  # others: test-stdout.txt only
REWARD_JSON_TASKS = {"sat-hard"}  # reward.json instead of reward.txt


@dataclass(frozen=True)
class AgentSpec:
    name: str
    version: str
    provider: str
    model: str  # without the provider

    @property
    def model_id(self) -> str:
        return f"{self.provider}/{self.model}"


AGENTS = [
    AgentSpec("claude-code", "2.0.14", "anthropic", "claude-opus-4-1"),
    AgentSpec("terminus-2", "2.0.0", "openai", "gpt-5"),
    AgentSpec("codex", "0.46.0", "openai", "gpt-5-codex"),
]


@dataclass
class StepPlan:
    name: str
    tests: list[tuple[str, str, str]]
    reward: float
    commands: list[tuple[str, str]]


@dataclass
class TrialPlan:
    task: str
    agent: AgentSpec
    attempt: int
    n_attempts: int
    tests: list[tuple[str, str, str]]  # (name, "passed"|"failed", failure text)
    instruction: str
    reward: float | None = 1.0
    commands: list[tuple[str, str]] = field(default_factory=list)  # (command, output)
    exception: tuple[str, str] | None = None  # Harbor exception_info (type, message)
    tb_failure_mode: str | None = None  # None: derived (agent_timeout / none)
    agent_timed_out: bool = False
    never_ran: bool = False
    empty_trajectory: bool = False
    unparsable_tests: bool = False
    steps: list[StepPlan] | None = None

    def harbor_trial_name(self) -> str:
        digest = hashlib.sha256(f"{self.task}|{self.agent.name}|{self.attempt}".encode()).hexdigest()
        return f"{self.task[:32].rstrip('_-')}__{digest[:7]}"


def _iso(t: datetime) -> str:
    return t.isoformat()


def _dump(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4))


# ----------------------------------------------------------------------------------------------- pytest output
def pytest_output(tests: list[tuple[str, str, str]], file: str = "test_outputs.py") -> str:
    """What `pytest -rA` prints: the FAILURES section with E lines, then the short test summary info."""
    marks = "".join("." if s == "passed" else "F" for _, s, _ in tests)
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.3, pytest-8.3.4, pluggy-1.5.0",
        "rootdir: /tests",
        f"collected {len(tests)} items",
        "",
        f"{file} {marks}" + " " * 40 + "[100%]",
        "",
    ]
    failed = [(n, m) for n, s, m in tests if s == "failed"]
    if failed:
        lines.append("=================================== FAILURES ===================================")
        for name, message in failed:
            short = name.split("::")[-1].split("/")[-1]
            lines += [f"_{'_' * 20} {short} {'_' * 20}", "", f"    def {short}():", ">       check()"]
            lines += [f"E       {m}" for m in message.splitlines()]
            lines += ["", f"{file}:42: AssertionError"]
    lines.append("=========================== short test summary info ============================")
    for name, status, message in tests:
        node = f"{file}::{name.split('/')[-1]}"
        first = message.splitlines()[0] if message else ""
        lines.append(f"PASSED {node}" if status == "passed" else f"FAILED {node} - {first}")
    n_failed = len(failed)
    summary = ", ".join(
        p
        for p in (
            f"{n_failed} failed" if n_failed else "",
            f"{len(tests) - n_failed} passed" if len(tests) > n_failed else "",
        )
        if p
    )
    lines.append(f"========================= {summary} in 0.05s =========================")
    return "\n".join(lines) + "\n"


def ctrf(tests: list[tuple[str, str, str]], file: str = "test_outputs.py") -> dict:
    """pytest-json-ctrf's report: the generic `message`, the real assertion text in `trace` (longreprtext)."""
    out = []
    for name, status, message in tests:
        entry: dict = {"name": f"{file}::{name.split('/')[-1]}", "status": status, "duration": 12.5, "file_path": file}
        if status == "failed":
            entry["raw_status"] = "call_failed"
            entry["message"] = "The test failed in the call phase due to an assertion error"
            entry["trace"] = "def test():\n>       check()\n" + "\n".join(f"E       {m}" for m in message.splitlines())
        out.append(entry)
    n_passed = sum(1 for _, s, _ in tests if s == "passed")
    return {
        "results": {
            "tool": {"name": "pytest"},
            "summary": {
                "tests": len(tests),
                "passed": n_passed,
                "failed": len(tests) - n_passed,
                "pending": 0,
                "skipped": 0,
                "other": 0,
                "start": 1757845351,
                "stop": 1757845352,
            },
            "tests": out,
        }
    }


# ------------------------------------------------------------------------------------------------------ Harbor
def atif(plan: TrialPlan, commands: list[tuple[str, str]]) -> dict:
    steps: list[dict] = [{"step_id": 1, "source": "user", "message": plan.instruction}]
    for i, (command, output) in enumerate(commands, start=2):
        call_id = f"call_{i}"
        steps.append(
            {
                "step_id": i,
                "source": "agent",
                "model_name": plan.agent.model_id,
                "message": f"Running `{command.split()[0]}`.",
                "tool_calls": [{"tool_call_id": call_id, "function_name": "bash", "arguments": {"command": command}}],
                "observation": {"results": [{"source_call_id": call_id, "content": output}]},
            }
        )
    return {
        "schema_version": "ATIF-v1.5",
        "session_id": plan.harbor_trial_name(),
        "agent": {"name": plan.agent.name, "version": plan.agent.version, "model_name": plan.agent.model_id},
        "steps": steps,
    }


def _write_verifier(
    vdir: Path, task: str, tests: list[tuple[str, str, str]], reward: float | None, unparsable: bool
) -> None:
    vdir.mkdir(parents=True, exist_ok=True)
    stdout = "collecting ... \nINTERNALERROR> Traceback\n" if unparsable else pytest_output(tests)
    (vdir / "test-stdout.txt").write_text(stdout)
    if task in CTRF_TASKS and tests:
        _dump(vdir / "ctrf.json", ctrf(tests))
    if reward is None:
        return
    if task in REWARD_JSON_TASKS:
        _dump(vdir / "reward.json", {"reward": reward})
    else:
        (vdir / "reward.txt").write_text(f"{reward:g}\n")


def _write_agent(adir: Path, plan: TrialPlan, commands: list[tuple[str, str]]) -> None:
    adir.mkdir(parents=True, exist_ok=True)
    if plan.never_ran and plan.exception:
        (adir / f"{plan.agent.name}.txt").write_text(plan.exception[1].split(": ", 1)[-1] + "\n")
        return
    if plan.empty_trajectory:
        _dump(adir / "trajectory.json", atif(plan, []))
        return
    if commands:
        _dump(adir / "trajectory.json", atif(plan, commands))


def _exception_info(plan: TrialPlan, at: datetime) -> dict | None:
    if plan.exception is None:
        return None
    kind, message = plan.exception
    return {
        "exception_type": kind,
        "exception_message": message,
        "exception_traceback": f"Traceback (most recent call last):\n  ...\n{kind}: {message}\n",
        "occurred_at": _iso(at),
    }


def _step_results(trial_dir: Path, plan: TrialPlan, start: datetime) -> list[dict]:
    results = []
    for i, step in enumerate(plan.steps or []):
        sdir = trial_dir / "steps" / step.name
        _write_agent(sdir / "agent", plan, step.commands)
        _write_verifier(sdir / "verifier", plan.task, step.tests, step.reward, False)
        t = start + timedelta(minutes=2 * i)
        results.append(
            {
                "step_name": step.name,
                "agent_result": {"n_input_tokens": 4000, "n_output_tokens": 300},
                "verifier_result": {"rewards": {"reward": step.reward}},
                "exception_info": None,
                "agent_execution": {"started_at": _iso(t), "finished_at": _iso(t + timedelta(seconds=50))},
                "verifier": {
                    "started_at": _iso(t + timedelta(seconds=50)),
                    "finished_at": _iso(t + timedelta(seconds=60)),
                },
            }
        )
    return results


def write_harbor_trial(job_dir: Path, job_id: str, plan: TrialPlan, index: int) -> Path:
    name = plan.harbor_trial_name()
    trial_dir = job_dir / name
    start = T0 + timedelta(minutes=index)
    end = start + timedelta(minutes=6)
    step_results = None
    if plan.steps is not None:
        step_results = _step_results(trial_dir, plan, start)
    else:
        _write_agent(trial_dir / "agent", plan, plan.commands)
        _write_verifier(trial_dir / "verifier", plan.task, plan.tests, plan.reward, plan.unparsable_tests)
    (trial_dir / "artifacts").mkdir(parents=True, exist_ok=True)
    config = {
        "schema_version": 1,
        "task": {"path": f"datasets/fixture/{plan.task}", "source": "fixture"},
        "trial_name": name,
        "trials_dir": str(job_dir),
        "timeout_multiplier": 1.0,
        "agent": {"name": plan.agent.name, "model_name": plan.agent.model_id},
        "job_id": job_id,
    }
    _dump(trial_dir / "config.json", config)
    result: dict[str, Any] = {
        "schema_version": 1,
        "id": hashlib.md5(f"{job_id}{name}".encode(), usedforsecurity=False).hexdigest(),
        "task_name": plan.task,
        "trial_name": name,
        "trial_uri": (trial_dir.resolve()).as_uri(),
        "task_id": {"path": f"datasets/fixture/{plan.task}"},
        "source": "fixture",
        "task_checksum": hashlib.sha256(f"fixture-task:{plan.task}".encode()).hexdigest(),
        "config": config,
        "agent_info": {
            "name": plan.agent.name,
            "version": plan.agent.version,
            "model_info": {"name": plan.agent.model, "provider": plan.agent.provider},
        },
        "agent_result": None
        if plan.steps is not None or plan.never_ran
        else {"n_input_tokens": 12000, "n_cache_tokens": 8000, "n_output_tokens": 900, "cost_usd": 0.05},
        "verifier_result": None if plan.reward is None else {"rewards": {"reward": plan.reward}},
        "exception_info": _exception_info(plan, end),
        "started_at": _iso(start),
        "finished_at": _iso(end),
        "environment_setup": {"started_at": _iso(start), "finished_at": _iso(start + timedelta(seconds=20))},
        "agent_setup": {
            "started_at": _iso(start + timedelta(seconds=20)),
            "finished_at": _iso(start + timedelta(seconds=40)),
        },
        "agent_execution": {
            "started_at": _iso(start + timedelta(seconds=40)),
            "finished_at": _iso(end - timedelta(seconds=30)),
        },
        "verifier": {"started_at": _iso(end - timedelta(seconds=30)), "finished_at": _iso(end)},
        "step_results": step_results,
    }
    _dump(trial_dir / "result.json", result)
    (trial_dir / "trial.log").write_text(f"trial {name} finished\n")
    if plan.exception:
        (trial_dir / "exception.txt").write_text(result["exception_info"]["exception_traceback"])
    return trial_dir


def write_harbor_job(jobs_dir: Path, job_name: str, plans: list[TrialPlan]) -> Path:
    """A job folder: config.json, result.json (JobResult without trial_results, as Job writes it) and one
    folder per trial."""
    job_dir = jobs_dir / job_name
    job_dir.mkdir(parents=True, exist_ok=True)
    job_id = hashlib.md5(job_name.encode(), usedforsecurity=False).hexdigest()
    for index, plan in enumerate(plans):
        write_harbor_trial(job_dir, job_id, plan, index)
    agents = sorted({(p.agent.name, p.agent.model_id) for p in plans})
    _dump(
        job_dir / "config.json",
        {
            "job_name": job_name,
            "jobs_dir": str(jobs_dir),
            "n_attempts": max(p.n_attempts for p in plans),
            "agents": [{"name": a, "model_name": m} for a, m in agents],
            "datasets": [{"path": "datasets/fixture"}],
        },
    )
    n_errors = sum(1 for p in plans if p.exception)
    _dump(
        job_dir / "result.json",
        {
            "schema_version": 1,
            "id": job_id,
            "started_at": _iso(T0),
            "updated_at": _iso(T0 + timedelta(hours=2)),
            "finished_at": _iso(T0 + timedelta(hours=2)),
            "n_total_trials": len(plans),
            "stats": {
                "n_completed_trials": len(plans),
                "n_errored_trials": n_errors,
                "n_running_trials": 0,
                "n_pending_trials": 0,
                "n_cancelled_trials": 0,
                "n_retries": 0,
                "evals": {},
            },
        },
    )
    return job_dir
