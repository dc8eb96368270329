"""The HTML report of a 500-trial run: its size, and the time until it is drawn in headless Chromium.

Builds a synthetic run on disk (report.json with two versions, four models, labels citing steps, and
500 trial directories each with an ATIF trajectory of ~20 steps, some observations of 20-60 KB, and
verifier output), then writes report.html twice from the same data:
  - lazy (what `qa` ships): traces gzip+base64, decompressed and drawn when a trial is opened;
  - eager (the baseline): traces as plain JSON, every trace drawn at load.
Each is opened in Debian's /usr/bin/chromium (never a downloaded browser); render time is the wall time
from navigation to the page's ready mark (every section drawn), median of 3 loads. For the lazy report
the time to open one trace is measured too.

    python benchmarks/report.py [--trials 500]
Last line: {"report_mb": ..., "render_s": ..., "baseline_report_mb": ..., "baseline_render_s": ..., ...}
Goal: report_mb < 10 and render_s < 2 (exit 1 when missed).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from envqa.app.report_html import write_html_report
from envqa.core.config import load_config
from envqa.core.models import Outcome, TrialResult
from envqa.store.db import Store

MODELS = ["anthropic/claude-sonnet-4-5", "openai/gpt-5", "anthropic/claude-haiku-4-5", "openai/gpt-5-mini"]
LABELS = [
    ("capability", "gave-up"),
    ("legitimate", "solved"),
    ("brittleness", "flaky-test"),
    ("ambiguity", "unstated-format"),
    ("shortcut", "read-tests"),
]
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


WORDS = [
    "error",
    "warning",
    "info",
    "debug",
    "passed",
    "failed",
    "skipped",
    "import",
    "module",
    "value",
    "config",
    "request",
    "response",
    "timeout",
    "retry",
    "worker",
    "queue",
    "item",
    "file",
    "path",
    "build",
    "compile",
    "link",
    "test",
    "assert",
    "expected",
    "actual",
    "line",
    "column",
    "token",
]


def log_text(rng: random.Random, size: int) -> str:
    """Tool output as agents see it: log and test lines with varying names and numbers (not random bytes,
    which no real output looks like, and not one repeated line, which would compress to nothing)."""
    lines, n = [], 0
    while n < size:
        kind = rng.random()
        if kind < 0.4:
            line = (
                f"tests/test_{rng.choice(WORDS)}.py::test_{rng.choice(WORDS)}_{rng.randint(0, 999)} "
                f"{rng.choice(['PASSED', 'FAILED', 'PASSED', 'SKIPPED'])} [{rng.randint(0, 100):3d}%]"
            )
        elif kind < 0.7:
            line = (
                f"2026-11-22 0{rng.randint(0, 9)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}.{rng.randint(100, 999)} "
                f"{rng.choice(['INFO', 'WARN', 'DEBUG'])} {rng.choice(WORDS)}-{rng.randint(1, 64)} "
                + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))
                + f" in {rng.uniform(0, 900):.1f} ms"
            )
        else:
            line = " ".join(
                rng.choice(WORDS) + (str(rng.randint(0, 99)) if rng.random() < 0.2 else "")
                for _ in range(rng.randint(4, 14))
            )
        lines.append(line)
        n += len(line) + 1
    return "\n".join(lines)


def trajectory(rng: random.Random, trial_id: str, model: str) -> dict:
    steps = [
        {"step_id": 1, "source": "system", "message": "You are an expert software engineer. " * 20},
        {"step_id": 2, "source": "user", "message": "Complete the following task.\n" + "details " * 200},
    ]
    for i in range(3, 3 + rng.randint(12, 24)):
        size = rng.choice(
            [200, 800, 2000, 5000, 20000 if rng.random() < 0.3 else 1500, 60000 if rng.random() < 0.1 else 300]
        )
        out = log_text(rng, size)
        steps.append(
            {
                "step_id": i,
                "source": "agent",
                "message": f"Step {i}: running a command.",
                "model_name": model,
                "tool_calls": [
                    {
                        "tool_call_id": f"c{i}",
                        "function_name": "bash",
                        "arguments": {"command": f"python3 -m pytest -q /app/tests/test_{i}.py || cat /app/log{i}"},
                    }
                ],
                "observation": {
                    "results": [{"source_call_id": f"c{i}", "content": f"exit_code: 0\n<stdout>\n{out}\n</stdout>"}]
                },
                "metrics": {
                    "prompt_tokens": 1000 + 300 * i,
                    "completion_tokens": 80,
                    "cached_tokens": 0,
                    "cost_usd": 0.004,
                },
            }
        )
    return {
        "schema_version": "ATIF-v1.4",
        "session_id": trial_id,
        "agent": {"name": "solver", "model_name": model},
        "steps": steps,
        "final_metrics": {"total_prompt_tokens": 30000},
    }


def sweep_of(rng: random.Random, n: int, shift: float) -> dict:
    models = {}
    for m in MODELS:
        p = min(1.0, max(0.0, rng.uniform(0.05, 0.6) - shift))
        models[m] = {
            "n": n,
            "passes": round(p * n),
            "pass_at_1": round(p, 4),
            "ci_low": round(max(0, p - 0.15), 4),
            "ci_high": round(min(1, p + 0.15), 4),
            "band_decision": "inside",
            "stop_reason": "done",
            "spend": {
                "calls": n * 15,
                "input_tokens": n * 30000,
                "output_tokens": n * 1500,
                "cost_usd": n * 0.12,
                "priced": True,
                "tokens": n * 31500,
            },
        }
    return {"band": [0.1, 0.3], "models": models, "overall": {}, "budget_stop": None}


def synthetic_run(home: Path, run_id: str, n_trials: int, seed: int = 5) -> None:
    rng = random.Random(seed)
    run_dir = home / "runs" / run_id
    versions = ["a1" * 32, "b2" * 32]
    trials, results, by_version = [], [], {v: [] for v in versions}
    for i in range(n_trials):
        version, model = versions[i * 2 // n_trials], MODELS[i % len(MODELS)]
        tid = f"solver-{i}-{rng.getrandbits(48):012x}"
        d = run_dir / tid
        (d / "agent").mkdir(parents=True)
        (d / "verifier").mkdir()
        traj = trajectory(rng, tid, model)
        (d / "agent" / "trajectory.json").write_text(json.dumps(traj))
        (d / "verifier" / "test-stdout.txt").write_text(log_text(rng, rng.randint(200, 6000)))
        (d / "verifier" / "reward.txt").write_text("1")
        passed = rng.random() < 0.3
        results.append(
            TrialResult(
                trial_id=tid,
                run_id=run_id,
                env_version=version,
                agent="solver",
                model=model,
                purpose="sweep",
                outcome=Outcome.PASS if passed else Outcome.FAIL,
                reward=1.0 if passed else 0.0,
                artifacts_dir=str(d),
            )
        )
        label, subtype = rng.choice(LABELS)
        cited = rng.randrange(3, len(traj["steps"]) + 1)
        trials.append(
            {
                "trial_id": tid,
                "agent": "solver",
                "purpose": "sweep",
                "model": model,
                "outcome": "pass" if passed else "fail",
                "reward": 1.0 if passed else 0.0,
                "error_class": None,
                "artifacts_dir": str(d),
                "seconds": round(rng.uniform(20, 300), 3),
                "version": version,
                "label": {
                    "label": label,
                    "subtype": subtype,
                    "confidence": 0.7,
                    "explanation": "see the cited step",
                    "evidence": [{"step_id": cited, "quote": f"Step {cited}"}],
                    "verified": True,
                    "source": "model:anthropic/claude-sonnet-4-5",
                },
            }
        )
        by_version[version].append(tid)
    patch = (
        "--- a/tests/test.sh\n+++ b/tests/test.sh\n@@ -1,2 +1,3 @@\n #!/bin/bash\n+echo 0 > /logs/verifier/reward.txt\n"
    )
    report = {
        "run_id": run_id,
        "schema_version": 2,
        "environment": {"name": "synthetic", "version": versions[1]},
        "verdict": "in_band",
        "stop_reason": "in band",
        "iterations": 2,
        "findings": [],
        "incomplete": [],
        "trials": trials,
        "sweep": None,
        "versions": [
            {
                "version": versions[0],
                "parent": None,
                "author": "user",
                "trials": by_version[versions[0]],
                "sweep": sweep_of(rng, n_trials // 8, 0.0),
                "findings": [],
            },
            {
                "version": versions[1],
                "parent": versions[0],
                "patch": patch,
                "author": "fixer:x",
                "approval": {"approver": "human:bench", "action": "approve"},
                "trials": by_version[versions[1]],
                "sweep": sweep_of(rng, n_trials // 8, 0.2),
                "findings": [],
            },
        ],
    }
    store = Store(home / "envqa.db")  # the report and the results are read from the store, as a real run's
    store.create_run(run_id, str(run_dir))
    for result in results:
        store.record_trial(result)
    store.finish_run(run_id, "in_band", report, [])
    store.close()
    (run_dir / "report.json").write_text(json.dumps(report))  # the export a real run writes too


def measure(browser, path: Path, loads: int = 3) -> dict:
    times, inner = [], []
    for _ in range(loads):
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
        t0 = time.perf_counter()
        page.goto(path.as_uri(), wait_until="commit", timeout=180000)
        page.wait_for_selector("html[data-ready='1']", timeout=180000)
        times.append(time.perf_counter() - t0)
        inner.append(page.evaluate("window.__qaRenderMs") / 1000)
        if errors:
            raise SystemExit(f"page errors in {path}: {errors[:3]}")
        first = page.locator("tr.trial-row").first.get_attribute("data-trial")
        t1 = time.perf_counter()
        if not page.locator(f"tr.trace-row[data-trial='{first}']").count():  # the eager page has them all open
            page.click(f"tr.trial-row[data-trial='{first}'] button.open")
        page.wait_for_selector(f"tr.trace-row[data-trial='{first}'] .step.cited", timeout=30000)
        trace_s = time.perf_counter() - t1
        page.close()
    return {
        "render_s": round(statistics.median(times), 3),
        "page_render_s": round(statistics.median(inner), 3),
        "trace_open_s": round(trace_s, 3),
        "mb": round(path.stat().st_size / 1e6, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=500)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "qa-home"
        t0 = time.perf_counter()
        synthetic_run(home, "bench", args.trials)
        config = load_config(None, {"home": str(home)})
        t1 = time.perf_counter()
        lazy = write_html_report(config, "bench")
        build_s = time.perf_counter() - t1
        eager = write_html_report(config, "bench", Path(tmp) / "eager.html", eager=True)
        raw_mb = sum(p.stat().st_size for p in (home / "runs" / "bench").rglob("*") if p.is_file()) / 1e6
        print(
            f"synthetic run: {args.trials} trials, {raw_mb:.1f} MB of artifacts in {t1 - t0:.1f}s; "
            f"report built in {build_s:.2f}s",
            flush=True,
        )
        with sync_playwright() as pw:
            browser = pw.chromium.launch_persistent_context(
                str(Path(tmp) / "profile"), executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
            )
            try:
                got = measure(browser, lazy)
                print(f"lazy report: {json.dumps(got)}", flush=True)
                base = measure(browser, eager, loads=1)
                print(f"eager baseline: {json.dumps(base)}", flush=True)
            finally:
                browser.close()
    ok = got["mb"] < 10 and got["render_s"] < 2
    print(
        json.dumps(
            {
                "report_mb": got["mb"],
                "render_s": got["render_s"],
                "trials": args.trials,
                "page_render_s": got["page_render_s"],
                "trace_open_s": got["trace_open_s"],
                "build_s": round(build_s, 2),
                "artifacts_mb": round(raw_mb, 1),
                "baseline_report_mb": base["mb"],
                "baseline_render_s": base["render_s"],
                "goal": {"report_mb": "< 10", "render_s": "< 2"},
                "goal_met": ok,
            }
        )
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
