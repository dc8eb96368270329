"""Versioned schema migrations, one list for both backends.

`schema_migrations` records which numbered migrations a database has. Opening a store applies, in one
write transaction (so two processes opening an old database at once upgrade it once):
  1. SCHEMA (every `CREATE TABLE/INDEX IF NOT EXISTS`): new tables appear, existing ones are untouched;
  2. every numbered migration the database does not have yet, in order: the changes SCHEMA's
     IF NOT EXISTS cannot express (new columns, new indexes on old tables, data moves).
A database written by an older release (no `schema_migrations` at all) is upgraded in place.
Add a migration by appending (next number, name, steps); never edit or renumber a released one. SCHEMA
(store/schema.sql) is the shape a NEW database gets, so a migration must also hold on a database SCHEMA
just created (hence `drop_columns` checks what is there).
"""

from __future__ import annotations

from collections.abc import Callable

from envqa.core.models import utcnow
from envqa.store.postgres import split_script

# A step is a statement, or a function of the connection for what one statement cannot say on both backends.
Step = str | Callable[[object], None]


def drop_columns(db, table: str, *columns: str) -> None:
    """Drop the columns the table has. A new database never had them (SCHEMA no longer creates them), and
    SQLite has no `DROP COLUMN IF EXISTS`, so ask the table which it has (a 0-row SELECT's description)."""
    have = {d[0] for d in db.execute(f"SELECT * FROM {table} LIMIT 0").description}
    for column in columns:
        if column in have:
            db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")


def add_columns(db, table: str, **columns: str) -> None:
    """Add the columns the table lacks (a new database has them already: SCHEMA creates them)."""
    have = {d[0] for d in db.execute(f"SELECT * FROM {table} LIMIT 0").description}
    for column, kind in columns.items():
        if column not in have:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


MIGRATIONS: list[tuple[int, str, list[Step]]] = [
    (1, "baseline: the 0.1 schema (runs, env_versions, trials, findings, image_builds)", []),
    (
        2,
        "artifacts: trial files kept in the store, readable from any host",
        [
            "CREATE TABLE IF NOT EXISTS artifacts (run_id TEXT NOT NULL, trial_id TEXT NOT NULL, path TEXT NOT NULL, "
            "size INTEGER NOT NULL, truncated INTEGER NOT NULL DEFAULT 0, data BLOB NOT NULL, created_at TEXT NOT NULL, "
            "PRIMARY KEY (trial_id, path))",
            "CREATE INDEX IF NOT EXISTS artifacts_by_run ON artifacts(run_id)",
            "CREATE TABLE IF NOT EXISTS env_bundles (version TEXT PRIMARY KEY, size INTEGER NOT NULL, data BLOB NOT NULL, "
            "created_at TEXT NOT NULL)",
        ],
    ),
    (
        3,
        "run_loop.node: the graph node a run is in now (qa status)",
        [
            "ALTER TABLE run_loop ADD COLUMN node TEXT",
        ],
    ),
    (
        4,
        "drop env_versions: written by every run, read by nothing (versions holds the versions)",
        [
            "DROP TABLE IF EXISTS env_versions",
        ],
    ),
    (
        5,
        "trials: drop outcome, reward, error_class (copies of result_json, read by nothing)",
        [
            lambda db: drop_columns(db, "trials", "outcome", "reward", "error_class"),
        ],
    ),
    (
        6,
        "runs.report_at: when runs.report_json last changed (qa serve rebuilds pages older than it)",
        [
            "ALTER TABLE runs ADD COLUMN report_at TEXT",
        ],
    ),
    (7, "configs: configurations by content hash (jobs name theirs by hash; schema.sql creates the table)", []),
    (
        8,
        "trials.worker, lease_until, heartbeat_at: who runs an attempt and until when, set with status and "
        "attempts in one transaction (issue 22: the store is the one truth about a trial)",
        [
            lambda db: add_columns(db, "trials", worker="TEXT", lease_until="TEXT", heartbeat_at="TEXT"),
        ],
    ),
    (
        9,
        "datasets, dataset_tasks: dataset runs (qa run PATH...) and their link to each task's run; schema.sql "
        "creates the tables",
        [],
    ),
    (
        10,
        "trials.source, source_path: imported trials (issue 33) say where they were read",
        [
            lambda db: add_columns(db, "trials", source="TEXT", source_path="TEXT"),
        ],
    ),
]

CREATE_MIGRATIONS = (
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
    "applied_at TEXT NOT NULL)"
)


def migrate(store, schema: str) -> list[int]:
    """Bring the store's database to the current schema; returns the migration numbers applied now."""
    applied = []
    with store.tx() as db:  # under the write lock: concurrent CREATE TABLEs race on Postgres otherwise
        db.execute(CREATE_MIGRATIONS)
        have = {r["version"] for r in db.execute("SELECT version FROM schema_migrations").fetchall()}
        for stmt in split_script(schema):
            db.execute(stmt)
        for number, name, statements in MIGRATIONS:
            if number in have:
                continue
            for step in statements:
                step(db) if callable(step) else db.execute(step)
            db.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?,?,?)",
                (number, name, utcnow().isoformat()),
            )
            applied.append(number)
    return applied


def schema_version(store) -> int:
    row = store._conn().execute("SELECT MAX(version) AS v FROM schema_migrations").fetchone()
    return int(row["v"] or 0)
