"""The verifier's files, read once through the guarded reader and parsed once.

Every rule that reads the tests gets them from here (core/task_model/tests_reader.py builds on it), so a test
file is opened and parsed once per version and process, and a broken one is a fact every rule sees the same
way: a file the guarded reader refuses (a FIFO, a dangling symlink, far too large) carries its
`InputFileError`; a Python file that does not parse carries its `SyntaxError` as text. Neither is a crash.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from envqa.core.environment import Environment
from envqa.core.input_files import InputFileError, check_file, decode, read_bytes
from envqa.core.parsers.shell import Command, parse_script

SCRIPT_NAMES = ("test.sh", "run-tests.sh")  # the verifier's entry script (Harbor, Terminal-Bench 1)
SHELL_SUFFIXES = (".sh", ".bash")


@dataclass(eq=False)
class TestFile:
    """One file the verifier is given: where it is, and its text and parse, each read at most once."""

    path: Path
    rel: str  # relative to the task's root, as findings name it ("tests/test_outputs.py")
    in_tests: str  # as the verifier's folder names it: "tests/<path under the copied folder>"
    copy_source: Path  # the folder (or file) of env.tests it came from
    copy_target: str = ""  # where that copy lands in the container ("/tests", "/tests/test.sh")
    size: int = 0
    error: InputFileError | None = None  # the guarded reader refused it: never read, never parsed
    undecodable: bool = False  # not UTF-8: `text` has the bad bytes replaced (a rule may skip such a file)
    _parse_error: str | None = field(default=None, init=False, repr=False)
    syntax_error_at: tuple[int, str] | None = field(default=None, init=False, repr=False)  # (line, parser's words)

    __test__ = False  # not a pytest class

    @property
    def suffix(self) -> str:
        return self.path.suffix

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def is_python(self) -> bool:
        return self.suffix == ".py"

    @property
    def is_shell(self) -> bool:
        return self.suffix in SHELL_SUFFIXES

    @cached_property
    def text(self) -> str:
        """The file's text ("" when the guarded reader refused it); undecodable bytes replaced, not fatal."""
        if self.error is not None:
            return ""
        try:
            data = read_bytes(self.path)
        except InputFileError as e:
            self.error = e
            return ""
        try:
            return decode(self.path, data)
        except InputFileError:
            self.undecodable = True
            return decode(self.path, data, strict=False)

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    @cached_property
    def tree(self) -> ast.Module | None:
        """The module's AST; None when it is not Python, was refused, or does not parse (`parse_error`)."""
        if not self.is_python or self.error is not None:
            return None
        try:
            return ast.parse(self.text)
        except (SyntaxError, ValueError, RecursionError) as e:  # NUL bytes, nesting too deep
            self._parse_error = f"{type(e).__name__}: {e}"
            if isinstance(e, SyntaxError):
                self.syntax_error_at = (e.lineno or 1, e.msg)
            return None

    @property
    def parse_error(self) -> str | None:
        """Why a Python file has no tree (a fact for the rules, never raised)."""
        if self.is_python and self.tree is None and self.error is None:
            return self._parse_error or "does not parse"
        return None

    @cached_property
    def commands(self) -> list[Command]:
        """A shell file's commands (core/parsers/shell.py); [] for any other file."""
        return parse_script(self.text) if self.is_shell and self.error is None else []

    def same_bytes(self, other: Path) -> bool:
        """Whether `other` (a file of the image's build context, say) holds exactly this file's bytes; False when
        either cannot be read."""
        try:
            return self.path.is_file() and other.is_file() and other.read_bytes() == self.path.read_bytes()
        except OSError:
            return False

    def line(self, n: int) -> str:
        """Line n (1-based), stripped; "" outside the file."""
        return self.lines[n - 1].strip() if 0 < n <= len(self.lines) else ""


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _listed(source: Path) -> list[Path]:
    """The files of one tests copy: the file itself, or every file under the folder (sorted, as rglob gives)."""
    if source.is_file():
        return [source]
    if not source.is_dir():
        return []
    return sorted(p for p in source.rglob("*") if not p.is_dir())  # a FIFO or dangling link: a named error


def test_files(env: Environment) -> list[TestFile]:
    """Every file of env.tests, in the order the copies list them; nothing is read yet (text is lazy)."""
    out: list[TestFile] = []
    seen: set[Path] = set()
    for copy in env.tests:
        source = Path(copy.source)
        for path in _listed(source):
            if path in seen:
                continue
            seen.add(path)
            under = path.relative_to(source).as_posix() if source.is_dir() else path.name
            f = TestFile(
                path=path,
                rel=_rel(env.root, path),
                in_tests=f"tests/{under}",
                copy_source=source,
                copy_target=copy.target,
            )
            try:
                f.size = check_file(path).st_size
            except InputFileError as e:
                f.error = e
            out.append(f)
    return out


test_files.__test__ = False  # type: ignore[attr-defined]
