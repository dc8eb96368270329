"""Where a task's files are, for the file rules: a path as the task names it, the verifier's script.

Its own module so that the static rules (probes/static/findings.py), the task rules (probes/static/task_rules.py) and the
image rules (probes/static/image_checks.py) share it without importing each other in a circle.
"""

from __future__ import annotations

from pathlib import Path

from envqa.core.environment import Environment
from envqa.core.parsers.shell import Command
from envqa.core.task_model import tests_of


def rel(env: Environment, path: Path) -> str:
    """`path` relative to the task's root (as findings name it), or as it is when outside the task."""
    try:
        return path.relative_to(env.root).as_posix()
    except ValueError:
        return path.as_posix()


def test_script(env: Environment) -> Path | None:
    """The verifier's entry script (tests/test.sh, or run-tests.sh in the older layout), when there is one. A file
    copied to that name (TB1's run-tests.sh, a milestone's own script) wins over a folder's file of the name."""
    for copy in sorted(env.tests, key=lambda c: c.source.is_dir()):
        for name in ("test.sh", "run-tests.sh"):
            if copy.source.is_dir():
                p = copy.source / name
            elif copy.target.rsplit("/", 1)[-1] == name:
                p = copy.source
            else:
                continue
            if p.is_file():
                return p
    return None


def script_commands(env: Environment) -> list[Command]:
    """The commands of the verifier's entry script, from the task model (parsed once per version)."""
    script = tests_of(env).script
    return script.commands if script is not None else []


test_script.__test__ = False  # a helper, not a pytest test (tests import it by name)
