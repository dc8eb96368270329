"""The network and pin rules, as queries over the task's fetch model (core/task_model/fetches.py). None of them
reads a command: each asks `model_of(env).fetches` which fetches of which phase are pinned how, or reach outside.

apt-version-pinned            (brittleness) `apt-get install pkg=1.2.3-4`. Debian and Ubuntu archives keep only a
                              package's current version, so the exact one disappears at the next point release.
                              In solve.sh or test.sh, which fetch at every run, a warning (Terminal-Bench 2.1
                              dropped such pins from three 2.0 reference solutions); in the Dockerfile, info: the
                              image is built once, and what breaks is a rebuild (one producer's template pins every
                              package of every task). Quiet for a wildcard (`=1.2.*`) and a snapshot archive.
unpinned-python-dependency    (brittleness) pip / uv installs a package without a version. In test.sh, a warning:
                              every verify installs whatever is newest that day. In the Dockerfile and the
                              requirement files it reads, info: the image is frozen once built (aws-bench's 123 of
                              134 tasks `uv pip install --system harbor-rewardkit boto3 pyyaml` and are sound).
download-of-moving-target     (brittleness, warning) a fetch of something that changes under the same URL: a
                              branch, a `latest` release, a video page, at build, solve or verify time; info in the
                              Dockerfile of a task that names a prebuilt `docker_image`.
verifier-installs-at-runtime  (brittleness) test.sh fetches from outside: a warning where the task gives the
                              verifier no network (it cannot work), info where the network is open. Offline installs
                              (`--no-index`, a local wheel directory, `file://`, `--offline`, a vendored tree, an
                              index on localhost) are not fetches from outside and never count.

Several findings of one rule in one file are one finding listing every line (a template that pins six packages
says so once).
"""

from __future__ import annotations

from envqa.core.environment import Environment
from envqa.core.models import Finding, Severity
from envqa.core.network_policy import verifier_network_of
from envqa.core.task_config import NetworkMode
from envqa.core.task_model import model_of
from envqa.core.task_model.fetch_specs import URL, moving_reason
from envqa.core.task_model.fetches import APT, Fetch, needs_network

WHEN = {"build": "at image build", "solution": "when the reference solution runs", "verifier": "at every verify"}
PREBUILT_NOTE = " (the task names a prebuilt image: this bites at the next rebuild)"
BUILD_NOTE = " (at image build: the image is frozen once built, so this bites at the next rebuild)"


def _by_file(fetches: list[Fetch]) -> dict[str, list[Fetch]]:
    out: dict[str, list[Fetch]] = {}
    for f in fetches:
        out.setdefault(f.file, []).append(f)
    return out


def _evidence(fetches: list[Fetch]) -> list[str]:
    return list(dict.fromkeys(f.evidence for f in fetches))


def _places(fetches: list[Fetch]) -> list[str]:
    """Every place of a finding that has several (Finding.locations, as core/finding_groups.py fills it)."""
    places = list(dict.fromkeys(f.location for f in fetches))
    return places if len(places) > 1 else []


def _lines(fetches: list[Fetch]) -> str:
    lines = sorted({f.line for f in fetches})
    return f"line {lines[0]}" if len(lines) == 1 else "lines " + ", ".join(map(str, lines))


def apt_pin_findings(env: Environment, skip: frozenset[str] = frozenset()) -> list[Finding]:
    """One finding per file naming every exact apt version in it, but those at the `skip` places (file:line: pins
    `qa lint --online` found gone, which pinned-version-gone reports instead)."""
    pins = [
        f
        for f in model_of(env).fetches
        if f.manager in APT and f.kind == "package" and f.pin == "exact" and not f.durable and f.location not in skip
    ]
    out = []
    for where, group in _by_file(pins).items():
        build = group[0].phase == "build"
        names = ", ".join(dict.fromkeys(f.target for f in group))
        specs = ", ".join(dict.fromkeys(f"{f.target}={f.version}" for f in group))
        out.append(
            Finding.of(
                "apt-version-pinned",
                severity=Severity.INFO if build else None,
                remedy_fields={"name": names},
                message=f"{where} installs the exact apt version{'s' if len(group) > 1 else ''} {specs}: the archive "
                "keeps only the current version, so this install breaks at the next point release"
                + (BUILD_NOTE if build else f" ({WHEN[group[0].phase]})"),
                evidence=_evidence(group),
                locations=_places(group),
                location=group[0].location,
            )
        )
    return out


def unpinned_python_findings(env: Environment) -> list[Finding]:
    """Unpinned pip / uv installs in the Dockerfile (and the requirement files it reads) and in test.sh."""
    loose = [
        f
        for f in model_of(env).fetches
        if f.manager in ("pip", "uv")
        and f.kind == "package"
        and f.pin == "none"
        and not f.offline
        and f.phase in ("build", "verifier")
    ]
    prebuilt = bool(env.config.environment.docker_image)
    out = []
    for where, group in _by_file(loose).items():
        build = group[0].phase == "build"
        names = ", ".join(dict.fromkeys(f.target for f in group))
        out.append(
            Finding.of(
                rule="unpinned-python-dependency",
                message=f"{where} installs {names} without a pinned version ({_lines(group)}): the environment "
                "changes when a new release comes out"
                + ((PREBUILT_NOTE if prebuilt else BUILD_NOTE) if build else " (test.sh installs at every verify)"),
                evidence=_evidence(group),
                locations=_places(group),
                location=group[0].location,
                severity=Severity.INFO if build else None,
            )
        )
    return out


def download_findings(env: Environment) -> list[Finding]:
    """Fetches of a moving target, one finding per file; then the instruction's."""
    prebuilt = bool(env.config.environment.docker_image)
    moving = [f for f in model_of(env).fetches if f.moving and not f.offline]
    out = []
    for where, group in _by_file(moving).items():
        quiet = group[0].phase == "build" and prebuilt
        what = "; ".join(dict.fromkeys(f"{f.target}: {f.moving}" for f in group))
        out.append(
            Finding.of(
                "download-of-moving-target",
                severity=Severity.INFO if quiet else None,
                message=f"{where} fetches {what} {WHEN[group[0].phase]}, so what it gets changes or disappears "
                "under the same URL" + (PREBUILT_NOTE if quiet else ""),
                evidence=_evidence(group),
                locations=_places(group),
                location=group[0].location,
            )
        )
    return out + _instruction_downloads(env)


def _instruction_downloads(env: Environment) -> list[Finding]:
    """A moving target the instruction sends the agent to (a video page, a branch's file): the task depends on an
    outside resource it does not ship."""
    out = []
    for n, line in enumerate(env.instruction.splitlines(), start=1):
        for m in URL.finditer(line):
            url = m.group(0).rstrip(".,;:")
            reason = moving_reason(url)
            if reason:
                page = "/blob/" in url  # a page rendered for reading (context), not a file the task downloads
                out.append(
                    Finding.of(
                        "download-of-moving-target",
                        severity=Severity.INFO if page else None,
                        message=f"the instruction sends the agent to {url}, {reason}: "
                        + (
                            "a page to read, which can change or vanish (the agent reads it as it is that day)"
                            if page
                            else "the task depends on an outside resource it does not ship, which can change, vanish "
                            "or block the agent"
                        ),
                        evidence=[f"instruction.md:{n}: {line.strip()[:200]}"],
                        location=f"instruction.md:{n}",
                    )
                )
    return out


def task_network_cut(env: Environment) -> bool:
    """Whether the task itself (as Harbor runs it) gives its verifier no network (the verifier phase's policy:
    core/network_policy.py verifier_network_of; an `[agent]` override does not reach the verifier)."""
    return verifier_network_of(env) == NetworkMode.NO_NETWORK


def verifier_fetches(env: Environment) -> list[Fetch]:
    """What the verifier fetches from outside at verify time (offline installs left out)."""
    return needs_network(model_of(env).fetches, "verifier")


def verifier_targets(env: Environment) -> list[str]:
    """What the verifier reaches for: the URLs it names, else the index its package manager asks."""
    index = {"pip": "https://pypi.org/simple/", "uv": "https://pypi.org/simple/", "pipx": "https://pypi.org/simple/"}
    index.update(dict.fromkeys(APT, "http://deb.debian.org/"))
    out = []
    for f in verifier_fetches(env):
        if URL.match(f.target):
            out.append(f.target)
        elif f.manager in index:
            out.append(f"{index[f.manager]} ({f.text})")
        else:
            out.append(f"({f.text})")
    return list(dict.fromkeys(out))


def runtime_fetch_findings(env: Environment) -> list[Finding]:
    hits = verifier_fetches(env)
    if not hits:
        return []
    cut = task_network_cut(env)
    where = hits[0].file
    return [
        Finding.of(
            rule="verifier-installs-at-runtime",
            severity=Severity.WARNING if cut else Severity.INFO,
            message="the verifier installs or downloads at run time: "
            + (
                "the task has no network, so it cannot work"
                if cut
                else "it needs the network the task allows (it breaks where the network is cut), and what it "
                "fetches can change under it"
            ),
            evidence=_evidence(hits)[:5],
            location=f"{where}:{min(f.line for f in hits if f.file == where)}",
        )
    ]


def fetch_findings(env: Environment) -> list[Finding]:
    """Every rule above; static_findings (probes/static/findings.py) calls it."""
    return runtime_fetch_findings(env) + unpinned_python_findings(env) + apt_pin_findings(env) + download_findings(env)
