"""The store: runs, environment versions, trials, findings, image builds, and what the loop adds.
Embedded SQLite by default; Postgres with QA_STORE_URL (store/postgres.py), same methods, same SQL.

The store is the source of truth: a trial's result is recorded once (its id is derived from the spec,
and the insert is `ON CONFLICT DO NOTHING`), a status change and the rows it implies are written in one
transaction, and everything else (RQ, the graph) can be rebuilt from it. One truth per fact: a trial's
result is its row's `result_json` (plus its files in `artifacts`), a run's report is `runs.report_json`;
`result.json` and `report.json` on disk are exports that nothing in qa reads back.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from enum import StrEnum
from importlib import resources
from pathlib import Path

from envqa.core.models import STORED, Finding, Proposal, TrialLabel, TrialResult, VersionInfo, utcnow
from envqa.store.datasets import DatasetRecords
from envqa.store.loop_records import LoopRecords
from envqa.store.migrations import migrate
from envqa.store.postgres import PgConnection, store_url


class TrialStatus(StrEnum):
    """A trial row's status: queued (submitted), running (an attempt started; `worker`/`lease_until` say whose,
    until when), done (`result_json` is the result, written once)."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


# The tables, as package data (a script, not a string): see store/schema.sql and store/migrations.py.
SCHEMA = (resources.files("envqa.store") / "schema.sql").read_text()


class Store(LoopRecords, DatasetRecords):
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
            if row and row["status"] == "done":
                return False
            values = (
                result.run_id,
                result.env_version,
                result.agent,
                result.model,
                result.purpose,
                "done",
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

    # scheduler (issue 3): a trial's row exists from the moment it is queued, so that after a Redis
    # restart the store alone says what still has to run (`spec_json` holds the job to re-enqueue).
    def mark_trial_queued(
        self, trial_id: str, run_id: str, env_version: str, agent: str, model: str | None, purpose: str, job_json: str
    ) -> bool:
        """Queued, unless already done; False when the trial is done (nothing to enqueue)."""
        now = utcnow().isoformat()
        with self.tx() as db:
            row = db.execute("SELECT status FROM trials WHERE trial_id=?", (trial_id,)).fetchone()
            if row and row["status"] == "done":
                return False
            if row:
                db.execute(
                    "UPDATE trials SET status='queued', spec_json=?, updated_at=? WHERE trial_id=?",
                    (job_json, now, trial_id),
                )
            else:
                db.execute(
                    "INSERT INTO trials(trial_id, run_id, env_version, agent, model, purpose, status, spec_json, "
                    "created_at, updated_at) VALUES (?,?,?,?,?,?,'queued',?,?,?)",
                    (trial_id, run_id, env_version, agent, model, purpose, job_json, now, now),
                )
            return True

    def mark_trial_running(self, trial_id: str, worker: str | None = None, lease_sec: float | None = None) -> bool:
        """A worker started it (again): status running, one more attempt, who runs it and its lease, in one
        statement (one transaction). False when already done."""
        now = utcnow()
        until = (now + timedelta(seconds=lease_sec)).isoformat() if lease_sec else None
        with self.tx() as db:
            cur = db.execute(
                "UPDATE trials SET status=?, attempts=attempts+1, worker=?, lease_until=?, "
                "heartbeat_at=?, updated_at=? WHERE trial_id=? AND status!=?",
                (
                    TrialStatus.RUNNING.value,
                    worker,
                    until,
                    now.isoformat(),
                    now.isoformat(),
                    trial_id,
                    TrialStatus.DONE.value,
                ),
            )
            return cur.rowcount == 1

    def renew_trial_lease(self, trial_id: str, worker: str, lease_sec: float) -> bool:
        """The attempt's heartbeat: extend its lease; False when the trial is no longer this worker's run."""
        now = utcnow()
        with self.tx() as db:
            cur = db.execute(
                "UPDATE trials SET heartbeat_at=?, lease_until=? WHERE trial_id=? AND status=? AND worker=?",
                (
                    now.isoformat(),
                    (now + timedelta(seconds=lease_sec)).isoformat(),
                    trial_id,
                    TrialStatus.RUNNING.value,
                    worker,
                ),
            )
            return cur.rowcount == 1

    def trial_lease(self, trial_id: str) -> dict | None:
        """status, attempts, worker, lease_until, heartbeat_at of the trial's row."""
        row = (
            self._conn()
            .execute(
                "SELECT status, attempts, worker, lease_until, heartbeat_at FROM trials WHERE trial_id=?", (trial_id,)
            )
            .fetchone()
        )
        return dict(row) if row else None

    def trial_states(self, trial_ids: list[str]) -> dict[str, tuple[str, int]]:
        """trial_id -> (status, attempts) for the ids that have a row."""
        out: dict[str, tuple[str, int]] = {}
        for i in range(0, len(trial_ids), 500):
            chunk = trial_ids[i : i + 500]
            rows = (
                self._conn()
                .execute(
                    f"SELECT trial_id, status, attempts FROM trials WHERE trial_id IN ({','.join('?' * len(chunk))})",
                    chunk,
                )
                .fetchall()
            )
            out.update({r["trial_id"]: (r["status"], r["attempts"]) for r in rows})
        return out

    def unfinished_trials(self, run_id: str | None = None) -> list[dict]:
        """Trials queued or running (per the store) with the job that runs them: what reconcile re-enqueues."""
        sql = (
            "SELECT trial_id, run_id, status, spec_json FROM trials WHERE status IN ('queued','running') "
            "AND spec_json IS NOT NULL"
        )
        args: tuple = ()
        if run_id is not None:
            sql, args = sql + " AND run_id=?", (run_id,)
        return [dict(r) for r in self._conn().execute(sql, args).fetchall()]

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

    # versions (issue 9): content-addressed snapshots; the first insert of a version wins (same content =
    # same row), and `run_versions` says which runs saw which versions, in order.
    def save_version(self, info: VersionInfo, run_id: str | None = None) -> VersionInfo:
        now = utcnow().isoformat()
        with self.tx() as db:
            db.execute(
                "INSERT INTO versions(version, parent, patch, author, reason, name, created_at) VALUES (?,?,?,?,?,?,?) "
                "ON CONFLICT DO NOTHING",
                (
                    info.version,
                    info.parent,
                    info.patch,
                    info.author,
                    info.reason,
                    info.name,
                    info.created_at.isoformat(),
                ),
            )
            if run_id is not None:
                db.execute(
                    "INSERT INTO run_versions(run_id, version, created_at) VALUES (?,?,?) ON CONFLICT DO NOTHING",
                    (run_id, info.version, now),
                )
        return self.get_version(info.version) or info

    def get_version(self, version: str) -> VersionInfo | None:
        row = self._conn().execute("SELECT * FROM versions WHERE version=?", (version,)).fetchone()
        return VersionInfo.model_validate({k: row[k] for k in row.keys()}) if row else None  # noqa: SIM118 (a Row iterates values)

    def versions_for_run(self, run_id: str) -> list[VersionInfo]:
        rows = (
            self._conn()
            .execute(
                "SELECT v.* FROM run_versions r JOIN versions v ON v.version = r.version WHERE r.run_id=? "
                "ORDER BY r.created_at, v.created_at",
                (run_id,),
            )
            .fetchall()
        )
        return [VersionInfo.model_validate({k: r[k] for k in r.keys()}) for r in rows]  # noqa: SIM118 (a Row iterates values)

    # proposals (issue 9)
    def save_proposal(self, proposal: Proposal) -> None:
        now = utcnow().isoformat()
        with self.tx() as db:
            db.execute(
                "INSERT INTO proposals(proposal_id, run_id, parent_version, candidate_version, status, proposal_json, "
                "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(proposal_id) DO UPDATE SET "
                "candidate_version=excluded.candidate_version, status=excluded.status, "
                "proposal_json=excluded.proposal_json, updated_at=excluded.updated_at",
                (
                    proposal.proposal_id,
                    proposal.run_id,
                    proposal.parent_version,
                    proposal.candidate_version,
                    proposal.status,
                    proposal.model_dump_json(),
                    proposal.created_at.isoformat(),
                    now,
                ),
            )

    def get_proposal(self, proposal_id: str) -> Proposal | None:
        row = self._conn().execute("SELECT proposal_json FROM proposals WHERE proposal_id=?", (proposal_id,)).fetchone()
        return Proposal.model_validate_json(row["proposal_json"]) if row else None

    def proposals_for_run(self, run_id: str) -> list[Proposal]:
        rows = (
            self._conn()
            .execute("SELECT proposal_json FROM proposals WHERE run_id=? ORDER BY created_at, proposal_id", (run_id,))
            .fetchall()
        )
        return [Proposal.model_validate_json(r["proposal_json"]) for r in rows]

    # Slack (issue 15): where a run's messages are, so that any process (the run, `qa serve`) threads its
    # follow-ups under the run's first message and updates a proposal's message after a click.
    # ref: "thread" (the run's root message) or "proposal:<proposal_id>".
    def save_slack_message(self, run_id: str, ref: str, channel: str, ts: str) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO slack_messages(run_id, ref, channel, ts, created_at) VALUES (?,?,?,?,?) "
                "ON CONFLICT DO NOTHING",
                (run_id, ref, channel, ts, utcnow().isoformat()),
            )

    def slack_message(self, run_id: str, ref: str) -> tuple[str, str] | None:
        row = (
            self._conn()
            .execute("SELECT channel, ts FROM slack_messages WHERE run_id=? AND ref=?", (run_id, ref))
            .fetchone()
        )
        return (row["channel"], row["ts"]) if row else None

    # calls (issue 9): a model call that is not a trial (the reviser) runs as a job on its model's queue;
    # its row says queued/done/failed and holds the result, like a trial's row does.
    def mark_call_queued(self, call_id: str, queue: str) -> bool:
        """False when the call already finished (its result is stored: nothing to enqueue)."""
        now = utcnow().isoformat()
        with self.tx() as db:
            row = db.execute("SELECT status FROM calls WHERE call_id=?", (call_id,)).fetchone()
            if row and row["status"] == "done":
                return False
            db.execute(
                "INSERT INTO calls(call_id, queue, status, created_at, updated_at) VALUES (?,?,?,?,?) "
                "ON CONFLICT(call_id) DO UPDATE SET status='queued', updated_at=excluded.updated_at",
                (call_id, queue, "queued", now, now),
            )
            return True

    def finish_call(
        self, call_id: str, result: dict | None, error_class: str | None = None, error_message: str | None = None
    ) -> None:
        status = "done" if error_class is None else "failed"
        with self.tx() as db:
            db.execute(
                "UPDATE calls SET status=?, result_json=?, error_class=?, error_message=?, updated_at=? "
                "WHERE call_id=? AND status!='done'",
                (
                    status,
                    json.dumps(result) if result is not None else None,
                    error_class,
                    error_message,
                    utcnow().isoformat(),
                    call_id,
                ),
            )

    # configurations by content hash: a job on Redis names its config by hash (the store is the one copy)
    def save_config(self, config_json: str) -> str:
        """Keep a configuration (JSON text) once; returns its hash, which a job payload carries instead."""
        digest = hashlib.sha256(config_json.encode()).hexdigest()
        with self.tx() as db:
            db.execute(
                "INSERT INTO configs(config_hash, config_json, created_at) VALUES (?,?,?) "
                "ON CONFLICT(config_hash) DO NOTHING",
                (digest, config_json, utcnow().isoformat()),
            )
        return digest

    def config_json(self, config_hash: str) -> str:
        """The configuration saved under `config_hash`; LookupError when this store never saw it."""
        row = self._conn().execute("SELECT config_json FROM configs WHERE config_hash=?", (config_hash,)).fetchone()
        if row is None:
            raise LookupError(f"no configuration {config_hash[:12]} in the store (the job was queued elsewhere?)")
        return row["config_json"]

    def get_call(self, call_id: str) -> dict | None:
        row = self._conn().execute("SELECT * FROM calls WHERE call_id=?", (call_id,)).fetchone()
        return dict(row) if row else None

    # regression exploits (issue 11): an LLM hunter's shortcut, kept as commands that replay without the model
    def save_regression_exploit(
        self, exploit_id: str, env_name: str, run_id: str, env_version: str, source_trial_id: str, exploit_json: str
    ) -> bool:
        """Keep an exploit for good (idempotent: the same commands are one exploit); True when new."""
        with self.tx() as db:
            cur = db.execute(
                "INSERT INTO regression_exploits(exploit_id, env_name, run_id, env_version, source_trial_id, "
                "exploit_json, created_at) VALUES (?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                (exploit_id, env_name, run_id, env_version, source_trial_id, exploit_json, utcnow().isoformat()),
            )
            return cur.rowcount == 1

    def regression_exploits(self, env_name: str) -> list[str]:
        """Every stored exploit of an environment (by name, across runs and versions), oldest first, as JSON."""
        rows = (
            self._conn()
            .execute(
                "SELECT exploit_json FROM regression_exploits WHERE env_name=? ORDER BY created_at, exploit_id",
                (env_name,),
            )
            .fetchall()
        )
        return [r["exploit_json"] for r in rows]
