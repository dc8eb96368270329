"""The checks a compiled-language test file makes, as (node, op, negated, actual, expected) before its operands
are resolved (core/task_model/compiled_operands.py). Shared by every language of core/parsers/tree_sitter.py.

Recognised: `assert(...)`, gtest's `ASSERT_*`/`EXPECT_*`, Catch2's `CHECK`/`REQUIRE`; Node's `assert.*` and
Jest/Vitest's `expect(x).toBe(y)` (`.not` too); Go's testify `assert.*`/`require.*` and `if got != want {
t.Errorf(…) }`; Rust's `assert!`, `assert_eq!`, `assert_ne!`; JUnit's `assertEquals`/`assertTrue`/…, AssertJ's
`assertThat(x).isEqualTo(y)`; and in every language an `if` whose body fails the run (`return 1`, `exit(1)`,
`abort()`, `panic`, `throw`, `t.Fatalf`, `process.exit(1)`, `System.exit(1)`), read as the negation of its
condition. A condition is split into comparisons (`==`, `!=`, `<`, …, `strcmp(a, b) == 0`, `.equals`,
`.includes`/`Contains`/`strstr`, a regex test); anything else is a truth test of the expression.
"""

from __future__ import annotations

from dataclasses import dataclass

from envqa.core.parsers import tree_sitter as ts
from envqa.core.task_model.compiled_operands import CALLS, arguments, callee

BINARY = {  # name -> (op, index of the actual value, index of the expected one); negative: from the end
    "ASSERT_EQ": ("==", 0, 1), "EXPECT_EQ": ("==", 0, 1), "ASSERT_NE": ("!=", 0, 1), "EXPECT_NE": ("!=", 0, 1),
    "ASSERT_STREQ": ("==", 0, 1), "EXPECT_STREQ": ("==", 0, 1), "ASSERT_STRNE": ("!=", 0, 1),
    "EXPECT_STRNE": ("!=", 0, 1), "ASSERT_STRCASEEQ": ("==i", 0, 1), "EXPECT_STRCASEEQ": ("==i", 0, 1),
    "ASSERT_LT": ("<", 0, 1), "EXPECT_LT": ("<", 0, 1), "ASSERT_LE": ("<=", 0, 1), "EXPECT_LE": ("<=", 0, 1),
    "ASSERT_GT": (">", 0, 1), "EXPECT_GT": (">", 0, 1), "ASSERT_GE": (">=", 0, 1), "EXPECT_GE": (">=", 0, 1),
    "ASSERT_FLOAT_EQ": ("isclose", 0, 1), "EXPECT_FLOAT_EQ": ("isclose", 0, 1),
    "ASSERT_DOUBLE_EQ": ("isclose", 0, 1), "EXPECT_DOUBLE_EQ": ("isclose", 0, 1),
    "ASSERT_NEAR": ("isclose", 0, 1), "EXPECT_NEAR": ("isclose", 0, 1),
    "equal": ("==", 0, 1), "strictEqual": ("==", 0, 1), "deepEqual": ("==", 0, 1), "deepStrictEqual": ("==", 0, 1),
    "notEqual": ("!=", 0, 1), "notStrictEqual": ("!=", 0, 1), "notDeepStrictEqual": ("!=", 0, 1),
    "match": ("matches", 0, 1), "doesNotMatch": ("!matches", 0, 1),
    "assert_eq": ("==", 0, 1), "assert_ne": ("!=", 0, 1), "debug_assert_eq": ("==", 0, 1),
    "assertEquals": ("==", -1, -2), "assertNotEquals": ("!=", -1, -2), "assertArrayEquals": ("==", -1, -2),
    "assertSame": ("==", -1, -2), "assertThat": ("truthy", 0, 1),
}  # fmt: skip
TESTIFY = {  # Go testify: the first argument is t
    "Equal": ("==", 2, 1), "EqualValues": ("==", 2, 1), "NotEqual": ("!=", 2, 1), "Contains": ("in", 1, 2),
    "NotContains": ("!in", 1, 2), "Greater": (">", 1, 2), "GreaterOrEqual": (">=", 1, 2), "Less": ("<", 1, 2),
    "LessOrEqual": ("<=", 1, 2), "InDelta": ("isclose", 2, 1), "Regexp": ("matches", 2, 1), "JSONEq": ("==", 2, 1),
    "FileExists": ("exists", 1, None), "DirExists": ("exists", 1, None), "NoError": ("status", 1, None),
    "Nil": ("status", 1, None), "True": ("truthy", 1, None), "False": ("!truthy", 1, None),
}  # fmt: skip
TRUTH = {"assert": False, "ASSERT_TRUE": False, "EXPECT_TRUE": False, "ASSERT_FALSE": True, "EXPECT_FALSE": True}
TRUTH |= {"CHECK": False, "REQUIRE": False, "CHECK_FALSE": True, "REQUIRE_FALSE": True}
TRUTH |= {"debug_assert": False, "assertTrue": False, "assertFalse": True, "assertNotNull": False}
TRUTH |= {"assertNull": True, "assert_true": False}
ASSERT_OBJECTS = {"assert", "require", "t", "Assert", "Assertions"}  # receivers of `ok`, `True`, `equal`...
MATCHERS = {  # expect(x).MATCHER(y)
    "toBe": "==", "toEqual": "==", "toStrictEqual": "==", "toContain": "in", "toMatch": "matches",
    "toBeGreaterThan": ">", "toBeGreaterThanOrEqual": ">=", "toBeLessThan": "<", "toBeLessThanOrEqual": "<=",
    "toBeCloseTo": "isclose", "toBeTruthy": "truthy", "toBeFalsy": "!truthy", "toHaveLength": "len",
    "toContainEqual": "in", "isEqualTo": "==", "contains": "in", "isTrue": "truthy", "isFalse": "!truthy",
    "startsWith": "prefix", "endsWith": "suffix", "matches": "matches", "hasSize": "len", "toBeDefined": "truthy",
}  # fmt: skip
CONTAINS = {"includes": "in", "Contains": "in", "contains": "in", "strstr": "in", "startsWith": "prefix"}
CONTAINS |= {"HasPrefix": "prefix", "starts_with": "prefix", "endsWith": "suffix", "HasSuffix": "suffix"}
CONTAINS |= {"ends_with": "suffix", "test": "matches", "MatchString": "matches", "is_match": "matches"}
CONTAINS |= {"equals": "==", "eq": "==", "equalsIgnoreCase": "==i", "EqualFold": "==i"}
STRCMP = {"strcmp", "strncmp", "memcmp", "strcasecmp", "wcscmp", "compare"}
FAIL_CALLS = {"exit", "_exit", "abort", "Errorf", "Error", "Fatalf", "Fatal", "FailNow", "Fail", "panic", "fail"}
FAIL_CALLS |= {"unreachable", "assert_failed", "quick_exit", "terminate", "Exit"}
COMPARE_OPS = {"==", "!=", "===", "!==", "<", "<=", ">", ">="}
NULLS = {"null", "nil", "nullptr", "null_literal", "none", "undefined"}
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


@dataclass
class Check:
    node: ts.Node  # the assertion (the call, the `if`)
    op: str
    negated: bool
    actual: ts.Node | None
    expected: ts.Node | None
    pattern: str | None = None  # "substring", "prefix", "suffix", "regex" for pattern checks


def _unwrap(node: ts.Node) -> ts.Node:
    while node.type in ("parenthesized_expression", "condition_clause") and ts.named(node):
        node = ts.named(node)[-1]
    return node


def _operator(node: ts.Node) -> str:
    op = ts.field(node, "operator")
    if op is not None:
        return ts.text(op)
    left, right = ts.field(node, "left"), ts.field(node, "right")
    if left is None or right is None:
        return ""
    return ts.text(node)[left.end_byte - node.start_byte : right.start_byte - node.start_byte].strip()


def _is_zero(node: ts.Node | None) -> bool:
    return node is not None and ts.text(node) in ("0", "0L", "0u")


def _is_null(node: ts.Node | None) -> bool:
    return node is not None and (node.type in NULLS or ts.text(node) in ("NULL", "nullptr", "nil", "null"))


def _null_compare(left: ts.Node | None, right: ts.Node | None) -> tuple[ts.Node | None, ts.Node | None] | None:
    """`x == NULL`, `nil != err`: (x, the null), whichever side the null is on; None when neither side is null."""
    if _is_null(right):
        return left, right
    if _is_null(left):
        return right, left
    return None


def condition(node: ts.Node, at: ts.Node, negated: bool) -> list[Check]:
    """The comparisons a condition holds (see the module docstring), each with its sense."""
    node = _unwrap(node)
    op = _operator(node) if node.type == "binary_expression" else ""
    if node.type == "unary_expression" and ts.text(node).startswith("!") and ts.named(node):
        return condition(ts.named(node)[-1], at, not negated)
    if op in ("&&", "||", "and", "or"):
        return condition(ts.field(node, "left"), at, negated) + condition(ts.field(node, "right"), at, negated)
    if op in COMPARE_OPS:
        left, right = ts.field(node, "left"), ts.field(node, "right")
        inner = _unwrap(left) if left is not None else None
        if inner is not None and inner.type in CALLS and callee(inner) in STRCMP and _is_zero(right):
            args = arguments(inner)
            if len(args) >= 2:
                return [Check(at, "==", negated != (op in ("!=", "!==")), args[0], args[1])]
        against_null = _null_compare(left, right) if op in ("==", "===", "!=", "!==") else None
        subject = _unwrap(against_null[0]) if against_null and against_null[0] is not None else None
        if subject is not None and subject.type in CALLS and callee(subject) in CONTAINS:
            # C's `strstr(out, "3") != NULL`: the search found it (`== NULL`: it did not)
            return _call_condition(subject, at, negated != (op in ("==", "===")))
        norm = "==" if op in ("==", "===", "!=", "!==") else op
        return [Check(at, norm, negated != (op in ("!=", "!==")), left, right)]
    if node.type in CALLS:
        return _call_condition(node, at, negated)
    return [Check(at, "truthy", negated, node, None)]


def _call_condition(node: ts.Node, at: ts.Node, negated: bool) -> list[Check]:
    name, args = callee(node), arguments(node)
    recv = receiver(node)
    if name in STRCMP and len(args) >= 2:
        return [Check(at, "==", not negated, args[0], args[1])]  # a bare strcmp is true when they differ
    if name in CONTAINS:
        kind = CONTAINS[name]
        if recv is not None and args:  # x.includes(y), re.test(s)
            subject, wanted = (args[0], recv) if kind == "matches" else (recv, args[0])
        elif len(args) >= 2:  # strings.Contains(s, sub), strstr(s, sub), regexp.MatchString(p, s)
            subject, wanted = (args[1], args[0]) if kind == "matches" else (args[0], args[1])
        else:
            return [Check(at, "truthy", negated, node, None)]
        return [_pattern_check(at, kind, negated, subject, wanted)]
    return [Check(at, "truthy", negated, node, None)]


def _pattern_check(at: ts.Node, kind: str, negated: bool, subject: ts.Node, wanted: ts.Node | None) -> Check:
    if kind in ("==", "==i"):
        return Check(at, kind, negated, subject, wanted)
    pattern = {"in": "substring", "prefix": "prefix", "suffix": "suffix", "matches": "regex"}[kind]
    return Check(at, "in" if kind == "in" else "matches", negated, subject, wanted, pattern)


def receiver(node: ts.Node) -> ts.Node | None:
    """What a method call is called on (`assert` in `assert.equal(…)`, `x` in `x.includes(y)`)."""
    fn = ts.field(node, "function")
    for holder in (fn, node):
        for name in ("object", "operand", "value"):
            got = ts.field(holder, name) if holder is not None and holder.type != "identifier" else None
            if (
                got is not None
                and holder is not None
                and holder.type in ("member_expression", "selector_expression", "field_expression", "method_invocation")
            ):
                return got
    return None


def _pick(args: list[ts.Node], i: int | None) -> ts.Node | None:
    if i is None or not args:
        return None
    return args[i] if -len(args) <= i < len(args) else None


def assertion_call(node: ts.Node, rust_args: list[ts.Node] | None = None) -> list[Check]:
    """The checks of one call (a macro's arguments, read again as expressions, in `rust_args`)."""
    name = callee(node)
    args = rust_args if rust_args is not None else arguments(node)
    recv = receiver(node)
    if name in MATCHERS and recv is not None:
        return _matcher(node, name, args)
    if name in TESTIFY and recv is not None and ts.text(recv) in ("assert", "require"):
        op, a, e = TESTIFY[name]
        return [_binary(node, op, _pick(args, a), _pick(args, e))]
    if name in BINARY and (name != "assertThat" or len(args) >= 2):
        op, a, e = BINARY[name]
        if name in ("assertEquals", "assertNotEquals") and len(args) == 3 and ts.string_value(args[0]) is not None:
            a, e = 2, 1  # JUnit 4's message first
        return [_binary(node, op, _pick(args, a), _pick(args, e))]
    if name in TRUTH and args:  # `assert(f != NULL)` guards as `if (f == NULL) return 1;` does
        return [c for c in condition(args[0], node, TRUTH[name]) if not _guard(c)]
    if name == "ok" and recv is not None and ts.text(recv) in ASSERT_OBJECTS and args:
        return condition(args[0], node, False)
    return []


def _binary(node: ts.Node, op: str, actual: ts.Node | None, expected: ts.Node | None) -> Check:
    negated = op.startswith("!")
    op = "==" if op == "!=" else op[1:] if negated else op
    if op in ("in", "matches"):
        return Check(node, op, negated, actual, expected, "substring" if op == "in" else "regex")
    return Check(node, op, negated, actual, expected)


def _matcher(node: ts.Node, name: str, args: list[ts.Node]) -> list[Check]:
    """`expect(x)[.not].toBe(y)` (Jest, Vitest) and `assertThat(x).isEqualTo(y)` (AssertJ)."""
    negated, subject = False, None
    n = receiver(node)
    while n is not None and n.type in ("member_expression", "field_access"):
        negated = negated != (ts.text(ts.field(n, "property") or ts.field(n, "field")) == "not")
        n = ts.field(n, "object")
    if n is not None and n.type in CALLS and callee(n) in ("expect", "assertThat") and arguments(n):
        subject = arguments(n)[0]
    if subject is None:
        return []
    op = MATCHERS[name]
    if op.startswith("!"):
        op, negated = op[1:], not negated
    expected = args[0] if args else None
    if op in ("in", "matches", "prefix", "suffix"):
        kind = {"in": "substring", "matches": "regex", "prefix": "prefix", "suffix": "suffix"}[op]
        return [Check(node, "in" if op == "in" else "matches", negated, subject, expected, kind)]
    return [Check(node, op, negated, subject, expected)]


def fails(body: ts.Node | None) -> bool:
    """Whether a branch fails the run: a non-zero return, `exit(1)`, `abort()`, `t.Fatalf`, `panic!`, `throw`."""
    for n in ts.walk(body) if body is not None else ():
        if n.type in ("throw_statement", "throw_expression"):
            return True
        if n.type == "return_statement":
            value = ts.named(n)
            word = ts.text(value[0]) if value else ""
            if word and word not in ("0", "true", "EXIT_SUCCESS", "nil", "Ok(())", "null", "undefined"):
                return True
        if n.type in CALLS:
            name = callee(n)
            args = arguments(n)
            first = ts.text(args[0]) if args else ""
            if name in ("exit", "_exit", "Exit", "quick_exit") and first in ("0", "EXIT_SUCCESS"):
                continue
            if name in FAIL_CALLS or (name == "assert" and first in ("false", "0")):
                return True
    return False


def if_checks(node: ts.Node) -> list[Check]:
    """`if (cond) { fail }`: the check is that cond does not hold."""
    cond = ts.field(node, "condition")
    body = ts.field(node, "consequence")
    if cond is None or not fails(body):
        return []
    return [c for c in condition(cond, node, True) if not _guard(c)]


def _guard(c: Check) -> bool:
    """An error or null guard, not a check of the outcome: Go's `if err != nil { t.Fatal(err) }`, C's
    `if (f == NULL) return 1;` (a name or field compared with null; a call's result compared with null, such
    as `strstr(…) == NULL`, is read by `condition` as what the call tests)."""
    null = _null_compare(c.actual, c.expected) if c.op == "==" and c.pattern is None else None
    if null is None or null[0] is None:
        return False
    return _unwrap(null[0]).type in ("identifier", "field_expression", "selector_expression", "member_expression")


def rust_macro_args(node: ts.Node) -> list[ts.Node] | None:
    """A Rust macro's arguments as expressions: its token tree read again as a tuple expression, at the lines
    it holds in the file (so names resolve against the declarations above it)."""
    tree = next((c for c in node.named_children if c.type == "token_tree"), None)
    if tree is None:
        return None
    inner = ts.text(tree)[1:-1]
    pad = "\n" * (ts.line(tree) - 1)
    root = ts.parse((pad + "fn __envqa() { let _ = (" + inner + ",); }").encode(), "rust")
    tup = next((n for n in ts.walk(root) if n.type == "tuple_expression"), None)
    return ts.named(tup) if tup is not None else None
