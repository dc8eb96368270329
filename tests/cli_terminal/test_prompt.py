"""The approval prompt's parts without a terminal: the live display is stopped while it asks, and the
question and the proposal print as plain text ("[a/r/e]" and a rationale's brackets are not rich markup).
The whole thing in a real pseudo-terminal is test_approval_tty.py (Docker, tmux)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.progress import Progress

from envqa.app.approval_prompt import make_ask
from envqa.app.runner import ProgressView

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

PAYLOAD = {
    "env_name": "always-pass",
    "version": "f95b6a8494533c18",
    "diff": "--- a/tests/test.sh\n+++ b/tests/test.sh\n",
    "proposal": {
        "proposal_id": "p-afe1c52868b6",
        "author": "fixer:nop-passes",
        "addresses": ["nop-passes"],
        "rationale": 'the check [ "$x" = 1 ] now decides the reward [bold]',
        "expected_effect": [],
    },
    "gate": {"passed": True, "checks": [{"name": "lint", "passed": True, "detail": "silent [static]"}]},
}


def test_the_live_display_is_stopped_while_asking_and_started_again():
    seen = []
    with Progress(console=Console(file=io.StringIO(), force_terminal=True, width=100)) as progress:
        view = ProgressView(progress)
        progress.add_task("trials", total=3)

        def ask(payload):
            seen.append(progress.live.is_started)
            return {"action": "approve"}

        assert progress.live.is_started
        assert view.pausing(ask)(PAYLOAD) == {"action": "approve"}
        assert seen == [False] and progress.live.is_started


def test_the_question_prints_literally_and_r_asks_for_a_reason(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr("sys.stdin", io.StringIO("x\nr\nnot this release\n"))
    answer = make_ask(Console(file=out, width=100, force_terminal=False))(PAYLOAD)
    assert answer["action"] == "reject" and answer["reason"] == "not this release"
    text = out.getvalue()
    assert text.count("approve / reject / edit? [a/r/e] ") == 2 and "reason: " in text, text
    assert 'the check [ "$x" = 1 ] now decides the reward [bold]' in text and "silent [static]" in text, text
