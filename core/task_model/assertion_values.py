"""What an expanded Python expression (core/task_model/assertion_scope.py) reads and what it is, for the assertion
reader: the literal it evaluates to, the path or command it spells, and each source of the agent's work it
looks at (a file read, a command's output or status, a digest, a database, a URL, a listing, an existence test).

`literal` folds constants and the few pure operations tests apply to them (`"42\\n".strip()`, `"a" + "b"`,
f-strings of constants, `sorted([...])`); `render` spells a path or argv word, an unknown part as `{code}`;
`sources` lists what the expression reads, outermost first, so a digest over a file is a digest (of that path)
and not a plain file read.
"""

from __future__ import annotations

import ast
import builtins
import shlex
from dataclasses import dataclass, field

from envqa.core.registry.source_suffixes import SOURCE_CODE_SUFFIXES

NOT_LITERAL = object()
STR_METHODS = {
    "strip",
    "lstrip",
    "rstrip",
    "lower",
    "upper",
    "casefold",
    "split",
    "splitlines",
    "title",
    "encode",
    "decode",
}
PURE_CALLS = {"sorted", "list", "tuple", "set", "frozenset", "str", "int", "float", "len", "bytes", "dict", "bool"}
RUN_CALLS = {"run", "check_output", "call", "check_call", "Popen", "getoutput", "getstatusoutput", "system", "popen"}
RUN_OWNERS = {"subprocess", "sp", "os", ""}
STATUS_CALLS = {"call", "check_call", "system"}
STREAMS = {"stdout": "stdout", "stderr": "stderr", "returncode": "exit_code", "output": "stdout"}
READERS = {"read_text", "read_bytes", "loadtxt", "genfromtxt", "read_csv", "read_json", "imread", "load_workbook"}
OPENERS = {
    "open",
    "imread",
    "loadtxt",
    "genfromtxt",
    "read_csv",
    "read_json",
    "read_parquet",
    "read_excel",
    "load_workbook",
}
DIGESTS = {
    "md5",
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "blake2b",
    "blake2s",
    "new",
    "file_digest",
    "sha3_256",
}
LISTINGS = {"listdir", "scandir", "glob", "iglob", "iterdir", "rglob", "walk"}
EXISTENCE = {"exists", "is_file", "isfile", "is_dir", "isdir", "access", "lexists", "is_symlink", "islink"}
NETWORK = {"urlopen", "get", "post", "put", "head", "request", "create_connection", "connect_ex"}
NET_OWNERS = {"requests", "httpx", "request", "urllib", "socket", "session", "client", "s"}
HISTORY = ("bash_history", "zsh_history", "python_history", "/history", "fish_history")


@dataclass
class Source:
    """One thing an expression reads. kind: read (a file's content), run (a command), digest, database, network,
    listing, exists, call (a function of the agent's code)."""

    kind: str
    path: str | None = None
    command: list[str] = field(default_factory=list)
    stream: str = ""  # for run: stdout, stderr, exit_code
    detail: str = ""
    mode: str = "text"  # for read: text or bytes


def name_of(node: ast.AST) -> tuple[str, str]:
    """(owner, name) of a call's function: `subprocess.run` -> ("subprocess", "run"), `open` -> ("", "open")."""
    f = node.func if isinstance(node, ast.Call) else node
    if isinstance(f, ast.Attribute):
        owner = f.value
        while isinstance(owner, ast.Attribute):
            owner = owner.value
        return (owner.id if isinstance(owner, ast.Name) else ""), f.attr
    return "", f.id if isinstance(f, ast.Name) else ""


def literal(node: ast.AST) -> object:
    """The constant an expression folds to, or NOT_LITERAL."""
    try:
        return _fold(node, 0)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError, MemoryError, OverflowError):
        return NOT_LITERAL


def _fold(node: ast.AST, depth: int) -> object:
    if depth > 30:
        raise ValueError
    if getattr(node, "_values", None) or getattr(node, "_iter", None) is not None or getattr(node, "_module", ""):
        raise ValueError
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_fold(e, depth + 1) for e in node.elts]
        return {ast.List: list, ast.Tuple: tuple}.get(type(node), set)(items)
    if isinstance(node, ast.Dict):
        return {_fold(k, depth + 1): _fold(v, depth + 1) for k, v in zip(node.keys, node.values, strict=True) if k}
    if isinstance(node, ast.JoinedStr):
        return "".join(str(_fold(v.value if isinstance(v, ast.FormattedValue) else v, depth + 1)) for v in node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_fold(node.operand, depth + 1)  # type: ignore[operator]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
        a, b = _fold(node.left, depth + 1), _fold(node.right, depth + 1)
        if isinstance(node.op, ast.Mult) and any(isinstance(x, int) and x > 10_000 for x in (a, b)):
            raise ValueError  # no huge literals
        return a + b if isinstance(node.op, ast.Add) else a * b  # type: ignore[operator]
    if isinstance(node, ast.Call):
        return _fold_call(node, depth)
    raise ValueError


def _fold_call(node: ast.Call, depth: int) -> object:
    owner, name = name_of(node)
    args = [_fold(a, depth + 1) for a in node.args]
    if isinstance(node.func, ast.Attribute) and name in STR_METHODS | {"join"} and not node.keywords:
        value = _fold(node.func.value, depth + 1)
        if isinstance(value, (str, bytes)):
            return getattr(value, name)(*args)
    if isinstance(node.func, ast.Name) and name in PURE_CALLS and not node.keywords:
        return getattr(builtins, name)(*args)
    if name == "approx" and args:
        return args[0]
    raise ValueError


def text(value: object) -> str:
    return (
        value if isinstance(value, str) else value.decode(errors="replace") if isinstance(value, bytes) else repr(value)
    )


def code(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return "?"


def render(node: ast.AST | None) -> str:
    """A path or argv word as the code spells it; an unknown part as `{code}` (`/app/out/{name}.json`)."""
    if node is None:
        return ""
    value = literal(node)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(node, ast.Name):
        return "{" + node.id + "}"
    if isinstance(node, ast.JoinedStr):
        return "".join(render(v.value) if isinstance(v, ast.FormattedValue) else str(v.value) for v in node.values)  # type: ignore[attr-defined]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _join([render(node.left), render(node.right)])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return render(node.left) + render(node.right)
    if isinstance(node, ast.Call):
        owner, name = name_of(node)
        if (
            name in ("Path", "PurePath", "PosixPath", "str", "fspath", "abspath", "realpath", "expanduser")
            and node.args
        ):
            return _join([render(a) for a in node.args])
        if name == "join" and owner in ("os", "path", "posixpath"):
            return _join([render(a) for a in node.args])
        if name in ("get", "getenv") and owner == "os" and len(node.args) == 2:
            return render(node.args[1])  # os.environ.get("OUT", "/app/out.txt"): the default, as the task runs it
        if name in ("resolve", "absolute", "expanduser") and isinstance(node.func, ast.Attribute):
            return render(node.func.value)
        if name == "joinpath" and isinstance(node.func, ast.Attribute):
            return _join([render(node.func.value)] + [render(a) for a in node.args])
    return "{" + code(node)[:60] + "}"


def _join(parts: list[str]) -> str:
    out = ""
    for p in parts:
        out = p if p.startswith("/") or not out else out.rstrip("/") + "/" + p
    return out


def argv(node: ast.AST | None, shell: bool = False) -> list[str]:
    """A command's words: a list's elements (a `*rest` spread when it is known), or a string split as sh does."""
    if node is None:
        return []
    if isinstance(node, (ast.List, ast.Tuple)):
        words: list[str] = []
        for e in node.elts:
            inner = e.value if isinstance(e, ast.Starred) else None
            if isinstance(inner, (ast.List, ast.Tuple)):
                words += [render(x) for x in inner.elts]
            else:
                words.append(render(e) if inner is None else "{*" + code(inner)[:40] + "}")
        return words
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return argv(node.left, shell) + argv(node.right, shell)
    spelt = render(node)
    try:
        return shlex.split(spelt)
    except ValueError:
        return spelt.split()


def _read_path(node: ast.Call) -> tuple[str | None, str] | None:
    """(path, mode) when the call reads a file's content; None when it does not read one."""
    owner, name = name_of(node)
    if name == "open" and owner in ("", "io", "codecs", "Image", "gzip", "bz2", "lzma") and node.args:
        mode = (
            literal(node.args[1])
            if len(node.args) > 1
            else next((literal(k.value) for k in node.keywords if k.arg == "mode"), "r")
        )
        if isinstance(mode, str) and any(c in mode for c in "wax"):
            return None
        return render(node.args[0]), "bytes" if isinstance(mode, str) and "b" in mode else "text"
    if isinstance(node.func, ast.Attribute) and name in ("read_text", "read_bytes", "open"):
        return render(node.func.value), "bytes" if name == "read_bytes" else "text"
    if name in OPENERS | READERS and node.args:
        return render(node.args[0]), "bytes" if name == "imread" else "text"
    return None


def _run(node: ast.Call, imported_runs: set[str]) -> Source | None:
    owner, name = name_of(node)
    if name not in RUN_CALLS or (owner not in RUN_OWNERS) or (owner == "" and name not in imported_runs):
        return None
    if owner == "os" and name not in ("system", "popen"):
        return None
    shell = any(k.arg == "shell" and literal(k.value) is True for k in node.keywords)
    first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "args"), None)
    words = argv(first, shell)
    stream = "exit_code" if name in STATUS_CALLS else "stdout"
    stdin = next((k.value for k in node.keywords if k.arg in ("input", "stdin")), None)
    return Source(
        "run", command=words, stream=stream, detail=f"stdin: {render(stdin)[:60]}" if stdin is not None else ""
    )


def sources(node: ast.AST, imported_runs: frozenset[str] = frozenset()) -> list[Source]:
    """What an expression reads, outermost first (see the module docstring)."""
    out: list[Source] = []
    seen: set[int] = set()
    todo = [node]
    while todo:
        n = todo.pop(0)
        if id(n) in seen:
            continue
        found = _source(n, set(imported_runs), seen)
        if found is not None:
            out.append(found)
        todo += list(ast.iter_child_nodes(n))
        it = getattr(n, "_iter", None)
        if it is not None:
            todo.append(it)
    return out


def _source(n: ast.AST, runs: set[str], seen: set[int]) -> Source | None:
    if isinstance(n, ast.Attribute) and n.attr in STREAMS and isinstance(n.value, ast.Call):
        src = _run(n.value, runs)
        if src is not None:
            seen.add(id(n.value))
            src.stream = STREAMS[n.attr]
            return src
    if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Call) and name_of(n.value)[1] == "communicate":
        inner = n.value.func.value if isinstance(n.value.func, ast.Attribute) else None
        src = _run(inner, runs) if isinstance(inner, ast.Call) else None
        if src is not None and isinstance(inner, ast.Call):
            seen.add(id(inner))
            src.stream = "stderr" if literal(n.slice) == 1 else "stdout"
            return src
    if not isinstance(n, ast.Call):
        return None
    return _call_source(n, runs)


def _outside_source(n: ast.Call, owner: str, name: str) -> Source | None:
    """A digest, a database or a network response: what the check reads from outside the agent's files."""
    if owner in ("hashlib",) and name in DIGESTS:
        inner = [s for s in sources(ast.Tuple(elts=list(n.args), ctx=ast.Load())) if s.kind == "read"]
        return Source("digest", path=inner[0].path if inner else None, detail=name)
    if owner == "sqlite3" and name == "connect" and n.args:
        return Source("database", path=render(n.args[0]))
    if name in NETWORK and (owner in NET_OWNERS or name == "urlopen") and n.args:
        target = n.args[0]
        if isinstance(target, ast.Call) and name_of(target)[1] == "Request" and target.args:
            target = target.args[0]
        return Source("network", detail=render(target))
    return None


def _path_source(n: ast.Call, owner: str, name: str) -> Source | None:
    """A listing of a folder or an existence test of a path."""
    if name in LISTINGS and (n.args or isinstance(n.func, ast.Attribute)):
        if owner in ("os", "glob", "") and n.args:
            return Source("listing", path=render(n.args[0]))
        if isinstance(n.func, ast.Attribute):
            base = render(n.func.value)
            return Source("listing", path=_join([base, render(n.args[0])]) if n.args else base)
    if name in EXISTENCE:
        target = (
            n.args[0]
            if n.args and owner in ("os", "path")
            else n.func.value
            if isinstance(n.func, ast.Attribute)
            else None
        )
        return Source("exists", path=render(target)) if target is not None else None
    return None


def _call_source(n: ast.Call, runs: set[str]) -> Source | None:
    owner, name = name_of(n)
    found = _outside_source(n, owner, name) or _run(n, runs) or _path_source(n, owner, name)
    if found is not None:
        return found
    read = _read_path(n)
    if read is not None:
        return Source("read", path=read[0], mode=read[1])
    module = getattr(n.func, "_module", "")
    if module:
        return Source("call", detail=module)
    return None


def keys(node: ast.AST) -> list[str]:
    """The keys indexed on the way down to what is read: `data["a"]["b"]` -> [a, b], `.get("k")`, a key that takes
    a loop's literal cases -> each case."""
    out: list[str] = []
    n = node
    for _ in range(40):
        if isinstance(n, ast.Subscript):
            k = literal(n.slice)
            values = getattr(n.slice, "_values", None)
            if isinstance(k, str):
                out.insert(0, k)
            elif values:
                out[:0] = [text(literal(v)) for v in values if isinstance(literal(v), str)]
            n = n.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr == "get" and n.args and isinstance(literal(n.args[0]), str):
                out.insert(0, literal(n.args[0]))  # type: ignore[arg-type]
            n = n.func.value
        elif isinstance(n, ast.Call) and n.args and name_of(n)[1] in PURE_CALLS | {"abs", "round", "float"}:
            n = n.args[0]
        elif isinstance(n, ast.Attribute):
            n = n.value
        else:
            break
    return out


def is_source_file(path: str | None) -> bool:
    return bool(path) and path.endswith(SOURCE_CODE_SUFFIXES) and not path.startswith("/tests")  # type: ignore[union-attr]


def is_history(path: str | None) -> bool:
    return bool(path) and any(h in path for h in HISTORY)  # type: ignore[operator]
