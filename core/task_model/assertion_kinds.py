"""What one Python check observes and what it compares with, from its expanded sides
(core/task_model/assertion_scope.py, assertion_values.py).

Of a comparison's two sides, a literal, a pattern or a bound is the expected side; otherwise the side that reads
the agent's work (a command it runs, a file outside /tests, a function of its code) is observed and the other is
expected; when both read the agent's work the expected side is `agent_output`, when neither does the left is
observed. An expected side that is a file read (through `.strip()`, `json.load`, `int()`...) is `file`, with the
path the provenance model later gives an origin; anything else computed is `computed`, with the paths and names it
is computed from.
"""

from __future__ import annotations

import ast
import re

from envqa.core.task_model.assertion_values import (
    NOT_LITERAL,
    Source,
    code,
    is_history,
    is_source_file,
    keys,
    literal,
    name_of,
    render,
    sources,
    text,
)
from envqa.core.task_model.assertions import Expected, Observed

TRANSPARENT = {
    "strip",
    "rstrip",
    "lstrip",
    "splitlines",
    "split",
    "read",
    "decode",
    "lower",
    "upper",
    "readlines",
    "load",
    "loads",
    "safe_load",
    "int",
    "float",
    "str",
    "list",
    "tuple",
    "set",
    "sorted",
    "bytes",
    "casefold",
    "encode",
    "reader",
    "DictReader",
    "readline",
}
CASE_FOLDS = {"lower", "upper", "casefold"}
SELF_WORDS = re.compile(r"\b(passed|pass|success(ful)?|ok|correct|verified|all tests? passed|done)\b", re.I)
LABEL = re.compile(r"[A-Za-z_][\w ]*\s*[:=]")  # `time:`, `elapsed =`, `score:` in a pattern that captures
REGEX_CALLS = {"search", "match", "fullmatch", "findall", "finditer"}
CLOSE = {
    "isclose": ("rel_tol", "abs_tol"),
    "allclose": ("rtol", "atol"),
    "assert_allclose": ("rtol", "atol"),
    "assert_almost_equal": ("decimal",),
    "assertAlmostEqual": ("places", "delta"),
    "approx": ("rel", "abs"),
}


def agentish(srcs: list[Source]) -> bool:
    """Whether a side reads the agent's work: a command or file outside /tests, a function of the agent's code."""
    for s in srcs:
        where = (s.command[0] if s.command else "") if s.kind == "run" else s.path or ""
        if s.kind == "call" or (
            s.kind in ("run", "read", "digest", "listing", "exists", "database", "network")
            and not where.startswith("/tests")
        ):
            return True
    return False


def observed(node: ast.AST, runs: frozenset[str]) -> Observed:
    """What one side looks at: its outermost source, with the keys indexed on the way."""
    srcs = sources(node, runs)
    ks = keys(node)
    if not srcs:
        kind = "value" if any(isinstance(n, ast.Call) for n in ast.walk(node)) else "unknown"
        return Observed(kind=kind, keys=ks, detail=code(node)[:120])
    s = next((x for x in srcs if agentish([x])), srcs[0])  # the agent's work before the tests' own data
    if s.kind == "run":
        flags = [w for w in s.command[1:] if w.startswith("-") and len(w) > 1]
        return Observed(kind=s.stream or "stdout", command=s.command, flags=flags, keys=ks, detail=s.detail)
    if s.kind == "read":
        kind = (
            "source_text"
            if is_source_file(s.path) and s.mode == "text"
            else "shell_history"
            if is_history(s.path)
            else "output_file"
        )
        return Observed(kind=kind, path=s.path, keys=ks)
    if s.kind == "database":
        query = next(
            (
                render(n.args[0])
                for n in ast.walk(node)
                if isinstance(n, ast.Call) and name_of(n)[1] in ("execute", "read_sql", "read_sql_query") and n.args
            ),
            "",
        )
        return Observed(kind="database", path=s.path, keys=ks, detail=query)
    kind = {"digest": "digest", "network": "network", "listing": "listing", "exists": "existence", "call": "value"}[
        s.kind
    ]
    return Observed(kind=kind, path=s.path, keys=ks, detail=s.detail)


def _file_read(node: ast.AST) -> str | None:
    """The path when an expression is a file's content through transparent steps only (`.strip()`, `json.load`)."""
    n = node
    for _ in range(30):
        srcs = sources(n)
        if srcs and srcs[0].kind == "read" and _is_read_call(n):
            return srcs[0].path
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in TRANSPARENT:
            n = (
                n.func.value
                if n.func.attr not in ("load", "loads", "safe_load", "reader", "DictReader") or not n.args
                else n.args[0]
            )
        elif isinstance(n, ast.Call) and name_of(n)[1] in TRANSPARENT and n.args:
            n = n.args[0]
        elif isinstance(n, ast.Subscript):
            n = n.value
        else:
            return None
    return None


def _is_read_call(n: ast.AST) -> bool:
    return (
        isinstance(n, ast.Call)
        and bool(sources(n))
        and sources(n)[0].kind == "read"
        and name_of(n)[1]
        in ("open", "read_text", "read_bytes", "loadtxt", "read_csv", "read_json", "imread", "genfromtxt")
    )


def values_of(node: ast.AST) -> list[str] | None:
    """Every literal a side stands for: one, or each case of a parametrize argument or a loop over cases."""
    cases = getattr(node, "_values", None)
    if cases:
        vals = [literal(v) for v in cases]
        return None if any(v is NOT_LITERAL for v in vals) else [text(v) for v in vals]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
        inner = values_of(node.func.value)  # `expected.strip()` of a parametrized `expected`
        if inner is not None and getattr(node.func.value, "_values", None):
            return inner
    if (
        isinstance(node, ast.Call)
        and name_of(node)[1] in ("str", "int", "float")
        and len(node.args) == 1
        and getattr(node.args[0], "_values", None)
    ):
        return values_of(node.args[0])  # `str(steps)` of a parametrized `steps`
    value = literal(node)
    return None if value is NOT_LITERAL or value is None or isinstance(value, bool) else [text(value)]


def expected(node: ast.AST, inputs_names: list[str], observed_agent: bool, runs: frozenset[str]) -> Expected:
    """The expected side (see the module docstring)."""
    vals = values_of(node)
    if vals is not None:
        return Expected(kind="literal", value=vals[0] if len(vals) == 1 else None, values=vals if len(vals) > 1 else [])
    path = _file_read(node)
    if path is not None:
        return Expected(kind="file", path=path)
    srcs = sources(node, runs)
    if observed_agent and agentish(srcs) and any(s.kind == "run" for s in srcs):
        return Expected(kind="agent_output", inputs=[" ".join(s.command) for s in srcs if s.kind == "run"])
    inputs = [s.path or " ".join(s.command) or s.detail for s in srcs] + inputs_names
    return Expected(kind="computed", inputs=[i for i in dict.fromkeys(inputs) if i])


def tolerance(call: ast.Call, names: tuple[str, ...]) -> str | None:
    """The tolerance a closeness check gives (`rel_tol=1e-6`, `places=3`), as written."""
    for k in call.keywords:
        if k.arg in names:
            v = literal(k.value)
            return text(v) if v is not NOT_LITERAL else code(k.value)
    extra = call.args[2:3]
    return code(extra[0]) if extra else None


def case_insensitive(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and name_of(n)[1] in CASE_FOLDS for n in ast.walk(node)) or any(
        isinstance(n, ast.Attribute) and n.attr in ("I", "IGNORECASE") and name_of(n)[0] == "re" for n in ast.walk(node)
    )


def self_report(obs: Observed, node: ast.AST, exp: Expected) -> Observed:
    """A value the agent's program reports about itself: a labelled number its output is parsed for (`time:`),
    or a verdict word it prints (`PASSED`), checked in its stdout or output file."""
    if obs.kind not in ("stdout", "stderr", "output_file"):
        return obs
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and name_of(n)[1] in REGEX_CALLS and name_of(n)[0] == "re" and n.args:
            pat = literal(n.args[0])
            if isinstance(pat, str) and "(" in pat and LABEL.search(pat):
                return obs.model_copy(update={"kind": "self_report", "detail": pat})
    words = [exp.value or "", *exp.values]
    if exp.kind in ("literal", "pattern") and any(
        SELF_WORDS.fullmatch(w.strip()) or (exp.kind == "pattern" and SELF_WORDS.search(w)) for w in words if w
    ):
        return obs.model_copy(update={"kind": "self_report", "detail": obs.detail or " ".join(obs.command)})
    return obs
