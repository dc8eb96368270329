"""Helpers for the probe tests: small environment directories written from strings, probe contexts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qa_testkit import EXAMPLES, REPO, run_qa  # noqa: F401  (re-exported)

BASE_FILES = {
    "task.toml": 'version = "1.0"\n[metadata]\ndifficulty = "easy"\ncategory = "test"\ntags = ["envqa-test"]\n'
    "[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n"
    "[environment]\nallow_internet = false\nmemory_mb = 512\n",
    "instruction.md": "Write /app/out.txt containing hello.\n",
    "environment/Dockerfile": "FROM debian:bookworm\nWORKDIR /app\n",
    "solution/solve.sh": "#!/bin/bash\necho hello > /app/out.txt\n",
    "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
    '[ "$(cat /app/out.txt)" = hello ] && echo 1 > /logs/verifier/reward.txt\nexit 0\n',
}


def write_env(root: Path, files_: dict[str, str | None] | None = None, **overrides: str | None) -> Path:
    """An environment dir from BASE_FILES plus `files_` ({relative path: text, None removes}); keyword names
    are a shorthand that use `__` for `/` and `_sh`/`_txt`/`_yaml` for the suffix (tests__test_sh)."""
    files = dict(BASE_FILES)
    files.update(files_ or {})
    for key, text in overrides.items():
        rel = key.replace("__", "/").replace("_sh", ".sh").replace("_txt", ".txt").replace("_yaml", ".yaml")
        rel = rel.replace("task_toml", "task.toml")
        if text is None:
            files.pop(rel, None)
        else:
            files[rel] = text
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


OPEN_NETWORK_TOML = BASE_FILES["task.toml"].replace("allow_internet = false", "allow_internet = true")
"""A task whose network is open: a verify-time install is only a note there (verifier-installs-at-runtime)."""


def expected(name: str) -> dict:
    return json.loads((EXAMPLES / name / "qa-expected.json").read_text())


@pytest.fixture
def probe_ctx(docker_backend, qa_config, tmp_path):
    """Build a ProbeContext for an example (or any env dir) with a real store and the real backend."""
    from envqa.core.environment import load_environment
    from envqa.core.layout import RunLayout
    from envqa.probes.base import ProbeContext
    from envqa.store.db import Store

    qa_config.home.mkdir(parents=True, exist_ok=True)
    store = Store(qa_config.db_path)

    def make(env_dir: Path, run_id: str = "probe-test", **probe_overrides) -> ProbeContext:
        cfg = qa_config.model_copy(update={"probes": qa_config.probes.model_copy(update=probe_overrides)})
        env = load_environment(env_dir)
        store.create_run(run_id, str(env.root))
        return ProbeContext(
            env=env,
            config=cfg,
            backend=docker_backend,
            run_id=run_id,
            layout=RunLayout(cfg.runs_dir, run_id),
            record=store.record_trial,
        )

    return make
