"""Unknown keys in task.toml: a warning each, naming the key, its table and the near spelling.

Harbor's models ignore keys they do not know, so a task written for a newer Harbor loads there; a strict
schema here turned each Harbor release into an outage (issue 23). Ignoring silently would hide a typo
(`timeout_secs` falls back to the default), so the keys are kept by the models (`extra="allow"`, see
core/task_config.py) and reported here: on stderr and in `--json` by `qa run`, as the info finding
`task-config-unknown-key` by `qa lint`. The run goes on.
"""

from __future__ import annotations

import difflib

from pydantic import BaseModel

from envqa.core.task_config import StepConfig, TaskConfig

# Spellings a model accepts besides its field names (TaskConfig renames `version`; EnvironmentConfig
# migrates the deprecated `memory`/`storage`): never suggested, never unknown.
_ACCEPTED = {"TaskConfig": {"version"}, "EnvironmentConfig": {"memory", "storage"}}


class ConfigWarning(BaseModel):
    """One unknown key. `table` as task.toml spells it: `top level`, `[verifier]`, `[[steps]] "a"`."""

    file: str = "task.toml"
    key: str
    table: str
    suggestion: str | None = None
    ignored_by: str = "Harbor"  # whose reader ignores it: Harbor for task.toml, Terminal-Bench for task.yaml

    @property
    def message(self) -> str:
        hint = f"; did you mean {self.suggestion!r}?" if self.suggestion else ""
        where = "at the top level" if self.table == "top level" else f"in {self.table}"
        return (
            f"{self.file}: unknown key {self.key!r} {where}{hint} "
            f"(ignored, as {self.ignored_by} ignores keys it does not know)"
        )

    def public(self) -> dict:
        return {
            "file": self.file,
            "key": self.key,
            "table": self.table,
            "suggestion": self.suggestion,
            "message": self.message,
        }


def _suggest(key: str, known: list[str]) -> str | None:
    near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return near[0] if near else None


def _table(dotted: str, array: bool, index: int | None, step: str | None) -> str:
    """How task.toml spells the table: `[verifier.environment]`, `[[verifier.collect]] #2`,
    `[[steps]] "a"`, `[steps.verifier] of step "a"`; the root is `top level`."""
    if not dotted:
        return "top level"
    text = f"[[{dotted}]]" if array else f"[{dotted}]"
    if dotted == "steps" and step is not None:
        return f'{text} "{step}"'
    if index is not None:
        text += f" #{index}"
    return f'{text} of step "{step}"' if step is not None else text


def _walk(
    model: BaseModel,
    dotted: str,
    out: list[ConfigWarning],
    *,
    array: bool = False,
    index: int | None = None,
    step: str | None = None,
) -> None:
    known = list(type(model).model_fields)
    accepted = _ACCEPTED.get(type(model).__name__, set())
    here = _table(dotted, array, index, step)
    for key in sorted(model.model_extra or {}):
        if key not in accepted:
            out.append(ConfigWarning(key=key, table=here, suggestion=_suggest(key, known)))
    for name in known:
        value = getattr(model, name)
        sub = f"{dotted}.{name}" if dotted else name
        if isinstance(value, BaseModel):
            _walk(value, sub, out, step=step)
        elif isinstance(value, list):
            for i, item in enumerate(value, start=1):
                if isinstance(item, StepConfig):
                    _walk(item, sub, out, array=True, step=item.name)
                elif isinstance(item, BaseModel):
                    _walk(item, sub, out, array=True, index=i, step=step)


def unknown_keys(config: TaskConfig, file: str = "task.toml") -> list[ConfigWarning]:
    """Every key the schema does not know, outermost table first. [metadata] is free-form: never reported."""
    out: list[ConfigWarning] = []
    _walk(config, "", out)
    for w in out:
        w.file = file
    return out
