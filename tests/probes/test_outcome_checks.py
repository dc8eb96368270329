"""Issue 51 parts 3 and 4 as queries over the assertion model: checks that do not measure the outcome
(check-does-not-measure-outcome, probes/static/outcome_checks.py) and the flags and keys the checks require of the
agent's program (instruction-omits-tested-requirement, core/task_model/tested_terms.py).

The queries are tested on records built by hand (the readers' job is theirs), then end to end on the examples and
their look-alikes, as `qa lint` reports them."""

from __future__ import annotations

import pytest

from envqa.core.environment import load_environment
from envqa.core.models import Finding
from envqa.core.registry.rules import get_rule
from envqa.core.task_model.assertions import Assertion, Expected, Hop, Observed
from envqa.core.task_model.facts import task_facts
from envqa.core.task_model.model import model_of
from envqa.core.task_model.tested_terms import flag_key_mismatches, program_of, stated_in
from envqa.probes.static.outcome_checks import RULE, case_of
from envqa.probes.static.task_schema import lint_findings

from .conftest import EXAMPLES, expected, write_env

pytestmark = pytest.mark.fast

OMITS = "instruction-omits-tested-requirement"


def check(observes: dict, expect: dict, test: str = "tests/test_x.py::test_a", **kw) -> Assertion:
    """One record as a reader gives it: the assert in a helper, called from `test`."""
    return Assertion(
        language="python",
        file="tests/test_x.py",
        line=kw.pop("line", 12),
        code=kw.pop("code", "assert want in got"),
        test=test,
        observes=Observed(**observes),
        expected=Expected(**expect),
        hops=[Hop(kind="helper", file="tests/test_x.py", line=30, name="helper", code="helper(got, want)")],
        **kw,
    )


SOURCE = {"kind": "source_text", "path": "/app/main.py"}
STDOUT = {"kind": "stdout", "command": ["python3", "/app/cli.py", "--json"], "flags": ["--json"]}
SUB = {"kind": "pattern", "pattern_kind": "substring"}


@pytest.mark.parametrize(
    ("records", "want"),
    [
        ([check(SOURCE, {**SUB, "value": "Counter("}, op="in")], "source-text"),
        ([check(SOURCE, {**SUB, "value": "import subprocess"}, op="not in", negated=True)], "method"),
        ([check(SOURCE, {"kind": "exists"}, op="exists")], None),  # the file exists: not its text
        ([check({"kind": "shell_history", "path": "/root/.bash_history"}, {**SUB, "value": "tar"}, op="in")], "method"),
        ([check(STDOUT, {**SUB, "value": "3"}, op="in")], "weak-substring"),
        ([check(STDOUT, {**SUB, "value": "ok"}, op="in")], "weak-substring"),
        ([check(STDOUT, {"kind": "literal", "value": "42"}, op="in")], "weak-substring"),
        ([check(STDOUT, {**SUB, "values": ["1", "2", "12"]}, op="in", cases=3)], "weak-substring"),
        ([check(STDOUT, {**SUB, "values": ["1", "total: 2"]}, op="in")], None),  # not every case is weak
        ([check(STDOUT, {**SUB, "value": "errors: 3"}, op="in")], None),
        ([check(STDOUT, {**SUB, "value": "3"}, op="not in", negated=True)], None),
        ([check(STDOUT, {"kind": "literal", "value": "3"}, op="==")], None),  # equality pins the output
        (
            [check({"kind": "self_report", "command": ["python3", "/app/calc.py"]}, {**SUB, "value": "PASSED"})],
            "self-report",
        ),
        ([check({"kind": "self_report"}, {"kind": "threshold", "value": "2.0"}, op="<")], "self-report"),
        ([check({"kind": "self_report"}, {"kind": "computed", "inputs": ["/app/in.txt"]}, op="==")], None),
    ],
)
def test_case_of_one_check(records, want):
    assert case_of(records[0], records) == want


def test_another_check_of_the_same_test_that_pins_the_output_makes_a_weak_substring_a_smoke_check():
    weak = check(STDOUT, {**SUB, "value": "7"}, op="in")
    exact = check(STDOUT, {"kind": "computed", "inputs": ["/app/in.txt"]}, op="==", line=13)
    other_test = check(STDOUT, {"kind": "computed"}, op="==", test="tests/test_x.py::test_b")
    status = check({**STDOUT, "kind": "exit_code"}, {"kind": "literal", "value": "0"}, op="==", line=11)
    assert case_of(weak, [weak, exact]) is None
    assert case_of(weak, [weak, other_test, status]) == "weak-substring"  # another test, an exit status: no


def test_a_self_report_beside_a_recomputed_value_is_not_trusted_alone():
    banner = check({"kind": "self_report"}, {**SUB, "value": "PASSED"})
    value = check(STDOUT, {"kind": "computed", "inputs": ["expr"]}, op="==", line=14)
    assert case_of(banner, [banner, value]) is None
    assert case_of(banner, [banner, check(STDOUT, {"kind": "exists"}, op="exists", line=15)]) == "self-report"


def test_one_row_two_labels():
    """One registry row; the method case is brittleness (a correct outcome fails), the others are shortcuts."""
    row = get_rule(RULE)
    assert (row.label_for("method"), row.label_for("source-text"), row.label_for(None)) == (
        "brittleness",
        "shortcut",
        "shortcut",
    )
    assert Finding.of(RULE, "m", subtype="method").label == "brittleness"
    method, text = Finding.of(RULE, "m", subtype="method"), Finding.of(RULE, "m", subtype="source-text")
    assert method.fix != text.fix and text.label == "shortcut"


@pytest.mark.parametrize(
    ("name", "text", "stated"),
    [
        ("total_count", "the object has a `totalCount` field", True),
        ("total_count", "prints the total count of rows", True),
        ("totalCount", "key total-count", True),
        ("--dry-run", "with dry_run set, nothing is written", True),
        ("total_count", "the totals", False),
        ("json", "prints JSONL lines", False),
        # built by a template the text gives, every part stated; not when a part or the template is missing
        ("input_fwd", "name each record `NAME_DIR`: NAME is input or egfp, DIR is fwd or rev", True),
        ("user-id", "write one file <user>-<id>.json per user and id", True),
        ("input_fwd", "name each record `NAME_DIR`: NAME is input or egfp, DIR is forward or reverse", False),
        ("user_id", "write one file <user>-<id>.json per user and id", False),
        ("input_fwd_a", "name each record `NAME_DIR`: NAME is input or egfp, DIR is fwd or rev", False),
        ("total_count", "print the TOTAL and how many rows count", False),
    ],
)
def test_stated_in_any_spelling(name, text, stated):
    assert stated_in(name.lstrip("-"), text) is stated


def test_program_of_a_command():
    assert program_of(["python3", "-u", "/app/cli.py", "--json"]) == "/app/cli.py"
    assert program_of(["/app/run.sh", "-n", "3"]) == "/app/run.sh"
    assert program_of([]) is None


INSTRUCTION = "Write `/app/report.py`: it prints a summary of `/app/data/sales.csv`. See `docs/FORMAT.md`.\n"
SOLVE = "#!/bin/bash\ncp /solution/report.py /app/report.py\n"
DOCKER = "FROM debian:bookworm\nWORKDIR /app\nCOPY data /app/data\nCOPY docs /app/docs\nCOPY tool.py /app/tool.py\n"


def _task(tmp_path, fmt: str):
    return write_env(
        tmp_path,
        {
            "instruction.md": INSTRUCTION,
            "solution/solve.sh": SOLVE,
            "environment/Dockerfile": DOCKER,
            "environment/data/sales.csv": "region,amount\nnorth,3\n",
            "environment/docs/FORMAT.md": fmt,
            "environment/tool.py": "import argparse\n",
        },
    )


def _mismatches(env_dir, records):
    env = load_environment(env_dir, lint=True)
    return flag_key_mismatches(env, task_facts(env), records, model_of(env).provenance)


def test_flags_and_keys_no_text_states_are_requirements_the_instruction_omits(tmp_path):
    env_dir = _task(tmp_path, "The summary is one object; `region_totals` maps each region to its sum.\n")
    run = {
        "kind": "stdout",
        "command": ["python3", "/app/report.py", "--json", "--top=3"],
        "flags": ["--json", "--top=3"],
    }
    records = [
        check({**run, "keys": ["region_totals", "north"]}, {"kind": "computed", "inputs": ["/app/data/sales.csv"]}),
        check({**run, "keys": ["grandTotal"]}, {"kind": "literal", "value": "3"}, line=20),
    ]
    found = {(m.what, m.want) for m in _mismatches(env_dir, records)}
    # --json, --top and grandTotal are nowhere; region_totals is in the doc the instruction names (docs/FORMAT.md)
    # and "north" in the data file it names (/app/data/sales.csv, copied from the build context)
    assert found == {("flag", "--json"), ("flag", "--top"), ("key", "grandTotal")}
    m = next(m for m in _mismatches(env_dir, records) if m.want == "--json")
    assert m.test.where == "tests/test_x.py:12" and m.via == ("tests/test_x.py:30: helper(got, want)",)
    assert m.claim is not None and m.claim.line == 1  # the instruction's line naming the program


def test_no_requirement_of_a_program_the_image_holds_or_a_system_tool(tmp_path):
    env_dir = _task(tmp_path, "nothing here\n")
    records = [
        check({"kind": "stdout", "command": ["python3", "/app/tool.py", "--verbose"], "flags": ["--verbose"]}, SUB),
        check({"kind": "stdout", "command": ["curl", "-s", "http://localhost:8000"], "flags": ["-s"]}, SUB),
        check({"kind": "exit_code", "command": ["/usr/bin/env", "--debug"], "flags": ["--debug"]}, SUB),
        check({"kind": "output_file", "path": "/tests/expected.json", "keys": ["hidden_key"]}, SUB),
    ]
    assert _mismatches(env_dir, records) == []


FLAWED = {
    "tests-read-agent-source": "source-text",
    "tests-grade-shell-history": "method",
    "tests-weak-substring": "weak-substring",
    "tests-c-weak-substring": "weak-substring",  # the check in a C file that test.sh builds and runs
    "tests-trust-self-report": "self-report",
}
LOOK_ALIKES = [f"clean-{name}" for name in [*FLAWED, "instruction-omits-tested-flag"]]


def _lint(name: str) -> list[Finding]:
    return lint_findings(load_environment(EXAMPLES / name, lint=True))


@pytest.mark.parametrize("name", sorted(FLAWED))
def test_each_flaw_is_named_at_its_check_with_its_helper(name):
    found = [f for f in _lint(name) if f.rule == RULE]
    assert found, f"{name}: {RULE} not reported"
    assert {f.subtype for f in found} == {FLAWED[name]}
    assert {str(f.label) for f in found} == set(expected(name)["labels"])
    for f in found:
        assert f.location and f.location.startswith("tests/") and f.evidence[0].startswith("check: ")
        assert any(e.startswith("via ") for e in f.evidence), f"{name}: the helper's line is not cited: {f.evidence}"


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_look_alikes_stay_quiet(name):
    loud = [(f.rule, f.location) for f in _lint(name) if f.severity != "info"]
    assert loud == [], f"{name}: {loud}"


METHOD_TEST = """from pathlib import Path


def read_source():
    return Path("/app/fetch.py").read_text()


def test_no_shelling_out():
    assert "import subprocess" not in read_source()


def test_output():
    assert Path("/app/out.txt").read_text() == "hello"
"""


@pytest.mark.parametrize(
    ("instruction", "severity"),
    [
        ("Write /app/fetch.py, which writes hello to /app/out.txt.\n", "warning"),
        ("Write /app/fetch.py, which writes hello to /app/out.txt. Do not use subprocess for it.\n", "info"),
        ("Write /app/fetch.py, which writes hello to /app/out.txt. Do not print anything.\n", "warning"),
    ],
)
def test_a_method_check_the_instruction_states_is_info_citing_its_line(tmp_path, instruction, severity):
    """A check forbidding a text in the agent's source grades the method; where the instruction forbids that means
    in so many words, the check enforces a stated rule, and the finding drops to info citing the sentence. A
    prohibition of something else leaves it a warning."""
    env_dir = write_env(
        tmp_path,
        {
            "instruction.md": instruction,
            "tests/test_outputs.py": METHOD_TEST,
            "solution/solve.sh": '#!/bin/bash\nprintf \'open("/app/out.txt", "w").write("hello")\\n\' > /app/fetch.py\n',
        },
    )
    found = [f for f in lint_findings(load_environment(env_dir, lint=True)) if f.rule == RULE]
    assert [(f.subtype, f.severity.value) for f in found] == [("method", severity)]
    stated = [e for e in found[0].evidence if e.startswith("instruction: ")]
    assert stated == (["instruction: instruction.md:1: Do not use subprocess for it"] if severity == "info" else [])
