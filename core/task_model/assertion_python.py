"""Assertion records from the verifier's Python files (core/task_model/assertions.py).

Checks read: `assert`, unittest's `self.assert*`, `np.testing.assert_*` / `pd.testing.assert_*`, an `if` whose
body fails (`pytest.fail`, `sys.exit(1)` or a message, `exit(1)`, any `raise`) or whose `else` does,
`sys.exit(0 if ok else 1)`, and inside each: `pytest.approx`, `math.isclose`, `re.search/match/fullmatch`,
`startswith`/`endswith`, existence tests, `all(...)`/`any(...)` over a generator, `and`/`or` split into one
record per operand. Tests are pytest functions and methods of test classes; a Python file with no tests that no
test imports is a plain script (its module level is the check, with the functions it calls).

Values are resolved through helpers, local imports, constants, fixtures, `parametrize` and loops
(core/task_model/assertion_scope.py). A helper that holds the check gives one record per call site: `line` is
the check's own line (in the helper's file), and `hops` are the assertion first, then, from the test down, each
call site ("call", the caller's line) and the helper's definition ("helper"), then every constant, fixture,
parameter set, loop and local binding the values passed through.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from envqa.core.defaults import ASSERTION_MAX_CALL_DEPTH as MAX_CALL_DEPTH
from envqa.core.defaults import ASSERTION_MAX_HELPER_SITES as MAX_HELPER_SITES
from envqa.core.defaults import TEST_MODEL_CODE_CHARS as CODE_MAX
from envqa.core.task_model.assertion_conditions import OPS, call_condition, compared, single
from envqa.core.task_model.assertion_kinds import self_report
from envqa.core.task_model.assertion_scope import Expander, Frame, PyModule, bind_call, index_module, marker
from envqa.core.task_model.assertion_values import NOT_LITERAL, literal, name_of
from envqa.core.task_model.assertions import Assertion, Expected, Hop, Observed
from envqa.core.task_model.cases import _is_test_class
from envqa.core.task_model.tests_reader import TestsModel

FAIL_CALLS = {"fail", "exit", "_exit", "quit", "abort"}
INVERSE = {
    "==": "!=",
    "!=": "==",
    "in": "not in",
    "not in": "in",
    "is": "is not",
    "is not": "is",
    "<": ">=",
    ">=": "<",
    ">": "<=",
    "<=": ">",
}
NEGATIVE = {"!=", "not in", "is not"}


@dataclass
class _Ctx:
    frame: Frame
    test: str
    via: list[Hop] = field(default_factory=list)  # call sites and helpers from the test down
    cases: int = 1
    depth: int = 0


def _fails(body: list[ast.stmt]) -> bool:
    """Whether a block fails the check: a raise, `pytest.fail(...)`, `sys.exit` / `exit` with a non-zero literal
    status or a message (`sys.exit(main())` passes on a status nobody reads here: main's own checks count).
    Kept on the block's first statement (a mark, like `_values`): a helper read at every call site asks again."""
    if not body:
        return False
    known = getattr(body[0], "_fails", None)
    if known is None or known[0] != len(body):
        known = (len(body), _block_fails(body))
        body[0]._fails = known  # type: ignore[attr-defined]
    return known[1]


def _block_fails(body: list[ast.stmt]) -> bool:
    for n in (x for st in body for x in ast.walk(st)):
        if isinstance(n, ast.Raise):
            return True
        if isinstance(n, ast.Call) and name_of(n)[1] in FAIL_CALLS:
            if name_of(n)[1] == "fail" or (n.args and isinstance(n.args[0], ast.JoinedStr)):
                return True
            arg = literal(n.args[0]) if n.args else 0
            if arg not in (0, None, False, NOT_LITERAL):
                return True
    return False


def _main_guard(test: ast.AST) -> bool:
    """`if __name__ == "__main__":`: how a script starts, never a check."""
    return isinstance(test, ast.Compare) and getattr(test.left, "id", "") == "__name__"


def _mult(a: int, b: int) -> int:
    return -1 if -1 in (a, b) else a * b


class _Reader:
    def __init__(self, tests: TestsModel):
        modules: dict[str, PyModule] = {}
        for f in tests.python:
            if f.tree is not None:
                m = index_module(f, f.tree)
                modules[m.import_name] = m
        self.modules = modules
        self.ex = Expander(modules)
        self.imported = tests.imported_modules
        self.out: list[Assertion] = []
        self._holds: dict[int, bool] = {}
        self._fixtures_read: set[int] = set()
        self.helper_sites = 0  # helper call sites followed so far (MAX_HELPER_SITES)

    def read(self) -> list[Assertion]:
        for m in self.modules.values():
            if m.file.name == "conftest.py":
                continue
            tests = [(None, fn) for name, fn in m.functions.items() if name.startswith("test")]
            tests += [
                (c, fn)  # type: ignore[misc]
                for (c, name), fn in m.methods.items()
                if name.startswith("test") and _is_test_class(m.classes[c])
            ]
            try:
                for cls, fn in sorted(tests, key=lambda t: t[1].lineno):
                    self.test(m, cls, fn)
                if (
                    not tests
                    and m.import_name not in self.imported
                    and m.import_name.rsplit(".", 1)[-1] not in self.imported
                ):
                    self.walk(m.file.tree.body, _Ctx(Frame(m, m.file.tree), m.file.rel))  # type: ignore[union-attr]
            except RecursionError:  # an expression nested past the interpreter's depth: that file's rest unread
                continue
        return self.out

    def test(self, m: PyModule, cls: str | None, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        ctx = _Ctx(Frame(m, fn, cls), f"{m.file.rel}::{cls + '::' if cls else ''}{fn.name}")
        for d in fn.decorator_list:
            if isinstance(d, ast.Call) and name_of(d)[1] == "parametrize" and d.args:
                self.parametrize(d, ctx)
        self.walk(fn.body, ctx)
        self.fixture_checks(m, fn, ctx, set())

    def fixture_checks(self, m: PyModule, fn: ast.AST, ctx: _Ctx, seen: set[int]) -> None:
        """The checks of the fixtures a test asks for (`assert build.returncode == 0` in a build fixture), read
        once per fixture, as a test of its own."""
        for arg in [a.arg for a in fn.args.args]:  # type: ignore[attr-defined]
            found = self.ex.fixture(arg, m)
            if found is None or id(found[1]) in seen:
                continue
            seen.add(id(found[1]))
            fm, fx = found
            if id(fx) not in self._fixtures_read and self.holds_checks(fx, fm, None):
                self._fixtures_read.add(id(fx))
                self.walk(fx.body, _Ctx(Frame(fm, fx), f"{fm.file.rel}::{fx.name}", [fm.hop("fixture", fx, fx.name)]))
            self.fixture_checks(fm, fx, ctx, seen)

    def parametrize(self, d: ast.Call, ctx: _Ctx) -> None:
        """Each argument of a `parametrize` bound to its cases (one marker per name, carrying the values)."""
        names = literal(d.args[0])
        names = (
            [n.strip() for n in names.split(",")]
            if isinstance(names, str)
            else list(names)
            if isinstance(names, (list, tuple))
            else []
        )
        raw = d.args[1] if len(d.args) > 1 else next((k.value for k in d.keywords if k.arg == "argvalues"), None)
        hops: list[Hop] = []
        cases = self.ex.expand(raw, Frame(ctx.frame.module), hops) if raw is not None else None
        hops.insert(0, ctx.frame.module.hop("parametrize", d, ",".join(map(str, names))))
        if not isinstance(cases, (ast.List, ast.Tuple)):
            ctx.cases = -1
            ctx.frame.bound.update({n: _with_hops(marker(n, source=cases), hops) for n in names})
            return
        rows = [c.args if isinstance(c, ast.Call) and name_of(c)[1] == "param" else c for c in cases.elts]
        for i, n in enumerate(names):
            if len(names) == 1:
                values = [r[0] if isinstance(r, list) and r else r for r in rows]
            else:
                values = [
                    r[i]
                    if isinstance(r, list) and i < len(r)
                    else r.elts[i]
                    if isinstance(r, (ast.Tuple, ast.List)) and i < len(r.elts)
                    else ast.Constant(None)
                    for r in rows
                ]
            ctx.frame.bound[n] = _with_hops(marker(n, values=values, source=cases), hops)  # type: ignore[arg-type]
        ctx.cases = _mult(ctx.cases, len(rows))

    # -- statements ---------------------------------------------------------------------------------------------

    def walk(self, body: list[ast.stmt], ctx: _Ctx) -> None:
        for st in body:
            if isinstance(st, ast.Assert):
                self.check(st.test, False, st, ctx)
            elif isinstance(st, ast.If):
                if _main_guard(st.test):
                    pass
                elif _fails(st.body):
                    self.check(st.test, True, st, ctx)
                elif st.orelse and _fails(st.orelse):
                    self.check(st.test, False, st, ctx)
                self.walk(st.body, ctx)
                self.walk(st.orelse, ctx)
            elif isinstance(st, (ast.For, ast.AsyncFor, ast.While)):
                n = self.loop_cases(st, ctx) if not isinstance(st, ast.While) else -1
                self.walk(st.body, replace(ctx, cases=_mult(ctx.cases, n)))
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                self.walk(st.body, ctx)
            elif isinstance(st, ast.Try):
                for block in (st.body, *(h.body for h in st.handlers), st.orelse, st.finalbody):
                    self.walk(block, ctx)
            elif not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.calls(st, ctx)

    def loop_cases(self, st: ast.For | ast.AsyncFor, ctx: _Ctx) -> int:
        it = self.ex.expand(st.iter, replace(ctx.frame, line=st.lineno), [])
        if (
            isinstance(it, ast.Call)
            and name_of(it)[1] in ("items", "keys", "values")
            and isinstance(it.func, ast.Attribute)
        ):
            it = it.func.value
        if isinstance(it, ast.Call) and name_of(it)[1] in ("enumerate", "sorted", "zip") and it.args:
            it = it.args[0]
        if isinstance(it, (ast.List, ast.Tuple, ast.Set)) and not any(isinstance(e, ast.Starred) for e in it.elts):
            return len(it.elts)
        return len(it.keys) if isinstance(it, ast.Dict) else -1

    def calls(self, st: ast.stmt, ctx: _Ctx) -> None:
        """The checks a plain statement makes: assertion calls, `sys.exit(0 if ok else 1)`, helpers that check."""
        for n in ast.walk(st):
            if not isinstance(n, ast.Call):
                continue
            owner, name = name_of(n)
            cond = call_condition(n, name)
            if cond is not None:
                self.check(cond[0], cond[1], n, ctx)
            elif name in ("exit", "_exit") and n.args and isinstance(n.args[0], ast.IfExp):
                e = n.args[0]
                self.check(e.test, literal(e.body) != 0, n, ctx)
            else:
                self.helper(n, ctx)

    def holds_checks(self, fn: ast.AST, m: PyModule, cls: str | None, depth: int = 0) -> bool:
        if id(fn) in self._holds:
            return self._holds[id(fn)]
        self._holds[id(fn)] = False  # a recursive helper holds no more checks than its body shows
        found = False
        for n in ast.walk(fn):
            if (
                isinstance(n, ast.Assert)
                or (isinstance(n, ast.If) and (_fails(n.body) or _fails(n.orelse)))
                or (isinstance(n, ast.Call) and (call_condition(n, name_of(n)[1]) is not None))
            ):
                found = True
            elif isinstance(n, ast.Call) and depth < MAX_CALL_DEPTH:
                callee = self.ex.function(n.func, Frame(m, None, cls))
                found = callee is not None and self.holds_checks(callee[1], callee[0], callee[2], depth + 1)
            if found:
                break
        self._holds[id(fn)] = found
        return found

    def helper(self, call: ast.Call, ctx: _Ctx) -> None:
        """A call to a helper that holds checks: its checks, once for this call site, with its arguments."""
        found = self.ex.function(call.func, ctx.frame)
        if found is None or ctx.depth >= MAX_CALL_DEPTH or not self.holds_checks(found[1], found[0], found[2]):
            return
        self.helper_sites += 1
        if self.helper_sites > MAX_HELPER_SITES:  # helpers calling helpers fan out as a product: stop, never hang
            return
        m, fn, cls = found
        hops: list[Hop] = []
        here = replace(ctx.frame, line=call.lineno)
        args = ast.Call(
            func=call.func,
            args=[self.ex.expand(a, here, hops) for a in call.args],  # type: ignore[misc]
            keywords=[ast.keyword(arg=k.arg, value=self.ex.expand(k.value, here, hops)) for k in call.keywords],  # type: ignore[call-overload]
        )
        bound = bind_call(fn, args, cls is not None)
        site = [ctx.frame.module.hop("call", call, fn.name), m.hop("helper", fn, fn.name)]
        inner = _Ctx(
            Frame(m, fn, cls, bound, hops=ctx.frame.hops + hops), ctx.test, ctx.via + site, ctx.cases, ctx.depth + 1
        )
        self.walk(fn.body, inner)

    # -- one check ----------------------------------------------------------------------------------------------

    def check(self, cond: ast.AST, negated: bool, at: ast.AST, ctx: _Ctx) -> None:
        for part, neg, frame, mult in self.parts(cond, negated, replace(ctx.frame, line=at.lineno)):  # type: ignore[attr-defined]
            self.record(part, neg, at.lineno, replace(ctx, frame=frame, cases=_mult(ctx.cases, mult)))  # type: ignore[attr-defined]

    def parts(self, cond: ast.AST, negated: bool, frame: Frame) -> list[tuple[ast.AST, bool, Frame, int]]:
        """A condition split into the checks it makes: `a and b` (or, negated, `a or b`) gives both; `not` flips;
        `all(... for x in xs)` checks its element with `x` bound to xs's cases."""
        if isinstance(cond, ast.UnaryOp) and isinstance(cond.op, ast.Not):
            return self.parts(cond.operand, not negated, frame)
        if isinstance(cond, ast.BoolOp):
            return [p for v in cond.values for p in self.parts(v, negated, frame)]
        if (
            isinstance(cond, ast.Call)
            and name_of(cond)[1] in ("all", "any")
            and cond.args
            and isinstance(cond.args[0], (ast.GeneratorExp, ast.ListComp))
        ):
            gen = cond.args[0]
            bound, mult = dict(frame.bound), 1
            for g in gen.generators:
                it = self.ex.expand(g.iter, replace(frame, bound=bound), [])
                names = [n.id for n in ast.walk(g.target) if isinstance(n, ast.Name)]
                listed = isinstance(it, (ast.List, ast.Tuple, ast.Set)) and isinstance(g.target, ast.Name)
                mult = _mult(mult, len(it.elts) if listed else -1)  # type: ignore[attr-defined]
                bound.update({n: marker(n, values=list(it.elts) if listed else None, source=it) for n in names})  # type: ignore[attr-defined]
            return [
                (c, n, f, _mult(k, mult)) for c, n, f, k in self.parts(gen.elt, negated, replace(frame, bound=bound))
            ]
        if isinstance(cond, ast.Name):  # `ok = "done" in out` then `sys.exit(0 if ok else 1)`: the check it holds
            hops = list(frame.hops)
            bound_to = self.ex.expand(cond, frame, hops)
            if isinstance(bound_to, (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Call)):
                return self.parts(bound_to, negated, replace(frame, hops=hops))
        return [(cond, negated, frame, 1)]

    def record(self, cond: ast.AST, negated: bool, line: int, ctx: _Ctx) -> None:
        m = ctx.frame.module
        hops: list[Hop] = list(ctx.frame.hops)
        runs = _imported_runs(m)
        if isinstance(cond, ast.Compare):
            left = cond.left
            for op, right in zip(cond.ops, cond.comparators, strict=False):
                lh: list[Hop] = []
                rh: list[Hop] = []
                a, b = self.ex.expand(left, ctx.frame, lh), self.ex.expand(right, ctx.frame, rh)
                o, obs, exp = compared(a, OPS.get(type(op), "?"), b, lh, rh, runs)
                obs = self_report(obs, ast.Tuple(elts=[a, b], ctx=ast.Load()), exp)  # type: ignore[list-item]
                self.emit(ctx, line, o, negated, obs, exp, hops + lh + rh)
                left = right
            return
        vh: list[Hop] = []
        whole = self.ex.expand(cond, ctx.frame, vh)
        o, obs, exp = single(whole, runs)
        obs = self_report(obs, whole, exp)
        self.emit(ctx, line, o, negated, obs, exp, hops + vh)

    def emit(self, ctx: _Ctx, line: int, op: str, negated: bool, obs: Observed, exp: Expected, hops: list[Hop]) -> None:
        """One record. An inverted condition (`if x != y: sys.exit(1)`) is recorded as the check it makes
        (`==`); `negated` is then true for a negative check (`!=`, `not in`, `is not`) or a `not` over a check
        that has no inverse (`not re.search(...)`, `not p.exists()`)."""
        if op in INVERSE:
            op = INVERSE[op] if negated else op
            negated = op in NEGATIVE
        m = ctx.frame.module
        first = Hop(kind="assert", file=m.file.rel, line=line, code=m.file.line(line)[:CODE_MAX])
        seen = {(first.kind, first.file, first.line)}
        out = [first]
        for h in ctx.via + hops:
            if (h.kind, h.file, h.line) not in seen:
                seen.add((h.kind, h.file, h.line))
                out.append(h)
        self.out.append(
            Assertion(
                language="python",
                file=m.file.rel,
                line=line,
                code=m.file.line(line)[:CODE_MAX],
                test=ctx.test,
                op=op,
                negated=negated,
                observes=obs,
                expected=exp,
                hops=out,
                cases=ctx.cases,
            )
        )


def _with_hops(node: ast.AST, hops: list[Hop]) -> ast.AST:
    node._hops = hops  # type: ignore[attr-defined]  # cited by each check that uses the parameter
    return node


def _imported_runs(m: PyModule) -> frozenset[str]:
    return frozenset(n for n, (mod, attr, _l) in m.imports.items() if mod in ("subprocess", "os") and attr)


def python_assertions(tests: TestsModel) -> list[Assertion]:
    """Every check the Python test files make (see the module docstring)."""
    return _Reader(tests).read()
