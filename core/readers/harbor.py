"""Reads Harbor (0.26) output: a trial folder, a job folder of trial folders, or a folder of jobs.

Where each fact comes from (Harbor 0.26.0 source):
  - `harbor/models/trial/paths.py` TrialPaths: `<trial>/result.json` (TrialResult), `agent/` (the agent's logs;
    `agent/trajectory.json` is ATIF), `verifier/` (`reward.txt` | `reward.json`, `test-stdout.txt`,
    `ctrf.json` when the task's test.sh runs pytest-json-ctrf), `exception.txt`, `trial.log`; multi-step trials
    keep each step's files under `steps/<step_name>/{agent,verifier}/` and none at the root.
  - `models/trial/result.py` TrialResult: `schema_version` (Literal[1]; omitted means 1), `task_name`,
    `trial_name`, `task_checksum`, `source` (dataset), `agent_info.name`, `agent_info.model_info.{provider,name}`,
    `verifier_result.rewards`, `exception_info.{exception_type,exception_message}`, `started_at`/`finished_at`,
    `step_results[]` (StepResult: `step_name`, `verifier_result`, `exception_info`).
  - `models/job/result.py` JobResult is `<job>/result.json`; Job (`job.py` `_write_job_result`) writes it
    without `trial_results`, so trials are read from the trial folders; its counts, by core/readers/harbor_job.py.
  - `models/trial/error_policy.py`: which exception types leave no valid reward (`has_valid_reward=False`);
    those trials are infra. AgentTimeoutError and NonZeroAgentExitCodeError keep a valid reward, so a
    timed-out agent whose verifier passed is a pass, as Harbor's JobStats counts it.
  - `models/trajectories/` ATIF: `steps[].{step_id,source,message,tool_calls[].arguments,observation.results[].content}`.
  - pytest-json-ctrf (`ctrf/TestObject.py`): `results.tests[].{name,status,message,trace}`; `message` is generic
    ("The test failed in the call phase ..."), the assertion is in `trace` (pytest's longreprtext).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from envqa.core.imported import ImportedTrial, ImportProblem, TrajectoryStep
from envqa.core.models import Outcome, StepResult
from envqa.core.readers.common import MESSAGE_MAX, ReadError, load_object, read_text, says_not_found, trim
from envqa.core.readers.groups import job_label
from envqa.core.readers.harbor_files import stdout_tail, trajectory, verifier_tests
from envqa.core.rewards import VerifierError, parse_reward_files

# harbor/models/trial/error_policy.py: has_valid_reward=False groups (the reward, if any, is not a verdict).
NO_VALID_REWARD = frozenset(
    {
        "EnvironmentStartTimeoutError",
        "SandboxBuildFailedError",
        "AgentSetupTimeoutError",
        "HealthcheckError",
        "SandboxLikelyOutOfMemoryError",
        "MemoryLimitExceededError",
        "SSHAccessError",
        "GKEExecStreamClosedError",
        "GKEPodNotFoundError",
        "RuntimeRequestError",
        "AddTestsDirError",
        "DownloadVerifierDirError",
        "ApiError",
        "ApiRateLimitError",
        "ApiInternalServerError",
        "ApiOverloadedError",
        "ApiConnectionClosedError",
        "ApiResponseStalledError",
        "UnknownApiError",
        "NetworkConnectionError",
        "ApiConnectionError",
        "ApiUsageLimitError",
        "RateLimitError",
        "InternalServerError",
        "ServiceUnavailableError",
        "APIConnectionError",
        "APIError",
        "Timeout",
        "UnsupportedModelParametersError",
        "BadRequestError",
        "UnprocessableEntityError",
        "UnsupportedParamsError",
        "APIResponseValidationError",
        "BudgetExceededError",
        "VerifierTimeoutError",
        "RewardFileNotFoundError",
        "RewardFileEmptyError",
        "VerifierOutputParseError",
        "AgentAuthenticationError",
        "ModelNotFoundError",
        "ApiProviderResourceNotFoundError",
        "AuthenticationError",
        "PermissionDeniedError",
        "NotFoundError",
        "ServiceOperationsUnsupportedError",
        "VercelScopeError",
        "DspyImportError",
        "MissingExtraError",
        "RegradeError",
        "CancelledError",
    }
)
INFRA_CLASS = {  # our infra classes for Harbor's exception types
    "VerifierTimeoutError": "test-timeout",
    "RewardFileNotFoundError": "parse-error",
    "RewardFileEmptyError": "parse-error",
    "VerifierOutputParseError": "parse-error",
    "AgentSetupTimeoutError": "install-failed",
}
KNOWN_SCHEMA = 1


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _ModelInfo(_Loose):
    name: str
    provider: str | None = None


class _AgentInfo(_Loose):
    name: str
    model_info: _ModelInfo | None = None


class _Verifier(_Loose):
    rewards: dict[str, float] | None = None


class _Exception(_Loose):
    exception_type: str
    exception_message: str = ""


class _Usage(_Loose):
    n_output_tokens: int | None = None


class _Step(_Loose):
    step_name: str
    agent_result: _Usage | None = None
    verifier_result: _Verifier | None = None
    exception_info: _Exception | None = None


class _ConfigAgent(_Loose):
    name: str | None = None
    model_name: str | None = None


class _TrialConfig(_Loose):
    agent: _ConfigAgent | None = None


class _TrialResult(_Loose):
    """The fields of Harbor's TrialResult this reader uses (the rest is ignored)."""

    schema_version: int = 1
    config: _TrialConfig | None = None
    task_name: str
    trial_name: str
    task_checksum: str | None = None
    agent_info: _AgentInfo
    agent_result: _Usage | None = None
    verifier_result: _Verifier | None = None
    exception_info: _Exception | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    step_results: list[_Step] | None = None


def is_trial_dir(path: Path) -> bool:
    """A Harbor trial folder: result.json or config.json beside agent/, verifier/, steps/ or trial.log."""
    has_record = (path / "result.json").is_file() or (path / "config.json").is_file()
    return has_record and any((path / n).exists() for n in ("agent", "verifier", "steps", "trial.log"))


def is_job_dir(path: Path) -> bool:
    try:
        return any(child.is_dir() and is_trial_dir(child) for child in path.iterdir())
    except OSError:
        return False


def iter_job(job_dir: Path, *, pass_threshold: float = 1.0) -> Iterator[ImportedTrial | ImportProblem]:
    """Every trial folder of a job, sorted by name; an unreadable one is an ImportProblem, the rest go on."""
    label = job_label(job_dir)
    for child in sorted(p for p in job_dir.iterdir() if p.is_dir()):
        if is_trial_dir(child):
            yield from read_trial(child, job_name=job_dir.name, pass_threshold=pass_threshold, label=label)


def read_trial(
    trial_dir: Path,
    *,
    job_name: str = "",
    pass_threshold: float = 1.0,
    label: str | None = None,
) -> Iterator[ImportedTrial | ImportProblem]:
    """One trial folder: the trial, plus a problem per unreadable side file; `label`: core/readers/groups.py."""
    problems: list[ImportProblem] = []
    try:
        result = _load_result(trial_dir)
        trial = _build(trial_dir, result, job_name, pass_threshold, problems)
        trial.job_path, trial.job_label = str(trial_dir.parent), label or job_label(trial_dir.parent)
    except ReadError as e:
        yield ImportProblem(path=str(e.path), message=e.message)
        return
    except (ValueError, TypeError, KeyError, AttributeError) as e:  # a field of a shape Harbor never writes
        yield ImportProblem(path=str(trial_dir), message=f"unexpected content: {type(e).__name__}: {e}"[:500])
        return
    yield trial
    yield from problems


def _load_result(trial_dir: Path) -> _TrialResult:
    path = trial_dir / "result.json"
    if not path.is_file():
        raise ReadError(trial_dir, "no result.json (the trial did not finish, or the folder was copied in part)")
    data = load_object(path)
    version = data.get("schema_version", 1)
    if version != KNOWN_SCHEMA:
        raise ReadError(
            path, f"unknown schema version {version!r} (this reader knows Harbor TrialResult schema {KNOWN_SCHEMA})"
        )
    try:
        return _TrialResult.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ReadError(path, f"not a Harbor TrialResult: {where}: {first['msg']}") from None


def _build(
    trial_dir: Path, r: _TrialResult, job_name: str, threshold: float, problems: list[ImportProblem]
) -> ImportedTrial:
    model = r.agent_info.model_info
    steps, tests, verifier_output, step_results = [], [], "", []
    if r.step_results is not None:
        for step in r.step_results:
            sdir = trial_dir / "steps" / step.step_name
            steps += trajectory(sdir / "agent" / "trajectory.json", problems, step.step_name)
            tests += [
                t.model_copy(update={"name": f"{step.step_name}/{t.name}"})
                for t in verifier_tests(sdir / "verifier", problems)
            ]
            verifier_output = stdout_tail(sdir / "verifier")
            step_results.append(_step_result(step, threshold))
    else:
        steps = trajectory(trial_dir / "agent" / "trajectory.json", problems, None)
        tests = verifier_tests(trial_dir / "verifier", problems)
        verifier_output = stdout_tail(trial_dir / "verifier")
    model_id, model_source = (_model_id(model), "metadata") if model is not None else _configured_model(trial_dir, r)
    reward, rewards = _reward(trial_dir, r, problems)
    outcome, infra_class = _classify(trial_dir, r, reward, steps, threshold)
    exc = r.exception_info
    return ImportedTrial(
        source_format="harbor",
        path=str(trial_dir),
        trial_name=r.trial_name,
        job_name=job_name,
        task_name=r.task_name,
        task_checksum=r.task_checksum,
        agent=r.agent_info.name,
        model=model_id,
        model_source=model_source,
        outcome=outcome,
        reward=reward,
        rewards=rewards,
        infra_class=infra_class,
        error_message=trim(f"{exc.exception_type}: {exc.exception_message}", MESSAGE_MAX) if exc else None,
        agent_timed_out=bool(exc and exc.exception_type == "AgentTimeoutError"),
        tests=tests,
        verifier_output=verifier_output,
        steps=steps,
        step_results=step_results,
        started_at=r.started_at,
        finished_at=r.finished_at,
    )


def _configured_model(trial_dir: Path, r: _TrialResult) -> tuple[str | None, str | None]:
    """The model the trial was configured with, when `agent_info.model_info` is null (an agent that does not
    report it): the TrialConfig inside result.json, the trial's config.json, else the job's config.json when it
    names one model for this agent. Two jobs of one agent on two models stay two groups."""
    if r.config and r.config.agent and r.config.agent.model_name:
        return r.config.agent.model_name, "config"
    for path, pick in (
        (trial_dir / "config.json", _trial_config_model),
        (trial_dir.parent / "config.json", _job_model),
    ):
        if not path.is_file():
            continue
        try:
            found = pick(load_object(path), r.agent_info.name)
        except ReadError:
            continue
        if found:
            return found, "config"
    return None, None


def _trial_config_model(data: dict, _agent: str) -> str | None:
    agent = data.get("agent")
    model = agent.get("model_name") if isinstance(agent, dict) else None
    return model if isinstance(model, str) and model else None


def _job_model(data: dict, agent: str) -> str | None:
    agents = data.get("agents")
    if not isinstance(agents, list):
        return None
    models = {a.get("model_name") for a in agents if isinstance(a, dict) and a.get("name") in (agent, None)}
    models.discard(None)
    return next(iter(models)) if len(models) == 1 and isinstance(next(iter(models)), str) else None


def _model_id(model: _ModelInfo | None) -> str | None:
    """`provider/name`; the name alone when no provider was given (`-m gpt-5`) or it already carries one."""
    if model is None:
        return None
    if not model.provider or model.name.startswith(f"{model.provider}/"):
        return model.name
    return f"{model.provider}/{model.name}"


def _reward(trial_dir: Path, r: _TrialResult, problems: list[ImportProblem]) -> tuple[float | None, dict]:
    """TrialResult.verifier_result.rewards first (what Harbor decided); else verifier/reward.txt|json."""
    if r.verifier_result and r.verifier_result.rewards:
        rewards = {k: float(v) for k, v in r.verifier_result.rewards.items()}
        value = rewards["reward"] if "reward" in rewards else sum(rewards.values()) / len(rewards)
        return value, rewards
    vdir = trial_dir / "verifier"
    txt, js = vdir / "reward.txt", vdir / "reward.json"
    if not (txt.is_file() or js.is_file()):
        return None, {}
    try:
        return parse_reward_files(
            read_text(txt) if txt.is_file() else None, read_text(js) if js.is_file() and not txt.is_file() else None
        )
    except (VerifierError, ReadError) as e:
        problems.append(ImportProblem(path=str(txt if txt.is_file() else js), message=str(e)))
        return None, {}


def _classify(
    trial_dir: Path, r: _TrialResult, reward: float | None, steps: list[TrajectoryStep], threshold: float
) -> tuple[Outcome, str | None]:
    """Infra first (never counted), then the verifier's verdict."""
    exceptions = [e for e in [r.exception_info] + [s.exception_info for s in r.step_results or []] if e]
    for exc in exceptions:
        if exc.exception_type in INFRA_CLASS:
            return Outcome.INFRA, INFRA_CLASS[exc.exception_type]
        if exc.exception_message.startswith("Agent setup failed"):  # agents/installed/base.py RuntimeError
            return Outcome.INFRA, "install-failed"
    if _never_ran(trial_dir, r, steps, exceptions):
        return Outcome.INFRA, "agent-never-ran"
    for exc in exceptions:
        if exc.exception_type in NO_VALID_REWARD:
            return Outcome.INFRA, exc.exception_type
    if reward is None:
        return Outcome.INFRA, "no-reward"
    return (Outcome.PASS if reward >= threshold else Outcome.FAIL), None


def _never_ran(trial_dir: Path, r: _TrialResult, steps: list[TrajectoryStep], exceptions: list[_Exception]) -> bool:
    """The agent did nothing: a trajectory with no agent step, or (with no agent step and no output tokens)
    the harness's error or a short agent log says its command was not found (exit 127)."""
    if any(s.source == "agent" for s in steps):
        return False
    if steps:
        return True  # a trajectory that was read and holds only the instruction (an unreadable one reads as [])
    if r.agent_result and r.agent_result.n_output_tokens:
        return False
    if any(says_not_found(e.exception_message) for e in exceptions):
        return True
    return _agent_log_says_not_found(trial_dir / "agent")


def _agent_log_says_not_found(agent_dir: Path) -> bool:
    """The agent's own logs: `agent/*.txt|*.log` (0.26: e.g. `claude-code.txt`) and older releases'
    `agent/command-<n>/{stdout.txt,return-code.txt}`. Only a short log counts: a long one is an agent that ran
    and met a missing tool on the way."""
    try:
        logs = [p for p in agent_dir.glob("*") if p.is_file() and p.suffix in {".txt", ".log"}]
        logs += list(agent_dir.glob("command-*/stdout.txt"))
        codes = list(agent_dir.glob("command-*/return-code.txt"))
        if any(read_text(p, head=16).strip() == "127" for p in codes):
            return True
        return any(p.stat().st_size < 4096 and says_not_found(read_text(p)) for p in logs)
    except (OSError, ReadError):
        return False


def _step_result(step: _Step, threshold: float) -> StepResult:
    rewards = {k: float(v) for k, v in (step.verifier_result.rewards or {}).items()} if step.verifier_result else {}
    reward = rewards.get("reward", sum(rewards.values()) / len(rewards) if rewards else None)
    exc = step.exception_info
    outcome = None if reward is None else (Outcome.PASS if reward >= threshold else Outcome.FAIL)
    if exc and exc.exception_type in NO_VALID_REWARD:
        outcome = Outcome.INFRA
    return StepResult(
        name=step.step_name,
        outcome=outcome,
        reward=reward,
        rewards=rewards,
        error_class=exc.exception_type if exc else None,
        error_message=trim(exc.exception_message, MESSAGE_MAX) if exc else None,
        agent_timed_out=bool(exc and exc.exception_type == "AgentTimeoutError"),
    )
