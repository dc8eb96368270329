"""Outcomes that mean "could not judge", not "the task is broken": they make the verdict `incomplete`.

- `verifier-needs-network`: the task lets its containers reach the network (as Harbor runs it, the
  verifier has that network), the verifier downloads at verify time (curl/uv/pip/apt, parsed from
  the script), our sandbox cut the network, and the oracle's verifier failed with a network error or
  no reward. The oracle-fails / verifier-error findings that cut produced are withdrawn: they say
  nothing about the task. Conclusive next time with `[sandbox] default_network = "public"` (and
  `[sandbox] verifier_network = "task"`) where a network exists, or with the downloads baked into
  the image.
- `image-map-build-failed`: the build failed and the image map had replaced a `FROM` image with our
  local base (no registry here). The failure may be the substitute's, not the task's (no `pip3`, an
  Ubuntu PPA on Debian): both images and the failing step are named.

Neither is ever a finding. Each is a dict {outcome, message, remedy, evidence, ...} in the report's
`inconclusive` list, and its message goes into `incomplete` (exit 3).
"""

from __future__ import annotations

import re
from pathlib import Path

from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.image_map import rewrite_dockerfile
from envqa.core.models import Finding, Outcome, TrialResult
from envqa.core.registry import BUILD_ERRORS, VERIFIER_ERRORS
from envqa.probes.static import fetch_commands, pip_args, task_network_cut

NETWORK_ERROR = re.compile(
    r"could not resolve host|temporary failure in name resolution|name or service not known|network is unreachable|"
    r"failed to establish a new connection|no matching distribution found|could not fetch url|getaddrinfo|"
    r"enotfound|eai_again|dial tcp|unable to access '|failed to download|error sending request|couldn't connect|"
    r"failed to resolve|connection refused|no route to host|could not connect to|unable to fetch", re.I)
WITHDRAWN = {"oracle-fails", "oracle-flaky", "verifier-error"}
STEP = re.compile(r"^Step \d+/\d+ : (.+)$")


def verifier_network_cut(env: Environment, config: QAConfig) -> bool:
    """Whether our verifier ran without a network: `[sandbox] verifier_network = "none"`, or the sandbox's own
    network was none (the default: `[sandbox] default_network = "none"`)."""
    if config.sandbox.verifier_network == "none":
        return True
    return config.sandbox.default_network == "none" or task_network_cut(env)


def _verifier_output(result: TrialResult) -> str:
    path = Path(result.artifacts_dir or "") / "verifier" / "test-stdout.txt"
    return path.read_text(errors="replace") if path.is_file() else ""


def _targets(env: Environment) -> list[str]:
    """What the verifier reaches for: the URLs it names, else the index a package manager would ask."""
    out: list[str] = []
    for cmd, urls in fetch_commands(env):
        if urls:
            out += urls
        elif pip_args(cmd) is not None or cmd.name in ("uvx", "uv", "pipx"):
            out.append(f"https://pypi.org/simple/ ({' '.join(cmd.words)})")
        elif cmd.name in ("apt-get", "apt"):
            out.append(f"http://deb.debian.org/ ({' '.join(cmd.words)})")
        else:
            out.append(f"({' '.join(cmd.words)})")
    return list(dict.fromkeys(out))


def verifier_needs_network(env: Environment, config: QAConfig, results: list[TrialResult]) -> dict | None:
    if task_network_cut(env) or not verifier_network_cut(env, config):
        return None  # the task itself is offline (then a downloading verifier IS its defect), or we cut nothing
    oracle = [r for r in results if r.agent == "oracle"]
    failed = [r for r in oracle if r.outcome != Outcome.PASS and r.error_class not in BUILD_ERRORS]
    if not failed or len(failed) < len(oracle):
        return None  # some oracle run passed offline: the downloads were not needed
    targets = _targets(env)
    if not targets:
        return None
    outputs = {r.trial_id: _verifier_output(r) for r in failed}
    errors = [(tid, m.group(0)) for tid, text in outputs.items() for m in [NETWORK_ERROR.search(text)] if m]
    if not errors and not any(r.error_class in VERIFIER_ERRORS for r in failed):
        return None  # the tests ran and judged: a plain fail is the task's, not the network's
    evidence = [f"the verifier reaches for: {t}" for t in targets[:8]]
    evidence += [f"trial {tid}: verifier output says {what!r}" for tid, what in errors[:3]]
    evidence += [f"trial {r.trial_id}: outcome={r.outcome.value} error={r.error_class}" for r in failed[:3]]
    return {
        "outcome": "verifier-needs-network",
        "message": "the verifier downloads at verify time (" + ", ".join(targets[:4]) + ") and the network was cut: "
                   "the oracle's failure says nothing about the task",
        "remedy": "to make the run conclusive, give the verifier the task's network: [sandbox] verifier_network = "
                  "\"task\" with [sandbox] default_network = \"public\" where a network exists; or install what the "
                  "verifier fetches in the image",
        "urls": targets, "evidence": evidence, "trial_ids": [r.trial_id for r in failed],
    }


def failing_step(log_tail: str) -> str | None:
    steps = [m.group(1) for line in log_tail.splitlines() for m in [STEP.match(line.strip())] if m]
    return steps[-1] if steps else None


def image_map_build_failed(env: Environment, config: QAConfig, error: Exception) -> dict | None:
    if getattr(error, "timed_out", False):
        return None
    _text, rewrites, _bases = rewrite_dockerfile(env.dockerfile.read_text(errors="replace"),
                                                 config.sandbox.resolved_image_map())
    if not rewrites:
        return None
    log_tail = getattr(error, "log_tail", "") or ""
    step = failing_step(log_tail) or "(no step line in the build log)"
    swapped = ", ".join(f"{orig} -> {target}" for orig, target in rewrites)
    return {
        "outcome": "image-map-build-failed",
        "message": f"the image did not build after the image map replaced its base ({swapped}); failing step: {step} "
                   f"({error}). The substitute may lack what the original image has",
        "remedy": "to make the run conclusive, build against the original image: [sandbox] image_map_enabled = false "
                  "where a registry is reachable, or map the image to a local one that has what this step needs",
        "images": [{"original": o, "substitute": t} for o, t in rewrites], "step": step,
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
    """The validate node's state update for a failed build: inconclusive after an image-map swap, else the finding."""
    outcome = image_map_build_failed(env, config, error)
    if outcome is None:
        return {"findings": [finding.model_dump(mode="json")]}
    return {"inconclusive": [outcome], "incomplete": [incomplete_line(outcome)]}


def validation_update(env: Environment, config: QAConfig, results: list[TrialResult],
                      findings: list[Finding]) -> dict:
    """Validation findings, minus those a cut network explains (then the run is inconclusive instead)."""
    outcome = verifier_needs_network(env, config, results)
    update = {"findings": [f.model_dump(mode="json") for f in withdraw(findings, outcome)]}
    if outcome is not None:
        update.update(inconclusive=[outcome], incomplete=[incomplete_line(outcome)])
    return update
