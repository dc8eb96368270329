-- The store's tables as a new database gets them (store/db.py runs this script, then store/migrations.py the
-- numbered migrations this shape does not express yet). Every statement is `IF NOT EXISTS`: on an existing
-- database it changes nothing, so changes to an existing table go in a migration, never here alone.
-- Written in SQLite's dialect; store/postgres.py translates it for Postgres. No `;` inside literals.

-- runs.report_json is THE report: report.json in the run directory is an export of it (app/report_html).
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, env_dir TEXT NOT NULL, env_name TEXT, env_version TEXT,
    status TEXT NOT NULL, verdict TEXT, created_at TEXT NOT NULL, finished_at TEXT, report_json TEXT
);
-- One row per trial, from the moment it is queued. result_json is THE trial result (TrialResult); the other
-- columns say which job the row is and where it stands, set from the spec when it is queued, before any
-- result exists: env_version/agent/model/purpose name the job (operators and tests select by them),
-- status (queued|running|done)/attempts/spec_json drive the scheduler's reconcile; worker/lease_until/
-- heartbeat_at say who runs the current attempt, until when (set with status and attempts, one transaction);
-- source (qa|imported) and source_path say where an imported trial was read (issue 33). Nothing the result alone knows (outcome,
-- reward, error class) is copied into a column: migration 5 dropped those copies.
CREATE TABLE IF NOT EXISTS trials (
    trial_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, env_version TEXT NOT NULL, agent TEXT NOT NULL,
    model TEXT, purpose TEXT, status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, spec_json TEXT, result_json TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    worker TEXT, lease_until TEXT, heartbeat_at TEXT,
    source TEXT, source_path TEXT
);
CREATE INDEX IF NOT EXISTS trials_by_run ON trials(run_id, status);
CREATE TABLE IF NOT EXISTS findings (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, rule TEXT NOT NULL, label TEXT NOT NULL,
    severity TEXT NOT NULL, finding_json TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS image_builds (
    tag TEXT NOT NULL, env_version TEXT NOT NULL, built_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS versions (
    version TEXT PRIMARY KEY, parent TEXT, patch TEXT, author TEXT NOT NULL, reason TEXT, name TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_versions (
    run_id TEXT NOT NULL, version TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (run_id, version)
);
CREATE TABLE IF NOT EXISTS calls (
    call_id TEXT PRIMARY KEY, queue TEXT NOT NULL, status TEXT NOT NULL, result_json TEXT, error_class TEXT,
    error_message TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS proposals (
    proposal_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, parent_version TEXT NOT NULL, candidate_version TEXT,
    status TEXT NOT NULL, proposal_json TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS labels (
    trial_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, env_version TEXT, model TEXT, label TEXT NOT NULL,
    subtype TEXT, source TEXT NOT NULL, label_json TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS labels_by_run ON labels(run_id);
CREATE TABLE IF NOT EXISTS regression_exploits (
    exploit_id TEXT PRIMARY KEY, env_name TEXT NOT NULL, run_id TEXT NOT NULL, env_version TEXT NOT NULL,
    source_trial_id TEXT NOT NULL, exploit_json TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS approvals (
    run_id TEXT NOT NULL, proposal_id TEXT NOT NULL, action TEXT NOT NULL, approver TEXT NOT NULL, reason TEXT,
    patch TEXT, decided_at TEXT NOT NULL, PRIMARY KEY (run_id, proposal_id)
);
CREATE TABLE IF NOT EXISTS version_findings (
    run_id TEXT NOT NULL, version TEXT NOT NULL, findings_json TEXT NOT NULL, summary_json TEXT NOT NULL,
    created_at TEXT NOT NULL, PRIMARY KEY (run_id, version)
);
CREATE TABLE IF NOT EXISTS run_loop (
    run_id TEXT PRIMARY KEY, approval_mode TEXT, iteration INTEGER NOT NULL DEFAULT 0, version TEXT,
    band_call TEXT, stop_reason TEXT, pending_proposal TEXT, config_json TEXT, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS notifications (
    run_id TEXT NOT NULL, kind TEXT NOT NULL, dedupe_key TEXT NOT NULL, status TEXT NOT NULL, detail TEXT,
    created_at TEXT NOT NULL, PRIMARY KEY (run_id, kind, dedupe_key)
);
CREATE TABLE IF NOT EXISTS slack_messages (
    run_id TEXT NOT NULL, ref TEXT NOT NULL, channel TEXT NOT NULL, ts TEXT NOT NULL, created_at TEXT NOT NULL,
    PRIMARY KEY (run_id, ref)
);
-- Configurations by content hash: a job names the config it runs with by hash instead of carrying it (migration 7).
CREATE TABLE IF NOT EXISTS configs (
    config_hash TEXT PRIMARY KEY, config_json TEXT NOT NULL, created_at TEXT NOT NULL
);
-- Dataset runs (issue 25, migration 9): `qa run PATH...`; dataset_tasks links the dataset to each task's run.
CREATE TABLE IF NOT EXISTS datasets (
    dataset_id TEXT PRIMARY KEY, paths_json TEXT NOT NULL, options_json TEXT, config_json TEXT, status TEXT NOT NULL,
    exit_code INTEGER, report_json TEXT, report_at TEXT, created_at TEXT NOT NULL, finished_at TEXT
);
CREATE TABLE IF NOT EXISTS dataset_tasks (
    dataset_id TEXT NOT NULL, path TEXT NOT NULL, name TEXT NOT NULL, position INTEGER NOT NULL, run_id TEXT,
    status TEXT NOT NULL, row_json TEXT, updated_at TEXT NOT NULL, PRIMARY KEY (dataset_id, path)
);
CREATE INDEX IF NOT EXISTS dataset_tasks_by_run ON dataset_tasks(run_id);
