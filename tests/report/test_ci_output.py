"""`--format markdown|github` (app/ci_output.py) on a dataset of real run reports (tests/report/fake_dataset.py):
a PR comment with one row per task, folded evidence and diffs, and workflow annotations GitHub's runner parses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from envqa.app.ci_output import COMMENT_LIMIT, escape_data, escape_property, render
from envqa.app.dataset_models import TaskFinding
from envqa.app.dataset_rows import task_row

from .fake_dataset import BROKEN, fake_dataset, summarize

pytestmark = pytest.mark.fast


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    return fake_dataset(tmp_path_factory)


def table_rows(md: str) -> dict[str, list[str]]:
    """The summary table: task name -> its cells."""
    rows = {}
    for line in md.splitlines():
        m = re.match(r"^\| `([^`]+)` \|(.*)\|$", line)
        if m:
            rows[m[1]] = [c.strip() for c in re.split(r"(?<!\\)\|", m[2])]
    return rows


def test_markdown_has_one_row_per_task_with_verdict_top_finding_proposal_and_exit(ds):
    md = render(ds.report, "markdown")
    rows = table_rows(md)
    assert list(rows) == [r.name for r in ds.report.tasks]
    for r in ds.report.tasks:
        verdict, finding, _pass, proposal, exit_code = rows[r.name]
        assert verdict.endswith(r.verdict) and exit_code == str(r.exit_code)
    assert rows["always-pass"][1].startswith("`reward-written-unconditionally` (critical) +1") or rows["always-pass"][
        1
    ].startswith("`nop-passes` (critical) +1")
    assert rows["always-pass-waiting"][3] == "awaiting_approval"
    assert rows["always-pass-fixed"][3] == "adopted by auto"
    assert "not an environment" in rows[BROKEN][1]
    assert md.startswith(f"## qa: 5 task(s), exit {ds.report.exit_code}")
    assert "`nop-passes` (3)" in md  # rules fired, counted in tasks


def test_markdown_folds_evidence_and_the_proposal_diff(ds):
    md = render(ds.report, "markdown")
    waiting = md.split("### ")[[s.split(":")[0].strip() for s in md.split("### ")].index("⏸️ always-pass-waiting")]
    report = ds.run_reports["always-pass-waiting"]
    for f in report["findings"]:  # each finding, its evidence inside <details>
        assert f"**{f['rule']}**" in waiting
        block = waiting.split(f"**{f['rule']}**")[1].split("</details>")[0]
        assert "<details><summary>evidence</summary>" in block and f["evidence"][0].splitlines()[0] in block
    diff = report["awaiting_approval"]["proposal"]["diff"]
    folded = waiting.split("<details><summary>diff (")[1].split("</details>")[0]
    assert "```diff\n" + diff.rstrip() + "\n```" in folded
    assert "gate passed, awaiting_approval" in waiting
    assert "### ✅ clean-wordfreq" not in md  # a clean task with nothing to say has its table row only


def test_github_annotations_at_each_findings_location(ds, monkeypatch):
    monkeypatch.chdir(ds.root)  # the repository: tasks/<name>/...
    out = render(ds.report, "github")
    lines = out.splitlines()
    stop = next(i for i, ln in enumerate(lines) if ln.startswith("::stop-commands::"))
    annotations = lines[:stop]
    expected = []
    for r in ds.report.tasks:
        for f in r.findings:
            kind = {"critical": "error", "error": "error", "warning": "warning", "info": "notice"}[f.severity]
            where = f"file={r.path}/{f.file}" + (f",line={f.line}" if f.line else "")
            expected.append(f"::{kind} {where},")
    assert [a.split("title=")[0] for a in annotations if "title=qa " in a and "%3A" not in a] == expected
    assert (
        "::error file=tasks/always-pass/tests/test.sh,line=7,title=qa reward-written-unconditionally::"
        "the last reward test.sh writes is a success value" in out
    )
    assert any(a.startswith(f"::error file=tasks/{BROKEN},title=qa%3A {BROKEN} invalid::") for a in annotations)
    for path in {a.split("file=")[1].split(",")[0] for a in annotations}:  # every annotated file is in the repo
        assert (ds.root / path).exists(), path
    token = lines[stop].removeprefix("::stop-commands::")
    assert len(token) == 32 and lines[-1] == f"::{token}::"
    assert "\n".join(lines[stop + 1 : -1]) + "\n" == render(ds.report, "markdown")


def test_github_escaping_and_untrusted_evidence(ds, tmp_path):
    """%, CR and LF are escaped in the message; ':' and ',' too in properties. Evidence an agent wrote (a line
    that looks like a workflow command) is printed only inside the stop-commands block."""
    base = next(r for r in ds.report.tasks if r.name == "always-pass")
    evil = TaskFinding(
        rule="nop-passes",
        severity="warning",
        summary="100% broken\r\nsecond line",
        file="a:b,c.sh",
        line=3,
        evidence="::error file=x::injected\n::add-mask::secret",
    )
    row = base.model_copy(update={"findings": [evil], "path": "tasks/odd"})
    out = render(summarize("ds-x", ["tasks"], [row], 1.0), "github", root=tmp_path)
    first = out.splitlines()[0]
    assert (
        first == "::warning file=tasks/odd/a%3Ab%2Cc.sh,line=3,title=qa nop-passes::100%25 broken%0D%0Asecond line"
        " (qa run run-always-pass)"
    )
    lines = out.splitlines()
    stop = next(i for i, ln in enumerate(lines) if ln.startswith("::stop-commands::"))
    injected = [i for i, ln in enumerate(lines) if ln.strip().startswith(("::error file=x", "::add-mask"))]
    assert injected and all(stop < i < len(lines) - 1 for i in injected)
    assert escape_data("a%b\rc\nd") == "a%25b%0Dc%0Ad" and escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_absolute_task_paths_are_annotated_relative_to_the_repository(ds, tmp_path):
    base = next(r for r in ds.report.tasks if r.name == "always-pass")
    row = base.model_copy(update={"path": str(ds.root / "tasks" / "always-pass")})
    out = render(summarize("ds-abs", ["tasks"], [row], 1.0), "github", root=ds.root)
    assert out.startswith("::error file=tasks/always-pass/tests/test.sh")


def test_evidence_cannot_close_its_code_block_and_a_huge_dataset_fits_a_comment(ds):
    base = next(r for r in ds.report.tasks if r.name == "always-pass")
    sneaky = TaskFinding(rule="nop-passes", severity="error", summary="s", evidence="```\n</details>\n# heading\n````")
    md = render(summarize("ds-f", ["tasks"], [base.model_copy(update={"findings": [sneaky]})], 1.0), "markdown")
    block = md.split("<details><summary>evidence</summary>")[1]
    assert "  `````\n  ```\n  </details>\n  # heading\n  ````\n  `````" in block  # fenced by five backticks

    big = TaskFinding(rule="nop-passes", severity="error", summary="s", evidence="x" * 3000 + "\n" + "y\n" * 30)
    rows = [
        task_row(
            f"tasks/t{i:03d}", f"t{i:03d}", f"run-{i}", ds.run_reports["always-pass-waiting"], 1.0, None
        ).model_copy(update={"findings": [big] * 3})
        for i in range(120)
    ]
    md = render(summarize("ds-big", ["tasks"], rows, 1.0), "markdown")
    assert len(md) < COMMENT_LIMIT
    assert len(table_rows(md)) == 120  # every task keeps its row
    assert "left out to fit a comment" in md


def test_unknown_format_is_refused(ds):
    with pytest.raises(ValueError, match="markdown or github"):
        render(ds.report, "html")  # type: ignore[arg-type]


def test_repo_relative_path_helper_keeps_relative_paths(ds):
    from envqa.app.ci_output import repo_path

    assert repo_path("tasks/a", "tests/test.sh", Path("/elsewhere")) == "tasks/a/tests/test.sh"
    assert repo_path("./tasks/a", None, Path("/elsewhere")) == "tasks/a"
