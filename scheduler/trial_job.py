"""A trial as an rq job envelope: on its model's queue, job id = trial id, body named in envqa.core.executor."""

from __future__ import annotations

from pathlib import Path

from envqa.core.config import QAConfig
from envqa.core.executor import TRIAL_BODY, TRIAL_GIVE_UP, trial_job
from envqa.core.models import TrialSpec
from envqa.core.queues import queue_for_model
from envqa.scheduler.jobs import JobEnvelope
from envqa.scheduler.payloads import by_reference
from envqa.store.db import Store


def trial_envelope(spec: TrialSpec, env_dir: str | Path, config: QAConfig, store: Store) -> JobEnvelope:
    """The trial's job: its spec, the version's snapshot and the config's hash (scheduler/payloads.py)."""
    payload = by_reference(
        store, trial_job(spec, env_dir, config).model_dump(mode="json"), str(Path(config.db_path).resolve())
    )
    return JobEnvelope(
        job_id=spec.trial_id,
        queue=queue_for_model(spec.model),
        func=TRIAL_BODY,
        payload=payload,
        on_give_up=TRIAL_GIVE_UP,
        timeout_sec=config.scheduler.job_timeout_sec,
    )
