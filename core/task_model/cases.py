"""Each test of the verifier, and what it does: the paths it reads, what it runs, what it compares with what,
its thresholds and tolerances, and what it asserts unchanged.

A test is a pytest function (`def test_x`), a method of a `Test*` class or of a `unittest.TestCase`
subclass. Its facts include those of the helpers it calls (a module function, a method of its class) and of
the fixtures it takes by name (from its own file or any conftest.py of the tests), so a check written once in
a helper is seen in every test that uses it. Everything is read from the trees the test model already holds
(core/task_model/files.py); paths and commands come from the same reader as the instruction checks
(core/consistency/requirements.py), so the two never disagree about what a line opens or runs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from envqa.core.consistency.requirements import tree_requirements
from envqa.core.defaults import TEST_MODEL_CODE_CHARS as CODE_MAX
from envqa.core.task_model.files import TestFile

READ_CALLS = {"read", "read_text", "read_bytes", "load", "loads", "loadtxt", "read_csv", "read_json", "readlines"}
FILE_OPENERS = {"open", "read_text", "read_bytes", "loadtxt", "read_csv", "read_json", "imread"}
RUN_MODULES = {"subprocess", "os", "sp"}
RUN_CALLS = {"run", "call", "check_call", "check_output", "Popen", "system", "popen", "getoutput", "getstatusoutput"}
CLOSE_CALLS = {"isclose": ("rel_tol", "abs_tol"), "allclose": ("rtol", "atol"), "assert_allclose": ("rtol", "atol")}
CLOSE_KINDS = {"assert_allclose": "allclose"}  # one kind per tolerance, however the call is spelt
ORDERED = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
EQUALITY = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
ASSERT_PAIRS = {
    "assertEqual": "==",
    "assertEquals": "==",
    "assertNotEqual": "!=",
    "assertIn": "in",
    "assertNotIn": "not in",
    "assertGreater": ">",
    "assertGreaterEqual": ">=",
    "assertLess": "<",
    "assertLessEqual": "<=",
    "assertAlmostEqual": "almost",
}


@dataclass
class Operand:
    """One side of a comparison. kind: literal (a constant, or a name bound to one), file (a file's content or
    digest), computed (anything else: the output of a call, a variable)."""

    kind: str
    code: str
    value: str | None = None  # the literal's value


@dataclass
class Comparison:
    line: int
    op: str  # ==, !=, in, <, >=, almost, isclose, approx ...
    left: Operand
    right: Operand


@dataclass
class Tolerance:
    """A threshold or tolerance: `bound` (an ordered comparison with a number), `isclose`, `approx`,
    `allclose`, `almost` (assertAlmostEqual); value is the bound or the tolerance when it is a number."""

    line: int
    kind: str
    code: str
    value: float | None = None


@dataclass
class Facts:
    """What one function does (a test's own, or a helper's or fixture's, folded into the tests that use it)."""

    reads: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    compares: list[Comparison] = field(default_factory=list)
    tolerances: list[Tolerance] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)  # paths whose digest or mtime it computes to compare

    def merge(self, other: Facts) -> None:
        for name in ("reads", "runs", "unchanged"):
            mine = getattr(self, name)
            mine += [x for x in getattr(other, name) if x not in mine]
        self.compares += other.compares
        self.tolerances += other.tolerances


@dataclass
class TestCase:
    """One test: where it is, how it is parametrized, and what it (with its helpers and fixtures) checks."""

    file: str  # "tests/test_outputs.py"
    name: str
    line: int
    cls: str | None = None
    params: int = 0  # parametrized cases (1 when not parametrized; -1 when the cases are computed)
    fixtures: list[str] = field(default_factory=list)  # argument names that are fixtures found in the tests
    helpers: list[str] = field(default_factory=list)  # functions whose facts are folded in
    facts: Facts = field(default_factory=Facts)

    __test__ = False  # not a pytest class

    @property
    def id(self) -> str:
        return f"{self.file}::{self.cls + '::' if self.cls else ''}{self.name}"


def _call_name(node: ast.AST) -> str:
    if not isinstance(node, ast.Call):
        return ""
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _code(node: ast.AST) -> str:
    return ast.unparse(node)[:CODE_MAX]


def _number(node: ast.AST | None, consts: dict[str, object]) -> float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand, consts)
        return -inner if inner is not None else None
    value = (
        node.value if isinstance(node, ast.Constant) else consts.get(node.id) if isinstance(node, ast.Name) else None
    )
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class _Reader:
    """Facts of the functions of one module (its constants resolved); a function's facts by its node."""

    def __init__(self, f: TestFile, tree: ast.Module):
        self.file = f
        self.consts: dict[str, object] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    self.consts[node.targets[0].id] = ast.literal_eval(node.value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    continue
        self.requirements = tree_requirements(f.in_tests, f.lines, tree)
        self.local: dict[str, ast.AST] = {}  # names bound in the function being read

    def operand(self, node: ast.AST, local: bool = True) -> Operand:
        """A side of a comparison; a name bound in the function (`out = Path(p).read_text()`) is read as the
        value it was bound to."""
        if isinstance(node, ast.Call) and _call_name(node) == "approx" and node.args:
            node = node.args[0]
        if local and isinstance(node, ast.Name) and node.id in self.local:
            bound = self.operand(self.local[node.id], local=False)
            return Operand(bound.kind, _code(node), bound.value)
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            value = self.consts.get(node.id, ...) if isinstance(node, ast.Name) else ...
        if value is not ... and value is not None and not isinstance(value, bool):
            return Operand("literal", _code(node), str(value))
        calls = {_call_name(n) for n in ast.walk(node)}
        kind = "file" if calls & FILE_OPENERS or (calls & READ_CALLS and "open" in calls) else "computed"
        return Operand(kind, _code(node))

    def facts(self, fn: ast.AST) -> Facts:
        first, last = getattr(fn, "lineno", 0), getattr(fn, "end_lineno", 0) or 0
        out = Facts()
        self.local = {
            n.targets[0].id: n.value
            for n in ast.walk(fn)
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
        }
        for r in self.requirements:
            if not first <= r.line <= last:
                continue
            target = {"read": out.reads, "exec": out.runs, "preserve": out.unchanged, "state": out.unchanged}.get(
                r.role
            )
            if r.kind in ("path", "command") and target is not None and r.value not in target:
                target.append(r.value)
        for node in ast.walk(fn):
            self.node_facts(node, out)
        return out

    def node_facts(self, node: ast.AST, out: Facts) -> None:
        if isinstance(node, ast.Compare):
            self.compare(node, out)
        elif isinstance(node, ast.Call):
            self.call(node, out)

    def compare(self, node: ast.Compare, out: Facts) -> None:
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=False):
            symbol = ORDERED.get(type(op)) or EQUALITY.get(type(op), "?")
            pair = Comparison(node.lineno, symbol, self.operand(left), self.operand(right))
            approx = next((s for s in (right, left) if isinstance(s, ast.Call) and _call_name(s) == "approx"), None)
            if approx is not None:
                out.tolerances.append(self.closeness(approx, "approx"))
                pair.op = "approx"
            out.compares.append(pair)
            if symbol in ("<", "<=", ">", ">="):
                bound = _number(right, self.consts)
                bound = bound if bound is not None else _number(left, self.consts)
                if bound is not None:
                    out.tolerances.append(Tolerance(node.lineno, "bound", _code(node), bound))
            left = right

    def closeness(self, call: ast.Call, kind: str) -> Tolerance:
        names = CLOSE_CALLS.get(kind, ("rel", "abs"))
        given = [_number(k.value, self.consts) for k in call.keywords if k.arg in (*names, "places", "delta")]
        known = [v for v in given if v is not None]
        return Tolerance(call.lineno, CLOSE_KINDS.get(kind, kind), _code(call), max(known) if known else None)

    def call(self, node: ast.Call, out: Facts) -> None:
        name = _call_name(node)
        if name in ASSERT_PAIRS and len(node.args) >= 2:
            op = ASSERT_PAIRS[name]
            out.compares.append(Comparison(node.lineno, op, self.operand(node.args[0]), self.operand(node.args[1])))
            if op == "almost":
                out.tolerances.append(self.closeness(node, "almost"))
        elif name in CLOSE_CALLS and len(node.args) >= 2:
            out.compares.append(Comparison(node.lineno, name, self.operand(node.args[0]), self.operand(node.args[1])))
            out.tolerances.append(self.closeness(node, name))
        elif _runs_program(node, name) and _code(node) not in out.runs:
            out.runs.append(_code(node))


def _runs_program(node: ast.Call, name: str) -> bool:
    """`subprocess.run(...)`, `os.system(...)` and the like."""
    return (
        name in RUN_CALLS and isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", "") in RUN_MODULES
    )


def _decorated(fn: ast.AST, name: str) -> ast.AST | None:
    for d in getattr(fn, "decorator_list", []):
        target = d.func if isinstance(d, ast.Call) else d
        if (target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")) == name:
            return d
    return None


def _params(fn: ast.AST) -> int:
    """Parametrized cases: the product of each `parametrize`'s listed values (-1 when one is computed)."""
    total = 1
    for d in getattr(fn, "decorator_list", []):
        if not (isinstance(d, ast.Call) and _call_name(d) == "parametrize"):
            continue
        values = d.args[1] if len(d.args) > 1 else next((k.value for k in d.keywords if k.arg == "argvalues"), None)
        if not isinstance(values, (ast.List, ast.Tuple)):
            return -1
        total *= len(values.elts)
    return total


def _is_test_class(cls: ast.ClassDef) -> bool:
    bases = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in cls.bases}
    return cls.name.startswith("Test") or "TestCase" in bases


def _functions(tree: ast.Module) -> list[tuple[str | None, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(class name or None, function) of the module's functions and its classes' methods."""
    out: list[tuple[str | None, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((None, node))
        elif isinstance(node, ast.ClassDef):
            out += [(node.name, m) for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return out


@dataclass
class _Module:
    reader: _Reader
    functions: list[tuple[str | None, ast.FunctionDef | ast.AsyncFunctionDef]]
    test_classes: set[str]


def _called(fn: ast.AST) -> set[str]:
    """Names of the functions and `self.` methods a function calls."""
    out = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            out.add(n.func.id)
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and getattr(n.func.value, "id", "")
            in (
                "self",
                "cls",
            )
        ):
            out.add(n.func.attr)
    return out


class _Folder:
    """Folds helpers (same module, same class) and fixtures (same module or a conftest.py) into a test."""

    def __init__(self, modules: dict[str, _Module]):
        self.modules = modules
        self.fixtures: dict[str, tuple[_Module, ast.AST]] = {}
        for path in sorted(modules, key=lambda p: not p.endswith("conftest.py")):
            m = modules[path]
            for _cls, fn in m.functions:
                if _decorated(fn, "fixture") is not None:
                    self.fixtures.setdefault(fn.name, (m, fn))

    def case(self, path: str, cls: str | None, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> TestCase:
        m = self.modules[path]
        case = TestCase(file=path, name=fn.name, line=fn.lineno, cls=cls, params=_params(fn))
        case.facts = m.reader.facts(fn)
        seen = {id(fn)}
        todo = [(m, cls, fn)]
        while todo:
            mod, owner, current = todo.pop()
            for name in sorted(_called(current)):
                helper = next((f for c, f in mod.functions if f.name == name and c in (None, owner)), None)
                if helper is not None and id(helper) not in seen:
                    seen.add(id(helper))
                    case.helpers.append(name)
                    case.facts.merge(mod.reader.facts(helper))
                    todo.append((mod, owner, helper))
            for arg in [a.arg for a in current.args.args if a.arg not in ("self", "cls")]:
                fixture = self.fixtures.get(arg)
                if fixture is not None and id(fixture[1]) not in seen:
                    seen.add(id(fixture[1]))
                    case.fixtures.append(arg)
                    case.facts.merge(fixture[0].reader.facts(fixture[1]))
                    todo.append((fixture[0], None, fixture[1]))  # type: ignore[arg-type]
        return case


def read_cases(files: list[TestFile]) -> list[TestCase]:
    """Every test of the parsed Python files, in file and line order."""
    modules: dict[str, _Module] = {}
    for f in files:
        if f.tree is None:
            continue
        functions = _functions(f.tree)
        classes = {n.name for n in f.tree.body if isinstance(n, ast.ClassDef) and _is_test_class(n)}
        modules[f.in_tests] = _Module(_Reader(f, f.tree), functions, classes)
    folder = _Folder(modules)
    cases = []
    for path, m in modules.items():
        if path.rsplit("/", 1)[-1] == "conftest.py":
            continue
        for cls, fn in m.functions:
            if fn.name.startswith("test") and (cls is None or cls in m.test_classes):
                cases.append(folder.case(path, cls, fn))
    return cases
