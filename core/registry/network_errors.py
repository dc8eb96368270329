"""The network-error signature registry: the lines programs print when the network was not there (curl's
`Could not resolve host`, apt's `Temporary failure resolving`, pip's `Failed to establish a new connection`,
...). The rows are data, in network_errors.toml next to this module; every phase's attribution reads them
(probes/inconclusive.py: the verifier; probes/network/phase.py: setup, the oracle, the build).

`kind` says how much a line proves: `resolver` (no name resolved, no route: never the task's doing),
`connection` (a connection failed: on loopback, a local server that is not up, which is the task's), `symptom`
(what a package manager says after a failure that may also be a misspelt name online).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

DATA = Path(__file__).with_name("network_errors.toml")
Kind = Literal["resolver", "connection", "symptom"]
# A connection-kind line that names loopback is a local server the script did not start, not the network.
LOOPBACK = re.compile(r"\blocalhost\b|\b127\.\d+\.\d+\.\d+\b|\[::1\]|\b0\.0\.0\.0\b", re.I)


@dataclass(frozen=True)
class NetworkSignature:
    name: str
    pattern: str
    kind: Kind
    tools: str
    example: str

    @property
    def regex(self) -> re.Pattern:
        return re.compile(self.pattern, re.I)


def _load() -> tuple[NetworkSignature, ...]:
    """The rows of network_errors.toml; a malformed row, a bad regex or a pattern that misses its own example
    fails here, at import."""
    try:
        rows = tuple(NetworkSignature(**row) for row in tomllib.loads(DATA.read_text())["signature"])
    except (TypeError, KeyError) as e:
        raise ValueError(f"{DATA}: a [[signature]] row is malformed: {e}") from None
    for row in rows:
        if row.kind not in ("resolver", "connection", "symptom"):
            raise ValueError(f"{DATA}: signature {row.name!r}: unknown kind {row.kind!r}")
        try:
            matched = row.regex.search(row.example)
        except re.error as e:
            raise ValueError(f"{DATA}: signature {row.name!r}: bad pattern: {e}") from None
        if not matched:
            raise ValueError(f"{DATA}: signature {row.name!r} does not match its own example")
    return rows


def _union(kinds: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(f"(?:{s.pattern})" for s in NETWORK_SIGNATURES if s.kind in kinds), re.I)


NETWORK_SIGNATURES: tuple[NetworkSignature, ...] = _load()
# Any network failure (the verifier's check where qa cut a network its script uses).
NETWORK_ERROR = _union(("resolver", "connection", "symptom"))
# A name that did not resolve or a network with no route: whatever cut it, not the task's doing.
RESOLVER_ERROR = _union(("resolver",))
# What a phase's own output must show for qa to blame the network (not a symptom alone).
PHASE_NETWORK_ERROR = _union(("resolver", "connection"))


def network_error_lines(text: str, *, cut_by_qa: bool, limit: int = 3) -> list[str]:
    """The lines of `text` that say the network was not there: resolver lines always; connection lines when
    qa cut the network and the line does not name loopback (a refused localhost is a server not started)."""
    found: list[str] = []
    for line in text.splitlines():
        if RESOLVER_ERROR.search(line) or (
            cut_by_qa and PHASE_NETWORK_ERROR.search(line) and not LOOPBACK.search(line)
        ):
            found.append(line.strip()[:300])
            if len(found) >= limit:
                break
    return found
