"""`[[verifier.collect]]` hooks: commands run in a compose service after the agent phase, before artifacts are
collected, so that a service's runtime state (a database's rows, a counter) lands in files an artifact can take.

Follows harbor 0.26.0 `harbor/trial/trial.py` `_run_collect_hooks`: each hook runs in its service (`main` is the
agent's container) with its own timeout and user, best effort: a failing hook is logged and recorded, never
aborts the trial. The service is reached through `Sandbox.service(name)` (the Docker backend's compose
sidecars, sandbox/sidecars.py). Difference: each hook's outcome is returned (and can be kept with the trial)
instead of only logged, and a hook naming a service the task does not run is recorded as such.
"""

from __future__ import annotations

import structlog
from pydantic import BaseModel

from envqa.core.sandbox import Sandbox, SandboxError
from envqa.core.task_config import VerifierCollectConfig

log = structlog.get_logger(__name__)


class HookResult(BaseModel):
    service: str
    command: str
    exit_code: int | None = None
    timed_out: bool = False
    error: str | None = None  # the hook could not run at all (no such service, the backend failed)


def run_collect_hooks(sandbox: Sandbox, hooks: list[VerifierCollectConfig]) -> list[HookResult]:
    out = []
    for hook in hooks:
        result = HookResult(service=hook.service, command=hook.command)
        try:
            target = sandbox.service(hook.service)
            res = target.exec(
                ["sh", "-c", hook.command], timeout=hook.timeout_sec, user=None if hook.user is None else str(hook.user)
            )
            result.exit_code, result.timed_out = res.exit_code, res.timed_out
        except KeyError:
            result.error = f"no compose service {hook.service!r} runs beside main"
        except (NotImplementedError, SandboxError) as e:
            result.error = str(e)
        if result.error or result.timed_out or result.exit_code != 0:
            log.warning("collect_hook.failed", **result.model_dump())
        out.append(result)
    return out
