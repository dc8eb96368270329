"""The examples as ONE dataset (`qa run DIR`) vs a loop of single `qa run`s over the same tasks (issue 25).

Same tasks (every folder of examples/, copied), same qa.toml (QA_TOML below: one oracle run per probe and gate,
so the run is minutes, not hours), same Docker engine, each side with its own QA_HOME. The image cache is warm for
both: every task's image is built first (`qa lint --image`, untimed). The dataset runs FIRST, so it also pays for
building the images of the revisions the loop proposes, which the loop of single runs then finds cached: the
speedup measured is a lower bound.

Measured:
  dataset_sec / sequential_sec  wall time of `qa run DIR --json` / of the loop (one `qa` process per task)
  speedup_vs_sequential         sequential_sec / dataset_sec (goal >= 1.5; exit 1 below 1.3)
  tasks_per_hour                tasks / dataset_sec * 3600
  peak_rss_mb                   the dataset's process tree (qa, its redis-server and workers), sampled every 0.2 s;
                                sequential_peak_rss_mb the same for the largest single run
  container_sec / cores floor   the sum of every trial's seconds in the dataset's reports over the machine's cores:
                                the wall time if the machine did nothing but run those containers, back to back
  verdicts_match                both sides reached the same verdict on every task

    .venv/bin/python benchmarks/dataset.py [--max-tasks N]
Last line: one JSON object with those keys; exit 1 when speedup_vs_sequential < 1.3.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
QA = str(Path(sys.executable).with_name("qa"))
QA_TOML = "[probes]\noracle_runs = 1\n[reviser]\ngate_oracle_runs = 1\n"
TASK_TIMEOUT_SEC = 1800
GOAL, FLOOR = 1.5, 1.3


def tree_rss_mb(root: int) -> float:
    """Resident memory of `root` and all its descendants (from /proc), in MB."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(d))
            rss[int(d)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += children.get(pid, [])
    return total / 2**20


def timed(args: list[str], env: dict, cwd: Path) -> tuple[float, subprocess.CompletedProcess, float]:
    """Run `qa args`; (wall seconds, the result, peak RSS MB of its process tree)."""
    peak = [0.0]
    start = time.monotonic()
    proc = subprocess.Popen([QA, *args], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.2):
            peak[0] = max(peak[0], tree_rss_mb(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=TASK_TIMEOUT_SEC * 4)
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return time.monotonic() - start, subprocess.CompletedProcess(proc.args, proc.returncode, out, err), peak[0]


def last_json(proc: subprocess.CompletedProcess) -> dict:
    lines = proc.stdout.strip().splitlines()
    if not lines:
        raise SystemExit(f"qa printed nothing (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-tasks", type=int, default=None, help="the first N examples only (a quick check)")
    ap.add_argument("--jobs", type=int, default=None, help="the dataset's --jobs (default: qa's own default)")
    opts = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="envqa-bench-dataset-"))
    try:
        names = sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir())[: opts.max_tasks]
        ds = work / "examples"
        for name in names:
            shutil.copytree(EXAMPLES / name, ds / name, ignore=shutil.ignore_patterns("qa-expected.json"))
        cwd = work / "cwd"
        cwd.mkdir()
        (cwd / "qa.toml").write_text(QA_TOML)
        base = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "QA_HOME")}
        warm = {**base, "QA_HOME": str(work / "warm")}
        for name in names:  # untimed: every task's image, so neither side builds the tasks' own images
            subprocess.run(
                [QA, "lint", str(ds / name), "--image", "--json"],
                env=warm,
                cwd=cwd,
                capture_output=True,
                timeout=TASK_TIMEOUT_SEC,
            )

        env = {**base, "QA_HOME": str(work / "dataset")}
        args = ["run", str(ds), "--json"] + (["--jobs", str(opts.jobs)] if opts.jobs else [])
        dataset_sec, proc, peak = timed(args, env, cwd)
        report = last_json(proc)
        print(
            json.dumps(
                {
                    "side": "dataset",
                    "seconds": round(dataset_sec, 1),
                    "exit_code": proc.returncode,
                    "by_verdict": report.get("summary", {}).get("by_verdict"),
                }
            ),
            flush=True,
        )

        env = {**base, "QA_HOME": str(work / "sequential")}
        sequential_sec, seq_peak, seq_verdicts = 0.0, 0.0, {}
        for name in names:
            sec, single, rss = timed(["run", str(ds / name), "--json"], env, cwd)
            sequential_sec += sec
            seq_peak = max(seq_peak, rss)
            seq_verdicts[name] = (last_json(single) if single.stdout.strip() else {}).get("verdict") or "invalid"
            print(
                json.dumps(
                    {
                        "side": "sequential",
                        "task": name,
                        "seconds": round(sec, 1),
                        "exit_code": single.returncode,
                        "verdict": seq_verdicts[name],
                    }
                    | ({} if single.stdout.strip() else {"stderr": single.stderr[-500:]})
                ),
                flush=True,
            )

        container_sec = 0.0
        from envqa.store.db import Store

        store = Store(work / "dataset" / "envqa.db")
        for row in report["tasks"]:
            if row.get("run_id"):
                container_sec += sum(
                    (t.finished_at - t.started_at).total_seconds() for t in store.trials_for_run(row["run_id"])
                )
        cores = os.cpu_count() or 1
        dataset_verdicts = {r["name"]: r["verdict"] for r in report["tasks"]}
        speedup = sequential_sec / dataset_sec if dataset_sec else 0.0
        result = {
            "tasks": len(names),
            "jobs": opts.jobs or "default",
            "cores": cores,
            "dataset_sec": round(dataset_sec, 1),
            "sequential_sec": round(sequential_sec, 1),
            "speedup_vs_sequential": round(speedup, 2),
            "goal": GOAL,
            "tasks_per_hour": round(len(names) / dataset_sec * 3600, 1) if dataset_sec else 0.0,
            "peak_rss_mb": round(peak, 1),
            "sequential_peak_rss_mb": round(seq_peak, 1),
            "container_sec": round(container_sec, 1),
            "container_floor_sec": round(container_sec / cores, 1),
            "dataset_exit_code": report.get("exit_code"),
            "verdicts_match": dataset_verdicts == seq_verdicts,
            "verdict_differences": {
                n: [dataset_verdicts.get(n), v] for n, v in seq_verdicts.items() if dataset_verdicts.get(n) != v
            },
        }
        print(json.dumps(result), flush=True)
        return 0 if speedup >= FLOOR else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
