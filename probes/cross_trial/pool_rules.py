"""The pool's own patterns (issue 33): one setup passing what every other fails, and agents that never ran.

Neither says the task is flawed: an outlier pass is a trajectory to read (a skill, or a shortcut), an agent that
never ran is the harness's problem, kept out of every pass rate. Both are info findings.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Protocol

from envqa.core.imported import ImportedTrial
from envqa.core.models import Finding, Outcome


class TaskTrials(Protocol):
    """What these rules read of probes/cross_trial/probe.TaskTrials (a Protocol: no import cycle)."""

    task: str
    trials: dict[str, ImportedTrial]

    def pool(self) -> dict[str, ImportedTrial]: ...

    def enough(self, key: str, had: int) -> bool: ...


def _finding(rule: str, message: str, evidence: list[str], ids: list[str], location: str) -> Finding:
    return Finding.of(rule=rule, message=message, evidence=evidence[:12], location=location, trial_ids=sorted(ids))


def outlier_pass(task: TaskTrials) -> list[Finding]:
    by_agent: dict[str, list[str]] = defaultdict(list)
    for tid, t in task.pool().items():
        by_agent[t.agent_model].append(tid)
    passers = {a: [i for i in ids if task.trials[i].outcome == Outcome.PASS] for a, ids in by_agent.items()}
    passers = {a: ids for a, ids in passers.items() if ids}
    if len(passers) != 1 or not task.enough("outlier-setups", len(by_agent)):
        return []
    agent, ids = next(iter(passers.items()))
    others = sorted(set(by_agent) - {agent})
    return [
        _finding(
            "outlier-pass",
            f"only {agent} passes {task.task} ({len(ids)} of {len(by_agent[agent])} trials); "
            f"{len(others)} other agents fail every trial ({', '.join(others)}): review this pass",
            [f"trial {task.trials[i].trial_name} trajectory: {task.trials[i].path}" for i in ids],
            ids,
            task.task,
        )
    ]


def agent_never_ran(task: TaskTrials) -> list[Finding]:
    by_agent: dict[str, list[str]] = defaultdict(list)
    for tid, t in task.trials.items():
        if t.infra_class == "agent-never-ran":
            by_agent[t.agent_model].append(tid)
    return [
        _finding(
            "agent-never-ran",
            f"{agent} never ran in {len(ids)} trial(s) of {task.task}: a harness problem, left out of the pass rate",
            [f"trial {task.trials[i].trial_name}: {task.trials[i].error_message or 'no steps'}" for i in ids],
            ids,
            task.task,
        )
        for agent, ids in sorted(by_agent.items())
    ]
