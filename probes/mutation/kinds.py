"""Code or data, decided by a file's content (mutation testing asks before it mutates).

The file's name decided it before, so a regular expression kept in `answer.txt` was mutated like data (a number
bumped, a line dropped) and an equivalent mutant was reported as a weak verifier. Now a file is code when its
content says so: a `#!` line, Python that parses and does something (core/parsers/python_code.py: an import, a
definition, a call, a loop; `x = 1` and JSON-like literals stay data), or a regular expression that the verifier's
files feed to a regex engine (core/task_model/verifier_text.py), or a file the verifier's trace shows it executing
or importing (the trust tracer's strace of the verifier on the same end state, probes/trust.py). A name in a
language we do not parse (`.c`, `.rs`, ...) still counts as code; a name can make a file code, never data.

Also the order output files are mutated in (`output_rank`): what the instruction names first, system
directories last, so a capped list keeps the task's real output.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from envqa.core.parsers.python_code import is_python_code
from envqa.core.registry.source_suffixes import SOURCE_CODE_SUFFIXES
from envqa.core.task_model.verifier_text import feeds_regex_engine

# What a regular expression has and prose or numbers do not.
REGEX_FEATURES = (
    re.compile(r"\\[dDwWsSbB]"),
    re.compile(r"\[[^\]\s]+\]"),
    re.compile(r"\(\?[:=!<P]"),
    re.compile(r"\{\d+(?:,\d*)?\}"),
    re.compile(r"^\^"),
    re.compile(r"\$$"),
    re.compile(r"\)[*+?]"),
    re.compile(r"\\\."),
)
SYSTEM_PREFIXES = ("/usr/", "/etc/", "/var/", "/lib", "/bin/", "/sbin/", "/root/.")
PACKAGE_PARTS = ("/site-packages/", "/dist-packages/", "/node_modules/", "/.cache/", "/.npm/", "/.cargo/")


def traced_code(artifacts_dir: str | None) -> set[str]:
    """Files the verifier executed or imported on this end state, from the trust tracer's strace of it
    (`probes/trust/strace-trust.txt` in the trial's directory); empty when it did not run."""
    path = Path(artifacts_dir or ".") / "probes" / "trust" / "strace-trust.txt"
    if not path.is_file():
        return set()
    from envqa.probes.trust import traced_uses  # the trust tracer's parser: one reading of a trace

    return {
        p
        for p, (uses, _line) in traced_uses(path.read_text(errors="replace")).items()
        if uses & {"executed", "imported"}
    }


def _regex(text: str, path: str, tests: str) -> bool:
    """A short file whose lines read as regular expressions, fed to a regex engine by the verifier (or, when the
    verifier's files do not say, one with at least three regex features)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not 1 <= len(lines) <= 8 or any(len(ln) > 2000 for ln in lines):
        return False
    features = sum(1 for pat in REGEX_FEATURES if any(pat.search(ln.strip()) for ln in lines))
    if features == 0:
        return False
    for ln in lines:
        try:
            re.compile(ln.strip())
        except re.error:
            if features < 2:
                return False  # neither Python's dialect nor clearly a regex
    name = posixpath.basename(path)
    consumed = bool(tests) and name in tests and feeds_regex_engine(tests)
    return (consumed and features >= 1) or features >= 3


def code_kind(path: str, data: bytes, executable: bool, tests: str = "", traced: set[str] | None = None) -> str | None:
    """What kind of code the file is ("run by the verifier", "script", "python", "regular expression", "source by
    name"), or None for data. `tests`: the verifier's files as text (verifier_writes.verifier_text); `traced`: traced_code."""
    if b"\0" in data[:4096]:
        return None  # binary: data (an executable binary gets the stub-program mutant anyway)
    if traced and path in traced:
        return "run by the verifier"
    if data.startswith(b"#!"):
        return "script"
    text = data.decode("utf-8", errors="replace")
    if is_python_code(text):
        return "python"
    if _regex(text, path, tests):
        return "regular expression"
    if path.endswith(SOURCE_CODE_SUFFIXES):
        return "source by name"
    return None


def stated_in(path: str, instruction: str) -> bool:
    """Whether the instruction names this file (its path, or its name as a word): an output the task states."""
    if not instruction:
        return False
    if path in instruction:
        return True
    name = posixpath.basename(path)
    return len(name) >= 3 and re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])", instruction) is not None


def output_rank(path: str, instruction: str) -> tuple[int, int, str]:
    """Sort key: files the instruction names, then the task's own files, then system and package directories."""
    system = path.startswith(SYSTEM_PREFIXES) or any(part in path for part in PACKAGE_PARTS)
    return (0 if stated_in(path, instruction) else 1, 1 if system else 0, path)
