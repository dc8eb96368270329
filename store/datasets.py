"""Dataset runs (issue 25): `qa run PATH...` over many tasks, one id (`ds-...`), one row per task.

A mixin of `Store` (same connection, same transactions) like store/loop_records.py. `datasets` holds the run as
a whole (what the user passed, the options, the config, the final DatasetReport JSON); `dataset_tasks` links the
dataset to each task's own run (`runs.run_id`) and keeps the task's row (TaskRow JSON) once it is final, so that
`qa run --resume DS_ID` knows what is done (never repeated), what was started (resumed from its checkpoint) and
what never began. Plain SQL with `?` and `ON CONFLICT`, so the Postgres backend runs the same statements.
"""

from __future__ import annotations

import json

from envqa.core.models import utcnow
from envqa.core.statuses import DatasetStatus, DatasetTaskStatus


def _dataset(row, full: bool = True) -> dict:
    d = dict(row)
    d["paths"] = json.loads(d.pop("paths_json") or "[]")
    d["options"] = json.loads(d.pop("options_json") or "{}")
    report = d.pop("report_json", None)
    if full:
        d["report"] = json.loads(report) if report else None
    else:
        d.pop("config_json", None)
        summary = (json.loads(report) or {}).get("summary") if report else None
        d["tasks"] = (summary or {}).get("tasks")
        d["by_verdict"] = (summary or {}).get("by_verdict")
    return d


class DatasetRecords:
    def create_dataset(self, dataset_id: str, paths: list[str], options: dict, config_json: str) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO datasets(dataset_id, paths_json, options_json, config_json, status, created_at) "
                "VALUES (?,?,?,?,?,?)",
                (
                    dataset_id,
                    json.dumps(paths),
                    json.dumps(options),
                    config_json,
                    DatasetStatus.RUNNING.value,
                    utcnow().isoformat(),
                ),
            )

    def add_dataset_tasks(self, dataset_id: str, tasks: list[tuple[str, str]]) -> None:
        """The planned tasks (path, name), in order; a task already planned keeps its row."""
        now = utcnow().isoformat()
        with self.tx() as db:
            for position, (path, name) in enumerate(tasks):
                db.execute(
                    "INSERT INTO dataset_tasks(dataset_id, path, name, position, status, updated_at) "
                    "VALUES (?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                    (dataset_id, path, name, position, DatasetTaskStatus.PENDING.value, now),
                )

    def link_dataset_run(self, dataset_id: str, path: str, run_id: str) -> None:
        """The task's run exists (or is about to): from now on --resume continues this run, never a new one."""
        with self.tx() as db:
            db.execute(
                "UPDATE dataset_tasks SET run_id=?, status='running', updated_at=? WHERE dataset_id=? AND path=?",
                (run_id, utcnow().isoformat(), dataset_id, path),
            )

    def set_dataset_task(self, dataset_id: str, path: str, status: str, row: dict | None = None) -> None:
        with self.tx() as db:
            db.execute(
                "UPDATE dataset_tasks SET status=?, row_json=?, updated_at=? WHERE dataset_id=? AND path=?",
                (str(status), json.dumps(row) if row is not None else None, utcnow().isoformat(), dataset_id, path),
            )

    def set_dataset_status(self, dataset_id: str, status: str) -> None:
        with self.tx() as db:
            db.execute("UPDATE datasets SET status=? WHERE dataset_id=?", (str(status), dataset_id))

    def finish_dataset(self, dataset_id: str, status: str, report: dict) -> None:
        """The DatasetReport (JSON) and the status land together."""
        now = utcnow().isoformat()
        with self.tx() as db:
            db.execute(
                "UPDATE datasets SET status=?, exit_code=?, report_json=?, report_at=?, finished_at=? "
                "WHERE dataset_id=?",
                (str(status), report.get("exit_code"), json.dumps(report), now, now, dataset_id),
            )

    def get_dataset(self, dataset_id: str) -> dict | None:
        row = self._conn().execute("SELECT * FROM datasets WHERE dataset_id=?", (dataset_id,)).fetchone()
        return _dataset(row) if row else None

    def dataset_report(self, dataset_id: str) -> dict | None:
        """The last DatasetReport written (JSON dict), or None before the dataset has one."""
        row = self._conn().execute("SELECT report_json FROM datasets WHERE dataset_id=?", (dataset_id,)).fetchone()
        return json.loads(row["report_json"]) if row and row["report_json"] else None

    def dataset_tasks(self, dataset_id: str) -> list[dict]:
        rows = (
            self._conn()
            .execute("SELECT * FROM dataset_tasks WHERE dataset_id=? ORDER BY position, path", (dataset_id,))
            .fetchall()
        )
        out = []
        for r in rows:
            d = dict(r)
            raw = d.pop("row_json", None)
            d["row"] = json.loads(raw) if raw else None
            out.append(d)
        return out

    def list_datasets(self, limit: int = 100) -> list[dict]:
        """Newest first, for `qa serve`'s listing: no config, the report's summary counts only."""
        rows = self._conn().execute("SELECT * FROM datasets ORDER BY created_at DESC LIMIT ?", (limit,)).fetchall()
        return [_dataset(r, full=False) for r in rows]
