"""Test files of other languages as syntax trees, through tree-sitter (the one module that imports it).

Why tree-sitter: one incremental, error-tolerant parser API over every language a verifier is written in, each
grammar a wheel of its own (tree-sitter-c, -cpp, -javascript, -typescript, -go, -rust, -java) with its compiled
parser inside, so nothing is downloaded at run time. A file with a syntax error still gives a tree (the broken
part is an ERROR node), which matters for C++ test files full of framework macros (`TEST_CASE("x") { … }`).

`parse(data, language)` gives the root `Node` or raises `ParseUnavailable` (no grammar for the language, the
binding missing); the helpers below name what the readers need from a node (its text, line, callee, string
value) so they never touch tree-sitter's API themselves.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator
from typing import Any

Node = Any  # tree_sitter.Node: kept opaque so no other module imports tree_sitter for a type

SUFFIXES = {
    ".c": "c",
    ".h": "cpp",  # a header may be either; the C++ grammar reads C headers too
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}
GRAMMARS = {  # language -> (module, function returning the language pointer)
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
}
STRING_TYPES = {
    "string_literal",
    "raw_string_literal",
    "string",
    "template_string",
    "interpreted_string_literal",
    "char_literal",
    "character_literal",
    "concatenated_string",
    "text_block",
}
NUMBER_TYPES = {
    "number_literal",
    "number",
    "int_literal",
    "float_literal",
    "integer_literal",
    "decimal_integer_literal",
}
NUMBER_TYPES |= {"decimal_floating_point_literal", "hex_integer_literal", "integer", "float"}
BOOL_TYPES = {"true", "false", "boolean_literal", "null", "nil", "null_literal", "undefined"}


class ParseUnavailable(Exception):
    """The language has no grammar here (or its wheel is not installed): a fact for the caller, not a crash."""


def language_of(suffix: str) -> str | None:
    """The grammar's language for a file suffix (".cpp" -> "cpp"), None when there is none."""
    return SUFFIXES.get(suffix.lower())


@functools.cache
def _parser(language: str):
    if language not in GRAMMARS:
        raise ParseUnavailable(f"no grammar for {language}")
    module, func = GRAMMARS[language]
    try:
        import tree_sitter

        grammar = getattr(importlib.import_module(module), func)()
    except (ImportError, AttributeError) as e:
        raise ParseUnavailable(f"{module} not installed ({e})") from e
    return tree_sitter.Parser(tree_sitter.Language(grammar))


def parse(data: bytes, language: str) -> Node:
    """The root node of `data` read as `language` (a tree even when the source has errors: `first_error`)."""
    return _parser(language).parse(data).root_node


def first_error(root: Node) -> int | None:
    """The 1-based line of the first ERROR or MISSING node, None when the tree is clean."""
    if not root.has_error:
        return None
    for n in walk(root):
        if n.is_error or n.is_missing:
            return line(n)
    return line(root)


def walk(node: Node) -> Iterator[Node]:
    """Every node under `node`, `node` first, in source order (iterative: deep trees do not recurse)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def line(node: Node) -> int:
    return node.start_point[0] + 1


def field(node: Node, name: str) -> Node | None:
    return node.child_by_field_name(name)


def named(node: Node) -> list[Node]:
    """The named children but comments."""
    return [c for c in node.named_children if "comment" not in c.type]


def string_value(node: Node) -> str | None:
    """A string literal's value (quotes and prefixes gone, simple escapes read), None for anything else or a
    template/f-string with substitutions."""
    if node is None or node.type not in STRING_TYPES:
        return None
    if node.type == "concatenated_string":
        parts = [string_value(c) for c in named(node)]
        return None if any(p is None for p in parts) else "".join(p for p in parts if p is not None)
    if any(c.type in ("template_substitution", "interpolation") for c in node.named_children):
        return None
    raw = text(node)
    if node.type == "raw_string_literal":
        inner = [c for c in node.named_children if c.type in ("string_content", "raw_string_content")]
        return text(inner[0]) if inner else raw.strip('r#"')
    if node.type == "text_block":
        return raw[3:-3]
    body = raw[1:-1] if len(raw) >= 2 else raw
    for prefix in ("u8", "u", "U", "L", "R", "b"):
        if raw.startswith((prefix + '"', prefix + "'")):
            body = raw[len(prefix) + 1 : -1]
    return _unescape(body)


def _unescape(body: str) -> str:
    out, i = [], 0
    table = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'", "`": "`"}
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            out.append(table.get(body[i + 1], "\\" + body[i + 1]))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def literal_value(node: Node) -> str | None:
    """A constant's value as text: a string, number, boolean or null literal; None otherwise."""
    if node is None:
        return None
    s = string_value(node)
    if s is not None:
        return s
    if node.type in NUMBER_TYPES or node.type in BOOL_TYPES:
        return text(node)
    if node.type in ("unary_expression",) and text(node).startswith("-") and node.named_child_count == 1:
        inner = literal_value(node.named_children[0])
        return "-" + inner if inner is not None else None
    return None
