"""Issue 24's new static rules on their fixtures: two positives in different wording per rule (one from a public
task shape: Terminal-Bench's test_outputs.py, Harbor's template and `harbor init` metadata; one our own) and a
clean look-alike that must stay quiet. Also: Harbor's template task and the clean examples stay quiet.

A fixture under tests/fixtures/round2/<name>/ holds only the files it changes on top of the probe tests' base
task (tests/probes/conftest.py BASE_FILES); one with a task.yaml is a whole Terminal-Bench 1 task.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from envqa.core.environment import load_environment
from envqa.probes.static.findings import static_findings

from .conftest import BASE_FILES, EXAMPLES, REPO, write_env

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

FIXTURES = REPO / "tests" / "fixtures" / "round2"
NEW_RULES = {
    "verifier-literal-only",
    "verifier-checks-only-file-names",
    "answer-in-file-name",
    "permission-guard-root-agent",
    "task-metadata-placeholder",
    "task-time-estimate-implausible",
}

CASES = [  # (fixture, rule, severity it must carry; None: the rule must stay quiet)
    ("literal-only-tb-style", "verifier-literal-only", "warning"),
    ("literal-only-own-bash", "verifier-literal-only", "warning"),
    ("literal-only-in-image", "verifier-literal-only", "error"),
    ("literal-only-clean-computes", "verifier-literal-only", None),
    ("names-only-tb-style", "verifier-checks-only-file-names", "warning"),
    ("names-only-own-bash", "verifier-checks-only-file-names", "warning"),
    ("names-only-clean-reads", "verifier-checks-only-file-names", None),
    ("name-answer-tb-style", "answer-in-file-name", "warning"),
    ("name-answer-own", "answer-in-file-name", "warning"),
    ("name-answer-clean-ids", "answer-in-file-name", None),
    ("guard-tb-style", "permission-guard-root-agent", "warning"),
    ("guard-own-verifier", "permission-guard-root-agent", "warning"),
    ("guard-own-hide", "permission-guard-root-agent", "warning"),
    ("guard-clean-exec-bit", "permission-guard-root-agent", None),
    ("guard-clean-non-root", "permission-guard-root-agent", None),
    ("meta-placeholder-harbor-init", "task-metadata-placeholder", "info"),
    ("meta-placeholder-own", "task-metadata-placeholder", "info"),
    ("meta-clean-realistic", "task-metadata-placeholder", None),
    ("time-estimate-tb1", "task-time-estimate-implausible", "warning"),
    ("time-estimate-own", "task-time-estimate-implausible", "warning"),
    ("time-estimate-clean", "task-time-estimate-implausible", None),
]


def materialize(tmp_path: Path, name: str) -> Path:
    src = FIXTURES / name
    if (src / "task.yaml").is_file():
        return Path(shutil.copytree(src, tmp_path / name))
    files = {p.relative_to(src).as_posix(): p.read_text() for p in src.rglob("*") if p.is_file()}
    return write_env(tmp_path / name, files)


def findings_of(env_dir: Path, rule: str):
    return [f for f in static_findings(load_environment(env_dir)) if f.rule == rule]


@pytest.mark.parametrize("fixture,rule,severity", CASES, ids=[c[0] for c in CASES])
def test_rule_on_fixture(tmp_path, fixture, rule, severity):
    found = findings_of(materialize(tmp_path, fixture), rule)
    if severity is None:
        assert found == [], [f.public() for f in found]
        return
    assert len(found) >= 1 and {f.severity for f in found} == {severity}, [f.public() for f in found]
    for f in found:  # a file and (for rules about a line) the line it is on, with evidence quoting it
        assert f.location and f.evidence and f.message and f.fix
        assert ":" in f.location and f.location.split(":")[1].isdigit(), f.location


def test_every_new_rule_has_two_positives_and_a_clean_look_alike():
    for rule in NEW_RULES:
        positives = {f for f, r, s in CASES if r == rule and s}
        clean = {f for f, r, s in CASES if r == rule and s is None}
        assert len(positives) >= 2 and clean, rule


def test_the_base_task_is_quiet(tmp_path):
    """BASE_FILES (instruction states `hello`, test.sh checks it): writing the stated output is the task."""
    assert "hello" in BASE_FILES["instruction.md"] and "= hello" in BASE_FILES["tests/test.sh"]
    assert [f.rule for f in static_findings(load_environment(write_env(tmp_path))) if f.rule in NEW_RULES] == []


def test_literal_in_instruction_with_a_fixed_input_is_left_alone(tmp_path):
    """examples/always-pass' shape: the instruction's example is the only test (quiet: from files alone a
    "print this" task cannot be told from a "compute this" one); the same test without the example in the
    instruction is a warning."""
    test_sh = (
        "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
        '[ "$(/app/sum 1 2 3)" = "6" ] && echo 1 > /logs/verifier/reward.txt\nexit 0\n'
    )
    shown = write_env(
        tmp_path / "shown",
        {"tests/test.sh": test_sh, "instruction.md": "Write `/app/sum`: `/app/sum 1 2 3` prints `6`.\n"},
    )
    hidden = write_env(
        tmp_path / "hidden",
        {"tests/test.sh": test_sh, "instruction.md": "Write `/app/sum`, which adds its arguments.\n"},
    )
    assert findings_of(shown, "verifier-literal-only") == []
    assert [f.severity for f in findings_of(hidden, "verifier-literal-only")] == ["warning"]


def test_several_expected_outputs_need_a_lookup_not_a_constant(tmp_path):
    test_py = (
        "import subprocess\n\ndef run(x):\n    return subprocess.run(['/app/up'], input=x, text=True,"
        " capture_output=True).stdout\n\ndef test_a():\n    assert run('a') == 'A'\n\n"
        "def test_b():\n    assert run('b') == 'B'\n"
    )
    env = write_env(
        tmp_path,
        {
            "tests/test_up.py": test_py,
            "instruction.md": "Write /app/up (upper case).\n",
            "tests/test.sh": "#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n"
            "pytest /tests && echo 1 > /logs/verifier/reward.txt\n",
        },
    )
    assert [f.severity for f in findings_of(env, "verifier-literal-only")] == ["info"]


def test_harbor_template_task_is_quiet():
    """Harbor's template (from its wheel): a placeholder test, empty metadata (task-metadata-missing's)."""
    env = load_environment(REPO / "tests" / "fixtures" / "harbor-template-task" / "task", lint=True)
    assert [f.rule for f in static_findings(env) if f.rule in NEW_RULES] == []


@pytest.mark.parametrize(
    "name", sorted(p.name for p in EXAMPLES.iterdir() if p.name.startswith("clean-") or p.name == "tb1-clean")
)
def test_clean_examples_stay_at_info(name):
    if not (EXAMPLES / name / "qa-expected.json").is_file():
        pytest.skip("not an example with expectations")
    found = [f for f in static_findings(load_environment(EXAMPLES / name, lint=True)) if f.rule in NEW_RULES]
    assert all(f.severity == "info" for f in found), [f.public() for f in found]


@pytest.mark.parametrize(
    "files,literals,runs_input",
    [
        (
            {"tests/test_outputs.py": "def test_a():\n    out = open('/app/out').read()\n    assert out == '42'\n"},
            {"42"},
            False,
        ),
        (
            {
                "tests/test_outputs.py": "from pathlib import Path\n\ndef test_a():\n"
                "    result = Path('/app/out').read_text()\n    assert result.strip() in {'a', 'b'}\n"
            },
            {"a", "b"},
            False,
        ),
        (
            {
                "tests/test_outputs.py": "from subprocess import run\n\ndef test_a():\n"
                "    assert '42' in run(['/app/calc', '6*7'], capture_output=True, text=True).stdout\n"
            },
            {"42"},
            True,
        ),
        (
            {
                "tests/test_outputs.py": "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n"
                "        self.assertEqual(open('/app/out').read().strip(), 'yes')\n"
            },
            {"yes"},
            False,
        ),
        (
            {
                "tests/test_outputs.py": "import pytest\n\ndef test_a():\n    got = open('/app/out').read().strip()\n"
                "    if got != 'ok':\n        pytest.fail('wrong')\n"
            },
            {"ok"},
            False,
        ),
        (
            {"tests/test.sh": '#!/bin/bash\n[ "$(cat /app/out)" = "42" ] && echo 1 > /logs/verifier/reward.txt\n'},
            {"42"},
            False,
        ),
        (
            {"tests/test.sh": "#!/bin/bash\ngrep -q '^42$' /app/out && echo 1 > /logs/verifier/reward.txt\n"},
            {"42"},
            False,
        ),
        (
            {"tests/test.sh": "#!/bin/bash\n[[ $(/app/calc 6 7) == 42 ]] && echo 1 > /logs/verifier/reward.txt\n"},
            {"42"},
            True,
        ),
    ],
)
def test_the_reader_sees_literal_checks_in_many_wordings(tmp_path, files, literals, runs_input):
    """The shapes other people write, in Python and shell, read into the same Shape."""
    from envqa.core.task_model import tests_of

    base = {"tests/test.sh": "#!/bin/bash\npytest /tests && echo 1 > /logs/verifier/reward.txt\n"}
    shape = tests_of(load_environment(write_env(tmp_path, {**base, **files}))).shape
    assert set(shape.literals) == literals and not shape.computed, shape
    assert bool(shape.program_input) == runs_input, shape


def test_a_computed_expectation_or_a_regex_is_not_literal_only(tmp_path):
    from envqa.core.task_model import tests_of

    env = write_env(
        tmp_path,
        {
            "tests/test_x.py": "import re\n\ndef test_a():\n    out = open('/app/out').read()\n"
            "    assert out == '42'\n    assert re.fullmatch(r'\\d+', out)\n"
        },
    )
    assert tests_of(load_environment(env)).shape.computed


@pytest.mark.parametrize(
    "line,effect",
    [
        ("chmod 0444 /app/expected.txt", "read-only"),
        ("chmod -w /app/grader.py", "read-only"),
        ("chmod u=rx /opt/grade", "read-only"),
        ("chmod 000 /opt/answers", "unreadable"),
        ("chmod o-rwx /opt/answers", "hidden"),
        ("chattr +i /app/x", "immutable"),
        ("chmod +x /app/run.sh", None),
        ("chmod 755 /app", None),
        ("chmod go-w /app", None),
        ("chmod 1777 /tmp", None),
        ("chmod 600 /etc/ssh/ssh_host_rsa_key", None),
        ("chattr -i /app/x", None),
        ("chmod --reference=/a /b", None),
    ],
)
def test_what_counts_as_a_permission_guard(line, effect):
    from envqa.core.parsers.shell import parse_script
    from envqa.probes.static.guard_rules import guard_of

    got = guard_of(parse_script(line)[0])
    assert (got[0] if got else None) == effect
