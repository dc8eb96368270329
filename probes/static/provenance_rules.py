"""What the files show about where the verifier's inputs come from (core/task_model/provenance.py), no image.

  verifier-reads-image-answer  (warning) the verifier reads its expected answer (or the digest it checks
                               against: `sha256sum -c`) from a file the task's Dockerfile puts in the agent's
                               image: the agent can read it, or rewrite it to match anything. Cites the
                               verifier's line and the Dockerfile's.
  verifier-runs-image-file     (warning from the files; error with --image, probes/static/image_checks.py) test.sh
                               runs a grader the Dockerfile copies or writes into the image.
  plantable-test-runner        (warning) pytest runs test files from a folder the agent owns (a copy out of
                               /tests) without --noconftest: a conftest.py planted there turns failures into
                               passes (a rootdir or confcutdir under /tests does not stop the test file's own
                               folder's conftest.py).
  (and the rules over copies and leftovers in probes/static/provenance_copies.py)

A run proves these (trust tracing: verifier-trusts-agent-file; exploit-trusted-file, exploit-verifier-helper,
exploit-workspace-conftest) and raises them to error or critical, naming the trial; the files alone give a
warning. Look-alikes stay quiet: truth under tests/ (mounted at verify time only), a decoy in the image the
verifier never reads, inputs the verifier reads without naming them as its expectation (a database the agent
must query), pytest with --noconftest or on the files under /tests, hashes under /tests. A reference solution
that copies an image file onto the output the tests read is the answer in the image too, whatever it is named.
"""

from __future__ import annotations

import posixpath
import re

from envqa.core.consistency.model import Requirement
from envqa.core.environment import Environment
from envqa.core.models import Finding, Severity
from envqa.core.parsers.shell import Command
from envqa.core.task_config import VerifierEnvironmentMode
from envqa.core.task_model import model_of
from envqa.core.task_model.provenance import Origin, Provenance
from envqa.probes.static.provenance_copies import (
    agent_expectation_findings,
    bytecode_left_findings,
    image_helper_copy_findings,
)

# What a verifier calls its expectation: in the file's name or on the line that reads it.
ANSWERISH = re.compile(r"(expected|answer|truth|golden|gold\b|reference|ground|solution|correct)", re.I)
EXPECT_VAR = re.compile(r"^\s*(?:with\b.*\bas\s+)?\w*(expected|answer|truth|golden|reference)\w*\s*[=:]", re.I)
GRADERISH = re.compile(r"(verif|grade|grader|check|judge|score|evaluat|test)", re.I)
HASH_TOOLS = {"sha256sum", "sha1sum", "md5sum", "sha512sum", "b2sum", "shasum", "cksum"}
PATH_DIRS = ("/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin")
RUNNERS = {"python", "python3", "bash", "sh", "source", ".", "exec", "timeout", "env", "sudo", "perl", "node"}
NO_PLANT = ("--noconftest",)  # pytest flags that keep a planted conftest.py out


def _answer_reads(reqs: list[Requirement], prov: Provenance) -> list[tuple[Requirement, Origin]]:
    """Paths a test file reads that the image holds and that it names as its expectation (in the file's name,
    the variable the line reads it into, or an `==` with the agent's work on the same line: reference files
    left in the image), when the same file also reads the agent's work: a comparison of
    the work with an answer the image already holds. An image file read beside a /tests copy of it (an
    "unchanged" check) or an input read into any other name stays quiet."""
    reads = [r for r in reqs if r.kind == "path" and r.role == "read"]
    work = {r.file for r in reads if prov.origin(r.value).kind == "agent"}
    work_lines = {(r.file, r.line) for r in reads if prov.origin(r.value).kind == "agent"}
    own_copies = {(r.file, posixpath.basename(r.value)) for r in reads if prov.origin(r.value).kind == "tests"}
    out = []
    for r in reads:
        origin = prov.origin(r.value)
        beside = (r.file, r.line) in work_lines and "==" in r.text  # the work compared with it on one line
        named = ANSWERISH.search(posixpath.basename(r.value)) or EXPECT_VAR.search(r.text) or beside
        kept = (r.file, posixpath.basename(r.value)) in own_copies  # held against the tests' own copy of it
        if origin.in_image and named and r.file in work and not kept and "/tests/" not in r.text:
            out.append((r, origin))
    return out


def _solution_copies(env: Environment, prov: Provenance) -> list[tuple[str, str, str]]:
    """(source, destination, the solution's line) of each `cp SRC DST` / `cat SRC > DST` the reference solution
    runs, both absolute."""
    out = []
    for solve in model_of(env).solution:  # solve.sh's commands, read once (core/task_model/solution.py)
        script = solve.path
        rel = script.relative_to(env.root).as_posix() if script.is_relative_to(env.root) else script.name
        for cmd in solve.commands:
            plain = [w for w in cmd.words[1:] if not w.startswith("-")]
            if cmd.reachable and cmd.name == "cp" and len(plain) == 2:
                out.append((prov.absolute(plain[0]), prov.absolute(plain[1]), cmd.evidence(rel)))
            elif cmd.reachable and cmd.name == "cat" and len(plain) == 1:
                out += [
                    (prov.absolute(plain[0]), prov.absolute(t), cmd.evidence(rel))
                    for op, t in cmd.redirects
                    if op == ">"
                ]
    return out


def _solution_copied_reads(
    env: Environment, reqs: list[Requirement], prov: Provenance
) -> list[tuple[Requirement, Origin, str]]:
    """Image files the tests read that the reference solution copies onto an output the same tests read: the
    "solution" is the answer the image already holds (however the test names it)."""
    copies = _solution_copies(env, prov)
    reads = [r for r in reqs if r.kind == "path" and r.role == "read"]
    read_paths = {(r.file, prov.absolute(r.value)) for r in reads}
    out = []
    for r in reads:
        origin = prov.origin(r.value)
        if not origin.in_image:
            continue
        for src, dst, line in copies:
            if src == prov.absolute(r.value) and (r.file, dst) in read_paths and prov.origin(dst).kind == "agent":
                out.append((r, origin, line))
    return out


def _hash_checks(commands: list[Command], rel: str, prov: Provenance) -> list[tuple[str, str, Origin]]:
    """`sha256sum -c FILE` (any digest tool) against a digest file the image holds: (line, path, origin)."""
    out = []
    for cmd in commands:
        if not cmd.reachable or cmd.name not in HASH_TOOLS or not {"-c", "--check"} & set(cmd.words):
            continue
        for word in (w for w in cmd.words[1:] if not w.startswith("-")):
            origin = prov.origin(word)
            if origin.in_image:
                out.append((cmd.evidence(rel), word, origin))
    return out


def image_answer_findings(env: Environment) -> list[Finding]:
    """One finding per image file: read as the expectation, copied onto the output by the reference solution, or
    the digest list `sha256sum -c` checks (the first reading that names a file is the one reported)."""
    model = model_of(env)
    prov, tests = model.provenance, model.tests
    script = tests.script
    # (the image file, message, evidence, location, remedy case)
    found: list[tuple[str, str, list[str], str, str | None]] = [
        (
            r.value,
            f"the verifier reads its expectation from {r.value}, which the Dockerfile puts in the agent's image: "
            "the agent can read it, or rewrite it to match whatever it produced",
            [r.evidence(), origin.evidence],
            r.where,
            None,
        )
        for r, origin in _answer_reads(tests.requirements, prov)
    ]
    found += [
        (
            r.value,
            f"the reference solution copies {r.value}, a file the Dockerfile puts in the agent's image, to the "
            "output the verifier checks: the answer is in the image, and the agent can copy it the same way",
            [copy, r.evidence(), origin.evidence],
            r.where,
            None,
        )
        for r, origin, copy in _solution_copied_reads(env, tests.requirements, prov)
    ]
    found += [
        (
            path,
            f"the verifier checks digests listed in {path}, which the Dockerfile puts in the agent's image: a "
            "root agent rewrites the digest to match its own output",
            [line, origin.evidence],
            line.split(": ")[0],
            "image-hash",
        )
        for line, path, origin in _hash_checks(model.test_sh, script.rel if script else "tests/test.sh", prov)
    ]
    first = {}
    for path, message, evidence, location, case in found:
        first.setdefault(path, (message, evidence, location, case))
    return [
        Finding.of("verifier-reads-image-answer", message, evidence=evidence, location=location, case=case)
        for message, evidence, location, case in first.values()
    ]


def _program(cmd: Command) -> str | None:
    """The program or script a test.sh command runs (after runners such as python3 or timeout 30)."""
    words = list(cmd.words)
    while words and (words[0].rsplit("/", 1)[-1] in RUNNERS or words[0] in ("if", "then", "!", "time")):
        words = [w for w in words[1:] if not (w.startswith("-") or re.fullmatch(r"\w+=.*", w))]
        if words and re.fullmatch(r"[\d.]+[smhd]?", words[0]):
            words = words[1:]
    return words[0] if words else None


def _installed(name: str, prov: Provenance) -> str:
    """A bare command name as the image's PATH finds it among the task's files (else the name unchanged)."""
    if "/" in name:
        return name
    return next((f"{d}/{name}" for d in PATH_DIRS if f"{d}/{name}" in prov.image), name)


def image_grader_findings(env: Environment) -> list[Finding]:
    model = model_of(env)
    script, prov = model.tests.script, model.provenance
    if script is None:
        return []
    findings = []
    for cmd in model.test_sh:
        program = _program(cmd) if cmd.reachable else None
        if not program or program.startswith(("$", "-")):
            continue
        path = _installed(program, prov)
        origin = prov.origin(path) if path.startswith("/") or "/" in path else Origin("agent")
        if not origin.in_image or not GRADERISH.search(posixpath.basename(path)):
            continue
        findings.append(
            Finding.of(
                "verifier-runs-image-file",
                f"test.sh runs {path}, a grader the Dockerfile puts in the agent's image: the agent can rewrite it "
                "so the verifier passes whatever it did",
                severity=Severity.WARNING,
                evidence=[cmd.evidence(script.rel), f"{path} is in the image: {origin.evidence}"],
                location=f"{script.rel}:{cmd.line}",
            )
        )
    return findings


def _pytest_args(cmd: Command) -> list[str] | None:
    words = cmd.words
    name = cmd.name
    if name in ("pytest", "py.test"):
        return words[1:]
    if name.startswith("python") and words[1:3] == ["-m", "pytest"]:
        return words[3:]
    return None


def _kept_out(args: list[str]) -> bool:
    """--noconftest: the one flag that keeps a conftest.py beside a copied test file out. A rootdir or confcutdir
    under /tests does not: pytest still loads the conftest.py of the test file's own folder (confcutdir only
    stops the search upwards of it), so a copy in /app stays plantable however the rootdir is pinned."""
    return any(a in NO_PLANT for a in args)


def _targets(args: list[str]) -> list[str]:
    skip_next = {"-p", "-k", "-m", "-c", "-o", "--rootdir", "--confcutdir", "--junitxml", "--timeout", "-n"}
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in skip_next:
            skip = True
        elif not a.startswith("-"):
            out.append(a.split("::", 1)[0])
    return out


def _cd(cwd: str | None, word: str) -> str | None:
    """The folder after `cd word`: `${VAR:-/tests}` is its default (TB1's TEST_DIR); another variable: unknown."""
    default = re.fullmatch(r"\$\{\w+:-([^}$]*)\}", word)
    if default:
        word = default.group(1)
    if "$" in word or (cwd is None and not word.startswith("/")):
        return None
    return posixpath.normpath(posixpath.join(cwd or "/", word))


def plantable_runner_findings(env: Environment) -> list[Finding]:
    model = model_of(env)
    script, prov = model.tests.script, model.provenance
    if script is None:
        return []
    findings = []
    cwd: str | None = prov.workdir
    for cmd in model.test_sh:
        if not cmd.reachable:
            continue
        if cmd.name == "cd":
            cwd = _cd(cwd, cmd.words[1] if len(cmd.words) > 1 else "/root")
            continue
        args = _pytest_args(cmd)
        if args is None or _kept_out(args):
            continue
        named = _targets(args)
        if cwd is None and not all(t.startswith("/") for t in named):
            continue  # a folder we cannot name (cd "$DIR"): rather miss than cry wolf
        targets = [posixpath.normpath(posixpath.join(cwd or "/", t)) for t in named] or [cwd or "/"]
        owned = [t for t in targets if prov.origin(t).kind in ("agent", "image") and not t.startswith("/logs")]
        if not owned or any(prov.origin(t).kind == "tests" for t in targets):
            continue
        findings.append(
            Finding.of(
                "plantable-test-runner",
                f"pytest runs the tests from {owned[0]}, a folder the agent owns, without --noconftest: a conftest.py "
                "the agent leaves there turns every failure into a pass",
                evidence=[cmd.evidence(script.rel)],
                location=f"{script.rel}:{cmd.line}",
            )
        )
    return findings


def provenance_findings(env: Environment) -> list[Finding]:
    """Every rule over the provenance model (probes/static/findings.py's static_findings calls this). In separate-verifier
    mode the verifier runs in a fresh container that holds only the agent's artifacts: none of this applies."""
    if env.config.verifier_mode() == VerifierEnvironmentMode.SEPARATE:
        return []
    return (
        image_answer_findings(env)
        + image_grader_findings(env)
        + plantable_runner_findings(env)
        + image_helper_copy_findings(env)
        + agent_expectation_findings(env)
        + bytecode_left_findings(env)
    )
