"""The ordinary ways a user's file breaks, applied at random to a copy of a seed folder (issue 44).

A `Mutation` is drawn from a seeded `random.Random`, so a seed printed by `make fuzz` replays its cases exactly:
cut short, random bytes, not UTF-8, a BOM, CRLF line endings, emptied, deleted, a folder where the file was,
a dangling or looping symlink, a symlink to a folder, a FIFO, no permission, far too large (sparse), nested too
deep (JSON and TOML), and a value of the wrong type in a `key = value` / `key: value` / JSON document.

(hypothesis is not in requirements.lock; these draws are plain seeded randomness, replayable from the seed.)
"""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path

from envqa.core.defaults import INPUT_FILE_MAX, JSON_MAX

KINDS = (
    "truncate",
    "random_bytes",
    "non_utf8",
    "bom",
    "crlf",
    "empty",
    "delete",
    "folder",
    "dangling_symlink",
    "symlink_loop",
    "symlink_to_dir",
    "fifo",
    "no_permission",
    "oversize",
    "deep_nesting",
    "wrong_type",
)

WRONG_VALUES_TOML = ('"text"', "12", "-1", "1e400", "true", '[1, "a"]', "{ a = 1 }", "1979-05-27", '""', "nan")
WRONG_VALUES_YAML = ("text", "12", "-1", "1e400", "true", "[1, a]", "{a: 1}", "null", '""', "~", "!!binary aGk=")
WRONG_VALUES_JSON = ("text", 12, -1, 1e308, True, None, [1, "a"], {"a": {"b": []}}, "", [], {})


@dataclass(frozen=True)
class Mutation:
    kind: str
    target: str  # the path, relative to the folder, that was changed
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.target}" + (f" ({self.detail})" if self.detail else "")


def files_of(root: Path) -> list[Path]:
    """Regular files under root (not through symlinks), sorted: what a mutation may pick."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                out.append(p)
    return sorted(out)


def _wrong_type(rng: random.Random, path: Path, data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    if path.suffix == ".json":
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and doc:
            key = rng.choice(sorted(doc))
            doc[key] = rng.choice(WRONG_VALUES_JSON)
            path.write_text(json.dumps(doc))
            return f"{key} -> {doc[key]!r}"
        path.write_text(json.dumps(rng.choice(WRONG_VALUES_JSON)))
        return "top level replaced"
    yaml = path.suffix in (".yaml", ".yml")
    lines = text.splitlines()
    pattern = re.compile(r"^(\s*[\w.-]+\s*:\s*)\S.*$" if yaml else r"^(\s*[\w.-]+\s*=\s*).+$")
    candidates = [i for i, ln in enumerate(lines) if pattern.match(ln)]
    if not candidates:
        path.write_text(text + ("\nkey: [1, {a: }\n" if yaml else "\nkey = [1, {a = }\n"))
        return "appended a broken entry"
    i = rng.choice(candidates)
    value = rng.choice(WRONG_VALUES_YAML if yaml else WRONG_VALUES_TOML)
    lines[i] = pattern.sub(lambda m: m.group(1) + value, lines[i])
    path.write_text("\n".join(lines) + "\n")
    return f"line {i + 1} -> {value}"


def _deep(rng: random.Random, path: Path) -> str:
    depth = rng.choice((150, 1_000, 5_000, 100_000))
    if path.suffix == ".toml":
        path.write_text("a = " + "[" * depth + "]" * depth + "\n")
    elif path.suffix in (".yaml", ".yml"):
        path.write_text("a: " + "[" * depth + "]" * depth + "\n")
    else:
        opener, closer = rng.choice((("[", "]"), ('{"a":', "}")))
        path.write_text(opener * depth + "1" + closer * (depth if rng.random() < 0.5 else depth // 2))
    return f"depth {depth}"


def _replace(rng: random.Random, path: Path, kind: str, root: Path) -> str:
    """Apply `kind` to `path` (a regular file); returns a detail for the report."""
    data = path.read_bytes()
    if kind == "truncate":
        cut = rng.randrange(0, max(1, len(data)))
        path.write_bytes(data[:cut])
        return f"cut at byte {cut} of {len(data)}"
    if kind == "random_bytes":
        n = rng.choice((1, 16, 512, 4096))
        path.write_bytes(rng.randbytes(n))
        return f"{n} random bytes"
    if kind == "non_utf8":
        at = rng.randrange(0, len(data) + 1)
        path.write_bytes(data[:at] + rng.choice((b"\xff\xfe", b"\xc3\x28", b"\x80", b"\xed\xa0\x80")) + data[at:])
        return f"bad byte at {at}"
    if kind == "bom":
        path.write_bytes(b"\xef\xbb\xbf" + data)
        return ""
    if kind == "crlf":
        path.write_bytes(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
        return ""
    if kind == "empty":
        path.write_bytes(b"")
        return ""
    if kind == "oversize":
        size = (JSON_MAX if path.suffix == ".json" and rng.random() < 0.5 else INPUT_FILE_MAX) + 1
        with path.open("ab") as f:
            f.truncate(size)  # sparse: the size is what a reader sees, the disk holds the old bytes
        return f"{size:,} bytes"
    if kind == "deep_nesting":
        return _deep(rng, path)
    if kind == "wrong_type":
        return _wrong_type(rng, path, data)
    if kind == "no_permission":
        path.chmod(0)
        return "mode 000"
    path.unlink()
    if kind == "folder":
        path.mkdir()
        if rng.random() < 0.5:
            (path / "inner.txt").write_text("a file inside the folder\n")
    elif kind == "dangling_symlink":
        path.symlink_to(path.parent / "does-not-exist")
    elif kind == "symlink_loop":
        path.symlink_to(path.name)
    elif kind == "symlink_to_dir":
        path.symlink_to(root)
    elif kind == "fifo":
        os.mkfifo(path)
    return ""


def mutate(rng: random.Random, root: Path, n: int | None = None, *, only: list[str] | None = None) -> list[Mutation]:
    """1 to 3 mutations (or `n`) on files under `root`; `only` restricts the kinds."""
    done = []
    for _ in range(n or rng.choice((1, 1, 1, 2, 3))):
        files = files_of(root)
        if not files:
            break
        path = rng.choice(files)
        kind = rng.choice(only or KINDS)
        detail = _replace(rng, path, kind, root)
        done.append(Mutation(kind, path.relative_to(root).as_posix(), detail))
    return done
