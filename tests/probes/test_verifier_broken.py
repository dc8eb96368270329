"""probes/static/verifier_broken.py on each shape of a verifier that cannot work, and on the look-alikes that must stay
quiet (issue 44 item 3). Each task is examples/clean-wordfreq (or tb1-clean) with one or two files changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from envqa.core.environment import load_environment
from envqa.probes.static.task_schema import lint_findings
from envqa.probes.static.verifier_broken import verifier_broken_findings
from qa_testkit import REPO

pytestmark = pytest.mark.fast

RULES = {"verifier-test-file-invalid", "verifier-test-file-no-tests", "verifier-runs-missing-file", "solution-empty"}
HEAD = "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
TAIL = " && echo 1 > /logs/verifier/reward.txt\nexit 0\n"
PYTEST = "python3 -m pytest -q /tests/test_wordfreq.py -p no:cacheprovider"
GOOD_TEST = "def test_one():\n    assert 1 + 1 == 2\n"


def _task(tmp_path: Path, files: dict[str, str | None], base: str = "clean-wordfreq") -> Path:
    root = tmp_path / base
    shutil.copytree(REPO / "examples" / base, root)
    (root / "qa-expected.json").unlink()
    for rel, text in files.items():
        p = root / rel
        if text is None:
            p.unlink()
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
    return root


def _found(root: Path) -> dict[str, list]:
    env = load_environment(root, lint=True)
    out: dict[str, list] = {}
    for f in verifier_broken_findings(env):
        out.setdefault(f.rule, []).append(f)
    return out


# --- the shapes -------------------------------------------------------------------------------------------


def test_a_test_file_that_does_not_parse_is_named_with_its_line(tmp_path):
    root = _task(tmp_path, {"tests/test_wordfreq.py": "import os\n\n\ndef test_x(\n    assert True\n"})
    (f,) = _found(root)["verifier-test-file-invalid"]
    assert f.severity == "error" and f.location.startswith("tests/test_wordfreq.py:")
    assert f.evidence[0].startswith("tests/test_wordfreq.py:") and "tests/test.sh:5" in f.evidence[1]


def test_an_empty_test_file_and_one_without_tests(tmp_path):
    for text in ("", '"""checks"""\n\ndef check_counts():\n    assert 1\n'):
        root = _task(tmp_path / str(len(text)), {"tests/test_wordfreq.py": text})
        (f,) = _found(root)["verifier-test-file-no-tests"]
        assert f.location == "tests/test_wordfreq.py" and "exit 5" in f.message


def test_test_sh_runs_a_file_the_task_does_not_ship(tmp_path):
    root = _task(tmp_path, {"tests/test.sh": HEAD + "python3 -m pytest -q /tests/test_outputs.py" + TAIL})
    (f,) = _found(root)["verifier-runs-missing-file"]
    assert f.location == "tests/test.sh:4" and "tests/test_outputs.py: no such file" in f.evidence


@pytest.mark.parametrize(
    "line",
    [
        "bash /tests/run_checks.sh",
        "source $TEST_DIR/lib.sh",
        ". /tests/lib.sh",
        "python3 /tests/grade.py",
        "/tests/x.sh",
    ],
)
def test_a_missing_script_run_sourced_or_executed(tmp_path, line):
    root = _task(tmp_path, {"tests/test.sh": HEAD + line + "\n" + PYTEST + TAIL})
    assert set(_found(root)) == {"verifier-runs-missing-file"}


def test_a_relative_path_after_cd_into_tests(tmp_path):
    script = HEAD + 'cd "${TEST_DIR:-/tests}"\npython3 -m pytest -q test_missing.py' + TAIL
    assert set(_found(_task(tmp_path, {"tests/test.sh": script}))) == {"verifier-runs-missing-file"}


@pytest.mark.parametrize("text", ["", "#!/bin/bash\n# TODO\n\n"])
def test_an_empty_reference_solution(tmp_path, text):
    (f,) = _found(_task(tmp_path, {"solution/solve.sh": text}))["solution-empty"]
    assert f.location == "solution/solve.sh" and f.severity == "error"


def test_terminal_bench_1_layout(tmp_path):
    root = _task(tmp_path, {"tests/test_outputs.py": "def test_x(:\n    pass\n", "solution.sh": "\n"}, base="tb1-clean")
    assert set(_found(root)) == {"verifier-test-file-invalid", "solution-empty"}


def test_lint_reports_them_with_the_other_rules(tmp_path):
    root = _task(tmp_path, {"tests/test_wordfreq.py": "def test_x(\n"})
    assert "verifier-test-file-invalid" in {f.rule for f in lint_findings(load_environment(root, lint=True))}


# --- the look-alikes: quiet -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "writer",
    [
        "cat > /tests/test_gen.py <<'PY'\n" + GOOD_TEST + "PY\n",
        "curl -sSfo /tests/test_gen.py https://example.invalid/test_gen.py\n",
        "wget -qO $TEST_DIR/test_gen.py https://example.invalid/t.py\n",
        "cp /app/fixtures/test_gen.py /tests/\n",
        "tar -xzf /tests/suite.tgz -C /tests\n",
    ],
)
def test_a_test_file_test_sh_writes_or_downloads_first(tmp_path, writer):
    files = {"tests/test.sh": HEAD + writer + "python3 -m pytest -q /tests/test_gen.py" + TAIL}
    if "suite.tgz" in writer:
        files["tests/suite.tgz"] = "not really an archive"
    assert _found(_task(tmp_path, files)) == {}


def test_a_bash_or_node_verifier_is_not_read_as_python(tmp_path):
    bash = HEAD + '[ "$(bash /app/wordfreq < /tests/in.txt)" = "1 a" ] && echo 1 > /logs/verifier/reward.txt\n'
    node = HEAD + "node /tests/check.js" + TAIL
    files = {"tests/in.txt": "a\n", "tests/check.js": "process.exit(0)\n", "tests/helper.py": "def x(:\n"}
    assert _found(_task(tmp_path / "b", {**files, "tests/test.sh": bash})) == {}
    assert _found(_task(tmp_path / "n", {**files, "tests/test.sh": node})) == {}


def test_tests_collected_from_a_folder(tmp_path):
    files = {
        "tests/test.sh": HEAD + "python3 -m pytest -q /tests" + TAIL,
        "tests/suite/test_more.py": GOOD_TEST,
        "tests/suite/helpers.py": "def helper():\n    return 1\n",
        "tests/data/not_python.py": "this is an input file, not Python (\n",
    }
    assert _found(_task(tmp_path, files)) == {}


def test_parametrised_fixture_generated_and_unittest_tests(tmp_path):
    params = "import pytest\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_n(n):\n    assert n\n"
    generated = (
        "def pytest_generate_tests(metafunc):\n    metafunc.parametrize('x', [1])\n\ndef test_x(x):\n    assert x\n"
    )
    unit = "import unittest\n\nclass Checks(unittest.TestCase):\n    def test_a(self):\n        self.assertTrue(1)\n"
    inherited = "from base_checks import BaseChecks\n\nclass WordfreqChecks(BaseChecks):\n    pass\n"
    made = "from checks import make_test\n\ntest_counts = make_test('counts')\n"
    for i, text in enumerate((params, generated, unit, inherited, made)):
        assert _found(_task(tmp_path / str(i), {"tests/test_wordfreq.py": text})) == {}, text


def test_pytest_configured_to_collect_other_names(tmp_path):
    files = {
        "tests/test_wordfreq.py": "def check_counts():\n    assert 1\n",
        "tests/pytest.ini": "[pytest]\npython_functions = check_*\n",
    }
    assert _found(_task(tmp_path, files)) == {}


def test_terminal_bench_harness_scripts_are_not_missing(tmp_path):
    script = "#!/bin/bash\nsource $TEST_DIR/setup-uv-pytest.sh\nbash $TEST_DIR/run-uv-pytest.sh\n"
    assert _found(_task(tmp_path, {"run-tests.sh": script}, base="tb1-clean")) == {}


def test_every_example_outside_ours_is_quiet():
    """The examples written for other rules: none is a broken verifier (ours are the three below)."""
    ours = {"verifier-broken-files", "verifier-no-tests-empty-solution"}
    for root in sorted((REPO / "examples").iterdir()):
        if root.is_dir() and (root / "qa-expected.json").is_file() and root.name not in ours:
            assert _found(root) == {}, root.name
