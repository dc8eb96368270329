"""The Python assertion reader (core/task_model/assertion_python.py): each case is a small verifier written one
way, and the record's fields (observes, expected, op, line, hops, cases) must read what the check really does,
through helpers, fixtures, parametrize, loops, constants and the pathlib/open/subprocess spellings."""

from __future__ import annotations

from pathlib import Path

import pytest

from envqa.core.environment import load_environment
from envqa.core.task_model import model_of
from envqa.core.task_model.assertions import Assertion

pytestmark = pytest.mark.fast

TOML = 'version = "1.0"\n[environment]\nallow_internet = false\n'


def checks(root: Path, test: str = "", name: str = "tests/test_outputs.py", **extra: str) -> list[Assertion]:
    """The Python records of a task whose tests/test_outputs.py is `test` (and `extra`: tests__helpers_py is tests/helpers.py)."""
    texts = {
        "task.toml": TOML,
        "instruction.md": "Write hello to /app/out.txt.\n",
        "environment/Dockerfile": "FROM debian:bookworm\n",
        "solution/solve.sh": "#!/bin/bash\necho hello > /app/out.txt\n",
        "tests/test.sh": "#!/bin/bash\npytest /tests\n",
        name: test,
        **{k.replace("__", "/").removesuffix("_py") + ".py": v for k, v in extra.items()},
    }
    for rel, text in texts.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return model_of(load_environment(root, lint=True)).assertions.in_language("python")


def one(root: Path, test: str, **extra: str) -> Assertion:
    found = checks(root, test, **extra)
    assert len(found) == 1, [a.code for a in found]
    return found[0]


def hop_kinds(a: Assertion) -> list[tuple[str, str, int]]:
    return [(h.kind, h.name, h.line) for h in a.hops]


def test_plain_literal_on_an_output_file(tmp_path):
    a = one(
        tmp_path,
        'from pathlib import Path\n\ndef test_x():\n    assert Path("/app/out.txt").read_text().strip() == "hello"\n',
    )
    assert (a.observes.kind, a.observes.path) == ("output_file", "/app/out.txt")
    assert (a.expected.kind, a.expected.value, a.op, a.line) == ("literal", "hello", "==", 4)
    assert a.test == "tests/test_outputs.py::test_x"
    assert a.hops[0].kind == "assert" and a.hops[0].line == 4


def test_open_read_and_with_open(tmp_path):
    found = checks(
        tmp_path,
        "def test_a():\n    assert open('/app/a.txt').read() == 'x'\n\n"
        "def test_b():\n    with open('/app/b.txt') as f:\n        data = f.read()\n    assert data == 'y'\n",
    )
    assert [(a.observes.kind, a.observes.path, a.expected.value) for a in found] == [
        ("output_file", "/app/a.txt", "x"),
        ("output_file", "/app/b.txt", "y"),
    ]
    assert ("assign", "data", 6) in hop_kinds(found[1])


def test_module_constant_is_a_literal_with_its_hop(tmp_path):
    a = one(tmp_path, 'WANT = "42"\nOUT = "/app/out.txt"\n\ndef test_x():\n    assert open(OUT).read() == WANT\n')
    assert (a.observes.path, a.expected.kind, a.expected.value) == ("/app/out.txt", "literal", "42")
    assert ("constant", "WANT", 1) in hop_kinds(a) and ("constant", "OUT", 2) in hop_kinds(a)


def test_helper_holding_the_assert_gives_one_record_per_call_site(tmp_path):
    found = checks(
        tmp_path,
        "def check(path, want):\n    assert open(path).read().strip() == want\n\n"
        "def test_a():\n    check('/app/a.txt', 'one')\n\ndef test_b():\n    check('/app/b.txt', 'two')\n",
    )
    assert [(a.observes.path, a.expected.value, a.line) for a in found] == [
        ("/app/a.txt", "one", 2),
        ("/app/b.txt", "two", 2),
    ]
    assert ("call", "check", 5) in hop_kinds(found[0]) and ("helper", "check", 1) in hop_kinds(found[0])
    assert ("call", "check", 8) in hop_kinds(found[1])


def test_helper_from_a_local_import(tmp_path):
    a = one(
        tmp_path,
        "from helpers import compare_hashes\n\ndef test_x():\n    compare_hashes('/app/out.bin', 'ab' * 16)\n",
        tests__helpers_py="import hashlib\n\ndef compare_hashes(p, want):\n"
        "    assert hashlib.md5(open(p, 'rb').read()).hexdigest() == want\n",
    )
    assert (a.file, a.line, a.observes.kind, a.observes.path) == ("tests/helpers.py", 4, "digest", "/app/out.bin")
    assert a.expected.kind == "literal" and a.expected.value == "ab" * 16
    assert a.hops[1].kind == "call" and a.hops[1].file == "tests/test_outputs.py" and a.hops[1].line == 4


def test_value_helper_is_inlined(tmp_path):
    a = one(
        tmp_path,
        "from pathlib import Path\n\ndef read_out():\n    return Path('/app/out.json').read_text()\n\n"
        "def test_x():\n    assert read_out() == '{}'\n",
    )
    assert (a.observes.kind, a.observes.path, a.line) == ("output_file", "/app/out.json", 7)
    assert ("helper", "read_out", 3) in hop_kinds(a)


def test_fixture_in_conftest(tmp_path):
    a = one(
        tmp_path,
        "def test_x(report):\n    assert report['total'] == 17\n",
        tests__conftest_py="import json\nimport pytest\n\n@pytest.fixture\ndef report():\n"
        "    return json.load(open('/app/report.json'))\n",
    )
    assert (a.observes.kind, a.observes.path, a.observes.keys) == ("output_file", "/app/report.json", ["total"])
    assert a.expected.value == "17"
    assert any(h.kind == "fixture" and h.file == "tests/conftest.py" and h.line == 5 for h in a.hops)


def test_parametrize_values_and_cases(tmp_path):
    a = one(
        tmp_path,
        "import subprocess\nimport pytest\n\n@pytest.mark.parametrize('arg,want', [('a', 'A'), ('b', 'B'), ('c', 'C')])\n"
        "def test_x(arg, want):\n    out = subprocess.run(['/app/up', arg], capture_output=True, text=True).stdout\n"
        "    assert out.strip() == want\n",
    )
    assert (a.observes.kind, a.observes.command) == ("stdout", ["/app/up", "{arg}"])
    assert (a.expected.kind, a.expected.values, a.cases) == ("literal", ["A", "B", "C"], 3)
    assert ("parametrize", "arg,want", 4) in hop_kinds(a)


def test_parametrize_from_a_constant(tmp_path):
    a = one(
        tmp_path,
        "import pytest\nCASES = [(1, '1'), (2, '4')]\n\n@pytest.mark.parametrize('n,sq', CASES)\n"
        "def test_x(n, sq):\n    assert open(f'/app/out/{n}.txt').read() == sq\n",
    )
    assert a.observes.path == "/app/out/{n}.txt" and a.expected.values == ["1", "4"] and a.cases == 2
    assert ("constant", "CASES", 2) in hop_kinds(a)


def test_loop_over_literal_cases(tmp_path):
    a = one(
        tmp_path,
        "from pathlib import Path\nOUT = Path('/app/by')\n\ndef test_x():\n"
        "    for name in ('a', 'b', 'c'):\n        assert (OUT / f'{name}.csv').is_file()\n",
    )
    assert (a.op, a.observes.kind, a.observes.path, a.expected.kind) == (
        "exists",
        "existence",
        "/app/by/{name}.csv",
        "exists",
    )
    assert a.cases == 3 and any(h.kind == "loop" for h in a.hops)


def test_loop_with_tuple_target_gives_the_expected_part(tmp_path):
    a = one(
        tmp_path,
        "import subprocess\n\ndef test_x():\n    for n, want in [(1, '1'), (5, '120')]:\n"
        "        r = subprocess.run(['/app/fact', str(n)], capture_output=True, text=True)\n"
        "        assert r.stdout.strip() == want\n",
    )
    assert a.expected.values == ["1", "120"] and a.cases == 2 and a.observes.command == ["/app/fact", "{n}"]


def test_loop_over_a_listing_has_computed_cases(tmp_path):
    a = one(
        tmp_path,
        "import os\n\ndef test_x():\n    for name in os.listdir('/app/out'):\n        assert name.endswith('.json')\n",
    )
    assert (a.op, a.expected.kind, a.expected.pattern_kind, a.expected.value) == (
        "endswith",
        "pattern",
        "suffix",
        ".json",
    )
    assert a.observes.kind == "listing" and a.observes.path == "/app/out" and a.cases == -1


def test_all_over_a_generator(tmp_path):
    a = one(
        tmp_path,
        "from pathlib import Path\n\ndef test_x():\n    assert all(p.suffix == '.csv' for p in Path('/app/d').iterdir())\n",
    )
    assert (a.observes.kind, a.observes.path, a.expected.value, a.cases) == ("listing", "/app/d", ".csv", -1)


def test_unittest_methods_and_class_constants(tmp_path):
    found = checks(
        tmp_path,
        "import unittest\n\nclass TestOut(unittest.TestCase):\n    PATH = '/app/out.txt'\n\n"
        "    def setUp(self):\n        self.text = open(self.PATH).read()\n\n"
        "    def test_word(self):\n        self.assertIn('hello', self.text)\n\n"
        "    def test_not_empty(self):\n        self.assertTrue(self.text)\n",
    )
    assert [(a.op, a.observes.path, a.expected.kind) for a in found] == [
        ("in", "/app/out.txt", "pattern"),
        ("truthy", "/app/out.txt", "truthy"),
    ]
    assert found[0].expected.pattern_kind == "substring" and found[0].expected.value == "hello"
    assert found[0].test == "tests/test_outputs.py::TestOut::test_word"


def test_subprocess_exit_code_flags_and_check_output(tmp_path):
    found = checks(
        tmp_path,
        "import subprocess\n\ndef test_x():\n    r = subprocess.run(['/app/tool', '--json', '-n', '3'], capture_output=True)\n"
        "    assert r.returncode == 0\n    out = subprocess.check_output('/app/tool --version', shell=True)\n"
        "    assert b'1.0' in out\n",
    )
    assert (found[0].observes.kind, found[0].observes.flags, found[0].expected.value) == (
        "exit_code",
        ["--json", "-n"],
        "0",
    )
    assert (found[1].observes.kind, found[1].observes.command, found[1].expected.pattern_kind) == (
        "stdout",
        ["/app/tool", "--version"],
        "substring",
    )


def test_digest_of_a_file_against_a_constant(tmp_path):
    a = one(
        tmp_path,
        "import hashlib\nfrom pathlib import Path\nSHA = 'f' * 64\n\ndef test_x():\n"
        "    assert hashlib.sha256(Path('/app/lib.py').read_bytes()).hexdigest() == SHA\n",
    )
    assert (a.observes.kind, a.observes.path, a.expected.kind, a.expected.value) == (
        "digest",
        "/app/lib.py",
        "literal",
        "f" * 64,
    )


def test_source_text_matched_with_in_and_regex(tmp_path):
    found = checks(
        tmp_path,
        "import re\nfrom pathlib import Path\n\ndef test_x():\n    src = Path('/app/solve.py').read_text()\n"
        "    assert 'import numpy' not in src\n    assert re.search(r'def main\\(', src)\n",
    )
    assert [(a.observes.kind, a.observes.path) for a in found] == [("source_text", "/app/solve.py")] * 2
    assert (found[0].op, found[0].negated) == ("not in", True)
    assert (found[1].op, found[1].expected.pattern_kind, found[1].expected.value) == ("matches", "regex", r"def main\(")


def test_shell_history(tmp_path):
    a = one(tmp_path, "def test_x():\n    assert 'git bisect' in open('/root/.bash_history').read()\n")
    assert a.observes.kind == "shell_history" and a.expected.value == "git bisect"


def test_json_keys_indexed(tmp_path):
    a = one(
        tmp_path,
        "import json\nfrom pathlib import Path\n\ndef test_x():\n    data = json.loads(Path('/app/r.json').read_text())\n"
        "    assert data['summary']['total'] == 35\n",
    )
    assert a.observes.keys == ["summary", "total"] and a.expected.value == "35"


def test_expected_file_from_the_tests(tmp_path):
    a = one(
        tmp_path,
        "from pathlib import Path\n\ndef test_x():\n    want = Path('/tests/expected.txt').read_text().strip()\n"
        "    assert Path('/app/out.txt').read_text().strip() == want\n",
    )
    assert (a.observes.path, a.expected.kind, a.expected.path, a.expected.origin) == (
        "/app/out.txt",
        "file",
        "/tests/expected.txt",
        "tests",
    )


def test_expected_computed_from_inputs(tmp_path):
    a = one(
        tmp_path,
        "def total(p):\n    return sum(int(x) for x in open(p).read().split())\n\n"
        "def test_x():\n    assert int(open('/app/total.txt').read()) == total('/app/numbers.txt')\n",
    )
    assert a.observes.path == "/app/total.txt"
    assert a.expected.kind == "computed" and "/app/numbers.txt" in a.expected.inputs


def test_threshold_and_flipped_bound(tmp_path):
    found = checks(
        tmp_path,
        "LIMIT = 0.9\n\ndef test_x():\n    score = float(open('/app/score.txt').read())\n"
        "    assert score >= LIMIT\n    assert 100 > score\n",
    )
    assert [(a.op, a.expected.kind, a.expected.value) for a in found] == [
        (">=", "threshold", "0.9"),
        ("<", "threshold", "100"),
    ]


def test_approx_and_isclose_tolerance(tmp_path):
    found = checks(
        tmp_path,
        "import math\nimport pytest\n\ndef test_x():\n    v = float(open('/app/v.txt').read())\n"
        "    assert v == pytest.approx(3.14, abs=0.01)\n    assert math.isclose(v, 3.14, rel_tol=1e-3)\n",
    )
    assert [(a.op, a.expected.kind, a.expected.value, a.expected.tolerance) for a in found] == [
        ("approx", "threshold", "3.14", "0.01"),
        ("isclose", "threshold", "3.14", "0.001"),
    ]
    assert all(a.observes.path == "/app/v.txt" for a in found)


def test_numpy_testing_call(tmp_path):
    a = one(
        tmp_path,
        "import numpy as np\n\ndef test_x():\n    got = np.loadtxt('/app/m.txt')\n"
        "    np.testing.assert_allclose(got, [[1.0, 0.0]], rtol=1e-6)\n",
    )
    assert (a.op, a.observes.path, a.expected.tolerance) == ("isclose", "/app/m.txt", "1e-06")


def test_plain_script_that_exits_on_failure(tmp_path):
    found = checks(
        tmp_path,
        "import json\nimport sys\nEXPECTED = {'a': 1}\nwith open('/app/counts.json') as fh:\n    got = json.load(fh)\n"
        "if got != EXPECTED:\n    sys.exit(f'differ: {got}')\nok = 'done' in open('/app/log.txt').read()\n"
        "sys.exit(0 if ok else 1)\n",
        name="tests/check.py",
    )
    assert [(a.line, a.op, a.negated, a.observes.path, a.expected.kind) for a in found] == [
        (6, "==", False, "/app/counts.json", "literal"),
        (9, "in", False, "/app/log.txt", "pattern"),
    ]
    assert found[0].expected.value == "{'a': 1}"


def test_pytest_fail_under_if_and_raise_assertion_error(tmp_path):
    found = checks(
        tmp_path,
        "import os\nimport pytest\n\ndef test_x():\n    if not os.path.exists('/app/out.txt'):\n        pytest.fail('missing')\n"
        "    if open('/app/out.txt').read() != 'hi':\n        raise AssertionError('wrong')\n",
    )
    assert [(a.op, a.negated, a.observes.kind) for a in found] == [
        ("exists", False, "existence"),
        ("==", False, "output_file"),
    ]


def test_database_query(tmp_path):
    a = one(
        tmp_path,
        "import sqlite3\nDB = '/app/shop.db'\n\ndef test_x():\n    conn = sqlite3.connect(DB)\n"
        "    n = conn.execute('SELECT COUNT(*) FROM orders').fetchone()[0]\n    assert n == 6\n",
    )
    assert (a.observes.kind, a.observes.path, a.observes.detail, a.expected.value) == (
        "database",
        "/app/shop.db",
        "SELECT COUNT(*) FROM orders",
        "6",
    )


def test_network_response(tmp_path):
    a = one(
        tmp_path,
        "import urllib.request\n\ndef test_x():\n    with urllib.request.urlopen('http://localhost:8080/health') as r:\n"
        "        assert r.read() == b'ok'\n",
    )
    assert a.observes.kind == "network" and a.observes.detail == "http://localhost:8080/health"


def test_self_report_parsed_from_the_programs_output(tmp_path):
    found = checks(
        tmp_path,
        "import re\nimport subprocess\n\ndef test_x():\n    out = subprocess.run(['/app/bench'], capture_output=True, text=True).stdout\n"
        "    assert float(re.search(r'time: ([0-9.]+)', out).group(1)) < 1.0\n    assert 'PASSED' in out\n",
    )
    assert [a.observes.kind for a in found] == ["self_report", "self_report"]


def test_function_of_the_agents_module(tmp_path):
    a = one(tmp_path, "from solution import add\n\ndef test_x():\n    assert add(2, 3) == 5\n")
    assert (a.observes.kind, a.observes.detail, a.expected.value) == ("value", "solution.add", "5")


def test_fixture_holding_a_check_is_read_once(tmp_path):
    found = checks(
        tmp_path,
        "import subprocess\nimport pytest\n\n@pytest.fixture\ndef built():\n"
        "    r = subprocess.run(['make', '-C', '/app'], capture_output=True)\n    assert r.returncode == 0\n    return '/app/prog'\n\n"
        "def test_a(built):\n    assert subprocess.run([built]).returncode == 0\n\n"
        "def test_b(built):\n    assert subprocess.run([built, '-v']).returncode == 0\n",
    )
    assert sorted(a.test.rsplit("::", 1)[-1] for a in found) == ["built", "test_a", "test_b"]
    assert [a.observes.command for a in found if a.test.endswith("test_b")] == [["/app/prog", "-v"]]


def test_and_splits_into_one_record_per_operand(tmp_path):
    found = checks(
        tmp_path,
        "import subprocess\n\ndef test_x():\n    r = subprocess.run(['/app/x'], capture_output=True)\n"
        "    assert r.returncode == 1 and r.stderr\n",
    )
    assert [(a.observes.kind, a.expected.kind) for a in found] == [("exit_code", "literal"), ("stderr", "truthy")]


def test_a_broken_file_is_no_crash(tmp_path):
    assert checks(tmp_path, "def test_x(:\n    assert 1\n") == []


def test_every_example_reads_without_raising():
    root = Path(__file__).resolve().parents[2] / "examples"
    read = 0
    for d in sorted(p for p in root.iterdir() if (p / "tests").is_dir()):
        try:
            env = load_environment(d, lint=True)
        except Exception:  # noqa: BLE001 - an example qa refuses to load is another test's business
            continue
        read += len(model_of(env).assertions.in_language("python"))
    assert read > 100
