"""Files that must cross hosts when the store is Postgres and nothing else is shared: each trial's artifacts
(result.json, trajectory, verifier output, strace events) and the environment a trial runs.

Why in the store, compressed and capped, rather than an object store: the artifacts of a trial are small
text files (kilobytes to a few MB), they are written once by the worker that ran the trial and read by the
host that submitted it, and the store is already the one service every host reaches. Keeping them there
adds no service, no credentials and no second consistency story: a trial's files are uploaded BEFORE its
result is recorded, so "recorded" implies "files available" on every host. The caps keep a runaway log from
bloating the database; a capped file is kept truncated (its head) and marked, never silently dropped.

  upload_trial_artifacts   worker: the trial's directory -> `artifacts` rows (zlib, upsert)
  fetch_trial_artifacts    submitter: rows -> its own runs/<run>/<trial>/ (what the report reads)
  publish_environment      submitter: the task directory -> one tar.gz row in `env_bundles`, keyed by version
  environment_dir          worker: that row -> <its QA_HOME>/envs-cache/<version>/ (extracted once)
"""

from __future__ import annotations

import io
import os
import tarfile
import zlib
from pathlib import Path

from envqa.core.defaults import MAX_BUNDLE_BYTES, MAX_FILE_BYTES, MAX_TRIAL_BYTES
from envqa.core.models import utcnow

TRUNCATED_NOTE = b"\n[envqa: truncated to the first %d bytes of %d by the artifact store's cap]\n"


def upload_trial_artifacts(store, run_id: str, trial_id: str, trial_dir: Path) -> int:
    """Store every regular file under `trial_dir` (capped); returns the number of files stored."""
    rows, budget = [], MAX_TRIAL_BYTES
    for path in sorted(p for p in Path(trial_dir).rglob("*") if p.is_file() and not p.is_symlink()):
        if path.name.startswith(".") and ".tmp" in path.name:  # a half-written temp file (write_atomic)
            continue
        size = path.stat().st_size
        keep = max(0, min(size, MAX_FILE_BYTES, budget))
        with open(path, "rb") as f:
            data = f.read(keep)
        truncated = keep < size
        if truncated:
            data += TRUNCATED_NOTE % (keep, size)
        budget -= keep
        rows.append(
            (
                run_id,
                trial_id,
                path.relative_to(trial_dir).as_posix(),
                size,
                int(truncated),
                zlib.compress(data, 6),
                utcnow().isoformat(),
            )
        )
    with store.tx() as db:
        db.execute("DELETE FROM artifacts WHERE trial_id=?", (trial_id,))  # a retried trial replaces its files
        db.executemany(
            "INSERT INTO artifacts(run_id, trial_id, path, size, truncated, data, created_at) VALUES (?,?,?,?,?,?,?)",
            rows,
        )
    return len(rows)


def fetch_trial_artifacts(store, trial_id: str, trial_dir: Path) -> int:
    """Write the trial's stored files under `trial_dir` (those not there yet); returns the number written."""
    rows = (
        store._conn().execute("SELECT path, data FROM artifacts WHERE trial_id=? ORDER BY path", (trial_id,)).fetchall()
    )
    root = Path(trial_dir).resolve()
    written = 0
    for row in rows:
        dest = (root / row["path"]).resolve()
        if not dest.is_relative_to(root) or dest.exists():
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.fetch{os.getpid()}")
        tmp.write_bytes(zlib.decompress(bytes(row["data"])))
        os.replace(tmp, dest)
        written += 1
    return written


def artifact_paths(store, trial_id: str) -> list[str]:
    rows = store._conn().execute("SELECT path FROM artifacts WHERE trial_id=? ORDER BY path", (trial_id,))
    return [r["path"] for r in rows.fetchall()]


def publish_environment(store, root: Path, version: str) -> bool:
    """Store the task directory once per version; False when it was already there."""
    have = store._conn().execute("SELECT 1 FROM env_bundles WHERE version=?", (version,)).fetchone()
    if have:
        return False
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(str(root), arcname=".")
    data = buf.getvalue()
    if len(data) > MAX_BUNDLE_BYTES:
        from envqa.core.errors import InputError

        raise InputError(
            str(root),
            f"the task directory is {len(data)} bytes compressed; workers on other hosts "
            f"receive it through the store, capped at {MAX_BUNDLE_BYTES}",
        )
    with store.tx() as db:
        db.execute(
            "INSERT INTO env_bundles(version, size, data, created_at) VALUES (?,?,?,?) ON CONFLICT DO NOTHING",
            (version, len(data), data, utcnow().isoformat()),
        )
    return True


def environment_dir(store, version: str, cache_root: Path) -> Path | None:
    """The task directory of `version` on this host, extracted from the store once; None if not stored."""
    dest = Path(cache_root) / version
    if dest.is_dir():  # only ever renamed into place complete
        return dest
    row = store._conn().execute("SELECT data FROM env_bundles WHERE version=?", (version,)).fetchone()
    if row is None:
        return None
    tmp = dest.with_name(f".{version}.{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(bytes(row["data"])), mode="r:gz") as tar:
        tar.extractall(tmp, filter="data")  # no absolute paths, no escaping links
    try:
        os.replace(tmp, dest)
    except OSError:  # another worker on this host extracted it first
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def for_this_host(store, config, env_dir: str, version: str):
    """(config, env_dir) a job from any host runs with here. With a shared (Postgres) store nothing else is
    shared: the trial's files go under THIS host's QA_HOME (then into the store), and the environment comes
    from the store by version. With SQLite (one machine) both stay as the submitter wrote them."""
    if not store.shared:
        return config, env_dir
    home = Path(os.environ.get("QA_HOME", ".qa")).resolve()
    local = environment_dir(store, version, home / "envs-cache")
    return config.model_copy(update={"home": home}), str(local) if local is not None else env_dir


def trial_files_here(store, config, trial):
    """`trial` (a TrialResult) with an `artifacts_dir` readable on this host. A trial that ran on another host
    recorded that host's directory: its files come from the store into `config`'s runs dir (pass the config
    `for_this_host` gave). With SQLite, or when the recorded directory is here, the trial is unchanged."""
    if not store.shared or (trial.artifacts_dir and Path(trial.artifacts_dir).is_dir()):
        return trial
    here = Path(config.runs_dir) / trial.run_id / trial.trial_id
    fetch_trial_artifacts(store, trial.trial_id, here)
    return trial.model_copy(update={"artifacts_dir": str(here)})
