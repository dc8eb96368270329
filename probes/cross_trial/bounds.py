"""A failing check that holds the work to a bound the instruction never states, read from the failure text (issue 53).

`assert 0 > 6` under "Recover as many of the rows as possible": the test passes only above a number the agents
were never told, so an agent that recovers five rows has done what it was asked and fails. The bound is a fact of
the test, not of the agent, and the instruction (from --tasks, or as the run recorded it) is the second witness:
one setup's failure text showing it is enough for a warning (the `unstated-bound-setups` need), where a count of
trials could not be reached on a small panel. A bound the instruction gives in another unit is stated (150MB for
157286400 bytes, 62% for 0.62, "six" for 6); an exit or HTTP status compared with a number is a verdict, not a
bound (probes/cross_trial/text.bound).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict

from envqa.core.imported import ImportedTrial
from envqa.core.models import Finding, Outcome, Severity
from envqa.probes.cross_trial.evidence import FAILED, Panel, TaskView
from envqa.probes.cross_trial.text import Bound, bound, one_line

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)?")
_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty"
)
_WORDS = {w: i for i, w in enumerate(_NUMBER_WORDS.split(" "))}
# 1,000^k and 1,024^k (sizes), 1/100 (a percentage), 60 and 3,600 (minutes and hours in seconds)
_UNITS = (1.0, 1e3, 1e6, 1e9, 1024.0, 1024.0**2, 1024.0**3, 0.01, 60.0, 3600.0)


def _stated_numbers(instruction: str) -> list[float]:
    out = [float(n.replace(",", "")) for n in _NUMBER.findall(instruction)]
    return out + [float(_WORDS[w]) for w in re.findall(r"[a-z]+", instruction.lower()) if w in _WORDS]


def states_bound(b: Bound, instruction: str) -> bool:
    """Whether the instruction gives the bound, in any of the usual units (bytes/KB/MB, a percentage, minutes)."""
    want = float(b.want)
    return any(
        math.isclose(want, n * unit, rel_tol=1e-6, abs_tol=1e-9)
        for n in _stated_numbers(instruction)
        for unit in _UNITS
    )


def _bounds_by_test(pool: dict[str, ImportedTrial]) -> dict[tuple[str, Bound], list[str]]:
    """(test, its bound) -> the failed trials whose failure text shows the test holding them to it; the measured
    value is dropped from the key (each agent misses the bound by its own amount)."""
    out: dict[tuple[str, Bound], list[str]] = defaultdict(list)
    for tid, t in pool.items():
        if t.outcome != Outcome.FAIL:
            continue
        for x in t.tests:
            b = bound(x.message) if x.status in FAILED else None
            if b is not None:
                out[(x.name, Bound("", b.op, b.want))].append(tid)
    return out


def _voiced(pool: dict[str, ImportedTrial], test: str) -> int:
    """The failed trials of `test` whose failure text says anything (the silent ones cannot contradict)."""
    return sum(
        any(x.name == test and x.status in FAILED and x.message.strip() for x in t.tests)
        for t in pool.values()
        if t.outcome == Outcome.FAIL
    )


def failures_on_unstated_bound(task: TaskView) -> list[Finding]:
    """One warning per test whose failure texts, in most of its voiced failures, hold the work to a bound the
    known instruction never states."""
    if not task.instruction.strip():
        return []
    pool = task.pool()
    out = []
    for (test, b), ids in sorted(_bounds_by_test(pool).items(), key=lambda kv: kv[0][0]):
        setups = sorted({pool[i].agent_model for i in ids})
        if states_bound(b, task.instruction) or len(ids) * 2 < _voiced(pool, test):
            continue
        if not task.coverage.enough("unstated-bound-setups", Panel.of(pool), len(setups)):
            continue
        quotes = [
            f"trial {pool[i].trial_name} ({pool[i].agent_model}) {test}: {one_line(_message(pool[i], test))}"
            for i in ids
        ]
        out.append(
            Finding.of(
                "failures-on-unstated-bound",
                severity=Severity.WARNING,
                message=f"{test} holds the work to `{b.op} {b.want}` in {len(ids)} failed trials of {len(setups)} "
                f"setups ({', '.join(setups)}), a bound the instruction never states: the agents could not know "
                f"how much is enough",
                evidence=quotes[:4],
                location=f"{task.task}: {test}",
                trial_ids=sorted(ids),
            )
        )
    return out


def _message(t: ImportedTrial, test: str) -> str:
    return next((x.message for x in t.tests if x.name == test), "")
