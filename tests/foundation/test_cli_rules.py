"""`qa rules` (the real CLI, as a subprocess) and the docs' rule tables (docs/reference/rules.md, the stage, example
and fixer tables of README.md and docs/), both read from the registry."""

from __future__ import annotations

import json
import re

import pytest

from envqa.app.cli.rules import MARK_BEGIN, MARK_END, catalogue_markdown
from envqa.core.registry import RULE_INFO, RULES
from qa_testkit import EXAMPLES, REPO, run_qa

FIELDS = {"id", "label", "subtype", "severity", "probe", "fixer", "description"}
pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def test_qa_rules_json_lists_every_rule_with_its_fields(qa_env):
    res = run_qa(["rules", "--json"], qa_env, timeout=60)
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert len(rows) >= 40 and [r["id"] for r in rows] == [r.id for r in RULES]
    for row in rows:
        assert set(row) >= FIELDS and row["label"] and row["severity"] and row["description"], row
    expected = set()
    for path in EXAMPLES.glob("*/qa-expected.json"):
        data = json.loads(path.read_text())
        expected |= set(data.get("rules", [])) | set(data.get("inconclusive", []))
    assert expected <= {r["id"] for r in rows}, expected - {r["id"] for r in rows}


@pytest.mark.parametrize("columns", [100, 160])
def test_qa_rules_prints_a_table_across_the_terminal_with_whole_ids(qa_env, columns):
    res = run_qa(["rules"], {**qa_env, "COLUMNS": str(columns)}, timeout=60)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines) == columns  # the table takes the terminal's full width
    for rule in RULES:  # every id whole, at the start of its row (never wrapped or shortened)
        assert any(re.match(rf"^ ?{re.escape(rule.id)}\s", line) for line in lines), rule.id


def test_the_docs_catalogue_is_the_registrys():
    text = (REPO / "docs" / "reference" / "rules.md").read_text()
    assert MARK_BEGIN in text and MARK_END in text
    block = text.split(MARK_BEGIN, 1)[1].split(MARK_END, 1)[0].strip("\n") + "\n"
    assert block == catalogue_markdown(), "docs/reference/rules.md's rule catalogue is stale: run make docs"
    listed = set(re.findall(r"^\| `([a-z0-9-]+)` \|", block, re.M))
    assert listed == set(RULE_INFO)


def _rule_columns(text: str) -> list[tuple[str, str]]:
    """(table header, cell) for every markdown table column whose header names rules."""
    out, header, cols = [], None, []
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if header is None:
            header, cols = line, [i for i, c in enumerate(cells) if "rules" in c.lower()]
        elif not set(line) <= set("|-: "):
            out += [(header, cells[i]) for i in cols if i < len(cells)]
    return out


def test_every_rule_the_docs_tables_name_is_registered():
    """README.md and every page under docs/ (the stage tables, the examples, the fixers)."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    cells = [cell for page in pages for cell in _rule_columns(page.read_text())]
    named = {rid for _h, cell in cells for rid in re.findall(r"`([a-z0-9]+(?:-[a-z0-9]+)+)`", cell)}
    assert len(named) >= 25, named  # the stage, examples and fixers tables are read (not vacuous)
    assert named <= set(RULE_INFO), named - set(RULE_INFO)
