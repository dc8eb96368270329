"""A probe as an rq job envelope on the `sandbox` queue (the job and its body: envqa.core.executor.ProbeJob,
envqa.app.jobs.run_probe_job)."""

from __future__ import annotations

from pathlib import Path

from envqa.core.config import QAConfig
from envqa.core.executor import PROBE_BODY, PROBE_GIVE_UP, ProbeJob
from envqa.core.queues import SANDBOX_QUEUE
from envqa.scheduler.jobs import JobEnvelope
from envqa.scheduler.payloads import by_reference
from envqa.store.db import Store


def probe_envelope(job: ProbeJob, config: QAConfig, store: Store) -> JobEnvelope:
    """The probe's job; its config travels by hash (scheduler/payloads.py). The job id is the ProbeJob's, which
    the whole config decides."""
    payload = by_reference(store, job.model_dump(mode="json"), str(Path(config.db_path).resolve()))
    return JobEnvelope(
        job_id=job.job_id,
        queue=SANDBOX_QUEUE,
        func=PROBE_BODY,
        payload=payload,
        on_give_up=PROBE_GIVE_UP,
        timeout_sec=config.scheduler.job_timeout_sec,
    )
