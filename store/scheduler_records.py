"""The scheduler's rows (issue 3, issue 9): a trial's queue and lease state, model calls run as jobs, and the
configurations jobs name by hash.

A mixin of `Store` (same connection, same transactions) like store/loop_records.py, kept apart so that
store/db.py stays small. A trial's row exists from the moment it is queued, so after a Redis restart the store
alone says what still has to run; a worker's lease and heartbeat say whose attempt it is and until when. Plain
SQL with `?` placeholders and `ON CONFLICT`, so the Postgres backend runs the same statements.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from envqa.core.models import utcnow
from envqa.core.statuses import CallStatus, TrialStatus


class SchedulerRecords:
    # scheduler (issue 3): a trial's row exists from the moment it is queued, so that after a Redis
    # restart the store alone says what still has to run (`spec_json` holds the job to re-enqueue).
    def mark_trial_queued(
        self, trial_id: str, run_id: str, env_version: str, agent: str, model: str | None, purpose: str, job_json: str
    ) -> bool:
        """Queued, unless already done; False when the trial is done (nothing to enqueue)."""
        now = utcnow().isoformat()
        with self.tx() as db:
            row = db.execute("SELECT status FROM trials WHERE trial_id=?", (trial_id,)).fetchone()
            if row and row["status"] == TrialStatus.DONE:
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

    # calls (issue 9): a model call that is not a trial (the reviser) runs as a job on its model's queue;
    # its row says queued/done/failed and holds the result, like a trial's row does.
    def mark_call_queued(self, call_id: str, queue: str) -> bool:
        """False when the call already finished (its result is stored: nothing to enqueue)."""
        now = utcnow().isoformat()
        with self.tx() as db:
            row = db.execute("SELECT status FROM calls WHERE call_id=?", (call_id,)).fetchone()
            if row and row["status"] == CallStatus.DONE:
                return False
            db.execute(
                "INSERT INTO calls(call_id, queue, status, created_at, updated_at) VALUES (?,?,?,?,?) "
                "ON CONFLICT(call_id) DO UPDATE SET status='queued', updated_at=excluded.updated_at",
                (call_id, queue, CallStatus.QUEUED.value, now, now),
            )
            return True

    def finish_call(
        self, call_id: str, result: dict | None, error_class: str | None = None, error_message: str | None = None
    ) -> None:
        status = (CallStatus.DONE if error_class is None else CallStatus.FAILED).value
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
