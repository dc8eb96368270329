"""What an instruction commits to: absolute paths, URLs (scheme, host, port), ports, the names it gives to
users, branches, hosts, services and databases, its literal terms (code spans, quoted strings, technical
tokens such as `SHA-256`) and the number of decimals it asks for. Regexes over prose on purpose: an
instruction is Markdown written for a person, and every claim keeps its line for the evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

PATH = re.compile(r"(?<![\w.:/~$@{-])(/(?:[A-Za-z0-9_.@+-]+/)*[A-Za-z0-9_.@+-]*[A-Za-z0-9_@+-]/?)")
URL = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*)://([^\s`'\"<>)\]]+)")
PORT = re.compile(r"\bport\s+(?:number\s+)?`?(\d{2,5})\b", re.I)
HOST_PORT = re.compile(r"\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]):(\d{2,5})\b")
ROLES = {
    "user": "user",
    "username": "user",
    "account": "user",
    "login": "user",
    "branch": "branch",
    "host": "host",
    "hostname": "host",
    "service": "service",
    "database": "database",
    "db": "database",
    "schema": "database",
    "remote": "remote",
}
_ROLE = "|".join(sorted(ROLES, key=len, reverse=True))
QUOTED = r"[`\"'“‘]([A-Za-z0-9_][\w.-]{0,63})[`\"'”’]"
NAME_AFTER = re.compile(rf"\b({_ROLE})s?\s+(?:(?:named|called)\s+)?{QUOTED}", re.I)
NAME_CALLED = re.compile(rf"\b({_ROLE})s?\s+(?:named|called)\s+([A-Za-z0-9_][\w.-]{{0,63}})", re.I)
NAME_BEFORE = re.compile(rf"{QUOTED}\s+({_ROLE})\b", re.I)
USER_AT = re.compile(r"(?<![\w.-])([a-z_][\w.-]{0,31})@([A-Za-z0-9][\w.-]*)(?::|\b)")
CODE = re.compile(r"`([^`\n]{1,200})`")
DQUOTE = re.compile(r"\"([^\"\n]{1,120})\"")
TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*")
NUMBER_UNIT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?([A-Za-z%]{1,5})\b")
DECIMALS = re.compile(
    r"\b(\d|one|two|three|four|five|six)\s+(?:decimal\s+(?:places|digits)|digits\s+after\s+the\s+"
    r"(?:decimal\s+)?point)",
    re.I,
)
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


@dataclass(frozen=True)
class Claim:
    """One thing the instruction states. `role`: for a name, user/branch/host/service/database/remote; for a
    path, "dir" when written with a trailing slash; for a term, "code" when it is a code span or quoted."""

    kind: str  # path | url | port | name | term | decimals | number-unit
    value: str
    line: int
    text: str
    role: str = ""


@dataclass
class Instruction:
    """An instruction file's text and claims; `file` is as findings name it (instruction.md, steps/x/...)."""

    file: str
    text: str
    claims: list[Claim]

    def of(self, kind: str, role: str | None = None) -> list[Claim]:
        return [c for c in self.claims if c.kind == kind and (role is None or c.role == role)]

    def mentions(self, literal: str) -> bool:
        """The literal appears as itself (not inside a longer name)."""
        if not literal:
            return False
        return re.search(r"(?<![\w.-])" + re.escape(literal) + r"(?![\w-])", self.text) is not None

    def mentions_file(self, path: str) -> bool:
        """The path, or its file name as a word (`result.txt` in /app/result.txt), or its path relative to /app."""
        p = PurePosixPath(path.rstrip("/"))
        rel = str(p.relative_to("/app")) if str(p).startswith("/app/") else ""
        return (
            self.mentions(path.rstrip("/"))
            or (len(p.name) >= 3 and self.mentions(p.name))
            or bool(rel and self.mentions(rel))
        )

    def line_of(self, literal: str) -> tuple[int, str]:
        for n, line in enumerate(self.text.splitlines(), start=1):
            if literal in line:
                return n, line.strip()
        return 1, (self.text.strip().splitlines() or [""])[0].strip()


def _clean(value: str) -> str:
    return value.rstrip(".,;:!?")


def _line_claims(n: int, line: str) -> list[Claim]:
    text = line.strip()
    out: list[Claim] = []
    urls = [(m.group(1).lower(), _clean(m.group(2))) for m in URL.finditer(line)]
    out += [Claim("url", f"{scheme}://{rest}", n, text) for scheme, rest in urls]
    no_urls = URL.sub(" ", line)
    for m in PATH.finditer(no_urls):
        value = _clean(m.group(1))
        if len(value) > 1 and not value.startswith("//"):
            out.append(Claim("path", value, n, text, "dir" if value.endswith("/") else ""))
    out += [Claim("port", m.group(1), n, text) for m in PORT.finditer(line)]
    out += [Claim("port", m.group(1), n, text) for m in HOST_PORT.finditer(line)]
    for pattern, role_group, name_group in ((NAME_AFTER, 1, 2), (NAME_CALLED, 1, 2), (NAME_BEFORE, 2, 1)):
        for m in pattern.finditer(line):
            out.append(Claim("name", m.group(name_group), n, text, ROLES[m.group(role_group).lower()]))
    for m in USER_AT.finditer(no_urls):
        out += [Claim("name", m.group(1), n, text, "user"), Claim("name", m.group(2), n, text, "host")]
    for m in DECIMALS.finditer(line):
        word = m.group(1).lower()
        out.append(Claim("decimals", str(WORDS.get(word) or int(word)), n, text))
    out += [Claim("number-unit", f"{m.group(1)} {m.group(2)}", n, text) for m in NUMBER_UNIT.finditer(no_urls)]
    quoted = [m.group(1) for m in CODE.finditer(line)] + [m.group(1) for m in DQUOTE.finditer(line)]
    out += [Claim("term", q, n, text, "code") for q in quoted]
    out += [Claim("term", m.group(0), n, text) for m in TOKEN.finditer(no_urls)]
    return out


def read_instruction(file: str, text: str) -> Instruction:
    claims: list[Claim] = []
    for n, line in enumerate(text.splitlines(), start=1):
        claims += _line_claims(n, line)
    return Instruction(file=file, text=text, claims=claims)
