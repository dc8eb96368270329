"""The task model (issue 40 items 1 and 2): one reader of the tests that says, for each test, what it reads,
runs, compares with what, its thresholds and tolerances, and what it asserts unchanged; and one model per
version, built once per process.

The test files here are our own, written in the shapes real verifiers use (pytest classes, parametrize,
fixtures in conftest.py, helpers, subprocess, hashlib, `open(...).read() ==`, `assert x > 0.9`,
`math.isclose`, `pytest.approx`, unittest).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envqa.core.environment import PARSED, load_environment
from envqa.core.task_model import MODELS, model_of, tests_of

pytestmark = pytest.mark.fast  # the fast tier: no Docker, Redis or Postgres

TASK = {
    "task.toml": 'version = "1.0"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n',
    "instruction.md": "Write /app/out.txt.\n",
    "environment/Dockerfile": "FROM debian:bookworm\nWORKDIR /app\nCOPY data /app/data\n",
    "solution/solve.sh": "#!/bin/bash\necho hello > /app/out.txt\n",
    "tests/test.sh": "#!/bin/bash\npytest /tests/test_outputs.py && echo 1 > /logs/verifier/reward.txt\n",
}


def _task(root: Path, files: dict[str, str]) -> Path:
    for rel, text in {**TASK, **files}.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


@pytest.fixture
def fresh_models():
    MODELS.clear()
    yield MODELS
    MODELS.clear()


def _cases(tmp_path: Path, files: dict[str, str]) -> dict[str, object]:
    env = load_environment(_task(tmp_path / "task", files))
    return {c.name: c for c in tests_of(env).cases}


def test_a_test_reads_compares_with_a_literal_and_a_file(tmp_path, fresh_models):
    cases = _cases(
        tmp_path,
        {
            "tests/test_outputs.py": "from pathlib import Path\n\n"
            "def test_literal():\n    out = Path('/app/out.txt').read_text().strip()\n    assert out == 'hello'\n\n"
            "def test_against_file():\n"
            "    assert open('/app/out.txt').read() == open('/tests/expected.txt').read()\n"
        },
    )
    literal = cases["test_literal"]
    assert literal.facts.reads == ["/app/out.txt"]
    [cmp] = literal.facts.compares
    assert (cmp.op, cmp.left.kind, cmp.right.kind, cmp.right.value) == ("==", "file", "literal", "hello")
    both = cases["test_against_file"]
    assert set(both.facts.reads) == {"/app/out.txt", "/tests/expected.txt"}
    [cmp] = both.facts.compares
    assert (cmp.left.kind, cmp.right.kind) == ("file", "file")


def test_thresholds_and_tolerances(tmp_path, fresh_models):
    cases = _cases(
        tmp_path,
        {
            "tests/test_outputs.py": "import math\nimport pytest\nimport numpy as np\n\nMIN_ACC = 0.9\n\n"
            "def test_accuracy():\n    acc = score()\n    assert acc > MIN_ACC\n\n"
            "def test_close():\n    assert math.isclose(value(), 3.14, rel_tol=1e-3)\n\n"
            "def test_approx():\n    assert value() == pytest.approx(2.5, abs=0.01)\n\n"
            "def test_arrays():\n    np.testing.assert_allclose(got(), want(), rtol=0.05)\n\n"
            "def test_exact():\n    assert value() == 3\n"
        },
    )
    [bound] = cases["test_accuracy"].facts.tolerances
    assert (bound.kind, bound.value) == ("bound", 0.9)
    [close] = cases["test_close"].facts.tolerances
    assert (close.kind, close.value) == ("isclose", 1e-3)
    [approx] = cases["test_approx"].facts.tolerances
    assert (approx.kind, approx.value) == ("approx", 0.01)
    assert cases["test_approx"].facts.compares[0].right.value == "2.5"  # approx(2.5) compares with the literal
    [arrays] = cases["test_arrays"].facts.tolerances
    assert (arrays.kind, arrays.value) == ("allclose", 0.05)
    assert cases["test_exact"].facts.tolerances == []  # an exact check has no tolerance


def test_what_it_runs_and_what_it_asserts_unchanged(tmp_path, fresh_models):
    cases = _cases(
        tmp_path,
        {
            "tests/test_outputs.py": "import hashlib\nimport subprocess\n\n"
            "ORIGINAL = 'd41d8cd98f00b204e9800998ecf8427e'\n\n"
            "def test_runs():\n    r = subprocess.run(['/app/solve', '--fast'], capture_output=True, text=True)\n"
            "    assert r.returncode == 0\n\n"
            "def test_input_untouched():\n"
            "    digest = hashlib.md5(open('/app/data/input.csv', 'rb').read()).hexdigest()\n"
            "    assert digest == ORIGINAL\n"
        },
    )
    runs = cases["test_runs"].facts
    assert runs.runs and "/app/solve" in runs.runs[0]
    assert "/app/solve" in runs.runs  # the path it executes, from the same reader as the instruction checks
    kept = cases["test_input_untouched"].facts
    assert kept.unchanged == ["/app/data/input.csv"]
    [cmp] = kept.compares
    assert (cmp.left.kind, cmp.right.kind, cmp.right.value) == ("file", "literal", "d41d8cd98f00b204e9800998ecf8427e")


def test_classes_parametrize_helpers_and_conftest_fixtures(tmp_path, fresh_models):
    cases = _cases(
        tmp_path,
        {
            "tests/conftest.py": "import json\nimport pytest\n\n"
            "@pytest.fixture\ndef report():\n    return json.load(open('/app/report.json'))\n",
            "tests/test_outputs.py": "import pytest\nimport unittest\n\n"
            "def load_rows():\n    return open('/app/rows.csv').read().splitlines()\n\n"
            "class TestReport:\n"
            "    def _total(self, report):\n        return report['total']\n\n"
            "    def test_total(self, report):\n        assert self._total(report) == 10\n\n"
            "    @pytest.mark.parametrize('n', [1, 2, 3])\n"
            "    @pytest.mark.parametrize('mode', ['a', 'b'])\n"
            "    def test_rows(self, n, mode):\n        assert len(load_rows()) > n\n\n"
            "class Helper:\n    def test_not_a_test(self):\n        pass\n\n"
            "class Legacy(unittest.TestCase):\n"
            "    def test_legacy(self):\n        self.assertEqual(load_rows()[0], 'id,name')\n",
        },
    )
    assert set(cases) == {"test_total", "test_rows", "test_legacy"}  # Helper is no test class; conftest has none
    total = cases["test_total"]
    assert (total.cls, total.fixtures, total.helpers) == ("TestReport", ["report"], ["_total"])
    assert total.facts.reads == ["/app/report.json"]  # read by the conftest fixture
    assert total.id == "tests/test_outputs.py::TestReport::test_total"
    rows = cases["test_rows"]
    assert rows.params == 6 and rows.helpers == ["load_rows"] and rows.facts.reads == ["/app/rows.csv"]
    legacy = cases["test_legacy"]
    [cmp] = legacy.facts.compares
    assert (cmp.op, cmp.right.kind, cmp.right.value) == ("==", "literal", "id,name")


def test_a_test_file_that_does_not_parse_is_a_fact_and_a_bad_file_a_named_error(tmp_path, fresh_models):
    root = _task(
        tmp_path / "task",
        {"tests/test_broken.py": "def test_x(:\n    pass\n", "tests/test_ok.py": "def test_ok():\n    assert 1\n"},
    )
    env = load_environment(root)
    os.mkfifo(root / "tests" / "pipe.txt")  # a FIFO would hang a plain read
    tests = tests_of(env)
    assert [c.name for c in tests.cases] == ["test_ok"]
    broken = {f.rel: f for f in tests.unparsed}
    assert broken["tests/test_broken.py"].parse_error.startswith("SyntaxError")
    assert "FIFO" in broken["tests/pipe.txt"].error.message
    assert "tests/test_broken.py: not parsed" in tests.shape.computed  # the rules see the same fact


def test_the_facets_read_the_same_files_once(tmp_path, fresh_models):
    """Every facet of the model uses the one parse of each file: a second facet parses nothing again."""
    env = load_environment(_task(tmp_path / "task", {"tests/test_a.py": "def test_a():\n    assert 1 > 0.5\n"}))
    tests = tests_of(env)
    [f] = tests.python
    tree = f.tree
    _ = tests.cases, tests.shape, tests.thresholds, tests.vacuity, tests.requirements
    assert f.tree is tree and tests_of(env) is tests


def test_a_version_is_read_once_per_process_wherever_it_lies(tmp_path, fresh_models):
    """The task model is cached by version: the user's folder and a copy of it (a snapshot) share one model;
    an edit is a new version, read anew."""
    PARSED.clear()
    files = {"tests/test_a.py": "def test_a():\n    assert open('/app/out.txt').read() == 'x'\n"}
    first = load_environment(_task(tmp_path / "a", files))
    copy = load_environment(_task(tmp_path / "b", files))
    for env in (first, copy, first, copy):
        model = model_of(env)
        _ = model.tests.cases, model.test_sh, model.dockerfile_spans
    assert fresh_models.builds == 1 and PARSED.parses == 1
    assert model_of(copy).env.root == copy.root  # each caller keeps its own paths
    assert [c.name for c in model_of(first).tests.cases] == ["test_a"]
    assert [cmd.name for cmd in model_of(first).test_sh] == ["pytest", "echo"]
    assert [s.keyword for s in model_of(first).dockerfile_spans] == ["FROM", "WORKDIR", "COPY"]
    (tmp_path / "b" / "tests" / "test_a.py").write_text("def test_b():\n    assert True\n")
    edited = load_environment(tmp_path / "b")
    assert [c.name for c in model_of(edited).tests.cases] == ["test_b"]
    assert fresh_models.builds == 2 and PARSED.parses == 2
    PARSED.clear()


def test_jobs_load_a_snapshot_once_and_any_other_folder_as_it_is_now(tmp_path, fresh_models):
    """`version_env`: a job's snapshot (QA_HOME/envs/<version>) is loaded once per process and not hashed
    again; a folder that is not a snapshot is read as it is now, so the caller sees that it changed."""
    from envqa.core.environment import version_env

    files = {"tests/test_a.py": "def test_a():\n    assert 1\n"}
    user = load_environment(_task(tmp_path / "user", files))
    snap = _task(tmp_path / "home" / "envs" / user.version, files)
    first = version_env(snap, user.version)
    (snap / "tests" / "test_a.py").write_text("def test_z():\n    assert 0\n")  # (a snapshot never changes)
    assert version_env(snap, user.version) is first and first.version == user.version
    (tmp_path / "user" / "tests" / "test_a.py").write_text("def test_b():\n    assert 1\n")
    assert version_env(tmp_path / "user", user.version).version != user.version
