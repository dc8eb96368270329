"""One registry per fact: rules, labels, error classes, exploits (issue 21).

Each fact `qa` keeps about its own vocabulary lives in exactly one table here, in the bottom layer, and
every other table (the gate's probe map, the fixers' rule lists, the labeller's subtypes, the analyst's
taxonomy, the retry policy's transient classes, the report's colours, `qa rules`, the docs' rule tables)
is derived from it or checked against it by a test (tests/foundation/test_registry.py).

  rules.py          Rule: id, label, subtype, severity, probe, fixer, summary, remedy; ProbeInfo: each probe's
                    stage, recheck, and whether the hunt runs it (by default)
  labels.py         LabelInfo: the labels, their subtypes and the flags decide/gate/report read; `Label`
  error_classes.py  ErrorClass: transient, infra, counts in a pass rate
  exploits.py       Exploit: the scripted cheat agents, their subtype and remedy
  network_errors.py NetworkSignature: the lines that say a phase had no network (every phase's attribution)
"""

from envqa.core.registry.error_classes import (
    BUILD_ERRORS,
    ENVIRONMENT_ERRORS,
    ERROR_CLASS_INFO,
    ERROR_CLASSES,
    TRANSIENT_INFRA,
    VERIFIER_ERRORS,
    ErrorClass,
)
from envqa.core.registry.exploits import (
    DEFAULT_EXPLOITS,
    EXPLOIT_INFO,
    EXPLOIT_NAMES,
    EXPLOIT_SUBTYPES,
    EXPLOITS,
    HARNESS_EXPLOIT,
    NETWORK_EXPLOIT,
    Exploit,
)
from envqa.core.registry.labels import (
    DETERMINISTIC_SUBTYPES,
    FAIL_LABELS,
    FAILURE_MEANS_BROKEN,
    LABEL_COLORS,
    LABEL_INFO,
    LABELS,
    MODEL_TAXONOMY,
    NOT_MEASURED,
    PASS_LABELS,
    PROBLEM_LABELS,
    SKIP_ON_REGRADE,
    TRIAL_LABELS,
    Label,
    LabelInfo,
)
from envqa.core.registry.rules import (
    DEFAULT_PROBES,
    FINDING_RULES,
    FIXERS,
    HUNT_PROBES,
    PROBE_INFO,
    PROBES,
    REMEDIES,
    RULE_INFO,
    RULES,
    SHORTCUT_RULES,
    ProbeInfo,
    Rule,
    Severity,
    UnknownRule,
    get_rule,
    is_registered,
    rules_fixed_by,
    rules_of_probe,
)

__all__ = [
    "BUILD_ERRORS",
    "DEFAULT_EXPLOITS",
    "DEFAULT_PROBES",
    "DETERMINISTIC_SUBTYPES",
    "ENVIRONMENT_ERRORS",
    "ERROR_CLASSES",
    "ERROR_CLASS_INFO",
    "EXPLOITS",
    "EXPLOIT_INFO",
    "EXPLOIT_NAMES",
    "EXPLOIT_SUBTYPES",
    "FAILURE_MEANS_BROKEN",
    "FAIL_LABELS",
    "FINDING_RULES",
    "FIXERS",
    "HARNESS_EXPLOIT",
    "HUNT_PROBES",
    "LABELS",
    "LABEL_COLORS",
    "LABEL_INFO",
    "MODEL_TAXONOMY",
    "NETWORK_EXPLOIT",
    "NOT_MEASURED",
    "PASS_LABELS",
    "PROBES",
    "PROBE_INFO",
    "PROBLEM_LABELS",
    "REMEDIES",
    "RULES",
    "RULE_INFO",
    "SHORTCUT_RULES",
    "SKIP_ON_REGRADE",
    "TRANSIENT_INFRA",
    "TRIAL_LABELS",
    "VERIFIER_ERRORS",
    "ErrorClass",
    "Exploit",
    "Label",
    "LabelInfo",
    "ProbeInfo",
    "Rule",
    "Severity",
    "UnknownRule",
    "get_rule",
    "is_registered",
    "rules_fixed_by",
    "rules_of_probe",
]
