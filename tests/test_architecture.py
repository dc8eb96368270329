"""The layers hold: `lint-imports` keeps every contract in pyproject.toml ([tool.importlinter]), and the contracts
themselves say what docs/development.md's Architecture section says (so a contract cannot quietly be loosened)."""

from __future__ import annotations

import subprocess
import tomllib

import pytest

from qa_testkit import REPO

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def test_lint_imports_keeps_every_contract():
    res = subprocess.run(
        ["bash", str(REPO / "scripts" / "lint_imports.sh")], capture_output=True, text=True, timeout=300, cwd=REPO
    )
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
    assert "BROKEN" not in res.stdout and " kept, 0 broken" in res.stdout, res.stdout[-3000:]


def test_the_contracts_are_the_architecture():
    contracts = {
        c["name"]: c for c in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    }
    kinds = sorted(c["type"] for c in contracts.values())
    assert kinds.count("layers") == 1 and "acyclic_siblings" in kinds and kinds.count("forbidden") >= 2
    layers = next(c for c in contracts.values() if c["type"] == "layers")["layers"]
    assert layers == ["envqa.app", "envqa.graphs", "envqa.probes", "envqa.agents", "envqa.core"]
    infra = {"envqa.sandbox", "envqa.store", "envqa.scheduler", "envqa.providers"}  # providers: the model SDK adapters
    forbidden = [c for c in contracts.values() if c["type"] == "forbidden"]
    assert any(
        {"envqa.core", "envqa.agents", "envqa.probes", "envqa.graphs"} <= set(c["source_modules"])
        and infra <= set(c["forbidden_modules"])
        for c in forbidden
    ), "roles must not reach an implementation"
    assert any(
        infra <= set(c["source_modules"])
        and {"envqa.agents", "envqa.probes", "envqa.graphs", "envqa.app"} <= set(c["forbidden_modules"])
        for c in forbidden
    ), "infrastructure must not import a role"
    assert not any(c.get("ignore_imports") for c in contracts.values()), "no contract may carry exceptions"
    acyclic = next(c for c in contracts.values() if c["type"] == "acyclic_siblings")
    assert acyclic["ancestors"] == ["envqa"]


def test_a_forbidden_import_is_caught(tmp_path):
    """The checker is live: a role module that imports the Docker backend makes lint-imports fail."""
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(
        REPO,
        copy,
        symlinks=True,  # envqa/<layer> stay links to the folders, as in a checkout
        ignore=shutil.ignore_patterns(
            ".venv", ".git", ".qa", "__pycache__", "tests", "examples", "benchmarks", "*.egg-info"
        ),
    )
    (copy / "agents" / "leak.py").write_text("from envqa.sandbox import docker_backend  # noqa: F401\n")
    res = subprocess.run(
        ["bash", str(copy / "scripts" / "lint_imports.sh")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=copy,
        env={"QA_VENV": str(REPO / ".venv"), "PATH": "/usr/bin:/bin"},
    )
    assert res.returncode != 0
    assert "envqa.agents.leak -> envqa.sandbox.docker_backend" in res.stdout, res.stdout[-3000:]
