"""A Python simple index as a PackageIndex: `GET {index}/{normalized-name}/`, the versions its files are of.

Asked for PEP 691's JSON (`Accept: application/vnd.pypi.simple.v1+json`), with PEP 503's HTML accepted at a lower
weight, since many private indexes and download.pytorch.org serve only HTML. The versions are PEP 700's `versions`
list when the index sends one, else read from the file names: a wheel is `{name}-{version}(-{build})?-{py}-{abi}-
{platform}.whl` (PEP 427, the name with `_` for `-`), an sdist `{name}-{version}.tar.gz` / `.zip` (and the legacy
`.tar.bz2`, `.egg`), where an old sdist's name may hold `-` itself, so the version starts after the prefix whose
normalized form is the project's name. A yanked file (PEP 592) counts: `pip install name==ver` still installs it.
A 404 is an answer (the index has no such project: every pin of it is gone).
"""

from __future__ import annotations

import html
import json
import re
from urllib.parse import unquote, urlsplit

from envqa.core.package_index import Lookup, normalize_project
from envqa.sandbox.indexes.cache import AnswerCache
from envqa.sandbox.indexes.http import Limits, Unanswered, get, host_of

ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"
ANCHOR = re.compile(r"<a\s[^>]*href=[\"']([^\"']+)[\"'][^>]*>", re.I)
SDIST = (".tar.gz", ".tar.bz2", ".tar.xz", ".zip", ".tgz", ".egg")


def version_of(filename: str, project: str) -> str | None:
    """The version a distribution file is of (None: not a file of this project, or no version in its name)."""
    want = normalize_project(project)
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        return parts[1] if len(parts) in (5, 6) and normalize_project(parts[0]) == want else None
    stem = next((filename[: -len(s)] for s in SDIST if filename.endswith(s)), None)
    if stem is None:
        return None
    parts = stem.split("-")
    for i in range(1, len(parts)):
        if normalize_project("-".join(parts[:i])) == want:
            version = "-".join(parts[i:])
            return version.split("-py", 1)[0] if filename.endswith(".egg") else version
    return None


def _from_json(body: bytes, project: str) -> set[str]:
    data = json.loads(body)
    if not isinstance(data, dict):
        raise ValueError("not a PEP 691 object")
    if isinstance(data.get("versions"), list):  # PEP 700
        return {str(v) for v in data["versions"]}
    files = data.get("files") or []
    names = [f.get("filename", "") for f in files if isinstance(f, dict)]
    return {v for n in names if (v := version_of(str(n), project))}


def _from_html(body: bytes, project: str) -> set[str]:
    out = set()
    for m in ANCHOR.finditer(body.decode(errors="replace")):
        path = urlsplit(html.unescape(m.group(1))).path
        name = unquote(path.rsplit("/", 1)[-1])
        if v := version_of(name, project):
            out.add(v)
    return out


class SimpleIndex:
    """One index URL (https://pypi.org/simple, a mirror, a Dockerfile's `-i URL`)."""

    def __init__(self, url: str, cache: AnswerCache, limits: Limits):
        self.url = url.rstrip("/")
        self.cache = cache
        self.limits = limits

    @property
    def where(self) -> str:
        return self.url

    def _ask(self, project: str, deadline: float) -> set[str]:
        reply = get(f"{self.url}/{project}/", {"Accept": ACCEPT}, self.limits, deadline)
        if reply.status == 404:
            return set()
        try:
            if "json" in reply.content_type:
                return _from_json(reply.body, project)
            return _from_html(reply.body, project)
        except (ValueError, UnicodeDecodeError) as e:
            raise Unanswered(f"{host_of(self.url)} sent an unreadable project page ({type(e).__name__})") from None

    def versions(self, name: str, deadline: float) -> Lookup:
        project = normalize_project(name)
        key = f"pip {self.url}/{project}/"
        cached = self.cache.get(key)
        if cached is not None:
            return Lookup(frozenset(cached.get(project, ())))
        try:
            found = self._ask(project, deadline)
        except Unanswered as e:
            return Lookup(frozenset(), (e.why,))
        self.cache.put(key, {project: sorted(found)})
        return Lookup(frozenset(found))
