"""What an operand of a compiled-language check stands for (core/task_model/assertion_compiled.py): a literal, the
content of a file the test reads, a program's stdout or exit code, or a value it computes.

Over the syntax trees of core/parsers/tree_sitter.py, in any of its languages: a name is resolved through the
file's declarations (`const char *want = "42";`, `got := string(out)`, `let s = fs::read_to_string(p)`), each a
"constant" hop; a call of a helper defined in the same file is read through its body (a "helper" hop), its
parameters bound to the call's arguments; a read or a run is named by the call that makes it (`fopen`,
`std::ifstream`, `fs.readFileSync`, `os.ReadFile`, `std::fs::read_to_string`, `Files.readString`; `system`,
`popen`, `execSync`, `spawnSync`, `exec.Command`, `std::process::Command`, `ProcessBuilder`).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from envqa.core.defaults import TEST_MODEL_CODE_CHARS
from envqa.core.parsers import tree_sitter as ts
from envqa.core.task_model.assertions import Expected, Hop, Observed

READS = {"fopen", "open", "ifstream", "fstream", "readFileSync", "readFile", "ReadFile", "Open", "read_to_string"}
READS |= {"readString", "readAllLines", "readAllBytes", "lines", "newBufferedReader", "FileReader", "File", "read"}
READS |= {"createReadStream", "ReadDir", "readdirSync", "existsSync", "Stat", "exists", "statSync", "access"}
LISTS = {"ReadDir", "readdirSync", "read_dir", "list", "listFiles"}
EXISTS = {"existsSync", "exists", "Stat", "statSync", "access", "isFile", "is_file", "isDirectory"}
RUNS = {"system", "popen", "execSync", "execFileSync", "spawnSync", "exec", "execFile", "spawn", "Command"}
RUNS |= {"ProcessBuilder", "output", "CommandContext", "_popen", "posix_spawn", "execvp", "execl"}
WRITES = {"snprintf", "sprintf", "strcpy", "strncpy", "strcat", "strncat", "memcpy", "sprintf_s", "strcpy_s"}
READ_TYPES = re.compile(r"\b(i?f?stream|ifstream|fstream|FILE)\b")
STATUS_TEXT = re.compile(r"\b(status|code|returncode|exitCode|ExitCode|WEXITSTATUS|success|waitFor|exitValue)\b")
PASS_THROUGH = {"to_string", "String", "from", "string", "into", "to_owned", "str", "c_str", "toString", "trim"}
DECLARATORS = {
    "init_declarator": ("declarator", "value"),
    "variable_declarator": ("name", "value"),
    "let_declaration": ("pattern", "value"),
    "const_item": ("name", "value"),
    "static_item": ("name", "value"),
    "preproc_def": ("name", "value"),
    "const_spec": ("name", "value"),
    "var_spec": ("name", "value"),
    "short_var_declaration": ("left", "right"),
    "assignment_expression": ("left", "right"),
    "assignment_statement": ("left", "right"),
}
ELEMENT_WRITES = {"subscript_expression", "index_expression", "pointer_expression", "subscript"}
FUNCTIONS = {"function_definition", "function_declaration", "function_item", "method_declaration"}
FUNCTIONS |= {"arrow_function", "function_expression", "method_definition", "func_literal", "function"}


@dataclass
class Side:
    observed: Observed | None = None
    literal: str | None = None
    hops: list[Hop] = field(default_factory=list)

    def expected(self) -> Expected:
        if self.literal is not None:
            return Expected(kind="literal", value=self.literal)
        if self.observed is not None and self.observed.kind in ("image_file", "output_file") and self.reference:
            return Expected(kind="file", path=self.observed.path)
        if self.observed is not None:
            return Expected(kind="computed", inputs=[self.observed.path or " ".join(self.observed.command)])
        return Expected(kind="unknown")

    @property
    def reference(self) -> bool:
        path = self.observed.path if self.observed is not None else None
        return bool(path) and re.search(r"(^/tests/|expect|golden|reference|want|answer)", path or "", re.I) is not None


def callee(node: ts.Node) -> str:
    """The last name of what a call calls (`assert.strictEqual` -> strictEqual, `std::fs::read_to_string` ->
    read_to_string, `new ProcessBuilder(…)` -> ProcessBuilder, `assert_eq!` -> assert_eq)."""
    if node.type == "method_invocation":
        return ts.text(ts.field(node, "name"))
    fn = ts.field(node, "function") or ts.field(node, "constructor") or ts.field(node, "macro")
    if fn is None and node.type == "object_creation_expression":
        fn = ts.field(node, "type")
    parts = [re.sub(r"<.*$", "", p).strip() for p in re.split(r"::|\.|->", ts.text(fn))] if fn is not None else [""]
    return parts[-2] if parts[-1] == "new" and len(parts) > 1 else parts[-1]


def arguments(node: ts.Node) -> list[ts.Node]:
    args = ts.field(node, "arguments")
    return ts.named(args) if args is not None else []


CALLS = {"call_expression", "method_invocation", "new_expression", "object_creation_expression", "macro_invocation"}


def hop(kind: str, rel: str, node: ts.Node, lines: list[str], name: str = "") -> Hop:
    n = ts.line(node)
    code = lines[n - 1].strip()[:TEST_MODEL_CODE_CHARS] if 0 < n <= len(lines) else ""
    return Hop(kind=kind, file=rel, line=n, name=name, code=code)


class Operands:
    """One file's declarations and functions, and what its expressions stand for."""

    def __init__(self, root: ts.Node, rel: str, lines: list[str]):
        self.rel, self.lines = rel, lines
        self.decls: dict[str, list[tuple[int, ts.Node, ts.Node]]] = {}  # name -> (line, declaration, value)
        self.functions: dict[str, ts.Node] = {}
        self.addressed: list[tuple[str, int]] = []  # C's `&x` given to a call (`fscanf(f, "%d", &x)`): x's byte
        for n in ts.walk(root):
            if n.type in DECLARATORS:
                self._declare(n)
            elif n.type == "pointer_expression" and ts.text(n).startswith("&"):
                self.addressed.append((ts.text(n)[1:].strip(), n.start_byte))
            elif n.type == "declaration" and n.parent is not None and n.parent.type == "compound_statement":
                self._vexing(n)
            elif n.type in FUNCTIONS:
                name = ts.field(n, "name") or ts.field(n, "declarator")
                while name is not None and name.type in ("function_declarator", "pointer_declarator"):
                    name = ts.field(name, "declarator")
                if name is not None:
                    self.functions.setdefault(ts.text(name), n)

    def _declare(self, n: ts.Node) -> None:
        left_field, value_field = DECLARATORS[n.type]
        left, value = ts.field(n, left_field), ts.field(n, value_field)
        if left is None or left.type in ELEMENT_WRITES:  # `got[i] = 0` writes an element, not `got`
            return
        names = [c for c in ts.walk(left) if c.type in ("identifier", "field_identifier")]
        names = names if left.type == "expression_list" else names[:1]  # `out, err :=` binds both
        if n.type == "short_var_declaration" and value is not None:
            values = ts.named(value)
            value = values[0] if values else None
        for name in names:
            self.decls.setdefault(ts.text(name), []).append((ts.line(n), n, value))

    def _vexing(self, n: ts.Node) -> None:
        """C++'s `std::ifstream in(path);` inside a body, which the grammar reads as a function declaration: a
        variable whose value is its argument list."""
        decl = ts.field(n, "declarator")
        if decl is not None and decl.type == "function_declarator":
            name, params = ts.field(decl, "declarator"), ts.field(decl, "parameters")
            if name is not None and name.type == "identifier":
                self.decls.setdefault(ts.text(name), []).append((ts.line(n), n, params))

    def lookup(self, name: str, line: int) -> tuple[ts.Node, ts.Node | None] | None:
        before = [(d, v) for n, d, v in self.decls.get(name, []) if n <= line]
        return before[-1] if before else None

    def _overwritten(self, n: ts.Node, decl: ts.Node) -> bool:
        """`int x = 0; fscanf(f, "%d", &x);`: the start value is written over through `&x` before `n` reads it."""
        return any(t == ts.text(n) and decl.end_byte <= at < n.start_byte for t, at in self.addressed)

    def side(self, node: ts.Node | None, bound: dict[str, ts.Node] | None = None, depth: int = 0) -> Side:
        """What `node` stands for (see the module docstring); `bound`: a helper's parameters."""
        if node is None or depth > 6:
            return Side(observed=Observed(kind="unknown"))
        lit = self.literal(node)
        if lit is not None:
            return Side(literal=lit)
        if node.type == "identifier" and bound and ts.text(node) in bound:
            return self.side(bound[ts.text(node)], None, depth + 1)
        if node.type == "identifier":
            got = self.name(node, bound, depth, False)
            if got is not None and (got.literal is not None or _observed(got)):
                return got
        found = self.source(node, bound, depth)
        if found is not None:
            return found
        text = ts.text(node)[:TEST_MODEL_CODE_CHARS]
        return self.filled(node) or Side(observed=Observed(kind="value", detail=text))

    def filled(self, node: ts.Node) -> Side | None:
        """A buffer with no value of its own (`char buf[64]; fgets(buf, 64, p);`): the last call before it in its
        function that writes it (a read from a stream, a `snprintf` into it), else the last read or run there."""
        fn, block = node.parent, None
        while fn is not None and fn.type not in FUNCTIONS:
            block = fn if fn.type == "compound_statement" else block
            fn = fn.parent
        fn = fn or block  # Catch2's `TEST_CASE("…") { … }` is a bare block at file level, in no function
        if fn is None or not any(n.type == "identifier" for n in ts.walk(node)):
            return None
        last = into = None
        for n in ts.walk(fn):
            if n.type in CALLS and n.start_byte < node.start_byte:
                writes = self._stream_into(n, node) or self._written_into(n, node)
                into = writes if writes is not None and _observed(writes) else into
                got = self.call(n, None, 5, False) if writes is None else None
                last = got if got is not None and _observed(got) else last
        last = into or last
        if last is not None:
            last.observed = last.observed.model_copy(update={"detail": f"read into {ts.text(node)[:40]}"})  # type: ignore[union-attr]
        return last

    def _stream_into(self, call: ts.Node, node: ts.Node) -> Side | None:
        """`std::getline(in, s)`: a call given both `node` and a stream variable declared as a read (the
        `std::ifstream in(path);` above it), so `node` holds what the stream read."""
        args = arguments(call)
        if not any(ts.text(a).lstrip("&") == ts.text(node) for a in args):
            return None
        for a in args:
            got = self.name(a, None, 5, False) if a.type == "identifier" and a is not node else None
            if got is not None and _observed(got):
                return got
        return None

    def _written_into(self, call: ts.Node, node: ts.Node) -> Side | None:
        """`snprintf(want, sizeof want, "users: %d\n", count_users(LOG))`: a call that writes `node` (its first
        argument) from the others, so `node` holds what they read or run (the first of them that does)."""
        args = arguments(call)
        if callee(call) not in WRITES or not args or ts.text(args[0]).lstrip("&") != ts.text(node):
            return None
        for a in args[1:]:
            got = self.source(a, None, 1)
            if got is not None and _observed(got):
                return got
        return None

    def literal(self, node: ts.Node) -> str | None:
        """A constant, through wrappers that keep it (`String::from("x")`, `"x".to_string()`, `std::string("x")`)."""
        value = ts.literal_value(node)
        if value is not None:
            return value
        if node.type == "regex":
            return ts.text(ts.field(node, "pattern")) or None
        if node.type in ("parenthesized_expression", "argument_list") and len(ts.named(node)) == 1:
            return self.literal(ts.named(node)[0])
        if node.type in CALLS and callee(node) in PASS_THROUGH:
            inner = list(arguments(node)) or [ts.field(node, "function")]
            receiver = ts.field(inner[0], "value") or ts.field(inner[0], "object") if inner[0] is not None else None
            for cand in [*inner, receiver]:
                if cand is not None and ts.literal_value(cand) is not None:
                    return ts.literal_value(cand)
        return None

    def source(self, node: ts.Node, bound: dict[str, ts.Node] | None, depth: int) -> Side | None:
        """The first read, run, helper or resolvable name inside `node`, in source order."""
        status = STATUS_TEXT.search(ts.text(node)) is not None
        for n in ts.walk(node):
            if n.type in CALLS:
                got = self.call(n, bound, depth, status)
                if got is not None:
                    return got
            elif n.type == "identifier" and not _callee_name(n):
                name = ts.text(n)
                got = self.side(bound[name], None, depth + 1) if bound and name in bound else None
                got = got or self.name(n, bound, depth, status)
                if got is not None and _observed(got):
                    return got
        return None

    def name(self, n: ts.Node, bound: dict[str, ts.Node] | None, depth: int, status: bool) -> Side | None:
        found = self.lookup(ts.text(n), ts.line(n))
        if found is None or found[0].start_byte == (n.parent.start_byte if n.parent else -1):
            return None
        decl, value = found
        at = hop("constant", self.rel, decl, self.lines, ts.text(n))
        typed = decl.parent if decl.type == "init_declarator" and decl.parent is not None else decl
        run = value is not None and value.type in CALLS and callee(value) in RUNS  # `FILE *p = popen(cmd, "r")`
        if READ_TYPES.search(ts.text(ts.field(typed, "type"))) and value is not None and not run:
            path = self.path(value, bound)
            return Side(observed=Observed(kind="output_file", path=path), hops=[at])
        if value is None or self._overwritten(n, decl):
            return None
        inner = self.side(value, bound, depth + 1)
        if inner.observed is not None and status and inner.observed.kind == "stdout":
            inner.observed = inner.observed.model_copy(update={"kind": "exit_code"})
        return Side(inner.observed, inner.literal, [at, *inner.hops])

    def call(self, n: ts.Node, bound: dict[str, ts.Node] | None, depth: int, status: bool) -> Side | None:
        name = callee(n)
        args = arguments(n)
        if name in RUNS:
            argv = self.argv(n, name, args, bound)
            if argv:
                kind = "exit_code" if status or name == "system" else "stdout"
                flags = [w for w in argv[1:] if w.startswith("-")]
                return Side(observed=Observed(kind=kind, command=argv, flags=flags))
        if name in READS and args:
            path = self.path(args[0], bound)
            if path is not None:
                kind = "listing" if name in LISTS else "existence" if name in EXISTS else "output_file"
                return Side(observed=Observed(kind=kind, path=path))
        helper = self.functions.get(name)
        if helper is not None and depth < 4 and not _inside(n, helper):
            binding = {ts.text(p): a for p, a in zip(param_names(helper), args, strict=False)} or None
            got = self.source(ts.field(helper, "body") or helper, binding, depth + 1)
            if got is not None:
                got.hops.insert(0, hop("helper", self.rel, helper, self.lines, name))
                return got
        return None

    def path(self, node: ts.Node, bound: dict[str, ts.Node] | None) -> str | None:
        """A path argument's value: a literal, a name bound to one, or the first string inside (`Path.of("/x")`)."""
        for n in ts.walk(node):
            value = ts.string_value(n)
            if value is not None:
                return value
            if n.type in ("identifier", "type_identifier"):
                if bound and ts.text(n) in bound:
                    return self.path(bound[ts.text(n)], None)
                found = self.lookup(ts.text(n), ts.line(n))
                if found is not None and found[1] is not None and found[1] is not node:
                    got = self.literal(found[1])
                    if got is not None:
                        return got
        return None

    def argv(self, n: ts.Node, name: str, args: list[ts.Node], bound: dict[str, ts.Node] | None) -> list[str]:
        """The command line a run call runs: a shell string split, an argv array, builder calls (`.arg("x")`)."""
        words: list[str] = []
        for i, a in enumerate(args):
            if a.type in ("array", "array_expression", "composite_literal", "array_creation_expression"):
                words += [v for v in (self.literal(e) for e in ts.walk(a) if e is not a) if v is not None]
                continue
            value = self.literal(a) or (self.path(a, bound) if a.type == "identifier" else None)
            if value is None:
                continue
            if i == 0 and name in ("system", "popen", "execSync", "exec", "_popen") and " " in value:
                try:
                    words += shlex.split(value)
                except ValueError:
                    words += value.split()
            elif not (name in ("popen", "_popen") and i == 1):
                words.append(value)
        parent = n.parent
        while parent is not None and parent.type in ("field_expression", "call_expression", "member_expression"):
            if parent.type == "call_expression" and callee(parent) in ("arg", "args"):
                words += [v for v in (self.literal(e) for a in arguments(parent) for e in ts.walk(a)) if v is not None]
            parent = parent.parent
        return words


def _callee_name(n: ts.Node) -> bool:
    """Whether an identifier is the name a call calls (`f` in `f(x)`), not a value it is given or called on."""
    p = n.parent
    if p is None or p.type not in CALLS:
        return False
    fn = ts.field(p, "function") or ts.field(p, "name") or ts.field(p, "macro") or ts.field(p, "constructor")
    return fn is not None and fn.start_byte == n.start_byte and fn.end_byte == n.end_byte


def _observed(side: Side) -> bool:
    return side.observed is not None and side.observed.kind not in ("value", "unknown")


def _inside(node: ts.Node, ancestor: ts.Node) -> bool:
    return ancestor.start_byte <= node.start_byte and node.end_byte <= ancestor.end_byte


def param_names(fn: ts.Node) -> list[ts.Node]:
    """A function's parameter names in order (the identifier of each parameter node)."""
    params = ts.field(fn, "parameters")
    decl = ts.field(fn, "declarator") if params is None else None
    while decl is not None and decl.type in ("pointer_declarator", "reference_declarator"):  # `char *f(…)`
        decl = ts.field(decl, "declarator") or (ts.named(decl)[-1] if ts.named(decl) else None)
    if decl is not None:
        params = ts.field(decl, "parameters")
    out: list[ts.Node] = []
    for p in ts.named(params) if params is not None else []:
        ids = [c for c in ts.walk(p) if c.type == "identifier"]
        if ids:
            out.append(ids[-1] if p.type in ("parameter_declaration", "formal_parameter") else ids[0])
    return out
