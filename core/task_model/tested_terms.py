"""What the verifier's checks require of the agent's program beyond paths (issue 51 part 3), from the assertion model:
the command-line flags the tests pass to the agent's program, the JSON keys they index in its output, and the
literals they compare case-sensitively (held against the instruction's spelling by core/consistency/compare.py).

A flag or key is stated when it appears, as a word, in the instruction or in a file the instruction points to (a
path it names that the image gets from the build context, a document it names by file name), with or without its
leading dashes, in snake_case, camelCase, kebab-case or as words apart. A requirement is only the agent's to know
when the program is the agent's to write: a program the image already holds defines its own flags (its source and
usage text state them), and a system tool's flags (`curl -s`) are nobody's requirement. Keys are required of an
output the agent produces. Deliberately narrow: a warning-level rule that fires on many published tasks is noise.
"""

from __future__ import annotations

import re
from itertools import islice
from pathlib import Path, PurePosixPath

from envqa.core.consistency.compare import UNSTATED, Mismatch
from envqa.core.consistency.guards import TaskFacts, config_path, system_path
from envqa.core.consistency.model import Requirement
from envqa.core.defaults import TESTED_TERMS_MAX_DOC_BYTES as MAX_DOC_BYTES
from envqa.core.defaults import TESTED_TERMS_MAX_DOCS as MAX_DOCS
from envqa.core.defaults import TESTED_TERMS_MAX_WALK as MAX_WALK
from envqa.core.defaults import TESTED_TERMS_MIN_KEY_CHARS as MIN_KEY_CHARS
from envqa.core.environment import Environment
from envqa.core.task_model.assertions import Assertion
from envqa.core.task_model.provenance import Provenance

RUNNERS = {"python", "python3", "node", "bash", "sh", "ruby", "perl", "java", "deno", "bun", "npx", "uv", "php"}
PROGRAM_OUTPUTS = ("stdout", "stderr", "exit_code")
KEYED = ("output_file", "stdout", "value")
DOC_NAME = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:md|txt|rst|json|ya?ml|toml|html|proto|graphql|ini|csv))\b"
)
PLACEHOLDER = re.compile(r"(?:[A-Z][A-Z0-9]+|<[A-Za-z][\w ]*>|\{[A-Za-z][\w ]*\})")  # NAME, <name>, {name}
FLAG = re.compile(r"^--?([A-Za-z][\w-]*)(?:=.*)?$")


def _words(name: str) -> list[str]:
    """`total_count`, `totalCount`, `total-count`, `TotalCount` -> ["total", "count"]."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [w.lower() for w in re.split(r"[\s_\-.]+", spaced) if w]


def stated_in(name: str, text: str) -> bool:
    """The flag or key as a word of `text`, in any of its spellings (case-insensitive, word boundaries), or built
    by a name template the text gives (`_templated`)."""
    words = _words(name)
    if not words:
        return True
    pattern = r"(?<![A-Za-z0-9])" + r"[\s_\-]?".join(re.escape(w) for w in words) + r"(?![A-Za-z0-9])"
    return re.search(pattern, text, re.I) is not None or _templated(name, text)


def _templated(name: str, text: str) -> bool:
    """`input_fwd` under "headers are `NAME_DIR`, NAME one of input, egfp; DIR fwd or rev": the text gives a template
    of placeholders joined by the name's own separator (`NAME_DIR`, `<name>_<dir>`, `{name}-{dir}`), as many as the
    name has parts, and states every part as a word."""
    parts = re.split(r"([_\-.])", name)
    pieces, seps = parts[::2], set(parts[1::2])
    if len(pieces) < 2 or len(seps) != 1 or not all(pieces):
        return False
    sep = re.escape(seps.pop())
    slot = PLACEHOLDER.pattern
    template = re.compile(rf"(?<![\w<{{]){slot}(?:{sep}{slot}){{{len(pieces) - 1}}}(?![\w>}}]|{sep})")
    if not template.search(text):
        return False
    return all(re.search(rf"(?<![A-Za-z0-9]){re.escape(p)}(?![A-Za-z0-9])", text, re.I) for p in pieces)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace") if path.is_file() and path.stat().st_size <= MAX_DOC_BYTES else ""
    except OSError:
        return ""


def pointed_docs(env: Environment, facts: TaskFacts, provenance: Provenance) -> list[Path]:
    """The files the instruction points to that the task ships: an absolute path it names that a COPY puts in the
    image (a folder: the files under it), and a document it names by file name (`docs/API.md`, `schema.json`)."""
    context = env.build_context
    out: list[Path] = []
    for claim in facts.instruction.of("path"):
        p = provenance.absolute(claim.value.rstrip("/"))
        origins = [o for path, o in provenance.image.items() if path == p or path.startswith(p + "/")]
        out += [context / o.source for o in origins[:MAX_DOCS] if o.source]
    names = {m.group(1) for m in DOC_NAME.finditer(facts.instruction.text)}
    if names and context.is_dir():
        for f in islice(context.rglob("*"), MAX_WALK):
            if f.is_file() and any(f.as_posix().endswith("/" + n) or f.name == n for n in names):
                out.append(f)
    return list(dict.fromkeys(out))[:MAX_DOCS]


def docs_text(env: Environment, facts: TaskFacts, provenance: Provenance) -> str:
    """The instruction and the files it points to, as one text to look a requirement up in."""
    return "\n".join([facts.instruction.text] + [_read(p) for p in pointed_docs(env, facts, provenance)])


def program_of(command: list[str]) -> str | None:
    """The program a command runs: its first word, or the script a runner (`python3 x.py`, `node x.js`) is given."""
    words = list(command)
    if words and PurePosixPath(words[0]).name in RUNNERS:
        rest = [w for w in words[1:] if not w.startswith("-")]
        return rest[0] if rest else None
    return words[0] if words else None


def agents_program(program: str | None, facts: TaskFacts, provenance: Provenance) -> bool:
    """The program is the agent's to write: not a system tool, not the tests' own, not a file the image already
    holds (whose source states its flags), and the instruction or the reference solution names it."""
    if not program or "$" in program:
        return False
    if not program.startswith("/"):  # a bare name: the agent's only when the oracle writes a program by that name
        written = any(PurePosixPath(w).name == program for w in facts.oracle_writes)  # not `/etc/<name>/` of a package
        return written and not facts.in_image(program)
    path = provenance.absolute(program)
    if system_path(path) or config_path(path) or facts.test_owned(path) or provenance.origin(path).in_image:
        return False
    return facts.instruction.mentions_file(path) or path in facts.oracle_writes


def _requirement(kind: str, value: str, a: Assertion) -> Requirement:
    return Requirement(kind, value, "exec" if kind == "flag" else "read", a.file, a.line, a.code)


def _via(a: Assertion) -> tuple[str, ...]:
    return tuple(f"{h.file}:{h.line}: {h.code}" for h in a.hops if (h.file, h.line) != (a.file, a.line))[:4]


def _flags(a: Assertion) -> list[str]:
    return [f for f in a.observes.flags if FLAG.match(f)]


def _flag_name(flag: str) -> str:
    m = FLAG.match(flag)
    return m.group(1) if m else flag


def _flag_stated(flag: str, text: str) -> bool:
    name = _flag_name(flag)
    if len(name) == 1:  # `-n` is stated only as itself: a one-letter word is anywhere
        return re.search(r"(?<![\w-])-" + re.escape(name) + r"\b", text) is not None
    return stated_in(name, text)


def _claim_of_program(facts: TaskFacts, program: str):
    """The instruction's line that names the program (the line the flag is missing from), if any."""
    name = PurePosixPath(program).name
    return next((c for c in facts.instruction.claims if c.value.rstrip("/").endswith(name)), None)


def flag_key_mismatches(
    env: Environment, facts: TaskFacts, records: list[Assertion], prov: Provenance
) -> list[Mismatch]:
    """Flags and keys the checks require that neither the instruction nor the files it points to state."""
    text: str | None = None
    out: list[Mismatch] = []
    for a in records:
        program = program_of(a.observes.command)
        wanted: list[tuple[str, str]] = []
        runs_agents = a.observes.kind in PROGRAM_OUTPUTS and agents_program(program, facts, prov)
        if runs_agents:
            wanted += [("flag", f.split("=", 1)[0]) for f in _flags(a)]
        path = a.observes.path
        produced = bool(path) and facts.produced(path) and not facts.test_owned(path) and not system_path(path)  # type: ignore[arg-type]
        if a.observes.kind in KEYED and (produced or (a.observes.kind == "stdout" and runs_agents)):
            wanted += [("key", k) for k in a.observes.keys if not re.fullmatch(r"-?\d+", k) and len(k) > MIN_KEY_CHARS]
        for what, value in wanted:
            text = docs_text(env, facts, prov) if text is None else text
            stated = _flag_stated(value, text) if what == "flag" else stated_in(value, text)
            if not stated:
                claim = _claim_of_program(facts, program) if what == "flag" and program else None
                out.append(Mismatch(UNSTATED, what, value, _requirement(what, value, a), None, claim, _via(a)))
    return out


def compared_requirements(records: list[Assertion]) -> list[Requirement]:
    """The literals checks compare with the agent's output, as the spelling comparison reads them ("cs": compared
    case-sensitively): every language's checks, with values resolved through helpers and constants."""
    out = []
    for a in records:
        if a.observes.kind not in ("stdout", "stderr", "output_file", "value") or a.negated:
            continue
        if a.expected.kind not in ("literal", "pattern") or a.expected.pattern_kind == "regex":
            continue
        for v in a.expected.values or ([a.expected.value] if a.expected.value else []):
            out.append(Requirement("compared", v, "cs" if a.expected.case_sensitive else "ci", a.file, a.line, a.code))
    return out


def database_requirements(records: list[Assertion]) -> list[Requirement]:
    """The databases whose contents a check compares with a fixed value ("state": the agent must leave them as
    they are), one per database, cited at its first such check: whatever the spelling that reaches the connection
    (a helper's argument, a fixture, a unittest method), the records resolve it."""
    out: dict[str, Requirement] = {}
    for a in records:
        path = a.observes.path
        if a.observes.kind == "database" and path and path.startswith("/") and a.expected.kind == "literal":
            out.setdefault(path, Requirement("path", path, "state", a.file, a.line, a.code))
    return list(out.values())


def checked_paths(records: list[Assertion]) -> list[Requirement]:
    """The files whose content or existence a check looks at ("read": the agent must produce them), cited at the
    check: the path the records resolve through a fixture, a helper or a constant, where the test reader sees only
    the line that names it."""
    out: dict[str, Requirement] = {}
    for a in records:
        path = a.observes.path
        if not path or "{" in path:  # an f-string part the records could not resolve: not one file
            continue
        if a.observes.kind in ("output_file", "existence") and path.startswith("/") and not a.negated:
            out.setdefault(path, Requirement("path", path, "read", a.file, a.line, a.code))
    return list(out.values())
