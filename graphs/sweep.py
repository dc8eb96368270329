"""The sweep node: solver trials per model on the per-model queues (issue 4 fills this in).

With no models configured it does nothing, which is how `qa run` works with no API key.
"""

from __future__ import annotations


def sweep_node(deps, state) -> dict:
    return {}
