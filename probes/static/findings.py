"""Static checks over an environment's files (no image): what `qa lint` reports besides structure.

Rules (ids are stable; each finding carries file:line, why it matters and a fix):
  reward-not-written-on-failure   test.sh writes a reward only when the tests pass
  reward-written-unconditionally  test.sh writes a success reward whatever the tests said
  (and probes/static/fetch_rules.py: verifier-installs-at-runtime, unpinned-python-dependency, apt-version-pinned,
   download-of-moving-target, as queries over the task model's fetches)
  compose-privileged              a docker-compose service runs privileged
  compose-writable-bind-mount     a host directory is mounted writable (or from outside the task)
  root-agent (opt-in)             the agent runs as root
  unpinned-base-image (opt-in)    FROM without a tag or with :latest
  (and probes/static/verifier_broken.py: a verifier or reference solution that cannot work)
  (and probes/static/outcome_checks.py: check-does-not-measure-outcome, a query over the assertion model)

Shell text (test.sh, every RUN) goes through core/parsers/shell.py (bashlex) and Dockerfiles through
core/parsers/dockerfile.py (dockerfile-parse): commands, not whitespace-split lines, so `|| true`,
redirections and continuations are never mistaken for packages, and lines that cannot run are skipped.
"""

from __future__ import annotations

import re

import yaml

from envqa.core.environment import Environment
from envqa.core.models import Finding
from envqa.core.parsers.dockerfile import parse_dockerfile
from envqa.core.parsers.shell import Command
from envqa.core.registry.rules import EXPLAINS_AT_LINE
from envqa.probes.base import ProbeContext, register_probe
from envqa.probes.static.drift_rules import drift_findings
from envqa.probes.static.fetch_rules import fetch_findings
from envqa.probes.static.guard_rules import permission_guard_rules
from envqa.probes.static.image_checks import image_findings
from envqa.probes.static.instruction_preserve import preserve_findings
from envqa.probes.static.instruction_rules import instruction_findings
from envqa.probes.static.instruction_signatures import signature_findings
from envqa.probes.static.instruction_test_bounds import bound_findings
from envqa.probes.static.metadata_rules import metadata_realism_findings
from envqa.probes.static.outcome_checks import outcome_check_findings
from envqa.probes.static.provenance_rules import provenance_findings
from envqa.probes.static.reward_flow import aborts_before_failure_reward
from envqa.probes.static.task_files import rel as _rel
from envqa.probes.static.task_files import script_commands, test_script
from envqa.probes.static.task_rules import task_findings
from envqa.probes.static.verifier_broken import verifier_broken_findings
from envqa.probes.static.verifier_shape_rules import verifier_shape_findings

REWARD_FILE = re.compile(r"reward\.(txt|json)$")
SUCCESS = re.compile(r"""^(1|1\.0+|\{\s*"reward"\s*:\s*1(\.0+)?\s*\})$""")


def reward_writes(commands: list[Command]) -> list[tuple[Command, str | None]]:
    """Reachable commands that write a reward file, with the value written when it is a literal (else None).

    A redirection (`echo 1 > /logs/verifier/reward.txt`) or `tee [-a] …reward.txt` after a pipe from
    echo/printf; the value is the echo's words (flags such as -n dropped), or None when computed."""
    out = []
    for i, cmd in enumerate(commands):
        if not cmd.reachable:
            continue
        source = cmd
        if cmd.name == "tee" and any(REWARD_FILE.search(w) for w in cmd.words[1:]):
            prev = commands[i - 1] if i else None
            source = prev if prev is not None and prev.line == cmd.line else None
        elif not any(op in (">", ">>") and REWARD_FILE.search(target) for op, target in cmd.redirects):
            continue
        value = None
        if source is not None and source.name in ("echo", "printf"):
            args = [w for w in source.words[1:] if not re.fullmatch(r"-[neE]+", w)]
            if args and "$" not in " ".join(args) and "`" not in " ".join(args):
                value = " ".join(args).replace("\\n", "").strip()
        out.append((cmd, value))
    return out


def reward_rules(env: Environment) -> list[Finding]:
    script = test_script(env)
    if script is None or script.name != "test.sh":
        return []
    rel = _rel(env, script)
    commands = script_commands(env)
    writes = reward_writes(commands)
    if not writes:
        return []
    findings = []
    success = [bool(v is not None and SUCCESS.match(v)) for _c, v in writes]
    if all(success):
        findings.append(
            Finding.of(
                rule="reward-not-written-on-failure",
                message="test.sh writes a reward only when the tests pass: on failure no reward is written, so a "
                "reward file the agent left behind (or none at all) decides the trial",
                evidence=[c.evidence(rel) for c, _v in writes[:5]],
                location=f"{rel}:{writes[0][0].line}",
            )
        )
    aborting = aborts_before_failure_reward(commands, writes, success)
    if aborting is not None:
        findings.append(
            Finding.of(
                rule="reward-not-written-on-failure",
                message="test.sh sets -e before the test command and writes the failure reward only after it: a "
                "failing test ends the script before any reward is written, so a reward file the agent left "
                "behind (or none) decides the trial",
                evidence=[c.evidence(rel) for c in commands if c.name == "set" and c.line < aborting.line][:2]
                + [aborting.evidence(rel)],
                location=f"{rel}:{aborting.line}",
                case="set-e",
            )
        )
    strict = any(
        c.name == "set"
        and not c.conditional
        and any(re.fullmatch(r"-\w*e\w*", w) or w == "errexit" for w in c.words[1:])
        for c in commands
        if c.reachable
    )
    last, last_success = writes[-1][0], success[-1]
    if last_success and not last.conditional and not strict:
        findings.append(
            Finding.of(
                rule="reward-written-unconditionally",
                message="the last reward test.sh writes is a success value written whatever the tests said",
                evidence=[last.evidence(rel)],
                location=f"{rel}:{last.line}",
            )
        )
    return findings


def compose_rules(env: Environment) -> list[Finding]:
    findings = []
    for path in sorted(env.build_context.glob("docker-compose*.y*ml")) + sorted(
        env.build_context.glob("compose*.y*ml")
    ):
        rel = _rel(env, path)
        try:
            doc = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as e:
            findings.append(
                Finding.of(
                    rule="compose-invalid",
                    message=f"the compose file is not valid YAML: {e}",
                    location=rel,
                )
            )
            continue
        for name, svc in (doc.get("services") or {}).items():
            svc = svc or {}
            if svc.get("privileged"):
                findings.append(
                    Finding.of(
                        rule="compose-privileged",
                        message=f"service {name!r} runs privileged: the agent can reach the host and the verifier",
                        location=rel,
                        evidence=[f"{rel}: services.{name}.privileged: true"],
                    )
                )
            for vol in svc.get("volumes") or []:
                spec = (
                    vol
                    if isinstance(vol, str)
                    else f"{vol.get('source', '')}:{vol.get('target', '')}" + (":ro" if vol.get("read_only") else "")
                )
                parts = spec.split(":")
                if len(parts) < 2 or not parts[0].startswith((".", "/", "~")):
                    continue  # a named volume
                external = parts[0].startswith(("/", "~"))
                if external or "ro" not in parts[2:]:
                    findings.append(
                        Finding.of(
                            rule="compose-writable-bind-mount",
                            message=f"service {name!r} mounts {parts[0]} "
                            + ("from outside the task directory" if external else "writable")
                            + ": the agent can change files outside its sandbox",
                            location=rel,
                            evidence=[f"{rel}: services.{name}.volumes: {spec}"],
                        )
                    )
    return findings


def optin_rules(env: Environment, root_agent: bool, unpinned_base: bool) -> list[Finding]:
    findings = []
    rel = _rel(env, env.dockerfile)
    model = parse_dockerfile(env.dockerfile)
    final = model.final
    users = [i.value.split(":")[0].strip() for i in (final.instructions if final else []) if i.instruction == "USER"]
    if root_agent and env.config.agent.user in (None, "root", 0) and (not users or users[-1] in ("root", "0")):
        findings.append(
            Finding.of(
                rule="root-agent",
                message="the agent runs as root: it can rewrite anything the verifier later relies on",
                location=rel,
            )
        )
    if unpinned_base:
        seen = set()
        for stage in model.stages:
            ref = stage.base
            if ref.lower() in seen or ref.lower() == "scratch" or "$" in ref:
                continue
            seen.add(ref.lower())
            if "@sha256:" not in ref and (":" not in ref.split("/")[-1] or ref.endswith(":latest")):
                line = model.lines[stage.line - 1].strip()
                findings.append(
                    Finding.of(
                        rule="unpinned-base-image",
                        message=f"base image {ref} is not pinned: rebuilding can change the environment",
                        evidence=[f"{rel}:{stage.line}: {line}"],
                        location=f"{rel}:{stage.line}",
                    )
                )
            if stage.name:
                seen.add(stage.name.lower())
    return findings


def static_findings(env: Environment, root_agent: bool = False, unpinned_base: bool = False) -> list[Finding]:
    """Every file-only rule; `qa lint` and the hunt both call this."""
    return explained_at_line(
        reward_rules(env)
        + fetch_findings(env)
        + compose_rules(env)
        + optin_rules(env, root_agent, unpinned_base)
        + task_findings(env)
        + verifier_shape_findings(env)
        + verifier_broken_findings(env)
        + permission_guard_rules(env)
        + metadata_realism_findings(env)
        + instruction_findings(env)
        + bound_findings(env)
        + signature_findings(env)
        + preserve_findings(env)
        + drift_findings(env)
        + provenance_findings(env)
        + outcome_check_findings(env)
    )


def explained_at_line(findings: list[Finding]) -> list[Finding]:
    """One cause per line: a finding gives way to one at the same location whose rule explains it
    (`explains_at_line` in core/registry/rules.toml)."""
    explained = {(other, f.location) for f in findings for other in EXPLAINS_AT_LINE.get(f.rule, ()) if f.location}
    return [f for f in findings if (f.rule, f.location) not in explained]


@register_probe("static")
def static_probe(ctx: ProbeContext) -> list[Finding]:
    s = ctx.settings
    # [[steps]] (or milestones): as each step sees it
    views = [ctx.env.for_step(step) for step in ctx.env.steps or ctx.env.milestones] or [ctx.env]
    found = list(
        {
            (f.rule, f.location, f.message): f
            for v in views
            for f in static_findings(v, s.lint_root_agent, s.lint_unpinned_base)
        }.values()
    )
    try:
        image, _built = ctx.backend.ensure_image(ctx.env)
    except Exception:  # noqa: BLE001 - validation already reported an image that does not build
        ctx.skip("static/image", "the image did not build: test literals and verifier files in it not checked")
        return found
    return proven_over_suspected(found, image_findings(ctx.env, ctx.backend, image, ctx.config))


def proven_over_suspected(files: list[Finding], image: list[Finding]) -> list[Finding]:
    """The image's finding replaces the files' suspicion of the same rule at the same line (one finding per fact:
    verifier-runs-image-file is a warning from the files, an error once the image shows the file there)."""
    seen = {(f.rule, f.location) for f in image}
    return [f for f in files if (f.rule, f.location) not in seen] + image
