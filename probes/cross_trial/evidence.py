"""The least evidence each cross-trial rule needs, sized to the panel that ran the task (issue 53 item 2).

The rules were first calibrated on a 4,400-trial leaderboard (12 agent/model setups, five trials per task each): a
test failing alone "across three agents", "eight failed trials" missing the same file. Most people who run
`qa analyze` have two or three setups with one trial per task each, where those counts cannot be reached, so the
rules went quiet. Each rule's needs are one row of NEEDS here: what it counts, the count the corpus calibration
set (`full`), the least any panel may go down to (`floor`), and what the panel size caps it by (`scale`: the
setups, agents or trials of the task's pool). A panel of 3 setups x 1 trial needs all three setups to agree
where the corpus asked three of twelve; a share (nine in ten failures) is never lowered, since a share already
scales.

When a rule falls short the count it had is kept (`Coverage`), and the task's coverage lines say how much was
missing ("test-fails-alone: needs >= 3 agents failing one test alone, had 2"): a quiet task on a small panel is
then read as "not enough trials to say", not as "clean".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from envqa.core.defaults import (
    CROSS_TRIAL_MIN_AGENTS,
    CROSS_TRIAL_MIN_CONVERGING,
    CROSS_TRIAL_MISSING_MIN_FAILED,
)
from envqa.core.imported import ImportedTrial

EMPTY_AGENTS = frozenset({"nop"})  # an agent that does nothing: what it fails is the task's fail-to-pass set
NOT_POOL = EMPTY_AGENTS | {"oracle"}  # the reference solution and the empty agent are not in the pool
FAILED = ("failed", "error")  # a test's statuses that count as failing


class TaskView(Protocol):
    """What the rule modules read of probes/cross_trial/probe.TaskTrials (a Protocol: no import cycle)."""

    task: str
    trials: dict[str, ImportedTrial]
    instruction: str
    coverage: Coverage

    def pool(self) -> dict[str, ImportedTrial]: ...


@dataclass(frozen=True)
class Panel:
    """The size of one task's pool: distinct agent/model setups, agent names, models, and measured trials."""

    setups: int
    agents: int
    models: int
    trials: int

    @classmethod
    def of(cls, pool: dict[str, ImportedTrial]) -> Panel:
        ts = list(pool.values())
        return cls(
            setups=len({t.agent_model for t in ts}),
            agents=len({t.agent for t in ts}),
            models=len({t.model or t.agent for t in ts}),
            trials=len(ts),
        )


@dataclass(frozen=True)
class Need:
    """One rule's least evidence: `full` on a big panel, never under `floor`, capped by the panel's `scale`."""

    rule: str
    key: str
    what: str
    full: int
    floor: int
    scale: str  # "setups" | "agents" | "trials" | "fixed"
    why: str

    def at(self, panel: Panel) -> int:
        if self.scale == "fixed":
            return self.full
        return min(self.full, max(self.floor, getattr(panel, self.scale)))


NEEDS: dict[str, Need] = {
    n.key: n
    for n in (
        Need(
            "test-fails-alone",
            "alone-agents",
            "agents failing one test alone",
            CROSS_TRIAL_MIN_AGENTS,
            3,
            "agents",
            "one agent on three models is one reading of the instruction; two agents failing a core test alone is "
            "any hard task on a small panel (TB1 draws: floor 2 gave recall +0.04, precision 0.64 -> 0.50)",
        ),
        Need(
            "test-fails-alone",
            "alone-trials",
            "trials failing one test alone",
            2,
            2,
            "fixed",
            "one trial failing a test alone is any task's core test",
        ),
        Need(
            "test-fails-alone",
            "worded-setups",
            "setups whose failure text shows the test wanting a literal the instruction words otherwise",
            1,
            1,
            "fixed",
            "the instruction is the second witness: a test wanting `sha256` where the instruction says SHA-256 fails "
            "whoever follows the instruction, so one setup's failure text is enough to look (a warning; an error "
            "takes the agents the counts need)",
        ),
        Need(
            "converging-wrong-answers",
            "converging-trials",
            "failed trials ending the same way on one test",
            CROSS_TRIAL_MIN_CONVERGING,
            2,
            "setups",
            "the same wrong value from every setup of a small panel is as telling as three of a big one",
        ),
        Need(
            "converging-wrong-answers",
            "same-check-setups",
            "setups failing one check with the same message",
            3,
            3,
            "fixed",
            "a shared message with no path or value needs every setup, and three of them: two agree by chance",
        ),
        Need(
            "verifier-wants-missing-file",
            "missing-failed",
            "failed trials with verifier output",
            CROSS_TRIAL_MISSING_MIN_FAILED,
            3,
            "trials",
            "fewer say nothing about 'nearly every failure'",
        ),
        Need(
            "verifier-wants-missing-file",
            "missing-setups",
            "agent/models missing the same file",
            CROSS_TRIAL_MIN_AGENTS,
            2,
            "setups",
            "one setup missing a file is its own misreading",
        ),
        Need(
            "verifier-wants-missing-file",
            "missing-unstated-setups",
            "agent/models whose verifier output misses a file the instruction names otherwise",
            1,
            1,
            "fixed",
            "the instruction is the second witness: a verifier opening main.py.c where the instruction says main.c.py "
            "fails whoever follows the instruction, so one setup's output is enough to look (a warning; an error "
            "takes the counts above; a file the instruction never names at all may be the agent's own)",
        ),
        Need(
            "failures-on-unstated-bound",
            "unstated-bound-setups",
            "setups whose failure text shows a test's bound the instruction never states",
            1,
            1,
            "fixed",
            "the bound is a fact of the test, and the instruction is the second witness: one setup's `assert 0 > 6` "
            "under an instruction that never says 6 shows it (a warning)",
        ),
        Need(
            "verifier-errors-everywhere",
            "verifier-error-setups",
            "setups whose failures are an error in the verifier",
            3,
            2,
            "setups",
            "the verifier itself failing (an import, a missing tool) the same way in every setup is not the agents",
        ),
        Need(
            "failures-on-unstated-requirement",
            "unstated-setups",
            "setups failing a check that requires a term the instruction does not state",
            CROSS_TRIAL_MIN_AGENTS,
            2,
            "setups",
            "every setup of a small panel failing where the check wants what the instruction never says is the task; "
            "one setup failing there is its own reading",
        ),
        Need(
            "outlier-pass",
            "outlier-setups",
            "agent/models in the pool",
            3,
            3,
            "fixed",
            "one of two setups passing is a difference in skill, not an outlier",
        ),
    )
}


def need(key: str, panel: Panel) -> int:
    return NEEDS[key].at(panel)


@dataclass
class Coverage:
    """The best count each need reached on one task where it fell short (the nearest miss), for coverage lines."""

    had: dict[str, int] = field(default_factory=dict)

    def enough(self, key: str, panel: Panel, had: int) -> bool:
        """Whether `had` meets the need; a shortfall is kept (the largest `had` seen for that need)."""
        if had >= need(key, panel):
            return True
        self.had[key] = max(had, self.had.get(key, 0))
        return False

    def lines(self, panel: Panel, fired: set[str]) -> list[str]:
        """One line per need that fell short, for the rules that did not fire on this task."""
        out = []
        for key, had in sorted(self.had.items()):
            n = NEEDS[key]
            if n.rule not in fired:
                out.append(f"{n.rule}: needs >= {n.at(panel)} {n.what}, had {had}")
        return out


def needs_table() -> list[dict]:
    """Every rule's needs, for the docs and `--json`: rule, what, full, floor, scale, why."""
    return [
        {"rule": n.rule, "what": n.what, "full": n.full, "floor": n.floor, "scale": n.scale, "why": n.why}
        for n in NEEDS.values()
    ]
