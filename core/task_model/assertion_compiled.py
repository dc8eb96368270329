"""Assertion records from test files of other languages that test.sh builds and runs
(core/task_model/assertions.py): C and C++ (.c .cc .cpp .h .hpp), JavaScript and TypeScript (.js .mjs .ts),
Go, Rust and Java, read as syntax trees through core/parsers/tree_sitter.py.

Each check (core/task_model/compiled_checks.py) becomes one record; its operands are resolved through the file's
declarations and helpers (core/task_model/compiled_operands.py): a literal is the expected value, a file the
test reads is an output file, a program it runs gives stdout or an exit code with its argv. The test.sh line
that compiles or runs the file (`g++ x.cpp`, `go test`, `cargo test`, `node x.js`) is the record's "build" hop.

A file that cannot be read (no grammar for its language, refused by the guarded reader, too large, or so broken
that nothing in it reads as a check) is listed in `unread` with the reason, never raised. Vendored libraries
(node_modules/, a single-header test framework such as catch.hpp) are not test files and are skipped.
"""

from __future__ import annotations

import re

from envqa.core.defaults import MAX_TEST_BYTES, TEST_MODEL_CODE_CHARS
from envqa.core.parsers import tree_sitter as ts
from envqa.core.task_model.assertions import Assertion, Expected, Hop, Observed
from envqa.core.task_model.compiled_checks import Check, assertion_call, condition, if_checks, rust_macro_args
from envqa.core.task_model.compiled_operands import CALLS, FUNCTIONS, Operands, Side, arguments, callee, hop
from envqa.core.task_model.files import TestFile
from envqa.core.task_model.tests_reader import TestsModel

NO_GRAMMAR = {".rb", ".kt", ".kts", ".swift", ".cs", ".php", ".scala", ".lua", ".hs", ".ml", ".ex", ".exs", ".jl"}
NO_GRAMMAR |= {".zig", ".dart", ".clj", ".f90", ".nim", ".cr", ".fs", ".vb", ".m"}
VENDORED = re.compile(
    r"(^|/)(node_modules|vendor|third_party|target|build)/"
    r"|(^|/)(catch(_amalgamated)?|catch2|doctest|gtest|gmock|json|httplib|utest|munit|greatest|acutest)\.(h|hpp)$"
    r"|\.min\.js$|\.d\.ts$"
)
LANGUAGE = {"c": "c", "cpp": "cpp", "javascript": "javascript", "typescript": "typescript", "tsx": "typescript"}
LANGUAGE |= {"go": "go", "rust": "rust", "java": "java"}
BUILDERS = {
    "c": {"gcc", "cc", "clang", "make", "cmake", "g++", "c++"},
    "cpp": {"g++", "c++", "clang++", "gcc", "clang", "make", "cmake", "ctest"},
    "go": {"go"},
    "rust": {"cargo", "rustc"},
    "java": {"javac", "java", "mvn", "gradle", "./gradlew", "./mvnw"},
    "javascript": {"node", "npx", "jest", "vitest", "mocha", "npm", "yarn", "pnpm", "bun", "deno"},
    "typescript": {"npx", "tsx", "ts-node", "jest", "vitest", "tsc", "npm", "yarn", "pnpm", "bun", "deno", "node"},
}
THRESHOLDS = {"<", "<=", ">", ">="}
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
TEST_CALLS = {"it", "test", "describe", "TEST_CASE", "SECTION", "t.Run", "Run"}


def _build_hop(tests: TestsModel, f: TestFile, language: str) -> Hop | None:
    """The test.sh line that compiles or runs the file: one naming it, else one running the language's tool."""
    script = tests.script
    commands = [c for c in script.commands if c.reachable and c.words] if script is not None else []
    stem = f.path.stem
    named = [c for c in commands if any(f.name in w or w.endswith("/" + stem) or w == stem for w in c.words)]
    tools = [c for c in commands if c.name in BUILDERS.get(language, set())]
    cmd = (named or tools or [None])[0]  # type: ignore[list-item]
    if cmd is None or script is None:  # type: ignore[redundant-expr]
        return None
    return Hop(kind="build", file=script.rel, line=cmd.line, name=cmd.name, code=cmd.text[:TEST_MODEL_CODE_CHARS])


def _test_name(node: ts.Node) -> str:
    """The test a check belongs to: its function's name, or the title of the `it("…")`/`test("…")` around it."""
    n = node.parent
    while n is not None:
        if n.type in CALLS and callee(n) in TEST_CALLS and arguments(n):
            title = ts.string_value(arguments(n)[0])
            if title is not None:
                return title
        if n.type in FUNCTIONS:
            name = ts.field(n, "name") or ts.field(n, "declarator")
            if name is not None:
                return ts.text(name).split("{")[0].strip()[:80]
        n = n.parent
    return ""


class _FileReader:
    def __init__(self, tests: TestsModel, f: TestFile, language: str, root: ts.Node):
        self.f, self.language, self.root = f, language, root
        self.ops = Operands(root, f.rel, f.lines)
        self.build = _build_hop(tests, f, language)

    def checks(self) -> list[Check]:
        out: list[Check] = []
        for n in ts.walk(self.root):
            if n.type == "macro_invocation":
                args = rust_macro_args(n)
                out += assertion_call(n, args) if args is not None else []
            elif n.type in CALLS:
                out += assertion_call(n)
            elif n.type in ("if_statement", "if_expression"):
                out += if_checks(n)
            elif n.type == "assert_statement" and ts.named(n):  # Java's `assert x == y;`
                out += condition(ts.named(n)[0], n, False)
        return out

    def read(self) -> list[Assertion]:
        return [self.record(c) for c in self.checks()]

    def record(self, c: Check) -> Assertion:
        actual = self.ops.side(c.actual)
        wanted = self.ops.side(c.expected) if c.expected is not None else Side()
        op = c.op
        if actual.observed is None and wanted.observed is not None:
            actual, wanted, op = wanted, actual, FLIP.get(op, op)
        observed = actual.observed or Observed(kind="unknown", detail=ts.text(c.actual)[:TEST_MODEL_CODE_CHARS])
        expected = self.expected(c, op, wanted)
        if op == "exists":
            observed = observed.model_copy(update={"kind": "existence"})
        if op == "status" and observed.kind in ("stdout", "stderr", "value"):
            observed = observed.model_copy(update={"kind": "exit_code"} if observed.command else {})
        n = ts.line(c.node)
        hops = [hop("assert", self.f.rel, c.node, self.f.lines), *actual.hops, *wanted.hops]
        hops += [self.build] if self.build is not None else []
        return Assertion(
            language=LANGUAGE[self.language],
            file=self.f.rel,
            line=n,
            code=self.f.line(n)[:TEST_MODEL_CODE_CHARS],
            test=f"{self.f.rel}::{_test_name(c.node)}" if _test_name(c.node) else self.f.rel,
            op={"==i": "=="}.get(op, op),
            negated=c.negated,
            observes=observed,
            expected=expected,
            hops=hops,
        )

    @staticmethod
    def expected(c: Check, op: str, wanted: Side) -> Expected:
        case = op != "==i"
        if op == "exists":
            return Expected(kind="exists")
        if op == "status":
            return Expected(kind="literal", value="0")
        if op == "truthy" or c.expected is None:
            return Expected(kind="truthy")
        if c.pattern is not None:
            kind = c.pattern if wanted.literal is not None else "regex"
            return Expected(kind="pattern", value=wanted.literal, pattern_kind=kind, case_sensitive=case)
        if (op in THRESHOLDS or op == "isclose") and wanted.literal is not None:
            return Expected(kind="threshold", value=wanted.literal)
        exp = wanted.expected()
        return exp.model_copy(update={"case_sensitive": case}) if not case else exp


def compiled_assertions(tests: TestsModel) -> tuple[list[Assertion], list[str]]:
    """Every check in the C/C++/JS/TS/Go/Rust/Java test files, and "file: why" for each file not read."""
    records: list[Assertion] = []
    unread: list[str] = []
    for f in tests.files:
        language = ts.language_of(f.suffix)
        if language is None:
            if f.suffix.lower() in NO_GRAMMAR:
                unread.append(f"{f.rel}: no grammar for {f.suffix} files")
            continue
        if VENDORED.search(f.in_tests):
            continue
        if f.error is not None or f.size > MAX_TEST_BYTES:
            unread.append(f"{f.rel}: {f.error or f'over {MAX_TEST_BYTES} bytes'}")
            continue
        try:
            root = ts.parse(f.text.encode("utf-8", "replace"), language)
        except ts.ParseUnavailable as e:
            unread.append(f"{f.rel}: {e}")
            continue
        try:
            got = _FileReader(tests, f, language, root).read()
        except RecursionError:
            unread.append(f"{f.rel}: nested too deep to read")
            continue
        error = ts.first_error(root)
        if not got and error is not None:
            unread.append(f"{f.rel}: does not parse as {language} (line {error})")
        records += got
    return records, unread
