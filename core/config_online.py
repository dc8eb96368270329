"""`[online]`: the apt archives and the Python index `qa lint --online` asks whether each pinned version is there.

Part of envqa.core.config (which re-exports every name); defaults come from envqa.core.defaults. Each URL is read
from its environment variable when set (so CI can point every lint at a mirror without a qa.toml), else qa.toml,
else the public archive. A Dockerfile that names its own index (`pip install -i URL`, `ENV PIP_INDEX_URL`) is
checked against that index instead (probes/static/pin_sources.py).
"""

from __future__ import annotations

import os

from pydantic import Field

from envqa.core.config_runtime import Section
from envqa.core.defaults import (
    ONLINE_CACHE_TTL_SEC,
    ONLINE_CONNECT_TIMEOUT_SEC,
    ONLINE_READ_TIMEOUT_SEC,
    ONLINE_TASK_BUDGET_SEC,
)


def _env(name: str, default: str) -> str:
    return os.environ.get(name) or default


class OnlineSettings(Section):
    """Where pins are checked (`qa lint --online`); nothing here is read without `--online`."""

    debian_url: str = Field(
        default_factory=lambda: _env("QA_DEBIAN_URL", "http://deb.debian.org/debian"),
        description="the Debian archive a `FROM debian:<release>` build installs from (its release and -updates)",
        json_schema_extra={"doc_default": '`$QA_DEBIAN_URL`, else `"http://deb.debian.org/debian"`'},
    )
    debian_security_url: str = Field(
        default_factory=lambda: _env("QA_DEBIAN_SECURITY_URL", "http://deb.debian.org/debian-security"),
        description="the Debian security archive (<release>-security)",
        json_schema_extra={"doc_default": '`$QA_DEBIAN_SECURITY_URL`, else `"http://deb.debian.org/debian-security"`'},
    )
    debian_components: list[str] = Field(
        default_factory=lambda: ["main"], description="the components a Debian image's sources name"
    )
    ubuntu_url: str = Field(
        default_factory=lambda: _env("QA_UBUNTU_URL", "http://archive.ubuntu.com/ubuntu"),
        description="the Ubuntu archive a `FROM ubuntu:<release>` build installs from (http://ports.ubuntu.com/"
        "ubuntu-ports on arm64)",
        json_schema_extra={"doc_default": '`$QA_UBUNTU_URL`, else `"http://archive.ubuntu.com/ubuntu"`'},
    )
    ubuntu_security_url: str = Field(
        default_factory=lambda: _env("QA_UBUNTU_SECURITY_URL", "http://security.ubuntu.com/ubuntu"),
        description="the Ubuntu security archive (<release>-security)",
        json_schema_extra={"doc_default": '`$QA_UBUNTU_SECURITY_URL`, else `"http://security.ubuntu.com/ubuntu"`'},
    )
    ubuntu_components: list[str] = Field(
        default_factory=lambda: ["main", "restricted", "universe", "multiverse"],
        description="the components an Ubuntu image's sources name",
    )
    arch: str = Field(default="amd64", description="the Debian architecture of the build (amd64, arm64, ...)")
    pip_index_url: str = Field(
        default_factory=lambda: _env("QA_PIP_INDEX_URL", "https://pypi.org/simple"),
        description="the Python index a pip pin is checked against when the build names none (PEP 691 JSON or "
        "PEP 503 HTML)",
        json_schema_extra={"doc_default": '`$QA_PIP_INDEX_URL`, else `"https://pypi.org/simple"`'},
    )
    host_apt: bool = Field(
        default=True,
        description="ask the host's `apt-cache` first when its lists are of the task's release and fresher than "
        "cache_ttl_sec (a version it lacks is still asked of the archive)",
    )
    connect_timeout_sec: float = Field(
        default=ONLINE_CONNECT_TIMEOUT_SEC, gt=0, description="longest wait for a connection to an index"
    )
    read_timeout_sec: float = Field(
        default=ONLINE_READ_TIMEOUT_SEC, gt=0, description="longest wait for the next bytes of an index's answer"
    )
    task_budget_sec: float = Field(
        default=ONLINE_TASK_BUDGET_SEC,
        gt=0,
        description="everything one task's pin check asks shares this; the rest is reported not checked",
    )
    cache_ttl_sec: float = Field(
        default=ONLINE_CACHE_TTL_SEC,
        ge=0,
        description="an index's answer is reused this long (QA_HOME/cache/indexes/); 0 asks every time",
    )
