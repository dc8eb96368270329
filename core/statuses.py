"""The statuses of the store's rows: runs, trials, model calls, datasets and their tasks.

Each is a StrEnum whose values are the strings the store has always held (SQLite and Postgres columns, `--json`,
`qa status`), so a member compares equal to the stored string and a row written by an older `qa` reads the same.
The code names a status by its member, never by a bare string: a typo is then an AttributeError at import, not
a condition that is silently never true. SQL text keeps the literal (the store's own encoding); a status passed
as a parameter goes in as its value (`str(member)`), never as the Enum (a driver may dump an Enum by name).
"""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    """A run's row: queued (`qa run --detach` made it), running, awaiting_approval (a proposal waits for a person;
    the report so far is stored), finished (the report is final), failed (the run stopped without one)."""

    QUEUED = "queued"
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    FINISHED = "finished"
    FAILED = "failed"


# A run in one of these has its report (a dataset's task is done); `qa status --follow` stops on FINAL_RUN.
RUN_WITH_REPORT: tuple[RunStatus, ...] = (RunStatus.FINISHED, RunStatus.AWAITING_APPROVAL)
FINAL_RUN: tuple[RunStatus, ...] = (*RUN_WITH_REPORT, RunStatus.FAILED)


class TrialStatus(StrEnum):
    """A trial row's status: queued (submitted), running (an attempt started; `worker`/`lease_until` say whose,
    until when), done (`result_json` is the result, written once)."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


class CallStatus(StrEnum):
    """A model call's row (a call run as a job): queued until a worker finishes it, then done (`result_json`)
    or failed (`error_class`, `error_message`)."""

    QUEUED = "queued"
    DONE = "done"
    FAILED = "failed"


FINAL_CALL: tuple[CallStatus, ...] = (CallStatus.DONE, CallStatus.FAILED)


class DatasetStatus(StrEnum):
    """A dataset run's row (`qa run PATH...`): running until its report is written."""

    RUNNING = "running"
    INTERRUPTED = "interrupted"  # Ctrl-C or a signal stopped it: --resume continues
    FINISHED = "finished"


class DatasetTaskStatus(StrEnum):
    """One task of a dataset run: pending, running (its run started), done (its row is final), invalid (it could
    not be loaded), failed (its run stopped without a report)."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    INVALID = "invalid"
    FAILED = "failed"


# A task in one of these is never run again by --resume.
FINAL_TASK: tuple[DatasetTaskStatus, ...] = (DatasetTaskStatus.DONE, DatasetTaskStatus.INVALID)
