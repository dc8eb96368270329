"""`qa diff` and `qa export`: read a run's versions from the store (the CLI stays a thin wrapper)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from envqa.core.config import QAConfig
from envqa.core.environment import load_environment
from envqa.core.errors import InputError
from envqa.store.db import Store
from envqa.store.postgres import store_exists
from envqa.store.versions import VersionStore


def _open(config: QAConfig, run_id: str) -> VersionStore:
    if not store_exists(config.db_path):
        raise InputError(str(config.db_path), f"no run with id {run_id!r} (no state database here)")
    store = Store(config.db_path)
    if store.get_run(run_id) is None and not store.versions_for_run(run_id):
        raise InputError(str(config.db_path), f"no run with id {run_id!r}")
    vs = VersionStore(config, store)
    if not vs.run_versions(run_id):
        raise InputError(str(config.db_path), f"run {run_id!r} has no stored versions (it predates versioning)")
    return vs


def diff_versions(config: QAConfig, run_id: str, a: str | None, b: str | None, as_json: bool) -> int:
    """Default B: the run's newest version; default A: B's parent (or the run's first version)."""
    vs = _open(config, run_id)
    versions = vs.run_versions(run_id)
    vb = vs.resolve(run_id, b) if b else versions[-1].version
    if a:
        va = vs.resolve(run_id, a)
    else:
        va = vs.get(vb).parent or versions[0].version
    text = vs.diff(va, vb)
    if as_json:
        info = vs.get(vb)
        sys.stdout.write(
            json.dumps({"run_id": run_id, "a": va, "b": vb, "author": info.author, "reason": info.reason, "diff": text})
            + "\n"
        )
    else:
        sys.stdout.write(text or f"(no difference between {va[:12]} and {vb[:12]})\n")
    return 0


def export_version(config: QAConfig, run_id: str, dest: Path, version: str | None, as_json: bool) -> int:
    """Default: the run's last adopted version (the loaded one until a revision is adopted)."""
    vs = _open(config, run_id)
    v = vs.resolve(run_id, version) if version else vs.adopted(run_id)
    vs.export(v, dest)
    loaded = load_environment(dest).version
    if as_json:
        sys.stdout.write(
            json.dumps({"run_id": run_id, "version": v, "dir": str(Path(dest).resolve()), "loaded_version": loaded})
            + "\n"
        )
    else:
        sys.stdout.write(f"exported {v[:12]} to {dest}\n")
    return 0
