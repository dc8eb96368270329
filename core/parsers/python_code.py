"""Whether a text is Python that does something: an import, a definition, a call, a loop, a branch, a `with` or
a `try` (`x = 1` and JSON-like literals stay data).

Mutation testing asks it of an output file of the agent's end state before it mutates it (probes/mutation/kinds.py):
code gets code mutants, data gets data mutants. Not a reader of test files (those are core/task_model/'s).
"""

from __future__ import annotations

import ast

CODE_NODES = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.For,
    ast.While,
    ast.If,
    ast.With,
    ast.Try,
    ast.Lambda,
    ast.Call,
)


def is_python_code(text: str) -> bool:
    """True when `text` parses as Python and holds one of CODE_NODES."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, CODE_NODES) for node in ast.walk(tree))
