"""Does a revision keep to the spec its task was generated from? A deterministic check (issue 13).

A generated task keeps its spec in task.toml's `[metadata] spec`. The reviser is told to stay consistent
with it and says so in its answer (`spec_consistency`), but a model's word is not a check. This one
compares the parent version with the candidate, against the spec's own words:

  - the spec itself must travel unchanged (task.toml's `spec` removed or edited is a contradiction);
  - a literal the spec names (a `code span`, a "quoted" string, an absolute path, a number, "the word X")
    that the parent's instruction.md states, or its tests check, must still be there in the candidate:
    dropping it changes what the spec asked for (e.g. an expected value the spec names);
  - a spec sentence that the parent's instruction.md repeats word for word must not be removed or reworded.

It only reads files; it never runs anything. False negatives are possible (a paraphrase that changes
the meaning); that is what the reviser's own verdict and the human are for.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from envqa.core.models import SpecCheck, SpecConsistency
from envqa.core.task_model.verifier_text import tests_folder_text

_CODE = re.compile(r"`([^`\n]{1,120})`")
_DOUBLE = re.compile(r'"([^"\n]{1,80})"')
_SINGLE = re.compile(r"(?<![\w])'([^'\n]{1,80})'(?![\w])")
_PATH = re.compile(r"(?<![\w/.])(/(?:[\w.-]+/)*[\w.-]*\w)")
_NUMBER = re.compile(r"(?<![\w.])(\d{2,}(?:\.\d+)?|\d+\.\d+)(?![\w])")
_NAMED = re.compile(r"\b(?:word|string|value|token)\s+([\w.-]+)", re.IGNORECASE)  # "the word hello"
_NOT_A_LITERAL = {"of", "is", "in", "the", "a", "an", "to", "that", "from", "with", "and", "or", "for", "it", "as"}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
MIN_SENTENCE_WORDS = 4


def spec_of(task_dir: Path) -> str | None:
    """The spec kept in task.toml's [metadata] (a generated task), else None."""
    toml = task_dir / "task.toml"
    if not toml.is_file():
        return None
    try:
        meta = tomllib.loads(toml.read_text()).get("metadata") or {}
    except tomllib.TOMLDecodeError:
        return None
    spec = meta.get("spec")
    return spec if isinstance(spec, str) and spec.strip() else None


def sentences(text: str) -> list[str]:
    out = []
    for raw in _SENTENCE_END.split(text):
        s = re.sub(r"^\s*(?:[-*+]|\d+[.)]|#+)\s*", "", raw).strip()
        if s:
            out.append(s)
    return out


def spec_literals(spec: str) -> dict[str, str]:
    """{literal: the spec sentence that names it}: what the spec pins down exactly."""
    found: dict[str, str] = {}
    for sentence in sentences(spec):
        for pattern in (_CODE, _DOUBLE, _SINGLE, _PATH, _NUMBER, _NAMED):
            for m in pattern.finditer(sentence):
                literal = m.group(1).strip().rstrip(".,;:")
                if len(literal) >= 2 and literal.lower() not in _NOT_A_LITERAL and literal not in found:
                    found[literal] = sentence
    return found


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(".!?").lower()


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def conflicts(spec: str, parent_dir: Path, candidate_dir: Path) -> list[str]:
    """What the candidate drops or changes of the spec, one line each (empty: nothing found)."""
    out: list[str] = []
    after_spec = spec_of(candidate_dir)
    if after_spec is None:
        out.append("task.toml's [metadata] spec is removed: the spec must travel with every version")
    elif after_spec != spec:
        out.append("task.toml's [metadata] spec is changed: a revision may not rewrite the spec it answers to")
    places = [
        (
            "instruction.md",
            "instruction.md no longer states",
            _text(parent_dir / "instruction.md"),
            _text(candidate_dir / "instruction.md"),
        ),
        ("tests/", "the tests no longer check", tests_folder_text(parent_dir), tests_folder_text(candidate_dir)),
    ]
    for literal, sentence in spec_literals(spec).items():
        for _, what, before, after in places:
            if literal in before and literal not in after:
                out.append(f'{what} `{literal}`, which the spec names: "{sentence}"')
    before_instr, after_instr = _norm(places[0][2]), _norm(places[0][3])
    for sentence in sentences(spec):
        n = _norm(sentence)
        if len(n.split()) >= MIN_SENTENCE_WORDS and n in before_instr and n not in after_instr:
            out.append(f'instruction.md drops or rewords the spec\'s requirement: "{sentence}"')
    return out


def check_revision(parent_dir: Path, candidate_dir: Path, model: SpecConsistency | None = None) -> SpecCheck | None:
    """The proposal's SpecCheck, or None when the parent has no spec (not a generated task)."""
    spec = spec_of(parent_dir)
    if spec is None:
        return None
    found = conflicts(spec, parent_dir, candidate_dir)
    flagged = bool(found) or (model is not None and model.verdict == "contradicts")
    return SpecCheck(flagged=flagged, model=model, conflicts=found)
