"""Parse an environment version once per process: parsed environments kept by content, not by path.

Before a run's first trial the same files were parsed at least four times (the CLI's check, the runner, the
snapshot, each graph node's `current_env`), and a worker parsed them again for every trial and probe job. A
version's identity is its content hash (core/environment.py `content_hash`), so the parse of one directory
serves every directory with the same content: the user's task directory and its snapshot under QA_HOME/envs/
differ only in where they are, and `rebased` moves a parsed model's paths from one root to the other.

The key is the content hash plus what the hash does not see but the parse does: which entries are symlinks
(a symlinked solve.sh is refused, its target's bytes hash the same; a symlinked directory's files are not
hashed at all) and whether the load is `lint`'s lenient one. An edited environment has a new hash, so it is
parsed anew; nothing is ever served for content it was not parsed from.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from envqa.core.defaults import ENV_CACHE_SIZE

M = TypeVar("M", bound=BaseModel)
CacheKey = tuple[str, tuple[str, ...], bool]


def symlinks_under(root: Path, ignored: set[str]) -> tuple[str, ...]:
    """Relative paths of the symlinks (files and directories) under root, outside the ignored directories."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ignored]
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                found.append(path.relative_to(root).as_posix())
    return tuple(sorted(found))


def rebased(value: Any, old: Path, new: Path) -> Any:
    """`value` with every Path under `old` moved under `new`; models and lists are copied, text is left alone (what
    names the root in text is the caller's to redo: core/environment.py `_moved`)."""
    if old == new:
        return value
    if isinstance(value, BaseModel):
        return value.model_copy(update={k: rebased(getattr(value, k), old, new) for k in type(value).model_fields})
    if isinstance(value, list):
        return [rebased(v, old, new) for v in value]
    if isinstance(value, Path) and value.is_relative_to(old):
        return new / value.relative_to(old)
    return value


class ParseCache(Generic[M]):
    """The last ENV_CACHE_SIZE parsed models by key, each with the root it was parsed at; thread-safe."""

    def __init__(self, size: int = ENV_CACHE_SIZE):
        self.size = size
        self._items: OrderedDict[CacheKey, tuple[Path, M]] = OrderedDict()
        self._lock = threading.Lock()
        self.parses = 0  # parses stored (cache misses), for tests and diagnostics

    def get(self, key: CacheKey) -> tuple[Path, M] | None:
        """The root `key` was parsed at and the model parsed there; None when never parsed (or evicted). The
        model is shared: it is never changed in place (callers copy with `model_copy(update=...)`)."""
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
        return hit

    def put(self, key: CacheKey, root: Path, model: M) -> None:
        with self._lock:
            self.parses += 1
            self._items[key] = (root, model)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        """Forget every parse, and start counting afresh."""
        with self._lock:
            self._items.clear()
            self.parses = 0
