"""A file the verifier looks for and no agent wrote, read from the failed trials' verifier output (issue 41).

When nearly every failed trial's verifier output says the same path does not exist (`No such file or directory`,
`can't open file`, `FileNotFoundError`), across several agents, the test most likely names a file the task never
asked for (a name the instruction does not give, or gives differently). A hard task fails in many ways; a
missing name fails the same way for everyone.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Protocol

from envqa.core.defaults import CROSS_TRIAL_MISSING_SHARE
from envqa.core.imported import ImportedTrial
from envqa.core.models import Finding, Outcome, Severity
from envqa.probes.cross_trial.evidence import Coverage, Panel


class TaskTrials(Protocol):
    """What this rule reads of probes/cross_trial.TaskTrials (a Protocol: no import cycle)."""

    task: str
    trials: dict[str, ImportedTrial]
    instruction: str
    coverage: Coverage

    def pool(self) -> dict[str, ImportedTrial]: ...


MISSING = re.compile(
    r"(?:can't open file|No such file or directory|FileNotFoundError)[^\n]*?['\"]?(?P<a>/[\w./-]+\w)|"
    r"(?P<b>/[\w./-]+\w)['\"]?:? (?:\[Errno 2\] )?No such file or directory"
)


def _missing_paths(text: str) -> set[str]:
    return {m.group("a") or m.group("b") for m in MISSING.finditer(text or "")}


def missing_file(
    pool: dict[str, ImportedTrial], instruction: str = "", coverage: Coverage | None = None
) -> tuple[str, list[str], bool] | None:
    """(path, trial ids, whether the instruction names it) for the path nearly every failure misses; else None.
    The counts it needs are sized to the pool (probes/cross_trial/evidence.py); a shortfall is kept in `coverage`."""
    coverage = coverage if coverage is not None else Coverage()
    panel = Panel.of(pool)
    failed = {tid: t for tid, t in pool.items() if t.outcome == Outcome.FAIL and t.verifier_output}
    if not failed or not coverage.enough("missing-failed", panel, len(failed)):
        return None
    by_path: dict[str, list[str]] = defaultdict(list)
    for tid, t in failed.items():
        for path in _missing_paths(t.verifier_output):
            by_path[path].append(tid)
    if not by_path:
        return None
    path, ids = max(by_path.items(), key=lambda kv: len(kv[1]))
    agents, groups = {pool[i].agent for i in ids}, {pool[i].agent_model for i in ids}
    if len(ids) < CROSS_TRIAL_MISSING_SHARE * len(failed) or len(agents) < 2:
        return None
    if not coverage.enough("missing-setups", panel, len(groups)):
        return None
    stated = path in instruction or path.rsplit("/", 1)[-1] in instruction
    return path, sorted(ids), stated


def verifier_wants_missing_file(task: TaskTrials) -> list[Finding]:
    """The `verifier-wants-missing-file` finding: an error when the task's instruction is known and never names
    the file, else a warning to check it."""
    hit = missing_file(task.pool(), task.instruction, task.coverage)
    if hit is None:
        return []
    path, ids, stated = hit
    agents = sorted({task.trials[i].agent_model for i in ids})
    unstated = bool(task.instruction) and not stated
    known = "the instruction never names it" if unstated else "check that the instruction names it (--tasks compares)"
    return [
        Finding.of(
            "verifier-wants-missing-file",
            severity=None if unstated else Severity.WARNING,
            message=f"the verifier reports {path} missing in {len(ids)} failed trials across {len(agents)} "
            f"agents/models ({', '.join(agents)}): the test looks for a file no agent wrote; {known}",
            evidence=[
                f"trial {task.trials[i].trial_name} ({task.trials[i].agent_model}): {path}: No such file"
                for i in ids[:4]
            ],
            location=f"{task.task}: {path}",
            trial_ids=sorted(ids),
        )
    ]
