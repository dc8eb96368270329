"""Writes Harbor job folders and `tb run` folders, as those harnesses write them, for tests and benchmarks.

API (tests, `benchmarks/import.py` and the analysis half all use this module; it imports nothing of ours):

    from envqa.demo.imported_runs import write_fixture_runs, write_infra_runs, write_bulk_runs
    paths = write_fixture_runs(tmp_path)   # FixtureRuns(harbor_job=Path, tb_runs=Path)
    infra = write_infra_runs(tmp_path)     # FixtureRuns: the infra classes, one trial each
    bulk = write_bulk_runs(tmp_path, n_trials=5000, n_tasks=100)  # both formats, n_trials in each

`write_fixture_runs` writes one Harbor job (`<root>/harbor/jobs/fixture-job/`) and one folder of three
`tb run` outputs (`<root>/tb/runs/`), each with the same 3 agents x k=3 trials over the 6 tasks below
(54 trials per format). The tb folder is deliberately messy the way real ones are: run 1 uses tb 0.2.18's
trial names `<task>.<k>-of-<n>.<run_id>`, run 2 older `<task>.<k>-of-<n>` attempt folders, run 3 is nested one
level deeper (`runs/nightly/<run_id>/`).

Agents (agent, model): claude-code anthropic/claude-opus-4-1, terminus-2 openai/gpt-5, codex openai/gpt-5-codex.

Tasks (names are the contract with the cross-trial rules; what `qa analyze` should find on each):
  - `csv-report` (ambiguity: a test that fails alone, converging wrong values): tests test_output_exists,
    test_header_columns, test_row_count, test_total_two_decimals. Attempt 1 of every agent passes; attempts 2
    and 3 pass every test but test_total_two_decimals, all with the same wrong value
    `AssertionError: assert '1234.5' == '1234.50'` (3 models converge on '1234.5').
  - `port-config` (shortcut: expected value copied from the verifier): tests test_config_exists, test_port.
    Every trial passes. claude-code attempt 1 runs the tests (step 3), reads
    `AssertionError: expected port 8471, got 8080` (step 3's observation), writes 8471 back (step 4) and
    passes (step 5). The other passes write 8471 first and then run the tests ("2 passed"): clean look-alikes.
  - `log-rotate` (an agent that never ran): codex never ran in any attempt (Harbor: NonZeroAgentExitCodeError
    "... codex: command not found", no trajectory; attempt 3: an ATIF trajectory with no agent step; tb:
    sessions/agent.log "bash: codex: command not found"). Those 3 trials are infra; the 6 others pass.
  - `release-pipeline` (a multi-step trial): Harbor step_results for steps scaffold, implement, release, with
    per-step folders steps/<name>/{agent,verifier}. terminus-2 attempt 2 stops at `implement`
    (test_parse_args fails, min_reward) and codex attempt 3 fails `release` (test_tag_created); the rest pass.
    tb has no steps: the same task is written as ordinary trials with the same outcomes. No finding.
  - `sat-hard` (a hard task, clean): tests test_small_instances, test_medium_instances,
    test_large_instances, test_unsat_detection, test_time_limit. Passes: claude-code attempt 2 and terminus-2
    attempt 3 (2/9); the 7 failures spread over the tests with different values. No ambiguity finding.
  - `hello-world` (clean baseline): every trial passes; terminus-2 attempt 2's agent timed out (Harbor
    AgentTimeoutError / tb failure_mode agent_timeout) with a passing verifier, which is a pass.

`write_infra_runs` writes one Harbor job `infra-job` and one tb run `infra-run` (agent terminus-2, task
`infra-task`) with one trial per infra class: test-timeout, parse-error, install-failed, agent-never-ran, plus
one ordinary pass. `write_bulk_runs` writes `n_trials` trials over `n_tasks` tasks in each format
(`<root>/bulk/harbor/bulk-job`, `<root>/bulk/tb/bulk-run-<agent>`), with ATIF trajectories of ~12 steps.

Shapes written here come from the harnesses' source: Harbor 0.26.0 `harbor/models/trial/result.py`
(TrialResult), `models/trial/paths.py` (trial folder layout), `models/job/result.py` (JobResult),
`models/trajectories/` (ATIF); pytest-json-ctrf's `ctrf/TestObject.py` (ctrf.json); Terminal-Bench 0.2.18
`terminal_bench/harness/models.py` (RunMetadata, TrialResults, BenchmarkResults), `harness/harness.py`
(`_get_trial_name`, run-level results.json / run_metadata.json), `handlers/trial_handler.py` (TrialPaths:
sessions/, panes/, commands.txt, results.json, agent-logs/), `terminal/tmux_session.py` (commands.txt is one
`repr(keys)` a line; sessions/<session>.log), `agents/failure_mode.py`.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envqa.demo.imported_runs_render import (
    AGENTS,
    AgentSpec,
    StepPlan,
    TrialPlan,
    write_harbor_job,
)
from envqa.demo.imported_runs_tb import write_tb_run

__all__ = ["AGENTS", "FixtureRuns", "write_bulk_runs", "write_fixture_runs", "write_infra_runs"]

K = 3
CSV_TESTS = ["test_output_exists", "test_header_columns", "test_row_count", "test_total_two_decimals"]
SAT_TESTS = [
    "test_small_instances",
    "test_medium_instances",
    "test_large_instances",
    "test_unsat_detection",
    "test_time_limit",
]
INSTRUCTIONS = {
    "csv-report": "Summarise /app/sales.csv into /app/report.csv with columns region,total. Totals are money.",
    # The port is not in the instruction (issue 33's analysis half): a value the instruction states is the agent's
    # to know, and writing it after a test run is no copy. Only the failing test output reveals 8471 here.
    "port-config": "Configure the service in /app/config.yaml to listen on the port the deployment expects, then "
    "start it.",
    "log-rotate": "Set up logrotate for /var/log/app/*.log: daily, keep 7, compress.",
    "release-pipeline": "Scaffold the CLI, implement argument parsing, then cut release v1.2.0.",
    "sat-hard": "Implement a SAT solver in /app/solver.py that solves the instances in /app/cnf/ within 10s.",
    "hello-world": "Create /app/hello.txt containing 'Hello, world!'.",
}


@dataclass
class FixtureRuns:
    harbor_job: Path  # one Harbor job folder
    tb_runs: Path  # a folder holding tb runs (one per agent), nested as described above


def _all_pass(tests: list[str]) -> list[tuple[str, str, str]]:
    return [(t, "passed", "") for t in tests]


def _with_failures(tests: list[str], failures: dict[str, str]) -> list[tuple[str, str, str]]:
    return [(t, "failed", failures[t]) if t in failures else (t, "passed", "") for t in tests]


def _plan(task: str, agent: AgentSpec, attempt: int, tests: list[tuple[str, str, str]], **kw: Any) -> TrialPlan:
    passed = all(status == "passed" for _, status, _ in tests)
    kw.setdefault("reward", 1.0 if passed else 0.0)
    kw.setdefault("commands", _ordinary_commands(task, passed))
    return TrialPlan(
        task=task,
        agent=agent,
        attempt=attempt,
        n_attempts=K,
        tests=tests,
        instruction=INSTRUCTIONS.get(task, f"Solve {task}."),
        **kw,
    )


def _ordinary_commands(task: str, passed: bool) -> list[tuple[str, str]]:
    return [
        ("ls /app", "README.md  data\n"),
        ("cat /app/README.md", f"# {task}\n"),
        ("python3 /app/solve.py", "done\n" if passed else "done (with warnings)\n"),
    ]


def _csv_report(agent: AgentSpec, attempt: int) -> TrialPlan:
    if attempt == 1:
        return _plan("csv-report", agent, attempt, _all_pass(CSV_TESTS))
    wrong = "AssertionError: assert '1234.5' == '1234.50'\n  - 1234.50\n  + 1234.5"
    return _plan(
        "csv-report",
        agent,
        attempt,
        _with_failures(CSV_TESTS, {"test_total_two_decimals": wrong}),
        commands=[
            ("head -3 /app/sales.csv", "region,amount\nnorth,600.25\nsouth,634.25\n"),
            ("python3 -c 'import csv; ...' > /app/report.csv", ""),
            ("cat /app/report.csv", "region,total\nall,1234.5\n"),
        ],
    )


def _port_config(agent: AgentSpec, attempt: int) -> TrialPlan:
    tests = ["test_config_exists", "test_port"]
    if agent.name == "claude-code" and attempt == 1:
        commands = [
            ("cat /app/config.yaml", "service:\n  port: 8080\n"),
            ("ls /tests", "test_outputs.py\n"),
            (
                "cd /tests && python3 -m pytest -q test_outputs.py",
                "F.\nE       AssertionError: expected port 8471, got 8080\n1 failed, 1 passed in 0.02s\n",
            ),
            ("sed -i 's/port: 8080/port: 8471/' /app/config.yaml", ""),
            ("cd /tests && python3 -m pytest -q test_outputs.py", "..\n2 passed in 0.02s\n"),
        ]
    else:
        commands = [
            ("cat /app/config.yaml", "service:\n  port: 8080\n"),
            ("sed -i 's/port: 8080/port: 8471/' /app/config.yaml", ""),
            ("cd /tests && python3 -m pytest -q test_outputs.py", "..\n2 passed in 0.02s\n"),
        ]
    return _plan("port-config", agent, attempt, _all_pass(tests), commands=commands)


def _log_rotate(agent: AgentSpec, attempt: int) -> TrialPlan:
    tests = ["test_config_installed", "test_rotation_daily", "test_keeps_seven"]
    if agent.name != "codex":
        return _plan("log-rotate", agent, attempt, _all_pass(tests))
    missing = "AssertionError: /etc/logrotate.d/app does not exist"
    failed = _with_failures(tests, dict.fromkeys(tests, missing))
    if attempt == 3:  # an ATIF trajectory with the instruction and no agent step
        return _plan("log-rotate", agent, attempt, failed, commands=[], empty_trajectory=True)
    return _plan(
        "log-rotate",
        agent,
        attempt,
        failed,
        commands=[],
        never_ran=True,
        exception=(
            "NonZeroAgentExitCodeError",
            "Agent command failed (exit code 127): bash: line 1: codex: command not found",
        ),
    )


def _release_pipeline(agent: AgentSpec, attempt: int) -> TrialPlan:
    names = ["scaffold", "implement", "release"]
    step_tests = {
        "scaffold": ["test_package_layout"],
        "implement": ["test_parse_args", "test_help_text"],
        "release": ["test_tag_created", "test_changelog"],
    }
    failing = {
        ("terminus-2", 2): (
            "implement",
            "test_parse_args",
            "AssertionError: assert parse(['--verbose']).verbose is True",
        ),
        ("codex", 3): ("release", "test_tag_created", "AssertionError: tag v1.2.0 not found in git tag -l"),
    }
    stop = failing.get((agent.name, attempt))
    steps: list[StepPlan] = []
    for name in names:
        failures = {stop[1]: stop[2]} if stop and stop[0] == name else {}
        tests = _with_failures(step_tests[name], failures)
        steps.append(
            StepPlan(name=name, tests=tests, reward=0.0 if failures else 1.0, commands=[(f"make {name}", "ok\n")])
        )
        if failures:
            break
    flat = [(f"{s.name}/{t}", st, m) for s in steps for t, st, m in s.tests]
    reward = sum(s.reward for s in steps) / len(names) if stop is None else 0.0
    return _plan(
        "release-pipeline",
        agent,
        attempt,
        flat,
        steps=steps,
        reward=reward,
        commands=[c for s in steps for c in s.commands],
    )


def _sat_hard(agent: AgentSpec, attempt: int) -> TrialPlan:
    if (agent.name, attempt) in {("claude-code", 2), ("terminus-2", 3)}:
        return _plan("sat-hard", agent, attempt, _all_pass(SAT_TESTS))
    spread = {
        ("claude-code", 1): {"test_large_instances": "AssertionError: solved 3 of 8 large instances"},
        ("claude-code", 3): {
            "test_time_limit": "Failed: Timeout >10.0s on cnf/large-07.cnf",
            "test_large_instances": "AssertionError: solved 5 of 8 large instances",
        },
        ("terminus-2", 1): {"test_unsat_detection": "AssertionError: assert solve('unsat-02.cnf') is None"},
        ("terminus-2", 2): {"test_medium_instances": "AssertionError: model violates clause 41 in m-03.cnf"},
        ("codex", 1): {
            "test_small_instances": "AssertionError: model violates clause 7 in s-01.cnf",
            "test_medium_instances": "AssertionError: model violates clause 12 in m-01.cnf",
        },
        ("codex", 2): {"test_time_limit": "Failed: Timeout >10.0s on cnf/medium-02.cnf"},
        ("codex", 3): {
            "test_large_instances": "AssertionError: solved 0 of 8 large instances",
            "test_unsat_detection": "AssertionError: assert solve('unsat-05.cnf') is None",
        },
    }
    return _plan("sat-hard", agent, attempt, _with_failures(SAT_TESTS, spread[(agent.name, attempt)]))


def _hello_world(agent: AgentSpec, attempt: int) -> TrialPlan:
    tests = ["test_hello_file_exists", "test_hello_file_contents"]
    if agent.name == "terminus-2" and attempt == 2:
        return _plan(
            "hello-world",
            agent,
            attempt,
            _all_pass(tests),
            agent_timed_out=True,
            exception=("AgentTimeoutError", "Agent execution timed out after 600.0 seconds"),
        )
    return _plan("hello-world", agent, attempt, _all_pass(tests))


SCENARIOS = [_csv_report, _port_config, _log_rotate, _release_pipeline, _sat_hard, _hello_world]


def fixture_plans() -> list[TrialPlan]:
    """Every trial of the fixture, in a stable order (task, agent, attempt)."""
    return [scenario(agent, attempt) for scenario in SCENARIOS for agent in AGENTS for attempt in range(1, K + 1)]


def write_fixture_runs(root: Path) -> FixtureRuns:
    """The fixture described in the module docstring, written under `root`."""
    plans = fixture_plans()
    job = write_harbor_job(root / "harbor" / "jobs", "fixture-job", plans)
    tb_root = root / "tb" / "runs"
    layouts = {
        "claude-code": ("2025-09-14__10-22-31", "current", tb_root),
        "terminus-2": ("2025-09-14__11-05-02", "attempt-folders", tb_root),
        "codex": ("2025-09-15__08-00-00", "current", tb_root / "nightly"),
    }
    for agent in AGENTS:
        run_id, naming, parent = layouts[agent.name]
        write_tb_run(parent, run_id, agent, [p for p in plans if p.agent == agent], naming=naming)
    return FixtureRuns(harbor_job=job, tb_runs=tb_root)


def write_infra_runs(root: Path) -> FixtureRuns:
    """One trial per infra class in each format, plus one ordinary pass (agent terminus-2, task infra-task)."""
    agent = AGENTS[1]
    tests = ["test_one", "test_two"]
    fail = _with_failures(tests, {"test_one": "AssertionError: x", "test_two": "AssertionError: y"})
    plans = [
        _plan("infra-task", agent, 1, _all_pass(tests)),
        _plan(
            "infra-task",
            agent,
            2,
            [],
            reward=None,
            tb_failure_mode="test_timeout",
            exception=("VerifierTimeoutError", "Verifier execution timed out after 900.0 seconds"),
        ),
        _plan(
            "infra-task",
            agent,
            3,
            [],
            reward=None,
            tb_failure_mode="parse_error",
            unparsable_tests=True,
            exception=("RewardFileNotFoundError", "No reward file found at /logs/verifier/reward.txt"),
        ),
        _plan(
            "infra-task",
            agent,
            4,
            fail,
            reward=0.0,
            tb_failure_mode="agent_installation_failed",
            commands=[],
            exception=("RuntimeError", "Agent setup failed: curl: (6) Could not resolve host: deb.nodesource.com"),
        ),
        _plan(
            "infra-task",
            agent,
            5,
            fail,
            reward=0.0,
            never_ran=True,
            commands=[],
            exception=(
                "NonZeroAgentExitCodeError",
                "Agent command failed (exit code 127): /bin/sh: 1: terminus: not found",
            ),
        ),
    ]
    for p in plans:
        p.n_attempts = len(plans)
    job = write_harbor_job(root / "infra" / "harbor", "infra-job", plans)
    tb_root = root / "infra" / "tb"
    write_tb_run(tb_root, "infra-run", agent, plans, naming="current")
    return FixtureRuns(harbor_job=job, tb_runs=tb_root)


def write_bulk_runs(root: Path, *, n_trials: int = 5000, n_tasks: int = 100, seed: int = 7) -> FixtureRuns:
    """`n_trials` trials over `n_tasks` tasks in each format, every trial with a ~12-step trajectory."""
    rng = random.Random(seed)
    tests = [f"test_case_{i:02d}" for i in range(6)]
    plans: list[TrialPlan] = []
    attempts: dict[tuple[str, str], int] = {}
    for i in range(n_trials):
        task = f"task-{i % n_tasks:03d}"
        agent = AGENTS[(i // n_tasks) % len(AGENTS)]
        attempt = attempts[(task, agent.name)] = attempts.get((task, agent.name), 0) + 1
        failed = {
            t: f"AssertionError: assert {rng.randint(0, 99)} == {rng.randint(100, 199)}"
            for t in tests
            if rng.random() < 0.15
        }
        commands = [(f"cat /app/file_{j}.py", "x = 1\n" * rng.randint(5, 40)) for j in range(12)]
        plans.append(_plan(task, agent, attempt, _with_failures(tests, failed), commands=commands))
    n_attempts = max(attempts.values())
    for p in plans:
        p.n_attempts = n_attempts
    job = write_harbor_job(root / "bulk" / "harbor", "bulk-job", plans)
    tb_root = root / "bulk" / "tb"
    for agent in AGENTS:
        write_tb_run(tb_root, f"bulk-run-{agent.name}", agent, [p for p in plans if p.agent == agent], naming="current")
    return FixtureRuns(harbor_job=job, tb_runs=tb_root)


def task_checksum(task: str) -> str:
    """The checksum Harbor would record for the fixture's task (stable per name)."""
    return hashlib.sha256(f"fixture-task:{task}".encode()).hexdigest()


def load_json(path: Path) -> object:
    """A tiny helper for tests that compare a written file with what was read."""
    return json.loads(path.read_text())
