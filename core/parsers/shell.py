"""Shell scripts as simple commands, through bashlex (a port of bash's own grammar), not regexes.

Why bashlex: it is pure Python (no compiled grammar to ship, unlike tree-sitter-bash), follows GNU
bash's parser closely, and gives each command its words with quotes removed, its redirections apart
from its arguments, and character offsets for file:line evidence. `pip install x 2>/dev/null || true`
is two commands (`pip install x`, `true`), the redirection is not an argument, and a line
continuation is one command.

bashlex does not parse everything (`case`, `(( ))`/`$(( ))`, some `[[ ]]` forms). The documented
fallback: heredoc bodies are blanked out before parsing (line numbers kept) so only the command that
reads them is seen; a script bashlex refuses is parsed again one logical line at a time; a line it
still refuses is split by `shlex` with shell punctuation (`&&`, `||`, `;`, `|`) into commands, and
leading keywords (`if`, `then`, `do`, ...) are dropped. Commands from the fallback are marked
`parsed=False`.

Reachability (decided statically, conservatively): commands after a top-level `exit`/`exec`, in the
body of `if false`/`while false` (or `[ 0 = 1 ]`-style literal tests), after `false &&` or `true ||`,
and in functions nobody calls are `reachable=False`. Rules about what a verifier runs skip them.
`sh -c "…"`/`bash -c '…'` strings are parsed as scripts of their own.
"""

from __future__ import annotations

import bisect
import copy
import functools
import re
import shlex
from dataclasses import dataclass, field

HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
KEYWORDS = {
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "do",
    "done",
    "while",
    "until",
    "for",
    "case",
    "esac",
    "!",
    "{",
    "}",
    "(",
    ")",
    "time",
    "function",
    "in",
}
SHELLS = {"sh", "bash", "dash", "zsh", "ash"}
BLOCK_OPEN = {"if", "case", "while", "until", "for", "{"}
BLOCK_CLOSE = {"fi", "esac", "done", "}"}
FALSE_WORDS = {"false", "/bin/false", "/usr/bin/false"}
# `test` / `[` file operators and what each asks of the path (one table: the assertion model and the consistency
# requirements both read it).
FILE_TESTS = {"-f": "exists", "-e": "exists", "-d": "exists", "-s": "non-empty", "-r": "exists", "-x": "executable"}
FILE_TESTS |= {"-L": "exists", "-h": "exists", "-w": "exists", "-p": "exists", "-S": "exists", "-O": "exists"}
FILE_TESTS |= {"-G": "exists"}


@dataclass
class Command:
    """One simple command: its words (quotes removed, assignments and redirections apart)."""

    words: list[str]
    line: int  # 1-based line where the command starts
    text: str  # that source line, stripped (for evidence)
    assignments: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)  # (operator, target)
    reachable: bool = True
    conditional: bool = False  # inside an if/while/for body or on the right of && / ||
    parsed: bool = True  # False: from the shlex fallback
    negated: bool = False  # `! cmd`: its status is inverted
    substituted: bool = False  # inside `$(…)` or `<(…)`: its output is a value, its status decides nothing
    # the conditions it runs under, innermost last: (condition's status command, whether it must succeed);
    # `a && b` gives b [(a, True)], `if ! a; then b; else c; fi` gives b [(a, False)] and c [(a, True)]
    guards: list[tuple[Command, bool]] = field(default_factory=list, compare=False, repr=False)
    piped_from: Command | None = field(default=None, compare=False, repr=False)  # the stage before it in `x | y`

    @property
    def name(self) -> str:
        return self.words[0].rsplit("/", 1)[-1] if self.words else ""

    def evidence(self, rel: str) -> str:
        return f"{rel}:{self.line}: {self.text}"


def blank_heredocs(text: str) -> tuple[str, dict[int, str]]:
    """Heredoc bodies replaced by empty lines (line numbers kept); returns (text, {line: body})."""
    lines = text.split("\n")
    out, bodies, i = [], {}, 0
    while i < len(lines):
        line = lines[i]
        m = HEREDOC.search(line) if "<<" in line and "<<<" not in line else None
        out.append(HEREDOC.sub("</dev/null", line) if m else line)
        i += 1
        if m:
            start, body = i, []
            while i < len(lines) and (lines[i].lstrip("\t") if m.group(1) else lines[i]) != m.group(3):
                body.append(lines[i])
                out.append("")
                i += 1
            if i < len(lines):
                out.append("")  # the delimiter line
                i += 1
            bodies[start] = "\n".join(body)
    return "\n".join(out), bodies


class _Walker:
    def __init__(self, text: str, source_lines: list[str], line_offset: int = 0):
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.source_lines, self.line_offset = source_lines, line_offset
        self.commands: list[Command] = []
        self.functions: dict[str, list[Command]] = {}
        self.guards: list[tuple[Command, bool]] = []  # the conditions the command being walked runs under
        self.status: tuple[Command, bool] | None = None  # the last status walked: (command, True unless `!`)
        self.pipe: Command | None = None  # the previous stage of the pipeline being walked
        self.substituted = 0  # depth inside `$(…)`

    def line_of(self, pos: int) -> int:
        return bisect.bisect_right(self.starts, pos) + self.line_offset

    def source(self, line: int) -> str:
        return self.source_lines[line - 1].strip() if 0 < line <= len(self.source_lines) else ""

    def walk(self, node, reachable: bool, conditional: bool) -> bool:
        """Visit a node; returns whether control can continue after it (False after `exit`)."""
        kind = node.kind
        if kind == "command":
            return self.command(node, reachable, conditional)
        if kind == "list":
            return self.sequence(node.parts, reachable, conditional)
        if kind == "pipeline":
            return self.pipeline(node, reachable, conditional)
        if kind == "compound":
            return self.compound(node, reachable, conditional)
        if kind == "if":
            return self.if_node(node, reachable, conditional)
        if kind in ("while", "until", "for"):
            return self.loop(node, reachable)
        if kind == "function":
            return self.function(node, reachable)
        if kind == "redirect":
            target = getattr(node, "output", None)
            if target is not None and getattr(target, "kind", "") == "word":
                self.nested(target, reachable, conditional)
        return True

    def pipeline(self, node, reachable: bool, conditional: bool) -> bool:
        """`a | b`, `! a`: each stage knows the one before it; the status is the last stage's (inverted by `!`)."""
        negated, prev = False, None
        for part in node.parts:
            if part.kind == "reservedword" and part.word == "!":
                negated = not negated
            elif part.kind != "pipe":
                self.pipe = prev
                self.walk(part, reachable, conditional)
                self.pipe = None
                prev = self.status[0] if self.status else None
        if negated and self.status is not None:
            self.status[0].negated = True
            self.status = (self.status[0], not self.status[1])
        return True

    def guarded(self, node, reachable: bool, conditional: bool, guard: tuple[Command, bool] | None) -> bool:
        """Walk `node` under one more condition (`guard`: its command and the status it needs)."""
        saved = self.guards
        self.guards = saved + [guard] if guard is not None else saved
        try:
            return self.walk(node, reachable, conditional)
        finally:
            self.guards = saved

    def compound(self, node, reachable: bool, conditional: bool) -> bool:
        """`{ …; }` or `( … )`: its parts in order (an `exit` inside ends what follows), then its redirections."""
        cont = True
        for part in node.list:
            if part.kind not in ("reservedword",):
                cont = self.walk(part, reachable and cont, conditional) and cont
        for r in getattr(node, "redirects", []) or []:
            self.walk(r, reachable, conditional)
        return cont

    def loop(self, node, reachable: bool) -> bool:
        """`while`/`until`/`for`: every part is conditional; the body of `while false` is unreachable."""
        parts = [p for p in node.parts if p.kind not in ("reservedword", "word")]
        never = node.kind == "while" and parts and self.literal_false(parts[0])
        for i, part in enumerate(parts):
            self.walk(part, reachable and not (never and i > 0), True)
        return True

    def function(self, node, reachable: bool) -> bool:
        """A function definition: its body's commands are kept by name, so uncalled functions can be marked
        unreachable once the whole script is read (`_parse_whole`)."""
        name = node.name.word if hasattr(node, "name") else node.parts[0].word
        before = len(self.commands)
        self.walk(node.body if hasattr(node, "body") else node.parts[-1], reachable, True)
        self.functions[name] = self.commands[before:]
        return True

    def sequence(self, parts, reachable: bool, conditional: bool) -> bool:
        cont, skip_next, cond_next = True, False, conditional
        prev, guard, chain = None, None, None  # chain: the first status of an `a && b` run (`|| c` runs if it fails)
        for part in parts:
            if part.kind == "operator":
                if part.op in ("&&", "||"):
                    cond_next = True
                    skip_next = prev is not None and (
                        (part.op == "&&" and self.literal_false(prev)) or (part.op == "||" and self.literal_true(prev))
                    )
                    st = chain if part.op == "||" and chain is not None else self.status
                    guard = (st[0], st[1] == (part.op == "&&")) if st is not None else None
                    chain = (chain or self.status) if part.op == "&&" else None
                elif part.op in (";", "\n", "&"):
                    cond_next, skip_next, guard, chain = conditional, False, None, None
                continue
            self.status = None
            alive = self.guarded(part, reachable and cont and not skip_next, cond_next, guard)
            if not alive and not cond_next:
                cont = False
            prev, skip_next = part, False
        return cont

    def if_node(self, node, reachable: bool, conditional: bool) -> bool:
        parts = node.parts
        i, never_rest = 0, False
        failed: tuple[Command, bool] | None = None  # the branch taken when the last test failed
        while i < len(parts):
            p = parts[i]
            if p.kind == "reservedword" and p.word in ("if", "elif"):
                test = parts[i + 1]
                self.status = None
                self.guarded(test, reachable and not never_rest, True, failed)
                st = self.status
                body = parts[i + 3]  # `then` sits between
                self.guarded(
                    body, reachable and not never_rest and not self.literal_false(test), True, st and (st[0], st[1])
                )
                failed = st and (st[0], not st[1])
                i += 4
            elif p.kind == "reservedword" and p.word == "else":
                self.guarded(parts[i + 1], reachable and not never_rest, True, failed)
                i += 2
            else:
                i += 1
        return True

    def literal_false(self, node) -> bool:
        words = self._only_command(node)
        if not words:
            return False
        if words[0] in FALSE_WORDS and len(words) == 1:
            return True
        if words[0] in ("[", "test") and len(words) in (4, 5):
            a, op, b = words[1:4]
            literals = re.fullmatch(r"-?\d+|[\w.]+", a) and re.fullmatch(r"-?\d+|[\w.]+", b) and not a.startswith("$")
            if literals and (
                (op in ("=", "==") and a != b)
                or (op == "-eq" and a.lstrip("-").isdigit() and b.lstrip("-").isdigit() and int(a) != int(b))
            ):
                return True
        return False

    def literal_true(self, node) -> bool:
        words = self._only_command(node)
        return words in (["true"], [":"])

    @staticmethod
    def _only_command(node) -> list[str] | None:
        while node.kind == "list" and len([p for p in node.parts if p.kind != "operator"]) == 1:
            node = next(p for p in node.parts if p.kind != "operator")
        if node.kind != "command":
            return None
        return [p.word for p in node.parts if p.kind == "word"]

    def command(self, node, reachable: bool, conditional: bool) -> bool:
        words, assigns, redirects = [], [], []
        for part in node.parts:
            if part.kind == "word":
                words.append(part.word)
                self.nested(part, reachable, conditional)
            elif part.kind == "assignment":
                assigns.append(part.word)
                self.nested(part, reachable, conditional)
            elif part.kind == "redirect":
                target = part.output.word if getattr(part.output, "kind", "") == "word" else ""
                redirects.append((part.type, target))
                self.walk(part, reachable, conditional)
        line = self.line_of(node.pos[0])
        cmd = Command(words, line, self.source(line), assigns, redirects, reachable, conditional)
        cmd.guards, cmd.piped_from, cmd.substituted = list(self.guards), self.pipe, self.substituted > 0
        self.commands.append(cmd)
        self.status = (cmd, True)
        # `sh -c "script"`: the string is a script of its own (same line for evidence)
        if cmd.name in SHELLS and "-c" in words[1:]:
            i = words.index("-c")
            if i + 1 < len(words):
                for inner in parse_script(words[i + 1], source_line=line, source_text=cmd.text):
                    inner.reachable = inner.reachable and reachable
                    inner.conditional = inner.conditional or conditional
                    self.commands.append(inner)
        return not (
            reachable
            and not conditional
            and cmd.name in ("exit", "exec")
            and not redirects
            and (cmd.name == "exit" or len(words) > 1)
        )

    def nested(self, word, reachable: bool, conditional: bool) -> None:
        for part in getattr(word, "parts", []) or []:
            if part.kind in ("commandsubstitution", "processsubstitution"):
                saved = self.status, self.pipe
                self.substituted, self.pipe = self.substituted + 1, None
                self.walk(part.command, reachable, True)
                self.substituted -= 1
                self.status, self.pipe = saved


def _fallback_line(line: str, lineno: int) -> list[Command]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = line.split()
    out: list[Command] = []
    words: list[str] = []
    redirects: list[tuple[str, str]] = []
    pending: str | None = None
    for tok in tokens + [";"]:
        if pending:
            redirects.append((pending, tok))
            pending = None
        elif tok in (";", "&&", "||", "|", "&", ";;", "(", ")", "|&"):
            if tok == ")" or (words and words[0] == "case"):
                words = []  # a case pattern (`a)`) or the `case WORD in` head: not commands
            while words and words[0] in KEYWORDS:
                words = words[1:]
            if words:
                assigns = []
                while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
                    assigns.append(words.pop(0))
                if words:
                    out.append(Command(words, lineno, line.strip(), assigns, redirects, parsed=False, conditional=True))
            words, redirects = [], []
        elif re.fullmatch(r"\d?(>>?|<|>&|&>)", tok):
            pending = tok
        else:
            words.append(tok)
    return out


def _logical_lines(text: str) -> list[tuple[int, str]]:
    out, buf, start = [], "", 0
    for n, line in enumerate(text.split("\n"), start=1):
        if not buf:
            start = n
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        out.append((start, buf))
        buf = ""
    if buf:
        out.append((start, buf))
    return out


def parse_script(text: str, *, source_line: int | None = None, source_text: str | None = None) -> list[Command]:
    """Every simple command in a shell script, in order (see the module docstring for the fallback).

    A script is parsed once per process (the static rules each ask for test.sh, and bashlex is slow on a large
    or odd one); each caller gets its own copies of the commands."""
    commands = copy.deepcopy(_parsed(text))
    if source_line is not None:  # a string inside another script: report the outer line
        for c in commands:
            c.line, c.text = source_line, source_text or c.text
    return commands


@functools.lru_cache(maxsize=64)
def _parsed(text: str) -> list[Command]:
    blanked, _bodies = blank_heredocs(text)
    source_lines = text.split("\n")
    whole = _parse_whole(blanked, source_lines)
    commands = whole[0] if whole is not None else []
    if whole is None:
        depth, cont = 0, True  # block depth by keywords: an `exit` inside a block does not end the script
        for start, line in _logical_lines(blanked):
            if not line.strip() or line.strip().startswith("#"):
                continue
            got = _parse_whole(line, source_lines, line_offset=start - 1)
            cmds = got[0] if got is not None else _fallback_line(line, start)
            for c in cmds:
                c.reachable = c.reachable and cont
                c.conditional = c.conditional or depth > 0
            commands += cmds
            words = re.split(r"[\s;&|()]+", re.sub(r"(['\"]).*?\1", "", line))
            depth += sum(w in BLOCK_OPEN for w in words) - sum(w in BLOCK_CLOSE for w in words)
            depth = max(depth, 0)
            if depth == 0 and got is not None and not got[1]:
                cont = False
    return commands


DOUBLE_TEST = re.compile(r"\[\[\s(?:[^\n\]]|\](?!\]))*?\s\]\]")  # `[[ … ]]` on one line
ARITHMETIC = re.compile(r"\$\(\((?:[^\n()]|\([^\n()]*\))*?\)\)")  # `$(( … ))` on one line
MASK = re.compile(r"__envqa_m(\d+)__")


def _mask(text: str) -> tuple[str, list[str]]:
    """`[[ … ]]` and `$(( … ))`, which bashlex refuses, stood in for by one word each (lines kept), so the rest
    of the script keeps its structure; `_unmask` puts them back."""
    table: list[str] = []

    def hold(m: re.Match) -> str:
        table.append(m.group(0))
        return f"__envqa_m{len(table) - 1}__"

    return DOUBLE_TEST.sub(hold, ARITHMETIC.sub(hold, text)), table


def _unmask_word(word: str, table: list[str]) -> str:
    return MASK.sub(lambda m: table[int(m.group(1))], word)


def _double_test(test: str, cmd: Command) -> tuple[list[Command], list[str]]:
    """A `[[ … ]]` test's words and the commands of its substitutions, read as `[ … ]` by bashlex when it can
    (so `$(cmd a b)` stays one word), else split by shlex."""
    got = _parse_whole("[ " + test[2:-2].strip() + " ]", [cmd.text])
    cmds = got[0] if got is not None else []
    if cmds and cmds[-1].words[:1] == ["["] and all(c.substituted for c in cmds[:-1]):
        for c in cmds[:-1]:
            c.line, c.text, c.guards, c.reachable = cmd.line, cmd.text, list(cmd.guards), cmd.reachable
        return cmds[:-1], ["[["] + cmds[-1].words[1:-1] + ["]]"]
    try:
        return [], shlex.split(test)
    except ValueError:
        return [], test.split()


def _unmask(commands: list[Command], table: list[str]) -> list[Command]:
    """The masked constructs back in place: a `[[ … ]]` test as its own words (the commands of its `$(…)` read as
    substitutions before it), an arithmetic expansion as its text."""
    if not table:
        return commands
    out: list[Command] = []
    for cmd in commands:
        held = MASK.fullmatch(cmd.words[0]) if cmd.words else None
        if held and table[int(held.group(1))].startswith("[["):
            inner, words = _double_test(table[int(held.group(1))], cmd)
            out += inner
            cmd.words = words + [_unmask_word(w, table) for w in cmd.words[1:]]
        else:
            cmd.words = [_unmask_word(w, table) for w in cmd.words]
        cmd.assignments = [_unmask_word(w, table) for w in cmd.assignments]
        cmd.redirects = [(op, _unmask_word(t, table)) for op, t in cmd.redirects]
        out.append(cmd)
    return out


def _parse_whole(text: str, source_lines: list[str], line_offset: int = 0) -> tuple[list[Command], bool] | None:
    """(commands, whether control reaches the end), or None when bashlex refuses the text."""
    if not text.strip():
        return [], True
    text, table = _mask(text)
    import bashlex  # here, not at the top: importing it builds its LALR tables (0.2 s of CPU) in every process

    try:
        trees = bashlex.parse(text)
    except (
        bashlex.errors.ParsingError,
        NotImplementedError,
        AttributeError,
        IndexError,
        TypeError,
        ValueError,
        RecursionError,
    ):
        return None
    walker = _Walker(text, source_lines, line_offset)
    cont = True
    for tree in trees:
        cont = walker.walk(tree, cont, False) and cont
    called = {c.words[0] for c in walker.commands if c.words}
    for name, body in walker.functions.items():
        if name not in called:
            for c in body:
                c.reachable = False
    return _unmask(walker.commands, table), cont


def logical_line_end(lines: list[str], n: int) -> int:
    """End (exclusive, 0-based) of the logical line that starts at line `n`: `\\` continuations included."""
    end = n + 1
    while end < len(lines) and lines[end - 1].rstrip().endswith("\\"):
        end += 1
    return end
