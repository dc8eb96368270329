"""Index answers kept under QA_HOME/cache/indexes/, each for a TTL, so a warm `qa lint --online` asks nothing.

One JSON file per question (a Packages file's URL, a project at an index), named by the question's hash and
holding the question too: a hash collision or a file of another shape reads as a miss, never as an answer. A
file that cannot be read or written is a miss as well (the lint then asks the index again): a cache is never a
reason for a lint to fail. Only answers are kept; an index that did not answer is asked again next time.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from pydantic import BaseModel, ValidationError

from envqa.core.layout import write_atomic


class Entry(BaseModel):
    key: str
    fetched_at: float  # time.time() when the index answered
    versions: dict[str, list[str]]  # package -> versions (a pip project's file: its one name)


class AnswerCache:
    def __init__(self, root: Path, ttl_sec: float):
        self.root = root
        self.ttl_sec = ttl_sec

    def _path(self, key: str) -> Path:
        return self.root / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".json")

    def get(self, key: str) -> dict[str, list[str]] | None:
        if self.ttl_sec <= 0:
            return None
        try:
            entry = Entry.model_validate_json(self._path(key).read_bytes())
        except (OSError, ValueError, ValidationError):
            return None
        if entry.key != key or time.time() - entry.fetched_at > self.ttl_sec:
            return None
        return entry.versions

    def put(self, key: str, versions: dict[str, list[str]]) -> None:
        if self.ttl_sec <= 0:
            return
        entry = Entry(key=key, fetched_at=time.time(), versions=versions)
        try:
            write_atomic(self._path(key), json.dumps(entry.model_dump(), separators=(",", ":")))
        except OSError:
            pass  # a read-only or full QA_HOME: the next lint asks again
