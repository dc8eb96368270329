"""What the terminal tests look for in printed text: ids split across lines or cut short."""

from __future__ import annotations

import re

TOKEN = re.compile(r"[A-Za-z0-9-]+")


def report_ids(report: dict) -> set[str]:
    """The ids a reader copies out of a run's output: its run id, short version ids, rule ids, proposal ids."""
    ids = {report["run_id"]}
    for v in report.get("versions") or []:
        ids.add(v["version"][:12])
        ids |= {f["rule"] for f in v.get("findings") or [] if f.get("severity") != "info"}
    ids |= {p["proposal_id"] for p in report.get("proposals") or []}
    return ids


def broken_ids(text: str, ids: set[str], must_show: set[str] | None = None, names: set[str] = frozenset()) -> list[str]:
    """Problems, [] when none: an id missing whole from `text` (of `must_show`), a piece of an id standing
    alone (a table folded it: "exploit-rew" / "ard-tamper"), or an ellipsis (a table cut it short). `names`:
    other names the text may hold whole (a fixer called "network-fetch" is no piece of exploit-network-fetch)."""
    problems = [
        f"{i!r} never printed whole" for i in sorted(must_show if must_show is not None else ids) if i not in text
    ]
    if "…" in text:
        problems.append("an ellipsis: something was cut short")
    for token in set(TOKEN.findall(text)):
        if token in ids or token in names or len(token) < 3 or token.isalpha():
            continue  # a whole id, or an ordinary word ("reward" is a prefix of a rule id, and a word)
        for i in ids:
            if token != i and (i.startswith(token) or i.endswith(token)) and token not in i.split("-"):
                problems.append(f"{token!r} is a piece of {i!r}")
    return problems
