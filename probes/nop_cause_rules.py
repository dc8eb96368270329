"""Why the nop passes (issue 35, item 4): the cause, named from the verifier's own behaviour on the nop's end state.

`nop-passes` says that an agent doing nothing earns reward; a fixer or a person can act only on why. The
probe (probes/nop_cause.py) reruns the verifier on the nop's end state under a path trace, with pytest's
per-test report, and gathers facts about that state (`NopFacts`). This module holds the pure part: the shape
of each test function, read from the tests' AST (`shapes_of_tests`), and the cause a passing test and the facts
agree on (`explain`). Four causes, as `nop-passes` subtypes:

- `empty-output-loop`: a test loops over a directory listing, and the directory is empty (or missing) in the
  nop's end state, so the loop's asserts never run;
- `hash-matches-shipped-file`: a digest the tests hold already matches a file the verifier read and the nop
  left as the image ships it;
- `unchecked-missing-program`: the verifier ran a program that does not exist, from a test that never looks
  at the exit status;
- `compares-untouched-files`: a test compares two files the agent never touched, and they are already equal.

No cause is guessed: without a passing test whose code and the facts agree, nothing is named.
"""

from __future__ import annotations

import ast
import posixpath
import re
import xml.etree.ElementTree as ET  # (pytest's own report from the sandbox, size-capped by the caller)
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


@dataclass
class NopFacts:
    """The nop's end state as the rerun saw it."""

    listed: dict[str, int] = field(default_factory=dict)  # directory the verifier listed -> entries (-1: missing)
    missing_programs: dict[str, str] = field(default_factory=dict)  # program it failed to run -> trace line
    digests: dict[str, dict[str, str]] = field(default_factory=dict)  # untouched file it read -> {algo: hex}
    passed: list[str] | None = None  # test names pytest reported passed (None: no per-test report)
    failed: list[str] = field(default_factory=list)


@dataclass
class Cause:
    subtype: str
    summary: str
    evidence: list[str]
    location: str
    fix: str


def junit_results(xml_text: str) -> tuple[list[str], list[str]] | None:
    """(passed, failed) test names from pytest's JUnit XML (`--junitxml`), parameters stripped."""
    try:
        root = ET.fromstring(xml_text)  # noqa: S314
    except ET.ParseError:
        return None
    passed, failed = [], []
    for case in root.iter("testcase"):
        name = (case.get("name") or "").split("[", 1)[0]
        bad = any(child.tag in ("failure", "error") for child in case)
        skipped = any(child.tag == "skipped" for child in case)
        if bad:
            failed.append(name)
        elif not skipped:
            passed.append(name)
    return passed, failed


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


def _listing_loops(fn: ast.FunctionDef, consts: dict[str, str]) -> list[tuple[int, str, str | None]]:
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


def _shape(fn: ast.FunctionDef, source: str, file: str, consts: dict[str, str]) -> ShapeOfTest:
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
        except (SyntaxError, ValueError):
            continue
        consts = _constants(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                shapes.append(_shape(node, source, file, consts))
    return shapes


def _empty_loop(shape: ShapeOfTest, facts: NopFacts) -> list[str]:
    out = []
    empty = {d: n for d, n in facts.listed.items() if n <= 0}
    for line, code, where in shape.loops:
        hits = [where] if where in empty else ([] if where else sorted(empty))
        for d in hits:
            state = "missing" if empty[d] < 0 else "empty"
            out.append(
                f"{shape.file}:{line} {shape.name} loops over {code}; {d} is {state} in the nop's end state, "
                "so the loop's asserts never ran"
            )
    return out


def _hash_match(shape: ShapeOfTest, facts: NopFacts) -> list[str]:
    return [
        f"{shape.file}:{shape.line} {shape.name} expects {algo} {digest[:16]}...; {path} already has it, as the "
        "image ships it (the nop did not touch it)"
        for path, sums in sorted(facts.digests.items())
        for algo, digest in sums.items()
        if digest in shape.digests
    ]


def _missing_program(shape: ShapeOfTest, facts: NopFacts) -> list[str]:
    if not shape.unchecked_runs:
        return []
    names = {posixpath.basename(p): (p, line) for p, line in facts.missing_programs.items()}
    out = []
    for name, (_path, trace) in sorted(names.items()):
        if re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])", shape.text):
            line, call = shape.unchecked_runs[0]
            out.append(
                f"{shape.file}:{line} {shape.name} runs {call} and never reads its exit status; "
                f"{name} does not exist in the nop's end state (strace: {trace[:160]})"
            )
    return out


def _untouched_pair(shape: ShapeOfTest, facts: NopFacts) -> list[str]:
    if not shape.compares:
        return []
    named = [
        p
        for p in facts.digests
        if p in shape.text or re.search(r"(?<![\w.-])" + re.escape(posixpath.basename(p)) + r"(?![\w-])", shape.text)
    ]
    by_sum: dict[str, list[str]] = {}
    for path in named:
        by_sum.setdefault(facts.digests[path].get("sha256", ""), []).append(path)
    return [
        f"{shape.file}:{shape.line} {shape.name} compares {a} with {b}; neither was touched by the nop "
        "(both as the image ships them) and they are already identical"
        for digest, paths in sorted(by_sum.items())
        if digest and len(paths) >= 2
        for a, b in [paths[:2]]
    ]


CAUSES = (  # subtype, rule over one test, summary, fix
    (
        "hash-matches-shipped-file",
        _hash_match,
        "a digest the tests expect already matches a file the image ships",
        "check a file the agent must produce or change, or ship a file whose digest differs until the work is done",
    ),
    (
        "compares-untouched-files",
        _untouched_pair,
        "a test compares two files the agent never touches, and they are already equal",
        "compare the agent's output with the expected file, not two files the image ships",
    ),
    (
        "empty-output-loop",
        _empty_loop,
        "a test loops over an output directory that is empty, so its asserts never run",
        "assert the expected set of output files before looping over them",
    ),
    (
        "unchecked-missing-program",
        _missing_program,
        "a test runs a program that does not exist and never checks its exit status",
        "pass check=True (or assert returncode == 0) on every subprocess the tests run",
    ),
)


def explain(shapes: list[ShapeOfTest], facts: NopFacts) -> Cause | None:
    """The first cause (in CAUSES order) that a test which passed on the nop's end state shows; evidence from
    every cause that applies."""
    passing = [s for s in shapes if facts.passed is None or s.name in facts.passed]
    found: list[tuple[str, str, str, list[str]]] = []
    for subtype, rule, summary, fix in CAUSES:
        lines = [line for shape in passing for line in rule(shape, facts)]
        if lines:
            found.append((subtype, summary, fix, lines))
    if not found:
        return None
    subtype, summary, fix, _lines = found[0]
    evidence = [line for *_rest, lines in found for line in lines][:12]
    location = evidence[0].split(":", 1)[0] if evidence else "tests/"
    if facts.passed is not None:
        evidence.append(
            f"pytest on the nop's end state: passed {', '.join(facts.passed[:8]) or 'none'}"
            + (f"; failed {', '.join(facts.failed[:8])}" if facts.failed else "")
        )
    return Cause(subtype, summary, evidence, location, fix)
