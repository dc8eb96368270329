"""Base rates of the file rules: on how many tasks of a dataset each rule fires, per severity (issue 52 item 5).

    python benchmarks/rule_base_rates.py DIR... [--by-family] [--json-only]

Each DIR is a dataset: every task under it (a folder with task.toml or task.yaml; the walk stops at a task, hidden
folders are skipped) is linted in process, as `qa lint --json` lints it (load_environment(lint=True), then
lint_findings). A DIR may also be `NAME=GLOB` (quoted, so the shell leaves it): the folders GLOB matches, tasks or
folders of tasks, make one dataset called NAME (`tb2-2.1='/corpus/tb2/pairs/*/2.1'`). `--by-family` adds a table
per immediate subfolder of a DIR (aws-bench's service families, the Terminal-Bench adapters).

A rule that warns on many tasks of a dataset written by others is either a convention of that dataset or a rule
that needs calibrating (DESIGN.md: a rule earns its severity on real tasks). Per dataset and rule: the tasks it
fires on at each severity; tasks refused (qa's load error, with the first error's message) and crashed (an
exception in qa: a bug of ours) are counted apart and are not in the denominator. The last line is one JSON object;
`over` lists the rules that fire at warning or above on more than OVER_SHARE of the linted tasks of any dataset
(and on OVER_MIN_TASKS of them at least: one task of thirteen is not a base rate). Exit 1 when `over` is non-empty,
0 when it is empty, and 0 with a message on stderr when a DIR is absent or a GLOB matches nothing (the corpora are
not in the repository, so CI has none: docs/benchmarks.md records the figures).
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from envqa.core.environment import load_environment
from envqa.core.errors import InputError
from envqa.probes.static.task_schema import lint_findings

OVER_SHARE = 0.05  # a warning on more than 5% of a dataset's tasks is a base rate worth reading
OVER_MIN_TASKS = 2  # ... on at least 2 of them: one task of a small dataset is an anecdote, not a rate
RAISED = ("warning", "error", "critical")
SEVERITIES = ("critical", "error", "warning", "info")
TASK_FILES = ("task.toml", "task.yaml")
ERRORS_SHOWN = 10  # refused/crashed tasks listed by name in the JSON, per dataset


@dataclass
class Tally:
    """One dataset's (or family's) counts: tasks per (rule, severity), refused and crashed tasks."""

    tasks: int = 0
    fired: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    refused: dict[str, str] = field(default_factory=dict)
    crashed: dict[str, str] = field(default_factory=dict)

    @property
    def linted(self) -> int:
        return self.tasks - len(self.refused) - len(self.crashed)

    def add(self, task: str, result: dict) -> None:
        self.tasks += 1
        if result["refused"] is not None:
            self.refused[task] = result["refused"]
        elif result["crashed"] is not None:
            self.crashed[task] = result["crashed"]
        for rule, severity in result["fired"]:
            self.fired[(rule, severity)].add(task)

    def raised(self) -> dict[str, int]:
        """Tasks each rule fires on at warning or above (a task counted once whatever its severities)."""
        by_rule: dict[str, set[str]] = defaultdict(set)
        for (rule, severity), tasks in self.fired.items():
            if severity in RAISED:
                by_rule[rule] |= tasks
        return {rule: len(tasks) for rule, tasks in by_rule.items()}

    def public(self) -> dict:
        rules: dict[str, dict[str, int]] = defaultdict(dict)
        for (rule, severity), tasks in sorted(self.fired.items()):
            rules[rule][severity] = len(tasks)
        return {
            "tasks": self.tasks,
            "linted": self.linted,
            "refused": len(self.refused),
            "crashed": len(self.crashed),
            "rules": dict(rules),
            "refused_reasons": dict(Counter(self.refused.values()).most_common(ERRORS_SHOWN)),
            "refused_errors": dict(sorted(self.refused.items())[:ERRORS_SHOWN]),
            "crashed_errors": dict(sorted(self.crashed.items())[:ERRORS_SHOWN]),
        }


def find_tasks(root: Path) -> list[Path]:
    """Every task under root (root itself when it is one): the walk stops descending at a task."""
    if any((root / name).is_file() for name in TASK_FILES):
        return [root]
    out: list[Path] = []
    for child in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        out += find_tasks(child)
    return out


def lint_task(task_dir: Path) -> dict:
    """(rule, severity) pairs `qa lint` finds on one task, or why it refused it (or crashed on it)."""
    try:
        env = load_environment(task_dir, lint=True)
        findings = lint_findings(env)
    except InputError as e:  # the task's own folder left out of the message, so that reasons can be counted
        first = (str(e).splitlines() or [type(e).__name__])[0].replace(f"{task_dir}/", "")
        return {"refused": first, "crashed": None, "fired": set()}
    except Exception as e:  # noqa: BLE001 - a bug of ours on someone's task is a figure here, not the end of the run
        return {"refused": None, "crashed": f"{type(e).__name__}: {e}".splitlines()[0], "fired": set()}
    return {"refused": None, "crashed": None, "fired": {(f.rule, str(f.severity)) for f in findings}}


def datasets_of(args: list[str]) -> tuple[dict[str, list[Path]], list[str]]:
    """Each argument's roots (a DIR, or NAME=GLOB's matches) by dataset name, and the arguments that name nothing."""
    out: dict[str, list[Path]] = {}
    missing = []
    for arg in args:
        name, _, pattern = arg.partition("=") if "=" in arg else (arg, "", arg)
        roots = [Path(p) for p in sorted(glob.glob(pattern)) if Path(p).is_dir()]
        if not roots:
            missing.append(arg)
        out[name] = roots
    return out, missing


def family_of(task: Path, roots: list[Path]) -> str:
    """The immediate subfolder of the root a task is under ("." for a task that is a root itself)."""
    for root in roots:
        if task == root:
            return "."
        if root in task.parents:
            return task.relative_to(root).parts[0]
    return "."


def measure(datasets: dict[str, list[Path]], by_family: bool) -> tuple[dict[str, Tally], dict[str, dict[str, Tally]]]:
    tallies: dict[str, Tally] = {}
    families: dict[str, dict[str, Tally]] = {}
    for name, roots in datasets.items():
        tally, fams = Tally(), defaultdict[str, Tally](Tally)
        for root in roots:
            for task in find_tasks(root):
                label = str(task.relative_to(root.parent)) if len(roots) > 1 else str(task.relative_to(root))
                result = lint_task(task)
                tally.add(label, result)
                if by_family:
                    fams[family_of(task, roots)].add(label, result)
        tallies[name] = tally
        if by_family:
            families[name] = dict(sorted(fams.items()))
    return tallies, families


def over_share(tallies: dict[str, Tally]) -> list[dict]:
    """The rules at warning or above on more than OVER_SHARE of a dataset's linted tasks, most first."""
    out = []
    for name, tally in tallies.items():
        for rule, n in tally.raised().items():
            if n >= OVER_MIN_TASKS and n / tally.linted > OVER_SHARE:
                out.append({"dataset": name, "rule": rule, "tasks": n, "of": tally.linted})
    return sorted(out, key=lambda o: (o["dataset"], -o["tasks"], o["rule"]))


def show(console: Console, title: str, tally: Tally) -> None:
    t = Table(title=f"{title}: {tally.linted} tasks linted, {len(tally.refused)} refused, {len(tally.crashed)} crashed")
    t.add_column("rule")
    for severity in SEVERITIES:
        t.add_column(severity, justify="right")
    t.add_column("share ≥ warning", justify="right")
    raised = tally.raised()
    rules = sorted({r for r, _s in tally.fired}, key=lambda r: (-raised.get(r, 0), r))
    for rule in rules:
        counts = [len(tally.fired.get((rule, s), ())) for s in SEVERITIES]
        share = f"{raised[rule] / tally.linted:.0%}" if rule in raised and tally.linted else "-"
        t.add_row(rule, *(str(c) if c else "-" for c in counts), share)
    console.print(t)
    for reason, n in Counter(tally.refused.values()).most_common(ERRORS_SHOWN):
        console.print(f"  refused ({n} tasks): {reason}", markup=False, highlight=False, soft_wrap=True)
    for task, error in sorted(tally.crashed.items())[:ERRORS_SHOWN]:
        console.print(f"  crashed: {task}: {error}", markup=False, highlight=False, soft_wrap=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("dirs", nargs="+", metavar="DIR", help="a folder of tasks, or NAME=GLOB")
    parser.add_argument("--by-family", action="store_true", help="also a table per immediate subfolder of a DIR")
    parser.add_argument("--json-only", action="store_true", help="print only the last JSON line")
    args = parser.parse_args(argv)
    datasets, missing = datasets_of(args.dirs)
    if missing:
        print(f"rule_base_rates: skipped: no such folder: {', '.join(missing)}", file=sys.stderr)
        print(json.dumps({"skipped": True, "missing": missing}))
        return 0
    tallies, families = measure(datasets, args.by_family)
    if not args.json_only:
        console = Console(width=160)
        for name, tally in tallies.items():
            show(console, name, tally)
            for fam, ftally in families.get(name, {}).items():
                show(console, f"{name} / {fam}", ftally)
    over = over_share(tallies)
    result = {
        "over": over,
        "over_share": OVER_SHARE,
        "over_min_tasks": OVER_MIN_TASKS,
        "datasets": {name: t.public() for name, t in tallies.items()},
        "families": {
            name: {f: {"linted": t.linted, "rules": t.public()["rules"]} for f, t in fams.items()}
            for name, fams in families.items()
        },
    }
    print(json.dumps(result))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
