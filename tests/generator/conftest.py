"""Fixtures for the generator tests: the fake provider (real SDKs over HTTP) and tiny generated tasks."""

from __future__ import annotations

from pathlib import Path

from tests.providers.conftest import GOOD_KEY, fake_provider, provider_env  # noqa: F401  (fixtures)

MODEL = "anthropic/claude-generator-test"
SPEC = "A task where the agent writes /app/out.txt containing the word hello.\n"
TASK_TOML = (
    'version = "1.0"\n[metadata]\nauthor_name = "gen"\ndifficulty = "easy"\ncategory = "programming"\n'
    'tags = ["tiny"]\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n'
    "[environment]\nbuild_timeout_sec = 120.0\ncpus = 1\nmemory_mb = 512\nallow_internet = false\n"
)
GOOD = {
    "instruction.md": "Write /app/out.txt containing hello.\n",
    "task.toml": TASK_TOML,
    "environment/Dockerfile": "FROM debian:bookworm\nWORKDIR /app\n",
    "solution/solve.sh": "#!/bin/bash\nset -euo pipefail\nprintf hello > /app/out.txt\n",
    "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
    '[ "$(cat /app/out.txt 2>/dev/null)" = hello ] && echo 1 > /logs/verifier/reward.txt\nexit 0\n',
}
BAD_BUILD = {**GOOD, "environment/Dockerfile": "FROM debian:bookworm\nRUN echo 'no such package: libfoo9' && exit 3\n"}
BAD_ORACLE = {**GOOD, "solution/solve.sh": "#!/bin/bash\nprintf goodbye > /app/out.txt\n"}
# (a fast config: one oracle run everywhere, the loop stops at decide, trials in-process)
FAST = {
    "validate.oracle_runs": 1,
    "probes.oracle_runs": 1,
    "probes.verifier_reruns": 0,
    "generator.oracle_runs": 1,
    "scheduler.mode": "local",
    "loop.max_iterations": 0,
}
QA_TOML = (
    "[validate]\noracle_runs = 1\n[probes]\noracle_runs = 1\nverifier_reruns = 0\n"
    '[scheduler]\nmode = "local"\n[loop]\nmax_iterations = 0\n'
    f'[generator]\nmodel = "{MODEL}"\noracle_runs = 1\n'
)


def answer(files: dict, notes: str = "a tiny task") -> dict:
    """One scripted turn: the generator's submit_answer call with this file set."""
    return {
        "tool_calls": [
            {
                "name": "submit_answer",
                "arguments": {
                    "files": [{"path": p, "content": c, "executable": p.endswith(".sh")} for p, c in files.items()],
                    "notes": notes,
                },
            }
        ],
        "usage": {"input": 1500, "output": 600},
    }


def write_spec(root: Path, text: str = SPEC) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "spec.md").write_text(text)
    return root
