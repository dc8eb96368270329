"""One store, two backends: the same methods, the same semantics, on SQLite and on a private Postgres."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from envqa.core.models import Finding, Outcome, TrialLabel, TrialResult
from envqa.store.db import Store
from envqa.store.postgres import StoreUnavailable, translate

# SQLite is in the fast tier (make test-fast: no Postgres); the Postgres half runs in `make test`.
BACKENDS = [pytest.param("sqlite", marks=pytest.mark.fast), "postgres"]


@pytest.fixture(params=BACKENDS)
def target(request, tmp_path, monkeypatch):
    """What `Store(...)` is opened on: a file path (SQLite) or a fresh Postgres database's URL."""
    monkeypatch.delenv("QA_STORE_URL", raising=False)
    if request.param == "sqlite":
        return tmp_path / "envqa.db"
    return request.getfixturevalue("pg_url")


def _result(tid: str, run: str = "r1", outcome: Outcome = Outcome.PASS) -> TrialResult:
    return TrialResult(
        trial_id=tid,
        run_id=run,
        env_version="v1",
        agent="oracle",
        outcome=outcome,
        reward=1.0 if outcome == Outcome.PASS else 0.0,
    )


def test_runs_trials_and_findings_round_trip(target):
    store = Store(target)
    assert store.shared == (not isinstance(target, Path))
    store.create_run("r1", "/envs/x")
    store.set_run_env("r1", "x", "v1")
    assert store.mark_trial_queued("t1", "r1", "v1", "oracle", None, "validate", '{"job": 1}')
    assert [r["trial_id"] for r in store.unfinished_trials("r1")] == ["t1"]
    assert store.mark_trial_running("t1")
    assert store.record_trial(_result("t1")) is True
    assert store.record_trial(_result("t1", outcome=Outcome.FAIL)) is False  # first result wins
    assert store.get_trial("t1").outcome == Outcome.PASS and store.get_trial("t1").reward == 1.0
    assert store.trial_states(["t1", "nope"]) == {"t1": ("done", 1)}
    assert not store.mark_trial_running("t1") and not store.mark_trial_queued(
        "t1", "r1", "v1", "oracle", None, "validate", "{}"
    )
    finding = Finding(rule="oracle-flaky", label="brittleness", severity="warning", message="50% of the time")
    store.finish_run("r1", "findings", {"verdict": "findings", "pct": "100%"}, [finding])
    row = store.get_run("r1")
    assert (row["status"], row["verdict"], row["env_version"]) == ("finished", "findings", "v1")
    assert [f.message for f in store.findings_for_run("r1")] == ["50% of the time"]
    store.record_build("img:1", "v1")
    assert store.count_builds("v1") == 1 and store.count_builds() == 1


def test_a_trial_is_recorded_once_under_concurrent_writers(target):
    """Eight threads (eight connections) race to record the same trial: exactly one wins, on both backends
    (Postgres gets SQLite's one-writer semantics from the advisory lock behind BEGIN IMMEDIATE)."""
    store = Store(target)
    store.mark_trial_queued("t1", "r1", "v1", "oracle", None, "validate", "{}")
    barrier = threading.Barrier(8)

    def record(i: int) -> bool:
        barrier.wait(timeout=30)
        return store.record_trial(_result("t1", outcome=Outcome.PASS if i % 2 else Outcome.FAIL))

    with ThreadPoolExecutor(8) as pool:
        wins = list(pool.map(record, range(8)))
    assert wins.count(True) == 1
    assert store.trial_states(["t1"]) == {"t1": ("done", 0)}


def test_methods_other_issues_added_run_unchanged(target):
    """Labels, approvals, Slack refs: written with `?` SQL for SQLite, they run as they are on Postgres."""
    store = Store(target)
    label = TrialLabel(trial_id="t1", label="capability", explanation="ran out of ideas", source="model:x/y")
    store.save_label("r1", label, env_version="v1", model="x/y")
    proved = TrialLabel(trial_id="t1", label="shortcut", subtype="read-tests", source="deterministic")
    store.save_label("r1", proved)
    assert store.save_label("r1", label).label == "shortcut"  # a model never overturns a deterministic label
    assert store.labels_for_run("r1")["t1"].subtype == "read-tests"
    first, wrote = store.record_approval("r1", "p1", "approve", "alice")
    again, wrote_again = store.record_approval("r1", "p1", "reject", "bob")
    assert wrote and not wrote_again and again["approver"] == "alice" == first["approver"]
    store.save_slack_message("r1", "thread", "C1", "1.5")
    assert store.slack_message("r1", "thread") == ("C1", "1.5")


def test_rows_behave_like_sqlite_rows_and_placeholders_translate(target):
    store = Store(target)
    store.create_run("r?%", "/a 'b'")
    db = store._conn()
    row = db.execute(
        "SELECT run_id, env_dir, 'x?%' AS lit FROM runs WHERE run_id=? AND env_dir LIKE '%b%'", ("r?%",)
    ).fetchone()
    assert (row[0], row["env_dir"], row["lit"]) == ("r?%", "/a 'b'", "x?%")
    assert dict(row) == {"run_id": "r?%", "env_dir": "/a 'b'", "lit": "x?%"} and list(row.keys())[0] == "run_id"
    assert translate("SELECT '?', ? FROM t WHERE a LIKE '5%'") == "SELECT '?', %s FROM t WHERE a LIKE '5%%'"
    assert (
        translate("CREATE TABLE x (id INTEGER PRIMARY KEY AUTOINCREMENT, r REAL, b BLOB)")
        == "CREATE TABLE x (id BIGSERIAL PRIMARY KEY, r DOUBLE PRECISION, b BYTEA)"
    )


def test_postgres_restart_costs_one_transaction_at_most(pg_server, monkeypatch):
    """After a restart the next statement reconnects by itself; a transaction cut by it raises
    StoreUnavailable, a ConnectionError, which the scheduler's policy retries."""
    from envqa.core.policy import is_transient

    monkeypatch.delenv("QA_STORE_URL", raising=False)
    url = pg_server.create_database("restart_test")
    store = Store(url)
    store.create_run("r1", "/x")
    with pytest.raises(StoreUnavailable) as cut, store.tx() as db:
        db.execute("UPDATE runs SET status='x' WHERE run_id=?", ("r1",))
        pg_server.restart()
        db.execute("UPDATE runs SET status='y' WHERE run_id=?", ("r1",))
    assert is_transient(cut.value)
    assert store.get_run("r1")["status"] == "running"  # the cut transaction left nothing behind
    store.create_run("r2", "/y")  # a new transaction reconnects
    assert store.get_run("r2")["status"] == "running"


@pytest.mark.fast
def test_a_bad_store_url_is_an_input_error(tmp_path, monkeypatch):
    from envqa.core.errors import InputError

    monkeypatch.setenv("QA_STORE_URL", "mysql://nope")
    with pytest.raises(InputError, match="QA_STORE_URL"):
        Store(tmp_path / "envqa.db")


def test_sql_errors_are_not_mistaken_for_a_lost_connection(pg_url, monkeypatch):
    monkeypatch.delenv("QA_STORE_URL", raising=False)
    store = Store(pg_url)
    with pytest.raises(psycopg.errors.UndefinedTable):
        store._conn().execute("SELECT * FROM no_such_table").fetchall()


def test_artifacts_cross_hosts_compressed_and_capped(target, tmp_path, monkeypatch):
    """A trial's files round-trip through the store byte for byte; a file over the per-file cap keeps its
    head and says it was cut; the per-trial cap holds across files; a retried trial replaces its files."""
    from envqa.store import shared_files as sf

    monkeypatch.setattr(sf, "MAX_FILE_BYTES", 1000)
    monkeypatch.setattr(sf, "MAX_TRIAL_BYTES", 1500)
    src = tmp_path / "ran-on-b"
    (src / "verifier").mkdir(parents=True)
    (src / "result.json").write_text('{"reward": 1}')
    (src / "verifier" / "test-stdout.txt").write_bytes(b"x" * 5000)
    (src / "zz-last.log").write_bytes(b"y" * 800)
    store = Store(target)
    assert sf.upload_trial_artifacts(store, "r1", "t1", src) == 3
    dest = tmp_path / "host-a"
    assert sf.fetch_trial_artifacts(store, "t1", dest) == 3
    assert (dest / "result.json").read_text() == '{"reward": 1}'
    capped = (dest / "verifier" / "test-stdout.txt").read_bytes()
    assert capped.startswith(b"x" * 1000) and b"x" * 1001 not in capped
    assert b"truncated to the first 1000 bytes of 5000" in capped
    # 13 + 1000 of the 1500 are spent: the last file keeps the 487 bytes left
    assert (dest / "zz-last.log").read_bytes().startswith(b"y" * 487 + b"\n[envqa: truncated")
    rows = {
        r["path"]: (r["size"], r["truncated"])
        for r in store._conn().execute("SELECT path, size, truncated FROM artifacts WHERE trial_id='t1'").fetchall()
    }
    assert rows == {"result.json": (13, 0), "verifier/test-stdout.txt": (5000, 1), "zz-last.log": (800, 1)}
    (src / "verifier" / "test-stdout.txt").unlink()
    assert sf.upload_trial_artifacts(store, "r1", "t1", src) == 2
    assert sf.artifact_paths(store, "t1") == ["result.json", "zz-last.log"]


def test_the_report_and_an_unrecorded_attempt_have_one_copy_each(target):
    """runs.report_json is the report every reader gets (report_time says when it changed), and a retried
    attempt's result waits on the row, unseen by the readers of results, until the trial is given up."""
    store = Store(target)
    store.create_run("r1", "/envs/x")
    assert store.run_report("r1") is None and store.report_time("r1") is None
    store.save_pending_report("r1", {"verdict": "awaiting_approval", "n": 1})
    pending_at = store.report_time("r1")
    assert store.run_report("r1") == {"verdict": "awaiting_approval", "n": 1} and pending_at is not None
    store.finish_run("r1", "clean", {"verdict": "clean", "n": 2}, [])
    assert store.run_report("r1") == {"verdict": "clean", "n": 2} and store.report_time("r1") >= pending_at

    store.mark_trial_queued("t1", "r1", "v1", "oracle", None, "validate", "{}")
    assert store.last_attempt("t1") is None
    store.save_attempt(_result("t1", outcome=Outcome.INFRA))
    assert store.last_attempt("t1").outcome == Outcome.INFRA
    assert store.get_trial("t1") is None and store.trials_for_run("r1") == []  # not a result yet
    assert store.record_trial(_result("t1"))
    store.save_attempt(_result("t1", outcome=Outcome.INFRA))  # too late: the recorded result stays
    assert store.get_trial("t1").outcome == Outcome.PASS and store.last_attempt("t1") is None


def test_an_attempt_sets_status_attempts_worker_and_lease_together_and_a_result_is_recorded_once(target):
    store = Store(target)
    store.create_run("r1", "/envs/x")
    assert store.mark_trial_queued("t1", "r1", "v1", "oracle", None, "validate", "{}")
    assert store.trial_lease("t1")["status"] == "queued"
    assert store.mark_trial_running("t1", worker="host-a:1", lease_sec=30)
    first = store.trial_lease("t1")
    assert (first["status"], first["attempts"], first["worker"]) == ("running", 1, "host-a:1")
    assert first["lease_until"] > first["heartbeat_at"]  # ISO times: the lease ends 30 s after the beat
    assert store.mark_trial_running("t1", worker="host-b:2", lease_sec=30)  # the run came back elsewhere
    assert not store.renew_trial_lease("t1", "host-a:1", 30)  # the old run's beat no longer counts
    assert store.renew_trial_lease("t1", "host-b:2", 30)
    second = store.trial_lease("t1")
    assert (second["attempts"], second["worker"]) == (2, "host-b:2")
    assert store.record_trial(_result("t1")) is True
    assert store.record_trial(_result("t1", outcome=Outcome.FAIL)) is False  # a second completion: a no-op
    done = store.trial_lease("t1")
    assert (done["status"], done["attempts"], done["lease_until"]) == ("done", 2, None)
    assert not store.mark_trial_running("t1", worker="host-c:3", lease_sec=30)
    assert not store.renew_trial_lease("t1", "host-b:2", 30)
