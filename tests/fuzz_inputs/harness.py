"""Run `qa` in-process on a mutated folder and check what a user would see (issue 44).

The invariants: no traceback anywhere; with --json exactly one JSON object on stdout; exit 2 names a file of
the folder (tasks, config); no unexpected-error exit (70); an answer within the time limit (a FIFO read would
hang); every trial whose files were not touched is still read (runs); nothing half-written under QA_HOME.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

CASE_TIMEOUT_SEC: float = 15  # scripts/fuzz.py --timeout sets it


class CaseTimeout(BaseException):
    """The command did not answer in CASE_TIMEOUT_SEC (a BaseException: nothing in qa may swallow it)."""


@dataclass
class Answer:
    code: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    lost: int = 0  # trials not read although none of their files was touched


def run_qa(argv: list[str], qa_home: Path) -> Answer:
    """`qa ARGV` in this process (as the console script runs it: app/cli main), stdout and stderr captured."""
    from envqa.app.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_argv, old_home, old_cwd = sys.argv, os.environ.get("QA_HOME"), Path.cwd()
    sys.argv = ["qa", *argv]
    os.environ["QA_HOME"] = str(qa_home)
    qa_home.parent.mkdir(parents=True, exist_ok=True)
    os.chdir(qa_home.parent)  # no ./qa.toml of ours is read

    armed = [True]

    def _alarm(signum, frame):
        if armed[0]:
            raise CaseTimeout

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_TIMEOUT_SEC)
    start = time.monotonic()
    code, timed_out = 0, False
    try:
        try:
            with redirect_stdout(out), redirect_stderr(err):
                main()
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except CaseTimeout:
        code, timed_out = -1, True
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.argv = old_argv
        os.chdir(old_cwd)
        if old_home is None:
            os.environ.pop("QA_HOME", None)
        else:
            os.environ["QA_HOME"] = old_home
    return Answer(code, out.getvalue(), err.getvalue(), time.monotonic() - start, timed_out)


def json_object(stdout: str) -> dict | None:
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if len(lines) != 1:
        return None
    try:
        doc = json.loads(lines[0])
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def half_written(qa_home: Path) -> list[str]:
    """Files under QA_HOME a crash left behind: temporaries, and JSON that does not parse."""
    bad = []
    if not qa_home.exists():
        return bad
    for p in qa_home.rglob("*"):
        if p.is_file() and (".tmp" in p.name or p.name.endswith("~")):
            bad.append(str(p))
        elif p.is_file() and p.suffix == ".json":
            try:
                json.loads(p.read_text())
            except ValueError:
                bad.append(str(p))
    return bad


def check(answer: Answer, *, as_json: bool, names_under: list[Path], qa_home: Path) -> Verdict:
    """The invariants every answer keeps; `names_under`: an exit-2 message must name a path under one of these."""
    v = Verdict()
    if answer.timed_out:
        v.problems.append("timeout")
        return v
    if "Traceback" in answer.stdout + answer.stderr:
        v.problems.append("traceback")
    if answer.code == 70:
        v.problems.append("unexpected-error")
    doc = json_object(answer.stdout) if as_json else None
    if as_json and doc is None:
        v.problems.append("non-json")
    if answer.code == 2:
        message = (doc or {}).get("error") or answer.stderr
        if not any(str(p) in message for p in names_under):
            v.problems.append("exit-2-unnamed")
    if half_written(qa_home):
        v.problems.append("half-written")
    return v


def fresh_copy(seed: Path, into: Path) -> Path:
    if into.exists():
        shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(seed, into, symlinks=True)
    return into


def unlock(root: Path) -> None:
    """Undo `no_permission` so the case folder can be removed (root ignores modes; other users do not)."""
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            if not p.is_symlink():
                try:
                    p.chmod(0o644)
                except OSError:
                    pass
