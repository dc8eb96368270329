"""Adaptive trials vs a fixed n=30 sweep, scored against each simulated task's TRUE band.

Every simulated task has a known pass probability p, so its true band (below/inside/above [low, high]) is
known. Each task draws one sequence of Bernoulli(p) outcomes; the fixed sweep calls the band from its first
30 outcomes' point estimate, the adaptive sweep reads the same sequence one trial at a time and stops by
envqa.core.stats.StopRule. Both are scored against p's true band, never against each other.

What is scored is the rule `qa` SHIPS: SweepSettings' defaults (the price of a trial, the prior, n_min,
n_max, batch), on the SCORING seeds. Those defaults were chosen on a disjoint TUNING split of seeds; this
file re-runs that choice (the most accurate grid point whose trial use is <= the budget, 40% of fixed
n=30's, on the tuning split) and reports whether it still gives the shipped defaults
(`defaults_from_tuning_seeds`), so the provenance is checked on every run rather than asserted. The tuned
rule itself is never scored: a benchmark that re-tunes before scoring measures the tuner, not the product.
(Issue 22 asked to move scoring to fresh seeds if the defaults had been tuned on the scored ones; the
re-run shows they come from TUNING_SEEDS, so SCORING_SEEDS stay as they were.)

    python benchmarks/adaptive.py [--tasks 3000]
Last line: {"accuracy": ..., "fixed30_accuracy": ..., "trial_fraction": ..., ...}
Goal: accuracy >= fixed30_accuracy with trial_fraction <= 0.40 (exit 1 when missed).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys

from envqa.core.config import SweepSettings
from envqa.core.stats import StopRule, band_of_point

FIXED_N = 30
BUDGET = 0.40
TUNING_SEEDS = (101, 102, 103)
SCORING_SEEDS = (7, 8, 9)  # disjoint from TUNING_SEEDS; never looked at while choosing parameters
GRID = {"trial_cost": (0.0045, 0.005, 0.0055, 0.006), "prior": (0.5, 1.0), "n_max": (45, 60, 90)}

MIXES = {
    # p ~ Uniform(0, 1): no assumption about the task population.
    "uniform": lambda rng, i: rng.random(),
    # A quarter each: never solved (p = 0), hard (0-0.4), medium (0.4-0.8), easy (0.8-1).
    "buckets": lambda rng, i: rng.uniform(*[(0.0, 0.0), (0.0, 0.4), (0.4, 0.8), (0.8, 1.0)][i % 4]),
}


def simulate(rule: StopRule, mix: str, tasks: int, seed: int, batch: int) -> dict:
    right = fixed_right = used = 0
    longest = max(FIXED_N, rule.n_max)
    for i in range(tasks):
        rng = random.Random(f"{mix}:{seed}:{i}")  # per task: the same p and outcomes whatever n_max is
        p = MIXES[mix](rng, i)
        truth = band_of_point(p, rule.band)
        outcomes = [rng.random() < p for _ in range(longest)]
        fixed_right += band_of_point(sum(outcomes[:FIXED_N]) / FIXED_N, rule.band) == truth
        n = passes = 0
        while not rule.should_stop(passes, n):
            # The sweep's schedule (graphs/sweep.py): one probe trial, then `batch` trials between checks.
            for _ in range(min(1 if n == 0 else batch, rule.n_max - n)):
                passes += outcomes[n]
                n += 1
        right += rule.decision(passes, n) == truth
        used += n
    return {"tasks": tasks, "right": right, "fixed_right": fixed_right, "used": used}


def score(rule: StopRule, seeds: tuple[int, ...], tasks: int, batch: int) -> dict:
    runs = [simulate(rule, mix, tasks, seed, batch) for mix in MIXES for seed in seeds]
    total = sum(r["tasks"] for r in runs)
    return {
        "accuracy": round(sum(r["right"] for r in runs) / total, 4),
        "fixed30_accuracy": round(sum(r["fixed_right"] for r in runs) / total, 4),
        "trial_fraction": round(sum(r["used"] for r in runs) / (total * FIXED_N), 4),
    }


def tune(band: tuple[float, float], tasks: int, batch: int, n_min: int) -> tuple[StopRule, dict]:
    """The most accurate rule within budget on the tuning seeds (ties: fewer trials)."""
    best: tuple[StopRule, dict] | None = None
    for values in itertools.product(*GRID.values()):
        rule = StopRule(band=band, n_min=n_min, batch=batch, **dict(zip(GRID, values)))
        s = score(rule, TUNING_SEEDS, tasks, batch)
        if s["trial_fraction"] > BUDGET:
            continue
        if best is None or (s["accuracy"], -s["trial_fraction"]) > (best[1]["accuracy"], -best[1]["trial_fraction"]):
            best = (rule, s)
    if best is None:
        raise SystemExit("no parameter set in the grid stays within the trial budget")
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=3000, help="simulated tasks per mix and seed")
    args = parser.parse_args()
    sw = SweepSettings()
    band = (sw.band_low, sw.band_high)
    shipped = StopRule(
        band=band, trial_cost=sw.stop_trial_cost, prior=sw.stop_prior, n_min=sw.n_min, n_max=sw.n_max, batch=sw.batch
    )
    keys = (*GRID, "n_min", "batch")
    rule, tuned = tune(band, args.tasks, sw.batch, sw.n_min)
    chosen = {k: getattr(rule, k) for k in keys}
    defaults = {k: getattr(shipped, k) for k in keys}
    print(f"tuned on seeds {TUNING_SEEDS}: {json.dumps(chosen)} -> {json.dumps(tuned)}", flush=True)
    scored = score(shipped, SCORING_SEEDS, args.tasks, sw.batch)
    ok = scored["accuracy"] >= scored["fixed30_accuracy"] and scored["trial_fraction"] <= BUDGET
    print(
        json.dumps(
            {
                **scored,
                "goal_met": ok,
                "scored_rule": "shipped defaults",
                "shipped_defaults": defaults,
                "defaults_from_tuning_seeds": chosen == defaults,
                "tuning_choice": chosen,
                "scoring_seeds": list(SCORING_SEEDS),
                "tuning_seeds": list(TUNING_SEEDS),
                "tasks_scored": args.tasks * len(MIXES) * len(SCORING_SEEDS),
            }
        )
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
