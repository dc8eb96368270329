"""Issue 35, items 2, 4 and 5: the pure logic, flaw and look-alike side by side (the fast tier).

- tolerance: thresholds read from the tests' AST, and the per-file verdict pattern, told apart from a weak
  verifier (probes/mutation/tolerance.py, probes/mutation/probe.py's mutants);
- why the nop passes: pytest's JUnit report, the tests' shapes and the cause they agree on with the facts
  (probes/nop/cause_rules.py), and the state reducer that lets the explained finding supersede validation's;
- a verifier that writes what it checks: container snapshots, trace parsing and the overlap
  (probes/verifier_writes.py, core/strace.py).
The Docker side (the probes on real containers) is the detection table's: examples/tolerant-row-recovery,
nop-vacuous-output-loop, clean-output-loop, verifier-compiles-into-checked-dir, clean-compiles-into-tempdir.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from envqa.core.strace import path_uses
from envqa.core.task_model.thresholds import thresholds_in
from envqa.core.task_model.vacuity import shapes_of_tests
from envqa.graphs.loop_state import fresh, per_version_findings
from envqa.probes.mutation.probe import mutants_of
from envqa.probes.mutation.tolerance import FileVerdicts, every_record_changed
from envqa.probes.nop.cause_rules import NopFacts, explain, junit_results
from envqa.probes.verifier_writes import checked_overlap, written_between

from .conftest import EXAMPLES

pytestmark = pytest.mark.fast


# --- tolerance ---------------------------------------------------------------------------------------------

TOLERANT_SOURCES = {
    "generator sum (TB2 sqlite-db-truncate shape)": (
        "def test_rows():\n    rows = load()\n"
        "    score = sum(1 for k, v in EXPECTED.items() if rows.get(k) == v)\n"
        "    assert score > 6\n"
    ),
    "filtered len": "def test_rows():\n    assert len([r for r in load() if r in WANT]) >= 7\n",
    "ratio": "def test_acc():\n    correct = sum(p == t for p, t in zip(pred, truth))\n    assert correct / len(truth) >= 0.8\n",
    "loop counter and a module constant": "MIN_OK = 6\ndef test_rows():\n    hits = 0\n    for row in load():\n        if row in WANT:\n"
    "            hits += 1\n    assert hits > MIN_OK\n",
    "reversed comparison": "def test_rows():\n    score = sum(1 for r in load() if r.ok)\n    assert 6 < score\n",
    "share of the collection": "def test_rows():\n    good = len([r for r in load() if r.ok])\n    assert good >= len(EXPECTED) * 0.7\n",
}
STRICT_SOURCES = {
    "exact count": "def test_rows():\n    assert len(load()) == 10\n",
    "non-empty": "def test_rows():\n    assert len([r for r in load() if r]) > 0\n",
    "at least one": "def test_rows():\n    assert sum(1 for r in load() if r.ok) >= 1\n",
    "timing": "def test_fast():\n    elapsed = end - start\n    assert elapsed < 5.0\n",
    "plain length": "def test_rows():\n    rows = load()\n    assert len(rows) > 3\n",
}


@pytest.mark.parametrize("name", sorted(TOLERANT_SOURCES))
def test_a_threshold_over_a_counted_collection_is_found(name):
    found = thresholds_in(TOLERANT_SOURCES[name], "tests/test_x.py")
    assert len(found) == 1 and found[0].startswith("tests/test_x.py:"), found


@pytest.mark.parametrize("name", sorted(STRICT_SOURCES))
def test_exact_or_non_empty_checks_are_not_thresholds(name):
    assert thresholds_in(STRICT_SOURCES[name]) == []


def test_only_the_tolerant_example_states_a_threshold():
    """Across every example's tests (ours and those written from others' shapes), and Harbor's template."""
    with_threshold = set()
    for test_file in sorted(EXAMPLES.glob("*/tests/*.py")):
        if thresholds_in(test_file.read_text()):
            with_threshold.add(test_file.parent.parent.name)
    assert with_threshold == {"tolerant-row-recovery"}


def test_mutants_say_which_are_wholly_wrong():
    data = b"1,7151\n2,3082\n3,6644\n4,1207\n"
    by_kind = {m.kind: m for m in mutants_of("/app/recovered.csv", data, False, None)}
    assert by_kind["empty"].scope == "whole"
    assert by_kind["every record changed"].scope == "whole"
    assert by_kind["every record changed"].data == b"2,7151\n3,3082\n4,6644\n5,1207\n"
    assert by_kind["last line removed"].scope == "record"
    assert by_kind["number 1 -> 2"].scope == "record"
    middle = by_kind["record 3 changed"]
    assert middle.scope == "record" and middle.optional and middle.data == b"1,7151\n2,3082\n4,6644\n4,1207\n"
    one = {m.kind: m.scope for m in mutants_of("/app/answer.txt", b"42\n", False, None)}
    assert one == {"empty": "whole", "number 42 -> 43": "whole"}  # one record: changing it changes them all


def test_every_record_changed_leaves_no_record_right():
    data = b"alpha\n\nbeta 3\n"
    assert every_record_changed(data) == b"ahpla#\n\nbeta 4\n"


def test_tolerance_pattern_versus_weak_and_partial_verifiers():
    tolerant = FileVerdicts(
        "/app/r.csv",
        whole=[("empty", "fail"), ("every record changed", "fail")],
        record=[("last line removed", "pass"), ("number 1 -> 2", "pass")],
    )
    weak = FileVerdicts(
        "/app/stats.txt",
        whole=[("empty", "fail"), ("every record changed", "pass")],
        record=[("number 4 -> 5", "pass")],
    )
    partial = FileVerdicts(
        "/app/stats.txt",
        whole=[("empty", "fail"), ("every record changed", "fail")],
        record=[("last line removed", "pass"), ("number 4 -> 5", "fail")],
    )
    assert tolerant.tolerant() and tolerant.only_partial()
    assert not weak.tolerant() and not weak.only_partial()  # a wholly wrong answer passed: a weak verifier
    assert not partial.tolerant() and partial.only_partial()  # tolerant only if the tests' code shows a threshold


# --- why the nop passes --------------------------------------------------------------------------------------


def test_junit_results_from_a_real_pytest_report(tmp_path):
    (tmp_path / "test_a.py").write_text(
        "import pytest\n\ndef test_ok():\n    pass\n\ndef test_bad():\n    assert 0\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\ndef test_p(n):\n    assert n\n\n"
        "@pytest.mark.skip\ndef test_s():\n    pass\n"
    )
    report = tmp_path / "junit.xml"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={report}",
            str(tmp_path / "test_a.py"),
        ],
        capture_output=True,
        timeout=120,
        cwd=tmp_path,
    )
    passed, failed = junit_results(report.read_text())
    assert sorted(passed) == ["test_ok", "test_p", "test_p"] and failed == ["test_bad"]
    assert junit_results("not xml <") is None


def _example_tests(name: str) -> dict[str, str]:
    return {f"tests/{p.name}": p.read_text() for p in sorted((EXAMPLES / name / "tests").glob("*.py"))}


def test_empty_output_loop_names_the_cause_and_the_look_alike_stays_quiet():
    facts = NopFacts(listed={"/app/output": 0, "/app/input": 2}, passed=["test_every_output_matches_its_input"])
    cause = explain(shapes_of_tests(_example_tests("nop-vacuous-output-loop")), facts)
    assert cause is not None and cause.subtype == "empty-output-loop"
    assert "/app/output is empty" in cause.evidence[0] and cause.location == "tests/test_outputs.py"
    # the look-alike loops over the inputs' listing, which the image ships non-empty: even were its test reported
    # passing, the loop it has is not over the empty directory
    assert explain(shapes_of_tests(_example_tests("clean-output-loop")), facts) is None


def test_glob_over_a_missing_directory_terminal_bench_style():
    source = (
        "import glob, json\n\ndef test_results():\n    for path in glob.glob('/app/results/*.json'):\n"
        "        assert json.load(open(path))['status'] == 'ok'\n"
    )
    cause = explain(shapes_of_tests({"tests/test_outputs.py": source}), NopFacts(listed={"/app/results": -1}))
    assert cause is not None and cause.subtype == "empty-output-loop" and "missing" in cause.evidence[0]
    assert explain(shapes_of_tests({"tests/test_outputs.py": source}), NopFacts(listed={"/app/results": 3})) is None


HASH_TEST = (
    "import hashlib\nEXPECTED = '{digest}'\n\ndef test_model_integrity():\n"
    "    assert hashlib.sha256(open('/app/model.bin', 'rb').read()).hexdigest() == EXPECTED\n"
)


def test_a_hash_that_already_matches_the_shipped_file():
    digest = "ab" * 32
    facts = NopFacts(digests={"/app/model.bin": {"md5": "0" * 32, "sha256": digest}})
    cause = explain(shapes_of_tests({"tests/test_outputs.py": HASH_TEST.format(digest=digest)}), facts)
    assert cause is not None and cause.subtype == "hash-matches-shipped-file" and "/app/model.bin" in cause.evidence[0]
    other = NopFacts(digests={"/app/model.bin": {"sha256": "cd" * 32}})
    assert explain(shapes_of_tests({"tests/test_outputs.py": HASH_TEST.format(digest=digest)}), other) is None


def test_an_unchecked_run_of_a_missing_program():
    flawed = (
        "import subprocess\n\ndef test_solver_runs():\n"
        "    subprocess.run('/app/solver --selftest > /tmp/out.txt', shell=True)\n"
    )
    checked = flawed.replace("shell=True)", "shell=True, check=True)")
    facts = NopFacts(missing_programs={"/app/solver": 'execve("/app/solver", ...) = -1 ENOENT'})
    cause = explain(shapes_of_tests({"tests/test_outputs.py": flawed}), facts)
    assert cause is not None and cause.subtype == "unchecked-missing-program" and "solver" in cause.evidence[0]
    assert explain(shapes_of_tests({"tests/test_outputs.py": checked}), facts) is None
    status_read = flawed.replace("    subprocess.run(", "    r = subprocess.run(") + "    assert r.returncode == 0\n"
    assert explain(shapes_of_tests({"tests/test_outputs.py": status_read}), facts) is None


def test_two_untouched_files_compared():
    source = (
        "def test_config_applied():\n"
        "    assert open('/etc/app/live.conf').read() == open('/opt/app/default.conf').read()\n"
    )
    same = NopFacts(
        digests={"/etc/app/live.conf": {"sha256": "11" * 32}, "/opt/app/default.conf": {"sha256": "11" * 32}}
    )
    cause = explain(shapes_of_tests({"tests/test_outputs.py": source}), same)
    assert cause is not None and cause.subtype == "compares-untouched-files"
    differ = NopFacts(
        digests={"/etc/app/live.conf": {"sha256": "11" * 32}, "/opt/app/default.conf": {"sha256": "22" * 32}}
    )
    assert explain(shapes_of_tests({"tests/test_outputs.py": source}), differ) is None


def test_harbor_template_and_clean_examples_name_no_cause_on_an_empty_state():
    """Nothing listed, nothing missing, no digests: no cause is guessed from the code alone."""
    for name in ("clean-wordfreq", "clean-output-loop", "clean-compiles-into-tempdir", "weak-verifier"):
        assert explain(shapes_of_tests(_example_tests(name)), NopFacts()) is None, name


def test_an_explained_finding_supersedes_the_unexplained_one():
    generic = {"rule": "nop-passes", "severity": "critical", "subtype": None}
    other = {"rule": "reward-written-unconditionally", "severity": "error"}
    named = {"rule": "nop-passes", "severity": "critical", "subtype": "empty-output-loop"}
    state = per_version_findings(None, [generic, other])
    assert state == [generic, other]  # nothing explains it yet: kept
    assert per_version_findings(state, [named]) == [other, named]
    assert per_version_findings(state, fresh([])) == []  # a new version still starts empty


# --- a verifier that writes what it checks -------------------------------------------------------------------

STRACE = """\
100 1700000001.000 chdir("/app") = 0
100 1700000001.100 openat(AT_FDCWD, "/app/fib", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 3
101 1700000001.200 openat(AT_FDCWD, "/app/fib/main.c", O_RDONLY) = 3
102 1700000001.300 openat(AT_FDCWD, "/app/fib/cmain", O_RDWR|O_CREAT|O_TRUNC, 0666) = 4
103 1700000001.400 execve("/app/nothere", ["/app/nothere"], 0x7ffd /* 5 vars */) = -1 ENOENT (No such file or directory)
104 1700000001.500 openat(AT_FDCWD, "out", O_RDONLY|O_DIRECTORY <unfinished ...>
104 1700000001.600 <... openat resumed>) = -1 ENOENT (No such file or directory)
"""


def test_path_uses_reads_lists_writes_and_failed_execs():
    uses = [(u.path, u.use, u.ok, u.error) for u in path_uses(STRACE, "/")]
    assert uses == [
        ("/app/fib", "listed", True, ""),
        ("/app/fib/main.c", "read", True, ""),
        ("/app/fib/cmain", "written", True, ""),
        ("/app/nothere", "executed", False, "ENOENT"),
        ("/app/out", "listed", False, "ENOENT"),
    ]


def test_a_build_into_the_listed_directory_is_the_checked_state_and_a_temp_build_is_not():
    before = {"/app/fib": ("d", "4096", 10.0), "/app/fib/main.c": ("f", "200", 5.0), "/app/fib/cmain": ("f", "9", 20.0)}
    after = {"/app/fib": ("d", "4096", 30.0), "/app/fib/main.c": ("f", "200", 5.0), "/app/fib/cmain": ("f", "9", 30.0)}
    written = written_between(before, after, since=15.0)
    assert written == {"/app/fib", "/app/fib/cmain"}
    # the polyglot-c-py order: list the directory, then build into it
    events = [(u.path, u.use) for u in path_uses(STRACE, "/")]
    lines = checked_overlap(written, events)
    assert lines[0] == "/app/fib/cmain: written by the verifier into /app/fib, a directory it lists first"
    # the look-alike: the build goes elsewhere, the listed directory and the file read are untouched
    still = {"/app/fib": ("d", "4096", 10.0), "/app/fib/main.c": ("f", "200", 5.0)}
    assert checked_overlap(written_between(still, dict(still), since=15.0), events) == []
    # written, but neither read nor in a listed directory: not the checked state
    assert checked_overlap({"/app/build/x.o"}, events) == []


def test_a_program_output_the_test_writes_then_reads_is_fresh_not_carried_over():
    """A test runs the agent's program, which writes /app/result.txt, then reads it: fresh output each run. Only
    a read (or a listing) before the run's own write sees a leftover."""
    fresh_output = [("/app/result.txt", "written"), ("/app/result.txt", "read")]
    assert checked_overlap({"/app/result.txt"}, fresh_output) == []
    leftover = [("/app/result.txt", "read"), ("/app/result.txt", "written")]
    assert checked_overlap({"/app/result.txt"}, leftover) == [
        "/app/result.txt: written by the verifier, and read by it before it writes it again"
    ]


def test_interpreter_caches_are_not_the_checked_state():
    before = {"/app": ("d", "4096", 1.0)}
    after = {
        "/app": ("d", "4096", 1.0),
        "/app/__pycache__": ("d", "4096", 9.0),
        "/app/__pycache__/sort.cpython-311.pyc": ("f", "900", 9.0),
        "/app/.pytest_cache/v/x": ("f", "2", 9.0),
    }
    assert written_between(before, after, since=5.0) == set()


# --- mutation testing on the fake backend: which finding each verifier gets ------------------------------------

ROWS = [b"a 1", b"b 2", b"c 3", b"d 4"]


def _fake_ctx(tmp_path, qa_config, verify, files=None):
    import uuid

    from envqa.core.environment import load_environment
    from envqa.core.layout import RunLayout
    from envqa.probes.base import ProbeContext

    from .conftest import write_env
    from .test_probes_on_fake import _backend, _solve_writing

    backend = _backend(_solve_writing(b"\n".join(ROWS) + b"\n"), verify)
    env = load_environment(write_env(tmp_path / "env", files))
    config = qa_config.model_copy(update={"probes": qa_config.probes.model_copy(update={"verifier_reruns": 0})})
    run_id = f"fake-{uuid.uuid4().hex[:8]}"
    return ProbeContext(
        env=env, config=config, backend=backend, run_id=run_id, layout=RunLayout(config.runs_dir, run_id)
    )


def _rows_right(call) -> list[bool]:
    from .test_probes_on_fake import _out

    got = (_out(call) or b"").splitlines()
    return [i < len(got) and got[i] == row for i, row in enumerate(ROWS)]


def _verdict(ok: bool):
    def verify(call):
        from .test_probes_on_fake import _reward

        return _reward(call, ok(_rows_right(call)))

    return verify


def _run(ctx):
    from envqa.probes.oracle_state import oracle_state_probe

    return {f.rule: f for f in oracle_state_probe(ctx)}


def test_a_verifier_passing_three_of_four_rows_is_tolerant_not_weak(tmp_path, qa_config):
    found = _run(_fake_ctx(tmp_path, qa_config, _verdict(lambda right: sum(right) >= 3)))
    assert set(found) == {"verifier-tolerates-partial-answer"}
    note = found["verifier-tolerates-partial-answer"]
    assert note.severity.value == "info" and "seen from the mutants" in note.message
    assert any("record 3 changed: pass" in line and "every record changed: fail" in line for line in note.evidence)


def test_a_verifier_passing_any_four_lines_is_weak(tmp_path, qa_config):
    """The look-alike: four lines of anything pass, so every record changed passes: a wholly wrong answer."""

    def four_lines(call):
        from .test_probes_on_fake import _out, _reward

        return _reward(call, len((_out(call) or b"").split()) == 8)  # four "name number" lines, values unchecked

    found = _run(_fake_ctx(tmp_path, qa_config, four_lines))
    assert set(found) == {"verifier-accepts-mutant"}
    assert found["verifier-accepts-mutant"].severity.value == "error"
    assert any(
        "every record changed -> verifier still passes" in line for line in found["verifier-accepts-mutant"].evidence
    )


FIRST_AND_THREE = _verdict(lambda right: right[0] and sum(right) >= 3)  # the header row must be right, then 3 of 4
THRESHOLD_TEST = {
    "tests/test_rows.py": "def test_rows():\n    rows = load()\n    assert rows[0] == HEADER\n"
    "    assert sum(1 for r, want in zip(rows, WANT) if r == want) >= 3\n"
}


def test_a_threshold_in_the_tests_code_makes_partial_survivors_a_note(tmp_path, qa_config):
    found = _run(_fake_ctx(tmp_path, qa_config, FIRST_AND_THREE, THRESHOLD_TEST))
    assert set(found) == {"verifier-tolerates-partial-answer"}
    assert "sum(" in found["verifier-tolerates-partial-answer"].message
    assert found["verifier-tolerates-partial-answer"].location == "tests/test_rows.py"


def test_without_a_threshold_in_the_code_the_same_verdicts_stay_a_weak_verifier(tmp_path, qa_config):
    """The look-alike: the same verdicts, no threshold in the tests' code, and one record mutant failed (the
    header's): a verifier that ignores some records is not taken for tolerant."""
    found = _run(_fake_ctx(tmp_path, qa_config, FIRST_AND_THREE))
    assert set(found) == {"verifier-accepts-mutant"}


def test_the_nop_cause_probe_runs_only_when_the_nop_passes_and_says_why_it_could_not_trace(tmp_path, qa_config):
    from envqa.probes.nop.cause import nop_cause_probe

    from .test_probes_on_fake import _validate

    failing = _fake_ctx(tmp_path / "a", qa_config, _verdict(lambda right: all(right)))
    failing.validation = _validate(failing, "nop", 1)
    assert nop_cause_probe(failing) == [] and failing.new_trials == []
    assert failing.coverage[-1]["reason"] == "the nop does not pass: nothing to explain"

    passing = _fake_ctx(tmp_path / "b", qa_config, _verdict(lambda right: True))
    passing.validation = _validate(passing, "nop", 1)
    assert nop_cause_probe(passing) == []
    assert [t.agent for t in passing.new_trials] == ["nop"]  # the probe's own nop run, end state kept
    assert passing.coverage[-1] == {
        "probe": "nop_cause",
        "status": "skipped",
        "reason": "the sandbox backend cannot trace syscalls",
    }
