"""Helpers for the foundation tests: tiny environments written into tmp_path, sandboxes on the base image.

Everything here runs on the real Docker engine (fixtures from tests/conftest.py). Environments are
built from the local base image through the image map, so they build in a second or two and share
layers; each test removes what it created.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envqa.core.sandbox import SandboxSpec
from qa_testkit import containers

TASK_TOML = """\
version = "1.0"

[agent]
timeout_sec = {agent_timeout}

[verifier]
timeout_sec = 30.0

[environment]
build_timeout_sec = 120.0
memory_mb = 256
allow_internet = false
"""

GOOD_TEST_SH = """\
#!/bin/bash
mkdir -p /logs/verifier
if [ "$(cat /app/out.txt 2>/dev/null)" = "ok" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""


def write_env(
    root: Path,
    *,
    solve: str = "echo ok > /app/out.txt\n",
    test_sh: str = GOOD_TEST_SH,
    dockerfile: str = "FROM debian:bookworm\nWORKDIR /app\n",
    agent_timeout: float = 60.0,
    extra: dict[str, str] | None = None,
) -> Path:
    """A minimal Harbor environment: the task is to write `ok` to /app/out.txt."""
    files = {
        "task.toml": TASK_TOML.format(agent_timeout=agent_timeout),
        "instruction.md": "Write `ok` to /app/out.txt.\n",
        "environment/Dockerfile": dockerfile,
        "solution/solve.sh": "#!/bin/bash\n" + solve,
        "tests/test.sh": test_sh,
        **(extra or {}),
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture
def make_env(tmp_path) -> Callable[..., Path]:
    counter = iter(range(1000))

    def make(**kwargs) -> Path:
        return write_env(tmp_path / f"env{next(counter)}", **kwargs)

    return make


@pytest.fixture
def start_sandbox(docker_backend, base_image):
    """Start sandboxes from the base image; every one is stopped at teardown (also when a test fails)."""
    started = []

    def start(**spec) -> object:
        sb = docker_backend.start(SandboxSpec(image=base_image, **spec))
        started.append(sb)
        return sb

    yield start
    for sb in started:
        sb.stop()


def containers_with(client, **labels) -> list:
    filters = ["envqa"] + [f"{k}={v}" for k, v in labels.items()]
    return containers(client, *filters)


def done_trials(db_path: Path) -> list[dict]:
    """Done trials of the store at `db_path` (or QA_STORE_URL's Postgres); [] while it is being written."""
    from qa_testkit import store_rows

    return store_rows(Path(db_path).parent, "SELECT * FROM trials WHERE status='done'")
