"""What a run's graph nodes are handed besides their state: the machinery (config, store, versions, sandbox
backend, executor, the progress sink). It lives in core, beside the protocols it names, so every node in
graphs/ annotates its `deps` with it; graphs/run_graph.py, which wires the nodes together, builds it."""

from __future__ import annotations

from dataclasses import dataclass, field

from envqa.core.config import QAConfig
from envqa.core.events import EventSink
from envqa.core.executor import Executor
from envqa.core.sandbox import SandboxBackend
from envqa.core.store import Store, Versions


def _ignore(*_args, **_kwargs) -> None:
    return None


@dataclass
class RunDeps:
    config: QAConfig
    store: Store
    versions: Versions
    backend: SandboxBackend
    executor: Executor
    on_event: EventSink = field(default=_ignore)
