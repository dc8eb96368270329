"""Comparisons of the output with a parser's re-serialisation of something (instruction-forbids-what-tests-normalise).

`str(BeautifulSoup(x, "html.parser"))`, `json.dumps(json.loads(x))`, `yaml.dump(yaml.safe_load(x))`,
`ET.tostring(..)`, `soup.prettify()`: the expected value is the input as a parser writes it back out, so an agent
that keeps the input byte for byte fails wherever the parser rewrites it. Read from each test file's tree.
"""

from __future__ import annotations

import ast

PARSERS = {"BeautifulSoup", "loads", "safe_load", "load", "fromstring", "parse", "HTML"}
SERIALISERS = {"str", "dumps", "dump", "tostring", "prettify", "decode", "serialize"}


def _calls(node: ast.AST) -> set[str]:
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            out.add(f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "")
    return out


def _reserialised(node: ast.AST) -> bool:
    """A parse of something written back out: str(BeautifulSoup(x)), json.dumps(json.loads(x)), soup.prettify()."""
    calls = _calls(node)
    return bool(calls & PARSERS) and bool(calls & SERIALISERS)


def normalised_compares(tree: ast.Module) -> list[int]:
    """Lines where a re-serialised value (directly or through a name bound to one) is compared with a side that is
    not re-serialised."""
    bound = {
        n.targets[0].id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and _reserialised(n.value)
    }

    def normalised(side: ast.AST) -> bool:
        return _reserialised(side) or any(isinstance(s, ast.Name) and s.id in bound for s in ast.walk(side))

    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Compare) and all(isinstance(op, (ast.Eq, ast.NotEq)) for op in n.ops):
            sides = [normalised(s) for s in (n.left, *n.comparators)]
            if any(sides) and not all(sides):
                out.append(n.lineno)
    return out
