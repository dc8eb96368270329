"""A file the verifier looks for and no agent wrote, read from the failed trials' verifier output (issue 41).

When nearly every failed trial's verifier output says the same path does not exist (`No such file or directory`,
`can't open file`, `FileNotFoundError`), across several agents, the test most likely names a file the task never
asked for (a name the instruction does not give, or gives differently). A hard task fails in many ways; a
missing name fails the same way for everyone.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import NamedTuple

from envqa.core.defaults import CROSS_TRIAL_MISSING_SHARE
from envqa.core.imported import ImportedTrial
from envqa.core.models import Finding, Outcome, Severity
from envqa.probes.cross_trial.evidence import Coverage, Panel, TaskView

MISSING = re.compile(
    r"(?:can't open file|No such file or directory|FileNotFoundError)[^\n]*?['\"]?(?P<a>/[\w./-]+\w)|"
    r"(?P<b>/[\w./-]+\w)['\"]?:? (?:\[Errno 2\] )?No such file or directory"
)


def _missing_paths(text: str) -> set[str]:
    return {m.group("a") or m.group("b") for m in MISSING.finditer(text or "")}


class Missing(NamedTuple):
    """The path nearly every failure misses, the trials that miss it, and what the instruction says of it."""

    path: str
    ids: list[str]
    stated: bool  # the instruction is known and names it (its path or its file name)
    counted: bool  # the pool reached the counts (not only the instruction's witness)
    otherwise: str | None  # the instruction's own name for it, spelled otherwise (main.c.py for main.py.c)


_NAMED = re.compile(r"[\w./-]*\w\.\w+")


def _parts(name: str) -> list[str]:
    return sorted(p for p in re.split(r"[._-]+", name.rsplit("/", 1)[-1].lower()) if p)


def named_otherwise(path: str, instruction: str) -> str | None:
    """The file name the instruction gives where the verifier looks for `path`, when the two are one name spelled
    otherwise (the same parts in another order, or another case or separator: main.c.py for main.py.c); else None."""
    want = _parts(path)
    return next(
        (n for n in sorted(set(_NAMED.findall(instruction or ""))) if _parts(n) == want and not path.endswith(n)),
        None,
    )


def missing_file(
    pool: dict[str, ImportedTrial], instruction: str = "", coverage: Coverage | None = None
) -> Missing | None:
    """The path nearly every failure with verifier output misses; else None. The counts are sized to the pool
    (probes/cross_trial/evidence.py): failed trials with output, and agents/models missing the path. Where the
    instruction names the file otherwise, it is the second witness, and the `missing-unstated-setups` need (one
    setup) is enough to report it (a warning); a shortfall is kept in `coverage`."""
    coverage = coverage if coverage is not None else Coverage()
    panel = Panel.of(pool)
    failed = {tid: t for tid, t in pool.items() if t.outcome == Outcome.FAIL and t.verifier_output}
    by_path: dict[str, list[str]] = defaultdict(list)
    for tid, t in failed.items():
        for path in _missing_paths(t.verifier_output):
            by_path[path].append(tid)
    if not by_path:
        return None
    path, ids = max(by_path.items(), key=lambda kv: len(kv[1]))
    if len(ids) < CROSS_TRIAL_MISSING_SHARE * len(failed):
        return None
    stated = bool(instruction) and (path in instruction or path.rsplit("/", 1)[-1] in instruction)
    otherwise = None if stated else named_otherwise(path, instruction)
    groups = {pool[i].agent_model for i in ids}
    counted = (
        coverage.enough("missing-failed", panel, len(failed))
        and len({pool[i].agent for i in ids}) >= 2
        and coverage.enough("missing-setups", panel, len(groups))
    )
    if not counted and not (otherwise and coverage.enough("missing-unstated-setups", panel, len(groups))):
        return None
    return Missing(path, sorted(ids), stated, counted, otherwise)


def verifier_wants_missing_file(task: TaskView) -> list[Finding]:
    """The `verifier-wants-missing-file` finding: an error when the task's instruction is known and never names
    the file and the counts were met, else a warning to check it."""
    hit = missing_file(task.pool(), task.instruction, task.coverage)
    if hit is None:
        return []
    agents = sorted({task.trials[i].agent_model for i in hit.ids})
    unstated = bool(task.instruction) and not hit.stated
    if hit.otherwise:
        known = f"the instruction names it {hit.otherwise}"
    else:
        known = (
            "the instruction never names it" if unstated else "check that the instruction names it (--tasks compares)"
        )
    return [
        Finding.of(
            "verifier-wants-missing-file",
            severity=None if unstated and hit.counted else Severity.WARNING,
            message=f"the verifier reports {hit.path} missing in {len(hit.ids)} failed trials across {len(agents)} "
            f"agents/models ({', '.join(agents)}): the test looks for a file no agent wrote; {known}",
            evidence=[
                f"trial {task.trials[i].trial_name} ({task.trials[i].agent_model}): {hit.path}: No such file"
                for i in hit.ids[:4]
            ],
            location=f"{task.task}: {hit.path}",
            trial_ids=hit.ids,
        )
    ]
