"""Separate verifier mode on the real engine (agents/verify_separate.py): the verifier runs in a fresh container
built from tests/Dockerfile, sees only the artifacts, and is the only source of the reward."""

from __future__ import annotations

import json
import uuid

from envqa.agents.base import AgentContext, AgentRun
from envqa.agents.exploit_artifact import PoisonedArtifact
from envqa.agents.trial import run_trial
from envqa.core.environment import load_environment
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialSpec
from qa_testkit import EXAMPLES, write_files

TASK = {
    "task.toml": 'schema_version = "1.4"\nartifacts = ["/app/out.txt"]\n[agent]\ntimeout_sec = 60\n'
    '[verifier]\nenvironment_mode = "separate"\ntimeout_sec = 60\n',
    "instruction.md": "Write hello to /app/out.txt.\n",
    "environment/Dockerfile": "FROM debian:bookworm\nWORKDIR /app\nRUN echo image-file > /app/from-image.txt\n",
    "solution/solve.sh": "#!/bin/bash\necho hello > /app/out.txt\n",
    "tests/Dockerfile": "FROM debian:bookworm\nCOPY . /tests/\n",
    # What the verifier's container sees goes to /logs/verifier/seen.json (downloaded with the reward).
    "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\n"
    "python3 - <<'PY'\nimport json, os, socket\n"
    "paths = ['/app/out.txt', '/app/secret.txt', '/app/from-image.txt', '/logs/artifacts/note.txt',"
    " '/logs/agent']\n"
    "json.dump({'exists': {p: os.path.exists(p) for p in paths}, 'host': socket.gethostname(),"
    " 'reward_before': open('/logs/verifier/reward.txt').read() if os.path.exists("
    "'/logs/verifier/reward.txt') else None}, open('/logs/verifier/seen.json', 'w'))\nPY\n"
    'if [ "$(cat /app/out.txt 2>/dev/null)" = hello ]; then echo 1; else echo 0; fi'
    " > /logs/verifier/reward.txt\n",
}


class Writer:
    """An agent that writes files in its own container and reports what it saw there (not a mock: it runs
    real commands in the real container)."""

    name = "writer"

    def __init__(self, out: str, tamper: bool):
        self.out, self.tamper, self.saw = out, tamper, {}

    def run(self, ctx: AgentContext) -> AgentRun:
        sb = ctx.sandbox
        self.saw["verifier_dir"] = sb.exec(["test", "-e", "/logs/verifier"], timeout=30).exit_code == 0
        self.saw["artifacts_dir"] = sb.exec(["test", "-d", "/logs/artifacts"], timeout=30).exit_code == 0
        self.saw["host"] = sb.exec(["hostname"], timeout=30).stdout.strip()
        script = (
            f"echo {self.out} > /app/out.txt && echo s3cret > /app/secret.txt && echo note > /logs/artifacts/note.txt"
        )
        if self.tamper:  # the classic reward tamper: it lands in the agent's container only
            script += " && mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt"
        res = sb.exec(["bash", "-c", script], timeout=30)
        return AgentRun(exit_code=res.exit_code)


def _trial(root, agent, qa_config, docker_backend, name: str):
    env = load_environment(root)
    run_id = f"sep-{uuid.uuid4().hex[:8]}"
    spec = TrialSpec(run_id=run_id, env_version=env.version, agent=name)
    layout = RunLayout(qa_config.runs_dir, run_id)
    return run_trial(spec, env, docker_backend, qa_config, layout, agent=agent), layout.trial_dir(spec.trial_id)


def test_the_verifier_sees_only_the_artifacts_and_its_reward_is_the_one_read(tmp_path, qa_config, docker_backend):
    root = write_files(tmp_path / "task", TASK)
    honest = Writer("hello", tamper=False)
    result, trial_dir = _trial(root, honest, qa_config, docker_backend, "writer")
    assert result.outcome == Outcome.PASS and result.reward == 1.0, result.error_message
    assert honest.saw["verifier_dir"] is False and honest.saw["artifacts_dir"] is True  # no /logs/verifier there
    seen = json.loads((trial_dir / "verifier" / "seen.json").read_text())
    assert seen["exists"] == {
        "/app/out.txt": True,
        "/app/secret.txt": False,
        "/app/from-image.txt": False,
        "/logs/artifacts/note.txt": True,
        "/logs/agent": False,
    }
    assert seen["host"] != honest.saw["host"]  # another container
    assert (trial_dir / "artifacts" / "app" / "out.txt").read_text() == "hello\n"
    manifest = {e["source"]: e["status"] for e in json.loads((trial_dir / "artifacts" / "manifest.json").read_text())}
    assert manifest == {"/logs/artifacts": "ok", "/app/out.txt": "ok"}


def test_a_reward_written_in_the_agents_container_is_never_read(tmp_path, qa_config, docker_backend):
    root = write_files(tmp_path / "task", TASK)
    tamper = Writer("bye", tamper=True)
    result, trial_dir = _trial(root, tamper, qa_config, docker_backend, "tamper")
    assert result.outcome == Outcome.FAIL and result.reward == 0.0, result.error_message
    assert json.loads((trial_dir / "verifier" / "seen.json").read_text())["reward_before"] is None


def test_clean_example_oracle_passes_and_nop_fails(qa_config, docker_backend):
    from envqa.agents.catalog import create_agent

    root = EXAMPLES / "clean-separate-verifier"
    oracle, _ = _trial(root, create_agent("oracle"), qa_config, docker_backend, "oracle")
    nop, _ = _trial(root, create_agent("nop"), qa_config, docker_backend, "nop")
    assert (oracle.outcome, oracle.reward) == (Outcome.PASS, 1.0), oracle.error_message
    assert (nop.outcome, nop.reward) == (Outcome.FAIL, 0.0), nop.error_message


def test_a_poisoned_artifact_reaches_a_verifier_that_imports_it(qa_config, docker_backend):
    """The attack that survives separate mode: the verifier imports the agent's module into its own process."""
    flawed = EXAMPLES / "poisoned-artifact-separate"
    result, trial_dir = _trial(
        flawed, PoisonedArtifact(env=load_environment(flawed)), qa_config, docker_backend, "exploit-poisoned-artifact"
    )
    assert (result.outcome, result.reward) == (Outcome.PASS, 1.0), result.error_message
    assert "planted /app/stats.py" in (trial_dir / "agent" / "transcript.txt").read_text()
    clean = EXAMPLES / "clean-separate-verifier"  # reads its artifact as JSON: the same attack earns nothing
    result, _ = _trial(
        clean, PoisonedArtifact(env=load_environment(clean)), qa_config, docker_backend, "exploit-poisoned-artifact"
    )
    assert (result.outcome, result.reward) == (Outcome.FAIL, 0.0), result.error_message


def test_without_tests_dockerfile_the_verifier_gets_a_fresh_container_of_the_tasks_image(
    tmp_path, qa_config, docker_backend
):
    """Harbor's fallback (verifier_mode.py): the task's environment, a new container of it, tests uploaded."""
    root = write_files(tmp_path / "task", {k: v for k, v in TASK.items() if k != "tests/Dockerfile"})
    agent = Writer("hello", tamper=False)
    result, trial_dir = _trial(root, agent, qa_config, docker_backend, "writer")
    assert result.outcome == Outcome.PASS, result.error_message
    seen = json.loads((trial_dir / "verifier" / "seen.json").read_text())
    assert seen["exists"]["/app/from-image.txt"] and not seen["exists"]["/app/secret.txt"]
    assert seen["host"] != agent.saw["host"]
