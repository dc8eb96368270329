"""Harbor's side files of a trial: per-test outcomes (verifier/ctrf.json, else the pytest -rA summary in
verifier/test-stdout.txt), the verifier's stdout tail, and the ATIF trajectory (agent/trajectory.json).

Sources: pytest-json-ctrf `ctrf/TestObject.py` (`results.tests[].{name,status,message,trace}`: `message` is a
generic "The test failed in the call phase ...", the assertion is in `trace`, pytest's longreprtext); Harbor 0.26
`models/trajectories/` (ATIF: `steps[].{step_id,source,message,tool_calls[].arguments,
observation.results[].content}`, message/content a string or, since ATIF-v1.6, a list of ContentParts).
"""

from __future__ import annotations

from pathlib import Path

from envqa.core.imported import ImportProblem, TestOutcome, TestStatus, TrajectoryStep
from envqa.core.readers.common import (
    MESSAGE_MAX,
    OBSERVATION_MAX,
    VERIFIER_TAIL,
    ReadError,
    load_object,
    pytest_summary,
    read_text,
    tail,
    trim,
)

CTRF_STATUS: dict[str, TestStatus] = {
    "passed": "passed",
    "failed": "failed",
    "skipped": "skipped",
    "pending": "skipped",
    "other": "error",
}


def verifier_tests(vdir: Path, problems: list[ImportProblem]) -> list[TestOutcome]:
    """verifier/ctrf.json when present and readable, else the pytest -rA summary in test-stdout.txt."""
    ctrf = vdir / "ctrf.json"
    if ctrf.is_file():
        try:
            return _ctrf_tests(ctrf)
        except ReadError as e:
            problems.append(ImportProblem(path=str(e.path), message=e.message))
    stdout = vdir / "test-stdout.txt"
    if stdout.is_file():
        try:
            return pytest_summary(read_text(stdout, tail_bytes=2 * 1024 * 1024))
        except ReadError as e:
            problems.append(ImportProblem(path=str(e.path), message=e.message))
    return []


def _ctrf_tests(path: Path) -> list[TestOutcome]:
    data = load_object(path)
    tests = (data.get("results") or {}).get("tests") if isinstance(data.get("results"), dict) else None
    if not isinstance(tests, list):
        raise ReadError(path, "not a CTRF report (no results.tests list)")
    out = []
    for t in tests:
        if not isinstance(t, dict) or "name" not in t:
            continue
        status: TestStatus = CTRF_STATUS.get(str(t.get("status")), "error")
        message = ""
        if status in {"failed", "error"}:
            e_lines = [ln[1:].strip() for ln in str(t.get("trace") or "").splitlines() if ln.startswith("E ")]
            message = "\n".join(e_lines) or str(t.get("message") or "")
        out.append(TestOutcome(name=str(t["name"]), status=status, message=trim(message, MESSAGE_MAX)))
    return out


def stdout_tail(vdir: Path) -> str:
    path = vdir / "test-stdout.txt"
    if not path.is_file():
        return ""
    try:
        return tail(read_text(path, tail_bytes=VERIFIER_TAIL * 2), VERIFIER_TAIL)
    except ReadError:
        return ""


def trajectory(path: Path, problems: list[ImportProblem], trial_step: str | None) -> list[TrajectoryStep]:
    """ATIF steps: tool-call arguments are the commands, observation results the observation."""
    if not path.is_file():
        return []
    try:
        data = load_object(path)
        raw_steps = data.get("steps")
        if not isinstance(raw_steps, list):
            raise ReadError(path, "not an ATIF trajectory (no steps list)")
        return [_atif_step(s, trial_step) for s in raw_steps if isinstance(s, dict)]
    except ReadError as e:
        problems.append(ImportProblem(path=str(e.path), message=e.message))
        return []
    except (ValueError, TypeError, AttributeError) as e:  # a step_id that is not a number, a field of odd type
        problems.append(ImportProblem(path=str(path), message=f"not an ATIF trajectory: {e}"))
        return []


def _text(value: object) -> str:
    """ATIF message/content: a string, or a list of ContentParts (ATIF-v1.6) whose text parts are joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(p.get("text", "")) for p in value if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _atif_step(step: dict, trial_step: str | None) -> TrajectoryStep:
    commands = []
    for call in step.get("tool_calls") or []:
        args = call.get("arguments") if isinstance(call, dict) else None
        if isinstance(args, dict):
            cmd = args.get("command") or args.get("cmd") or args.get("keystrokes")
            commands.append(str(cmd) if cmd is not None else f"{call.get('function_name', '?')} {args}")
    observation = "\n".join(
        _text(r.get("content")) for r in (step.get("observation") or {}).get("results") or [] if isinstance(r, dict)
    )
    return TrajectoryStep(
        step_id=int(step.get("step_id", 0)),
        source=str(step.get("source", "agent")),
        message=trim(_text(step.get("message")), MESSAGE_MAX),
        commands=[trim(c, MESSAGE_MAX) for c in commands],
        observation=trim(observation, OBSERVATION_MAX),
        trial_step=trial_step,
    )
