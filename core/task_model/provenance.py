"""Where each file the verifier uses comes from: the agent's image (a Dockerfile COPY/ADD, or a RUN that writes
it, with the line), the tests mounted at verify time, the solution, or the agent.

The verifier's own files (/tests, mounted only when it runs) cannot be touched by the agent; a file the image
holds can be read and rewritten by it. So when a verifier compares the agent's work with a file the image
already holds, or runs a grader that lives in the image, the files alone show a shortcut. The rules over this
(probes/static/provenance_rules.py) cite both sides: the verifier's line and the Dockerfile's.

Read from the task model's Dockerfile spans (core/parsers/dockerfile.py) and the build context's files; RUN
bodies go through the bash parser (core/parsers/shell.py): redirections (`> f`, `>> f`), `tee f`, `cp/mv … f`,
`touch f`, `curl -o f`, `wget -O f`. Relative destinations are resolved against the stage's WORKDIR. Only the
final stage counts (earlier stages are not in the agent's image unless copied with --from, which we do not
follow: we would rather miss than cry wolf).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from envqa.core.defaults import PROVENANCE_MAX_CONTEXT_FILES as MAX_CONTEXT_FILES
from envqa.core.environment import Environment
from envqa.core.parsers.dockerfile import Span
from envqa.core.parsers.shell import Command, parse_script

WRITERS_LAST = {"cp", "mv", "install", "ln"}  # the last argument is the destination
# Folders every image has: `COPY x /opt` (no trailing slash) lands in them as /opt/x.
FOLDERS = ("/", "/app", "/opt", "/usr/local/bin", "/usr/bin", "/bin", "/tmp", "/root", "/srv", "/etc", "/home")
PY_WRITE = re.compile(r"""open\(\s*['"]([^'"]+)['"]\s*,\s*['"][wax]""")  # python3 -c "...open('/x', 'w')..."


@dataclass(frozen=True)
class Origin:
    """Where one path comes from. kind: "image" (the Dockerfile puts it there: `evidence` is its line), "tests"
    (mounted at verify time), "solution", or "agent" (nothing in the task puts it there: the agent's work or
    the base image's)."""

    kind: str
    evidence: str = ""
    how: str = ""  # "copy" or "run" for an image file
    source: str = ""  # a copied file: its path in the build context (where its bytes can be read)

    @property
    def in_image(self) -> bool:
        return self.kind == "image"


@dataclass
class Provenance:
    """The image's task-added files (path -> the Dockerfile line that puts it there) and the verify-time mounts."""

    image: dict[str, Origin] = field(default_factory=dict)
    image_dirs: dict[str, Origin] = field(default_factory=dict)  # a folder copied or created whole
    # A Python module the build imported and then deleted: its bytecode stays in __pycache__ (the deleted .py ->
    # the Dockerfile lines that import and delete it); empty once the build clears __pycache__ or writes none.
    bytecode_left: dict[str, tuple[str, str]] = field(default_factory=dict)
    imported: dict[str, str] = field(default_factory=dict)  # a module file a RUN imports -> that line's evidence
    no_bytecode: bool = False  # ENV PYTHONDONTWRITEBYTECODE: the build writes no __pycache__
    tests_targets: tuple[str, ...] = ("/tests",)
    solution_targets: tuple[str, ...] = ("/solution",)
    workdir: str = "/"
    context: Path | None = None  # the build context (where a copied script's source can be read)

    def absolute(self, path: str) -> str:
        """A path as the verifier names it, made absolute against the image's final WORKDIR."""
        return posixpath.normpath(path if path.startswith("/") else posixpath.join(self.workdir, path))

    def origin(self, path: str) -> Origin:
        p = self.absolute(path)
        for kind, targets in (("tests", self.tests_targets), ("solution", self.solution_targets)):
            if any(_under(p, t) for t in targets):
                return Origin(kind)
        if p in self.image:
            return self.image[p]
        return Origin("agent")  # a folder the task creates or copies is not its files' origin: the agent writes there


def _under(path: str, folder: str) -> bool:
    folder = folder.rstrip("/") or "/"
    return path == folder or path.startswith(folder + "/") or folder == "/"


def _dest(dest: str, workdir: str) -> str:
    return posixpath.normpath(dest if dest.startswith("/") else posixpath.join(workdir, dest))


def _context_files(context: Path, source: str) -> list[tuple[str, bool]]:
    """(path under the source, is the source a folder) for a COPY source; [] for a glob, URL or a missing file."""
    if "://" in source or any(c in source for c in "*?[") or source.startswith("$"):
        return []
    path = (context / source).resolve()
    try:
        path.relative_to(context.resolve())
    except ValueError:
        return []
    if path.is_file():
        return [(path.name, False)]
    if not path.is_dir():
        return []
    out = []
    for p in sorted(path.rglob("*")):
        if p.is_file():
            out.append((p.relative_to(path).as_posix(), True))
            if len(out) >= MAX_CONTEXT_FILES:
                break
    return out


def _add_copy(prov: Provenance, span: Span, context: Path, workdir: str, evidence: str) -> None:
    flags, args = span.flags_and_args()
    if "from" in flags or len(args) < 2:
        return
    *sources, dest = args
    target = _dest(dest, workdir)
    many = len(sources) > 1 or dest.endswith("/")
    origin = Origin("image", evidence, "copy")
    for source in sources:
        listed = _context_files(context, source)
        if not listed:
            continue
        is_dir = listed[0][1]
        if is_dir:
            prov.image_dirs.setdefault(target, origin)
        for rel, _d in listed:
            file = Origin("image", evidence, "copy", posixpath.join(source, rel) if is_dir else source)
            if is_dir or many or target in prov.image_dirs or target in (workdir, *FOLDERS):
                prov.image[posixpath.join(target, rel)] = file
            else:
                prov.image[target] = file


def run_writes(cmd: Command) -> list[str]:
    """The paths one RUN command writes: redirection targets, `tee`'s files, the destination of cp/mv/install,
    `touch`'s files, `curl -o` / `wget -O`."""
    out = [t for op, t in cmd.redirects if op in (">", ">>", ">|", "&>")]
    args = cmd.words[1:]
    plain = [w for w in args if not w.startswith("-")]
    if cmd.name == "tee" or cmd.name == "touch":
        out += plain
    elif cmd.name in WRITERS_LAST and len(plain) >= 2:
        out.append(plain[-1])
    elif cmd.name in ("curl", "wget"):
        flag = "-o" if cmd.name == "curl" else "-O"
        out += [args[i + 1] for i, w in enumerate(args[:-1]) if w in (flag, "--output", "--output-document")]
    if cmd.name.startswith("python") and "-c" in args[:-1]:
        out += PY_WRITE.findall(args[args.index("-c") + 1])
    return [p for p in out if p and not p.startswith(("$", "/dev/")) and p != "-"]


def _add_run(prov: Provenance, span: Span, workdir: str, lines: list[str], evidence_of) -> None:
    body = span.heredoc if span.heredoc is not None else (span.resolved or span.value).strip()
    while span.heredoc is None and body.startswith("--"):  # RUN --mount=... --network=...
        body = body.partition(" ")[2].strip()
    first = span.start + (1 if span.heredoc is not None else 0)
    cwd = workdir
    for cmd in parse_script(body):
        if not cmd.reachable:
            continue
        if cmd.name == "cd" and len(cmd.words) > 1:
            cwd = _dest(cmd.words[1], cwd)
            continue
        line = first + cmd.line
        for path in run_writes(cmd):
            origin = Origin("image", evidence_of(_naming_line(span, lines, path, line)), "run")
            prov.image.setdefault(_dest(path, cwd), origin)
        _track_bytecode(prov, cmd, cwd, evidence_of(line))
        if cmd.name == "rm":  # removed again at build: not in the image
            for gone in (_dest(w, cwd) for w in cmd.words[1:] if not w.startswith("-")):
                prov.image.pop(gone, None)
                prov.image_dirs.pop(gone, None)
        if cmd.name == "mkdir":
            for d in (w for w in cmd.words[1:] if not w.startswith("-")):
                origin = Origin("image", evidence_of(_naming_line(span, lines, d, line)), "run")
                prov.image_dirs.setdefault(_dest(d, cwd), origin)


IMPORT = re.compile(r"(?:^|[;\s])(?:from\s+([\w.]+)\s+import|import\s+([\w.]+(?:\s*,\s*[\w.]+)*))")


def _imported_names(code: str) -> set[str]:
    """The top-level module names a piece of Python source imports (`import a.b, c` -> a, c)."""
    names = set()
    for frm, imp in IMPORT.findall(code):
        for name in [frm] if frm else imp.split(","):
            names.add(name.strip().split(".")[0])
    return names


def _track_bytecode(prov: Provenance, cmd: Command, cwd: str, evidence: str) -> None:
    """Follow Python's bytecode through the build: `python -m mod` / `python -c "import mod"` / a copied script
    that imports mod writes mod's .pyc beside it (unless -B or PYTHONDONTWRITEBYTECODE); an `rm` of mod.py keeps
    that .pyc; removing __pycache__ (or every *.pyc) clears it."""
    words = cmd.words
    quiet = prov.no_bytecode or "-B" in words or any(a.startswith("PYTHONDONTWRITEBYTECODE=") for a in cmd.assignments)
    if cmd.name.startswith("python") and not quiet:
        names: set[str] = set()
        if "-m" in words[:-1]:
            names.add(words[words.index("-m") + 1].split(".")[0])
        if "-c" in words[:-1]:
            names |= _imported_names(words[words.index("-c") + 1])
        script = next((w for w in words[1:] if w.endswith(".py")), None)
        folder = cwd
        if script:
            folder = posixpath.dirname(_dest(script, cwd))
            origin = prov.image.get(_dest(script, cwd))
            if origin is not None and origin.source and prov.context is not None:
                try:
                    names |= _imported_names((prov.context / origin.source).read_text(errors="replace"))
                except OSError:
                    pass
        for name in names:
            prov.imported.setdefault(posixpath.join(folder, f"{name}.py"), evidence)
    if cmd.name == "rm":
        for gone in (_dest(w, cwd) for w in words[1:] if not w.startswith("-")):
            if gone in prov.imported and gone in prov.image:
                prov.bytecode_left[gone] = (prov.imported[gone], evidence)
            if posixpath.basename(gone) == "__pycache__" or any(k.startswith(gone + "/") for k in prov.bytecode_left):
                prov.bytecode_left = {
                    k: v for k, v in prov.bytecode_left.items() if not _under(k, gone.removesuffix("/__pycache__"))
                }
    if cmd.name == "find" and ("__pycache__" in words or any(".pyc" in w for w in words)):
        prov.bytecode_left.clear()  # `find / -name '*.pyc' -delete` or `-name __pycache__ -exec rm -rf`


def _naming_line(span: Span, lines: list[str], path: str, default: int) -> int:
    """The 1-based line of a continued RUN that names `path` (a RUN's continuations are one command line)."""
    for n in range(span.start, min(span.end, len(lines))):
        if path in lines[n]:
            return n + 1
    return default


def provenance_of(env: Environment, spans: list[Span]) -> Provenance:
    """The provenance of `env`'s files from its Dockerfile's spans (the task model's) and its build context."""
    prov = Provenance(
        tests_targets=tuple(c.target for c in env.tests) or ("/tests",),
        solution_targets=tuple(c.target for c in env.solution) or ("/solution",),
    )
    try:
        rel = env.dockerfile.relative_to(env.root).as_posix()
        lines = env.dockerfile.read_text(errors="replace").splitlines()
    except (OSError, ValueError):
        return prov
    final = max((s.stage for s in spans), default=-1)

    def evidence(n: int) -> str:  # 1-based
        return f"{rel}:{n}: {lines[n - 1].strip()}" if 0 < n <= len(lines) else f"{rel}:{n}"

    workdir = "/"
    prov.context = env.build_context
    for span in spans:
        if span.stage != final:
            continue
        if span.keyword in ("ENV", "ARG") and "PYTHONDONTWRITEBYTECODE" in span.value:
            prov.no_bytecode = True
        if span.keyword == "WORKDIR":
            workdir = _dest((span.resolved or span.value).strip(), workdir)
        elif span.keyword in ("COPY", "ADD"):
            _add_copy(prov, span, env.build_context, workdir, evidence(span.start + 1))
        elif span.keyword == "RUN":
            _add_run(prov, span, workdir, lines, evidence)
    prov.workdir = workdir
    return prov
