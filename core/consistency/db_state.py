"""Databases whose contents a test pins: it opens one (`sqlite3.connect(PATH)`, `duckdb.connect(PATH)`), and a
value drawn from that connection is compared with a fixed value (a literal, or a module constant bound to one).

Why this shape and not a wording: a test that asserts a database still holds its rows (`len(rows) == 5`,
`rows == SEEDED`) makes the database's state a requirement, just as hashing a file does; an agent is told about
it only if the instruction names the database. A test that draws its *expected* value from the database and
compares the agent's output with it (`assert report_total == db_total`) pins nothing: neither side is fixed.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

DB_MODULES = {"sqlite3", "duckdb"}


def _connect_path(node: ast.AST, value: Callable[[ast.AST], str | None]) -> str | None:
    """`sqlite3.connect(PATH)` (or wrapped, as in `closing(sqlite3.connect(PATH))`): PATH when it is constant."""
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and sub.func.attr == "connect"
            and isinstance(sub.func.value, ast.Name)
            and sub.func.value.id in DB_MODULES
            and sub.args
        ):
            path = value(sub.args[0])
            if path and path.startswith("/"):
                return path
    return None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _targets(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _fixed(node: ast.AST, constants: set[str]) -> bool:
    """A literal (`5`, `[("a", 1)]`), or a name the module binds to one."""
    if isinstance(node, ast.Name):
        return node.id in constants
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def module_constants(tree: ast.Module) -> set[str]:
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and _fixed(node.value, set()):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _bound_to_connections(fn: ast.AST, value: Callable[[ast.AST], str | None]) -> dict[str, str]:
    """Names in `fn` that hold a connection or something drawn from one (a cursor, rows, a count): name -> path.
    Assignments are followed in line order, so `rows = cur.fetchall()` after `cur = conn.cursor()` counts."""
    bound: dict[str, str] = {}
    steps: list[tuple[int, ast.AST, set[str]]] = []
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = (
                set().union(*(_targets(t) for t in node.targets))
                if isinstance(node, ast.Assign)
                else _targets(node.target)
            )
            steps.append((node.lineno, node.value, targets))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            steps.append((getattr(node.context_expr, "lineno", 0), node.context_expr, _targets(node.optional_vars)))
    for _line, source, targets in sorted(steps, key=lambda s: s[0]):
        path = _connect_path(source, value) or next((bound[n] for n in _names(source) if n in bound), None)
        if path:
            bound.update(dict.fromkeys(targets, path))
    return bound


def pinned_databases(
    fn: ast.AST, value: Callable[[ast.AST], str | None], constants: set[str]
) -> list[tuple[str, ast.Compare]]:
    """(database path, the comparison that pins it) for each database whose contents `fn` compares with a fixed
    value; at most one per database."""
    bound = _bound_to_connections(fn, value)
    if not bound:  # no database opened here (most test functions): no second walk
        return []
    out: dict[str, ast.Compare] = {}
    for node in ast.walk(fn):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for side in sides:
            drawn = next((bound[n] for n in _names(side) if n in bound), None) or _connect_path(side, value)
            others = [s for s in sides if s is not side]
            if drawn and drawn not in out and any(_fixed(o, constants) for o in others):
                out[drawn] = node
    return list(out.items())
