"""`qa rules`: the rule catalogue, from the rule registry (core/registry/rules.py).

A table on a terminal (every column in full width, rule ids never split across lines; a list below 100
columns, where a table would leave the description a word per line), `--json` as a list
of `{id, label, subtype, severity, probe, fixer, description}` (plus the remedy and the kind), and
`--markdown` as the table docs/reference/rules.md carries (`make docs` writes it there, and tests/test_docs.py
fails when that copy is not this one, so the page cannot drift from the registry).
"""

from __future__ import annotations

import json
import sys

import typer
from rich import box
from rich.console import Console, Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from envqa.core.registry import PROBE_INFO, RULES, Rule

MARK_BEGIN = "<!-- qa rules --markdown: begin -->"
MARK_END = "<!-- qa rules --markdown: end -->"
WIDE = 150  # terminal columns from which every field gets its own column
TABLE = 100  # below this, a list: a 4-column table would leave the description a word per line


def catalogue() -> list[dict]:
    """The `--json` rows, in registry order (grouped by the stage that produces them)."""
    return [r.public() for r in RULES]


def rules_table(rules: tuple[Rule, ...] = RULES, width: int = 160) -> Table:
    """The table across the terminal's full `width`: the rule id never wraps or shortens (it is what users
    grep for) and the description takes what is left. Below WIDE columns, the subtype goes under the label
    and the probe and fixer into the description, so the description keeps room to be read."""
    table = Table(title=f"qa rules: {len(rules)} rules", box=box.SIMPLE_HEAD, pad_edge=False, expand=True)
    table.add_column("rule", no_wrap=True, min_width=max(len(r.id) for r in rules), style="bold")
    wide = width >= WIDE
    if wide:
        for name in ("label", "subtype", "severity", "probe", "fixer"):
            table.add_column(name, no_wrap=True)
    else:
        table.add_column("label / subtype", no_wrap=True)
        table.add_column("severity", no_wrap=True)
    table.add_column("description", ratio=1)
    for r in rules:
        what = r.summary + (" (inconclusive: exit 3)" if r.kind == "inconclusive" else "")
        if wide:
            table.add_row(r.id, r.label, r.subtype or "-", r.severity.value, r.probe, r.fixer or "-", what)
        else:
            table.add_row(
                r.id,
                r.label + (f"\n{r.subtype}" if r.subtype else ""),
                r.severity.value,
                f"{what} [probe: {r.probe}" + (f"; fixer: {r.fixer}]" if r.fixer else "]"),
            )
    return table


def rules_list(rules: tuple[Rule, ...] = RULES) -> Group:
    """The catalogue for a narrow terminal or an 80-column CI log: each rule id alone on its line (never
    wrapped: a terminal may wrap it, nothing cuts it), its label and severity and its description under it."""
    parts: list = [Text(f"qa rules: {len(rules)} rules", style="italic")]
    for r in rules:
        head = Text(r.id, style="bold", no_wrap=True, overflow="ignore")
        what = r.summary + (" (inconclusive: exit 3)" if r.kind == "inconclusive" else "")
        label = r.label + (f" / {r.subtype}" if r.subtype else "")
        parts += [
            head,
            Padding(
                Text(
                    f"{r.severity.value}, {label}\n{what} [probe: {r.probe}"
                    + (f"; fixer: {r.fixer}]" if r.fixer else "]")
                ),
                (0, 0, 0, 4),
            ),
        ]
    return Group(*parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def catalogue_markdown(rules: tuple[Rule, ...] = RULES) -> str:
    """The rule catalogue of docs/reference/rules.md (between MARK_BEGIN and MARK_END there)."""
    lines = [
        "| rule | label / subtype | severity | stage (probe) | fixer | what it means |",
        "|---|---|---|---|---|---|",
    ]
    for r in rules:
        label = f"{r.label} / {r.subtype}" if r.subtype else r.label
        stage = PROBE_INFO[r.probe].stage
        stage = stage if stage == r.probe else f"{stage} (`{r.probe}`)"
        what = _cell(r.summary) + (" (an inconclusive outcome, not a finding)" if r.kind == "inconclusive" else "")
        lines.append(f"| `{r.id}` | {label} | {r.severity.value} | {stage} | {r.fixer or '—'} | {what} |")
    return "\n".join(lines) + "\n"


def rules(
    as_json: bool = typer.Option(False, "--json", help="the catalogue as a JSON list on stdout"),
    markdown: bool = typer.Option(False, "--markdown", help="the catalogue as docs/reference/rules.md's table"),
) -> None:
    """Every rule qa can report: its label, severity, the probe that finds it, its fixer."""
    if as_json:
        sys.stdout.write(json.dumps(catalogue(), indent=1) + "\n")
    elif markdown:
        sys.stdout.write(catalogue_markdown())
    else:
        console = Console()
        console.print(rules_table(width=console.width) if console.width >= TABLE else rules_list())
