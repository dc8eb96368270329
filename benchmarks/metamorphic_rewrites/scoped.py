"""What a Python rewrite needs to know about names before it moves code: which names an expression reads from
its function's locals, what a name is bound to, and whether a function is a plain pytest test.

Every rewrite that moves a statement out of its function (a helper, a fixture) must pass the locals it reads,
and every rewrite that binds a new name must not shadow one; libcst's ScopeProvider answers both, so no rewrite
guesses scope from spelling.
"""

from __future__ import annotations

import functools

import libcst as cst
from libcst.metadata import BuiltinScope, GlobalScope, MetadataWrapper, PositionProvider, ScopeProvider

from .cst_tools import FileRewrite, Tracking, compiles, line_map


class RewriteBroke(RuntimeError):
    """A rewrite produced text that does not compile: a bug of the rewriter, never a finding of the linter."""


class Scoped(Tracking):
    """A tracking transformer with scope answers over the original tree (metadata keys are original nodes)."""

    METADATA_DEPENDENCIES = (ScopeProvider,)
    tests_only = False  # True: only test files pytest collects (test_*.py, *_test.py)
    needs: tuple[str, ...] = ()  # text every file it could change holds (all of them): a cheap skip before parsing

    @classmethod
    def might_apply(cls, text: str) -> bool:
        return all(n in text for n in cls.needs)

    def __init__(self) -> None:
        super().__init__()
        self.changed = False
        self._accesses: dict[int, object] | None = None

    def scope(self, node: cst.CSTNode):
        return self.get_metadata(ScopeProvider, node, None)

    def _access_index(self) -> dict[int, object]:
        if self._accesses is None:
            scopes = {s for s in self.metadata[ScopeProvider].values() if s is not None}
            self._accesses = {id(a.node): a for s in scopes for a in s.accesses}
        return self._accesses

    def reads(self, node: cst.CSTNode) -> list[tuple[cst.Name, object]]:
        """The (name node, access) of every name read under `node`, in source order."""
        found: list[cst.Name] = []

        class _Names(cst.CSTVisitor):
            def visit_Name(self, n: cst.Name) -> None:
                found.append(n)

        node.visit(_Names())
        index = self._access_index()
        return [(n, index[id(n)]) for n in found if id(n) in index]

    def local_reads(self, node: cst.CSTNode, fn_scope) -> list[str]:
        """The names `node` reads that are locals (or parameters) of the function whose scope is `fn_scope`."""
        out: list[str] = []
        for name, access in self.reads(node):
            if any(r.scope is fn_scope for r in access.referents) and name.value not in out:
                out.append(name.value)
        return out

    def only_outer_reads(self, node: cst.CSTNode, fn_scope, allowed: set[str]) -> bool:
        """`node` reads no local of `fn_scope` except the `allowed` ones."""
        return all(n in allowed for n in self.local_reads(node, fn_scope))

    def is_builtin(self, name: cst.BaseExpression, value: str) -> bool:
        if not (isinstance(name, cst.Name) and name.value == value):
            return False
        access = self._access_index().get(id(name))
        return (
            access is not None
            and bool(access.referents)
            and all(isinstance(r.scope, BuiltinScope) for r in access.referents)
        )

    def is_module_import(self, name: cst.BaseExpression, value: str) -> bool:
        """`name` reads the module-level `import value`."""
        if not (isinstance(name, cst.Name) and name.value == value):
            return False
        access = self._access_index().get(id(name))
        return (
            access is not None
            and len(access.referents) == 1
            and all(isinstance(r.scope, GlobalScope) and isinstance(r.node, cst.Import) for r in access.referents)
        )

    def bindings(self, value: str) -> list:
        """Every binding of the spelling `value` in any non-builtin scope of the module."""
        scopes = {s for s in self.metadata[ScopeProvider].values() if s is not None and not isinstance(s, BuiltinScope)}
        return [a for s in scopes for a in s.assignments if a.name == value]


def plain_function(fn: cst.FunctionDef) -> bool:
    """No await, yield, global or nonlocal anywhere inside: moving its statements keeps their meaning."""
    bad = (cst.Await, cst.Yield, cst.Global, cst.Nonlocal, cst.NamedExpr)
    hits: list[cst.CSTNode] = []

    class _Bad(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, bad):
                hits.append(node)
            return not hits

    fn.visit(_Bad())
    return not hits and fn.asynchronous is None


def is_test(stmt: cst.CSTNode) -> bool:
    """A module-level function pytest collects (named test*), synchronous and plain."""
    return isinstance(stmt, cst.FunctionDef) and stmt.name.value.startswith("test") and plain_function(stmt)


def no_params(fn: cst.FunctionDef) -> bool:
    p = fn.params
    return not (p.params or p.posonly_params or p.kwonly_params or p.star_kwarg) and not isinstance(
        p.star_arg, cst.Param
    )


def pytest_marks_only(fn: cst.FunctionDef) -> bool:
    """Every decorator is `pytest.mark.*` (a mark keeps the signature pytest reads; a wrapper may not)."""

    def is_mark(d: cst.BaseExpression) -> bool:
        target = d.func if isinstance(d, cst.Call) else d
        code = cst.Module(body=[]).code_for_node(target)
        return code.startswith("pytest.mark.")

    return all(is_mark(d.decorator) for d in fn.decorators)


@functools.lru_cache(maxsize=64)
def _wrapped(text: str) -> MetadataWrapper | None:
    """One parse and one metadata resolution per file text, shared by every rewrite (a wrapper caches what it
    resolved, and no rewrite changes the original tree: libcst nodes are immutable)."""
    if not compiles(text):
        return None
    return MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)


def run_python(rewrite: type[Scoped], text: str) -> FileRewrite | None:
    """Apply one rewrite to one file's text; None when the file does not parse or nothing applies."""
    if not rewrite.might_apply(text):
        return None
    wrapper = _wrapped(text)
    if wrapper is None:
        return None
    old_pos = wrapper.resolve(PositionProvider)
    transformer = rewrite()
    new = wrapper.visit(transformer)
    if not transformer.changed or new.code == text:
        return None
    if not compiles(new.code):
        raise RewriteBroke(f"{rewrite.__name__} produced invalid Python:\n{new.code}")
    return FileRewrite(new.code, line_map(old_pos, new, transformer))
