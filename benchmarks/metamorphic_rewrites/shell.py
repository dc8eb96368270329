"""The shell rewrite of a verifier script: `[ x = y ]` <-> `test x = y`, and `grep -q ... && cmd` <->
`if grep -q ...; then cmd; fi` (the same for a `[`/`test` condition).

Line by line, and only on lines it can read completely: a heredoc's body, a continued line (trailing `\\`),
backquotes, `case`, subshells and brace groups are left as written. `[ ... ]` is the `test` builtin with a
closing `]`, so that swap is exact. `A && B` and `if A; then B; fi` differ only in the status left behind when A
fails (A's status versus 0), so that swap is made only where nothing reads it: not on the last command, not
before a line reading `$?` or PIPESTATUS, and not in a script with `set -e`, a trap or a function.
"""

from __future__ import annotations

import re

from .cst_tools import FileRewrite

HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
UNSAFE_FILE = re.compile(r"^\s*set\s+-[a-zA-Z]*e|^#!.*\s-[a-zA-Z]*e|errexit|^\s*trap\b|^\s*function\b|\(\)\s*\{", re.M)
BLOCK_ENDS = ("fi", "done", "esac", "}", "else", "elif", ";;")
KEYWORDS = ("if", "then", "elif", "while", "until", "do", "else", "!")
CONDITIONS = ("grep", "[", "test")


def split_top(line: str) -> list[str] | None:
    """`line` cut at its top-level `&&`, `||`, `;` and `|` (each separator its own item), or None when the line
    holds what this reader does not follow (backquotes, unbalanced quotes, a subshell, a group, a comment)."""
    parts, cur, k, depth, quote = [], "", 0, 0, ""
    while k < len(line):
        c = line[k]
        if c == "\\" and quote != "'":
            cur, k = cur + line[k : k + 2], k + 2
            continue
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "`" or (c == "#" and (not cur or cur[-1].isspace()) and depth == 0):
            return None
        elif c == "(" and (depth or cur.endswith("$")):
            depth += 1
        elif c == ")" and depth:
            depth -= 1
        elif depth == 0 and c in "(){}&|;":
            op = line[k : k + 2] if line[k : k + 2] in ("&&", "||", ";;") else c
            if op in ("(", ")", "{", "}", "&", ";;"):
                return None
            parts += [cur, op]
            cur, k = "", k + len(op)
            continue
        cur, k = cur + c, k + 1
    return None if quote or depth else [*parts, cur]


def _flip_test(segment: str) -> str:
    """One simple command: `[ args ]` -> `test args`, `test args` -> `[ args ]` (after if/then/!... words)."""
    lead = re.match(r"\s*(?:(?:if|then|elif|while|until|do|else|!)\s+)*", segment).group(0)
    cmd, tail = segment[len(lead) :].rstrip(), segment[len(segment.rstrip()) :]
    if cmd.startswith("[ ") and cmd.endswith(" ]") and not cmd.startswith("[["):
        return f"{lead}test {cmd[2:-2].strip()}{tail}"
    if cmd.startswith("test ") and len(cmd) > 5:
        return f"{lead}[ {cmd[5:].strip()} ]{tail}"
    return segment


def flip_tests(line: str) -> str:
    parts = split_top(line)
    if parts is None:
        return line
    return "".join(p if p in ("&&", "||", ";", "|") else _flip_test(p) for p in parts)


def _simple(part: str) -> bool:
    return bool(part.strip()) and not any(
        re.match(rf"\s*{re.escape(w)}\b", part)
        for w in ("if", "fi", "then", "else", "for", "while", "do", "done", "case")
    )


def _condition(part: str) -> bool:
    return part.strip().split(" ", 1)[0] in CONDITIONS


def _readable(lines: list[str]) -> list[bool]:
    """Per line: outside a heredoc's body, not continued, not continuing another."""
    ok, end, prev_cont = [], None, False
    for line in lines:
        if end is not None:
            ok.append(False)
            end = None if line.strip() == end else end
            continue
        cont = line.rstrip().endswith("\\")
        m = HEREDOC.search(line)
        ok.append(not (cont or prev_cont or m or "case " in line))
        end = m.group(2) if m else None
        prev_cont = cont
    return ok


def _status_unread(lines: list[str], after: int) -> bool:
    """Some command follows line `after`, and the next one does not read `$?` / PIPESTATUS."""
    for line in lines[after + 1 :]:
        s = line.strip()
        if s and not s.startswith("#"):
            ends_block = s.split()[0] in BLOCK_ENDS
            return not ends_block and "$?" not in s and "PIPESTATUS" not in s
    return False


def _and_to_if(line: str) -> list[str] | None:
    parts = split_top(line)
    if parts is None or len(parts) != 3 or parts[1] != "&&" or not (_condition(parts[0]) and _simple(parts[2])):
        return None
    indent = line[: len(line) - len(line.lstrip())]
    return [f"{indent}if {parts[0].strip()}; then", f"{indent}    {parts[2].strip()}", f"{indent}fi"]


def _if_to_and(three: list[str]) -> str | None:
    m = re.fullmatch(r"(\s*)if (.+); then\s*", three[0])
    if not m or three[2].strip() != "fi" or three[2][: len(m.group(1))] != m.group(1):
        return None
    cond, body = split_top(m.group(2)), split_top(three[1])
    if (
        cond is None
        or body is None
        or len(cond) != 1
        or len(body) != 1
        or not _condition(cond[0])
        or not _simple(body[0])
    ):
        return None
    return f"{m.group(1)}{cond[0].strip()} && {body[0].strip()}"


def rewrite_shell(text: str) -> FileRewrite | None:
    """The script with every `[`/`test` flipped and every `&&`/`if` swap that is safe; None when nothing changes."""
    lines = text.split("\n")
    ok = _readable(lines)
    swaps = not UNSAFE_FILE.search(text)
    out: list[str] = []
    line_map: dict[int, tuple[int, ...]] = {}
    k = 0
    while k < len(lines):
        here = len(out) + 1
        if ok[k] and swaps and k + 2 < len(lines) and all(ok[k : k + 3]) and _status_unread(lines, k + 2):
            joined = _if_to_and(lines[k : k + 3])
            if joined is not None:
                out.append(flip_tests(joined))
                line_map.update({k + 1: (here,), k + 2: (here,), k + 3: (here,)})
                k += 3
                continue
        opened = _and_to_if(lines[k]) if ok[k] and swaps and _status_unread(lines, k) else None
        if opened is not None:
            out += [flip_tests(opened[0]), opened[1], opened[2]]
            line_map[k + 1] = (here, here + 1)
        else:
            out.append(flip_tests(lines[k]) if ok[k] else lines[k])
            line_map[k + 1] = (here,)
        k += 1
    new = "\n".join(out)
    return None if new == text else FileRewrite(new, line_map)
