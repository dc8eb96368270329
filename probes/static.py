"""Static checks over an environment's files (no image): what `qa lint` reports besides structure.

Rules (ids are stable; each finding carries file:line, why it matters and a fix):
  reward-not-written-on-failure   test.sh writes a reward only when the tests pass
  reward-written-unconditionally  test.sh writes a success reward whatever the tests said
  verifier-installs-at-runtime    test.sh installs or downloads things when it runs
  unpinned-python-dependency      pip installs without a pinned version
  compose-privileged              a docker-compose service runs privileged
  compose-writable-bind-mount     a host directory is mounted writable (or from outside the task)
  root-agent (opt-in)             the agent runs as root
  unpinned-base-image (opt-in)    FROM without a tag or with :latest
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from envqa.environment import Environment
from envqa.models import Finding, Label, Severity
from envqa.probes.base import ProbeContext, register_probe

REWARD_WRITE = re.compile(r"(>>?|\btee\b(\s+-a)?)\s*[\"']?\S*reward\.(txt|json)")
SUCCESS_VALUE = re.compile(r"""^\s*(echo|printf)\s+(-n\s+)?["']?(1|1\.0+|\{\s*\\?"reward\\?"\s*:\s*1(\.0+)?\s*\})["']?\s*(>|\|)""")
RUNTIME_FETCH = re.compile(r"\b(pip3?\s+install|uv\s+pip\s+install|uv\s+add|uvx|apt(-get)?\s+(-\S+\s+)*install|"
                           r"curl\s|wget\s|git\s+clone|npm\s+(install|i)\b|cargo\s+install|go\s+(get|install))")
SEGMENT = re.compile(r"&&|\|\||;|\bthen\b|\belse\b|\bdo\b")
PIP_INSTALL = re.compile(r"\bpip3?\s+install\s+(.*)")


def _rel(env: Environment, path: Path) -> str:
    try:
        return path.relative_to(env.root).as_posix()
    except ValueError:
        return path.as_posix()


def _code_lines(path: Path) -> list[tuple[int, str]]:
    out = []
    for n, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            out.append((n, line))
    return out


def test_script(env: Environment) -> Path | None:
    for copy in env.tests:
        for name in ("test.sh", "run-tests.sh"):
            p = copy.source / name if copy.source.is_dir() else copy.source
            if p.is_file() and p.name == name:
                return p
    return None


def reward_rules(env: Environment) -> list[Finding]:
    script = test_script(env)
    if script is None or script.name != "test.sh":
        return []
    rel = _rel(env, script)
    lines = _code_lines(script)
    writes = [(n, ln, seg) for n, ln in lines for seg in SEGMENT.split(ln) if REWARD_WRITE.search(seg)]
    if not writes:
        return []
    findings = []
    if all(SUCCESS_VALUE.match(seg) for _n, _ln, seg in writes):
        n, ln, _seg = writes[0]
        findings.append(Finding(
            rule="reward-not-written-on-failure", label=Label.SHORTCUT, severity=Severity.ERROR,
            message="test.sh writes a reward only when the tests pass: on failure no reward is written, so a "
                    "reward file the agent left behind (or none at all) decides the trial",
            evidence=[f"{rel}:{n}: {ln.strip()}" for n, ln, _s in writes[:5]], location=f"{rel}:{n}",
            fix="write 0 first (or on the failure path) and 1 only when the tests pass",
        ))
    strict = any(re.match(r"^\s*set\s+-\w*e", ln) for _n, ln in lines)
    depth = 0
    last_uncond = None
    for n, ln in lines:
        s = ln.strip()
        depth += len(re.findall(r"(^|[;\s])(if|case)\s", s)) - len(re.findall(r"(^|[;\s])(fi|esac)\b", s))
        if REWARD_WRITE.search(ln):
            uncond = depth <= 0 and "&&" not in s and "||" not in s and SUCCESS_VALUE.match(s)
            last_uncond = (n, ln) if uncond else None
    if last_uncond and not strict:
        n, ln = last_uncond
        findings.append(Finding(
            rule="reward-written-unconditionally", label=Label.SHORTCUT, severity=Severity.CRITICAL,
            message="the last reward test.sh writes is a success value written whatever the tests said",
            evidence=[f"{rel}:{n}: {ln.strip()}"], location=f"{rel}:{n}",
            fix="write the success reward only when the test command succeeded (`&&` or an if on its status)",
        ))
    return findings


def runtime_fetch_rules(env: Environment) -> list[Finding]:
    script = test_script(env)
    if script is None:
        return []
    rel = _rel(env, script)
    hits = [(n, ln) for n, ln in _code_lines(script) if RUNTIME_FETCH.search(ln)]
    if not hits:
        return []
    n, _ = hits[0]
    return [Finding(
        rule="verifier-installs-at-runtime", label=Label.BRITTLENESS, severity=Severity.WARNING,
        message="the verifier installs or downloads at run time: it breaks without network, and what it fetches "
                "can change under it",
        evidence=[f"{rel}:{n}: {ln.strip()}" for n, ln in hits[:5]], location=f"{rel}:{n}",
        fix="install the verifier's dependencies in the image (pinned) and keep test.sh offline",
    )]


def _unpinned(args: str) -> list[str]:
    out = []
    for tok in args.split():
        if tok.startswith("-") or tok in ("&&", "\\", ";", "|") or "/" in tok or tok.startswith("$"):
            if tok in ("&&", ";", "|"):
                break
            continue
        if not re.search(r"(==|===|@|\.whl$|\.tar\.gz$)", tok):
            out.append(tok)
    return out


def pin_rules(env: Environment) -> list[Finding]:
    findings = []
    files = [env.dockerfile] + [p for p in [test_script(env)] if p]
    for path in files:
        rel = _rel(env, path)
        for n, ln in _code_lines(path):
            m = PIP_INSTALL.search(ln)
            loose = _unpinned(m.group(1)) if m else []
            if loose:
                findings.append(Finding(
                    rule="unpinned-python-dependency", label=Label.BRITTLENESS, severity=Severity.WARNING,
                    message=f"pip installs {', '.join(loose)} without a pinned version: the environment changes "
                            "when a new release comes out",
                    evidence=[f"{rel}:{n}: {ln.strip()}"], location=f"{rel}:{n}",
                    fix="pin every package (`name==version`)"))
    for req in sorted(env.build_context.glob("requirements*.txt")):
        rel = _rel(env, req)
        for n, ln in _code_lines(req):
            if not ln.strip().startswith("-") and not re.search(r"(==|===|@)", ln):
                findings.append(Finding(
                    rule="unpinned-python-dependency", label=Label.BRITTLENESS, severity=Severity.WARNING,
                    message=f"requirement {ln.strip()!r} is not pinned", evidence=[f"{rel}:{n}: {ln.strip()}"],
                    location=f"{rel}:{n}", fix="pin every package (`name==version`)"))
    return findings


def compose_rules(env: Environment) -> list[Finding]:
    findings = []
    for path in sorted(env.build_context.glob("docker-compose*.y*ml")) + sorted(env.build_context.glob("compose*.y*ml")):
        rel = _rel(env, path)
        try:
            doc = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as e:
            findings.append(Finding(rule="compose-invalid", label=Label.BRITTLENESS, severity=Severity.ERROR,
                                    message=f"the compose file is not valid YAML: {e}", location=rel))
            continue
        for name, svc in (doc.get("services") or {}).items():
            svc = svc or {}
            if svc.get("privileged"):
                findings.append(Finding(
                    rule="compose-privileged", label=Label.SHORTCUT, severity=Severity.ERROR,
                    message=f"service {name!r} runs privileged: the agent can reach the host and the verifier",
                    location=rel, evidence=[f"{rel}: services.{name}.privileged: true"],
                    fix="drop `privileged`; grant only the capabilities the task needs"))
            for vol in svc.get("volumes") or []:
                spec = vol if isinstance(vol, str) else f"{vol.get('source', '')}:{vol.get('target', '')}" + (
                    ":ro" if vol.get("read_only") else "")
                parts = spec.split(":")
                if len(parts) < 2 or not parts[0].startswith((".", "/", "~")):
                    continue  # a named volume
                external = parts[0].startswith(("/", "~"))
                if external or "ro" not in parts[2:]:
                    findings.append(Finding(
                        rule="compose-writable-bind-mount", label=Label.SHORTCUT, severity=Severity.ERROR,
                        message=f"service {name!r} mounts {parts[0]} "
                                + ("from outside the task directory" if external else "writable")
                                + ": the agent can change files outside its sandbox",
                        location=rel, evidence=[f"{rel}: services.{name}.volumes: {spec}"],
                        fix="mount read-only (`:ro`), from inside the task directory, or copy at build time"))
    return findings


def optin_rules(env: Environment, root_agent: bool, unpinned_base: bool) -> list[Finding]:
    findings = []
    rel = _rel(env, env.dockerfile)
    lines = _code_lines(env.dockerfile)
    if root_agent and env.config.agent.user in (None, "root", 0) and not any(
            re.match(r"^\s*USER\s+(?!root\b|0\b)", ln, re.I) for _n, ln in lines):
        findings.append(Finding(
            rule="root-agent", label=Label.SHORTCUT, severity=Severity.WARNING,
            message="the agent runs as root: it can rewrite anything the verifier later relies on",
            location=rel, fix="add a non-root USER for the agent, or set [agent].user"))
    if unpinned_base:
        for n, ln in lines:
            m = re.match(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)", ln, re.I)
            if m and "@sha256:" not in m.group(1) and (":" not in m.group(1).split("/")[-1]
                                                         or m.group(1).endswith(":latest")):
                findings.append(Finding(
                    rule="unpinned-base-image", label=Label.BRITTLENESS, severity=Severity.WARNING,
                    message=f"base image {m.group(1)} is not pinned: rebuilding can change the environment",
                    evidence=[f"{rel}:{n}: {ln.strip()}"], location=f"{rel}:{n}",
                    fix="pin a tag (and ideally a digest)"))
    return findings


def static_findings(env: Environment, root_agent: bool = False, unpinned_base: bool = False) -> list[Finding]:
    """Every file-only rule; `qa lint` and the hunt both call this."""
    return (reward_rules(env) + runtime_fetch_rules(env) + pin_rules(env) + compose_rules(env)
            + optin_rules(env, root_agent, unpinned_base))


@register_probe("static")
def static_probe(ctx: ProbeContext) -> list[Finding]:
    from envqa.probes.image_checks import image_findings

    s = ctx.settings
    found = static_findings(ctx.env, s.lint_root_agent, s.lint_unpinned_base)
    try:
        image, _built = ctx.backend.ensure_image(ctx.env)
    except Exception:  # validation already reported an image that does not build
        return found
    return found + image_findings(ctx.env, ctx.backend, image, ctx.config)
