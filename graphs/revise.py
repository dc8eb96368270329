"""The revise and gate nodes: propose a patch for the current version's findings, then prove it.

`revise_node` tries the mechanical fixers first (no model) and hands what they cannot fix to the LLM
reviser when `[reviser] model` is set; otherwise it says which rules need a model. A repair (after a
failed gate) goes to the model with the gate's reasons. `gate_node` runs the validation gate
(envqa.graphs.gate) on the candidate version. Both keep proposals in the store; the state holds only the
proposal id, a note and the gate's feedback. Nodes never read the user's directory: only versions.
"""

from __future__ import annotations

import hashlib

import structlog

from envqa.agents.fixers import actionable, fixable_rules
from envqa.agents.fixers.pins import image_packages
from envqa.agents.fixers.separate import AUTHOR as SEPARATE_AUTHOR
from envqa.agents.fixers.separate import choose_fix, discard, separate_after_gate
from envqa.agents.reviser import answer_diff, ask_reviser, build_prompt
from envqa.agents.structured import is_invalid_answer
from envqa.core.environment import load_environment
from envqa.core.errors import InfraError, PatchError
from envqa.core.models import Finding, GateCheck, GateResult, Proposal, SpecConsistency
from envqa.core.patches import make_diff
from envqa.core.run_deps import RunDeps
from envqa.core.store import Versions
from envqa.graphs.gate import GateInputs, feedback, oracle_notice, run_gate
from envqa.graphs.loop_state import state_trials
from envqa.graphs.spend import run_budget
from envqa.probes.static.spec_consistency import check_revision, spec_of

log = structlog.get_logger(__name__)


def _image_packages(deps: RunDeps, version_dir):
    """`pip freeze` of the version's image, computed once and only if a fixer asks for it."""
    cache: dict = {}

    def get() -> dict[str, str]:
        if "v" not in cache:
            cache["v"] = image_packages(deps.backend, load_environment(version_dir), deps.config)
        return cache["v"]

    return get


def _proposal_id(run_id: str, parent: str, attempt: int, diff: str) -> str:
    return "p-" + hashlib.sha256(f"{run_id}|{parent}|{attempt}|{diff}".encode()).hexdigest()[:12]


def _latest(deps: RunDeps, run_id: str, parent: str) -> Proposal | None:
    mine = [p for p in deps.store.proposals_for_run(run_id) if p.parent_version == parent]
    return mine[-1] if mine else None


def revise_node(deps: RunDeps, state) -> dict:
    """-> {"proposal_id": str | None, "revise_note": str}"""
    run_id, version = state["run_id"], state["version"]
    vs = deps.versions
    findings = actionable([Finding.model_validate(f) for f in state.get("findings", [])])
    request = state.get("request") or None
    model = deps.config.reviser.model
    previous = _latest(deps, run_id, version) if state.get("gate_feedback") else None
    attempt = previous.attempt + 1 if previous else 1
    notice = oracle_notice(findings)
    if notice:  # the gate needs a passing oracle: a mechanical fix cannot pass, only an oracle fix (a model's) can
        return _oracle_first(deps, state, findings, request, previous, attempt, notice)
    # the separate-verifier conversion: an alternative to the in-place fixers (agents/fixers/separate.py)
    alt = (
        separate_after_gate(
            deps.config.reviser.separate_verifier, previous, vs.path(version), findings, workdir=deps.config.home
        )
        if previous
        else None
    )
    if previous is None or alt is not None:
        fix, author = (
            (alt, SEPARATE_AUTHOR)
            if alt
            else choose_fix(
                deps.config.reviser.separate_verifier,
                vs.path(version),
                findings,
                workdir=deps.config.home,
                image_packages=_image_packages(deps, vs.path(version)),
            )
        )
        try:
            if fix.addressed and fix.fixed_dir is not None:  # (a fix that addressed a rule has its directory)
                diff = make_diff(vs.path(version), fix.fixed_dir)
                return _propose(
                    deps,
                    vs,
                    state,
                    diff,
                    author=author + "+".join(fix.addressed),
                    addresses=fix.addressed,
                    rationale="; ".join(fix.rationale),
                    expected=fix.expected,
                    attempt=attempt,
                    needs_model=[] if model else fix.needs_model,
                    findings=findings,
                )
        finally:
            discard(fix)
        open_rules = fix.needs_model
    else:
        open_rules = sorted({f.rule for f in findings})
    if not open_rules and not request:
        return {"proposal_id": None, "revise_note": "nothing to revise: no open finding and no request"}
    if not model:
        what = ", ".join(open_rules) or f"request {request['kind'] if request else ''}"
        declined = "" if previous else "".join(f"; {r}: {why}" for r, why in fix.declined.items())
        return {"proposal_id": None, "revise_note": f"needs a model: {what}{declined}"}
    budget = run_budget(deps, state)  # the whole run's spend, every role (graphs/spend.py)
    if budget.exhausted:
        return {"proposal_id": None, "revise_note": "budget reached, no reviser call: " + "; ".join(budget.reasons)}
    return _model_proposal(deps, vs, state, findings, request, previous, attempt)


def _oracle_first(
    deps: RunDeps, state, findings, request, previous: Proposal | None, attempt: int, notice: str
) -> dict:
    """The parent's reference solution fails. The note says so first; no mechanical fix is proposed (none can
    pass the gate, which needs a passing oracle); the LLM reviser, when configured, may still fix the oracle."""
    fixable = sorted({f.rule for f in findings if f.rule in fixable_rules()})
    held = f"; mechanical fixes held back until then: {', '.join(fixable)}" if fixable else ""
    if not deps.config.reviser.model:
        return {"proposal_id": None, "revise_note": f"{notice}{held}; needs a model: oracle-fails"}
    budget = run_budget(deps, state)
    if budget.exhausted:
        return {
            "proposal_id": None,
            "revise_note": f"{notice}; budget reached, no reviser call: " + "; ".join(budget.reasons),
        }
    out = _model_proposal(deps, deps.versions, state, findings, request, previous, attempt)
    return {**out, "revise_note": f"{notice}; {out['revise_note']}"}


def _model_proposal(
    deps: RunDeps, vs: Versions, state, findings, request, previous: Proposal | None, attempt: int
) -> dict:
    run_id, version = state["run_id"], state["version"]
    model = deps.config.reviser.model
    assert model is not None  # its callers return "needs a model" first
    env = vs.load(version)
    prompt = build_prompt(
        vs.path(version),
        env.name,
        version,
        findings,
        labels=state.get("labels"),
        sweep=state.get("sweep"),
        request=request,
    )
    prev_answer: dict[str, object] | None = None
    failures: list[GateCheck] = []
    if previous is not None:
        prev_answer = {
            "addresses": previous.addresses,
            "rationale": previous.rationale,
            "expected_effect": previous.expected_effect,
            "diff": previous.diff,
        }
        if previous.spec_check and previous.spec_check.model:
            prev_answer["spec_consistency"] = previous.spec_check.model.model_dump(mode="json")
        failures = (
            previous.gate.failures()
            if previous.gate
            else [GateCheck(name="gate", passed=False, detail=state.get("gate_feedback") or "")]
        )
    try:
        answer, spend = ask_reviser(
            deps.config,
            deps.executor,
            run_id=run_id,
            model=model,
            prompt=prompt,
            previous=prev_answer,
            failures=failures,
            attempt=attempt,
            spec=spec_of(vs.path(version)) is not None,
        )
    except InfraError as e:  # no valid answer after the repair prompts: no proposal, the gate is not asked
        if not is_invalid_answer(e):
            raise
        log.info("reviser.invalid_answer", model=model, attempt=attempt, error=str(e)[:300])
        return {
            "proposal_id": None,
            "revise_note": f"model:{model} gave no valid answer (attempt {attempt}): {str(e)[:300]}",
        }
    log.info("reviser.answer", model=model, edits=len(answer.edits), attempt=attempt, spend=spend)
    if not answer.edits:
        return {"proposal_id": None, "revise_note": f"model:{model} proposes no change: {answer.rationale[:300]}"}
    tb1 = env.format == "tb1"
    try:
        diff = answer_diff(vs.path(version), answer, tb1)
    except PatchError as e:
        return _refused(deps, state, str(e), f"model:{model}", answer.addresses, attempt, answer.rationale, spend=spend)
    return _propose(
        deps,
        vs,
        state,
        diff,
        author=f"model:{model}",
        addresses=answer.addresses or sorted({f.rule for f in findings}),
        rationale=answer.rationale,
        expected=answer.expected_effect,
        attempt=attempt,
        needs_model=[],
        findings=findings,
        spend=spend,
        spec_verdict=getattr(answer, "spec_consistency", None),
    )


def _propose(
    deps,
    vs: Versions,
    state,
    diff: str,
    *,
    author: str,
    addresses: list[str],
    rationale: str,
    expected: list[str],
    attempt: int,
    needs_model: list[str],
    findings: list[Finding],
    spend: dict | None = None,
    spec_verdict: SpecConsistency | None = None,
) -> dict:
    run_id, version = state["run_id"], state["version"]
    try:
        info = vs.apply_patch(version, diff, author=author, reason=rationale[:500], run_id=run_id)
    except PatchError as e:
        return _refused(deps, state, str(e), author, addresses, attempt, rationale, diff, spend=spend)
    labels = sorted({str(f.label) for f in findings if f.rule in addresses})
    proposal = Proposal(
        proposal_id=_proposal_id(run_id, version, attempt, diff),
        run_id=run_id,
        parent_version=version,
        candidate_version=info.version,
        diff=diff,
        addresses=addresses,
        labels=labels,
        rationale=rationale,
        expected_effect=expected,
        author=author,
        attempt=attempt,
        needs_model=needs_model,
        spend=spend or {},
        spec_check=check_revision(vs.path(version), vs.path(info.version), spec_verdict),
    )
    deps.store.save_proposal(proposal)
    note = f"{author} proposes {info.version[:12]} for {', '.join(addresses)}"
    if proposal.spec_check and proposal.spec_check.flagged:
        note += "; CONTRADICTS THE SPEC: " + "; ".join(proposal.spec_check.reasons())
    if needs_model:
        note += f"; needs a model: {', '.join(needs_model)}"
    return {"proposal_id": proposal.proposal_id, "revise_note": note}


def _refused(
    deps,
    state,
    problem: str,
    author: str,
    addresses: list[str],
    attempt: int,
    rationale: str,
    diff: str = "",
    spend: dict | None = None,
) -> dict:
    """A patch that does not apply or leaves the task: kept as a failed proposal so a repair can see why."""
    gate = GateResult(passed=False, checks=[GateCheck(name="patch", passed=False, detail=problem)])
    proposal = Proposal(
        proposal_id=_proposal_id(state["run_id"], state["version"], attempt, diff or problem),
        run_id=state["run_id"],
        parent_version=state["version"],
        diff=diff,
        addresses=addresses,
        rationale=rationale,
        author=author,
        attempt=attempt,
        status="gate_failed",
        gate=gate,
        spend=spend or {},
    )
    deps.store.save_proposal(proposal)
    return {"proposal_id": proposal.proposal_id, "revise_note": f"refused: {problem}"}


def gate_node(deps: RunDeps, state) -> dict:
    """-> {"gate_passed": bool, "gate_feedback": str | None, "repairs": int}"""
    proposal = deps.store.get_proposal(state["proposal_id"])
    if proposal is None:
        return {
            "gate_passed": False,
            "gate_feedback": f"no proposal {state['proposal_id']!r}",
            "repairs": state.get("repairs", 0),
        }
    if proposal.candidate_version is not None:
        candidate = deps.versions.load(proposal.candidate_version)
        # Labels live in the store (#11), never in the graph state's trial dicts.
        labels = {
            tid: str(lb.label)
            for tid, lb in deps.store.labels_for_run(state["run_id"], proposal.parent_version).items()
        }
        inputs = GateInputs(
            run_id=state["run_id"],
            candidate=candidate,
            parent_findings=actionable([Finding.model_validate(f) for f in state.get("findings", [])]),
            parent_trials=state_trials(deps, state),
            addresses=proposal.addresses,
            parent_labels=labels,
            request_kind=(state.get("request") or {}).get("kind"),
            parent=deps.versions.load(proposal.parent_version),
        )
        proposal.gate = run_gate(deps.config, deps.backend, deps.executor, deps.store, inputs)
    result = proposal.gate or GateResult(passed=False)
    repairs = proposal.attempt - 1
    if result.passed:
        proposal.status = "gate_passed"
    else:
        proposal.status = (
            "dropped" if repairs >= deps.config.reviser.max_repairs or not deps.config.reviser.model else "gate_failed"
        )
    deps.store.save_proposal(proposal)
    log.info(
        "gate.done",
        proposal=proposal.proposal_id,
        passed=result.passed,
        status=proposal.status,
        still_open=result.still_open,
    )
    return {
        "gate_passed": result.passed,
        "gate_feedback": None if result.passed else feedback(result),
        "repairs": repairs,
    }
