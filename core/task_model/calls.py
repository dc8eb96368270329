"""Calls of named functions in the verifier's files, with the keywords they pass (instruction-omits-tested-requirement
for a signature the instruction never gives).

Read from the text of every test file, line by line, so a call inside embedded code (R, a shell line, a heredoc)
counts too: `ars(normal_density, c(-5, 5), n = 1000)` is a call of `ars` with the keyword `n`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from envqa.core.task_model.files import TestFile

CALL = r"(?<![\w.]){name}\s*\(([^()\n]*(?:\([^()\n]*\)[^()\n]*)*)\)"
KEYWORD = re.compile(r"(?:^|,)\s*([A-Za-z_][\w.]*)\s*=(?!=)")


class KeywordCall(NamedTuple):
    file: TestFile
    line: int  # 1-based
    text: str  # the line, stripped
    name: str
    call: str  # the call as written, `ars(f, n = 1000)`
    keywords: list[str]  # in the order the call passes them


def keyword_calls(files: list[TestFile], names: list[str]) -> list[KeywordCall]:
    """Every call of one of `names` on one line of a readable UTF-8 test file, in file, line, `names` order."""
    patterns = [(name, re.compile(CALL.format(name=re.escape(name)))) for name in names]
    out = []
    for f in files:
        if f.error is not None or f.undecodable:
            continue
        for n, line in enumerate(f.text.splitlines(), 1):
            for name, pattern in patterns:
                for m in pattern.finditer(line):
                    out.append(KeywordCall(f, n, line.strip(), name, m.group(0).strip(), KEYWORD.findall(m.group(1))))
    return out
