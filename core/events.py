"""The progress events a run emits to its view (`on_event(RunEvent.X, **details)`): the graph's load and build
nodes, the executors (local, Redis) and the follow loop. One enum instead of string literals at each end, so a
misspelt event is a NameError, not a progress bar that silently stops. A StrEnum: a member equals its text, so
a sink that compares with strings (a test, a plugin) sees the same values as before."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum


class RunEvent(StrEnum):
    LOADED = "loaded"  # env=, findings= (the structure lint)
    BUILD_START = "build_start"  # env=
    BUILD_LOG = "build_log"  # line=
    BUILD_DONE = "build_done"  # tag=, built=, error= on a failed build
    TRIALS_QUEUED = "trials_queued"  # count= (a batch's size)
    TRIAL_START = "trial_start"  # spec=
    TRIAL_DONE = "trial_done"  # spec=, result=
    STALLED = "stalled"  # queue=, seconds=, jobs= (Redis mode: work with no live worker)
    ADOPTED = "adopted"  # version=, proposal=


EventSink = Callable[..., None]
"""`sink(event: RunEvent, **details)`."""
