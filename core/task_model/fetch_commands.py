"""What one parsed shell command fetches from outside, manager by manager (apt, pip, uv, pipx, npm, yarn, pnpm,
cargo, go, conda, curl, wget, git, …): the reading core/task_model/fetches.py applies to every command it sees.

Each reader takes the command's words (a `sudo` / `env X=1` prefix dropped) and the variables in force where it
runs (`ENV`, `export`, the command's own `X=1`, `pip config set`), and returns one `Hit` per package, URL or
project install, with its pin and, when it needs nothing from outside, why (`--no-index`, a local wheel
directory, `--offline`, a vendored tree, an index on localhost).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from envqa.core.parsers.shell import Command
from envqa.core.task_model.fetch_specs import (
    URL,
    apt_spec,
    at_spec,
    conda_spec,
    is_local,
    npm_spec,
    python_spec,
    ref_pin,
    url_pin,
)

PIP_VALUE_OPTIONS = {
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url", "--extra-index-url",
    "--index", "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--src", "--python-version",
    "--platform", "--implementation", "--abi", "--trusted-host", "--cache-dir", "--progress-bar", "--log",
    "--timeout", "--retries", "--exists-action", "--proxy", "--cert", "--client-cert", "--upgrade-strategy",
    "--only-binary", "--no-binary", "-C", "--config-settings", "--global-option", "--use-feature", "--python",
    "-p", "--group", "--extra", "--from", "-w", "--with", "--with-requirements", "--directory", "--project",
    "--with-editable", "--spec", "--package",
}  # fmt: skip
APT_VALUE_OPTIONS = {"-o", "-t", "--target-release", "-c", "--config-file"}
NPM_VALUE_OPTIONS = {"--prefix", "--cache", "--registry", "-w", "--workspace", "--omit", "--loglevel", "--tag",
                     "-C", "--dir", "--filter", "--modules-folder", "--cache-folder", "-p", "--package"}  # fmt: skip
CONDA_VALUE_OPTIONS = {"-n", "--name", "-p", "--prefix", "-c", "--channel", "--file", "--solver", "--platform"}
CARGO_VALUE_OPTIONS = {"--version", "--vers", "--git", "--branch", "--tag", "--rev", "--path", "--root",
                       "--registry", "--index", "--target", "-j", "--jobs", "--features", "-F", "--profile"}  # fmt: skip
OFFLINE_FLAGS = {"--offline", "--no-index", "--no-install"}


@dataclass
class Hit:
    """One thing one command fetches (before core/task_model/fetches.py adds the phase, file and line)."""

    manager: str
    kind: str  # package | tool | project | url | repo | index
    target: str
    pin: str = "none"
    version: str = ""
    spec: str = ""  # as written on the command line
    offline: str = ""  # why it needs nothing from outside ("" = it does)
    moving: str = ""  # why what it names changes under the same name ("" = it does not)
    requirements: str = ""  # `-r FILE`: the file, for the builder to read


def positional(words: list[str], value_options: set[str]) -> list[str]:
    """The words that are not options nor option values (`-i URL`, `--index-url=URL`)."""
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
        elif w.startswith("-"):
            skip = w in value_options
        else:
            out.append(w)
    return out


def option_values(words: list[str], *names: str) -> list[str]:
    """Every value given to one of the options (`-f X`, `--find-links=X`)."""
    out = []
    for i, w in enumerate(words):
        for n in names:
            if w == n and i + 1 < len(words):
                out.append(words[i + 1])
            elif w.startswith(n + "=") and n.startswith("--"):
                out.append(w.split("=", 1)[1])
    return out


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() not in ("", "0", "false", "no", "off")


def python_offline(words: list[str], env: dict[str, str], tool: str) -> str:
    """Why a pip / uv install needs no index: `--no-index`, `--offline`, a local `--find-links` or index, the same
    said through PIP_* / UV_* variables or `pip config`. "" when it asks an index."""
    if "--no-index" in words or _truthy(env.get("PIP_NO_INDEX")) or _truthy(env.get("UV_NO_INDEX")):
        return "--no-index"
    if "--offline" in words or _truthy(env.get("UV_OFFLINE")):
        return "--offline"
    links = option_values(words, "-f", "--find-links") + [
        env[k] for k in ("PIP_FIND_LINKS", "UV_FIND_LINKS") if k in env
    ]
    local_links = [v for v in links if is_local(v)]
    indexes = option_values(words, "-i", "--index-url", "--index", "--extra-index-url")
    indexes += [env[k] for k in ("PIP_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX") if k in env]
    if indexes and all(is_local(v) for v in indexes):
        return f"an index of the task's own ({indexes[0]})"
    if local_links and tool == "pip":  # pip falls back on the local links when the index cannot be reached
        return f"--find-links to a local path ({local_links[0]})"
    return ""


def pip_words(cmd: Command) -> tuple[str, list[str]] | None:
    """(manager, arguments after the verb) of pip / python -m pip / uv pip install / uv add, else None."""
    w, name = cmd.words, cmd.name
    if re.fullmatch(r"python[\d.]*", name) and w[1:3] == ["-m", "pip"]:
        w, name = w[2:], "pip"
    if re.fullmatch(r"pip[\d.]*", name):
        rest = [x for x in w[1:] if x not in ("--quiet", "-q", "-qq", "--user")]
        return ("pip", rest[1:]) if rest[:1] == ["install"] else None
    if name == "uv" and w[1:3] == ["pip", "install"]:
        return "uv", w[3:]
    if name == "uv" and w[1:2] == ["add"]:
        return "uv", w[2:]
    return None


def read_pip(manager: str, args: list[str], env: dict[str, str]) -> list[Hit]:
    offline = python_offline(args, env, manager)
    out = [
        Hit(manager, "package", f"-r {f}", "unknown", spec=f, offline=offline, requirements=f)
        for f in option_values(args, "-r", "--requirement")
    ]
    for path in option_values(args, "-e", "--editable"):
        out.append(_python_target(manager, path, offline))
    for word in positional(args, PIP_VALUE_OPTIONS):
        out.append(_python_target(manager, word, offline))
    return out


def _python_target(manager: str, word: str, offline: str, kind: str = "package") -> Hit:
    if is_local(word):
        return Hit(manager, kind, word, "none", spec=word, offline=offline or f"a local path ({word})")
    name, pin, version = python_spec(word)
    moving = ""
    if word.startswith(("git+", "hg+")) or "@ git+" in word or re.search(r"@\s*git\+", word):
        moving = "a branch (a VCS requirement without @<tag or commit>)" if pin == "branch" and not version else ""
    elif URL.match(word):
        pin, version, moving = url_pin(word)
        name = word
    return Hit(manager, kind, name, pin, version, word, offline, moving)


def read_uv(cmd: Command, env: dict[str, str]) -> list[Hit]:
    """uvx / uv tool install|run / uv run / uv sync / uv python install."""
    w = cmd.words
    sub = w[1] if len(w) > 1 else ""
    if cmd.name == "uvx" or (sub == "tool" and w[2:3] in (["run"], ["install"])):
        args = w[1:] if cmd.name == "uvx" else w[3:]
        offline = python_offline(args, env, "uv")
        specs = option_values(args, "--from", "-w", "--with")
        first = positional(args, PIP_VALUE_OPTIONS)[:1]
        named = {python_spec(s)[0].lower() for s in specs}
        if not option_values(args, "--from") and first and at_spec(first[0])[0].lower() not in named:
            specs += first  # the tool itself, unless a --with spec already names (and pins) it
        return [_uv_tool(s, offline) for s in specs]
    if sub in ("run", "sync"):
        args = w[2:]
        offline = python_offline(args, env, "uv")
        if sub == "run" and {"--no-sync", "--no-project"} & set(args) and not option_values(args, "-w", "--with"):
            return []  # runs what is there (a script's inline `# /// script` needs are not read here)
        out = [Hit("uv", "project", "(the project)", "lock", spec=sub, offline=offline)]
        return out + [_uv_tool(s, offline) for s in option_values(args, "-w", "--with")]
    if sub == "python" and w[2:3] == ["install"]:
        versions = positional(w[3:], PIP_VALUE_OPTIONS) or [""]
        return [Hit("uv", "tool", f"python {v}".strip(), "exact" if v else "none", v, v) for v in versions]
    return []


def _uv_tool(spec: str, offline: str) -> Hit:
    if "@" in spec and "://" not in spec and "==" not in spec:
        name, pin, version = at_spec(spec)
        return Hit("uv", "tool", name, pin, version, spec, offline)
    return _python_target("uv", spec, offline, kind="tool")


def read_pipx(cmd: Command, env: dict[str, str]) -> list[Hit]:
    w = cmd.words
    if w[1:2] not in (["install"], ["run"], ["inject"]):
        return []
    args = w[2:]
    specs = option_values(args, "--spec") or positional(args, PIP_VALUE_OPTIONS)[: (1 if w[1] == "run" else None)]
    offline = python_offline(args, env, "pip")
    return [_python_target("pipx", s, offline, kind="tool") for s in specs]


def read_apt(cmd: Command, env: dict[str, str]) -> list[Hit]:
    words = cmd.words[1:]
    verbs = positional(words, APT_VALUE_OPTIONS)
    if not verbs:
        return []
    if verbs[0] == "update":
        return [Hit(cmd.name, "index", "(the package lists)", spec="update")]
    if verbs[0] not in ("install", "reinstall", "build-dep", "source"):
        return []
    out = []
    for word in verbs[1:]:
        if is_local(word):
            out.append(Hit(cmd.name, "package", word, spec=word, offline=f"a local package ({word})"))
            continue
        name, pin, version = apt_spec(word)
        out.append(Hit(cmd.name, "package", name, pin, version, word))
    return out


def read_os_packages(cmd: Command, env: dict[str, str]) -> list[Hit]:
    """apk add / yum, dnf install: named packages (`name=1.2` apk's exact pin)."""
    verb = "add" if cmd.name == "apk" else "install"
    verbs = positional(cmd.words[1:], {"-X", "--repository", "--setopt", "-c"})
    if verbs[:1] != [verb]:
        return []
    offline = "--no-network" if "--no-network" in cmd.words else ""
    out = []
    for word in verbs[1:]:
        name, pin, version = apt_spec(word) if cmd.name == "apk" else (word, "none", "")
        out.append(
            Hit(cmd.name, "package", name, pin, version, word, offline or ("a local package" if is_local(word) else ""))
        )
    return out


def read_js(cmd: Command, env: dict[str, str]) -> list[Hit]:
    """npm install|i|ci|add, yarn [global] add|install, pnpm add|install|i, npx."""
    w = cmd.words
    manager = cmd.name
    args = w[1:]
    if manager == "npx":
        offline = "--offline" if {"--offline", "--no-install"} & set(args) else ""
        specs = option_values(args, "-p", "--package") or positional(args, NPM_VALUE_OPTIONS)[:1]
        return [_js_target("npm", s, offline, "tool") for s in specs]
    if manager == "yarn" and args[:1] == ["global"]:
        args = args[1:]
    verbs = positional(args, NPM_VALUE_OPTIONS)
    verb = verbs[0] if verbs else ("install" if manager == "yarn" else "")
    if verb not in ("install", "i", "ci", "add", "install-test", "it"):
        return []
    registry = option_values(args, "--registry") + [v for k, v in env.items() if k.lower() in ("npm_config_registry",)]
    offline = "--offline" if "--offline" in args or _truthy(env.get("npm_config_offline")) else ""
    if not offline and registry and all(is_local(r) for r in registry):
        offline = f"a registry of the task's own ({registry[0]})"
    specs = verbs[1:]
    if not specs:
        frozen = verb == "ci" or {"--frozen-lockfile", "--immutable", "--frozen"} & set(args)
        return [Hit(manager, "project", "(package.json)", "lock" if frozen else "range", spec=verb, offline=offline)]
    return [_js_target(manager, s, offline, "package") for s in specs]


def _js_target(manager: str, spec: str, offline: str, kind: str) -> Hit:
    if is_local(spec) or spec.startswith("file:"):
        return Hit(manager, kind, spec, spec=spec, offline=offline or f"a local path ({spec})")
    name, pin, version = npm_spec(spec)
    return Hit(manager, kind, name, pin, version, spec, offline)


def read_cargo(cmd: Command, env: dict[str, str]) -> list[Hit]:
    w = cmd.words[1:]
    if w[:1] != ["install"]:
        return []
    args = w[1:]
    offline = "--offline" if {"--offline", "--frozen"} & set(args) or _truthy(env.get("CARGO_NET_OFFLINE")) else ""
    paths = option_values(args, "--path")
    if paths:
        return [Hit("cargo", "tool", paths[0], spec=paths[0], offline=f"a local path ({paths[0]})")]
    gits = option_values(args, "--git")
    if gits:
        ref = (option_values(args, "--rev") + option_values(args, "--tag") + option_values(args, "--branch") + [""])[0]
        pin = "commit" if option_values(args, "--rev") else ref_pin(ref) if ref else "branch"
        return [Hit("cargo", "tool", gits[0], pin, ref, gits[0], offline)]
    version = (option_values(args, "--version", "--vers") + [""])[0]
    out = []
    for spec in positional(args, CARGO_VALUE_OPTIONS):
        name, pin, v = at_spec(spec)
        if version:
            pin, v = ("exact" if re.fullmatch(r"=?\d+(\.\d+)*", version) else "range"), version.lstrip("=")
        out.append(Hit("cargo", "tool", name, pin, v, spec, offline))
    return out


def read_go(cmd: Command, env: dict[str, str]) -> list[Hit]:
    w = cmd.words[1:]
    if w[:1] not in (["install"], ["get"]) and w[:2] != ["mod", "download"]:
        return []
    flags = env.get("GOFLAGS", "") + " " + " ".join(w)
    offline = ""
    if "-mod=vendor" in flags:
        offline = "-mod=vendor (a vendored tree)"
    elif env.get("GOPROXY", "").strip() == "off":
        offline = "GOPROXY=off"
    elif env.get("GOPROXY") and all(is_local(p) for p in env["GOPROXY"].split(",") if p not in ("direct", "off")):
        offline = f"a module proxy of the task's own ({env['GOPROXY']})"
    if w[:2] == ["mod", "download"]:
        return [Hit("go", "project", "(go.mod)", "lock", spec="mod download", offline=offline)]
    out = []
    for spec in positional(w[1:], {"-o", "-tags", "-ldflags", "-gcflags", "-mod", "-modfile"}):
        if is_local(spec):
            continue
        name, pin, version = at_spec(spec)
        out.append(Hit("go", "tool", name, pin, version, spec, offline))
    return out


def read_conda(cmd: Command, env: dict[str, str]) -> list[Hit]:
    w = cmd.words[1:]
    if w[:2] == ["env", "create"]:
        w = ["create"] + w[2:]
    if w[:1] not in (["install"], ["create"]):
        return []
    args = w[1:]
    channels = option_values(args, "-c", "--channel")
    offline = "--offline" if "--offline" in args else "--use-local" if "--use-local" in args else ""
    if not offline and channels and all(is_local(c) for c in channels) and "--override-channels" in args:
        offline = f"a local channel ({channels[0]})"
    out = [
        Hit(cmd.name, "package", f"--file {f}", "unknown", spec=f, offline=offline)
        for f in option_values(args, "--file", "-f")
    ]
    for spec in positional(args, CONDA_VALUE_OPTIONS | {"-f"}):
        if is_local(spec):
            out.append(Hit(cmd.name, "package", spec, spec=spec, offline=f"a local package ({spec})"))
            continue
        name, pin, version = conda_spec(spec)
        out.append(Hit(cmd.name, "package", name, pin, version, spec, offline))
    return out


def read_download(cmd: Command, env: dict[str, str]) -> list[Hit]:
    """curl / wget / aria2c / yt-dlp: every URL it names (a local one is the task's own service)."""
    video = cmd.name in ("yt-dlp", "youtube-dl")
    out = []
    for word in cmd.words[1:]:
        if not URL.match(word):
            continue
        if is_local(word):
            out.append(Hit(cmd.name, "url", word, "url", spec=word, offline=f"a local address ({word})"))
            continue
        pin, version, moving = url_pin(word)
        if video and not moving:
            pin, moving = "none", "a video page"
        out.append(Hit(cmd.name, "url", word, pin, version, word, moving=moving))
    return out


READERS: dict[str, Callable[[Command, dict[str, str]], list[Hit]]] = {
    **dict.fromkeys(("apt-get", "apt", "aptitude"), read_apt),
    **dict.fromkeys(("apk", "yum", "dnf"), read_os_packages),
    **dict.fromkeys(("npm", "yarn", "pnpm", "npx"), read_js),
    **dict.fromkeys(("conda", "mamba", "micromamba"), read_conda),
    **dict.fromkeys(("curl", "wget", "aria2c", "yt-dlp", "youtube-dl"), read_download),
    "uv": read_uv,
    "uvx": read_uv,
    "pipx": read_pipx,
    "cargo": read_cargo,
    "go": read_go,
}


def unwrap(cmd: Command) -> tuple[Command, dict[str, str]]:
    """The command under `sudo` / `env X=1 …` / `time`, with the assignments it carries."""
    words, assigned = list(cmd.words), dict(a.split("=", 1) for a in cmd.assignments if "=" in a)
    while words and words[0].rsplit("/", 1)[-1] in ("sudo", "env", "time", "nice", "nohup"):
        words = words[1:]
        while words and (words[0].startswith("-") or re.match(r"^[A-Za-z_]\w*=", words[0])):
            if "=" in words[0] and not words[0].startswith("-"):
                k, _, v = words[0].partition("=")
                assigned[k] = v
            words = words[1:]
    inner = Command(words, cmd.line, cmd.text, cmd.assignments, cmd.redirects, cmd.reachable, cmd.conditional)
    return inner, assigned


def hits_of(cmd: Command, env: dict[str, str]) -> list[Hit]:
    """What the command fetches (git clone is read by the caller, which sees the commands around it)."""
    inner, assigned = unwrap(cmd)
    scope = {**env, **assigned}
    pip = pip_words(inner)
    if pip is not None:
        return read_pip(pip[0], pip[1], scope)
    reader = READERS.get(inner.name)
    return reader(inner, scope) if reader is not None and inner.words else []
