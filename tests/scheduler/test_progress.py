"""The trials bar shows its total: every executor announces a batch's size before its results arrive."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.progress import Progress

from envqa.app.runner import ProgressView
from envqa.core.models import Outcome, TrialResult, TrialSpec

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def test_the_trials_bar_counts_up_to_the_announced_total():
    out = io.StringIO()
    with Progress(console=Console(file=out, width=120)) as progress:
        view = ProgressView(progress)
        specs = [TrialSpec(run_id="r", env_version="v", agent="oracle", index=i) for i in range(3)]
        view("trials_queued", count=2)
        view("trials_queued", count=1)  # a second batch (an adaptive sweep's next round) adds to it
        for spec in specs:
            view("trial_start", spec=spec)
            view(
                "trial_done",
                spec=spec,
                result=TrialResult(
                    trial_id=spec.trial_id,
                    run_id="r",
                    env_version="v",
                    agent="oracle",
                    outcome=Outcome.PASS,
                    reward=1.0,
                ),
            )
        view("stalled", queue="sandbox", seconds=12.0, jobs=2)
        [task] = [t for t in progress.tasks if t.id == view.trial_task]
        assert (task.completed, task.total) == (3, 3)
        view(
            "trial_done",
            spec=specs[0],
            result=TrialResult(
                trial_id="x", run_id="r", env_version="v", agent="oracle", outcome=Outcome.FAIL, reward=0.0
            ),
        )
        assert (task.completed, task.total) == (4, 4)  # a result nobody announced never shows 4/3
        assert "no live worker for 12s" in task.description
