"""Does the task ask the agent to build a tool that already exists in the image? (the wrapped-tool shortcut)

A "write a compiler" task is solvable by a two-line script that calls gcc, unless the tests notice. To
know which binaries would be a wrapped tool, the instruction is read for what it asks to be *made*, not
for one phrasing: in each sentence, a request (a verb of making, or "X must compile C programs") whose
object names a kind of tool (a compiler for some subset of C, a SHA-256 utility, an interpreter, ...).
A sentence that only mentions a compiler ("the tests build it with gcc", "parse the compiler's log")
asks for nothing. Which of those binaries the image really has is checked separately (`image_tools`),
by the exploit's rehearsal in a container of the image.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A request to make something, and the words that end its object ("build X *using* gcc").
_MAKE = re.compile(r"\b(write|implement|build|create|develop|make|produce|provide|deliver|code up|re-?implement)\b"
                   r"|\byour (own|task is|job is)\b|\bdeliverables?\b", re.I)
# Where a requested object ends: a means ("using gcc"), a sentence end, or a clause that consumes the noun
# instead of being it ("a script that *reads* the compiler's log").
_OBJECT_END = re.compile(r"\b(using|with|via|through|by (running|calling|invoking)|from|then|and run|reads?|parses?|"
                         r"counts?|analy[sz]es|process(es)?|summari[sz]es|lints?|runs?|calls?|invokes?|uses?|wraps?|"
                         r"checks?)\b|[.;!?](\s|$)", re.I)
_MUST_DO = re.compile(r"\b(must|should|shall|needs? to|has to|will)\s+(be able to\s+)?(compile|interpret|assemble|"
                      r"hash|checksum|encode|decode)\b", re.I)
_OBJECT_WORDS = 16
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`/])|\n\s*\n")
_C = r"(?<![\w+#-])c(?![\w+#-])|\bc(89|99|11)\b|\bansi c\b"


@dataclass(frozen=True)
class ToolKind:
    name: str
    noun: re.Pattern  # in the requested object: what is asked for
    context: re.Pattern | None  # in the same sentence: which language or format (None: the noun says it)
    binaries: frozenset[str]


def _kind(name: str, noun: str, context: str | None, binaries: set[str]) -> ToolKind:
    return ToolKind(name, re.compile(noun, re.I), re.compile(context, re.I) if context else None, frozenset(binaries))


TOOL_KINDS: list[ToolKind] = [
    _kind("c++-compiler", r"\bcompil(er|es|e|ing)\b|\btranslat\w*", r"\bc\+\+|\bcpp\b",
          {"g++", "c++", "cc1plus", "clang++"}),
    _kind("c-compiler", r"\bcompil(er|es|e|ing)\b|\btranslat\w*[^.]*\b(executables?|assembly|machine code|binar(y|ies))",
          _C, {"gcc", "cc", "cc1", "clang", "tcc", "x86_64-linux-gnu-gcc-12", "gcc-12", "c99", "c89"}),
    _kind("assembler", r"\bassembler\b", None, {"as", "nasm", "yasm"}),
    _kind("python-interpreter", r"\bpython interpreter\b|\binterpret(er|s)? (for|of) (a |the )?(\w+ )?python\b",
          None, {"python3", "python"}),
    _kind("lua-interpreter", r"\blua interpreter\b|\binterpret(er|s)? (for|of) (a |the )?(\w+ )?lua\b", None,
          {"lua", "lua5.1", "lua5.3", "lua5.4", "luajit"}),
    _kind("sha256", r"\bsha-?256\b", None, {"sha256sum", "shasum", "openssl"}),
    _kind("sha1", r"\bsha-?1\b", None, {"sha1sum", "shasum", "openssl"}),
    _kind("md5", r"\bmd5\b", None, {"md5sum", "openssl"}),
    _kind("base64", r"\bbase-?64\b", None, {"base64", "openssl"}),
    _kind("calculator", r"\b(calculator|arbitrary[- ]precision arithmetic)\b", None, {"bc", "dc"}),
    _kind("json-formatter", r"\bjson (pretty[- ]?printer|formatter|query tool)\b", None, {"jq"}),
    _kind("compressor", r"\b(gzip|deflate) (compressor|decompressor|tool|utility)\b", None, {"gzip", "gunzip"}),
]


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s and s.strip()]


def _requested_objects(sentence: str) -> list[str]:
    """The phrases a sentence asks to be made: the words after each request verb, up to where the object ends."""
    out = []
    for m in _MAKE.finditer(sentence):
        rest = sentence[m.end():]
        end = _OBJECT_END.search(rest)
        rest = rest[: end.start()] if end else rest
        out.append(" ".join(rest.split()[:_OBJECT_WORDS]))
    for m in _MUST_DO.finditer(sentence):  # "`/app/cc` must compile C programs": the verb is the tool's job
        rest = sentence[m.start(3):]
        end = _OBJECT_END.search(rest)
        out.append(" ".join((rest[: end.start()] if end else rest).split()[:_OBJECT_WORDS]))
    return out


def requested_tool_kinds(instruction: str) -> list[ToolKind]:
    """The kinds of tool the instruction asks the agent to build (usually none)."""
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
    return found


def wrapped_tools(instruction: str, image_tools: set[str] | None = None) -> set[str]:
    """Binaries whose running in a pass means the requested tool was wrapped, not written; restricted to
    the ones the image has when `image_tools` is known."""
    out: set[str] = set()
    for kind in requested_tool_kinds(instruction):
        out |= kind.binaries
    return out if image_tools is None else out & set(image_tools)


def wrap_candidates(instruction: str) -> list[str]:
    """Binaries to try wrapping, most specific first (the exploit payload takes the first one the image has)."""
    order: list[str] = []
    for kind in requested_tool_kinds(instruction):
        order += sorted(kind.binaries, key=lambda b: (b not in ("gcc", "g++", "sha256sum", "python3", "as"), b))
    return list(dict.fromkeys(order))
