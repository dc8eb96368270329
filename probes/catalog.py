"""Every built-in probe, registered, and `run_probes`: what `[probes] enabled` names runs here.

The registry and `register_probe` live in probes/base.py, which the probes themselves import; this module
imports the probes (each registers itself as it loads), so the registry is complete without base.py
importing its own users.
"""

from __future__ import annotations

import structlog

from envqa.core.errors import InfraError
from envqa.core.models import Finding
from envqa.probes import egress, exploits, flakiness, nop_cause, oracle_state, solver_passes, static  # noqa: F401  (each registers itself)
from envqa.probes.base import Probe, ProbeContext, registered_probe

log = structlog.get_logger(__name__)


def get_probe(name: str) -> Probe:
    """A built-in (or otherwise registered) probe by name; KeyError naming the known ones for any other."""
    return registered_probe(name)


def run_probes(ctx: ProbeContext, names: list[str]) -> tuple[list[Finding], list[str]]:
    """Run probes in order; returns (findings, probes the machinery stopped: their questions stay open)."""
    findings: list[Finding] = []
    lost: list[str] = []
    for name in names:
        probe = get_probe(name)
        log.info("probe.start", probe=name, env=ctx.env.name)
        before = len(ctx.coverage)
        try:
            findings.extend(probe(ctx))
        except InfraError as e:
            log.warning("probe.infra_failed", probe=name, error=str(e))
            lost.append(f"probe {name}: {e.error_class}: {e}")
            ctx.coverage.append({"probe": name, "status": "lost", "reason": f"{e.error_class}: {e}"})
            continue
        if not any(c["probe"] == name for c in ctx.coverage[before:]):
            ctx.ran(name)
    return findings, lost
