"""A trajectory as the analyst sees it: numbered ATIF steps, compressed to a token budget, step ids kept.

The analyst must cite steps by id, so compression may shorten what a step says but never renumber or
silently drop one: every step keeps its `[step N]` header and its commands (clipped), and only the
bodies (messages, observations) shrink, the middle of the run first, because the start says what the
agent understood and the end says how it finished. The same text per step is what citations are
checked against (`step_text`), so a quote the analyst saw is a quote the checker finds.
"""

from __future__ import annotations

import json
from pathlib import Path

from envqa.agents.trajectory import Step, Trajectory

CHARS_PER_TOKEN = 4  # a deliberate over-estimate for English and shell text: the budget holds


def load_trajectory(trial_dir: str | Path | None) -> Trajectory | None:
    path = Path(trial_dir or "") / "agent" / "trajectory.json"
    if not trial_dir or not path.is_file():
        return None
    try:
        return Trajectory.model_validate_json(path.read_text())
    except ValueError:
        return None


def _command(call) -> str:
    if call.function_name == "bash" and isinstance(call.arguments.get("command"), str):
        return call.arguments["command"]
    return json.dumps(call.arguments, sort_keys=True)


def step_text(step: Step) -> str:
    """Everything a step says: message, tool calls and observations (what a quote must come from)."""
    parts = [step.message or ""]
    for call in step.tool_calls or []:
        parts.append(f"{call.function_name}: {_command(call)}")
    if step.observation:
        parts += [r.content for r in step.observation.results]
    return "\n".join(p for p in parts if p)


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    if limit < 40:
        return text[:limit] + "…"
    half = limit // 2
    return f"{text[:half]} […{len(text) - 2 * half} chars cut…] {text[-half:]}"


def _render(step: Step, body_limit: int, command_limit: int) -> str:
    lines = [f"[step {step.step_id}] {step.source}"]
    if step.message:
        lines.append(_clip(step.message, body_limit))
    for call in step.tool_calls or []:
        lines.append(f"  -> {call.function_name}: {_clip(_command(call), command_limit)}")
    if step.observation:
        for r in step.observation.results:
            lines.append(f"  <- {_clip(r.content, body_limit)}")
    return "\n".join(lines)


def compress(trajectory: Trajectory, token_budget: int, skip_sources: tuple[str, ...] = ("system",)) -> str:
    """The steps as text within `token_budget` (approximately), every step id present."""
    steps = [s for s in trajectory.steps if s.source not in skip_sources]
    budget = token_budget * CHARS_PER_TOKEN
    for body, command in ((4000, 1000), (1500, 600), (600, 300), (250, 200), (120, 120), (60, 80)):
        # Middle steps get a third of what the first two and last three get.
        texts = [
            _render(s, body if i < 2 or i >= len(steps) - 3 else max(40, body // 3), command)
            for i, s in enumerate(steps)
        ]
        out = "\n".join(texts)
        if len(out) <= budget:
            return out
    # Still too long (hundreds of steps): headers and clipped commands only for the middle.
    head = [_render(s, 200, 120) for s in steps[:2]]
    tail = [_render(s, 200, 120) for s in steps[-3:]]
    middle = [
        f"[step {s.step_id}] {s.source}"
        + "".join(f" -> {c.function_name}: {_clip(_command(c), 40)}" for c in s.tool_calls or [])
        for s in steps[2:-3]
    ]
    return "\n".join(head + middle + tail)[: budget + 2000]
