"""The package indexes a build installs from, over HTTP with deadlines and a cache (`qa lint --online`).

OnlineIndexes implements core's PackageIndexes (core/package_index.py) from `[online]` (core/config_online.py):
an apt distribution is its release, -updates and -security suites on the configured archives, each component the
image's sources name, asked after the host's own apt lists when those are of the same archive, release and fresh;
a pip pin is asked of the build's own index URLs, else the configured default. One object per process keeps what
it read, so a dataset's tasks of one release share one download of its Packages files.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from urllib.parse import urlsplit

from envqa.core.config_online import OnlineSettings
from envqa.core.defaults import ONLINE_APT_CACHE_SEC, ONLINE_MAX_DOWNLOAD_BYTES, ONLINE_MAX_INDEX_BYTES
from envqa.core.package_index import Distribution, PackageIndex
from envqa.sandbox.indexes.apt import LISTS, AptArchive, AptSource, HostApt, host_lists_fresh
from envqa.sandbox.indexes.cache import AnswerCache
from envqa.sandbox.indexes.http import Limits
from envqa.sandbox.indexes.pypi import SimpleIndex

__all__ = ["OnlineIndexes"]


def _list_prefix(url: str) -> str:
    """The prefix apt gives a source's list files: `http://deb.debian.org/debian` -> `deb.debian.org_debian`."""
    parts = urlsplit(url)
    return (parts.netloc + parts.path.rstrip("/")).replace("/", "_")


class OnlineIndexes:
    def __init__(self, settings: OnlineSettings, home: Path, lists: Path = LISTS):
        self.settings = settings
        self.cache = AnswerCache(Path(home) / "cache" / "indexes", settings.cache_ttl_sec)
        self.limits = Limits(settings.connect_timeout_sec, settings.read_timeout_sec, ONLINE_MAX_DOWNLOAD_BYTES)
        self.lists = lists
        self._apt: dict[Distribution, list[PackageIndex]] = {}
        self._pip: dict[str, SimpleIndex] = {}
        self._lock = threading.Lock()

    def sources(self, dist: Distribution) -> list[AptSource]:
        s, c = self.settings, dist.codename
        if dist.vendor == "debian":
            archive, security, components = s.debian_url, s.debian_security_url, s.debian_components
        else:
            archive, security, components = s.ubuntu_url, s.ubuntu_security_url, s.ubuntu_components
        suites = [(archive, c), (archive, f"{c}-updates"), (security, f"{c}-security")]
        return [AptSource(url, suite, comp, s.arch) for url, suite in suites for comp in components]

    def _host(self, sources: list[AptSource]) -> HostApt | None:
        if not self.settings.host_apt or shutil.which("apt-cache") is None:
            return None
        wanted = sorted({f"{_list_prefix(src.url)}_dists_{src.suite}" for src in sources})
        if not host_lists_fresh(wanted, self.settings.cache_ttl_sec, self.lists):
            return None
        suites = sorted({src.suite for src in sources})
        components = sorted({src.component for src in sources})
        return HostApt(suites, components, self.settings.arch, ONLINE_APT_CACHE_SEC)

    def apt(self, dist: Distribution) -> list[PackageIndex]:
        with self._lock:
            if dist not in self._apt:
                sources = self.sources(dist)
                archive = AptArchive(sources, self.cache, self.limits, ONLINE_MAX_INDEX_BYTES)
                host = self._host(sources)
                self._apt[dist] = [host, archive] if host is not None else [archive]
            return self._apt[dist]

    def pip(self, index_urls: tuple[str, ...]) -> list[PackageIndex]:
        urls = tuple(dict.fromkeys(u or self.settings.pip_index_url for u in index_urls or ("",)))
        with self._lock:
            for url in urls:
                self._pip.setdefault(url, SimpleIndex(url, self.cache, self.limits))
            return [self._pip[url] for url in urls]
