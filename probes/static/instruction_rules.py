"""The instruction held against the tests, as findings (issue 34; the reading is core/consistency/):

  instruction-contradicts-tests          (ambiguity, error) the tests require a literal where the instruction
                                         names a different one in the same role (path, URL scheme, port, user,
                                         branch)
  instruction-omits-tested-requirement   (ambiguity, warning) the tests require an output, an unchanged file, an
                                         account or a branch that the instruction never mentions; or (issue 51,
                                         from the assertion model) a flag they pass to the agent's program or a
                                         JSON key they read from its output that neither the instruction nor the
                                         files it points to state (core/task_model/tested_terms.py)
  instruction-spelling-differs-from-tests (ambiguity, warning) a string the tests compare with the output is a
                                         variant of the instruction's wording (case, hyphen, unit, decimals)

Every finding carries both lines (file:line) when there are two: the test's and the instruction's.
"""

from __future__ import annotations

from envqa.core.consistency.compare import CONTRADICTS, UNSTATED, Mismatch
from envqa.core.environment import Environment
from envqa.core.models import Finding
from envqa.core.task_model.facts import instruction_mismatches

WHAT = {"path": "path", "url": "URL", "port": "port", "user": "user name", "branch": "branch", "host": "host name"}
UNSTATED_TEXT = {
    "output": "the tests read {want}, an output the agent must produce, but the instruction never names it",
    "exec": "the tests run {want}, a program the agent must provide, but the instruction never names it",
    "preserve": "the tests assert {want} is unchanged (its hash or mtime), but the instruction never says to "
    "leave it alone",
    "state": "the tests compare what the database {want} holds with fixed values, but the instruction never names "
    "it: an agent cannot know it must leave the database as it is (or bring it to that state)",
    "scratch": "the tests use {want}, which the reference solution makes (its own choice), but the instruction "
    "never names it: an agent that follows the instruction cannot know it",
    "user": "the tests look up the account {want!r}, which the instruction never names",
    "branch": "the tests check the branch {want!r}, which the instruction never names",
    "flag": "the tests run the agent's program with the option {want}, which neither the instruction nor the files "
    "it points to name: an agent that follows the instruction has no reason to accept it",
    "key": "the tests read the key {want!r} from the agent's output, which neither the instruction nor the files it "
    "points to name: an agent cannot know the field is called that",
}


def _message(m: Mismatch) -> str:
    if m.rule == CONTRADICTS:
        return (
            f"the tests require the {WHAT.get(m.what, m.what)} {m.want} where the instruction says "
            f"{m.stated}: an agent that follows the instruction fails"
        )
    if m.rule == UNSTATED:
        return UNSTATED_TEXT[m.what].format(want=m.want)
    if m.what == "decimals":
        return (
            f"the tests compare {m.want!r} ({len(m.want.split('.')[-1])} decimals) where the instruction "
            f"says {m.stated!r}: the number of decimals differs"
        )
    return f"the tests compare {m.want!r} where the instruction writes {m.stated!r}: the spelling differs"


def _evidence(m: Mismatch, instruction_file: str) -> list[str]:
    out = [f"test: {m.test.evidence()}"] + [f"via {v}" for v in m.via]
    if m.claim is not None and m.what == "flag":
        out.append(f"instruction: {instruction_file}:{m.claim.line}: {m.claim.text} (names the program, not {m.want})")
    elif m.claim is not None:
        out.append(f"instruction: {instruction_file}:{m.claim.line}: {m.claim.text}")
    else:
        out.append(f"instruction: {instruction_file}: never mentions {m.want}")
    return out


def instruction_findings(env: Environment) -> list[Finding]:
    """The three rules for one view of the task (a multi-step task: each step's instruction and tests)."""
    if not env.instruction.strip() or not env.tests:
        return []
    facts, found = instruction_mismatches(env)
    out = []
    for m in found:
        out.append(
            Finding.of(
                rule=m.rule,
                message=_message(m),
                evidence=_evidence(m, facts.instruction.file),
                location=m.test.where,
                remedy_fields={"want": m.want},
                case=m.what if m.what in ("flag", "key") else None,
            )
        )
    return out
