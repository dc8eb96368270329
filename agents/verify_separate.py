"""Separate verifier mode: the verifier runs in a fresh container of its own, as Harbor runs it.

`[verifier] environment_mode = "separate"` (or a `[verifier.environment]` table) means the agent's container
is only a source of evidence: after the agent phase its artifacts (`/logs/artifacts`, Harbor's convention
directory, and every declared `artifacts` entry) are downloaded to the trial's `artifacts/`; the verifier's
image is built from `tests/Dockerfile` (which bundles the tests, as Harbor's template does with
`COPY . /tests/`) or, without one, from the task's own environment; a fresh container of it receives the
artifacts at their original container paths (plus tests/ at /tests when they are not bundled) and runs
test.sh; its `/logs/verifier` is the only place the reward is read from. The agent's container has no
`/logs/verifier` at all (agents/phases.py `container_spec`, which also builds the verifier's container spec;
its network is agents/phases.py `verifier_network`'s).

Followed: harbor 0.26.0 `harbor/trial/single_step.py` (`_run`: agent, collect, verify in separate mode),
`harbor/trial/trial.py` (`_run_separate_verifier`, `_separate_verifier_env`), `harbor/trial/artifact_handler.py`
(`upload_artifacts`: every entry re-materialized at its `source` path, the convention entry at the verifier's
convention dir, through a sanitizing tar), `harbor/models/task/verifier_mode.py`
(`resolve_verifier_environment_definition`: tests/Dockerfile bundles the tests, else the task's environment)
and `harbor/models/task/artifacts.py` (`with_convention_entry`, `source_relative_path`).
Differences, and why:
- Harbor bind-mounts the host's verifier dir into the agent's container too (and empties it before the
  verifier); we do not create `/logs/verifier` in the agent's container, so nothing the agent writes there can
  ever be read (the issue asks for it not to be mounted).
- The verifier's image is built through the same `SandboxBackend.ensure_image` as the agent's (image map
  applied, never pulled); a prebuilt `[verifier.environment] docker_image` is refused as infra, since we
  never pull.
- Its network is `none` unless the task's verifier asks for a network and `[sandbox]` allows one
  (`verifier_network`, `default_network`); allowlists are not proxied for the verifier container yet.
- Sidecar (`service = ...`) artifacts and per-step separate verifiers are not collected here (compose and
  multi-step runtimes are other modules).
"""

from __future__ import annotations

import fnmatch
import json
import shutil
from pathlib import Path, PurePosixPath

from envqa.agents.collect_hooks import run_collect_hooks
from envqa.agents.phases import AGENT_DIRS, ARTIFACTS_DIR, Role, VerifierOutcome, container_spec, run_in_place, separate
from envqa.core.config import QAConfig
from envqa.core.environment import Environment, content_hash
from envqa.core.errors import InfraError
from envqa.core.sandbox import Sandbox, SandboxBackend
from envqa.core.task_config import MAIN_SERVICE, ArtifactConfig, VerifierEnvironmentMode, artifact_entries

__all__ = ["AGENT_DIRS", "ARTIFACTS_DIR", "collect_artifacts", "run_separate_verifier", "separate"]


def declared_artifacts(env: Environment) -> list[ArtifactConfig]:
    """artifacts.py `with_convention_entry`: the declared main-service entries, after /logs/artifacts unless
    an entry declares it itself (with its own excludes)."""
    entries = [a for a in artifact_entries(env.config.artifacts) if (a.service or MAIN_SERVICE) == MAIN_SERVICE]
    if not any(a.source.rstrip("/") == ARTIFACTS_DIR for a in entries):
        entries.insert(0, ArtifactConfig(source=ARTIFACTS_DIR))
    return entries


def _relative(artifact: ArtifactConfig) -> PurePosixPath:
    """artifacts.py `source_relative_path`: where an entry lands under the trial's artifacts/."""
    parts = [p for p in PurePosixPath(artifact.destination or artifact.source).parts if p not in ("", "/", "..")]
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


def _excluded(rel: str, patterns: list[str]) -> bool:
    """`tar --exclude` as Harbor passes it: a pattern matches the relative path or any of its components."""
    return any(
        fnmatch.fnmatch(rel, p)
        or fnmatch.fnmatch(rel, f"*/{p}")
        or any(fnmatch.fnmatch(part, p) for part in rel.split("/"))
        for p in patterns
    )


def _drop_excluded(root: Path, patterns: list[str]) -> None:
    for path in sorted(root.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if _excluded(path.relative_to(root).as_posix(), patterns):
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink(missing_ok=True)


def collect_artifacts(sandbox: Sandbox, env: Environment, trial_dir: Path) -> list[tuple[Path, str]]:
    """Download every artifact from the agent's container into `trial_dir/artifacts/` (a manifest.json beside
    them, as Harbor writes); returns (host copy, container path the verifier gets it at) pairs. A missing
    source is recorded, not an error (Harbor: best effort). The download's tar `data` filter drops links that
    leave the artifact and setuid bits, as Harbor's `copy_via_tar` does."""
    out_dir = trial_dir / "artifacts"
    shutil.rmtree(out_dir, ignore_errors=True)
    staging = trial_dir / ".artifacts-staging"
    shutil.rmtree(staging, ignore_errors=True)
    out_dir.mkdir(parents=True)
    manifest, pairs = [], []
    for i, artifact in enumerate(declared_artifacts(env)):
        source = artifact.source.rstrip("/") or "/"
        dest = out_dir / _relative(artifact)
        entry = {"source": artifact.source, "destination": f"artifacts/{_relative(artifact).as_posix()}"}
        if not sandbox.download(source, staging / str(i)):
            manifest.append({**entry, "status": "missing"})
            continue
        got = staging / str(i) / (PurePosixPath(source).name or "root")
        if not got.exists() and not got.is_symlink():
            manifest.append({**entry, "status": "failed"})
            continue
        if got.is_dir() and artifact.exclude:
            _drop_excluded(got, artifact.exclude)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            shutil.rmtree(dest) if dest.is_dir() else dest.unlink()
        shutil.move(str(got), str(dest))
        manifest.append({**entry, "type": "directory" if dest.is_dir() else "file", "status": "ok"})
        pairs.append((dest, source))
    shutil.rmtree(staging, ignore_errors=True)
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return pairs


def verifier_image_env(env: Environment) -> tuple[Environment, bool]:
    """(the Environment the verifier's image is built from, whether its image bundles the tests).

    verifier_mode.py `resolve_verifier_environment_definition`: tests/ with a Dockerfile is the build context
    (tests bundled), else the task's environment/ (tests uploaded). Its limits are `[verifier.environment]`,
    else a copy of `[environment]`."""
    vconf = env.config.verifier_environment() or env.config.environment
    if vconf.docker_image:
        raise InfraError(
            f"[verifier.environment] docker_image = {vconf.docker_image!r}: qa never pulls images; "
            "give the verifier a tests/Dockerfile",
            "image_build_failed",
        )
    config = env.config.model_copy(update={"environment": vconf})
    tests_dir = env.root / "tests"
    if (tests_dir / "Dockerfile").is_file():
        return env.model_copy(
            update={
                "config": config,
                "build_context": tests_dir,
                "dockerfile": tests_dir / "Dockerfile",
                "version": "verifier-" + content_hash(tests_dir),
            }
        ), True
    return env.model_copy(update={"config": config}), False


def _as_shared(env: Environment, bundled: bool) -> Environment:
    """The task as the verifier container sees it: a shared-mode verifier in its own container."""
    verifier = env.config.verifier.model_copy(
        update={"environment_mode": VerifierEnvironmentMode.SHARED, "environment": None}
    )
    update: dict[str, object] = {"config": env.config.model_copy(update={"verifier": verifier})}
    if bundled:
        update["tests"] = []  # the image carries /tests (harbor: skip_tests_upload)
    return env.model_copy(update=update)


def run_separate_verifier(
    sandbox: Sandbox,
    env: Environment,
    trial_dir: Path,
    timeout: float | None,
    *,
    backend: SandboxBackend,
    config: QAConfig,
) -> VerifierOutcome:
    """Collect the agent container's artifacts, start a fresh verifier container on `backend` (the one the trial
    ran on), hand them over, run the verifier there and read its reward. Raises ImageBuildError when the
    verifier's image does not build, InfraError when it cannot start."""
    trial_dir = Path(trial_dir)
    (trial_dir / "verifier").mkdir(parents=True, exist_ok=True)
    if env.config.verifier.collect:  # Harbor: hooks snapshot services' state into files, before collection
        run_collect_hooks(sandbox, env.config.verifier.collect)
    pairs = collect_artifacts(sandbox, env, trial_dir)
    build_env, bundled = verifier_image_env(env)
    image, _built = backend.ensure_image(build_env)
    labels = {**getattr(sandbox.spec, "labels", {}), "envqa.role": "verifier"}
    with backend.start(container_spec(env, image, config, labels, Role.VERIFIER)) as verifier_box:
        for host, target in pairs:
            verifier_box.upload(host, target)
        return run_in_place(verifier_box, _as_shared(env, bundled), trial_dir, timeout)
