"""The compiled-language rewrites of a C test file that test.sh builds and runs.

c-assert: `if (COND) { report; return 1; }` -> `assert(!(COND));`.
c-hoist-constant: each string literal in the condition of such an `if` (or an `assert`) of `main` -> a file-level
`static const char *EXPECTED_N = "…";` below the includes (the same bytes: the check compares the same text).

About c-assert:

A C checker that test.sh builds and runs fails either way: the `if` returns a non-zero status from `main` (or
calls `exit(1)`), `assert` aborts (status 134). What changes is only the message printed on the way out, so the
swap keeps the verdict wherever the status is all test.sh reads. It is made only where that is certain:

- the `if` has no `else`, sits directly in `main`'s body, and its branch does nothing but print (`fprintf`,
  `printf`, `puts`, `perror`) and then fail (`return N` with N a non-zero literal, `exit(N)`, `abort()`);
- the file never mentions NDEBUG (which compiles `assert` away) and defines no `assert` of its own.

`#include <assert.h>` is added above the first line when the file lacks it, so every later line moves down one.
Read through the tree-sitter adapter the linter uses (envqa/core/parsers/tree_sitter.py).
"""

from __future__ import annotations

from envqa.core.parsers import tree_sitter as ts

from .cst_tools import FileRewrite

PRINTS = {"fprintf", "printf", "puts", "perror", "fputs"}
INCLUDE = "#include <assert.h>"


def _call_name(node: ts.Node) -> str:
    return ts.text(ts.field(node, "function")) if node.type == "call_expression" else ""


def _fails(stmt: ts.Node) -> bool:
    """`return 1;`, `return EXIT_FAILURE;`, `exit(2);`, `abort();`."""
    if stmt.type == "return_statement":
        value = ts.named(stmt)
        word = ts.text(value[0]) if value else ""
        return word == "EXIT_FAILURE" or (word.isdigit() and word != "0")
    if stmt.type == "expression_statement" and ts.named(stmt):
        call = ts.named(stmt)[0]
        args = ts.named(ts.field(call, "arguments")) if call.type == "call_expression" else []
        first = ts.text(args[0]) if args else ""
        name = _call_name(call)
        return name == "abort" or (name == "exit" and first not in ("0", "EXIT_SUCCESS", ""))
    return False


def _prints(stmt: ts.Node) -> bool:
    call = ts.named(stmt)[0] if stmt.type == "expression_statement" and ts.named(stmt) else None
    return call is not None and _call_name(call) in PRINTS


def _swappable(node: ts.Node) -> bool:
    """An `if` of main's body whose branch only prints, then fails (see the module docstring)."""
    if node.type != "if_statement" or ts.field(node, "alternative") is not None:
        return False
    body, cond = ts.field(node, "consequence"), ts.field(node, "condition")
    if body is None or cond is None or ts.first_error(cond) is not None:
        return False
    stmts = ts.named(body) if body.type == "compound_statement" else [body]
    return bool(stmts) and _fails(stmts[-1]) and all(_prints(s) for s in stmts[:-1])


def _main_body(root: ts.Node) -> ts.Node | None:
    for fn in ts.named(root):
        decl = ts.field(fn, "declarator") if fn.type == "function_definition" else None
        while decl is not None and decl.type == "pointer_declarator":
            decl = ts.field(decl, "declarator")
        name = ts.field(decl, "declarator") if decl is not None and decl.type == "function_declarator" else None
        if name is not None and ts.text(name) == "main":
            return ts.field(fn, "body")
    return None


def rewrite_c(text: str) -> FileRewrite | None:
    """The file with every swappable `if` of main written as an `assert`; None when nothing changes."""
    if "NDEBUG" in text or "define assert" in text:
        return None
    data = text.encode()
    root = ts.parse(data, "c")
    body = _main_body(root) if ts.first_error(root) is None else None
    swaps = [n for n in ts.named(body) if _swappable(n)] if body is not None else []
    if not swaps:
        return None
    lines = text.split("\n")
    add = 0 if any(line.strip().startswith("#include <assert.h>") for line in lines) else 1
    out = [INCLUDE] if add else []
    line_map: dict[int, tuple[int, ...]] = {}
    k = 0
    for node in swaps:
        first, last = node.start_point[0], node.end_point[0]
        for i in range(k, first):
            line_map[i + 1] = (len(out) + 1,)
            out.append(lines[i])
        indent = lines[first][: node.start_point[1]]
        if indent.strip():  # the `if` shares its first line with other code: leave the file as it is
            return None
        cond = ts.text(ts.field(node, "condition"))
        after = lines[last][node.end_point[1] :]
        line_map.update({i + 1: (len(out) + 1,) for i in range(first, last + 1)})
        out.append(f"{indent}assert(!{cond});{after}")
        k = last + 1
    for i in range(k, len(lines)):
        line_map[i + 1] = (len(out) + 1,)
        out.append(lines[i])
    return FileRewrite("\n".join(out), line_map)


def _checks_of_main(root: ts.Node) -> list[ts.Node]:
    """The conditions of main's checks: each swappable `if`'s, and each `assert(…)` statement's argument."""
    body = _main_body(root)
    out = []
    for n in ts.named(body) if body is not None else []:
        if _swappable(n):
            out.append(ts.field(n, "condition"))
        elif n.type == "expression_statement" and ts.named(n) and _call_name(ts.named(n)[0]) == "assert":
            out.append(ts.named(n)[0])
    return out


def rewrite_c_hoist(text: str) -> FileRewrite | None:
    """The file with the string literals of main's checks hoisted to constants; None when there are none."""
    if "EXPECTED_" in text:
        return None
    data = text.encode()
    root = ts.parse(data, "c")
    if ts.first_error(root) is not None:
        return None
    literals = [n for c in _checks_of_main(root) for n in ts.walk(c) if n.type == "string_literal"]
    includes = [n for n in ts.named(root) if n.type == "preproc_include"]
    if not literals or not includes or any("\n" in ts.text(n) for n in literals):
        return None
    for k, n in sorted(enumerate(literals, 1), key=lambda kn: kn[1].start_byte, reverse=True):
        data = data[: n.start_byte] + f"EXPECTED_{k}".encode() + data[n.end_byte :]
    lines = data.decode().split("\n")
    at = includes[-1].end_point[0] + (0 if includes[-1].end_point[1] == 0 else 1)  # the line after the includes
    consts = [f"static const char *EXPECTED_{k} = {ts.text(n)};" for k, n in enumerate(literals, 1)]
    out = lines[:at] + consts + lines[at:]
    shift = len(consts)
    line_map: dict[int, tuple[int, ...]] = {i + 1: (i + 1 + (shift if i >= at else 0),) for i in range(len(lines))}
    for k, n in enumerate(literals, 1):
        line = ts.line(n)
        line_map[line] = (*line_map[line], at + k)  # the check, and where its literal now is
    return FileRewrite("\n".join(out), line_map)
