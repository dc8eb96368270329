"""The report's `coverage`: every probe that ran, was skipped (with why) or was lost to the machinery.

Probes record their own entries through `ProbeContext.skip` / `ran` (probes/base.py); the hunt node
puts them in the state. This adds the stages around the hunt (validation, sweep) so a reader sees in
one list what was tried and what was not, and why: nothing is skipped silently.
"""

from __future__ import annotations


def coverage_section(state: dict) -> list[dict]:
    out: list[dict] = []
    for outcome in state.get("inconclusive") or []:
        out.append(
            {"probe": "validate", "status": "inconclusive", "reason": f"{outcome['outcome']}: {outcome['message']}"}
        )
    if not state.get("inconclusive"):
        trials = [
            t
            for t in state.get("trials") or []
            if t.get("purpose", "validate") == "validate" and t.get("agent") in ("oracle", "nop")
        ]
        out.append(
            {
                "probe": "validate",
                "status": "ran" if trials else "skipped",
                "reason": f"{len(trials)} oracle/nop trial(s)" if trials else "the image did not build",
            }
        )
    sweep = state.get("sweep")
    out.append(
        {
            "probe": "sweep",
            "status": "ran" if sweep else "skipped",
            "reason": None if sweep else "no solver model configured ([sweep] models or --model)",
        }
    )
    hunt = state.get("coverage")
    out += hunt if isinstance(hunt, list) else []
    return out
