"""One registry per fact (issue 21): every rule id, label, error class and exploit name the code uses is
the registry's, and every table that used to be kept by hand is the registry's, read back.

No Docker: these read the source (AST), the examples' files and the registry itself.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from envqa.agents.exploits import EXPLOIT_AGENTS, ScriptedExploit
from envqa.agents.fixers import families, fixable_rules
from envqa.core.config import QAConfig
from envqa.core.environment import load_environment
from envqa.core.models import STORED, TRIAL_LABELS, Finding, Label, Severity, TrialLabel
from envqa.core.policy import TRANSIENT_INFRA
from envqa.core.registry import (
    ENVIRONMENT_ERRORS,
    ERROR_CLASS_INFO,
    EXPLOIT_INFO,
    FIXERS,
    LABEL_COLORS,
    LABEL_INFO,
    PROBE_INFO,
    RULE_INFO,
    RULES,
    UnknownRule,
)
from envqa.graphs.gate_rules import PROBE_OF, probe_for
from envqa.probes.analyst.model import AnalystAnswer
from envqa.probes.analyst.rules import EXPLOIT_SUBTYPES, SHORTCUT_RULES
from envqa.probes.analyst.taxonomy import MODEL_TAXONOMY, labels_for_outcome
from envqa.probes.exploits.probe import FIXES
from envqa.probes.static.findings import static_findings
from envqa.probes.static.lint import lint_structure

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CODE = [ROOT / d for d in ("agents", "probes", "graphs", "app", "core", "scheduler")]
SEVERITY_RANK = {s: i for i, s in enumerate(Severity)}
pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def _sources():
    for folder in CODE:
        for path in sorted(folder.rglob("*.py")):
            yield path, ast.parse(path.read_text())


def _strings(node: ast.AST) -> list[str]:
    """The string constants a rule argument can take (a literal, either branch of `a if c else b`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _strings(node.body) + _strings(node.orelse)
    return []


def _is_finding_call(node: ast.AST) -> bool:
    """`Finding(...)` or `Finding.of(...)`."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "of":
        func = func.value
    return getattr(func, "id", None) == "Finding"


def _finding_calls():
    for path, tree in _sources():
        for node in ast.walk(tree):
            if _is_finding_call(node):
                yield path, node, {k.arg: k.value for k in node.keywords}


def _rule_literals() -> dict[str, list[str]]:
    """rule id -> where the code names it: `Finding(rule=...)`, `f.rule == "..."` / `in (...)`, `RULE = "..."`."""
    seen: dict[str, list[str]] = {}
    for path, tree in _sources():
        where = path.relative_to(ROOT).as_posix()
        for node in ast.walk(tree):
            found: list[str] = []
            if _is_finding_call(node):
                found += [s for k in node.keywords if k.arg == "rule" for s in _strings(k.value)]
            elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) and node.left.attr == "rule":
                for comp in node.comparators:
                    found += _strings(comp) + [s for e in getattr(comp, "elts", []) for s in _strings(e)]
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "RULE" for t in node.targets):
                found += _strings(node.value)
            for rule_id in found:
                seen.setdefault(rule_id, []).append(f"{where}:{node.lineno}")
    return seen


def test_every_rule_id_the_code_names_is_registered():
    literals = _rule_literals()
    assert len(literals) >= 30, sorted(literals)  # the scan finds the probes' rules (it is not vacuous)
    unknown = {r: where for r, where in literals.items() if r not in RULE_INFO}
    assert not unknown, f"rule ids not in core/registry/rules.py: {unknown}"


def test_a_finding_with_an_unregistered_rule_fails_where_it_is_made():
    with pytest.raises(ValueError, match="not a registered rule id"):
        Finding(rule="verifier-eror", label=Label.BRITTLENESS, severity=Severity.ERROR, message="typo")
    with pytest.raises(ValueError, match="not a registered rule id"):
        Finding.model_validate({"rule": "made-up", "label": "shortcut", "severity": "error", "message": "m"})
    # History read back from the store keeps any id (a QA_HOME from an older qa stays readable).
    old = Finding.model_validate(
        {"rule": "retired-rule", "label": "shortcut", "severity": "error", "message": "m"}, context=STORED
    )
    assert old.rule == "retired-rule"
    with pytest.raises(UnknownRule):
        probe_for("retired-rule")


def test_each_literal_finding_carries_its_rules_label_severity_and_remedy():
    """The registry is the catalogue of what the probes emit: label and remedy as the row says, a severity
    no higher than the row's (a few rules are lower in context)."""
    problems = []
    for path, node, kw in _finding_calls():
        for rule_id in _strings(kw.get("rule", ast.Constant(None))):
            rule = RULE_INFO[rule_id]
            where = f"{path.relative_to(ROOT)}:{node.lineno} {rule_id}"
            label = kw.get("label")
            if isinstance(label, ast.Attribute) and label.attr.lower() != rule.label:
                problems.append(f"{where}: label {label.attr.lower()} != {rule.label}")
            sev = kw.get("severity")
            branches = (
                [sev] if isinstance(sev, ast.Attribute) else [getattr(sev, "body", None), getattr(sev, "orelse", None)]
            )
            for s in branches:
                if isinstance(s, ast.Attribute) and SEVERITY_RANK[Severity[s.attr]] > SEVERITY_RANK[rule.severity]:
                    problems.append(f"{where}: severity {s.attr} above {rule.severity}")
            fixes = _strings(kw["fix"]) if "fix" in kw else []
            if fixes and rule.remedy not in fixes:
                problems.append(f"{where}: fix {fixes} is not the registry's remedy {rule.remedy!r}")
    assert not problems, "\n".join(problems)


def test_no_call_site_restates_what_the_registry_says():
    """Label, severity and fix are facts of the rule's registry row: the code makes findings with
    `Finding.of(rule, ...)`, never names a label or a fix, and names a severity only where it differs from the
    row's (lower in context). A specific fix is a remedy template in rules.toml (`remedy_fields`) or a case's
    remedy (`case`), so the fact stays in one place."""
    problems = []
    for path, node, kw in _finding_calls():
        where = f"{path.relative_to(ROOT)}:{node.lineno}"
        if not isinstance(node.func, ast.Attribute):
            problems.append(f"{where}: Finding(...) instead of Finding.of(rule, ...)")
        problems += [f"{where}: restates {k}=" for k in ("label", "fix") if k in kw]
        sev = kw.get("severity")
        for rule_id in _strings(kw.get("rule", ast.Constant(None))):
            if isinstance(sev, ast.Attribute) and Severity[sev.attr] == RULE_INFO[rule_id].severity:
                problems.append(f"{where}: restates severity={sev.attr} (the row's)")
    assert not problems, "\n".join(problems)


def test_a_finding_of_a_rule_takes_its_facts_from_the_registry():
    nop = RULE_INFO["nop-passes"]
    plain = Finding.of("nop-passes", "nop earned reward 1")
    assert (plain.label, plain.severity, plain.fix) == (nop.label, nop.severity, nop.remedy)
    caused = Finding.of("nop-passes", "m", subtype="empty-output-loop")
    assert caused.fix == nop.remedies["empty-output-loop"] != nop.remedy
    lower = Finding.of("network-dependent-pass", "m", severity=Severity.INFO, case="declared")
    assert (lower.severity, lower.fix) == (Severity.INFO, RULE_INFO["network-dependent-pass"].remedies["declared"])
    filled = Finding.of("instruction-omits-tested-requirement", "m", remedy_fields={"want": "/app/out.txt"})
    assert filled.fix is not None and "/app/out.txt" in filled.fix and "{want}" not in filled.fix
    assert Finding.of("image-build-failed", "m").fix is None  # no remedy in the registry: none made up
    with pytest.raises(TypeError, match="come from the rule registry"):
        Finding.of("nop-passes", "m", label=Label.SHORTCUT)
    with pytest.raises(ValueError, match="not a registered rule id"):
        Finding.of("verifier-eror", "typo")


def test_every_nop_cause_has_its_remedy_in_the_registry():
    """The nop_cause probe names a cause as the nop-passes finding's subtype; the fix for it is the registry's."""
    from envqa.probes.nop.cause_rules import CAUSES

    assert {cause[0] for cause in CAUSES} == set(RULE_INFO["nop-passes"].remedies)


def test_a_probe_is_declared_once_and_the_rest_derived():
    """The probe registry row is the one declaration: the hunt's functions, `[probes] enabled`'s default and
    the rules' `probe` all agree with it."""
    from envqa.core.registry import DEFAULT_PROBES, HUNT_PROBES, PROBES
    from envqa.probes.base import PROBES as REGISTERED
    from envqa.probes.catalog import get_probe

    assert set(REGISTERED.names()) == set(HUNT_PROBES)
    assert all(callable(get_probe(name)) for name in HUNT_PROBES)
    assert QAConfig().probes.enabled == list(DEFAULT_PROBES) == [p.name for p in PROBES if p.default]
    assert {r.probe for r in RULE_INFO.values()} <= {p.name for p in PROBES}


def test_every_rule_the_examples_expect_is_registered():
    named = set()
    for path in sorted(EXAMPLES.glob("*/qa-expected.json")):
        expected = json.loads(path.read_text())
        named |= set(expected.get("rules", [])) | set(expected.get("inconclusive", []))
    assert named and named <= set(RULE_INFO), named - set(RULE_INFO)


@pytest.mark.parametrize("example", sorted(p.parent.name for p in EXAMPLES.glob("*/qa-expected.json")))
def test_the_file_rules_of_every_example_are_registered(example):
    env = load_environment(EXAMPLES / example)
    for f in lint_structure(env) + static_findings(env, root_agent=True, unpinned_base=True):
        rule = RULE_INFO[f.rule]
        assert rule.probe in ("load", "static") and f.label == rule.label_for(f.subtype), f


def test_the_gate_knows_every_rules_probe_and_falls_back_to_none():
    assert set(PROBE_OF) == set(RULE_INFO)
    for rule in RULES:
        how = PROBE_INFO[rule.probe].recheck
        assert probe_for(rule.id) == (rule.probe if how == "probe" else None), rule
    # The old lie: verifier-error fell back to the static probe, which cannot produce it, and the gate then
    # said "none of verifier-error fired". The gate's oracle/nop checks are what re-check it.
    assert probe_for("verifier-error") is None and PROBE_INFO[RULE_INFO["verifier-error"].probe].recheck == "validate"
    assert probe_for("dockerfile-copies-solution") is None  # the gate reads the structure rules again itself


def test_derived_tables_keep_their_values():
    assert {
        "sandbox_start",
        "sandbox_error",
        "sandbox_gone",
        "docker_unavailable",
        "infra",
        "provider_error",
        "timeout",
        "job_timeout",
    } == TRANSIENT_INFRA
    assert {"verifier_error", "verifier_timeout", "image_build_failed", "image_build_timeout"} == ENVIRONMENT_ERRORS
    assert not any(c.counts_in_pass_rate for c in ERROR_CLASS_INFO.values())
    assert TRIAL_LABELS == ("capability", "ambiguity", "brittleness", "shortcut", "legitimate", "infra", "unlabeled")
    assert labels_for_outcome("pass") == ("legitimate", "shortcut")
    assert labels_for_outcome("fail") == ("capability", "ambiguity", "brittleness")
    assert list(MODEL_TAXONOMY) == ["capability", "ambiguity", "brittleness", "shortcut", "legitimate"]
    label_field = AnalystAnswer.model_fields["label"]
    assert label_field.description == "capability | ambiguity | brittleness | shortcut | legitimate"
    assert SHORTCUT_RULES == {
        "pass-after-verifier-log-write": "verifier-tampering",
        "pass-runs-existing-tool": "wrapped-existing-tool",
        "llm-exploit": None,
        # issue 33: the cross-trial rules that prove an (imported or own) pass a shortcut
        "copied-verifier-values": "read-tests-or-solution",
        "trajectory-tampers-verifier": "verifier-tampering",
    }
    assert set(LABEL_COLORS) == set(TRIAL_LABELS) and set(Label) == set(TRIAL_LABELS)
    assert TrialLabel(label="legitimate").label == "legitimate"
    with pytest.raises(ValueError):
        TrialLabel(label="cheating")


def test_exploits_come_from_one_registry():
    assert list(EXPLOIT_INFO) == EXPLOIT_AGENTS
    assert {name: e.remedy for name, e in EXPLOIT_INFO.items()} == FIXES
    assert {name: e.subtype for name, e in EXPLOIT_INFO.items()} == EXPLOIT_SUBTYPES
    assert QAConfig().probes.exploits == [n for n, e in EXPLOIT_INFO.items() if e.default]
    agents = {cls.name: cls for cls in ScriptedExploit.__subclasses__()}
    assert set(agents) == set(EXPLOIT_INFO)
    for name, cls in agents.items():
        assert cls.attack == EXPLOIT_INFO[name].attack, name
        rule = RULE_INFO[name]
        assert (rule.probe, rule.label, rule.subtype, rule.remedy) == (
            "exploits",
            "shortcut",
            EXPLOIT_INFO[name].subtype,
            EXPLOIT_INFO[name].remedy,
        )


def test_fixers_are_the_registrys():
    assert fixable_rules() == FIXERS
    assert {f.name for f in families()} == set(FIXERS.values())


def test_the_analysts_prose_names_only_registered_labels():
    """prompts/analyst_system.j2 keeps its decision procedure as prose; the labels it names are the model's."""
    prose = (ROOT / "prompts" / "analyst_system.j2").read_text()
    named = set(re.findall(r"`([a-z]+)`", prose))
    assert named == set(MODEL_TAXONOMY), named ^ set(MODEL_TAXONOMY)


def test_the_docs_label_table_is_the_registrys():
    text = (ROOT / "docs" / "guide" / "labels.md").read_text()
    rows = {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(r"^\| `([a-z]+)` \| ([^|]+) \| (.+) \|$", text, re.M)
        if m.group(1) in LABEL_INFO
    }
    assert set(rows) == set(LABEL_INFO), set(LABEL_INFO) - set(rows)
    for label, (means, cell) in rows.items():
        info = LABEL_INFO[label]
        assert means == info.means, (label, means)
        subtypes = {s for s in {**info.model_subtypes, **info.rule_subtypes} if not s.startswith("<")}
        assert set(re.findall(r"`([a-z-]+)`", cell)) == subtypes, (label, cell)


def _calls_named(*names: str):
    for path, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in names:
                    yield path, node


def test_every_label_and_subtype_the_code_assigns_is_registered():
    """`_label(result, label, subtype, ...)`, `unlabeled(result, why, subtype)` and `TrialLabel(label=, subtype=)`."""
    pairs = []
    for path, node in _calls_named("_label", "unlabeled", "TrialLabel"):
        kw = {k.arg: k.value for k in node.keywords}
        name = getattr(node.func, "id", None) or node.func.attr
        if name == "_label" and len(node.args) >= 3:
            label, subtype = node.args[1], node.args[2]
        elif name == "unlabeled":
            label, subtype = ast.Constant("unlabeled"), (node.args[2] if len(node.args) > 2 else kw.get("subtype"))
        else:
            label, subtype = kw.get("label"), kw.get("subtype")
        for lb in _strings(label) if label is not None else []:
            pairs += [(path, node.lineno, lb, st) for st in (_strings(subtype) if subtype is not None else [None])]
    assert len(pairs) >= 15, pairs
    for path, line, label, subtype in pairs:
        info = LABEL_INFO.get(label)
        assert info is not None, (path, line, label)
        assert subtype is None or subtype in {**info.model_subtypes, **info.rule_subtypes}, (path, line, label, subtype)


ERROR_RAISERS = (
    "SandboxError",
    "InfraError",
    "ProviderError",
    "TransientProviderError",
    "ProviderAuthError",
    "ContextTooLong",
    "InvalidRequest",
    "VerifierOutcome",
    "TrialResult",
)


def test_every_error_class_the_code_names_is_registered():
    named = {}
    for path, node in _calls_named(*ERROR_RAISERS):
        kw = {k.arg: k.value for k in node.keywords}
        candidates = [kw["error_class"]] if "error_class" in kw else []
        name = getattr(node.func, "id", None) or node.func.attr
        if name in ("SandboxError", "InfraError") and len(node.args) >= 2:
            candidates.append(node.args[1])
        elif name.endswith("Error") or name in ("ContextTooLong", "InvalidRequest"):
            candidates += node.args[1:2]
        elif name == "VerifierOutcome" and len(node.args) >= 3:
            candidates.append(node.args[2])
        for c in candidates:
            for s in _strings(c):
                named.setdefault(s, f"{path.relative_to(ROOT)}:{node.lineno}")
    for path, tree in _sources():  # comparisons: `r.error_class == "auth"`, `cls = "image_build_timeout" if ...`
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and getattr(node.left, "attr", None) == "error_class":
                for comp in node.comparators:
                    for s in _strings(comp) + [x for e in getattr(comp, "elts", []) for x in _strings(e)]:
                        named.setdefault(s, f"{path.relative_to(ROOT)}:{node.lineno}")
    for path, tree in _sources():  # defaults: `def __init__(self, message, error_class: str = "infra")`
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args.args[len(node.args.args) - len(node.args.defaults) :]
                for arg, default in zip(args, node.args.defaults):
                    if arg.arg == "error_class":
                        for s in _strings(default):
                            named.setdefault(s, f"{path.relative_to(ROOT)}:{node.lineno}")
    assert len(named) >= 12, named
    unknown = {k: v for k, v in named.items() if k not in ERROR_CLASS_INFO}
    assert not unknown, f"error classes not in core/registry/error_classes.py: {unknown}"
