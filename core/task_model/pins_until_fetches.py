"""The pins of a task's Dockerfile, read just well enough to wire `qa lint --online`.

# TEMPORARY until s52-fetches merges: that branch's task model gives `pinned_packages(model) -> list[Pin]` (every
# file, every fetch); swap this module's one caller (probes/static/online_pins.py `task_pins`) to it, then delete
# this module and its test (tests/probes/test_online_pins.py `test_the_temporary_adapter_reads_dockerfile_pins`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envqa.core.parsers.dockerfile import run_script
from envqa.core.parsers.pip import PIP_VALUE_OPTIONS, pip_args
from envqa.core.parsers.shell import parse_script
from envqa.core.task_model.model import TaskModel

APT_PIN = re.compile(r"^([a-z0-9][a-z0-9+.-]*)(?::[a-z0-9-]+)?=([0-9][^=\s]*)$")
PIP_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^=;,\s]+)$")


@dataclass(frozen=True)
class Pin:
    manager: str  # "apt" | "pip"
    name: str
    version: str
    file: str  # as findings name it (environment/Dockerfile)
    line: int  # 1-based


def pinned_packages(model: TaskModel) -> list[Pin]:  # TEMPORARY until s52-fetches merges
    """apt `pkg=ver` and pip `name==ver` of the Dockerfile's reachable RUN commands."""
    env = model.env
    try:
        where = env.dockerfile.relative_to(env.root).as_posix()
    except ValueError:
        where = env.dockerfile.name
    out: list[Pin] = []
    for span in model.dockerfile_spans:
        if span.keyword != "RUN":
            continue
        script = span.resolved if span.heredoc is not None else run_script(span.resolved)
        offset = span.start + (1 if span.heredoc is not None else 0)
        for cmd in parse_script(script):
            if not cmd.reachable:
                continue
            line = cmd.line + offset
            words = [w for w in cmd.words[1:] if w]
            if cmd.name in ("apt-get", "apt", "aptitude") and "install" in words:
                for w in words[words.index("install") + 1 :]:
                    if m := APT_PIN.match(w):
                        out.append(Pin("apt", m.group(1), m.group(2), where, line))
            args, skip = pip_args(cmd) or [], False
            for w in args:
                if skip or w.startswith("-"):
                    skip = not skip and w in PIP_VALUE_OPTIONS
                    continue
                if m := PIP_PIN.match(w):
                    out.append(Pin("pip", m.group(1), m.group(2), where, line))
    return out
