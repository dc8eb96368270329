"""What the revise loop keeps for good (issues 9, 11, 15): environment versions and which runs saw them, the
reviser's proposals, the Slack messages that announce them, and the regression exploits a hunter found.

A mixin of `Store` (same connection, same transactions) like store/loop_records.py, kept apart so that
store/db.py stays small. Plain SQL with `?` placeholders and `ON CONFLICT`, so the Postgres backend runs the same
statements.
"""

from __future__ import annotations

from envqa.core.models import Proposal, VersionInfo, utcnow


class RevisionRecords:
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
