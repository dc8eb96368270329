"""The registry of import formats: each says whether a folder is one of its own (`detect`) and reads it
(`read(path, pass_threshold)`: trials and problems, one at a time). `read_runs` asks the formats in their
registration order and the first that claims a folder reads it; a folder no format claims is searched for
ones below it. Order matters where shapes nest (a Harbor trial folder sits inside a Harbor job folder), so the
built-ins register, most specific first, in envqa/core/readers/__init__.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from envqa.core.imported import ImportedTrial, ImportProblem

Detect = Callable[[Path], bool]
Read = Callable[[Path, float], Iterator[ImportedTrial | ImportProblem]]


@dataclass(frozen=True)
class ImportFormat:
    name: str
    detect: Detect
    read: Read


FORMATS: list[ImportFormat] = []


def register_format(name: str, *, detect: Detect, read: Read) -> ImportFormat:
    """Add a format after those registered before it (a later registration under the same name replaces it, in
    its place)."""
    fmt = ImportFormat(name=name, detect=detect, read=read)
    for i, known in enumerate(FORMATS):
        if known.name == name:
            FORMATS[i] = fmt
            return fmt
    FORMATS.append(fmt)
    return fmt


def format_of(path: Path) -> ImportFormat | None:
    """The first registered format that claims the folder, or None."""
    return next((fmt for fmt in FORMATS if fmt.detect(path)), None)
