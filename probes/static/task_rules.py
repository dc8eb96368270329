"""File rules about the task as a whole: Harbor metadata and timeouts, and verifiers that time things.

task-metadata-missing       (info) no difficulty, category or tags/keywords. Harbor treats metadata as
                            optional and free-form, so this is never more than info.
task-timeout-missing        (info) no [agent] or [verifier] timeout_sec: Harbor's default applies.
task-timeout-implausible    (warning) a timeout too short to do anything or longer than a day.
verifier-timing-dependent   (warning) the tests compare a measured wall-clock duration with a fixed
                            threshold: the verdict then depends on the machine's load, not the work.
task-config-unknown-key     (info) keys of task.toml or task.yaml the schema does not know, one finding per file
                            (probes/static/task_schema.py says more); here so that `qa run`'s static probe reports
                            it as `qa lint` does.
"""

from __future__ import annotations

from pathlib import Path

from envqa.core.environment import Environment
from envqa.core.input_files import InputFileError, read_toml
from envqa.core.models import Finding
from envqa.core.task_config_keys import ConfigWarning
from envqa.core.task_model import model_of
from envqa.core.task_model.timing import timed_comparisons

MIN_AGENT_SEC, MIN_VERIFIER_SEC, MAX_SEC = 10.0, 5.0, 24 * 3600.0
KEY_EVIDENCE_SHOWN = 12  # evidence lines of one unknown-keys finding (the message lists every key)


def _raw_task_toml(env: Environment) -> dict:
    path = env.root / "task.toml"
    if not path.is_file():
        return {}
    try:
        return read_toml(path)  # a BOM and CRLF endings read as the loader reads them
    except InputFileError:
        return {}


def metadata_rules(env: Environment) -> list[Finding]:
    findings = []
    meta = env.config.metadata or {}
    task = env.config.task
    missing = [
        k
        for k, ok in (
            ("difficulty", meta.get("difficulty") or meta.get("difficulty_explanation")),
            ("category", meta.get("category")),
            ("tags", meta.get("tags") or (task.keywords if task else None)),
        )
        if not ok
    ]
    where = "task.toml" if env.format != "tb1" else "task.yaml"
    if missing:
        findings.append(
            Finding.of(
                rule="task-metadata-missing",
                message=f"the task's metadata has no {', '.join(missing)}: dataset tooling cannot sort or filter it",
                evidence=[f"{where}: [metadata] lacks {', '.join(missing)}"],
                location=where,
            )
        )
    raw = _raw_task_toml(env) if env.format != "tb1" else None
    timeouts = {"agent": env.config.agent.timeout_sec, "verifier": env.config.verifier.timeout_sec}
    if raw is not None:
        unset = [k for k in timeouts if "timeout_sec" not in (raw.get(k) or {})]
        if unset:
            findings.append(
                Finding.of(
                    rule="task-timeout-missing",
                    message=f"no timeout_sec under [{'], ['.join(unset)}]: Harbor's default (600 s) applies, chosen by "
                    "nobody for this task",
                    evidence=[f"task.toml: [{k}] timeout_sec not set" for k in unset],
                    location="task.toml",
                )
            )
    for phase, value in timeouts.items():
        low = MIN_AGENT_SEC if phase == "agent" else MIN_VERIFIER_SEC
        if value is not None and (value < low or value > MAX_SEC):
            findings.append(
                Finding.of(
                    rule="task-timeout-implausible",
                    message=f"[{phase}] timeout_sec = {value:g} is implausible (expected {low:g} s to {MAX_SEC:g} s): "
                    + ("too short to start a container and do anything" if value < low else "longer than a day"),
                    evidence=[f"{where}: {phase} timeout {value:g}"],
                    location=where,
                )
            )
    return findings


def timing_rules(env: Environment) -> list[Finding]:
    evidence = timed_comparisons(model_of(env).assertions)
    if not evidence:
        return []
    return [
        Finding.of(
            rule="verifier-timing-dependent",
            message="the tests compare a measured wall-clock duration with a fixed threshold: the same work passes on "
            "an idle machine and fails on a loaded one",
            evidence=evidence[:8],
            location=evidence[0].split(": ")[0],
        )
    ]


def unknown_key_findings(env: Environment) -> list[Finding]:
    """One info finding per config file (task.toml, task.yaml), naming all its unknown keys: a producer's own
    keys (aws-bench's `[scenario]`, an adapter's `author`) are one note, not one line each."""
    by_file: dict[str, list[ConfigWarning]] = {}
    for w in env.warnings:
        by_file.setdefault(Path(w.file).name, []).append(w)
    out = []
    for name, warnings in by_file.items():
        listed = ", ".join(_key_text(w) for w in warnings)
        n = len(warnings)
        out.append(
            Finding.of(
                rule="task-config-unknown-key",
                message=f"{name}: {n} key{'s' if n > 1 else ''} the schema does not know: {listed}; ignored, as "
                f"{warnings[0].ignored_by} ignores keys it does not know (a misspelt key leaves its setting at the "
                "default)",
                evidence=[f"{name}: {_where(w)}: {w.key}" for w in warnings[:KEY_EVIDENCE_SHOWN]],
                location=name,
            )
        )
    return out


def _where(w: ConfigWarning) -> str:
    return "at the top level" if w.table == "top level" else f"in {w.table}"


def _key_text(w: ConfigWarning) -> str:
    hint = f", did you mean {w.suggestion!r}?" if w.suggestion else ""
    return f"{w.key!r} ({_where(w)}{hint})"


def task_findings(env: Environment) -> list[Finding]:
    # unknown keys too, so that `qa run` reports them as `qa lint` does (info; the run goes on: issue 23)
    return metadata_rules(env) + timing_rules(env) + unknown_key_findings(env)
