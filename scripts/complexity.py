"""Decision points per function, counted the way issue 32 counts them, so `make lint` can hold the limit.

A decision point is each `if`/`elif`, loop (`for`, `while`), `except`, `match` case, conditional expression,
comprehension `if`, and each extra operand of `and`/`or`, over the whole function body (nested functions count
toward the function that holds them, since a reader must hold them too).

    python scripts/complexity.py [--max N] [--top K] [PATH ...]

Prints the functions over the limit (or the K most complex with --top) and exits 1 when any is over --max.
"""

from __future__ import annotations

import argparse
import ast
import sys
import tomllib
from pathlib import Path

DEFAULT_MAX = 25


def role_folders(root: Path) -> list[Path]:
    """The folders that install as `envqa.*`: pyproject.toml's package-dir, the one list of them."""
    package_dir = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    return [root / folder for folder in dict.fromkeys(package_dir.values())]


def decisions(node: ast.AST) -> int:
    """The decision points in a node's subtree (the node itself included)."""
    count = 0
    for child in ast.walk(node):
        if isinstance(child, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.IfExp, ast.match_case)):
            count += 1
        elif isinstance(child, ast.BoolOp):
            count += len(child.values) - 1
        elif isinstance(child, ast.comprehension):
            count += len(child.ifs)
    return count


def functions(path: Path) -> list[tuple[int, str, int]]:
    """(decisions, qualified name, line) for every outermost function or method in one file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[int, str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((decisions(child), f"{prefix}{child.name}", child.lineno))
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--max", type=int, default=DEFAULT_MAX)
    parser.add_argument("--top", type=int, default=0)
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    paths = args.paths or role_folders(root)
    rows = []
    for base in paths:
        for file in sorted(base.rglob("*.py")) if base.is_dir() else [base]:
            if "scripts" in file.relative_to(base if base.is_dir() else base.parent).parts:
                continue
            shown = file.relative_to(root) if file.is_relative_to(root) else file
            rows += [(n, f"{shown}:{line} {name}") for n, name, line in functions(file)]
    rows.sort(reverse=True)
    over = [row for row in rows if row[0] > args.max]
    for n, where in rows[: args.top] if args.top else over:
        print(f"{n:4d}  {where}")
    if over:
        print(f"{len(over)} function(s) over {args.max} decision points", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
