"""Importing other harnesses' runs: 5,000 trials over 100 tasks in each format (Harbor job, tb runs).

Writes the trials with envqa.demo.imported_runs.write_bulk_runs (every trial with result/results.json, the
verifier's output, ctrf.json for some, an ATIF trajectory or commands.txt + agent.log of ~12 steps), then
measures, in a fresh child process each so that peak RSS is the step's own:
  - import: `qa analyze`'s entry (envqa.app.analyze.analyze, store=False: read both formats, match by task
    name, the cross-trial rules and pass@1 per agent/model per task); when that is not installed, the readers
    alone, said in the JSON as "analysed": false;
  - baseline: a plain `json.load` of every trial's result file (result.json / results.json), like with like
    for "how long does it take just to open the records".

    python benchmarks/import.py [--trials 5000] [--tasks 100]
Last line: {"seconds": ..., "peak_rss_mb": ..., "baseline_seconds": ..., "baseline_peak_rss_mb": ..., ...}
Goal: seconds <= 60 and peak_rss_mb <= 1024 (exit 1 when missed).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_SECONDS = 60.0
GOAL_RSS_MB = 1024.0


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def measure_import(paths: list[str], home: str) -> dict:
    """`qa analyze`'s own entry (read, match by name, cross-trial rules, pass@1 per agent/model, store=False)
    when the analysis half is installed; else the readers alone ("analysed": false)."""
    start = time.perf_counter()
    try:
        from envqa.app.analyze import analyze
        from envqa.core.config import load_config
    except ImportError:
        analyze = None
    if analyze is not None:
        doc = analyze([Path(p) for p in paths], load_config(None, {"home": home}), store=False)
        n_trials, n_problems, analysed = doc["trials"], len(doc["problems"]), True
    else:
        from envqa.core.readers import read_runs

        batch = read_runs(paths)
        n_trials, n_problems, analysed = len(batch.trials), len(batch.problems), False
    return {
        "seconds": time.perf_counter() - start,
        "peak_rss_mb": _peak_rss_mb(),
        "trials": n_trials,
        "problems": n_problems,
        "analysed": analysed,
    }


def measure_baseline(paths: list[str]) -> dict:
    start = time.perf_counter()
    n = 0
    for root in map(Path, paths):
        for name in ("result.json", "results.json"):
            for f in root.rglob(name):
                with f.open() as fh:
                    json.load(fh)
                n += 1
    return {"seconds": time.perf_counter() - start, "peak_rss_mb": _peak_rss_mb(), "files": n}


def _child(kind: str, paths: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, *paths], capture_output=True, text=True, timeout=600, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=5000)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--child", nargs="+")
    args = parser.parse_args()
    if args.child:
        kind, *paths = args.child
        if kind == "import":
            print(json.dumps(measure_import(paths[1:], home=paths[0])))
        else:
            print(json.dumps(measure_baseline(paths)))
        return
    from envqa.demo.imported_runs import write_bulk_runs

    with tempfile.TemporaryDirectory(prefix="qa-import-bench-") as tmp:
        t0 = time.perf_counter()
        runs = write_bulk_runs(Path(tmp), n_trials=args.trials, n_tasks=args.tasks)
        generate_s = time.perf_counter() - t0
        paths = [str(runs.harbor_job), str(runs.tb_runs)]
        baseline = _child("baseline", paths)
        got = _child("import", [str(Path(tmp) / "home"), *paths])
    ok = got["seconds"] <= GOAL_SECONDS and got["peak_rss_mb"] <= GOAL_RSS_MB and got["trials"] == 2 * args.trials
    print(
        json.dumps(
            {
                "seconds": round(got["seconds"], 2),
                "peak_rss_mb": round(got["peak_rss_mb"], 1),
                "trials": got["trials"],
                "problems": got["problems"],
                "analysed": got["analysed"],
                "baseline_seconds": round(baseline["seconds"], 2),
                "baseline_peak_rss_mb": round(baseline["peak_rss_mb"], 1),
                "baseline_files": baseline["files"],
                "generate_seconds": round(generate_s, 1),
                "tasks": args.tasks,
                "goal_seconds": GOAL_SECONDS,
                "goal_peak_rss_mb": GOAL_RSS_MB,
                "ok": ok,
            }
        )
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
