"""What both readers need: bounded file reads, JSON with a named problem, pytest's own text, "never ran".

Every read here is bounded (a head or a tail of at most a few MB) so that a job with thousands of trials and
multi-megabyte logs imports in seconds and little memory.
"""

from __future__ import annotations

import re
from pathlib import Path

from envqa.core import input_files
from envqa.core.defaults import JSON_MAX, MESSAGE_MAX
from envqa.core.defaults import LOG_HEAD as LOG_HEAD  # re-exported: the readers take their limits from here
from envqa.core.defaults import OBSERVATION_MAX as OBSERVATION_MAX
from envqa.core.defaults import VERIFIER_TAIL as VERIFIER_TAIL
from envqa.core.imported import TestOutcome, TestStatus
from envqa.core.input_files import InputFileError

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")
# What a shell or container runtime prints when the agent's own command does not exist: bash, dash/sh,
# zsh, `docker exec`'s OCI error, and the exit status 127 a harness reports for it.
NOT_FOUND = re.compile(
    r"command not found|: not found\b|executable file not found|no such file or directory: ['\"]?\w|"
    r"exit code:? 127\b|exit status 127\b|returned 127\b",
    re.IGNORECASE,
)


ReadError = InputFileError
"""A file that could not be read; becomes an ImportProblem naming it (the guarded reader's error)."""


def trim(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def clean_terminal(text: str) -> str:
    """A tmux/asciinema log without escape sequences and carriage returns."""
    return _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "")


def read_text(path: Path, *, head: int | None = None, tail_bytes: int | None = None) -> str:
    """A log or text file, or only its first `head` / last `tail_bytes` bytes. Undecodable bytes are replaced."""
    return input_files.read_text(path, strict=False, limit=JSON_MAX, head=head, tail=tail_bytes)


def load_json(path: Path) -> object:
    """Parse a JSON file; a truncated, invalid, too deep, oversized or unreadable file is a ReadError naming it."""
    return input_files.read_json(path)


def load_object(path: Path) -> dict:
    return input_files.read_json_object(path)


# --------------------------------------------------------------------------------------------- pytest's text
_SUMMARY = re.compile(r"=+\s*short test summary info\s*=+", re.IGNORECASE)
_FAILURES = re.compile(r"^=+ (?:FAILURES|ERRORS) =+$", re.MULTILINE)
_SECTION_END = re.compile(r"^=+ .* =+$", re.MULTILINE)
_BLOCK_HEAD = re.compile(r"^_{3,} (?:ERROR at \w+ of )?(.+?) _{3,}$", re.MULTILINE)
_STATUS: dict[str, TestStatus] = {
    "PASSED": "passed",
    "FAILED": "failed",
    "ERROR": "error",
    "SKIPPED": "skipped",
    "XFAIL": "passed",
    "XPASS": "failed",
}  # XFAIL/XPASS as terminal_bench/parsers/pytest_parser.py maps


def _short(node: str) -> str:
    """`tests/test_outputs.py::TestX::test_y[1]` -> `test_y[1]` (how a FAILURES block header names it)."""
    return node.rsplit("::", 1)[-1]


def failure_blocks(text: str) -> dict[str, str]:
    """The `E   ` lines of each block of pytest's FAILURES/ERRORS section, by the block's test name."""
    blocks: dict[str, str] = {}
    for section in _FAILURES.finditer(text):
        end = _SECTION_END.search(text, section.end())
        body = text[section.end() : end.start() if end else len(text)]
        heads = list(_BLOCK_HEAD.finditer(body))
        for i, head in enumerate(heads):
            chunk = body[head.end() : heads[i + 1].start() if i + 1 < len(heads) else len(body)]
            lines = [ln[1:].strip() for ln in chunk.splitlines() if ln.startswith("E ")]
            if lines:
                blocks[_short(head.group(1).strip()).split(".")[-1]] = trim("\n".join(lines), MESSAGE_MAX)
    return blocks


def pytest_summary(text: str) -> list[TestOutcome]:
    """Per-test outcomes from pytest's `-rA` short test summary, with each failure's E lines when the
    FAILURES section has them (else the summary line's own `- message`). [] when there is no summary."""
    parts = _SUMMARY.split(text, maxsplit=1)
    if len(parts) < 2:
        return []
    blocks = failure_blocks(parts[0])
    tests: list[TestOutcome] = []
    seen: set[str] = set()
    for line in parts[1].splitlines():
        word, _, rest = line.partition(" ")
        status = _STATUS.get(word.strip(":"))
        if status is None or not rest.strip():
            continue
        node, _, message = rest.partition(" - ")
        node = node.strip()
        if node in seen or node.startswith("["):  # SKIPPED [1] file:line: reason has no node id
            continue
        seen.add(node)
        if status in {"failed", "error"}:
            message = blocks.get(_short(node), message.strip())
        else:
            message = ""
        tests.append(TestOutcome(name=node, status=status, message=trim(message, MESSAGE_MAX)))
    return tests


def says_not_found(text: str) -> bool:
    return NOT_FOUND.search(text) is not None
