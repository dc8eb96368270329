"""The CLI's last boundary (issue 44): whatever a command did not foresee is still an answer.

An error we raise on purpose (EnvQAError) that no command caught is reported as `fail` reports it: its message,
its exit code (2 input, 3 infrastructure). Anything else is a bug of ours: one line naming the command, the step
(the innermost frame of qa's own code) and a log file holding the traceback; with --json one JSON object; exit
70 (EX_SOFTWARE), never 1 (findings) nor 3 (the run could not finish for reasons outside the task). `-v` (or
QA_TRACEBACK=1) prints the traceback too.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

from rich.markup import escape

from envqa.core.errors import UNEXPECTED_EXIT_CODE, EnvQAError

OUR_ROOT = Path(__file__).resolve().parents[2]  # the checkout (or site-packages folder) holding our layers


def wants_json(argv: list[str]) -> bool:
    """--json, or --format json (qa analyze)."""
    return "--json" in argv or any(a == "--format" and b == "json" for a, b in itertools.pairwise(argv))


def _command(argv: list[str]) -> str:
    words = [a for a in argv if not a.startswith("-")]
    return f"qa {words[0]}" if words else "qa"


def _step(exc: BaseException) -> str:
    """`module.py:line in function` of the innermost frame in our own code (else the innermost frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if Path(f.filename).resolve().is_relative_to(OUR_ROOT) and "/.venv/" not in f.filename]
    frame = (ours or frames or [None])[-1]
    if frame is None:
        return "start-up"
    where = Path(frame.filename)
    rel = where.resolve().relative_to(OUR_ROOT) if where.resolve().is_relative_to(OUR_ROOT) else where.name
    return f"{rel}:{frame.lineno} in {frame.name}"


def _write_log(argv: list[str], exc: BaseException) -> Path | None:
    """The traceback in $QA_HOME/logs/ (else the temp folder), written whole or not at all."""
    text = f"qa {' '.join(argv)}\n{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n\n" + "".join(
        traceback.format_exception(exc)
    )
    name = f"crash-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}.log"
    for folder in (Path(os.environ.get("QA_HOME", ".qa")).absolute() / "logs", Path(tempfile.gettempdir()) / "qa-logs"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f".{name}.partial"
            tmp.write_text(text)
            tmp.replace(folder / name)
            return folder / name
        except OSError:
            continue
    return None


def _emit(argv: list[str], doc: dict, line: str) -> None:
    from envqa.app.cli.common import err

    if wants_json(argv):
        sys.stdout.write(json.dumps(doc) + "\n")
    err.print(f"[bold red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)


def report_error(argv: list[str], exc: EnvQAError) -> int:
    """An error of ours no command caught: reported as `fail` reports one; its exit code."""
    path = getattr(exc, "path", None)
    doc = {
        "ok": False,
        "error": str(exc),
        "exit_code": exc.exit_code,
        "path": None if path is None else str(path),
        "field": getattr(exc, "field", None),
    }
    _emit(argv, doc, str(exc))
    return exc.exit_code


def report_unexpected(argv: list[str], exc: BaseException) -> int:
    """A bug of ours: one line (or one JSON object), the traceback in a log file (and on stderr with -v)."""
    command, step, log = _command(argv), _step(exc), _write_log(argv, exc)
    what = f"{type(exc).__name__}: {exc}".strip()
    if len(what) > 300:
        what = what[:297] + "..."
    where = f"the traceback is in {log}" if log else "no log file could be written"
    line = f"{command}: unexpected error (a bug in qa, not in your input) at {step}: {what}; {where}"
    if "-v" in argv or "--verbose" in argv or os.environ.get("QA_TRACEBACK"):
        from envqa.app.cli.common import err

        err.print("".join(traceback.format_exception(exc)), markup=False, highlight=False)
    doc = {
        "ok": False,
        "error": line,
        "error_class": "unexpected",
        "exit_code": UNEXPECTED_EXIT_CODE,
        "step": step,
        "log": None if log is None else str(log),
    }
    _emit(argv, doc, line)
    return UNEXPECTED_EXIT_CODE
