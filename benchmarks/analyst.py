"""Measure an analyst model on a labelled set of trajectories before trusting its labels.

    python benchmarks/analyst.py benchmarks/analyst_set --model anthropic/claude-sonnet-4-5 [--goal 0.7]

DIR holds `cases.yaml` (see benchmarks/analyst_set/cases.yaml: each case is one trial, its steps, the
verifier's output and the label a human gave it) and the small tasks its cases name (`tasks/<name>`;
`examples/<name>` refers to this project's examples). Every case is rebuilt as a real trial directory with
an ATIF trajectory and labelled through the same code as `qa run` (probes/analyst/model.py: the structured
answer, the citation check, one repair). The baseline, measured on the same cases in the same run, is
what you get without a model: pass -> legitimate, fail -> capability.

The last line is one JSON object: model, cases, agreement, subtype_agreement, verified_rate,
baseline_agreement, confusion (expected -> got -> count), per_label (recall), errors, goal, goal_met.
Exit 0 when agreement >= goal and beats the baseline, 1 when not, 2 on bad input (no model, bad DIR).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

REPO = Path(__file__).resolve().parent.parent


class CaseStep(BaseModel):
    say: str = ""
    cmd: str | None = None
    out: str = ""


class Expected(BaseModel):
    label: str
    subtype: str


class Case(BaseModel):
    id: str
    env: str
    outcome: str = Field(pattern="^(pass|fail)$")
    timed_out: bool = False
    verifier_output: str = ""
    probe_evidence: list[str] = Field(default_factory=list)
    steps: list[CaseStep]
    expected: Expected


def load_cases(root: Path) -> list[Case]:
    path = root / "cases.yaml"
    try:
        data = yaml.safe_load(path.read_text())
        return [Case.model_validate(c) for c in data["cases"]]
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as e:
        raise SystemExit(_usage(f"{path}: {e}")) from e


def _usage(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def env_dir(root: Path, case: Case) -> Path:
    base = REPO if case.env.startswith("examples/") else root
    return base / case.env


def build_trial(case: Case, env, workdir: Path):
    """The case as a recorded trial: result, trajectory.json and the verifier's output on disk."""
    from envqa.agents.trajectory import (
        AgentInfo,
        AtifToolCall,
        FinalMetrics,
        Observation,
        ObservationResult,
        Redactor,
        TrajectoryWriter,
    )
    from envqa.core.models import Outcome, TrialResult

    trial_dir = workdir / case.id
    (trial_dir / "verifier").mkdir(parents=True, exist_ok=True)
    (trial_dir / "verifier" / "test-stdout.txt").write_text(case.verifier_output + "\n")
    writer = TrajectoryWriter(
        trial_dir / "agent" / "trajectory.json", case.id, AgentInfo(name="solver", version="bench"), Redactor([])
    )
    writer.add("system", "You are an expert software engineer working alone in a Linux container.")
    writer.add("user", env.instruction)
    for i, step in enumerate(case.steps):
        calls = (
            [AtifToolCall(tool_call_id=f"c{i}", function_name="bash", arguments={"command": step.cmd})]
            if step.cmd is not None
            else None
        )
        obs = Observation(results=[ObservationResult(source_call_id=f"c{i}", content=step.out)]) if calls else None
        writer.add("agent", step.say, tool_calls=calls, observation=obs)
    writer.finish(FinalMetrics())
    trial = TrialResult(
        trial_id=case.id,
        run_id="bench",
        env_version=env.version,
        agent="solver",
        model="bench",
        purpose="sweep",
        outcome=Outcome(case.outcome),
        reward=1.0 if case.outcome == "pass" else 0.0,
        agent_timed_out=case.timed_out,
        artifacts_dir=str(trial_dir),
    )
    return trial, writer.trajectory


def baseline(case: Case) -> str:
    return "legitimate" if case.outcome == "pass" else "capability"


def measure(root: Path, model: str, config, goal: float) -> dict:
    from envqa.core.environment import load_environment
    from envqa.core.errors import EnvQAError
    from envqa.probes.analyst.model import analyze_trial
    from envqa.providers import create_client

    cases = load_cases(root)
    client = create_client(model, config)
    confusion: dict[str, Counter] = defaultdict(Counter)
    rows = []
    with tempfile.TemporaryDirectory(prefix="envqa-bench-analyst-") as tmp:
        for case in cases:
            env = load_environment(env_dir(root, case))
            trial, trajectory = build_trial(case, env, Path(tmp))
            try:
                label, _spend = analyze_trial(
                    client,
                    env,
                    trial,
                    trajectory,
                    case.probe_evidence,
                    token_budget=config.analyst.trajectory_tokens,
                    max_tokens=config.analyst.max_output_tokens,
                )
                got, subtype, verified = label.label, label.subtype, label.verified
            except EnvQAError as e:  # a provider failure is a miss, named in the output
                got, subtype, verified = "error", type(e).__name__, False
            confusion[case.expected.label][got] += 1
            rows.append(
                {
                    "id": case.id,
                    "expected": case.expected.label,
                    "got": got,
                    "subtype_ok": subtype == case.expected.subtype,
                    "verified": verified,
                    "baseline": baseline(case),
                }
            )
    n = len(rows)
    agree = sum(r["got"] == r["expected"] for r in rows) / n
    base = sum(r["baseline"] == r["expected"] for r in rows) / n
    labels = sorted({r["expected"] for r in rows})
    return {
        "model": model,
        "cases": n,
        "agreement": round(agree, 4),
        "subtype_agreement": round(sum(r["got"] == r["expected"] and r["subtype_ok"] for r in rows) / n, 4),
        "verified_rate": round(sum(r["verified"] for r in rows) / n, 4),
        "baseline_agreement": round(base, 4),
        "confusion": {e: dict(confusion[e]) for e in labels},
        "per_label": {e: round(confusion[e][e] / sum(confusion[e].values()), 4) for e in labels},
        "errors": sum(r["got"] == "error" for r in rows),
        "misses": [r["id"] for r in rows if r["got"] != r["expected"]],
        "goal": goal,
        "goal_met": agree >= goal and agree > base,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path, help="the labelled set (cases.yaml + tasks/)")
    ap.add_argument("--model", help="provider/model (default: [analyst] model of the config)")
    ap.add_argument("--config", type=Path, help="qa.toml (providers, base URLs, analyst settings)")
    ap.add_argument("--goal", type=float, default=0.7, help="agreement the model must reach (default 0.7)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from envqa.core.config import load_config
    from envqa.core.errors import EnvQAError

    if not (args.dir / "cases.yaml").is_file():
        return _usage(f"{args.dir}: no cases.yaml")
    try:
        config = load_config(args.config)
        model = args.model or config.analyst.model
        if not model:
            return _usage("no analyst model: pass --model provider/model or set [analyst] model")
        result = measure(args.dir, model, config, args.goal)
    except EnvQAError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    print(json.dumps(result))
    return 0 if result["goal_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
