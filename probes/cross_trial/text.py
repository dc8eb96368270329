"""What a failure message says, read without a model: the wrong value an agent produced and the value the test
wanted, and the literals a message or a command carries.

The cross-trial rules compare these across trials: the same wrong value from two models is a converging wrong
answer; an expected literal the instruction spells differently is an unstated requirement; a literal an agent
wrote after it appeared in the verifier's output (and nowhere before) was copied. Messages come from many
harnesses and test frameworks (pytest's `assert a == b` and its `-rA` summary, unittest's `x != y`, "expected X,
got Y", "Expected: X / Actual: Y"), so several shapes are read and none is required.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# pytest: "assert 'a,b' == 'a;b'", "AssertionError: assert 42 == 41", "E   assert [1, 2] == [1, 3]"
_ASSERT_EQ = re.compile(r"assert\s+(?P<got>.+?)\s*(?:==|!=)\s*(?P<want>.+?)\s*(?:$|\n|\s+\+\s+where)", re.M)
# unittest: "AssertionError: 'a,b' != 'a;b'" / "42 != 41"
_NE = re.compile(r"AssertionError:\s*(?P<got>.+?)\s+!=\s+(?P<want>.+?)\s*(?:$|\n)", re.M)
# pytest containment: "assert 'sha256' in 'subject: ...'" (the test wants the literal inside the output; not `not in`)
_ASSERT_IN = re.compile(r"""assert\s+(?P<want>'[^'\n]+'|"[^"\n]+")\s+in\s+(?P<got>.+?)\s*(?:$|\n)""", re.M)
# prose: "expected 'x', got 'y'" / "expected x but got y" / "Expected: x ... Actual: y"
_EXPECTED_GOT = re.compile(
    r"expected:?\s*(?P<want>.+?)[,;]?\s+(?:but\s+)?(?:got|found|was|actual):?\s+"
    r"(?P<got>.+?)\s*(?:$|\n)",
    re.I | re.M,
)
_ACTUAL_EXPECTED = re.compile(
    r"(?:actual|got):?\s*(?P<got>.+?)[,;]?\s+(?:but\s+)?expected:?\s+"
    r"(?P<want>.+?)\s*(?:$|\n)",
    re.I | re.M,
)
_QUOTED = re.compile(r"""'([^'\n]{1,200})'|"([^"\n]{1,200})"|`([^`\n]{1,200})`""")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_WORDY = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_\-.][A-Za-z0-9]+)+")  # user_id, user-id, v1.2.3


@dataclass(frozen=True)
class Difference:
    """One assertion difference: what the agent's output was (`got`) and what the test wanted (`want`)."""

    got: str
    want: str

    @property
    def key(self) -> str:
        return f"{self.got} != {self.want}"


def _clean(value: str) -> str:
    value = value.strip().rstrip(".,;")
    if value.startswith("(") and value.count("(") > value.count(")"):  # pytest's `assert ('' == 'x'` wrapper
        value = value[1:].strip()
    if value.endswith(")") and value.count(")") > value.count("("):
        value = value[:-1].strip()
    return re.sub(r"\s+", " ", value)[:200]


_THRESHOLD = re.compile(r"assert\s+(?P<got>-?\d+(?:\.\d+)?)\s*(?P<op>>=|<=|>|<)\s*(?P<want>-?\d+(?:\.\d+)?)\s*$", re.M)
# A verdict, not a measure: a number in a message about an exit or HTTP status (`assert 400 <= 200 where 200 =
# <Response>.status_code`, `assert 1 == 0` where 1 = ....returncode).
STATUS = re.compile(r"returncode|exit[ _]?(code|status)|\bstatus\b|status_code|errno|\.ok\b", re.I)


@dataclass(frozen=True)
class Bound:
    """`assert 0 > 6`: the measured value, the comparison and the bound the test holds it to."""

    got: str
    op: str
    want: str


def bound(message: str) -> Bound | None:
    """The score-against-bound comparison a failure states (`assert 0.59 > 0.62`), not a status; else None."""
    m = _THRESHOLD.search(message or "")
    if m is None or STATUS.search(message):
        return None
    return Bound(m.group("got"), m.group("op"), m.group("want"))


def at_threshold(message: str) -> str | None:
    """`assert 6 > 6`: a score that failed by landing exactly on the bound; the bound, else None."""
    b = bound(message)
    if b and float(b.got) == float(b.want):
        return b.want
    return None


_PATHLIKE = re.compile(r"(?:/|\b[\w.-]+/)[\w./-]*\w\.\w+|/[\w.-]+(?:/[\w.-]+)+")


def failure_subject(message: str) -> str | None:
    """The check and the object of a failure that states no value ("File x/y.json has been changed"): its
    first line with the path kept; None when the line names no path (`assert False` says nothing shared)."""
    first = next((ln.strip() for ln in (message or "").splitlines() if ln.strip()), "")
    if not _PATHLIKE.search(first):
        return None
    return re.sub(r"\b0x[0-9a-f]+\b|\d{5,}", "…", first)[:200]


def same_message(message: str) -> str | None:
    """The whole failure text as one comparable string (whitespace folded, long numbers and addresses dropped),
    when its first line says something a shared `assert False` does not (three words of prose beyond the
    exception's name); else None. The whole text, not its first line: "too few rows / assert 3 > 6" and "too few
    rows / assert 4 > 6" are one check missed by different amounts, a hard task, not one reading."""
    text = (message or "").strip()
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    prose = re.sub(r"^\w*(Error|Exception|Failed)\b:?\s*", "", first)
    if len(re.findall(r"[A-Za-z]{2,}", prose)) < 3 or prose.startswith("assert "):
        return None
    return re.sub(r"\b0x[0-9a-f]+\b|\d{5,}", "…", re.sub(r"\s+", " ", text))[:400]


def one_line(message: str, limit: int = 240) -> str:
    """A failure text as one quotable line: its non-blank lines joined with " / ", cut to `limit`."""
    return " / ".join(ln.strip() for ln in (message or "").splitlines() if ln.strip())[:limit]


def difference(message: str) -> Difference | None:
    """The first assertion difference the message states, normalised (whitespace folded); None if none."""
    for pattern in (_ASSERT_EQ, _NE, _ASSERT_IN, _EXPECTED_GOT, _ACTUAL_EXPECTED):
        m = pattern.search(message or "")
        if m:
            got, want = _clean(m.group("got")), _clean(m.group("want"))
            if got and want and got != want:
                return Difference(got=got, want=want)
    return None


def literals(text: str) -> set[str]:
    """The values a text carries: quoted strings, numbers with 3+ significant characters, dotted/underscored
    identifiers. Short numbers and bare words are left out: they match by accident."""
    out = {next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(text or "")}
    out |= {n for n in _NUMBER.findall(text or "") if len(n.lstrip("-").replace(".", "")) >= 3}
    out |= set(_WORDY.findall(text or ""))
    return {v.strip() for v in out if len(v.strip()) >= 3}


def fold(word: str) -> str:
    """A spelling-insensitive form: user_id, userId, user-id and USER ID all fold to `userid`."""
    return re.sub(r"[^a-z0-9]", "", word.lower())


def differently_worded(want: str, instruction: str) -> str | None:
    """The instruction's own spelling of a literal the test expects, when the instruction words it differently
    (never states it as the test does, but states a spelling that folds to the same); else None."""
    candidates = set(literals(want)) | ({want.strip("'\"`")} if want else set())
    said = literals(instruction) | {w.rstrip(".-") for w in re.findall(r"[A-Za-z][A-Za-z0-9_\-.]*", instruction or "")}
    folded = {}
    for word in said:
        folded.setdefault(fold(word), set()).add(word)
    for literal in sorted(candidates):
        if len(fold(literal)) < 4 or literal in (instruction or ""):
            continue
        variants = folded.get(fold(literal), set()) - {literal}
        if variants:
            return sorted(variants)[0]
    return None
