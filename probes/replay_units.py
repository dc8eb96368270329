"""Replays as probe-job units: a recorded solver pass or a stored LLM exploit, re-run without any model.

The gate's regrade, the hunter's pass replays and the stored-exploit regression replays each run one trial
that carries a live agent (a `ReplayAgent`, optionally under host strace), so they travel the way probes do:
as a job (envqa.probes.dispatch) whose arguments are plain data -- the commands, or the stored exploit --
and whose trial is rebuilt and run where the job runs, then recorded in the store.
"""

from __future__ import annotations

from collections.abc import Callable

from envqa.core.models import Finding
from envqa.probes.base import ProbeContext
from envqa.probes.exploits.regression import RegressionExploit, replay_exploit
from envqa.probes.solver_passes import ReplayAgent

SOLVER_REPLAY = "solver-replay"
EXPLOIT_REPLAY = "exploit-replay"


def solver_replay_args(commands: list[str], source: str, purpose: str, index: int = 0, trace: bool = False) -> dict:
    return {"commands": commands, "source": source, "purpose": purpose, "index": index, "trace": trace}


def exploit_replay_args(exploit: RegressionExploit, purpose: str, index: int = 0) -> dict:
    return {"exploit": exploit.model_dump(mode="json"), "purpose": purpose, "index": index}


def _solver_replay(ctx: ProbeContext, args: dict) -> list[Finding]:
    ctx.trial(
        ReplayAgent(args["commands"], args["source"]), purpose=args["purpose"], index=args["index"], trace=args["trace"]
    )
    return []


def _exploit_replay(ctx: ProbeContext, args: dict) -> list[Finding]:
    replay_exploit(ctx, RegressionExploit.model_validate(args["exploit"]), purpose=args["purpose"], index=args["index"])
    return []


UNITS: dict[str, Callable[[ProbeContext, dict], list[Finding]]] = {
    SOLVER_REPLAY: _solver_replay,
    EXPLOIT_REPLAY: _exploit_replay,
}
