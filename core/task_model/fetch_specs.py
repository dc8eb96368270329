"""How a package spec or a URL is pinned, and why a URL's target moves: the words of one fetch, read once.

The shared vocabulary of core/task_model/fetches.py. A spec is read the way its manager reads it: pip's
`name==1.2` / `name>=1` / `name @ git+…@ref`, npm's `name@1.2.3` / `@scope/name@^1`, go's `mod@v1.2.3`,
conda's `name=1.2.3`, apt's `name=1.2-3`. A URL moves when it names a branch, a `latest` release or a video
page; a local URL (localhost, file://) is the task's own service, not the outside.
"""

from __future__ import annotations

import re

# What fixes what a fetch gets: an exact version, a content digest, a commit, a tag, a branch (moves), a range
# (moves within it), a lock file the project ships, a plain URL (fixed name, contents unchecked), nothing.
PINS = ("exact", "digest", "commit", "tag", "branch", "range", "lock", "url", "none", "unknown")

URL = re.compile(r"(?:https?|ftp|file)://[^\s\"'<>`)\]]+", re.I)
LOCAL_URL = re.compile(r"^(file:|(https?|ftp)://(localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1\])([:/]|$))", re.I)
BRANCH = r"(?:main|master|HEAD|develop|trunk)"
MOVING = [
    (re.compile(r"(youtube\.com/(watch|shorts|live)|youtu\.be/|vimeo\.com/\d|twitch\.tv/)", re.I), "a video page"),
    (re.compile(rf"raw\.githubusercontent\.com/[^/]+/[^/]+/(refs/heads/)?{BRANCH}/"), "a file on a branch"),
    (re.compile(rf"github\.com/[^/]+/[^/]+/(raw|blob)/{BRANCH}/"), "a file on a branch"),
    (re.compile(rf"/archive/(refs/heads/)?{BRANCH}\.(zip|tar\.gz)"), "a branch's archive"),
    (re.compile(rf"/-/raw/{BRANCH}/"), "a file on a branch"),
    (re.compile(rf"huggingface\.co/.+/resolve/{BRANCH}/"), "a file on a branch"),
    (re.compile(r"/releases/latest(/|$)|[/_-]latest([./_-]|$)", re.I), "the latest release"),
]
HEX_REF = re.compile(r"^[0-9a-f]{7,40}$")
SEMVER = re.compile(r"^v?\d+(\.\d+){1,3}([-+.][\w.]+)?$")
PY_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(.*)$")
VCS = re.compile(r"^(?:([\w.-]+)\s*@\s*)?(git|hg|svn|bzr)\+(\S+)$")


def is_local(target: str) -> bool:
    """A path, a local archive or a local URL: nothing from outside (`.`, `/opt/wheels/x.whl`, `file:///x`)."""
    if LOCAL_URL.match(target):
        return True
    if URL.match(target) or re.match(r"^[\w.+-]+://", target):
        return False
    return target.startswith((".", "/", "~", "$")) or target.endswith((".whl", ".tar.gz", ".tgz", ".zip", ".deb"))


def moving_reason(url: str) -> str | None:
    """Why what the URL names changes under it (None: a fixed target, or a service of the task's own)."""
    if LOCAL_URL.match(url):
        return None
    for pattern, reason in MOVING:
        if pattern.search(url):
            return reason
    return None


def ref_pin(ref: str) -> str:
    """A git ref: a commit (hex), a tag (has a digit), else a branch."""
    if not ref:
        return "branch"
    if HEX_REF.match(ref):
        return "commit"
    return "tag" if re.search(r"\d", ref) else "branch"


def url_pin(url: str) -> tuple[str, str, str]:
    """(pin, version, why it moves) of a downloaded URL."""
    reason = moving_reason(url) or ""
    if "branch" in reason:
        return "branch", "", reason
    if reason:
        return "none", "", reason
    commit = re.search(r"/([0-9a-f]{40})(/|$)", url)
    if commit:
        return "commit", commit.group(1), ""
    return "url", "", ""


def vcs_pin(url: str) -> tuple[str, str]:
    """`git+https://host/repo@ref#egg=x`: (pin, ref) from the ref after the path's last `@`."""
    path = url.split("://", 1)[-1].split("#", 1)[0]
    ref = path.rsplit("@", 1)[1] if "@" in path.split("/", 1)[-1] else ""
    return ref_pin(ref), ref


def python_spec(spec: str) -> tuple[str, str, str]:
    """(name, pin, version) of a pip requirement (`numpy==1.26.4`, `requests>=2`, `x @ git+https://…@v1`)."""
    spec = spec.split(";", 1)[0].strip()
    m = VCS.match(spec)
    if m:
        pin, ref = vcs_pin(m.group(3))
        name = m.group(1) or re.sub(
            r"\.git$", "", m.group(3).split("#", 1)[0].split("@")[0].rstrip("/").rsplit("/", 1)[-1]
        )
        return name, pin, ref
    if " @ " in spec or re.match(r"^[\w.-]+@\S+://", spec):
        name, _, url = spec.partition("@")
        pin, version, _moving = url_pin(url.strip())
        return name.strip(), pin, version
    m = PY_NAME.match(spec)
    if not m:
        return spec, "none", ""
    name, rest = m.group(1), m.group(3).replace(" ", "")
    exact = re.fullmatch(r"===?([^,*]+)", rest)
    if exact:
        return name, "exact", exact.group(1)
    return name, ("range" if rest and re.match(r"[<>=!~]", rest) else "none"), rest


def npm_spec(spec: str) -> tuple[str, str, str]:
    """(name, pin, version) of an npm/yarn/pnpm/npx spec (`left-pad@1.3.0`, `@scope/x@^2`, `github:u/r#ref`)."""
    if "#" in spec and ("github:" in spec or spec.startswith(("git", "http"))):
        base, _, ref = spec.partition("#")
        return base, ref_pin(ref), ref
    scope = spec.startswith("@")
    name, at, version = spec[1:].partition("@") if scope else spec.partition("@")
    name = ("@" + name) if scope else name
    if not at or not version or version in ("latest", "next"):
        return name, "none", version
    if SEMVER.match(version):
        return name, "exact", version
    return name, ("range" if re.search(r"[\^~<>*x|]|\s-\s", version) else "tag"), version


def at_spec(spec: str) -> tuple[str, str, str]:
    """(name, pin, version) of `name@version` as go, cargo and uvx write it (`mod@v1.2.3`, `ripgrep@14.1.0`)."""
    name, at, version = spec.partition("@")
    if not at or version in ("", "latest"):
        return name, "none", version
    if SEMVER.match(version):
        return name, "exact", version
    if HEX_REF.match(version):
        return name, "commit", version
    return name, ("range" if re.search(r"[\^~<>*]", version) else "branch"), version


def conda_spec(spec: str) -> tuple[str, str, str]:
    """(name, pin, version) of a conda spec: `==1.2` or `=1.2.3` exact (`=1.2` matches 1.2.*: a range)."""
    m = re.match(r"^([\w.-]+(?:::[\w.-]+)?)\s*(==|=|>=|<=|>|<|~=|!=)?\s*(\S*)$", spec)
    if not m or not m.group(2):
        return spec, "none", ""
    op, version = m.group(2), m.group(3)
    if op == "==" or (op == "=" and version.count(".") >= 2 and "*" not in version):
        return m.group(1), "exact", version
    return m.group(1), "range", version


def apt_spec(spec: str) -> tuple[str, str, str]:
    """(name, pin, version) of an apt package: `name=1.2-3` exact, `name=1.2*` a range, `name/release` a release."""
    name, eq, version = spec.partition("=")
    if eq and version:
        return name, ("range" if "*" in version else "exact"), version
    name, slash, release = spec.partition("/")
    return name, ("tag" if slash else "none"), release
