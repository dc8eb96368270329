"""The revise loop's rows (issue 10): approvals, per-version findings, loop progress, notifications.

A mixin of `Store` (same connection, same transactions), kept apart so that store/db.py stays small.
Plain SQL with `?` placeholders and `ON CONFLICT`, so the Postgres backend can run the same statements.
An approval is written once per (run, proposal): the first decision wins and a second one changes nothing,
which is what makes `qa approve` and a Slack button racing each other safe.
"""

from __future__ import annotations

import json
from datetime import datetime

from envqa.core.models import utcnow

# config_json: the run's effective configuration, so that `qa approve` in another process (or on a worker)
# continues the run with the flags it was started with (models, trials, oracle runs), not its own.
# node: the graph node the run entered last (qa status shows where a long run is).
LOOP_FIELDS = (
    "approval_mode",
    "iteration",
    "version",
    "band_call",
    "stop_reason",
    "pending_proposal",
    "config_json",
    "node",
)


class LoopRecords:
    # approvals -----------------------------------------------------------------------------------
    def record_approval(
        self,
        run_id: str,
        proposal_id: str,
        action: str,
        approver: str,
        reason: str | None = None,
        patch: str | None = None,
    ) -> tuple[dict, bool]:
        """Store a decision unless one exists; returns (the stored decision, whether this call wrote it)."""
        with self.tx() as db:
            cur = db.execute(
                "INSERT INTO approvals(run_id, proposal_id, action, approver, reason, patch, decided_at) "
                "VALUES (?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                (run_id, proposal_id, action, approver, reason, patch, utcnow().isoformat()),
            )
            inserted = cur.rowcount == 1
        return self.get_approval(run_id, proposal_id), inserted

    def get_approval(self, run_id: str, proposal_id: str) -> dict | None:
        row = (
            self._conn()
            .execute("SELECT * FROM approvals WHERE run_id=? AND proposal_id=?", (run_id, proposal_id))
            .fetchone()
        )
        return dict(row) if row else None

    def approvals_for_run(self, run_id: str) -> list[dict]:
        rows = self._conn().execute("SELECT * FROM approvals WHERE run_id=? ORDER BY decided_at", (run_id,))
        return [dict(r) for r in rows.fetchall()]

    # findings per version: the one truth the report's `versions` key is built from ------------------
    def save_version_findings(self, run_id: str, version: str, findings: list[dict], summary: dict) -> None:
        now = utcnow().isoformat()
        with self.tx() as db:
            db.execute(
                "INSERT INTO version_findings(run_id, version, findings_json, summary_json, created_at) "
                "VALUES (?,?,?,?,?) ON CONFLICT(run_id, version) DO UPDATE SET findings_json=excluded.findings_json, "
                "summary_json=excluded.summary_json, created_at=excluded.created_at",
                (run_id, version, json.dumps(findings), json.dumps(summary), now),
            )

    def version_findings(self, run_id: str) -> dict[str, dict]:
        rows = self._conn().execute("SELECT * FROM version_findings WHERE run_id=? ORDER BY created_at", (run_id,))
        return {
            r["version"]: {"findings": json.loads(r["findings_json"]), "summary": json.loads(r["summary_json"])}
            for r in rows.fetchall()
        }

    # loop progress (qa runs / qa status) -------------------------------------------------------------
    def set_loop(self, run_id: str, **fields) -> None:
        unknown = set(fields) - set(LOOP_FIELDS)
        if unknown:
            raise ValueError(f"unknown loop fields: {sorted(unknown)}")
        now = utcnow().isoformat()
        with self.tx() as db:
            db.execute("INSERT INTO run_loop(run_id, updated_at) VALUES (?,?) ON CONFLICT DO NOTHING", (run_id, now))
            for key, value in fields.items():  # keys checked above: never user text in the SQL
                db.execute(f"UPDATE run_loop SET {key}=?, updated_at=? WHERE run_id=?", (value, now, run_id))

    def get_loop(self, run_id: str) -> dict | None:
        row = self._conn().execute("SELECT * FROM run_loop WHERE run_id=?", (run_id,)).fetchone()
        return dict(row) if row else None

    def set_run_status(self, run_id: str, status: str, only_from: tuple[str, ...] | None = None) -> bool:
        """Change a run's status; with `only_from`, only from one of those (a claim: True if this call won)."""
        sql, args = "UPDATE runs SET status=? WHERE run_id=?", [str(status), run_id]
        if only_from:
            sql += f" AND status IN ({','.join('?' * len(only_from))})"
            args += [str(s) for s in only_from]
        with self.tx() as db:
            return db.execute(sql, args).rowcount == 1

    def trial_counts(self, run_id: str) -> dict[str, int]:
        rows = (
            self._conn()
            .execute("SELECT status, COUNT(*) AS n FROM trials WHERE run_id=? GROUP BY status", (run_id,))
            .fetchall()
        )
        return {r["status"]: r["n"] for r in rows}

    def save_pending_report(self, run_id: str, report: dict) -> None:
        """At an approval checkpoint: the report so far, status `awaiting_approval` (not finished)."""
        with self.tx() as db:
            db.execute(
                "UPDATE runs SET status='awaiting_approval', verdict='awaiting_approval', report_json=?, "
                "report_at=? WHERE run_id=?",
                (json.dumps(report), utcnow().isoformat(), run_id),
            )

    # the report: runs.report_json is the one copy (`qa runs`, `qa show`, `qa serve`, the HTML report, Slack
    # read it here); runs/<run_id>/report.json is an export of it that nothing in qa reads back.
    def run_report(self, run_id: str) -> dict | None:
        """The run's last report (at its end or at an approval checkpoint), or None before it has one."""
        row = self._conn().execute("SELECT report_json FROM runs WHERE run_id=?", (run_id,)).fetchone()
        return json.loads(row["report_json"]) if row and row["report_json"] else None

    def report_time(self, run_id: str) -> datetime | None:
        """When the run's report last changed (older databases: when the run finished or began)."""
        row = (
            self._conn()
            .execute(
                "SELECT report_json IS NOT NULL AS has, report_at, finished_at, created_at FROM runs WHERE run_id=?",
                (run_id,),
            )
            .fetchone()
        )
        if not row or not row["has"]:
            return None
        return datetime.fromisoformat(row["report_at"] or row["finished_at"] or row["created_at"])

    def list_runs(self, limit: int = 50) -> list[dict]:
        rows = self._conn().execute(
            "SELECT r.run_id, r.env_name, r.env_dir, r.status, r.verdict, r.created_at, r.finished_at, "
            "l.iteration, l.version, l.band_call, l.stop_reason, l.pending_proposal, l.approval_mode "
            "FROM runs r LEFT JOIN run_loop l ON l.run_id = r.run_id ORDER BY r.created_at DESC LIMIT ?",
            (limit,),
        )
        return [dict(r) for r in rows.fetchall()]

    # notifications -----------------------------------------------------------------------------------
    def record_notification(self, run_id: str, kind: str, key: str, status: str, detail: str | None = None) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO notifications(run_id, kind, dedupe_key, status, detail, created_at) VALUES (?,?,?,?,?,?) "
                "ON CONFLICT(run_id, kind, dedupe_key) DO UPDATE SET status=excluded.status, detail=excluded.detail",
                (run_id, kind, key, status, detail, utcnow().isoformat()),
            )

    def notification_status(self, run_id: str, kind: str, key: str) -> str | None:
        row = (
            self._conn()
            .execute("SELECT status FROM notifications WHERE run_id=? AND kind=? AND dedupe_key=?", (run_id, kind, key))
            .fetchone()
        )
        return row["status"] if row else None

    def notifications_for_run(self, run_id: str) -> list[dict]:
        rows = self._conn().execute(
            "SELECT kind, dedupe_key, status, detail, created_at FROM notifications WHERE run_id=? ORDER BY created_at",
            (run_id,),
        )
        return [dict(r) for r in rows.fetchall()]
