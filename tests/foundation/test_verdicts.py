"""One verdict-to-exit map (core/verdicts.py): a run's command, a dataset run and `qa analyze` all end on it."""

from __future__ import annotations

import pytest

from envqa.app.dataset_models import TaskRow, dataset_exit_code
from envqa.core.verdicts import VERDICT_EXIT, Verdict, combined_exit, exit_code
from envqa.probes.cross_trial.report import dataset_exit

pytestmark = pytest.mark.fast


def test_every_verdict_has_its_documented_exit_code():
    assert {str(v): exit_code(v) for v in Verdict} == {
        "clean": 0,
        "findings": 1,
        "out_of_band": 1,
        "incomplete": 3,
        "awaiting_approval": 4,
        "invalid": 2,
    }
    assert set(VERDICT_EXIT) == set(Verdict)
    assert exit_code(None) == 3 and exit_code("a-verdict-of-a-later-release") == 3


@pytest.mark.parametrize(
    ("codes", "want"),
    [
        ([], 0),
        ([0, 0], 0),
        ([0, 3], 3),
        ([3, 4, 0], 4),
        ([4, 1], 1),
        ([3, 2], 1),  # a task that could not be loaded is a finding about the dataset
    ],
)
def test_many_codes_combine_in_one_order(codes, want):
    assert combined_exit(codes) == want


def _row(verdict: str | None, code: int | None = None) -> TaskRow:
    return TaskRow(path="/t", name="t", verdict=verdict, exit_code=exit_code(verdict) if code is None else code)


@pytest.mark.parametrize(
    ("verdicts", "want"),
    [
        (["clean", "clean"], 0),
        (["clean", "incomplete"], 3),
        (["clean", None], 3),
        (["incomplete", "awaiting_approval"], 4),
        (["awaiting_approval", "out_of_band"], 1),
        (["clean", "invalid"], 1),
    ],
)
def test_a_dataset_and_qa_analyze_read_the_same_map(verdicts, want):
    assert dataset_exit_code([_row(v) for v in verdicts]) == want
    if "awaiting_approval" not in verdicts and "invalid" not in verdicts and None not in verdicts:
        assert dataset_exit([{"verdict": v} for v in verdicts]) == want  # cross-trial triages: no approval there
