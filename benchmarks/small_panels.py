"""The cross-trial triage on small panels drawn from a labelled corpus, against the full corpus (issue 53 item 2).

    python benchmarks/small_panels.py --corpus RESULTS_DIR --labels tb1-labels.csv [--draws N] [--seed S]
        [--setups 3] [--json-only]

Most people who run `qa analyze` have two or three agent/model setups with one trial per task each, not the
4,400-trial leaderboard the cross-trial rules were first calibrated on. This reads RESULTS_DIR once (any folder
`qa analyze` reads: the TB1 leaderboard's `results/`, staged outside the repository), then draws N panels: SETUPS
groups (agent/model setups) chosen at random, and for each one of its runs (a `tb run` folder, a Harbor job), so
one trial per task per setup. Each panel is triaged as `qa analyze` triages it (app/analyze.triage_matching, the
siblings, worst first) and scored as the full corpus is, in the same run:
- flagged: the tasks with a finding at warning or above;
- recall: flagged tasks labelled `flawed` or `flawed-shortcut`, over the tasks so labelled that the panel holds;
- precision: flagged tasks labelled `flawed`, `flawed-shortcut` or `suspect`, over the flagged tasks (a draw that
  flags nothing has no precision and is counted apart, in `draws_flagging_nothing`).

The last line is one JSON object: draws, seed, setups, mean_recall, full_recall, mean_precision, full_precision,
full_flagged, draws_flagging_nothing, mean_flagged, no_pass (the full corpus's no-pass kinds), goal_met. Exit 1
when mean_recall < full_recall / 2 or mean_precision < 0.6; 0 when both hold; 0 with a message on stderr when
RESULTS_DIR or the labels are absent (the corpus is not in the repository: docs/benchmarks.md records the figures).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from envqa.app.analyze import read_all, triage_matching
from envqa.core.config import load_config
from envqa.core.import_match import match_trials
from envqa.core.imported import ImportedTrial
from envqa.probes.cross_trial.no_pass import no_pass_table
from envqa.probes.cross_trial.triage import sibling_shortcuts, worst_first

FLAWED = {"flawed", "flawed-shortcut"}
LABELLED_FLAW = FLAWED | {"suspect"}
MIN_PRECISION = 0.6
RECALL_SHARE = 0.5  # a panel's mean recall must be at least this share of the full corpus's


def read_labels(path: Path) -> dict[str, str]:
    with path.open(newline="") as f:
        return {row["task"]: row["label"] for row in csv.DictReader(f)}


def triage(trials: list[ImportedTrial], config) -> list[dict]:
    """What `qa analyze` (no --tasks) concludes from these trials: one triage per task, worst first."""
    triages = triage_matching(match_trials(trials, None), config)
    sibling_shortcuts(triages)
    return worst_first(triages)


def score(triages: list[dict], labels: dict[str, str]) -> dict:
    """Flagged (warning or above), recall over the flawed tasks present, precision over the flagged."""
    present = {t["task"] for t in triages}
    flagged = {t["task"] for t in triages if any(f["severity"] != "info" for f in t["findings"])}
    flawed = {n for n, lab in labels.items() if lab in FLAWED and n in present}
    hits = flagged & flawed
    labelled = {n for n in flagged if labels.get(n) in LABELLED_FLAW}
    return {
        "flagged": len(flagged),
        "flawed_present": len(flawed),
        "flawed_flagged": len(hits),
        "recall": len(hits) / len(flawed) if flawed else None,
        "precision": len(labelled) / len(flagged) if flagged else None,
        "flagged_tasks": sorted(flagged),
        "labelled_present": sorted(n for n in present if n in labels),
        "false": sorted(n for n in flagged if labels.get(n) not in LABELLED_FLAW),
    }


def runs_by_group(trials: list[ImportedTrial]) -> dict[str, dict[str, list[ImportedTrial]]]:
    """group -> run (its job path, else job name) -> trials: a run holds one trial per task."""
    out: dict[str, dict[str, list[ImportedTrial]]] = defaultdict(lambda: defaultdict(list))
    for t in trials:
        out[t.agent_model][t.job_path or t.job_name].append(t)
    return {g: dict(runs) for g, runs in out.items()}


def agent_of(runs: dict[str, list[ImportedTrial]]) -> str:
    return next(t.agent for trials in runs.values() for t in trials)


def choose_groups(
    runs: dict[str, dict[str, list[ImportedTrial]]], setups: int, distinct: str, rng: random.Random
) -> list[str]:
    """SETUPS groups at random; with `distinct="agents"`, of SETUPS different agents (the issue's "3 agents x 1
    trial": three models of one agent are one reading of the instruction, not three), when the corpus has as many."""
    order = rng.sample(sorted(runs), len(runs))
    if distinct != "agents" or len({agent_of(runs[g]) for g in order}) < setups:
        return order[:setups]
    chosen, agents = [], set()
    for g in order:
        if agent_of(runs[g]) not in agents:
            chosen.append(g)
            agents.add(agent_of(runs[g]))
    return chosen[:setups]


def draw(
    runs: dict[str, dict[str, list[ImportedTrial]]], setups: int, rng: random.Random, distinct: str = "agents"
) -> tuple[list, list]:
    """SETUPS groups at random (choose_groups), one run each, one trial per task of that run (a run folder written
    with `--n-attempts 5` holds five): (the panel's trials, its (group, run) pairs)."""
    chosen = choose_groups(runs, setups, distinct, rng)
    picked = [(g, rng.choice(sorted(runs[g]))) for g in chosen]
    panel = []
    for g, r in picked:
        by_task: dict[str, list[ImportedTrial]] = defaultdict(list)
        for t in runs[g][r]:
            by_task[t.task_name].append(t)
        panel += [rng.choice(sorted(ts, key=lambda t: t.trial_name)) for _, ts in sorted(by_task.items())]
    return panel, picked


def measure(
    corpus: Path, labels: dict[str, str], draws: int, seed: int, setups: int, distinct: str = "agents"
) -> tuple[dict, list[dict]]:
    config = load_config(None)
    trials, _problems = read_all([corpus])
    full_triages = triage(trials, config)
    full = score(full_triages, labels)
    runs = runs_by_group(trials)
    rng = random.Random(seed)
    rows = []
    for i in range(draws):
        panel, picked = draw(runs, setups, rng, distinct)
        s = score(triage(panel, config), labels)
        rows.append({"draw": i, "setups": [g for g, _ in picked], "trials": len(panel), **s})
    recalls = [r["recall"] for r in rows if r["recall"] is not None]
    precisions = [r["precision"] for r in rows if r["precision"] is not None]
    mean_recall = statistics.fmean(recalls) if recalls else 0.0
    mean_precision = statistics.fmean(precisions) if precisions else 0.0
    no_pass = no_pass_table(full_triages)
    kinds = Counter(row["kind"] for row in no_pass)
    result = {
        "draws": draws,
        "seed": seed,
        "setups": setups,
        "distinct": distinct,
        "trials": len(trials),
        "mean_recall": round(mean_recall, 4),
        "full_recall": round(full["recall"] or 0.0, 4),
        "mean_precision": round(mean_precision, 4),
        "full_precision": round(full["precision"] or 0.0, 4),
        "full_flagged": full["flagged"],
        "full_flawed_flagged": f"{full['flawed_flagged']} of {full['flawed_present']}",
        "full_false": full["false"],
        "mean_flagged": round(statistics.fmean(r["flagged"] for r in rows), 2) if rows else 0.0,
        "draws_flagging_nothing": sum(r["precision"] is None for r in rows),
        "no_pass": dict(sorted(kinds.items())),
        "false_positives": dict(Counter(n for r in rows for n in r["false"]).most_common(8)),
        "per_label": per_label(rows, labels),
    }
    result["goal_met"] = (
        result["mean_recall"] >= RECALL_SHARE * result["full_recall"] and result["mean_precision"] >= MIN_PRECISION
    )
    result["no_pass_tasks"] = [
        {"task": row["task"], "kind": row["kind"], "label": labels.get(row["task"], ""), "evidence": row["evidence"]}
        for row in no_pass
    ]
    return result, rows


def per_label(rows: list[dict], labels: dict[str, str]) -> dict[str, str]:
    """Each labelled task: `label flagged/present` over the draws, to see which flaws a small panel reaches."""
    present = Counter(n for r in rows for n in r["labelled_present"])
    hit = Counter(n for r in rows for n in r["flagged_tasks"])
    return {n: f"{labels[n]} {hit[n]}/{present[n]}" for n in sorted(present, key=lambda n: (labels[n], n))}


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def print_table(result: dict, rows: list[dict], console: Console) -> None:
    table = Table(title=f"small panels: {result['draws']} draws of {result['setups']} setups x 1 trial")
    for col in ("draw", "setups", "flagged", "flawed flagged", "recall", "precision", "false"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            str(r["draw"]),
            ", ".join(r["setups"]),
            str(r["flagged"]),
            f"{r['flawed_flagged']} of {r['flawed_present']}",
            _fmt(r["recall"]),
            _fmt(r["precision"]),
            ", ".join(r["false"]) or "-",
        )
    console.print(table)
    kinds = Table(title="no-pass tasks of the full corpus, by kind")
    for col in ("task", "label", "kind", "evidence"):
        kinds.add_column(col)
    for r in result["no_pass_tasks"]:
        kinds.add_row(r["task"], r["label"] or "-", r["kind"], r["evidence"][:150])
    for r in result["no_pass_tasks"]:
        r.pop("evidence")  # the JSON line keeps task, kind and label
    console.print(kinds)
    console.print(
        f"mean recall {result['mean_recall']:.2f} (full corpus {result['full_recall']:.2f}), mean precision "
        f"{result['mean_precision']:.2f} (full {result['full_precision']:.2f}); {result['draws_flagging_nothing']} "
        f"draw(s) flagged nothing"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True, help="the runs (e.g. the TB1 leaderboard's results/)")
    ap.add_argument("--labels", type=Path, required=True, help="task,label[,evidence] csv (tb1-labels.csv)")
    ap.add_argument("--draws", type=int, default=20, help="panels to draw (default 20)")
    ap.add_argument("--seed", type=int, default=53, help="the draws' random seed (default 53)")
    ap.add_argument("--setups", type=int, default=3, help="agent/model setups per panel (default 3)")
    ap.add_argument(
        "--distinct",
        choices=("agents", "setups"),
        default="agents",
        help="draw setups of different agents (default: the issue's 3 agents x 1 trial) or any setups",
    )
    ap.add_argument("--json-only", action="store_true", help="print only the JSON line")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir() or not args.labels.is_file():
        print(
            f"skipped: {args.corpus} or {args.labels} is absent (the corpus is not in the repository)", file=sys.stderr
        )
        return 0
    result, rows = measure(args.corpus, read_labels(args.labels), args.draws, args.seed, args.setups, args.distinct)
    if not args.json_only:
        print_table(result, rows, Console(width=200))
    print(json.dumps(result))
    return 0 if result["goal_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
