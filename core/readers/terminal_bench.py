"""Reads Terminal-Bench 1 (`tb run`, terminal-bench 0.2.18) output folders.

Where each fact comes from (terminal-bench 0.2.18 source):
  - `terminal_bench/harness/harness.py`: a run folder `<output>/<run_id>/` holds `run_metadata.json`
    (RunMetadata), `results.json` (BenchmarkResults, an aggregate rebuilt from the trials), `run.log`, and
    `<task_id>/<trial_name>/` per trial; `_get_trial_name` names a trial `<task>.<k>-of-<n>.<run_id>` (older
    releases: `<task>.<k>-of-<n>`, the "attempt folders").
  - `harness/models.py`: RunMetadata `run_id`, `agent_name`, `model_name`, `dataset_name`; TrialResults
    `trial_name`, `task_id`, `is_resolved` (None when the tests never gave a verdict), `failure_mode`,
    `parser_results` ({test name: "passed"|"failed"}), `trial_started_at`/`trial_ended_at`.
  - `agents/failure_mode.py` FailureMode: `test_timeout`, `parse_error` and `agent_installation_failed` are
    infra here; `agent_timeout` still runs the tests (harness.py `_run_trial`), so it counts by `is_resolved`.
  - `handlers/trial_handler.py` TrialPaths: `commands.txt`, `sessions/` (tmux logs `<session>.log`: `agent.log`,
    and `tests.log` when tests run in their own session), `panes/post-test.txt` (what the parser parsed).
  - `terminal/tmux_session.py` `send_keys`: commands.txt is one `repr(keys)` per line (a str, or a list of
    tmux keys such as ['ls', 'Enter']).
  - `parsers/pytest_parser.py`: parser_results keys are the part of the node id after the first `::`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from envqa.core.imported import ImportedTrial, ImportProblem, TestOutcome, TestStatus, TrajectoryStep
from envqa.core.models import Outcome
from envqa.core.readers.common import (
    LOG_HEAD,
    MESSAGE_MAX,
    OBSERVATION_MAX,
    VERIFIER_TAIL,
    ReadError,
    clean_terminal,
    load_object,
    pytest_summary,
    read_text,
    says_not_found,
    tail,
    trim,
)

ATTEMPT = re.compile(r"^(?P<task>.+)\.(?P<k>\d+)-of-(?P<n>\d+)(?:\.(?P<run>.+))?$")
TB_STATUS: dict[str, TestStatus] = {"passed": "passed", "failed": "failed"}  # parsers/base_parser.py UnitTestStatus
INFRA_MODES = {
    "test_timeout": "test-timeout",
    "parse_error": "parse-error",
    "agent_installation_failed": "install-failed",
}
TMUX_KEY = re.compile(r"^(?:[CM]-\S|Enter|Escape|Tab|BSpace|Up|Down|Left|Right)$")  # a key alone, e.g. 'C-c'
TMUX_KEYS = {"Enter", "C-m", "C-j", "KPEnter"}
SHORT_SESSION = 5  # commands: an installed agent types setup + its launch command; more means it ran


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Metadata(_Loose):
    run_id: str = ""
    agent_name: str = "unknown"
    model_name: str | None = None


class _TrialResults(_Loose):
    trial_name: str
    task_id: str
    is_resolved: bool | None = None
    failure_mode: str = "unset"
    parser_results: dict[str, str] | None = None
    trial_started_at: datetime | None = None
    trial_ended_at: datetime | None = None


def is_trial_dir(path: Path) -> bool:
    return (path / "results.json").is_file() and any(
        (path / n).exists() for n in ("sessions", "commands.txt", "panes", "agent-logs")
    )


def is_run_dir(path: Path) -> bool:
    """run_metadata.json, or results.json beside task folders of trial folders."""
    if (path / "run_metadata.json").is_file():
        return True
    if not (path / "results.json").is_file() or is_trial_dir(path):
        return False
    return any(_trial_dirs(path))


def _trial_dirs(run_dir: Path) -> Iterator[Path]:
    for task_dir in sorted(p for p in run_dir.iterdir() if p.is_dir()):
        for trial_dir in sorted(p for p in task_dir.iterdir() if p.is_dir()):
            if (trial_dir / "results.json").exists() or ATTEMPT.match(trial_dir.name) or is_trial_dir(trial_dir):
                yield trial_dir


def iter_run(run_dir: Path) -> Iterator[ImportedTrial | ImportProblem]:
    """Every trial of a run folder; with no trial folders, the run-level results.json's trials."""
    meta, problem = _metadata(run_dir)
    if problem:
        yield problem
    found = False
    for trial_dir in _trial_dirs(run_dir):
        found = True
        yield from read_trial(trial_dir, meta)
    if not found:
        yield from _run_level_only(run_dir, meta)


def read_trial(trial_dir: Path, meta: _Metadata | None = None) -> Iterator[ImportedTrial | ImportProblem]:
    if meta is None:
        meta, problem = _metadata(trial_dir.parent.parent)
    path = trial_dir / "results.json"
    try:
        if not path.is_file():
            raise ReadError(trial_dir, "no results.json (the trial did not finish, or the folder was copied in part)")
        record = _validate(path, load_object(path))
        yield _build(trial_dir, record, meta, from_folder=True)
    except ReadError as e:
        yield ImportProblem(path=str(e.path), message=e.message)
    except (ValueError, TypeError, KeyError, AttributeError) as e:  # a field of a shape tb never writes
        yield ImportProblem(path=str(trial_dir), message=f"unexpected content: {type(e).__name__}: {e}"[:500])


def _metadata(run_dir: Path) -> tuple[_Metadata, ImportProblem | None]:
    path = run_dir / "run_metadata.json"
    if not path.is_file():
        return _Metadata(run_id=run_dir.name), ImportProblem(
            path=str(run_dir), message="no run_metadata.json: the agent and model of these trials are unknown"
        )
    try:
        meta = _Metadata.model_validate(load_object(path))
    except ReadError as e:
        return _Metadata(run_id=run_dir.name), ImportProblem(path=str(e.path), message=e.message)
    except ValidationError as e:
        return _Metadata(run_id=run_dir.name), ImportProblem(
            path=str(path), message=f"not a Terminal-Bench RunMetadata: {e.errors()[0]['msg']}"
        )
    return meta.model_copy(update={"run_id": meta.run_id or run_dir.name}), None


def _validate(path: Path, data: dict) -> _TrialResults:
    try:
        return _TrialResults.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ReadError(path, f"not a Terminal-Bench TrialResults: {where}: {first['msg']}") from None


def _run_level_only(run_dir: Path, meta: _Metadata) -> Iterator[ImportedTrial | ImportProblem]:
    path = run_dir / "results.json"
    if not path.is_file():
        yield ImportProblem(path=str(run_dir), message="no trial folders and no results.json")
        return
    try:
        results = load_object(path).get("results")
        if not isinstance(results, list):
            raise ReadError(path, "not a Terminal-Bench BenchmarkResults (no results list)")
    except ReadError as e:
        yield ImportProblem(path=str(e.path), message=e.message)
        return
    for i, entry in enumerate(results):
        try:
            if not isinstance(entry, dict):
                raise ReadError(path, f"results[{i}] is not an object")
            yield _build(run_dir, _validate(path, entry), meta, from_folder=False)
        except ReadError as e:
            yield ImportProblem(path=str(e.path), message=f"results[{i}]: {e.message}")


def _build(trial_dir: Path, r: _TrialResults, meta: _Metadata, *, from_folder: bool) -> ImportedTrial:
    verifier_text = _verifier_text(trial_dir) if from_folder else ""
    steps = _steps(trial_dir) if from_folder else []
    outcome, infra_class = _classify(trial_dir, r, steps, from_folder)
    attempt = ATTEMPT.match(r.trial_name)
    return ImportedTrial(
        source_format="terminal-bench",
        path=str(trial_dir),
        trial_name=r.trial_name,
        job_name=meta.run_id,
        task_name=r.task_id,
        agent=meta.agent_name,
        model=meta.model_name,
        attempt=int(attempt.group("k")) if attempt else None,
        outcome=outcome,
        reward=None if r.is_resolved is None else float(r.is_resolved),
        infra_class=infra_class,
        error_message=None if r.failure_mode in {"none", "unset"} else r.failure_mode,
        agent_timed_out=r.failure_mode == "agent_timeout",
        tests=_tests(r, verifier_text),
        verifier_output=tail(verifier_text, VERIFIER_TAIL),
        steps=steps,
        started_at=r.trial_started_at,
        finished_at=r.trial_ended_at,
    )


def _classify(
    trial_dir: Path, r: _TrialResults, steps: list[TrajectoryStep] | None, from_folder: bool
) -> tuple[Outcome, str | None]:
    if r.failure_mode in INFRA_MODES:
        return Outcome.INFRA, INFRA_MODES[r.failure_mode]
    if from_folder and _never_ran(trial_dir, steps or []):
        return Outcome.INFRA, "agent-never-ran"
    if r.is_resolved is None:
        return Outcome.INFRA, r.failure_mode if r.failure_mode not in {"none", "unset"} else "no-verdict"
    return (Outcome.PASS if r.is_resolved else Outcome.FAIL), None


def _never_ran(trial_dir: Path, steps: list[TrajectoryStep]) -> bool:
    """commands.txt exists and is empty (the agent typed nothing), or a short session whose last command's
    output says the command was not found (the agent's own launch command, exit 127)."""
    if not (trial_dir / "commands.txt").is_file():
        return False
    if not steps:
        return True
    return len(steps) <= SHORT_SESSION and says_not_found(steps[-1].observation)


def _verifier_text(trial_dir: Path) -> str:
    """sessions/tests.log (tests in their own tmux session), else panes/post-test.txt (what tb parsed)."""
    for path in (trial_dir / "sessions" / "tests.log", trial_dir / "panes" / "post-test.txt"):
        if path.is_file():
            try:
                return clean_terminal(read_text(path, tail_bytes=2 * 1024 * 1024))
            except ReadError:
                continue
    return ""


def _tests(r: _TrialResults, verifier_text: str) -> list[TestOutcome]:
    """parser_results gives the verdict per test; the pytest text in tests.log gives the failure messages."""
    parsed = {t.name.split("::", 1)[-1]: t for t in pytest_summary(verifier_text)} if verifier_text else {}
    if r.parser_results is None:
        return list(parsed.values())
    out = []
    for name, raw in r.parser_results.items():
        status = TB_STATUS.get(raw, "failed")
        seen = parsed.get(name)
        message = seen.message if seen is not None and status != "passed" else ""
        out.append(TestOutcome(name=name, status=status, message=message))
    return out


def _command(line: str) -> str | None:
    """One commands.txt line (repr of the keys sent) as the command typed, or None for keys alone."""
    inner = line[1:-3]
    if line[:1] == "'" and line.endswith("\\n'") and "\\" not in inner and "'" not in inner:
        return inner.strip() or None  # the common 'cmd\n' line, without the cost of literal_eval
    try:
        keys = ast.literal_eval(line)
    except (ValueError, SyntaxError):
        return line.strip() or None
    if isinstance(keys, (list, tuple)):
        keys = " ".join(str(k) for k in keys if str(k) not in TMUX_KEYS)
    text = str(keys).strip()
    return None if not text or TMUX_KEY.match(text) else text


def _without_prompt(text: str) -> str:
    """Drop the last line when it is the shell prompt that the next command was typed at ("root@x:/app# ")."""
    head, _, last = text.rpartition("\n")
    return head if len(last) < 200 and last.rstrip().endswith(("#", "$", ">")) else text


def _steps(trial_dir: Path) -> list[TrajectoryStep]:
    """One step per command in commands.txt; its observation is what sessions/agent.log shows between that
    command's echo and the next one's."""
    path = trial_dir / "commands.txt"
    if not path.is_file():
        return []
    try:
        commands = [c for c in map(_command, read_text(path, head=LOG_HEAD).splitlines()) if c]
        log_path = trial_dir / "sessions" / "agent.log"
        log = clean_terminal(read_text(log_path, head=LOG_HEAD)) if log_path.is_file() else ""
    except ReadError:
        return []
    positions, cursor = [], 0
    for command in commands:
        first_line = command.splitlines()[0]
        at = log.find(first_line, cursor) if first_line else -1
        positions.append(at)
        if at >= 0:
            cursor = at + len(first_line)
    steps = []
    for i, command in enumerate(commands):
        start = positions[i]
        observation = ""
        if start >= 0:
            start += len(command.splitlines()[0])
            ends = [p for p in positions[i + 1 :] if p >= 0]
            observation = _without_prompt(log[start : ends[0] if ends else len(log)]).strip("\n")
        steps.append(
            TrajectoryStep(
                step_id=i + 1, commands=[trim(command, MESSAGE_MAX)], observation=trim(observation, OBSERVATION_MAX)
            )
        )
    return steps
