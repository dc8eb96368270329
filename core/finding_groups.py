"""One finding per rule and file: the repeats of a rule in one file become one finding that lists every place.

Ten unpinned pip installs in one Dockerfile are one thing to change, not ten warnings (issue 52 item 3). Repeats
are grouped by (rule, file, severity, subtype): findings of one rule at different severities or causes stay apart,
since they ask for different work. A group keeps its first finding's `location`, joins its distinct fixes, lists every place in
`locations` (in the order found) and every line in `evidence` (a place without a line adds its own message there:
it is what tells two unknown keys of task.toml apart), unites the trial ids, and its message is the first finding's
with the count appended: " (the first of N places in FILE; the evidence lists each)". A finding without a location
is in no file and is never grouped; a finding alone in its file is returned unchanged (`locations` stays empty).

Grouping is idempotent and re-groups groups: the suffix is a function of `locations`, so a group's own message is
recovered exactly, and a group merged with a later finding of the same key lists both's places. That is what lets
the run graph's reducer (graphs/loop_state.py) group the whole list on every update, and `qa lint`
(probes/static/task_schema.py lint_findings) group once, so every output reads the same grouped list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from envqa.core.models import STORED, Finding

GroupKey = tuple[str, str, str, str | None]
T = TypeVar("T")


def file_of(location: str) -> str:
    """`tests/test.sh:12` -> `tests/test.sh`; a location without a line is its own file."""
    head, sep, tail = location.rpartition(":")
    return head if sep and tail.isdigit() else location


def places(f: Finding) -> list[str]:
    return list(f.locations) if f.locations else ([f.location] if f.location else [])


def suffix(locations: list[str]) -> str:
    if len(locations) < 2:
        return ""
    return f" (the first of {len(locations)} places in {file_of(locations[0])}; the evidence lists each)"


def own_message(f: Finding) -> str:
    """The message of the group's first finding, before the count was appended."""
    return f.message.removesuffix(suffix(places(f)))


def _at(location: str | None, message: str) -> str:
    return message if message.startswith(f"{location}:") else f"{location}: {message}"


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def merge(group: list[Finding]) -> Finding:
    """One finding for repeats of one (rule, file, severity, subtype). A member that adds no place and no line
    (the same finding sent twice) is not counted again."""
    first = group[0]
    where, evidence, kept = places(first), list(first.evidence), [first]
    for f in group[1:]:
        seen = set(evidence)
        if not f.locations and f.location in where and all(e in seen for e in f.evidence):
            continue
        where += places(f)
        # a place without a line is told apart only by its message (which key, which service): it joins the evidence
        said = [_at(f.location, own_message(f))] if f.location == file_of(f.location or "") else []
        evidence += [e for e in said + f.evidence if e not in seen]
        kept.append(f)
    if len(kept) == 1:
        return first
    fixes = _unique(f.fix for f in kept if f.fix)
    return first.model_copy(
        update={
            "message": own_message(first) + suffix(where),
            "location": where[0],
            "locations": where,
            "evidence": evidence,
            "trial_ids": sorted({t for f in kept for t in f.trial_ids}),
            "fix": "; ".join(fixes) if fixes else None,
        }
    )


def key_of(rule: str, location: str | None, severity: str, subtype: str | None) -> GroupKey | None:
    """What repeats share; None for a finding in no file (never grouped)."""
    return (rule, file_of(location), severity, subtype) if location else None


def _grouped(items: list[T], key: Callable[[T], GroupKey | None]) -> list[list[T]]:
    """The items in groups of one key, each group where its first item was; an item of no key is alone."""
    groups: dict[GroupKey, list[T]] = {}
    out: list[list[T]] = []
    for item in items:
        k = key(item)
        if k is None:
            out.append([item])
        elif k in groups:
            groups[k].append(item)
        else:
            groups[k] = [item]
            out.append(groups[k])
    return out


def group_repeats(findings: list[Finding]) -> list[Finding]:
    """The findings with each (rule, file, severity, subtype)'s repeats merged, at the first one's position."""
    return [merge(g) for g in _grouped(findings, lambda f: key_of(f.rule, f.location, str(f.severity), f.subtype))]


def _dict_key(d: Any) -> GroupKey | None:
    if not isinstance(d, dict) or not isinstance(d.get("rule"), str):
        return None
    return key_of(d["rule"], d.get("location"), str(d.get("severity")), d.get("subtype"))


def group_repeat_dicts(items: list[Any]) -> list[Any]:
    """group_repeats over a run graph's state list (findings as dicts): a finding with no repeat is left as it
    is, byte for byte, and what is not a finding (or not readable as one) is never grouped."""
    out: list[Any] = []
    for group in _grouped(items, _dict_key):
        if len(group) == 1:
            out += group
            continue
        try:
            findings = [Finding.model_validate(d, context=STORED) for d in group]
        except ValueError:  # a record of an older shape: shown as it is rather than not at all
            out += group
            continue
        out.append(merge(findings).model_dump(mode="json"))
    return out
