"""The job a worker runs for one real trial: load the environment, run the trial, record it once.

Provider trouble (rate limits, 5xx) and transient sandbox failures are raised to the worker, whose
policy parks, retries or gives up; `give_up_trial` then records the infra result with its class, so the
trial ends in the store either way and never counts in a pass rate.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel

from envqa.agents.base import Agent, AgentContext, AgentRun, create_agent
from envqa.core.config import QAConfig
from envqa.core.errors import InfraError, InputError, ProviderError
from envqa.core.models import Outcome, TrialResult, TrialSpec, utcnow
from envqa.scheduler.jobs import JobEnvelope
from envqa.core.policy import TRANSIENT_INFRA
from envqa.scheduler.queues import queue_for_model
from envqa.core.layout import RunLayout
from envqa.store.db import Store
from envqa.store.shared_files import for_this_host, upload_trial_artifacts


class TrialJob(BaseModel):
    spec: TrialSpec
    env_dir: str
    config: dict  # QAConfig as JSON, home made absolute: workers may run elsewhere


def trial_envelope(spec: TrialSpec, env_dir: str | Path, config: QAConfig) -> JobEnvelope:
    cfg = config.model_copy(update={"home": Path(config.home).resolve()})
    job = TrialJob(spec=spec, env_dir=str(Path(env_dir).resolve()), config=cfg.model_dump(mode="json", by_alias=True))
    return JobEnvelope(job_id=spec.trial_id, queue=queue_for_model(spec.model), func=f"{__name__}.run_trial_job",
                       payload=job.model_dump(mode="json"), on_give_up=f"{__name__}.give_up_trial",
                       timeout_sec=config.scheduler.job_timeout_sec)


@lru_cache(maxsize=8)
def _store(path: str) -> Store:
    return Store(path)


@lru_cache(maxsize=4)
def _backend(config_json: str):
    from envqa.sandbox.docker_backend import DockerBackend

    config = QAConfig.model_validate_json(config_json)
    return DockerBackend(image_map=config.sandbox.resolved_image_map(), label=config.sandbox.label)


class _CatchProviderError:
    """Wraps the agent so a provider error that run_trial turns into an infra result reaches the policy."""

    def __init__(self, inner: Agent):
        self.inner, self.name, self.error = inner, inner.name, None

    def run(self, ctx: AgentContext) -> AgentRun:
        try:
            return self.inner.run(ctx)
        except ProviderError as e:
            self.error = e
            raise


def run_trial_job(payload: dict) -> dict:
    from envqa.agents.trial import run_trial
    from envqa.core.environment import load_environment

    job = TrialJob.model_validate(payload)
    config = QAConfig.model_validate(job.config)
    store, spec = _store(str(config.db_path)), job.spec
    config, env_dir = for_this_host(store, config, job.env_dir, spec.env_version)
    done = store.get_trial(spec.trial_id)
    if done is None:
        store.mark_trial_running(spec.trial_id)
        env = load_environment(env_dir)
        if env.version != spec.env_version:
            raise InputError(env_dir, "the environment changed on disk since this trial was queued")
        agent = _CatchProviderError(create_agent(spec.agent, model=spec.model, config=config))
        result = run_trial(spec, env, _backend(config.model_dump_json(by_alias=True)), config,
                           RunLayout(config.runs_dir, spec.run_id), agent=agent)
        if agent.error is not None:
            raise agent.error
        if result.outcome == Outcome.INFRA and result.error_class in TRANSIENT_INFRA:
            raise InfraError(result.error_message or result.error_class, result.error_class)
        if store.shared:  # files first: once recorded, every host can read them
            trial_dir = Path(config.runs_dir) / spec.run_id / spec.trial_id
            upload_trial_artifacts(store, spec.run_id, spec.trial_id, trial_dir)
        store.record_trial(result)
        done = result
    return {"trial_id": done.trial_id, "outcome": done.outcome.value, "reward": done.reward}


def give_up_trial(payload: dict, error_class: str, message: str) -> None:
    """Record the trial as infra with its class (the last attempt's result.json when there is one)."""
    job = TrialJob.model_validate(payload)
    config = QAConfig.model_validate(job.config)
    spec, store = job.spec, _store(str(config.db_path))
    config, _env_dir = for_this_host(store, config, job.env_dir, spec.env_version)
    path = RunLayout(config.runs_dir, spec.run_id).root / spec.trial_id / "result.json"
    if path.is_file():
        result = TrialResult.model_validate_json(path.read_text())
        result.outcome, result.error_class = Outcome.INFRA, result.error_class or error_class
        result.error_message = message
    else:
        result = TrialResult(trial_id=spec.trial_id, run_id=spec.run_id, env_version=spec.env_version,
                             agent=spec.agent, model=spec.model, purpose=spec.purpose, outcome=Outcome.INFRA,
                             error_class=error_class, error_message=message, finished_at=utcnow())
    if store.shared and path.parent.is_dir():
        upload_trial_artifacts(store, spec.run_id, spec.trial_id, path.parent)
    store.record_trial(result)
