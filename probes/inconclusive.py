"""Outcomes that mean "could not judge", not "the task is broken": they make the verdict `incomplete`.

- `verifier-needs-network`: the task lets its verifier reach the network (as Harbor runs it: the verifier
  phase's policy, core/network_policy.py), the oracle's verifier failed every time, and either our sandbox cut the
  network and the verifier downloads at verify time (curl/uv/pip/apt, parsed from the script) and
  failed with a network error or no reward; or, whatever cut it (the machine has no DNS or no route,
  with `default_network = "public"` too), its output shows a name that did not resolve or a network that
  was unreachable (curl's `Could not resolve host`, pip/uv's resolution errors, `Temporary failure in
  name resolution`, `Network is unreachable`, a Python `ConnectionError` on a name). A refused connection
  alone is not enough then: with the network up, a server the oracle failed to start says that too. The
  oracle-fails / verifier-error findings are withdrawn: they say nothing about the task. Conclusive next
  time where a network exists, or with the downloads baked into the image.
- `image-map-build-failed`: the build failed and the image map had replaced a `FROM` image with our
  local base (no registry here). The failure may be the substitute's, not the task's (no `pip3`, an
  Ubuntu PPA on Debian): both images and the failing step are named. Not when the failing step fails on
  any base (read from the step itself: a COPY/ADD of a path outside the build context or missing from it,
  or the builder saying so): that stays the task's `image-build-failed`, with the reason in its evidence.

- `setup-needs-network`, `oracle-needs-network`, `build-needs-network`: the same question for the other phases
  (probes/network/phase.py): a step's setup.sh, the reference solution's own output, a build step's log. The
  image-map message stays for steps that fail for the substitute base's sake.

None is ever a finding. Each is a dict {outcome, message, remedy, evidence, ...} in the report's
`inconclusive` list, and its message goes into `incomplete` (exit 3).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.image_map import rewrite_dockerfile
from envqa.core.models import Finding, Outcome, TrialResult
from envqa.core.network_policy import agent_network_of
from envqa.core.registry import BUILD_ERRORS, VERIFIER_ERRORS
from envqa.core.registry.network_errors import NETWORK_ERROR, RESOLVER_ERROR
from envqa.core.task_config import NetworkMode
from envqa.probes.network.phase import build_needs_network, phase_needs_network
from envqa.probes.static.fetch_rules import task_network_cut, verifier_targets

# The network-error signatures: one registry for every phase (core/registry/network_errors.toml). NETWORK_ERROR
# is any of them; RESOLVER_ERROR only a name that did not resolve or a network with no route (narrower: a
# "connection refused" is a local server the oracle did not start as often as a cut network).
WITHDRAWN = {"oracle-fails", "oracle-flaky", "verifier-error"}
STEP = re.compile(r"^Step \d+/\d+ : (.+)$")


def verifier_network_cut(env: Environment, config: QAConfig) -> bool:
    """Whether our verifier ran without a network: `[sandbox] verifier_network = "none"`, or the sandbox's own
    network was none (the default: `[sandbox] default_network = "none"`; or the agent phase's `no-network`, which
    our shared container keeps for the verifier where Harbor would switch to the verifier phase's policy)."""
    if config.sandbox.verifier_network == "none":
        return True
    return (
        config.sandbox.default_network == "none"
        or task_network_cut(env)
        or agent_network_of(env) == NetworkMode.NO_NETWORK
    )


def _verifier_output(result: TrialResult) -> str:
    path = Path(result.artifacts_dir or "") / "verifier" / "test-stdout.txt"
    return path.read_text(errors="replace") if path.is_file() else ""


def _resolver_targets(outputs: dict[str, str]) -> list[str]:
    """The hosts the verifier's output names as unresolved (curl, pip, uv, requests, git), for the evidence."""
    hosts = re.findall(
        r"(?:resolve host:?|host=|host '|resolve '|lookup |Failed to resolve ')\s*'?([\w.-]+\.[a-z]{2,})",
        "\n".join(outputs.values()),
        re.I,
    )
    return list(dict.fromkeys(hosts))


def verifier_needs_network(env: Environment, config: QAConfig, results: list[TrialResult]) -> dict | None:
    if task_network_cut(env):
        return None  # the task itself is offline: then a downloading verifier IS its defect
    oracle = [r for r in results if r.agent == "oracle"]
    failed = [r for r in oracle if r.outcome != Outcome.PASS and r.error_class not in BUILD_ERRORS]
    if not failed or len(failed) < len(oracle):
        return None  # some oracle run passed: the network was there or not needed
    outputs = {r.trial_id: _verifier_output(r) for r in failed}
    cut_by_us = verifier_network_cut(env, config)
    resolver = [(tid, m.group(0)) for tid, text in outputs.items() for m in [RESOLVER_ERROR.search(text)] if m]
    targets = verifier_targets(env)
    if cut_by_us and targets:
        errors = [(tid, m.group(0)) for tid, text in outputs.items() for m in [NETWORK_ERROR.search(text)] if m]
        if not errors and not any(r.error_class in VERIFIER_ERRORS for r in failed):
            return None  # the tests ran and judged: a plain fail is the task's, not the network's
    elif len(resolver) == len(failed):  # every failed run shows it, whoever cut the network
        errors = resolver
        targets = targets or [f"{h} (named in the verifier's output)" for h in _resolver_targets(outputs)]
        targets = targets or ["(a host the verifier's output does not name)"]
    else:
        return None
    evidence = [f"the verifier reaches for: {t}" for t in targets[:8]]
    evidence += [f"trial {tid}: verifier output says {what!r}" for tid, what in errors[:3]]
    evidence += [f"trial {r.trial_id}: outcome={r.outcome.value} error={r.error_class}" for r in failed[:3]]
    why = (
        "the network was cut"
        if cut_by_us
        else "this machine gave it no working network (a name did not resolve or a network was unreachable), "
        f"although qa did not cut it ([sandbox] default_network = {config.sandbox.default_network!r})"
    )
    return {
        "outcome": "verifier-needs-network",
        "message": "the verifier reaches the network at verify time ("
        + ", ".join(targets[:4])
        + ") and "
        + why
        + ": the oracle's failure says nothing about the task",
        "remedy": "to make the run conclusive, give the verifier the task's network: [sandbox] verifier_network = "
        '"task" with [sandbox] default_network = "public" on a machine where names resolve; or '
        "install what the verifier fetches in the image",
        "urls": targets,
        "evidence": evidence,
        "trial_ids": [r.trial_id for r in failed],
        "network_cut_by": "qa" if cut_by_us else "machine",
    }


def failing_step(log_tail: str) -> str | None:
    steps = [m.group(1) for line in log_tail.splitlines() for m in [STEP.match(line.strip())] if m]
    return steps[-1] if steps else None


def _copy_sources(step: str) -> list[str] | None:
    """The local sources of a COPY/ADD step (None: not one, or one that copies from a stage, image or URL)."""
    words = step.split(None, 1)
    if len(words) < 2 or words[0].upper() not in ("COPY", "ADD"):
        return None
    rest = words[1].strip()
    while rest.startswith("--"):  # --chown=, --chmod=, --link; --from= copies from a stage or an image
        flag, _, rest = rest.partition(" ")
        if flag.startswith("--from"):
            return None
        rest = rest.strip()
    try:
        args = json.loads(rest) if rest.startswith("[") else shlex.split(rest)
    except (ValueError, json.JSONDecodeError):
        return None
    sources = [a for a in args[:-1] if isinstance(a, str)]
    if not sources or any("://" in a or a.startswith("git@") for a in sources):
        return None
    return sources


def base_independent_failure(env: Environment, step: str | None, message: str) -> str | None:
    """Why the failing step fails on any base image (a COPY/ADD of a path outside the build context or missing
    from it), or None when the step may depend on what the base image has. Read from the failing step itself:
    the step line of the build log against the build context, and the builder's own words."""
    sources = _copy_sources(step or "")
    context = env.build_context.resolve()
    for src in sources or []:
        if "$" in src:
            return None  # a build argument: what it names is not known here
        rel = src.lstrip("/").rstrip("/")  # Docker reads a leading / relative to the context
        if not (context / rel).resolve().is_relative_to(context):
            return f"{step}: source {src!r} is outside the build context ({_rel_dir(env)})"
        if rel not in ("", ".") and not any(True for _ in context.glob(rel)):
            return f"{step}: source {src!r} is missing from the build context ({_rel_dir(env)})"
    lowered = message.lower()
    if "forbidden path outside the build context" in lowered or "outside of the build context" in lowered:
        return f"{step or '(a COPY/ADD step)'}: {message.strip()}"
    if (
        step
        and _copy_sources(step) is not None
        and ("file not found in build context" in lowered or "no such file or directory" in lowered)
    ):
        return f"{step}: {message.strip()}"
    return None


def _rel_dir(env: Environment) -> str:
    try:
        return env.build_context.relative_to(env.root).as_posix() or "."
    except ValueError:
        return str(env.build_context)


def image_map_build_failed(env: Environment, config: QAConfig, error: Exception) -> dict | None:
    if getattr(error, "timed_out", False):
        return None
    _text, rewrites, _bases = rewrite_dockerfile(
        env.dockerfile.read_text(errors="replace"), config.sandbox.resolved_image_map()
    )
    if not rewrites:
        return None
    log_tail = getattr(error, "log_tail", "") or ""
    if build_needs_network(error, failing_step(log_tail)) is not None:
        return None  # the step reached for the network: build-needs-network, not the substitute's doing
    if base_independent_failure(env, failing_step(log_tail), f"{error}\n{log_tail}") is not None:
        return None  # fails on the original base too: the task's finding, not the substitute's
    step = failing_step(log_tail) or "(no step line in the build log)"
    swapped = ", ".join(f"{orig} -> {target}" for orig, target in rewrites)
    return {
        "outcome": "image-map-build-failed",
        "message": f"the image did not build after the image map replaced its base ({swapped}); failing step: {step} "
        f"({error}). The substitute may lack what the original image has",
        "remedy": "to make the run conclusive, build against the original image: [sandbox] image_map_enabled = false "
        "where a registry is reachable, or map the image to a local one that has what this step needs",
        "images": [{"original": o, "substitute": t} for o, t in rewrites],
        "step": step,
        "evidence": [f"image map: {swapped}", f"failing step: {step}", f"error: {error}"]
        + ([f"build log (last lines):\n{chr(10).join(log_tail.splitlines()[-12:])}"] if log_tail else []),
    }


def withdraw(findings: list[Finding], outcome: dict | None) -> list[Finding]:
    """Validation findings the inconclusive outcome explains away (never a finding against the task)."""
    if outcome is None:
        return findings
    return [f for f in findings if f.rule not in WITHDRAWN]


def incomplete_line(outcome: dict) -> str:
    return f"{outcome['outcome']}: {outcome['message']}. {outcome['remedy']}"


def build_failure_update(env: Environment, config: QAConfig, error: Exception, finding: Finding) -> dict:
    """The validate node's state update for a failed build: inconclusive when the failing step reached for the
    network (build-needs-network) or after an image-map swap (image-map-build-failed), else the finding."""
    outcome = build_needs_network(error, failing_step(getattr(error, "log_tail", "") or "")) or image_map_build_failed(
        env, config, error
    )
    if outcome is None:
        log_tail = getattr(error, "log_tail", "") or ""
        why = base_independent_failure(env, failing_step(log_tail), f"{error}\n{log_tail}")
        if why is not None:  # the image map may have swapped the base, but this step fails on any base
            finding = finding.model_copy(
                update={
                    "message": f"{finding.message} (the failing step does not depend on the base image: {why})",
                    "evidence": [f"fails on the original base image too: {why}", *finding.evidence],
                    "fix": "copy only files inside the build context (environment/), and make sure they exist",
                }
            )
        return {"findings": [finding.model_dump(mode="json")]}
    return {"inconclusive": [outcome], "incomplete": [incomplete_line(outcome)]}


def validation_update(env: Environment, config: QAConfig, results: list[TrialResult], findings: list[Finding]) -> dict:
    """Validation findings, minus those a cut network explains (then the run is inconclusive instead). The
    phases in the order they run: a step's setup, the reference solution, the verifier; the first whose own
    output shows the network error is the cause."""
    outcome = (
        phase_needs_network(env, config, results, "setup")
        or phase_needs_network(env, config, results, "oracle")
        or verifier_needs_network(env, config, results)
    )
    update = {"findings": [f.model_dump(mode="json") for f in withdraw(findings, outcome)]}
    if outcome is not None:
        update.update(inconclusive=[outcome], incomplete=[incomplete_line(outcome)])
    return update
