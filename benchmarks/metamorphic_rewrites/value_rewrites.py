"""Rewrites that move a value without moving the check: a literal to a module constant, a literal to a one-case
loop, and `open(...)` to `pathlib`.

Each is a spelling a verifier author uses for the same check (issue 51, part 5): a rule that reads the literal
only where it is written next to `assert`, or a file read only through `open`, misses the same flaw written the
other way. Each applies to every Python file of the tests (a plain script too), since none depends on pytest.
"""

from __future__ import annotations

import libcst as cst

from .cst_tools import (
    add_import,
    comparison_operands,
    fresh,
    import_usable,
    is_literal,
    names_in,
    operand,
    with_operand,
)
from .scoped import Scoped


def replace_literals(test: cst.BaseExpression, replace) -> cst.BaseExpression:
    """`test` with each literal comparison operand `replace(literal)` returns a name for swapped in (first to last;
    `replace` returns None to keep one)."""
    if isinstance(test, cst.BooleanOperation):
        return test.with_changes(left=replace_literals(test.left, replace), right=replace_literals(test.right, replace))
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return test.with_changes(expression=replace_literals(test.expression, replace))
    if isinstance(test, cst.Comparison):
        for comp, index in list(comparison_operands(test)):
            value = operand(test, index)
            if comp is test and is_literal(value):
                name = replace(value)
                if name is not None:
                    test = with_operand(test, index, name)
        return test
    return test


def _constants_at(body: list) -> int:
    """The first place a module constant must precede: the first compound statement or module-level assert."""
    for k, stmt in enumerate(body):
        if isinstance(stmt, cst.BaseCompoundStatement):
            return k
        if any(isinstance(s, cst.Assert) for s in stmt.body):
            return k
    return len(body)


class HoistConstant(Scoped):
    """`assert f(x) == "v"` -> `EXPECTED_1 = "v"` at module level, `assert f(x) == EXPECTED_1`."""

    needs = ("assert",)

    def visit_Module(self, node: cst.Module) -> None:
        self.taken = names_in(node)
        self.constants: list[tuple[str, cst.BaseExpression, cst.CSTNode]] = []
        self.pending: list[tuple[str, cst.BaseExpression]] = []

    def leave_Assert(self, original: cst.Assert, updated: cst.Assert) -> cst.Assert:
        def hoist(value: cst.BaseExpression) -> cst.Name:
            name = fresh("EXPECTED", self.taken, numbered=True)
            self.pending.append((name, value))
            return cst.Name(name)

        return updated.with_changes(test=replace_literals(updated.test, hoist))

    def leave_SimpleStatementLine(self, original, updated):
        for name, value in self.pending:
            self.constants.append((name, value, original))
        self.pending = []
        return updated

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if not self.constants:
            return updated
        self.changed = True
        body = list(updated.body)
        at = _constants_at(body)
        lines = []
        for k, (name, value, owner) in enumerate(self.constants):
            stmt = cst.SimpleStatementLine(
                body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=value)],
                leading_lines=[cst.EmptyLine()] if k == 0 and at > 0 else [],
            )
            self.stand_in(owner, stmt)
            lines.append(stmt)
        return updated.with_changes(body=[*body[:at], *lines, *body[at:]])


class LoopOverCase(Scoped):
    """`assert f(x) == "v"` -> `for expected in ["v"]:` / `    assert f(x) == expected` (one case, run once)."""

    needs = ("assert",)

    def visit_Module(self, node: cst.Module) -> None:
        self.var = fresh("expected", names_in(node))
        self.holders: list[str] = []  # the enclosing def/class kinds: no loop in a class body

    def visit_FunctionDef(self, node) -> None:
        self.holders.append("def")

    def leave_FunctionDef(self, original, updated):
        self.holders.pop()
        return updated

    def visit_ClassDef(self, node) -> None:
        self.holders.append("class")

    def leave_ClassDef(self, original, updated):
        self.holders.pop()
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        if len(updated.body) != 1 or not isinstance(updated.body[0], cst.Assert) or self.holders[-1:] == ["class"]:
            return updated
        found: list[cst.BaseExpression] = []

        def first(value: cst.BaseExpression) -> cst.Name | None:
            if found:
                return None
            found.append(value)
            return cst.Name(self.var)

        test = replace_literals(updated.body[0].test, first)
        if not found:
            return updated
        self.changed = True
        inner = updated.with_changes(body=[updated.body[0].with_changes(test=test)], leading_lines=[])
        loop = cst.For(
            target=cst.Name(self.var),
            iter=cst.List([cst.Element(found[0])]),
            body=cst.IndentedBlock([inner]),
            leading_lines=updated.leading_lines,
        )
        self.carry(inner, original)
        self.stand_in(original, loop)
        return loop


MODES = {None: "read_text", "r": "read_text", "rb": "read_bytes"}
PATH_CALLS = ("Path", "str")


class ToPathlib(Scoped):
    """`open(p).read()` -> `Path(p).read_text()` (`"rb"`: read_bytes), `json.load(open(p))` ->
    `json.loads(Path(p).read_text())`, and `with open(p) as f: x = f.read()` -> `x = Path(p).read_text()`.

    Only where `open` is the builtin, the mode is r/rb and nothing else is passed, and the path is sure to be a
    path (a string, an f-string, os.path.join, Path, or a name only ever bound to one of those): `open` also
    takes a file descriptor, `Path` does not."""

    needs = ("open(",)

    def visit_Module(self, node: cst.Module) -> None:
        self.ok = import_usable(node, "Path", "pathlib")
        self.module = node
        self.assigned: dict[int, cst.BaseExpression] = {}  # a single-name assignment's target -> its value
        assigned = self.assigned

        class _Assigns(cst.CSTVisitor):
            def visit_Assign(self, a: cst.Assign) -> None:
                if len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name):
                    assigned[id(a.targets[0].target)] = a.value

        node.visit(_Assigns())

    # --- what may be rewritten -----------------------------------------------------------------------------
    def _pathlike(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        if depth > 3:
            return False
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
            return "b" not in _prefix(expr)
        if isinstance(expr, cst.FormattedString):
            return True
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
            return self._pathlike(expr.left, depth + 1)
        if isinstance(expr, cst.Call):
            code = self.module.code_for_node(expr.func)
            return code in ("os.path.join", "pathlib.Path") or (code in PATH_CALLS and isinstance(expr.func, cst.Name))
        if isinstance(expr, cst.Name):
            return self._name_pathlike(expr.value, depth)
        return False

    def _name_pathlike(self, value: str, depth: int) -> bool:
        binds = self.bindings(value)
        values = []
        for b in binds:
            if not isinstance(b.node, cst.Name):
                return False
            values.append(self.assigned.get(id(b.node)))
        return bool(values) and all(v is not None and self._pathlike(v, depth + 1) for v in values)

    def _open_call(self, call: cst.BaseExpression) -> tuple[cst.Arg, str] | None:
        """(path argument, Path reader) when `call` is `open(path)` or `open(path, "r"/"rb")`."""
        if not (isinstance(call, cst.Call) and self.is_builtin(call.func, "open")):
            return None
        args = call.args
        if not 1 <= len(args) <= 2 or any(a.keyword or a.star for a in args):
            return None
        mode = None
        if len(args) == 2:
            if not isinstance(args[1].value, cst.SimpleString):
                return None
            mode = args[1].value.evaluated_value
        if mode not in MODES or not self._pathlike(args[0].value):
            return None
        return args[0], MODES[mode]

    def _path_read(self, arg: cst.Arg, reader: str, like: cst.Call) -> cst.Call:
        path = like.with_changes(func=cst.Name("Path"), args=[arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        return cst.Call(func=cst.Attribute(value=path, attr=cst.Name(reader)))

    # --- the rewrites ---------------------------------------------------------------------------------------
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self.ok:
            return updated
        func = original.func
        if isinstance(func, cst.Attribute) and func.attr.value == "read" and not original.args:
            opened = self._open_call(func.value)
            if opened:
                self.changed = True
                return self._path_read(opened[0], opened[1], func.value).with_changes(
                    lpar=updated.lpar, rpar=updated.rpar
                )
        json_load = isinstance(func, cst.Attribute) and func.attr.value == "load"
        if json_load and self.is_module_import(func.value, "json") and _one_plain_arg(original):
            opened = self._open_call(original.args[0].value)
            if opened:
                self.changed = True
                read = self._path_read(opened[0], opened[1], original.args[0].value)
                return updated.with_changes(
                    func=updated.func.with_changes(attr=cst.Name("loads")), args=[cst.Arg(read)]
                )
        return updated

    def leave_With(self, original: cst.With, updated: cst.With) -> cst.BaseStatement:
        if not self.ok or len(original.items) != 1 or not isinstance(original.body, cst.IndentedBlock):
            return updated
        item = original.items[0]
        opened = self._open_call(item.item)
        if opened is None or item.asname is None or not isinstance(item.asname.name, cst.Name):
            return updated
        if len(original.body.body) != 1:
            return updated
        line = original.body.body[0]
        if (
            not isinstance(line, cst.SimpleStatementLine)
            or len(line.body) != 1
            or not isinstance(line.body[0], cst.Assign)
        ):
            return updated
        value = self._read_of(line.body[0].value, item.asname.name.value)
        if value is None or not self._only_use(item.asname.name):
            return updated
        path_read = self._path_read(opened[0], opened[1], item.item)
        new_value = (
            path_read
            if value == "read"
            else cst.Call(func=line.body[0].value.func.with_changes(attr=cst.Name("loads")), args=[cst.Arg(path_read)])
        )
        self.changed = True
        new = cst.SimpleStatementLine(
            body=[line.body[0].with_changes(value=new_value)], leading_lines=updated.leading_lines
        )
        self.carry(new, original)
        self.carry(new, line)
        return new

    def _read_of(self, value: cst.BaseExpression, handle: str) -> str | None:
        """ "read" for `handle.read()`, "json" for `json.load(handle)`; None otherwise."""
        if isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute):
            f = value.func
            if f.attr.value == "read" and isinstance(f.value, cst.Name) and f.value.value == handle:
                return "read"
        load = isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "load"
        if load and self.is_module_import(value.func.value, "json") and _one_plain_arg(value):
            arg = value.args[0].value
            if isinstance(arg, cst.Name) and arg.value == handle:
                return "json"
        return None

    def _only_use(self, handle: cst.Name) -> bool:
        """The `as` name is bound once in its scope and read once (by the one read the rewrite removes)."""
        mine = [b for b in self.bindings(handle.value) if b.node is handle]
        if len(mine) != 1:
            return False
        same_scope = [b for b in self.bindings(handle.value) if b.scope is mine[0].scope]
        return len(same_scope) == 1 and len(mine[0].references) == 1

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if not self.changed:
            return updated
        return updated.with_changes(body=add_import(list(updated.body), original, "Path", "pathlib"))


def _one_plain_arg(call: cst.Call) -> bool:
    return len(call.args) == 1 and not call.args[0].keyword and not call.args[0].star


def _prefix(s: cst.BaseExpression) -> str:
    if isinstance(s, cst.ConcatenatedString):
        return _prefix(s.left) + _prefix(s.right)
    return s.prefix.lower() if isinstance(s, cst.SimpleString) else ""
