"""The assertion model: one record per check the verifier makes, whatever the language it is written in.

A check is an `assert` in a pytest or unittest test (or a plain Python script the verifier runs), a condition in
test.sh (`[ ... ]`, `grep -q`, `diff`, `cmp`, `jq -e`, `test -f`, an exit status that decides the reward), or an
assertion in a test file of another language that test.sh builds and runs (C/C++, JS/TS, Go, Rust).

Every record answers the same three questions, so a rule is a query over records and never reads test source:
- `observes`: what the check looks at (an output file, a command's stdout/stderr/exit code, the agent's source
  text, shell history, a file's digest, a database, a file the image holds, a value the agent's program reports
  about itself, a network response, a directory listing);
- `expected`: what it is compared with (a literal, a value the tests compute and from which inputs, a file and
  where that file comes from, the agent's own other output, a threshold or tolerance, a pattern, existence only);
- `hops`: where: the assertion's own file:line first, then every helper, fixture, constant and parameter the value
  was resolved through, each with its file:line.

The readers (core/task_model/assertion_python.py, assertion_shell.py, assertion_compiled.py) fill these records;
`TestsModel.assertions` holds them, built once per version. The records are pydantic models because they cross
a boundary: `qa lint --assertions --json` prints them, and tests compare them as JSON.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Language = Literal["python", "shell", "c", "cpp", "javascript", "typescript", "go", "rust", "java"]
ObservedKind = Literal[
    "output_file",  # the content of a file the agent writes (path)
    "stdout",  # a command's standard output (command)
    "stderr",
    "exit_code",
    "source_text",  # the agent's source code read as text (a regex or `in` over its .py/.c file)
    "shell_history",  # ~/.bash_history, a recorded session, the commands the agent ran
    "digest",  # a file's hash (path)
    "database",  # a query's answer (path of the database, the query in `detail`)
    "image_file",  # a file the image already holds, not written by the agent
    "self_report",  # a value the agent's program reports about itself (a printed timing, a "PASSED" it prints)
    "network",  # an HTTP response, a port that answers
    "listing",  # a directory's names, a glob
    "existence",  # only whether a path exists
    "value",  # a value the test computes from the agent's work that fits none of the above (a call's result)
    "unknown",
]
ExpectedKind = Literal[
    "literal",  # a constant written in the tests (value)
    "computed",  # a value the tests compute (inputs: the names/paths it is computed from)
    "file",  # the content of a file (path, origin)
    "agent_output",  # the agent's own other output (consistency between two of its files)
    "threshold",  # an ordered bound or a tolerance (value: the bound; op: <, >=, isclose, ...)
    "pattern",  # substring, prefix, suffix or regex (pattern_kind, value)
    "exists",  # existence only: nothing is compared
    "truthy",  # a bare truth test (`assert ok`, `[ -n "$x" ]`)
    "unknown",
]
Origin = Literal["image", "tests", "solution", "agent", "computed", "unknown"]
PatternKind = Literal["substring", "prefix", "suffix", "regex", "glob", "line"]


class Hop(BaseModel):
    """One step on the way from the assertion to a value: the assertion itself, a helper's line, a fixture, a
    constant, a parameter set."""

    model_config = ConfigDict(frozen=True)

    # assign: the line a local takes its value (`out = subprocess.run(...)`), so a rule cites where the command is
    kind: Literal["assert", "helper", "fixture", "constant", "parametrize", "loop", "import", "call", "build", "assign"]
    file: str  # relative to the task root ("tests/test_outputs.py")
    line: int
    name: str = ""  # the helper's, fixture's or constant's name
    code: str = ""  # the line's code, cut to TEST_MODEL_CODE_CHARS


class Observed(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: ObservedKind
    path: str | None = None  # the file, directory or database looked at
    command: list[str] = Field(default_factory=list)  # argv of the command whose output or status is read
    flags: list[str] = Field(default_factory=list)  # the options that command is given (`--json`, `-n`)
    keys: list[str] = Field(default_factory=list)  # JSON keys / columns / attributes indexed on the way
    detail: str = ""  # e.g. the query, the history file, the URL


class Expected(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: ExpectedKind
    value: str | None = None  # the literal, the bound, the pattern
    values: list[str] = Field(default_factory=list)  # every literal when one check runs over several (parametrize)
    pattern_kind: PatternKind | None = None
    path: str | None = None  # the reference file compared with
    origin: Origin | None = None  # where that file (or value) comes from: the provenance model's answer
    inputs: list[str] = Field(default_factory=list)  # for "computed": the paths and names it is computed from
    case_sensitive: bool = True
    tolerance: str | None = None  # isclose/approx/allclose: the tolerance as written (value: the reference value)


class Assertion(BaseModel):
    """One check of the verifier."""

    model_config = ConfigDict(frozen=True)

    language: Language
    file: str  # where the check is written
    line: int
    code: str  # the check's line, cut
    test: str = ""  # the test it belongs to ("tests/test_outputs.py::test_x", "tests/test.sh")
    op: str = ""  # ==, !=, in, not in, <, >=, isclose, matches, exists, truthy, same-file, status ...
    negated: bool = False  # `assert x not in y`, `! grep -q`
    observes: Observed
    expected: Expected
    hops: list[Hop] = Field(default_factory=list)  # the assertion first, then each hop in order
    cases: int = 1  # how many times it runs (parametrize, loop over literal cases); -1 when computed

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def lines(self) -> list[tuple[str, int]]:
        """Every file:line the check's value passes through (the assertion's first)."""
        out = [(self.file, self.line)]
        out += [(h.file, h.line) for h in self.hops if (h.file, h.line) not in out]
        return out


class AssertionModel(BaseModel):
    """Every check of one version's verifier, and the files a reader could not read (a fact, never a crash)."""

    assertions: list[Assertion] = Field(default_factory=list)
    unread: list[str] = Field(default_factory=list)  # "tests/x.cpp: why" for a test file no reader could read

    def observing(self, *kinds: ObservedKind) -> list[Assertion]:
        return [a for a in self.assertions if a.observes.kind in kinds]

    def expecting(self, *kinds: ExpectedKind) -> list[Assertion]:
        return [a for a in self.assertions if a.expected.kind in kinds]

    def in_language(self, *languages: Language) -> list[Assertion]:
        return [a for a in self.assertions if a.language in languages]
