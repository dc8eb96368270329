"""Assertion records from the verifier's shell files (core/task_model/assertions.py): test.sh and every .sh file
of the tests it runs or sources (each such run a "call" hop).

Read from the parsed commands (core/parsers/shell.py), which carry the conditions each command runs under
(`guards`), `!`, pipes and substitutions, so no line is matched as text. The checks:
- `[ … ]`, `[[ … ]]`, `test`: a file test (existence), a string or numeric comparison (`=`, `!=`, `-eq`, `-lt`, …,
  `=~`), each operand resolved through assignments and `$(…)` (core/task_model/shell_operands.py);
- `grep` (-q/-x/-F/-i/-c/-v/-f): a pattern over a file or over what is piped into it;
- `diff`/`cmp`: a file against a reference file; `jq -e FILTER FILE`: keys and the literal compared;
- `sha256sum -c LIST` (and the other hashers): one digest record per line of the list when the tests hold it;
- any other command whose status decides the reward or an `exit` (`cmd && echo 1 > reward.txt`,
  `if ! cmd; then exit 1; fi`): its exit code; a tests' own script it runs (`python3 /tests/check.py`) is a
  "call" hop to that file. pytest runs are not checks here: the Python reader reads the tests they run.
A condition that only decides setup (`[ -f req.txt ] && pip install -r req.txt`) is not a check.
"""

from __future__ import annotations

import re

from envqa.core.defaults import TEST_MODEL_CODE_CHARS
from envqa.core.parsers.shell import FILE_TESTS, Command
from envqa.core.task_model.assertions import Assertion, Expected, Hop, Observed
from envqa.core.task_model.files import TestFile
from envqa.core.task_model.shell_operands import (
    HASHERS,
    Scope,
    Side,
    hop,
    jq_keys,
    jq_literal,
    observe_commands,
    reference_path,
    side,
)
from envqa.core.task_model.tests_reader import TestsModel

TESTS = {"[", "[[", "test"}
GREPS = {"grep", "egrep", "fgrep", "rg"}
SETUP = {
    "pip", "pip3", "apt-get", "apt", "uv", "uvx", "curl", "wget", "mkdir", "cp", "mv", "cd", "source", ".", "export",
    "ln", "chmod", "npm", "yarn", "pnpm", "cargo", "go", "gem", "conda", "touch", "rm", "set", "unset", "shopt",
    "pushd", "popd", "apk", "dnf", "yum", "sleep", "true", ":",
}  # fmt: skip
PROBES = {"command", "which", "type", "hash", "pgrep", "id", "getent"}
RUNNERS = {"python", "python3", "bash", "sh", "node", "ruby", "perl", "timeout", "env", "uv", "run", "exec", "sudo"}
PYTEST = {"pytest", "py.test"}
NUMERIC = {"-eq": "==", "-ne": "==", "-lt": "<", "-le": "<=", "-gt": ">", "-ge": ">="}
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}
REGEX_META = re.compile(r"[.\[\]()*+?{}|\\^$]")


def _status_words(cmd: Command) -> list[str]:
    """The program a command runs, past its runners and their flags (`timeout 10 python3 -u x.py` -> x.py)."""
    words = list(cmd.words)
    while words and words[0].rsplit("/", 1)[-1] in RUNNERS:
        words = words[1:]
        while words and (words[0].startswith("-") or re.fullmatch(r"\d+[smh]?", words[0])):
            words = words[1:]
    return words


def _is_pytest(cmd: Command) -> bool:
    words = [w.rsplit("/", 1)[-1] for w in cmd.words]
    return bool(set(words[:4]) & PYTEST) or ("-m" in words and "pytest" in words)


def _decides(cmd: Command) -> bool:
    """Whether a command is itself a verdict: a reward write, an `exit`/`return`, a failure flag (`fail=1`)."""
    rewards = any(re.search(r"reward\.(txt|json)$", t) for _op, t in cmd.redirects)
    return rewards or cmd.name in ("exit", "return", "false") or (not cmd.words and bool(cmd.assignments))


def _verdict(cmd: Command) -> bool | None:
    """True for a pass (`echo 1 > reward.txt`, `exit 0`), False for a fail (`exit 1`, `echo 0 > reward.txt`,
    `false`, `return 1`), None for anything else."""
    args = cmd.words[1:]
    if any(re.search(r"reward\.(txt|json)$", t) for _op, t in cmd.redirects) and cmd.name in ("echo", "printf"):
        return bool(args) and args[-1].strip() not in ("0", "0.0")
    if cmd.name in ("exit", "return"):
        return bool(args) and args[0] == "0"
    return False if cmd.name == "false" else None


class _Reader:
    """One shell file's checks (`calls`: the hops that led here from test.sh)."""

    def __init__(self, tests: TestsModel, f: TestFile, calls: list[Hop], seen: set[str]):
        self.tests, self.f, self.calls, self.seen = tests, f, calls, seen
        self.commands = [c for c in f.commands if c.reachable or calls]
        self.scope = Scope(f.rel, f.commands)
        self.guarded: dict[int, list[Command]] = {}
        self.piped: set[int] = {id(c.piped_from) for c in self.commands if c.piped_from is not None}
        for c in self.commands:
            for g, _ok in c.guards[-1:]:
                self.guarded.setdefault(id(g), []).append(c)
        self.out: list[Assertion] = []

    def must_fail(self, cmd: Command) -> bool:
        """Whether the check passes when the command fails: `! grep -q x f || exit 1`, `grep -q x f && exit 1`;
        decided by the verdict it guards, else by a `!` before it."""
        for c in self.guarded.get(id(cmd), []):
            ok = next(want for g, want in c.guards[-1:] if g is cmd)
            verdict = _verdict(c)
            if verdict is not None:
                return ok != verdict
        return cmd.negated

    def record(
        self, cmd: Command, op: str, observed: Observed, expected: Expected, hops: list[Hop], negated=False, cases=1
    ) -> None:
        first = hop("assert", self.f.rel, cmd)
        self.out.append(
            Assertion(
                language="shell",
                file=self.f.rel,
                line=cmd.line,
                code=cmd.text[:TEST_MODEL_CODE_CHARS],
                test=self.calls[0].file if self.calls else self.f.rel,
                op=op,
                observes=observed,
                expected=expected,
                hops=[first, *self.calls, *hops],
                negated=negated != self.must_fail(cmd),
                cases=cases,
            )
        )

    def setup_only(self, cmd: Command) -> bool:
        """A condition whose branches only install or prepare (`[ -f x ] && pip install …`)."""
        under = self.guarded.get(id(cmd), [])
        return bool(under) and all(c.name in SETUP or _is_pytest(c) for c in under if c.words)

    def read(self) -> list[Assertion]:
        before: Command | None = None
        for cmd in self.commands:
            if cmd.substituted or not cmd.words or id(cmd) in self.piped:
                before = cmd if cmd.words and not cmd.substituted else before
                continue
            if not self.setup_only(cmd) and cmd.name not in PROBES:
                self.command(cmd, before)
            before = cmd
        return self.out

    def command(self, cmd: Command, before: Command | None) -> None:
        name = cmd.name
        if name in TESTS:
            self.bracket(cmd, before)
        elif name in GREPS:
            self.grep(cmd)
        elif name in ("diff", "cmp"):
            self.same_file(cmd)
        elif name == "jq":
            self.jq(cmd)
        elif name in HASHERS and ("-c" in cmd.words or "--check" in cmd.words):
            self.checksums(cmd)
        else:
            self.status(cmd)

    def bracket(self, cmd: Command, before: Command | None) -> None:
        body = [w for w in cmd.words[1:] if w not in ("]", "]]")]
        clauses: list[list[str]] = [[]]
        for w in body:
            if w in ("-a", "-o", "&&", "||"):
                clauses.append([])
            else:
                clauses[-1].append(w)
        for clause in clauses:
            negated = False
            while clause and clause[0] == "!":
                clause, negated = clause[1:], not negated
            if clause:
                self.clause(cmd, clause, negated, before)

    def clause(self, cmd: Command, words: list[str], negated: bool, before: Command | None) -> None:
        hops: list[Hop] = []
        if len(words) == 2 and words[0] in FILE_TESTS:
            path = self.scope.expand(words[1], cmd.line, hops)
            observed = Observed(kind="existence", path=path)
            self.record(cmd, FILE_TESTS[words[0]], observed, Expected(kind="exists"), hops, negated=negated)
        elif len(words) == 2 and words[0] in ("-n", "-z"):
            s = side(words[1], self.scope, cmd.line, before)
            observed = s.observed or Observed(kind="unknown", detail=words[1])
            neg = negated != (words[0] == "-z")
            self.record(cmd, "non-empty", observed, Expected(kind="truthy"), s.hops, negated=neg)
        elif len(words) == 1:
            s = side(words[0], self.scope, cmd.line, before)
            if s.observed is not None:
                self.record(cmd, "non-empty", s.observed, Expected(kind="truthy"), s.hops, negated=negated)
        elif len(words) == 3:
            self.compare(cmd, words, negated, before)

    def compare(self, cmd: Command, words: list[str], negated: bool, before: Command | None) -> None:
        a, op, b = words
        sa, sb = side(a, self.scope, cmd.line, before), side(b, self.scope, cmd.line, before)
        if sa.observed is None and sb.observed is None:
            if sa.reference is None and sb.reference is None:
                return  # two literals: a constant test, no check of the work
            sa, sb = (sa, sb) if sb.reference is not None else (sb, sa)
            sa = Side(observed=Observed(kind="unknown", detail=a), hops=sa.hops)
        if sa.observed is None or (sb.observed is not None and sb.literal is None and sa.literal is not None):
            sa, sb, op = sb, sa, {"-lt": "-gt", "-gt": "-lt", "-le": "-ge", "-ge": "-le"}.get(op, op)
        observed, hops = sa.observed, sa.hops + sb.hops
        assert observed is not None
        expected = sb.expected()
        if op in ("!=", "-ne"):
            negated = not negated
        if op in ("=~",):
            expected = Expected(kind="pattern", value=sb.literal, pattern_kind="regex")
            op = "matches"
        elif op in ("==", "=") and cmd.name == "[[" and sb.literal is not None and re.search(r"[*?]", sb.literal):
            expected = Expected(kind="pattern", value=sb.literal, pattern_kind="glob")
            op = "matches"
        elif op in NUMERIC and op not in ("-eq", "-ne") and sb.literal is not None:
            expected = Expected(kind="threshold", value=sb.literal)
            op = NUMERIC[op]
        else:
            op = "=="
        self.record(cmd, op, observed, expected, hops, negated=negated)

    def piped_input(self, cmd: Command) -> Observed:
        """What a command's stdin carries: the pipeline before it, read by its first stage."""
        chain: list[Command] = []
        c = cmd.piped_from
        while c is not None and len(chain) < 16:
            chain.insert(0, c)
            c = c.piped_from
        if not chain:
            return Observed(kind="unknown", detail="stdin")
        words = [self.scope.expand(w, cmd.line, []) for w in chain[0].words]
        first = Command(words, chain[0].line, chain[0].text, redirects=chain[0].redirects)
        return observe_commands([first, *chain[1:]])

    def grep(self, cmd: Command) -> None:
        flags, patterns, files, pattern_file = _grep_words(cmd.words[1:])
        if not patterns and pattern_file is None and files:
            patterns, files = [files[0]], files[1:]
        hops: list[Hop] = []
        if files:
            observed = Observed(kind="output_file", path=self.scope.expand(files[0], cmd.line, hops))
        else:
            observed = self.piped_input(cmd)
        if pattern_file is not None:
            expected = Expected(kind="file", path=self.scope.expand(pattern_file, cmd.line, hops))
        else:
            pattern = self.scope.expand(patterns[0], cmd.line, hops) if patterns else ""
            expected = _pattern(pattern, flags)
        op = "count" if "c" in flags else "matches"
        negated = "v" in flags
        self.record(cmd, op, observed, expected, hops, negated=negated)

    def same_file(self, cmd: Command) -> None:
        hops: list[Hop] = []
        args = [w for w in cmd.words[1:] if not w.startswith("-") or w == "-"]
        paths = [self.scope.expand(w, cmd.line, hops) for w in args[:2]]
        if len(paths) < 2:
            return
        if reference_path(paths[0]) and not reference_path(paths[1]):
            paths.reverse()
        ours, ref = paths
        if ours == "-":
            observed = self.piped_input(cmd)
        elif ours.startswith("<("):
            observed = side("$(" + ours[2:-1] + ")", self.scope, cmd.line).observed or Observed(kind="unknown")
        else:
            observed = Observed(kind="output_file", path=ours)
        flags = [w for w in cmd.words[1:] if w.startswith("-") and w != "-"]
        observed = observed.model_copy(update={"flags": flags, "detail": observed.detail or cmd.name})
        self.record(cmd, "same-file", observed, Expected(kind="file", path=ref), hops, negated=False)

    def jq(self, cmd: Command) -> None:
        hops: list[Hop] = []
        args = [w for w in cmd.words[1:] if not w.startswith("-")]
        program = args[0] if args else "."
        path = self.scope.expand(args[1], cmd.line, hops) if len(args) > 1 else None
        observed = Observed(kind="output_file", path=path, keys=jq_keys(program), detail=f"jq {program}")
        if path is None:
            observed = self.piped_input(cmd).model_copy(update={"keys": jq_keys(program), "detail": f"jq {program}"})
        lit = jq_literal(program)
        if lit is not None and lit[0] in ("==", "!="):
            exp, op = Expected(kind="literal", value=lit[1]), "=="
        elif lit is not None:
            exp, op = Expected(kind="threshold", value=lit[1]), lit[0]
        else:
            exp, op = Expected(kind="truthy"), "truthy" if "-e" in cmd.words else "parses"
        self.record(cmd, op, observed, exp, hops, negated=(lit is not None and lit[0] == "!="))

    def checksums(self, cmd: Command) -> None:
        hops: list[Hop] = []
        args = [self.scope.expand(w, cmd.line, hops) for w in cmd.words[1:] if not w.startswith("-")]
        listing = self.tests_file(args[0]) if args else None
        if listing is None:
            detail = " ".join(cmd.words)
            observed = Observed(kind="digest", command=list(cmd.words), detail=detail)
            exp = Expected(kind="file", path=args[0]) if args else Expected(kind="unknown")
            self.record(cmd, "==", observed, exp, hops, negated=False)
            return
        for n, line in enumerate(listing.lines, start=1):
            m = re.match(r"^([0-9a-fA-F]{8,})\s+\*?(\S.*)$", line.strip())
            if m:
                at = Hop(kind="constant", file=listing.rel, line=n, code=line.strip()[:TEST_MODEL_CODE_CHARS])
                observed = Observed(kind="digest", path=m.group(2), command=[cmd.name])
                self.record(cmd, "==", observed, Expected(kind="literal", value=m.group(1)), [*hops, at])

    def status(self, cmd: Command) -> None:
        """A command whose exit code decides the reward or an exit; a tests' own script is read through."""
        if _is_pytest(cmd) or cmd.name in SETUP or _decides(cmd) or cmd.name in ("echo", "printf", "cat"):
            return
        if not any(_decides(c) for c in self.guarded.get(id(cmd), [])):
            return
        hops: list[Hop] = []
        words = [self.scope.expand(w, cmd.line, hops) for w in cmd.words]
        target = _status_words(Command(words, cmd.line, cmd.text))
        script = self.tests_file(target[0]) if target else None
        if script is not None:
            hops.append(Hop(kind="call", file=script.rel, line=1, name=target[0], code=script.line(1)))
        flags = [w for w in target[1:] if w.startswith("-")]
        observed = Observed(kind="exit_code", command=words, flags=flags)
        self.record(cmd, "status", observed, Expected(kind="literal", value="0"), hops, negated=False)

    def tests_file(self, path: str) -> TestFile | None:
        """The test file a path names (`/tests/check.py`, `./check.sh`, `tests/x.sh`), if the tests hold it."""
        key = path.removeprefix("./").lstrip("/")
        for f in self.tests.files:
            if key and (f.in_tests == key or f.in_tests.endswith("/" + key) or key.endswith(f.in_tests)):
                return f
        return None

    def subscripts(self) -> list[Assertion]:
        """The checks of the tests' own shell files this one runs or sources, each behind a "call" hop."""
        out: list[Assertion] = []
        for cmd in self.commands:
            words = _status_words(cmd) if cmd.name != "source" and cmd.name != "." else cmd.words[1:]
            target = self.tests_file(self.scope.expand(words[0], cmd.line, [])) if words else None
            if target is None or not target.is_shell or target.rel in self.seen:
                continue
            self.seen.add(target.rel)
            call = Hop(kind="call", file=self.f.rel, line=cmd.line, name=target.rel, code=cmd.text[:160])
            sub = _Reader(self.tests, target, [*self.calls, call], self.seen)
            out += sub.read() + sub.subscripts()
        return out


def _grep_words(args: list[str]) -> tuple[set[str], list[str], list[str], str | None]:
    """(short flags, -e patterns, plain arguments, -f file) of a grep command line."""
    long = {"quiet": "q", "silent": "q", "fixed-strings": "F", "line-regexp": "x", "ignore-case": "i"}
    long |= {"count": "c", "invert-match": "v", "extended-regexp": "E", "word-regexp": "w", "perl-regexp": "P"}
    flags: set[str] = set()
    patterns: list[str] = []
    plain: list[str] = []
    pattern_file = None
    it = iter(args)
    for w in it:
        if w.startswith("--"):
            name, _, value = w[2:].partition("=")
            if name == "regexp":
                patterns.append(value or next(it, ""))
            elif name == "file":
                pattern_file = value or next(it, "")
            flags.add(long.get(name, ""))
        elif w.startswith("-") and len(w) > 1:
            for i, ch in enumerate(w[1:]):
                if ch in "ef":
                    value = w[i + 2 :] or next(it, "")
                    patterns, pattern_file = (patterns + [value], pattern_file) if ch == "e" else (patterns, value)
                    break
                flags.add(ch)
        else:
            plain.append(w)
    return flags, patterns, plain, pattern_file


def _pattern(pattern: str, flags: set[str]) -> Expected:
    """A grep pattern as what it requires: a whole line, a substring, a prefix or suffix, or a regex."""
    case = "i" not in flags
    if "F" in flags:
        kind = "line" if "x" in flags else "substring"
        return Expected(kind="pattern", value=pattern, pattern_kind=kind, case_sensitive=case)
    core = pattern.removeprefix("^").removesuffix("$") if not pattern.endswith("\\$") else pattern.removeprefix("^")
    literal = re.sub(r"\\([.\-+*?()\[\]{}|/^$])", r"\1", core)
    if REGEX_META.search(re.sub(r"\\[.\-+*?()\[\]{}|/^$]", "", core)):
        return Expected(kind="pattern", value=pattern, pattern_kind="regex", case_sensitive=case)
    anchored = ("x" in flags) or (pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$"))
    kind = "line" if anchored else "prefix" if pattern.startswith("^") else "suffix" if core != pattern else "substring"
    return Expected(kind="pattern", value=literal, pattern_kind=kind, case_sensitive=case)


def shell_assertions(tests: TestsModel) -> list[Assertion]:
    """Every check the entry script and the shell files it runs make (see the module docstring)."""
    script = tests.script
    if script is None or not script.is_shell:
        return []
    reader = _Reader(tests, script, [], {script.rel})
    return reader.read() + reader.subscripts()
