"""What can make a test pass vacuously, per test function (issue 35, item 4): the loops over a directory
listing, the subprocess calls whose exit status is never read, the hex digests it holds, whether it compares
two values. A facet of the test model (core/task_model/tests_reader.py); probes/nop/cause_rules.py matches it
against what the verifier did on the nop's end state to name why a nop passes.
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass, field

LISTING_FUNCS = {"listdir", "scandir", "walk", "glob", "iglob", "iterdir", "rglob"}
RUNNERS = {"run", "call", "Popen", "system", "popen", "getoutput", "getstatusoutput"}
HEX = re.compile(r"^[0-9a-fA-F]{32}$|^[0-9a-fA-F]{40}$|^[0-9a-fA-F]{64}$|^[0-9a-fA-F]{128}$")
WILDCARD = re.compile(r"[*?\[]")


@dataclass
class ShapeOfTest:
    """What one test function does that can make it pass vacuously."""

    file: str
    name: str
    line: int
    loops: list[tuple[int, str, str | None]] = field(default_factory=list)  # (line, code, listed directory)
    unchecked_runs: list[tuple[int, str]] = field(default_factory=list)  # subprocess calls, status never read
    digests: set[str] = field(default_factory=set)  # hex digest literals it uses (its own or module constants)
    text: str = ""  # its source, with the module constants it names appended
    compares: bool = False  # an == between two values, or filecmp.cmp / cmp / diff


def _constants(tree: ast.Module) -> dict[str, str]:
    out = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            out[node.targets[0].id] = node.value.value
    return out


def _string(node: ast.AST, consts: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("Path", "PurePath") and node.args:
        return _string(node.args[0], consts)
    return None


def _listing_dir(node: ast.AST, consts: dict[str, str]) -> tuple[bool, str | None]:
    """Whether an expression lists a directory (os.listdir(d), glob.glob("d/*"), Path(d).iterdir(), sorted(...)
    of one), and which directory when it can be read from the code."""
    while isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("sorted", "list", "enumerate", "set"):
        if not node.args:
            return False, None
        node = node.args[0]
    if (
        not isinstance(node, ast.Call)
        or not isinstance(node.func, ast.Attribute)
        or node.func.attr not in LISTING_FUNCS
    ):
        return False, None
    if node.func.attr in ("iterdir", "rglob") or (
        node.func.attr == "glob" and not node.args[1:] and _string(node.func.value, consts)
    ):
        base = _string(node.func.value, consts)  # Path(d).iterdir() / Path(d).glob("*.json")
        return True, base.rstrip("/") if base else None
    arg = _string(node.args[0], consts) if node.args else None
    if arg and node.func.attr in ("glob", "iglob"):
        arg = posixpath.dirname(WILDCARD.split(arg, 1)[0]) or None
    return True, arg.rstrip("/") if arg else None


def _status_read(fn: ast.AST) -> bool:
    """Whether a function looks at an exit status (returncode, check_returncode, check=True, wait())."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and node.attr in ("returncode", "check_returncode", "wait", "poll"):
            return True
        if isinstance(node, ast.keyword) and node.arg == "check" and getattr(node.value, "value", None) is True:
            return True
    return False


def _listing_names(fn: ast.AST, consts: dict[str, str]) -> dict[str, str | None]:
    """Names the function binds to a directory listing (`names = os.listdir(OUT)`) -> the directory, so a loop
    over the name counts as a loop over the listing."""
    bound: dict[str, str | None] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            lists, where = _listing_dir(node.value, consts)
            if lists:
                bound[node.targets[0].id] = where
    return bound


def _compares(fn: ast.AST) -> bool:
    """Whether the function compares two values (`==`) or two files (`filecmp.cmp`, `cmpfiles`)."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq) for op in node.ops):
            return True
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "cmp",
            "cmpfiles",
        ):
            return True
    return False


def _listing_loops(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, consts: dict[str, str]
) -> list[tuple[int, str, str | None]]:
    """(line, code, directory) of each loop or comprehension over a directory listing, direct or by name."""
    bound = _listing_names(fn, consts)
    loops = []
    for node in ast.walk(fn):
        if isinstance(node, (ast.For, ast.comprehension)):
            it = node.iter
            lists, where = _listing_dir(it, consts)
            if not lists and isinstance(it, ast.Name) and it.id in bound:
                lists, where = True, bound[it.id]
            if lists:
                loops.append((getattr(node, "lineno", fn.lineno), ast.unparse(it), where))
    return loops


def _unchecked_runs(fn: ast.AST) -> list[tuple[int, str]]:
    """subprocess/os calls that run a program, when the function never reads an exit status (none otherwise)."""
    if _status_read(fn):
        return []
    return [
        (node.lineno, ast.unparse(node)[:160])
        for node in ast.walk(fn)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in RUNNERS
        and getattr(node.func.value, "id", "") in ("subprocess", "os")
    ]


def _shape(fn: ast.FunctionDef | ast.AsyncFunctionDef, source: str, file: str, consts: dict[str, str]) -> ShapeOfTest:
    """One test function's shape; the module constants it names count as its own (digests, text)."""
    shape = ShapeOfTest(file=file, name=fn.name, line=fn.lineno)
    used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    shape.text = (
        (ast.get_source_segment(source, fn) or "") + "\n" + "\n".join(v for k, v in consts.items() if k in used)
    )
    shape.digests = {
        n.value.lower()
        for n in ast.walk(fn)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and HEX.match(n.value)
    }
    shape.digests |= {v.lower() for k, v in consts.items() if k in used and HEX.match(v)}
    shape.compares = _compares(fn)
    shape.loops = _listing_loops(fn, consts)
    shape.unchecked_runs = _unchecked_runs(fn)
    return shape


def shapes_of_tests(files: dict[str, str]) -> list[ShapeOfTest]:
    """Each `test_*` function (module level or in a class) of the verifier's Python files {name: source}."""
    shapes = []
    for file, source in files.items():
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError):
            continue
        shapes += tree_shapes(tree, source, file)
    return shapes


def tree_shapes(tree: ast.Module, source: str, file: str) -> list[ShapeOfTest]:
    """`shapes_of_tests` for one module already parsed (the test model's tree)."""
    consts = _constants(tree)
    return [
        _shape(node, source, file, consts)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")
    ]
