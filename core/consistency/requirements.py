"""What Python tests require, read with `ast` (never imported or run): the absolute paths they open, test,
execute or hash, the command lines they run, the URLs and ports they reach, the account and branch names
they look up, and the strings they compare with the agent's output. The verifier's files come parsed from the
test model (core/task_model/tests_reader.py `TestsModel.requirements`); `python_requirements` reads any other
Python text (the solution, a heredoc, `python3 -c`).

Paths are resolved through simple constants: `Path("/app") / "out.txt"`, `os.path.join(APP, "x")`,
f-strings of constants and names bound to them (`OUT = APP / "out.txt"`). Each requirement keeps its role:
  read      opened, read, tested for existence (the agent must produce it)
  exec      run as a program
  preserve  its hash or mtime is computed (the agent must leave it as it is)
  state     a database whose contents are compared with fixed values (core/consistency/db_state.py)
  write     the test writes or creates it itself (its own fixture, never the agent's)
  mention   named in some other way
"""

from __future__ import annotations

import ast
import re

from envqa.core.consistency.db_state import module_constants, pinned_databases
from envqa.core.consistency.model import URL_IN, Requirement
from envqa.core.consistency.shell_requirements import command_requirements
from envqa.core.parsers.shell import parse_script

READS = {
    "exists",
    "is_file",
    "is_dir",
    "read_text",
    "read_bytes",
    "open",
    "iterdir",
    "glob",
    "rglob",
    "stat",
    "is_symlink",
    "lstat",
    "readlink",
    "isfile",
    "isdir",
    "getsize",
    "listdir",
    "access",
    "samefile",
    "scandir",
    "load",
    "loadtxt",
    "read_csv",
    "read_json",
    "connect",
    "imread",
    "cmp",
}
WRITES = {
    "write_text",
    "write_bytes",
    "mkdir",
    "touch",
    "unlink",
    "makedirs",
    "remove",
    "rmtree",
    "rmdir",
    "symlink_to",
    "chmod",
    "copy",
    "copyfile",
    "copytree",
    "move",
    "rename",
    "replace",
    "mkstemp",
    "mkdtemp",
}
MTIMES = {"getmtime", "getctime", "st_mtime", "st_ctime", "st_mtime_ns", "st_ino"}
HASHING = re.compile(r"sha\d*|md5|blake2\w*|hash|digest|checksum|crc32|adler32", re.I)
RUNS = {"run", "call", "check_call", "check_output", "Popen", "system", "popen", "getoutput", "getstatusoutput"}
FOLDS = {"lower", "upper", "casefold", "title"}
# unittest's spellings of `a == b`, `a != b`, `a in b`, `a not in b`: their first two arguments are compared sides
COMPARE_CALLS = {
    "assertEqual",
    "assertEquals",
    "assertNotEqual",
    "assertIn",
    "assertNotIn",
    "assertListEqual",
    "assertTupleEqual",
    "assertSetEqual",
    "assertSequenceEqual",
    "assertMultiLineEqual",
    "assertCountEqual",
}


def _name(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _write_target(node: ast.Call, name: str, receiver: ast.AST | None) -> ast.AST | None:
    """What a writing call writes: its receiver (`p.write_text(...)`, `p.mkdir()`), except for copies and moves,
    which write their last argument (the destination)."""
    if receiver is not None and name not in ("copy", "copyfile", "copytree", "move"):
        return receiver
    return node.args[-1] if node.args else None


def _fragment(node: ast.AST) -> bool:
    """A constant piece of an f-string (`f"/proc/{pid}/status"`'s "/status"): never a path of its own."""
    return isinstance(getattr(node, "_parent", None), ast.JoinedStr)


class _Resolver:
    """Constant folding for path-ish expressions; names are bound by module- and function-level assignments."""

    def __init__(self, tree: ast.AST):
        self.names: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = self.value(node.value)
                if value is not None:
                    self.names.setdefault(node.targets[0].id, value)

    def value(self, node: ast.AST | None) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
            left, right = self.value(node.left), self.value(node.right)
            if left is None or right is None:
                return None
            return left + right if isinstance(node.op, ast.Add) else left.rstrip("/") + "/" + right.lstrip("/")
        if isinstance(node, ast.JoinedStr):
            parts = [self.value(v.value) if isinstance(v, ast.FormattedValue) else self.value(v) for v in node.values]
            return "".join(parts) if all(p is not None for p in parts) else None  # type: ignore[arg-type]
        if isinstance(node, ast.Call) and _name(node.func) in ("Path", "PurePath", "PosixPath", "join") and node.args:
            values = [self.value(a) for a in node.args]
            known = [p for p in values if p is not None]
            if len(known) < len(values):
                return None
            out = known[0] or ""
            for p in known[1:]:
                out = p if p.startswith("/") else out.rstrip("/") + "/" + p
            return out
        return None


class _Reader(ast.NodeVisitor):
    def __init__(self, file: str, lines: list[str], tree: ast.AST, offset: int):
        self.file, self.lines, self.offset = file, lines, offset
        self.resolve = _Resolver(tree)
        self.out: list[Requirement] = []
        self.roled: set[int] = set()  # ids of nodes already given a role

    def add(self, kind: str, value: str, role: str, node: ast.AST) -> None:
        n = getattr(node, "lineno", 1)
        text = self.lines[n - 1].strip() if 0 < n <= len(self.lines) else ""
        self.out.append(Requirement(kind, value, role, self.file, n + self.offset, text))

    def paths_in(self, node: ast.AST) -> list[tuple[str, ast.AST]]:
        found = []
        for sub in ast.walk(node):
            if _fragment(sub):
                continue
            value = self.resolve.value(sub)
            if value and value.startswith("/") and id(sub) not in self.roled:
                found.append((value, sub))
                self.roled.update(id(s) for s in ast.walk(sub))
        return found

    def role_paths(self, node: ast.AST, role: str) -> None:
        for value, sub in self.paths_in(node):
            self.add("path", value, role, sub)

    def visit_Call(self, node: ast.Call) -> None:
        name = _name(node.func)
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        self.call_paths(node, name, receiver)
        if name in ("startswith", "endswith") and receiver is not None:
            self.compared_affix(node, receiver)
        if name in COMPARE_CALLS and receiver is not None and len(node.args) >= 2:
            self.compared_sides(list(node.args[:2]), node)  # self.assertEqual(content, "sha256:" + digest)
        if name in ("getpwnam", "getgrnam") and node.args and (user := self.resolve.value(node.args[0])):
            self.add("name", user, "user" if name == "getpwnam" else "group", node)
        self.generic_visit(node)

    def call_paths(self, node: ast.Call, name: str, receiver: ast.AST | None) -> None:
        """The role a call gives the paths in it: hashed or timed (preserve), run as a command, opened (by its
        mode), written, or read."""
        if (HASHING.search(name) and name not in READS) or name in MTIMES:
            self.role_paths(node, "preserve")
        elif name in RUNS:
            self.command(node)
        elif name == "open" and receiver is None and node.args:
            mode = self.open_mode(node)
            self.role_paths(node.args[0], "write" if mode and set(mode) & set("wax") else "read")
        elif name in WRITES:
            target = _write_target(node, name, receiver)
            if target is not None:
                self.role_paths(target, "write")
        elif name in READS:
            self.role_paths(receiver if receiver is not None and self.resolve.value(receiver) else node, "read")

    def open_mode(self, node: ast.Call) -> str | None:
        """`open(p, mode)`'s mode, positional or keyword ("r" when not given; None when not a constant)."""
        if len(node.args) > 1:
            return self.resolve.value(node.args[1])
        return next((self.resolve.value(k.value) for k in node.keywords if k.arg == "mode"), "r")

    def compared_affix(self, node: ast.Call, receiver: ast.AST) -> None:
        """`out.startswith("OK")`: the prefix or suffix is compared with the output (case-insensitively when
        the receiver was folded with `.lower()` and the like)."""
        folded = any(isinstance(s, ast.Call) and _name(s.func) in FOLDS for s in ast.walk(receiver))
        for arg in node.args[:1]:
            for lit in self.literals(arg):
                self.add("compared", lit, "ci" if folded else "cs", node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in MTIMES:  # Path(x).stat().st_mtime
            self.role_paths(node.value, "preserve")
        self.generic_visit(node)

    def command(self, node: ast.Call) -> None:
        if not node.args:
            return
        arg = node.args[0]
        words: list[str] | None = None
        if isinstance(arg, (ast.List, ast.Tuple)):
            words = [self.resolve.value(e) or "$?" for e in arg.elts]
        elif (text := self.resolve.value(arg)) is not None:
            words = None
            for cmd in parse_script(text):
                self.shell_words(cmd.words, node)
        if words:
            self.shell_words(words, node)
        self.roled.update(id(s) for s in ast.walk(arg))

    def shell_words(self, words: list[str], node: ast.AST) -> None:
        n = getattr(node, "lineno", 1)
        text = self.lines[n - 1].strip() if 0 < n <= len(self.lines) else ""
        self.out += [
            Requirement(r.kind, r.value, r.role, self.file, n + self.offset, text)
            for r in command_requirements(words, [])
        ]

    def visit_Compare(self, node: ast.Compare) -> None:
        if all(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
            self.compared_sides([node.left, *node.comparators], node)
        self.generic_visit(node)

    def compared_sides(self, sides: list[ast.expr], node: ast.AST) -> None:
        """The literals of an equality or membership check's sides, compared case-insensitively when a side is
        folded (`.lower()`)."""
        folded = any(isinstance(s, ast.Call) and _name(s.func) in FOLDS for side in sides for s in ast.walk(side))
        for side in sides:
            for lit in self.literals(side):
                self.add("compared", lit, "ci" if folded else "cs", node)

    def literals(self, node: ast.AST) -> list[str]:
        """The string constants a compared side is made of (`"sha256:" + digest` gives "sha256:")."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
            return self.literals(node.left) + self.literals(node.right)
        if isinstance(node, ast.JoinedStr):
            return [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        return []

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            urls = [m.group(0).rstrip(".,;:)") for m in URL_IN.finditer(node.value)]
            for url in urls:
                self.add("url", url, "fetch", node)
            bare = node.value.startswith("/") and " " not in node.value and not _fragment(node)
            if not urls and bare and id(node) not in self.roled:
                self.add("path", node.value, "mention", node)
        if isinstance(node.value, int) and 1000 <= node.value <= 65535 and self._beside_host(node):
            self.add("port", str(node.value), "connect", node)

    def _beside_host(self, node: ast.Constant) -> bool:
        parent = getattr(node, "_parent", None)
        return isinstance(parent, ast.Tuple) and any(
            isinstance(e, ast.Constant) and e.value in ("localhost", "127.0.0.1", "0.0.0.0") for e in parent.elts
        )


def python_requirements(file: str, text: str, line_offset: int = 0) -> list[Requirement]:
    """Every requirement of one Python file (none when it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    return tree_requirements(file, text.splitlines(), tree, line_offset)


def tree_requirements(file: str, lines: list[str], tree: ast.Module, line_offset: int = 0) -> list[Requirement]:
    """`python_requirements` over a module already parsed (the test model's tree, core/task_model/)."""
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            child._parent = parent  # type: ignore[attr-defined]
    reader = _Reader(file, lines, tree, line_offset)
    reader.visit(tree)
    constants = module_constants(tree)
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for path, compare in pinned_databases(fn, reader.resolve.value, constants):
                reader.add("path", path, "state", compare)
    # a path given a role somewhere is not also a bare mention there
    roled = {(r.value, r.line) for r in reader.out if r.kind == "path" and r.role != "mention"}
    return [r for r in reader.out if not (r.kind == "path" and r.role == "mention" and (r.value, r.line) in roled)]
