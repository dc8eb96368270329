"""Static checks that need the built image (one short-lived container, no agent, network none).

test-literals-in-image      strings the tests compare against are present in files the task added
                            to the image (not files a Debian package installed)
verifier-runs-image-file    test.sh executes a program or script that lives in the agent's image
                            (not a packaged binary): the agent can rewrite it before the verifier runs
"""

from __future__ import annotations

import json
import re

import structlog

from envqa.core.adapter_passwords import keys_payload
from envqa.core.config import QAConfig
from envqa.core.defaults import IMAGE_SCAN_EXEC_SEC
from envqa.core.environment import Environment
from envqa.core.models import Finding
from envqa.core.package_scripts import read_script
from envqa.core.parsers.shell import SHELLS
from envqa.core.sandbox import SandboxBackend, SandboxSpec
from envqa.core.task_model import tests_of
from envqa.core.task_model.files import TestFile

log = structlog.get_logger(__name__)

MIN_LITERAL = 12
# The image scans (archives, literals and commands, copies): one script, run with python3 -c in the image.
IMAGE_SCAN = read_script("envqa.probes", "scripts/image_scan.py")

RUNNERS = {"bash", "sh", "python", "python3", "source", ".", "exec", "perl", "node", "env", "sudo", "timeout", "!"}
HARNESS_TOOLS = re.compile(r"^(py\.?test(-3)?|python[\d.]*|pip[\d.]*|bash|sh|uvx?|node|npm|npx)$")
PREFIXES = {"if", "then", "else", "elif", "while", "until", "do", "!", "time", "{", "("}
KEYWORDS = {
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "do",
    "done",
    "while",
    "for",
    "until",
    "case",
    "esac",
    "in",
    "function",
    "{",
    "}",
    "[",
    "[[",
    "test",
    "echo",
    "printf",
    "cd",
    "set",
    "export",
    "local",
    "return",
    "exit",
    "true",
    "false",
    "mkdir",
    "rm",
    "cat",
    "cp",
    "mv",
    "ls",
    "read",
    "shift",
    "trap",
    "wait",
}


def _image_input_copy(env: Environment, f: TestFile) -> bool:
    """tests/_env/X byte-identical to environment/X: the separate fixer's copy of a file the agent's image is
    given on purpose (agents/fixers/separate.py), for the verifier's own image; not a literal hidden from it."""
    under = f.in_tests.removeprefix("tests/")
    if not under.startswith("_env/") or f.copy_source.is_file():
        return False
    try:
        twin = env.build_context / under.removeprefix("_env/")
        return f.same_bytes(twin)
    except OSError:
        return False


def test_literals(env: Environment) -> list[str]:
    """String constants in the tests (the test model's), minus what the instruction itself tells the agent."""
    tests = tests_of(env)
    lits: set[str] = set()
    for f in tests.files:
        if not _image_input_copy(env, f):
            lits.update(tests.string_constants(f))
    out = []
    for lit in lits:
        s = lit.strip()
        if (
            len(s) < MIN_LITERAL
            or s in env.instruction
            or s.startswith(("/", "-"))
            or ("\n" in s.strip() and len(s) > 4000)
        ):
            continue
        if re.fullmatch(r"[\w./-]+\.(py|sh|txt|json|c|h)", s) or "/tests" in s or "import " in s:
            continue
        out.append(s)
    return sorted(out)[:300]


def verifier_commands(env: Environment) -> dict[str, str]:
    """Programs test.sh runs (after runners such as bash/python3), with the line they are on.

    Commands come from the bash parser (core/parsers/shell.py): redirections and `|| true` are not
    programs, `sh -c "…"` strings are looked into, and lines that can never run are left out."""
    script = tests_of(env).script
    if script is None:
        return {}
    rel = script.rel
    found: dict[str, str] = {}
    for cmd in script.commands:
        if not cmd.reachable:
            continue
        words = list(cmd.words)
        while words and words[0] in PREFIXES:
            words = words[1:]
        while words and words[0] in RUNNERS:
            runner, words = words[0], words[1:]
            if runner in SHELLS and "-c" in words:
                words = []  # `sh -c "…"`: the parser already yielded the inner commands
                break
            words = [w for w in words if not w.startswith("-") and not re.match(r"^\w+=", w)]
            if words and re.fullmatch(r"[\d.]+[smhd]?", words[0]):
                words = words[1:]  # timeout 30 cmd
        if not words:
            continue
        w = words[0]
        if w in KEYWORDS or w.startswith(("-", "$", "/tests", "/logs", "/solution", "<", ">")) or "=" in w:
            continue
        if HARNESS_TOOLS.match(w.rsplit("/", 1)[-1]):
            continue  # the test runner itself: trusting it is the harness's problem (exploit-harness-plant)
        if w.startswith("/") or re.fullmatch(r"[\w.+-]+", w):
            found.setdefault(w, cmd.evidence(rel))
    return found


def image_findings(env: Environment, backend: SandboxBackend, image: str, config: QAConfig) -> list[Finding]:
    literals = test_literals(env)
    commands = verifier_commands(env)
    spec = SandboxSpec(
        image=image,
        network="none",
        memory_mb=512,
        pids_limit=256,
        labels={"envqa.probe": "image-checks"},
        output_limit_bytes=config.sandbox.output_limit_bytes,
    )
    payload = json.dumps({"literals": literals, "commands": sorted(commands)})
    with backend.start(spec) as sandbox:
        archives = archive_findings(sandbox, env.name)
        if not literals and not commands:
            return archives
        res = sandbox.exec(
            ["python3", "-c", IMAGE_SCAN, "literals"], input=payload.encode(), timeout=IMAGE_SCAN_EXEC_SEC
        )
    return archives + _scan_findings(res, commands)


def archive_findings(sandbox, task: str = "") -> list[Finding]:
    """encrypted-solution-in-image: judged by name, path and member names, whether or not a password opens it.

    The published adapter passwords (core/adapter_passwords.toml) and the task's name are tried on each
    encrypted hit; the evidence names the one that opened it and where it is published."""
    keys = json.dumps(keys_payload(task)).encode()
    res = sandbox.exec(["python3", "-c", IMAGE_SCAN, "archives"], input=keys, timeout=IMAGE_SCAN_EXEC_SEC)
    try:
        hits = json.loads(res.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        log.warning("image_checks.archive_scan_failed", stderr=res.stderr[-300:])
        return []
    if not hits:
        return []
    evidence = [
        f"{h['path']}: {h['kind']}"
        + (f", its path says {h['hint']!r}" if h["hint"] else "")
        + (f", it holds {', '.join(h['members'])}" if h["members"] else "")
        + (
            f"; it opens with the password {h['opened_with']['value']!r}, {h['opened_with']['origin']}"
            if h.get("opened_with")
            else ""
        )
        for h in hits[:10]
    ]
    encrypted = any(h["encrypted"] for h in hits)
    opened = next((h["opened_with"] for h in hits if h.get("opened_with")), None)
    how = (
        f"it opens with {opened['origin']}"
        if opened
        else "a password found, guessed or brute-forced (or none at all) hands over the answers, whether or not ours "
        "opened it"
    )
    return [
        Finding.of(
            rule="encrypted-solution-in-image",
            message=("an encrypted file" if encrypted else "an archive")
            + " in the agent's image points at the solution "
            "or the expected outputs: " + how,
            evidence=evidence,
            location="environment/Dockerfile",
        )
    ]


def _scan_findings(res, commands: dict[str, str]) -> list[Finding]:
    try:
        data = json.loads(res.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        log.warning("image_checks.no_python", stderr=res.stderr[-300:])
        return []
    findings = []
    if data["literals"]:
        ev = [f"{lit[:80]!r} found in {', '.join(paths[:3])}" for lit, paths in list(data["literals"].items())[:10]]
        findings.append(
            Finding.of(
                rule="test-literals-in-image",
                message="strings the tests compare against are already in the agent's image: an agent can find and "
                "replay them instead of computing them",
                evidence=ev,
                location="environment/Dockerfile",
            )
        )
    for cmd, path in sorted(data["commands"].items()):
        findings.append(
            Finding.of(
                rule="verifier-runs-image-file",
                message=f"test.sh runs {path}, which lives in the agent's image: the agent can rewrite it so the "
                "verifier passes whatever it did",
                evidence=[commands[cmd], f"{path} is in the image and not from a Debian package"],
                location=commands[cmd].split(": ")[0],
            )
        )
    return findings
