"""The analyst's calls are jobs on its model's own queue: a 429 parks that queue only.

Real redis-server, real `qa worker` processes, the real anthropic SDK against the fake provider server.
Analyst jobs for two models run at once; the first model's first call gets a 429 with Retry-After 3 s:
its queue is parked (seen in Redis), its job comes back after the wait without spending an attempt, and
the other model's jobs keep being served during the park. A `qa run` then shows an `infra` trial label
and the analyst's 429 retried through the CLI.
"""

from __future__ import annotations

import json
import threading
import time

from envqa.agents.trajectory import AgentInfo, AtifToolCall, Observation, ObservationResult, Redactor, TrajectoryWriter
from envqa.core.config import QAConfig
from envqa.core.environment import load_environment
from envqa.core.executor import LABEL_CALL, Call
from envqa.core.models import Outcome, TrialResult
from envqa.probes.analyst.model import AnalystJob, analyst_call_id
from envqa.scheduler.embedded import WorkerPool
from envqa.scheduler.rq_executor import RQExecutor
from envqa.scheduler.status import queue_status
from envqa.store.db import Store
from qa_testkit import EXAMPLES, run_qa, wait_for

from . import scripts as s
from .conftest import GOOD_KEY

ENV = EXAMPLES / "clean-wordfreq"


def run_on_queues(executor, config: QAConfig, store: Store, jobs: list[AnalystJob]) -> list[str]:
    """The analyst's calls on their models' queues (as graphs/analyst_dispatch.py makes them); the trial ids
    still open at [analyst] wait_sec."""
    calls = [
        Call(
            call_id=analyst_call_id(j.trial_id, j.model), model=j.model, func=LABEL_CALL, args=j.model_dump(mode="json")
        )
        for j in jobs
    ]
    rows = executor.run_calls(calls, deadline_sec=config.analyst.wait_sec)
    return [j.trial_id for j, c in zip(jobs, calls) if rows[c.call_id]["status"] != "done"]


def _record_trial(store: Store, runs, env, i: int) -> TrialResult:
    tid = f"solver-{i}-fake{i:08d}"
    trial_dir = runs / "r1" / tid
    writer = TrajectoryWriter(
        trial_dir / "agent" / "trajectory.json", tid, AgentInfo(name="solver", version="0"), Redactor([])
    )
    writer.add("system", "you are a solver")
    writer.add("user", "write /app/wordfreq")
    writer.add(
        "agent",
        f"TRIAL-{i}: writing it",
        tool_calls=[
            AtifToolCall(tool_call_id="c1", function_name="bash", arguments={"command": "echo hi > /app/wordfreq"})
        ],
        observation=Observation(results=[ObservationResult(source_call_id="c1", content="")]),
    )
    t = TrialResult(
        trial_id=tid,
        run_id="r1",
        env_version=env.version,
        agent="solver",
        model="anthropic/solver",
        purpose="sweep",
        outcome=Outcome.FAIL,
        reward=0.0,
        artifacts_dir=str(trial_dir),
    )
    store.record_trial(t)
    return t


def test_a_429_parks_only_the_analyst_models_queue(fake_provider, tmp_path, redis_server):
    answer = s.answer("capability", "wrong-approach", [(3, "writing it")])
    slow = {**answer, "delay": 0.6}
    srv = fake_provider(
        {
            "models": {
                "analyst": {"turns": [answer], "faults": [{"status": 429, "retry_after": 3, "times": 1}]},
                "other": {"turns": [slow]},
            }
        }
    )
    config = QAConfig(home=tmp_path / "qa-home")
    config.scheduler.lease_ttl_sec = 5
    store = Store(config.db_path)
    env = load_environment(ENV)
    trials = [_record_trial(store, config.runs_dir, env, i) for i in range(5)]
    cfg = config.model_dump(mode="json", by_alias=True)
    jobs = [
        AnalystJob(run_id="r1", trial_id=trials[0].trial_id, env_dir=str(ENV), model="anthropic/analyst", config=cfg)
    ]
    jobs += [
        AnalystJob(run_id="r1", trial_id=t.trial_id, env_dir=str(ENV), model="anthropic/other", config=cfg)
        for t in trials[1:]
    ]

    server = redis_server(tmp_path / "redis")
    pool = WorkerPool(
        server.url,
        2,
        "*",
        env={"ANTHROPIC_API_KEY": GOOD_KEY, "ANTHROPIC_BASE_URL": srv.url, "QA_HOME": str(config.home)},
        settings_json=config.scheduler.model_dump_json(),
        log_dir=tmp_path / "worker-logs",
    ).start()
    executor = RQExecutor(config, store, server.url)
    snapshots: list[dict] = []
    done = threading.Event()

    def watch() -> None:  # what Redis says about each queue, while the jobs run
        while not done.is_set():
            snapshots.append({q.queue: q.parked_until for q in queue_status(executor.conn)})
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    cfg60 = config.model_copy(update={"analyst": config.analyst.model_copy(update={"wait_sec": 60})})
    first: list = []
    analyst = threading.Thread(target=lambda: first.append(run_on_queues(executor, cfg60, store, jobs[:1])))
    try:
        analyst.start()
        # The other model's jobs are handed out once the analyst's queue is parked (order-independent).
        wait_for(
            lambda: any(r["model"] == "analyst" and r["status"] == 429 for r in srv.requests), 60, "the analyst's 429"
        )
        late = run_on_queues(executor, cfg60, store, jobs[1:])
        analyst.join(60)
        late += first[0]
    finally:
        done.set()
        watcher.join(5)
        pool.stop(grace=5)
        server.cleanup()
    assert late == []
    labels = {t.trial_id: store.label_for_trial(t.trial_id) for t in trials}
    assert labels[trials[0].trial_id].source == "model:anthropic/analyst"
    assert all(labels[t.trial_id].source == "model:anthropic/other" for t in trials[1:])
    assert all(lb.label == "capability" and lb.verified for lb in labels.values())

    log = srv.requests
    hit = next(r for r in log if r["model"] == "analyst" and r["status"] == 429)
    again = min(r["t"] for r in log if r["model"] == "analyst" and r["t"] > hit["t"])
    assert again - hit["t"] >= 2.9, "the analyst's job came back before its Retry-After"
    during = [r for r in log if r["model"] == "other" and hit["t"] < r["t"] < again]
    assert during, (
        "the other model's queue waited for the analyst's park",
        [(r["model"], r["status"], round(r["t"] - hit["t"], 2)) for r in log],
    )
    parked = [snap for snap in snapshots if snap.get("anthropic/analyst") is not None]
    assert parked, "Redis never showed the analyst's queue parked"
    assert all(snap.get("anthropic/other") is None for snap in parked)


def test_infra_label_and_analyst_retry_through_the_cli(fake_provider, qa_env, tmp_path):
    """`qa run`: a model rate limited for good gives an `infra` trial label (deterministic: never the model's
    to judge); the analyst's own 429 is waited out and the pass is then labelled by the model."""
    srv = fake_provider(
        {
            "models": {
                "good": s.solver("GOOD-RUN"),
                "dead": {"faults": [{"status": 429, "retry_after": 1, "times": -1}]},
                "analyst": {
                    "turns": [s.answer("legitimate", "earned-pass", [(4, "Writing /app/wordfreq.")])],
                    "faults": [{"status": 429, "retry_after": 2, "times": 1}],
                },
            }
        }
    )
    env = dict(qa_env, ANTHROPIC_API_KEY=GOOD_KEY, ANTHROPIC_BASE_URL=srv.url)
    (tmp_path / "qa.toml").write_text(
        '[probes]\nenabled = []\n[loop]\nmax_iterations = 0\n[scheduler.models."anthropic/dead"]\nmax_parks = 1\n'
    )
    proc = run_qa(
        [
            "run",
            str(ENV),
            "-m",
            "anthropic/good",
            "-m",
            "anthropic/dead",
            "-n",
            "1",
            "--oracle-runs",
            "1",
            "--analyst-model",
            "anthropic/analyst",
            "--json",
        ],
        env,
        cwd=tmp_path,
    )
    assert proc.returncode == 3, proc.stderr[-3000:]  # incomplete: `dead` was never measured
    report = json.loads(proc.stdout)
    by_model = {t["model"]: t["label"] for t in report["trials"] if t["agent"] == "solver"}
    assert by_model["anthropic/dead"]["label"] == "infra"
    assert by_model["anthropic/dead"]["subtype"] == "rate_limited"
    assert by_model["anthropic/good"]["label"] == "legitimate" and by_model["anthropic/good"]["verified"]
    calls = [r for r in srv.requests if r["model"] == "analyst"]
    assert [r["status"] for r in calls] == [429, 200]
    assert calls[1]["t"] - calls[0]["t"] >= 1.9
