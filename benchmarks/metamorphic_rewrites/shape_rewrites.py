"""Rewrites that change the shape of a pytest test around the same check: its asserts in a helper, a value it
computes in a fixture, a one-case `parametrize`, and a `unittest.TestCase` class.

Each applies to the module-level test functions of a file pytest collects (test_*.py, *_test.py); each keeps the
test's pass/fail on every input (tests/metamorphic/test_rewrites.py runs the rewritten files under pytest to show
it), and skips a test it cannot move with certainty (await, yield, global, nonlocal, a walrus, a decorator that
is not a pytest mark, a name a new binding would shadow).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import GlobalScope

from .cst_tools import add_import, fresh, import_usable, names_in
from .scoped import Scoped, is_test, no_params, pytest_marks_only

BUILTIN_FIXTURES = frozenset(
    {
        "request",
        "tmp_path",
        "tmp_path_factory",
        "tmpdir",
        "tmpdir_factory",
        "capsys",
        "capfd",
        "caplog",
        "monkeypatch",
        "pytestconfig",
        "record_property",
        "recwarn",
        "cache",
        "doctest_namespace",
        "capsysbinary",
        "capfdbinary",
        "record_testsuite_property",
        "record_xml_attribute",
        "testdir",
        "pytester",
    }
)


def _assert_line(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, cst.Assert) for s in stmt.body)


def _runs(fn: cst.FunctionDef) -> list[cst.SimpleStatementLine]:
    """The first assert line of each run of consecutive assert lines in `fn`'s blocks (not in nested defs or
    classes), in source order."""
    firsts: list[cst.SimpleStatementLine] = []

    class _Blocks(cst.CSTVisitor):
        def visit_IndentedBlock(self, block: cst.IndentedBlock) -> None:
            prev = False
            for stmt in block.body:
                here = _assert_line(stmt)
                if here and not prev:
                    firsts.append(stmt)
                prev = here

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is fn

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

    fn.visit(_Blocks())
    return firsts


class _TopTests(Scoped):
    """Tracks whether the visit is inside a module-level test (depth 1) or deeper (a nested def or class)."""

    tests_only = True

    def visit_Module(self, node: cst.Module) -> None:
        self.taken = names_in(node)
        self.depth = 0
        self.test: cst.FunctionDef | None = None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.depth == 0 and is_test(node):
            self.test = node
        self.depth += 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.depth += 1

    def leave_ClassDef(self, original, updated):
        self.depth -= 1
        return updated

    def _leave_def(self) -> bool:
        """Call from leave_FunctionDef: True when the test that ends here is a module-level test."""
        self.depth -= 1
        return self.depth == 0 and self.test is not None


class ExtractHelper(_TopTests):
    """Each run of asserts in a test -> `_check_<test>(<the locals they read>)`, defined just above the test."""

    needs = ("assert", "def test")

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.helpers: list[tuple[int, cst.FunctionDef]] = []
        self.before: dict[int, list[cst.FunctionDef]] = {}
        self.run_names: dict[int, str] = {}  # the first assert of each run -> its helper's name, in source order
        self.order: dict[int, int] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        if self.depth == 1 and self.test is node:
            for k, first in enumerate(_runs(node)):
                self.run_names[id(first)] = fresh(f"_check_{node.name.value}", self.taken)
                self.order[id(first)] = k

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        if self.test is None or self.depth != 1:
            return updated
        body, run = [], []
        for o, u in zip(original.body, updated.body):
            if _assert_line(o):
                run.append((o, u))
                continue
            body += self._flush(run)
            run = []
            body.append(u)
        body += self._flush(run)
        return updated.with_changes(body=body)

    def _flush(self, run: list) -> list:
        if not run:
            return []
        fn_scope = self.scope(run[0][0])
        params: list[str] = []
        for o, _ in run:
            params += [n for n in self.local_reads(o, fn_scope) if n not in params]
        name = self.run_names[id(run[0][0])]
        moved = [u.with_changes(leading_lines=[]) if k == 0 else u for k, (_, u) in enumerate(run)]
        for (o, _), m in zip(run, moved):
            self.carry(m, o)
        helper = cst.FunctionDef(
            name=cst.Name(name),
            params=cst.Parameters([cst.Param(cst.Name(p)) for p in params]),
            body=cst.IndentedBlock(moved),
            leading_lines=[cst.EmptyLine(), cst.EmptyLine()],
        )
        self.helpers.append((self.order[id(run[0][0])], helper))
        call = cst.SimpleStatementLine(
            [cst.Expr(cst.Call(cst.Name(name), [cst.Arg(cst.Name(p)) for p in params]))],
            leading_lines=run[0][1].leading_lines,
        )
        for o, _ in run:
            self.stand_in(o, call)
        self.changed = True
        return [call]

    def leave_FunctionDef(self, original, updated):
        if self._leave_def():
            self.before[id(updated)] = [h for _, h in sorted(self.helpers, key=lambda kh: kh[0])]
            self.helpers, self.test = [], None
        return updated

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body = []
        for stmt in updated.body:
            body += self.before.get(id(stmt), [])
            body.append(stmt)
        return updated.with_changes(body=body)


class ToFixture(_TopTests):
    """A test's leading `name = <value>` statements that read no local (or only earlier ones moved) -> one
    `@pytest.fixture` each, returning the value, requested by the test (after its own parameters, so pytest sets
    them up in the test's order)."""

    needs = ("def test",)

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.ok = import_usable(node, "pytest")
        self.params_anywhere = {p.name.value for p in _all_params(node)}
        self.before: dict[int, list[cst.FunctionDef]] = {}
        self.fixture_names: set[str] = set()
        self.returns: dict[str, cst.SimpleStatementLine] = {}  # fixture name -> its `return` line

    def _free_as_fixture(self, name: str) -> bool:
        """A module-level fixture named `name` shadows nothing: no module-level binding of it, no parameter
        anywhere requests a fixture of that name, pytest has no built-in one, and no other test's fixture took it."""
        if name in self.params_anywhere or name in BUILTIN_FIXTURES or name in self.fixture_names:
            return False
        return not any(isinstance(b.scope, GlobalScope) for b in self.bindings(name))

    def _candidate(self, stmt: cst.BaseStatement, fn_scope, moved: list[str]) -> tuple[str, cst.BaseExpression] | None:
        """(name, value) when `stmt` is `name = value`, bound once in the test, reading no local but `moved`."""
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
            return None
        a = stmt.body[0]
        if not (isinstance(a, cst.Assign) and len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name)):
            return None
        name = a.targets[0].target.value
        mine = [b for b in self.bindings(name) if b.scope is fn_scope]
        if len(mine) != 1 or not self.only_outer_reads(a.value, fn_scope, set(moved)):
            return None
        return (name, a.value) if self._free_as_fixture(name) else None

    def _fixture(self, stmt: cst.SimpleStatementLine, name: str, value: cst.BaseExpression, uses: list[str]):
        ret = cst.SimpleStatementLine([cst.Return(value)])
        self.carry(ret, stmt)
        self.returns[name] = ret
        return cst.FunctionDef(
            name=cst.Name(name),
            params=cst.Parameters([cst.Param(cst.Name(u)) for u in uses]),
            body=cst.IndentedBlock([ret]),
            decorators=[cst.Decorator(cst.parse_expression("pytest.fixture"))],
            leading_lines=[cst.EmptyLine(), cst.EmptyLine()],
        )

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if not self._leave_def():
            return updated
        self.test = None
        if not self.ok or not pytest_marks_only(original) or not isinstance(original.body, cst.IndentedBlock):
            return updated
        fn_scope = self.scope(original.body.body[0])
        moved: list[str] = []
        fixtures: list[cst.FunctionDef] = []
        for o in original.body.body[:-1]:  # the last statement stays: a test keeps a body
            found = self._candidate(o, fn_scope, moved)
            if found is None:
                break
            name, value = found
            uses = [n for n in self.local_reads(value, fn_scope) if n in moved]
            fixtures.append(self._fixture(o, name, value, uses))
            moved.append(name)
            self.fixture_names.add(name)
        if not moved:
            return updated
        self.changed = True
        self.before[id(original)] = fixtures
        for line in _lines(original.body.body[len(moved) :]):
            for name in self.local_reads(line, fn_scope):
                if name in moved:  # a check reading the value may cite where it is computed: the fixture
                    self.stand_in(line, self.returns[name])
        params = updated.params.with_changes(params=[*updated.params.params, *(cst.Param(cst.Name(v)) for v in moved)])
        rest = updated.body.body[len(moved) :]
        return updated.with_changes(params=params, body=updated.body.with_changes(body=rest))

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if not self.changed:
            return updated
        body = []
        for o, u in zip(original.body, updated.body):
            body += self.before.get(id(o), [])
            body.append(u)
        return updated.with_changes(body=add_import(body, original, "pytest"))


def _lines(stmts) -> list[cst.SimpleStatementLine]:
    """Every simple statement line in `stmts`, nested blocks included."""
    found: list[cst.SimpleStatementLine] = []

    class _Lines(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, line: cst.SimpleStatementLine) -> None:
            found.append(line)

    for stmt in stmts:
        stmt.visit(_Lines())
    return found


def _all_params(node: cst.CSTNode) -> list[cst.Param]:
    found: list[cst.Param] = []

    class _Params(cst.CSTVisitor):
        def visit_Param(self, p: cst.Param) -> None:
            found.append(p)

    node.visit(_Params())
    return found


class Parametrize(Scoped):
    """A test with no parameters -> `@pytest.mark.parametrize("case", [0])` and a `case` parameter."""

    needs = ("def test",)

    tests_only = True

    def visit_Module(self, node: cst.Module) -> None:
        self.ok = import_usable(node, "pytest")

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if not self.ok:
            return updated
        body = []
        for stmt in updated.body:
            if is_test(stmt) and no_params(stmt) and pytest_marks_only(stmt) and "case" not in names_in(stmt):
                mark = cst.Decorator(cst.parse_expression('pytest.mark.parametrize("case", [0])'))
                stmt = self.carry(
                    stmt.with_changes(
                        decorators=[mark, *stmt.decorators], params=cst.Parameters([cst.Param(cst.Name("case"))])
                    ),
                    stmt,
                )
                self.changed = True
            body.append(stmt)
        return updated.with_changes(body=add_import(body, original, "pytest")) if self.changed else updated


class ToUnittest(Scoped):
    """The module-level tests with no parameters and no decorators -> methods of one `unittest.TestCase` class
    (where the first of them stood); `assert a == b[, msg]` -> `self.assertEqual(a, b[, msg])`, other asserts
    kept (pytest rewrites them in a TestCase too)."""

    needs = ("def test",)

    tests_only = True

    def visit_Module(self, node: cst.Module) -> None:
        taken = names_in(node)
        self.cls = fresh("TestRewritten", taken)
        self.ok = import_usable(node, "unittest") and "self" not in taken
        self.names = _name_counts(node)
        self.depth = 0
        self.inside = False

    def _movable(self, stmt: cst.CSTNode) -> bool:
        return is_test(stmt) and no_params(stmt) and not stmt.decorators and self.names.get(stmt.name.value, 0) == 1

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.depth == 0 and self._movable(node):
            self.inside = True
        self.depth += 1

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        if self.depth == 0:
            self.inside = False
        return updated

    def visit_ClassDef(self, node) -> None:
        self.depth += 1

    def leave_ClassDef(self, original, updated):
        self.depth -= 1
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        if not (self.ok and self.inside and self.depth == 1 and len(updated.body) == 1):
            return updated
        a = updated.body[0]
        if not (isinstance(a, cst.Assert) and isinstance(a.test, cst.Comparison) and len(a.test.comparisons) == 1):
            return updated
        comp = a.test
        if not isinstance(comp.comparisons[0].operator, cst.Equal) or comp.lpar:
            return updated
        args = [cst.Arg(comp.left), cst.Arg(comp.comparisons[0].comparator)]
        if a.msg is not None:
            args.append(cst.Arg(a.msg))
        call = cst.Call(cst.Attribute(cst.Name("self"), cst.Name("assertEqual")), args)
        return updated.with_changes(body=[cst.Expr(call)])

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if not self.ok:
            return updated
        methods, body, at = [], [], None
        for o, u in zip(original.body, updated.body):
            if self._movable(o):
                kept = (
                    u.leading_lines
                    if not methods
                    else [cst.EmptyLine(indent=False), *(ln for ln in u.leading_lines if ln.comment)]
                )
                method = u.with_changes(params=cst.Parameters([cst.Param(cst.Name("self"))]), leading_lines=kept)
                methods.append(self.carry(method, u))
                at = len(body) if at is None else at
                continue
            body.append(u)
        if not methods:
            return updated
        self.changed = True
        first = methods[0]
        methods[0] = first.with_changes(leading_lines=[])
        self.carry(methods[0], first)
        cls = cst.ClassDef(
            name=cst.Name(self.cls),
            bases=[cst.Arg(cst.parse_expression("unittest.TestCase"))],
            body=cst.IndentedBlock(methods),
            leading_lines=first.leading_lines,
        )
        body = [*body[:at], cls, *body[at:]]
        return updated.with_changes(body=add_import(body, original, "unittest"))


def _name_counts(node: cst.CSTNode) -> dict[str, int]:
    counts: dict[str, int] = {}

    class _Count(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            counts[n.value] = counts.get(n.value, 0) + 1

    node.visit(_Count())
    return counts
