"""Reads Terminal-Bench 1 (`tb run`, terminal-bench 0.2.18) output folders.

Where each fact comes from (terminal-bench 0.2.18 source):
  - `terminal_bench/harness/harness.py`: a run folder `<output>/<run_id>/` holds `run_metadata.json`
    (RunMetadata), `results.json` (BenchmarkResults, an aggregate rebuilt from the trials), `run.log`, and
    `<task_id>/<trial_name>/` per trial; `_get_trial_name` names a trial `<task>.<k>-of-<n>.<run_id>` (older
    releases: `<task>.<k>-of-<n>`, the "attempt folders").
  - `harness/models.py`: RunMetadata `run_id`, `agent_name`, `model_name`, `dataset_name`; TrialResults
    `trial_name`, `task_id`, `instruction` (the task's instruction as the agent got it), `is_resolved` (None
    when the tests never gave a verdict), `failure_mode`, `parser_results` ({test name: "passed"|"failed"}),
    `trial_started_at`/`trial_ended_at`.
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
from envqa.core.readers.tb_identity import RunIdentity, identity
from envqa.core.readers.transcripts import transcript_steps

ATTEMPT = re.compile(r"^(?P<task>.+)\.(?P<k>\d+)-of-(?P<n>\d+)(?:\.(?P<run>.+))?$")
TB_STATUS: dict[str, TestStatus] = {"passed": "passed", "failed": "failed"}  # parsers/base_parser.py UnitTestStatus
INFRA_MODES = {
    "test_timeout": "test-timeout",
    "parse_error": "parse-error",
    "agent_installation_failed": "install-failed",
}
TMUX_KEY = re.compile(r"^(?:[CM]-\S|Enter|Escape|Tab|BSpace|Up|Down|Left|Right)$")  # a key alone, e.g. 'C-c'
TMUX_KEYS = {"Enter", "C-m", "C-j", "KPEnter"}
TESTS_CAST = re.compile(r"/logs/tests\.cast\b")  # tb records the tests session apart...
TESTS_START = re.compile(r"^bash\s+/tests/run-tests\.sh\b")  # ...or types the test run into the agent's pane
TEST_FILE_PREFIX = re.compile(r"^[^:]*\.py::")
SHORT_SESSION = 5  # commands: an installed agent types setup + its launch command; more means it ran


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _TrialResults(_Loose):
    trial_name: str
    task_id: str
    instruction: str = ""  # required in 0.2.18; a record without it still reads
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
    """Every trial of a run: the run-level results.json is the record (it holds every trial, also those whose
    folder was not uploaded); a trial folder adds its logs. A trial folder the run-level file does not list is
    read on its own; runs nested inside the run folder are read too (a copy of a run is dropped later, by
    `read_runs`)."""
    meta, problem = _metadata(run_dir)
    if problem:
        yield problem
    folders = _folder_records(run_dir)
    entries, problem = _run_level_entries(run_dir)
    if problem:
        yield problem
    for where, entry in entries:
        try:
            record = _validate(run_dir / "results.json", entry)
        except ReadError as e:
            yield ImportProblem(path=str(e.path), message=f"{where}: {e.message}", lost_trial=True)
            continue
        folder = folders.pop(record.trial_name, None)
        if folder is None:
            yield _build(run_dir, record, meta, from_folder=False)
            continue
        trial_dir, own, error = folder
        if error is not None:  # the run-level record stands in; the unreadable file is still named
            yield ImportProblem(path=str(error.path), message=f"{error.message} (the run-level record was used)")
        yield _build(trial_dir, own or record, meta, from_folder=True)
    for trial_dir, own, error in folders.values():
        if own is not None:
            yield _build(trial_dir, own, meta, from_folder=True)
        elif error is not None:
            yield ImportProblem(path=str(error.path), message=error.message, lost_trial=True)
    for child in _nested_runs(run_dir):
        yield from iter_run(child)


def _nested_runs(run_dir: Path) -> list[Path]:
    return [p for p in sorted(run_dir.iterdir()) if p.is_dir() and (p / "run_metadata.json").is_file()]


_FolderRecord = tuple[Path, "_TrialResults | None", "ReadError | None"]


def _folder_records(run_dir: Path) -> dict[str, _FolderRecord]:
    """Each trial folder by its trial name, with its own results.json (or why that could not be read)."""
    out: dict[str, _FolderRecord] = {}
    for trial_dir in _trial_dirs(run_dir):
        path = trial_dir / "results.json"
        if not path.is_file():
            missing = ReadError(
                trial_dir, "no results.json (the trial did not finish, or the folder was copied in part)"
            )
            out[trial_dir.name] = (trial_dir, None, missing)
            continue
        try:
            record = _validate(path, load_object(path))
            out[record.trial_name] = (trial_dir, record, None)
        except ReadError as e:
            out[trial_dir.name] = (trial_dir, None, e)
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            out[trial_dir.name] = (
                trial_dir,
                None,
                ReadError(path, f"unexpected content: {type(e).__name__}: {e}"[:500]),
            )
    return out


def _run_level_entries(run_dir: Path) -> tuple[list[tuple[str, object]], ImportProblem | None]:
    """The run-level results.json's trial entries, each with where it sits; ([], None) when there is none."""
    path = run_dir / "results.json"
    if not path.is_file():
        return [], None
    try:
        results = load_object(path).get("results")
        if not isinstance(results, list):
            raise ReadError(path, "not a Terminal-Bench BenchmarkResults (no results list)")
    except ReadError as e:
        return [], ImportProblem(path=str(e.path), message=e.message)
    return [(f"results[{i}]", entry) for i, entry in enumerate(results)], None


def read_trial(trial_dir: Path, meta: RunIdentity | None = None) -> Iterator[ImportedTrial | ImportProblem]:
    if meta is None:
        meta, _problem = _metadata(trial_dir.parent.parent)
    path = trial_dir / "results.json"
    try:
        if not path.is_file():
            raise ReadError(trial_dir, "no results.json (the trial did not finish, or the folder was copied in part)")
        record = _validate(path, load_object(path))
        yield _build(trial_dir, record, meta, from_folder=True)
    except ReadError as e:
        yield ImportProblem(path=str(e.path), message=e.message, lost_trial=True)
    except (ValueError, TypeError, KeyError, AttributeError) as e:  # a field of a shape tb never writes
        yield ImportProblem(
            path=str(trial_dir), message=f"unexpected content: {type(e).__name__}: {e}"[:500], lost_trial=True
        )


def _metadata(run_dir: Path) -> tuple[RunIdentity, ImportProblem | None]:
    """Who ran the run: run_metadata.json, else (or for what it leaves null) the submission folder's name."""
    path = run_dir / "run_metadata.json"
    data: dict | None = None
    problem = None
    if path.is_file():
        try:
            data = load_object(path)
        except ReadError as e:
            problem = ImportProblem(path=str(e.path), message=e.message)
    meta = identity(run_dir, data)
    if problem is None and not meta.known:
        problem = ImportProblem(
            path=str(run_dir),
            message="no run_metadata.json and no `<date>_<agent>_<model>` folder name: the agent and model of "
            "these trials are unknown",
        )
    return meta, problem


def _validate(path: Path, data: object) -> _TrialResults:
    if not isinstance(data, dict):
        raise ReadError(path, "a trial record is not an object")
    try:
        return _TrialResults.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ReadError(path, f"not a Terminal-Bench TrialResults: {where}: {first['msg']}") from None


def _build(trial_dir: Path, r: _TrialResults, meta: RunIdentity, *, from_folder: bool) -> ImportedTrial:
    verifier_text = _verifier_text(trial_dir) if from_folder else ""
    log = _agent_log(trial_dir) if from_folder else ""
    session = _steps(trial_dir, log) if from_folder else []
    outcome, infra_class = _classify(trial_dir, r, session, from_folder)
    steps = (transcript_steps(log) if infra_class is None else []) or session
    attempt = ATTEMPT.match(r.trial_name)
    return ImportedTrial(
        source_format="terminal-bench",
        path=str(trial_dir),
        trial_name=r.trial_name,
        job_name=meta.run_id,
        job_path=meta.run_path,
        job_label=meta.run_label,
        task_name=r.task_id,
        instruction=r.instruction,
        agent=meta.agent_name,
        model=meta.model_name,
        agent_source=meta.agent_source,
        model_source=meta.model_source,
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
    if from_folder and _never_ran(trial_dir, steps or []):  # the cause, before what followed from it
        return Outcome.INFRA, "agent-never-ran"
    if r.failure_mode in INFRA_MODES:
        return Outcome.INFRA, INFRA_MODES[r.failure_mode]
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
    for key, raw in r.parser_results.items():
        name = TEST_FILE_PREFIX.sub("", key)  # "../tests/test_outputs.py::test_x" in some runs, "test_x" in others
        status = TB_STATUS.get(raw, "failed")
        seen = parsed.get(key) or parsed.get(name)
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


def _agent_phase(commands: list[str]) -> list[str]:
    """The commands typed before the harness started the tests (tb types the test run into the same pane, after
    the agent: the last such command is the harness's, an agent may have run the tests itself before)."""
    for pattern in (TESTS_CAST, TESTS_START):
        starts = [i for i, command in enumerate(commands) if pattern.search(command)]
        if starts:
            return commands[: starts[-1]]
    return commands


def _agent_log(trial_dir: Path) -> str:
    """sessions/agent.log without terminal escapes, read once: the session's steps and an installed agent's own
    transcript both come from it."""
    path = trial_dir / "sessions" / "agent.log"
    if not path.is_file():
        return ""
    try:
        return clean_terminal(read_text(path, head=LOG_HEAD))
    except ReadError:
        return ""


def _without_prompt(text: str) -> str:
    """Drop the last line when it is the shell prompt that the next command was typed at ("root@x:/app# ")."""
    head, _, last = text.rpartition("\n")
    return head if len(last) < 200 and last.rstrip().endswith(("#", "$", ">")) else text


def _steps(trial_dir: Path, log: str) -> list[TrajectoryStep]:
    """One step per command in commands.txt; its observation is what sessions/agent.log (`log`, cleaned) shows
    between that command's echo and the next one's."""
    path = trial_dir / "commands.txt"
    if not path.is_file():
        return []
    try:
        commands = _agent_phase([c for c in map(_command, read_text(path, head=LOG_HEAD).splitlines()) if c])
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
