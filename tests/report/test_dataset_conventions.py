"""A rule that warns on most of a dataset's tasks is said once, for the dataset (issue 52 item 3, part 2).

"Most" is more than half of the tasks and at least DATASET_CONVENTION_MIN_TASKS of them. The rule's warnings leave
the rows (text, markdown, HTML and JSON rows), the dataset names it once with the count and every task's name; an
error of the same rule stays on its task, the verdicts and exit codes do not move, and `summary.by_rule` still
counts the rule's tasks.
"""

from __future__ import annotations

import pytest
from rich.console import Console

from envqa.app.ci_output import render
from envqa.app.cli.run_dataset import print_summary
from envqa.app.dataset import build_report
from envqa.app.dataset_models import TaskFinding, TaskRow
from envqa.app.report_html.dataset import render_dataset_report
from envqa.core.defaults import DATASET_CONVENTION_MIN_TASKS
from qa_testkit import open_report

PIN = "unpinned-python-dependency"


def row(name: str, *findings: tuple[str, str]) -> TaskRow:
    return TaskRow(
        path=f"tasks/{name}",
        name=name,
        verdict="findings" if findings else "clean",
        exit_code=1 if findings else 0,
        findings=[
            TaskFinding(
                rule=r, severity=s, label="brittleness", summary=f"{r} in {name}", file="environment/Dockerfile"
            )
            for r, s in findings
        ],
    )


def dataset(pins: int, clean: int) -> list[TaskRow]:
    rows = [row(f"t{i}", (PIN, "warning"), ("oracle-fails", "error")) for i in range(pins - 1)]
    return [*rows, row("t-err", (PIN, "error"), (PIN, "warning"))] + [row(f"c{i}") for i in range(clean)]


@pytest.mark.fast
def test_a_rule_on_most_tasks_is_said_once_and_leaves_the_rows():
    rows = dataset(pins=6, clean=2)
    report = build_report("ds-conv", ["tasks"], rows, None)
    (conv,) = report.conventions
    assert (conv.rule, conv.tasks, conv.of) == (PIN, 6, 8)
    assert conv.summary == f"{PIN} on 6 of 8 tasks: a convention of this dataset"
    assert conv.task_names == [f"t{i}" for i in range(5)] + ["t-err"]  # --json says which tasks
    assert conv.example is not None and conv.example.summary.startswith("t0: ")
    left = [(r.name, f.rule, f.severity) for r in report.tasks for f in r.findings if f.rule == PIN]
    assert left == [("t-err", PIN, "error")]  # an error of the rule stays on its task
    assert all(any(f.rule == "oracle-fails" for f in r.findings) for r in report.tasks[:5])
    assert [r.exit_code for r in report.tasks] == [r.exit_code for r in rows] and report.exit_code == 1
    assert report.summary.by_rule[PIN] == 6
    assert PIN in report.model_dump(mode="json")["conventions"][0]["rule"]

    md = render(report, "markdown")
    assert "**Conventions of this dataset**" in md and f"{PIN} on 6 of 8 tasks" in md
    assert f"{PIN} in t1" not in md  # not repeated in the tasks' details
    console = Console(record=True, width=200)
    print_summary(report, console)
    assert f"{PIN} on 6 of 8 tasks: a convention of this dataset" in console.export_text()


@pytest.mark.fast
@pytest.mark.parametrize(
    "pins,clean",
    [
        (DATASET_CONVENTION_MIN_TASKS - 1, 0),  # every task, but too few to be a convention
        (5, 5),  # exactly half is not most
    ],
)
def test_below_most_every_task_keeps_its_warning(pins, clean):
    report = build_report("ds-few", ["tasks"], dataset(pins, clean), None)
    assert report.conventions == []
    assert sum(f.rule == PIN and f.severity == "warning" for r in report.tasks for f in r.findings) == pins


def test_the_html_page_says_the_convention_once(page, tmp_path):
    """The dataset page in headless Chromium: the convention above the rule counts, the rows without its warning."""
    report = build_report("ds-conv", ["tasks"], dataset(pins=6, clean=2), None)
    path = tmp_path / "report.html"
    path.write_text(render_dataset_report(report, path, tmp_path))
    open_report(page, path)  # the page fixture records console errors and uncaught exceptions in page.errors
    assert f"{PIN} on 6 of 8 tasks: a convention of this dataset" in page.inner_text("#rules p.convention")
    assert page.locator(f"#rule-counts tr[data-rule='{PIN}'] td.num").inner_text() == "6"
    assert page.errors == []
