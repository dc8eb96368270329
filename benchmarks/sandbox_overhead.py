"""Per-trial overhead of envqa's runner against raw Docker, measured in the same run.

Ours: `run_trial` with the oracle on a trivial environment (image check, container start with limits,
upload solution, agent exec, download agent logs, upload tests, verifier exec, reward read, teardown).
Baseline: the same agent and verifier commands through the docker SDK by hand: `containers.run`
(detached, same image and limits) + `exec_run` (agent) + `exec_run` (verifier) + `exec_run` (read the
reward) + remove. Both alternate, N times each; the figure is median(ours) / median(raw).

Also: image builds on a second run of an unchanged environment (a fresh backend, as a new `qa run`
would have), which must be 0.

Last line: {"overhead_ratio": ..., "rebuilds_unchanged": ...}; exits 1 when overhead_ratio > 1.25 or an
unchanged environment was rebuilt.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import docker.errors

from envqa.agents.trial import run_trial, sandbox_spec
from envqa.app.runner import make_backend
from envqa.core.config import load_config
from envqa.core.environment import load_environment
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialSpec

GOAL_RATIO = 1.25
SOLVE = "echo ok > /app/out.txt\n"
TEST = (
    'mkdir -p /logs/verifier; if [ "$(cat /app/out.txt 2>/dev/null)" = ok ]; then echo 1; else echo 0; fi '
    "> /logs/verifier/reward.txt\n"
)


def write_env(root: Path) -> Path:
    files = {
        "task.toml": 'version = "1.0"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n'
        "[environment]\nmemory_mb = 256\nallow_internet = false\n",
        "instruction.md": "Write ok to /app/out.txt.\n",
        "environment/Dockerfile": f"FROM debian:bookworm\nWORKDIR /app\nLABEL envqa.bench={uuid.uuid4().hex[:6]}\n",
        "solution/solve.sh": "#!/bin/bash\n" + SOLVE,
        "tests/test.sh": "#!/bin/bash\n" + TEST,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def raw_trial(client, image: str, spec) -> float:
    """The same trial with the docker SDK by hand, as a user without envqa would write it."""
    started = time.perf_counter()
    c = client.containers.run(
        image,
        ["sleep", "infinity"],
        detach=True,
        network_mode="none",
        mem_limit=f"{spec.memory_mb}m",
        memswap_limit=f"{spec.memory_mb}m",
        nano_cpus=int(spec.cpus * 1e9),
        pids_limit=spec.pids_limit,
        labels={"envqa": "1", "envqa.bench": "raw"},
    )
    try:
        assert c.exec_run(["bash", "-c", SOLVE]).exit_code == 0
        assert c.exec_run(["bash", "-c", TEST]).exit_code == 0
        assert c.exec_run(["cat", "/logs/verifier/reward.txt"]).output.strip() == b"1"
    finally:
        try:
            c.remove(force=True)
        except docker.errors.APIError:  # already being removed (e.g. a test session's leak sweep)
            pass
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10, help="repetitions of each (default 10)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="envqa-bench-") as tmp:
        tmp = Path(tmp)
        config = load_config(None, {"home": str(tmp / "home")})
        env = load_environment(write_env(tmp / "env"))
        first = make_backend(config)
        image, built = first.ensure_image(env)  # the first run may build
        client = first.client
        try:
            second = make_backend(config)  # a second run of the unchanged environment: a fresh backend
            spec = sandbox_spec(env, image, config, {})
            raw_trial(client, image, spec)  # warm-up of both paths (page cache, first exec)
            layout = RunLayout(config.runs_dir, "bench")
            run_trial(
                TrialSpec(run_id="bench", env_version=env.version, agent="oracle", index=-1),
                env,
                second,
                config,
                layout,
            )
            ours, raw = [], []
            for i in range(args.n):
                raw.append(raw_trial(client, image, spec))
                t = time.perf_counter()
                result = run_trial(
                    TrialSpec(run_id="bench", env_version=env.version, agent="oracle", index=i),
                    env,
                    second,
                    config,
                    layout,
                )
                ours.append(time.perf_counter() - t)
                if result.outcome != Outcome.PASS:
                    sys.exit(f"benchmark trial did not pass: {result.error_class} {result.error_message}")
            rebuilds = second.builds
        finally:
            client.images.remove(image, force=True)
    ratio = statistics.median(ours) / statistics.median(raw)
    print(f"built on first run: {built}; n={args.n}", file=sys.stderr)
    print(f"ours: median {statistics.median(ours):.3f}s  min {min(ours):.3f}s  max {max(ours):.3f}s", file=sys.stderr)
    print(f"raw:  median {statistics.median(raw):.3f}s  min {min(raw):.3f}s  max {max(raw):.3f}s", file=sys.stderr)
    print(
        json.dumps(
            {
                "overhead_ratio": round(ratio, 3),
                "rebuilds_unchanged": rebuilds,
                "ours_median_sec": round(statistics.median(ours), 3),
                "raw_median_sec": round(statistics.median(raw), 3),
                "n": args.n,
            }
        )
    )
    sys.exit(0 if ratio <= GOAL_RATIO and rebuilds == 0 else 1)  # a missed goal fails `make bench`


if __name__ == "__main__":
    main()
