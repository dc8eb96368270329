"""docs/ci/qa-pr.yml, the sample workflow: its shell steps run here as the runner would run them. The changed task
folders come out of a real git diff; the PR comment cut out of `--format github` is exactly the markdown; every
script passes shellcheck."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from envqa.app.ci_output import render
from qa_testkit import REPO

from .fake_dataset import fake_dataset

pytestmark = pytest.mark.fast

WORKFLOW = REPO / "docs" / "ci" / "qa-pr.yml"


def steps() -> dict[str, dict]:
    doc = yaml.safe_load(WORKFLOW.read_text())
    return {s.get("name", s.get("uses", "")): s for s in doc["jobs"]["qa"]["steps"]}


def script(name: str, **values: str) -> str:
    """A step's `run:` with its `${{ ... }}` expressions replaced as the runner would (by `values`)."""
    text = steps()[name]["run"]
    return re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", lambda m: values[m[1]], text)


def git(cwd: Path, *args: str) -> str:
    env = dict(
        os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@x"
    )
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.parametrize("tasks_root", ["tasks", "."])
def test_the_changed_task_folders_come_from_the_prs_diff(tmp_path, tasks_root):
    repo = tmp_path / "repo"
    repo.mkdir()
    prefix = "" if tasks_root == "." else tasks_root + "/"
    git(repo, "init", "-q", "-b", "main")
    write(
        repo,
        {
            f"{prefix}a/task.toml": "",
            f"{prefix}a/tests/test.sh": "v1",
            f"{prefix}c/task.yaml": "",
            f"{prefix}untouched/task.toml": "",
            "README.md": "x",
            f"{prefix}notes/x.txt": "",
        },
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")  # what `actions/checkout` with fetch-depth 0 has
    git(repo, "checkout", "-qb", "pr")
    write(
        repo,
        {
            f"{prefix}a/tests/test.sh": "v2",
            f"{prefix}b/task.toml": "",
            f"{prefix}b/tests/test.sh": "",
            "README.md": "y",
            f"{prefix}notes/x.txt": "changed",
            f"{prefix}d/task.toml": "",
        },
    )
    git(repo, "rm", "-rq", f"{prefix}c")  # a task the PR deletes is not run
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "pr")
    out = tmp_path / "github_output"
    proc = subprocess.run(
        ["bash", "-c", script("Changed task folders", **{"github.base_ref": "main"})],
        cwd=repo,
        env=dict(os.environ, TASKS_ROOT=tasks_root, GITHUB_OUTPUT=str(out)),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    expected = [f"{tasks_root}/{n}" for n in ("a", "b", "d")]
    assert (repo / "changed-tasks.txt").read_text().splitlines() == expected
    assert out.read_text() == "count=3\n"


def test_the_pr_comment_is_the_markdown(tmp_path_factory, tmp_path):
    """The qa step's `sed` keeps exactly the markdown of `--format github` (annotations and markers dropped)."""
    ds = fake_dataset(tmp_path_factory)
    (tmp_path / "qa-output.txt").write_text(render(ds.report, "github", root=ds.root))
    cut = subprocess.run(
        ["bash", "-c", "sed '/^::/d' qa-output.txt"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    assert cut == render(ds.report, "markdown")
    assert "sed '/^::/d' qa-output.txt" in steps()["qa run (annotations + summary)"]["run"]
    assert "--format github" in steps()["qa run (annotations + summary)"]["run"]


def test_every_script_of_the_workflow_passes_shellcheck(tmp_path):
    shellcheck = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin" / "shellcheck"
    if not shellcheck.exists():
        shellcheck = REPO / ".venv" / "bin" / "shellcheck"
    checked = 0
    for name, step in steps().items():
        if "run" not in step:
            continue
        text = re.sub(r"\$\{\{[^}]+\}\}", "X", step["run"])
        f = tmp_path / f"step{checked}.sh"
        f.write_text("#!/usr/bin/env bash\n" + text)
        proc = subprocess.run([str(shellcheck), "-S", "warning", str(f)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{name}:\n{proc.stdout}"
        checked += 1
    assert checked == 5  # changed folders, set up, qa run, comment, verdict
