"""Bad input never crashes (issue 44 item 5): a fixed, small series of the fuzzer's cases (scripts/fuzz.py runs a
long one: `make fuzz`), the shapes the issue names one by one, and the CLI's last boundary (exit 70)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from fuzz_inputs.driver import config_case, count_trials, prepare, run_case, task_case
from fuzz_inputs.harness import check, fresh_copy, json_object, run_qa
from fuzz_inputs.seeds import write_seeds

pytestmark = pytest.mark.fast

# A fixed series: derandomize makes hypothesis draw the same cases every run (make test); `make fuzz` draws new ones.
# The mutations take their choices from hypothesis' Random (st.randoms), so a failing case shrinks to fewer,
# smaller mutations before it is reported.
FIXED_SERIES = hyp_settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> dict[str, Path]:
    planted = write_seeds(tmp_path_factory.mktemp("seeds").resolve())
    prepare(planted)
    return planted


def _drawn_cases(make_case, examples: int, where: Path) -> Counter:
    """Run `examples` hypothesis-drawn cases of `make_case(rng, work)`; each must keep every invariant. The exit
    codes seen, so the caller can check that the cases bite (some refused, some read)."""
    exits: Counter = Counter()

    @hyp_settings(FIXED_SERIES, max_examples=examples)
    @given(rng=st.randoms(use_true_random=False))
    def one(rng) -> None:
        work = Path(tempfile.mkdtemp(dir=where))
        case = make_case(rng, work)
        exits[case.answer.code] += 1
        assert not case.verdict.problems and not case.verdict.lost, case.line() + "\n    " + case.answer.stderr[-400:]

    one()
    return exits


def test_mutated_tasks_and_configs_never_crash(seeds, tmp_path):
    exits = _drawn_cases(
        lambda rng, work: (config_case if rng.random() < 0.25 else task_case)(rng, seeds, work), 28, tmp_path
    )
    assert exits[2] > 0 and exits[0] + exits[1] > 0  # some refused, some read: the cases bite


def test_mutated_run_folders_never_lose_an_untouched_trial(seeds, tmp_path):
    seed_trials = count_trials(seeds, tmp_path / "baseline")
    exits = _drawn_cases(lambda rng, work: run_case(rng, seeds, work, seed_trials), 6, tmp_path)
    assert sum(exits.values()) >= 6


def _lint(task: Path, home: Path, *extra: str):
    answer = run_qa(["lint", str(task), "--json", *extra], home)
    return answer, json_object(answer.stdout)


@pytest.mark.parametrize(
    ("shape", "words"),
    [
        ("folder", "a folder where a regular file should be"),
        ("fifo", "FIFO"),
        ("dangling", "dangling symlink"),
        ("loop", "unreadable"),
        ("non_utf8", "not UTF-8"),
        ("oversize", "too large"),
    ],
)
def test_each_broken_task_file_is_exit_2_naming_it(seeds, tmp_path, shape, words):
    task = fresh_copy(seeds["harbor"], tmp_path / "task")
    target = task / ("instruction.md" if shape == "non_utf8" else "tests/test_count.py")
    if shape == "non_utf8":
        target.write_bytes(b"caf\xe9\n")
    elif shape == "oversize":
        with target.open("ab") as f:
            f.truncate(64 * 1024 * 1024)
    else:
        target.unlink()
        {
            "folder": lambda p: p.mkdir(),
            "fifo": os.mkfifo,
            "dangling": lambda p: p.symlink_to(p.parent / "gone.py"),
            "loop": lambda p: p.symlink_to(p.name),
        }[shape](target)
    answer, doc = _lint(task, tmp_path / "home")
    assert check(answer, as_json=True, names_under=[task], qa_home=tmp_path / "home").problems == []
    assert answer.code == 2 and doc is not None and doc["exit_code"] == 2
    assert str(target) in doc["error"] and words in doc["error"], doc["error"]
    assert str(target) in answer.stderr  # the text answer names it too


def test_a_bom_and_crlf_task_reads_as_the_plain_one(seeds, tmp_path):
    task = fresh_copy(seeds["harbor"], tmp_path / "task")
    for name in ("task.toml", "instruction.md"):
        p = task / name
        p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes().replace(b"\n", b"\r\n"))
    answer, doc = _lint(task, tmp_path / "home")
    plain, plain_doc = _lint(seeds["harbor"], tmp_path / "home")
    assert answer.code == plain.code and doc is not None and plain_doc is not None
    assert {f["rule"] for f in doc["findings"]} == {f["rule"] for f in plain_doc["findings"]}


@pytest.mark.parametrize(
    "text", ["[probes\nenabled = 1", "[probes]\nlint_root_agent = 'sometimes'\n", "a = " + "[" * 3000]
)
def test_a_broken_qa_toml_is_exit_2_naming_it(seeds, tmp_path, text):
    cfg = tmp_path / "qa.toml"
    cfg.write_text(text)
    answer, doc = _lint(seeds["harbor"], tmp_path / "home", "-c", str(cfg))
    assert answer.code == 2 and doc is not None and str(cfg) in doc["error"], answer.stderr
    assert "Traceback" not in answer.stderr


def _qa(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "envqa.app.cli", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "QA_HOME": str(tmp_path / "home"), **env},
        timeout=120,
    )


def test_an_unexpected_error_is_one_line_a_log_and_exit_70(seeds, tmp_path):
    """The documented hook (QA_DEBUG_CRASH) raises inside the command, as a bug of ours would."""
    res = _qa(["lint", str(seeds["harbor"]), "--json"], tmp_path, QA_DEBUG_CRASH="1")
    assert res.returncode == 70, res.stderr
    doc = json_object(res.stdout)
    assert doc is not None and doc["exit_code"] == 70 and doc["error_class"] == "unexpected"
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) <= 3  # one line, folded at most
    assert "qa lint" in doc["error"] and doc["step"] in doc["error"]
    log = Path(doc["log"])
    assert log.is_file() and log.is_relative_to(tmp_path / "home") and "Traceback" in log.read_text()
    os.environ["QA_DEBUG_CRASH"] = "1"  # in-process from here: the same main(), without a second start-up
    try:
        text = run_qa(["lint", str(seeds["harbor"])], tmp_path / "home")
        verbose = run_qa(["-v", "lint", str(seeds["harbor"])], tmp_path / "home")
        analyze = run_qa(["analyze", str(seeds["harbor_job"]), "--format", "json"], tmp_path / "home")
    finally:
        del os.environ["QA_DEBUG_CRASH"]
    assert text.code == 70 and text.stdout == "" and "unexpected error" in text.stderr
    assert "Traceback" not in text.stderr
    assert verbose.code == 70 and "Traceback" in verbose.stderr
    assert analyze.code == 70 and json.loads(analyze.stdout)["exit_code"] == 70  # --format json: one object too
