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
from functools import cached_property

from envqa.core.defaults import COMPILED_HELPER_SITES as MAX_HELPER_SITES
from envqa.core.defaults import MAX_TEST_BYTES, TEST_MODEL_CODE_CHARS
from envqa.core.parsers import tree_sitter as ts
from envqa.core.task_model.assertions import Assertion, Expected, Hop, Observed
from envqa.core.task_model.compiled_checks import Check, assertion_call, condition, if_checks, rust_macro_args
from envqa.core.task_model.compiled_operands import (
    CALLS,
    FUNCTIONS,
    Operands,
    Side,
    arguments,
    callee,
    hop,
    param_names,
)
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


def _enclosing(node: ts.Node) -> ts.Node | None:
    """The named function a node is in (None at file level or in an anonymous function)."""
    n = node.parent
    while n is not None and n.type not in FUNCTIONS:
        n = n.parent
    return n


def _function_name(fn: ts.Node) -> str:
    name = ts.field(fn, "name") or ts.field(fn, "declarator")
    while name is not None and name.type in ("function_declarator", "pointer_declarator"):
        name = ts.field(name, "declarator")
    return ts.text(name) if name is not None else ""


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
        out = []
        checks = self.checks()
        holders = {_function_name(f) for f in (_enclosing(c.node) for c in checks) if f is not None}
        for c in checks:
            if c.op == "truthy" and c.actual is not None and c.actual.type in CALLS and callee(c.actual) in holders:
                continue  # `if (!reports(got, "3")) return 1;`: the helper's own checks are read through this call
            helper = _enclosing(c.node)
            name = _function_name(helper) if helper is not None else ""
            known = self.ops.functions.get(name) if helper is not None else None
            same = known is not None and helper is not None and known.start_byte == helper.start_byte
            sites = self.sites(name, helper) if helper is not None and same else []
            out += [self.record(c, helper, site) for site in sites] or [self.record(c)]
        return out

    def sites(self, name: str, helper: ts.Node) -> list[ts.Node]:
        """The calls of helper `name` elsewhere in the file (a check in a helper is read once per call, its
        parameters bound to that call's arguments, as the Python reader reads one)."""
        if not name:
            return []
        calls = self.calls_by_name.get(name, [])
        return [n for n in calls if not (helper.start_byte <= n.start_byte < helper.end_byte)][:MAX_HELPER_SITES]

    @cached_property
    def calls_by_name(self) -> dict[str, list[ts.Node]]:
        """Every call in the file by its callee's name, walked once however many checks sit in helpers."""
        out: dict[str, list[ts.Node]] = {}
        for n in ts.walk(self.root):
            if n.type in CALLS:
                out.setdefault(callee(n), []).append(n)
        return out

    def record(self, c: Check, helper: ts.Node | None = None, site: ts.Node | None = None) -> Assertion:
        bound = None
        if helper is not None and site is not None:
            bound = {ts.text(p): a for p, a in zip(param_names(helper), arguments(site), strict=False)} or None
        actual = self.ops.side(c.actual, bound)
        wanted = self.ops.side(c.expected, bound) if c.expected is not None else Side()
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
        hops = [hop("assert", self.f.rel, c.node, self.f.lines)]
        if helper is not None and site is not None:
            name = _function_name(helper)
            hops += [
                hop("call", self.f.rel, site, self.f.lines, name),
                hop("helper", self.f.rel, helper, self.f.lines, name),
            ]
        hops += [*actual.hops, *wanted.hops]
        hops += [self.build] if self.build is not None else []
        named = _test_name(site if site is not None else c.node)
        return Assertion(
            language=LANGUAGE[self.language],
            file=self.f.rel,
            line=n,
            code=self.f.line(n)[:TEST_MODEL_CODE_CHARS],
            test=f"{self.f.rel}::{named}" if named else self.f.rel,
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
