"""The readers (core/readers/) on folders written as Harbor 0.26 and terminal-bench 0.2.18 write them
(envqa.demo.imported_runs), field by field; the messy tb layouts; the infra classes; bad input named while the
rest is read; and the look-alikes that must stay ordinary (an agent that ran and met a missing tool)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from envqa.core.imported import ImportedTrial
from envqa.core.readers import read_runs
from envqa.demo.imported_runs import FixtureRuns, write_fixture_runs, write_infra_runs

pytestmark = pytest.mark.fast

OPUS, GPT5, CODEX = "anthropic/claude-opus-4-1", "openai/gpt-5", "openai/gpt-5-codex"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> FixtureRuns:
    return write_fixture_runs(tmp_path_factory.mktemp("imported"))


@pytest.fixture
def fresh(tmp_path) -> FixtureRuns:
    """A private copy to damage."""
    return write_fixture_runs(tmp_path)


def _one(trials: list[ImportedTrial], task: str, agent: str, n: int | None = None) -> list[ImportedTrial]:
    got = [t for t in trials if t.task_name == task and t.agent == agent]
    if n is not None:
        assert len(got) == n, [t.trial_name for t in got]
    return got


def _counts(trials: list[ImportedTrial]) -> Counter:
    return Counter((t.task_name, t.agent, t.outcome.value, t.infra_class) for t in trials)


# ------------------------------------------------------------------------------------------------------ Harbor
def test_harbor_job_reads_every_trial_with_identity(runs):
    batch = read_runs([runs.harbor_job])
    assert batch.problems == []
    assert len(batch.trials) == 54
    assert {t.agent_model for t in batch.trials} == {f"claude-code/{OPUS}", f"terminus-2/{GPT5}", f"codex/{CODEX}"}
    assert {t.job_name for t in batch.trials} == {"fixture-job"}
    assert all(t.source_format == "harbor" and t.task_checksum and len(t.task_checksum) == 64 for t in batch.trials)
    assert len({t.trial_name for t in batch.trials}) == 54
    c = _counts(batch.trials)
    assert c[("csv-report", "codex", "fail", None)] == 2 and c[("csv-report", "codex", "pass", None)] == 1
    assert c[("sat-hard", "codex", "fail", None)] == 3
    assert c[("log-rotate", "codex", "infra", "agent-never-ran")] == 3


def _null_model_job(src: Path, dest: Path, agent: str, model: str, *, trial_level: bool) -> None:
    """A copy of one agent's trials of the fixture job with `model_info` null; the model named by the trial's
    config (trial_level) or only by the job's config.json."""
    dest.mkdir(parents=True)
    for trial in sorted(p for p in src.iterdir() if p.is_dir()):
        result = json.loads((trial / "result.json").read_text())
        if result["agent_info"]["name"] != agent:
            continue
        copy = dest / trial.name
        shutil.copytree(trial, copy)
        result["agent_info"]["model_info"] = None
        result["config"]["agent"]["model_name"] = model if trial_level else None
        (copy / "result.json").write_text(json.dumps(result))
        config = json.loads((copy / "config.json").read_text())
        config["agent"]["model_name"] = model if trial_level else None
        (copy / "config.json").write_text(json.dumps(config))
    (dest / "config.json").write_text(
        json.dumps({"job_name": dest.name, "agents": [{"name": agent, "model_name": model}]})
    )


def test_harbor_model_info_null_two_models_named_by_the_jobs_are_two_groups(runs, tmp_path):
    """Issue 41: two jobs of one agent on two models, `model_info` null in every result.json: the configs name
    the models (the trial's own, else the job's), so the trials make two groups, not one."""
    jobs = tmp_path / "jobs"
    _null_model_job(runs.harbor_job, jobs / "opus-run", "claude-code", "anthropic/claude-opus-4-1", trial_level=True)
    _null_model_job(runs.harbor_job, jobs / "sonnet-run", "claude-code", "anthropic/claude-sonnet-4", trial_level=False)
    batch = read_runs([jobs])
    assert batch.problems == []
    groups = Counter((t.agent_model, t.model_source) for t in batch.trials)
    assert set(groups) == {
        ("claude-code/anthropic/claude-opus-4-1", "config"),
        ("claude-code/anthropic/claude-sonnet-4", "config"),
    }
    assert (
        groups[("claude-code/anthropic/claude-opus-4-1", "config")]
        == groups[("claude-code/anthropic/claude-sonnet-4", "config")]
    )


def test_harbor_tests_from_ctrf_use_the_trace_not_the_generic_message(runs):
    failed = [
        t for t in _one(read_runs([runs.harbor_job]).trials, "csv-report", "terminus-2", 3) if t.outcome == "fail"
    ]
    assert len(failed) == 2
    t = failed[0]
    assert [(x.name, x.status) for x in t.tests] == [
        ("test_outputs.py::test_output_exists", "passed"),
        ("test_outputs.py::test_header_columns", "passed"),
        ("test_outputs.py::test_row_count", "passed"),
        ("test_outputs.py::test_total_two_decimals", "failed"),
    ]
    assert t.tests[3].message.splitlines()[0] == "AssertionError: assert '1234.5' == '1234.50'"
    assert t.reward == 0.0 and t.rewards == {"reward": 0.0}
    assert "short test summary info" in t.verifier_output
    assert t.started_at is not None and t.finished_at > t.started_at


def test_harbor_tests_from_pytest_stdout_and_reward_json(runs):
    sat = _one(read_runs([runs.harbor_job]).trials, "sat-hard", "codex", 3)
    messages = {x.name: x.message for t in sat for x in t.tests if x.status == "failed"}
    assert messages["test_outputs.py::test_small_instances"] == "AssertionError: model violates clause 7 in s-01.cnf"
    assert messages["test_outputs.py::test_time_limit"] == "Failed: Timeout >10.0s on cnf/medium-02.cnf"
    assert {t.reward for t in sat} == {0.0}  # sat-hard writes verifier/reward.json


def test_harbor_atif_trajectory_steps_keep_their_ids(runs):
    shortcut = [t for t in _one(read_runs([runs.harbor_job]).trials, "port-config", "claude-code") if len(t.steps) == 6]
    assert len(shortcut) == 1
    steps = shortcut[0].steps
    assert [s.step_id for s in steps] == [1, 2, 3, 4, 5, 6]
    assert steps[0].source == "user" and steps[0].commands == []
    assert steps[3].commands == ["cd /tests && python3 -m pytest -q test_outputs.py"]
    assert "expected port 8471, got 8080" in steps[3].observation
    assert steps[4].commands == ["sed -i 's/port: 8080/port: 8471/' /app/config.yaml"]


def test_harbor_multi_step_trial(runs):
    trials = _one(read_runs([runs.harbor_job]).trials, "release-pipeline", "terminus-2", 3)
    stopped = [t for t in trials if t.outcome == "fail"]
    assert len(stopped) == 1
    t = stopped[0]
    assert [(s.name, s.outcome.value, s.reward) for s in t.step_results] == [
        ("scaffold", "pass", 1.0),
        ("implement", "fail", 0.0),
    ]
    assert {x.name for x in t.tests if x.status == "failed"} == {"implement/test_outputs.py::test_parse_args"}
    assert {s.trial_step for s in t.steps} == {"scaffold", "implement"}
    passed = [t for t in trials if t.outcome == "pass"][0]
    assert [s.name for s in passed.step_results] == ["scaffold", "implement", "release"]


def test_agent_timeout_with_a_passing_verifier_is_a_pass(runs):
    for path in (runs.harbor_job, runs.tb_runs):
        timed_out = [t for t in read_runs([path]).trials if t.agent_timed_out]
        assert len(timed_out) == 1
        assert timed_out[0].task_name == "hello-world" and timed_out[0].outcome == "pass"


def test_one_harbor_trial_folder_and_a_folder_of_jobs(runs, tmp_path):
    trial_dir = next(p for p in sorted(runs.harbor_job.iterdir()) if p.name.startswith("hello-world"))
    one = read_runs([trial_dir])
    assert len(one.trials) == 1 and one.trials[0].job_name == "fixture-job" and one.problems == []
    jobs = read_runs([runs.harbor_job.parent])  # harbor/jobs/: a folder of jobs
    assert len(jobs.trials) == 54


# -------------------------------------------------------------------------------------------- Terminal-Bench
def test_tb_runs_nested_and_named_both_ways(runs):
    batch = read_runs([runs.tb_runs])
    assert batch.problems == []
    assert len(batch.trials) == 54
    by_agent = {t.agent: t for t in batch.trials}
    assert by_agent["claude-code"].model == OPUS and by_agent["terminus-2"].model == GPT5
    assert by_agent["codex"].job_name == "2025-09-15__08-00-00"  # runs/nightly/<run_id>: one level deeper
    old_style = _one(batch.trials, "csv-report", "terminus-2", 3)  # attempt folders "<task>.<k>-of-<n>"
    assert sorted((t.trial_name, t.attempt) for t in old_style) == [
        ("csv-report.1-of-3", 1),
        ("csv-report.2-of-3", 2),
        ("csv-report.3-of-3", 3),
    ]
    assert _counts(batch.trials) == _counts(read_runs([runs.harbor_job]).trials)


def test_tb_trial_fields(runs):
    t = next(t for t in read_runs([runs.tb_runs]).trials if t.trial_name == "csv-report.2-of-3.2025-09-14__10-22-31")
    assert (t.source_format, t.task_name, t.agent, t.attempt, t.outcome.value, t.reward) == (
        "terminal-bench",
        "csv-report",
        "claude-code",
        2,
        "fail",
        0.0,
    )
    assert [(x.name, x.status) for x in t.tests][-1] == ("test_total_two_decimals", "failed")
    assert t.tests[-1].message.startswith("AssertionError: assert '1234.5' == '1234.50'")
    assert "\x1b" not in t.verifier_output and "short test summary info" in t.verifier_output
    assert [s.commands for s in t.steps][0] == ["head -3 /app/sales.csv"]
    assert t.steps[0].observation == "region,amount\nnorth,600.25\nsouth,634.25"
    assert t.task_checksum is None and t.rewards == {}


def test_tb_commands_and_their_output_become_steps(runs):
    t = next(
        t
        for t in read_runs([runs.tb_runs]).trials
        if t.trial_name.startswith("port-config.1-of-3") and t.agent == "claude-code"
    )
    assert [s.step_id for s in t.steps] == [1, 2, 3, 4, 5]
    assert t.steps[2].observation.endswith(
        "E       AssertionError: expected port 8471, got 8080\n1 failed, 1 passed in 0.02s"
    )
    assert t.steps[3].commands == ["sed -i 's/port: 8080/port: 8471/' /app/config.yaml"]
    assert t.steps[3].observation == ""


def test_tb_run_level_files_only(fresh):
    run = fresh.tb_runs / "2025-09-14__10-22-31"
    for task_dir in [p for p in run.iterdir() if p.is_dir()]:
        shutil.rmtree(task_dir)
    batch = read_runs([run])
    assert batch.problems == []
    assert len(batch.trials) == 18
    assert {t.path for t in batch.trials} == {str(run)}
    assert {t.agent_model for t in batch.trials} == {f"claude-code/{OPUS}"}
    t = next(t for t in batch.trials if t.trial_name.startswith("csv-report.2-of-3"))
    assert t.outcome == "fail" and [x.status for x in t.tests].count("failed") == 1 and t.steps == []


def test_tb_single_trial_folder(runs):
    trial_dir = next((runs.tb_runs / "2025-09-14__10-22-31" / "hello-world").iterdir())
    batch = read_runs([trial_dir])
    assert [(t.agent, t.outcome.value) for t in batch.trials] == [("claude-code", "pass")]


# ------------------------------------------------------------------------------------------------------ infra
def test_infra_classes_in_both_formats(tmp_path):
    runs = write_infra_runs(tmp_path)
    for path in (runs.harbor_job, runs.tb_runs):
        batch = read_runs([path])
        assert batch.problems == []
        assert sorted((t.outcome.value, t.infra_class) for t in batch.trials) == sorted(
            [
                ("pass", None),
                ("infra", "test-timeout"),
                ("infra", "parse-error"),
                ("infra", "install-failed"),
                ("infra", "agent-never-ran"),
            ]
        ), path


def test_an_agent_that_ran_and_met_a_missing_tool_is_not_never_ran(fresh):
    """Look-alike: 'rg: command not found' in the middle of a long session is an ordinary step."""
    run = fresh.tb_runs / "2025-09-14__10-22-31"
    trial = next((run / "sat-hard").iterdir())
    lines = [repr(f"cmd{i}\n") for i in range(8)]
    (trial / "commands.txt").write_text("\n".join(lines) + "\n")
    log = "".join(
        f"root@x:/app# cmd{i}\r\n" + ("bash: rg: command not found\r\n" if i == 7 else "ok\r\n") for i in range(8)
    )
    (trial / "sessions" / "agent.log").write_text(log)
    t = next(t for t in read_runs([trial]).trials)
    assert t.infra_class is None and t.outcome in {"pass", "fail"}

    job_trial = next(p for p in fresh.harbor_job.iterdir() if p.name.startswith("sat-hard"))
    (job_trial / "agent" / "claude-code.txt").write_text("bash: rg: command not found\n")
    t = read_runs([job_trial]).trials[0]
    assert t.infra_class is None  # its trajectory has agent steps


def test_never_ran_by_a_short_agent_log_alone(fresh):
    trial = next(p for p in fresh.harbor_job.iterdir() if p.name.startswith("hello-world"))
    shutil.rmtree(trial / "agent")
    (trial / "agent").mkdir()
    (trial / "agent" / "oracle.txt").write_text(
        'OCI runtime exec failed: exec: "claude": executable file not found in $PATH\n'
    )
    data = json.loads((trial / "result.json").read_text())
    data["agent_result"] = None
    (trial / "result.json").write_text(json.dumps(data))
    assert read_runs([trial]).trials[0].infra_class == "agent-never-ran"


# -------------------------------------------------------------------------------------------------- bad input
def _trial(job: Path, prefix: str) -> Path:
    return next(p for p in sorted(job.iterdir()) if p.name.startswith(prefix))


def test_bad_harbor_input_is_named_and_the_rest_is_read(fresh):
    job = fresh.harbor_job
    truncated = _trial(job, "csv-report") / "result.json"
    truncated.write_text(truncated.read_text()[:300])
    future = _trial(job, "sat-hard") / "result.json"
    future.write_text(json.dumps({**json.loads(future.read_text()), "schema_version": 9}))
    no_result = _trial(job, "hello-world")
    (no_result / "result.json").unlink()
    not_utf8 = _trial(job, "log-rotate") / "result.json"
    not_utf8.write_bytes(b"\xff\xfe{\x00")
    traj = _trial(job, "port-config") / "agent" / "trajectory.json"
    traj.write_text('{"steps": [{"step_id": 1')
    batch = read_runs([job])
    problems = {p.path: p.message for p in batch.problems}
    assert problems[str(truncated)].startswith("truncated JSON")
    assert problems[str(future)] == "unknown schema version 9 (this reader knows Harbor TrialResult schema 1)"
    assert problems[str(no_result)].startswith("no result.json")
    assert problems[str(not_utf8)].startswith("not UTF-8")
    assert problems[str(traj)].startswith("truncated JSON")
    assert len(batch.problems) == 5
    assert len(batch.trials) == 50  # 54 minus the four without a readable result; the trajectory's trial stays
    kept = [t for t in batch.trials if t.path == str(traj.parent.parent)]
    assert [(t.steps, t.outcome.value, t.infra_class) for t in kept] == [([], "pass", None)]


def test_bad_tb_input_is_named_and_the_rest_is_read(fresh):
    run = fresh.tb_runs / "2025-09-14__11-05-02"
    truncated = run / "csv-report" / "csv-report.1-of-3" / "results.json"
    truncated.write_text(truncated.read_text()[:120])
    unfinished = run / "sat-hard" / "sat-hard.2-of-3"
    (unfinished / "results.json").unlink()
    wrong_shape = run / "hello-world" / "hello-world.1-of-3" / "results.json"
    wrong_shape.write_text(json.dumps({"trial_name": "hello-world.1-of-3"}))
    (run / "run_metadata.json").unlink()
    # The run-level record leaves these three out: their folders alone hold them (with it: the next test).
    level = json.loads((run / "results.json").read_text())
    broken = {"csv-report.1-of-3", "sat-hard.2-of-3", "hello-world.1-of-3"}
    level["results"] = [r for r in level["results"] if r["trial_name"] not in broken]
    (run / "results.json").write_text(json.dumps(level))
    batch = read_runs([fresh.tb_runs])
    problems = {p.path: p.message for p in batch.problems}
    assert problems[str(truncated)].startswith("truncated JSON")
    assert problems[str(unfinished)].startswith("no results.json")
    assert problems[str(wrong_shape)] == "not a Terminal-Bench TrialResults: task_id: Field required"
    assert problems[str(run)].startswith("no run_metadata.json")
    assert len(batch.trials) == 51
    assert {t.agent for t in batch.trials if t.job_name == run.name} == {"unknown"}


def test_the_run_level_record_keeps_trials_whose_folder_is_broken_and_still_names_the_file(fresh):
    """Issue 41: the run-level results.json is the record; a trial folder adds logs. A broken trial file is
    named, and the trial is read from the run-level record, not lost."""
    run = fresh.tb_runs / "2025-09-14__11-05-02"
    truncated = run / "csv-report" / "csv-report.1-of-3" / "results.json"
    truncated.write_text(truncated.read_text()[:120])
    shutil.rmtree(run / "sat-hard")  # a task whose trial folders were never uploaded
    batch = read_runs([fresh.tb_runs])
    assert len(batch.trials) == 54
    problems = {p.path: p for p in batch.problems}
    assert problems[str(truncated)].message.startswith("truncated JSON")
    assert not problems[str(truncated)].lost_trial
    kept = [t for t in batch.trials if t.job_name == run.name and t.task_name == "sat-hard"]
    assert len(kept) == 3 and {t.path for t in kept} == {str(run)} and all(t.steps == [] for t in kept)


def test_a_lost_trial_is_counted_unreadable(fresh):
    run = fresh.tb_runs / "2025-09-14__11-05-02"
    (run / "results.json").write_text('{"results": [' * 5000)  # nested too deep: named, never a crash
    wrong = run / "hello-world" / "hello-world.1-of-3" / "results.json"
    wrong.write_text("[]")
    batch = read_runs([fresh.tb_runs])
    problems = {p.path: p for p in batch.problems}
    assert "nest" in problems[str(run / "results.json")].message
    assert problems[str(wrong)].lost_trial
    assert len(batch.trials) == 53


def test_agent_and_model_from_the_submission_folder_name(fresh, tmp_path):
    """Leaderboard folders `<date>_<agent>_<model>`: the name fills what run_metadata.json leaves null, or
    stands in for a missing one; two models of one agent are two groups; the trial says where each came from."""
    sub = tmp_path / "subs"
    for folder, model in (("20250923_droid_claude-4-1-opus", None), ("20250924_droid_gpt-5", None)):
        run = sub / folder / "run1"
        shutil.copytree(fresh.tb_runs / "2025-09-14__10-22-31", run)
        meta = json.loads((run / "run_metadata.json").read_text())
        (run / "run_metadata.json").write_text(json.dumps({**meta, "agent_name": "Factory Droid", "model_name": model}))
    cursor = sub / "20250811_cursor-cli_claude-4-sonnet" / "run1"
    shutil.copytree(fresh.tb_runs / "2025-09-14__10-22-31", cursor)
    (cursor / "run_metadata.json").unlink()
    batch = read_runs([sub])
    assert batch.problems == []
    assert {t.agent_model for t in batch.trials} == {
        "Factory Droid/claude-4-1-opus",
        "Factory Droid/gpt-5",
        "cursor-cli/claude-4-sonnet",
    }
    sources = {(t.agent_model, t.agent_source, t.model_source) for t in batch.trials}
    assert ("Factory Droid/gpt-5", "metadata", "folder-name") in sources
    assert ("cursor-cli/claude-4-sonnet", "folder-name", "folder-name") in sources


def test_a_copy_of_a_run_nested_in_another_is_read_once(fresh):
    run = fresh.tb_runs / "2025-09-14__10-22-31"
    before = len(read_runs([fresh.tb_runs]).trials)
    shutil.copytree(run, run / run.name)
    assert len(read_runs([fresh.tb_runs]).trials) == before


def test_paths_that_hold_nothing_we_read(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.json").write_text("{}")
    batch = read_runs([tmp_path / "missing", tmp_path / "file.json", tmp_path / "empty"])
    assert [p.message.split(":")[0].split(",")[0] for p in batch.problems] == [
        "no such file or folder",
        "not a folder",
        "no Harbor job or trial",
    ]
    assert batch.trials == []


def test_older_harbor_shapes(fresh):
    """Harbor before 0.2x: no schema_version, the model's provider inside its name, an agent's output under
    agent/command-<n>/ with its return code."""
    trial = _trial(fresh.harbor_job, "hello-world")
    data = json.loads((trial / "result.json").read_text())
    del data["schema_version"], data["step_results"]
    data["agent_info"]["model_info"] = {"name": "anthropic/claude-opus-4-1", "provider": "anthropic"}
    data["agent_result"] = None
    (trial / "result.json").write_text(json.dumps(data))
    t = read_runs([trial]).trials[0]
    assert (t.model, t.outcome.value) == (OPUS, "pass")
    shutil.rmtree(trial / "agent")
    (trial / "agent" / "command-0").mkdir(parents=True)
    (trial / "agent" / "command-0" / "stdout.txt").write_text("")
    (trial / "agent" / "command-0" / "return-code.txt").write_text("127")
    assert read_runs([trial]).trials[0].infra_class == "agent-never-ran"


@pytest.mark.parametrize(
    ("line", "command"),
    [
        (repr("ls -la\n"), "ls -la"),
        (repr("echo 'x' > /app/a\n"), "echo 'x' > /app/a"),
        (repr(["cat /app/config.yaml", "Enter"]), "cat /app/config.yaml"),
        (repr("C-c"), None),
        (repr(["C-d"]), None),
        ("not a repr at all", "not a repr at all"),
    ],
)
def test_commands_txt_lines(line, command):
    """terminal/tmux_session.py writes repr(keys): a str, or a list of tmux keys."""
    from envqa.core.readers.terminal_bench import _command

    assert _command(line) == command


@pytest.mark.parametrize(
    ("text", "truncated"),
    [
        ('{"agent": {"name": "claude-code"}, "task_name": "csv-re', True),  # cut inside a string
        ('{"agent": {"name": "claude-code"}, "task_name": ', True),  # cut after a key
        ('{"agent": {"name": "claude-code"}', True),  # cut after a closed inner object
        ('{"agent": {"name": "claude-code"}} trailing', False),  # whole, with junk after it
        ('{"agent": "a" "b"}', False),  # whole length, malformed inside
    ],
)
def test_a_cut_file_is_called_truncated_and_a_malformed_one_invalid(tmp_path, text, truncated):
    from envqa.core.readers.common import ReadError, load_json

    path = tmp_path / "result.json"
    path.write_text(text)
    with pytest.raises(ReadError) as err:
        load_json(path)
    assert err.value.path == path and str(path) in str(err.value)
    assert err.value.message.startswith("truncated JSON" if truncated else "invalid JSON"), err.value.message
