"""Compose sidecars on the real engine (sandbox/sidecars.py): reachable by name from main and from the verifier,
on an internal network, infra when one does not build, and nothing left behind on any path."""

from __future__ import annotations

import shutil
import uuid

from envqa.agents.trial import run_trial
from envqa.core.environment import load_environment
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialSpec
from qa_testkit import EXAMPLES, containers

EXAMPLE = EXAMPLES / "clean-compose-sidecar"
REACH = [
    "python3",
    "-c",
    "import urllib.request as u; print(u.urlopen('http://inventory:8080/items', timeout=5).read().decode())",
]
ROUTE_OUT = ["python3", "-c", "import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)"]


def _trial(env_root, agent, qa_config, docker_backend, keep=None):
    env = load_environment(env_root)
    run_id = f"sc-{uuid.uuid4().hex[:8]}"
    spec = TrialSpec(run_id=run_id, env_version=env.version, agent=agent)
    result = run_trial(spec, env, docker_backend, qa_config, RunLayout(qa_config.runs_dir, run_id), keep_sandbox=keep)
    return result, spec.trial_id


def _left(docker_client, trial_id: str) -> tuple[list, list]:
    label = f"envqa.trial={trial_id}"
    return containers(docker_client, label), docker_client.networks.list(filters={"label": label})


def test_oracle_reaches_the_sidecar_by_name_and_so_does_the_verifier(qa_config, docker_backend, docker_client):
    seen: dict = {}

    def keep(sandbox, result):  # the end state, before teardown: main, its sidecar, their network
        seen["main"] = sandbox.exec(REACH, timeout=30).stdout.strip()
        inventory = sandbox.service("inventory")
        seen["sidecar_env"] = inventory.exec(["cat", "/srv/items.json"], timeout=30).stdout
        seen["main_out"] = sandbox.exec(ROUTE_OUT, timeout=30).exit_code
        seen["sidecar_out"] = inventory.exec(ROUTE_OUT, timeout=30).exit_code
        net = docker_client.networks.get(inventory.spec.network)
        seen["internal"] = net.attrs["Internal"]
        seen["offline"] = sandbox.offline()
        sandbox.cut_network()  # the verifier's cut keeps the sidecars' network
        seen["after_cut"] = sandbox.exec(REACH, timeout=30).stdout.strip()

    result, trial_id = _trial(EXAMPLE, "oracle", qa_config, docker_backend, keep)
    assert result.outcome == Outcome.PASS and result.reward == 1.0, (result.error_class, result.error_message)
    assert seen["main"] == seen["after_cut"] == '["A-100", "B-220", "C-031", "D-404", "E-777"]'
    assert "A-100" in seen["sidecar_env"]
    assert seen["internal"] is True and seen["offline"] is True
    assert seen["main_out"] != 0 and seen["sidecar_out"] != 0  # no route out from either
    assert _left(docker_client, trial_id) == ([], [])


def test_nop_fails_and_leaves_nothing(qa_config, docker_backend, docker_client):
    result, trial_id = _trial(EXAMPLE, "nop", qa_config, docker_backend)
    assert result.outcome == Outcome.FAIL and result.reward == 0.0, result.error_message
    assert _left(docker_client, trial_id) == ([], [])


def test_a_sidecar_that_does_not_build_is_infra_not_a_finding(tmp_path, qa_config, docker_backend, docker_client):
    root = tmp_path / "broken-sidecar"
    shutil.copytree(EXAMPLE, root)
    (root / "environment" / "inventory" / "Dockerfile").write_text("FROM debian:bookworm\nRUN exit 7\n")
    result, trial_id = _trial(root, "oracle", qa_config, docker_backend)
    assert result.outcome == Outcome.INFRA and result.error_class == "sidecar_failed", result.error_message
    assert "inventory" in result.error_message and "did not build" in result.error_message
    assert _left(docker_client, trial_id) == ([], [])


def test_a_sidecar_that_dies_is_infra_and_main_never_starts(tmp_path, qa_config, docker_backend, docker_client):
    root = tmp_path / "dying-sidecar"
    shutil.copytree(EXAMPLE, root)
    (root / "environment" / "docker-compose.yaml").write_text(
        "services:\n  inventory:\n    build: ./inventory\n    command: [sh, -c, 'echo cannot serve; sleep 1; exit 3']\n"
        "    healthcheck: {test: [CMD, 'false'], interval: 5s}\n"
    )  # dies before its first check
    result, trial_id = _trial(root, "oracle", qa_config, docker_backend)
    assert result.outcome == Outcome.INFRA and result.error_class == "sidecar_failed", result.error_message
    assert "exited 3" in result.error_message and "cannot serve" in result.error_message
    assert _left(docker_client, trial_id) == ([], [])


def test_allowlist_mode_reaches_the_sidecar_directly_and_the_rest_through_the_proxy(
    qa_config, docker_backend, docker_client
):
    from envqa.core.sandbox import SandboxSpec
    from envqa.sandbox.network import AllowlistBackend, FakeInternet

    env = load_environment(EXAMPLE)
    image = qa_config.sandbox.base_image
    main_image, _built = docker_backend.ensure_image(env)
    labels = {"envqa.run": f"sc-allow-{uuid.uuid4().hex[:8]}"}
    fetch = (
        "import urllib.request as u\nfor url in ('http://inventory:8080/items/A-100', 'http://good.example.test/"
        "frobnicate/LATEST'):\n    print(u.urlopen(url, timeout=10).read().decode().strip())"
    )
    with FakeInternet(
        docker_client, image, EXAMPLES / "network-fetch" / "qa-fake-internet", ["good.example.test"], labels=labels
    ) as net:
        backend = AllowlistBackend(docker_backend, image, ["good.example.test"], upstream=net.name, labels=labels)
        with backend.with_sidecars(env).start(SandboxSpec(image=main_image, network="bridge", labels=labels)) as sb:
            res = sb.exec(["python3", "-c", fetch], timeout=60)
            log = sb.egress_log()
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines() == ['{"sku": "A-100", "qty": 12, "unit_price_cents": 499}', "2.7.1"]
    assert not any("inventory" in line for line in log)  # the sidecar is not reached through the proxy
    label = f"envqa.run={labels['envqa.run']}"
    assert containers(docker_client, label) == []
    assert docker_client.networks.list(filters={"label": label}) == []


def test_collect_hooks_run_in_their_service(qa_config, docker_backend):
    from envqa.agents.collect_hooks import run_collect_hooks
    from envqa.core.task_config import VerifierCollectConfig as Hook

    seen: dict = {}

    def keep(sandbox, result):
        seen["hooks"] = run_collect_hooks(
            sandbox,
            [
                Hook(command="ls /srv > /tmp/snapshot.txt", service="inventory"),
                Hook(command="hostname > /tmp/main.txt"),
                Hook(command="exit 4", service="inventory"),
                Hook(command="true", service="ghost"),
            ],
        )
        seen["snapshot"] = sandbox.service("inventory").read_file("/tmp/snapshot.txt").decode()
        seen["not_in_main"] = sandbox.exec(["test", "-e", "/tmp/snapshot.txt"], timeout=30).exit_code
        seen["main"] = sandbox.exec(["test", "-s", "/tmp/main.txt"], timeout=30).exit_code

    result, _trial_id = _trial(EXAMPLE, "nop", qa_config, docker_backend, keep)
    assert result.outcome == Outcome.FAIL
    assert seen["snapshot"].split() == ["items.json", "server.py"] and seen["not_in_main"] == 1 and seen["main"] == 0
    assert [(h.exit_code, h.error) for h in seen["hooks"][:3]] == [(0, None), (0, None), (4, None)]
    assert "ghost" in seen["hooks"][3].error


def test_cleanup_after_a_crash_removes_the_sidecars_and_their_network(docker_backend, docker_client):
    from envqa.core.sandbox import SandboxSpec

    env = load_environment(EXAMPLE)
    image, _built = docker_backend.ensure_image(env)
    trial_id = f"sc-crash-{uuid.uuid4().hex[:8]}"
    docker_backend.with_sidecars(env).start(SandboxSpec(image=image, labels={"envqa.trial": trial_id}))  # never stopped
    left, networks = _left(docker_client, trial_id)
    assert len(left) == 2 and len(networks) == 1  # main and inventory, on their internal network
    assert docker_backend.cleanup({"envqa.trial": trial_id}) == 2  # what the runner does at the end of a run
    assert _left(docker_client, trial_id) == ([], [])
