"""The hunt node: the shortcut hunter's deterministic probes (issue 5 fills this in)."""

from __future__ import annotations


def hunt_node(deps, state) -> dict:
    return {}
