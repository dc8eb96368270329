"""A run's verdict -> the exit code `qa` ends with: one map for every command that ends on a run's verdict
(`qa run`, `qa approve/reject/resume`, `qa status --follow`), so a script reading `$?` sees the same
number whichever command finished the run, and for everything that ends on many (a dataset run, `qa analyze`),
which combines them with `combined_exit`. The README's "Exit codes" section documents these numbers;
2 (bad input) and 3 (infrastructure) also come from core/errors.py's exception classes."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Verdict(StrEnum):
    """A run's (or a dataset task's) verdict; the value is what the store, `--json` and the reports carry."""

    CLEAN = "clean"
    FINDINGS = "findings"
    OUT_OF_BAND = "out_of_band"  # pass@1 outside the difficulty band
    INCOMPLETE = "incomplete"  # a question could not be answered: nothing is claimed clean
    AWAITING_APPROVAL = "awaiting_approval"
    INVALID = "invalid"  # a dataset task that could not be loaded (never a run's verdict)


VERDICT_EXIT: dict[str, int] = {
    Verdict.CLEAN: 0,
    Verdict.FINDINGS: 1,
    Verdict.OUT_OF_BAND: 1,
    Verdict.INCOMPLETE: 3,
    Verdict.AWAITING_APPROVAL: 4,
    Verdict.INVALID: 2,
}
UNKNOWN_VERDICT_EXIT = 3  # no verdict (yet), or one this release does not know: treat as "could not judge"
# Many verdicts -> one exit code: the first rule any of them meets (a finding, or bad input, outweighs a pending
# approval, which outweighs a question left open); 0 only when none does.
EXIT_PRECEDENCE: tuple[tuple[frozenset[int], int], ...] = (
    (frozenset({1, 2}), 1),
    (frozenset({4}), 4),
    (frozenset({3}), 3),
)


def exit_code(verdict: str | None) -> int:
    """The exit code for a run's verdict."""
    return VERDICT_EXIT.get(verdict or "", UNKNOWN_VERDICT_EXIT)


def combined_exit(codes: Iterable[int]) -> int:
    """One exit code for many tasks' codes (a dataset run, `qa analyze`): 1 when any has findings or is out of
    band (or could not be loaded: 2), else 4 when any awaits approval, else 3 when any could not finish, else 0."""
    seen = set(codes)
    return next((code for group, code in EXIT_PRECEDENCE if seen & group), 0)
