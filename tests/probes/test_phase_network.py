"""Network policy as declared (issue 23), per phase: the verifier gets the verifier phase's policy as Harbor
resolves it (trial/network_policy.py): `[verifier] network_mode` when set, else the environment's baseline, never
the agent phase's override. A verifier the task declares offline runs offline; a verifier that fails only because
the agent phase's cut stayed on is inconclusive, not the task's `oracle-fails`.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from envqa.agents.trial import cut_verifier_network, run_trial
from envqa.core.environment import load_environment
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialResult, TrialSpec
from envqa.core.network_policy import agent_network_of, verifier_allowlist_of, verifier_network_of
from envqa.core.sandbox import SandboxSpec
from envqa.core.task_config import NetworkMode
from envqa.probes.inconclusive import verifier_needs_network
from envqa.sandbox.docker_sandbox import session_labels
from envqa.sandbox.fake import FakeBackend
from envqa.sandbox.fake_commands import FakeOutput
from tests.probes.conftest import write_env

TOML = (
    'version = "1.0"\n[agent]\ntimeout_sec = 60.0\n{agent}[verifier]\ntimeout_sec = 60.0\n{verifier}'
    "[environment]\nallow_internet = true\n"
)


def _env(tmp_path: Path, agent: str = "", verifier: str = "", files: dict | None = None):
    return load_environment(
        write_env(
            tmp_path / f"env-{uuid.uuid4().hex[:6]}",
            {"task.toml": TOML.format(agent=agent, verifier=verifier), **(files or {})},
        )
    )


def _public(qa_config, **extra):
    return qa_config.model_copy(
        update={
            "sandbox": qa_config.sandbox.model_copy(
                update={"default_network": "public", "verifier_network": "task", **extra}
            )
        }
    )


@pytest.mark.fast
def test_the_verifier_phase_follows_harbor_not_the_agent_override(tmp_path):
    agent_cut = _env(tmp_path, agent='network_mode = "no-network"\n')
    assert agent_network_of(agent_cut) == NetworkMode.NO_NETWORK
    assert verifier_network_of(agent_cut) == NetworkMode.PUBLIC  # shared mode: the environment's baseline
    verifier_cut = _env(tmp_path, verifier='network_mode = "no-network"\n')
    assert agent_network_of(verifier_cut) == NetworkMode.PUBLIC
    assert verifier_network_of(verifier_cut) == NetworkMode.NO_NETWORK
    listed = _env(tmp_path, verifier='network_mode = "allowlist"\nallowed_hosts = ["PyPI.org."]\n')
    assert verifier_allowlist_of(listed) == ["pypi.org"] and verifier_allowlist_of(agent_cut) is None


@pytest.mark.fast
def test_a_verifier_the_task_declares_offline_runs_offline(tmp_path, qa_config):
    """Fake backend, default_network = "public": the agent phase has its network, the verifier phase none."""
    seen: dict[str, list[bool]] = {"agent": [], "verifier": []}
    backend = FakeBackend()

    @backend.on(r"bash /solution/solve\.sh")
    def solve(call):
        seen["agent"].append(call.sandbox.offline())
        call.sandbox.fs.write("/app/out.txt", b"hello\n", 0o644)
        return FakeOutput()

    @backend.on(r"bash /tests/test\.sh")
    def verify(call):
        seen["verifier"].append(call.sandbox.offline())
        call.sandbox.fs.write("/logs/verifier/reward.txt", b"1\n", 0o644)
        return FakeOutput()

    config = _public(qa_config)
    for verifier, offline in (('network_mode = "no-network"\n', True), ("", False)):
        env = _env(tmp_path, verifier=verifier)
        run_id = f"fake-{uuid.uuid4().hex[:8]}"
        result = run_trial(
            TrialSpec(run_id=run_id, env_version=env.version, agent="oracle", index=0),
            env,
            backend,
            config,
            RunLayout(config.runs_dir, run_id),
        )
        assert result.outcome == Outcome.PASS, result.error_message
        assert (seen["agent"][-1], seen["verifier"][-1]) == (False, offline)


def _failed_oracle(tmp_path: Path, output: str) -> TrialResult:
    trial_dir = tmp_path / "trial"
    (trial_dir / "verifier").mkdir(parents=True)
    (trial_dir / "verifier" / "test-stdout.txt").write_text(output)
    return TrialResult(
        trial_id="t-oracle-0",
        run_id="r",
        env_version="v",
        agent="oracle",
        outcome=Outcome.FAIL,
        reward=0.0,
        artifacts_dir=str(trial_dir),
    )


@pytest.mark.fast
def test_a_verifier_cut_only_by_the_agent_phases_override_is_inconclusive(tmp_path, qa_config):
    """[agent] no-network, public environment: Harbor's verifier has the network, ours kept the agent's cut."""
    env = _env(
        tmp_path,
        agent='network_mode = "no-network"\n',
        files={
            "tests/test.sh": (
                "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
                "pip install pytest==8.3.4 && pytest /tests && echo 1 > /logs/verifier/reward.txt\n"
            )
        },
    )
    output = (
        "WARNING: Retrying (Retry(total=0)) after connection broken by 'NewConnectionError(\"<pip._vendor."
        "urllib3.connection.HTTPSConnection>: Failed to establish a new connection: [Errno -3] Temporary "
        "failure in name resolution\")': /simple/pytest/\nERROR: No matching distribution found for "
        "pytest==8.3.4\n"
    )
    outcome = verifier_needs_network(env, _public(qa_config), [_failed_oracle(tmp_path, output)])
    assert outcome is not None and outcome["network_cut_by"] == "qa"
    declared = _env(tmp_path, verifier='network_mode = "no-network"\n')  # the task itself cuts its verifier
    assert verifier_needs_network(declared, _public(qa_config), [_failed_oracle(tmp_path / "d", output)]) is None


def test_a_declared_offline_verifier_is_disconnected_on_docker(
    tmp_path, qa_config, docker_backend, docker_client, base_image
):
    """On a real (internal) network: the verifier phase's `no-network` disconnects the container; a task that
    declares nothing for the verifier keeps the agent phase's network."""
    net = docker_client.networks.create(
        f"envqa-test-{uuid.uuid4().hex[:10]}", driver="bridge", internal=True, labels={"envqa": "1", **session_labels()}
    )
    config = _public(qa_config)
    try:
        for verifier, interfaces in (('network_mode = "no-network"\n', ["lo"]), ("", None)):
            env = _env(tmp_path, verifier=verifier)
            with docker_backend.start(SandboxSpec(image=base_image, network=net.name)) as sb:
                before = sorted(sb.exec(["ls", "/sys/class/net"], timeout=30).stdout.split())
                cut_verifier_network(sb, config, env)
                after = sorted(sb.exec(["ls", "/sys/class/net"], timeout=30).stdout.split())
            assert len(before) == 2, before
            assert after == (interfaces or before)
    finally:
        net.remove()
