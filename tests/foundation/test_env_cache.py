"""Load once (issue 32 item 3): an environment version is parsed once per process, keyed by its content hash,
and parsed anew when its content changes (core/env_cache.py, core/environment.py `load_environment`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from envqa.core.environment import PARSED, load_environment
from envqa.core.errors import InputError
from qa_testkit import EXAMPLES

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


@pytest.fixture
def fresh_cache():
    """Each test counts its own parses: the process-wide cache starts empty (and is left empty)."""
    PARSED.clear()
    yield PARSED
    PARSED.clear()


def _copy(name: str, dest: Path) -> Path:
    return Path(shutil.copytree(EXAMPLES / name, dest))


def test_same_content_is_parsed_once_and_an_edit_is_parsed_anew(tmp_path, fresh_cache):
    task = _copy("clean-wordfreq", tmp_path / "task")
    start = fresh_cache.parses
    first = load_environment(task)
    again = load_environment(task)
    assert fresh_cache.parses - start == 1
    assert again is first

    (task / "instruction.md").write_text((task / "instruction.md").read_text() + "\nAlso count digits.\n")
    edited = load_environment(task)
    assert fresh_cache.parses - start == 2
    assert edited.version != first.version
    assert edited.instruction.endswith("Also count digits.\n")
    assert load_environment(task) is edited  # the revision is cached in its turn

    # reverting the edit is the first version's content again: no parse, the first version back
    (task / "instruction.md").write_text(first.instruction)
    assert load_environment(task).version == first.version
    assert fresh_cache.parses - start == 2


def test_a_copy_elsewhere_is_not_parsed_again_and_equals_its_own_parse(tmp_path, fresh_cache):
    """The user's directory and its snapshot hold the same files: the second is the first's parse, moved."""
    a = _copy("clean-wordfreq", tmp_path / "a")
    b = _copy("clean-wordfreq", tmp_path / "elsewhere" / "b")
    load_environment(a)
    moved = load_environment(b)
    assert fresh_cache.parses == 1
    assert moved.root == b.resolve() and moved.name == "b"
    assert moved.dockerfile == b.resolve() / "environment" / "Dockerfile"
    fresh_cache.clear()
    parsed_there = load_environment(b)
    assert fresh_cache.parses == 1
    assert moved.model_dump() == parsed_there.model_dump()


def test_a_moved_parse_renames_paths_in_warnings_and_steps(tmp_path, fresh_cache):
    """A task with an unknown key (its warning names task.toml's path) and a TB1 task move like a fresh parse."""
    a = _copy("clean-wordfreq", tmp_path / "a")
    toml = a / "task.toml"
    toml.write_text(toml.read_text() + "\nunknown_top_level_key = 1\n")
    b = Path(shutil.copytree(a, tmp_path / "b"))
    assert load_environment(a).warnings
    moved = load_environment(b)
    fresh_cache.clear()
    assert moved.model_dump() == load_environment(b).model_dump()
    assert all(w.file == str(b.resolve() / "task.toml") for w in moved.warnings)


def test_a_symlink_with_the_same_bytes_is_not_served_the_cached_parse(tmp_path, fresh_cache):
    """The content hash reads through a symlink, the parse refuses a symlinked solve.sh: same hash, other
    verdict, so the key holds the symlinks too."""
    good = _copy("clean-wordfreq", tmp_path / "good")
    linked = _copy("clean-wordfreq", tmp_path / "linked")
    solve = linked / "solution" / "solve.sh"
    solve.unlink()
    solve.symlink_to(good / "solution" / "solve.sh")
    env = load_environment(good)
    with pytest.raises(InputError, match=r"solve\.sh"):
        load_environment(linked)
    assert env.version  # the good one still loads from the cache
    assert load_environment(good) is env


def test_a_snapshot_named_by_its_version_is_not_hashed_again(tmp_path, fresh_cache, monkeypatch):
    import envqa.core.environment as environment

    snap = _copy("clean-wordfreq", tmp_path / "snap")
    version = load_environment(snap).version
    hashed = []
    real = environment.content_hash
    monkeypatch.setattr(environment, "content_hash", lambda *a, **k: hashed.append(a) or real(*a, **k))
    assert load_environment(snap, version=version).version == version
    assert hashed == [] and fresh_cache.parses == 1


def test_lint_and_run_loads_are_kept_apart(tmp_path, fresh_cache):
    """`qa lint` loads an empty instruction that `qa run` refuses: the lenient parse never serves a run."""
    task = _copy("clean-wordfreq", tmp_path / "task")
    (task / "instruction.md").write_text("")
    assert load_environment(task, lint=True).instruction == ""
    with pytest.raises(InputError, match="empty"):
        load_environment(task)


def test_one_run_on_the_fake_backend_parses_its_environment_once(tmp_path, fresh_cache):
    """A whole `qa run` (the CLI's runner, the snapshot, every graph node, every trial and probe job, in
    process): the environment is parsed once. Before issue 32 the same run parsed it at every step."""
    from envqa.app.runner import execute_run
    from envqa.core.config import load_config
    from tests.fake_tasks import use_backend, wordfreq_backend

    task = _copy("clean-wordfreq", tmp_path / "clean-wordfreq")
    config = load_config(
        None,
        {"home": str(tmp_path / "home"), "sandbox.backend": use_backend(wordfreq_backend()), "scheduler.mode": "local"},
    )
    report = execute_run(task, config, "run-load-once", quiet=True, approval_mode="auto")
    assert report["verdict"] == "clean"
    assert len(report["trials"]) >= 5
    assert fresh_cache.parses == 1


def test_qa_run_from_the_command_line_reads_its_version_once(tmp_path, fresh_cache, monkeypatch, keep_logging):
    """`qa run` as a user types it, in this process (the CLI's up-front check, the runner, the snapshot, every
    graph node, trial and probe job): the task is parsed once, its directory hashed once, its task model built
    once. Before, the CLI and the runner each parsed it again to check it (three parses). Counted by wrapping
    the parse and the hash, which still run."""
    import json
    from collections import Counter

    from typer.testing import CliRunner

    import envqa.core.environment as environment
    import envqa.store.versions as versions
    from envqa.app.cli import app
    from envqa.core.task_model.model import MODELS
    from tests.fake_tasks import use_backend, wordfreq_backend

    task = _copy("clean-wordfreq", tmp_path / "clean-wordfreq").resolve()
    qa_toml = tmp_path / "qa.toml"
    qa_toml.write_text(
        f'home = "{tmp_path / "home"}"\n[sandbox]\nbackend = "{use_backend(wordfreq_backend())}"\n'
        '[scheduler]\nmode = "local"\n'
    )
    monkeypatch.delenv("REDIS_URL", raising=False)
    parsed: Counter[Path] = Counter()
    hashed: Counter[Path] = Counter()
    real_parse, real_hash = environment._parse, environment.content_hash

    def counted_parse(root, *a, **k):
        parsed[Path(root)] += 1
        return real_parse(root, *a, **k)

    def counted_hash(root, *a, **k):
        hashed[Path(root)] += 1
        return real_hash(root, *a, **k)

    monkeypatch.setattr(environment, "_parse", counted_parse)
    monkeypatch.setattr(environment, "content_hash", counted_hash)
    monkeypatch.setattr(versions, "content_hash", counted_hash)  # the snapshot's check of its copy
    MODELS.clear()

    res = CliRunner().invoke(app, ["run", str(task), "-c", str(qa_toml), "--approval", "auto", "--json"])
    assert res.exit_code == 0, res.output[-3000:]
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert report["verdict"] == "clean" and len(report["trials"]) >= 5
    assert parsed == Counter({task: 1})  # one parse in the whole process, of the user's directory
    assert hashed[task] == 1
    # the only other hash: the fresh snapshot's copy, checked against the version it is named by
    assert [p.parent.name for p in hashed if p != task] == ["envs"] and sum(hashed.values()) == 2
    assert MODELS.builds == 1 and fresh_cache.parses == 1
