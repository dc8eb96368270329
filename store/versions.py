"""Immutable, content-addressed environment versions under `QA_HOME/envs/<version>/`.

A version id is the hash `load_environment(dir).version` computes, so the same files are the same
version wherever they came from: applying the same patch to the same parent twice lands on the same
snapshot (and the same image tag, so nothing is rebuilt). After `load` no graph node reads the user's
directory; every node loads `VersionStore.path(version)`. Snapshots are never modified after creation.

Patches are applied with `git apply` in a temporary copy, and refused (PatchError, exit 2) when they do
not apply, touch a path outside the task's own files, or leave something that no longer loads.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from envqa.core.config import QAConfig
from envqa.core.environment import Environment, content_hash, load_environment, version_env
from envqa.core.errors import InputError, PatchError
from envqa.core.models import VersionInfo
from envqa.core.patches import (
    HARBOR_DIRS,
    HARBOR_FILES,
    TB1_DIRS,
    TB1_FILES,
    confined_task_path,
    copy_task_files,
    git_env,
    make_diff,
    patch_paths,
    task_path_allowed,
)
from envqa.store.db import Store

__all__ = ["VersionStore", "confined_task_path", "make_diff", "patch_paths", "task_path_allowed"]


class VersionStore:
    def __init__(self, config: QAConfig, store: Store, *, loaded: Environment | None = None):
        """`loaded`: the user's task as the caller already loaded it (hashed and parsed: `qa run`'s up-front
        check), so that its snapshot reads the directory no further (one parse and one hash per version)."""
        self.config, self.store = config, store
        self.root = Path(config.home) / "envs"
        self._named: dict[str, Environment] = {}  # a snapshot never changes: loaded (and named) once per store
        self._loaded = loaded

    def path(self, version: str) -> Path:
        return self.root / version

    def get(self, version: str) -> VersionInfo:
        info = self.store.get_version(version)
        if info is None or not self.path(version).is_dir():
            raise InputError(str(self.path(version)), f"unknown version {version!r}")
        return info

    def load(self, version: str) -> Environment:
        """The version as an Environment under the task's own name: a snapshot's directory is named by its
        hash, but exploits guess passwords from the task's name and reports show it. A snapshot never changes,
        so its name is its hash: it is not hashed again, and parsed once per process (core/env_cache.py)."""
        named = self._named.get(version)
        if named is None:
            env = version_env(self.path(version), version)
            name = self.get(version).name
            named = self._named[version] = env.model_copy(update={"name": name}) if name else env
        return named

    def snapshot(
        self,
        src_dir: str | Path,
        *,
        author: str = "user",
        reason: str = "loaded",
        run_id: str | None = None,
        parent: str | None = None,
        patch: str | None = None,
    ) -> VersionInfo:
        """Copy a task directory into the store as a version (idempotent: same content, same version). The
        directory the store was handed `loaded` is not loaded again: its version is the one the caller checked
        (a copy that no longer hashes to it is refused by `_materialize`)."""
        env = self._loaded_at(src_dir) or load_environment(src_dir)
        if not self.path(env.version).is_dir():
            self._materialize(env.root, env.version)
        info = VersionInfo(version=env.version, parent=parent, patch=patch, author=author, reason=reason, name=env.name)
        return self.store.save_version(info, run_id)

    def _loaded_at(self, src_dir: str | Path) -> Environment | None:
        loaded = self._loaded
        return loaded if loaded is not None and loaded.root == Path(src_dir).resolve() else None

    def _materialize(self, src: Path, version: str) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.root))
        try:
            copy_task_files(src, tmp)
            got = content_hash(tmp)
            if got != version:
                raise RuntimeError(f"snapshot of {src} hashes to {got}, expected {version}")
            try:
                os.rename(tmp, self.path(version))
            except OSError:
                if not self.path(version).is_dir():  # a concurrent writer won the race with the same content
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def apply_patch(
        self, parent: str, diff: str, *, author: str, reason: str, run_id: str | None = None
    ) -> VersionInfo:
        """Apply a unified diff to `parent` and store the result as a new version (or find it already stored)."""
        parent_dir = self.path(parent)
        self.get(parent)
        where = f"patch on {parent[:12]}"
        if not diff.strip():
            raise PatchError(where, "the patch is empty")
        if not diff.endswith("\n"):
            diff += "\n"
        tb1 = (parent_dir / "task.yaml").is_file() and not (parent_dir / "task.toml").is_file()
        names = patch_paths(diff)
        if not names:
            raise PatchError(where, "not a unified diff: no file headers (--- a/PATH, +++ b/PATH) found")
        outside = [p for p in names if not task_path_allowed(p, tb1)]
        if outside:
            raise PatchError(
                where,
                f"touches {', '.join(outside)}, outside the task's files "
                f"({', '.join((TB1_FILES + TB1_DIRS) if tb1 else (HARBOR_FILES + HARBOR_DIRS))})",
            )
        if re.search(r"^(new file mode|new mode) 120000", diff, re.M):
            raise PatchError(where, "creates a symlink; a task version holds regular files only")
        self.root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".patch-", dir=self.root))
        try:
            tree = work / "task"
            copy_task_files(parent_dir, tree)
            proc = subprocess.run(
                ["git", "apply", "--whitespace=nowarn", "-p1", "-"],
                input=diff,
                text=True,
                cwd=tree,
                capture_output=True,
                env=git_env(tree),
            )
            if proc.returncode != 0:
                raise PatchError(where, f"does not apply: {proc.stderr.strip() or proc.stdout.strip()}")
            changed = patch_paths(make_diff(parent_dir, tree))
            stray = [p for p in changed if not task_path_allowed(p, tb1)]
            if stray:
                raise PatchError(where, f"changed {', '.join(stray)}, outside the task's files")
            if not changed:
                raise PatchError(where, "applies but changes nothing")
            try:
                env = load_environment(tree)
            except InputError as e:
                raise PatchError(
                    where, f"the patched task no longer loads: {e.problem} ({Path(e.path).name})"
                ) from None
            if not self.path(env.version).is_dir():
                self._materialize(tree, env.version)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        info = VersionInfo(
            version=env.version,
            parent=parent,
            patch=diff,
            author=author,
            reason=reason,
            name=self.get(parent).name or env.name,
        )  # a revision keeps the task's name
        return self.store.save_version(info, run_id)

    def diff(self, a: str, b: str) -> str:
        return make_diff(self.path(self.get(a).version), self.path(self.get(b).version))

    def export(self, version: str, dest: str | Path) -> Path:
        """Write a version as a normal task directory; `dest` must not exist or be empty."""
        self.get(version)
        dest = Path(dest)
        if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
            raise InputError(str(dest), "exists and is not an empty directory; choose a new destination")
        copy_task_files(self.path(version), dest)
        return dest

    def run_versions(self, run_id: str) -> list[VersionInfo]:
        return self.store.versions_for_run(run_id)

    def resolve(self, run_id: str, ref: str) -> str:
        """A full version id from a (unique) prefix among the run's versions."""
        known = [v.version for v in self.run_versions(run_id)]
        hits = [v for v in known if v.startswith(ref)]
        if len(hits) != 1:
            problem = "matches several versions" if hits else "is not a version of this run"
            raise InputError(run_id, f"{ref!r} {problem}; known: {', '.join(v[:12] for v in known) or 'none'}")
        return hits[0]

    def adopted(self, run_id: str) -> str | None:
        """The last adopted version of a run: the newest adopted proposal's candidate, else the loaded version."""
        for p in reversed(self.store.proposals_for_run(run_id)):
            if p.status == "adopted" and p.candidate_version:
                return p.candidate_version
        versions = self.run_versions(run_id)
        return versions[0].version if versions else None
