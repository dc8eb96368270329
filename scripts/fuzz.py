"""`make fuzz`: qa lint and qa analyze on many mutated copies of our seed tasks, qa.toml and run folders (issue 44).

Prints the seed, then the counts: cases, tracebacks, non-JSON answers, exit-2 messages that name no file,
unexpected errors (exit 70), timeouts, half-written state, trials lost, and the first bad cases to replay.
Exit 1 when any count but the cases is above zero.

    .venv/bin/python scripts/fuzz.py --tasks 1000 --runs 300 [--seed N]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fuzz_inputs import harness
from fuzz_inputs.driver import run_cases
from fuzz_inputs.seeds import write_seeds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=1000, help="task-side cases (a quarter of them mutate qa.toml)")
    ap.add_argument("--runs", type=int, default=300, help="run-folder cases (Harbor job, tb runs)")
    ap.add_argument("--seed", type=int, default=None, help="replay a series (default: a new one, printed)")
    ap.add_argument("--show", type=int, default=15, help="bad cases to print")
    ap.add_argument("--timeout", type=float, default=15, help="seconds a case may take before it counts as a hang")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"fuzz seed {seed}: {args.tasks} task-side cases, {args.runs} run-folder cases", flush=True)
    harness.CASE_TIMEOUT_SEC = args.timeout
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="qa-fuzz-") as tmp:
        root = Path(tmp).resolve()
        seeds = write_seeds(root / "seeds")
        done = [0]

        def progress(case) -> None:
            done[0] += 1
            if done[0] % 100 == 0:
                print(f"  {done[0]} cases, {time.monotonic() - start:.0f} s", flush=True)

        tally = run_cases(seed, args.tasks, args.runs, seeds, root / "work", progress)
    figures = {
        "seed": seed,
        "cases": dict(tally.cases),
        "tracebacks": tally.problems["traceback"],
        "non_json": tally.problems["non-json"],
        "exit_2_unnamed": tally.problems["exit-2-unnamed"],
        "unexpected_errors": tally.problems["unexpected-error"],
        "timeouts": tally.problems["timeout"],
        "half_written": tally.problems["half-written"],
        "trials_lost": tally.trials_lost,
        "exit_codes": {str(k): v for k, v in sorted(tally.exits.items())},
        "seconds": round(time.monotonic() - start, 1),
    }
    for case in tally.bad[: args.show]:
        print("  bad:", case.line())
        tail = (case.answer.stderr.strip().splitlines() or [""])[-1]
        print("       ", tail[:300])
    print(json.dumps(figures))
    bad = sum(v for k, v in figures.items() if k not in ("seed", "cases", "exit_codes", "seconds"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
