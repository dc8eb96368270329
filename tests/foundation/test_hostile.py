"""Hostile environments are contained: a solve.sh that fork-bombs, eats memory, fills the disk, prints a
gigabyte or reaches for the internet on network none ends as the agent's failure (outcome fail, never
infra), the host stays usable (free memory, free disk, process count checked after each), and nothing is
left behind (no container, no process of it).
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from envqa.agents.trial import run_trial
from envqa.core.environment import load_environment
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialSpec
from envqa.sandbox.limits import container_pids
from tests.foundation.conftest import TASK_TOML, containers_with

DOCKER_ROOT = "/var/lib/docker"
DISK_CAP_MB = 100

HOSTILE = {
    # the bomb saturates pids_limit; `sleep` then cannot fork and the script ends without an answer
    "fork-bomb": "bomb() { bomb | bomb & }\nbomb\nsleep 3\n",
    "memory-bomb": "python3 -c 'b = []\nwhile True: b.append(bytearray(64 * 2**20))'\n",
    "disk-fill": "dd if=/dev/zero of=/app/fill bs=1M count=200000 status=none\necho ok > /app/out.txt\n",
    "gigabyte-stdout": "head -c 1000000000 /dev/zero\n",
    "egress": "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), timeout=5)\" "
    "&& echo ok > /app/out.txt\n",
}


def host_state() -> dict:
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    return {
        "mem_available_mb": int(meminfo["MemAvailable"].split()[0]) // 1024,
        "disk_free_mb": shutil.disk_usage(DOCKER_ROOT).free // 2**20,
        "pids": sum(1 for p in Path("/proc").iterdir() if p.name.isdigit()),
    }


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_solution_is_the_agents_failure_and_the_host_is_unaffected(
    name, make_env, qa_config, docker_backend, docker_client
):
    toml = TASK_TOML.format(agent_timeout=60.0) + f"storage_mb = {DISK_CAP_MB}\npids_limit = 256\n"
    env = load_environment(make_env(solve=HOSTILE[name], extra={"task.toml": toml}))
    run_id = f"hostile-{uuid.uuid4().hex[:8]}"
    spec = TrialSpec(run_id=run_id, env_version=env.version, agent="oracle")
    seen: dict = {}

    def keep(sandbox, result):  # the end state, before teardown: what the agent left in the layer
        listed = docker_client.api.containers(all=True, size=True, filters={"id": sandbox.id})
        seen["layer_mb"] = listed[0].get("SizeRw", 0) // 2**20
        seen["container_id"] = sandbox.id

    before = host_state()
    result = run_trial(spec, env, docker_backend, qa_config, RunLayout(qa_config.runs_dir, run_id), keep_sandbox=keep)
    after = host_state()
    exec_log = (qa_config.runs_dir / run_id / result.trial_id / "agent" / "exec.txt").read_text()
    print(
        f"{name}: outcome={result.outcome} error_class={result.error_class} {exec_log.strip()} "
        f"layer={seen.get('layer_mb')}MB before={before} after={after}"
    )

    assert result.outcome == Outcome.FAIL, (result.outcome, result.error_class, result.error_message)
    assert result.error_class is None and result.reward == 0.0  # judged by the verifier: the agent's failure
    assert containers_with(docker_client, **{"envqa.run": run_id}) == []
    assert container_pids(seen["container_id"]) == []
    assert after["mem_available_mb"] > before["mem_available_mb"] - 1024, (before, after)
    assert after["disk_free_mb"] > before["disk_free_mb"] - 1024, (before, after)
    assert after["pids"] < before["pids"] + 200, (before, after)
    if name == "disk-fill":  # dd (~1 GB/s) is stopped near the cap (watched every 0.25 s), far from its 200 GB
        assert seen["layer_mb"] < DISK_CAP_MB + 1024, seen
        assert "exit_code=137" in exec_log or "exit_code=-9" in exec_log, exec_log
    if name == "gigabyte-stdout":
        assert "truncated=True" in exec_log
    if name == "egress":
        assert "unreachable" in (qa_config.runs_dir / run_id / result.trial_id / "agent" / "oracle.txt").read_text()
