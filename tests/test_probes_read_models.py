"""Every static rule is a query over the task model (issue 51, part 2): no module under probes/ parses or reads a
test file itself. The one reader of the verifier's files is core/task_model/ (and core/consistency/, which it
calls); a rule that needs a new fact adds a facet there (tests_reader.py) and asks `tests_of(env)` / `model_of(env)`.

What counts, read from each module's `ast` (simple on purpose, so a breach is named, not argued about):

- parsing: `import ast`, `import bashlex` (or `from` either), or importing `parse_script` from
  envqa.core.parsers.shell (or naming `shell.parse_script`);
- reading a test file: a function that calls a file reader (`.read_text`, `.read_bytes`, `read_text`, `read_bytes`,
  `open`, `.open`) and names `env.tests` itself, or a function that reads (itself or through the module's other
  functions) and is handed `env.tests` by a caller in the same module.

ALLOWED lists the modules that parse material that is not a test file, each with what it parses and why.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

ROOT = Path(__file__).resolve().parent.parent
PROBES = ROOT / "probes"
PARSERS = {"ast", "bashlex"}
READERS = {"read_text", "read_bytes", "open"}

ALLOWED = {
    "probes/cross_trial/steps.py": "parse_script over the agent's own commands, taken from its trajectory steps (what "
    "a solver ran in its shell): a transcript of the agent, never a file of the task's tests",
}


def _parses(tree: ast.Module) -> list[str]:
    """What the module imports or names to parse source: 'import ast', 'parse_script', ..."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [f"import {a.name}" for a in node.names if a.name.split(".")[0] in PARSERS]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in PARSERS:
                out.append(f"from {node.module} import ...")
            if node.module.endswith("parsers.shell") and any(a.name == "parse_script" for a in node.names):
                out.append("from envqa.core.parsers.shell import parse_script")
        elif isinstance(node, ast.Attribute) and node.attr == "parse_script":
            out.append("<module>.parse_script")
    return out


def _names_env_tests(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "tests" and getattr(node.value, "id", "") == "env"


def _reads(fn: ast.AST, readers: set[str]) -> bool:
    """Whether the function calls a file reader, or a function of the module that does (`readers`)."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr in READERS) or (isinstance(f, ast.Name) and f.id in readers):
                return True
    return False


def _test_reads(tree: ast.Module) -> list[str]:
    """Functions that read files and see `env.tests` (named in them, or passed to them in this module)."""
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    readers = set(READERS)
    while grown := {name for name, fn in functions.items() if name not in readers and _reads(fn, readers)}:
        readers |= grown  # a function that calls a reader of this module reads too
    readers -= READERS
    direct = {name for name, fn in functions.items() if _reads(fn, set(READERS))}  # calls a file reader itself
    out = [
        f"{name} reads files and names env.tests"
        for name in sorted(direct)
        if any(_names_env_tests(n) for n in ast.walk(functions[name]))
    ]
    for node in ast.walk(tree):
        handed = isinstance(node, ast.Call) and getattr(node.func, "id", "") in readers
        if handed and any(_names_env_tests(a) for a in [*node.args, *(k.value for k in node.keywords)]):  # type: ignore[attr-defined]
            out.append(f"{node.func.id} is handed env.tests (line {node.lineno}) and reads files")  # type: ignore[attr-defined]
    return out


def breaches(source: str) -> list[str]:
    tree = ast.parse(source)
    return _parses(tree) + _test_reads(tree)


def probe_modules() -> dict[str, str]:
    return {p.relative_to(ROOT).as_posix(): p.read_text() for p in sorted(PROBES.rglob("*.py"))}


def test_no_probe_module_parses_or_reads_a_test_file():
    found = {rel: b for rel, src in probe_modules().items() if rel not in ALLOWED and (b := breaches(src))}
    assert not found, (
        f"{len(found)} probe modules parse or read test files themselves (move it to a facet of "
        f"core/task_model/tests_reader.py): {found}"
    )


def test_every_allowed_module_exists_needs_its_exemption_and_says_why():
    modules = probe_modules()
    for rel, why in ALLOWED.items():
        assert rel in modules, f"{rel} is gone: drop it from ALLOWED"
        assert breaches(modules[rel]), f"{rel} no longer parses anything: drop it from ALLOWED"
        assert len(why) > 60 and ("not" in why or "never" in why), (
            f"{rel}: say what it parses and why it is no test file"
        )


@pytest.mark.parametrize(
    "source",
    [
        "import ast\n",
        "from ast import parse\n",
        "import bashlex\n",
        "from envqa.core.parsers.shell import Command, parse_script\n",
        "from envqa.core.parsers import shell\nshell.parse_script('ls')\n",
        "def f(env):\n    for c in env.tests:\n        c.source.read_text()\n",
        "def _read(copies):\n    return [open(c.source) for c in copies]\n\ndef g(env):\n    return _read(env.tests)\n",
        "def _one(p):\n    return p.read_text()\n\ndef _all(cs):\n    return [_one(c.source) for c in cs]\n\n"
        "def g(env):\n    return _all(env.tests)\n",
    ],
)
def test_the_check_is_live(source):
    assert breaches(source)


@pytest.mark.parametrize(
    "source",
    [
        "from envqa.core.parsers.shell import Command\n",
        "from envqa.core.task_model import tests_of\n\ndef f(env):\n    return tests_of(env).strict_bounds\n",
        "def f(env):\n    return env.dockerfile.read_text()\n",
        "def f(env):\n    return bool(env.tests)\n",
    ],
)
def test_queries_and_other_files_pass(source):
    assert not breaches(source)
