"""Which phase needed the network: setup, the agent (the reference solution) and the build each get their own
inconclusive cause, as the verifier has `verifier-needs-network` (probes/inconclusive.py). All of them read the
network-error signatures of one registry (core/registry/network_errors.toml).

- `oracle-needs-network`: the task lets its agent phase reach the network, every oracle run failed, and each
  one's own output (solve.sh's, `agent/oracle.txt`) shows a network error: a name that did not resolve, no route,
  or (when qa cut the network) a connection that failed to a host that is not loopback. Typical shape: solve.sh
  runs `apt-get install nginx` and prints `Temporary failure resolving 'deb.debian.org'`; the server never
  starts and the tests fail. Not when the task cuts its agent phase itself (then a downloading solution is the
  task's defect: `oracle-fails`), nor when qa has an open network for the hosts named (`[probes]
  egress_network`, or a fake internet serving them): the egress probe reruns the oracle there and judges.
- `setup-needs-network`: the same, for a multi-step task's `workdir/setup.sh` that failed (steps/<name>/setup.txt).
- `build-needs-network`: the image build's failing step printed a resolver or connection error (curl exit 6,
  `Could not resolve host`, apt's `Temporary failure resolving`, pip's `Failed to establish a new connection`).
  Builds here reach the package registries only; the image map's own message is for steps that fail for the
  substitute base's sake.

The nop runs no command, so its agent phase prints nothing to attribute; its verifier is the verifier's case.
Each outcome withdraws the validation findings it explains (oracle-fails, oracle-flaky, verifier-error).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.models import Outcome, TrialResult
from envqa.core.network_policy import agent_network_of
from envqa.core.registry import BUILD_ERRORS
from envqa.core.registry.network_errors import LOOPBACK, network_error_lines
from envqa.core.task_config import NetworkMode

Phase = Literal["setup", "oracle"]
URL_HOST = re.compile(r"\b(?:https?|ftp)://([\w-]+(?:\.[\w-]+)+)", re.I)
# A host the error line names: curl/wget/apt/urllib3/requests spellings.
LINE_HOST = re.compile(
    r"(?:resolve host:?|host address|resolving|resolve|host=|connect to|lookup)\s*'?"
    r"([a-z][\w-]*(?:\.[\w-]+)+)'?",
    re.I,
)
STEP_SETUP_FAILED = "setup.sh failed"
# The legacy builder streams a step's stderr in colored chunks, which the build log's tail keeps one per line
# (`\x1b[91mC\x1b[0m`, `\x1b[91mould not\x1b[0m`, ...): join them before reading the lines.
ANSI = re.compile(r"\x1b\[[0-9;]*m")
STDERR_SEAM = re.compile(r"\x1b\[0m\r?\n\x1b\[91m")
EXIT_CODE = re.compile(r"returned a non-zero code: (\d+)")
# Exit codes that are the network's, for the programs that document them (curl(1) EXIT CODES; wget(1) EXIT
# STATUS): what the log says when the message itself fell out of the tail.
NETWORK_EXITS = {
    "curl": {5: "could not resolve proxy", 6: "could not resolve host", 7: "failed to connect to host"},
    "wget": {4: "network failure"},
}


def _phase_files(result: TrialResult, phase: Phase) -> list[Path]:
    """Where a trial keeps the phase's own output: solve.sh's (the task's or each step's), or each step's
    setup.sh that failed (agents/steps.py)."""
    root = Path(result.artifacts_dir or "")
    if phase == "oracle":
        return [root / "agent" / "oracle.txt", *sorted(root.glob("steps/*/agent/oracle.txt"))]
    failed = {s.name for s in result.step_results if s.stopped == STEP_SETUP_FAILED}
    return [root / "steps" / name / "setup.txt" for name in sorted(failed)]


def _network_lines(result: TrialResult, phase: Phase, cut_by_qa: bool) -> list[str]:
    root = Path(result.artifacts_dir or "")
    lines: list[str] = []
    for path in _phase_files(result, phase):
        if path.is_file():
            rel = path.relative_to(root).as_posix()
            lines += [
                f"{rel}: {line}" for line in network_error_lines(path.read_text(errors="replace"), cut_by_qa=cut_by_qa)
            ]
    return lines


def _hosts(lines: list[str], scripts: list[Path]) -> list[str]:
    """The hosts the failing lines name, then those in the phase's own scripts' URLs."""
    hosts = [m.group(1).lower() for line in lines for m in LINE_HOST.finditer(line)]
    hosts += [m.group(1).lower() for line in lines for m in URL_HOST.finditer(line)]
    for script in scripts:
        files = [script] if script.is_file() else sorted(p for p in script.rglob("*") if p.is_file())
        for f in files[:50]:
            hosts += [m.group(1).lower() for m in URL_HOST.finditer(f.read_text(errors="replace"))]
    return list(dict.fromkeys(h.rstrip(".") for h in hosts))


def judged_by_egress(config: QAConfig, hosts: list[str]) -> bool:
    """qa has an open network for these hosts: the egress probe reruns the oracle there (probes/network/egress.py)."""
    s = config.probes
    served = {h.lower() for h in s.fake_internet_hosts}
    return bool(s.egress_network) or (bool(s.fake_internet_dir) and bool(served & set(hosts)))


def _scripts(env: Environment, phase: Phase) -> list[Path]:
    if phase == "oracle":
        return [c.source for c in env.solution] + [s.solution.parent for s in env.steps if s.solution]
    return [s.workdir for s in env.steps if s.workdir is not None]


def phase_needs_network(env: Environment, config: QAConfig, results: list[TrialResult], phase: Phase) -> dict | None:
    """`oracle-needs-network` / `setup-needs-network`, or None (see the module doc)."""
    if agent_network_of(env) == NetworkMode.NO_NETWORK:
        return None  # the task gives its agent phase no network: a solution that downloads is its defect
    oracle = [r for r in results if r.agent == "oracle"]
    failed = [r for r in oracle if r.outcome != Outcome.PASS and r.error_class not in BUILD_ERRORS]
    if not failed or len(failed) < len(oracle):
        return None  # some oracle run passed: the network was there or not needed
    cut_by_qa = config.sandbox.default_network == "none"
    per_trial = {r.trial_id: _network_lines(r, phase, cut_by_qa) for r in failed}
    if not all(per_trial.values()):
        return None  # a run failed without a network error in this phase: the failure may be the task's
    lines = [f"trial {tid}: {line}" for tid, found in per_trial.items() for line in found[:2]]
    hosts = _hosts(lines, _scripts(env, phase))
    if phase == "oracle" and judged_by_egress(config, hosts):
        return None  # the egress probe reruns the oracle with the network and judges (network-dependent-pass)
    who = "the reference solution" if phase == "oracle" else "a step's setup.sh"
    why = (
        'qa ran the agent phase without a network ([sandbox] default_network = "none")'
        if cut_by_qa
        else "this machine gave it no working network (a name did not resolve or a network was unreachable)"
    )
    named = ", ".join(hosts[:4]) or "a host its output does not name"
    return {
        "outcome": f"{phase}-needs-network",
        "message": f"{who} reaches the network ({named}) and {why}: its failure says nothing about the task",
        "remedy": "to make the run conclusive, run where the task's network exists ([sandbox] default_network = "
        '"public" on a machine where names resolve, or [probes] egress_network), or install what '
        f"{'solve.sh' if phase == 'oracle' else 'setup.sh'} fetches in the image",
        "hosts": hosts,
        "evidence": lines[:6]
        + [f"trial {r.trial_id}: outcome={r.outcome.value} reward={r.reward}" for r in failed[:3]],
        "trial_ids": [r.trial_id for r in failed],
        "network_cut_by": "qa" if cut_by_qa else "machine",
    }


def build_needs_network(error: Exception, step: str | None) -> dict | None:
    """`build-needs-network`: the failing build step printed a resolver or connection error. A build has no
    loopback server to miss, so any connection error that does not name loopback counts."""
    if getattr(error, "timed_out", False):
        return None
    log_tail = getattr(error, "log_tail", "") or ""
    lines = network_error_lines(ANSI.sub("", STDERR_SEAM.sub("", f"{error}\n{log_tail}")), cut_by_qa=True)
    lines = lines or _exit_code_lines(error, step)
    if not lines:
        return None
    hosts = _hosts(lines, [])
    hosts += [h for h in (m.group(1).lower() for m in URL_HOST.finditer(step or "")) if h not in hosts]
    shown = step or "(no step line in the build log)"
    return {
        "outcome": "build-needs-network",
        "message": f"the image build reaches the network ({', '.join(hosts[:4]) or 'a host the log does not name'}) "
        f"in step {shown}, and this machine gives builds no route there: the failure says nothing "
        "about the task",
        "remedy": "to make the run conclusive, build where those hosts are reachable; or vendor what the step "
        "downloads into environment/ and COPY it (then the task builds offline too)",
        "step": shown,
        "hosts": hosts,
        "evidence": [f"failing step: {shown}", *[f"build log: {line}" for line in lines], f"error: {error}"],
    }


def _exit_code_lines(error: Exception, step: str | None) -> list[str]:
    """The failing RUN step's exit code, when it is the network's for a program the step runs (curl exit 6)."""
    m = EXIT_CODE.search(str(error))
    if not m or not step or LOOPBACK.search(step):
        return []
    code = int(m.group(1))
    return [
        f"the step exited {code}, {program}'s exit code for {meaning!r}"
        for program, codes in NETWORK_EXITS.items()
        for c, meaning in codes.items()
        if c == code and re.search(rf"(?<![\w-]){program}(?![\w-])", step)
    ][:1]
