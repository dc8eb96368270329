"""Every built-in probe, registered, and `run_probes`: what `[probes] enabled` names runs here.

A probe is declared once, in the probe registry (core/registry/rules.py PROBES: its id, stage, how the gate
re-checks it, whether the hunt runs it by default; its rules name it in rules.toml). Its function registers
under that id (`@register_probe` in probes/base.py, which the probes themselves import); this module imports
the probes' modules, so the registry is complete without base.py importing its own users, and checks at import
that the functions and the declarations are the same set.
"""

from __future__ import annotations

import structlog

from envqa.core.errors import InfraError
from envqa.core.models import Finding
from envqa.core.registry import HUNT_PROBES
from envqa.probes import flakiness, oracle_state, solver_passes  # noqa: F401  (each registers itself)
from envqa.probes.base import PROBES as REGISTERED
from envqa.probes.base import Probe, ProbeContext, registered_probe
from envqa.probes.exploits import probe as exploits  # noqa: F401  (each registers itself)
from envqa.probes.network import egress  # noqa: F401  (each registers itself)
from envqa.probes.nop import cause as nop_cause  # noqa: F401  (each registers itself)
from envqa.probes.static import findings as static  # noqa: F401  (each registers itself)

log = structlog.get_logger(__name__)


def _check_declared() -> None:
    """A registered function without its registry row (or a hunt row without its function) fails here, at
    import, not when a run names it."""
    registered, declared = set(REGISTERED.names()), set(HUNT_PROBES)
    if registered != declared:
        raise ValueError(
            f"probe functions {sorted(registered - declared)} have no hunt row in core/registry/rules.py PROBES; "
            f"hunt rows {sorted(declared - registered)} have no @register_probe function imported here"
        )


_check_declared()


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
