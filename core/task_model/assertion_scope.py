"""Where a Python test's names come from, for the assertion reader (core/task_model/assertion_python.py).

A check's value is seldom written where the check is: `assert out.stdout == expected` names a local bound to a
`subprocess.run(...)`, a parameter filled by `parametrize`, a fixture from conftest.py, a module constant, or a
helper imported from a file beside the tests. `Expander` rewrites an expression into one tree where each such
name is replaced by what it stands for (a copy; the held trees are never changed) and records each step as a
`Hop` with its file:line, so the record can cite every line the value passed through. A name that stands for
several values (a parametrize argument, a loop over literal cases) becomes a marker `Name` that carries them
(`_values`); a name nothing binds stays a plain `Name`. Everything is read from the trees the test model holds.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from typing import TypeVar

from envqa.core.defaults import ASSERTION_COPY_BUDGET as COPY_BUDGET
from envqa.core.defaults import ASSERTION_MAX_DEPTH as MAX_DEPTH
from envqa.core.defaults import ASSERTION_MAX_EXPANSIONS as MAX_EXPANSIONS
from envqa.core.defaults import ASSERTION_MAX_NODES as MAX_NODES
from envqa.core.defaults import TEST_MODEL_CODE_CHARS as CODE_MAX
from envqa.core.task_model.assertions import Hop
from envqa.core.task_model.cases import _decorated, _functions
from envqa.core.task_model.files import TestFile

Function = ast.FunctionDef | ast.AsyncFunctionDef
Body = Function | ast.Module  # a plain script's module level is read as its body
SCOPES = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp, ast.Lambda)


@dataclass
class PyModule:
    """One Python file of the tests: its module constants, functions, classes and imports."""

    file: TestFile
    consts: dict[str, ast.Assign | ast.AnnAssign] = field(default_factory=dict)
    functions: dict[str, Function] = field(default_factory=dict)
    methods: dict[tuple[str, str], Function] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    imports: dict[str, tuple[str, str, int]] = field(default_factory=dict)  # local name -> (module, name, line)

    @property
    def import_name(self) -> str:
        """How a test imports it: tests/lib/grade.py is `lib.grade` (and `grade` when sys.path holds lib)."""
        return self.file.in_tests.removeprefix("tests/").removesuffix(".py").replace("/", ".")

    def hop(self, kind: str, node: ast.AST, name: str = "") -> Hop:
        line = getattr(node, "lineno", 1)
        return Hop(kind=kind, file=self.file.rel, line=line, name=name, code=self.file.line(line)[:CODE_MAX])


def index_module(f: TestFile, tree: ast.Module) -> PyModule:
    m = PyModule(file=f)
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for t in targets:
            if isinstance(t, ast.Name) and getattr(node, "value", None) is not None:
                m.consts[t.id] = node  # type: ignore[assignment]
        if isinstance(node, ast.ClassDef):
            m.classes[node.name] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            m.imports.update(_imports(node))
    for cls, fn in _functions(tree):
        if cls is None:
            m.functions[fn.name] = fn
        else:
            m.methods[(cls, fn.name)] = fn
    return m


def _imports(node: ast.Import | ast.ImportFrom) -> dict[str, tuple[str, str, int]]:
    if isinstance(node, ast.Import):
        return {
            (a.asname or a.name.split(".")[0]): (a.name if a.asname else a.name.split(".")[0], "", node.lineno)
            for a in node.names
        }
    module = node.module or ""
    return {(a.asname or a.name): (module, a.name, node.lineno) for a in node.names}


def is_agent_module(module: str, local: dict[str, PyModule]) -> bool:
    """A module neither the standard library, a test library, nor a file of the tests: the agent's code."""
    top = module.split(".")[0]
    libs = {"pytest", "numpy", "np", "pandas", "scipy", "requests", "httpx", "PIL", "cv2", "yaml", "toml", "unittest"}
    return bool(top) and top not in sys.stdlib_module_names and top not in libs and module not in local


@dataclass
class Frame:
    """Where an expression is read: a module, the function holding it (None at module level), its class, the
    values its parameters were given, and the line (a local's latest binding before it is the one that counts)."""

    module: PyModule
    fn: Body | None = None
    cls: str | None = None
    bound: dict[str, ast.AST] = field(default_factory=dict)
    line: int = 10**9
    hops: list[Hop] = field(default_factory=list)  # the hops that gave `bound` its values


def marker(name: str, values: list[ast.AST] | None = None, source: ast.AST | None = None, module: str = "") -> ast.Name:
    """A name standing for several values (`_values`), an element of a collection (`_iter`), or an import
    from the agent's code (`_module`)."""
    node = ast.Name(id=name, ctx=ast.Load())
    node._values = values  # type: ignore[attr-defined]
    node._iter = source  # type: ignore[attr-defined]
    node._module = module  # type: ignore[attr-defined]
    return node


def _local_bindings(fn: ast.AST) -> list[tuple[int, str, ast.AST, str]]:
    """(line, name, value, how) of each name a function binds: `x = ...`, `a, b = ...`, `for x in ...`, `with
    ... as x`, `import`; how: "assign", "loop", "with", "import" (nested functions and classes excluded)."""
    out: list[tuple[int, str, ast.AST, str]] = []
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, *SCOPES)):
            continue
        if isinstance(n, ast.Assign):
            for t in n.targets:
                out += _targets(t, n.value, n.lineno, "assign")
        elif isinstance(n, (ast.AnnAssign, ast.NamedExpr)) and n.value is not None:
            out += _targets(n.target, n.value, n.lineno, "assign")
        elif isinstance(n, (ast.For, ast.AsyncFor)):
            out += _targets(n.target, n.iter, n.lineno, "loop")
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            out += [
                b
                for it in n.items
                if it.optional_vars is not None
                for b in _targets(it.optional_vars, it.context_expr, n.lineno, "with")
            ]
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out += [
                (n.lineno, name, marker(name, module=f"{mod}.{attr}".strip(".")), "import")
                for name, (mod, attr, _l) in _imports(n).items()
            ]
        todo += list(ast.iter_child_nodes(n))
    return sorted(out, key=lambda b: b[0])


def _targets(target: ast.AST, value: ast.AST, line: int, how: str) -> list[tuple[int, str, ast.AST, str]]:
    if isinstance(target, ast.Name):
        return [(line, target.id, value, how)]
    if isinstance(target, (ast.Tuple, ast.List)):
        if how == "assign" and isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            return [b for t, v in zip(target.elts, value.elts, strict=True) for b in _targets(t, v, line, how)]
        parts = []
        for i, t in enumerate(target.elts):
            part = ast.Subscript(value=value, slice=ast.Constant(i), ctx=ast.Load()) if how != "loop" else value  # type: ignore[arg-type]
            parts += _targets(t, ast.copy_location(part, value), line, how if how != "loop" else f"loop-part:{i}")
        return parts
    return []


_T = TypeVar("_T")


def _copy(node: _T) -> _T:
    """A copy of an expression tree: its fields copied, the readers' own marks on a node (`_hops`, `_values`,
    positions) shared. `copy.deepcopy` also followed every mark into whatever it held, and one test file took
    minutes."""
    if isinstance(node, ast.AST):
        new = node.__class__()
        for key, value in node.__dict__.items():
            setattr(new, key, _copy(value) if key in node._fields else value)
        return new
    if isinstance(node, list):
        return [_copy(x) for x in node]  # type: ignore[return-value]
    return node


class Expander:
    """Expands expressions of the tests' modules (see the module docstring); fixtures looked up in the test's
    own file first, then in any conftest.py."""

    def __init__(self, modules: dict[str, PyModule]):
        self.modules = modules  # by import name
        self.by_file = {m.file.rel: m for m in modules.values()}
        self._locals: dict[int, list[tuple[int, str, ast.AST, str]]] = {}
        self._sizes: dict[int, tuple[ast.AST, int]] = {}
        self.steps = 0  # resolutions taken for the current top-level value (MAX_EXPANSIONS)
        self.copied = 0  # nodes copied by every expansion so far (COPY_BUDGET)

    def size(self, node: ast.AST) -> int:
        """How many nodes a held tree has (counted once; a node built during expansion is counted each time)."""
        held = self._sizes.get(id(node))
        if held is None or held[0] is not node:  # the node is kept with its count, so its id is never reused
            held = self._sizes[id(node)] = (node, sum(1 for _ in ast.walk(node)))
        return held[1]

    def locals_of(self, fn: ast.AST) -> list[tuple[int, str, ast.AST, str]]:
        if id(fn) not in self._locals:
            self._locals[id(fn)] = _local_bindings(fn)
        return self._locals[id(fn)]

    def module_named(self, name: str) -> PyModule | None:
        return self.modules.get(name) or next(
            (m for k, m in self.modules.items() if k.rsplit(".", 1)[-1] == name), None
        )

    def fixture(self, name: str, near: PyModule) -> tuple[PyModule, Function] | None:
        mods = [near] + sorted(
            (m for m in self.modules.values() if m.file.name == "conftest.py"), key=lambda m: m.file.rel
        )
        for m in mods:
            fn = m.functions.get(name)
            if fn is not None and _decorated(fn, "fixture") is not None:
                return m, fn
        return None

    def function(self, func: ast.AST, frame: Frame) -> tuple[PyModule, Function, str | None] | None:
        """The tests' own function a call names: same module, `self.`/class method, or a local import."""
        m = frame.module
        if isinstance(func, ast.Name):
            if func.id in m.functions:
                return m, m.functions[func.id], None
            imp = m.imports.get(func.id)
            if imp and imp[1]:
                other = self.module_named(imp[0])
                if other is not None and imp[1] in other.functions:
                    return other, other.functions[imp[1]], None
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner = func.value.id
            if owner in ("self", "cls") and frame.cls and (frame.cls, func.attr) in m.methods:
                return m, m.methods[(frame.cls, func.attr)], frame.cls
            if (owner, func.attr) in m.methods:
                return m, m.methods[(owner, func.attr)], owner
            imp = m.imports.get(owner)
            other = self.module_named(imp[0]) if imp and not imp[1] else None
            if other is not None and func.attr in other.functions:
                return other, other.functions[func.attr], None
        return None

    def expand(self, node: ast.AST, frame: Frame, hops: list[Hop], depth: int = 0) -> ast.AST:
        """A copy of `node` with each name replaced by what it stands for; `hops` gets each step."""
        self.steps = 0 if depth == 0 else self.steps + 1
        size = self.size(node)
        self.copied += size
        if depth > MAX_DEPTH or self.steps > MAX_EXPANSIONS or size > MAX_NODES or self.copied > COPY_BUDGET:
            return node  # a table too large to carry (a 200 KB literal) is left as written, never copied
        out = _Rewriter(self, frame, hops, depth).visit(_copy(node))
        return out if sum(1 for _ in ast.walk(out)) <= MAX_NODES else node


class _Rewriter(ast.NodeTransformer):
    def __init__(self, ex: Expander, frame: Frame, hops: list[Hop], depth: int):
        self.ex, self.frame, self.hops, self.depth = ex, frame, hops, depth
        self.shadow: list[set[str]] = []

    def _sub(self, node: ast.AST, frame: Frame) -> ast.AST:
        return self.ex.expand(node, frame, self.hops, self.depth + 1)

    def _scoped(self, node: ast.AST) -> ast.AST:
        names = {n.id for g in getattr(node, "generators", []) for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        if isinstance(node, ast.Lambda):
            names = {a.arg for a in node.args.args}
        self.shadow.append(names)
        self.generic_visit(node)
        self.shadow.pop()
        return node

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_Lambda = _scoped

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if not isinstance(node.ctx, ast.Load) or any(node.id in s for s in self.shadow) or hasattr(node, "_values"):
            return node
        return self.resolve(node.id, node)

    def resolve(self, name: str, node: ast.AST) -> ast.AST:
        f = self.frame
        if name in f.bound:
            value = f.bound[name]
            self.hops += getattr(value, "_hops", [])
            self.ex.copied += self.ex.size(value)
            if self.ex.copied > COPY_BUDGET or self.ex.size(value) > MAX_NODES:
                return marker(name)  # past the budget the argument stands for itself
            return _copy(value)
        if f.fn is not None:
            found = self._local(name, f)
            if found is not None:
                return found
            args = getattr(f.fn, "args", None)
            if args is not None and name in {a.arg for a in args.args + args.kwonlyargs}:
                return self._parameter(name, f)
        return self._module_name(name, f.module, node)

    def _local(self, name: str, f: Frame) -> ast.AST | None:
        binds = [b for b in self.ex.locals_of(f.fn) if b[1] == name]  # type: ignore[arg-type]
        if not binds:
            return None
        before = [b for b in binds if b[0] < f.line or (b[3].startswith("loop") and b[0] <= f.line)]
        line, _n, value, how = (before or binds)[-1]
        if self.ex.size(value) > MAX_NODES:
            return marker(name)  # too large to carry: the name stands for itself
        if how == "import":
            return _copy(value)
        at = Frame(f.module, f.fn, f.cls, f.bound, line)
        self.hops.append(f.module.hop("loop" if how.startswith("loop") else "assign", value, name))
        expanded = self._sub(value, at)
        if how.startswith("loop"):
            return _element(name, expanded, int(how.split(":")[1]) if ":" in how else None)
        return self._fed(name, value, expanded, f) if how == "assign" else expanded

    def _fed(self, name: str, value: ast.AST, expanded: ast.AST, f: Frame) -> ast.AST:
        """A local built empty and filled afterwards (`rows = {}` then `rows[k] = v` in a loop over a file,
        `parser = ConfigParser()` then `parser.read_string(text)`): it stands for what fills it."""
        if not (
            isinstance(value, (ast.List, ast.Dict, ast.Set))
            and not getattr(value, "elts", getattr(value, "keys", None))
        ) and not (isinstance(value, ast.Call) and not value.args and not value.keywords):
            return expanded
        feeds = _feeds(f.fn, name)  # type: ignore[arg-type]
        if not feeds:
            return expanded
        parts = [self._sub(v, Frame(f.module, f.fn, f.cls, f.bound, line)) for line, v in feeds[:8]]
        return marker(name, source=ast.Tuple(elts=[expanded, *parts], ctx=ast.Load()))  # type: ignore[list-item]

    def _parameter(self, name: str, f: Frame) -> ast.AST:
        found = self.ex.fixture(name, f.module)
        if found is None:
            return marker(name)
        m, fn = found
        self.hops.append(m.hop("fixture", fn, name))
        value = _returned(fn)
        return self._sub(value, Frame(m, fn, None, {}, value.lineno)) if value is not None else marker(name)  # type: ignore[attr-defined]

    def _module_name(self, name: str, m: PyModule, node: ast.AST) -> ast.AST:
        if name in m.consts:
            stmt = m.consts[name]
            if self.ex.size(stmt) > MAX_NODES:
                return node
            self.hops.append(m.hop("constant", stmt, name))
            return self._sub(stmt.value, Frame(m))  # type: ignore[arg-type]
        imp = m.imports.get(name)
        if imp is None:
            return node
        other = self.ex.module_named(imp[0])
        if other is not None and imp[1] in other.consts:
            self.hops.append(m.hop("import", ast.Module(body=[], lineno=imp[2]), name))  # type: ignore[call-arg]
            return self._module_name(imp[1], other, node)
        if other is None and is_agent_module(imp[0], self.ex.modules):
            return marker(name, module=f"{imp[0]}.{imp[1]}".strip("."))
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        v = node.value
        if isinstance(v, ast.Name) and isinstance(node.ctx, ast.Load):
            m = self.frame.module
            cls = self.frame.cls if v.id in ("self", "cls") else v.id if v.id in m.classes else None
            value = _class_attr(m, cls, node.attr) if cls else None
            if value is not None:
                self.hops.append(m.hop("constant", value, f"{cls}.{node.attr}"))
                return self._sub(value, Frame(m, None, cls))
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        found = self.ex.function(node.func, self.frame)
        if found is None:
            return node
        m, fn, cls = found
        value = _returned(fn)
        if value is None:
            return node
        self.hops.append(m.hop("helper", fn, fn.name))
        return self._sub(value, Frame(m, fn, cls, bind_call(fn, node, cls is not None), value.lineno))  # type: ignore[attr-defined]


MUTATORS = {"append", "extend", "add", "update", "insert", "read_string", "read", "read_file", "setdefault", "write"}


def _feeds(fn: ast.AST, name: str) -> list[tuple[int, ast.AST]]:
    """(line, value) of what fills a local after it is bound: `name.append(v)`, `name[k] = v`, `name += v`."""
    out: list[tuple[int, ast.AST]] = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and getattr(n.func.value, "id", "") == name:
            out += [(n.lineno, a) for a in n.args] if n.func.attr in MUTATORS else []
        elif (
            isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Subscript) and getattr(t.value, "id", "") == name for t in n.targets)
        ) or (isinstance(n, ast.AugAssign) and getattr(n.target, "id", "") == name):
            out.append((n.lineno, n.value))
    return out


def _element(name: str, iterable: ast.AST, part: int | None) -> ast.AST:
    """A loop variable: the literal cases it takes (a list or tuple of literal elements; with `for a, b in`,
    the part of each case), else an element of the collection it runs over."""
    items = iterable
    if (
        isinstance(items, ast.Call)
        and isinstance(items.func, ast.Attribute)
        and items.func.attr in ("items", "keys", "values")
        and isinstance(items.func.value, ast.Dict)
    ):
        d = items.func.value
        pick = {"keys": d.keys, "values": d.values}.get(items.func.attr)
        if pick is not None and part is None:
            return marker(name, values=list(pick), source=iterable)  # type: ignore[call-overload]
        if items.func.attr == "items" and part in (0, 1):
            return marker(name, values=list(d.keys if part == 0 else d.values), source=iterable)  # type: ignore[arg-type]
    if isinstance(items, (ast.List, ast.Tuple, ast.Set)) and items.elts:
        if part is None:
            return marker(name, values=list(items.elts), source=iterable)
        if all(isinstance(e, (ast.Tuple, ast.List)) and len(e.elts) > part for e in items.elts):
            return marker(name, values=[e.elts[part] for e in items.elts], source=iterable)  # type: ignore[attr-defined]
    if isinstance(items, ast.Dict) and items.keys and part is None and all(k is not None for k in items.keys):
        return marker(name, values=list(items.keys), source=iterable)  # type: ignore[arg-type]
    return marker(name, source=iterable)


def _class_attr(m: PyModule, cls: str, attr: str) -> ast.AST | None:
    """`X = ...` in the class body, or `self.X = ...` / `cls.X = ...` in one of its methods (setUp, setUpClass)."""
    c = m.classes.get(cls)
    if c is None:
        return None
    for node in c.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in node.targets):
            return node.value
    for (owner, _name), fn in m.methods.items():
        if owner != cls:
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr == attr and getattr(t.value, "id", "") in ("self", "cls")
                for t in n.targets
            ):
                return n.value
    return None


def _returned(fn: Function) -> ast.AST | None:
    """What a function gives back: its first `return` (or a fixture's `yield`) with a value."""
    for n in ast.walk(fn):
        if isinstance(n, (ast.Return, ast.Yield)) and n.value is not None:
            return n.value
    return None


def bind_call(fn: Function, call: ast.Call, method: bool) -> dict[str, ast.AST]:
    """The callee's parameters bound to the call's (already expanded) arguments; `*args` to a tuple of the
    rest, defaults where nothing is passed."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if method and params:
        params = params[1:]
    bound: dict[str, ast.AST] = {}
    defaults = fn.args.defaults
    for name, default in zip(params[len(params) - len(defaults) :], defaults, strict=True):
        bound[name] = default
    for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True):
        if d is not None:
            bound[a.arg] = d
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    for name, arg in zip(params, positional, strict=False):
        bound[name] = arg
    if fn.args.vararg is not None:
        bound[fn.args.vararg.arg] = ast.Tuple(elts=positional[len(params) :], ctx=ast.Load())
    for k in call.keywords:
        if k.arg:
            bound[k.arg] = k.value
    return bound
