"""A run's verdict -> the exit code `qa` ends with: one map for every command that ends on a run's verdict
(`qa run`, `qa approve/reject/resume`, `qa status --follow`), so a script reading `$?` sees the same
number whichever command finished the run. The README's "Exit codes" section documents these numbers;
2 (bad input) and 3 (infrastructure) also come from core/errors.py's exception classes."""

from __future__ import annotations

VERDICT_EXIT: dict[str, int] = {"clean": 0, "findings": 1, "out_of_band": 1, "incomplete": 3, "awaiting_approval": 4}
UNKNOWN_VERDICT_EXIT = 3  # no verdict (yet), or one this release does not know: treat as "could not judge"


def exit_code(verdict: str | None) -> int:
    """The exit code for a run's verdict."""
    return VERDICT_EXIT.get(verdict or "", UNKNOWN_VERDICT_EXIT)
