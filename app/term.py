"""Tables for a person's terminal and for a CI log (80 columns, not a TTY): ids are never split.

An id (rule, run, version, proposal, model) is what a reader copies and greps for, so its column keeps the
width of its longest value (`no_wrap` + `min_width`) and the other columns wrap (a word longer than its
column folds). When the ids alone leave the other columns too little room (below about 60 columns, or a
table with wide ids), the same rows print as a list instead: the ids on the row's first line, each other
field indented under it. Titles and cells are rich markup: callers escape text that is not theirs.
"""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

NARROW = 60  # below this many columns every table is a list
MIN_TEXT = 6  # the least a wrapping column may get before the table becomes a list
WORD = 32  # a wrapping column is at least as wide as its longest word up to this (rule ids in a list stay whole)


def plain_len(cell: str) -> int:
    return max((len(line) for line in Text.from_markup(cell).plain.splitlines()), default=0)


def word_len(cell: str) -> int:
    return max((len(w) for w in Text.from_markup(cell).plain.split()), default=0)


def widths(cols: list[str], rows: list[list[str]], ids: tuple[str, ...], min_text: int = MIN_TEXT) -> list[int]:
    """Each column's least width: an id column its longest line, another its longest word (capped at WORD)."""
    out = []
    for i, col in enumerate(cols):
        if col in ids:
            out.append(max([len(col), *(plain_len(r[i]) for r in rows)]))
        else:
            out.append(max(min_text, min(WORD, max([0, *(word_len(r[i]) for r in rows)]))))  # a header may wrap
    return out


def fits(width: int, cols: list[str], rows: list[list[str]], ids: tuple[str, ...], min_text: int = MIN_TEXT) -> bool:
    """Whether a boxed table can give every column its least width (see `widths`)."""
    # one border per column plus one, and a space of padding either side of each cell
    return width >= NARROW and 3 * len(cols) + 1 + sum(widths(cols, rows, ids, min_text)) <= width


def id_table(
    title: str, cols: list[str], rows: list[list[str]], ids: tuple[str, ...], width: int, min_text: int = MIN_TEXT
) -> RenderableType:
    """A table across `width` columns (ids whole, the rest wrap), or the list layout when it would not fit."""
    if not fits(width, cols, rows, ids, min_text):
        return id_list(title, cols, rows, ids)
    table = Table(title=title, expand=True)
    # the room beyond every column's content goes to the column with the most text (not to "check" or "pass")
    texts = [i for i, c in enumerate(cols) if c not in ids]
    widest = max(texts, key=lambda i: sum(len(r[i]) for r in rows), default=None)
    for i, (col, least) in enumerate(zip(cols, widths(cols, rows, ids))):
        if col in ids:
            table.add_column(col, no_wrap=True, min_width=least)
        else:
            table.add_column(col, overflow="fold", min_width=least, ratio=1 if i == widest else None)
    for r in rows:
        table.add_row(*r)
    return table


def id_list(title: str, cols: list[str], rows: list[list[str]], ids: tuple[str, ...]) -> RenderableType:
    """Each row's key (its one-line ids among the first two columns) on one line, never wrapped (a terminal
    may wrap it, nothing cuts it), then the other fields as `column: value` lines indented under it."""
    parts: list[RenderableType] = [Text.from_markup(title, style="italic")]
    for r in rows:
        one_line = [i for i, c in enumerate(cols[:2]) if c in ids and r[i] and "\n" not in r[i]]  # the row's key
        head = Text.from_markup("- " + "  ".join(r[i] for i in one_line))
        head.no_wrap, head.overflow = True, "ignore"
        parts.append(head)
        fields = Table.grid(padding=(0, 1))
        fields.add_column(no_wrap=True, style="dim")
        fields.add_column(overflow="fold")
        for i, col in enumerate(cols):
            if i not in one_line and r[i]:
                fields.add_row(f"    {col}:", r[i])
        parts.append(fields)
    return Group(*parts)


def print_rows(
    console: Console, title: str, cols: list[str], rows: list[list[str]], ids: tuple[str, ...], min_text: int = MIN_TEXT
) -> None:
    console.print(id_table(title, cols, rows, ids, console.width, min_text))
