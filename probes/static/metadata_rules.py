"""Metadata realism: values that are there but say nothing (placeholders) or cannot be true (time estimates).

`task-metadata-missing` (probes/static/task_rules.py) reports metadata that is absent; these rules report metadata
that is present but was never filled in, so the two never report the same key:

  task-metadata-placeholder        (info) a template or placeholder value: category "TODO", tags ["tag1"],
                                   author "" or "unknown", difficulty "unknown", a time estimate of 0.
                                   Harbor's `harbor init --include-standard-metadata` (harbor/cli/init.py,
                                   STANDARD_METADATA) writes exactly "unknown" authors, difficulty "unknown"
                                   and 0.0 estimates; we read those as "not filled in".
  task-time-estimate-implausible   (warning) an expert/junior time estimate off by orders of magnitude: 100x
                                   longer than the agent's timeout, a week or more (an expert's; a junior's: a
                                   quarter), a day or more for a task
                                   marked easy; (info) an expert slower than a junior (the two swapped).

Harbor treats [metadata] as free-form (harbor/models/task/config.py: `metadata: dict[str, Any]`) and Terminal-
Bench 1 carries the same keys in task.yaml (harbor/mappers/terminal_bench.py); we read both raw, since only a
few keys reach `TaskConfig.metadata` for TB1 tasks. Dataset tooling sorts, filters and weights tasks by these
values, so a wrong one misleads quietly; it never changes a trial's verdict, hence info/warning only.
"example" and "sample" are not placeholders here: they are real categories (our own examples/ use "example").
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from envqa.core.defaults import JUNIOR_ESTIMATE_MAX_DAYS
from envqa.core.environment import Environment
from envqa.core.input_files import InputFileError, read_toml
from envqa.core.models import Finding, Severity

PLACEHOLDERS = {
    "todo",
    "tbd",
    "fixme",
    "xxx",
    "placeholder",
    "category",
    "tag",
    "tags",
    "tag1",
    "tag2",
    "tag3",
    "foo",
    "bar",
    "changeme",
    "change-me",
    "your-name",
    "yourname",
    "your-category",
    "name",
    "author",
    "author-name",
    "unknown",
    "none",
    "n/a",
    "na",
    "null",
    "-",
    "?",
    "...",
    "lorem-ipsum",
    "my-tag",
    "your-tag",
    "keyword",
    "keyword1",
}
TEMPLATE = re.compile(r"^(<.*>|\{\{.*\}\}|\$\{.*\}|\[.*\])$")
EMAIL_PLACEHOLDER = re.compile(
    r"^(you|your[\w.-]*|user|name|author|email|me|foo|someone)@example\.(com|org|net)$", re.I
)
ESTIMATES = ("expert_time_estimate_min", "junior_time_estimate_min")
WEEK_MIN, DAY_MIN, FACTOR = 7 * 24 * 60.0, 24 * 60.0, 100.0


def raw_metadata(env: Environment) -> tuple[str, dict[str, Any]]:
    """(file name, the metadata as written): task.toml's [metadata] plus [task] authors/keywords, or task.yaml."""
    if env.format == "tb1":
        try:
            raw = yaml.safe_load((env.root / "task.yaml").read_text(errors="replace")) or {}
        except (OSError, yaml.YAMLError):
            raw = {}
        return "task.yaml", raw if isinstance(raw, dict) else {}
    try:
        raw = read_toml(env.root / "task.toml")  # a BOM and CRLF endings read as the loader reads them
    except InputFileError:
        raw = {}
    meta = dict(raw.get("metadata") or {}) if isinstance(raw.get("metadata"), dict) else {}
    task = raw.get("task") if isinstance(raw.get("task"), dict) else {}
    for key in ("authors", "keywords"):
        if key in task:
            meta[f"task.{key}"] = task[key]
    return "task.toml", meta


def line_of(env: Environment, where: str, key: str) -> str:
    """`file:line` of a key as written (`key = ...` in TOML, `key: ...` in YAML), or the file alone."""
    try:
        lines = (env.root / where).read_text(errors="replace").splitlines()
    except OSError:
        return where
    name = key.rsplit(".", 1)[-1]
    for n, line in enumerate(lines, start=1):
        if re.match(rf"^\s*{re.escape(name)}\s*[=:]", line):
            return f"{where}:{n}"
    return where


def _placeholder(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    v = value.strip()
    if not v:
        return False  # empty: task-metadata-missing's business (authors are handled apart)
    key = re.sub(r"[\s_]+", "-", v.casefold())
    return key in PLACEHOLDERS or bool(TEMPLATE.match(v)) or bool(EMAIL_PLACEHOLDER.match(v))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def placeholder_rules(env: Environment) -> list[Finding]:
    where, meta = raw_metadata(env)
    section = "" if where == "task.yaml" else "[metadata] "
    hits: list[str] = []
    for key in ("category", "difficulty", "author_name", "author_email"):
        value = meta.get(key)
        if _placeholder(value):
            hits.append(f"{line_of(env, where, key)}: {section}{key} = {value!r}")
        elif key == "author_name" and isinstance(value, str) and not value.strip():
            hits.append(f"{line_of(env, where, key)}: {section}author_name is empty")
    for key in ("tags", "task.keywords"):
        values = meta.get(key)
        bad = [v for v in values if _placeholder(v)] if isinstance(values, list) else []
        if bad:
            shown = key if key.startswith("task.") else section + key
            hits.append(f"{line_of(env, where, key)}: {shown} holds {bad!r}")
    for author in meta.get("task.authors") or []:
        if isinstance(author, dict) and (
            not str(author.get("name", "")).strip()
            or _placeholder(author.get("name"))
            or _placeholder(author.get("email"))
        ):
            hits.append(f"{line_of(env, where, 'authors')}: [task] authors has {author!r}")
    for key in ESTIMATES:
        if key in meta and _number(meta[key]) == 0:
            hits.append(f"{line_of(env, where, key)}: {section}{key} = 0 (the template's default)")
    if not hits:
        return []
    return [
        Finding.of(
            rule="task-metadata-placeholder",
            message=f"{where} has metadata that was never filled in (a template default or placeholder): dataset "
            "tooling sorts, filters and credits tasks by it",
            evidence=hits[:8],
            location=hits[0].split(": ")[0],
        )
    ]


def estimate_rules(env: Environment) -> list[Finding]:
    where, meta = raw_metadata(env)
    section = "" if where == "task.yaml" else "[metadata] "
    expert, junior = (_number(meta.get(k)) for k in ESTIMATES)
    timeout_min = env.agent_timeout_sec / 60.0
    difficulty = str(meta.get("difficulty") or "").strip().casefold()
    problems: list[tuple[Severity, str]] = []
    for key, value in zip(ESTIMATES, (expert, junior)):
        if value is None or value == 0:
            continue
        if value < 0:
            problems.append((Severity.WARNING, f"{key} = {value:g} is negative"))
        elif value >= (WEEK_MIN if key == ESTIMATES[0] else JUNIOR_ESTIMATE_MAX_DAYS * DAY_MIN):
            problems.append(
                (
                    Severity.WARNING,
                    f"{key} = {value:g} min is {value / DAY_MIN:.0f} days: no terminal task takes "
                    f"{'an expert a week' if key == ESTIMATES[0] else 'a junior a quarter'} "
                    "(seconds or hours written as minutes?)",
                )
            )
    if expert is not None and expert > 0:
        if expert >= FACTOR * timeout_min:
            problems.append(
                (
                    Severity.WARNING,
                    f"expert_time_estimate_min = {expert:g} is {expert / timeout_min:.0f}x "
                    f"the agent's timeout ({env.agent_timeout_sec:g} s): the estimate or the timeout is off "
                    "by orders of magnitude",
                )
            )
        if difficulty == "easy" and expert >= DAY_MIN:
            problems.append(
                (Severity.WARNING, f"difficulty is easy but expert_time_estimate_min = {expert:g} (a day or more)")
            )
        if junior is not None and 0 < junior < expert:
            problems.append(
                (
                    Severity.INFO,
                    f"expert_time_estimate_min = {expert:g} is longer than "
                    f"junior_time_estimate_min = {junior:g} (swapped?)",
                )
            )
    if not problems:
        return []
    severity = Severity.WARNING if any(s == Severity.WARNING for s, _ in problems) else Severity.INFO
    at = line_of(env, where, ESTIMATES[0] if expert is not None else ESTIMATES[1])
    return [
        Finding.of(
            rule="task-time-estimate-implausible",
            severity=severity,
            message=f"{where}'s time estimates cannot describe this task: " + "; ".join(p for _s, p in problems),
            evidence=[f"{at}: {section}{p}" for _s, p in problems][:6],
            location=at,
        )
    ]


def metadata_realism_findings(env: Environment) -> list[Finding]:
    return placeholder_rules(env) + estimate_rules(env)
