"""Probes on the oracle's end state: one traced oracle trial whose container is kept after the verifier.

On that state: verifier re-runs (flakiness), the reference outputs searched for in the image (leaked
answers), mutation testing, variations, then collateral damage beside the outputs (probes/collateral/). One
container serves them all, so they cost verifier runs, not container starts.

Trust tracing (probes/trust.py) runs on the end state whatever the oracle did (issue 35): a failing oracle
still leaves one the verifier judged, and a verifier that reads its expected answer from the agent's image is a
flaw either way. When the oracle leaves none (it crashed, or no verifier ran), the nop's end state is traced.
A failing oracle still holds the mechanical fixers back (graphs/revise.py); the findings are reported.
"""

from __future__ import annotations

import json

from envqa.core.defaults import PROBE_QUICK_EXEC_SEC, PROBE_SCAN_EXEC_SEC
from envqa.core.models import Finding, Outcome, TrialResult
from envqa.core.package_scripts import read_script
from envqa.core.registry import VERIFIER_ERRORS
from envqa.core.sandbox import Sandbox
from envqa.core.wrap_tools import task_tests_text
from envqa.probes.base import ProbeContext, register_probe
from envqa.probes.collateral.probe import PROBE as COLLATERAL
from envqa.probes.collateral.probe import collateral_findings
from envqa.probes.flakiness import rerun_findings
from envqa.probes.mutation.probe import mutation_findings, output_files
from envqa.probes.network.strace_rules import pass_findings
from envqa.probes.trust import trace_anchors, trust_findings
from envqa.probes.variation.probe import PROBE as VARIATION
from envqa.probes.variation.probe import variation_findings

MIN_LEAK_BYTES = 16

# The image scans (probes/scripts/image_scan.py; here its "copies" question), run with python3 -c in the image.
IMAGE_SCAN = read_script(__package__, "scripts/image_scan.py")


def leaked_output_findings(sandbox: Sandbox, result: TrialResult, outputs: list[str]) -> list[Finding]:
    """The oracle's data outputs already present, byte for byte, somewhere in the image."""
    import hashlib

    files = []
    for path in outputs:
        try:
            data = sandbox.read_file(path)
        except (FileNotFoundError, IsADirectoryError):
            continue
        mode = sandbox.exec(["stat", "-c", "%a", path], timeout=PROBE_QUICK_EXEC_SEC).stdout.strip() or "644"
        if len(data) >= MIN_LEAK_BYTES and not int(mode, 8) & 0o111 and not data.startswith(b"#!"):
            files.append({"path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    if not files:
        return []
    try:
        changed = [c.path for c in sandbox.changed_paths()]
    except NotImplementedError:
        changed = outputs
    payload = json.dumps(
        {"files": files, "exclude": changed, "skip": ["/proc", "/sys", "/dev", "/run", "/tests", "/solution", "/logs"]}
    )
    res = sandbox.exec(["python3", "-c", IMAGE_SCAN, "copies"], input=payload.encode(), timeout=PROBE_SCAN_EXEC_SEC)
    try:
        hits = json.loads(res.stdout.strip().splitlines()[-1]) if res.ok else []
    except (json.JSONDecodeError, IndexError):
        hits = []
    if not hits:
        return []
    return [
        Finding.of(
            rule="solution-output-in-image",
            message="the reference solution's outputs are already in the agent's image: copying them earns reward",
            evidence=[f"oracle output {out} is byte-identical to image file {src}" for out, src in hits[:10]],
            location="environment/Dockerfile",
            trial_ids=[result.trial_id],
        )
    ]


@register_probe("oracle_state")
def oracle_state_probe(ctx: ProbeContext) -> list[Finding]:
    if any(t.agent == "oracle" for t in ctx.validation) and not ctx.passed("oracle") and not ctx.settings.strace:
        ctx.skip(
            "oracle_state",
            "the oracle did not pass in validation: no passing end state for verifier re-runs, "
            "the leaked-output search or mutation testing; trust tracing is off ([probes] strace = false)",
        )
        return []  # nothing to mutate: validation already reported the broken reference
    threshold = ctx.config.validate_.pass_threshold
    found: list[Finding] = []
    anchors: list = []  # trust tracing (probes/trust.py): image files the verifier reads or runs
    traced_on: list[TrialResult] = []  # the end state trust tracing ran on (the oracle's, else the nop's)

    def trace(sandbox: Sandbox, result: TrialResult) -> None:
        """Trust tracing on any end state the verifier judged, pass or fail (issue 35: a verifier that reads its
        expected answer from the agent's image is a flaw whatever the oracle does)."""
        if not ctx.settings.strace or not verifier_ran(result):
            return
        traced = trace_anchors(sandbox, ctx.env, result)
        traced_on.append(result)
        if isinstance(traced, str):
            ctx.skip("oracle_state/trust", traced)
        else:
            anchors.extend(traced)
            ctx.ran(
                "oracle_state/trust",
                f"{len(traced)} image file(s) used by the verifier on the end state of "
                f"{result.agent} trial {result.trial_id} ({result.outcome.value})",
            )

    def on_state(sandbox: Sandbox, result: TrialResult) -> None:
        trace(sandbox, result)  # first, before reruns and mutants touch the end state
        if result.outcome != Outcome.PASS:
            ctx.skip(
                "oracle_state",
                f"the hunt's oracle run {result.trial_id} did not pass: no passing end state for "
                "verifier re-runs, the leaked-output search, mutation testing or variations (trust tracing "
                "ran on its end state)",
            )
            return
        found.extend(rerun_findings(sandbox, ctx.env, result, ctx.settings.verifier_reruns, threshold, ctx.verifier))
        outputs = output_files(sandbox, 50)
        found.extend(leaked_output_findings(sandbox, result, outputs))
        if not ctx.passed("nop"):  # a verifier that passes nop passes every mutant: already reported
            found.extend(
                mutation_findings(sandbox, ctx.env, result, ctx.settings.max_mutated_files, threshold, ctx.verifier)
            )
            ctx.ran("oracle_state/mutation")
        else:
            ctx.skip("oracle_state/mutation", "nop already earns reward: every mutant would pass too")
        if ctx.passed("nop"):  # the variation probe's build products are not undone exactly: near the end
            ctx.skip(VARIATION, "nop already earns reward: the verifier accepts any end state")
            ctx.skip(COLLATERAL, "nop already earns reward: the verifier passes any damage too")
            return
        found.extend(variation_findings(ctx, sandbox, result, threshold))
        found.extend(collateral_findings(ctx, sandbox, result, threshold))  # last: a stopped service stays stopped

    trial = ctx.trial("oracle", purpose="hunt-oracle-state", trace=ctx.settings.strace, keep=on_state)
    found.extend(pass_findings(trial, ctx.env.instruction, "the oracle", tests_text=task_tests_text(ctx.env)))
    traced = trial.result
    if ctx.settings.strace and not traced_on:  # the oracle left no judged end state: trace the nop's
        traced = ctx.trial("nop", purpose="hunt-nop-state", keep=trace).result
    found.extend(trust_findings(ctx, anchors, traced))
    return found


def verifier_ran(result: TrialResult) -> bool:
    """The verifier judged this end state (pass or fail), or ran and wrote no reward: what it read is known."""
    return result.outcome in (Outcome.PASS, Outcome.FAIL) or result.error_class in VERIFIER_ERRORS
