"""The venv the suite runs in holds exactly what requirements.lock pins (scripts/setup.sh installs the lock).

A fresh machine must get the versions the suite was tested with, never a newer release that merely fits
a range in pyproject.toml: that is how rq 3.0 once broke every worker. `make check-latest` is the one
place that installs newest versions, in a throwaway venv.
"""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import PackageNotFoundError, version

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from qa_testkit import REPO

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.\-]*)(\[[^\]]*\])?==([^\s\\;]+)")


def locked() -> dict[str, str]:
    pins = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        m = PIN.match(line)
        if m:
            pins[canonicalize_name(m.group(1))] = m.group(3)
    return pins


def test_every_installed_dependency_is_exactly_the_locked_version():
    pins = locked()
    assert len(pins) > 30, "requirements.lock looks truncated"
    wrong = {}
    for name, pinned in pins.items():
        try:
            have = version(name)
        except PackageNotFoundError:
            wrong[name] = (pinned, "not installed")
            continue
        if have != pinned:
            wrong[name] = (pinned, have)
    assert not wrong, f"venv differs from requirements.lock (lock, installed): {wrong}; run scripts/setup.sh"


def test_every_declared_dependency_is_locked_with_hashes_and_an_upper_bound():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + project["optional-dependencies"]["dev"]
    pins, text = locked(), (REPO / "requirements.lock").read_text()
    for raw in declared:
        req = Requirement(raw)
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is in pyproject.toml but not in requirements.lock: run `make lock`"
        assert req.specifier.contains(pins[name]), f"lock pins {name}=={pins[name]} outside {req.specifier}"
        assert any(s.operator == "<" for s in req.specifier), f"{raw}: no upper bound on the next major"
    entries = [e for e in re.split(r"\n(?=[A-Za-z0-9])", text) if PIN.match(e)]
    assert all("--hash=sha256:" in e for e in entries), "every pin in requirements.lock carries its hashes"
