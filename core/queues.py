"""Queue names: one queue per model (normalised `provider/model`), plus `sandbox` for work that needs no model
(oracle, nop, probes), `analysis` for trace labelling and `control` for run graphs.

A fact of the domain, not of Redis: roles name the queue their work belongs on, the scheduler implements it.
"""

from __future__ import annotations

import re

from envqa.core.config import QueueSettings, SchedulerSettings, builtin_queue_defaults

SANDBOX_QUEUE = "sandbox"
ANALYSIS_QUEUE = "analysis"
CONTROL_QUEUE = "control"  # run graphs themselves (`qa run --detach`, continuations after an approval)
SPECIAL_QUEUES = (SANDBOX_QUEUE, ANALYSIS_QUEUE, CONTROL_QUEUE)
# The model part may hold slashes: vllm/meta-llama/llama-3-8b, openai-compatible/name@http://127.0.0.1:8000/v1
_MODEL = re.compile(r"^[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._:@/-]*$")


def normalize_queue(name: str) -> str:
    """`Anthropic / Claude-Sonnet-4-5 ` -> `anthropic/claude-sonnet-4-5`; raises ValueError on anything else.

    The same model written two ways must share one queue, or its concurrency limit would be split.
    """
    q = re.sub(r"\s+", "", name).lower()
    if q in SPECIAL_QUEUES:
        return q
    if not _MODEL.match(q):
        raise ValueError(f"queue {name!r} is neither 'sandbox', 'analysis', 'control' nor a 'provider/model' name")
    return q


def queue_for_model(model: str | None) -> str:
    return SANDBOX_QUEUE if not model else normalize_queue(model)


def queue_settings(settings: SchedulerSettings, queue: str) -> QueueSettings:
    """Effective settings of a queue: its own section over `[scheduler.defaults]`."""
    own = {SANDBOX_QUEUE: settings.sandbox, ANALYSIS_QUEUE: settings.analysis}.get(queue)
    if own is None:
        by_name = {normalize_queue(k): v for k, v in settings.models.items()}
        own = by_name.get(normalize_queue(queue), QueueSettings())
    merged = builtin_queue_defaults().model_dump()
    for layer in (settings.defaults, own):
        merged.update({k: v for k, v in layer.model_dump().items() if v is not None})
    return QueueSettings(**merged)
