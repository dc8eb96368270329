"""Renders planned trials into the folders `tb run` (terminal-bench 0.2.18) writes; see imported_runs.py for
the sources (harness/harness.py, harness/models.py, handlers/trial_handler.py, terminal/tmux_session.py)."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from pathlib import Path

from envqa.demo.imported_runs_render import T0, AgentSpec, TrialPlan, _dump, _iso, pytest_output


def _tb_failure_mode(plan: TrialPlan) -> str:
    if plan.tb_failure_mode:
        return plan.tb_failure_mode
    return "agent_timeout" if plan.agent_timed_out else "none"


def _tb_agent_command(plan: TrialPlan) -> str:
    return f"{plan.agent.name} --model {plan.agent.model} {json.dumps(plan.instruction)}; tmux wait -S done"


def _agent_log(plan: TrialPlan) -> tuple[list[str], str]:
    """(commands.txt lines, sessions/agent.log): the tmux log echoes each command after the prompt."""
    prompt = "root@4f2a9c1e:/app# "
    if plan.never_ran or plan.tb_failure_mode == "agent_installation_failed":
        command = _tb_agent_command(plan)
        said = f"bash: {plan.agent.name}: command not found" if plan.never_ran else "E: Unable to locate package nodejs"
        return [repr(command + "\n")], f"\x1b[?2004h{prompt}{command}\r\n{said}\r\n{prompt}"
    keys, log = [], ""
    for command, output in plan.commands:
        keys.append(repr(command + "\n"))
        log += f"\x1b[?2004h{prompt}{command}\r\n\x1b[?2004l\r" + output.replace("\n", "\r\n")
    return keys, log + prompt


def write_tb_trial(run_dir: Path, run_id: str, plan: TrialPlan, naming: str, index: int) -> dict:
    base = f"{plan.task}.{plan.attempt}-of-{plan.n_attempts}"
    trial_name = f"{base}.{run_id}" if naming == "current" else base
    tdir = run_dir / plan.task / trial_name
    (tdir / "sessions").mkdir(parents=True, exist_ok=True)
    (tdir / "panes").mkdir(parents=True, exist_ok=True)
    (tdir / "agent-logs").mkdir(parents=True, exist_ok=True)
    keys, agent_log = _agent_log(plan)
    (tdir / "commands.txt").write_text("".join(k + "\n" for k in keys))
    (tdir / "sessions" / "agent.log").write_text(agent_log)
    failure_mode = _tb_failure_mode(plan)
    tests_ran = failure_mode not in {"test_timeout"}
    output = "INTERNALERROR> Traceback\n" if plan.unparsable_tests else pytest_output(plan.tests)
    if tests_ran:
        (tdir / "sessions" / "tests.log").write_text("root@4f2a9c1e:/app# bash /tests/run-tests.sh\r\n" + output)
        (tdir / "panes" / "post-test.txt").write_text(output)
    parsed = tests_ran and not plan.unparsable_tests
    parser_results = {n.split("/")[-1]: s for n, s, _ in plan.tests} if parsed else None
    start = T0 + timedelta(minutes=index)
    result = {
        "id": hashlib.md5(f"{run_id}{trial_name}".encode(), usedforsecurity=False).hexdigest(),
        "trial_name": trial_name,
        "task_id": plan.task,
        "instruction": plan.instruction,
        "is_resolved": (all(s == "passed" for s in parser_results.values()) if parser_results else None)
        if parsed
        else None,
        "failure_mode": failure_mode,
        "parser_results": parser_results,
        "recording_path": f"{run_id}/{plan.task}/{trial_name}/sessions/agent.cast",
        "total_input_tokens": 15000,
        "total_output_tokens": 1200,
        "trial_started_at": _iso(start),
        "trial_ended_at": _iso(start + timedelta(minutes=5)),
        "agent_started_at": _iso(start + timedelta(seconds=10)),
        "agent_ended_at": _iso(start + timedelta(minutes=4)),
        "test_started_at": _iso(start + timedelta(minutes=4)),
        "test_ended_at": _iso(start + timedelta(minutes=5)),
    }
    _dump(tdir / "results.json", result)
    return result


def write_tb_run(parent: Path, run_id: str, agent: AgentSpec, plans: list[TrialPlan], *, naming: str) -> Path:
    """A `tb run` output folder: run_metadata.json, results.json (BenchmarkResults), run.log and
    <task_id>/<trial_name>/ per trial. naming "current": tb 0.2.18's `<task>.<k>-of-<n>.<run_id>`;
    "attempt-folders": the older `<task>.<k>-of-<n>`."""
    run_dir = parent / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    results = [write_tb_trial(run_dir, run_id, p, naming, i) for i, p in enumerate(plans)]
    n_resolved = sum(1 for r in results if r["is_resolved"])
    tasks = sorted({p.task for p in plans})
    _dump(
        run_dir / "run_metadata.json",
        {
            "run_id": run_id,
            "uuid": hashlib.md5(run_id.encode(), usedforsecurity=False).hexdigest(),
            "dataset_path": None,
            "dataset_name": "terminal-bench-core",
            "dataset_version": "0.1.1",
            "output_path": str(parent),
            "agent_name": agent.name,
            "no_rebuild": False,
            "cleanup": True,
            "log_level": 20,
            "task_ids": tasks,
            "exclude_task_ids": None,
            "n_tasks": None,
            "n_concurrent_trials": 4,
            "n_attempts": max(p.n_attempts for p in plans),
            "dataset_size": len(tasks),
            "accuracy": n_resolved / len(results) if results else None,
            "model_name": agent.model_id,
            "start_time": _iso(T0),
            "end_time": _iso(T0 + timedelta(hours=1)),
            "commit_hash": "unknown",
            "username": "fixture",
            "s3_bucket": None,
            "agent_kwargs": None,
            "pass_at_k": None,
            "resumed_at": None,
        },
    )
    _dump(
        run_dir / "results.json",
        {
            "id": hashlib.md5(f"r{run_id}".encode(), usedforsecurity=False).hexdigest(),
            "results": results,
            "pass_at_k": {},
            "n_resolved": n_resolved,
            "n_unresolved": len(results) - n_resolved,
            "accuracy": n_resolved / len(results) if results else 0.0,
        },
    )
    (run_dir / "run.log").write_text(f"run {run_id} finished\n")
    return run_dir
