"""A checkout imports as `envqa.*` without installing (issue 32 item 5), so import-linter, mypy and IDEs follow it.

The layer folders sit beside envqa/; envqa/<layer> links to each (envqa/__init__.py says how the two fit). These
tests run the venv's python with the editable install's finder removed, so only the checkout can answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib

import pytest

from qa_testkit import REPO

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def _layers() -> dict[str, str]:
    """package-dir from pyproject.toml: `envqa.<layer>` -> the top-level folder it installs from."""
    package_dir = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    return {name: folder for name, folder in package_dir.items() if name != "envqa"}


# Runs in a child: drop what `pip install -e .` added (its meta path finder, any __editable__ path entry), check
# nothing of envqa was imported before that, then import from the working directory (the repository root) alone.
_CHILD = """
import importlib, json, sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path[:] = [p for p in sys.path if "__editable__" not in p]
sys.path_importer_cache.clear()
assert not [m for m in sys.modules if m.split(".")[0] == "envqa"], "envqa was imported before the finder was gone"
names = json.loads(sys.argv[1])
print(json.dumps({name: importlib.import_module(name).__file__ for name in names}))
"""


def _import_without_install(names: list[str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(names)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


def test_every_layer_imports_from_a_checkout_without_the_editable_install():
    layers = _layers()
    files = _import_without_install(["envqa.core", "envqa.agents", *sorted(layers), "envqa.core.registry"])
    for name, folder in layers.items():
        # the real folder, as under the editable install: never the path through the link
        assert files[name] == str(REPO / folder / "__init__.py"), (name, files[name])
    assert files["envqa.core.registry"] == str(REPO / "core" / "registry" / "__init__.py")


def test_each_layer_is_linked_where_static_tools_look():
    """import-linter and mypy read the file system, not the finder: envqa/<layer> must lead to the folder."""
    for name, folder in _layers().items():
        link = REPO / "envqa" / name.split(".", 1)[1]
        assert link.is_symlink(), f"{link.relative_to(REPO)} must be a symlink to ../{folder}"
        assert os.readlink(link) == f"../{folder}", f"{link.relative_to(REPO)} -> {os.readlink(link)}"
        assert link.resolve() == REPO / folder


def test_a_bare_checkout_python_imports_the_layers_too():
    """No site-packages at all (`python -S`): the layers' __init__ modules need nothing installed."""
    res = subprocess.run(
        [sys.executable, "-S", "-c", "import envqa.core, envqa.agents; print(envqa.agents.__file__)"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.strip() == str(REPO / "agents" / "__init__.py")
