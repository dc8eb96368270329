"""What a build installs from: the package indexes a pinned version is looked up in, as core sees them.

`qa lint --online` asks, for each `apt-get install pkg=ver` and `pip install name==ver` a task pins, whether the
archive or index that build uses still has that version: a version it no longer has is a build that fails today
(pinned-version-gone). The rule (probes/static/online_pins.py) sees only the protocols here; the HTTP clients, their
deadlines and their cache are infrastructure (sandbox/indexes/), wired by the app (app/cli/lint.py), so nothing in
core or the probes opens a socket, and a lint without `--online` cannot reach one.

Matching follows the installers, not string equality: apt compares a pin with each version string as written
(apt-pkg's `pkgVersionMatch`: exact, case-insensitive; `1.2*` a prefix), and a pin written without its epoch is
taken as the same version (lenient: a doubt is never an error); pip reads `==` under PEP 440 (`==1.0` is 1.0.0,
`==1.2.*` any 1.2, a local `+cpu` must match when given).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Protocol

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

Manager = Literal["apt", "pip"]


class PinLike(Protocol):
    """A pinned package as the task model gives it (one per `pkg=ver` / `name==ver`, with the line it is on)."""

    @property
    def manager(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def file(self) -> str: ...
    @property
    def line(self) -> int: ...


@dataclass(frozen=True)
class Lookup:
    """An index's answer for one package: every version it has (empty: it has none, or no such package), and
    the sources that did not answer (`"deb.debian.org bookworm-security: timed out after 3 s"`): a version found
    nowhere is gone only when `unanswered` is empty."""

    versions: frozenset[str]
    unanswered: tuple[str, ...] = ()


class PackageIndex(Protocol):
    """One place a build installs from (an apt distribution's archives, a list of Python indexes).

    `versions` never raises for the network: what did not answer by `deadline` (time.monotonic()) is named in
    the Lookup's `unanswered`. It may be called from several threads at once."""

    @property
    def where(self) -> str: ...

    def versions(self, name: str, deadline: float) -> Lookup: ...


@dataclass(frozen=True)
class Distribution:
    """A Debian or Ubuntu release a base image is built from (`debian:bookworm-slim` -> debian bookworm)."""

    vendor: Literal["debian", "ubuntu"]
    codename: str


class PackageIndexes(Protocol):
    """The indexes of a build, each a list asked in order until one has the pinned version: an apt distribution's
    (the host's fresh lists, then the archive), and pip's (the build's own index URLs, else the configured
    default). The app passes one (sandbox/indexes/OnlineIndexes) to the rule."""

    def apt(self, dist: Distribution) -> list[PackageIndex]: ...

    def pip(self, index_urls: tuple[str, ...]) -> list[PackageIndex]: ...


DEBIAN = {"10": "buster", "11": "bullseye", "12": "bookworm", "13": "trixie", "14": "forky"}
UBUNTU = {"18.04": "bionic", "20.04": "focal", "22.04": "jammy", "24.04": "noble", "25.04": "plucky"}
# buster is archived (archive.debian.org): its image's sources no longer answer, so it is not a pin's question
DEBIAN_CURRENT = {"bullseye", "bookworm", "trixie", "forky"}
DEBIAN_IMAGES = ("debian", "buildpack-deps", "python", "node", "golang", "rust", "openjdk", "ruby", "perl", "php")
TAG_CODENAME = re.compile(
    r"(?:^|[-.])(" + "|".join(sorted(set(DEBIAN.values()) | set(UBUNTU.values()))) + r")(?:$|[-.])"
)


def distribution_of(image: str) -> Distribution | None:
    """The release a FROM image is built from, when its name says so (None: a tag such as `latest`, `3.12` or a
    private image says nothing certain, and its pins are reported not checked)."""
    ref = image.split("@", 1)[0].lower().removeprefix("docker.io/").removeprefix("library/")
    name, _, tag = ref.partition(":")
    if "/" in name:
        return None  # another registry's or author's image: its base is its author's choice
    repo = name
    tag = tag.lower()
    if repo == "ubuntu":
        m = TAG_CODENAME.search(tag)
        codename = UBUNTU.get(tag) or (m.group(1) if m and m.group(1) in UBUNTU.values() else "")
        return Distribution("ubuntu", codename) if codename else None
    if repo in DEBIAN_IMAGES:
        plain = tag.removesuffix("-slim")
        codename = DEBIAN.get(plain.split(".")[0], "") if repo == "debian" and plain[:1].isdigit() else ""
        m = TAG_CODENAME.search(tag)
        codename = codename or (m.group(1) if m else "")
        if codename in DEBIAN_CURRENT:
            return Distribution("debian", codename)
    return None


def normalize_project(name: str) -> str:
    """PEP 503's normalized project name (the path segment of the simple index)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def apt_has(pin: str, versions: frozenset[str]) -> bool:
    """apt-get's `pkg=pin` against the versions an archive lists: case-insensitive equality (`*` a prefix); an
    epoch the pin leaves out (`2.3-1` for `1:2.3-1`) is taken as the same version."""
    want = pin.lower()
    for v in (v.lower() for v in versions):
        plain = v.split(":", 1)[1] if ":" in v and ":" not in want else v
        if want.endswith("*") and plain.startswith(want[:-1]):
            return True
        if want in (v, plain):
            return True
    return False


def pip_has(pin: str, versions: frozenset[str]) -> bool:
    """pip's `==pin` (PEP 440) against an index's versions; a version the spec cannot read is compared as text."""
    try:
        spec = SpecifierSet(f"=={pin}")
    except InvalidSpecifier:
        return pin in versions
    for v in versions:
        try:
            if spec.contains(Version(v), prereleases=True):
                return True
        except InvalidVersion:
            if v == pin:
                return True
    return False


def has_version(manager: str, pin: str, versions: frozenset[str]) -> bool:
    return apt_has(pin, versions) if manager == "apt" else pip_has(pin, versions)
