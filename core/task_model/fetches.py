"""One model of what a task needs from outside: every fetch its Dockerfile, solve.sh and test.sh make, read once.

Why one model: the network and pin rules (apt-version-pinned, unpinned-python-dependency,
download-of-moving-target, verifier-installs-at-runtime, the inconclusive `verifier-needs-network`) each parsed
commands their own way, and disagreed: `pip install --no-index --find-links /opt/wheels` was a runtime install
for one and nothing for another. Now each is a query over `model_of(env).fetches`, a list of `Fetch` records
(manager, phase, file:line, package or URL, pin, whether and why it is offline), built from the Dockerfile's
spans (core/parsers/dockerfile.py `run_script`), the solution's and the verifier's scripts (core/parsers/shell.py)
and the requirement files they name. What one command fetches is read in core/task_model/fetch_commands.py.

The variables in force are followed: a Dockerfile `ENV PIP_NO_INDEX=1`, a `pip.conf` it copies in, an `export` or
`pip config set global.index-url http://localhost:…` earlier in the script make the installs after them offline.
"""

from __future__ import annotations

import configparser
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, Protocol

from envqa.core.environment import Environment
from envqa.core.input_files import InputFileError, read_text
from envqa.core.parsers.dockerfile import Span, assignments, run_script
from envqa.core.parsers.shell import Command, parse_script
from envqa.core.task_model.fetch_commands import Hit, hits_of, positional
from envqa.core.task_model.fetch_specs import URL, is_local, python_spec, ref_pin, url_pin

Phase = Literal["build", "solution", "verifier"]
SNAPSHOT_ARCHIVE = re.compile(r"snapshot\.(debian\.org|ubuntu\.com)")
PIP_CONFIG = {"index-url": "PIP_INDEX_URL", "no-index": "PIP_NO_INDEX", "find-links": "PIP_FIND_LINKS"}
APT = ("apt", "apt-get", "aptitude")


@dataclass(frozen=True)
class Fetch:
    """One thing a task fetches from outside (or would, but for the `offline` reason)."""

    manager: str  # apt-get, pip, uv, pipx, npm, yarn, pnpm, cargo, go, conda, curl, wget, git, docker-add, ...
    kind: str  # package | tool | project | url | repo | index
    phase: Phase
    file: str  # relative to the task's root, as findings name it
    line: int  # 1-based
    target: str  # the package's name, the URL, or "(the project)" for a lock-file install
    pin: str  # exact | digest | commit | tag | branch | range | lock | url | none | unknown
    version: str = ""
    spec: str = ""  # as written
    offline: bool = False
    offline_reason: str = ""
    moving: str = ""  # why what it names changes under the same name
    durable: str = ""  # why an exact pin stays installable (an apt snapshot archive)
    text: str = ""  # the source line, for evidence
    via: str = ""  # a requirement file's entry: the command that reads the file (file:line)

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def evidence(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"


@dataclass(frozen=True)
class Pin:
    """An exact apt or pip version a task installs (for `qa lint --online`: does that version still exist?)."""

    manager: str  # "apt" or "pip"
    name: str
    version: str
    file: str
    line: int


class WithFetches(Protocol):
    """A TaskModel, as pinned_packages sees it (model.py imports this module, so not the class itself)."""

    @property
    def fetches(self) -> list[Fetch]: ...


def pinned_packages(model: WithFetches) -> list[Pin]:
    """The exact apt and pip versions `model` (`model_of(env)`) installs, one per package and place."""
    out = []
    for f in model.fetches:
        manager = "apt" if f.manager in APT else "pip" if f.manager in ("pip", "uv") else ""
        if manager and f.pin == "exact" and f.kind == "package" and f.version:
            name = f.target.split(":", 1)[0] if manager == "apt" else f.target  # libssl3:amd64 is libssl3's
            out.append(Pin(manager, name, f.version, f.file, f.line))
    return list(dict.fromkeys(out))


def needs_network(fetches: list[Fetch], phase: Phase) -> list[Fetch]:
    """The fetches of one phase that reach outside the task."""
    return [f for f in fetches if f.phase == phase and not f.offline]


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _text(path: Path) -> str | None:
    try:
        return read_text(path, strict=False) if path.is_file() else None
    except InputFileError:
        return None


class _Reader:
    """Reads one task's fetches: the scopes of variables, the files a command names, the order of phases."""

    def __init__(self, env: Environment):
        self.env = env
        self.out: list[Fetch] = []
        self.read_requirements: set[Path] = set()

    def roots(self, phase: Phase) -> list[Path]:
        """Where a file a command names may be found in the task (its build context, its tests, its solution)."""
        copies = self.env.tests if phase == "verifier" else self.env.solution if phase == "solution" else []
        return [c.source if c.source.is_dir() else c.source.parent for c in copies] + [self.env.build_context]

    def find(self, name: str, phase: Phase) -> Path | None:
        tail = Path(name.lstrip("/"))
        for root in self.roots(phase):
            for candidate in (root / name, root / tail, root / tail.name):
                if candidate.is_file():
                    return candidate
        return None

    def add(self, hits: list[Hit], cmd: Command, phase: Phase, file: str, text: str) -> None:
        durable = "a snapshot archive" if SNAPSHOT_ARCHIVE.search(text) else ""
        for h in hits:
            fetch = Fetch(
                h.manager, h.kind, phase, file, cmd.line, h.target, h.pin, h.version, h.spec, bool(h.offline),
                h.offline, h.moving, durable if h.manager in APT else "", cmd.text,
            )  # fmt: skip
            if h.requirements:
                self.requirements(h, fetch)
            else:
                self.out.append(fetch)

    def requirements(self, hit: Hit, command: Fetch, depth: int = 0) -> None:
        """Each entry of a `-r FILE` the task ships, as a fetch at its own line; the file unread: one `unknown`."""
        path = self.find(hit.requirements, command.phase)
        text = _text(path) if path is not None else None
        if path is None or text is None or depth > 2:
            self.out.append(command)
            return
        self.read_requirements.add(path.resolve())
        self.entries(path, text, command, depth)

    def entries(self, path: Path, text: str, command: Fetch, depth: int) -> None:
        rel = _rel(self.env.root, path)
        for n, raw in enumerate(text.splitlines(), start=1):
            line = raw.split(" #", 1)[0].strip()
            if not line or line.startswith("#"):
                continue
            words = line.split()
            if words[0] in ("-r", "--requirement") and len(words) > 1:
                nested = Hit(command.manager, "package", "", requirements=words[1])
                self.requirements(nested, replace(command, file=rel, line=n, text=line), depth + 1)
                continue
            if line.startswith("-"):
                continue
            name, pin, version = ("", "none", "") if is_local(words[0]) else python_spec(line.split(" --", 1)[0])
            if "--hash=" in line:
                pin = "digest"
            offline = command.offline_reason or (f"a local path ({words[0]})" if is_local(words[0]) else "")
            self.out.append(
                replace(
                    command, file=rel, line=n, target=name or words[0], pin=pin, version=version, spec=line,
                    offline=bool(offline), offline_reason=offline, text=line, via=command.location,
                )
            )  # fmt: skip

    def script(self, cmds: list[Command], phase: Phase, file: str, text: str, scope: dict[str, str]) -> None:
        """The reachable commands of one script (or one RUN), in order, the variables they set carried along."""
        for i, cmd in enumerate(cmds):
            if not cmd.reachable:
                continue
            _set_variables(cmd, scope)
            if cmd.name == "git" and "clone" in cmd.words[1:3]:
                self.add(_clone(cmd, cmds[:i], cmds[i + 1 :]), cmd, phase, file, text)
            else:
                self.add(hits_of(cmd, dict(scope)), cmd, phase, file, text)


def _set_variables(cmd: Command, scope: dict[str, str]) -> None:
    """`X=1` alone, `export X=1`, `pip config set global.index-url URL`: what the commands after it see."""
    words = cmd.words
    if not words:
        scope.update(dict(a.split("=", 1) for a in cmd.assignments if "=" in a))
    elif cmd.name in ("export", "declare", "readonly"):
        scope.update(dict(w.split("=", 1) for w in words[1:] if re.match(r"^[A-Za-z_]\w*=", w)))
    elif re.fullmatch(r"pip[\d.]*", cmd.name) and words[1:3] == ["config", "set"] and len(words) >= 5:
        key = PIP_CONFIG.get(words[3].split(".", 1)[-1])
        if key:
            scope[key] = words[4]


def _clone(cmd: Command, earlier: list[Command], later: list[Command]) -> list[Hit]:
    """A git clone: pinned by `--branch <tag>` (`$V` resolved from an earlier assignment) or a later checkout."""
    urls = [w for w in cmd.words[2:] if URL.match(w) or w.startswith("git@")]
    if not urls:
        return []
    url = urls[0]
    if is_local(url):
        return [Hit("git", "repo", url, "url", spec=url, offline=f"a local repository ({url})")]
    values: dict[str, str] = {}
    for c in earlier:
        _set_variables(c, values)
    ref = ""
    words = cmd.words
    for i, w in enumerate(words):
        if w in ("-b", "--branch") and i + 1 < len(words):
            ref = words[i + 1]
        elif w.startswith("--branch="):
            ref = w.split("=", 1)[1]
    ref = re.sub(r"\$\{?(\w+)\}?", lambda m: values.get(m.group(1), m.group(0)), ref)
    pin = ref_pin(ref) if ref else "branch"
    if pin == "branch":
        checkout = [
            c for c in later if c.name == "git" and any(v in ("checkout", "reset", "switch") for v in c.words[1:4])
        ]
        refs = [positional(c.words[2:], {"-b", "-B", "-C"}) for c in checkout if len(c.words) > 2]
        if checkout and len(checkout[0].words) > 2:
            ref = (refs[0] + [""])[0] if refs else ""
            pin = ref_pin(ref) if ref and ref_pin(ref) != "branch" else "tag"
    moving = "a branch (the clone takes whatever its head is that day)" if pin == "branch" else ""
    return [Hit("git", "repo", url, pin, ref, url, moving=moving)]


def _pip_conf(text: str) -> dict[str, str]:
    parser = configparser.ConfigParser()
    try:
        parser.read_string(text)
    except configparser.Error:
        return {}
    out = {}
    for section in ("global", "install"):
        for key, var in PIP_CONFIG.items():
            if parser.has_option(section, key):
                out[var] = parser.get(section, key)
    return out


def _dockerfile(reader: _Reader, spans: list[Span], env: Environment) -> dict[str, str]:
    """The build's fetches; returns the variables the final image carries (its ENV and a pip.conf it copies)."""
    if not env.dockerfile.is_file():
        return {}
    file, text = _rel(env.root, env.dockerfile), _text(env.dockerfile) or ""
    lines, stage = text.split("\n"), -1
    scope: dict[str, str] = {}
    for span in spans:
        if span.stage != stage:
            stage, scope = span.stage, {}
        if span.keyword == "ENV":
            scope.update(assignments(span.resolved or span.value))
        elif span.keyword in ("COPY", "ADD"):
            _copy_or_add(reader, span, env, scope, file, lines)
        elif span.keyword == "RUN":
            script = span.resolved if span.heredoc is not None else run_script(span.resolved or span.value)
            shift = span.start + 1 if span.heredoc is not None else span.start
            cmds = parse_script(script)
            for c in cmds:
                c.line += shift
                c.text = lines[c.line - 1].strip() if 0 < c.line <= len(lines) else c.text
            reader.script(cmds, "build", file, text, scope)
    return scope


def _copy_or_add(reader: _Reader, span: Span, env: Environment, scope: dict[str, str], file: str, lines: list[str]):
    flags, args = span.flags_and_args()
    if span.keyword == "ADD":
        for url in [a for a in args[:-1] if URL.match(a)]:
            pin, version, moving = url_pin(url)
            if flags.get("checksum"):
                pin, version = "digest", flags["checksum"]
            offline = f"a local address ({url})" if is_local(url) else ""
            cmd = Command([], span.start + 1, lines[span.start].strip() if span.start < len(lines) else span.value)
            reader.add([Hit("docker-add", "url", url, pin, version, url, offline, moving)], cmd, "build", file, "")
    if "from" not in flags:
        for src in args[:-1]:
            if Path(src).name in ("pip.conf", "pip.ini"):
                conf = _text(env.build_context / src)
                scope.update(_pip_conf(conf) if conf else {})


def read_fetches(
    env: Environment, spans: list[Span], test_sh: list[Command], test_file: tuple[str, str] | None
) -> list[Fetch]:
    """Every fetch of the task, build first, then the solution, then the verifier (see the module docstring)."""
    reader = _Reader(env)
    image = _dockerfile(reader, spans, env)
    for copy in env.solution:
        path = copy.source / "solve.sh" if copy.source.is_dir() else copy.source
        text = _text(path) if path.suffix == ".sh" else None
        if text is not None:
            reader.script(parse_script(text), "solution", _rel(env.root, path), text, dict(image))
    if test_file is not None:  # (its path as findings name it, its text)
        reader.script(test_sh, "verifier", test_file[0], test_file[1], dict(image))
    _unread_requirements(reader, env)
    return list(dict.fromkeys(reader.out))


def _unread_requirements(reader: _Reader, env: Environment) -> None:
    """requirements*.txt beside the Dockerfile that no command was seen reading (copied and installed through a
    variable, a script, a glob): still what the build installs, at the build."""
    for path in sorted(env.build_context.glob("requirements*.txt")):
        text = _text(path)
        if path.resolve() in reader.read_requirements or text is None:
            continue
        command = Fetch("pip", "package", "build", _rel(env.root, path), 1, "", "none")
        reader.entries(path, text, command, 0)
