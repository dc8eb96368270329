"""Everything the comparison needs about one task, read from its files, and the precision guards: what is
never the agent's to produce.

  - the tests' own fixtures and temporary files: /tests, /logs, /tmp, and whatever a test writes itself;
  - files already in the image (COPY/ADD targets with the build context's files, paths a RUN creates) and
    not written by the oracle: inputs, not outputs;
  - library and system paths (/usr, /lib, /proc, site-packages, a venv's bin/ ...);
  - literals the oracle's solution uses identically as an input: an instruction literal the oracle also
    uses is a real thing, never a misnaming of the tests' literal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from envqa.core.consistency.claims import Instruction, read_instruction
from envqa.core.consistency.model import Requirement
from envqa.core.consistency.requirements import python_requirements
from envqa.core.consistency.shell_requirements import command_requirements, python_heredocs, shell_requirements
from envqa.core.consistency.verifier_writes import VerifierWrites, verifier_writes
from envqa.core.defaults import GUARD_MAX_BYTES as MAX_BYTES
from envqa.core.environment import Environment
from envqa.core.parsers.dockerfile import instruction_spans
from envqa.core.parsers.shell import Command, parse_script

TEST_OWNED = ("/tests", "/logs", "/tmp", "/var/tmp", "/run", "/dev/shm", "/solution", "/oracle", "/installed-agent")
SYSTEM = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/proc",
    "/sys",
    "/dev",
    "/var/lib",
    "/var/cache",
    "/opt/conda",
    "/root/.cache",
    "/root/.local",
    "/nix",
    "/snap",
    "/boot",
)
SYSTEM_PARTS = ("site-packages", "dist-packages", "node_modules", "/.venv/", "/venv/", "/.cache/", "/__pycache__")
CONFIG = ("/etc", "/var/log", "/var/run", "/var/spool", "/home", "/root")  # the agent may touch, never "outputs"
REDIRECT = re.compile(r"(?<![<>&\d])>>?\s*[\"']?(/[\w./+@-]+)")
USERADD = re.compile(r"\b(?:useradd|adduser)\b[^;&|\n]*?\s([a-z_][\w.-]{0,31})\s*(?:$|[;&|\n])", re.M)


@dataclass
class TaskFacts:
    instruction: Instruction
    requirements: list[Requirement]
    image: set[str] = field(default_factory=set)  # files and directories the Dockerfile puts in the image
    image_users: set[str] = field(default_factory=set)
    oracle_text: str = ""
    oracle_writes: set[str] = field(default_factory=set)
    tests_text: str = ""
    test_files: set[str] = field(default_factory=set)  # names of the files shipped in tests/
    verifier_written: VerifierWrites = field(default_factory=lambda: verifier_writes(""))  # its own outputs
    opaque_base: bool = False  # the final stage starts from an image whose files the task's files cannot show

    def test_owned(self, path: str) -> bool:
        """The tests' own: their directories, a file they write, a file shipped with them (whatever
        directory the harness copies tests/ to, e.g. /app/tests in some Terminal-Bench ports)."""
        if _under(path, TEST_OWNED) or PurePosixPath(path).name in self.test_files:
            return True
        if self.verifier_written.covers(path):  # compiled, tee'd or written by a script the verifier runs
            return True
        written = {r.value.rstrip("/") for r in self.requirements if r.kind == "path" and r.role == "write"}
        return any(path == w or path.startswith(w + "/") for w in written)

    def in_image(self, path: str) -> bool:
        return path.rstrip("/") in self.image

    def oracle_uses(self, literal: str) -> bool:
        return _word_in(literal, self.oracle_text)

    def tests_use(self, literal: str) -> bool:
        return _word_in(literal, self.tests_text)

    def produced(self, path: str) -> bool:
        """An output: the oracle writes it, or it is not in the image (someone must create it). Over an opaque base
        image (a namespaced one: `swebench/sweb.eval...`, an environment prebuilt elsewhere) "not in the image"
        cannot be read from the files, so only the oracle's writes show an output (a conda activate script of
        that image is not something the agent must produce)."""
        return path.rstrip("/") in self.oracle_writes or (not self.opaque_base and not self.in_image(path))


def _word_in(literal: str, text: str) -> bool:
    return bool(literal) and re.search(r"(?<![\w.-])" + re.escape(literal) + r"(?![\w-])", text) is not None


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def system_path(path: str) -> bool:
    return _under(path, SYSTEM) or any(p in path for p in SYSTEM_PARTS)


def config_path(path: str) -> bool:
    return _under(path, CONFIG)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8") if path.stat().st_size <= MAX_BYTES else ""
    except (OSError, UnicodeDecodeError):
        return ""


def _files(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*") if p.is_file() and (p.suffix in suffixes or p.name in ("test.sh",)))


def instruction_file(env: Environment) -> str:
    """The instruction's file as findings name it (a step's own instruction.md for a step's view)."""
    if env.format == "tb1":
        return "task.yaml"
    for step in env.steps:
        if step.instruction.is_file() and _text(step.instruction) == env.instruction:
            return step.instruction.relative_to(env.root).as_posix()
    return "instruction.md"


def _rel(env: Environment, path: Path) -> str:
    try:
        return path.relative_to(env.root).as_posix()
    except ValueError:
        return path.as_posix()


def test_file_names(env: Environment) -> set[str]:
    """Names of the data files shipped with the tests (not the scripts: a test may run one the agent writes)."""
    names = set()
    for copy in env.tests:
        if copy.source.is_dir():
            names |= {p.name for p in copy.source.rglob("*") if p.is_file() and p.suffix not in (".py", ".sh")}
    return names


def _oracle(env: Environment, workdir: str) -> tuple[str, set[str]]:
    texts, writes = [], set()
    for copy in env.solution:
        for f in _files(copy.source, (".sh", ".py", ".bash")):
            text = _text(f)
            texts.append(text)
            reqs = (
                python_requirements("", text)
                if f.suffix == ".py"
                else shell_requirements("", text)
                + [r for start, body in python_heredocs(text) for r in python_requirements("", body, start)]
            )
            writes |= {_absolute(r.value, workdir) for r in reqs if r.kind == "path" and r.role == "write"}
            writes |= set(REDIRECT.findall(text))  # `done > /app/x` after a loop: a compound's redirection
            for cmd in parse_script(text) if f.suffix != ".py" else []:
                writes |= {_absolute(t, workdir) for op, t in cmd.redirects if op in (">", ">>") and t}
                writes |= {r.value for r in _python_c(cmd) if r.kind == "path" and r.role == "write"}
                if (
                    cmd.name in ("cp", "mv", "install", "ln", "touch", "mkdir", "tee", "gcc", "cc", "g++", "go")
                    and len(cmd.words) > 1
                ):
                    writes |= {_absolute(w, workdir) for w in cmd.words[1:] if not w.startswith("-")}
    return "\n".join(texts), {w.rstrip("/") for w in writes if w}


def _python_c(cmd: Command) -> list[Requirement]:
    """`python3 -c "…"`: the program is Python, read as such (the files it opens)."""
    if not re.fullmatch(r"python[\d.]*", cmd.name) or "-c" not in cmd.words[:-1]:
        return []
    return python_requirements("", cmd.words[cmd.words.index("-c") + 1])


def _absolute(path: str, workdir: str) -> str:
    if "$" in path or not path or path.startswith("-"):
        return ""
    return path if path.startswith("/") else f"{workdir.rstrip('/')}/{path}"


def _image(env: Environment) -> tuple[set[str], set[str], str]:
    """(paths the Dockerfile puts in the image, users it creates, the final WORKDIR)."""
    text = _text(env.dockerfile)
    paths: set[str] = set()
    copies: dict[str, Path] = {}  # image path -> the build context's file copied there
    workdir = "/"
    for span in instruction_spans(text):
        if span.keyword == "WORKDIR":
            value = (span.resolved or span.value).strip()
            workdir = value if value.startswith("/") else f"{workdir.rstrip('/')}/{value}"
            paths.add(workdir.rstrip("/"))
        elif span.keyword in ("COPY", "ADD"):
            flags, words = span.flags_and_args()
            if len(words) >= 2:
                copied = _copied(env, words[:-1], _absolute(words[-1], workdir), "from" in flags)
                paths |= set(copied)
                copies.update({k: v for k, v in copied.items() if v is not None})
        elif span.keyword == "RUN":
            for cmd in parse_script(span.resolved or span.value):
                for r in command_requirements(cmd.words, cmd.redirects):
                    if r.kind == "path":
                        paths.add(_absolute(r.value, workdir).rstrip("/"))
                paths |= {_absolute(t, workdir).rstrip("/") for _op, t in cmd.redirects if t}
                if cmd.name in ("touch", "mkdir", "cp", "mv", "ln", "install", "git", "tar", "unzip"):
                    paths |= {_absolute(w, workdir).rstrip("/") for w in cmd.words[1:] if not w.startswith("-")}
                paths |= {
                    r.value.rstrip("/") for r in _python_c(cmd) + _built_by(cmd, copies, workdir) if r.kind == "path"
                }
    return {p for p in paths if p}, set(USERADD.findall(text)), workdir


def _built_by(cmd: Command, copies: dict[str, Path], workdir: str) -> list[Requirement]:
    """`RUN python3 /app/seed.py`, a script the Dockerfile copied in: the files it opens are in the image (a build
    step's database or data generator), read from the script as the `-c` program is."""
    if not re.fullmatch(r"python[\d.]*", cmd.name):
        return []
    script = next((w for w in cmd.words[1:] if not w.startswith("-")), "")
    local = copies.get(_absolute(script, workdir)) if script.endswith(".py") else None
    if local is None:
        return []
    try:
        return python_requirements("", local.read_text(errors="replace"))
    except OSError:
        return []


def opaque_base(env: Environment) -> bool:
    """The final stage's FROM names an image outside Docker's official library (a `namespace/name`, a registry
    host) and not an earlier stage: its files are someone else's build, which the task's files do not show. The
    official images (debian, ubuntu, python, node, ...) hold a distribution and a toolchain under system paths."""
    stages: set[str] = set()
    base = ""
    for span in instruction_spans(_text(env.dockerfile)):
        if span.keyword != "FROM":
            continue
        _, words = span.flags_and_args()
        if not words:
            continue
        base = words[0].lower()
        if len(words) >= 3 and words[1].lower() == "as":
            stages.add(words[2].lower())
    head, _, last = base.split("@", 1)[0].rpartition("/")  # the tag and digest are not the name
    name = f"{head}/{last.split(':', 1)[0]}" if head else last.split(":", 1)[0]
    if not name or name in stages or name == "scratch" or "$" in name:
        return False
    return "/" in name.removeprefix("docker.io/").removeprefix("library/")


def _copied(env: Environment, sources: list[str], dest: str, from_stage: bool) -> dict[str, Path | None]:
    """The image paths a COPY makes, each with the build context's file copied there (None for a directory)."""
    base = dest.rstrip("/")
    out: dict[str, Path | None] = {base: None}
    if from_stage:
        return out
    for src in sources:
        where = env.build_context / src
        if where.is_dir():
            out.update(
                {f"{base}/{p.relative_to(where).as_posix()}": p if p.is_file() else None for p in where.rglob("*")}
            )
        elif where.is_file():
            into = dest.endswith("/") or len(sources) > 1
            out[f"{base}/{PurePosixPath(src).name}" if into else base] = where
    return out


def facts_with(env: Environment, reqs: list[Requirement], tests_text: str) -> TaskFacts:
    """The task's facts, given what its tests require (the test model's: core/task_model/facts.py `task_facts`,
    the one entry point)."""
    instruction = read_instruction(instruction_file(env), env.instruction)
    image, users, workdir = _image(env)
    oracle_text, writes = _oracle(env, workdir)
    return TaskFacts(
        instruction=instruction,
        requirements=reqs,
        image=image,
        image_users=users,
        oracle_text=oracle_text,
        oracle_writes=writes,
        tests_text=tests_text,
        test_files=test_file_names(env),
        verifier_written=verifier_writes(tests_text),
        opaque_base=opaque_base(env),
    )
