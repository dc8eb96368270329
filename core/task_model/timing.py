"""Wall-clock timing in the tests: a check that holds a measured duration to a fixed bound
(`assert time.time() - start < 2.0`, in the test, a helper, a fixture or a loop over cases). A query over the
assertion model (core/task_model/assertions.py), whose Python reader resolves the duration's names back to the
clock calls they were computed from (`Observed.detail`); probes/static/task_rules.py makes
`verifier-timing-dependent` of it.
"""

from __future__ import annotations

import re

from envqa.core.task_model.assertions import AssertionModel

CLOCK_CALL = re.compile(
    r"\b(?:time|perf_counter|monotonic|time_ns|perf_counter_ns|monotonic_ns|now|utcnow|process_time|default_timer)"
    r"\(\)"
)
ORDERED = {"<", "<=", ">", ">="}
NUMBER = re.compile(r"^-?\d+(?:\.\d*)?(?:e-?\d+)?$")


def timed_comparisons(model: AssertionModel) -> list[str]:
    """ "file:line: code" of each check of a clock-computed duration against a constant bound."""
    out: list[str] = []
    for a in model.in_language("python"):
        bound = a.expected.value or ""
        if a.op not in ORDERED or a.expected.kind != "threshold" or not NUMBER.match(bound.strip()):
            continue
        if len(CLOCK_CALL.findall(a.observes.detail)) >= 2 or (
            " - " in a.observes.detail and CLOCK_CALL.search(a.observes.detail)
        ):
            hit = f"{a.file}:{a.line}: {a.code}"
            out += [hit] if hit not in out else []
    return out
