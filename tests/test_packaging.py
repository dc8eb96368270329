"""Packaging: every role folder installs under the one `envqa` namespace, never as a bare module.

(a) is static; (b) and (c) install into fresh venvs with --no-deps (seconds, no network needed beyond
what pip's build isolation wants: setuptools and wheel, from the configured index or pip's cache).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LAYER_DIRS = [
    "core",
    "agents",
    "probes",
    "graphs",
    "sandbox",
    "store",
    "scheduler",
    "providers",
    "app",
    "demo",
    "prompts",
]
ROLE_DIRS = {"envqa": "envqa", **{d: f"envqa.{d}" for d in LAYER_DIRS}}
BARE = LAYER_DIRS


def _declared() -> tuple[set[str], dict[str, str]]:
    tool = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    return set(tool["packages"]), tool.get("package-dir", {})


def test_every_package_folder_is_listed_in_pyproject():
    packages, package_dir = _declared()
    missing = []
    for folder, dotted in ROLE_DIRS.items():
        for init in sorted((REPO / folder).rglob("__init__.py")):
            if "__pycache__" in init.parts:
                continue
            rel = init.parent.relative_to(REPO / folder).parts
            name = ".".join((dotted, *rel))
            if name not in packages:
                missing.append(f"{init.parent.relative_to(REPO)} -> {name}")
    assert not missing, "add to [tool.setuptools] packages in pyproject.toml: " + ", ".join(missing)
    for folder, dotted in ROLE_DIRS.items():
        if dotted != "envqa":
            assert package_dir.get(dotted) == folder, f"package-dir must map {dotted} to {folder}/"


def _venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, capture_output=True, timeout=300)
    return path / "bin" / "python"


def _pip(python: Path, *args: str, cwd: Path | None = None) -> None:
    res = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def _site_packages(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


@pytest.fixture
def source_copy(tmp_path) -> Path:
    """A copy of the source tree without build leftovers, so installing never writes into the repo."""
    import shutil

    dest = tmp_path / "src"
    shutil.copytree(
        REPO,
        dest,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", ".qa", "__pycache__", "*.egg-info", "build", "dist", ".pytest_cache", "tests"
        ),
    )
    return dest


@pytest.mark.fast
def test_regular_install_has_only_the_envqa_namespace(tmp_path, source_copy):
    python = _venv(tmp_path / "venv")
    _pip(python, str(source_copy))
    site = _site_packages(python)
    ours = sorted(
        p.name
        for p in site.iterdir()
        if p.name.startswith("envqa") or p.name in BARE or p.name in ("tests", "examples")
    )
    assert [n for n in ours if not n.endswith(".dist-info")] == ["envqa"], ours
    assert len([n for n in ours if n.endswith(".dist-info")]) == 1
    for sub in LAYER_DIRS:
        assert (site / "envqa" / sub / "__init__.py").is_file(), f"envqa.{sub} not installed"
    blank = site / "envqa" / "agents" / "generator_templates" / "blank"  # `qa new`'s template (issue 13)
    assert (blank / "solution" / "solve.sh").is_file() and (blank / "environment" / "Dockerfile").is_file()
    # The scripts that run in sandboxes are package data (issue 21), read through the one loader from the wheel.
    shipped = {p.name for p in (site / "envqa" / "agents" / "exploit_scripts").iterdir()}
    assert {
        "harness_plant.sh",
        "workspace_conftest.sh",
        "reward_tamper.sh",
        "force_pass_plugin.py",
        "leaked_answers.py",
        "verifier_helper.py",
        "wrap_tool.py",
        "network_fetch.py",
    } <= shipped, shipped
    loaded = subprocess.run(
        [
            str(python),
            "-c",
            "from envqa.agents import exploit_payloads as p; "
            "from envqa.core.package_scripts import read_script as r; "
            "print(len(p.LEAKED_ANSWERS), len(r('envqa.probes', 'scripts/image_scan.py')))",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert loaded.returncode == 0 and "0" not in loaded.stdout.split(), loaded.stdout + loaded.stderr
    # The registries' data (rules.toml, labels.toml) ships too: the catalogue loads from the wheel.
    registry = subprocess.run(
        [str(python), "-c", "from envqa.core import registry as r; print(len(r.RULES), len(r.LABELS))"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert registry.returncode == 0, registry.stderr
    rules, labels = map(int, registry.stdout.split())
    assert rules >= 40 and labels >= 7, registry.stdout
    top = site / [n for n in ours if n.endswith(".dist-info")][0] / "top_level.txt"
    if top.exists():
        assert top.read_text().split() == ["envqa"]


def test_editable_install_imports_envqa_agents_but_not_bare_agents(tmp_path, source_copy):
    python = _venv(tmp_path / "venv")
    _pip(python, "-e", str(source_copy))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    # --no-deps: the third-party libraries are absent, so import the (dependency-free) package modules.
    ok = subprocess.run(
        [
            str(python),
            "-c",
            "import envqa.agents, envqa.sandbox, envqa.store, envqa.graphs; print(envqa.agents.__file__)",
        ],
        capture_output=True,
        text=True,
        cwd=outside,
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip().startswith(str(source_copy / "agents"))
    for bare in BARE:
        res = subprocess.run([str(python), "-c", f"import {bare}"], capture_output=True, text=True, cwd=outside)
        assert res.returncode != 0 and "ModuleNotFoundError" in res.stderr, f"`import {bare}` worked"
