"""Drive one revision end to end without the loop graph: run -> snapshot -> revise -> gate -> export -> run."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from envqa.app.executors import open_executor
from envqa.app.runner import execute_run, make_backend
from envqa.core.config import QAConfig
from envqa.graphs.revise import gate_node, revise_node
from envqa.graphs.run_graph import RunDeps
from envqa.store.db import Store
from envqa.store.versions import VersionStore

# One oracle run where the behaviour allows it; the loop stops at decide (these tests call revise and gate
# themselves, so the run does not revise first); trials one at a time in-process.
FAST = {
    "validate.oracle_runs": 1,
    "probes.oracle_runs": 1,
    "probes.verifier_reruns": 0,
    "reviser.gate_oracle_runs": 1,
    "scheduler.mode": "local",
    "loop.max_iterations": 0,
}


def fast_config(home: Path, **extra) -> QAConfig:
    from envqa.core.config import load_config

    return load_config(None, {"home": str(home), **FAST, **extra})


@contextmanager
def run_deps(config: QAConfig):
    backend = make_backend(config)
    store = Store(config.db_path)
    with open_executor(config, backend, store) as executor:
        yield RunDeps(
            config=config, store=store, versions=VersionStore(config, store), backend=backend, executor=executor
        )


def loop_state(config: QAConfig, env_dir: Path, run_id: str) -> dict:
    """`qa run` on a directory, then the state the revise node reads (its version snapshotted)."""
    report = execute_run(env_dir, config, run_id, quiet=True)
    store = Store(config.db_path)
    version = VersionStore(config, store).snapshot(env_dir, run_id=run_id).version
    assert version == report["environment"]["version"]
    return {
        "run_id": run_id,
        "version": version,
        "findings": report["findings"],
        "report": report,
        "trials": [t.model_dump(mode="json") for t in store.trials_for_run(run_id)],
        "sweep": report.get("sweep"),
    }


def revise_and_gate(deps, state: dict) -> tuple[dict, dict | None]:
    out = revise_node(deps, state)
    if out["proposal_id"] is None:
        return out, None
    return out, gate_node(deps, {**state, **out})
