"""Permission guards that do not guard: `chmod`/`chattr` meant to stop an agent that runs as root.

  permission-guard-root-agent   (warning) the Dockerfile (or test.sh) makes a file read-only (`chmod 444`,
                                `a-w`), unreadable (`chmod 000`, `a-r`), hidden from others (`chmod 600` on
                                expected outputs), or immutable (`chattr +i`/`+a`), while the agent runs as
                                root. Root ignores mode bits (CAP_DAC_OVERRIDE) and can `chattr -i`; in a
                                container `chattr` often cannot even set the flag (overlayfs). In test.sh the
                                code under test runs as root in the verifier too.

Only when the agent is root: the final stage's last USER is root (or absent) and [agent].user is unset or
root, as in probes/static/findings.py's opt-in `root-agent` rule. `chmod +x`, `755`, `644` and friends keep the owner's
write bit and are never a guard. Commands come from the bash parser (core/parsers/shell.py), so `|| true`,
continuations and `sh -c` strings are handled as the other static rules handle them.
"""

from __future__ import annotations

import re

from envqa.core.environment import Environment
from envqa.core.models import Finding
from envqa.core.parsers.dockerfile import parse_dockerfile
from envqa.core.parsers.shell import Command
from envqa.probes.static.task_files import rel as _rel
from envqa.probes.static.task_files import script_commands, test_script

OCTAL = re.compile(r"^[0-7]{3,4}$")
SYMBOLIC = re.compile(r"^[ugoa]*[-+=][rwxXst]*$")
ANSWERISH = re.compile(r"(answer|expected|solution|secret|reference|golden|grader|tests?\b|verifier|reward)", re.I)


def agent_is_root(env: Environment) -> bool:
    model = parse_dockerfile(env.dockerfile)
    final = model.final
    users = [i.value.split(":")[0].strip() for i in (final.instructions if final else []) if i.instruction == "USER"]
    return env.config.agent.user in (None, "root", 0, "0") and (not users or users[-1] in ("root", "0"))


def _mode_effect(mode: str) -> str | None:
    """What a chmod mode does against other users: 'read-only', 'unreadable', 'hidden', or None (no guard)."""
    if OCTAL.match(mode):
        owner, rest = int(mode[-3]), mode[-2:]
        if not owner & 4:
            return "unreadable"
        if not owner & 2:
            return "read-only"
        return "hidden" if all(not int(d) & 4 for d in rest) else None
    effects = []
    for clause in mode.split(","):
        if not SYMBOLIC.match(clause):
            return None
        who, op, perms = re.match(r"^([ugoa]*)([-+=])(.*)$", clause).groups()
        owner = who == "" or "u" in who or "a" in who
        if owner and ((op == "-" and "r" in perms) or (op == "=" and "r" not in perms)):
            effects.append("unreadable")
        elif owner and ((op == "-" and "w" in perms) or (op == "=" and "w" not in perms)):
            effects.append("read-only")
        elif not owner and ((op == "-" and "r" in perms) or (op == "=" and "r" not in perms)):
            effects.append("hidden")
    return effects[0] if effects else None


def guard_of(cmd: Command) -> tuple[str, list[str]] | None:
    """(effect, targets) when the command is a permission guard, else None."""
    args = [w for w in cmd.words[1:] if w]
    if cmd.name == "chattr":
        flags = [w for w in args if re.fullmatch(r"[+=][aiA-Za-z]*", w) and ("i" in w or "a" in w)]
        targets = [w for w in args if not w.startswith(("+", "-", "="))]
        return ("immutable", targets) if flags and targets else None
    if cmd.name != "chmod":
        return None
    rest = [w for w in args if not (w.startswith("--") or re.fullmatch(r"-[RfvcH]+", w))]
    if len(rest) < 2:
        return None
    effect = _mode_effect(rest[0])
    if effect is None:
        return None
    targets = rest[1:]
    if effect == "hidden" and not any(ANSWERISH.search(t) for t in targets):
        return None  # 600/700 on an ordinary file is housekeeping, not a guard
    return effect, targets


WHY = {
    "read-only": "made read-only, but the agent is root: root writes through mode bits (and can chmod it back)",
    "unreadable": "made unreadable, but the agent is root: root reads it anyway",
    "hidden": "hidden from other users, but the agent is root: root reads it anyway",
    "immutable": "marked immutable/append-only with chattr, but the agent is root: `chattr -i` undoes it (and in "
    "a container the flag often cannot be set at all)",
}


def permission_guard_rules(env: Environment) -> list[Finding]:
    if not agent_is_root(env):
        return []
    hits: list[tuple[str, Command, str, list[str]]] = []
    dockerfile_rel = _rel(env, env.dockerfile)
    model = parse_dockerfile(env.dockerfile)
    final = model.final.index if model.final else -1
    for stage, cmd in model.run_commands():
        # only the final stage: a build stage's files are not the agent's
        g = guard_of(cmd) if cmd.reachable and stage.index == final else None
        if g:
            hits.append((dockerfile_rel, cmd, *g))
    script = test_script(env)
    if script is not None:
        rel = _rel(env, script)
        for cmd in script_commands(env):
            g = guard_of(cmd) if cmd.reachable else None
            if g:
                hits.append((rel, cmd, *g))
    findings = []
    for rel, cmd, effect, targets in hits[:5]:
        in_verifier = not rel.endswith("Dockerfile")
        findings.append(
            Finding.of(
                rule="permission-guard-root-agent",
                message=f"{', '.join(targets)} is {WHY[effect]}"
                + ("; test.sh runs the agent's code as root too, so this guards nothing" if in_verifier else ""),
                evidence=[cmd.evidence(rel)],
                location=f"{rel}:{cmd.line}",
            )
        )
    return findings
