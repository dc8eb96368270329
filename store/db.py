"""Embedded SQLite store: runs, environment versions, trials, findings, image builds.

The store is the source of truth: a trial's result is recorded once (its id is derived from the spec,
and the insert is `ON CONFLICT DO NOTHING`), a status change and the rows it implies are written in one
transaction, and everything else (RQ, the graph) can be rebuilt from it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from envqa.models import Finding, TrialResult, utcnow

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, env_dir TEXT NOT NULL, env_name TEXT, env_version TEXT,
    status TEXT NOT NULL, verdict TEXT, created_at TEXT NOT NULL, finished_at TEXT, report_json TEXT
);
CREATE TABLE IF NOT EXISTS env_versions (
    version TEXT PRIMARY KEY, name TEXT, root TEXT, format TEXT, created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS trials (
    trial_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, env_version TEXT NOT NULL, agent TEXT NOT NULL,
    model TEXT, purpose TEXT, status TEXT NOT NULL, outcome TEXT, reward REAL, error_class TEXT,
    attempts INTEGER NOT NULL DEFAULT 0, spec_json TEXT, result_json TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS trials_by_run ON trials(run_id, status);
CREATE TABLE IF NOT EXISTS findings (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, rule TEXT NOT NULL, label TEXT NOT NULL,
    severity TEXT NOT NULL, finding_json TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS image_builds (
    tag TEXT NOT NULL, env_version TEXT NOT NULL, built_at TEXT NOT NULL
);
"""


class Store:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._conn().executescript(SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA busy_timeout=30000")
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
                (run_id, env_dir, "running", utcnow().isoformat()),
            )

    def set_run_env(self, run_id: str, name: str, version: str, root: str, fmt: str) -> None:
        now = utcnow().isoformat()
        with self.tx() as db:
            db.execute("UPDATE runs SET env_name=?, env_version=? WHERE run_id=?", (name, version, run_id))
            db.execute(
                "INSERT INTO env_versions(version, name, root, format, created_at) VALUES (?,?,?,?,?) "
                "ON CONFLICT DO NOTHING", (version, name, root, fmt, now),
            )

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
                "UPDATE runs SET status='finished', verdict=?, finished_at=?, report_json=? WHERE run_id=?",
                (verdict, now, json.dumps(report), run_id),
            )

    def get_run(self, run_id: str) -> dict | None:
        row = self._conn().execute("SELECT * FROM runs WHERE run_id=?", (run_id,)).fetchone()
        return dict(row) if row else None

    # trials
    def record_trial(self, result: TrialResult) -> bool:
        """Record a finished trial exactly once; False when it was already recorded."""
        now = utcnow().isoformat()
        with self.tx() as db:
            row = db.execute("SELECT status FROM trials WHERE trial_id=?", (result.trial_id,)).fetchone()
            if row and row["status"] == "done":
                return False
            values = (result.run_id, result.env_version, result.agent, result.model, result.purpose, "done",
                      result.outcome, result.reward, result.error_class, result.model_dump_json(), now)
            if row:
                db.execute(
                    "UPDATE trials SET run_id=?, env_version=?, agent=?, model=?, purpose=?, status=?, outcome=?, "
                    "reward=?, error_class=?, result_json=?, updated_at=? WHERE trial_id=?",
                    (*values, result.trial_id),
                )
            else:
                db.execute(
                    "INSERT INTO trials(run_id, env_version, agent, model, purpose, status, outcome, reward, "
                    "error_class, result_json, updated_at, trial_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (*values, result.trial_id, now),
                )
            return True

    def get_trial(self, trial_id: str) -> TrialResult | None:
        row = self._conn().execute(
            "SELECT result_json FROM trials WHERE trial_id=? AND status='done'", (trial_id,)
        ).fetchone()
        return TrialResult.model_validate_json(row["result_json"]) if row else None

    def trials_for_run(self, run_id: str) -> list[TrialResult]:
        rows = self._conn().execute(
            "SELECT result_json FROM trials WHERE run_id=? AND status='done' ORDER BY created_at, trial_id",
            (run_id,),
        ).fetchall()
        return [TrialResult.model_validate_json(r["result_json"]) for r in rows]

    def findings_for_run(self, run_id: str) -> list[Finding]:
        rows = self._conn().execute("SELECT finding_json FROM findings WHERE run_id=? ORDER BY id", (run_id,))
        return [Finding.model_validate_json(r["finding_json"]) for r in rows]

    def record_build(self, tag: str, env_version: str) -> None:
        with self.tx() as db:
            db.execute("INSERT INTO image_builds(tag, env_version, built_at) VALUES (?,?,?)",
                       (tag, env_version, utcnow().isoformat()))

    def count_builds(self, env_version: str | None = None) -> int:
        if env_version is None:
            return self._conn().execute("SELECT COUNT(*) FROM image_builds").fetchone()[0]
        return self._conn().execute(
            "SELECT COUNT(*) FROM image_builds WHERE env_version=?", (env_version,)).fetchone()[0]

    # scheduler (issue 3): a trial's row exists from the moment it is queued, so that after a Redis
    # restart the store alone says what still has to run (`spec_json` holds the job to re-enqueue).
    def mark_trial_queued(self, trial_id: str, run_id: str, env_version: str, agent: str, model: str | None,
                          purpose: str, job_json: str) -> bool:
        """Queued, unless already done; False when the trial is done (nothing to enqueue)."""
        now = utcnow().isoformat()
        with self.tx() as db:
            row = db.execute("SELECT status FROM trials WHERE trial_id=?", (trial_id,)).fetchone()
            if row and row["status"] == "done":
                return False
            if row:
                db.execute("UPDATE trials SET status='queued', spec_json=?, updated_at=? WHERE trial_id=?",
                           (job_json, now, trial_id))
            else:
                db.execute(
                    "INSERT INTO trials(trial_id, run_id, env_version, agent, model, purpose, status, spec_json, "
                    "created_at, updated_at) VALUES (?,?,?,?,?,?,'queued',?,?,?)",
                    (trial_id, run_id, env_version, agent, model, purpose, job_json, now, now))
            return True

    def mark_trial_running(self, trial_id: str) -> bool:
        """A worker started it (again): status running, one more attempt. False when already done."""
        with self.tx() as db:
            cur = db.execute("UPDATE trials SET status='running', attempts=attempts+1, updated_at=? "
                             "WHERE trial_id=? AND status!='done'", (utcnow().isoformat(), trial_id))
            return cur.rowcount == 1

    def trial_states(self, trial_ids: list[str]) -> dict[str, tuple[str, int]]:
        """trial_id -> (status, attempts) for the ids that have a row."""
        out: dict[str, tuple[str, int]] = {}
        for i in range(0, len(trial_ids), 500):
            chunk = trial_ids[i:i + 500]
            rows = self._conn().execute(
                f"SELECT trial_id, status, attempts FROM trials WHERE trial_id IN ({','.join('?' * len(chunk))})",
                chunk).fetchall()
            out.update({r["trial_id"]: (r["status"], r["attempts"]) for r in rows})
        return out

    def unfinished_trials(self, run_id: str | None = None) -> list[dict]:
        """Trials queued or running (per the store) with the job that runs them: what reconcile re-enqueues."""
        sql = "SELECT trial_id, run_id, status, spec_json FROM trials WHERE status IN ('queued','running') " \
              "AND spec_json IS NOT NULL"
        args: tuple = ()
        if run_id is not None:
            sql, args = sql + " AND run_id=?", (run_id,)
        return [dict(r) for r in self._conn().execute(sql, args).fetchall()]
