"""What `qa lint` adds for the task format itself (issue 23), and linting every step of a multi-step task.

  task-config-unknown-key  (info) a task.toml key the schema does not know: named with its table and the
                           near spelling. Harbor ignores such keys, and so does qa (never an exit 2): a
                           task written for a newer Harbor still loads, and a typo is still seen.
  instruction-empty        (critical) instruction.md is empty: the agent has nothing to do. `qa run` refuses
                           to load such a task (exit 2); `qa lint` reports it with everything else.
  verifier-script-empty    (critical) the verifier's script runs no command (comments only, as Harbor's
                           template ships it): every trial ends without a reward, a verifier error.

`qa run` shows unknown keys as warnings (stderr, `--json` `warnings`) and, through the static probe
(probes/static/task_rules.py `task_findings`), as the same info finding; it refuses the other two before anything runs.
"""

from __future__ import annotations

from envqa.core.environment import Environment
from envqa.core.finding_groups import group_repeats
from envqa.core.models import Finding
from envqa.probes.static.findings import proven_over_suspected, static_findings
from envqa.probes.static.lint import lint_structure
from envqa.probes.static.task_files import rel, script_commands, test_script
from envqa.probes.static.task_rules import unknown_key_findings


def _instruction_findings(env: Environment) -> list[Finding]:
    parts = env.steps or env.milestones
    files = [s.instruction for s in parts] if parts else [env.root / "instruction.md"]
    out = []
    for path in files:
        if path.is_file() and not path.read_text(errors="replace").strip():
            where = rel(env, path)
            out.append(
                Finding.of(
                    rule="instruction-empty",
                    message=f"{where} is empty: the agent has no instruction (qa run refuses the task)",
                    evidence=[f"{where}: 0 non-blank lines"],
                    location=where,
                )
            )
    return out


def _empty_verifier(env: Environment) -> list[Finding]:
    script = test_script(env)
    if script is None or any(c.reachable for c in script_commands(env)):
        return []
    where = rel(env, script)
    return [
        Finding.of(
            rule="verifier-script-empty",
            message=f"{where} runs no command: no reward is ever written, so every trial is a verifier error",
            evidence=[f"{where}: comments and blank lines only"],
            location=where,
        )
    ]


def lint_findings(
    env: Environment,
    root_agent: bool = False,
    unpinned_base: bool = False,
    image: list[Finding] | None = None,
    grouped: bool = True,
) -> list[Finding]:
    """Everything `qa lint` reports from files: structure, the static rules (for each step of a multi-step
    task, as that step sees the task; each milestone likewise, as its own verifier), and the task-format rules
    above; with `image` (`qa lint --image`: what the built image showed) the image's proof replaces the files'
    suspicion at the same line. Last, the repeats of a rule in one file become one finding
    (core/finding_groups.py): every reader of `qa lint` sees that list. `grouped=False` is for a reader that
    matches findings place by place (benchmarks/real_tasks.py holds a 2.0 task's findings against its 2.1 fix's,
    message by message)."""
    views = [env.for_step(s) for s in env.steps or env.milestones] or [env]
    found = lint_structure(env) + unknown_key_findings(env) + _instruction_findings(env)
    for view in views:
        found += _empty_verifier(view) + static_findings(view, root_agent, unpinned_base)
    seen, out = set(), []
    for f in found:  # a step's view repeats the task-wide rules (Dockerfile, task.toml): once each
        key = (f.rule, f.location, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    if image is not None:
        out = proven_over_suspected(out, image)
    return group_repeats(out) if grouped else out
