"""The instruction forbids any change of form, while the test's expected value is the input re-serialised by a parser
(issue 42, item 2: "a required end state vs what the instruction states"; TB2 2.0's filter-js-from-html).

  instruction-forbids-what-tests-normalise  (ambiguity, warning) "Do not alter the formatting in any way", and the
      test compares the output with `str(BeautifulSoup(original, "html.parser"))` (or json.dumps(json.loads(..)),
      yaml.dump(yaml.safe_load(..)), ET.tostring(..), prettify()): an agent that keeps the input's form
      byte for byte fails wherever the parser rewrites it, and one that parses and re-serialises (as the test does)
      breaks the instruction's letter. Cites the instruction's line and the test's.

The comparisons are the test model's (core/task_model/normalised.py). Look-alikes kept quiet: the same test under
an instruction that allows the parser's normalisation, and the same instruction over a test that compares raw text
with raw text.
"""

from __future__ import annotations

import re

from envqa.core.consistency.guards import instruction_file
from envqa.core.environment import Environment
from envqa.core.models import Finding
from envqa.core.task_model.model import tests_of

FORBIDS_FORM = re.compile(
    r"\b(?:do not|don't|never|must not|should not)\s+(?:alter|change|modify|reformat|touch)\b[^.\n]*?"
    r"\b(?:in any way|at all|whatsoever)|\b(?:byte[- ]for[- ]byte|verbatim)\b",
    re.I,
)
ALLOWS_NORMALISING = re.compile(r"\bnormali[sz]\w*|\bexcept\b[^.\n]*\bpars", re.I)


def preserve_findings(env: Environment) -> list[Finding]:
    if not env.instruction.strip() or not env.tests:
        return []
    stated = [
        (n, line.strip())
        for n, line in enumerate(env.instruction.splitlines(), 1)
        if FORBIDS_FORM.search(line) and not ALLOWS_NORMALISING.search(line)
    ]
    if not stated:
        return []
    return [
        Finding.of(
            "instruction-forbids-what-tests-normalise",
            message="the instruction forbids any change of form, but the test compares the output with "
            "the input as a parser re-serialises it: keeping the input byte for byte can fail, and "
            "re-serialising (as the test does) breaks the instruction's letter",
            evidence=[
                f"test: {f.rel}:{line}: {f.line(line)}",
                f"instruction: {instruction_file(env)}:{stated[0][0]}: {stated[0][1]}",
            ],
            location=f"{f.rel}:{line}",
        )
        for f, line in tests_of(env).normalised_compares[:1]  # the first one (core/task_model/normalised.py)
    ]
