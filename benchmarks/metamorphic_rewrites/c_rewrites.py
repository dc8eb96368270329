"""The compiled-language rewrites of a C test file that test.sh builds and runs.

c-assert: `if (COND) { report; return 1; }` -> `assert(!(COND));`.
c-extract-helper: each such `if` of `main` moved into a `static void _check_N(…)` above main and called where it
stood, the locals it reads passed to it (`return N;` there is `exit(N);`).
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


def _main(root: ts.Node) -> ts.Node | None:
    body = _main_body(root)
    return body.parent if body is not None else None


def _locals(main: ts.Node, data: bytes) -> tuple[dict[str, tuple[int, str]], set[str]]:
    """main's parameters and single-declarator locals: name -> (where declared, the parameter that declares it
    in a helper: `const char *got`, `char buf[64]`); and the names this cannot pass on (several per statement,
    `static`)."""
    found: dict[str, tuple[int, str]] = {}
    unusable: set[str] = set()
    decl = ts.field(main, "declarator")
    params = ts.field(decl, "parameters") if decl is not None else None
    for p in ts.named(params) if params is not None else []:
        ids = [n for n in ts.walk(p) if n.type == "identifier"]
        if ids:
            found[ts.text(ids[-1])] = (-1, ts.text(p))
    body = ts.field(main, "body")
    for d in ts.named(body) if body is not None else []:
        if d.type != "declaration":
            continue
        declarators = d.children_by_field_name("declarator")
        inner = [ts.field(x, "declarator") if x.type == "init_declarator" else x for x in declarators]
        names = [next((n for n in ts.walk(x) if n.type == "identifier"), None) for x in inner if x is not None]
        if len(inner) != 1 or inner[0] is None or names[0] is None or ts.text(d).startswith("static"):
            unusable |= {ts.text(n) for n in names if n is not None}
            continue
        found[ts.text(names[0])] = (d.start_byte, data[d.start_byte : inner[0].end_byte].decode())
    return found, unusable


def _helper_lines(node: ts.Node, data: bytes, name: str, params: list[str]) -> list[str]:
    """`static void NAME(PARAMS) {`, the `if` on its own lines with each `return N;` as `exit(N);`, `}`."""
    start = data.rfind(b"\n", 0, node.start_byte) + 1
    end = data.find(b"\n", node.end_byte)
    end = len(data) if end < 0 else end
    chunk = data[start:end]
    for r in sorted((n for n in ts.walk(node) if n.type == "return_statement"), key=lambda n: -n.start_byte):
        value = ts.text(ts.named(r)[0]) if ts.named(r) else "1"
        chunk = chunk[: r.start_byte - start] + f"exit({value});".encode() + chunk[r.end_byte - start :]
    return [f"static void {name}({', '.join(params) or 'void'}) {{", *chunk.decode().split("\n"), "}", ""]


def rewrite_c_helper(text: str) -> FileRewrite | None:
    """Each swappable `if` of main moved into a `static void _check_N(…)` above main, called where it stood, the
    locals it reads passed as parameters and its `return N;` as `exit(N);`; None when nothing is moved."""
    if "_check_" in text:
        return None
    data = text.encode()
    root = ts.parse(data, "c")
    main = _main(root) if ts.first_error(root) is None else None
    body = ts.field(main, "body") if main is not None else None
    # `sizeof buf` of an array passed to a helper would be a pointer's size there: such an `if` stays in main
    ifs = [n for n in ts.named(body) if _swappable(n)] if body is not None else []
    swaps = [n for n in ifs if not any(x.type == "sizeof_expression" for x in ts.walk(n))]
    if not swaps or main is None:
        return None
    found, unusable = _locals(main, data)
    lines = text.split("\n")
    top = [] if "<stdlib.h>" in text else ["#include <stdlib.h>"]
    at = main.start_point[0]
    helpers: list[str] = []
    calls: dict[int, tuple[int, int, str]] = {}  # the if's first line -> (its last line, helper's if line, call)
    for k, node in enumerate(swaps, 1):
        used = list(dict.fromkeys(ts.text(n) for n in ts.walk(node) if n.type == "identifier"))
        if any(u in unusable for u in used) or lines[node.start_point[0]][: node.start_point[1]].strip():
            return None
        args = [u for u in used if u in found and found[u][0] < node.start_byte]
        name = f"_check_{k}"
        helper = _helper_lines(node, data, name, [found[a][1] for a in args])
        first = len(top) + at + len(helpers) + 2  # 1-based line of the if inside the helper
        helpers += helper
        indent = lines[node.start_point[0]][: node.start_point[1]]
        calls[node.start_point[0]] = (node.end_point[0], first, f"{indent}{name}({', '.join(args)});")
    out = top + lines[:at] + helpers
    line_map: dict[int, tuple[int, ...]] = {i + 1: (len(top) + i + 1,) for i in range(at)}
    i = at
    while i < len(lines):
        if i in calls:
            last, first, call = calls[i]
            out.append(call)
            line_map.update({j + 1: (first + j - i, len(out)) for j in range(i, last + 1)})
            i = last + 1
            continue
        out.append(lines[i])
        line_map[i + 1] = (len(out),)
        i += 1
    return FileRewrite("\n".join(out), line_map)
