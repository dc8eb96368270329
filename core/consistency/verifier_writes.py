"""Two readings that keep "the tests read X, an output the agent must produce" honest (issue 42, measured on the
TB2 dev split's unchanged tasks):

- **The verifier's own outputs.** A file the verifier makes itself before it reads it is never the agent's to
  produce: a program it compiles (`gcc -o /app/new.o`, `["gcc", "-o", "decomp2", ...]`), a file a script it
  runs writes (a redirection, `tee`, an editor script's `writefile(..., '/app/x.out')` kept in a string), a log
  it tees. The test model gives these as words inside strings and lists that the path reader (role `write`)
  never sees; they are read here from the verifier's text. A relative target (the verifier's working directory
  is not known statically) is kept by its file name.
- **Name templates in the instruction.** "two files: {class name}_pb2.py and {class name}_pb2_grpc.py", "one
  file `<id>.json` per record": the instruction states every file the template matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

# A write the verifier's own code makes: the target after an output flag of a compiler or downloader, a
# redirection, tee, or an editor's writefile(). Quotes and list punctuation around the target are allowed, so
# the same idiom is read in a shell line, a Python list of words and a script kept in a string.
_Q = r"""["'\s,]*"""
WRITE_IDIOMS = (
    re.compile(
        r"""\b(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+|rustc|nvcc|gfortran|tcc|ld|go|javac|curl|wget)(?![\w+])"""
        r"""[^\n;|&]*?["'\s,](?:-o|--output)""" + _Q + r"""([\w./+@-]+)"""
    ),
    re.compile(r"""(?<![<>&\d-])>>?""" + _Q + r"""(/[\w./+@-]+)"""),
    re.compile(r"""\btee\b(?:\s+-a)?""" + _Q + r"""([\w./+@-]+)"""),
    re.compile(r"""\bwritefile\([\s\S]{0,300}?["'](/[\w./+@-]+)["']"""),  # its list may span lines
)


@dataclass(frozen=True)
class VerifierWrites:
    """The files the verifier writes itself: absolute paths, and the names of relative targets."""

    paths: frozenset[str]
    names: frozenset[str]

    def covers(self, path: str) -> bool:
        path = path.rstrip("/")
        return path in self.paths or PurePosixPath(path).name in self.names


def verifier_writes(tests_text: str) -> VerifierWrites:
    """What the verifier's text (every test file, as the test model joins them) writes by the idioms above."""
    paths: set[str] = set()
    names: set[str] = set()
    for idiom in WRITE_IDIOMS:
        for m in idiom.finditer(tests_text):
            target = m.group(1).rstrip(".,;:")
            if not target or target.startswith("-") or target in ("/dev/null", "/dev/stdout", "/dev/stderr"):
                continue
            if target.startswith("/"):
                paths.add(target.rstrip("/"))
            elif "/" not in target and "." not in target[:1]:
                names.add(target)
    return VerifierWrites(frozenset(paths), frozenset(names))


# `{class name}_pb2.py`, `<id>.json`, `out_{n}.txt`: a file name with one or more placeholders.
PLACEHOLDER = r"(?:\{[^{}\n]{1,40}\}|<[^<>\n]{1,40}>)"
TEMPLATE = re.compile(r"[\w./-]*" + PLACEHOLDER + r"(?:[\w./-]|" + PLACEHOLDER + r")*")
TEMPLATE_LITERAL_MIN = 3
"""A template must keep this many literal characters (`_pb2.py`): a bare `{name}` matches every file."""


def _template_pattern(template: str) -> re.Pattern[str] | None:
    parts = re.split(PLACEHOLDER, template)
    if sum(len(p) for p in parts) < TEMPLATE_LITERAL_MIN:
        return None
    return re.compile(r"[\w.-]+".join(re.escape(p) for p in parts) + r"\Z")


def templated(instruction: str, path: str) -> bool:
    """The instruction states `path` by a name template: the template matches the path's name (or, when it is
    absolute, the whole path)."""
    path = path.rstrip("/")
    for m in TEMPLATE.finditer(instruction):
        pattern = _template_pattern(m.group(0).rstrip("."))
        if pattern is None:
            continue
        subject = path if m.group(0).startswith("/") else PurePosixPath(path).name
        if pattern.match(subject):
            return True
    return False
