"""The libcst plumbing every Python rewrite shares: where each original statement went (the line map), fresh
names, imports, and what counts as a literal.

Why a tracking transformer: a finding is compared "at the corresponding line", so a rewrite must say where every
statement it kept, moved or rebuilt now starts. libcst keeps an unchanged node as the same object in the new
tree, and `on_leave` sees every rebuilt node next to its original; a rewrite that moves a node by hand says so
with `carry`. The map is then read off the positions of both trees, never guessed from a text diff.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

STATEMENTS = (cst.SimpleStatementLine, cst.BaseCompoundStatement)
# line in the original file -> the lines of the rewrite where that statement (first) and what stands for it
# (a helper's call, a hoisted constant, a loop's header) now are
LineMap = dict[int, tuple[int, ...]]


@dataclass
class FileRewrite:
    """One rewritten file: its new text and where each original statement's lines went."""

    text: str
    line_map: LineMap = field(default_factory=dict)


class Tracking(cst.CSTTransformer):
    """A transformer that remembers, for every statement node it built, which original statements it stands
    for (`origin`), and which other new statements also stand for an original one (`also`)."""

    def __init__(self) -> None:
        super().__init__()
        self.origin: dict[int, list[cst.CSTNode]] = {}
        self.also: dict[int, list[cst.CSTNode]] = {}
        self._alive: list[cst.CSTNode] = []  # keeps the ids of new nodes unique while the maps hold them
        self._placed: set[int] = set()  # new nodes a rewrite placed by hand (on_leave must not re-carry them)

    def on_leave(self, original_node, updated_node):
        result = super().on_leave(original_node, updated_node)
        placed = id(result) in self.origin or id(result) in self._placed
        if isinstance(original_node, STATEMENTS) and isinstance(result, cst.CSTNode) and not placed:
            self.carry(result, original_node)
        return result

    def originals(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        return self.origin.get(id(node), [node])

    def carry(self, new: cst.CSTNode, old: cst.CSTNode) -> cst.CSTNode:
        """`new` stands where `old` stood (old may itself be a rebuilt node: its originals pass on)."""
        if new is not old:
            self.origin.setdefault(id(new), []).extend(self.originals(old))
            self._alive.append(new)
        return new

    def stand_in(self, old: cst.CSTNode, extra: cst.CSTNode) -> None:
        """`extra` (a call, a constant, a loop header) is another place where `old`'s check now shows."""
        for orig in self.originals(old):
            self.also.setdefault(id(orig), []).append(extra)
        self._alive.append(extra)
        self._placed.add(id(extra))


def positions(module: cst.Module):
    return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


def _spans(pos) -> dict[int, tuple[cst.CSTNode, int, int]]:
    return {id(n): (n, p.start.line, p.end.line) for n, p in pos.items() if isinstance(n, STATEMENTS)}


def line_map(old_pos, new_module: cst.Module, tracker: Tracking) -> LineMap:
    """Every original statement's lines -> where the statement now starts (a simple statement of the same
    height keeps its inner offsets), then the lines of its stand-ins."""
    old, new_pos = _spans(old_pos), positions(new_module)
    starts: dict[int, int] = {}
    out: LineMap = {}
    for node, p in new_pos.items():
        if not isinstance(node, STATEMENTS):
            continue
        starts[id(node)] = p.start.line
        for orig in tracker.originals(node):
            if id(orig) not in old or old[id(orig)][0] is not orig:
                continue
            _, a, b = old[id(orig)]
            same_height = (b - a) == (p.end.line - p.start.line)
            lines = range(a, b + 1) if isinstance(orig, cst.SimpleStatementLine) else range(a, a + 1)
            for k, line in enumerate(lines):
                out.setdefault(line, (p.start.line + k if same_height else p.start.line,))
    for orig_id, extras in tracker.also.items():
        if orig_id in old:
            line = old[orig_id][1]
            more = tuple(starts[id(e)] for e in extras if id(e) in starts)
            out[line] = out.get(line, ()) + more
    return out


def compiles(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def names_in(node: cst.CSTNode) -> set[str]:
    """Every identifier spelled anywhere under `node` (a superset of the bound names: a fresh name avoids all).
    A fresh copy each call: callers add the names they take."""
    return set(_names_in(node))


@functools.lru_cache(maxsize=256)  # nodes hash by identity; a module is shared by every rewrite of its file
def _names_in(node: cst.CSTNode) -> frozenset[str]:
    found: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

    node.visit(_Names())
    return frozenset(found)


def fresh(base: str, taken: set[str], numbered: bool = False) -> str:
    """`base` (or base_2, base_3...) not in `taken`; with `numbered`, base_1 first. The name is added to taken."""
    k = 1
    name = f"{base}_1" if numbered else base
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def _literal_string(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.SimpleString):
        return True
    if isinstance(node, cst.ConcatenatedString):
        return _literal_string(node.left) and _literal_string(node.right)
    return False


def is_literal(node: cst.BaseExpression) -> bool:
    """A value written out in full: a string (no f-string), a number, or a list/tuple/set/dict of them."""
    if _literal_string(node) or isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        return all(isinstance(e, cst.Element) and is_literal(e.value) for e in node.elements)
    if isinstance(node, cst.Dict):
        return all(isinstance(e, cst.DictElement) and is_literal(e.key) and is_literal(e.value) for e in node.elements)
    return False


IDENTITY = (cst.Is, cst.IsNot)


def comparison_operands(test: cst.BaseExpression) -> Iterable[tuple[cst.Comparison, int]]:
    """The operands of the comparisons an assert's test is made of (through and/or/not), as (comparison, index):
    index 0 is the left side, k the k-th comparator. Identity comparisons are left out (a literal's identity is
    an implementation detail)."""
    if isinstance(test, cst.BooleanOperation):
        yield from comparison_operands(test.left)
        yield from comparison_operands(test.right)
    elif isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        yield from comparison_operands(test.expression)
    elif isinstance(test, cst.Comparison) and not any(isinstance(c.operator, IDENTITY) for c in test.comparisons):
        yield test, 0
        for k in range(len(test.comparisons)):
            yield test, k + 1


def operand(comp: cst.Comparison, index: int) -> cst.BaseExpression:
    return comp.left if index == 0 else comp.comparisons[index - 1].comparator


def with_operand(comp: cst.Comparison, index: int, value: cst.BaseExpression) -> cst.Comparison:
    if index == 0:
        return comp.with_changes(left=value)
    parts = list(comp.comparisons)
    parts[index - 1] = parts[index - 1].with_changes(comparator=value)
    return comp.with_changes(comparisons=parts)


def _imports(module: cst.Module) -> list[cst.BaseSmallStatement]:
    return [s for line in module.body if isinstance(line, cst.SimpleStatementLine) for s in line.body]


def _plain_alias(names, name: str) -> bool:
    return any(a.asname is None and isinstance(a.name, cst.Name) and a.name.value == name for a in names)


def has_import(module: cst.Module, name: str, source: str | None = None) -> bool:
    """`import name` (source None) or `from source import name`, unaliased, at the module's top level."""
    for stmt in _imports(module):
        if source is None and isinstance(stmt, cst.Import) and _plain_alias(stmt.names, name):
            return True
        if source is None or not isinstance(stmt, cst.ImportFrom) or isinstance(stmt.names, cst.ImportStar):
            continue
        mod = stmt.module
        if isinstance(mod, cst.Name) and mod.value == source and not stmt.relative and _plain_alias(stmt.names, name):
            return True
    return False


def _header_end(body: list) -> int:
    """Where a new import may go: after the docstring and the `from __future__` imports."""
    k = 0
    first = body[0].body[0] if body and isinstance(body[0], cst.SimpleStatementLine) else None
    if isinstance(first, cst.Expr) and isinstance(first.value, (cst.SimpleString, cst.ConcatenatedString)):
        k = 1
    while k < len(body) and isinstance(body[k], cst.SimpleStatementLine):
        stmt = body[k].body[0]
        if not (isinstance(stmt, cst.ImportFrom) and isinstance(stmt.module, cst.Name)):
            break
        if stmt.module.value != "__future__":
            break
        k += 1
    return k


def import_usable(module: cst.Module, name: str, source: str | None = None) -> bool:
    """The name can be had: imported already, or spelled nowhere (so an added import shadows nothing)."""
    return has_import(module, name, source) or name not in names_in(module)


def add_import(body: list, module: cst.Module, name: str, source: str | None = None) -> list:
    """`body` with `import name` / `from source import name` added when the module lacks it."""
    if has_import(module, name, source):
        return body
    stmt = f"import {name}\n" if source is None else f"from {source} import {name}\n"
    k = _header_end(body)
    return [*body[:k], cst.parse_statement(stmt), *body[k:]]
