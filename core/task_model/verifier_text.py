"""The verifier's files as one text, for the dynamic probes that ask whether the tests name a path or a file
(mutation: is this output a regular expression the verifier feeds to a regex engine; collateral damage; a
verifier that writes what it checks), and the text of a task folder's tests/ for the spec check of a revision.

Built from the test model's files (core/task_model/files.py: each read once, through the guarded reader), at most
MAX_TEST_BYTES in all, in the order the tests' copies list them.
"""

from __future__ import annotations

import re
from pathlib import Path

from envqa.core.defaults import MAX_TEST_BYTES
from envqa.core.task_model.files import TestFile

# How a verifier hands a file's content to a regex engine (Python, grep, bash, JavaScript, Perl-ish).
REGEX_ENGINE = re.compile(
    r"\bre\.(?:compile|match|search|fullmatch|findall|finditer|sub|split)\b|"
    r"\bgrep\b[^\n]*\s-(?:\w*[EPf]\w*)\b|\bgrep\s+--(?:extended|perl)-regexp|=~|\bRegExp\b|"
    r"\bregex\.|\bpcre",
    re.I,
)


def verifier_text(files: list[TestFile]) -> str:
    """The files' texts joined, each at most MAX_TEST_BYTES, until MAX_TEST_BYTES are read."""
    out: list[str] = []
    size = 0
    for f in files:
        if size > MAX_TEST_BYTES or f.error is not None or f.size > MAX_TEST_BYTES or not f.path.is_file():
            continue
        text = f.text
        size += len(text)
        out.append(text)
    return "\n".join(out)


def feeds_regex_engine(tests: str) -> bool:
    """Whether the verifier's text (`verifier_text`) hands something to a regex engine."""
    return bool(REGEX_ENGINE.search(tests))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def tests_folder_text(task_dir: Path) -> str:
    """Every file under a task folder's tests/ as text, sorted by path ("" for a file that is not UTF-8): what a
    revision's spec check compares between the parent version and the candidate (probes/static/spec_consistency.py)."""
    tests = task_dir / "tests"
    return "\n".join(_text(p) for p in sorted(tests.rglob("*")) if p.is_file()) if tests.is_dir() else ""
