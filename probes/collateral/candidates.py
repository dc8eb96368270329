"""What the collateral-damage probe may damage: state the image holds that the task never asked to touch.

A careless agent solves the task and also deletes an unrelated file, empties a log or stops a service. A
verifier that still passes does not check collateral damage (issue 42, item 5). This module only chooses the
damages, from the task's Dockerfile, so the choice is a pure function a fast test can pin down; probe.py applies
them to the reference solution's end state and runs the verifier.

Read from the task model's Dockerfile spans (core/task_model/model.py), so the Dockerfile is not parsed again.

A path the instruction or the tests mention (whole, by its file name, or its folder named on its own) is never a
candidate: the instruction may ask to change it (an output) and the tests may read it (an input), so damaging it
would judge the task, not the verifier's blind side. Scratch (/tmp) is not state a task keeps. The choice is
deterministic (Dockerfile order, first COLLATERAL_MAX_DAMAGES), so two runs damage the same state.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

from envqa.core.defaults import COLLATERAL_MAX_DAMAGES
from envqa.core.parsers.dockerfile import Span, run_script

SCRIPTS_PACKAGE = "envqa.probes"  # the damage scripts are package data under probes/scripts/collateral/
SCRIPTS = {"delete": "scripts/collateral/delete.sh", "truncate": "scripts/collateral/truncate.sh",
           "stop": "scripts/collateral/stop_service.sh"}  # fmt: skip
SCRATCH = ("/dev/", "/proc/", "/tmp/", "/var/tmp/")  # not state a task keeps
LOG_DIRS = ("/var/log/",)
LOG_SUFFIXES = (".log",)
SERVICE_START = re.compile(r"\bservice\s+([\w.@-]+)\s+start\b|\bsystemctl\s+(?:enable|start)\s+([\w.@-]+)")
REDIRECT = re.compile(r"(?<![<>&\d])>{1,2}\s*(/[\w./-]+)")
TOUCH = re.compile(r"\btouch\s+(/[\w./-]+)")


@dataclass(frozen=True)
class Damage:
    """One collateral damage: what is done (a key of SCRIPTS), to what, and the Dockerfile line it comes from."""

    kind: str  # "delete" | "truncate" | "stop"
    target: str  # an absolute path in the image, or a service name
    line: int  # 1-based Dockerfile line that put it there

    def describe(self) -> str:
        if self.kind == "stop":
            return f"service {self.target} stopped"
        return f"{self.target} {'deleted' if self.kind == 'delete' else 'truncated'}"


def _copy_targets(args: list[str], workdir: str) -> list[str]:
    """The in-image files a COPY/ADD writes (a file source to a folder destination lands under its name)."""
    if len(args) < 2:
        return []
    *sources, dest = args
    dest = posixpath.join(workdir, dest)
    if len(sources) == 1 and not dest.endswith("/") and "*" not in sources[0]:
        return [posixpath.normpath(dest)]
    return [posixpath.normpath(posixpath.join(dest, posixpath.basename(s.rstrip("/"))))
            for s in sources if "*" not in s and not s.endswith("/") and "." in posixpath.basename(s)]  # fmt: skip


def _run_targets(script: str) -> tuple[list[str], list[str]]:
    """Files a RUN writes (a redirection, a touch) and services it starts."""
    files = REDIRECT.findall(script) + TOUCH.findall(script)
    services = [a or b for a, b in SERVICE_START.findall(script)]
    return files, services


def _mentioned(target: str, texts: list[str]) -> bool:
    """The instruction or a test names this path (whole, or by its file name), its folder on its own ("the files
    in /etc/app"; not the /app of "/app/out.txt") or this service."""
    words = [re.compile(rf"(?<![\w.-]){re.escape(w)}(?![\w-]|\.\w)") for w in {target, posixpath.basename(target)} if w]
    folder = posixpath.dirname(target)
    if folder.startswith("/") and folder != "/":
        words.append(re.compile(rf"(?<![\w./-]){re.escape(folder)}/?(?![\w./-]|\.\w)"))
    return any(word.search(text) for word in words for text in texts)


def _damage_for(path: str, line: int) -> Damage:
    is_log = path.startswith(LOG_DIRS) or path.endswith(LOG_SUFFIXES)
    return Damage("truncate" if is_log else "delete", path, line)


def _final_stage(spans: list[Span]) -> list[tuple[str, str, int]]:
    """(keyword, value, 1-based line) of the final stage's instructions; COPY/ADD/RUN after ARG/ENV substitution
    (RUN: its script, flags dropped), WORKDIR as written."""
    final = max((s.stage for s in spans), default=-1)
    out = []
    for span in spans:
        if span.stage != final or final < 0 or span.keyword in ("FROM", "ARG"):
            continue
        value = span.value
        if span.keyword == "RUN":
            value = span.resolved if span.heredoc is not None else run_script(span.resolved)
        elif span.keyword in ("COPY", "ADD"):
            value = span.resolved
        out.append((span.keyword, value, span.start + 1))
    return out


def dockerfile_candidates(spans: list[Span]) -> list[Damage]:
    """Every damage the final stage's COPY/ADD/RUN/WORKDIR make possible, in Dockerfile order, no repeats."""
    found: dict[tuple[str, str], Damage] = {}
    workdir = "/"
    for keyword, value, line in _final_stage(spans):
        if keyword == "WORKDIR":
            workdir = posixpath.join(workdir, value.strip())
        elif keyword in ("COPY", "ADD"):
            args = [a for a in shlex.split(value) if not a.startswith("--")] if value else []
            for path in _copy_targets(args, workdir):
                found.setdefault(("file", path), _damage_for(path, line))
        elif keyword == "RUN":
            files, services = _run_targets(value)
            for path in files:
                found.setdefault(("file", path), _damage_for(path, line))
            for service in services:
                found.setdefault(("service", service), Damage("stop", service, line))
    return [d for d in found.values() if d.kind == "stop" or not d.target.startswith(SCRATCH)]


def choose_damages(spans: list[Span], instruction: str, test_texts: list[str], limit: int = COLLATERAL_MAX_DAMAGES,
                   exclude: frozenset[str] = frozenset()) -> tuple[list[Damage], str]:  # fmt: skip
    """The damages to apply (at most `limit`; none of the `exclude` targets: what the oracle's own run changed)
    and, when there are none, why (the probe's coverage note)."""
    candidates = dockerfile_candidates(spans)
    texts = [instruction, *test_texts]
    allowed = [d for d in candidates if not _mentioned(d.target, texts)]
    if not candidates:
        return [], "no candidates: the Dockerfile puts no file, log or service in the image"
    if not allowed:
        return [], "no candidates: every file and service the image holds is named by the instruction or tests"
    untouched = [d for d in allowed if d.target not in exclude]
    if not untouched:
        return [], "no candidates: the oracle's own run changed every file the probe would damage (its outputs)"
    return untouched[:limit], ""
