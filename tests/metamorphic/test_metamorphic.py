"""The metamorphic matrix of `qa lint` in the fast tier (issue 51, part 5): every example and look-alike x every
rewrite of its verifier that applies (benchmarks/metamorphic.py, the same cases), one parametrized case each.

A case passes when the rewrite gives the same findings at warning and above (rule, severity, file, line through
the rewrite's line map) as the original. The cases that fail today are real gaps of the linter, listed once in
KNOWN_GAPS and marked xfail(strict=True): a gap the assertion model closes fails here until its entry is removed,
so the list only shrinks.
"""

from __future__ import annotations

import pytest

from qa_testkit import EXAMPLES

from ._load import meta

pytestmark = pytest.mark.fast

# (example, rewrite) whose findings change under the rewrite today: each a reading the linter lacks (a rule not yet
# a query over the assertion model, core/task_model/assertions.py, that reads one spelling). None today: a new
# entry needs the reason beside it.
KNOWN_GAPS: frozenset[tuple[str, str]] = frozenset()

CASES = meta.cases(EXAMPLES)


def _param(example, rewrite):
    marks = []
    if (example.name, rewrite) in KNOWN_GAPS:
        marks.append(pytest.mark.xfail(strict=True, reason="known linter gap (KNOWN_GAPS)"))
    return pytest.param(example, rewrite, marks=marks, id=f"{example.name}:{rewrite}")


@pytest.mark.parametrize(("example", "rewrite"), [_param(e, r) for e, r in CASES])
def test_rewrite_keeps_the_findings(example, rewrite):
    case = meta.run_case(example, rewrite)
    assert case.ok, f"{example.name} x {rewrite}:\n{case.diff()}"


def test_every_known_gap_is_a_case():
    """A stale entry (an example renamed, a rewrite that no longer applies) would hide nothing and mean nothing."""
    assert {(e.name, r) for e, r in CASES} >= KNOWN_GAPS


def test_the_matrix_covers_every_rewrite_and_most_examples():
    """Each rewrite applies somewhere, and the Python rewrites together reach most examples (a rewrite that
    silently stopped applying would leave its column empty and the matrix green)."""
    by_rewrite = {r: sum(1 for _, rr in CASES if rr == r) for r in meta.REWRITES}
    assert all(n > 0 for n in by_rewrite.values()), by_rewrite
    assert by_rewrite["extract-helper"] >= 50 and by_rewrite["shell"] >= 5, by_rewrite
    assert len(CASES) >= 300
