"""What a checkout's probes cost per task, against a baseline checkout, over the detection table's examples.

Both sides run `qa run examples/NAME --json -c <the detection table's config> --oracle-runs 1` (what
tests/probes/test_detection.py runs) on the SAME example files (the candidate's examples/), one after the other,
serially, each with a fresh QA_HOME. The order alternates per example (baseline first, then candidate first), so
a warm image cache or a busy moment favours neither side. The figure is the ratio of the median seconds per task
over the examples both checkouts have; examples only the candidate has are reported beside it.

    python benchmarks/detection_cost.py --baseline /tmp/before --candidate . [--only NAME ...]

Each checkout needs its own venv (`bash scripts/setup.sh --venv-only` in it); the Docker engine and the base image
must be up (`make setup`). Last line: {"baseline": {...}, "candidate": {...}, "median_ratio": ...}; exits 1 when
the candidate's median is more than GOAL_RATIO times the baseline's, or when a run did not give a JSON report.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from qa_testkit import detection_toml  # the detection table's configuration, from its one home

GOAL_RATIO = 1.25
RUN_TIMEOUT = 900.0


def examples_of(checkout: Path) -> list[str]:
    return sorted(p.parent.name for p in (checkout / "examples").glob("*/qa-expected.json"))


def run_one(checkout: Path, example: Path, config: Path) -> dict:
    """One `qa run` of the example with the checkout's own qa: its wall seconds, exit code, and findings."""
    with tempfile.TemporaryDirectory(prefix="qa-cost-") as home:
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "QA_STORE_URL")} | {"QA_HOME": home}
        started = time.monotonic()
        try:
            proc = subprocess.run(
                [str(checkout / ".venv" / "bin" / "qa"), "run", str(example), "--json", "-c", str(config)]
                + ["--oracle-runs", "1"],
                capture_output=True,
                text=True,
                env=env,
                cwd=checkout,
                timeout=RUN_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return {"seconds": RUN_TIMEOUT, "code": None, "report": False, "rules": []}
        seconds = time.monotonic() - started
    try:
        rules = sorted({f["rule"] for f in json.loads(proc.stdout)["findings"]})
        parsed = True
    except (ValueError, KeyError, TypeError):
        rules, parsed = [], False
    return {"seconds": round(seconds, 2), "code": proc.returncode, "report": parsed, "rules": rules}


def summary(rows: list[dict]) -> dict:
    seconds = [r["seconds"] for r in rows]
    return {
        "tasks": len(rows),
        "median_s": round(statistics.median(seconds), 2) if seconds else None,
        "max_s": round(max(seconds), 2) if seconds else None,
        "total_s": round(sum(seconds), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="a checkout with its own .venv")
    parser.add_argument("--candidate", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--only", nargs="*", default=None, help="example names (default: every example)")
    args = parser.parse_args(argv)
    baseline, candidate = args.baseline.resolve(), args.candidate.resolve()
    for checkout in (baseline, candidate):
        if not (checkout / ".venv" / "bin" / "qa").exists():
            print(f"{checkout}: no .venv/bin/qa (run `bash scripts/setup.sh --venv-only` there)", file=sys.stderr)
            return 2
    examples = candidate / "examples"
    names = args.only or examples_of(candidate)
    shared = set(examples_of(baseline))
    rows: dict[str, list[dict]] = {"baseline": [], "candidate": [], "candidate_only": []}
    with tempfile.TemporaryDirectory(prefix="qa-cost-config-") as tmp:
        config = Path(tmp) / "qa.toml"
        config.write_text(detection_toml())
        for i, name in enumerate(names):
            sides = [("baseline", baseline), ("candidate", candidate)] if name in shared else [("candidate", candidate)]
            for side, checkout in sides if i % 2 == 0 else sides[::-1]:
                row = {"example": name, "side": side, **run_one(checkout, examples / name, config)}
                rows[side if name in shared else "candidate_only"].append(row)
                print(json.dumps(row), flush=True)
    base, cand = summary(rows["baseline"]), summary(rows["candidate"])
    ratio = round(cand["median_s"] / base["median_s"], 3) if base["median_s"] and cand["median_s"] else None
    no_report = [f"{r['side']}:{r['example']}" for side in rows.values() for r in side if not r["report"]]
    result = {
        "baseline": {"checkout": str(baseline), **base},
        "candidate": {"checkout": str(candidate), **cand},
        "candidate_all": summary(rows["candidate"] + rows["candidate_only"]),
        "median_ratio": ratio,
        "goal_ratio": GOAL_RATIO,
        "no_report": no_report,
    }
    print(json.dumps(result))
    return 0 if ratio is not None and ratio <= GOAL_RATIO and not no_report else 1


if __name__ == "__main__":
    sys.exit(main())
