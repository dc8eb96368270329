"""An imported trial's trajectory and verifier output written where qa's own trials keep theirs (issue 33):
`agent/trajectory.json` (ATIF, our writer's model) and `verifier/test-stdout.txt` in its trial folder.

The analyst model (probes/analyst/model.py) and the HTML report's trace view read a trial's folder, not its harness's
files; writing the neutral steps there lets both see an imported trial as they see one of ours. Every string
passes through the Redactor's key patterns first: a key an agent echoed in another harness stays out of qa's
files too. A step's commands become `bash` tool calls when they are shell text, `imported` calls otherwise
(an editor call kept as its JSON arguments).
"""

from __future__ import annotations

import json
from pathlib import Path

from envqa.agents.trajectory import (
    AgentInfo,
    AtifToolCall,
    Observation,
    ObservationResult,
    Redactor,
    Step,
    Trajectory,
)
from envqa.core.imported import ImportedTrial
from envqa.core.layout import write_atomic


def _call(step_id: int, i: int, command: str) -> AtifToolCall:
    try:
        args = json.loads(command)
    except ValueError:
        args = None
    if isinstance(args, dict):
        return AtifToolCall(tool_call_id=f"s{step_id}c{i}", function_name="imported", arguments=args)
    return AtifToolCall(tool_call_id=f"s{step_id}c{i}", function_name="bash", arguments={"command": command})


def as_trajectory(t: ImportedTrial) -> Trajectory:
    steps = []
    for s in t.steps:
        calls = [_call(s.step_id, i, c) for i, c in enumerate(s.commands)]
        seen = (
            Observation(
                results=[
                    ObservationResult(source_call_id=calls[0].tool_call_id if calls else None, content=s.observation)
                ]
            )
            if s.observation
            else None
        )
        source = s.source if s.source in ("system", "user", "agent") else "agent"
        steps.append(
            Step(step_id=s.step_id, source=source, message=s.message, tool_calls=calls or None, observation=seen)
        )
    return Trajectory(
        session_id=t.trial_name,
        agent=AgentInfo(name=t.agent, version="imported", model_name=t.model),
        steps=steps,
        notes=f"imported from {t.source_format} trial {t.path}",
    )


def write_imported_trace(trial_dir: str | Path, t: ImportedTrial) -> None:
    root = Path(trial_dir)
    redactor = Redactor([])
    if t.steps:
        data = redactor.value(as_trajectory(t).model_dump(mode="json", exclude_none=True))
        write_atomic(
            root / "agent" / "trajectory.json",
            Trajectory.model_validate(data).model_dump_json(indent=2, exclude_none=True),
        )
    if t.verifier_output:
        write_atomic(root / "verifier" / "test-stdout.txt", redactor.text(t.verifier_output))
