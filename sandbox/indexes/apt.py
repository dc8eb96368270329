"""An apt distribution's archives as a PackageIndex: the `Packages` files a build's `apt-get update` reads.

A `FROM debian:bookworm` image's sources name bookworm and bookworm-updates on the archive and bookworm-security on
the security archive; `apt-get install pkg=ver` succeeds when any of them lists that version. So a distribution is
a list of sources (archive URL, suite, component, architecture), each read from
`{url}/dists/{suite}/{component}/binary-{arch}/Packages.gz` (else `.xz`, else plain), all of them at once in
threads, and kept as package -> versions (AnswerCache) for the cache's TTL. A source that does not answer is
named in the Lookup, never guessed at.

HostApt answers from the host's own lists (`apt-cache madison`) when they are of the same release and fresh: an
answer in a few milliseconds, with no request at all. It is only ever asked first (OnlineIndexes.apt puts it before the archive): a
version it lacks is asked of the archive, since the host's lists may be older than the archive's last update.
"""

from __future__ import annotations

import gzip
import lzma
import re
import subprocess
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from envqa.core.package_index import Lookup
from envqa.sandbox.indexes.cache import AnswerCache
from envqa.sandbox.indexes.http import Limits, Unanswered, get, host_of

FIELD = re.compile(rb"\n(Package|Version): *([^\n]*)")  # a literal "\n" first: the engine jumps from line to line
# .gz before .xz: bookworm main's is 12 MB against 9 MB, but Python inflates it in half the time xz takes (measured:
# 1.5 s against 2.7 s for its 50 MB), and 3 MB more is well under a second on any link an archive is reached by
SUFFIXES = (".gz", ".xz", "")


@dataclass(frozen=True)
class AptSource:
    url: str  # the archive's root, e.g. http://deb.debian.org/debian
    suite: str  # bookworm, bookworm-updates, bookworm-security
    component: str
    arch: str

    @property
    def packages_url(self) -> str:
        return f"{self.url.rstrip('/')}/dists/{self.suite}/{self.component}/binary-{self.arch}/Packages"

    @property
    def label(self) -> str:
        return f"{host_of(self.url)} {self.suite}/{self.component}"


def _decompress(data: bytes, suffix: str, max_bytes: int) -> bytes:
    if suffix == ".xz":
        out = lzma.LZMADecompressor().decompress(data, max_length=max_bytes + 1)
    elif suffix == ".gz":
        out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, max_bytes + 1)
    else:
        out = data
    if len(out) > max_bytes:
        raise Unanswered(f"a Packages file larger than {max_bytes // (1024 * 1024)} MB decompressed")
    return out


def parse_packages(text: bytes) -> dict[str, list[str]]:
    """package -> its versions, from a Packages file (Package: comes before Version: in each stanza)."""
    out: dict[str, list[str]] = {}
    name = None
    for m in FIELD.finditer(b"\n" + text):
        value = m.group(2).strip().decode(errors="replace")
        if m.group(1) == b"Package":
            name = value
        elif name is not None:
            out.setdefault(name, []).append(value)
            name = None
    return out


@dataclass
class _Table:
    lock: threading.Lock = field(default_factory=threading.Lock)
    packages: dict[str, list[str]] | None = None
    why: str | None = None  # it did not answer (remembered for this process: every pin gets the same reason)


class AptArchive:
    """The sources of one distribution; `versions` loads every source once (in parallel), then answers from memory."""

    def __init__(self, sources: list[AptSource], cache: AnswerCache, limits: Limits, max_index_bytes: int):
        self.sources = sources
        self.cache = cache
        self.limits = limits
        self.max_index_bytes = max_index_bytes
        self._tables = {s: _Table() for s in sources}

    @property
    def where(self) -> str:
        suites = sorted({s.suite for s in self.sources})
        return f"{host_of(self.sources[0].url)} ({', '.join(suites)})" if self.sources else "no apt source"

    def _fetch(self, source: AptSource, deadline: float) -> dict[str, list[str]]:
        for suffix in SUFFIXES:
            reply = get(source.packages_url + suffix, {}, self.limits, deadline)
            if reply.status == 200:
                try:
                    return parse_packages(_decompress(reply.body, suffix, self.max_index_bytes))
                except (lzma.LZMAError, zlib.error, gzip.BadGzipFile, EOFError) as e:
                    raise Unanswered(f"{source.label}: an unreadable Packages{suffix} ({e})") from None
        raise Unanswered(f"{source.label}: no Packages index at {source.packages_url}")

    def _load(self, source: AptSource, deadline: float) -> None:
        table = self._tables[source]
        with table.lock:
            if table.packages is not None or table.why is not None:
                return
            key = f"apt {source.packages_url}"
            cached = self.cache.get(key)
            if cached is not None:
                table.packages = cached
                return
            try:
                table.packages = self._fetch(source, deadline)
            except Unanswered as e:
                table.why = e.why  # names the host; the same reason for each of its suites reads once
                return
            self.cache.put(key, table.packages)

    def versions(self, name: str, deadline: float) -> Lookup:
        threads = [
            threading.Thread(target=self._load, args=(s, deadline), daemon=True)
            for s, t in self._tables.items()
            if t.packages is None and t.why is None
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        found: set[str] = set()
        unanswered = []
        for source, table in self._tables.items():
            if table.packages is not None:
                found.update(table.packages.get(name, ()))
            else:
                unanswered.append(table.why or f"{host_of(source.url)} did not answer in time")
        return Lookup(frozenset(found), tuple(unanswered))


MADISON = re.compile(r"^\s*(\S+)\s*\|\s*(\S+)\s*\|\s*(\S+)\s+(\S+?)(?:/(\S+))?\s+(\S+)\s+Packages\s*$")
LISTS = Path("/var/lib/apt/lists")


def host_lists_fresh(prefixes: list[str], ttl_sec: float, lists: Path = LISTS) -> bool:
    """The host's apt lists hold a Release file for every source (`deb.debian.org_debian_dists_bookworm`, as apt
    names its list files) and were updated within `ttl_sec` (the lists folder's own mtime: apt dates each list
    by the archive's Last-Modified, not by when it fetched it)."""
    try:
        names = [p.name for p in lists.iterdir()]
        updated = max(lists.stat().st_mtime, (lists / "partial").stat().st_mtime)
    except OSError:
        return False
    if time.time() - updated > ttl_sec:
        return False
    return all(any(n.startswith(f"{p}_") and n.endswith("Release") for n in names) for p in prefixes)


class HostApt:
    """The host's apt lists, for one distribution's suites and components (`apt-cache madison`)."""

    def __init__(self, suites: list[str], components: list[str], arch: str, timeout_sec: float):
        self.suites, self.components, self.arch = set(suites), set(components), arch
        self.timeout_sec = timeout_sec

    @property
    def where(self) -> str:
        return f"the host's apt lists ({', '.join(sorted(self.suites))})"

    def versions(self, name: str, deadline: float) -> Lookup:
        """What the host's lists have; a failure is an empty answer, never an unanswered one: the archive asked
        after it decides (the host only spares it a question)."""
        left = min(self.timeout_sec, deadline - time.monotonic())
        if left <= 0:
            return Lookup(frozenset())
        try:
            res = subprocess.run(
                ["apt-cache", "madison", name], capture_output=True, text=True, timeout=left, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return Lookup(frozenset())
        found = set()
        for line in res.stdout.splitlines():
            m = MADISON.match(line)
            if not m or m.group(1) != name or m.group(4) not in self.suites or m.group(6) not in (self.arch, "all"):
                continue
            if m.group(5) is None or m.group(5) in self.components:
                found.add(m.group(2))
        return Lookup(frozenset(found))
