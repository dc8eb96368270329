"""Fixtures for the reviser tests: the fake provider (real SDKs over HTTP), small task directories."""

from __future__ import annotations

from pathlib import Path

from qa_testkit import write_files
from tests.providers.conftest import GOOD_KEY, fake_provider, provider_env  # noqa: F401  (fixtures)

TASK = {
    "task.toml": 'version = "1.0"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n'
    "[environment]\nallow_internet = false\nmemory_mb = 512\n",
    "instruction.md": "Write /app/out.txt containing hello.\n",
    "environment/Dockerfile": "FROM debian:bookworm\nWORKDIR /app\n",
    "solution/solve.sh": "#!/bin/bash\nprintf hello > /app/out.txt\n",
    "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
    '[ "$(cat /app/out.txt)" = hello ] && echo 1 > /logs/verifier/reward.txt\nexit 0\n',
}


def write_task(root: Path, **changes: str) -> Path:
    return write_files(root, {**TASK, **{k.replace("__", "/").replace("_", "."): v for k, v in changes.items()}})
