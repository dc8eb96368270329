"""Drift and infrastructure: what breaks a task when the world moves on, or when it runs under its own limits.

apt-version-pinned             (brittleness, warning) `apt-get install pkg=1.2.3-4` in the Dockerfile, solve.sh or
                               test.sh. Debian and Ubuntu archives keep only a package's current version, so the
                               exact one disappears at the next archive update and the install fails (Terminal-Bench
                               2.1 dropped such pins from three 2.0 reference solutions). Quiet for a wildcard
                               version (`=1.2.*`) and when the same file points apt at a snapshot archive
                               (snapshot.debian.org / snapshot.ubuntu.com), which keeps every version. pip `==`
                               pins are not this rule: PyPI keeps every release, so a pin there is the cure.
download-of-moving-target      (brittleness, warning) a fetch at build, solve or verify time of something that
                               changes or disappears under the same URL: a branch (git clone without a tag or a
                               later checkout; raw files or archives of main/master/HEAD), a `latest` release, a
                               video page (YouTube and the like, which also rate-limit and block), or such a URL the
                               instruction sends the agent to. A versioned release URL is the look-alike. In the
                               Dockerfile of a task that names a prebuilt `docker_image` it is info: the drift
                               waits for the next rebuild.
parallel-build-over-cpu-limit  (brittleness, warning) make / ninja / cmake --build with more jobs than task.toml's
                               `cpus`, in solve.sh or test.sh (which run under the task's limits): `-j$(nproc)`
                               counts the host's cores, not the container's CPU quota (Terminal-Bench 2.1 ships an
                               nproc wrapper in caffe-cifar-10 "to avoid OOM when using make -j$(nproc)"), a bare
                               `-j` has no bound, and `-j4` under `cpus = 1` runs four compilers in one CPU's
                               memory. Quiet in a Dockerfile (image builds are not under the task's limits) and
                               when the image replaces nproc with a fixed count no larger than `cpus`.
"""

from __future__ import annotations

import re
from pathlib import Path

from envqa.core.environment import Environment
from envqa.core.models import Finding, Severity
from envqa.core.parsers.dockerfile import parse_dockerfile
from envqa.core.parsers.pip import pip_args
from envqa.core.parsers.shell import Command, parse_script
from envqa.probes.static.task_files import rel, test_script

APT = {"apt-get", "apt", "aptitude"}
APT_VALUE_OPTIONS = {"-o", "-t", "--target-release", "-c", "--config-file"}
APT_PIN = re.compile(r"^([a-z0-9][a-z0-9+.-]*(?::[a-z0-9-]+)?)=([0-9][^=*\s]*)$")
SNAPSHOT_ARCHIVE = re.compile(r"snapshot\.(debian\.org|ubuntu\.com)")
URL = re.compile(r"https?://[^\s\"'<>`)\]]+")
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
LOCAL_HOST = re.compile(r"https?://(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])([:/]|$)", re.I)
VCS_REQUIREMENT = re.compile(r"^(?:[\w.-]+\s*@\s*)?git\+(https?|ssh|git)://")
VIDEO_TOOLS = {"yt-dlp", "youtube-dl"}
BUILD_TOOLS = {"make", "gmake", "ninja", "cmake"}
NPROC = re.compile(r"\$\(\s*nproc\s*\)|`\s*nproc\s*`|\$\(\s*getconf\s+_NPROCESSORS_ONLN\s*\)")
NPROC_WRAPPER = re.compile(r"echo\s+(\d+)[^>]*>\s*(/usr/local/bin|/usr/bin|/bin)/nproc\b")


def _scripts(env: Environment) -> list[tuple[str, Path]]:
    """The shell scripts that run in the container: solve.sh (solve time) and the verifier's (verify time)."""
    out = []
    for copy in env.solution:
        path = copy.source / "solve.sh" if copy.source.is_dir() else copy.source
        if path.is_file() and path.suffix == ".sh":
            out.append(("solve", path))
    script = test_script(env)
    if script is not None:
        out.append(("verify", script))
    return out


def _commands(env: Environment) -> list[tuple[str, str, str, list[Command]]]:
    """(phase, file as findings name it, its text, its reachable commands) for the Dockerfile and the scripts."""
    out = []
    if env.dockerfile.is_file():
        text = env.dockerfile.read_text(errors="replace")
        cmds = [c for _s, c in parse_dockerfile(env.dockerfile).run_commands() if c.reachable]
        out.append(("build", rel(env, env.dockerfile), text, cmds))
    for phase, path in _scripts(env):
        text = path.read_text(errors="replace")
        out.append((phase, rel(env, path), text, [c for c in parse_script(text) if c.reachable]))
    return out


def _apt_pins(cmd: Command) -> list[str]:
    words = [w for w in cmd.words[1:] if w]
    if cmd.name not in APT or "install" not in words:
        return []
    pins, skip = [], False
    for word in words[words.index("install") + 1 :]:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in APT_VALUE_OPTIONS
        elif APT_PIN.match(word):
            pins.append(word)
    return pins


def apt_pin_findings(env: Environment) -> list[Finding]:
    """One finding per pinned package (a fix that drops one pin of three leaves two findings, not a new one)."""
    out = []
    for _phase, where, text, cmds in _commands(env):
        if SNAPSHOT_ARCHIVE.search(text):
            continue
        for cmd in cmds:
            for pin in _apt_pins(cmd):
                name = pin.split("=")[0]
                out.append(
                    Finding.of(
                        "apt-version-pinned",
                        remedy_fields={"name": name},
                        message=f"{where} installs the exact apt version {pin}: the archive keeps only the current "
                        f"version of {name}, so this install fails once the package is updated",
                        evidence=[cmd.evidence(where)],
                        location=f"{where}:{cmd.line}",
                    )
                )
    return out


def moving_reason(url: str) -> str | None:
    """Why what the URL names changes under it (None: a fixed target, or a service of the task's own)."""
    if LOCAL_HOST.match(url):
        return None
    for pattern, reason in MOVING:
        if pattern.search(url):
            return reason
    return None


def _assigned(cmds: list[Command]) -> dict[str, str]:
    """Shell variables the commands assign (`V=1.2`, `export V=1.2`), for a ref written as `$V`."""
    values = {}
    for cmd in cmds:
        words = cmd.assignments + (cmd.words[1:] if cmd.name in ("export", "readonly", "declare") else [])
        for word in words:
            name, eq, value = word.partition("=")
            if eq and re.fullmatch(r"[A-Za-z_]\w*", name):
                values[name] = value
    return values


def _clone_pinned(cmd: Command, earlier: list[Command], later: list[Command]) -> bool:
    """A clone is pinned by `--branch <tag>` (a ref with a digit, `$V` resolved from an earlier assignment) or by
    a later checkout / reset / switch in the same script."""
    words, values = cmd.words, _assigned(earlier)
    for i, w in enumerate(words):
        ref = words[i + 1] if w in ("-b", "--branch") and i + 1 < len(words) else None
        ref = w.split("=", 1)[1] if w.startswith("--branch=") else ref
        if ref is not None:
            ref = re.sub(r"\$\{?(\w+)\}?", lambda m: values.get(m.group(1), m.group(0)), ref)
            if re.search(r"\d", ref):
                return True
    return any(
        c.name == "git" and any(v in ("checkout", "reset", "switch") for v in c.words[1:4]) and len(c.words) > 2
        for c in later
    )


def _fetches(cmds: list[Command]) -> list[tuple[Command, str, str]]:
    """(command, URL, why it moves) for each fetch of a moving target among the commands."""
    out = []
    for i, cmd in enumerate(cmds):
        urls = [m.group(0) for w in cmd.words for m in [URL.match(w)] if m]
        if cmd.name == "git" and "clone" in cmd.words[1:3] and urls:
            if not _clone_pinned(cmd, cmds[:i], cmds[i + 1 :]):
                out.append((cmd, urls[0], "a branch (the clone takes whatever its head is that day)"))
            continue
        if cmd.name in VIDEO_TOOLS or cmd.name in ("curl", "wget", "aria2c") or cmd.name.startswith("pip"):
            for url in urls:
                reason = moving_reason(url) or ("a video page" if cmd.name in VIDEO_TOOLS else None)
                if reason:
                    out.append((cmd, url, reason))
        if pip_args(cmd) is not None:
            for word in cmd.words:
                if VCS_REQUIREMENT.match(word) and "@" not in word.split("://", 1)[1]:
                    out.append((cmd, word, "a branch (a VCS requirement without @<tag or commit>)"))
    return out


def _add_urls(env: Environment) -> list[tuple[int, str, str]]:
    """Dockerfile `ADD <url>` lines that fetch a moving target: (line, text, URL)."""
    out = []
    for stage in parse_dockerfile(env.dockerfile).stages:
        for ins in stage.instructions:
            if ins.instruction == "ADD":
                for m in URL.finditer(ins.value):
                    if moving_reason(m.group(0)):
                        out.append((ins.line, ins.raw.strip() or ins.value, m.group(0)))
    return out


def _download_finding(phase: str, where: str, line: int, text: str, url: str, reason: str, prebuilt: bool) -> Finding:
    when = {"build": "at image build", "solve": "when the reference solution runs", "verify": "at every verify"}
    quiet = phase == "build" and prebuilt
    return Finding.of(
        "download-of-moving-target",
        severity=Severity.INFO if quiet else None,
        message=f"{where} fetches {url} {when[phase]}: {reason}, so what it gets changes or disappears under "
        "the same URL" + (" (the task names a prebuilt image: this bites at the next rebuild)" if quiet else ""),
        evidence=[f"{where}:{line}: {text}"],
        location=f"{where}:{line}",
    )


def download_findings(env: Environment) -> list[Finding]:
    prebuilt = bool(env.config.environment.docker_image)
    out = []
    for phase, where, _text, cmds in _commands(env):
        for cmd, url, reason in _fetches(cmds):
            out.append(_download_finding(phase, where, cmd.line, cmd.text, url, reason, prebuilt))
    if env.dockerfile.is_file():
        where = rel(env, env.dockerfile)
        for line, text, url in _add_urls(env):
            out.append(_download_finding("build", where, line, text, url, moving_reason(url) or "", prebuilt))
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
                out.append(
                    Finding.of(
                        "download-of-moving-target",
                        message=f"the instruction sends the agent to {url}, {reason}: the task depends on an "
                        "outside resource it does not ship, which can change, vanish or block the agent",
                        evidence=[f"instruction.md:{n}: {line.strip()[:200]}"],
                        location=f"instruction.md:{n}",
                    )
                )
    return out


def _jobs(cmd: Command) -> str | None:
    """The parallel job count a build command asks for: a number, 'nproc', 'unbounded', or None (serial)."""
    if cmd.name not in BUILD_TOOLS or (cmd.name == "cmake" and "--build" not in cmd.words):
        return None
    words = cmd.words[1:]
    for i, w in enumerate(words):
        value = None
        if w in ("-j", "--jobs", "--parallel"):
            nxt = words[i + 1] if i + 1 < len(words) else ""
            value = nxt if re.fullmatch(r"\d+|.*nproc.*", nxt) else "unbounded"
        elif m := re.fullmatch(r"(?:-j|--jobs=|--parallel=)(.+)", w):
            value = m.group(1)
        if value is not None:
            if value == "unbounded":
                return value
            return "nproc" if "nproc" in value or "NPROCESSORS" in value else (value if value.isdigit() else None)
    return None


def _nproc_cap(env: Environment) -> int | None:
    """The count an nproc wrapper the Dockerfile installs reports (None: no wrapper)."""
    if not env.dockerfile.is_file():
        return None
    m = NPROC_WRAPPER.search(env.dockerfile.read_text(errors="replace"))
    return int(m.group(1)) if m else None


def parallel_build_findings(env: Environment) -> list[Finding]:
    cpus = env.config.environment.cpus
    memory = env.config.environment.memory_mb
    cap = _nproc_cap(env)
    out = []
    for phase, where, _text, cmds in _commands(env):
        if phase == "build":
            continue  # image builds are not under the task's limits
        for cmd in cmds:
            jobs = _jobs(cmd)
            if jobs is None:
                continue
            if jobs == "nproc" and (cap is not None and cap <= cpus):
                continue
            if jobs not in ("nproc", "unbounded") and int(jobs) <= cpus:
                continue
            asked = {
                "nproc": "as many jobs as the host has cores (nproc does not see the CPU quota)",
                "unbounded": "an unbounded number of jobs",
            }.get(jobs, f"{jobs} jobs")
            out.append(
                Finding.of(
                    "parallel-build-over-cpu-limit",
                    remedy_fields={"jobs": str(max(int(cpus), 1))},
                    message=f"{where} builds with {asked} under the task's {cpus:g} CPU / {memory} MB limit: the "
                    "compilers share that memory and CPU, so the build can be killed for memory or run out of time",
                    evidence=[cmd.evidence(where), f"task.toml: cpus = {cpus:g}, memory_mb = {memory}"],
                    location=f"{where}:{cmd.line}",
                )
            )
    return out


def drift_findings(env: Environment) -> list[Finding]:
    """Every drift and infrastructure rule above; static_findings (probes/static/findings.py) calls it."""
    return apt_pin_findings(env) + download_findings(env) + parallel_build_findings(env)
