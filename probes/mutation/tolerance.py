"""Tolerance by design, told apart from a weak verifier (issue 35, item 2).

A verifier that scores a collection record by record and passes above a threshold ("more than 6 of 10 rows
recovered") accepts a mutant that breaks one record: the task was designed to tolerate partial answers, and
that is a note (`verifier-tolerates-partial-answer`, info), not a shortcut. A weak verifier accepts a *wholly*
wrong answer (emptied, replaced, every record changed): that stays `verifier-accepts-mutant`.

Two ways to see the threshold, either is enough:
- statically, in the tests' AST: a count compared with `>` or `>=` (`sum(1 for r in rows if ok(r)) > 6`,
  `len([...]) >= 7`, a counter incremented in a loop), or a ratio of one (`correct / total >= 0.6`);
- dynamically, per output file: every one-record mutant passes while every whole-file mutant fails. A
  verifier that checks some records and ignores others fails the one-record mutant of a checked record, so
  it is not taken for tolerant.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from envqa.core.task_model import tests_of


@dataclass
class FileVerdicts:
    """What the verifier said about one output file's mutants: (kind, verdict) per scope."""

    path: str
    whole: list[tuple[str, str]] = field(default_factory=list)  # wholly wrong: emptied, replaced, every record
    record: list[tuple[str, str]] = field(default_factory=list)  # one record wrong

    def tolerant(self) -> bool:
        """One-record mutants all pass and whole-file mutants all fail (at least one of each tried)."""
        return (
            bool(self.record)
            and bool(self.whole)
            and all(v == "pass" for _k, v in self.record)
            and all(v == "fail" for _k, v in self.whole)
        )

    def only_partial(self) -> bool:
        """Some one-record mutant passes and every whole-file mutant fails."""
        return (
            any(v == "pass" for _k, v in self.record) and bool(self.whole) and all(v == "fail" for _k, v in self.whole)
        )


def verifier_thresholds(env) -> list[str]:
    """The thresholds in the verifier's Python files (env.tests), "tests/<file>:line: code" (the test model's)."""
    return tests_of(env).thresholds


def every_record_changed(data: bytes, only: int | None = None) -> bytes:
    """Each non-empty line changed (or only line `only`): its first number + 1, or, without a number, its text
    reversed and marked, so no record stays right."""
    import re

    lines = data.splitlines(keepends=True)
    out = []
    index = -1
    for line in lines:
        body = line.rstrip(b"\r\n")
        if body.strip():
            index += 1
        if not body.strip() or (only is not None and index != only):
            out.append(line)
            continue
        m = re.search(rb"\d+", body)
        changed = (body[: m.start()] + str(int(m.group()) + 1).encode() + body[m.end() :]) if m else body[::-1] + b"#"
        out.append(changed + line[len(body) :])
    return b"".join(out)


def records(data: bytes) -> int:
    return sum(1 for line in data.splitlines() if line.strip())
