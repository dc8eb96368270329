"""pinned-version-gone and pinned-versions-unchecked: each pinned version asked of the index its build uses.

pinned-version-gone            (brittleness, error) the archive or index the build installs from no longer has a
                               version the task pins (`apt-get install pkg=1.2-3`, `pip install name==1.0`): the
                               build fails today. One finding per file, every gone pin with its line. A version
                               is gone only when every index of the build answered and none has it; the build's
                               own apt sources or pip sources (pin_sources.py) make it "not checked" instead.
pinned-versions-unchecked      (infra, info) pins `qa lint --online` could not check, and why: an index that did
                               not answer within the task's budget, a base image whose release its name does not
                               say, sources qa does not read. One per task; never a finding against the task.

Only `qa lint --online` runs these (rules.toml `lint = "online"`): without it nothing here runs and nothing is
asked of any network. The indexes are core's protocol (core/package_index.py); the app passes the HTTP clients
(sandbox/indexes/). Every lookup of a task shares one deadline: ONLINE_MAX_PARALLEL daemon threads ask, and what
has not answered when the budget ends is reported not checked, so a lint never waits longer than its budget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from envqa.core.defaults import ONLINE_MAX_PARALLEL
from envqa.core.environment import Environment
from envqa.core.models import Finding
from envqa.core.package_index import PackageIndex, PackageIndexes, PinLike, has_version
from envqa.core.task_model import model_of
from envqa.core.task_model.fetches import pinned_packages
from envqa.probes.static.fetch_rules import apt_pin_findings
from envqa.probes.static.pin_sources import apt_question, pip_question
from envqa.probes.static.task_files import rel

SHOWN_VERSIONS = 3


def task_pins(env: Environment) -> list[PinLike]:
    """The task's exact apt and pip pins, in every file, from the task model's fetches."""
    return list(pinned_packages(model_of(env)))


@dataclass
class Check:
    """One (package, indexes) question shared by the pins that ask it."""

    pins: list[PinLike]
    indexes: list[PackageIndex]
    why_not: str | None = None  # set before asking: the question cannot be asked (its reason)
    own_sources: str | None = None  # a version the indexes lack is then not checked, for this reason
    seen: set[str] = field(default_factory=set)  # every version the indexes have
    unanswered: list[str] = field(default_factory=list)
    found: set[str] = field(default_factory=set)  # the pinned versions found
    done: bool = False

    def run(self, deadline: float) -> None:
        wanted = {p.version for p in self.pins}
        for index in self.indexes:
            answer = index.versions(self.pins[0].name, deadline)
            self.seen |= answer.versions
            self.unanswered += answer.unanswered
            self.found |= {v for v in wanted if has_version(self.pins[0].manager, v, answer.versions)}
            if self.found == wanted:
                break
        self.done = True

    def status(self, pin: PinLike) -> tuple[str, str]:
        """("present" | "gone" | "unchecked", why) for one of its pins."""
        if self.why_not:
            return "unchecked", self.why_not
        if not self.done:
            return "unchecked", "the index did not answer within the task's time budget"
        if pin.version in self.found:
            return "present", ""
        if self.unanswered:
            return "unchecked", "; ".join(dict.fromkeys(self.unanswered))
        if self.own_sources:
            return "unchecked", f"{self.own_sources}, which qa does not read"
        return "gone", ""


def _checks(env: Environment, pins: Sequence[PinLike], indexes: PackageIndexes) -> list[Check]:
    model = model_of(env)
    dockerfile = rel(env, env.dockerfile)
    grouped: dict[tuple, Check] = {}
    for pin in pins:
        if pin.manager == "apt":
            q = apt_question(model.dockerfile_spans, dockerfile, env.root, pin.file, pin.line)
            chain = indexes.apt(q.dist) if q.dist else []
            why = (
                None if q.dist else f"the base image {q.image or '(none)'} does not say which Debian or Ubuntu release"
            )
            own = q.own_sources
        elif pin.manager == "pip":
            p = pip_question(env.root, dockerfile, pin.file, pin.line)
            chain, why, own = indexes.pip(p.urls), None, p.own_sources
        else:
            chain, why, own = [], f"qa does not check {pin.manager} pins", None
        key = (pin.manager, pin.name, tuple(id(i) for i in chain), why, own)
        check = grouped.setdefault(key, Check([], chain, why, own))
        check.pins.append(pin)
    return list(grouped.values())


def check_pins(env: Environment, pins: Sequence[PinLike], indexes: PackageIndexes, budget_sec: float) -> list[Check]:
    """Ask every pin's question within `budget_sec` (ONLINE_MAX_PARALLEL at a time); unanswered ones stay undone."""
    checks = _checks(env, pins, indexes)
    deadline = time.monotonic() + budget_sec
    todo = [c for c in checks if c.why_not is None]
    lock = threading.Lock()

    def worker() -> None:
        while time.monotonic() < deadline:
            with lock:
                if not todo:
                    return
                check = todo.pop(0)
            check.run(deadline)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(min(ONLINE_MAX_PARALLEL, len(todo)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    return checks


def _have(check: Check) -> str:
    if not check.seen:
        return "no such package"
    shown = sorted(check.seen)[-SHOWN_VERSIONS:]
    return (
        "has "
        + ", ".join(shown)
        + (f" and {len(check.seen) - len(shown)} more" if len(check.seen) > len(shown) else "")
    )


def _spec(pin: PinLike) -> str:
    return f"{pin.name}=={pin.version}" if pin.manager == "pip" else f"{pin.name}={pin.version}"


def _where(check: Check) -> str:
    return check.indexes[-1].where if check.indexes else "the index"


def findings_of(checks: list[Check]) -> list[Finding]:
    gone: dict[str, list[tuple[PinLike, Check]]] = {}
    unchecked: list[tuple[PinLike, str]] = []
    for check in checks:
        for pin in check.pins:
            status, why = check.status(pin)
            if status == "gone":
                gone.setdefault(pin.file, []).append((pin, check))
            elif status == "unchecked":
                unchecked.append((pin, why))
    out = []
    for file, items in gone.items():
        items.sort(key=lambda item: item[0].line)
        names = ", ".join(f"{_spec(p)} ({file}:{p.line})" for p, _c in items)
        out.append(
            Finding.of(
                "pinned-version-gone",
                message=f"this build fails today: the index no longer has {names}",
                remedy_fields={"pins": ", ".join(_spec(p) for p, _c in items)},
                evidence=[f"{file}:{p.line}: {_spec(p)}: {_where(c)} {_have(c)}" for p, c in items],
                location=f"{file}:{items[0][0].line}",
            )
        )
    if unchecked:
        reasons = list(dict.fromkeys(why for _p, why in unchecked))
        out.append(
            Finding.of(
                "pinned-versions-unchecked",
                message=f"{len(unchecked)} pinned version(s) not checked: " + "; ".join(reasons),
                evidence=[f"{p.file}:{p.line}: {_spec(p)}: {why}" for p, why in unchecked],
                location=f"{unchecked[0][0].file}:{unchecked[0][0].line}",
            )
        )
    return out


def online_pin_findings(
    env: Environment, indexes: PackageIndexes, budget_sec: float, pins: Sequence[PinLike] | None = None
) -> list[Finding]:
    """The two rules above for `env` (its pins from the task model unless given)."""
    pins = task_pins(env) if pins is None else pins
    return findings_of(check_pins(env, pins, indexes, budget_sec)) if pins else []


def gone_over_pinned(env: Environment, findings: list[Finding], online: list[Finding]) -> list[Finding]:
    """A pin found gone withdraws apt-version-pinned at its line ("breaks at the next point release": it already
    does); the file's other pins keep theirs, in the same one finding per file. Then the online findings."""
    gone = frozenset(e.split(": ", 1)[0] for f in online if f.rule == "pinned-version-gone" for e in f.evidence)
    if not gone:
        return findings + online
    return [f for f in findings if f.rule != "apt-version-pinned"] + apt_pin_findings(env, gone) + online
