"""One defaults module (issue 32 item 4): every tuning constant lives, documented, in core/defaults.py; the
configuration's defaults and the modules read it, and no copy of a value is written anywhere else."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from envqa.core import defaults
from envqa.core.config import QAConfig, builtin_queue_defaults

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

REPO = Path(__file__).resolve().parents[2]
LAYERS = ("core", "sandbox", "store", "scheduler", "app", "graphs", "probes", "agents", "providers")
# Files that run inside a container or as a separate script: they cannot import envqa.
IN_CONTAINER = ("agents/exploit_scripts/", "probes/scripts/", "sandbox/egress_proxy.py")
# Module-level numbers named like a tuning constant that are facts or rule thresholds, not tuning.
NOT_TUNING = {
    "app/ci_output.py": {"COMMENT_LIMIT"},  # GitHub's limit on a comment body
    "app/slack/blocks.py": {"SECTION_LIMIT"},  # Slack's 3,000-character section text, with room to spare
    "probes/oracle_state.py": {"MIN_LEAK_BYTES"},  # a detection rule's threshold
    "probes/verifier_shape.py": {"MAX_LITERALS"},  # a detection rule's threshold
}
TUNING_NAME = re.compile(
    r"^_?([A-Z0-9_]*_(SEC|TIMEOUT|BYTES|CHARS|LIMIT|LINES|TTL|INTERVAL|BUDGET|RETRIES|LEASES)|MAX_[A-Z0-9_]*|[A-Z0-9_]*_MAX)$"
)

# (section, field) of QAConfig -> the constant its default is
CONFIG_DEFAULTS = {
    (None, "oracle_runs"): "ORACLE_RUNS",
    ("validate_", "nop_runs"): "NOP_RUNS",
    ("sandbox", "pids_limit"): "SANDBOX_PIDS_LIMIT",
    ("sandbox", "output_limit_bytes"): "SANDBOX_OUTPUT_LIMIT_BYTES",
    ("sandbox", "exec_timeout_sec"): "SANDBOX_EXEC_TIMEOUT_SEC",
    ("scheduler", "workers"): "SCHEDULER_WORKERS",
    ("scheduler", "lease_ttl_sec"): "LEASE_TTL_SEC",
    ("scheduler", "poll_interval_sec"): "WORKER_POLL_INTERVAL_SEC",
    ("scheduler", "job_timeout_sec"): "JOB_TIMEOUT_SEC",
    ("scheduler", "max_restarts"): "MAX_RESTARTS",
    ("scheduler", "restart_window_sec"): "RESTART_WINDOW_SEC",
    ("scheduler", "restart_backoff_sec"): "RESTART_BACKOFF_SEC",
    ("scheduler", "stall_timeout_sec"): "STALL_TIMEOUT_SEC",
    ("scheduler", "follow_deadline_sec"): "FOLLOW_DEADLINE_SEC",
    ("scheduler", "call_deadline_sec"): "CALL_DEADLINE_SEC",
    ("sweep", "trials"): "SWEEP_TRIALS",
    ("sweep", "n_min"): "SWEEP_N_MIN",
    ("sweep", "n_max"): "SWEEP_N_MAX",
    ("sweep", "batch"): "SWEEP_BATCH",
    ("sweep", "band_low"): "SWEEP_BAND_LOW",
    ("sweep", "band_high"): "SWEEP_BAND_HIGH",
    ("sweep", "stop_trial_cost"): "SWEEP_STOP_TRIAL_COST",
    ("sweep", "stop_prior"): "SWEEP_STOP_PRIOR",
    ("sweep", "report_confidence"): "SWEEP_REPORT_CONFIDENCE",
    ("solver", "max_steps"): "SOLVER_MAX_STEPS",
    ("solver", "max_tokens_per_trial"): "SOLVER_MAX_TOKENS_PER_TRIAL",
    ("solver", "max_output_tokens"): "SOLVER_MAX_OUTPUT_TOKENS",
    ("solver", "command_timeout_sec"): "SOLVER_COMMAND_TIMEOUT_SEC",
    ("solver", "observation_chars"): "SOLVER_OBSERVATION_CHARS",
    ("solver", "structured_retries"): "STRUCTURED_RETRIES",
    ("probes", "solver_replays"): "PROBE_SOLVER_REPLAYS",
    ("probes", "verifier_reruns"): "PROBE_VERIFIER_RERUNS",
    ("probes", "max_mutated_files"): "PROBE_MAX_MUTATED_FILES",
    ("probes", "max_variants"): "PROBE_MAX_VARIANTS",
    ("reviser", "max_repairs"): "REVISER_MAX_REPAIRS",
    ("reviser", "max_output_tokens"): "REVISER_MAX_OUTPUT_TOKENS",
    ("generator", "max_repairs"): "GENERATOR_MAX_REPAIRS",
    ("generator", "max_output_tokens"): "GENERATOR_MAX_OUTPUT_TOKENS",
    ("slack", "send_budget_sec"): "SLACK_SEND_BUDGET_SEC",
    ("slack", "flush_timeout_sec"): "SLACK_FLUSH_TIMEOUT_SEC",
    ("analyst", "min_agreeing"): "ANALYST_MIN_AGREEING",
    ("analyst", "trajectory_tokens"): "ANALYST_TRAJECTORY_TOKENS",
    ("analyst", "max_output_tokens"): "ANALYST_MAX_OUTPUT_TOKENS",
    ("analyst", "wait_sec"): "ANALYST_WAIT_SEC",
    ("hunter", "trials"): "HUNTER_TRIALS",
    ("loop", "max_iterations"): "LOOP_MAX_ITERATIONS",
    ("online", "connect_timeout_sec"): "ONLINE_CONNECT_TIMEOUT_SEC",
    ("online", "read_timeout_sec"): "ONLINE_READ_TIMEOUT_SEC",
    ("online", "task_budget_sec"): "ONLINE_TASK_BUDGET_SEC",
    ("online", "cache_ttl_sec"): "ONLINE_CACHE_TTL_SEC",
}
QUEUE_DEFAULTS = {
    "concurrency": "QUEUE_CONCURRENCY",
    "max_attempts": "QUEUE_MAX_ATTEMPTS",
    "backoff_base_sec": "QUEUE_BACKOFF_BASE_SEC",
    "backoff_max_sec": "QUEUE_BACKOFF_MAX_SEC",
    "jitter": "QUEUE_JITTER",
    "park_default_sec": "QUEUE_PARK_DEFAULT_SEC",
    "max_parks": "QUEUE_MAX_PARKS",
}
# values pinned: changing one is a behaviour change and must be deliberate (this test changes with it)
PINNED = {
    "RECONCILE_SEC": 5.0,
    "LEASE_TTL_SEC": 30.0,
    "JOB_TIMEOUT_SEC": 7200,
    "STALL_TIMEOUT_SEC": 600.0,
    "CALL_DEADLINE_SEC": 3600.0,
    "SANDBOX_EXEC_TIMEOUT_SEC": 600.0,
    "WORKER_TTL_SEC": 25,
    "HUNT_MIN_ORACLE_RUNS": 5,
    "ORACLE_RUNS": 3,
    "MAX_FILE_BYTES": 2 * 1024 * 1024,
    "PROBE_QUICK_EXEC_SEC": 30,
    "PROBE_EXEC_SEC": 60,
    "PROBE_SCAN_EXEC_SEC": 120,
    "IMAGE_SCAN_EXEC_SEC": 180,
}


def test_every_config_default_is_its_constant():
    cfg = QAConfig()
    for (section, field), name in CONFIG_DEFAULTS.items():
        value = getattr(getattr(cfg, section) if section else cfg, field)
        want = getattr(defaults, name)
        assert value == want and type(value) is type(want), f"{section}.{field} = {value!r}, defaults.{name} = {want!r}"
    queue = builtin_queue_defaults()
    for field, name in QUEUE_DEFAULTS.items():
        assert getattr(queue, field) == getattr(defaults, name), field
    assert cfg.scheduler.sandbox.concurrency == defaults.SANDBOX_QUEUE_CONCURRENCY
    assert cfg.providers["openai"].timeout_sec == defaults.PROVIDER_TIMEOUT_SEC
    assert cfg.providers["anthropic"].transient_retries == defaults.PROVIDER_TRANSIENT_RETRIES


def test_pinned_values_did_not_change():
    assert {name: getattr(defaults, name) for name in PINNED} == PINNED


def test_every_constant_is_documented():
    tree = ast.parse((REPO / "core" / "defaults.py").read_text())
    body = tree.body
    names = []
    for i, node in enumerate(body):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id.isupper():
            name = node.targets[0].id
            names.append(name)
            doc = body[i + 1] if i + 1 < len(body) else None
            assert isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant), f"{name} has no docstring"
            assert len(str(doc.value.value).strip()) > 10, f"{name}'s docstring says nothing"
    assert len(names) == len(set(names)), "a constant is defined twice"
    assert len(names) > 100


def test_the_reconcile_interval_is_written_once():
    """It was 5.0 in scheduler/calls.py and again in scheduler/rq_executor.py: every parameter of the scheduler
    that sets how often a follower reconciles now defaults to the one constant."""
    import importlib
    import pkgutil

    import envqa.scheduler

    found = []
    for info in pkgutil.iter_modules(envqa.scheduler.__path__):
        module = importlib.import_module(f"envqa.scheduler.{info.name}")
        functions = [f for _, f in inspect.getmembers(module, inspect.isfunction) if f.__module__ == module.__name__]
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__:
                functions += [f for _, f in inspect.getmembers(cls, inspect.isfunction)]
        for f in functions:
            for p in inspect.signature(f).parameters.values():
                if p.name.startswith("reconcile") and p.default is not inspect.Parameter.empty:
                    found.append((f"{module.__name__}.{f.__qualname__}", p.name, p.default))
    assert found, "no reconcile interval parameter found in envqa.scheduler"
    assert all(default == defaults.RECONCILE_SEC for *_, default in found), found


def test_no_tuning_constant_is_defined_outside_the_defaults_module():
    stray = []
    for layer in LAYERS:
        for path in sorted((REPO / layer).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel == "core/defaults.py" or rel.startswith(IN_CONTAINER) or "__pycache__" in rel:
                continue
            for node in ast.parse(path.read_text()).body:
                target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
                if isinstance(node, ast.AnnAssign):
                    target, value = node.target, node.value
                else:
                    value = node.value if isinstance(node, ast.Assign) else None
                if not isinstance(target, ast.Name) or not TUNING_NAME.match(target.id):
                    continue
                if _is_number(value) and target.id not in NOT_TUNING.get(rel, set()):
                    stray.append(f"{rel}:{node.lineno} {target.id}")
    assert not stray, "tuning constants belong in core/defaults.py: " + ", ".join(stray)


def _is_number(node: ast.expr | None) -> bool:
    """A literal number, or arithmetic on literal numbers (`2 * 1024 * 1024`)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.BinOp):
        return _is_number(node.left) and _is_number(node.right)
    if isinstance(node, ast.UnaryOp):
        return _is_number(node.operand)
    return False
