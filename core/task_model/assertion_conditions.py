"""How one Python condition reads as a check (core/task_model/assertion_python.py walks the tests and finds the
conditions): an assertion call as the condition it checks (`self.assertEqual(a, b)` is `a == b`), a comparison's
observed and expected sides, and a condition that is not a comparison (a regex, a prefix, a closeness, an
existence, a bare truth). The sides come expanded (core/task_model/assertion_scope.py); what each side reads
and is, from core/task_model/assertion_kinds.py.
"""

from __future__ import annotations

import ast

from envqa.core.task_model.assertion_kinds import (
    CLOSE,
    agentish,
    case_insensitive,
    expected,
    observed,
    tolerance,
    values_of,
)
from envqa.core.task_model.assertion_values import literal, name_of, render, sources, text
from envqa.core.task_model.assertions import Expected, Hop, Observed

ORDERED = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", **ORDERED}
EQUAL_CALLS = {
    "assertEqual",
    "assertEquals",
    "assertListEqual",
    "assertDictEqual",
    "assertSetEqual",
    "assertTupleEqual",
    "assertSequenceEqual",
    "assertMultiLineEqual",
    "assertCountEqual",
    "assert_equal",
    "assert_array_equal",
    "assert_frame_equal",
    "assert_series_equal",
    "assert_string_equal",
}
PAIR_CALLS = {
    "assertNotEqual": ast.NotEq,
    "assertIn": ast.In,
    "assertNotIn": ast.NotIn,
    "assertIs": ast.Is,
    "assertIsNot": ast.IsNot,
    "assertGreater": ast.Gt,
    "assertGreaterEqual": ast.GtE,
    "assertLess": ast.Lt,
    "assertLessEqual": ast.LtE,
    **dict.fromkeys(EQUAL_CALLS, ast.Eq),
}
CLOSE_CALLS = {"assertAlmostEqual", "assert_allclose", "assert_almost_equal", "assert_array_almost_equal"}


def call_condition(n: ast.Call, name: str) -> tuple[ast.AST, bool] | None:
    """An assertion call as the condition it checks: `self.assertEqual(a, b)` is `a == b`, `assertFalse(x)` is
    `not x`, `np.testing.assert_allclose(a, b, rtol=...)` a closeness check."""
    a = n.args
    if name in PAIR_CALLS and len(a) >= 2:
        return ast.copy_location(ast.Compare(left=a[0], ops=[PAIR_CALLS[name]()], comparators=[a[1]]), n), False
    if name in CLOSE_CALLS and len(a) >= 2:
        return n, False
    if name in ("assertTrue", "assert_", "assertFalse") and a:
        return a[0], name == "assertFalse"
    if name in ("assertIsNone", "assertIsNotNone") and a:
        cmp = ast.Compare(
            left=a[0], ops=[ast.Is() if name == "assertIsNone" else ast.IsNot()], comparators=[ast.Constant(None)]
        )
        return ast.copy_location(cmp, n), False
    if name in ("assertRegex", "assertNotRegex", "assertRegexpMatches") and len(a) >= 2:
        call = ast.Call(
            func=ast.Attribute(value=ast.Name(id="re", ctx=ast.Load()), attr="search", ctx=ast.Load()),
            args=[a[1], a[0]],
            keywords=[],
        )
        return ast.copy_location(call, n), name == "assertNotRegex"
    if name in ("assertIsInstance", "assertTrue") and a:
        return n, False
    if name == "assertTrue" or (
        name.startswith("assert_") and name_of(n)[0] in ("np", "numpy", "testing", "npt", "pdt", "pd")
    ):
        return (n, False) if a else None
    return None


def _literal(values: list[str], side: ast.AST, kind: str = "literal") -> Expected:
    """Literals compared with `side`: one value, or every value when a check runs over several."""
    return Expected(
        kind=kind,
        value=values[0] if len(values) == 1 else None,
        values=values if len(values) > 1 else [],
        case_sensitive=not case_insensitive(side),
    )


def _approx(a: ast.AST, b: ast.AST, runs: frozenset[str]) -> tuple[str, Observed, Expected] | None:
    approx = next((s for s in (b, a) if isinstance(s, ast.Call) and name_of(s)[1] == "approx" and s.args), None)
    if approx is None:
        return None
    other = a if approx is b else b
    ref = values_of(approx.args[0])
    exp = Expected(kind="threshold", value=ref[0] if ref else None, tolerance=tolerance(approx, CLOSE["approx"]))
    return "approx", observed(other, runs), exp


def _membership(a: ast.AST, op: str, b: ast.AST, lh: list[Hop], runs: frozenset[str]) -> tuple[str, Observed, Expected]:
    """`x in y`: a literal in the output is a substring pattern; the output in a literal set is one of them."""
    av, bv = values_of(a), values_of(b)
    if (av is not None and bv is None and isinstance(literal(a), (str, bytes))) or (
        av and bv is None and getattr(a, "_values", None)
    ):
        exp = _literal(av, b, "pattern").model_copy(update={"pattern_kind": "substring"})
        return op, observed(b, runs), exp
    members = literal(b)
    if isinstance(members, (list, tuple, set, frozenset, dict)):
        return op, observed(a, runs), Expected(kind="literal", values=sorted(text(v) for v in members))
    return op, observed(b, runs), expected(a, _names(lh), True, runs)


def _ordered(
    a: ast.AST, op: str, b: ast.AST, lh: list[Hop], rh: list[Hop], runs: frozenset[str]
) -> tuple[str, Observed, Expected]:
    """An ordered comparison: a bound, written on either side."""
    av, bv = values_of(a), values_of(b)
    if bv is not None or av is not None:
        obs_side, bound, op = (a, bv, op) if bv is not None else (b, av, FLIPPED[op])
        exp = Expected(
            kind="threshold",
            value=bound[0] if bound and len(bound) == 1 else None,
            values=bound if bound and len(bound) > 1 else [],
        )
        return op, observed(obs_side, runs), exp
    swap = agentish(sources(b, runs)) and not agentish(sources(a, runs))
    o, e, eh = (b, a, lh) if swap else (a, b, rh)
    exp = expected(e, _names(eh), True, runs)
    return (
        (FLIPPED[op] if swap else op),
        observed(o, runs),
        Expected(kind="threshold", inputs=exp.inputs or [render(e)]),
    )


def compared(
    a: ast.AST, op: str, b: ast.AST, lh: list[Hop], rh: list[Hop], runs: frozenset[str]
) -> tuple[str, Observed, Expected]:
    """A comparison's observed and expected sides (core/task_model/assertion_kinds.py)."""
    close = _approx(a, b, runs)
    if close is not None:
        return close
    if op in ("in", "not in"):
        return _membership(a, op, b, lh, runs)
    if op in FLIPPED:
        return _ordered(a, op, b, lh, rh, runs)
    av, bv = values_of(a), values_of(b)
    if bv is not None:
        return op, observed(a, runs), _literal(bv, a)
    if av is not None:
        return op, observed(b, runs), _literal(av, b)
    swap = agentish(sources(b, runs)) and not agentish(sources(a, runs))
    o, e, eh = (b, a, lh) if swap else (a, b, rh)
    return op, observed(o, runs), expected(e, _names(eh), agentish(sources(o, runs)), runs)


def _names(hops: list[Hop]) -> list[str]:
    return [h.name for h in hops if h.kind in ("constant", "fixture", "parametrize", "helper", "import") and h.name]


def _called(c: ast.Call, runs: frozenset[str]) -> tuple[str, Observed, Expected] | None:
    """A check spelt as a call: `re.search`, `startswith`/`endswith`, `isclose`, `filecmp.cmp`."""
    owner, name = name_of(c)
    if owner == "re" and name in ("search", "match", "fullmatch", "findall") and len(c.args) >= 2:
        pat = literal(c.args[0])
        exp = Expected(
            kind="pattern",
            pattern_kind="regex",
            value=text(pat) if isinstance(pat, str) else render(c.args[0]),
            case_sensitive=not case_insensitive(
                ast.Tuple(elts=c.args[2:] + [k.value for k in c.keywords], ctx=ast.Load())
            ),
        )
        obs = observed(c.args[1], runs)
        return "matches", obs, exp  # the caller reads a self-report over the whole condition
    if name in ("startswith", "endswith") and isinstance(c.func, ast.Attribute) and c.args:
        vals = values_of(c.args[0])
        exp = Expected(
            kind="pattern",
            pattern_kind="prefix" if name == "startswith" else "suffix",
            value=vals[0] if vals else render(c.args[0]),
        )
        return name, observed(c.func.value, runs), exp
    if (name in CLOSE or name in CLOSE_CALLS) and len(c.args) >= 2:
        x, y = c.args[0], c.args[1]
        if values_of(x) is not None or (agentish(sources(y, runs)) and not agentish(sources(x, runs))):
            x, y = y, x
        ref = values_of(y)
        exp = Expected(
            kind="threshold",
            value=ref[0] if ref and len(ref) == 1 else None,
            tolerance=tolerance(c, CLOSE.get(name, ("rtol", "atol", "places", "delta", "decimal"))),
            inputs=[] if ref else [render(y)],
        )
        return "isclose", observed(x, runs), exp
    if name in ("cmp",) and owner == "filecmp" and len(c.args) >= 2:
        return (
            "same-file",
            Observed(kind="output_file", path=render(c.args[0])),
            Expected(kind="file", path=render(c.args[1])),
        )
    return None


def single(c: ast.AST, runs: frozenset[str]) -> tuple[str, Observed, Expected]:
    """A condition that is not a comparison: a regex, a prefix or suffix, a closeness, an existence, a truth."""
    called = _called(c, runs) if isinstance(c, ast.Call) else None
    if called is not None:
        return called
    srcs = sources(c, runs)
    if srcs and srcs[0].kind == "exists" and isinstance(c, ast.Call):
        return "exists", Observed(kind="existence", path=srcs[0].path), Expected(kind="exists")
    obs = observed(c, runs)
    return "truthy", obs, Expected(kind="truthy")
