"""The verifier's checks, read from its files: what each compares the output against (literals, something
computed, only a file's existence) and whether the agent's program is run on an input.

pytest modules are read with `ast`, test.sh with the bash parser (core/parsers/shell.py). Shapes read:
`assert out == "42"`, `assert out.strip() in {"a", "b"}`, `assert "42" in out`, `self.assertEqual(x, "42")`,
`if out != "42": pytest.fail()`, `assert Path(p).exists()`; in shell `[ "$(cat /app/out)" = 42 ]`,
`[[ $x == 42 ]]`, `grep -qx '42' /app/out`, `test -f /app/x`. A check the reader cannot classify (a computed
expectation, a regex, a tolerance on a computed metric, `diff` against a file) counts as "computed", so the
rules built on this (probes/static/verifier_shape_rules.py) stay quiet: we would rather miss than cry wolf.

A facet of the test model (core/task_model/tests_reader.py): it reads the files and trees the model holds,
never the disk.
"""

from __future__ import annotations

import ast
import re
import shlex
import sys
from dataclasses import dataclass, field

from envqa.core.parsers.shell import FILE_TESTS, Command, parse_script
from envqa.core.task_model.files import TestFile

RUNNERS = {"python", "python3", "bash", "sh", "node", "ruby", "perl", "timeout", "env", "uv", "run"}
SUBPROCESS = {"run", "check_output", "call", "check_call", "Popen", "getoutput", "getstatusoutput", "system", "popen"}
EXISTS = {"exists", "is_file", "isfile", "is_dir", "isdir", "access", "lexists", "is_symlink", "islink"}
LISTING = {"listdir", "glob", "iglob", "iterdir", "rglob", "scandir"}
STATUS = {"returncode", "status", "exit_code", "status_code", "st_size", "st_mode"}
SHAPE_CALLS = {"len", "type", "isinstance", "bool", "hasattr", "callable"}
FAILS = {"fail", "exit", "_exit"}
GENERIC = {
    "data",
    "input",
    "output",
    "test",
    "tests",
    "file",
    "files",
    "app",
    "txt",
    "csv",
    "json",
    "log",
    "out",
    "result",
    "results",
    "answer",
    "expected",
    "main",
    "the",
    "and",
    "true",
    "false",
    "none",
    "yes",
    "no",
    "ok",
    "pass",
    "fail",
    "error",
    "py",
    "sh",
    "md",
    "bin",
    "lib",
    "src",
    "tmp",
    "png",
    "jpg",
    "dat",
}


@dataclass
class Shape:
    """What one verifier's checks compare against."""

    literals: dict[str, str] = field(default_factory=dict)  # literal -> evidence of its first check
    computed: list[str] = field(default_factory=list)  # evidence of checks against something computed
    exists: list[str] = field(default_factory=list)  # evidence of name/existence checks
    program_input: list[str] = field(default_factory=list)  # evidence: the agent's program run on an input
    program_runs: list[str] = field(default_factory=list)  # evidence: the agent's program run (any)


def _lit(node: ast.AST, consts: dict[str, list[str]]) -> list[str] | None:
    """The literal values a node stands for (a constant, a container of constants, a name bound to one)."""
    if isinstance(node, ast.Constant) and node.value is not None and not isinstance(node.value, bool):
        return [str(node.value)]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        try:
            return [repr(ast.literal_eval(node))]
        except ValueError:
            return None
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
        return _lit(node.func.value, consts)  # "42\n".strip()
    if isinstance(node, ast.Call) and _call_name(node) == "approx" and node.args:
        return _lit(node.args[0], consts)
    return None


def _members(node: ast.AST, consts: dict[str, list[str]]) -> list[str] | None:
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        vals = [_lit(e, consts) for e in node.elts]
        return None if any(v is None for v in vals) else [x for v in vals for x in v or []]
    return _lit(node, consts)


def _loop_cases(loop: ast.For) -> dict[str, list[str]]:
    """The names a loop over literal cases binds, each to the literals it takes: `for expected in ["a", "b"]`
    binds expected to "a" and "b", `for n, out in [(1, "1"), (2, "4")]` binds n and out by position. A loop whose
    cases are not all literals binds nothing."""
    cases = loop.iter.elts if isinstance(loop.iter, (ast.List, ast.Tuple, ast.Set)) else None
    target = loop.target
    if not cases:
        return {}
    if isinstance(target, ast.Name):
        values = [_lit(c, {}) for c in cases]
        return {} if any(v is None for v in values) else {target.id: [x for v in values for x in v or []]}
    if not isinstance(target, ast.Tuple) or not all(
        isinstance(c, (ast.Tuple, ast.List)) and len(c.elts) == len(target.elts) for c in cases
    ):
        return {}
    out: dict[str, list[str]] = {}
    for i, t in enumerate(target.elts):
        values = [_lit(c.elts[i], {}) for c in cases if isinstance(c, (ast.Tuple, ast.List))]
        if isinstance(t, ast.Name) and all(v is not None for v in values):
            out[t.id] = [x for v in values for x in v or []]
    return out


def _call_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        f = node.func
        return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return ""


def _is_status(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and n.attr in STATUS) or _call_name(n) in SHAPE_CALLS for n in ast.walk(node)
    )


class _PyShape(ast.NodeVisitor):
    def __init__(self, shape: Shape, rel: str, lines: list[str], tree: ast.Module):
        self.shape, self.rel, self.lines = shape, rel, lines
        self.consts: dict[str, list[str]] = {}
        self.imported: set[str] = set()
        self.runners: set[str] = set()  # `from subprocess import run` names
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                v = _lit(node.value, {})
                if v is not None:
                    self.consts[node.targets[0].id] = v
            elif isinstance(node, ast.ImportFrom) and node.module in ("subprocess", "os"):
                self.runners |= {a.asname or a.name for a in node.names if a.name in SUBPROCESS}
            elif (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.level == 0
                and node.module.split(".")[0] not in sys.stdlib_module_names
                and node.module.split(".")[0] not in ("pytest", "numpy", "pandas")
            ):
                self.imported |= {a.asname or a.name for a in node.names}

    def ev(self, node: ast.AST) -> str:
        n = getattr(node, "lineno", 1)
        return f"{self.rel}:{n}: {self.lines[n - 1].strip()}"

    def compare(self, left: ast.AST, op: ast.cmpop, right: ast.AST, node: ast.AST, negated: bool = False) -> None:
        if isinstance(op, (ast.NotEq, ast.NotIn, ast.IsNot)) != negated:
            return  # a negative check pins nothing
        if _is_status(left) or _is_status(right):
            if any(_call_name(n) in LISTING for n in ast.walk(left)) or any(
                _call_name(n) in LISTING for n in ast.walk(right)
            ):
                self.shape.exists.append(self.ev(node))
            return
        if isinstance(op, (ast.In, ast.NotIn)) and any(_call_name(n) in LISTING for n in ast.walk(right)):
            self.shape.exists.append(self.ev(node))
            return
        if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
            self.shape.computed.append(self.ev(node))
            return
        lv = _lit(left, self.consts)
        rv = _members(right, self.consts) if isinstance(op, (ast.In, ast.NotIn)) else _lit(right, self.consts)
        if (lv is None) == (rv is None):
            if lv is None:
                self.shape.computed.append(self.ev(node))
            return
        other = left if lv is None else right
        for v in lv or rv or []:
            self.shape.literals.setdefault(v, self.ev(node))
        if any(isinstance(n, ast.Call) and _call_name(n) in self.imported and n.args for n in ast.walk(other)):
            self.shape.program_input.append(self.ev(node))

    def check(self, test: ast.AST, node: ast.AST, negated: bool = False) -> None:
        if isinstance(test, ast.BoolOp):
            for v in test.values:
                self.check(v, node, negated)
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            self.check(test.operand, node, not negated)
        elif isinstance(test, ast.Compare) and len(test.ops) == 1:
            self.compare(test.left, test.ops[0], test.comparators[0], node, negated)
        elif _call_name(test) in EXISTS or (
            _call_name(test) in ("any", "all")
            and any(
                (isinstance(n, ast.Attribute) and n.attr in ("name", "suffix", "stem")) or _call_name(n) in LISTING
                for n in ast.walk(test)
            )
        ):
            self.shape.exists.append(self.ev(node))
        else:
            self.shape.computed.append(self.ev(node))

    def visit_For(self, node: ast.For) -> None:
        """A loop over literal cases binds its names to those literals inside the loop, and only there."""
        bound = _loop_cases(node)
        shadowed = {k: self.consts[k] for k in bound if k in self.consts}
        self.consts.update(bound)
        self.generic_visit(node)
        for k in bound:
            self.consts.pop(k, None)
        self.consts.update(shadowed)

    def visit_Assert(self, node: ast.Assert) -> None:
        self.check(node.test, node)
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        fails = any(isinstance(n, ast.Raise) or _call_name(n) in FAILS for b in node.body for n in ast.walk(b))
        if fails:
            self.check(node.test, node, negated=True)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _call_name(node)
        if name in ("assertEqual", "assertEquals", "assertIn") and len(node.args) >= 2:
            op = ast.Eq() if name != "assertIn" else ast.In()
            self.compare(node.args[0], op, node.args[1], node)
        elif name in ("assertTrue", "assertFalse") and node.args:
            self.check(node.args[0], node, negated=name == "assertFalse")
        elif (
            isinstance(node.func, ast.Attribute)
            and name in SUBPROCESS
            and getattr(node.func.value, "id", "") in ("subprocess", "os", "sp")
        ) or (isinstance(node.func, ast.Name) and name in self.runners):
            self.program(node)
        self.generic_visit(node)

    def program(self, node: ast.Call) -> None:
        """A subprocess call: the agent's program (not a /tests helper), run on an input or not."""
        arg = node.args[0] if node.args else None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            try:
                words = shlex.split(arg.value)
            except ValueError:
                words = arg.value.split()
            dynamic = False
        elif isinstance(arg, (ast.List, ast.Tuple)):
            words = [e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else "$" for e in arg.elts]
            dynamic = "$" in words
        else:
            return
        while (words and words[0].rsplit("/", 1)[-1] in RUNNERS | {"-m", "-c"}) or (words and words[0].startswith("-")):
            words = words[1:]
        if not words or words[0].startswith("/tests") or words[0] in ("pytest", "pip"):
            return
        self.shape.program_runs.append(self.ev(node))
        stdin = any(k.arg in ("input", "stdin") for k in node.keywords)
        if len(words) > 1 or stdin or dynamic:
            self.shape.program_input.append(self.ev(node))


def _feeds_cases(fn: ast.FunctionDef) -> bool:
    """A `parametrize` whose arguments the test uses: fixed inputs it runs on. One whose names the body never
    reads (a marker, a case counter) feeds nothing, so it does not make the verifier one of fixed inputs."""
    used = {n.id for stmt in fn.body for n in ast.walk(stmt) if isinstance(n, ast.Name)}
    for d in fn.decorator_list:
        if not (isinstance(d, ast.Call) and getattr(d.func, "attr", "") == "parametrize" and d.args):
            continue
        names = d.args[0]
        text = names.value if isinstance(names, ast.Constant) and isinstance(names.value, str) else None
        argnames = (
            {a.strip() for a in text.split(",")}
            if text is not None
            else {e.value for e in getattr(names, "elts", []) if isinstance(e, ast.Constant)}
        )
        if not argnames or argnames & used:  # an unreadable argnames spelling counts, as before
            return True
    return False


def python_shape(shape: Shape, files: list[TestFile]) -> None:
    for f in files:
        tree = f.tree
        if tree is None:
            shape.computed.append(f"{f.rel}: not parsed")
            continue
        if any(_feeds_cases(n) for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            shape.program_input.append(f"{f.rel}: parametrized tests")
        _PyShape(shape, f.rel, f.lines, tree).visit(tree)


def _unquote_pattern(p: str) -> str | None:
    """A grep pattern as the literal it matches, when it is one (`^42$`, `42`, `3\\.14`)."""
    core = p.removeprefix("^").removesuffix("$")
    core = re.sub(r"\\([.\-+*?()\[\]{}|/])", r"\1", core)
    return None if re.search(r"[\[\]()*+?{}|\\]", core) or "." in p.replace("\\.", "") else core


DOUBLE_BRACKET = re.compile(r"\[\[\s+(.+?)\s+(==?|!=|-eq|-ne)\s+(.+?)\s+\]\]")


def _reparse(commands: list[Command]) -> list[Command]:
    """bashlex gives up on `[[ $(cmd) == 42 ]]` and the fallback splits it apart: read such a line again as
    one test (its `$(...)` parsed as a script of its own, so the program it runs is seen)."""
    out: list[Command] = []
    done: set[int] = set()
    for cmd in commands:
        m = DOUBLE_BRACKET.search(cmd.text) if not cmd.parsed else None
        if m is None:
            if cmd.parsed or cmd.line not in done:
                out.append(cmd)
            continue
        if cmd.line in done:
            continue
        done.add(cmd.line)
        for inner in re.findall(r"\$\((.+?)\)", m.group(0)):
            out += [
                Command(words=c.words, line=cmd.line, text=cmd.text, redirects=c.redirects) for c in parse_script(inner)
            ]
        out.append(
            Command(
                words=["[[", m.group(1).strip("\"'"), m.group(2), m.group(3).strip("\"'"), "]]"],
                line=cmd.line,
                text=cmd.text,
            )
        )
    return out


def _bracket_test(shape: Shape, cmd: Command, rel: str) -> None:
    """`[ a = b ]`, `[[ $x == 42 ]]`, `test -f p`: a variable against a literal pins that literal; two variables
    compare something computed; a file test only checks existence."""
    body = [x for x in cmd.words[1:] if x not in ("]", "]]", "!")]
    ops = [j for j, x in enumerate(body) if x in ("=", "==", "!=", "-eq", "-ne")]
    if ops and 0 < ops[0] < len(body) - 1:
        a, b = body[ops[0] - 1], body[ops[0] + 1]
        if ("$" in a) != ("$" in b):
            shape.literals.setdefault(b if "$" in a else a, cmd.evidence(rel))
        elif "$" in a:
            shape.computed.append(cmd.evidence(rel))
    elif body and body[0] in FILE_TESTS:
        shape.exists.append(cmd.evidence(rel))
    elif body:
        shape.computed.append(cmd.evidence(rel))


def _grep_check(shape: Shape, cmd: Command, rel: str) -> None:
    """`grep -qx '42' out` pins the literal it matches; a pattern file, a regex or a variable in the pattern is
    something the reader cannot pin, so it counts as computed."""
    w = cmd.words
    args = [x for x in w[1:] if not x.startswith("-")]
    if any(x.startswith(("-f", "--file")) for x in w[1:]) or len(args) < 2:
        shape.computed.append(cmd.evidence(rel))
        return
    fixed = any(re.fullmatch(r"-\w*F\w*", x) for x in w[1:])
    lit = args[0] if fixed else _unquote_pattern(args[0])
    if lit is None or re.search(r"\$[\w{(]", args[0]):
        shape.computed.append(cmd.evidence(rel))
    else:
        shape.literals.setdefault(lit, cmd.evidence(rel))


def _program_words(words: list[str]) -> list[str]:
    """The command line without its runners and their flags (`python3 -u`, `timeout 10`, `uv run`)."""
    while words and words[0].rsplit("/", 1)[-1] in RUNNERS:
        words = [x for x in words[1:] if not x.startswith("-")]
    return words


def _is_agent_program(words: list[str]) -> bool:
    """A program the agent wrote or installed: under /app, ./ or /usr/local/bin, or a script not under /tests."""
    return bool(words) and (
        words[0].startswith(("/app", "./", "/usr/local/bin/"))
        or (words[0].endswith((".py", ".sh", ".js")) and not words[0].startswith("/tests"))
    )


def _fed_input(commands: list[Command], i: int, words: list[str]) -> bool:
    """Whether `commands[i]` gets an input: arguments, a `<`/heredoc, or a pipe from echo/printf/cat."""
    cmd = commands[i]
    prev = commands[i - 1] if i else None
    piped = prev is not None and prev.line == cmd.line and prev.name in ("echo", "printf", "cat") and "|" in cmd.text
    return len(words) > 1 or any(op == "<" or op.startswith("<<") for op, _t in cmd.redirects) or piped


def _program_run(shape: Shape, commands: list[Command], i: int, rel: str) -> None:
    """Any other command: record it when it runs the agent's program, and whether on an input."""
    words = _program_words(list(commands[i].words))
    if _is_agent_program(words):
        shape.program_runs.append(commands[i].evidence(rel))
        if _fed_input(commands, i, words):
            shape.program_input.append(commands[i].evidence(rel))


def shell_shape(shape: Shape, script: TestFile) -> None:
    """Classify each reachable command of test.sh by what it checks (see the module docstring)."""
    rel = script.rel
    commands = _reparse([c for c in script.commands if c.reachable])
    for i, cmd in enumerate(commands):
        name = cmd.name
        if name in ("[", "[[", "test"):
            _bracket_test(shape, cmd, rel)
        elif name in ("grep", "egrep", "fgrep"):
            _grep_check(shape, cmd, rel)
        elif name in ("diff", "cmp", "jq", "sha256sum", "md5sum", "awk") or (
            name.startswith("python") and "-c" in cmd.words
        ):
            shape.computed.append(cmd.evidence(rel))
        elif name in ("ls", "find") and any(x.startswith("/app") for x in cmd.words[1:]):
            shape.exists.append(cmd.evidence(rel))
        else:
            _program_run(shape, commands, i, rel)


def verifier_shape(script: TestFile | None, python: list[TestFile]) -> Shape:
    """The checks of the verifier's script and every Python file under tests/ but conftest.py."""
    shape = Shape()
    if script is not None:
        shell_shape(shape, script)
    python_shape(shape, [f for f in python if f.name != "conftest.py"])
    return shape
