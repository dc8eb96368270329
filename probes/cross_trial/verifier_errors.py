"""The verifier itself failing in every setup, read from the failed trials (issue 53 item 2).

A test that cannot import its own dependency (`ModuleNotFoundError: No module named 'numpy'`), calls a tool the
image lacks (`command not found`), or errors while being collected fails every agent the same way, whatever the
agent did. On a small panel (3 setups x 1 trial) no count of trials says much, but the same verifier error in
every setup's failures does: that is the verifier's problem (brittleness), not the agents'. A warning: an import
of the agent's own module fails the same way when no agent wrote it (the cited text tells the two apart).
"""

from __future__ import annotations

import re
from collections import defaultdict

from envqa.core.defaults import CROSS_TRIAL_ALONE_SHARE
from envqa.core.imported import ImportedTrial
from envqa.core.models import Finding, Outcome, Severity
from envqa.probes.cross_trial.evidence import Panel, TaskView

VERIFIER_ERROR = re.compile(
    r"(?P<e>ModuleNotFoundError: No module named '[\w.]+'|ImportError: cannot import name '\w+'[^\n]{0,80}"
    r"|(?:^|[\s:])(?P<tool>[\w.-]+): (?:command )?not found|ERROR collecting [\w/.-]+|INTERNALERROR[^\n]{0,80}"
    r"|fixture '\w+' not found)",
    re.M,
)


def verifier_error(t: ImportedTrial) -> str | None:
    """The first verifier error a failed trial's test messages (else its verifier output) show, or None."""
    texts = [x.message for x in t.tests if x.status in ("failed", "error")] or [t.verifier_output]
    for text in texts:
        m = VERIFIER_ERROR.search(text or "")
        if m:
            return m.group(0).strip()[:160]
    return None


def verifier_errors_everywhere(task: TaskView) -> list[Finding]:
    """One finding when the same verifier error is in nearly every failure, in every setup that failed."""
    pool = task.pool()
    failed = {tid: t for tid, t in pool.items() if t.outcome == Outcome.FAIL}
    by_error: dict[str, list[str]] = defaultdict(list)
    for tid, t in failed.items():
        error = verifier_error(t)
        if error:
            by_error[error].append(tid)
    if not by_error:
        return []
    error, ids = max(by_error.items(), key=lambda kv: len(kv[1]))
    setups = {pool[i].agent_model for i in ids}
    if not task.coverage.enough("verifier-error-setups", Panel.of(pool), len(setups)):
        return []
    if len(ids) < CROSS_TRIAL_ALONE_SHARE * len(failed) or setups != {failed[i].agent_model for i in failed}:
        return []
    return [
        Finding.of(
            "verifier-errors-everywhere",
            severity=Severity.WARNING,
            message=f"{len(ids)} of {len(failed)} failed trials, in every setup that failed ({len(setups)}: "
            f"{', '.join(sorted(setups))}), end with the same error in the verifier: {error}; the verifier fails "
            f"whatever the agent did",
            evidence=[f"trial {pool[i].trial_name} ({pool[i].agent_model}): {error}" for i in sorted(ids)[:4]],
            location=task.task,
            trial_ids=sorted(ids),
        )
    ]
