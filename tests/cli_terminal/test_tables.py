"""Tables in a CI log (piped, COLUMNS=80 or 50) never split an id, and the end of a run tells its story in order.

A two-version run (always-pass: found, fixed by the reward fixer, gated, auto-approved, clean) and a run
waiting for approval are made on the fake sandbox backend in this process (tests/fake_tasks.py), into a
SQLite QA_HOME; `qa show`, `qa runs` and `qa rules` are then the real CLI as subprocesses, output piped.
The end of `qa run` is app/report.print_report on a console that is not a terminal, as `qa run | cat` has.
"""

from __future__ import annotations

import io
import os
import shutil

import pytest
from rich.console import Console

from envqa.app.report import print_report
from envqa.app.runner import execute_run
from envqa.core.config import load_config
from envqa.core.registry import RULES
from qa_testkit import EXAMPLES, run_qa
from tests.fake_tasks import always_pass_backend, use_backend

from .helpers import broken_ids, report_ids

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

DONE, WAITING = "run-98644d4ff4", "run-7c1e09b2aa"  # run ids shaped like the generated ones


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(env for `qa`, the two-version report, the waiting report), both runs in one SQLite QA_HOME."""
    base = tmp_path_factory.mktemp("terminal")
    home = base / "qa-home"
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("QA_STORE_URL", raising=False)  # this module's store is SQLite under every tier
        reports = []
        for run_id, approval in ((DONE, "auto"), (WAITING, "wait")):
            backend = always_pass_backend()
            config = load_config(
                None,
                {
                    "home": str(home),
                    "sandbox.backend": use_backend(backend),
                    "scheduler.mode": "local",
                    "loop.max_iterations": 3,
                },
            )
            env_dir = shutil.copytree(EXAMPLES / "always-pass", base / run_id / "always-pass")
            reports.append(execute_run(env_dir, config, run_id, quiet=True, approval_mode=approval))
    done, waiting = reports
    assert len(done["versions"]) == 2 and done["verdict"] == "clean"
    assert waiting["awaiting_approval"] and waiting["verdict"] == "awaiting_approval"
    env = {k: v for k, v in os.environ.items() if k not in ("QA_STORE_URL", "REDIS_URL")}
    return dict(env, QA_HOME=str(home)), done, waiting


def _piped(args: list[str], env: dict, columns: int) -> str:
    res = run_qa(args, {**env, "COLUMNS": str(columns)}, timeout=60)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


@pytest.mark.parametrize("columns", [80, 50])
def test_qa_show_keeps_every_id_whole(runs, columns):
    env, done, _ = runs
    out = _piped(["show", DONE], env, columns)
    assert not broken_ids(out, report_ids(done)), (broken_ids(out, report_ids(done)), out)
    assert "findings per version" in out and "evidence:" in out, out
    if columns == 80:
        assert max(len(line.rstrip()) for line in out.splitlines() if not line.startswith("report:")) <= 80, out


@pytest.mark.parametrize("columns", [80, 50])
def test_qa_runs_keeps_run_and_proposal_ids_whole(runs, columns):
    env, done, waiting = runs
    out = _piped(["runs"], env, columns)
    pending = waiting["awaiting_approval"]["proposal"]["proposal_id"]
    ids = {DONE, WAITING, pending}
    assert not broken_ids(out, ids), (broken_ids(out, ids), out)


@pytest.mark.parametrize("columns", [80, 50])
def test_qa_rules_keeps_every_rule_id_whole(runs, columns):
    env, _, _ = runs
    out = _piped(["rules"], env, columns)
    ids, names = (
        {r.id for r in RULES},
        {r.fixer for r in RULES if r.fixer} | {r.probe for r in RULES} | {r.subtype for r in RULES if r.subtype},
    )
    assert not broken_ids(out, ids, names=names), (broken_ids(out, ids, names=names), out)


def _end_of_run(report: dict, columns: int, verbose: bool = False) -> str:
    out = io.StringIO()
    print_report(report, Console(file=out, width=columns, force_terminal=False), verbose=verbose)
    return out.getvalue()


@pytest.mark.parametrize("columns", [80, 50])
def test_the_end_of_a_run_keeps_ids_whole_and_tells_the_story_in_order(runs, columns):
    _, done, _ = runs
    out = _end_of_run(done, columns)
    assert not broken_ids(out, report_ids(done)), (broken_ids(out, report_ids(done)), out)
    first, second = (v["version"][:12] for v in done["versions"])
    [proposal] = done["proposals"]
    story = [
        f"version {first} (loaded)",
        "nop-passes",
        f"version {second} (revision)",
        "no findings",
        f"proposed: {proposal['proposal_id']} by fixer:",
        "gate: passed",
        "approval: approved by auto",
        "coverage: ",
        f"run {DONE}: verdict clean",
        "report: ",
    ]
    flat = " ".join(out.split())  # a long line wraps at the width
    at = [flat.find(s) for s in story]
    assert -1 not in at and at == sorted(at), (list(zip(story, at)), out)
    assert "why" not in out.split("coverage: ")[1].splitlines()[0] or "-v" in out  # one line, not the table
    assert "┃ probe" not in out and "- validate" not in out, out


def test_the_coverage_table_and_every_trial_only_with_verbose(runs):
    _, done, _ = runs
    quiet, verbose = _end_of_run(done, 120), _end_of_run(done, 120, verbose=True)
    assert "coverage: " in quiet and "skipped" in quiet and "no solver model configured" not in quiet, quiet
    assert "no solver model configured" in verbose and "trials of " in verbose, verbose
    assert "trials of " not in quiet


def test_a_waiting_run_ends_with_its_proposal_and_how_to_decide(runs):
    _, _, waiting = runs
    out = _end_of_run(waiting, 80)
    pid = waiting["awaiting_approval"]["proposal"]["proposal_id"]
    assert not broken_ids(out, report_ids(waiting)), (broken_ids(out, report_ids(waiting)), out)
    order = [
        "nop-passes",
        f"proposed: {pid}",
        "gate: passed",
        "approval: awaiting a decision",
        f"run {WAITING}: verdict awaiting_approval",
        f"qa approve {WAITING}",
    ]
    flat = " ".join(out.split())
    at = [flat.find(s) for s in order]
    assert -1 not in at and at == sorted(at), (list(zip(order, at)), out)
