"""Each rewrite of benchmarks/metamorphic_rewrites/ on small sources: it applies, its output compiles, its line
map points at the moved statements, and it keeps the verdict: the original and the rewritten test file are run
under pytest (bash for the shell rewrite) in a subprocess, on inputs that pass and on inputs that fail, and give
the same counts of passing and failing tests. Where a rewrite cannot be sure of the meaning it must not apply."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from metamorphic_rewrites import REWRITES
from metamorphic_rewrites.scoped import run_python  # noqa: F401
from metamorphic_rewrites.shell import rewrite_shell

from ._load import meta  # noqa: F401 - puts benchmarks/ on sys.path for the rewrites

pytestmark = pytest.mark.fast

SAMPLE = """\
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data.txt")
REPORT = os.path.join(HERE, "report.json")


def words_of(path):
    return open(path).read().split()


def test_words():
    words = open(DATA).read().split()
    assert len(words) == 3
    assert words[0] == "alpha", words


def test_report():
    report = json.load(open(REPORT))
    assert report == {"count": 3}


def test_with_read():
    with open(DATA) as f:
        text = f.read()
    out = subprocess.run([sys.executable, "-c", "print('hi')"], capture_output=True, text=True).stdout
    assert out == "hi\\n" and text.startswith("alpha")


def test_loop_inside():
    total = 0
    for n in words_of(DATA):
        total += len(n)
        assert n.isalpha()
    assert total > 4
"""

INPUTS = {  # name -> (data.txt, report.json)
    "good": ("alpha beta gamma\n", '{"count": 3}'),
    "short": ("alpha beta\n", '{"count": 3}'),
    "wrong-first": ("zeta beta gamma\n", '{"count": 2}'),
    "digits": ("alpha b3 c\n", "{}"),
}
PYTHON_REWRITES = [n for n, r in REWRITES.items() if r.suffix == ".py"]


RESULT = re.compile(r"^(PASSED|FAILED|ERROR) (\S+?)/test_sample\.py", re.M)


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory) -> dict[tuple[str, str, str], tuple[int, int]]:
    """(rewrite, input, "before"/"after") -> (passed, failed or errored), from ONE pytest run over every copy
    (a pytest start costs seconds; --import-mode=importlib lets the copies share a file name)."""
    root = tmp_path_factory.mktemp("verdicts")
    for name in PYTHON_REWRITES:
        after = REWRITES[name].run(SAMPLE).text
        for case, (data, report) in INPUTS.items():
            for which, source in (("before", SAMPLE), ("after", after)):
                folder = root / f"r-{name}" / case / which
                folder.mkdir(parents=True)
                (folder / "test_sample.py").write_text(source)
                (folder / "data.txt").write_text(data)
                (folder / "report.json").write_text(report)
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "--import-mode=importlib", "."],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=root,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    out: dict[tuple[str, str, str], list[int]] = {}
    for outcome, folder in RESULT.findall(res.stdout):
        r, case, which = folder.split("/")[-3:]
        counts = out.setdefault((r.removeprefix("r-"), case, which), [0, 0])
        counts[outcome != "PASSED"] += 1
    assert out, res.stdout[-3000:] + res.stderr[-2000:]
    return {k: (v[0], v[1]) for k, v in out.items()}


@pytest.mark.parametrize("name", PYTHON_REWRITES)
def test_python_rewrite_applies_compiles_and_maps_the_asserts(name):
    done = REWRITES[name].run(SAMPLE)
    assert done is not None, f"{name} did not apply to the sample"
    ast.parse(done.text)
    new_lines = done.text.splitlines()
    for k, line in enumerate(SAMPLE.splitlines(), start=1):
        if line.strip().startswith("assert "):
            assert k in done.line_map, f"{name}: assert on line {k} unmapped"
            target = new_lines[done.line_map[k][0] - 1]
            assert "assert" in target, f"{name}: line {k} ({line.strip()}) maps to {target!r}"


@pytest.mark.parametrize("name", PYTHON_REWRITES)
def test_python_rewrite_keeps_the_verdict(name, verdicts):
    seen = set()
    for case in INPUTS:
        before, after = verdicts.get((name, case, "before")), verdicts.get((name, case, "after"))
        assert before is not None and after == before, f"{name} on {case}: (passed, failed) {before} -> {after}"
        seen.add(before)
    assert (4, 0) in seen and any(f for _, f in seen), f"the inputs must both pass and fail the sample: {seen}"


def test_each_rewrite_spells_the_check_its_own_way():
    """The shape each rewrite promises, on the sample."""
    out = {name: REWRITES[name].run(SAMPLE).text for name in PYTHON_REWRITES}
    assert "def _check_test_words(words):" in out["extract-helper"]
    assert "_check_test_words(words)" in out["extract-helper"]
    assert "EXPECTED_1 = 3\n" in out["hoist-constant"] and "assert len(words) == EXPECTED_1" in out["hoist-constant"]
    assert "@pytest.fixture\ndef words():\n    return open(DATA).read().split()" in out["fixture"]
    assert "def test_words(words):" in out["fixture"] and "import pytest" in out["fixture"]
    assert out["parametrize"].count('@pytest.mark.parametrize("case", [0])') == 4
    assert "for expected in [3]:\n        assert len(words) == expected" in out["loop"]
    assert "words = Path(DATA).read_text().split()" in out["pathlib"]
    assert "report = json.loads(Path(REPORT).read_text())" in out["pathlib"]
    assert "    text = Path(DATA).read_text()\n" in out["pathlib"] and "with open" not in out["pathlib"]
    assert "return open(path).read().split()" in out["pathlib"]  # a parameter may be a file descriptor: kept
    assert "class TestRewritten(unittest.TestCase):" in out["unittest"]
    assert 'self.assertEqual(words[0], "alpha", words)' in out["unittest"]


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("extract-helper", "def test_a():\n    x = 1\n"),  # no assert
        ("hoist-constant", "def test_a(x):\n    assert x is 1\n"),  # identity: a literal's identity is not its value
        ("loop", "def test_a(x, y):\n    assert x == y\n"),  # no literal
        ("pathlib", "def test_a(fd):\n    assert open(fd).read() == 'x'\n"),  # fd may be an int
        ("pathlib", "Path = 3\ndef test_a():\n    assert open('/p').read() == 'x'\n"),  # Path taken
        ("pathlib", "def test_a():\n    with open('/p') as f:\n        x = f.read()\n    f.close()\n    assert x\n"),
        ("parametrize", "def test_a(tmp_path):\n    assert tmp_path\n"),  # has parameters
        ("parametrize", "def test_a():\n    case = 1\n    assert case\n"),  # `case` in use
        ("unittest", "def test_a(tmp_path):\n    assert tmp_path\n"),  # a fixture: no TestCase method
        ("unittest", "def test_a():\n    assert 1\n\ntest_a()\n"),  # called by name elsewhere
        ("fixture", "def test_a(out):\n    x = out\n    assert x\n"),  # reads a parameter
        ("fixture", "def test_a():\n    out = 1\n    assert out\n\ndef test_b(out):\n    assert out\n"),  # requested
        ("fixture", "import os\ndef test_a():\n    os = 1\n    assert os\n"),  # a module name
        ("extract-helper", "async def test_a():\n    assert 1 == 1\n"),
        ("extract-helper", "def test_a(:\n    assert 1\n"),  # does not parse
    ],
)
def test_rewrite_skips_what_it_cannot_be_sure_of(name, source):
    assert REWRITES[name].run(source) is None


SCRIPT = """\
#!/bin/bash
mkdir -p "$OUT"
echo 0 > "$OUT/reward.txt"
grep -qx 'hello, world' "$IN" && echo 1 > "$OUT/reward.txt"
if [ "$(cat "$IN")" = "hello, world" ]; then
    echo same > "$OUT/seen.txt"
fi
test -s "$IN" && echo nonempty >> "$OUT/seen.txt"
cat > "$OUT/copy.txt" <<END
[ x = y ] && echo kept
END
exit 0
"""


def _bash(folder: Path, script: str, text: str) -> tuple[int, dict[str, str]]:
    folder.mkdir(parents=True)
    (folder / "test.sh").write_text(script)
    (folder / "in.txt").write_text(text)
    env = {"OUT": str(folder / "out"), "IN": str(folder / "in.txt"), "PATH": "/usr/bin:/bin"}
    res = subprocess.run(["bash", str(folder / "test.sh")], env=env, capture_output=True, text=True, timeout=30)
    return res.returncode, {p.name: p.read_text() for p in sorted((folder / "out").iterdir())}


def test_shell_rewrite_keeps_the_verdict(tmp_path):
    done = rewrite_shell(SCRIPT)
    assert done is not None
    text = done.text
    assert 'if grep -qx \'hello, world\' "$IN"; then\n    echo 1 > "$OUT/reward.txt"\nfi' in text
    assert 'test "$(cat "$IN")" = "hello, world" && echo same > "$OUT/seen.txt"' in text
    assert 'if [ -s "$IN" ]; then' in text
    assert "[ x = y ] && echo kept" in text  # a heredoc's body is data
    for case, content in {"good": "hello, world\n", "bad": "hello\n", "empty": ""}.items():
        before = _bash(tmp_path / case / "before", SCRIPT, content)
        after = _bash(tmp_path / case / "after", text, content)
        assert after == before, f"{case}: {before} before, {after} after\n{text}"
    new = text.splitlines()
    assert new[done.line_map[4][0] - 1].startswith("if grep")  # the && line -> the if line (and its body)
    assert new[done.line_map[4][1] - 1].strip() == 'echo 1 > "$OUT/reward.txt"'
    assert all(new[done.line_map[k][0] - 1].startswith("test ") for k in (5, 6, 7))


def test_shell_rewrite_leaves_the_status_where_it_is_read():
    """`A && B` and `if A; then B; fi` leave different statuses when A fails: no swap under set -e, before `$?`,
    or on the last command; the `[`/`test` flip is exact everywhere."""
    for script in (
        "set -e\ngrep -q x f && echo 1 > r\necho done\n",
        "grep -q x f && echo 1 > r\necho $?\n",
        "grep -q x f && echo 1 > r\n",
    ):
        done = rewrite_shell(script)
        assert done is None or "if " not in done.text, done.text
    assert rewrite_shell("[ a = b ] || exit 1\n").text == "test a = b || exit 1\n"
    assert rewrite_shell("if test -f x; then echo y; fi\n").text == "if [ -f x ]; then echo y; fi\n"
    assert rewrite_shell("[[ a == b ]] || exit 1\n") is None
    assert rewrite_shell("echo '[ a ]' # [ b ]\n") is None


C_CHECKER = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "r");
    char buf[64] = "";
    if (f == NULL) {
        fprintf(stderr, "no file\n");
        return 1;
    }
    if (!fgets(buf, sizeof buf, f)) return 2;
    if (strstr(buf, "42") == NULL) exit(3);
    if (strcmp(buf, "42\n") == 0) {
        puts("exact");
    }
    return 0;
}
"""


def _c_status(folder: Path, source: str, text: str | None) -> bool:
    """Whether the checker built from `source` passes (exits 0) on a file holding `text` (None: no file)."""
    folder.mkdir(parents=True)
    (folder / "check.c").write_text(source)
    build = subprocess.run(["gcc", "-o", str(folder / "check"), str(folder / "check.c")], capture_output=True)
    assert build.returncode == 0, build.stderr.decode()
    if text is not None:
        (folder / "in.txt").write_text(text)
    res = subprocess.run([str(folder / "check"), str(folder / "in.txt")], capture_output=True, timeout=30)
    return res.returncode == 0


@pytest.mark.skipif(not Path("/usr/bin/gcc").exists(), reason="no gcc to build the checker")
def test_c_assert_rewrite_keeps_the_verdict(tmp_path):
    done = REWRITES["c-assert"].run(C_CHECKER)
    assert done is not None
    text = done.text
    assert text.startswith("#include <assert.h>\n")
    assert "    assert(!(f == NULL));\n" in text and "    assert(!(!fgets(buf, sizeof buf, f)));\n" in text
    assert '    assert(!(strstr(buf, "42") == NULL));\n' in text
    assert 'if (strcmp(buf, "42\\n") == 0) {' in text  # its branch does not fail: not a check, kept
    seen = set()
    for case, content in {"good": "42\n", "longer": "x 42 y\n", "bad": "41\n", "empty": "", "missing": None}.items():
        before = _c_status(tmp_path / case / "before", C_CHECKER, content)
        after = _c_status(tmp_path / case / "after", text, content)
        assert after == before, f"{case}: passes {before} before, {after} after\n{text}"
        seen.add(before)
    assert seen == {True, False}
    new = text.splitlines()
    assert all(new[done.line_map[k][0] - 1].strip() == "assert(!(f == NULL));" for k in (8, 9, 10, 11))
    assert new[done.line_map[13][0] - 1].strip().startswith("assert(!(strstr(")
    assert new[done.line_map[14][0] - 1].strip().startswith("if (strcmp(")


@pytest.mark.parametrize(
    "source",
    [
        "int main(void) { int x = 1;\n    if (x) return 1; else return 0;\n}\n",  # an else
        "#define NDEBUG\n#include <assert.h>\nint main(void) {\n    if (1) return 1;\n}\n",  # assert compiled out
        "int check(int x) {\n    if (x) return 1;\n    return 0;\n}\n",  # not main
        "int main(void) {\n    int n = 0;\n    if (n) { n++; return 1; }\n}\n",  # the branch does work
        "int main(void) {\n    if (0) return 0;\n}\n",  # the branch passes
        "int main(void) {\n    int x = 0; if (x) return 1;\n}\n",  # shares its line
        "int main(void {\n    if (1) return 1;\n}\n",  # does not parse
    ],
)
def test_c_assert_rewrite_skips_what_it_cannot_be_sure_of(source):
    assert REWRITES["c-assert"].run(source) is None


@pytest.mark.skipif(not Path("/usr/bin/gcc").exists(), reason="no gcc to build the checker")
def test_c_hoist_constant_rewrite_keeps_the_verdict(tmp_path):
    done = REWRITES["c-hoist-constant"].run(C_CHECKER)
    assert done is not None
    text = done.text
    assert '#include <string.h>\nstatic const char *EXPECTED_1 = "42";\n' in text
    assert "    if (strstr(buf, EXPECTED_1) == NULL) exit(3);\n" in text
    assert 'if (strcmp(buf, "42\\n") == 0) {' in text  # not a check (its branch passes): its literal stays
    for case, content in {"good": "42\n", "bad": "41\n", "missing": None}.items():
        before = _c_status(tmp_path / case / "before", C_CHECKER, content)
        after = _c_status(tmp_path / case / "after", text, content)
        assert after == before, f"{case}: passes {before} before, {after} after\n{text}"
    new = text.splitlines()
    assert done.line_map[13] == (14, 4) and new[13].strip().startswith("if (strstr(buf, EXPECTED_1)")
    assert done.line_map[3] == (3,) and done.line_map[4] == (5,)


def test_c_hoist_constant_rewrite_skips_what_it_cannot_be_sure_of():
    for source in (
        '#include <string.h>\nint main(void) {\n    if (strcmp("a", "a") == 0) return 0;\n}\n',  # passes: no check
        '#include <string.h>\nstatic const char *EXPECTED_1 = "x";\nint main(void) {\n    return 0;\n}\n',
        'int main(void) {\n    if (!strstr(g(), "x")) return 1;\n}\n',  # no include to put the constant below
    ):
        assert REWRITES["c-hoist-constant"].run(source) is None, source


@pytest.mark.skipif(not Path("/usr/bin/gcc").exists(), reason="no gcc to build the checker")
def test_c_extract_helper_rewrite_keeps_the_verdict(tmp_path):
    done = REWRITES["c-extract-helper"].run(C_CHECKER)
    assert done is not None
    text = done.text
    assert "static void _check_1(FILE *f) {\n    if (f == NULL) {" in text and "        exit(1);\n" in text
    assert 'static void _check_2(char buf[64]) {\n    if (strstr(buf, "42") == NULL) exit(3);\n}' in text
    assert (
        "    _check_1(f);\n    if (!fgets(buf, sizeof buf, f)) return 2;\n    _check_2(buf);\n" in text
    )  # sizeof stays
    for case, content in {"good": "42\n", "longer": "x 42 y\n", "bad": "41\n", "empty": "", "missing": None}.items():
        before = _c_status(tmp_path / case / "before", C_CHECKER, content)
        after = _c_status(tmp_path / case / "after", text, content)
        assert after == before, f"{case}: passes {before} before, {after} after\n{text}"
    new = text.splitlines()
    helper_if, call = done.line_map[13]
    assert new[helper_if - 1].strip().startswith("if (strstr(buf") and new[call - 1].strip() == "_check_2(buf);"
    assert all(new[done.line_map[k][1] - 1].strip() == "_check_1(f);" for k in (8, 9, 10, 11))


def test_c_extract_helper_rewrite_skips_what_it_cannot_be_sure_of():
    for source in (
        "int main(void) {\n    int a = 1, b = 2;\n    if (a != b) return 1;\n}\n",  # two locals in one statement
        "int main(void) {\n    static int a = 1;\n    if (a) return 1;\n}\n",  # static: its own storage
        "int main(void) {\n    char b[4];\n    if (sizeof b != 4) return 1;\n}\n",  # sizeof of an array
        "int _check_1(void);\nint main(void) {\n    if (_check_1()) return 1;\n}\n",  # the name is taken
    ):
        assert REWRITES["c-extract-helper"].run(source) is None, source
