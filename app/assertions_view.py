"""`qa lint TASK --assertions`: the task's assertion model (core/task_model/assertions.py) as JSON or a table, so a
user (and a rule's author) sees what each check observes, what it compares with and through which lines."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envqa.core.task_model.assertions import Assertion, AssertionModel, Expected, Observed


def _observed(o: Observed) -> str:
    what = o.path or " ".join(o.command) or o.detail
    extra = [f"flags {' '.join(o.flags)}"] if o.flags else []
    extra += [f"keys {', '.join(o.keys)}"] if o.keys else []
    return " ".join([o.kind, what, *(f"({x})" for x in extra)]).strip()


def _expected(e: Expected) -> str:
    parts = [e.kind if not e.pattern_kind else f"{e.kind}/{e.pattern_kind}"]
    if e.value is not None:
        parts.append(repr(e.value)[:60])
    if e.values:
        parts.append(f"{len(e.values)} values: " + ", ".join(repr(v)[:20] for v in e.values[:3]))
    if e.path:
        parts.append(e.path + (f" [{e.origin}]" if e.origin else ""))
    if e.inputs:
        parts.append("from " + ", ".join(e.inputs[:4]))
    if e.tolerance:
        parts.append(f"tol {e.tolerance}")
    return " ".join(parts)


def _hops(a: Assertion) -> str:
    return "\n".join(
        f"{h.kind} {h.name + ' ' if h.name else ''}{h.file if h.file != a.file else ''}:{h.line}" for h in a.hops[1:]
    )


def print_assertions(model: AssertionModel, console: Console, title: str) -> None:
    table = Table(title=escape(title), show_lines=True)
    for col in ("where", "op", "observes", "expected", "cases", "hops"):
        table.add_column(col, overflow="fold")
    for a in model.assertions:
        op = ("not " if a.negated and a.op not in ("!=", "not in", "is not") else "") + a.op
        cases = "computed" if a.cases == -1 else str(a.cases)
        table.add_row(
            *(escape(x) for x in (a.where, op, _observed(a.observes), _expected(a.expected), cases, _hops(a)))
        )
    console.print(table)
    for why in model.unread:
        console.print(f"not read: {escape(why)}")
    console.print(f"{len(model.assertions)} checks", highlight=False)
