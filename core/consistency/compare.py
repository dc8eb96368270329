"""The comparison: each literal the tests require, held against what the instruction states.

contradiction  the instruction names a different literal in the same role: a file in the same directory
               (same suffix) or of the same name in a sibling directory, the same URL with another scheme
               or port, another port, another user or branch name. Reported only when the instruction's
               literal is used neither by the tests nor by the oracle (else it is a real, different thing).
unstated       an output the agent must produce (read or run by the tests, not in the image or written by
               the oracle), a file whose hash or mtime the tests assert (it must not change), an account or
               branch the tests look up, none of which the instruction mentions.
spelling       a string the tests compare with the output is a variant of the instruction's wording: case
               (of a literal or an acronym), hyphen/underscore/dot, a number's unit spacing, decimals.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from envqa.core.consistency.claims import NUMBER_UNIT, TOKEN, Claim
from envqa.core.consistency.guards import TaskFacts, config_path, system_path
from envqa.core.consistency.model import Requirement
from envqa.core.consistency.verifier_writes import templated

CONTRADICTS, UNSTATED, SPELLING = (
    "instruction-contradicts-tests",
    "instruction-omits-tested-requirement",
    "instruction-spelling-differs-from-tests",
)
DEFAULT_BRANCHES = {"main", "master", "HEAD", "trunk"}
COMMON_USERS = {"root", "nobody", "www-data", "daemon"}
LOCAL_HOSTS = {"localhost", "127.0.0.1", "0.0.0.0", "::1"}


@dataclass(frozen=True)
class Mismatch:
    """One disagreement. `want` is the tests' literal, `stated` the instruction's (a contradiction or a
    spelling), `what` the kind of literal (path, output, preserve, url, port, user, branch, spelling, decimals)."""

    rule: str
    what: str
    want: str
    test: Requirement
    stated: str | None = None
    claim: Claim | None = None
    via: tuple[str, ...] = ()  # the helpers, fixtures and constants the test's value went through (file:line: code)

    def key(self) -> tuple[str, str, str]:
        return (self.rule, self.what, self.want)


def _norm(s: str) -> str:
    return re.sub(r"[\s_.\-]", "", s.lower())


def _similar_path(a: str, b: str) -> bool:
    """Same role for two paths: same directory and suffix, the same name one directory over, or a directory
    the instruction names beside the one the tests use."""
    pa, pb = PurePosixPath(a.rstrip("/")), PurePosixPath(b.rstrip("/"))
    if pa == pb or len(pa.parts) < 2 or len(pb.parts) < 2 or pa.parts[1] != pb.parts[1]:
        return False
    if pa.parent == pb.parent:
        return bool(pa.suffix) and pa.suffix == pb.suffix
    if pa.name == pb.name and len(pa.parts) == len(pb.parts):
        return True
    is_dir = a.endswith("/") or not pa.suffix
    return is_dir and pb.parent != pa and pb.parent.parent == pa.parent and bool(pb.suffix)


def _path_rivals(facts: TaskFacts, want: str) -> list[Claim]:
    """Instruction paths in the same role as `want` that nothing else uses (the tests, the oracle, the image)."""
    out = []
    for c in facts.instruction.of("path"):
        v = c.value.rstrip("/")
        name = PurePosixPath(v).name
        by_name = bool(PurePosixPath(v).suffix) and name != PurePosixPath(want).name and facts.oracle_uses(name)
        if (
            system_path(v)
            or facts.test_owned(v)
            or facts.tests_use(v)
            or facts.oracle_uses(v)
            or facts.in_image(v)
            or by_name
        ):
            continue
        if _similar_path(c.value, want):
            out.append(c)
    return sorted(out, key=lambda c: -difflib.SequenceMatcher(None, c.value, want).ratio())


def _in_stated_dir(facts: TaskFacts, path: str) -> bool:
    """An output inside a directory the instruction names as such (`/app/out/`, two levels deep or more: "work
    in /app" states no output): "one file per record in /app/out/" states /app/out/1.json."""
    for c in facts.instruction.of("path"):
        d = PurePosixPath(c.value.rstrip("/"))
        if len(d.parts) >= 3 and (c.role == "dir" or not d.suffix) and path.startswith(str(d) + "/"):
            return True
    return False


def path_mismatches(facts: TaskFacts) -> list[Mismatch]:
    out: list[Mismatch] = []
    for r in facts.requirements:
        if r.kind != "path" or r.role not in ("read", "exec", "preserve", "state"):
            continue
        path = r.value.rstrip("/")
        if facts.test_owned(path) or system_path(path) or facts.instruction.mentions(path):
            continue
        role = "read" if r.role in ("preserve", "state") and path in facts.oracle_writes else r.role
        rivals = _path_rivals(facts, path) if facts.produced(path) or role in ("preserve", "state") else []
        if rivals:
            out.append(Mismatch(CONTRADICTS, "path", path, r, rivals[0].value.rstrip("/"), rivals[0]))
        elif config_path(path) or facts.instruction.mentions_file(path) or templated(facts.instruction.text, path):
            continue
        elif role in ("read", "exec") and facts.produced(path) and not _in_stated_dir(facts, path):
            out.append(Mismatch(UNSTATED, "exec" if role == "exec" else "output", path, r))
        elif role in ("preserve", "state") and path not in facts.oracle_writes:
            out.append(Mismatch(UNSTATED, role, path, r))
    return out


SCRATCH = ("/tmp", "/var/tmp", "/run", "/dev/shm")


def scratch_mismatches(facts: TaskFacts) -> list[Mismatch]:
    """A path in a scratch directory (/tmp and the like: the tests' own, usually) that the tests use, the verifier
    never writes, and the oracle makes: the oracle's own choice (a QEMU monitor socket, a pid file), which an agent
    following the instruction cannot guess when the instruction never names it."""
    out = []
    for r in facts.requirements:
        path = r.value.rstrip("/")
        if (
            r.kind != "path"
            or r.role not in ("read", "exec", "mention")
            or not any(path.startswith(root + "/") for root in SCRATCH)
        ):
            continue
        if facts.verifier_written.covers(path) or facts.instruction.mentions(path) or not facts.oracle_uses(path):
            continue
        if PurePosixPath(path).name in facts.test_files or facts.instruction.mentions_file(path):
            continue
        out.append(Mismatch(UNSTATED, "scratch", path, r))
    return out


def _url_key(url: str) -> tuple[str, str, int | None, str] | None:
    try:
        parts = urlsplit(url)
        return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port, parts.path.rstrip("/")
    except ValueError:
        return None


def url_mismatches(facts: TaskFacts) -> list[Mismatch]:
    out: list[Mismatch] = []
    stated = [(c, _url_key(c.value)) for c in facts.instruction.of("url")]
    for r in facts.requirements:
        key = _url_key(r.value) if r.kind == "url" else None
        if key is None or facts.instruction.mentions(r.value) or r.value in facts.instruction.text:
            continue
        for c, ck in stated:
            if ck is None or facts.tests_use(c.value):
                continue
            if ck[1:] == key[1:] and ck[0] != key[0]:
                out.append(Mismatch(CONTRADICTS, "url", r.value, r, c.value, c))
                break
            if ck[0] == key[0] and ck[1] == key[1] and ck[3] == key[3] and ck[2] != key[2]:
                out.append(Mismatch(CONTRADICTS, "port", str(key[2] or ""), r, str(ck[2] or ""), c))
                break
    return out


def port_mismatches(facts: TaskFacts) -> list[Mismatch]:
    stated = facts.instruction.of("port")
    if not stated:
        return []
    used = []
    for r in facts.requirements:
        if r.kind == "port":
            used.append((r.value, r))
        elif r.kind == "url" and (k := _url_key(r.value)) and k[1] in LOCAL_HOSTS and k[2]:
            used.append((str(k[2]), r))
    out = []
    for port, r in used:
        if facts.instruction.mentions(port):
            continue
        rival = next((c for c in stated if not facts.tests_use(c.value)), None)
        if rival is not None:
            out.append(Mismatch(CONTRADICTS, "port", port, r, rival.value, rival))
    return out


def name_mismatches(facts: TaskFacts) -> list[Mismatch]:
    out: list[Mismatch] = []
    for r in facts.requirements:
        if r.kind != "name" or r.role not in ("user", "branch", "host") or facts.instruction.mentions(r.value):
            continue
        rivals = [
            c
            for c in facts.instruction.of("name", r.role)
            if c.value != r.value and not facts.tests_use(c.value) and not facts.oracle_uses(c.value)
        ]
        if rivals:
            out.append(Mismatch(CONTRADICTS, r.role, r.value, r, rivals[0].value, rivals[0]))
        elif r.role == "user" and r.value not in COMMON_USERS | facts.image_users and facts.oracle_uses(r.value):
            out.append(Mismatch(UNSTATED, "user", r.value, r))
        elif r.role == "branch" and r.value not in DEFAULT_BRANCHES and facts.oracle_uses(r.value):
            out.append(Mismatch(UNSTATED, "branch", r.value, r))
    return out


def _acronym(s: str) -> bool:
    return sum(ch.isupper() for ch in s) >= 2


HYPHENATED_QUANTITY = re.compile(r"\d+-[A-Za-z]+")
OPTION_PREFIX = re.compile(r"^--?(?=[A-Za-z])")


def _ordinary_word(token: str, claim: Claim) -> bool:
    """A prose word the tests happen to compare in another form, not a spelling the instruction commits to:
    the same word in capitals or capitalised (a PEM header's PRIVATE KEY, "Proof." opening a proof) against a
    lowercase prose word; a command-line option (-snapshot) or a file suffix (.log) against the bare word; a
    hyphenated quantity ("a 2048-bit key", an adjective) against the same number and unit apart ("2048 bit")."""
    if claim.role == "code":
        return False  # the instruction wrote it as a literal: every difference counts
    core = token.rstrip(".,;:!?")
    if core.lower() == claim.value.lower() and claim.value.islower():
        return True
    if OPTION_PREFIX.sub("", token) == claim.value:
        return True
    if token.startswith(".") and token[1:].lower() == claim.value.lower():
        return True  # a file suffix (`.log`, `.JSON`) against the prose word: a name's ending, not a spelling
    return bool(HYPHENATED_QUANTITY.fullmatch(claim.value) or HYPHENATED_QUANTITY.fullmatch(token)) and (
        claim.value.replace("-", " ") == token.replace("-", " ")
    )


def _variant(token: str, claim: Claim, folded: bool) -> bool:
    """`token` (the tests') is a spelling variant of the instruction's `claim`."""
    if claim.value == token or _norm(claim.value) != _norm(token) or len(_norm(token)) < 3:
        return False
    if _ordinary_word(token, claim):
        return False
    if claim.value.lower() == token.lower():  # case alone
        if folded or (claim.value.isalpha() and claim.value.isupper() and token.islower()):
            return False  # a compare that folds case; an acronym (JSON) in prose against a file extension
        return claim.role == "code" or _acronym(claim.value) or _acronym(token)
    return True


def _decimals(value: str) -> int | None:
    m = re.fullmatch(r"-?\d+\.(\d+)", value.strip())
    return len(m.group(1)) if m else None


def spelling_mismatches(facts: TaskFacts) -> list[Mismatch]:
    out: list[Mismatch] = []
    terms = facts.instruction.of("term")
    units = facts.instruction.of("number-unit")
    decimals = facts.instruction.of("decimals")
    numbers = {float(c.value): c for c in terms if _decimals(c.value) is not None}
    for r in facts.requirements:
        if r.kind != "compared" or not r.value.strip() or r.value in facts.instruction.text:
            continue
        folded = r.role == "ci"
        for token in {m.group(0) for m in TOKEN.finditer(r.value)} | {r.value.strip()}:
            if facts.instruction.mentions(token):
                continue
            hit = next((c for c in terms if _variant(token, c, folded)), None)
            if hit is not None:
                out.append(Mismatch(SPELLING, "spelling", token, r, hit.value, hit))
        for m in NUMBER_UNIT.finditer(r.value):
            hit = next((c for c in units if _norm(c.value) == _norm(m.group(0)) and c.value != m.group(0)), None)
            if hit is not None and not facts.instruction.mentions(m.group(0)):
                out.append(Mismatch(SPELLING, "spelling", m.group(0), r, hit.value, hit))
        places = _decimals(r.value)
        if places is None:
            continue
        said = next((c for c in decimals if int(c.value) != places), None)
        same = numbers.get(float(r.value))
        if said is not None and not any(int(c.value) == places for c in decimals):
            out.append(Mismatch(SPELLING, "decimals", r.value.strip(), r, said.value, said))
        elif same is not None and _decimals(same.value) != places:
            out.append(Mismatch(SPELLING, "decimals", r.value.strip(), r, same.value, same))
    return out


def mismatches(facts: TaskFacts) -> list[Mismatch]:
    """Every mismatch, one per (rule, kind, literal), in the order the tests make them."""
    found = (
        path_mismatches(facts)
        + scratch_mismatches(facts)
        + url_mismatches(facts)
        + port_mismatches(facts)
        + name_mismatches(facts)
        + spelling_mismatches(facts)
    )
    seen: dict[tuple[str, str, str], Mismatch] = {}
    for m in found:
        seen.setdefault(m.key(), m)
    return list(seen.values())
