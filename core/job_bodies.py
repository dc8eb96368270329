"""The job bodies' registry: core names a job by its `JobKind`, never by a function of a layer above it.

A job is plain data that names the function a worker runs by a dotted path (rq resolves it by import). The
bodies live in the app layer (envqa.app.jobs, envqa.app.detach): they wire roles to a sandbox backend and a
store, which only the app may import. So the path a job carries is one of the trampolines below, a stable
name inside core; the trampoline looks its kind up in this registry and calls the body the app registered
(`register_job_body`). The app registers a loader at import (envqa/app/__init__.py), so the heavy body
modules load only when a process first runs a job. A process that never imported the app (a stock `rq worker`
on our queues) finds the same loader through the `envqa.job_bodies` entry point group (pyproject.toml), the
way Harbor finds plugins: package metadata, not a function name written in code.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from importlib.metadata import entry_points
from typing import Any


class JobKind(StrEnum):
    """One kind of job body; the value is also the name of its trampoline in this module."""

    TRIAL = "run_trial"
    TRIAL_GIVE_UP = "give_up_trial"
    PROBE = "run_probe"
    PROBE_GIVE_UP = "give_up_probe"
    CALL = "run_call"
    CALL_GIVE_UP = "give_up_call"
    LABEL = "label_trial"  # the trace analyst's call: label one trial (needs the store)
    GRAPH = "run_graph"
    GRAPH_GIVE_UP = "give_up_graph"


_BODIES: dict[JobKind, Callable[..., Any]] = {}
_LOADERS: list[Callable[[], None]] = []
ENTRY_POINT_GROUP = "envqa.job_bodies"


def register_job_body(kind: JobKind, body: Callable[..., Any]) -> None:
    """The layer that owns the body registers it; registering a kind twice with another function is a bug."""
    known = _BODIES.get(kind)
    if known is not None and known is not body:
        raise ValueError(f"job kind {kind.value!r} already has a body: {known.__module__}.{known.__qualname__}")
    _BODIES[kind] = body


def register_job_loader(load: Callable[[], None]) -> None:
    """A function that registers bodies when one is first needed (it imports the heavy body modules)."""
    if load not in _LOADERS:
        _LOADERS.append(load)


def job_body(kind: JobKind) -> Callable[..., Any]:
    """The registered body of `kind`, loading the registered loaders once when it is not there yet."""
    if kind not in _BODIES:
        for load in list(_LOADERS):
            load()
    if kind not in _BODIES:
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            register_job_loader(entry.load())
        for load in list(_LOADERS):
            load()
    try:
        return _BODIES[kind]
    except KeyError:
        raise LookupError(
            f"no job body is registered for {kind.value!r}: no loader registered one and no "
            f"{ENTRY_POINT_GROUP!r} entry point did (is envqa installed, `pip install -e .`?)"
        ) from None


def job_path(kind: JobKind) -> str:
    """The dotted name a job carries for `kind`: its trampoline in this module (stable across releases)."""
    return f"{__name__}.{kind.value}"


def _trampoline(kind: JobKind) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        return job_body(kind)(*args, **kwargs)

    run.__name__ = run.__qualname__ = kind.value
    run.__doc__ = f"Run the registered body of {kind.value!r} (what rq imports by name)."
    return run


# The trampolines, one per kind: `job_path(kind)` names them; tests/foundation/test_job_bodies.py checks the set.
run_trial = _trampoline(JobKind.TRIAL)
give_up_trial = _trampoline(JobKind.TRIAL_GIVE_UP)
run_probe = _trampoline(JobKind.PROBE)
give_up_probe = _trampoline(JobKind.PROBE_GIVE_UP)
run_call = _trampoline(JobKind.CALL)
give_up_call = _trampoline(JobKind.CALL_GIVE_UP)
label_trial = _trampoline(JobKind.LABEL)
run_graph = _trampoline(JobKind.GRAPH)
give_up_graph = _trampoline(JobKind.GRAPH_GIVE_UP)
