"""What pytest would collect from the verifier's files: a module that may define a test, and a folder whose
configuration or conftest.py collects by other names (verifier-test-file-no-tests asks both).

Read from the trees the test model already holds (core/task_model/files.py) and, for the configuration, from the
few files pytest itself reads beside and above the test files. We would rather say "may collect" than cry wolf.
"""

from __future__ import annotations

import ast
from pathlib import Path

from envqa.core.input_files import read_text

COLLECT_HOOKS = ("pytest_collect_file", "pytest_pycollect_makeitem", "pytest_collect_directory")
COLLECT_SETTINGS = ("python_files", "python_functions", "python_classes")
CONFIG_NAMES = ("pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml", "conftest.py")


def defines_tests(tree: ast.Module) -> bool:
    """Whether pytest might collect anything from the module: a test* function, any class (a TestCase subclass,
    inherited tests), a test* name bound by assignment or import, a star import, or names made at run time."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            return True
        if isinstance(node, ast.ClassDef):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            a.name == "*" or (a.asname or a.name).startswith("test") for a in node.names
        ):
            return True
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id.startswith("test"):
            return True
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("globals", "setattr", "exec", "type"):
            return True
    return False


def collection_configured(files: list[Path]) -> bool:
    """pytest told to collect other names, or a conftest that collects by itself, near these files (in their
    folders or any folder above them)."""
    folders = {f.parent for f in files} | {p for f in files for p in f.parents}
    for folder in folders:
        for name in CONFIG_NAMES:
            p = folder / name
            if p.is_file():
                text = read_text(p, strict=False)
                if any(k in text for k in COLLECT_SETTINGS + COLLECT_HOOKS):
                    return True
    return False
