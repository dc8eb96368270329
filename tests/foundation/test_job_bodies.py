"""Typed seams (issue 40 item 6): core names a job body by its `JobKind`, never by a dotted name of the app.

A job carries the dotted name of a trampoline inside core (envqa.core.job_bodies); the app registers the body
of each kind. An import-linter contract cannot see a string, so the first test reads core's source."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rq.utils import import_attribute

from envqa.core import job_bodies
from envqa.core.job_bodies import JobKind, job_body, job_path

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

CORE = Path(__file__).resolve().parents[2] / "core"
UPPER = re.compile(r"envqa\.(app|graphs|probes|agents)(\.\w+)+")  # the layers above core


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def dotted_names_above_core() -> list[str]:
    """Every string constant in core (docstrings aside) that is a dotted name of a layer above core."""
    hits = []
    for path in sorted(CORE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                for word in re.findall(r"[\w.]+", node.value):
                    if UPPER.fullmatch(word):
                        hits.append(f"{path.relative_to(CORE.parent)}:{node.lineno}: {word}")
    return hits


def test_core_names_no_function_of_a_layer_above_it():
    assert dotted_names_above_core() == []


def test_the_check_sees_a_dotted_app_name():
    tree = ast.parse('"""Docs may name envqa.app.jobs."""\nBODY = "envqa.app.jobs.run_trial_job"\n')
    skip = _docstrings(tree)
    words = [
        w
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip
        for w in re.findall(r"[\w.]+", n.value)
        if UPPER.fullmatch(w)
    ]
    assert words == ["envqa.app.jobs.run_trial_job"]


def test_every_kind_has_its_trampoline_and_the_app_registers_every_body():
    import envqa.app  # noqa: F401 - the app registers its loader at import

    for kind in JobKind:
        trampoline = import_attribute(job_path(kind))  # as rq resolves a job's func
        assert trampoline is getattr(job_bodies, kind.value)
        assert job_body(kind).__module__.startswith("envqa.app.")


def test_a_process_that_never_imported_the_app_finds_the_bodies_by_entry_point():
    """A stock `rq worker` imports only the trampoline's module; the `envqa.job_bodies` entry point loads the app."""
    code = (
        "import sys\n"
        "from envqa.core.job_bodies import JobKind, job_body\n"
        "assert 'envqa.app' not in sys.modules\n"
        "print(job_body(JobKind.TRIAL).__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "envqa.app.jobs"


def test_without_a_loader_or_entry_point_the_error_says_what_is_missing(monkeypatch):
    monkeypatch.setattr(job_bodies, "_BODIES", {})
    monkeypatch.setattr(job_bodies, "_LOADERS", [])
    monkeypatch.setattr(job_bodies, "entry_points", lambda group: [])  # an envqa that is not installed
    with pytest.raises(LookupError, match=r"envqa\.job_bodies"):
        job_body(JobKind.TRIAL)


def test_a_label_call_runs_through_the_trampoline():
    from envqa.app import jobs

    assert job_body(JobKind.LABEL) is jobs.label_job
    assert import_attribute(job_path(JobKind.GRAPH_GIVE_UP)).__name__ == "give_up_graph"
