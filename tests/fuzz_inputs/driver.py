"""One fuzz case each: a mutated task (qa lint), a mutated qa.toml (qa lint -c), a mutated run folder
(qa analyze), checked by harness.check; `run_cases` tallies a seeded series (scripts/fuzz.py, make fuzz)."""

from __future__ import annotations

import random
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from fuzz_inputs.harness import Answer, Verdict, check, fresh_copy, json_object, run_qa, unlock
from fuzz_inputs.mutate import Mutation, mutate

TRIAL_DIR = re.compile(r"(__[0-9a-f]{7}$)|(\.\d+-of-\d+)")  # Harbor `task__abc1234`, tb `task.1-of-3[.run]`


@dataclass
class Case:
    what: str  # "task", "config", "run"
    mutations: list[Mutation]
    argv: list[str]
    answer: Answer
    verdict: Verdict

    def line(self) -> str:
        muts = "; ".join(str(m) for m in self.mutations)
        return f"{self.what}: qa {' '.join(self.argv[:1])} ... exit {self.answer.code} [{', '.join(self.verdict.problems)}] {muts}"


@dataclass
class Tally:
    cases: Counter = field(default_factory=Counter)
    problems: Counter = field(default_factory=Counter)
    exits: Counter = field(default_factory=Counter)
    trials_lost: int = 0
    bad: list[Case] = field(default_factory=list)

    def add(self, case: Case) -> None:
        self.cases[case.what] += 1
        self.exits[case.answer.code] += 1
        for p in case.verdict.problems:
            self.problems[p] += 1
        self.trials_lost += case.verdict.lost
        if case.verdict.problems or case.verdict.lost:
            self.bad.append(case)


def task_case(rng: random.Random, seeds: dict[str, Path], work: Path) -> Case:
    kind = rng.choice(("harbor", "harbor", "tb1"))
    task = fresh_copy(seeds[kind], work / "task")
    muts = mutate(rng, task)
    as_json = rng.random() < 0.7
    argv = ["lint", str(task), *(["--json"] if as_json else [])]
    home = work / "qa-home"
    answer = run_qa(argv, home)
    unlock(task)
    return Case("task", muts, argv, answer, check(answer, as_json=as_json, names_under=[task], qa_home=home))


def config_case(rng: random.Random, seeds: dict[str, Path], work: Path) -> Case:
    cfg_dir = fresh_copy(seeds["qa.toml"].parent / "qa-config", work / "cfg")
    muts = mutate(rng, cfg_dir, 1)
    as_json = rng.random() < 0.7
    argv = ["lint", str(seeds["harbor"]), "-c", str(cfg_dir / "qa.toml"), *(["--json"] if as_json else [])]
    home = work / "qa-home"
    answer = run_qa(argv, home)
    unlock(cfg_dir)
    return Case("config", muts, argv, answer, check(answer, as_json=as_json, names_under=[cfg_dir], qa_home=home))


def _trial_of(rel: str) -> str | None:
    parts = rel.split("/")
    for i, part in enumerate(parts[:-1]):
        if TRIAL_DIR.search(part):
            return "/".join(parts[: i + 1])
    return None


def run_case(rng: random.Random, seeds: dict[str, Path], work: Path, seed_trials: dict[str, int]) -> Case:
    kind = rng.choice(("harbor_job", "tb_runs"))
    folder = fresh_copy(seeds[kind], work / kind)
    muts = mutate(rng, folder)
    as_json = rng.random() < 0.7
    argv = ["analyze", str(folder), *(["--json"] if as_json else ["--format", rng.choice(("text", "markdown"))])]
    home = work / "qa-home"
    answer = run_qa(argv, home)
    unlock(folder)
    verdict = check(answer, as_json=as_json, names_under=[folder], qa_home=home)
    if "exit-2-unnamed" in verdict.problems:  # analyze's exit 2 means "no trial readable", each file named
        verdict.problems.remove("exit-2-unnamed")
    trials = [_trial_of(m.target) for m in muts]
    doc = json_object(answer.stdout) if as_json else None
    if doc is not None and None not in trials:  # a run-level file touched: every trial may rightly go
        verdict.lost = max(0, seed_trials[kind] - len(set(trials)) - int(doc.get("trials") or 0))
    return Case("run", muts, argv, answer, verdict)


def count_trials(seeds: dict[str, Path], work: Path) -> dict[str, int]:
    """Trials `qa analyze` reads in each untouched run seed (the baseline for trials lost)."""
    out = {}
    for kind in ("harbor_job", "tb_runs"):
        answer = run_qa(["analyze", str(seeds[kind]), "--json"], work / "qa-home")
        doc = json_object(answer.stdout)
        assert doc is not None and doc["trials"] > 0, f"the {kind} seed does not read: {answer.stderr[-2000:]}"
        out[kind] = int(doc["trials"])
    return out


def prepare(seeds: dict[str, Path]) -> None:
    """The qa.toml seed in a folder of its own (a mutation picks among a folder's files)."""
    folder = seeds["qa.toml"].parent / "qa-config"
    folder.mkdir(exist_ok=True)
    shutil.copy(seeds["qa.toml"], folder / "qa.toml")


def run_cases(seed: int, n_tasks: int, n_runs: int, seeds: dict[str, Path], work: Path, progress=None) -> Tally:
    """`n_tasks` task-side cases (a quarter of them on qa.toml) and `n_runs` run-folder cases from `seed`."""
    prepare(seeds)
    rng = random.Random(seed)
    tally = Tally()
    seed_trials = count_trials(seeds, work) if n_runs else {}
    for i in range(n_tasks):
        case = config_case(rng, seeds, work) if i % 4 == 3 else task_case(rng, seeds, work)
        tally.add(case)
        if progress:
            progress(case)
    for _ in range(n_runs):
        case = run_case(rng, seeds, work, seed_trials)
        tally.add(case)
        if progress:
            progress(case)
    return tally
