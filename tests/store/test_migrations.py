"""A database written by the 0.1 schema (no schema_migrations table) upgrades in place, on both backends."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from envqa.core.models import Outcome, TrialResult
from envqa.store.db import Store
from envqa.store.migrations import MIGRATIONS, migrate, schema_version
from envqa.store.postgres import split_script, translate

OLD_SCHEMA = (Path(__file__).parent / "schema_0_1.sql").read_text()
OLD_ROWS = [
    (
        "INSERT INTO runs(run_id, env_dir, status, verdict, created_at, report_json) VALUES (?,?,?,?,?,?)",
        ("old-run", "/envs/old", "finished", "clean", "2026-01-01T00:00:00+00:00", '{"verdict": "clean"}'),
    ),
    (
        "INSERT INTO trials(trial_id, run_id, env_version, agent, status, outcome, reward, attempts, result_json, "
        "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (
            "old-trial",
            "old-run",
            "v0",
            "oracle",
            "done",
            "pass",
            1.0,
            1,
            TrialResult(
                trial_id="old-trial",
                run_id="old-run",
                env_version="v0",
                agent="oracle",
                outcome=Outcome.PASS,
                reward=1.0,
            ).model_dump_json(),
            "2026-01-01T00:00:00+00:00",
            "2026-01-01T00:00:00+00:00",
        ),
    ),
    (
        "INSERT INTO findings(run_id, rule, label, severity, finding_json, created_at) VALUES (?,?,?,?,?,?)",
        (
            "old-run",
            "r",
            "brittleness",
            "warning",
            '{"rule": "r", "label": "brittleness", "severity": "warning", "message": "old"}',
            "2026-01-01T00:00:00+00:00",
        ),
    ),
]


def _old_sqlite(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA)
    for sql, args in OLD_ROWS:
        db.execute(sql, args)
    db.commit()
    db.close()
    return path


def _old_postgres(url: str) -> str:
    with psycopg.connect(url, autocommit=True) as db:
        for stmt in split_script(OLD_SCHEMA):
            db.execute(translate(stmt).replace("%%", "%"))
        for sql, args in OLD_ROWS:
            db.execute(translate(sql), args)
    return url


@pytest.fixture(params=[pytest.param("sqlite", marks=pytest.mark.fast), "postgres"])  # SQLite: the fast tier
def old_database(request, tmp_path, monkeypatch):
    monkeypatch.delenv("QA_STORE_URL", raising=False)
    if request.param == "sqlite":
        return _old_sqlite(tmp_path / "envqa.db")
    return _old_postgres(request.getfixturevalue("pg_url"))


def test_a_database_from_the_previous_release_upgrades_in_place(old_database):
    store = Store(old_database)
    assert schema_version(store) == MIGRATIONS[-1][0]
    names = [r["name"] for r in store._conn().execute("SELECT name FROM schema_migrations ORDER BY version")]
    assert len(names) == len(MIGRATIONS)
    # the old rows are all there and readable through today's methods
    assert store.get_run("old-run")["verdict"] == "clean"
    assert store.get_trial("old-trial").reward == 1.0
    assert [f.message for f in store.findings_for_run("old-run")] == ["old"]
    # and the new tables work on the upgraded database
    store.mark_trial_queued("new-trial", "old-run", "v1", "oracle", None, "validate", "{}")
    assert store.record_trial(
        TrialResult(
            trial_id="new-trial", run_id="old-run", env_version="v1", agent="oracle", outcome=Outcome.FAIL, reward=0.0
        )
    )
    store.record_approval("old-run", "p1", "approve", "alice")
    store._conn().execute(
        "INSERT INTO artifacts(run_id, trial_id, path, size, data, created_at) VALUES (?,?,?,?,?,?)",
        ("old-run", "new-trial", "result.json", 2, b"{}", "now"),
    )
    # opening again (another process, a restart) applies nothing twice
    assert migrate(Store(old_database), "") == []
    assert len(store.trials_for_run("old-run")) == 2


def _columns(store, table: str) -> set[str]:
    return {d[0] for d in store._conn().execute(f"SELECT * FROM {table} LIMIT 0").description}


def test_one_truth_migrations_drop_the_copies_and_keep_the_results(old_database):
    """Migrations 4 and 5: env_versions (never read) and the trial columns copied from result_json are gone;
    the old trial's outcome and reward are still there, in its result."""
    store = Store(old_database)
    assert _has_table(store, "trials") and not _has_table(store, "env_versions")
    assert not {"outcome", "reward", "error_class"} & _columns(store, "trials")
    old = store.get_trial("old-trial")
    assert (old.outcome, old.reward) == (Outcome.PASS, 1.0)


@pytest.mark.fast
def test_a_new_store_never_has_the_copied_columns(tmp_path, monkeypatch):
    monkeypatch.delenv("QA_STORE_URL", raising=False)
    store = Store(tmp_path / "envqa.db")
    assert {"trial_id", "status", "result_json", "spec_json"} <= _columns(store, "trials")
    assert not {"outcome", "reward", "error_class"} & _columns(store, "trials")
    assert not _has_table(store, "env_versions")


def _has_table(store, name: str) -> bool:
    try:
        store._conn().execute(f"SELECT 1 FROM {name} LIMIT 0")
        return True
    except (sqlite3.OperationalError, psycopg.errors.UndefinedTable):
        return False
