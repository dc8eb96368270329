"""Versions are content-addressed snapshots; patches are confined to the task; diff/export round-trip."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from envqa.core.environment import load_environment
from envqa.core.errors import PatchError
from envqa.store.db import Store
from envqa.store.versions import VersionStore, make_diff
from qa_testkit import EXAMPLES
from tests.reviser.conftest import write_task

CLARIFY = """--- a/instruction.md
+++ b/instruction.md
@@ -1 +1 @@
-Write /app/out.txt containing hello.
+Write /app/out.txt containing exactly `hello` (no trailing newline needed).
"""


@pytest.fixture
def versions(qa_config):
    qa_config.home.mkdir(parents=True, exist_ok=True)
    return VersionStore(qa_config, Store(qa_config.db_path))


def test_same_patch_on_same_parent_is_the_same_version_and_builds_nothing(versions, tmp_path, docker_backend):
    task = write_task(tmp_path / "task")
    v0 = versions.snapshot(task, run_id="r1")
    assert v0.version == load_environment(task).version
    v1 = versions.apply_patch(v0.version, CLARIFY, author="human:ann", reason="clarify", run_id="r1")
    again = versions.apply_patch(v0.version, CLARIFY, author="fixer:other", reason="again", run_id="r1")
    assert again.version == v1.version != v0.version
    assert again.author == "human:ann"  # the first record of a version wins; nothing is rewritten
    assert (task / "instruction.md").read_text() == "Write /app/out.txt containing hello.\n"  # user dir untouched
    # a snapshot's directory is named by its hash; the version still loads under the task's own name
    assert versions.path(v1.version).name == v1.version
    assert versions.load(v1.version).name == versions.load(v0.version).name == load_environment(task).name
    env = load_environment(versions.path(v1.version))
    _tag, built = docker_backend.ensure_image(env)
    _tag2, built_again = docker_backend.ensure_image(load_environment(versions.path(again.version)))
    assert built_again is False


@pytest.mark.fast
@pytest.mark.parametrize(
    "diff, problem",
    [
        ("--- a/Makefile\n+++ b/Makefile\n@@ -0,0 +1 @@\n+x\n", "outside the task's files"),
        ("--- a/tests/../../evil.sh\n+++ b/tests/../../evil.sh\n@@ -0,0 +1 @@\n+x\n", "outside the task's files"),
        ("--- a/tests/test.sh\n+++ b/tests/test.sh\n@@ -1 +1 @@\n-no such line\n+x\n", "does not apply"),
        ("just some prose", "not a unified diff"),
    ],
)
def test_bad_patches_are_refused_with_a_clear_message(versions, tmp_path, diff, problem):
    v0 = versions.snapshot(write_task(tmp_path / "task"))
    before = sorted(p.name for p in versions.root.iterdir())
    with pytest.raises(PatchError) as e:
        versions.apply_patch(v0.version, diff, author="model:x/y", reason="r")
    assert problem in str(e.value) and e.value.exit_code == 2
    assert sorted(p.name for p in versions.root.iterdir()) == before  # nothing half-written


def test_qa_diff_and_export_round_trip(versions, qa_config, qa_env, tmp_path):
    v0 = versions.snapshot(EXAMPLES / "reward-tamper", run_id="r2")
    edited = tmp_path / "edited"
    shutil.copytree(versions.path(v0.version), edited)
    text = (edited / "instruction.md").read_text()
    (edited / "instruction.md").write_text(text.replace("that takes one argument", "taking one argument"))
    v1 = versions.apply_patch(
        v0.version, make_diff(versions.path(v0.version), edited), author="human:ann", reason="wording", run_id="r2"
    )
    qa = [str(EXAMPLES.parent / ".venv" / "bin" / "qa")]
    out = subprocess.run(qa + ["diff", "r2", "--json"], env=qa_env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert (
        body["a"] == v0.version
        and body["b"] == v1.version
        and "+Write an executable `/app/fib` taking one" in body["diff"]
    )
    dest = tmp_path / "exported"
    out = subprocess.run(
        qa + ["export", "r2", str(dest), "--version", v1.version[:10], "--json"],
        env=qa_env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["loaded_version"] == v1.version == load_environment(dest).version
    out = subprocess.run(qa + ["export", "r2", str(dest)], env=qa_env, capture_output=True, text=True)
    assert out.returncode == 2 and "not an empty directory" in out.stderr
    out = subprocess.run(qa + ["export", "r2", str(tmp_path / "default")], env=qa_env, capture_output=True, text=True)
    assert out.returncode == 0 and load_environment(tmp_path / "default").version == v0.version  # nothing adopted yet


def test_a_reviser_model_without_its_key_fails_fast(qa_env, tmp_path):
    env = {k: v for k, v in qa_env.items() if k != "ANTHROPIC_API_KEY"}
    qa = [str(EXAMPLES.parent / ".venv" / "bin" / "qa")]
    out = subprocess.run(
        qa + ["run", str(EXAMPLES / "always-pass"), "--reviser-model", "anthropic/claude-x", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and "ANTHROPIC_API_KEY" in out.stderr, out.stderr[-500:]


@pytest.mark.fast
def test_a_patch_applies_when_qa_home_is_relative_inside_the_users_git_checkout(qa_config, tmp_path, monkeypatch):
    """QA_HOME defaults to the relative `.qa` in the user's checkout (git-ignored there): `git apply` runs in a
    temp tree inside that repository, and the patched version must hold the change, the checkout nothing."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    (checkout / ".gitignore").write_text(".qa/\n")
    task = write_task(checkout / "task")
    monkeypatch.chdir(checkout)
    config = qa_config.model_copy(update={"home": Path(".qa")})
    config.home.mkdir()
    versions = VersionStore(config, Store(config.db_path))
    v0 = versions.snapshot(task, run_id="r1")
    v1 = versions.apply_patch(v0.version, CLARIFY, author="human:ann", reason="clarify", run_id="r1")
    assert v1.version != v0.version
    assert "exactly `hello`" in (versions.path(v1.version) / "instruction.md").read_text()
    assert not (checkout / "instruction.md").exists()  # nothing was written at the repository's root
