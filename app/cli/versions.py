"""`qa diff` and `qa export`: read a run's versions from the store.

The store and the environment loader are imported when one of these commands runs, not when `qa` starts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from envqa.app.cli.common import cli_config, fail
from envqa.core.config import QAConfig
from envqa.core.errors import EnvQAError, InputError

if TYPE_CHECKING:
    from envqa.store.versions import VersionStore


def diff(
    run_id: str = typer.Argument(..., help="the run whose versions to compare"),
    a: str | None = typer.Argument(None, help="version (or unique prefix); default: B's parent"),
    b: str | None = typer.Argument(None, help="version (or unique prefix); default: the run's newest"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
) -> None:
    """Print the unified diff between two versions of a run's environment."""
    try:
        raise typer.Exit(diff_versions(cli_config(config, {}), run_id, a, b, as_json))
    except EnvQAError as e:
        fail(e, as_json)


def export(
    run_id: str = typer.Argument(..., help="the run whose version to export"),
    dest: Path = typer.Argument(..., help="new (or empty) directory to write the task to"),
    version: str | None = typer.Option(None, "--version", help="version (or prefix); default: last adopted"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
) -> None:
    """Write a version of the run's environment as a normal task directory."""
    try:
        raise typer.Exit(export_version(cli_config(config, {}), run_id, dest, version, as_json))
    except EnvQAError as e:
        fail(e, as_json)


def _open(config: QAConfig, run_id: str) -> VersionStore:
    from envqa.store.db import Store
    from envqa.store.postgres import store_exists
    from envqa.store.versions import VersionStore

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
    from envqa.core.environment import load_environment

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
