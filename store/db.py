"""The store: runs, environment versions, trials, findings, image builds, and what the loop adds.
Embedded SQLite by default; Postgres with QA_STORE_URL (store/postgres.py), same methods, same SQL.

The store is the source of truth: a trial's result is recorded once (its id is derived from the spec,
and the insert is `ON CONFLICT DO NOTHING`), a status change and the rows it implies are written in one
transaction, and everything else (RQ, the graph) can be rebuilt from it. One truth per fact: a trial's
result is its row's `result_json` (plus its files in `artifacts`), a run's report is `runs.report_json`;
`result.json` and `report.json` on disk are exports that nothing in qa reads back.

`Store` holds the connection, runs, trial results, findings, builds and labels; the other tables' methods are
mixins in sibling modules on the same connection: store/scheduler_records.py (queue, leases, calls, configs),
store/revision_records.py (versions, proposals, Slack refs, regression exploits), store/loop_records.py and
store/datasets.py.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from envqa.core.defaults import SQLITE_BUSY_TIMEOUT_SEC
from envqa.core.models import STORED, Finding, TrialLabel, TrialResult, utcnow
from envqa.core.statuses import RunStatus, TrialStatus
from envqa.store.datasets import DatasetRecords
from envqa.store.loop_records import LoopRecords
from envqa.store.migrations import migrate
from envqa.store.postgres import PgConnection, store_url
from envqa.store.revision_records import RevisionRecords
from envqa.store.scheduler_records import SchedulerRecords

__all__ = ["SCHEMA", "Store", "TrialStatus"]  # TrialStatus lives in core/statuses.py with the others

# The tables, as package data (a script, not a string): see store/schema.sql and store/migrations.py.
SCHEMA = (resources.files("envqa.store") / "schema.sql").read_text()


class Store(SchedulerRecords, RevisionRecords, LoopRecords, DatasetRecords):
    def __init__(self, path: str | Path):
        """`path`: the SQLite file, unless it (or QA_STORE_URL) is a postgresql:// URL (store/postgres.py)."""
        self.url = store_url(path)
        self.path = Path(path) if self.url is None else None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        migrate(self, SCHEMA)

    @property
    def shared(self) -> bool:
        """Postgres: workers on other hosts write here, so files travel through the store too."""
        return self.url is not None

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None and self.url is not None:
            conn = self._local.conn = PgConnection(self.url)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=SQLITE_BUSY_TIMEOUT_SEC, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_SEC * 1000}")
            self._local.conn = conn
        return conn

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            # SQLite may already have rolled back by itself (busy, I/O errors); a ROLLBACK then would
            # raise "no transaction is active" and hide the error that matters.
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # runs
    def create_run(self, run_id: str, env_dir: str) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO runs(run_id, env_dir, status, created_at) VALUES (?,?,?,?) ON CONFLICT DO NOTHING",
                (run_id, env_dir, RunStatus.RUNNING.value, utcnow().isoformat()),
            )

    def set_run_env(self, run_id: str, name: str, version: str) -> None:
        with self.tx() as db:
            db.execute("UPDATE runs SET env_name=?, env_version=? WHERE run_id=?", (name, version, run_id))

    def finish_run(self, run_id: str, verdict: str, report: dict, findings: list[Finding]) -> None:
        """Verdict, report and findings land together or not at all."""
        now = utcnow().isoformat()
        with self.tx() as db:
            db.execute("DELETE FROM findings WHERE run_id=?", (run_id,))
            db.executemany(
                "INSERT INTO findings(run_id, rule, label, severity, finding_json, created_at) VALUES (?,?,?,?,?,?)",
                [(run_id, f.rule, f.label, f.severity, f.model_dump_json(), now) for f in findings],
            )
            db.execute(
                "UPDATE runs SET status='finished', verdict=?, finished_at=?, report_json=?, report_at=? "
                "WHERE run_id=?",
                (verdict, now, json.dumps(report), now, run_id),
            )

    def get_run(self, run_id: str) -> dict | None:
        row = self._conn().execute("SELECT * FROM runs WHERE run_id=?", (run_id,)).fetchone()
        return dict(row) if row else None

    # trials
    def record_trial(self, result: TrialResult) -> bool:
        """Record a finished trial exactly once; False when it was already recorded. `result_json` is the
        result; the row's other columns name the job (store/schema.sql), none copies what only it knows."""
        now = utcnow().isoformat()
        with self.tx() as db:
            row = db.execute("SELECT status FROM trials WHERE trial_id=?", (result.trial_id,)).fetchone()
            if row and row["status"] == TrialStatus.DONE:
                return False
            values = (
                result.run_id,
                result.env_version,
                result.agent,
                result.model,
                result.purpose,
                TrialStatus.DONE.value,
                result.model_dump_json(),
                now,
                result.source,
                result.provenance.path if result.provenance else None,
            )
            if row:
                db.execute(
                    "UPDATE trials SET run_id=?, env_version=?, agent=?, model=?, purpose=?, status=?, "
                    "result_json=?, updated_at=?, source=?, source_path=?, lease_until=NULL WHERE trial_id=?",
                    (*values, result.trial_id),
                )
            else:
                db.execute(
                    "INSERT INTO trials(run_id, env_version, agent, model, purpose, status, result_json, "
                    "updated_at, source, source_path, trial_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (*values, result.trial_id, now),
                )
            return True

    def save_attempt(self, result: TrialResult) -> None:
        """An attempt's result that is NOT the trial's (a transient failure the scheduler retries): kept on the
        row, not done, so that giving up later records the last attempt's details from any host. Readers of
        results (get_trial, trials_for_run) see done rows only."""
        with self.tx() as db:
            db.execute(
                "UPDATE trials SET result_json=?, updated_at=? WHERE trial_id=? AND status!='done'",
                (result.model_dump_json(), utcnow().isoformat(), result.trial_id),
            )

    def last_attempt(self, trial_id: str) -> TrialResult | None:
        row = (
            self._conn()
            .execute("SELECT result_json FROM trials WHERE trial_id=? AND status!='done'", (trial_id,))
            .fetchone()
        )
        return TrialResult.model_validate_json(row["result_json"]) if row and row["result_json"] else None

    def get_trial(self, trial_id: str) -> TrialResult | None:
        row = (
            self._conn()
            .execute("SELECT result_json FROM trials WHERE trial_id=? AND status='done'", (trial_id,))
            .fetchone()
        )
        return TrialResult.model_validate_json(row["result_json"]) if row else None

    def trials_for_run(self, run_id: str) -> list[TrialResult]:
        rows = (
            self._conn()
            .execute(
                "SELECT result_json FROM trials WHERE run_id=? AND status='done' ORDER BY created_at, trial_id",
                (run_id,),
            )
            .fetchall()
        )
        return [TrialResult.model_validate_json(r["result_json"]) for r in rows]

    def findings_for_run(self, run_id: str) -> list[Finding]:
        rows = self._conn().execute("SELECT finding_json FROM findings WHERE run_id=? ORDER BY id", (run_id,))
        return [Finding.model_validate_json(r["finding_json"], context=STORED) for r in rows]  # old rule ids too

    def record_build(self, tag: str, env_version: str) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO image_builds(tag, env_version, built_at) VALUES (?,?,?)",
                (tag, env_version, utcnow().isoformat()),
            )

    def count_builds(self, env_version: str | None = None) -> int:
        if env_version is None:
            return self._conn().execute("SELECT COUNT(*) FROM image_builds").fetchone()[0]
        return (
            self._conn().execute("SELECT COUNT(*) FROM image_builds WHERE env_version=?", (env_version,)).fetchone()[0]
        )

    # labels (issue 11): one per trial. A deterministic label is final: a later model label for the same
    # trial never replaces it (the model cannot overturn what strace or the infra classes proved).
    def save_label(
        self, run_id: str, label: TrialLabel, env_version: str | None = None, model: str | None = None
    ) -> TrialLabel:
        """Store a trial's label; returns the label that is stored afterwards (a deterministic one stays)."""
        now = utcnow().isoformat()
        with self.tx() as db:
            row = db.execute("SELECT source, label_json FROM labels WHERE trial_id=?", (label.trial_id,)).fetchone()
            if row and row["source"] == "deterministic" and label.source != "deterministic":
                return TrialLabel.model_validate_json(row["label_json"])
            db.execute(
                "INSERT INTO labels(trial_id, run_id, env_version, model, label, subtype, source, label_json, "
                "created_at) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(trial_id) DO UPDATE SET run_id=excluded.run_id, "
                "env_version=excluded.env_version, model=excluded.model, label=excluded.label, "
                "subtype=excluded.subtype, source=excluded.source, label_json=excluded.label_json, "
                "created_at=excluded.created_at",
                (
                    label.trial_id,
                    run_id,
                    env_version,
                    model,
                    label.label,
                    label.subtype,
                    label.source,
                    label.model_dump_json(),
                    now,
                ),
            )
            return label

    def label_for_trial(self, trial_id: str) -> TrialLabel | None:
        row = self._conn().execute("SELECT label_json FROM labels WHERE trial_id=?", (trial_id,)).fetchone()
        return TrialLabel.model_validate_json(row["label_json"]) if row else None

    def labels_for_run(self, run_id: str, env_version: str | None = None) -> dict[str, TrialLabel]:
        """trial_id -> label for a run (one version's only, when given)."""
        sql, args = "SELECT label_json FROM labels WHERE run_id=?", [run_id]
        if env_version is not None:
            sql, args = sql + " AND env_version=?", [run_id, env_version]
        rows = self._conn().execute(sql + " ORDER BY trial_id", args).fetchall()
        labels = [TrialLabel.model_validate_json(r["label_json"]) for r in rows]
        return {lb.trial_id: lb for lb in labels}
