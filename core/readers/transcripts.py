"""Steps of an installed agent that prints its own transcript into the terminal (a `tb run` agent.log).

In a `tb run`, an installed agent is one command in `commands.txt` (its launch); what it did is only in
`sessions/agent.log`. Agents of the mini-swe-agent / SWE-agent family print each step as a header naming
the step number (`<agent> (step 4, $0.01):`), the reasoning, one fenced shell block (the command) and the
result in `<output>` tags. This reads that shape into steps whose ids are the agent's own step numbers, so a
finding can cite "step 16" as the agent's log shows it. Nothing is parsed before the first step header (the
system prompt's own fenced examples are not steps).
"""

from __future__ import annotations

import re

from envqa.core.defaults import MESSAGE_MAX, OBSERVATION_MAX
from envqa.core.defaults import TRANSCRIPT_PROMPT_MAX as PROMPT_MAX
from envqa.core.imported import TrajectoryStep

STEP_HEADER = re.compile(r"^[\w.\-]+ \(step (?P<n>\d+)\b[^)\n]*\):[ \t]*$", re.MULTILINE)
FENCED = re.compile(r"^```(?:bash|sh|shell)[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
OUTPUT = re.compile(r"<output>\n?(?P<body>.*?)(?:</output>|\Z)", re.DOTALL)
NOISE = re.compile(r"^.*(?:Waiting for the LM to respond|^\s*[⠀-⣿]).*\n?", re.MULTILINE)


def _trim(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def transcript_steps(log: str) -> list[TrajectoryStep]:
    """One step per `(step N)` block that holds a fenced command; [] when the log has no such header."""
    heads = list(STEP_HEADER.finditer(log))
    if not heads:
        return []
    # What the agent was told (its prompt, with the task's instruction): a value it states is not a copied one.
    steps = [
        TrajectoryStep(step_id=0, source="user", message=_tail(NOISE.sub("", log[: heads[0].start()]), PROMPT_MAX))
    ]
    for i, head in enumerate(heads):
        block = NOISE.sub("", log[head.end() : heads[i + 1].start() if i + 1 < len(heads) else len(log)])
        fence = FENCED.search(block)
        if fence is None:
            continue
        output = OUTPUT.search(block, fence.end())
        steps.append(
            TrajectoryStep(
                step_id=int(head.group("n")),
                message=_trim(block[: fence.start()].strip(), MESSAGE_MAX),
                commands=[_trim(fence.group("body").rstrip("\n"), MESSAGE_MAX)],
                observation=_trim(output.group("body").strip("\n") if output else "", OBSERVATION_MAX),
            )
        )
    return steps
