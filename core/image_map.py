"""The image map: `FROM` references rewritten to locally built bases (no registry is reachable here).

Pure text work, shared by the backends that build images (sandbox/images.py) and by the probes that
explain a failed build (probes/inconclusive.py names which bases the map swapped).
"""

from __future__ import annotations

import fnmatch
import re

FROM_RE = re.compile(r"^(\s*FROM\s+)((?:--\S+\s+)*)(\S+)(.*)$", re.IGNORECASE)


def map_image(ref: str, image_map: dict[str, str]) -> str | None:
    for pattern, target in image_map.items():
        if fnmatch.fnmatchcase(ref, pattern) or fnmatch.fnmatchcase(ref.removeprefix("docker.io/library/"), pattern):
            return target
    return None


def rewrite_dockerfile(text: str, image_map: dict[str, str]) -> tuple[str, list[tuple[str, str]], list[str]]:
    """Return (new text, [(original, replacement)], base image refs after rewriting)."""
    stages: set[str] = set()
    rewrites: list[tuple[str, str]] = []
    bases: list[str] = []
    out = []
    for line in text.splitlines(keepends=True):
        m = FROM_RE.match(line.rstrip("\n"))
        if m:
            prefix, flags, ref, rest = m.groups()
            stage = re.search(r"\s+AS\s+(\S+)", rest, re.IGNORECASE)
            if ref.lower() not in stages:
                target = map_image(ref, image_map)
                if target:
                    rewrites.append((ref, target))
                    line = f"{prefix}{flags}{target}{rest}\n"
                    ref = target
                bases.append(ref)
            if stage:
                stages.add(stage.group(1).lower())
        out.append(line)
    return "".join(out), rewrites, bases
