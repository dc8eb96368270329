"""Groups of trials whose record names no model (issue 53 item 1), and Harbor's job counts by release (item 2),
on tests/fixtures/harbor-groups: two jobs of one agent with `model_name: null` in folders
`agentx-model-a__0.40/jobs/<ts>/` and `agentx-model-b__0.10/jobs/<ts>/` are two groups named by their folders;
a job whose config names the model groups by the pair. Two jobs of unknown model are never one group."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from envqa.core.readers import read_runs
from envqa.core.readers.groups import job_label
from envqa.core.readers.harbor_job import read_job

pytestmark = pytest.mark.fast

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "harbor-groups"
JOB_A = FIXTURE / "agentx-model-a__0.40" / "jobs" / "2026-11-20__10-00-00"
JOB_B = FIXTURE / "agentx-model-b__0.10" / "jobs" / "2026-11-20__11-00-00"
JOB_C = FIXTURE / "agenty-named__0.50" / "jobs" / "2026-11-20__12-00-00"


def _groups(paths: list[Path]) -> Counter:
    batch = read_runs(paths)
    assert batch.problems == []
    return Counter((t.agent_model, t.group_rule) for t in batch.trials)


def test_two_null_model_jobs_of_one_agent_are_two_groups_named_by_their_folders():
    assert _groups([FIXTURE]) == {
        ("agentx@agentx-model-a__0.40", "job folder"): 2,
        ("agentx@agentx-model-b__0.10", "job folder"): 2,
        ("agenty/provider-z/model-c", "agent+model"): 2,  # the config names the model: the pair
    }


def test_a_job_whose_record_names_the_model_groups_by_the_pair_across_folders(tmp_path):
    """The look-alike: the model is known, so two jobs of it in two folders are one group, as before."""
    for name, stamp in (("first__0.10", "2026-11-20__12-00-00"), ("second__0.90", "2026-11-21__12-00-00")):
        shutil.copytree(JOB_C, tmp_path / name / "jobs" / stamp)
    assert _groups([tmp_path]) == {("agenty/provider-z/model-c", "agent+model"): 4}


def test_two_timestamps_under_one_naming_folder_are_two_groups(tmp_path):
    jobs = tmp_path / "agentx-sweep" / "jobs"
    shutil.copytree(JOB_A, jobs / JOB_A.name)
    shutil.copytree(JOB_B, jobs / JOB_B.name)
    assert set(_groups([tmp_path])) == {
        ("agentx@agentx-sweep/2026-11-20__10-00-00", "job folder"),
        ("agentx@agentx-sweep/2026-11-20__11-00-00", "job folder"),
    }


def test_two_job_folders_with_one_label_in_two_places_stay_two_groups(tmp_path):
    first, second = tmp_path / "a" / "exp" / "jobs" / JOB_A.name, tmp_path / "b" / "exp" / "jobs" / JOB_B.name
    shutil.copytree(JOB_A, first)
    shutil.copytree(JOB_B, second)
    assert job_label(first) == job_label(second) == "exp"
    assert set(_groups([tmp_path / "a", tmp_path / "b"])) == {
        ("agentx@exp", "job folder"),
        (f"agentx@{second}", "job folder"),  # the second folder to claim "exp" is named by its path
    }


def test_a_job_given_twice_is_read_once_and_stays_one_group():
    assert _groups([JOB_A, JOB_A]) == {("agentx@agentx-model-a__0.40", "job folder"): 2}


def test_a_copy_of_a_null_model_job_in_another_named_folder_is_its_own_group(tmp_path):
    """Which folder holds a job names it: the same job under two names is two groups (never one); under one
    name (a copy of the same layout) it is read once."""
    shutil.copytree(JOB_A, tmp_path / "agentx-model-a__0.40" / "jobs" / JOB_A.name)
    shutil.copytree(JOB_A, tmp_path / "agentx-rerun__0.40" / "jobs" / JOB_A.name)
    assert _groups([tmp_path, FIXTURE / "agentx-model-a__0.40"]) == {
        ("agentx@agentx-model-a__0.40", "job folder"): 2,
        ("agentx@agentx-rerun__0.40", "job folder"): 2,
    }


def test_a_tb_run_with_no_model_is_grouped_by_its_folder(tmp_path):
    from envqa.demo.imported_runs import write_fixture_runs

    runs = write_fixture_runs(tmp_path / "written")
    runs_dir = tmp_path / "by-model"
    for name in ("droidish-m1__0.3", "droidish-m2__0.6"):
        run = runs_dir / name / "runs" / "2025-09-14__10-22-31"
        shutil.copytree(runs.tb_runs / "2025-09-14__10-22-31", run)
        meta = json.loads((run / "run_metadata.json").read_text())
        (run / "run_metadata.json").write_text(json.dumps({**meta, "agent_name": "droidish", "model_name": None}))
    got = set(_groups([runs_dir]))
    assert got == {("droidish@droidish-m1__0.3", "job folder"), ("droidish@droidish-m2__0.6", "job folder")}


def test_job_label_skips_containers_and_timestamps_only():
    assert job_label(Path("/x/agentx-model-a__0.40/jobs/2026-11-20__10-00-00")) == "agentx-model-a__0.40"
    assert job_label(Path("/x/runs/nightly-opus")) == "nightly-opus"  # a named job folder names itself


def test_job_counts_new_names_and_the_old_ones_read_as_them():
    new, problem = read_job(JOB_A, "a")
    assert problem is None and new is not None
    assert (new.n_completed_trials, new.n_running_trials, new.n_pending_trials, new.n_retries) == (2, 1, 1, 1)
    assert new.stats_names == "0.6.2+" and new.unfinished
    old, problem = read_job(JOB_B)
    assert problem is None and old is not None
    assert (old.n_completed_trials, old.n_errored_trials, old.n_pending_trials) == (2, 0, 0)  # n_trials, n_errors
    assert old.n_running_trials is None and old.stats_names == "before 0.6.2" and not old.unfinished


def _job_file(tmp_path: Path, body: object) -> Path:
    job = tmp_path / "job"
    job.mkdir()
    (job / "result.json").write_text(body if isinstance(body, str) else json.dumps(body))
    return job


def test_job_counts_under_status_and_pending_derived_as_harbor_does(tmp_path):
    job = _job_file(
        tmp_path,
        {"n_total_trials": 10, "stats": {"n_completed_trials": 4}, "status": {"n_running_trials": 2, "n_retries": 3}},
    )
    got, problem = read_job(job)
    assert problem is None and got is not None
    assert (got.n_completed_trials, got.n_running_trials, got.n_pending_trials, got.n_retries) == (4, 2, 4, 3)


@pytest.mark.parametrize(
    "body, says",
    [
        ('{"stats": {"n_completed_trials": 2', "JSON"),
        ({"stats": {"n_completed_trials": "many"}}, "n_completed_trials"),
        ({"stats": ["n_trials"]}, "stats"),
        ({"schema_version": 7, "stats": {}}, "schema version 7"),
    ],
)
def test_a_broken_job_file_is_one_problem_naming_it(tmp_path, body, says):
    job = _job_file(tmp_path, body)
    got, problem = read_job(job)
    assert got is None and problem is not None
    assert problem.path == str(job / "result.json") and says in problem.message and not problem.lost_trial
