"""Does the task ask the agent to build a tool that already exists in the image? (the wrapped-tool shortcut)

A "write a compiler" task is solvable by a two-line script that calls gcc, unless the tests notice. To
know which binaries would be a wrapped tool, the instruction is read for what it asks to be *made*, not
for one phrasing: in each sentence, a request (a verb of making, or "X must compile C programs") whose
object names a kind of tool (a compiler for some subset of C, a SHA-256 utility, an interpreter, ...).
A sentence that only mentions a compiler ("the tests build it with gcc", "parse the compiler's log")
asks for nothing. Which of those binaries the image really has is checked separately (`image_tools`),
by the exploit's rehearsal in a container of the image.

Implementing versus using (issue 35): the shortcut exists only where the task asks to *implement* the tool, not
where it asks for a *result* the tool legitimately produces. "Compute the SHA-256 digest of a file", "produce a
checksum manifest" ask for a result: running sha256sum is the right way. So a requested object counts only when
it names a tool (a compiler, a utility, a program, a script, an implementation, ...), when the request is to
implement ("implement SHA-256", "of your own", "from scratch"), or when the tool is forbidden: by the
instruction ("without hashlib", "do not use sha256sum") or by the tests (`assert "hashlib" not in source`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A request to make something, and the words that end its object ("build X *using* gcc").
_MAKE = re.compile(
    r"\b(write|implement|build|create|develop|make|produce|provide|deliver|code up|re-?implement)\b"
    r"|\byour (own|task is|job is)\b|\bdeliverables?\b",
    re.I,
)
# Where a requested object ends: a means ("using gcc"), a sentence end, or a clause that consumes the noun
# instead of being it ("a script that *reads* the compiler's log").
_OBJECT_END = re.compile(
    r"\b(using|with|via|through|by (running|calling|invoking)|from|then|and run|reads?|parses?|"
    r"counts?|analy[sz]es|process(es)?|summari[sz]es|lints?|runs?|calls?|invokes?|uses?|wraps?|"
    r"checks?)\b|[.;!?](\s|$)",
    re.I,
)
_MUST_DO = re.compile(
    r"\b(must|should|shall|needs? to|has to|will)\s+(be able to\s+)?(compile|interpret|assemble|"
    r"hash|checksum|encode|decode)\b",
    re.I,
)
_OBJECT_WORDS = 16
# After "must compile": the word that says the subject itself is compiled, not that it compiles something.
_INTRANSITIVE = re.compile(r"(without|with|cleanly|successfully|correctly|under|on|and|fine)\b|[.,;:!?]", re.I)
# What makes a requested object a tool rather than a result (a digest, a manifest, a file of checksums).
_TOOL_NOUN = re.compile(
    r"\b(compil(er|ers)|translators?|interpreters?|assemblers?|utilit(y|ies)|tools?|programs?|"
    r"scripts?|commands?|cli|command[- ]line|executables?|binar(y|ies)|librar(y|ies)|modules?|"
    r"functions?|implementations?|clones?|replacements?|hashers?|encoders?|decoders?|calculators?|"
    r"formatters?|pretty[- ]?printers?|(de)?compressors?|engines?)\b",
    re.I,
)
_IMPLEMENTING = re.compile(
    r"\b(implement|re-?implement|code up)\b|\byour own\b|\bfrom scratch\b|\bby hand\b"
    r"|\byourself\b",
    re.I,
)
# A prohibition ("without hashlib", "do not use sha256sum", "must not call gcc") and how far its object reaches.
_FORBID = re.compile(
    r"\b(without( using| calling| invoking)?|do not (use|call|invoke|run)|don'?t (use|call|run)|"
    r"must not (use|call|invoke|run)|may not use|(is|are) not allowed|not allowed to use|forbidden|"
    r"no external)\b",
    re.I,
)
_FORBID_WORDS = 14
# A test that rejects a library or program in the agent's work: `assert "hashlib" not in src`, `! grep -q gcc`.
_TEST_FORBIDS = re.compile(
    r"""(["'])(?P<a>[\w.+-]+)\1\s+not\s+in\b|\bassert\s+not\b[^\n]*?["'](?P<b>[\w.+-]+)["']|"""
    r"""!\s*grep\b[^\n|;&]*?\b(?P<c>[\w.+-]+)\s+\S*/""",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`/])|\n\s*\n")
_C = r"(?<![\w+#-])c(?![\w+#-])|\bc(89|99|11)\b|\bansi c\b"


@dataclass(frozen=True)
class ToolKind:
    name: str
    noun: re.Pattern  # in the requested object: what is asked for
    context: re.Pattern | None  # in the same sentence: which language or format (None: the noun says it)
    binaries: frozenset[str]
    libraries: frozenset[str] = frozenset()  # what a prohibition may name instead of a binary ("without hashlib")


def _kind(
    name: str, noun: str, context: str | None, binaries: set[str], libraries: set[str] | frozenset[str] = frozenset()
) -> ToolKind:
    return ToolKind(
        name,
        re.compile(noun, re.I),
        re.compile(context, re.I) if context else None,
        frozenset(binaries),
        frozenset(libraries),
    )


TOOL_KINDS: list[ToolKind] = [
    _kind(
        "c++-compiler",
        r"\bcompil(er|es|e|ing)\b|\btranslat\w*",
        r"\bc\+\+|\bcpp\b",
        {"g++", "c++", "cc1plus", "clang++"},
    ),
    _kind(
        "c-compiler",
        r"\bcompil(er|es|e|ing)\b|\btranslat\w*[^.]*\b(executables?|assembly|machine code|binar(y|ies))",
        _C,
        {"gcc", "cc", "cc1", "clang", "tcc", "x86_64-linux-gnu-gcc-12", "gcc-12", "c99", "c89"},
    ),
    _kind("assembler", r"\bassembler\b", None, {"as", "nasm", "yasm"}),
    _kind(
        "python-interpreter",
        r"\bpython interpreter\b|\binterpret(er|s)? (for|of) (a |the )?(\w+ )?python\b",
        None,
        {"python3", "python"},
    ),
    _kind(
        "lua-interpreter",
        r"\blua interpreter\b|\binterpret(er|s)? (for|of) (a |the )?(\w+ )?lua\b",
        None,
        {"lua", "lua5.1", "lua5.3", "lua5.4", "luajit"},
    ),
    _kind("sha256", r"\bsha-?256\b", None, {"sha256sum", "shasum", "openssl"}, {"hashlib", "cryptography"}),
    _kind("sha1", r"\bsha-?1\b", None, {"sha1sum", "shasum", "openssl"}, {"hashlib", "cryptography"}),
    _kind("md5", r"\bmd5\b", None, {"md5sum", "openssl"}, {"hashlib"}),
    _kind("base64", r"\bbase-?64\b", None, {"base64", "openssl"}),
    _kind("calculator", r"\b(calculator|arbitrary[- ]precision arithmetic)\b", None, {"bc", "dc"}),
    _kind("json-formatter", r"\bjson (pretty[- ]?printer|formatter|query tool)\b", None, {"jq"}),
    _kind(
        "compressor", r"\b(gzip|deflate) (compressor|decompressor|tool|utility)\b", None, {"gzip", "gunzip"}, {"zlib"}
    ),
]


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s and s.strip()]


def _requested_objects(sentence: str) -> list[str]:
    """The tools a sentence asks to be made: the words after each request verb, up to where the object ends,
    kept only when they name a tool or the verb asks to implement (a result, "the SHA-256 digest of X", is not
    a tool: the standard program is the right way to produce it)."""
    out = []
    for m in _MAKE.finditer(sentence):
        rest = sentence[m.end() :]
        end = _OBJECT_END.search(rest)
        obj = " ".join((rest[: end.start()] if end else rest).split()[:_OBJECT_WORDS])
        if _TOOL_NOUN.search(obj) or _IMPLEMENTING.search(m.group(0) + " " + obj):
            out.append(obj)
    for m in _MUST_DO.finditer(sentence):  # "`/app/cc` must compile C programs": the verb is the tool's job
        subject = " ".join(sentence[: m.start()].split()[-6:])
        after = sentence[m.end() :].split()[:1]
        if (
            not (_TOOL_NOUN.search(subject) or "/" in subject)
            or re.search(r"\b(that|which)\s*$", subject)
            or not after
            or _INTRANSITIVE.match(after[0])
        ):
            continue  # "a Makefile that will compile ...", "your program must compile without warnings"
        rest = sentence[m.start(3) :]
        end = _OBJECT_END.search(rest)
        out.append(" ".join((rest[: end.start()] if end else rest).split()[:_OBJECT_WORDS]))
    return out


def _forbidden_names(instruction: str, tests_text: str) -> set[str]:
    """Programs and libraries the task forbids: named after a prohibition in the instruction, or rejected by a
    test (`assert "hashlib" not in source`, `! grep -q gcc /app/...`)."""
    names: set[str] = set()
    for m in _FORBID.finditer(instruction):
        words = instruction[m.end() :].split()[:_FORBID_WORDS]
        names |= {w.strip("`'\",.;:()[]").lower() for w in words}
    for m in _TEST_FORBIDS.finditer(tests_text):
        names.add((m.group("a") or m.group("b") or m.group("c") or "").lower())
    return names - {""}


def requested_tool_kinds(instruction: str, tests_text: str = "") -> list[ToolKind]:
    """The kinds of tool the task asks the agent to build (usually none): from the instruction's requests, and
    from what the instruction or the tests forbid (`tests_text`: the tests' files, see `task_tests_text`)."""
    found: list[ToolKind] = []
    for sentence in _sentences(instruction):
        for obj in _requested_objects(sentence):
            for kind in TOOL_KINDS:
                if kind in found or not kind.noun.search(obj):
                    continue
                if kind.context is not None and not (kind.context.search(obj) or kind.context.search(sentence)):
                    continue
                if kind.name == "c-compiler" and any(k.name == "c++-compiler" for k in found):
                    continue
                found.append(kind)
    forbidden = _forbidden_names(instruction, tests_text)
    for kind in TOOL_KINDS:  # forbidding the tool is asking for it to be implemented
        if kind not in found and forbidden & (kind.binaries | kind.libraries) and kind.noun.search(instruction):
            found.append(kind)
    return found


def task_tests_text(env) -> str:
    """The text of the task's test files (what a test may forbid); empty when there are none."""
    parts: list[str] = []
    for copy in getattr(env, "tests", []) or []:
        files = [copy.source] if copy.source.is_file() else sorted(p for p in copy.source.rglob("*") if p.is_file())
        parts += [f.read_text(errors="replace")[:200_000] for f in files[:100] if f.suffix in (".py", ".sh", "")]
    return "\n".join(parts)


def wrapped_tools(instruction: str, image_tools: set[str] | None = None, tests_text: str = "") -> set[str]:
    """Binaries whose running in a pass means the requested tool was wrapped, not written; restricted to
    the ones the image has when `image_tools` is known."""
    out: set[str] = set()
    for kind in requested_tool_kinds(instruction, tests_text):
        out |= kind.binaries
    return out if image_tools is None else out & set(image_tools)


def wrap_candidates(instruction: str, tests_text: str = "") -> list[str]:
    """Binaries to try wrapping, most specific first (the exploit payload takes the first one the image has)."""
    order: list[str] = []
    for kind in requested_tool_kinds(instruction, tests_text):
        order += sorted(kind.binaries, key=lambda b: (b not in ("gcc", "g++", "sha256sum", "python3", "as"), b))
    return list(dict.fromkeys(order))
