"""Adaptive trials vs a fixed n=30 sweep on simulated tasks with known pass probabilities.

Two task populations (MIXES), 4000 tasks each by default; the last line pools both. Each simulated task draws one sequence of 30 Bernoulli(p) trial outcomes. The fixed sweep decides
below/inside/above the band from its 30-trial point estimate; the adaptive sweep reads the same
sequence one trial at a time and stops by envqa.stats.StopRule. Both run in this process on the same
outcomes, so the figures compare the rules and nothing else.

    python benchmarks/adaptive.py [--tasks 4000] [--seed 7] [--batch 2]

Last line: {"agreement": ..., "trial_fraction": ...} (goals: >= 0.95 and <= 0.40).
"""

from __future__ import annotations

import argparse
import json
import random

from envqa.config import SweepSettings
from envqa.stats import StopRule, band_of_point

FIXED_N = 30


MIXES = {
    # p ~ Uniform(0, 1): no assumption about the task population.
    "uniform": lambda rng, i: rng.random(),
    # A quarter each: never solved (p = 0), hard (0-0.4), medium (0.4-0.8), easy (0.8-1).
    "buckets": lambda rng, i: rng.uniform(*[(0.0, 0.0), (0.0, 0.4), (0.4, 0.8), (0.8, 1.0)][i % 4]),
}


def simulate(rule: StopRule, mix: str, tasks: int, seed: int, batch: int) -> dict:
    rng = random.Random(seed)
    agree = used = 0
    by_decision: dict[str, int] = {}
    for i in range(tasks):
        p = MIXES[mix](rng, i)
        outcomes = [rng.random() < p for _ in range(FIXED_N)]
        fixed = band_of_point(sum(outcomes) / FIXED_N, rule.band)
        n = passes = 0
        while not rule.should_stop(passes, n):
            # The sweep's schedule (graphs/sweep.py): one probe trial, then `batch` trials between checks.
            for _ in range(min(1 if n == 0 else batch, FIXED_N - n)):
                passes += outcomes[n]
                n += 1
        adaptive = rule.decision(passes, n)
        agree += adaptive == fixed
        used += n
        by_decision[adaptive.value] = by_decision.get(adaptive.value, 0) + 1
    return {"mix": mix, "tasks": tasks, "agreement": round(agree / tasks, 4),
            "trial_fraction": round(used / (tasks * FIXED_N), 4), "decisions": by_decision}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=4000, help="simulated tasks per mix")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--batch", type=int, default=SweepSettings().batch, help="trials between two checks")
    args = parser.parse_args()
    sw = SweepSettings()  # the defaults `qa run --adaptive` uses
    rule = StopRule(band=(sw.band_low, sw.band_high), confidence=sw.stop_confidence, n_min=sw.n_min, n_max=FIXED_N)
    print(f"rule: band={rule.band} stop_confidence={rule.confidence} n_min={rule.n_min} n_max={rule.n_max} "
          f"batch={args.batch}")
    results = [simulate(rule, mix, args.tasks, args.seed, args.batch) for mix in MIXES]
    for r in results:
        print(json.dumps(r))
    total = sum(r["tasks"] for r in results)
    print(json.dumps({"agreement": round(sum(r["agreement"] * r["tasks"] for r in results) / total, 4),
                      "trial_fraction": round(sum(r["trial_fraction"] * r["tasks"] for r in results) / total, 4)}))


if __name__ == "__main__":
    main()
